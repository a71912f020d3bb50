//! `mlformats convert model.onnx out.nnp|.nntxt|.protobuf` imports the
//! graph; `--input-shape` reaches the import; a `.tsm` target is refused
//! rather than written without its graph.

mod common;

use common::{run_str, testdata};

fn case(name: &str) -> String {
    testdata()
        .join(format!("translate/import/cases/{name}.onnx"))
        .to_str()
        .unwrap()
        .to_string()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn an_onnx_model_becomes_an_nnabla_network() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.nntxt");
    let o = run_str(&[
        "convert",
        &case("test_convtranspose_1d"),
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("type: \"Deconvolution\""), "{text}");
    assert!(text.contains("executor {"), "{text}");
    let o = run_str(&["inspect", out.to_str().unwrap()]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("1 functions"), "{s}");
}

#[test]
fn input_shape_is_checked_against_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.nnp");
    let src = case("test_convtranspose_1d");
    let o = run_str(&[
        "convert",
        &src,
        out.to_str().unwrap(),
        "--input-shape",
        "nope=1,2",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not an input of the model"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    let o = run_str(&["convert", &src, out.to_str().unwrap(), "--input-shape", "X"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("NAME=D0,D1"), "{}", stderr(&o));
}

#[test]
fn a_tennis_target_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.tsm");
    let o = run_str(&[
        "convert",
        &case("test_convtranspose_1d"),
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("TenniS"), "{}", stderr(&o));
    assert!(!out.exists());
}
