//! The commands on remote files (served by `mlformats view`'s range
//! server, started here): `stats`, `convert`, `show`, `diff` and
//! `validate` of a location print what they print for the local file, and
//! `show` of one tensor fetches that tensor, not the file.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{run_str, testdata};
use mlformats::view::Viewer;
use mlformats::{DType, Tensor};

/// The location `view` serves its file at.
fn served(v: &Viewer) -> String {
    let route = v.url().split("?url=").nth(1).unwrap();
    format!("http://{}/{route}", v.addr())
}

/// A safetensors file of 12 f32 tensors of 64 Ki values each (3 MiB),
/// each with its own values (negative, zero, fractional).
fn varied_safetensors(dir: &Path) -> PathBuf {
    let data: Vec<Vec<f32>> = (0..12)
        .map(|i| {
            (0..65536)
                .map(|k| ((k * 7 + i * 13) % 101) as f32 * 0.25 - 3.0 * i as f32)
                .collect()
        })
        .collect();
    let tensors: Vec<(String, Tensor<'_>)> = data
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let t = Tensor::from_values([256, 256], d).unwrap();
            assert_eq!(t.dtype(), DType::F32);
            (format!("block{i}.w"), t)
        })
        .collect();
    let p = dir.join("varied.safetensors");
    mlformats::save(&p, tensors.iter().map(|(n, t)| (n.as_str(), t))).unwrap();
    p
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The output without its first line (which names the file).
fn body(text: &str) -> &str {
    text.split_once('\n').map_or("", |(_, rest)| rest)
}

/// The bytes `--remote-stats` says were fetched.
fn fetched(out: &Output) -> u64 {
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("remote: "))
        .unwrap_or_else(|| panic!("no remote: line in {err}"));
    line.split(' ').nth(1).unwrap().parse().unwrap()
}

#[test]
fn stats_of_a_served_file_are_the_local_files() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        varied_safetensors(dir.path()),
        testdata().join("cvm/special_floats.params"),
        testdata().join("cvm/dtypes_core.params"),
        testdata().join("nnabla/convnet.nnp"),
    ];
    for f in &files {
        let v = Viewer::start(f, 0).unwrap();
        let url = served(&v);
        let local = ok(&run_str(&["stats", f.to_str().unwrap()]), "local stats");
        let out = run_str(&["stats", &url, "--remote-stats"]);
        let remote = ok(&out, "remote stats");
        assert!(remote.starts_with(&format!("{url}: ")), "{remote}");
        assert_eq!(body(&remote), body(&local), "{}", f.display());
        assert!(body(&local).lines().count() > 1, "{local}");
        // every tensor fetched once: about the file, not twice it
        let size = std::fs::metadata(f).unwrap().len();
        assert!(fetched(&out) <= size + (128 << 10), "{}", f.display());
        let json = |args: &[&str]| -> serde_json::Value {
            serde_json::from_str(&ok(&run_str(args), "stats --json")).unwrap()
        };
        let (a, b) = (
            json(&["stats", "--json", f.to_str().unwrap()]),
            json(&["stats", "--json", &url]),
        );
        assert_eq!(a["tensors"], b["tensors"], "{}", f.display());
        assert_eq!(a["format"], b["format"]);
        // a filter that keeps nothing is refused, as for the local file
        let out = run_str(&["stats", &url, "--only", "nothing*"]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--only/--exclude match none"), "{err}");
        v.stop();
    }
}

#[test]
fn convert_of_a_served_file_writes_the_local_files_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let st = varied_safetensors(dir.path());
    let cases: [(PathBuf, &[&str]); 4] = [
        (st.clone(), &["npz", "params", "onnx"]),
        (st, &["safetensors"]),
        (testdata().join("cvm/dtypes_core.params"), &["safetensors"]),
        // to .nnp: a whole model re-encoded, read whole
        (
            testdata().join("nnabla/convnet.nnp"),
            &["onnx", "nnp", "h5"],
        ),
    ];
    for (f, exts) in &cases {
        let v = Viewer::start(f, 0).unwrap();
        let url = served(&v);
        for ext in exts.iter() {
            let here = dir.path().join(format!("local.{ext}"));
            let there = dir.path().join(format!("remote.{ext}"));
            let said = ok(
                &run_str(&[
                    "convert",
                    f.to_str().unwrap(),
                    here.to_str().unwrap(),
                    "--json",
                ]),
                "local convert",
            );
            let out = run_str(&["convert", &url, there.to_str().unwrap(), "--json"]);
            let said_remote = ok(&out, "remote convert");
            assert_eq!(said_remote, said, "{} to {ext}", f.display());
            let (a, b) = (
                std::fs::read(&here).unwrap(),
                std::fs::read(&there).unwrap(),
            );
            assert!(a == b, "{} to {ext}: the bytes differ", f.display());
        }
        v.stop();
    }
}

#[test]
fn show_of_one_served_tensor_fetches_that_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let f = varied_safetensors(dir.path());
    let v = Viewer::start(&f, 0).unwrap();
    let url = served(&v);
    for spec in ["block5.w[1, :6]", "block11.w[-1, ::51]"] {
        let local = ok(&run_str(&["show", f.to_str().unwrap(), spec]), "show");
        let out = run_str(&["show", &url, spec, "--remote-stats"]);
        assert_eq!(ok(&out, "remote show"), local);
        // the tensor's 256 KiB, and a few blocks of headers
        let got = fetched(&out);
        assert!(
            (256 << 10..(256 << 10) + (80 << 10)).contains(&got),
            "{spec}: {got} bytes fetched"
        );
    }
    let json = ok(
        &run_str(&["show", &url, "block0.w[0, 1:3]", "--json"]),
        "json",
    );
    let v2: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v2["values"], serde_json::json!([1.75, 3.5]));
    let out = run_str(&["show", &url, "block99.w"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no tensor named \"block99.w\" (of 12"),
        "{err}"
    );
    v.stop();
}

/// An ONNX model of one MatMul by a 1024×1024 f32 weight (4 MiB).
fn matmul_model(dir: &Path) -> PathBuf {
    use onnx_format::proto::{
        GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto, ValueInfoProto,
    };
    let n = 1024usize;
    let raw: Vec<u8> = (0..n * n).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let value = |name: &str| ValueInfoProto {
        name: Some(name.into()),
        ..Default::default()
    };
    let graph = GraphProto {
        name: Some("mm".into()),
        node: vec![NodeProto {
            op_type: Some("MatMul".into()),
            name: Some("mm".into()),
            input: vec!["x".into(), "w".into()],
            output: vec!["y".into()],
            ..Default::default()
        }],
        initializer: vec![TensorProto {
            name: Some("w".into()),
            dims: vec![n as i64, n as i64],
            data_type: Some(1),
            raw_data: Some(raw.into()),
            ..Default::default()
        }],
        input: vec![value("x")],
        output: vec![value("y")],
        ..Default::default()
    };
    let model = ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(13),
        }],
        graph: Some(graph),
        ..Default::default()
    };
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &model).unwrap();
    let p = dir.join("matmul.onnx");
    std::fs::write(&p, bytes).unwrap();
    p
}

/// `graph` of a served model draws what it draws for the local file, from
/// the model's structure alone: its weight is not fetched.
#[test]
fn graph_of_a_served_model_fetches_its_structure_only() {
    let dir = tempfile::tempdir().unwrap();
    let f = matmul_model(dir.path());
    let v = Viewer::start(&f, 0).unwrap();
    let url = served(&v);
    let local = ok(
        &run_str(&["graph", f.to_str().unwrap(), "--to", "layout"]),
        "graph",
    );
    assert!(
        local.contains("[1024,1024]") || local.contains("1024"),
        "{local}"
    );
    let out = run_str(&["graph", &url, "--to", "layout", "--remote-stats"]);
    assert_eq!(ok(&out, "remote graph"), local);
    let got = fetched(&out);
    assert!(got < 256 << 10, "{got} bytes fetched of a 4 MiB model");
    v.stop();
}

#[test]
fn diff_and_validate_of_a_served_file_are_the_local_files() {
    let f = testdata().join("cvm/special_floats.params");
    let v = Viewer::start(&f, 0).unwrap();
    let url = served(&v);
    let local = run_str(&["validate", f.to_str().unwrap(), "--json"]);
    let remote = run_str(&["validate", &url, "--json"]);
    assert_eq!(remote.status.code(), local.status.code());
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&local.stdout).unwrap(),
        serde_json::from_slice(&remote.stdout).unwrap(),
    );
    assert_eq!(a["problems"], b["problems"]);
    assert_eq!(a["valid"], b["valid"]);
    let same = run_str(&["diff", f.to_str().unwrap(), &url]);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    let other = testdata().join("cvm/two_entry.params");
    let differ = run_str(&["diff", other.to_str().unwrap(), &url]);
    assert_eq!(differ.status.code(), Some(1));
    v.stop();
}
