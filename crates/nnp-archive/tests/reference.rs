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
//! names, order, dtypes, shapes, sha256, sums and `need_grad`. The golden
//! `convnet.nnp` is re-written both ways and checked the same way.
//!
//! With `NNABLA_CHROOT` set, two more checks run inside the chroot
//! (`/opt/nnenv/bin/python`, h5py 3.14, and `h5dump` when installed):
//!
//! - `h5py_reads_every_layout`: an `.h5` with every dtype the writer holds,
//!   a 0-d and zero-size datasets, 40-deep groups, 100 children in one
//!   group, non-ASCII and 300-byte names: h5py's `visititems` must list the
//!   same datasets with the same dtypes, shapes, bytes and attributes
//!   (`need_grad` a `numpy.bool_`, `index` an `int64`), `h5dump` must dump
//!   it, and `nnabla.load_parameters` must load its float datasets.
//! - `solver_state_rewrite_loads_in_real_nnabla` (also needs
//!   `NNABLA_SOLVER_STATE=<an Adam solver-state .h5 saved by nnabla>`): the
//!   state is read and re-written with `h5::save_solver_state`; nnabla's
//!   `Adam.load_states` must accept the copy and give every state value and
//!   `t` of the original.

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

    // The golden convnet re-written both ways, parameters untouched.
    let conv = Nnp::open(testdata().join("convnet.nnp")).unwrap();
    let conv_exp: Value = serde_json::from_slice(
        &std::fs::read(testdata().join("convnet.nnp.expected.json")).unwrap(),
    )
    .unwrap();
    for (name, format) in [
        ("ref_conv_h5.nnp", ParamFormat::H5),
        ("ref_conv_pb.nnp", ParamFormat::Protobuf),
    ] {
        let path = dir.join(name);
        conv.save(&path, &WriteOptions::default().with_param_format(format))
            .unwrap();
        let tensors: Vec<Value> = conv.parameters().iter().map(entry).collect();
        let exp = json!({"schema": 1, "format": "nnabla-nnp", "kind": null,
                         "tensors": tensors, "graph": conv_exp["graph"]});
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

/// Runs `python` (our check script, given as text) in the chroot with
/// `args`: names of files in `dir` (made paths inside the chroot) or, with
/// a leading `=`, plain values. Prints its output, returns whether it passed.
fn chroot_python(chroot: &Path, dir: &Path, script: &str, args: &[&str]) -> bool {
    std::fs::write(dir.join("check.py"), script).unwrap();
    let inside = |p: &Path| format!("/{}", p.strip_prefix(chroot).unwrap().display());
    let args: Vec<String> = args
        .iter()
        .map(|a| match a.strip_prefix('=') {
            Some(v) => v.to_string(),
            None => inside(&dir.join(a)),
        })
        .collect();
    let out = std::process::Command::new("chroot")
        .arg(chroot)
        .args([
            "env",
            "-i",
            "PATH=/usr/bin:/bin",
            "HOME=/root",
            "LC_ALL=C.UTF-8",
        ])
        .arg("/opt/nnenv/bin/python")
        .arg(inside(&dir.join("check.py")))
        .args(&args)
        .output()
        .expect("chroot runs");
    println!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.status.success()
}

/// A temporary directory inside the chroot's `/tmp`.
fn chroot_dir() -> (PathBuf, tempfile::TempDir) {
    let chroot = PathBuf::from(std::env::var("NNABLA_CHROOT").expect("NNABLA_CHROOT=<chroot>"));
    let tmp = tempfile::tempdir_in(chroot.join("tmp")).unwrap();
    (chroot, tmp)
}

const H5PY_CHECK: &str = r#"
import hashlib, json, subprocess, sys, shutil
import h5py, numpy as np
path, expected = sys.argv[1], sys.argv[2]
exp = json.load(open(expected))
seen = []
def visit(name, obj):
    if isinstance(obj, h5py.Dataset):
        seen.append(name)
with h5py.File(path, "r") as f:
    f.visititems(visit)
    bad = []
    if sorted(seen) != sorted(e["name"] for e in exp):
        bad.append("names differ: %r" % sorted(set(seen) ^ set(e["name"] for e in exp)))
    for e in exp:
        ds = f[e["name"]]
        a = ds[()]
        a = np.asarray(a)
        if str(ds.dtype) != e["numpy"]: bad.append("%s: dtype %s" % (e["name"], ds.dtype))
        if list(ds.shape) != e["shape"]: bad.append("%s: shape %s" % (e["name"], ds.shape))
        if hashlib.sha256(a.tobytes()).hexdigest() != e["sha256"]: bad.append("%s: data" % e["name"])
        ng, ix = ds.attrs["need_grad"], ds.attrs["index"]
        if type(ng) is not np.bool_ or bool(ng) != e["need_grad"]:
            bad.append("%s: need_grad %r %s" % (e["name"], ng, type(ng)))
        if type(ix) is not np.int64 or int(ix) != e["index"]:
            bad.append("%s: index %r %s" % (e["name"], ix, type(ix)))
print("h5py %s (HDF5 %s): %d datasets, %d problems" % (h5py.__version__, h5py.version.hdf5_version, len(seen), len(bad)))
for b in bad: print("  " + b)
ok = not bad
if shutil.which("h5dump"):
    r = subprocess.run(["h5dump", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    print("h5dump exit", r.returncode, r.stderr.decode()[-300:])
    ok &= r.returncode == 0
else:
    print("h5dump not installed: skipped")
import nnabla as nn
nn.clear_parameters()
nn.load_parameters(sys.argv[3])
loaded = nn.get_parameters(grad_only=False)
print("nnabla.load_parameters: %d parameters" % len(loaded))
ok &= len(loaded) == int(sys.argv[4])
sys.exit(0 if ok else 1)
"#;

#[test]
#[ignore = "needs the nnabla reference chroot: set NNABLA_CHROOT"]
fn h5py_reads_every_layout() {
    use tensor_core::DType;
    let (chroot, tmp) = chroot_dir();
    let dir = tmp.path();
    let f16s: Vec<half::f16> = [1.5f32, -0.25]
        .iter()
        .map(|&x| half::f16::from_f32(x))
        .collect();
    let mut ps: Vec<(Parameter<'static>, &str)> = vec![
        (
            Parameter::new("f16", Tensor::from_values([2], &f16s).unwrap(), true),
            "float16",
        ),
        (
            Parameter::new(
                "fc/W",
                Tensor::from_values([2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap(),
                true,
            ),
            "float32",
        ),
        (
            Parameter::new(
                "f64",
                Tensor::from_values([2], &[1e-300f64, -7.]).unwrap(),
                false,
            ),
            "float64",
        ),
        (
            Parameter::new(
                "i/8",
                Tensor::from_values([2], &[i8::MIN, 1]).unwrap(),
                true,
            ),
            "int8",
        ),
        (
            Parameter::new(
                "i/16",
                Tensor::from_values([2], &[i16::MIN, 1]).unwrap(),
                true,
            ),
            "int16",
        ),
        (
            Parameter::new(
                "i/32",
                Tensor::from_values([2], &[i32::MIN, 1]).unwrap(),
                true,
            ),
            "int32",
        ),
        (
            Parameter::new(
                "i/64",
                Tensor::from_values([2], &[i64::MIN, 1]).unwrap(),
                true,
            ),
            "int64",
        ),
        (
            Parameter::new(
                "u/8",
                Tensor::from_values([2], &[u8::MAX, 1]).unwrap(),
                true,
            ),
            "uint8",
        ),
        (
            Parameter::new(
                "u/16",
                Tensor::from_values([2], &[u16::MAX, 1]).unwrap(),
                true,
            ),
            "uint16",
        ),
        (
            Parameter::new(
                "u/32",
                Tensor::from_values([2], &[u32::MAX, 1]).unwrap(),
                true,
            ),
            "uint32",
        ),
        (
            Parameter::new(
                "u/64",
                Tensor::from_values([2], &[u64::MAX, 1]).unwrap(),
                true,
            ),
            "uint64",
        ),
        (
            Parameter::new(
                "mask",
                Tensor::new(DType::Bool, [3], vec![1u8, 0, 1]).unwrap(),
                false,
            ),
            "bool",
        ),
        (
            Parameter::new(
                "scalar",
                Tensor::from_values(Vec::<usize>::new(), &[2.5f32]).unwrap(),
                false,
            ),
            "float32",
        ),
        (
            Parameter::new(
                "empty",
                Tensor::new(DType::F32, [0, 3], Vec::<u8>::new()).unwrap(),
                true,
            ),
            "float32",
        ),
        (
            Parameter::new(
                "日本/重み",
                Tensor::from_values([1], &[3f32]).unwrap(),
                true,
            ),
            "float32",
        ),
        (
            Parameter::new(
                format!("long/{}", "n".repeat(300)),
                Tensor::from_values([1], &[4f32]).unwrap(),
                true,
            ),
            "float32",
        ),
        (
            Parameter::new(
                (0..40)
                    .map(|i| format!("g{i}"))
                    .collect::<Vec<_>>()
                    .join("/"),
                Tensor::from_values([1], &[5f32]).unwrap(),
                true,
            ),
            "float32",
        ),
    ];
    for i in 0..100 {
        ps.push((
            Parameter::new(
                format!("wide/p{i:03}"),
                Tensor::from_values([1], &[i as f32]).unwrap(),
                i % 2 == 0,
            ),
            "float32",
        ));
    }
    let params: Vec<Parameter<'_>> = ps.iter().map(|(p, _)| p.clone()).collect();
    h5::save(dir.join("all.h5"), &params).unwrap();
    let exp: Vec<Value> = ps
        .iter()
        .enumerate()
        .map(|(i, (p, numpy))| {
            let sha: String = Sha256::digest(p.tensor.bytes())
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect();
            json!({"name": p.name, "numpy": numpy, "shape": p.tensor.dims(), "sha256": sha,
                   "need_grad": p.need_grad, "index": i})
        })
        .collect();
    std::fs::write(dir.join("all.json"), serde_json::to_vec(&exp).unwrap()).unwrap();
    // nnabla's loader: the float parameters with ASCII names (nnabla keeps
    // float32 variables, and its C++ variable names are ASCII only)
    let floats: Vec<Parameter<'_>> = params
        .iter()
        .filter(|p| p.tensor.dtype() == DType::F32 && p.tensor.numel() > 0 && p.name.is_ascii())
        .cloned()
        .collect();
    h5::save(dir.join("floats.h5"), &floats).unwrap();
    let n = format!("={}", floats.len());
    assert!(
        chroot_python(
            &chroot,
            dir,
            H5PY_CHECK,
            &["all.h5", "all.json", "floats.h5", &n]
        ),
        "h5py, h5dump or nnabla disagreed; see the output above"
    );
}

const SOLVER_CHECK: &str = r#"
import sys, h5py, numpy as np
import nnabla as nn, nnabla.solvers as S
orig, path = sys.argv[1], sys.argv[2]
shapes, ref = {}, {}
def visit(name, obj):
    if isinstance(obj, h5py.Dataset):
        ref[name] = obj[()]
        p, s = name.rsplit("/", 1)
        if s != "t":
            shapes[p] = obj.shape
with h5py.File(orig, "r") as f:
    f.visititems(visit)
params = {k: nn.Variable(shp, need_grad=True) for k, shp in shapes.items()}
solver = S.Adam()
solver.set_parameters(params)
solver.load_states(path)
n = 0
for pname, state in solver.get_states().items():
    for sname, var in state.pstate.items():
        assert np.array_equal(var.d, ref[pname + "/" + sname]), pname + "/" + sname
        n += 1
    assert state.t == ref[pname + "/t"], (pname, state.t)
    n += 1
assert n == len(ref), (n, len(ref))
print("Adam.load_states: OK, %d parameters, %d state values equal to the original" % (len(params), n))
"#;

#[test]
#[ignore = "needs the nnabla reference chroot and a solver state: set NNABLA_CHROOT and NNABLA_SOLVER_STATE"]
fn solver_state_rewrite_loads_in_real_nnabla() {
    let src =
        PathBuf::from(std::env::var("NNABLA_SOLVER_STATE").expect("NNABLA_SOLVER_STATE=<file.h5>"));
    let (chroot, tmp) = chroot_dir();
    let dir = tmp.path();
    std::fs::copy(&src, dir.join("orig.h5")).unwrap();
    let map = tensor_core::MappedFile::open(&src).unwrap();
    let state =
        h5::solver_state_from_map_range(&map, 0..map.len(), &ReadOptions::default()).unwrap();
    h5::save_solver_state(dir.join("ours.h5"), &state).unwrap();
    // our reader agrees first
    let back_map = tensor_core::MappedFile::open(dir.join("ours.h5")).unwrap();
    let back =
        h5::solver_state_from_map_range(&back_map, 0..back_map.len(), &ReadOptions::default())
            .unwrap();
    assert_eq!(back.index, state.index);
    for ((n1, t1), (n2, t2)) in back.tensors.iter().zip(&state.tensors) {
        assert_eq!((n1, t1.dims(), t1.bytes()), (n2, t2.dims(), t2.bytes()));
    }
    println!("{} state tensors re-written", state.tensors.len());
    assert!(
        chroot_python(&chroot, dir, SOLVER_CHECK, &["orig.h5", "ours.h5"]),
        "nnabla refused the state or loaded other values; see the output above"
    );
}
