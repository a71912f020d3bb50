//! Helpers shared by this crate's integration tests: testdata paths and
//! comparisons of parsed content with the golden sidecars.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use primitiv_format::{Model, Optimizer, Parameter, Shape, Tensor};
use serde_json::Value;
use sha2::{Digest, Sha256};

pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/primitiv")
}

pub fn goldens() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(testdata())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "data"))
        .collect();
    v.sort();
    assert_eq!(v.len(), 37, "the 37 golden files are in testdata/primitiv");
    v
}

pub fn sidecar(data: &Path) -> Value {
    // Python wrote undecodable key bytes as lone surrogates U+DC80..U+DCFF
    // (surrogateescape), which serde_json refuses; map them to U+0080..U+00FF
    // so that `key_matches` can compare the raw bytes.
    let text = std::fs::read_to_string(data.with_extension("json")).unwrap();
    serde_json::from_str(&text.replace("\\udc", "\\u00")).unwrap()
}

fn hex(s: &str) -> u32 {
    u32::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

pub fn check_shape(s: &Shape, j: &Value, at: &str) {
    let dims: Vec<u64> = s.dims().iter().map(|&d| d as u64).collect();
    let jd: Vec<u64> = j["dims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(dims, jd, "{at}: dims");
    assert_eq!(
        s.batch() as u64,
        j["batch"].as_u64().unwrap(),
        "{at}: batch"
    );
}

pub fn check_tensor(t: &Tensor<'_>, j: &Value, at: &str) {
    check_shape(t.shape(), &j["shape"], at);
    if let Some(hexes) = j.get("values_hex").and_then(Value::as_array) {
        let bits: Vec<u32> = t.values().iter().map(|v| v.to_bits()).collect();
        let want: Vec<u32> = hexes.iter().map(|h| hex(h.as_str().unwrap())).collect();
        assert_eq!(bits, want, "{at}: values");
    } else {
        assert_eq!(
            t.values().len() as u64,
            j["values_count"].as_u64().unwrap(),
            "{at}"
        );
        let d = Sha256::digest(t.data());
        let h: String = d.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(h, j["data_sha256"].as_str().unwrap(), "{at}: data sha256");
        let first: Vec<f64> = t.values()[..8].iter().map(|&v| v as f64).collect();
        let want: Vec<f64> = j["values_first8"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(first, want, "{at}: first values");
    }
}

/// Sidecar keys are strings; invalid UTF-8 bytes appear as lone surrogates
/// (Python's surrogateescape), which serde_json turns into U+FFFD.
pub fn key_matches(k: &[u8], j: &Value) -> bool {
    match std::str::from_utf8(k) {
        Ok(s) => s == j.as_str().unwrap(),
        Err(_) => j
            .as_str()
            .unwrap()
            .chars()
            .map(|c| c as u32)
            .eq(k.iter().map(|&b| b as u32)),
    }
}

pub fn check_param(p: &Parameter<'_>, j: &Value, at: &str) {
    check_tensor(&p.value, &j["value"], &format!("{at}.value"));
    let stats = j["stats"].as_array().unwrap();
    assert_eq!(p.stats.len(), stats.len(), "{at}: stats count");
    for ((k, t), js) in p.stats.iter().zip(stats) {
        assert!(
            key_matches(k, &js["key"]),
            "{at}: stat key {:?} vs {}",
            k,
            js["key"]
        );
        check_tensor(t, &js["value"], &format!("{at}/{}", js["key"]));
    }
}

pub fn check_model(m: &Model<'_>, j: &Value, at: &str) {
    let params = j["params"].as_array().unwrap();
    assert_eq!(m.entries.len(), params.len(), "{at}: param count");
    for ((k, p), jp) in m.entries.iter().zip(params) {
        let jk = jp["key"].as_array().unwrap();
        assert_eq!(k.len(), jk.len(), "{at}: key length");
        for (c, jc) in k.iter().zip(jk) {
            assert!(key_matches(c, jc), "{at}: key {:?} vs {}", c, jc);
        }
        check_param(p, &jp["param"], &format!("{at}:{jk:?}"));
    }
}

pub fn check_optimizer_raw(o: &Optimizer, j: &Value, at: &str) {
    let u = j["uint_configs"].as_array().unwrap();
    assert_eq!(o.uint_configs.len(), u.len(), "{at}: uint count");
    for ((k, v), ju) in o.uint_configs.iter().zip(u) {
        assert!(key_matches(k, &ju["key"]), "{at}");
        assert_eq!(*v as u64, ju["value"].as_u64().unwrap(), "{at}");
    }
    let f = j["float_configs"].as_array().unwrap();
    assert_eq!(o.float_configs.len(), f.len(), "{at}: float count");
    for ((k, v), jf) in o.float_configs.iter().zip(f) {
        assert!(key_matches(k, &jf["key"]), "{at}");
        assert_eq!(
            v.to_bits(),
            hex(jf["hex"].as_str().unwrap()),
            "{at}: {}",
            jf["key"]
        );
    }
}
