//! ONNX weights kept in `Constant` nodes (paddle2onnx's exports) are the
//! model's tensors: a model built here with every form of `Constant`
//! (`value` with `raw_data`, with `float_data`, `value_float`,
//! `value_floats`, `value_int`, `value_ints`, a string tensor left out) and
//! one initializer lists them under their output names, through the
//! whole-file path and by slices (`Document::open_at`) alike; they
//! convert to safetensors and npz with their values; an ONNX-to-ONNX
//! conversion keeps them as `Constant` nodes (the graph unchanged); `diff`
//! pairs them by name.
#![cfg(all(feature = "onnx", feature = "safetensors", feature = "npz"))]

use std::path::Path;

use mlformats::{ConvertOptions, DType, DiffOptions, Document};
use onnx_format::builder::Dim;
use onnx_format::builder::{GraphBuilder, attr};
use onnx_format::proto::TensorProto;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::Tensor;

/// A `Constant` node named `name` with one output `out` and `a`.
fn constant(g: &mut GraphBuilder, out: &str, a: onnx_format::AttributeProto) {
    g.node("Constant", &format!("{out}_node"), &[], &[out], vec![a]);
}

/// The model: `Y = MatMul(X, W) + B`, with `W` (3 x 40 f32, raw_data), `B`
/// (`value_floats`) and other constants as nodes, and one initializer.
fn model() -> Vec<u8> {
    let mut g = GraphBuilder::new("constants");
    let w: Vec<f32> = (0..120).map(|i| i as f32 * 0.5 - 7.0).collect();
    let wt = Tensor::from_values([3, 40], &w).unwrap();
    constant(
        &mut g,
        "/model.0/W",
        attr::tensor("value", onnx_format::tensor_to_proto("", &wt).unwrap()),
    );
    let b: Vec<f32> = (0..40).map(|i| i as f32).collect();
    constant(&mut g, "B", attr::floats("value_floats", &b));
    constant(&mut g, "half", attr::float("value_float", 0.5));
    constant(&mut g, "axis", attr::int("value_int", -1));
    constant(&mut g, "shape", attr::ints("value_ints", &[3, -1]));
    let typed = TensorProto {
        dims: vec![2, 2],
        data_type: Some(DataType::Float as i32),
        float_data: vec![1.0, 2.0, 3.0, 4.0],
        ..Default::default()
    };
    constant(&mut g, "typed", attr::tensor("value", typed));
    let strings = TensorProto {
        dims: vec![1],
        data_type: Some(DataType::String as i32),
        string_data: vec![b"a".to_vec()],
        ..Default::default()
    };
    constant(&mut g, "labels", attr::tensor("value", strings));
    g.initializer("scale", &Tensor::from_values([1], &[2.0f32]).unwrap())
        .unwrap();
    g.input("X", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    g.node("MatMul", "mm", &["X", "/model.0/W"], &["XW"], vec![]);
    g.node("Add", "add", &["XW", "B"], &["XWB"], vec![]);
    g.node("Mul", "mul", &["XWB", "scale"], &["Y"], vec![]);
    g.output("Y", DataType::Float, &[Dim::Value(2), Dim::Value(40)]);
    let m = g.finish(&Default::default());
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &m).unwrap();
    bytes
}

/// (name, dtype, dims, values as f64) the model holds, in order.
fn expected() -> Vec<(&'static str, DType, Vec<usize>, Vec<f64>)> {
    vec![
        ("scale", DType::F32, vec![1], vec![2.0]),
        (
            "/model.0/W",
            DType::F32,
            vec![3, 40],
            (0..120).map(|i| f64::from(i as f32 * 0.5 - 7.0)).collect(),
        ),
        ("B", DType::F32, vec![40], (0..40).map(f64::from).collect()),
        ("half", DType::F32, vec![], vec![0.5]),
        ("axis", DType::I64, vec![], vec![-1.0]),
        ("shape", DType::I64, vec![2], vec![3.0, -1.0]),
        ("typed", DType::F32, vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]),
    ]
}

#[test]
fn both_paths_list_constant_nodes_as_tensors() {
    let bytes = model();
    let path = Path::new("m.onnx");
    let doc = Document::from_bytes(bytes.clone(), Some(path), None).unwrap();
    let index = Document::open_at(bytes.clone(), Some(path), None, &Default::default()).unwrap();
    assert!(!index.was_read_whole(), "read by slices");
    let want = expected();
    let names: Vec<&str> = doc.stored().map(|s| s.name.as_str()).collect();
    assert_eq!(names, want.iter().map(|w| w.0).collect::<Vec<_>>());
    assert_eq!(index.entries().len(), want.len());
    for (i, (name, dtype, dims, values)) in want.iter().enumerate() {
        let t = doc.tensor(name).unwrap();
        assert_eq!(t.dtype(), *dtype, "{name}");
        assert_eq!(t.dims(), &dims[..], "{name}");
        assert_eq!(t.to_f64_vec().unwrap(), *values, "{name}");
        let it = &index.entries()[i];
        assert_eq!(it.name(), *name);
        assert_eq!(it.dtype(), *dtype, "{name}");
        assert_eq!(it.dims(), &dims[..], "{name}");
        let read = index.get(it.name()).unwrap();
        assert_eq!(read.bytes(), t.bytes(), "{name}");
        assert_eq!(read.dims(), &dims[..], "{name}");
    }
    // the big `raw_data` is a range of the file, not a copy
    let w = &index.entries()[1];
    let at = usize::try_from(w.offset()).unwrap();
    assert_eq!(
        &bytes[at..at + 480],
        doc.tensor("/model.0/W").unwrap().bytes()
    );
    // a slice of a held value
    let mut buf = Vec::new();
    let s = index.read_elements(2, 3, 2, &mut buf).unwrap();
    assert_eq!(s.to_f64_vec().unwrap(), [3.0, 4.0]);
    assert_eq!(index.summary(), doc.summary());
    assert_eq!(index.summary().tensors.len(), 7);
    assert_eq!(index.summary().parameters, 1 + 120 + 40 + 1 + 1 + 2 + 4);
}

#[test]
fn constant_weights_convert_and_diff() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("m.onnx");
    std::fs::write(&src, model()).unwrap();
    let doc = Document::from_bytes(model(), Some(&src), None).unwrap();
    for ext in ["safetensors", "npz"] {
        let out = dir.path().join(format!("m.{ext}"));
        mlformats::convert(&src, &out, &ConvertOptions::new()).unwrap();
        let back = mlformats::open(&out).unwrap();
        assert_eq!(back.len(), 7, "{ext}");
        for s in doc.stored() {
            let a = doc.tensor(&s.name).unwrap();
            let b = back
                .tensor(&s.name)
                .unwrap_or_else(|| panic!("{ext}: {}", s.name));
            assert_eq!(a.bytes(), b.bytes(), "{ext} {}", s.name);
            assert_eq!(a.dims(), b.dims(), "{ext} {}", s.name);
        }
        let d = mlformats::diff(&src, &out, &DiffOptions::new()).unwrap();
        assert!(d.is_equal(), "{ext}: {d:?}");
    }
    // ONNX to ONNX with an option that rewrites the model: the constants
    // stay `Constant` nodes, the graph the same
    let out = dir.path().join("cast.onnx");
    let mut o = ConvertOptions::new();
    o.dtype = Some(DType::F16);
    mlformats::convert(&src, &out, &o).unwrap();
    let m = onnx_format::Model::open(&out).unwrap();
    let consts: Vec<&str> = m
        .graph_proto()
        .node
        .iter()
        .filter(|n| n.op_type.as_deref() == Some("Constant"))
        .map(|n| n.output[0].as_str())
        .collect();
    assert_eq!(
        consts,
        [
            "/model.0/W",
            "B",
            "half",
            "axis",
            "shape",
            "typed",
            "labels"
        ]
    );
    let back = mlformats::open(&out).unwrap();
    assert_eq!(back.tensor("scale").unwrap().dtype(), DType::F16);
    assert_eq!(back.tensor("/model.0/W").unwrap().dtype(), DType::F32);
}
