//! `cargo bench -p tensor-core --bench stats`: summary statistics of a
//! 512 MiB f32 tensor against a memcpy of the same bytes, in the same run.
//! Set `MLF_BENCH_MIB` to change the size.

use std::hint::black_box;
use std::time::Instant;

use tensor_core::{DType, Tensor, stats};

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        black_box(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

fn report(op: &str, bytes: usize, secs: f64, baseline: &str, base: f64) {
    let gbs = bytes as f64 / secs / 1e9;
    println!("{op:<24} {gbs:8.2} GB/s   {:.2}x {baseline}", base / secs);
    println!(
        "BENCH {{\"crate\":\"tensor-core\",\"op\":\"{op}\",\"bytes\":{bytes},\"seconds\":{secs:.6},\"baseline\":\"{baseline}\",\"baseline_seconds\":{base:.6},\"ratio\":{:.3}}}",
        base / secs
    );
}

fn main() {
    let mib: usize = std::env::var("MLF_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    let n = mib * (1 << 20) / 4;
    let values: Vec<f32> = (0..n).map(|i| ((i % 9973) as f32) * 0.001 - 3.0).collect();
    let bytes: &[u8] = bytemuck::cast_slice(&values);
    let t = Tensor::new(DType::F32, [n], bytes).expect("consistent tensor");
    let mut dst = vec![0u8; bytes.len()];
    let memcpy = best_of(5, || dst.copy_from_slice(bytes));
    let summary = best_of(5, || stats::summarize(&t));
    report("stats_f32", bytes.len(), summary, "memcpy", memcpy);
    let other = Tensor::new(DType::F32, [n], &dst[..]).expect("consistent tensor");
    let cmp = best_of(3, || stats::compare(&t, &other));
    report("compare_f32", bytes.len() * 2, cmp, "memcpy", memcpy * 2.0);
}
