//! One name per tensor: for every file of testdata/ that opens, every name
//! `inspect` prints (table and `--json`, each run once over all the files)
//! is the name `Document::tensor` takes, in the library's order; on a
//! sample of the files (in each folder, for each extension, the first file
//! and the first two whose names are renamed from a stored form or hold
//! characters other than letters, digits and `_-./:`), every name is one
//! `stats --only` takes, and the first, last and renamed ones are names
//! `show` and `convert --only` take. (Each command is a process of the
//! debug binary: run per name on every file, this took minutes.)

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{inspect_json2, run, run_str, testdata};
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

/// A name worth running every command with: renamed from a stored form,
/// empty, or with characters other than letters, digits and `_-./:`
/// (spaces, control characters, glob characters, non-ASCII).
fn unusual(t: &Value) -> bool {
    let name = t["name"].as_str().unwrap();
    t.get("stored_name").is_some()
        || name.is_empty()
        || name
            .chars()
            .any(|c| !(c.is_ascii_alphanumeric() || "_-./:".contains(c)))
}

/// `inspect --json` of `files` in one run (an array, one document a file).
fn inspect_all_json(files: &[&PathBuf]) -> Vec<Value> {
    let mut args: Vec<&std::ffi::OsStr> = vec!["inspect".as_ref(), "--json".as_ref()];
    args.extend(files.iter().map(|f| f.as_os_str()));
    let out = run(&args);
    assert!(
        out.status.success(),
        "inspect --json: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    match v {
        Value::Array(docs) if files.len() > 1 => docs,
        one => vec![one],
    }
}

/// The piped `inspect` table of `files` in one run, cut into each file's
/// part (each starts with a line `FILE: format, ...`).
fn inspect_all_tables(files: &[&PathBuf]) -> Vec<String> {
    let mut args: Vec<&std::ffi::OsStr> = vec!["inspect".as_ref()];
    args.extend(files.iter().map(|f| f.as_os_str()));
    let out = run(&args);
    assert!(
        out.status.success(),
        "inspect: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut starts = Vec::new();
    let mut from = 0;
    for f in files {
        let head = format!("{}: ", f.display());
        let at = if text[from..].starts_with(&head) {
            from
        } else {
            from + text[from..]
                .find(&format!("\n{head}"))
                .unwrap_or_else(|| panic!("{head} not in the table"))
                + 1
        };
        starts.push(at);
        from = at + head.len();
    }
    starts.push(text.len());
    starts
        .windows(2)
        .map(|w| text[w[0]..w[1]].to_string())
        .collect()
}

#[test]
fn every_name_inspect_prints_works_everywhere() {
    let mut files = Vec::new();
    all_files(&testdata(), &mut files);
    let mut opened = Vec::new();
    let mut docs = Vec::new();
    for file in &files {
        if let Ok(doc) = mlformats::open(file) {
            opened.push(file);
            docs.push(doc);
        }
    }
    // inspect --json and the table, over every file, a few runs of many files
    let (mut json, mut tables) = (Vec::new(), Vec::new());
    for chunk in opened.chunks(500) {
        json.extend(inspect_all_json(chunk));
        tables.extend(inspect_all_tables(chunk));
    }
    let (mut names, mut renamed) = (0, 0);
    // (folder, extension) -> the files whose commands are run
    let mut sample: BTreeMap<(PathBuf, String), Vec<usize>> = BTreeMap::new();
    for (i, file) in opened.iter().enumerate() {
        let (doc, json, text) = (&docs[i], &json[i], &tables[i]);
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
            renamed += t.get("stored_name").is_some() as usize;
            assert!(doc.tensor(name).is_some(), "{}: {name}", file.display());
        }
        let ext = file.extension().map(|e| e.to_string_lossy().into_owned());
        let key = (
            file.parent().unwrap().to_path_buf(),
            ext.unwrap_or_default(),
        );
        let group = sample.entry(key).or_default();
        let odd = tensors.iter().filter(|t| unusual(t)).count();
        let odd_in_group = group.len().saturating_sub(1);
        if group.is_empty() || (odd > 0 && odd_in_group < 2) {
            group.push(i);
        }
    }
    assert!(opened.len() >= 200, "only {} files opened", opened.len());
    assert!(names >= 900, "only {names} names");
    assert!(renamed >= 15, "only {renamed} renamed tensors");
    let sample: Vec<usize> = sample.into_values().flatten().collect();
    let checked = std::thread::scope(|scope| {
        let (a, b) = sample.split_at(sample.len() / 2);
        let (opened, json) = (&opened, &json);
        let threads: Vec<_> = [a, b]
            .into_iter()
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|&i| {
                            commands_take_the_names(
                                opened[i],
                                json[i]["tensors"].as_array().unwrap(),
                            )
                        })
                        .sum::<usize>()
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .sum::<usize>()
    });
    assert!(sample.len() >= 50, "{} files sampled", sample.len());
    assert!(checked >= 200, "only {checked} names run through stats");
    eprintln!(
        "{} files, {checked} names run through the commands",
        sample.len()
    );
}

/// Every name of `tensors` (the `inspect --json` rows of `file`) is one
/// `stats --only` takes (all in one run); the first, the last and up to 3
/// renamed ones, `show` and `convert --only` take. Returns how many names.
fn commands_take_the_names(file: &Path, tensors: &[Value]) -> usize {
    let listed: Vec<&str> = tensors
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // stats --only NAME ... gives each of those tensors
    let mut args = vec!["stats", "--json"];
    for name in &listed {
        args.extend(["--only", name]);
    }
    args.push(s(file));
    let r = run_str(&args);
    if !listed.is_empty() {
        assert!(
            r.status.success(),
            "{}: stats --only: {}",
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
        for name in &listed {
            assert!(
                got.contains(name),
                "{}: {name:?} vs {got:?}",
                file.display()
            );
        }
    }
    // show and convert --only with the names of the first and last tensors and every renamed one
    let mut picks: Vec<&str> = tensors
        .iter()
        .filter(|t| t.get("stored_name").is_some())
        .map(|t| t["name"].as_str().unwrap())
        .take(3)
        .collect();
    picks.extend(listed.first().into_iter().chain(listed.last()));
    picks.dedup();
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
    listed.len()
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
