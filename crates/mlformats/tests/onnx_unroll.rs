//! `Loop` with a constant trip count and `Scan` over a sequence of static
//! length are unrolled on import: `testdata/translate/unroll/` holds such
//! models (`cases.py`) and what the real nnabla 1.39 and TenniS runtime
//! computed with the `.nnp` and `.tsm` we write for them (`results.json`:
//! each file's sha256 and its worst difference from onnxruntime). The
//! conversions must give those very bytes. A `Loop` whose trip count is an
//! input is refused, naming `--input-value`, and imports with it.
#![cfg(all(feature = "onnx", feature = "nnp", feature = "tennis"))]

use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, convert};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate/unroll")
}

mod common;
use common::sha256_file as sha256;

#[test]
fn unrolled_loops_and_scans_are_the_files_the_runtimes_ran() {
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data().join("results.json")).unwrap())
            .unwrap();
    let cases = r["cases"].as_object().unwrap();
    assert_eq!(cases.len(), 5);
    let dir = tempfile::tempdir().unwrap();
    for (name, case) in cases {
        for (ext, runtime) in [("nnp", "nnabla"), ("tsm", "tennis")] {
            let rec = &case[runtime];
            assert_eq!(rec["status"], "ok", "{name} {runtime}");
            for d in rec["max_abs_diff"].as_array().unwrap() {
                assert!(d.as_f64().unwrap() < 1e-5, "{name} {runtime}: {d}");
            }
            let out = dir.path().join(format!("{name}.{ext}"));
            convert(
                data().join(format!("{name}.onnx")),
                &out,
                &ConvertOptions::new(),
            )
            .unwrap_or_else(|e| panic!("{name}.{ext}: {e}"));
            assert_eq!(
                sha256(&out),
                rec["sha256"].as_str().unwrap(),
                "{name}.{ext}"
            );
        }
    }
}

/// `loop_trip_input_op17.onnx`: the loop of `loop_const_trip_op17` with
/// its trip count `M` a graph input.
#[test]
fn a_trip_count_given_at_run_time_is_refused_until_it_is_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let src = data().join("loop_trip_input_op17.onnx");
    for ext in ["nnp", "tsm"] {
        let out = dir.path().join(format!("m.{ext}"));
        let e = convert(&src, &out, &ConvertOptions::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("Loop") && e.contains("--input-value"),
            "{ext}: {e}"
        );
        let opts = ConvertOptions::new().input_value("M", vec![4.0]);
        convert(&src, &out, &opts).unwrap_or_else(|e| panic!("{ext} with M fixed: {e}"));
        // four iterations, as with M stored in the file
        let fixed = dir.path().join(format!("fixed.{ext}"));
        convert(
            data().join("loop_const_trip_op17.onnx"),
            &fixed,
            &ConvertOptions::new(),
        )
        .unwrap();
        assert_eq!(sha256(&out), sha256(&fixed), "{ext}");
    }
}
