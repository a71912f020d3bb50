//! `mlformats inspect FILE` (the table) on a 512 MiB file against the same
//! tensor names in a 1 MiB file, in one run, for every format the tool
//! writes: the table reads headers only, so its time must not depend on
//! the size of the data (target: within 2x, a ratio of at least 0.5).
//!
//! Each measurement is a fresh `mlformats` process (the median of several),
//! on files already in the page cache. `cargo bench -p mlformats-cli`
//! prints a `BENCH {...}` line per format (ratio = 1 MiB seconds / 512 MiB
//! seconds); `cargo test --benches` runs it on small files without them.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use mlformats::Tensor;

const TENSORS: usize = 64;

/// `TENSORS` f32 tensors `layer{i}/W` of `total` bytes in all.
fn tensors(total: usize) -> Vec<(String, Tensor<'static>)> {
    let per = total / TENSORS / 4;
    (0..TENSORS)
        .map(|i| {
            let values: Vec<f32> = (0..per)
                .map(|k| (k % 251) as f32 * 0.5 + i as f32)
                .collect();
            let t = Tensor::from_values([per / 64, 64], &values).unwrap();
            (format!("layer{i}/W"), t)
        })
        .collect()
}

fn inspect_seconds(file: &Path, reps: usize) -> f64 {
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_mlformats"))
            .arg("inspect")
            .arg(file)
            .output()
            .unwrap();
        times.push(start.elapsed().as_secs_f64());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("layer63/W"));
    }
    times.sort_by(f64::total_cmp);
    times[reps / 2]
}

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let (big, reps) = if measuring {
        (512 << 20, 7)
    } else {
        (4 << 20, 1)
    };
    let small = 1 << 20;
    let dir = tempfile::tempdir().unwrap();
    let big_t = tensors(big);
    let small_t = tensors(small);
    for ext in [
        "params",
        "safetensors",
        "npz",
        "nnp",
        "h5",
        "protobuf",
        "tsm",
        "data",
    ] {
        let big_path = dir.path().join(format!("big.{ext}"));
        let small_path = dir.path().join(format!("small.{ext}"));
        mlformats::save(&big_path, big_t.iter().map(|(n, t)| (n, t))).unwrap();
        mlformats::save(&small_path, small_t.iter().map(|(n, t)| (n, t))).unwrap();
        // warm the page cache and the binary
        inspect_seconds(&big_path, 1);
        inspect_seconds(&small_path, 1);
        let b = inspect_seconds(&big_path, reps);
        let s = inspect_seconds(&small_path, reps);
        let ratio = s / b;
        let bytes = std::fs::metadata(&big_path).unwrap().len();
        println!(
            "inspect .{ext:<12} {:>6} MiB: {b:.4} s   1 MiB: {s:.4} s   ratio {ratio:.2}",
            bytes >> 20
        );
        if measuring {
            println!(
                "BENCH {{\"crate\":\"mlformats-cli\",\"op\":\"inspect_table_{ext}\",\"bytes\":{bytes},\"seconds\":{b:.6},\"baseline\":\"same names, 1 MiB\",\"baseline_seconds\":{s:.6},\"ratio\":{ratio:.3}}}"
            );
        }
        std::fs::remove_file(&big_path).unwrap();
    }
}
