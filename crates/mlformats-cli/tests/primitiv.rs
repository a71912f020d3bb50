//! primitiv through the CLI: every golden's `inspect --json` equals its
//! `.expected.json`, `convert X.data Y.data` re-encodes it byte for byte,
//! and reader cases are accepted or rejected as the C++ library does.

mod common;

use common::*;

fn dir() -> std::path::PathBuf {
    testdata().join("primitiv")
}

#[test]
fn goldens_inspect_as_expected() {
    assert_eq!(check_goldens(&dir(), ".data"), 37);
}

#[test]
fn reader_cases_inspect_as_expected() {
    // 41 cases have an expected.json (bad_datatype_param_as_model is a valid
    // parameter file when the type is not forced; see the crate's tests).
    assert_eq!(check_goldens(&dir().join("reader_cases"), ".data"), 41);
}

#[test]
fn convert_reencodes_every_golden_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let files = files_with_suffix(&dir(), ".data");
    assert_eq!(files.len(), 37);
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let out = tmp.path().join(name.replace(".data", "2.data"));
        let o = run(&["convert".as_ref(), f.as_os_str(), out.as_os_str()]);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(&f).unwrap(),
            "{name}: convert is not byte-identical"
        );
    }
}

#[test]
fn bad_files_give_exit_1_with_the_reason_and_offset() {
    let d = dir().join("reader_cases");
    let cases = [
        (
            "bad_data_length.data",
            "shape and data length mismatched at byte",
        ),
        (
            "bad_param_batch2.data",
            "batch size of a parameter should be 1",
        ),
        (
            "bad_nine_dims.data",
            "exceeding the dimension depth limit of 8",
        ),
        ("bad_header_fixint.data", "wrong MessagePack type"),
        ("bad_truncated.data", "unexpected end of file at byte"),
    ];
    for (file, msg) in cases {
        // some of them do not look like primitiv at all; force the format
        let o = run_str(&[
            "inspect",
            "--json",
            "--format",
            "primitiv",
            d.join(file).to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{file}: {err}");
        assert!(o.stdout.is_empty(), "{file}");
        assert!(
            err.starts_with("error: ") && err.contains(msg),
            "{file}: {err}"
        );
    }
    // an unknown data type is still read as primitiv when forced
    let o = run_str(&[
        "inspect",
        "--format",
        "primitiv",
        d.join("bad_datatype_unknown_0x500.data").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown data type 0x500"));
}

#[test]
fn tensor_with_batch_reencodes_and_keeps_its_batch() {
    let tmp = tempfile::tempdir().unwrap();
    let src = dir().join("tensor_2x2_batch3.data");
    let out = tmp.path().join("t.data");
    let o = run(&["convert".as_ref(), src.as_os_str(), out.as_os_str()]);
    assert!(o.status.success());
    let j = inspect_json(&out);
    assert_eq!(j["kind"], "tensor");
    assert_eq!(j["tensors"][0]["shape"], serde_json::json!([2, 2]));
    assert_eq!(j["tensors"][0]["batch"], 3);
}
