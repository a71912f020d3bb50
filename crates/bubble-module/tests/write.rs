//! The writer and the builder: byte identity with the Python writer,
//! order options, atomic save, and what the builder refuses.

mod common;

use bubble_module::{
    Error, Module, ModuleBuilder, NodeOrder, Packed, ParamOrder, ReadOptions, WriteOptions,
};
use common::{files, testdata};
use tensor_core::{DType, MemoryOrder, Tensor};

#[test]
fn python_goldens_rewrite_byte_identical() {
    let mut n = 0;
    for path in files(&testdata(), ".tsm") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let m = Module::parse(&bytes).unwrap();
        let as_given = WriteOptions::default().with_params(ParamOrder::AsGiven);
        assert_eq!(m.to_bytes(&as_given).unwrap(), bytes, "{name}: as given");
        if name.starts_with("py_") {
            // the default: params sorted, nodes as given = the Python writer
            let mut out = Vec::new();
            let written = m.write(&mut out, &WriteOptions::default()).unwrap();
            assert_eq!(written, bytes.len() as u64);
            assert_eq!(out, bytes, "{name}");
            n += 1;
        } else {
            // C++ files have params in hash order: sorting changes bytes, not content
            let sorted = m.to_bytes(&WriteOptions::default()).unwrap();
            assert_ne!(sorted, bytes, "{name}");
            assert_eq!(sorted.len(), bytes.len());
            let again = Module::parse(&sorted).unwrap();
            for (a, b) in again.nodes().iter().zip(m.nodes()) {
                let mut keys: Vec<String> = b.params().iter().map(|p| p.key().into()).collect();
                keys.sort();
                let got: Vec<String> = a.params().iter().map(|p| p.key().into()).collect();
                assert_eq!(got, keys);
                for p in b.params() {
                    let q = a.param(&p.key()).unwrap();
                    for (x, y) in p.fields().iter().zip(q.fields()) {
                        assert_eq!(
                            (x.dtype(), x.dims(), x.bytes()),
                            (y.dtype(), y.dims(), y.bytes())
                        );
                    }
                }
            }
        }
    }
    assert_eq!(n, 4);
}

#[test]
fn producers_first_renumbers_consistently() {
    for f in [
        "py_add_const.tsm",
        "py_convnet.tsm",
        "py_multi_io_shared.tsm",
        "py_dtypes.tsm",
    ] {
        let bytes = std::fs::read(testdata().join(f)).unwrap();
        let m = Module::parse(&bytes).unwrap();
        let opts = WriteOptions::default().with_nodes(NodeOrder::ProducersFirst);
        let out = m.to_bytes(&opts).unwrap();
        assert_eq!(out.len(), bytes.len());
        let r = Module::parse(&out).unwrap();
        // identity order now, and the same graph by name
        assert_eq!(
            r.topological_order().unwrap(),
            (0..r.len()).collect::<Vec<_>>()
        );
        let name_of = |m: &Module<'_>, v: &[usize]| -> Vec<String> {
            v.iter().map(|&i| m.nodes()[i].name().to_string()).collect()
        };
        assert_eq!(name_of(&r, r.inputs()), name_of(&m, m.inputs()), "{f}");
        assert_eq!(name_of(&r, r.outputs()), name_of(&m, m.outputs()), "{f}");
        for n in m.nodes() {
            let i = r.node_by_name(n.name()).unwrap();
            assert_eq!(
                name_of(&r, r.nodes()[i].inputs()),
                name_of(&m, n.inputs()),
                "{f}"
            );
        }
        // writing that again in producers-first order changes nothing
        assert_eq!(r.to_bytes(&opts).unwrap(), out);
    }
    // py_add_const: c, y, x  ->  c, x, y
    let bytes = std::fs::read(testdata().join("py_add_const.tsm")).unwrap();
    let m = Module::parse(&bytes).unwrap();
    let out = m
        .to_bytes(&WriteOptions::default().with_nodes(NodeOrder::ProducersFirst))
        .unwrap();
    let r = Module::parse(&out).unwrap();
    let names: Vec<&str> = r.nodes().iter().map(|n| n.name()).collect();
    assert_eq!(names, ["c", "x", "y"]);
    assert_eq!((r.inputs(), r.outputs()), (&[1usize][..], &[2usize][..]));
    assert_eq!(r.nodes()[2].inputs(), [1, 0]);
}

/// The py_add_const graph built from scratch: same content as the Python
/// file (only the node order differs, which the Python writer leaves to
/// chance), and the exact bytes of the Python file once in its node order.
#[test]
fn builder_makes_what_the_python_writer_makes() {
    let mut b = ModuleBuilder::new();
    let x = b.input("x");
    let c = b
        .constant("c", Tensor::from_values([3], &[1f32, 2., 3.]).unwrap())
        .unwrap();
    let y = b.op("add", "y", &[x, c]).unwrap();
    b.output(y).unwrap();
    let m = b.build().unwrap();
    assert_eq!((m.inputs(), m.outputs()), (&[0usize][..], &[2usize][..]));
    let bytes = m.to_bytes(&WriteOptions::default()).unwrap();
    let golden = std::fs::read(testdata().join("py_add_const.tsm")).unwrap();
    assert_eq!(bytes.len(), golden.len());
    // same header, and each node's bytes appear in the golden
    assert_eq!(bytes[..128], golden[..128]);
    let r = Module::parse(&bytes).unwrap();
    for i in 0..3 {
        let start = r.nodes()[i].offset().unwrap();
        let end = r
            .nodes()
            .get(i + 1)
            .and_then(|n| n.offset())
            .unwrap_or(bytes.len());
        let chunk = &bytes[start..end - 4 * (1 + r.nodes()[i].inputs().len())];
        assert!(golden.windows(chunk.len()).any(|w| w == chunk), "node {i}");
    }
    // params: #op and #name first as added, written sorted
    assert_eq!(
        r.nodes()[1]
            .params()
            .iter()
            .map(|p| p.key().into_owned())
            .collect::<Vec<_>>(),
        ["#name", "#op", "value"]
    );
}

#[test]
fn builder_inputs_with_hints_and_packed_params() {
    let mut b = ModuleBuilder::new();
    let x = b.input_with("input", DType::F32, &[1, 3, 32, 32]).unwrap();
    let w = b
        .constant("w", Tensor::from_values([2, 3], &[1f32; 6]).unwrap())
        .unwrap();
    let conv = b
        .op_with(
            "conv2d",
            "conv",
            &[x, w],
            [
                ("format", Packed::string("NCHW")),
                (
                    "stride",
                    Packed::from(Tensor::from_values([4], &[1i32; 4]).unwrap()),
                ),
                (
                    "packed",
                    Packed::new(vec![
                        Tensor::from_values([], &[7i64]).unwrap(),
                        bubble_module::string_tensor("two"),
                    ]),
                ),
            ],
        )
        .unwrap();
    b.output(conv).unwrap();
    let m = b.build().unwrap();
    let bytes = m.to_bytes(&WriteOptions::default()).unwrap();
    let r = Module::parse(&bytes).unwrap();
    let input = r.node(0).unwrap();
    assert_eq!(input.dtype_hint().unwrap(), Some(DType::F32));
    assert_eq!(input.shape_hint().unwrap(), Some(vec![1, 3, 32, 32]));
    // #dtype 0-d as the Python writer does
    assert_eq!(
        input.param("#dtype").unwrap().fields()[0].dims(),
        &[] as &[usize]
    );
    let keys: Vec<String> = input.params().iter().map(|p| p.key().into()).collect();
    assert_eq!(keys, ["#dtype", "#name", "#op", "#shape"]);
    let c = r.node(2).unwrap();
    let keys: Vec<String> = c.params().iter().map(|p| p.key().into()).collect();
    assert_eq!(keys, ["#name", "#op", "format", "packed", "stride"]);
    assert_eq!(c.param("format").unwrap().as_str().unwrap(), "NCHW");
    let names: Vec<String> = r.named_tensors().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "w/value",
            "conv/format",
            "conv/packed[0]",
            "conv/packed[1]",
            "conv/stride"
        ]
    );
    // params as given keeps the call order
    let given = m
        .to_bytes(&WriteOptions::default().with_params(ParamOrder::AsGiven))
        .unwrap();
    let r = Module::parse(&given).unwrap();
    let keys: Vec<String> = r
        .node(2)
        .unwrap()
        .params()
        .iter()
        .map(|p| p.key().into())
        .collect();
    assert_eq!(keys, ["#op", "#name", "format", "stride", "packed"]);
}

#[test]
fn builder_refuses_what_the_library_would_not_load() {
    // an operator without inputs reachable from the outputs
    let mut b = ModuleBuilder::new();
    let y = b.op("relu", "y", &[]).unwrap();
    b.output(y).unwrap();
    assert!(matches!(
        b.build().unwrap_err(),
        Error::NotComputable { node: 0, .. }
    ));
    // ... but unreachable it is fine (readers keep unused nodes)
    let mut b = ModuleBuilder::new();
    let x = b.input("x");
    b.op("relu", "unused", &[]).unwrap();
    let y = b.op("relu", "y", &[x]).unwrap();
    b.output(y).unwrap();
    let m = b.build().unwrap();
    assert!(m.is_unused(1));
    // types TenniS cannot store, column-major data, repeated keys, foreign ids
    let mut b = ModuleBuilder::new();
    let bf = Tensor::from_values([1], &[tensor_core::half::bf16::from_f32(1.0)]).unwrap();
    let e = b.constant("bf", bf).unwrap_err();
    assert!(e.to_string().contains("no dtype code for bf16"), "{e}");
    let cm = Tensor::with_order(
        DType::U8,
        [2, 2],
        MemoryOrder::ColumnMajor,
        vec![1u8, 2, 3, 4],
    )
    .unwrap();
    assert!(
        b.constant("cm", cm)
            .unwrap_err()
            .to_string()
            .contains("column-major")
    );
    let x = b.input("x");
    let e = b
        .op_with(
            "relu",
            "y",
            &[x],
            [("a", Packed::string("1")), ("a", Packed::string("2"))],
        )
        .unwrap_err();
    assert!(e.to_string().contains("\"a\" given twice"), "{e}");
    let e = b
        .op_with("relu", "y", &[x], [("#op", Packed::string("x"))])
        .unwrap_err();
    assert!(e.to_string().contains("\"#op\""), "{e}");
    let foreign = {
        let mut other = ModuleBuilder::new();
        other.input("a");
        other.input("b")
    };
    assert!(b.op("relu", "z", &[foreign]).is_err());
    assert!(b.output(foreign).is_err());
}

#[test]
fn const_only_modules_load() {
    let mut b = ModuleBuilder::new();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        let id = b
            .constant(name, Tensor::from_values([2], &[i as f64, 1.0]).unwrap())
            .unwrap();
        b.output(id).unwrap();
    }
    let m = b.build().unwrap();
    let bytes = m.to_bytes(&WriteOptions::default()).unwrap();
    let r = Module::parse(&bytes).unwrap();
    assert_eq!(r.inputs(), &[] as &[usize]);
    assert_eq!(r.outputs(), [0, 1, 2]);
    assert_eq!(
        r.constant_map().names().collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
}

#[test]
fn save_is_atomic_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.tsm");
    let bytes = std::fs::read(testdata().join("py_dtypes.tsm")).unwrap();
    let m = Module::parse(&bytes).unwrap();
    m.save(&path, &WriteOptions::default()).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    let back = Module::open(&path).unwrap();
    assert_eq!(back.len(), m.len());
    // saving over it replaces it and leaves no temporary behind
    let mut b = ModuleBuilder::new();
    let x = b.input("x");
    let y = b.op("relu", "y", &[x]).unwrap();
    b.output(y).unwrap();
    let small = b.build().unwrap();
    small.save(&path, &WriteOptions::default()).unwrap();
    assert_eq!(tensor_core::io::count_entries(dir.path()), 1);
    let written = std::fs::read(&path).unwrap();
    let r = Module::parse_with(&written, &ReadOptions::default()).unwrap();
    assert_eq!(r.len(), 2);
    // a writer that fails gives an I/O error, not a panic
    struct Fail;
    impl std::io::Write for Fail {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let e = small.write(Fail, &WriteOptions::default()).unwrap_err();
    assert!(
        matches!(e, Error::Io(_)) && e.to_string().contains("disk full"),
        "{e}"
    );
}
