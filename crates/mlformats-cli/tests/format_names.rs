//! The format names and cast types the CLI offers are the library's: every
//! choice `--help` lists parses with `Format::from_name` (or is a cast
//! target), and every name and alias the library takes is a choice of
//! `--from` and `--to`.

mod common;

use common::run_str;
use mlformats::{CAST_TARGETS, Format};

/// The `[possible values: ...]` `convert --help` lists for `flag`.
fn offered(flag: &str) -> Vec<String> {
    let out = run_str(&["convert", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let at = help
        .find(&format!("--{flag} <"))
        .unwrap_or_else(|| panic!("--{flag} in {help}"));
    let rest = &help[at..];
    let list = rest
        .split_once("[possible values: ")
        .and_then(|(_, r)| r.split_once(']'))
        .unwrap_or_else(|| panic!("no possible values for --{flag} in {rest}"))
        .0;
    list.split(',').map(|s| s.trim().to_string()).collect()
}

#[test]
fn every_format_choice_offered_parses() {
    let to = offered("to");
    assert_eq!(to, Format::names(), "--to offers the contract names");
    for name in &to {
        let f = Format::from_name(name).unwrap_or_else(|| panic!("{name} does not parse"));
        assert_eq!(f.name(), name);
    }
    let from = offered("from");
    assert_eq!(from, to);
}

#[test]
fn every_cast_choice_offered_is_a_cast_target() {
    let names: Vec<&str> = CAST_TARGETS.iter().map(|d| d.name()).collect();
    assert_eq!(offered("dtype"), names);
    assert_eq!(names, ["f16", "bf16", "f32", "f64"]);
}

/// Exit status and stderr of a command whose input does not exist: 1 (the
/// file) once the arguments parse, 2 when one does not.
fn status(args: &[&str]) -> (Option<i32>, String) {
    let out = run_str(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_library_name_and_alias_is_a_cli_choice() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.bin");
    let missing = missing.to_str().unwrap();
    let out = dir.path().join("out.bin");
    let out = out.to_str().unwrap();
    let mut checked = 0;
    for &f in Format::ALL {
        for name in std::iter::once(f.name()).chain(f.aliases()) {
            let (code, err) = status(&["inspect", "--from", name, missing]);
            assert_eq!(code, Some(1), "--from {name}: {err}");
            assert!(err.contains("missing.bin"), "--from {name}: {err}");
            let (code, err) = status(&["convert", missing, out, "--to", name]);
            assert_eq!(code, Some(1), "--to {name}: {err}");
            assert!(err.contains("missing.bin"), "--to {name}: {err}");
            checked += 1;
        }
    }
    // ten names, six aliases and eleven extensions that are not a name
    assert!(checked >= 27, "{checked}");
    for name in ["pb", "pbtxt", "hdf5", "tvm", "numpy"] {
        let (code, err) = status(&["convert", missing, out, "--to", name]);
        assert_eq!(code, Some(1), "--to {name}: {err}");
    }
    let (code, err) = status(&["convert", missing, out, "--to", "nope"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("invalid value 'nope'"), "{err}");
}

#[test]
fn every_cast_target_is_a_dtype_choice() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.npz");
    let missing = missing.to_str().unwrap();
    let out = dir.path().join("out.npz");
    let out = out.to_str().unwrap();
    for d in CAST_TARGETS {
        let (code, err) = status(&["convert", missing, out, "--dtype", d.name()]);
        assert_eq!(code, Some(1), "--dtype {d}: {err}");
    }
    let (code, err) = status(&["convert", missing, out, "--dtype", "i8"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("possible values: f16, bf16, f32, f64"),
        "{err}"
    );
}
