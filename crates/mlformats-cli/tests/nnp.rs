//! `mlformats` on NNabla `.nnp` archives and `.h5` parameter files.

mod common;

use common::{check_goldens, inspect_json, run_str, testdata};
use serde_json::Value;

fn nnabla() -> std::path::PathBuf {
    testdata().join("nnabla")
}

#[test]
fn golden_nnp_inspect_matches_expected() {
    assert!(check_goldens(&nnabla(), ".nnp") >= 6);
}

#[test]
fn golden_h5_inspect_matches_expected() {
    assert!(check_goldens(&nnabla(), ".h5") >= 4);
}

fn tensors_of(v: &Value) -> Vec<(String, String, bool)> {
    v["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["sha256"].as_str().unwrap().to_string(),
                t["need_grad"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn reencode_keeps_parameters_graph_and_layout() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "train_with_solver_state.nnp",
        "mlp_pbparam.nnp",
        "convnet_params.h5",
    ] {
        let src = nnabla().join(name);
        let out = dir.path().join(format!("re_{name}"));
        let o = run_str(&["convert", src.to_str().unwrap(), out.to_str().unwrap()]);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let a = inspect_json(&src);
        let b = inspect_json(&out);
        assert_eq!(tensors_of(&a), tensors_of(&b), "{name}");
        assert_eq!(a["graph"], b["graph"], "{name}");
        assert_eq!(a["format"], b["format"], "{name}");
        assert_eq!(a.get("solver_states"), b.get("solver_states"), "{name}");
    }
}

#[test]
fn convert_between_h5_and_nnp() {
    let dir = tempfile::tempdir().unwrap();
    let h5 = nnabla().join("mlp_params.h5");
    let nnp = dir.path().join("params_only.nnp");
    let o = run_str(&["convert", h5.to_str().unwrap(), nnp.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a = inspect_json(&h5);
    let b = inspect_json(&nnp);
    assert_eq!(b["format"], "nnabla-nnp");
    assert_eq!(tensors_of(&a), tensors_of(&b));
    assert_eq!(b["graph"]["networks"], serde_json::json!([]));
    // and the parameters of an .nnp into an .h5
    let back = dir.path().join("back.h5");
    let src = nnabla().join("convnet.nnp");
    let o = run_str(&["convert", src.to_str().unwrap(), back.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = inspect_json(&back);
    assert_eq!(c["format"], "nnabla-h5");
    let names: Vec<_> = tensors_of(&inspect_json(&src))
        .into_iter()
        .map(|t| (t.0, t.1))
        .collect();
    let got: Vec<_> = tensors_of(&c).into_iter().map(|t| (t.0, t.1)).collect();
    assert_eq!(names, got);
}

#[test]
fn broken_archives_fail_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(nnabla().join("mlp.nnp")).unwrap();
    let cut = dir.path().join("cut.nnp");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let o = run_str(&["inspect", "--json", cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("error: ") && err.contains("cut.nnp"),
        "{err}"
    );
    let h5 = std::fs::read(nnabla().join("mlp_params.h5")).unwrap();
    let cut = dir.path().join("cut.h5");
    std::fs::write(&cut, &h5[..h5.len() - 100]).unwrap();
    let o = run_str(&["inspect", cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("truncated"), "{err}");
}
