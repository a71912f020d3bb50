//! Property tests: modules built with [`ModuleBuilder`] from random inputs,
//! constants and operators (random names and keys: empty, long, non-ASCII;
//! every TenniS dtype; fields from 0-d and zero-size up to rank 8, with the
//! interesting float bit patterns) read back with the same nodes, names,
//! operators, inputs, parameters (sorted by key bytes by default, as given
//! otherwise) and field bytes. Writing is deterministic and a parsed module
//! writes back to the same bytes.

use bubble_module::{
    Module, ModuleBuilder, NodeId, NodeOrder, Packed, ParamOrder, WriteOptions, dtype_from_code,
};
use proptest::prelude::*;
use tensor_core::{DType, Tensor};

/// Every dtype a TenniS field can hold (codes 0..=32).
fn dtypes() -> Vec<DType> {
    (0u8..=32).filter_map(dtype_from_code).collect()
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z_/:.0-9]{1,12}",
        "[α-ω日本語é ]{1,8}",
        "[a-z]{100,400}",
    ]
}

/// Dims: 0-d, zero-size, small, and high ranks of mostly ones.
fn dims() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        4 => proptest::collection::vec(0usize..4, 0..=3),
        1 => proptest::collection::vec(1usize..=2, 4..=8),
        1 => (1usize..=8).prop_map(|r| { let mut v = vec![1; r]; v[r - 1] = 0; v }),
    ]
}

fn element(dtype: DType) -> BoxedStrategy<Vec<u8>> {
    match dtype {
        DType::F32 => prop_oneof![
            any::<u32>(),
            (0u32..0x40_0000).prop_map(|p| 0x7fc0_0000 | p),
            (1u32..0x40_0000).prop_map(|p| 0x7f80_0000 | p),
            Just(0x8000_0000u32),
        ]
        .prop_map(|b| b.to_le_bytes().to_vec())
        .boxed(),
        DType::F64 => prop_oneof![
            any::<u64>(),
            any::<u64>().prop_map(|p| 0xfff0_0000_0000_0001 | p),
            Just(0x8000_0000_0000_0000u64),
        ]
        .prop_map(|b| b.to_le_bytes().to_vec())
        .boxed(),
        DType::F16 => prop_oneof![
            any::<u16>(),
            Just(0x8000u16),
            (1u16..0x3ff).prop_map(|p| 0x7c00 | p)
        ]
        .prop_map(|b| b.to_le_bytes().to_vec())
        .boxed(),
        _ => proptest::collection::vec(any::<u8>(), dtype.size()).boxed(),
    }
}

fn tensor() -> impl Strategy<Value = Tensor<'static>> {
    (proptest::sample::select(dtypes()), dims()).prop_flat_map(|(dtype, dims)| {
        let n: usize = dims.iter().product();
        proptest::collection::vec(element(dtype), n)
            .prop_map(move |e| Tensor::new(dtype, dims.clone(), e.concat()).expect("sizes match"))
    })
}

/// An operator: its op name, node name, input picks (reduced modulo the
/// nodes that exist), and parameters (unique keys, not reserved).
type OpSpec = (
    String,
    String,
    Vec<usize>,
    Vec<(String, Vec<Tensor<'static>>)>,
);

#[derive(Debug, Clone)]
struct Spec {
    inputs: Vec<String>,
    constants: Vec<(String, Tensor<'static>)>,
    ops: Vec<OpSpec>,
    outputs: Vec<usize>,
}

fn op_spec() -> impl Strategy<Value = OpSpec> {
    (
        prop_oneof!["[a-z_]{1,10}", "[α-ω]{1,4}", "[a-z]{60,120}"],
        text(),
        proptest::collection::vec(any::<usize>(), 1..=3),
        proptest::collection::vec((text(), proptest::collection::vec(tensor(), 0..=3)), 0..=3),
    )
        .prop_map(|(op, name, inputs, mut params)| {
            let mut seen = std::collections::HashSet::new();
            params.retain(|(k, _)| k != "#op" && k != "#name" && seen.insert(k.clone()));
            (op, name, inputs, params)
        })
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        proptest::collection::vec(text(), 1..=3),
        proptest::collection::vec((text(), tensor()), 0..=3),
        proptest::collection::vec(op_spec(), 0..=4),
        proptest::collection::vec(any::<usize>(), 1..=3),
    )
        .prop_map(|(inputs, constants, ops, outputs)| Spec {
            inputs,
            constants,
            ops,
            outputs,
        })
}

fn build(spec: &Spec) -> Module<'static> {
    let mut b = ModuleBuilder::new();
    let mut ids: Vec<NodeId> = Vec::new();
    for name in &spec.inputs {
        ids.push(b.input(name));
    }
    for (name, t) in &spec.constants {
        ids.push(b.constant(name, t.clone()).expect("writable constant"));
    }
    for (op, name, picks, params) in &spec.ops {
        let inputs: Vec<NodeId> = picks.iter().map(|p| ids[p % ids.len()]).collect();
        let params = params
            .iter()
            .map(|(k, v)| (k.clone(), Packed::new(v.clone())));
        ids.push(b.op_with(op, name, &inputs, params).expect("valid op"));
    }
    for o in &spec.outputs {
        b.output(ids[o % ids.len()]).expect("a node");
    }
    b.build().expect("loadable")
}

fn same_tensor(a: &Tensor<'_>, b: &Tensor<'_>) -> bool {
    a.dtype() == b.dtype() && a.dims() == b.dims() && a.bytes() == b.bytes()
}

/// Same graph; parameters compared in the order `sorted` says the file has them.
fn check_same(read: &Module<'_>, built: &Module<'_>, sorted: bool) -> Result<(), TestCaseError> {
    prop_assert_eq!(read.inputs(), built.inputs());
    prop_assert_eq!(read.outputs(), built.outputs());
    prop_assert_eq!(read.len(), built.len());
    for (r, b) in read.nodes().iter().zip(built.nodes()) {
        prop_assert_eq!(r.op(), b.op());
        prop_assert_eq!(r.name(), b.name());
        prop_assert_eq!(r.inputs(), b.inputs());
        let mut expect: Vec<_> = b.params().iter().collect();
        if sorted {
            expect.sort_by(|x, y| x.key_bytes().cmp(y.key_bytes()));
        }
        prop_assert_eq!(r.params().len(), expect.len());
        for (rp, bp) in r.params().iter().zip(expect) {
            prop_assert_eq!(rp.key_bytes(), bp.key_bytes());
            prop_assert_eq!(rp.fields().len(), bp.fields().len());
            for (rt, bt) in rp.fields().iter().zip(bp.fields()) {
                prop_assert!(same_tensor(rt, bt), "{:?} vs {:?}", rt, bt);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn built_modules_round_trip(spec in spec()) {
        let module = build(&spec);
        for (opts, sorted) in [
            (WriteOptions::default(), true),
            (WriteOptions::default().with_params(ParamOrder::AsGiven), false),
        ] {
            let bytes = module.to_bytes(&opts).expect("writable");
            prop_assert_eq!(&module.to_bytes(&opts).expect("writable"), &bytes);
            let read = Module::parse(&bytes).expect("reads back");
            check_same(&read, &module, sorted)?;
            prop_assert_eq!(read.end_offset(), bytes.len());
            // A parsed module writes back to the same bytes (its order kept).
            let again = read.to_bytes(&opts.with_params(ParamOrder::AsGiven)).expect("writable");
            prop_assert_eq!(&again, &bytes);
            // Builder order is already producers-first: that order changes nothing.
            let topo = read.to_bytes(&opts.with_nodes(NodeOrder::ProducersFirst)).expect("writable");
            prop_assert_eq!(&topo, &bytes);
        }
    }
}
