//! Peak memory of `convert` on a 1 GiB model, to every format the library
//! writes: it must stay near the largest tensor plus the memory-mapped
//! input (target: peak ≤ 1.2 × (largest tensor + input), a ratio of at
//! least 0.83 below), whatever the conversion does to each tensor.
//!
//! Three sources of 1 GiB (16 f32 tensors of 64 MiB), each converted to
//! every format (`.nntxt`, slow to print, from the first only):
//! - `.safetensors`, converted as it is (row-major f32);
//! - the same tensors with `--dtype f16` (every tensor cast on the way);
//! - a primitiv `.data` file (column-major: every tensor transposed for
//!   the row-major targets).
//!
//! Each conversion runs in a fresh process (this benchmark started again
//! with `MLFORMATS_PEAK_CHILD` set), which reports its peak resident set
//! (`VmHWM` of `/proc/self/status`: the pages of the input it touched, what
//! it allocated, the binary). A writer that held every converted tensor
//! until the end would peak near twice the input.
//!
//! `cargo bench -p mlformats-cli --bench convert_memory` prints one
//! `BENCH {...}` line per source and target, ratio = (largest tensor +
//! input) / peak. `cargo test --benches` runs it on a 4 MiB model.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use mlformats::{ConvertOptions, DType, Tensor};

const TENSORS: usize = 16;

/// The formats written, by extension.
const TARGETS: [&str; 10] = [
    "params",
    "safetensors",
    "npz",
    "nnp",
    "h5",
    "protobuf",
    "nntxt",
    "tsm",
    "data",
    "onnx",
];

/// `TENSORS` f32 tensors `layer{i}/W` of `total` bytes in all.
fn tensors(total: usize) -> Vec<(String, Tensor<'static>)> {
    let per = total / TENSORS / 4;
    (0..TENSORS)
        .map(|i| {
            let values: Vec<f32> = (0..per)
                .map(|k| (k % 251) as f32 * 0.25 - i as f32)
                .collect();
            let t = Tensor::from_values([per / 256, 256], &values).unwrap();
            (format!("layer{i}/W"), t)
        })
        .collect()
}

/// Peak resident set of this process so far, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// In the child: one conversion, then its peak on stdout.
fn child(spec: &str) {
    let mut parts = spec.split('\t');
    let (src, dst, cast) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap_or(""),
    );
    let mut opts = ConvertOptions::new();
    if cast == "f16" {
        opts = opts.dtype(DType::F16);
    }
    mlformats::convert(src, dst, &opts).unwrap_or_else(|e| panic!("{src} -> {dst}: {e}"));
    println!("{}", peak_rss());
}

/// Runs one conversion in a fresh process: (peak bytes, seconds).
fn measure(src: &Path, dst: &Path, cast: &str) -> (u64, f64) {
    let start = Instant::now();
    let out = Command::new(std::env::current_exe().unwrap())
        .env(
            "MLFORMATS_PEAK_CHILD",
            format!("{}\t{}\t{cast}", src.display(), dst.display()),
        )
        .output()
        .unwrap();
    let seconds = start.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let peak = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    (peak, seconds)
}

fn main() {
    if let Ok(spec) = std::env::var("MLFORMATS_PEAK_CHILD") {
        child(&spec);
        return;
    }
    let measuring = std::env::args().any(|a| a == "--bench");
    let total = if measuring { 1 << 30 } else { 4 << 20 };
    let dir = tempfile::tempdir().unwrap();
    let ts = tensors(total);
    let largest = ts
        .iter()
        .map(|(_, t)| t.bytes().len() as u64)
        .max()
        .unwrap();
    let st = dir.path().join("model.safetensors");
    mlformats::save(&st, ts.iter().map(|(n, t)| (n, t))).unwrap();
    let data = dir.path().join("model.data");
    mlformats::save(&data, ts.iter().map(|(n, t)| (n, t))).unwrap();
    drop(ts);
    let primitiv = mlformats::open(&data).unwrap();
    assert!(
        primitiv
            .tensors()
            .all(|(_, t)| t.order() == mlformats::MemoryOrder::ColumnMajor),
        "the primitiv source stores column-major tensors"
    );
    drop(primitiv);
    let mut failed = Vec::new();
    for (source, src, cast) in [
        ("safetensors", &st, ""),
        ("safetensors_f16", &st, "f16"),
        ("data", &data, ""),
    ] {
        let input = std::fs::metadata(src).unwrap().len();
        for ext in TARGETS {
            if source == "data" && ext == "data" || source == "safetensors" && ext == "safetensors"
            {
                continue; // re-encoding, not a conversion
            }
            if cast == "f16" && ext == "data" {
                continue; // primitiv holds f32 only: refused
            }
            if source != "safetensors" && ext == "nntxt" {
                continue; // text takes minutes per GiB: measured from one source
            }
            let dst = dir.path().join(format!("out.{ext}"));
            let (peak, seconds) = measure(src, &dst, cast);
            let budget = largest + input;
            let ratio = budget as f64 / peak as f64;
            let op = format!("convert_peak_{source}_to_{ext}");
            println!(
                "{op:<40} peak {:>6} MiB  (largest {} MiB + input {} MiB)  ratio {ratio:.2}  {seconds:.1} s",
                peak >> 20,
                largest >> 20,
                input >> 20
            );
            if measuring {
                println!(
                    "BENCH {{\"crate\":\"mlformats-cli\",\"op\":\"{op}\",\"bytes\":{input},\"seconds\":{seconds:.3},\"peak_bytes\":{peak},\"baseline\":\"(largest tensor + input) / peak memory\",\"baseline_seconds\":null,\"ratio\":{ratio:.3}}}"
                );
            }
            if measuring && ratio < 1.0 / 1.2 {
                failed.push(op);
            }
            std::fs::remove_file(&dst).unwrap();
        }
    }
    if !failed.is_empty() {
        eprintln!("peak above 1.2 × (largest tensor + input): {failed:?}");
    }
}
