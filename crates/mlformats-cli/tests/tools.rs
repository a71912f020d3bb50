//! The everyday subcommands on real golden files: convert to and from
//! safetensors and npz, diff, stats, validate, graph, completions, man.

mod common;

use std::path::{Path, PathBuf};

use common::{files_with_suffix, run_str, testdata};
use serde_json::Value;

/// Every golden file with tensors, across formats.
fn goldens_with_tensors() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for (dir, exts) in [
        ("cvm", &[".params"][..]),
        ("primitiv", &[".data"][..]),
        ("nnabla", &[".nnp", ".h5", ".protobuf", ".nntxt"][..]),
        ("tennis", &[".tsm"][..]),
    ] {
        let d = testdata().join(dir);
        if !d.is_dir() {
            continue;
        }
        for ext in exts {
            for f in files_with_suffix(&d, ext) {
                let out = run_str(&["inspect", "--json", f.to_str().unwrap()]);
                if !out.status.success() {
                    continue; // files that must be rejected
                }
                let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
                if doc["tensors"].as_array().is_some_and(|t| !t.is_empty()) {
                    v.push(f);
                }
            }
        }
    }
    v
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn every_golden_converts_to_safetensors_and_npz_and_diffs_equal() {
    let dir = tempfile::tempdir().unwrap();
    let goldens = goldens_with_tensors();
    assert!(goldens.len() >= 10, "too few goldens: {goldens:?}");
    let mut failures = Vec::new();
    for (i, g) in goldens.iter().enumerate() {
        for ext in ["safetensors", "npz"] {
            let out = dir.path().join(format!("{i}.{ext}"));
            let r = run_str(&["convert", s(g), s(&out)]);
            if !r.status.success() {
                failures.push(format!(
                    "convert {} -> {ext}: {}",
                    g.display(),
                    String::from_utf8_lossy(&r.stderr)
                ));
                continue;
            }
            let d = run_str(&["diff", s(g), s(&out)]);
            if !d.status.success() {
                failures.push(format!(
                    "diff {} {ext}: {}{}",
                    g.display(),
                    String::from_utf8_lossy(&d.stdout),
                    String::from_utf8_lossy(&d.stderr)
                ));
            }
            // and back again into the same format family when it holds tensors only
            let back = dir.path().join(format!("{i}.back.{ext}.safetensors"));
            let r = run_str(&["convert", s(&out), s(&back)]);
            assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
            assert!(run_str(&["diff", s(&out), s(&back)]).status.success());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn safetensors_metadata_records_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("cvm/two_entry.params");
    let out = dir.path().join("x.safetensors");
    assert!(run_str(&["convert", s(&src), s(&out)]).status.success());
    let bytes = std::fs::read(&out).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    assert_eq!(
        header["__metadata__"]["mlformats.source_format"],
        "cvm-params"
    );
    assert_eq!(
        header["__metadata__"]["mlformats.source_file"],
        "two_entry.params"
    );
    assert_eq!(header["w"]["dtype"], "I8");
    assert_eq!(header["b"]["shape"], serde_json::json!([]));
}

#[test]
fn convert_selects_casts_and_refuses_what_it_cannot_hold() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("cvm/dtypes_core.params");
    let out = dir.path().join("sel.safetensors");
    let r = run_str(&[
        "convert",
        s(&src),
        s(&out),
        "--only",
        "f*",
        "--exclude",
        "f64",
        "--dtype",
        "f16",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let doc = run_str(&["stats", "--json", s(&out)]);
    let doc: Value = serde_json::from_slice(&doc.stdout).unwrap();
    let names: Vec<&str> = doc["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.is_empty() && names.iter().all(|n| n.starts_with('f') && *n != "f64"),
        "{names:?}"
    );
    for t in doc["tensors"].as_array().unwrap() {
        assert_eq!(t["dtype"], "f16", "{t}");
    }
    // a bad glob is a usage problem reported as an error
    let r = run_str(&["convert", s(&src), s(&out), "--only", "a[b"]);
    assert_eq!(r.status.code(), Some(1));
    // an unreadable input names the input, and no output appears
    let missing = dir.path().join("missing.params");
    let target = dir.path().join("never.npz");
    let r = run_str(&["convert", s(&missing), s(&target)]);
    assert_eq!(r.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&r.stderr).starts_with(&format!("error: {}: ", missing.display()))
    );
    assert!(!target.exists());
}

/// Writes a safetensors file of one f32 tensor by hand (independent of the code under test).
fn write_safetensors(path: &Path, name: &str, values: &[f32], shape: &[usize]) {
    let header = serde_json::json!({name: {"dtype": "F32", "shape": shape, "data_offsets": [0, values.len() * 4]}});
    let mut h = serde_json::to_vec(&header).unwrap();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut bytes = (h.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&h);
    for v in values {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn diff_finds_one_changed_float_in_100_mib() {
    let dir = tempfile::tempdir().unwrap();
    let n = 100 * (1 << 20) / 4;
    let mut values: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.25).collect();
    let (a, b) = (
        dir.path().join("a.safetensors"),
        dir.path().join("b.safetensors"),
    );
    write_safetensors(&a, "big", &values, &[n / 1024, 1024]);
    let changed = 12_345_678;
    values[changed] += 0.001;
    write_safetensors(&b, "big", &values, &[n / 1024, 1024]);
    let r = run_str(&["diff", s(&a), s(&b)]);
    assert_eq!(r.status.code(), Some(1));
    let text = String::from_utf8_lossy(&r.stdout);
    let expect = format!("big: 1 of {n} elements differ");
    assert!(text.contains(&expect), "{text}");
    assert!(
        text.contains(&format!(
            "at index {changed} [{}, {}]",
            changed / 1024,
            changed % 1024
        )),
        "{text}"
    );
    // within tolerance it is equal
    let r = run_str(&["diff", s(&a), s(&b), "--tolerance", "0.01"]);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stdout)
    );
    // a file against itself
    assert!(run_str(&["diff", s(&a), s(&a)]).status.success());
}

#[test]
fn diff_reports_missing_tensors_and_shape_changes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        dir.path().join("a.safetensors"),
        dir.path().join("b.safetensors"),
    );
    write_safetensors(&a, "x", &[1.0, 2.0], &[2]);
    write_safetensors(&b, "y", &[1.0, 2.0], &[2]);
    let r = run_str(&["diff", s(&a), s(&b)]);
    assert_eq!(r.status.code(), Some(1));
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        text.contains("only in") && text.contains(": x") && text.contains(": y"),
        "{text}"
    );
    write_safetensors(&b, "x", &[1.0, 2.0], &[1, 2]);
    let text = String::from_utf8_lossy(&run_str(&["diff", s(&a), s(&b)]).stdout).into_owned();
    assert!(text.contains("x: shape [2] vs [1, 2]"), "{text}");
    // trouble is 2, as for cmp and diff: the second file is unreadable
    let r = run_str(&["diff", s(&a), "nope.params"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).starts_with("error: nope.params: "));
}

#[test]
fn stats_are_computed_from_the_elements() {
    let src = testdata().join("cvm/special_floats.params");
    let r = run_str(&["stats", "--json", s(&src)]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let doc: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(doc["format"], "cvm-params");
    let f32t = &doc["tensors"][0];
    assert_eq!(f32t["name"], "f32");
    // the golden's values: 1 NaN, +inf, -inf, a zero, and finite values
    assert_eq!(
        (f32t["nan"].as_u64(), f32t["inf"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(f32t["count"], 8);
    assert_eq!(f32t["min"].as_f64(), Some(-1.0));
    // the table form
    let r = run_str(&["stats", s(&src)]);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.lines().count() == 5 && text.contains("nan"), "{text}");
    // error path
    let r = run_str(&["stats", "missing.npz"]);
    assert_eq!(r.status.code(), Some(1));
}

#[test]
fn validate_flags_bad_values_and_bad_files() {
    let good = testdata().join("cvm/two_entry.params");
    let r = run_str(&["validate", s(&good)]);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stdout)
    );
    assert!(String::from_utf8_lossy(&r.stdout).contains("valid"));
    let special = testdata().join("cvm/special_floats.params");
    let r = run_str(&["validate", s(&special)]);
    assert_eq!(r.status.code(), Some(1));
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.contains("problem: f32: 1 NaN of 8 elements"), "{text}");
    // a truncated file is rejected by the strict reader
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.params");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 1]).unwrap();
    // (invalid: 1, with the reader's words)
    let r = run_str(&["validate", s(&cut)]);
    assert_eq!(r.status.code(), Some(1));
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        text.contains("problem: the reader refuses the file: ")
            && text.contains(&format!("{}: INVALID", cut.display())),
        "{text}"
    );
    // a file that cannot be read at all is trouble: 2
    let r = run_str(&["validate", s(&dir.path().join("missing.params"))]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).starts_with("error: "));
    let r = run_str(&["validate", s(dir.path())]);
    assert_eq!(r.status.code(), Some(2), "a directory");
}

#[test]
fn graph_pictures_of_real_networks() {
    let dir = tempfile::tempdir().unwrap();
    let mut drawn = 0;
    for f in [
        testdata().join("nnabla/convnet.nnp"),
        testdata().join("tennis/py_convnet.tsm"),
    ] {
        if !f.exists() {
            continue;
        }
        for (fmt, marker) in [
            ("dot", "digraph"),
            ("mermaid", "flowchart TD"),
            ("svg", "<svg"),
            ("layout", "\"mlformats-layout\""),
        ] {
            let out = dir.path().join(format!("g.{fmt}"));
            let r = run_str(&["graph", s(&f), "--format", fmt, "-o", s(&out)]);
            assert!(
                r.status.success(),
                "{} {fmt}: {}",
                f.display(),
                String::from_utf8_lossy(&r.stderr)
            );
            let text = std::fs::read_to_string(&out).unwrap();
            assert!(text.contains(marker), "{text}");
            assert!(
                text.contains("Convolution") || text.contains("conv") || text.contains("Conv"),
                "{text}"
            );
        }
        drawn += 1;
    }
    assert!(drawn >= 1, "no graph golden in testdata yet");
    // a file with no graph
    let r = run_str(&["graph", s(&testdata().join("cvm/two_entry.params"))]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("no graph"));
}

/// `graph --direction lr` lays the layers out left to right (layout and
/// SVG), boxes link to their operators' documentation, and a direction
/// that is not `tb` or `lr` is refused.
#[test]
fn graph_direction_and_documentation_links() {
    let f = testdata().join("nnabla/convnet.nnp");
    let layout = |extra: &[&str]| -> Value {
        let mut args = vec!["graph", s(&f), "--to", "layout"];
        args.extend_from_slice(extra);
        let r = run_str(&args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        serde_json::from_slice(&r.stdout).unwrap()
    };
    let (tb, lr) = (layout(&[]), layout(&["--direction", "lr"]));
    assert_eq!(tb["direction"], "tb");
    assert_eq!(lr["direction"], "lr");
    let f64_of = |v: &Value, k: &str| v[k].as_f64().unwrap();
    assert!(f64_of(&tb, "height") > f64_of(&tb, "width"));
    assert!(f64_of(&lr, "width") > f64_of(&lr, "height"));
    // the input box is at the left, the output box at the right
    let port = |l: &Value, kind: &str| -> f64 {
        let n = l["nodes"].as_array().unwrap();
        f64_of(n.iter().find(|n| n["kind"] == kind).unwrap(), "x")
    };
    assert!(port(&lr, "input") < port(&lr, "output"));
    let conv = lr["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["op"] == "Convolution")
        .unwrap();
    assert_eq!(
        conv["doc"],
        "https://nnabla.readthedocs.io/en/latest/python/api/function.html#nnabla.functions.convolution"
    );
    let r = run_str(&["graph", s(&f), "--to", "svg", "--direction", "lr"]);
    let svg = String::from_utf8_lossy(&r.stdout);
    assert!(svg.starts_with("<svg") && svg.contains("<a href=\"https://nnabla"));
    let r = run_str(&["graph", s(&f), "--to", "svg", "--direction", "up"]);
    assert_eq!(r.status.code(), Some(2));
}

/// `graph --hide-names --hide-weights --attributes`: what the boxes show
/// in the layout and the SVG (a Convolution of convnet.nnp: its name, its
/// folded weights, its attributes).
#[test]
fn graph_box_labels_on_demand() {
    let f = testdata().join("nnabla/convnet.nnp");
    let conv = |extra: &[&str]| -> (Vec<String>, Vec<String>, f64) {
        let mut args = vec!["graph", s(&f), "--to", "layout"];
        args.extend_from_slice(extra);
        let r = run_str(&args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let l: Value = serde_json::from_slice(&r.stdout).unwrap();
        let n = l["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["op"] == "Convolution")
            .unwrap()
            .clone();
        let lines = n["label"]
            .as_str()
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        let styles = n["label_styles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect();
        (lines, styles, n["height"].as_f64().unwrap())
    };
    let (lines, styles, height) = conv(&[]);
    assert_eq!(styles[..2], ["op", "name"], "{lines:?}");
    assert!(styles[2..].iter().all(|s| s == "weight") && styles.len() >= 3);
    assert!(lines[2].contains(" ⟨"), "{lines:?}");
    let (bare, bare_styles, bare_height) = conv(&["--hide-names", "--hide-weights"]);
    assert_eq!(bare, lines[..1], "{bare:?}");
    assert_eq!(bare_styles, ["op"]);
    assert!(bare_height < height);
    let (with, with_styles, _) = conv(&["--attributes", "--hide-weights"]);
    assert_eq!(with[..2], lines[..2]);
    assert!(with_styles[2..].iter().all(|s| s == "attr") && with.len() > 2);
    assert!(with.iter().any(|l| l == "pad = 1,1"), "{with:?}");
    let r = run_str(&[
        "graph",
        s(&f),
        "--to",
        "svg",
        "--attributes",
        "--hide-names",
    ]);
    let svg = String::from_utf8_lossy(&r.stdout);
    assert!(svg.contains("class=\"a\">pad = 1,1<"), "{svg}");
}

/// `graph --to layout` gives each operator's box a one-line description
/// drawn from the support tables, and `--to svg` heads the box's tooltip
/// with it: Conv of an ONNX model (what the imports make of it),
/// Convolution of an NNabla one (what the export makes of it).
#[test]
fn graph_describes_operators() {
    for (file, op, start) in [
        (
            "onnx_styles/yolov8_style.onnx",
            "Conv",
            "ONNX Conv → NNabla Convolution",
        ),
        (
            "nnabla/convnet.nnp",
            "Convolution",
            "NNabla Convolution → ONNX Conv",
        ),
    ] {
        let f = testdata().join(file);
        let r = run_str(&["graph", s(&f), "--to", "layout"]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let l: Value = serde_json::from_slice(&r.stdout).unwrap();
        let nodes = l["nodes"].as_array().unwrap();
        let conv = nodes.iter().find(|n| n["op"] == op).unwrap();
        let text = conv["description"].as_str().unwrap();
        assert!(text.starts_with(start), "{file}: {text}");
        assert!(
            nodes
                .iter()
                .filter(|n| n["kind"] != "op")
                .all(|n| n["description"].is_null()),
            "{file}: inputs and outputs have no description"
        );
        let r = run_str(&["graph", s(&f), "--to", "svg"]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let svg = String::from_utf8_lossy(&r.stdout);
        let title = format!("<title>{text}\n");
        assert!(svg.contains(&title), "{file}: no tooltip {title:?}");
    }
}

#[test]
fn completions_and_man_page() {
    for sh in ["bash", "zsh", "fish"] {
        let r = run_str(&["completions", sh]);
        assert!(r.status.success());
        let text = String::from_utf8_lossy(&r.stdout);
        assert!(
            text.contains("mlformats") && text.contains("convert"),
            "{sh}"
        );
    }
    let r = run_str(&["man"]);
    assert!(r.status.success());
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        text.contains(".TH mlformats") && text.contains("inspect"),
        "{text}"
    );
    assert_eq!(run_str(&["completions", "tcsh-ish"]).status.code(), Some(2));
}

#[test]
fn a_failed_convert_leaves_the_old_output_whole() {
    let dir = tempfile::tempdir().unwrap();
    // bf16 has no TenniS dtype code and primitiv holds only f32: both fail
    let src = testdata().join("cvm/dtypes_extended.params");
    for name in ["keep.tsm", "keep.data"] {
        let out = dir.path().join(name);
        std::fs::write(&out, b"the old file").unwrap();
        let r = run_str(&["convert", s(&src), s(&out)]);
        assert_eq!(r.status.code(), Some(1), "{name}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(
            err.starts_with(&format!("error: {}: ", out.display())),
            "{name}: {err}"
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"the old file", "{name}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "temporary files left behind: {left:?}");
}

#[test]
fn progress_bars_only_on_a_terminal_and_never_with_quiet() {
    // `script` (util-linux) runs the command on a pseudo-terminal.
    let has_script = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.safetensors");
    let n = 70 * (1 << 20) / 4; // over the 64 MiB threshold
    let values: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    write_safetensors(&big, "w", &values, &[n]);
    let out = dir.path().join("out.npz");
    // not a terminal: quiet
    let r = run_str(&["convert", s(&big), s(&out)]);
    assert!(r.status.success());
    assert!(
        r.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    if !has_script {
        eprintln!("no `script` command: the terminal half of this test is skipped");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_mlformats");
    let on_tty = |extra: &str| {
        let cmd = format!("{bin} convert {extra} {} {}", s(&big), s(&out));
        let o = std::process::Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(
        on_tty("").contains("converting ["),
        "no progress bar on a terminal"
    );
    assert!(
        !on_tty("--quiet").contains("converting ["),
        "--quiet still drew a bar"
    );
}
