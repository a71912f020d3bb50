//! `convert` into `.params` from another format (primitiv, column-major):
//! the writer path of the CLI (`formats::write`), not the re-encoder.

mod common;

use common::{inspect_json, run, testdata};
use serde_json::Value;

fn close(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
        _ => a == b,
    }
}

#[test]
fn primitiv_model_to_params_keeps_names_shapes_and_values() {
    let src = testdata().join("primitiv/model_nested_adam.data");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("model.params");
    let r = run(&["convert".as_ref(), src.as_os_str(), out.as_os_str()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let a = inspect_json(&src);
    let b = inspect_json(&out);
    assert_eq!(b["format"], "cvm-params");
    let (ta, tb) = (
        a["tensors"].as_array().unwrap(),
        b["tensors"].as_array().unwrap(),
    );
    assert_eq!(ta.len(), tb.len());
    assert!(!ta.is_empty());
    for (x, y) in ta.iter().zip(tb) {
        assert_eq!(x["name"], y["name"]);
        assert_eq!(x["dtype"], y["dtype"]);
        assert_eq!(x["shape"], y["shape"]);
        // primitiv stores column-major, .params row-major: same values,
        // summed in another order
        assert!(
            close(&x["sum"], &y["sum"]),
            "{}: {} vs {}",
            x["name"],
            x["sum"],
            y["sum"]
        );
    }
    // a 2-d tensor really was transposed into row-major order
    let w = tb.iter().find(|t| t["name"] == "enc.w").unwrap();
    let wa = ta.iter().find(|t| t["name"] == "enc.w").unwrap();
    assert_eq!(w["shape"], serde_json::json!([3, 2]));
    assert_ne!(
        w["sha256"], wa["sha256"],
        "column-major bytes written as-is"
    );
    // and converting that file again is byte-identical
    let again = dir.path().join("again.params");
    let r = run(&["convert".as_ref(), out.as_os_str(), again.as_os_str()]);
    assert!(r.status.success());
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
}
