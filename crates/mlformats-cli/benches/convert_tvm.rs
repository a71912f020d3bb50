//! `mlformats convert` of a 512 MiB `.params` (64 f32 tensors) to
//! `.safetensors` on disk, against what a Python user does without us: TVM's
//! `load_param_dict_from_file`, `.numpy()` of each array and
//! `safetensors.numpy.save_file`, in the same run, alternately (median of 5;
//! target: at least 3x at the default durability). Ours is the release CLI
//! in a fresh process, timed from spawn to exit, at the default (atomic
//! rename, no flush) and with `--sync` (file and folder flushed); the
//! reference is timed inside its own fresh Python after its imports, and
//! never flushes. The files live under Cargo's target directory (a disk,
//! not a tmpfs), the input in the page cache. Every timed run starts after
//! `sync` (untimed) and replaces the output its own setting wrote in the
//! previous round: without that, one side's unflushed pages throttle the
//! other's writes (measured: the same binary took 0.25 s or 1.0 s depending
//! on what ran before it), and replacing a flushed file costs more than
//! replacing an unflushed one (freeing its blocks). Ours frees the blocks
//! of the file it replaced in a background process after it exits; the
//! next run starts only when that is over.
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

/// Whether a background release of a replaced file's blocks (the `sh`
/// that `tensor_core::io` hands the last descriptor to) is still running.
fn releasing() -> bool {
    std::fs::read_dir("/proc").is_ok_and(|procs| {
        procs.flatten().any(|p| {
            std::fs::read(p.path().join("cmdline")).is_ok_and(|c| c == b"/bin/sh\0-c\0read _\0")
        })
    })
}

/// Waits (untimed) until the previous run's background release of the
/// blocks it replaced is over, and flushes every filesystem, so the next
/// run starts with no dirty pages and no freeing left from the previous one.
fn settle() {
    let start = Instant::now();
    while releasing() && start.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let ok = Command::new("sync").status().is_ok_and(|s| s.success());
    assert!(ok, "sync failed");
}

fn ours(input: &Path, output: &Path, sync: bool) -> f64 {
    settle();
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
    settle();
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
        (512usize << 20, 5)
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
    let out_sync = dir.path().join("out_sync.safetensors");
    let ref_out = dir.path().join("ref.safetensors");
    let out_new = dir.path().join("new.safetensors");
    let ref_new = dir.path().join("ref_new.safetensors");
    let gone = |p: &Path| {
        let _ = std::fs::remove_file(p);
    };
    let py = std::env::var_os("MLFORMATS_TVM_PYTHON").filter(|_| measuring);
    let mut t: [Vec<f64>; 5] = Default::default();
    // one untimed run of each warms the page cache and the imports, and
    // leaves the outputs the first timed "replace" runs replace
    ours(&input, &out, false);
    ours(&input, &out_sync, true);
    if let Some(py) = &py {
        reference(py, &input, &ref_out);
    }
    for _ in 0..reps {
        // a new output: nothing to replace
        gone(&out_new);
        t[0].push(ours(&input, &out_new, false));
        if let Some(py) = &py {
            gone(&ref_new);
            t[1].push(reference(py, &input, &ref_new));
        }
        // replacing the output the same setting wrote in the previous round
        t[2].push(ours(&input, &out, false));
        t[3].push(ours(&input, &out_sync, true));
        if let Some(py) = &py {
            t[4].push(reference(py, &input, &ref_out));
        }
    }
    let [new, ref_n, plain, synced, ref_r] = t.map(|v| if v.is_empty() { 0.0 } else { median(v) });
    println!(
        "convert .params -> .safetensors, {bytes} bytes: new output {new:.3} s; \
         replacing: default {plain:.3} s, --sync {synced:.3} s"
    );
    if py.is_some() {
        println!(
            "TVM 0.27 + safetensors: new output {ref_n:.3} s (ratio {:.2}); replacing {ref_r:.3} s \
             (ratio {:.2} default, {:.2} --sync)",
            ref_n / new,
            ref_r / plain,
            ref_r / synced
        );
        for (op, secs, r) in [
            ("convert_params_safetensors_new", new, ref_n),
            ("convert_params_safetensors", plain, ref_r),
            ("convert_params_safetensors_sync", synced, ref_r),
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
