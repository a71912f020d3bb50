//! `convert` says what it did (one line, `--json`, `--quiet`), refuses
//! options that do not apply, never drops a graph silently, takes separate
//! NNabla parameter files; every subcommand takes `--from`; messages name
//! the file and the cause as the OS gives it.

mod common;

use common::{run_str, testdata};
use serde_json::Value;

fn td(p: &str) -> String {
    testdata().join(p).to_str().unwrap().to_string()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn convert_says_what_it_did_in_one_line_or_json_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.onnx");
    let o = run_str(&[
        "convert",
        &td("nnabla/convnet.nnp"),
        out.to_str().unwrap(),
        "--dtype",
        "f16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let line = stdout(&o);
    assert_eq!(line.lines().count(), 1, "{line}");
    for want in [
        "c.onnx: wrote 12 tensors (nnabla-nnp -> onnx)",
        "network \"convnet\" exported: ",
        "opset 13",
        "cast 8 to f16",
    ] {
        assert!(line.contains(want), "{want:?} in {line}");
    }
    let o = run_str(&[
        "convert",
        &td("nnabla/convnet.nnp"),
        out.to_str().unwrap(),
        "--rename",
        "^conv1/=first/",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["from"], "nnabla-nnp");
    assert_eq!(j["graph"]["network"], "convnet");
    assert!(j["graph"]["nodes"].as_u64().unwrap() > 0);
    assert_eq!(j["renamed"][0]["from"], "conv1/conv/W");
    assert_eq!(j["renamed"][0]["to"], "first/conv/W");
    let o = run_str(&[
        "convert",
        &td("nnabla/convnet.nnp"),
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    // --dtype takes what the README lists, f64 included
    let o = run_str(&[
        "convert",
        &td("nnabla/mlp.nnp"),
        dir.path().join("d.npz").to_str().unwrap(),
        "--dtype",
        "f64",
        "--weights-only",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("cast 4 to f64"), "{}", stdout(&o));
}

#[test]
fn lossy_steps_warn_and_options_that_do_not_apply_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let npz = dir.path().join("x.npz");
    let o = run_str(&["convert", &td("nnabla/convnet.nnp"), npz.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("warning: npz gets the tensors alone: the graph"),
        "{}",
        stderr(&o)
    );
    let o = run_str(&[
        "convert",
        &td("nnabla/convnet.nnp"),
        npz.to_str().unwrap(),
        "--weights-only",
    ]);
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    for (args, word) in [
        (
            vec!["--network", "convnet"],
            "--network applies to exporting",
        ),
        (vec!["--opset", "13"], "--opset applies to exporting"),
    ] {
        let out = dir.path().join("y.safetensors");
        let src = td("nnabla/convnet.nnp");
        let mut a = vec!["convert", src.as_str(), out.to_str().unwrap()];
        a.extend(args.iter().copied());
        let o = run_str(&a);
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).contains(word), "{}", stderr(&o));
        assert!(!out.exists());
    }
    let o = run_str(&[
        "convert",
        &td("cvm/two_entry.params"),
        dir.path().join("k.safetensors").to_str().unwrap(),
        "--keep-order",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--keep-order applies to npz output only"),
        "{}",
        stderr(&o)
    );
    // a primitiv optimizer's configs have nowhere to go: refused
    let out = dir.path().join("o.safetensors");
    let o = run_str(&[
        "convert",
        &td("primitiv/optimizer_adam_default.data"),
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("primitiv optimizer holds no tensor, only the optimizer configs"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // a selection that would break the exported graph: refused, with the way out
    let o = run_str(&[
        "convert",
        &td("nnabla/convnet.nnp"),
        dir.path().join("s.onnx").to_str().unwrap(),
        "--only",
        "conv1/*",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("the exported graph reads") && stderr(&o).contains("--weights-only"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn separate_parameter_files_export_and_convert() {
    let dir = tempfile::tempdir().unwrap();
    let merged = dir.path().join("m.onnx");
    let o = run_str(&[
        "convert",
        &td("nnabla/convnet.nntxt"),
        merged.to_str().unwrap(),
        "--params",
        &td("nnabla/convnet_params.h5"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("(nnabla-nntxt -> onnx); network \"convnet\" exported"),
        "{}",
        stdout(&o)
    );
    let whole = dir.path().join("w.onnx");
    let o = run_str(&[
        "convert",
        &td("nnabla/convnet.nnp"),
        whole.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&whole).unwrap()
    );
    for ext in ["nnp", "protobuf", "nntxt"] {
        let out = dir.path().join(format!("m.{ext}"));
        let o = run_str(&[
            "convert",
            &td("nnabla/mlp.nntxt"),
            out.to_str().unwrap(),
            "--params",
            &td("nnabla/mlp_params.protobuf"),
        ]);
        assert_eq!(o.status.code(), Some(0), "{ext}: {}", stderr(&o));
        let o = run_str(&["diff", out.to_str().unwrap(), &td("nnabla/mlp.nnp")]);
        assert_eq!(o.status.code(), Some(0), "{ext}: {}", stdout(&o));
    }
    // without them: the error says how to give them
    let o = run_str(&[
        "convert",
        &td("nnabla/convnet.nntxt"),
        merged.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--params"), "{}", stderr(&o));
    // a parameter file that cannot be read is named
    let missing = dir.path().join("nope.h5");
    let o = run_str(&[
        "convert",
        &td("nnabla/convnet.nntxt"),
        merged.to_str().unwrap(),
        "--params",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with(&format!("error: {}: ", missing.display())),
        "{}",
        stderr(&o)
    );
}

#[test]
fn messages_name_the_file_and_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for extra in [&["--to", "npz"][..], &[][..]] {
        let src = td("nnabla/mlp.nnp");
        let mut a = vec!["convert", src.as_str(), d];
        a.extend_from_slice(extra);
        let o = run_str(&a);
        assert_eq!(o.status.code(), Some(2));
        let e = stderr(&o);
        assert_eq!(
            e,
            format!("error: {d}: is a directory; give the name of the file to write\n")
        );
    }
    if std::path::Path::new("/proc/self").exists() {
        let o = run_str(&[
            "convert",
            &td("cvm/two_entry.params"),
            "/proc/x.safetensors",
        ]);
        assert_eq!(o.status.code(), Some(1));
        let e = stderr(&o);
        assert!(
            e.starts_with("error: /proc/x.safetensors: cannot create a file in the folder /proc: "),
            "{e}"
        );
        assert!(!e.contains("does not exist"), "{e}");
    }
    let o = run_str(&[
        "convert",
        &td("cvm/two_entry.params"),
        &format!("{d}/no/such/x.npz"),
    ]);
    assert!(
        stderr(&o).contains(&format!("the folder {d}/no/such does not exist")),
        "{}",
        stderr(&o)
    );
}

#[test]
fn every_subcommand_takes_from_and_graph_draws_what_convert_exports() {
    let dir = tempfile::tempdir().unwrap();
    // an .nntxt under a name that says nothing
    let odd = dir.path().join("model.bin");
    std::fs::copy(td("nnabla/mlp_with_params.nntxt"), &odd).unwrap();
    let odd = odd.to_str().unwrap();
    for args in [
        vec!["inspect", odd, "--from", "nnabla-nntxt"],
        vec!["inspect", odd, "--format", "nntxt"],
        vec!["stats", odd, "--from", "nntxt"],
        vec!["validate", odd, "--from", "nntxt"],
        vec!["graph", odd, "--from", "nntxt"],
        vec!["graph", odd, "--from", "nntxt", "--to", "mermaid"],
        vec!["graph", odd, "--from", "nntxt", "--format", "mermaid"],
    ] {
        let o = run_str(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let text = stdout(&o);
        let want = if args[0] == "validate" {
            "valid (nnabla-nntxt"
        } else {
            "fc1/affine/W"
        };
        assert!(text.contains(want), "{args:?}: {text}");
    }
    let mlp = td("nnabla/mlp.nnp");
    let o = run_str(&["diff", odd, &mlp, "--from-a", "nntxt"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run_str(&["diff", odd, odd, "--from", "nntxt"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // a format that does not fit is an error, not a guess
    // (exit 2: trouble reading a file, not a difference)
    let o = run_str(&["diff", odd, &mlp, "--from-b", "safetensors"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with(&format!("error: {mlp}: ")),
        "{}",
        stderr(&o)
    );
    // graph draws the first executor's network, as convert exports it
    let train = td("nnabla/train.nnp");
    let o = run_str(&["graph", &train]);
    assert_eq!(o.status.code(), Some(0));
    let default = stdout(&o);
    let o = run_str(&["graph", &train, "--network", "runtime"]);
    assert_eq!(stdout(&o), default);
    let o = run_str(&["graph", &train, "--network", "training"]);
    assert_ne!(stdout(&o), default);
}

#[test]
fn diff_lists_an_exporters_helper_tensors_apart() {
    let dir = tempfile::tempdir().unwrap();
    let doc = mlformats::open(td("nnabla/convnet.nnp")).unwrap();
    let (m, _) =
        mlformats::export::export_model(&doc, &mlformats::export::ExportOptions::new()).unwrap();
    // the exporter names its helper constants with the reserved prefix
    let g = m.graph.as_ref().unwrap();
    let helpers: Vec<&str> = g
        .initializer
        .iter()
        .filter_map(|t| t.name.as_deref())
        .filter(|n| doc.tensor(n).is_none())
        .collect();
    assert!(!helpers.is_empty());
    assert!(
        helpers.iter().all(|n| n.starts_with("mlformats/")),
        "{helpers:?}"
    );
    let out = dir.path().join("c.onnx");
    let mut bytes = Vec::new();
    mlformats::onnx::write_model(&mut bytes, &m).unwrap();
    std::fs::write(&out, bytes).unwrap();
    let o = run_str(&["diff", &td("nnabla/convnet.nnp"), out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!(
            "{}: {} helper tensors an exporter added (not the model's, not compared): mlformats/",
            out.display(),
            helpers.len()
        )),
        "{text}"
    );
    assert!(text.ends_with("equal: 8 tensors equal, 0 differences (nnabla-nnp vs onnx)\n"));
}
