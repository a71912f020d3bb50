//! `convert` never drops a graph silently: an NNabla network or TenniS
//! module going to ONNX with casts, renames or a selection is exported with
//! the change carried through the graph (checked by running it in
//! tract-onnx against nnabla's own outputs), or refused; separate parameter
//! files merge into a network; `diff` tells the exporter's helper tensors
//! apart; options that do not apply are refused; lossy steps are said.

use std::path::{Path, PathBuf};

use mlformats::onnx::proto::tensor_proto::DataType;
use mlformats::onnx::{ModelProto, TensorProto};
use mlformats::{ConvertOptions, DType, DiffOptions, Document, Error, Format, Tensor};
use tract_onnx::prelude::{Datum, Framework, InferenceFact, InferenceModelExt, TVec};

fn td(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(p)
}

fn read_model(path: &Path) -> ModelProto {
    mlformats::onnx::Model::open(path).unwrap().proto
}

/// Runs the ONNX file at `path` on convnet's reference input and returns
/// its largest error relative to nnabla's output.
fn convnet_error(path: &Path) -> f64 {
    let io = Document::open(td("onnx/convnet.io.npz")).unwrap();
    let x = io.tensor("in/x").unwrap();
    let dims = x.dims().to_vec();
    let data = x.to_vec::<f32>().unwrap();
    let m = tract_onnx::onnx()
        .model_for_path(path)
        .unwrap()
        .with_input_fact(0, InferenceFact::dt_shape(f32::datum_type(), &dims))
        .unwrap();
    let plan = m.into_optimized().unwrap().into_runnable().unwrap();
    let input = tract_onnx::prelude::Tensor::from_shape(&dims, &data).unwrap();
    let out = plan.run(TVec::from(vec![input.into()])).unwrap();
    let got = out[0].cast_to::<f32>().unwrap();
    let got = got.as_slice::<f32>().unwrap().to_vec();
    let want = io.tensor("out/y").unwrap().to_vec::<f32>().unwrap();
    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(1e-6f64, |m, v| m.max(f64::from(*v).abs()));
    let worst = got
        .iter()
        .zip(&want)
        .fold(0f64, |m, (g, w)| m.max(f64::from(*g - *w).abs()));
    worst / scale
}

fn initializer<'m>(m: &'m ModelProto, name: &str) -> Option<&'m TensorProto> {
    m.graph
        .as_ref()
        .unwrap()
        .initializer
        .iter()
        .find(|t| t.name.as_deref() == Some(name))
}

#[test]
fn dtype_f16_to_onnx_keeps_the_graph_with_cast_nodes_and_computes_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("convnet16.onnx");
    let s = mlformats::convert(
        td("onnx/convnet.nnp"),
        &out,
        &ConvertOptions::new().dtype(DType::F16),
    )
    .unwrap();
    let g = s.graph.as_ref().expect("the graph is exported");
    assert_eq!(g.network, "convnet");
    let doc = Document::open(td("onnx/convnet.nnp")).unwrap();
    // every float parameter cast, each read through one Cast node
    assert_eq!(s.cast.len(), doc.len());
    assert!(
        s.cast
            .iter()
            .all(|(_, a, b)| *a == DType::F32 && *b == DType::F16)
    );
    let m = read_model(&out);
    let graph = m.graph.as_ref().unwrap();
    let casts = graph
        .node
        .iter()
        .filter(|n| n.op_type.as_deref() == Some("Cast"))
        .count();
    assert!(casts >= doc.len(), "{casts} Cast nodes");
    assert_eq!(g.nodes, graph.node.len());
    for (name, _) in doc.tensors() {
        let t = initializer(&m, name).unwrap_or_else(|| panic!("no initializer {name}"));
        assert_eq!(t.data_type, Some(DataType::Float16 as i32), "{name}");
        // no node reads the f16 tensor but its Cast
        for n in &graph.node {
            if n.input.iter().any(|i| i == name) {
                assert_eq!(n.op_type.as_deref(), Some("Cast"), "{name}");
            }
        }
    }
    // the graph still computes nnabla's output, within f16 rounding
    let e = convnet_error(&out);
    assert!(e < 1e-2, "relative error {e}");
    assert!(e > 0.0, "f16 weights change the output a little");
    // an ONNX model's own graph gets the same treatment
    let again = dir.path().join("again16.onnx");
    let plain = dir.path().join("plain.onnx");
    mlformats::convert(td("onnx/convnet.nnp"), &plain, &ConvertOptions::new()).unwrap();
    let s = mlformats::convert(&plain, &again, &ConvertOptions::new().dtype(DType::F16)).unwrap();
    assert_eq!(s.from, Format::Onnx);
    assert_eq!(
        s.cast.len(),
        doc.len() + helper_floats(&read_model(&plain), &doc)
    );
    let e2 = convnet_error(&again);
    assert!(e2 < 1e-2 && e2 > 0.0, "relative error {e2}");
    // and the plain export is exact
    let plain = dir.path().join("convnet.onnx");
    mlformats::convert(td("onnx/convnet.nnp"), &plain, &ConvertOptions::new()).unwrap();
    assert!(convnet_error(&plain) < 1e-4);
}

#[test]
fn rename_to_onnx_renames_initializers_and_their_uses() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("renamed.onnx");
    let s = mlformats::convert(
        td("onnx/convnet.nnp"),
        &out,
        &ConvertOptions::new().rename("^conv1/", "first/"),
    )
    .unwrap();
    assert!(s.graph.is_some());
    assert!(!s.renamed.is_empty());
    assert!(s.renamed.iter().all(|(a, b)| a.starts_with("conv1/")
        && b.starts_with("first/")
        && a["conv1/".len()..] == b["first/".len()..]));
    let m = read_model(&out);
    let graph = m.graph.as_ref().unwrap();
    for (old, new) in &s.renamed {
        assert!(initializer(&m, old).is_none(), "{old}");
        assert!(initializer(&m, new).is_some(), "{new}");
        assert!(graph.node.iter().all(|n| !n.input.contains(old)), "{old}");
        assert!(graph.node.iter().any(|n| n.input.contains(new)), "{new}");
    }
    assert!(convnet_error(&out) < 1e-4);
    // two names made one, or a name the graph already uses, are refused
    let e = mlformats::convert(
        td("onnx/convnet.nnp"),
        dir.path().join("x.onnx"),
        &ConvertOptions::new().rename("/[Wb]$", "/P"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("the same name"), "{e}");
    let e = mlformats::convert(
        td("onnx/convnet.nnp"),
        dir.path().join("x.onnx"),
        &ConvertOptions::new().rename("^conv1/conv/W$", "mlformats/w"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("reserved"), "{e}");
}

#[test]
fn a_selection_that_breaks_the_graph_is_refused_and_weights_only_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.onnx");
    for opts in [
        ConvertOptions::new().only("conv1/*"),
        ConvertOptions::new().exclude("*/b"),
    ] {
        let e = mlformats::convert(td("onnx/convnet.nnp"), &out, &opts).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("the exported graph reads") && msg.contains("--weights-only"),
            "{msg}"
        );
        assert!(!out.exists());
    }
    // a selection that keeps everything the graph reads is fine
    mlformats::convert(
        td("onnx/convnet.nnp"),
        &out,
        &ConvertOptions::new().exclude("nothing*"),
    )
    .unwrap();
    assert!(convnet_error(&out) < 1e-4);
    let s = mlformats::convert(
        td("onnx/convnet.nnp"),
        dir.path().join("w.onnx"),
        &ConvertOptions::new().only("conv1/*").weights_only(true),
    )
    .unwrap();
    assert!(s.graph.is_none());
    let back = Document::open(dir.path().join("w.onnx")).unwrap();
    let names: Vec<&str> = back.names().collect();
    assert!(!names.is_empty() && names.iter().all(|n| n.starts_with("conv1/")));
}

#[test]
fn tennis_modules_to_onnx_with_options_keep_the_graph() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.onnx");
    let s = mlformats::convert(
        td("tennis/py_add_const.tsm"),
        &out,
        &ConvertOptions::new().dtype(DType::F16),
    )
    .unwrap();
    let g = s.graph.expect("the module's graph is exported");
    assert!(g.nodes > 0);
    let m = read_model(&out);
    assert!(
        m.graph
            .unwrap()
            .node
            .iter()
            .any(|n| n.op_type.as_deref() == Some("Cast"))
    );
    // string attributes of the module are not tensors of the graph: no
    // "char8" error, whatever the module
    for f in ["py_convnet.tsm", "py_dtypes.tsm", "cpp_multi_io_shared.tsm"] {
        if let Err(e) = mlformats::convert(
            td(&format!("tennis/{f}")),
            &out,
            &ConvertOptions::new().dtype(DType::F16),
        ) {
            assert!(!e.to_string().contains("char8"), "{f}: {e}");
        }
    }
}

#[test]
fn separate_parameters_merge_into_the_network() {
    let dir = tempfile::tempdir().unwrap();
    // without them, the error says how to give them
    let e = mlformats::convert(
        td("nnabla/convnet.nntxt"),
        dir.path().join("x.onnx"),
        &ConvertOptions::new(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("--params"), "{e}");
    // a refusal for another reason says that reason only
    let e = mlformats::convert(
        td("nnabla/convnet.nntxt"),
        dir.path().join("y.onnx"),
        &ConvertOptions::new().opset(5),
    )
    .unwrap_err();
    let e = e.to_string();
    assert!(e.contains("operator set") && !e.contains("--params"), "{e}");
    // .nntxt + .h5 exports exactly what the .nnp holding both exports
    let merged = dir.path().join("merged.onnx");
    let s = mlformats::convert(
        td("nnabla/convnet.nntxt"),
        &merged,
        &ConvertOptions::new().params(td("nnabla/convnet_params.h5")),
    )
    .unwrap();
    assert_eq!(s.from, Format::NnablaNntxt);
    assert_eq!(s.graph.as_ref().unwrap().network, "convnet");
    let whole = dir.path().join("whole.onnx");
    mlformats::convert(td("nnabla/convnet.nnp"), &whole, &ConvertOptions::new()).unwrap();
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&whole).unwrap()
    );
    // to .nnp: the same parameters as the .nnp nnabla wrote
    let nnp = dir.path().join("merged.nnp");
    mlformats::convert(
        td("nnabla/convnet.nntxt"),
        &nnp,
        &ConvertOptions::new().params(td("nnabla/convnet_params.h5")),
    )
    .unwrap();
    let r = mlformats::diff(&nnp, td("nnabla/convnet.nnp"), &DiffOptions::new()).unwrap();
    assert!(r.is_equal(), "{r:?}");
    assert!(Document::open(&nnp).unwrap().graph().is_some());
    // .protobuf parameters, to .nntxt: the file with both nnabla wrote
    let nntxt = dir.path().join("mlp.nntxt");
    mlformats::convert(
        td("nnabla/mlp.nntxt"),
        &nntxt,
        &ConvertOptions::new().params(td("nnabla/mlp_params.protobuf")),
    )
    .unwrap();
    let r = mlformats::diff(
        &nntxt,
        td("nnabla/mlp_with_params.nntxt"),
        &DiffOptions::new(),
    )
    .unwrap();
    assert!(r.is_equal() && r.tensors.len() == 4, "{r:?}");
    // loops expand with the merged parameters
    for (net, params) in [
        ("loop_nested.nntxt", "loop_nested_params.h5"),
        (
            "loop_recurrent_delay.nntxt",
            "loop_recurrent_delay_params.h5",
        ),
    ] {
        let net_doc = Document::open(td(&format!("nnabla/{net}"))).unwrap();
        let full = net_doc
            .with_parameters(td(&format!("nnabla/{params}")))
            .unwrap();
        let p = Document::open(td(&format!("nnabla/{params}"))).unwrap();
        assert_eq!(full.len(), p.len());
        let s =
            mlformats::convert_document(&full, dir.path().join("l.onnx"), &ConvertOptions::new())
                .unwrap();
        assert!(s.graph.unwrap().nodes > 0, "{net}");
    }
    // a parameter file that is not NNabla, or a network that is not one
    let e = Document::open(td("nnabla/convnet.nntxt"))
        .unwrap()
        .with_parameters(td("cvm/two_entry.params"))
        .unwrap_err();
    assert!(e.to_string().contains("NNabla parameters come in"), "{e}");
    let e = Document::open(td("cvm/two_entry.params"))
        .unwrap()
        .with_parameters(td("nnabla/convnet_params.h5"))
        .unwrap_err();
    assert!(
        e.to_string().contains("merges into an NNabla network"),
        "{e}"
    );
}

/// The export of convnet with its helper constants renamed to the reserved
/// prefix (as the exporter names them).
fn export_with_prefixed_helpers(out: &Path) -> usize {
    let doc = Document::open(td("nnabla/convnet.nnp")).unwrap();
    let (mut m, _) =
        mlformats::export::export_model(&doc, &mlformats::export::ExportOptions::new()).unwrap();
    let g = m.graph.as_mut().unwrap();
    let mut map = std::collections::HashMap::new();
    for t in &mut g.initializer {
        let n = t.name.clone().unwrap();
        if doc.tensor(&n).is_none() && !n.starts_with(mlformats::convert::RESERVED_PREFIX) {
            let new = format!("{}{n}", mlformats::convert::RESERVED_PREFIX);
            t.name = Some(new.clone());
            map.insert(n, new);
        }
    }
    for node in &mut g.node {
        for i in &mut node.input {
            if let Some(new) = map.get(i) {
                *i = new.clone();
            }
        }
    }
    let helpers = g
        .initializer
        .iter()
        .filter(|t| {
            t.name
                .as_deref()
                .unwrap()
                .starts_with(mlformats::convert::RESERVED_PREFIX)
        })
        .count();
    let mut bytes = Vec::new();
    mlformats::onnx::write_model(&mut bytes, &m).unwrap();
    std::fs::write(out, bytes).unwrap();
    helpers
}

#[test]
fn diff_lists_the_exporters_helper_tensors_apart() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("convnet.onnx");
    let helpers = export_with_prefixed_helpers(&out);
    assert!(helpers > 0);
    let r = mlformats::diff(td("nnabla/convnet.nnp"), &out, &DiffOptions::new()).unwrap();
    assert!(r.is_equal(), "{r:?}");
    assert_eq!(r.helpers_in_b.len(), helpers);
    assert!(r.only_in_b.is_empty() && r.helpers_in_a.is_empty());
    assert_eq!(r.tensors.len(), 8);
    let j = r.to_json();
    assert_eq!(j["equal"], true);
    assert_eq!(j["helpers_in_b"].as_array().unwrap().len(), helpers);
    // the other way round too; a real difference still counts
    let r = mlformats::diff(&out, td("nnabla/convnet.nnp"), &DiffOptions::new()).unwrap();
    assert!(r.is_equal() && r.helpers_in_a.len() == helpers);
    let r = mlformats::diff(td("nnabla/mlp.nnp"), &out, &DiffOptions::new()).unwrap();
    assert!(!r.is_equal());
}

/// The exporter names its helper constants with the reserved prefix, so a
/// correct export compares equal to its source.
#[test]
fn diff_after_a_plain_export_says_equal() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["nnabla/convnet.nnp", "nnabla/mlp.nnp", "onnx/convnet.nnp"] {
        let out = dir.path().join("x.onnx");
        mlformats::convert(td(f), &out, &ConvertOptions::new()).unwrap();
        let r = mlformats::diff(td(f), &out, &DiffOptions::new()).unwrap();
        assert!(r.is_equal(), "{f}: {r:?}");
    }
}

#[test]
fn options_that_do_not_apply_to_the_target_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(ConvertOptions, &str, &str)> = vec![
        (
            ConvertOptions::new().network("convnet"),
            "x.npz",
            "--network",
        ),
        (ConvertOptions::new().opset(13), "x.safetensors", "--opset"),
        (
            ConvertOptions::new().opset(13).weights_only(true),
            "x.onnx",
            "--weights-only",
        ),
        (
            ConvertOptions::new().keep_order(true),
            "x.safetensors",
            "--keep-order",
        ),
        (
            ConvertOptions::new().keep_order(true),
            "x.onnx",
            "--keep-order",
        ),
    ];
    for (opts, out, word) in cases {
        let p = dir.path().join(out);
        let e = mlformats::convert(td("nnabla/convnet.nnp"), &p, &opts).unwrap_err();
        assert!(matches!(e, Error::OptionDoesNotApply { .. }), "{e:?}");
        assert!(e.to_string().contains(word), "{out}: {e}");
        assert!(!p.exists(), "{out}");
    }
    // --opset on a file with no graph, to ONNX
    let e = mlformats::convert(
        td("cvm/two_entry.params"),
        dir.path().join("x.onnx"),
        &ConvertOptions::new().opset(13),
    )
    .unwrap_err();
    assert!(e.to_string().contains("no graph"), "{e}");
    // --keep-order where it applies
    mlformats::convert(
        td("nnabla/convnet.nnp"),
        dir.path().join("x.npz"),
        &ConvertOptions::new().keep_order(true),
    )
    .unwrap();
}

#[test]
fn lossy_and_dropping_steps_are_said_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    // bf16 has no numpy type: written as f32, with a warning
    let st = dir.path().join("b.safetensors");
    let bytes: Vec<u8> = [1.5f32, -2.0, 0.25]
        .iter()
        .flat_map(|v| tensor_core_bf16(*v))
        .collect();
    let t = Tensor::new(DType::BF16, vec![3usize], bytes).unwrap();
    mlformats::save(&st, [("w", &t)]).unwrap();
    let s = mlformats::convert(&st, dir.path().join("b.npz"), &ConvertOptions::new()).unwrap();
    assert_eq!(s.cast, vec![("w".to_string(), DType::BF16, DType::F32)]);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(s.warnings[0].contains("bf16 -> f32"), "{:?}", s.warnings);
    // NNabla's protobuf parameters are f32: --dtype f16 cannot hold there
    for ext in ["nntxt", "protobuf"] {
        let s = mlformats::convert(
            td("nnabla/mlp.nnp"),
            dir.path().join(format!("m.{ext}")),
            &ConvertOptions::new().dtype(DType::F16),
        )
        .unwrap();
        assert!(s.cast.is_empty(), "{ext}: {:?}", s.cast);
        assert!(
            s.warnings.len() == 1 && s.warnings[0].contains("(f16 -> f32)"),
            "{ext}: {:?}",
            s.warnings
        );
    }
    let s = mlformats::convert(
        td("nnabla/mlp.nnp"),
        dir.path().join("m16.nnp"),
        &ConvertOptions::new().dtype(DType::F16),
    )
    .unwrap();
    assert!(s.warnings.is_empty() && s.cast.len() == 4, "{s:?}");
    // asked for: said in the summary, not warned
    let s = mlformats::convert(
        td("nnabla/convnet.nnp"),
        dir.path().join("h.npz"),
        &ConvertOptions::new().dtype(DType::F16).weights_only(true),
    )
    .unwrap();
    assert_eq!(s.cast.len(), 8);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert!(s.line().contains("cast 8 to f16"), "{}", s.line());
    // a graph a tensors-only target cannot hold: warned, unless asked for
    let s = mlformats::convert(
        td("nnabla/convnet.nnp"),
        dir.path().join("g.safetensors"),
        &ConvertOptions::new(),
    )
    .unwrap();
    assert!(
        s.warnings.iter().any(|w| w.contains("the graph")),
        "{:?}",
        s.warnings
    );
    // a primitiv optimizer holds configs only: refused, not an empty file
    let out = dir.path().join("o.safetensors");
    let e = mlformats::convert(
        td("primitiv/optimizer_adam_default.data"),
        &out,
        &ConvertOptions::new(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("optimizer configs"), "{e}");
    assert!(!out.exists());
    // the summary as JSON
    let s = mlformats::convert(
        td("nnabla/convnet.nnp"),
        dir.path().join("j.onnx"),
        &ConvertOptions::new().dtype(DType::F16),
    )
    .unwrap();
    let j = s.to_json();
    assert_eq!(j["from"], "nnabla-nnp");
    assert_eq!(j["to"], "onnx");
    assert_eq!(j["graph"]["network"], "convnet");
    assert_eq!(j["cast"].as_array().unwrap().len(), 8);
    assert_eq!(j["cast"][0]["to"], "f16");
}

fn tensor_core_bf16(v: f32) -> [u8; 2] {
    mlformats::tensor_core::half::bf16::from_f32(v).to_le_bytes()
}

/// Float initializers of `m` that `doc` does not hold (an exporter's helper
/// constants): an ONNX input counts them as its own tensors.
fn helper_floats(m: &ModelProto, doc: &Document) -> usize {
    m.graph
        .as_ref()
        .unwrap()
        .initializer
        .iter()
        .filter(|t| doc.tensor(t.name.as_deref().unwrap()).is_none())
        .filter(|t| t.data_type == Some(DataType::Float as i32))
        .count()
}
