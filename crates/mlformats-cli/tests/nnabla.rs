//! NNabla text and binary protobuf through the CLI: every golden's
//! `inspect --json` equals its `.expected.json`; `convert` re-prints text
//! nnabla wrote byte for byte and re-encodes binary byte for byte; tensors
//! convert between text and binary and back without change.

mod common;

use common::*;
use serde_json::Value;

fn dir() -> std::path::PathBuf {
    testdata().join("nnabla")
}

const NNABLA_WRITTEN_TEXT: [&str; 5] = [
    "mlp.nntxt",
    "mlp_fixed_batch.nntxt",
    "convnet.nntxt",
    "train.nntxt",
    "mlp_with_params.nntxt",
];

#[test]
fn text_goldens_inspect_as_expected() {
    assert_eq!(check_goldens(&dir(), ".nntxt"), 7);
}

#[test]
fn binary_goldens_inspect_as_expected() {
    assert_eq!(check_goldens(&dir(), ".protobuf"), 2);
}

fn convert(input: &std::path::Path, output: &std::path::Path) {
    let o = run(&["convert".as_ref(), input.as_os_str(), output.as_os_str()]);
    assert!(
        o.status.success(),
        "convert {} {}: {}",
        input.display(),
        output.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn convert_text_to_text_is_byte_identical_for_nnabla_files() {
    let tmp = tempfile::tempdir().unwrap();
    for name in NNABLA_WRITTEN_TEXT {
        let out = tmp.path().join(name);
        convert(&dir().join(name), &out);
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(dir().join(name)).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn convert_binary_to_binary_is_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["mlp.protobuf", "mlp_params.protobuf"] {
        let out = tmp.path().join(name);
        convert(&dir().join(name), &out);
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(dir().join(name)).unwrap(),
            "{name}"
        );
    }
}

fn tensors_of(v: &Value) -> Vec<Value> {
    v["tensors"].as_array().unwrap().clone()
}

#[test]
fn tensors_survive_text_binary_round_trips() {
    let tmp = tempfile::tempdir().unwrap();
    // binary parameters → text → binary: the same tensors, and nnabla's
    // own layout (the parameters-only file is byte-identical).
    let src = dir().join("mlp_params.protobuf");
    let txt = tmp.path().join("p.nntxt");
    let bin = tmp.path().join("p.protobuf");
    convert(&src, &txt);
    convert(&txt, &bin);
    let want = tensors_of(&inspect_json(&src));
    assert_eq!(want.len(), 4);
    assert_eq!(tensors_of(&inspect_json(&txt)), want);
    assert_eq!(tensors_of(&inspect_json(&bin)), want);
    assert_eq!(std::fs::read(&bin).unwrap(), std::fs::read(&src).unwrap());
    // text with parameters → binary: the whole model, same tensors and graph
    let src = dir().join("mlp_with_params.nntxt");
    let bin = tmp.path().join("q.protobuf");
    convert(&src, &bin);
    let want = inspect_json(&src);
    let j = inspect_json(&bin);
    assert_eq!(tensors_of(&j), tensors_of(&want));
    assert_eq!(j["format"], "nnabla-protobuf");
    assert_eq!(j["graph"], want["graph"]);
}

#[test]
fn broken_files_are_errors_not_panics() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "unknown.nntxt",
            b"network {\n  name: \"n\"\n  batch_size: 1\n  future_field: 3\n}\n",
            "4:3",
        ),
        ("unterminated.nntxt", b"network { name: \"abc\n}\n", "1:17"),
        ("truncated.protobuf", &[0xC2, 0x0C, 0x9C], "byte"),
        ("length.protobuf", &[0xC2, 0x0C, 0x7F, 0x0A], "byte"),
    ];
    for (name, bytes, needle) in cases {
        let p = tmp.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let o = run(&["inspect".as_ref(), "--json".as_ref(), p.as_os_str()]);
        assert_eq!(o.status.code(), Some(1), "{name}");
        assert!(o.stdout.is_empty(), "{name}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{name}: {err}"
        );
    }
}

#[test]
fn prototxt_is_text_and_convert_writes_what_nnabla_saves() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("net.prototxt");
    std::fs::copy(dir().join("mlp.nntxt"), &p).unwrap();
    let j = inspect_json(&p);
    assert_eq!(j["format"], "nnabla-nntxt");
    assert_eq!(j["graph"]["networks"][0]["name"], "net1");
    assert_eq!(j["graph"]["executors"], serde_json::json!(["runtime"]));
    // only the parameters of a text model (`--weights-only`) → a
    // parameters-only .protobuf: exactly the bytes nn.save_parameters wrote
    let out = tmp.path().join("w.protobuf");
    let src = dir().join("mlp_with_params.nntxt");
    let o = run(&[
        "convert".as_ref(),
        src.as_os_str(),
        out.as_os_str(),
        "--weights-only".as_ref(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(dir().join("mlp_params.protobuf")).unwrap()
    );
}
