//! ONNX import into TenniS: the committed conformance cases
//! (testdata/translate/import/cases) re-convert to byte-identical `.tsm`
//! files whose results the real TenniS runtime verified
//! (testdata/translate/import/tennis.json), no verified case computed a
//! wrong result, every verified operator has a committed case, and a model
//! with operators TenniS cannot express is refused before anything is
//! written, naming them with counts.

use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, Document, Format, convert};
use sha2::{Digest, Sha256};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn reference() -> serde_json::Value {
    let p = root().join("testdata/translate/import/tennis.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn sha256(p: &Path) -> String {
    let d = Sha256::digest(std::fs::read(p).unwrap());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn committed_cases_reconvert_byte_identical() {
    let r = reference();
    let cases = r["cases"].as_object().unwrap();
    let committed = r["committed"].as_array().unwrap();
    assert!(committed.len() >= 30, "{} committed cases", committed.len());
    let dir = tempfile::tempdir().unwrap();
    for c in committed {
        let name = c.as_str().unwrap();
        let case = &cases[name];
        assert_eq!(case["status"], "pass", "{name}");
        let src = root().join(format!("testdata/translate/import/cases/{name}.onnx"));
        let out = dir.path().join(format!("{name}.tsm"));
        let s =
            convert(&src, &out, &ConvertOptions::new()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(s.whole_model);
        assert_eq!(sha256(&out), case["sha256"].as_str().unwrap(), "{name}");
        // Our own reader takes the module back, with a graph.
        let doc = Document::open(&out).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(doc.format(), Format::TennisModule, "{name}");
        let g = doc.graph().expect("a graph");
        assert!(!g.graphs[0].outputs.is_empty(), "{name}");
    }
}

#[test]
fn no_case_computes_a_wrong_result_and_every_verified_op_has_a_case() {
    let r = reference();
    assert_eq!(r["totals"]["wrong"], 0);
    for (name, c) in r["cases"].as_object().unwrap() {
        assert_eq!(c["status"], "pass", "{name} is {}", c["status"]);
    }
    let committed: Vec<&str> = r["committed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let cases = &r["cases"];
    for op in r["verified_ops"].as_array().unwrap() {
        let op = op.as_str().unwrap();
        assert!(
            committed
                .iter()
                .any(|c| cases[*c]["ops"].as_array().unwrap().iter().any(|o| o == op)),
            "{op} has no committed case"
        );
    }
    assert_eq!(r["const_param_totals"]["wrong"], 0);
    // Every table operator is verified by a case (Squeeze's node tests feed
    // their axes at run time; a constant-parameter case verifies it).
    let rows = graph_translate::import::tennis_table::support_rows();
    let verified = rows
        .iter()
        .filter(|row| r["per_op"][row.op]["pass"].as_u64().unwrap_or(0) > 0)
        .count();
    assert_eq!(verified, rows.len(), "{verified} of {}", rows.len());
}

#[test]
fn unsupported_operators_are_refused_with_counts_before_writing() {
    use onnx_format::builder::{Dim, GraphBuilder};
    use onnx_format::proto::tensor_proto::DataType;
    let dir = tempfile::tempdir().unwrap();
    let mut b = GraphBuilder::new("net");
    b.input("x", DataType::Float, &[Dim::Value(1), Dim::Value(4)]);
    b.node("Log", "", &["x"], &["a"], vec![]);
    b.node("Log", "", &["a"], &["b"], vec![]);
    b.node("Sin", "", &["b"], &["y"], vec![]);
    b.output("y", DataType::Float, &[Dim::Value(1), Dim::Value(4)]);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    let src = dir.path().join("m.onnx");
    std::fs::write(&src, bytes).unwrap();
    let out = dir.path().join("m.tsm");
    let e = convert(&src, &out, &ConvertOptions::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("Log ×2"), "{e}");
    assert!(e.contains("Sin ×1"), "{e}");
    assert!(!out.exists());
}

/// The TenniS runtime leaves the inputs on its stack when no output depends
/// on any of them, and fails ("Got unexpected output number"; seen in the
/// round trip of `prior_box`, whose output folds to a constant once the input
/// shapes are fixed): the import refuses such a module, naming the inputs.
/// An unused input beside used ones runs in TenniS (Dropout's ratio input in
/// `test_dropout_default_ratio`) and is kept.
#[test]
fn a_module_whose_outputs_use_no_input_is_refused() {
    use onnx_format::builder::{Dim, GraphBuilder};
    use onnx_format::proto::tensor_proto::DataType;
    let dir = tempfile::tempdir().unwrap();
    let model = |relu_of_x: bool| {
        let mut b = GraphBuilder::new("net");
        b.input("x", DataType::Float, &[Dim::Value(1), Dim::Value(4)]);
        b.input("unused", DataType::Float, &[Dim::Value(2)]);
        if relu_of_x {
            b.node("Relu", "", &["x"], &["y"], vec![]);
        } else {
            b.node("Shape", "", &["x"], &["s"], vec![]);
            let to = onnx_format::builder::attr::int("to", 1);
            b.node("Cast", "", &["s"], &["y"], vec![to]);
        }
        if relu_of_x {
            b.output("y", DataType::Float, &[Dim::Value(1), Dim::Value(4)]);
        } else {
            b.output("y", DataType::Float, &[Dim::Value(2)]);
        }
        let mut bytes = Vec::new();
        onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
        let src = dir.path().join(format!("m{relu_of_x}.onnx"));
        std::fs::write(&src, bytes).unwrap();
        src
    };
    let out = dir.path().join("m.tsm");
    let e = convert(model(false), &out, &ConvertOptions::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("input \"x\" (no output depends on any input"),
        "{e}"
    );
    assert!(e.contains("input \"unused\""), "{e}");
    assert!(!out.exists());
    convert(model(true), &out, &ConvertOptions::new()).unwrap();
    assert!(out.exists());
}

/// Operators TenniS computes differently in some configurations are
/// refused naming the attribute value or the reason: a Cast to a type
/// TenniS lacks, RoiAlign's max mode, a sorted-0 TopK, a grouped
/// ConvTranspose, and NonMaxSuppression (TenniS's pads its indices with
/// -1 to a fixed count).
#[test]
fn refusals_name_the_attribute_value_or_the_reason() {
    use onnx_format::builder::{Dim, GraphBuilder, attr};
    use onnx_format::proto::tensor_proto::DataType;
    let dir = tempfile::tempdir().unwrap();
    let v = |d: &[i64]| d.iter().map(|&x| Dim::Value(x)).collect::<Vec<_>>();
    let refusal = |tag: &str, build: &dyn Fn(&mut GraphBuilder)| -> String {
        let mut b = GraphBuilder::new("net");
        build(&mut b);
        let mut bytes = Vec::new();
        onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
        let src = dir.path().join(format!("{tag}.onnx"));
        std::fs::write(&src, bytes).unwrap();
        let out = dir.path().join(format!("{tag}.tsm"));
        let e = convert(&src, &out, &ConvertOptions::new())
            .unwrap_err()
            .to_string();
        assert!(!out.exists(), "{tag}");
        e
    };
    let e = refusal("cast", &|b| {
        b.input("x", DataType::Float, &v(&[2, 3]));
        b.node("Cast", "", &["x"], &["y"], vec![attr::int("to", 10)]);
        b.output("y", DataType::Float16, &v(&[2, 3]));
    });
    assert!(e.contains("Cast (to FLOAT16"), "{e}");
    let e = refusal("roialign", &|b| {
        b.input("x", DataType::Float, &v(&[1, 1, 4, 4]));
        b.input("r", DataType::Float, &v(&[1, 4]));
        b.input("i", DataType::Int64, &v(&[1]));
        let a = vec![attr::string("mode", "max")];
        b.node("RoiAlign", "", &["x", "r", "i"], &["y"], a);
        b.output("y", DataType::Float, &v(&[1, 1, 1, 1]));
    });
    assert!(e.contains("RoiAlign (mode max"), "{e}");
    let e = refusal("topk", &|b| {
        b.input("x", DataType::Float, &v(&[2, 5]));
        let k = b.const_i64("k", &[2]);
        let a = vec![attr::int("sorted", 0)];
        b.node("TopK", "", &["x", &k], &["y", "i"], a);
        b.output("y", DataType::Float, &v(&[2, 2]));
    });
    assert!(e.contains("TopK (sorted 0"), "{e}");
    let e = refusal("convt", &|b| {
        b.input("x", DataType::Float, &v(&[1, 2, 3, 3]));
        b.input("w", DataType::Float, &v(&[2, 1, 2, 2]));
        b.node(
            "ConvTranspose",
            "",
            &["x", "w"],
            &["y"],
            vec![attr::int("group", 2)],
        );
        b.output("y", DataType::Float, &v(&[1, 2, 4, 4]));
    });
    assert!(e.contains("ConvTranspose (group 2"), "{e}");
    let e = refusal("nms", &|b| {
        b.input("b", DataType::Float, &v(&[1, 3, 4]));
        b.input("s", DataType::Float, &v(&[1, 1, 3]));
        b.node("NonMaxSuppression", "", &["b", "s"], &["y"], vec![]);
        b.output("y", DataType::Int64, &v(&[3, 3]));
    });
    assert!(e.contains("NonMaxSuppression (TenniS's"), "{e}");
    assert!(e.contains("padded with -1"), "{e}");
}
