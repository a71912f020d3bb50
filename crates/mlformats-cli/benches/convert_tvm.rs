//! `mlformats convert` of a 512 MiB `.params` (64 f32 tensors) to
//! `.safetensors` on disk, against what a Python user does without us: TVM's
//! `load_param_dict_from_file`, `.numpy()` of each array and
//! `safetensors.numpy.save_file`, in the same run, alternately (median of 3;
//! target: at least 3x at the default durability). Ours is the release CLI
//! in a fresh process, timed from spawn to exit, at the default (atomic
//! rename, no flush) and with `--sync` (file and folder flushed); the
//! reference is timed inside its own fresh Python after its imports, and
//! never flushes. The files live under Cargo's target directory (a disk,
//! not a tmpfs), the input in the page cache.
//!
//! `MLFORMATS_TVM_PYTHON` names a Python with `tvm` (0.27) and
//! `safetensors`; without it the reference rows are left out.
//! `cargo bench -p mlformats-cli --bench convert_tvm` prints `BENCH {...}`
//! lines; `cargo test --benches` runs it on 4 MiB without them.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use mlformats::Tensor;

const TENSORS: usize = 64;

const TVM_SCRIPT: &str = "import sys, time, tvm, safetensors.numpy\n\
t = time.perf_counter()\n\
d = tvm.runtime.load_param_dict_from_file(sys.argv[1])\n\
safetensors.numpy.save_file({k: v.numpy() for k, v in d.items()}, sys.argv[2])\n\
print(time.perf_counter() - t)\n";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ours(input: &Path, output: &Path, sync: bool) -> f64 {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mlformats"));
    c.args(["convert", "-q"]).arg(input).arg(output);
    if sync {
        c.arg("--sync");
    }
    let t = Instant::now();
    let status = c.status().unwrap();
    let s = t.elapsed().as_secs_f64();
    assert!(status.success());
    s
}

fn reference(py: &std::ffi::OsStr, input: &Path, output: &Path) -> f64 {
    let out = Command::new(py)
        .arg("-c")
        .arg(TVM_SCRIPT)
        .arg(input)
        .arg(output)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let (total, reps) = if measuring {
        (512usize << 20, 3)
    } else {
        (4 << 20, 1)
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let input = dir.path().join("big.params");
    let per = total / TENSORS / 4;
    let ts: Vec<(String, Tensor<'static>)> = (0..TENSORS)
        .map(|i| {
            let v: Vec<f32> = (0..per).map(|k| (k % 509) as f32 + i as f32).collect();
            (
                format!("layer{i}/W"),
                Tensor::from_values([per / 256, 256], &v).unwrap(),
            )
        })
        .collect();
    mlformats::save(&input, ts.iter().map(|(n, t)| (n, t))).unwrap();
    drop(ts);
    let bytes = std::fs::metadata(&input).unwrap().len();
    let out = dir.path().join("out.safetensors");
    let ref_out = dir.path().join("ref.safetensors");
    let py = std::env::var_os("MLFORMATS_TVM_PYTHON").filter(|_| measuring);
    let (mut plain, mut synced, mut refs) = (Vec::new(), Vec::new(), Vec::new());
    // one untimed run of each warms the page cache and the imports
    ours(&input, &out, false);
    if let Some(py) = &py {
        reference(py, &input, &ref_out);
    }
    for _ in 0..reps {
        plain.push(ours(&input, &out, false));
        synced.push(ours(&input, &out, true));
        if let Some(py) = &py {
            refs.push(reference(py, &input, &ref_out));
        }
    }
    let (p, s) = (median(plain), median(synced));
    println!("convert .params -> .safetensors, {bytes} bytes: default {p:.3} s, --sync {s:.3} s");
    if let Some(_py) = &py {
        let r = median(refs);
        println!(
            "TVM 0.27 + safetensors: {r:.3} s; ratio {:.2} (default), {:.2} (--sync)",
            r / p,
            r / s
        );
        for (op, secs) in [
            ("convert_params_safetensors", p),
            ("convert_params_safetensors_sync", s),
        ] {
            println!(
                "BENCH {{\"crate\":\"mlformats-cli\",\"op\":\"{op}\",\"bytes\":{bytes},\"seconds\":{secs:.6},\"baseline\":\"tvm_load_param_dict+safetensors_save_file\",\"baseline_seconds\":{r:.6},\"ratio\":{:.3}}}",
                r / secs
            );
        }
    } else if measuring {
        println!("(MLFORMATS_TVM_PYTHON not set: the TVM + safetensors rows are left out)");
    }
}
