//! The CLI's behaviour on files it cannot read and on bad usage.

mod common;

use common::run_str;

#[test]
fn unknown_file_is_a_clean_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.txt");
    std::fs::write(&p, b"just some text\n").unwrap();
    let out = run_str(&["inspect", "--json", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!("error: {}: ", p.display())),
        "{err}"
    );
    assert!(err.contains("not a file of any format"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn missing_file_is_a_clean_error() {
    let out = run_str(&["inspect", "definitely/not/here.params"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: definitely/not/here.params: "),
        "{err}"
    );
    assert!(err.to_lowercase().contains("no such file"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run_str(&["inspect"]).status.code(), Some(2));
    assert_eq!(run_str(&["frobnicate", "x"]).status.code(), Some(2));
    assert_eq!(
        run_str(&["inspect", "--format", "nope", "x"]).status.code(),
        Some(2)
    );
}

#[test]
fn convert_needs_a_known_output_format() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.unknownext");
    let out = run_str(&["convert", "whatever.params", out_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--to FORMAT") && err.contains("safetensors, npz"),
        "{err}"
    );
    assert!(!out_path.exists());
}
