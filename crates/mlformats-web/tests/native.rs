//! The viewer module's answers, natively, on every file of testdata/: the
//! tensor table and the graph agree with the `inspect --json` document of
//! the same file; statistics and values agree with the tensors; hostile
//! bytes give an error, never a panic.

use std::path::{Path, PathBuf};

use mlformats_web::Model;
use serde_json::Value;

fn samples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if !p.ends_with("fuzz-regressions") {
                    stack.push(p);
                }
                continue;
            }
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            if [
                "params", "data", "nnp", "nntxt", "protobuf", "h5", "tsm", "npz",
            ]
            .contains(&ext)
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn open(p: &Path) -> Result<Model, mlformats_web::ViewError> {
    let name = p.file_name().unwrap().to_str().unwrap();
    Model::open_bytes(std::fs::read(p).unwrap(), name)
}

fn node_counts(g: &Value) -> Vec<usize> {
    if g.is_null() {
        return vec![];
    }
    match g.get("networks") {
        Some(ns) => ns
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["functions"].as_array().unwrap().len())
            .collect(),
        None => vec![g["nodes"].as_array().unwrap().len()],
    }
}

#[test]
fn tables_and_graphs_equal_inspect_json() {
    let mut opened = 0;
    for p in samples() {
        let Ok(doc) = mlformats::open(&p) else {
            assert!(open(&p).is_err(), "{}: the library refuses it", p.display());
            continue;
        };
        let inspect = doc.inspect_json();
        let m = open(&p).unwrap();
        let rows: Value = serde_json::from_str(&m.tensors()).unwrap();
        let rows = rows.as_array().unwrap();
        let want = inspect["tensors"].as_array().unwrap();
        assert_eq!(rows.len(), want.len(), "{}", p.display());
        for (r, w) in rows.iter().zip(want) {
            assert_eq!(r["name"], w["name"], "{}", p.display());
            assert_eq!(r["dtype"], w["dtype"], "{}", p.display());
            assert_eq!(r["shape"], w["shape"], "{}", p.display());
        }
        let graph: Value = serde_json::from_str(&m.graph()).unwrap();
        let counts: Vec<usize> = if graph.is_null() {
            vec![]
        } else {
            graph["graphs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g["nodes"].as_array().unwrap().len())
                .collect()
        };
        assert_eq!(counts, node_counts(&inspect["graph"]), "{}", p.display());
        let summary: Value = serde_json::from_str(&m.summary()).unwrap();
        assert_eq!(summary["format"], inspect["format"]);
        assert_eq!(summary["tensor_count"], want.len());
        opened += 1;
    }
    assert!(opened > 200, "{opened} samples");
}

#[test]
fn stats_and_values_agree_with_the_tensors() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla/convnet.nnp");
    let doc = mlformats::open(&p).unwrap();
    let m = open(&p).unwrap();
    for (key, t) in doc.tensors() {
        let mut v = Vec::new();
        mlformats::tensor_core::stats::for_each_f64_block(t, |xs| v.extend_from_slice(xs));
        let s: Value = serde_json::from_str(&m.stats_json(key, 10).unwrap()).unwrap();
        let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(s["min"].as_f64().unwrap(), min, "{key}");
        assert_eq!(s["max"].as_f64().unwrap(), max, "{key}");
        assert_eq!(s["count"].as_u64().unwrap() as usize, v.len());
        let hist: u64 = s["histogram"]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(hist as usize, v.len(), "{key}");
        let start = v.len() / 3;
        let got: Value = serde_json::from_str(&m.values_json(key, start, 5).unwrap()).unwrap();
        let got: Vec<f64> = got["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let end = (start + 5).min(v.len());
        assert_eq!(got.len(), end - start, "{key}");
        for (a, b) in got.iter().zip(&v[start..end]) {
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{key}: {a} {b}");
        }
    }
    assert!(m.stats_json("no such tensor", 10).is_err());
}

#[test]
fn hostile_bytes_are_errors() {
    for p in samples().iter().step_by(5) {
        let data = std::fs::read(p).unwrap();
        let name = p.file_name().unwrap().to_str().unwrap();
        for cut in [0, 1, data.len() / 2, data.len().saturating_sub(1)] {
            let lib =
                mlformats::Document::from_bytes(data[..cut].to_vec(), Some(Path::new(name)), None);
            let ours = Model::open_bytes(data[..cut].to_vec(), name);
            assert_eq!(lib.is_ok(), ours.is_ok(), "{name} cut at {cut}");
            if let (Err(a), Err(b)) = (lib, ours) {
                assert_eq!(mlformats::chain_message(&a), b.0);
            }
        }
    }
}
