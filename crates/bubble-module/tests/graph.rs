//! The graph API on the golden modules.

mod common;

use bubble_module::{Module, NodeKind};
use common::testdata;
use tensor_core::DType;

fn load(f: &str) -> Vec<u8> {
    std::fs::read(testdata().join(f)).unwrap()
}

/// Every producer before its consumers.
fn assert_topological(m: &Module<'_>, order: &[usize]) {
    let mut pos = vec![usize::MAX; m.len()];
    for (p, &i) in order.iter().enumerate() {
        assert_eq!(pos[i], usize::MAX, "node {i} twice");
        pos[i] = p;
    }
    assert!(pos.iter().all(|&p| p != usize::MAX), "a node is missing");
    for (i, n) in m.nodes().iter().enumerate() {
        for &u in n.inputs() {
            assert!(pos[u] < pos[i], "{u} must come before {i}");
        }
    }
}

#[test]
fn shared_nodes_consumers_and_order() {
    // py_multi_io_shared: u=sub(m,t) s=add(a,b) r=relu(s) a m=mul(s,s) b t=mul(s,k) k
    let b = load("py_multi_io_shared.tsm");
    let m = Module::parse(&b).unwrap();
    let s = m.node_by_name("s").unwrap();
    assert_eq!(s, 1);
    let node = m.node(s).unwrap();
    assert_eq!(
        (node.op(), node.name(), node.kind()),
        ("add", "s", NodeKind::Op)
    );
    let names = |v: Vec<usize>| -> Vec<&str> { v.iter().map(|&i| m.nodes()[i].name()).collect() };
    assert_eq!(names(m.consumers(s)), ["r", "m", "t"]);
    // mul(s, s) uses s twice but is one consumer
    assert_eq!(m.node(4).unwrap().inputs(), [1, 1]);
    assert_eq!(m.consumer_table()[s], m.consumers(s));
    for i in 0..m.len() {
        assert_eq!(m.consumer_table()[i], m.consumers(i));
    }
    assert_eq!(
        names(m.consumers(m.node_by_name("u").unwrap())),
        Vec::<&str>::new()
    );
    let order = m.topological_order().unwrap();
    assert_topological(&m, &order);
    assert_eq!(names(order), ["a", "b", "s", "m", "k", "t", "u", "r"]);
    assert_eq!(m.reachable_from_outputs(), (0..8).collect::<Vec<_>>());
    let consts = m.constants();
    assert_eq!(consts.len(), 1);
    assert_eq!((consts[0].index, consts[0].name), (7, "k"));
    assert_eq!(&*consts[0].tensor.view::<f32>().unwrap(), &[0.5]);
    let map = m.constant_map();
    assert_eq!(map.names().collect::<Vec<_>>(), ["k"]);
    assert!(map.get("k").unwrap().storage().is_zero_copy());
    // the module inputs, by name, in the stored order
    assert_eq!(names(m.inputs().to_vec()), ["b", "a"]);
}

#[test]
fn an_already_topological_order_is_kept() {
    for f in [
        "cpp_add_const.tsm",
        "cpp_multi_io_shared.tsm",
        "edge/ok_minimal.tsm",
    ] {
        let b = load(f);
        let m = Module::parse(&b).unwrap();
        assert_eq!(
            m.topological_order().unwrap(),
            (0..m.len()).collect::<Vec<_>>(),
            "{f}"
        );
    }
    let b = load("py_convnet.tsm");
    let m = Module::parse(&b).unwrap();
    let order = m.topological_order().unwrap();
    assert_topological(&m, &order);
    assert_ne!(order, (0..m.len()).collect::<Vec<_>>());
}

#[test]
fn reserved_keys_typed() {
    // python: #dtype 0-d int32, #shape int32 1-D
    let b = load("py_convnet.tsm");
    let m = Module::parse(&b).unwrap();
    let input = m.node(m.node_by_name("input").unwrap()).unwrap();
    assert_eq!(input.kind(), NodeKind::Param);
    assert_eq!(input.dtype_hint().unwrap(), Some(DType::F32));
    assert_eq!(input.shape_hint().unwrap(), Some(vec![1, 3, 32, 32]));
    assert_eq!(input.output_count(), None);
    let conv = m.node(m.node_by_name("conv0").unwrap()).unwrap();
    assert_eq!(conv.dtype_hint().unwrap(), None);
    assert_eq!(conv.param("format").unwrap().as_str().unwrap(), "NCHW");
    assert_eq!(conv.param("#op").unwrap().as_str().unwrap(), "conv2d");
    // C++: #dtype with shape [1]
    let b = load("cpp_multi_io_shared.tsm");
    let m = Module::parse(&b).unwrap();
    let bn = m.node(m.node_by_name("b").unwrap()).unwrap();
    assert_eq!(bn.dtype_hint().unwrap(), Some(DType::I32));
    let b = load("edge/ok_output_count_1.tsm");
    let m = Module::parse(&b).unwrap();
    assert_eq!(m.node(1).unwrap().output_count(), Some(1));
    // packed values: three fields, strings in CHAR8 fields
    let b = load("cpp_multi_io_shared.tsm");
    let m = Module::parse(&b).unwrap();
    let mul = m.node(m.node_by_name("m").unwrap()).unwrap();
    let packed = mul.param("packed").unwrap().value();
    assert_eq!(packed.len(), 3);
    assert_eq!(
        bubble_module::char8_str(&packed.fields()[1]).unwrap(),
        "two"
    );
    assert_eq!(packed.as_str(), None);
    assert_eq!(mul.param("str").unwrap().as_str().unwrap().len(), 5);
}

#[test]
fn unreachable_nodes_are_kept_and_reported() {
    let b = load("edge/ok_unused_node.tsm");
    let m = Module::parse(&b).unwrap();
    assert_eq!(m.len(), 3);
    assert_eq!(m.reachable_from_outputs(), [0, 1]);
    assert!(m.is_unused(2) && !m.is_unused(0));
    assert_eq!(m.constants()[0].name, "z");
    assert_eq!(m.nodes_named("z").collect::<Vec<_>>(), [2]);
    assert_eq!(m.node_by_name("nope"), None);
    assert!(m.node(3).is_none());
}

#[test]
fn the_typed_graph_names_only_tensors_the_module_has() {
    // `packed` has three fields: the graph references `m/packed[0..3]`,
    // the names the tensors have, not `m/packed`
    let b = load("cpp_multi_io_shared.tsm");
    let m = Module::parse(&b).unwrap();
    let names: Vec<String> = m
        .unique_named_tensors()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let g = m.to_graph();
    let mul = g.nodes.iter().find(|n| n.name == "m").unwrap();
    let packed = &mul
        .attributes
        .iter()
        .find(|(k, _)| k == "packed")
        .unwrap()
        .1;
    assert_eq!(
        packed,
        &tensor_core::graph::Attribute::Tensors((0..3).map(|i| format!("m/packed[{i}]")).collect())
    );
    let weights: Vec<&str> = g.weights().collect();
    assert!(weights.contains(&"m/packed[1]"), "{weights:?}");
    for w in weights {
        assert!(
            names.iter().any(|n| n == w),
            "{w} is not a tensor of the module: {names:?}"
        );
    }
}
