//! One name per tensor: for every file of testdata/ that opens, every name
//! `inspect` prints (table and `--json`) is the name `--only`, `stats`,
//! `show`, `diff` and `Document::tensor` take.

mod common;

use std::path::{Path, PathBuf};

use common::{inspect_json2, run_str, testdata};
use serde_json::Value;

fn all_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            all_files(&p, out);
        } else {
            let n = p.file_name().unwrap().to_string_lossy();
            if !n.ends_with(".json") && !n.ends_with(".md") {
                out.push(p);
            }
        }
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn every_name_inspect_prints_works_everywhere() {
    let mut files = Vec::new();
    all_files(&testdata(), &mut files);
    let (mut opened, mut names, mut renamed) = (0, 0, 0);
    for file in &files {
        let Ok(doc) = mlformats::open(file) else {
            continue;
        };
        opened += 1;
        let json = inspect_json2(file);
        assert_eq!(json["schema"], 2);
        let tensors = json["tensors"].as_array().unwrap();
        let listed: Vec<&str> = tensors
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        // the Rust names are inspect's, in the same order
        assert_eq!(
            doc.names().collect::<Vec<_>>(),
            listed,
            "{}",
            file.display()
        );
        // the piped table lists the same names, whole
        let table = run_str(&["inspect", s(file)]);
        let text = String::from_utf8_lossy(&table.stdout);
        for name in listed.iter().filter(|n| !n.is_empty()) {
            // (control characters are shown escaped)
            let shown: String = if name.chars().any(char::is_control) {
                name.escape_debug().to_string()
            } else {
                name.to_string()
            };
            assert!(
                text.lines().any(|l| l.starts_with(&format!("  {shown}  "))),
                "{}: {name:?} not in the table:\n{text}",
                file.display()
            );
        }
        for t in tensors {
            let name = t["name"].as_str().unwrap();
            names += 1;
            if t.get("stored_name").is_some() {
                renamed += 1;
            }
            assert!(doc.tensor(name).is_some(), "{}: {name}", file.display());
            // stats --only NAME gives that tensor, and only it
            let r = run_str(&["stats", "--json", "--only", name, s(file)]);
            assert!(
                r.status.success(),
                "{}: stats --only {name:?}: {}",
                file.display(),
                String::from_utf8_lossy(&r.stderr)
            );
            let st: Value = serde_json::from_slice(&r.stdout).unwrap();
            let got: Vec<&str> = st["tensors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap())
                .collect();
            assert!(
                got.contains(&name),
                "{}: {name:?} vs {got:?}",
                file.display()
            );
        }
        // convert --only with the names of the first and last tensors and every renamed one
        let mut picks: Vec<&str> = tensors
            .iter()
            .filter(|t| t.get("stored_name").is_some())
            .map(|t| t["name"].as_str().unwrap())
            .take(3)
            .collect();
        picks.extend(listed.first().into_iter().chain(listed.last()));
        let dir = tempfile::tempdir().unwrap();
        for name in picks {
            // show takes it (values of numeric tensors; others refused by dtype, not by name)
            let r = run_str(&["show", "--json", s(file), name]);
            let err = String::from_utf8_lossy(&r.stderr);
            assert!(
                r.status.success() || err.contains("not a numeric type"),
                "{}: show {name:?}: {err}",
                file.display()
            );
            let out = dir.path().join("one.safetensors");
            let r = run_str(&[
                "convert",
                s(file),
                s(&out),
                "--only",
                name,
                "--skip-unsupported",
                "-q",
            ]);
            let err = String::from_utf8_lossy(&r.stderr);
            assert!(
                !err.contains("match none"),
                "{}: convert --only {name:?}: {err}",
                file.display()
            );
        }
    }
    assert!(opened >= 200, "only {opened} files opened");
    assert!(names >= 900, "only {names} names");
    assert!(renamed >= 15, "only {renamed} renamed tensors");
}

#[test]
fn tennis_constants_and_repeated_names_keep_their_stored_form_aside() {
    let file = testdata().join("tennis/py_convnet.tsm");
    let v2 = inspect_json2(&file);
    let c = v2["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "_const_fc_rhs")
        .expect("the constant under its node's name");
    assert_eq!(c["stored_name"], "_const_fc_rhs/value");
    assert_eq!(c["bytes"], 512 * 10 * 4);
    assert_eq!(c["elements"], 5120);
    // schema 1 is as it always was: names as stored, no new fields
    let v1 = common::inspect_json(&file);
    assert_eq!(v1["schema"], 1);
    let c1 = v1["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "_const_fc_rhs/value")
        .unwrap();
    assert!(c1.get("stored_name").is_none() && c1.get("bytes").is_none());
    // a stored form is not a second name
    let r = run_str(&[
        "stats",
        "--only",
        "_const_fc_rhs/value",
        file.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(1));
}
