//! The toy format in the command: `toy-mlformats` (this crate's binary)
//! registers it and runs `mlformats_cli::main`, so the command's format
//! lists, detection, `inspect` and `convert` take `.toyt` files.

use std::path::Path;
use std::process::{Command, Output};

use mlformats::DType;
use toy_format::toy_bytes;

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toy-mlformats"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn sample() -> Vec<u8> {
    let w: Vec<u8> = [1.5f32, -2.0, 3.25, 4.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let n: Vec<u8> = [5i32, 6, 7].iter().flat_map(|x| x.to_le_bytes()).collect();
    toy_bytes(&[
        ("conv/w", DType::F32, &[2, 2], &w),
        ("steps", DType::I32, &[3], &n),
    ])
}

#[test]
fn the_command_lists_the_toy_format() {
    let dir = tempfile::tempdir().unwrap();
    let help = ok(dir.path(), &["convert", "--help"]);
    let to = help
        .lines()
        .find(|l| l.trim_start().starts_with("--to <FORMAT>"))
        .unwrap_or_else(|| panic!("no --to in {help}"));
    assert!(to.contains("toy"), "--to choices: {to}");
    assert!(to.contains("safetensors"), "--to choices: {to}");
    // an unknown name is refused with the list, which has the toy format
    let out = run(dir.path(), &["convert", "a", "b", "--to", "nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("toy"), "{err}");
}

#[test]
fn inspect_and_convert_a_toy_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.toyt"), sample()).unwrap();

    let json: serde_json::Value =
        serde_json::from_str(&ok(dir.path(), &["inspect", "m.toyt", "--json"])).unwrap();
    assert_eq!(json["format"], "toy");
    let names: Vec<&str> = json["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["conv/w", "steps"]);
    assert_eq!(json["tensors"][0]["shape"], serde_json::json!([2, 2]));

    // toy -> safetensors -> toy gives the same bytes; detection by content
    // (a `.bin` name) and `--to toy` by name or alias
    ok(dir.path(), &["convert", "m.toyt", "m.safetensors"]);
    let show = ok(dir.path(), &["show", "m.safetensors", "conv/w"]);
    assert!(show.contains("3.25"), "{show}");
    ok(
        dir.path(),
        &["convert", "m.safetensors", "back.bin", "--to", "toyt"],
    );
    assert_eq!(
        std::fs::read(dir.path().join("back.bin")).unwrap(),
        sample()
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(dir.path(), &["inspect", "back.bin", "--json"])).unwrap();
    assert_eq!(json["format"], "toy");
}
