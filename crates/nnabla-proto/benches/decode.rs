//! Decoding a 256 MiB parameter `.protobuf` (64 × 1024×1024 f32, the shape of
//! the performance reference in docs/formats/nnabla.md §9) against a memcpy
//! of the same bytes.
//!
//! Run with `cargo bench -p nnabla-proto --bench decode`. Prints one
//! human-readable line and one `BENCH {json}` line per operation.

use std::hint::black_box;
use std::time::Instant;

use nnabla_proto::{ReadOptions, binary};
use tensor_core::Tensor;

const PARAMS: usize = 64;
const SIDE: usize = 1024;
const RUNS: usize = 3;

fn best<T>(mut f: impl FnMut() -> T) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..RUNS {
        let t = Instant::now();
        black_box(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

fn report(op: &str, bytes: usize, seconds: f64, baseline: &str, baseline_seconds: f64) {
    let ratio = baseline_seconds / seconds;
    let gbs = bytes as f64 / seconds / 1e9;
    println!(
        "{op:<28} {bytes} bytes in {seconds:.6} s = {gbs:8.2} GB/s, {ratio:.3}x {baseline} ({baseline_seconds:.6} s)"
    );
    println!(
        "BENCH {{\"crate\":\"nnabla-proto\",\"op\":\"{op}\",\"bytes\":{bytes},\"seconds\":{seconds:.9},\"baseline\":\"{baseline}\",\"baseline_seconds\":{baseline_seconds:.9},\"ratio\":{ratio:.6}}}"
    );
}

fn main() {
    // Parameters with pseudo-random values, written as nn.save_parameters does.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let tensors: Vec<(String, Tensor<'static>)> = (0..PARAMS)
        .map(|i| {
            let vals: Vec<f32> = (0..SIDE * SIDE)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                })
                .collect();
            let t = Tensor::from_values([SIDE, SIDE], &vals).expect("tensor");
            (format!("layer{i}/affine/W"), t)
        })
        .collect();
    let mut file = Vec::with_capacity(PARAMS * SIDE * SIDE * 4 + 4096);
    binary::write_parameters(
        &mut file,
        tensors.iter().map(|(n, t)| (n.as_str(), t, true)),
    )
    .expect("write");
    let n = file.len();
    println!("parameter .protobuf: {n} bytes ({PARAMS} parameters of {SIDE}x{SIDE} f32)");

    // Baseline: one memcpy of the whole file into an existing buffer.
    let mut dst = vec![0u8; n];
    let memcpy = best(|| {
        dst.copy_from_slice(black_box(&file));
        dst[n / 2]
    });

    let opts = ReadOptions::default();
    let borrowed = best(|| {
        let f = binary::parse_with(black_box(&file), &opts).expect("decode");
        assert_eq!(f.parameters.len(), PARAMS);
        f.parameters.len()
    });
    report("decode_borrowed", n, borrowed, "memcpy", memcpy);

    let owned = best(|| {
        let f = binary::parse_with(black_box(&file), &opts).expect("decode");
        let owned: Vec<_> = f.parameters.into_iter().map(|p| p.into_static()).collect();
        owned.len()
    });
    report("decode_owned", n, owned, "memcpy", memcpy);
    // The owned copy allocates fresh memory (page faults); compare it with
    // an allocating copy of the same bytes too.
    let to_vec = best(|| black_box(black_box(&file).to_vec()));
    report("decode_owned", n, owned, "to_vec", to_vec);

    let prost = best(|| {
        let m = binary::decode(black_box(&file)).expect("decode");
        m.parameter.len()
    });
    report("decode_prost_vec_f32", n, prost, "memcpy", memcpy);

    // Writing: the streaming writer into a reserved buffer vs one write_all.
    let mut out = Vec::with_capacity(n);
    let write_all = best(|| {
        out.clear();
        std::io::Write::write_all(&mut out, black_box(&file)).expect("write");
        out.len()
    });
    let write = best(|| {
        out.clear();
        binary::write_parameters(&mut out, tensors.iter().map(|(n, t)| (n.as_str(), t, true)))
            .expect("write");
        out.len()
    });
    assert_eq!(out, file);
    report("write_parameters_binary", n, write, "write_all", write_all);
}
