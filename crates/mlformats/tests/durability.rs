//! Durability as an option: `sync` on `save_with` and `convert` writes the
//! same files as the default, and every format's writer goes through the
//! shared atomic write, which sweeps the temporaries of writers that died.

use std::fs;
use std::path::Path;

use mlformats::{ConvertOptions, Document, SaveOptions, Tensor};

const EXTS: [&str; 8] = [
    "safetensors",
    "npz",
    "params",
    "data",
    "nnp",
    "h5",
    "protobuf",
    "onnx",
];

fn tensors(doc: &Document) -> Vec<(String, Vec<usize>, Vec<u8>)> {
    doc.tensors()
        .map(|(n, t)| {
            (
                n.to_string(),
                t.shape().dims().to_vec(),
                t.to_row_major().unwrap().bytes().to_vec(),
            )
        })
        .collect()
}

/// Temporaries of a writer that is gone: pid 4194304 is above Linux's
/// largest pid. One named the way earlier versions named them, one the
/// way this one does (in this process' pid namespace).
fn plant_dead_temporaries(dir: &Path, output: &str) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.join(format!(".{output}.4194304.1f2e3d.tmp"))];
    if let Some(ns) = fs::read_link("/proc/self/ns/pid").ok().and_then(|l| {
        l.to_str()?
            .strip_prefix("pid:[")?
            .strip_suffix(']')?
            .parse::<u64>()
            .ok()
    }) {
        out.push(dir.join(format!(".{output}.mlf-4194304-1-{ns}-0.tmp")));
    }
    for p in &out {
        fs::write(p, b"dead writer's bytes").unwrap();
    }
    out
}

#[test]
fn save_with_sync_writes_what_the_default_writes_and_sweeps_dead_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..24u8).collect();
    let t = Tensor::new(mlformats::DType::F32, [2, 3], &data[..]).unwrap();
    for ext in EXTS {
        let plain = dir.path().join(format!("plain.{ext}"));
        let synced = dir.path().join(format!("synced.{ext}"));
        let planted = if cfg!(target_os = "linux") {
            plant_dead_temporaries(dir.path(), &format!("synced.{ext}"))
        } else {
            Vec::new()
        };
        mlformats::save(&plain, [("w", &t)]).unwrap();
        mlformats::save_with(&synced, [("w", &t)], &SaveOptions::new().sync(true))
            .unwrap_or_else(|e| panic!("{ext}: {e}"));
        let a = tensors(&Document::open(&plain).unwrap());
        let b = tensors(&Document::open(&synced).unwrap());
        assert_eq!(a, b, "{ext}");
        assert_eq!(a[0].2, data, "{ext}");
        for p in planted {
            assert!(!p.exists(), "{ext}: {} was not swept", p.display());
        }
    }
    assert_eq!(tensor_core::io::count_entries(dir.path()), 2 * EXTS.len());
}

#[test]
fn convert_with_sync_writes_what_the_default_writes() {
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cvm/large_1mb.params");
    let want = tensors(&Document::open(&input).unwrap());
    let dir = tempfile::tempdir().unwrap();
    for ext in EXTS {
        let plain = dir.path().join(format!("plain.{ext}"));
        let synced = dir.path().join(format!("synced.{ext}"));
        let planted = if cfg!(target_os = "linux") {
            plant_dead_temporaries(dir.path(), &format!("synced.{ext}"))
        } else {
            Vec::new()
        };
        mlformats::convert(&input, &plain, &ConvertOptions::new()).unwrap();
        let s = mlformats::convert(&input, &synced, &ConvertOptions::new().sync(true))
            .unwrap_or_else(|e| panic!("{ext}: {e}"));
        assert_eq!(s.tensors, want.len());
        assert_eq!(tensors(&Document::open(&plain).unwrap()), want, "{ext}");
        assert_eq!(tensors(&Document::open(&synced).unwrap()), want, "{ext}");
        for p in planted {
            assert!(!p.exists(), "{ext}: {} was not swept", p.display());
        }
    }
    assert_eq!(tensor_core::io::count_entries(dir.path()), 2 * EXTS.len());
}
