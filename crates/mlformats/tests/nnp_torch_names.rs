//! A graph named as torch.onnx 2.x names it (`/model.0/conv/weight`,
//! `model.1.bias`, `/model.2/Constant_output_0`: testdata/translate/names,
//! made by `make_torch_names.py`) imports into `.nnp`: the parameters HDF5
//! cannot hold as they are stored at their mapped path (`_/model.0/...`)
//! and the network names them with that same path, so nnabla pairs every
//! parameter. The real nnabla 1.39 ran the very bytes this test converts
//! (`torch_names.json`: its sha256, and nnabla's and onnxruntime's outputs
//! on `torch_names.io.npz`). Our reader gives the original names back (for
//! the tensors and for the network's variables, whole and by slices), and
//! `.onnx` → `.nnp` → `.onnx` restores them.
#![cfg(all(feature = "nnabla", feature = "nnp", feature = "onnx"))]

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, Document, convert};
use sha2::{Digest, Sha256};

/// The parameters the graph names that HDF5 cannot hold as they are.
const MAPPED: [(&str, &str); 2] = [
    ("/model.0/conv/weight", "_/model.0/conv/weight"),
    ("/model.2/Constant_output_0", "_/model.2/Constant_output_0"),
];

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate/names")
}

fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string(data().join("torch_names.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `torch_names.onnx` converted to `.nnp` in `dir`.
fn nnp(dir: &Path) -> PathBuf {
    let out = dir.join("torch_names.nnp");
    let s = convert(
        data().join("torch_names.onnx"),
        &out,
        &ConvertOptions::new(),
    )
    .unwrap();
    assert!(s.whole_model);
    out
}

fn member(nnp: &Path, name: &str) -> Vec<u8> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(nnp).unwrap()).unwrap();
    let mut out = Vec::new();
    z.by_name(name).unwrap().read_to_end(&mut out).unwrap();
    out
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn the_nnp_nnabla_ran_pairs_every_network_parameter_with_a_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let out = nnp(dir.path());
    let r = reference();
    let sha: String = Sha256::digest(std::fs::read(&out).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        sha,
        r["nnp_sha256"].as_str().unwrap(),
        "not the bytes nnabla ran"
    );

    // the network as stored (read with the text parser alone)
    let text = String::from_utf8(member(&out, "network.nntxt")).unwrap();
    let model = nnp_archive::nnabla_proto::text::parse(&text).unwrap();
    assert_eq!(model.network.len(), 1);
    let net = &model.network[0];
    let params: BTreeSet<&str> = net
        .variable
        .iter()
        .filter(|v| v.r#type == "Parameter")
        .map(|v| v.name.as_str())
        .collect();
    let nnabla: BTreeSet<&str> = r["nnabla"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    // what nnabla registered loading the file: the network's names, no other
    assert_eq!(params, nnabla);
    for (orig, path) in MAPPED {
        assert!(params.contains(path), "{path}");
        assert!(!params.contains(orig), "{orig}");
    }
    let executor: BTreeSet<&str> = model.executor[0]
        .parameter_variable
        .iter()
        .map(|p| p.variable_name.as_str())
        .collect();
    assert_eq!(executor, params);
    let conv = net
        .function
        .iter()
        .find(|f| f.r#type == "Convolution")
        .unwrap();
    assert_eq!(conv.input[1], "_/model.0/conv/weight");
    // the intermediate values keep their names (nnabla holds them as they are)
    assert_eq!(conv.output[0], "/model.0/conv/Conv_output_0");

    // every one has a dataset at that path in parameter.h5, of its shape;
    // a mapped one keeps the name in its `original_name` attribute
    let h5 = hdf5_pure::File::from_bytes(member(&out, "parameter.h5")).unwrap();
    let originals: HashMap<&str, &str> = MAPPED.iter().map(|&(o, p)| (p, o)).collect();
    for v in net.variable.iter().filter(|v| v.r#type == "Parameter") {
        let ds = h5
            .dataset(&v.name)
            .unwrap_or_else(|e| panic!("{}: {e}", v.name));
        let dims: Vec<u64> = v
            .shape
            .as_ref()
            .unwrap()
            .dim
            .iter()
            .map(|&d| d as u64)
            .collect();
        assert_eq!(ds.shape().unwrap(), dims, "{}", v.name);
        let attr = ds.attrs().unwrap().remove("original_name");
        match originals.get(v.name.as_str()) {
            Some(orig) => match attr {
                Some(hdf5_pure::AttrValue::String(s)) => assert_eq!(s, *orig),
                Some(hdf5_pure::AttrValue::StringSized { value, .. }) => assert_eq!(value, *orig),
                other => panic!("{}: original_name {other:?}", v.name),
            },
            None => assert!(attr.is_none(), "{}", v.name),
        }
    }

    // what the real runtimes computed on the committed input agree
    let ort = floats(&r["onnxruntime"]["output0"]);
    let nn = floats(&r["nnabla"]["output0"]);
    assert_eq!(ort.len(), 5);
    let worst = ort
        .iter()
        .zip(&nn)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-5, "nnabla differs from onnxruntime by {worst}");
    let io = Document::open(data().join("torch_names.io.npz")).unwrap();
    let want = io.tensor("output0").unwrap().to_f64_vec().unwrap();
    // (as f32: the JSON parser may round the last bit of an f64)
    let f32s = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
    assert_eq!(f32s(&want), f32s(&ort));
    assert_eq!(io.tensor("images").unwrap().dims(), [1, 3, 8, 8]);
}

/// The tensor names of `doc`, and the graph's parameter values with the
/// tensor each holds.
fn names(graph: &tensor_core::graph::ModelGraph) -> (Vec<String>, Vec<(String, String)>) {
    let g = &graph.graphs[0];
    let inputs: Vec<String> = g.nodes.iter().flat_map(|n| n.inputs.clone()).collect();
    let held = g
        .values
        .iter()
        .filter_map(|v| Some((v.name.clone(), v.tensor.clone()?)))
        .collect();
    (inputs, held)
}

#[test]
fn reading_the_nnp_gives_the_original_names_whole_and_by_slices() {
    let dir = tempfile::tempdir().unwrap();
    let out = nnp(dir.path());
    let doc = Document::open(&out).unwrap();
    let stored: Vec<&str> = doc.stored().map(|s| s.name.as_str()).collect();
    assert_eq!(
        stored,
        [
            "/model.0/conv/weight",
            "model.0.conv.bias",
            "model.1.weight__T",
            "model.1.bias",
            "/model.2/Constant_output_0",
        ]
    );
    let bytes = std::fs::read(&out).unwrap();
    let sliced = Document::open_at(bytes, Some(&out), None, &Default::default()).unwrap();
    assert!(!sliced.was_read_whole(), "an .nnp is read by slices");
    let listed: Vec<&str> = sliced.entries().iter().map(|t| t.name()).collect();
    assert_eq!(listed, stored);
    for graph in [doc.graph().unwrap(), sliced.graph().unwrap()] {
        let (inputs, held) = names(graph);
        for (orig, path) in MAPPED {
            assert!(inputs.iter().any(|i| i == orig), "{orig} not an input");
            assert!(!inputs.iter().any(|i| i == path), "{path} still named");
        }
        // one name per tensor: each value holding a tensor is named as it
        assert!(held.len() >= stored.len(), "{held:?}");
        for (value, tensor) in &held {
            assert_eq!(value, tensor);
            assert!(stored.contains(&tensor.as_str()), "{tensor}");
        }
    }
    // and the tensors are read under those names
    let w = doc.tensor("/model.0/conv/weight").unwrap();
    assert_eq!(w.dims(), [4, 3, 3, 3]);
}

/// The names of `m`'s initializers, in stored order.
fn initializer_names(m: &onnx_format::Model) -> Vec<String> {
    m.graph_proto()
        .initializer
        .iter()
        .filter_map(|t| t.name.clone())
        .collect()
}

#[test]
fn onnx_to_nnp_to_onnx_restores_the_names() {
    let dir = tempfile::tempdir().unwrap();
    let out = nnp(dir.path());
    let back = dir.path().join("back.onnx");
    convert(&out, &back, &ConvertOptions::new()).unwrap();
    let src = onnx_format::Model::open(data().join("torch_names.onnx")).unwrap();
    let got = onnx_format::Model::open(&back).unwrap();
    let inits: BTreeSet<String> = initializer_names(&got).into_iter().collect();
    for n in [
        "/model.0/conv/weight",
        "model.0.conv.bias",
        "model.1.weight",
        "model.1.bias",
        "/model.2/Constant_output_0",
    ] {
        assert!(inits.contains(n), "{n} not in {inits:?}");
    }
    assert!(!inits.iter().any(|n| n.starts_with("_/")), "{inits:?}");
    let conv = got
        .graph_proto()
        .node
        .iter()
        .find(|n| n.op_type.as_deref() == Some("Conv"))
        .unwrap();
    assert_eq!(conv.input[1], "/model.0/conv/weight");
    // every value the source computes keeps its name
    let values = |m: &onnx_format::Model| -> BTreeSet<String> {
        m.graph_proto()
            .node
            .iter()
            .flat_map(|n| n.output.iter().cloned())
            .collect()
    };
    let kept = values(&got);
    for v in values(&src) {
        assert!(kept.contains(&v), "{v} lost");
    }
    // the same values as the source's initializers of those names
    let src_inits: HashMap<String, _> = src.initializers().unwrap().into_iter().collect();
    for (name, t) in got.initializers().unwrap() {
        if let Some(s) = src_inits.get(&name) {
            assert_eq!(t.to_f64_vec().unwrap(), s.to_f64_vec().unwrap(), "{name}");
        }
    }
}

#[test]
fn nnp_to_nnp_keeps_the_stored_paths_and_the_names() {
    // a transcode reads the names back and maps them again: the same model
    let dir = tempfile::tempdir().unwrap();
    let out = nnp(dir.path());
    let again = dir.path().join("again.nnp");
    convert(&out, &again, &ConvertOptions::new()).unwrap();
    assert_eq!(
        member(&again, "network.nntxt"),
        member(&out, "network.nntxt")
    );
    let a = Document::open(&out).unwrap();
    let b = Document::open(&again).unwrap();
    let listing = |d: &Document| -> Vec<(String, Vec<usize>)> {
        d.tensors()
            .map(|(n, t)| (n.to_string(), t.dims().to_vec()))
            .collect()
    };
    assert_eq!(listing(&a), listing(&b));
    assert_eq!(listing(&a)[0].0, "/model.0/conv/weight");
}

/// An ONNX model `x` [1, 4] → Add(x, `w`) → `y`, then Mul(y, `k`) →
/// `out`, with the names given, as bytes.
fn two_op_model(x: &str, w: &str, y: &str, k: &str) -> Vec<u8> {
    use onnx_format::builder::{Dim, GraphBuilder};
    use onnx_format::proto::tensor_proto::DataType;
    let mut g = GraphBuilder::new("g");
    let wt = tensor_core::Tensor::from_values([1, 4], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let kt = tensor_core::Tensor::from_values([1, 4], &[0.5f32, -1.0, 2.0, 4.0]).unwrap();
    g.initializer(w, &wt).unwrap();
    g.initializer(k, &kt).unwrap();
    let dims = [Dim::Value(1), Dim::Value(4)];
    g.input(x, DataType::Float, &dims);
    g.node("Add", "add", &[x, w], &[y], vec![]);
    g.node("Mul", "mul", &[y, k], &["out"], vec![]);
    g.output("out", DataType::Float, &dims);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &g.finish(&Default::default())).unwrap();
    bytes
}

#[test]
fn dot_components_map_and_a_path_another_variable_has_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // `.` components are stored `_.`, and come back
    let src = dir.path().join("dot.onnx");
    std::fs::write(&src, two_op_model("/in", "./a/./w", "/a/y", "a//k")).unwrap();
    let out = dir.path().join("dot.nnp");
    convert(&src, &out, &ConvertOptions::new()).unwrap();
    let text = String::from_utf8(member(&out, "network.nntxt")).unwrap();
    let model = nnp_archive::nnabla_proto::text::parse(&text).unwrap();
    let mut params: Vec<&str> = model.network[0]
        .variable
        .iter()
        .filter(|v| v.r#type == "Parameter")
        .map(|v| v.name.as_str())
        .collect();
    params.sort_unstable();
    assert_eq!(params, ["_./a/_./w", "a/_/k"]);
    let doc = Document::open(&out).unwrap();
    let mut names: Vec<&str> = doc.tensors().map(|(n, _)| n).collect();
    names.sort_unstable();
    assert_eq!(names, ["./a/./w", "a//k"]);
    let back = dir.path().join("dot.onnx.back.onnx");
    convert(&out, &back, &ConvertOptions::new()).unwrap();
    let mut inits = initializer_names(&onnx_format::Model::open(&back).unwrap());
    inits.sort_unstable();
    assert_eq!(inits, ["./a/./w", "a//k"]);

    // a parameter `/w` is stored at `_/w`, which another variable is
    // named: nnabla would take one for the other, so nothing is written
    let src = dir.path().join("clash.onnx");
    std::fs::write(&src, two_op_model("x", "/w", "_/w", "k")).unwrap();
    let out = dir.path().join("clash.nnp");
    let e = convert(&src, &out, &ConvertOptions::new()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("\"/w\"") && msg.contains("\"_/w\""), "{msg}");
    assert!(!out.exists());
}
