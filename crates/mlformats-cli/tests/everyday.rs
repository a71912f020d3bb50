//! Everyday use: `show`, `inspect` summaries of several files and of
//! standard input, schema 2's one graph shape, `--only`/`--exclude` on
//! `stats` and `diff`, and the exit codes of `diff` and `validate`.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{inspect_json2, run_str, testdata};
use serde_json::Value;

fn td(rel: &str) -> String {
    testdata().join(rel).to_str().unwrap().to_string()
}

fn out(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn show_prints_values_and_numpy_slices() {
    let file = td("nnabla/mlp.nnp");
    let doc = mlformats::open(&file).unwrap();
    let w: Vec<f32> = doc.tensor("fc1/affine/W").unwrap().to_vec().unwrap(); // [8, 16]
    let o = run_str(&["show", "--json", &file, "fc1/affine/W[0:2, :]"]);
    assert!(o.status.success(), "{}", err(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["name"], "fc1/affine/W");
    assert_eq!(v["dtype"], "f32");
    assert_eq!(v["shape"], serde_json::json!([2, 16]));
    assert_eq!(v["tensor_shape"], serde_json::json!([8, 16]));
    let rows = v["values"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1][3].as_f64().unwrap(), f64::from(w[16 + 3]));
    // an index drops the axis; negative indices count from the end; steps
    let o = run_str(&["show", "--json", &file, "fc1/affine/W[-1, ::5]"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["shape"], serde_json::json!([4]));
    let got: Vec<f64> = v["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let want: Vec<f64> = [0, 5, 10, 15]
        .iter()
        .map(|j| f64::from(w[7 * 16 + j]))
        .collect();
    assert_eq!(got, want);
    // text: a header and the values, numpy-like
    let o = run_str(&["show", &file, "fc1/affine/b[0:3]"]);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(
        text.starts_with("fc1/affine/b[0:3]: f32 [3] (of [16])\n["),
        "{text}"
    );
    let b: Vec<f32> = doc.tensor("fc1/affine/b").unwrap().to_vec().unwrap();
    assert!(text.contains(&b[0].to_string()), "{text}");
    // a whole tensor, by the name alone
    let o = run_str(&["show", &td("cvm/two_entry.params"), "w"]);
    assert_eq!(out(&o), "w: i8 [2] (of [2])\n[1, -1]\n");
    // an unknown name, a bad slice, an index out of range: errors that say so
    for (spec, words) in [
        ("nope", "no tensor named \"nope\""),
        ("fc1/affine/b[a]", "is not an integer"),
        ("fc1/affine/b[16]", "out of range"),
        ("fc1/affine/b[0, 0]", "2 axes given"),
    ] {
        let o = run_str(&["show", &file, spec]);
        assert_eq!(o.status.code(), Some(1), "{spec}");
        assert!(err(&o).contains(words), "{spec}: {}", err(&o));
    }
}

#[test]
fn show_takes_tennis_names_with_brackets_whole() {
    // a multi-field TenniS value is named `node/key[i]`: that name is taken
    // whole, and a slice can follow it
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(testdata().join("tennis")).unwrap() {
        let p = f.unwrap().path();
        let Ok(doc) = mlformats::open(&p) else {
            continue;
        };
        let Some(name) = doc.names().find(|n| n.ends_with(']')).map(String::from) else {
            continue;
        };
        let t = doc.tensor(&name).unwrap();
        if t.to_vec::<f64>().is_err() {
            continue;
        }
        let o = run_str(&["show", "--json", p.to_str().unwrap(), &name]);
        assert!(o.status.success(), "{name}: {}", err(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["name"], name.as_str());
        drop(dir);
        return;
    }
    panic!("no TenniS tensor named with brackets in testdata/tennis");
}

#[test]
fn inspect_summarises_parameters_graphs_and_several_files() {
    let nnp = td("nnabla/mlp.nnp");
    let o = run_str(&["inspect", &nnp, &td("cvm/two_entry.params")]);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    // total parameters, per-tensor counts
    assert!(text.contains("4 tensors, 212 parameters"), "{text}");
    assert!(text.contains("2 tensors, 3 parameters"), "{text}");
    // the executor's inputs and outputs with shapes, operator counts
    assert!(
        text.contains(
            "network \"net1\" (batch_size 2): 4 functions, 9 variables, run by executor runtime"
        ),
        "{text}"
    );
    assert!(
        text.contains("  inputs: x [-1, 8]\n  outputs: y [-1, 4]\n"),
        "{text}"
    );
    assert!(
        text.contains("  functions: Affine 2, ReLU 1, Softmax 1\n"),
        "{text}"
    );
    // several files in --json: an array of documents
    let o = run_str(&["inspect", "--json", &nnp, &td("cvm/two_entry.params")]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(v[0]["parameters"], 212);
    assert_eq!(v[1]["format"], "cvm-params");
    // `-` reads standard input
    let mut child = Command::new(env!("CARGO_BIN_EXE_mlformats"))
        .args(["inspect", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(&nnp).unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["format"], "nnabla-nnp");
    assert_eq!(v["tensors"], inspect_json2(Path::new(&nnp))["tensors"]);
    // a schema that does not exist is a usage error
    let o = run_str(&["inspect", "--json", "--schema", "3", &nnp]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn tennis_and_onnx_are_described_in_their_own_words() {
    let o = run_str(&["inspect", &td("tennis/py_convnet.tsm")]);
    let text = out(&o);
    assert!(text.contains("module: 37 nodes, 37 values\n"), "{text}");
    assert!(
        text.contains("  inputs: input\n  outputs: prob, gap\n"),
        "{text}"
    );
    assert!(text.contains("  nodes: <const> 15, add_bias 4,"), "{text}");
    assert!(
        !text.contains("batch_size") && !text.contains("network"),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let onnx = dir.path().join("c.onnx");
    let r = run_str(&[
        "convert",
        &td("onnx/convnet.nnp"),
        onnx.to_str().unwrap(),
        "-q",
    ]);
    assert!(r.status.success(), "{}", err(&r));
    let text = out(&run_str(&["inspect", onnx.to_str().unwrap()]));
    assert!(text.contains("graph \"convnet\": 11 nodes,"), "{text}");
    assert!(
        text.contains("  inputs: x [-1, 1, 8, 8]\n  outputs: y [-1, 3]\n"),
        "{text}"
    );
    assert!(text.contains("  nodes: Reshape 4,"), "{text}");
    assert!(
        !text.contains("batch_size") && !text.contains("functions"),
        "{text}"
    );
}

#[test]
fn schema_2_has_one_graph_shape_for_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let onnx = dir.path().join("c.onnx");
    let r = run_str(&[
        "convert",
        &td("onnx/convnet.nnp"),
        onnx.to_str().unwrap(),
        "-q",
    ]);
    assert!(r.status.success(), "{}", err(&r));
    let files = [
        td("nnabla/mlp.nnp"),
        td("tennis/py_convnet.tsm"),
        onnx.to_str().unwrap().to_string(),
    ];
    for f in &files {
        let v = inspect_json2(Path::new(f));
        let g = v["graph"]
            .as_object()
            .unwrap_or_else(|| panic!("{f}: no graph"));
        let mut keys: Vec<&str> = g.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(
            keys,
            ["datasets", "executors", "graphs", "monitors", "optimizers"],
            "{f}"
        );
        for net in g["graphs"].as_array().unwrap() {
            let mut keys: Vec<&str> = net
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            keys.sort();
            assert_eq!(
                keys,
                ["batch_size", "inputs", "name", "nodes", "outputs", "values"],
                "{f}"
            );
            for n in net["nodes"].as_array().unwrap() {
                assert!(n["op"].is_string() && n["inputs"].is_array() && n["outputs"].is_array());
            }
            // every value naming a tensor names one inspect lists
            let names: Vec<&str> = v["tensors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap())
                .collect();
            for val in net["values"].as_array().unwrap() {
                if let Some(t) = val["tensor"].as_str() {
                    assert!(names.contains(&t), "{f}: {t}");
                }
            }
        }
        let total: u64 = v["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["elements"].as_u64().unwrap())
            .sum();
        assert_eq!(v["parameters"].as_u64().unwrap(), total, "{f}");
    }
    let v = inspect_json2(Path::new(&files[0]));
    assert_eq!(v["graph"]["executors"][0]["network"], "net1");
    assert_eq!(v["graph"]["executors"][0]["inputs"][0], "x");
}

#[test]
fn stats_and_diff_take_only_and_exclude() {
    let file = td("nnabla/mlp.nnp");
    let names = |o: &std::process::Output| -> Vec<String> {
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let o = run_str(&["stats", "--json", "--only", "fc1/*", &file]);
    assert_eq!(names(&o), ["fc1/affine/W", "fc1/affine/b"]);
    let o = run_str(&["stats", "--json", "--exclude", "*/W", &file]);
    assert_eq!(names(&o), ["fc1/affine/b", "fc2/affine/b"]);
    let o = run_str(&["stats", "--only", "nothing*", &file]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err(&o).contains("match none of the 4 tensors"),
        "{}",
        err(&o)
    );
    // diff: a file against a copy with one tensor changed
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.safetensors");
    let b = dir.path().join("b.safetensors");
    assert!(
        run_str(&["convert", &file, a.to_str().unwrap(), "-q"])
            .status
            .success()
    );
    let r = run_str(&[
        "convert",
        &file,
        b.to_str().unwrap(),
        "-q",
        "--dtype",
        "f16",
        "--only",
        "fc1/*",
    ]);
    assert!(r.status.success(), "{}", err(&r));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    assert_eq!(run_str(&["diff", a, b]).status.code(), Some(1));
    // only fc2: only in a, so different
    let o = run_str(&["diff", "--json", "--only", "fc2/*", a, b]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["only_in_a"].as_array().unwrap().len(), 2);
    assert!(v["tensors"].as_array().unwrap().is_empty());
    // fc1 within the f16 rounding, fc2 left out: equal
    let o = run_str(&["diff", "--exclude", "fc2/*", "--tolerance", "0.01", a, b]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(out(&o).contains("2 tensors equal"), "{}", out(&o));
    // usage trouble is 2
    assert_eq!(
        run_str(&["diff", "--only", "a[b", a, b]).status.code(),
        Some(2)
    );
    assert_eq!(run_str(&["diff", a]).status.code(), Some(2));
}

#[test]
fn exit_codes_of_diff_and_validate_are_documented() {
    for cmd in ["diff", "validate"] {
        let o = run_str(&[cmd, "--help"]);
        let text = out(&o);
        assert!(
            text.contains("0 when") && text.contains("2 when"),
            "{cmd}: {text}"
        );
    }
    let man = out(&run_str(&["man"]));
    assert!(man.contains("cmp"), "the man page states the exit codes");
}

#[test]
fn a_terminal_table_fits_the_terminal_keeping_the_tail() {
    // a terminal needs a pty: util-linux `script` makes one (skipped without it)
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("no `script`: terminal width not checked here (table.rs unit tests are)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let long = format!("{}conv3/W", "very_long_layer_name_".repeat(6));
    let p = dir.path().join("long.npz");
    let r = run_str(&[
        "convert",
        &td("cvm/single_f32.params"),
        p.to_str().unwrap(),
        "--rename",
        &format!(".*={long}"),
        "-q",
    ]);
    assert!(r.status.success(), "{}", err(&r));
    let exe = env!("CARGO_BIN_EXE_mlformats");
    for (wide, fits) in [("", true), (" --wide", false)] {
        let o = Command::new("script")
            .args([
                "-qec",
                &format!("{exe} inspect{wide} {}", p.display()),
                "/dev/null",
            ])
            .env("COLUMNS", "60")
            .output()
            .unwrap();
        let text = out(&o).replace('\r', "");
        let row = text
            .lines()
            .find(|l| l.contains("conv3/W"))
            .unwrap_or_else(|| panic!("{text}"));
        if fits {
            assert!(row.chars().count() <= 60 && row.contains('…'), "{row}");
            assert!(row.contains("_name_conv3/W  f32"), "the tail stays: {row}");
        } else {
            assert!(row.contains(&long), "{row}");
        }
    }
}
