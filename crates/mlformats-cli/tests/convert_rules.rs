//! `convert` never surprises: empty selections, renames, targets that cannot
//! hold some tensors, unknown extensions, permissions, temporaries, and
//! messages a person understands.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{inspect_json, run_str, testdata};

fn td(p: &str) -> String {
    testdata().join(p).to_str().unwrap().to_string()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_selection_that_matches_nothing_is_an_error_not_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.npz");
    let o = run_str(&[
        "convert",
        &td("cvm/two_entry.params"),
        out.to_str().unwrap(),
        "--only",
        "zz*",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("match none of the 2 tensors"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    let o = run_str(&[
        "convert",
        &td("cvm/two_entry.params"),
        out.to_str().unwrap(),
        "--exclude",
        "*",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists());
}

#[test]
fn rename_with_a_regular_expression() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.safetensors");
    let o = run_str(&[
        "convert",
        &td("cvm/two_entry.params"),
        out.to_str().unwrap(),
        "--rename",
        "^(.)$=w_$1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let names: Vec<String> = inspect_json(&out)["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["w_w", "w_b"]);
    // two names onto one is refused
    let o = run_str(&[
        "convert",
        &td("cvm/two_entry.params"),
        out.to_str().unwrap(),
        "--rename",
        ".*=same",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("the same name \"same\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_target_that_cannot_hold_some_tensors_refuses_with_the_list_or_skips_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.data");
    // primitiv holds only f32: the char8 strings and integer tensors of a
    // TenniS module are refused, every one by name
    let src = td("tennis/py_dtypes.tsm");
    let o = run_str(&["convert", &src, out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("primitiv stores only f32") && e.contains("--skip-unsupported"),
        "{e}"
    );
    assert!(!out.exists());
    let o = run_str(&["convert", &src, out.to_str().unwrap(), "--skip-unsupported"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let skipped = stderr(&o).matches("skipped \"").count();
    let all = inspect_json(std::path::Path::new(&src))["tensors"]
        .as_array()
        .unwrap()
        .len();
    let doc = inspect_json(&out);
    let written = doc["tensors"].as_array().unwrap();
    assert!(skipped > 0 && !written.is_empty(), "{}", stderr(&o));
    assert_eq!(skipped + written.len(), all);
    assert!(written.iter().all(|t| t["dtype"] == "f32"));
}

#[test]
fn an_unknown_extension_of_the_same_family_keeps_the_input_format() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.model");
    std::fs::copy(td("primitiv/model_nested_adam.data"), &input).unwrap();
    let out = dir.path().join("n.model");
    let o = run_str(&["convert", input.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&input).unwrap(),
        std::fs::read(&out).unwrap(),
        "re-encoded byte for byte"
    );
    let o = run_str(&[
        "convert",
        input.to_str().unwrap(),
        dir.path().join("n.other").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn outputs_get_the_permissions_of_a_new_file_and_no_stray_temporary() {
    let dir = tempfile::tempdir().unwrap();
    for ext in [
        "safetensors",
        "npz",
        "params",
        "h5",
        "nnp",
        "tsm",
        "protobuf",
        "nntxt",
        "data",
    ] {
        let out = dir.path().join(format!("p.{ext}"));
        let o = run_str(&[
            "convert",
            &td("nnabla/mlp.nnp"),
            out.to_str().unwrap(),
            "--only",
            "*",
        ]);
        assert!(o.status.success(), "{ext}: {}", stderr(&o));
        let reference = dir.path().join(format!("touched.{ext}"));
        std::fs::write(&reference, b"").unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode(&out),
            mode(&reference),
            "{ext}: the mode a new file gets"
        );
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn messages_a_person_understands() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_str(&["inspect", testdata().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).ends_with(": is a directory\n"), "{}", stderr(&o));
    let empty = dir.path().join("e.params");
    std::fs::write(&empty, b"").unwrap();
    let o = run_str(&["inspect", empty.to_str().unwrap()]);
    assert!(stderr(&o).ends_with(": is empty\n"), "{}", stderr(&o));
    let out = dir.path().join("nodir").join("x.npz");
    let o = run_str(&[
        "convert",
        &td("cvm/two_entry.params"),
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("does not exist") && !e.contains(".x.npz."),
        "no temporary name: {e}"
    );
    assert_eq!(e.matches("No such file").count(), 1, "said once: {e}");
    // --help lists the formats --to takes
    let o = run_str(&["convert", "--help"]);
    let h = String::from_utf8_lossy(&o.stdout);
    assert!(
        h.contains("cvm-params") && h.contains("tennis-module") && h.contains("safetensors"),
        "{h}"
    );
}

#[test]
fn piped_tables_keep_whole_names_and_numbers_read_naturally() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("{}/W", "very_long_layer_name_".repeat(6));
    let p = dir.path().join("long.npz");
    // write a file with a long name through the tool itself
    let src = dir.path().join("s.safetensors");
    let o = run_str(&[
        "convert",
        &td("cvm/single_f32.params"),
        src.to_str().unwrap(),
        "--rename",
        &format!(".*={long}"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run_str(&["convert", src.to_str().unwrap(), p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // output that is not a terminal is never shortened, whatever COLUMNS
    // says (a terminal's table is fitted: table.rs's unit tests)
    for cmd in ["inspect", "stats"] {
        for wide in [false, true] {
            let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_mlformats"));
            c.arg(cmd).arg(&p).env("COLUMNS", "40");
            if wide {
                c.arg("--wide");
            }
            let o = c.output().unwrap();
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(o.status.success(), "{cmd}: {}", stderr(&o));
            assert!(text.contains(&long) && !text.contains('…'), "{cmd}: {text}");
        }
    }
    let o = run_str(&["stats", &td("cvm/two_entry.params")]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("e0"), "no 1.000000e0: {text}");
}

#[test]
fn nnabla_targets_never_get_names_nnabla_refuses() {
    // a primitiv model with optimizer stats names `b` and `b/Adam.m2`: nnabla
    // cannot load a parameter that is also the scope of another
    let dir = tempfile::tempdir().unwrap();
    for ext in ["protobuf", "nntxt", "h5", "nnp"] {
        let out = dir.path().join(format!("m.{ext}"));
        let o = run_str(&[
            "convert",
            &td("primitiv/model_nested_adam.data"),
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{ext}");
        let e = stderr(&o);
        assert!(e.contains("\"b\"") || e.contains("b/Adam"), "{ext}: {e}");
        assert!(!out.exists(), "{ext}");
        // leaving the stats out converts
        let o = run_str(&[
            "convert",
            &td("primitiv/model_nested_adam.data"),
            out.to_str().unwrap(),
            "--exclude",
            "*/Adam.*",
        ]);
        assert!(o.status.success(), "{ext}: {}", stderr(&o));
    }
}

#[test]
fn diff_and_validate_speak_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.safetensors");
    let src = td("cvm/two_entry.params");
    assert!(
        run_str(&["convert", &src, out.to_str().unwrap()])
            .status
            .success()
    );
    let o = run_str(&["diff", &src, out.to_str().unwrap(), "--json"]);
    assert!(o.status.success());
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["equal"], true);
    assert_eq!(j["format_a"], "cvm-params");
    assert_eq!(j["format_b"], "safetensors");
    assert_eq!(j["tensors"].as_array().unwrap().len(), 2);
    assert!(
        j["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["status"] == "equal")
    );
    let o = run_str(&["diff", &src, &td("cvm/single_f32.params"), "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["equal"], false);
    assert_eq!(j["only_in_a"], serde_json::json!(["w", "b"]));
    let o = run_str(&["validate", &src, "--json"]);
    assert!(o.status.success());
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (j["valid"].clone(), j["tensors"].clone()),
        (serde_json::json!(true), serde_json::json!(2))
    );
    assert_eq!(j["problems"], serde_json::json!([]));
}

/// `--only` and `--dtype` between NNabla formats keep the model: the
/// networks go along with the parameters written; a kept network that uses
/// parameters left out is a warning; `--rename` would break the network and
/// is refused.
#[test]
fn selecting_or_casting_nnabla_parameters_keeps_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let src = td("nnabla/mlp.nnp");
    let graph = inspect_json(std::path::Path::new(&src))["graph"].clone();
    assert!(graph["networks"].as_array().is_some_and(|n| !n.is_empty()));
    for ext in ["nnp", "nntxt", "protobuf"] {
        let out = dir.path().join(format!("only.{ext}"));
        let o = run_str(&["convert", &src, out.to_str().unwrap(), "--only", "*/W"]);
        assert!(o.status.success(), "{ext}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("2 of the parameters it uses are not in the output")
                && stderr(&o).contains("fc1/affine/b, fc2/affine/b"),
            "{ext}: {}",
            stderr(&o)
        );
        let js = inspect_json(&out);
        assert_eq!(js["graph"]["networks"], graph["networks"], "{ext}");
        assert_eq!(js["graph"]["executors"], graph["executors"], "{ext}");
        let names: Vec<&str> = js["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["fc1/affine/W", "fc2/affine/W"], "{ext}");
    }
    let out = dir.path().join("half.nnp");
    let o = run_str(&["convert", &src, out.to_str().unwrap(), "--dtype", "f16"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let js = inspect_json(&out);
    assert_eq!(js["graph"]["networks"], graph["networks"]);
    let tensors = js["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 4);
    assert!(tensors.iter().all(|t| t["dtype"] == "f16"), "{tensors:?}");

    let out = dir.path().join("renamed.nnp");
    let o = run_str(&[
        "convert",
        &src,
        out.to_str().unwrap(),
        "--rename",
        "fc=dense",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--rename would leave the networks"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // a parameters-only target takes renamed parameters, and so does any
    // NNabla target with --weights-only
    for (file, extra) in [
        ("renamed.h5", None),
        ("renamed.nnp", Some("--weights-only")),
    ] {
        let out = dir.path().join(file);
        let mut args = vec![
            "convert",
            &src,
            out.to_str().unwrap(),
            "--rename",
            "fc=dense",
        ];
        args.extend(extra);
        let o = run_str(&args);
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        let js = inspect_json(&out);
        assert_eq!(js["tensors"][0]["name"], "dense1/affine/W", "{file}");
        assert!(
            js["graph"]["networks"]
                .as_array()
                .is_none_or(|n| n.is_empty()),
            "{file}: {js}"
        );
    }
}
