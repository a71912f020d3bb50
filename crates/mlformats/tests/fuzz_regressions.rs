//! Replays every input the fuzzers found (`testdata/fuzz-regressions/<target>/`)
//! through exactly the code the fuzz target runs (`fuzz/src/lib.rs`, included
//! here), so plain `cargo test` keeps every finding fixed. A replay passes when
//! the harness returns: the readers may accept or refuse the input, but must
//! not panic, and what they accept must satisfy the harness's checks.
//!
//! New findings: `cargo xtask fuzz` leaves the input in `fuzz/artifacts/<target>/`;
//! copy it to `testdata/fuzz-regressions/<target>/` under a descriptive name.

#[path = "../../../fuzz/src/lib.rs"]
mod harness;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn target(name: &str) -> Option<harness::Target> {
    harness::TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
}

/// Runs `f` on every file; returns one line per file that panicked.
fn replay(f: harness::Target, files: &[PathBuf]) -> Vec<String> {
    let mut failures = Vec::new();
    for p in files {
        let data = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| f(&data))) {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("{}: panicked: {msg}", p.display()));
        }
    }
    failures
}

#[test]
fn every_fuzz_finding_replays_without_panic() {
    let root = testdata().join("fuzz-regressions");
    let mut failures = Vec::new();
    let mut replayed = 0;
    let Ok(rd) = std::fs::read_dir(&root) else {
        return; // no findings kept yet
    };
    for dir in rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let f = target(&name).unwrap_or_else(|| {
            panic!("testdata/fuzz-regressions/{name}/ names no fuzz target (see fuzz/src/lib.rs)")
        });
        let files = files_under(&dir);
        replayed += files.len();
        failures.extend(replay(f, &files));
    }
    assert!(
        failures.is_empty(),
        "{} of {replayed} regression inputs fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The harness's own checks hold on every golden file (so a replay failure
/// means the reader, not the harness, is wrong), and the inspect target
/// runs on every file of `testdata/`.
#[test]
fn harness_accepts_every_golden() {
    let files: Vec<PathBuf> = files_under(&testdata())
        .into_iter()
        .filter(|p| !p.components().any(|c| c.as_os_str() == "fuzz-regressions"))
        .filter(|p| {
            !matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("json" | "md" | "txt")
            )
        })
        .collect();
    let by_ext = |exts: &[&str]| -> Vec<PathBuf> {
        files
            .iter()
            .filter(|p| {
                p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| exts.contains(&e))
            })
            .cloned()
            .collect()
    };
    let primitiv = by_ext(&["data"]);
    let shapes = |t: &str| files_under(&testdata().join("hostile/shapes").join(t));
    // (a sample: each one is imported twice, in a debug build)
    let onnx: Vec<PathBuf> = by_ext(&["onnx"])
        .into_iter()
        .filter(|p| p.components().any(|c| c.as_os_str() == "translate"))
        .step_by(16)
        .collect();
    // (a sample of the graphs: each one is exported twice, in a debug build)
    let graphs: Vec<PathBuf> = by_ext(&["nnp", "nntxt", "protobuf", "tsm"])
        .into_iter()
        .step_by(8)
        .collect();
    let runs: [(&str, Vec<PathBuf>); 17] = [
        ("cvm_params", by_ext(&["params"])),
        ("primitiv_shape", primitiv.clone()),
        ("primitiv_tensor", primitiv.clone()),
        ("primitiv_parameter", primitiv.clone()),
        ("primitiv_model", primitiv.clone()),
        ("primitiv_optimizer", primitiv),
        ("nnabla_text", by_ext(&["nntxt", "prototxt"])),
        ("nnabla_binary", by_ext(&["protobuf"])),
        ("nnabla_h5", by_ext(&["h5"])),
        ("nnp", by_ext(&["nnp"])),
        ("tennis_module", by_ext(&["tsm"])),
        ("inspect", files.clone()),
        ("zip_shapes", shapes("zip_shapes")),
        ("nesting", shapes("nesting")),
        ("h5_shapes", shapes("h5_shapes")),
        ("onnx_import", onnx),
        ("graph_export", graphs),
    ];
    let mut failures = Vec::new();
    for (name, files) in &runs {
        assert!(!files.is_empty(), "no golden files for {name}");
        failures.extend(replay(target(name).unwrap(), files));
    }
    assert_eq!(
        runs.len(),
        harness::TARGETS.len(),
        "a target has no golden run"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
