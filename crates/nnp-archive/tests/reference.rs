//! Files this crate writes, checked in the REAL nnabla 1.39.0 (ignored by
//! default: it needs the nnabla reference chroot and root).
//!
//! ```sh
//! NNABLA_CHECK=<tools>/nnabla/check_written.sh NNABLA_CHROOT=<chroot> \
//!   cargo test -p nnp-archive --test reference -- --ignored --nocapture
//! ```
//!
//! It writes, into a temporary directory (or `NNP_REF_OUT` when set):
//! `ref_h5.nnp` (golden mlp network, parameters in `parameter.h5`, plus a
//! 0-d and a 4-d parameter, some with `need_grad=false`), `ref_pb.nnp` (the
//! same with `parameter.protobuf`) and `ref.h5` (the same parameters plus an
//! f64 one), each with an `.expected.json` computed here, and runs
//! `check_written.sh FILE FILE.expected.json` on each: nnabla must load the
//! file (full `nnabla.utils.load.load` for the archives) and report the same
//! names, order, dtypes, shapes, sha256, sums and `need_grad`.

use std::path::{Path, PathBuf};

use nnp_archive::{Nnp, ParamFormat, Parameter, ReadOptions, WriteOptions, h5};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tensor_core::Tensor;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla")
}

fn entry(p: &Parameter<'_>) -> Value {
    let sha: String = Sha256::digest(p.tensor.bytes())
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect();
    let sum: f64 = p.tensor.to_f64_vec().unwrap().iter().sum();
    json!({"name": p.name, "dtype": p.tensor.dtype().name(), "shape": p.tensor.dims(),
           "sha256": sha, "sum": sum, "need_grad": p.need_grad})
}

fn run_check(script: &str, file: &Path, expected: &Value) -> bool {
    let exp = PathBuf::from(format!("{}.expected.json", file.display()));
    std::fs::write(&exp, serde_json::to_vec_pretty(expected).unwrap()).unwrap();
    let out = std::process::Command::new(script)
        .arg(file)
        .arg(&exp)
        .output()
        .expect("check_written.sh runs");
    println!(
        "{}: {}{}",
        file.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.status.success()
}

#[test]
#[ignore = "needs the nnabla reference chroot: set NNABLA_CHECK and NNABLA_CHROOT"]
fn written_files_load_in_real_nnabla() {
    let script = std::env::var("NNABLA_CHECK").expect("NNABLA_CHECK=path/to/check_written.sh");
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::env::var("NNP_REF_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir).unwrap();

    let golden = Nnp::open(testdata().join("mlp.nnp")).unwrap();
    let golden_exp: Value =
        serde_json::from_slice(&std::fs::read(testdata().join("mlp.nnp.expected.json")).unwrap())
            .unwrap();
    let mut nnp = golden.clone();
    let b2 = nnp
        .parameters()
        .get("fc2/affine/b")
        .unwrap()
        .tensor
        .to_owned_tensor();
    nnp.set_parameter(Parameter::new("fc2/affine/b", b2, false));
    nnp.set_parameter(Parameter::new(
        "extra/scale",
        Tensor::from_values(Vec::<usize>::new(), &[3.25f32]).unwrap(),
        false,
    ));
    let vals: Vec<f32> = (0..24).map(|i| i as f32 * 0.5 - 3.0).collect();
    nnp.set_parameter(Parameter::new(
        "bn1/bn/mean",
        Tensor::from_values([1, 2, 3, 4], &vals).unwrap(),
        true,
    ));
    let tensors: Vec<Value> = nnp.parameters().iter().map(entry).collect();

    let mut ok = true;
    for (name, format) in [
        ("ref_h5.nnp", ParamFormat::H5),
        ("ref_pb.nnp", ParamFormat::Protobuf),
    ] {
        let path = dir.join(name);
        nnp.save(&path, &WriteOptions::default().with_param_format(format))
            .unwrap();
        // our own reader agrees first
        let back = Nnp::open_with(&path, &ReadOptions::default()).unwrap();
        let ours: Vec<Value> = back.parameters().iter().map(entry).collect();
        assert_eq!(ours, tensors);
        let exp = json!({"schema": 1, "format": "nnabla-nnp", "kind": null,
                         "tensors": tensors, "graph": golden_exp["graph"]});
        ok &= run_check(&script, &path, &exp);
    }

    let mut params: Vec<Parameter<'_>> = nnp.parameters().iter().cloned().collect();
    params.push(Parameter::new(
        "extra/f64",
        Tensor::from_values([2, 2], &[1.5f64, -2.0, 1e-300, 7.0]).unwrap(),
        true,
    ));
    let path = dir.join("ref.h5");
    h5::save(&path, &params).unwrap();
    let exp = json!({"schema": 1, "format": "nnabla-h5", "kind": null,
                     "tensors": params.iter().map(entry).collect::<Vec<_>>(), "graph": null});
    ok &= run_check(&script, &path, &exp);
    assert!(ok, "nnabla disagreed; see the output above");
}
