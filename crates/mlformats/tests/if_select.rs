//! An `If` whose condition is computed at run time becomes both branches
//! and a `Where`: `testdata/translate/if_select/` holds such a model and
//! what the real nnabla 1.39 computed with the `.nnp` we write for it
//! (`if_select.json`: its sha256, and nnabla's and onnxruntime's outputs for
//! either branch). The conversion must give those very bytes.
#![cfg(all(feature = "onnx", feature = "nnp"))]

use std::io::Read;
use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, convert};
use sha2::{Digest, Sha256};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate/if_select")
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn a_run_time_if_is_the_nnp_nnabla_ran() {
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data().join("if_select.json")).unwrap())
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.nnp");
    let s = convert(data().join("if_select.onnx"), &out, &ConvertOptions::new()).unwrap();
    assert!(s.whole_model);
    let bytes = std::fs::read(&out).unwrap();
    let sha: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        sha,
        r["nnp_sha256"].as_str().unwrap(),
        "not the bytes nnabla ran"
    );

    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut text = String::new();
    z.by_name("network.nntxt")
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let model = nnp_archive::nnabla_proto::text::parse(&text).unwrap();
    let net = &model.network[0];
    let types: Vec<&str> = net.function.iter().map(|f| f.r#type.as_str()).collect();
    for want in [
        "Greater",
        "MulScalar",
        "ReLU",
        "Add2",
        "Tanh",
        "Where",
        "Sigmoid",
    ] {
        assert!(types.contains(&want), "{want} not in {types:?}");
    }
    // flag stays an input: the condition is computed at run time
    let inputs: Vec<&str> = model.executor[0]
        .data_variable
        .iter()
        .map(|v| v.variable_name.as_str())
        .collect();
    assert_eq!(inputs, ["x", "flag"]);

    // what the runtimes computed: each branch's result, the two runtimes agreeing
    let x = floats(
        &r["x"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r.as_array().unwrap().clone())
            .collect(),
    );
    let cases = r["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for c in cases {
        let flag = c["flag"].as_f64().unwrap();
        let (ort, nn) = (floats(&c["onnxruntime"]), floats(&c["nnabla"]));
        assert_eq!((ort.len(), nn.len()), (6, 6));
        for i in 0..6 {
            let w = -1.0 + 2.0 * i as f64 / 5.0;
            let y = if flag > 0.0 {
                (2.0 * x[i]).max(0.0)
            } else {
                (x[i] + w).tanh()
            };
            let want = 1.0 / (1.0 + (-y).exp());
            assert!(
                (ort[i] - want).abs() < 1e-6,
                "onnxruntime, flag {flag}, {i}"
            );
            assert!((nn[i] - want).abs() < 1e-6, "nnabla, flag {flag}, {i}");
        }
    }
}
