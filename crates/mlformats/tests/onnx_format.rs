//! `.onnx` as a format of the library: reading, writing tensors, re-encoding,
//! detection, and exports of graphs (options, errors, pruning, TenniS).

use std::path::{Path, PathBuf};

use mlformats::export::{ExportOptions, export_model};
use mlformats::{ConvertOptions, DiffOptions, Document, Format};
use tract_onnx::prelude::*;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn node_ops(doc: &Document) -> Vec<String> {
    doc.graph().unwrap().graphs[0]
        .nodes
        .iter()
        .map(|n| n.op.clone())
        .collect()
}

#[test]
fn tensors_convert_to_onnx_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("cvm/dtypes_core.params");
    let out = dir.path().join("t.onnx");
    let s = mlformats::convert(&src, &out, &ConvertOptions::new()).unwrap();
    assert_eq!(s.to, Format::Onnx);
    assert!(!s.whole_model);
    let doc = mlformats::open(&out).unwrap();
    assert_eq!(doc.format(), Format::Onnx);
    let a = mlformats::open(&src).unwrap();
    assert_eq!(
        a.names().collect::<Vec<_>>(),
        doc.names().collect::<Vec<_>>()
    );
    let report = mlformats::diff(&src, &out, &DiffOptions::default()).unwrap();
    assert_eq!(report.differences(), 0);
    // the model's own format: the same bytes
    let again = dir.path().join("again.onnx");
    mlformats::convert(&out, &again, &ConvertOptions::new()).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
    // and to another format
    let st = dir.path().join("t.safetensors");
    mlformats::convert(&out, &st, &ConvertOptions::new()).unwrap();
    assert_eq!(
        mlformats::diff(&st, &src, &DiffOptions::default())
            .unwrap()
            .differences(),
        0
    );
    // detected by content without its extension
    let bare = dir.path().join("model.bin");
    std::fs::copy(&out, &bare).unwrap();
    assert_eq!(mlformats::detect(bare.as_path()), Some(Format::Onnx));
    let j = doc.inspect_json();
    assert_eq!(j["format"], "onnx");
    assert_eq!(j["tensors"].as_array().unwrap().len(), doc.len());
    assert_eq!(j["opset"], 13);
}

#[test]
fn an_nnp_exports_its_network() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mlp.onnx");
    let s = mlformats::convert(
        testdata().join("nnabla/mlp.nnp"),
        &out,
        &ConvertOptions::new(),
    )
    .unwrap();
    assert!(s.whole_model);
    let doc = mlformats::open(&out).unwrap();
    assert_eq!(
        node_ops(&doc),
        ["Flatten", "Gemm", "Relu", "Flatten", "Gemm", "Softmax"]
    );
    let g = &doc.graph().unwrap().graphs[0];
    assert_eq!(g.inputs, ["x"]);
    assert_eq!(g.outputs, ["y"]);
    assert_eq!(g.value("x").unwrap().shape.as_deref(), Some(&[-1, 8][..]));
    let nnp = mlformats::open(testdata().join("nnabla/mlp.nnp")).unwrap();
    let mut a: Vec<&str> = nnp.names().collect();
    let mut b: Vec<&str> = doc.names().collect();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
    assert_eq!(
        mlformats::diff(
            testdata().join("nnabla/mlp.nnp"),
            &out,
            &DiffOptions::default()
        )
        .unwrap()
        .differences(),
        0
    );
    let m = onnx_format::Model::open(&out).unwrap();
    let input = &m.graph_proto().input[0];
    assert_eq!(onnx_format::read::value_dims(input), Some(vec![-1, 8]));
    assert!(format!("{input:?}").contains("batch"));
}

#[test]
fn options_choose_network_and_opset() {
    let doc = mlformats::open(testdata().join("nnabla/mlp.nnp")).unwrap();
    let (m, s) = export_model(&doc, &ExportOptions::new().opset(18)).unwrap();
    assert_eq!(s.opset, 18);
    assert_eq!(s.network, "net1");
    assert_eq!(m.opset_import[0].version, Some(18));
    assert_eq!(m.ir_version, Some(8));
    let e = export_model(&doc, &ExportOptions::new().opset(12)).unwrap_err();
    assert!(e.to_string().contains("operator sets 13 to 21"), "{e}");
    let e = export_model(&doc, &ExportOptions::new().network("nope")).unwrap_err();
    assert!(
        e.to_string()
            .contains("no network named \"nope\"; the file has \"net1\""),
        "{e}"
    );
    let (_, s) = export_model(&doc, &ExportOptions::new().network("net1")).unwrap();
    assert_eq!(s.network, "net1");
    // through convert
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.onnx");
    mlformats::convert(
        testdata().join("nnabla/mlp.nnp"),
        &out,
        &ConvertOptions::new().opset(17).network("net1"),
    )
    .unwrap();
    assert_eq!(onnx_format::Model::open(&out).unwrap().opset(), Some(17));
}

const NET: &str = r#"
network {
  name: "n"
  batch_size: 1
  variable { name: "x" type: "Buffer" shape { dim: -1 dim: 2 } }
  variable { name: "t" type: "Buffer" shape { dim: -1 dim: 2 } }
  variable { name: "W" type: "Parameter" shape { dim: 2 dim: 2 } }
  variable { name: "y" type: "Buffer" shape { dim: -1 dim: 2 } }
  variable { name: "z" type: "Buffer" shape { dim: -1 dim: 2 } }
  variable { name: "loss" type: "Buffer" shape { dim: -1 dim: 2 } }
  function { name: "fc" type: "Affine" input: "x" input: "W" output: "y" affine_param { base_axis: 1 } }
  function { name: "odd" type: OPS output: "z" }
  function { name: "err" type: "SquaredError" input: "y" input: "t" output: "loss" }
}
parameter { variable_name: "W" shape { dim: 2 dim: 2 } data: 1 data: 2 data: 3 data: 4 need_grad: true }
executor { name: "e" network_name: "n" data_variable { variable_name: "x" data_name: "x" } OUTPUTS }
"#;

fn synthetic(ops: &str, outputs: &[&str]) -> Document {
    let outs: String = outputs
        .iter()
        .map(|o| format!("output_variable {{ variable_name: \"{o}\" data_name: \"{o}\" }} "))
        .collect();
    let text = NET.replace("OPS", ops).replace("OUTPUTS", &outs);
    Document::from_bytes(text.into_bytes(), Some(Path::new("n.nntxt")), None).unwrap()
}

#[test]
fn losses_are_left_out_and_unsupported_types_all_named() {
    // the loss and the unknown function are not needed for y: left out
    let doc = synthetic("\"Frobnicate\" input: \"x\"", &["y"]);
    let (m, s) = export_model(&doc, &ExportOptions::new()).unwrap();
    assert_eq!(s.pruned, 2);
    let ops: Vec<_> = m
        .graph
        .unwrap()
        .node
        .iter()
        .map(|n| n.op_type.clone().unwrap())
        .collect();
    assert_eq!(ops, ["Flatten", "Gemm"]);
    // asking for them names every problem type once, with counts
    let doc = synthetic("\"Frobnicate\" input: \"loss\"", &["y", "z"]);
    let e = export_model(&doc, &ExportOptions::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("2 NNabla (network \"n\") operator types without an ONNX lowering: Frobnicate (1), SquaredError (training only) (1)"),
        "{e}"
    );
}

#[test]
fn files_without_a_graph_or_parameters() {
    let doc = mlformats::open(testdata().join("nnabla/mlp.nntxt")).unwrap();
    let e = export_model(&doc, &ExportOptions::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("parameter \"fc1/affine/W\" has no data in this file"),
        "{e}"
    );
    let doc = mlformats::open(testdata().join("cvm/two_entry.params")).unwrap();
    assert!(!mlformats::export::has_graph(&doc));
    assert!(export_model(&doc, &ExportOptions::new()).is_err());
}

#[test]
fn a_tennis_module_exports_and_runs() {
    let doc = mlformats::open(testdata().join("tennis/py_convnet.tsm")).unwrap();
    let (m, s) = export_model(&doc, &ExportOptions::new()).unwrap();
    assert!(s.nodes > 20, "{s:?}");
    let mut bytes = Vec::new();
    mlformats::onnx::write_model(&mut bytes, &m).unwrap();
    let plan = tract_onnx::onnx()
        .model_for_read(&mut &bytes[..])
        .unwrap()
        .with_input_fact(0, f32::fact([1, 3, 32, 32]).into())
        .unwrap()
        .into_optimized()
        .unwrap()
        .into_runnable()
        .unwrap();
    let x: Vec<f32> = (0..3 * 32 * 32).map(|i| ((i % 17) as f32) / 17.0).collect();
    let out = plan
        .run(tvec!(
            tract_onnx::prelude::Tensor::from_shape(&[1, 3, 32, 32], &x)
                .unwrap()
                .into()
        ))
        .unwrap();
    let p = out[0].as_slice::<f32>().unwrap();
    assert_eq!(p.len(), 10);
    let sum: f32 = p.iter().sum();
    assert!((sum - 1.0).abs() < 1e-4, "softmax sums to {sum}");
    // a module with an operator without a lowering is refused, naming it
    let doc = mlformats::open(testdata().join("tennis/py_dtypes.tsm")).unwrap();
    let e = export_model(&doc, &ExportOptions::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("TenniS operator type without an ONNX lowering: _pack (1)"),
        "{e}"
    );
    // --network does not apply to a module
    let doc = mlformats::open(testdata().join("tennis/py_convnet.tsm")).unwrap();
    assert!(export_model(&doc, &ExportOptions::new().network("x")).is_err());
}

#[test]
fn supported_lists() {
    let f = mlformats::export::nnabla_functions();
    for op in [
        "Affine",
        "Convolution",
        "MaxPooling",
        "BatchNormalization",
        "Softmax",
    ] {
        assert!(f.contains(&op), "{op}");
    }
    let t = mlformats::export::tennis_ops();
    for op in [
        "conv2d",
        "pooling2d_v2",
        "_limit",
        "inner_prod",
        "batch_norm",
    ] {
        assert!(t.contains(&op), "{op}");
    }
}
