//! `mlformats` on TenniS modules: every golden and edge case against its
//! `.expected.json`, rejections, byte-identical re-encoding, and modules
//! written from other formats' tensors.

mod common;

use common::{check_goldens, inspect_json, run_str, testdata};
use serde_json::Value;

fn dir() -> std::path::PathBuf {
    testdata().join("tennis")
}

#[test]
fn goldens_match_expected_json() {
    assert_eq!(check_goldens(&dir(), ".tsm"), 6);
}

#[test]
fn edge_cases_match_or_are_rejected() {
    assert_eq!(check_goldens(&dir().join("edge"), ".tsm"), 17);
}

#[test]
fn rejections_say_what_and_where() {
    let cases = [
        ("bad_truncated.tsm", "input count of node 1 at offset 257"),
        ("bad_missing_name.tsm", "node 1 (offset 206): #name missing"),
        (
            "bad_op_not_string.tsm",
            "#op missing or not a 1-D char8 string",
        ),
        ("bad_output_count_2.tsm", "#output_count is not 1"),
        ("bad_input_not_param.tsm", "missing from the module inputs"),
        (
            "bad_missing_module_input.tsm",
            "missing from the module inputs",
        ),
        (
            "bad_not_computable_op_without_inputs.tsm",
            "not computable: operator \"relu\" has no inputs",
        ),
    ];
    for (file, needle) in cases {
        let path = dir().join("edge").join(file);
        let out = run_str(&["inspect", "--json", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{file}");
        assert!(out.stdout.is_empty(), "{file}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: "), "{file}: {err}");
        assert!(err.contains(needle), "{file}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{file}: {err}");
    }
    // a bad code is not even detected as TenniS, unless forced
    let path = dir().join("edge/bad_code.tsm");
    let out = run_str(&["inspect", "--format", "tsm", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("bad header code 0x19910928"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn reencoding_is_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    for f in [
        "py_add_const.tsm",
        "py_convnet.tsm",
        "py_dtypes.tsm",
        "py_multi_io_shared.tsm",
        "cpp_add_const.tsm",
        "cpp_multi_io_shared.tsm",
        "edge/ok_fake_and_header_data_nonzero.tsm",
        "edge/ok_zero_field_param.tsm",
    ] {
        let src = dir().join(f);
        let out = tmp.path().join("out.tsm");
        let r = run_str(&["convert", src.to_str().unwrap(), out.to_str().unwrap()]);
        assert!(
            r.status.success(),
            "{f}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(&src).unwrap(),
            "{f}"
        );
    }
    // trailing bytes are not part of the module
    let src = dir().join("edge/ok_trailing_bytes.tsm");
    let out = tmp.path().join("trail.tsm");
    let r = run_str(&["convert", src.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(r.status.success());
    let orig = std::fs::read(&src).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), orig[..orig.len() - 4]);
}

/// Tensors from another format become `<const>` nodes listed as outputs,
/// which the C++ library loads (constants are computable, no inputs needed).
#[test]
fn tensors_from_another_format_become_a_const_module() {
    let tmp = tempfile::tempdir().unwrap();
    let src = testdata().join("cvm/dtypes_core.params");
    let out = tmp.path().join("consts.tsm");
    let r = run_str(&["convert", src.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let orig = inspect_json(&src);
    let got = inspect_json(&out);
    assert_eq!(got["format"], "tennis-module");
    let ot = orig["tensors"].as_array().unwrap();
    let gt = got["tensors"].as_array().unwrap();
    assert_eq!(ot.len(), gt.len());
    assert!(!gt.is_empty());
    for (o, g) in ot.iter().zip(gt) {
        assert_eq!(
            g["name"].as_str().unwrap(),
            format!("{}/value", o["name"].as_str().unwrap())
        );
        for k in ["dtype", "shape", "sha256", "sum"] {
            assert_eq!(g[k], o[k], "{k} of {}", o["name"]);
        }
    }
    let graph = &got["graph"];
    assert_eq!(graph["inputs"], Value::Array(vec![]));
    let n = graph["nodes"].as_array().unwrap().len();
    let outputs: Vec<u64> = (0..n as u64).collect();
    assert_eq!(graph["outputs"], serde_json::json!(outputs));
    for node in graph["nodes"].as_array().unwrap() {
        assert_eq!(node["op"], "<const>");
        assert_eq!(node["params"], serde_json::json!(["#name", "#op", "value"]));
    }
    // and back: the module's constants convert to the original format
    let back = tmp.path().join("back.params");
    let r = run_str(&["convert", out.to_str().unwrap(), back.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let bt = inspect_json(&back);
    for (o, b) in ot.iter().zip(bt["tensors"].as_array().unwrap()) {
        assert_eq!(b["sha256"], o["sha256"]);
        assert_eq!(b["name"], o["name"], "A -> .tsm -> A keeps names");
    }
    let d = run_str(&["diff", src.to_str().unwrap(), back.to_str().unwrap()]);
    assert!(d.status.success(), "{}", String::from_utf8_lossy(&d.stdout));
}
