//! Helpers shared by the CLI's integration tests: run the binary, find
//! testdata, and compare `inspect --json` output with an `.expected.json`
//! the way the contract's reference comparer does.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The workspace's `testdata/` folder.
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Runs `mlformats` with `args`.
pub fn run(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mlformats"))
        .args(args)
        .output()
        .expect("the mlformats binary runs")
}

/// Runs `mlformats` with string arguments.
pub fn run_str(args: &[&str]) -> Output {
    let a: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    run(&a)
}

/// `mlformats inspect --json --schema 1 FILE` parsed (the contract the
/// `.expected.json` files record); panics with stderr on failure.
pub fn inspect_json(file: &Path) -> Value {
    let out = run(&[
        "inspect".as_ref(),
        "--json".as_ref(),
        "--schema".as_ref(),
        "1".as_ref(),
        file.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "inspect --json {} failed: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("inspect --json prints JSON")
}

/// `mlformats inspect --json FILE` (the current schema, 2) parsed.
pub fn inspect_json2(file: &Path) -> Value {
    let out = run(&["inspect".as_ref(), "--json".as_ref(), file.as_os_str()]);
    assert!(
        out.status.success(),
        "inspect --json {} failed: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("inspect --json prints JSON")
}

/// Every file in `dir` whose name ends with `suffix`, sorted.
pub fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    v.sort();
    v
}

const INT_DTYPES: [&str; 9] = ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"];

fn close(a: &Value, e: f64) -> bool {
    match a.as_f64() {
        Some(x) if !a.is_boolean() => {
            let diff = (x - e).abs();
            diff <= 1e-9_f64.max(1e-6 * x.abs().max(e.abs()))
        }
        _ => false,
    }
}

fn same(a: &Value, e: &Value, at: &str, out: &mut Vec<String>) {
    match e {
        Value::Object(em) => {
            let Some(am) = a.as_object() else {
                out.push(format!("{at}: expected an object, got {a}"));
                return;
            };
            for (k, v) in em {
                if k == "note" {
                    continue;
                }
                match am.get(k) {
                    None => out.push(format!("{at}.{k}: missing (expected {v})")),
                    Some(x) => same(x, v, &format!("{at}.{k}"), out),
                }
            }
        }
        Value::Array(ea) => match a.as_array() {
            Some(aa) if aa.len() == ea.len() => {
                for (i, (x, y)) in aa.iter().zip(ea).enumerate() {
                    same(x, y, &format!("{at}[{i}]"), out);
                }
            }
            _ => out.push(format!("{at}: expected {e}, got {a}")),
        },
        Value::Number(n) if n.is_f64() => {
            if !close(a, n.as_f64().unwrap_or(f64::NAN)) {
                out.push(format!("{at}: expected {e}, got {a}"));
            }
        }
        Value::Number(n) => {
            let ok = match (a.as_i64(), a.as_u64(), a.as_f64()) {
                (Some(x), _, _) if n.as_i64() == Some(x) => true,
                (_, Some(x), _) if n.as_u64() == Some(x) => true,
                (_, _, Some(x)) if a.is_f64() => Some(x) == n.as_f64(),
                _ => false,
            };
            if !ok {
                out.push(format!("{at}: expected {e}, got {a}"));
            }
        }
        _ => {
            if a != e {
                out.push(format!("{at}: expected {e}, got {a}"));
            }
        }
    }
}

fn check_sum(a: &Value, e: &Value, dtype: &str, at: &str, out: &mut Vec<String>) {
    let ok = match e {
        Value::Null => true,
        Value::String(_) => a == e,
        Value::Number(n) if INT_DTYPES.contains(&dtype) && !n.is_f64() => {
            let exact = n.as_i64().is_some_and(|v| v.unsigned_abs() < (1u64 << 53))
                || n.as_u64().is_some_and(|v| v < (1u64 << 53));
            if exact {
                a.as_i64() == n.as_i64() && a.as_u64() == n.as_u64()
                    || a.as_f64() == n.as_f64() && a.as_f64().is_some_and(|x| x.fract() == 0.0)
            } else {
                close(a, n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::Number(n) => close(a, n.as_f64().unwrap_or(f64::NAN)),
        _ => a == e,
    };
    if !ok {
        out.push(format!("{at}.sum: expected {e}, got {a}"));
    }
}

/// Compares an `inspect --json` document with an expected one, as
/// `compare_inspect.py` does: every field of `expected` must match (extra
/// fields in `actual` are fine, `note` is ignored); tensors by position with
/// name, dtype, shape and sha256 exact and sums within 1e-6 relative
/// (integer sums exact). Returns the mismatches.
pub fn compare_inspect(actual: &Value, expected: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if expected.get("reject").and_then(Value::as_bool) == Some(true) {
        if !(actual.is_null() || actual.get("error").is_some()) {
            out.push("expected the file to be rejected, but got a result".into());
        }
        return out;
    }
    let (Some(am), Some(em)) = (actual.as_object(), expected.as_object()) else {
        return vec!["not JSON objects".into()];
    };
    for (k, v) in em {
        if k == "note" || k == "tensors" {
            continue;
        }
        match am.get(k) {
            None => out.push(format!("{k}: missing")),
            Some(x) => same(x, v, k, &mut out),
        }
    }
    let et = em
        .get("tensors")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let at = am
        .get("tensors")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if et.len() != at.len() {
        out.push(format!(
            "tensors: expected {} entries, got {}",
            et.len(),
            at.len()
        ));
    }
    for (i, (a, e)) in at.iter().zip(&et).enumerate() {
        let w = format!("tensors[{i}]");
        let dtype = e.get("dtype").and_then(Value::as_str).unwrap_or("");
        for (k, v) in e.as_object().into_iter().flatten() {
            if k == "note" {
                continue;
            }
            match a.get(k) {
                None => out.push(format!("{w}.{k}: missing")),
                Some(x) if k == "sum" => check_sum(x, v, dtype, &w, &mut out),
                Some(x) => same(x, v, &format!("{w}.{k}"), &mut out),
            }
        }
    }
    out
}

/// Asserts that `inspect --json` of every `X` with an `X.expected.json`
/// (or `stem.expected.json`) in `dir` matches it; returns how many were checked.
pub fn check_goldens(dir: &Path, ext: &str) -> usize {
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in files_with_suffix(dir, ext) {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let stem = name.strip_suffix(ext).unwrap_or(&name);
        let candidates = [
            dir.join(format!("{name}.expected.json")),
            dir.join(format!("{stem}.expected.json")),
        ];
        let Some(exp_path) = candidates.iter().find(|p| p.exists()) else {
            continue;
        };
        let expected: Value = serde_json::from_slice(&std::fs::read(exp_path).unwrap()).unwrap();
        let out = run(&[
            "inspect".as_ref(),
            "--json".as_ref(),
            "--schema".as_ref(),
            "1".as_ref(),
            file.as_os_str(),
        ]);
        let actual: Value = if out.status.success() {
            serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
        } else {
            Value::Null
        };
        if expected.get("reject").and_then(Value::as_bool) == Some(true) {
            if out.status.success() {
                failures.push(format!("{name}: accepted, but must be rejected"));
            } else if out.status.code() != Some(1) || !out.stdout.is_empty() {
                failures.push(format!(
                    "{name}: rejection must be exit 1 with nothing on stdout"
                ));
            }
        } else if !out.status.success() {
            failures.push(format!(
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        } else {
            for m in compare_inspect(&actual, &expected) {
                failures.push(format!("{name}: {m}"));
            }
        }
        checked += 1;
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
    checked
}

#[test]
fn comparer_finds_differences() {
    let e: Value = serde_json::json!({"schema": 1, "format": "f", "tensors": [
        {"name": "a", "dtype": "i32", "shape": [2], "sha256": "x", "sum": 3},
        {"name": "b", "dtype": "f32", "shape": [], "sha256": "y", "sum": 1.5}],
        "graph": null, "note": "ignored"});
    let mut a = e.clone();
    a["extra"] = serde_json::json!(true);
    a["tensors"][1]["sum"] = serde_json::json!(1.5000001);
    assert!(
        compare_inspect(&a, &e).is_empty(),
        "{:?}",
        compare_inspect(&a, &e)
    );
    a["tensors"][0]["sum"] = serde_json::json!(4);
    a["tensors"][1]["shape"] = serde_json::json!([1]);
    assert_eq!(compare_inspect(&a, &e).len(), 2);
    a["graph"] = serde_json::json!({});
    assert_eq!(compare_inspect(&a, &e).len(), 3);
}
