//! `cargo bench -p cvm-params`: open + index, reading into owned buffers and
//! writing a generated 512 MiB, 100-tensor file, each against a baseline
//! measured in the same run (plain `Instant` timing, median of 5).
//!
//! - open_index: `Params::open` (mmap + parse + name index) of the 512 MiB
//!   file vs the same for a 1 MiB file with the same 100 names (the target
//!   is independence from data size: ratio ≥ 0.5). `open_index_lazy` is the
//!   same for `LazyParams::from_reader` over a `File`.
//! - read_owned: every tensor of the mapped file copied into a new `Vec`
//!   vs memcpy of the same bytes from memory into new `Vec`s of the same
//!   sizes; `read_owned_lazy` reads each tensor from a `File` with
//!   `LazyParams::read`.
//! - read_into_reused: `LazyParams::read_into` into buffers that already
//!   exist vs memcpy into pre-faulted buffers (no page faults either side).
//! - write: `cvm_params::write` of the 100 in-memory tensors to a new file vs
//!   one `write_all` of the same bytes to a new file.
//!
//! Each operation prints a readable line and a machine-readable
//! `BENCH {...}` line (ratio = baseline_seconds / seconds).

use std::fs::File;
use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use cvm_params::{LazyParams, Params, ReadOptions, WriteOptions, write};
use tensor_core::Tensor;

const N: usize = 100;
const BIG_ELEMS: usize = 1_342_177; // f32 → 536,870,800 payload bytes (docs/formats/cvm.md §10)
const SMALL_ELEMS: usize = 2_621; // f32 → ~1 MiB in total
const REPS: usize = 5;

fn tensors(elems: usize) -> Vec<(String, Tensor<'static>)> {
    (0..N)
        .map(|i| {
            let bytes: Vec<u8> = (0..elems * 4).map(|j| (i * 31 + j * 7) as u8).collect();
            (
                format!("layer{i:03}/weight"),
                Tensor::new(tensor_core::DType::F32, [elems], bytes).unwrap(),
            )
        })
        .collect()
}

fn file_bytes(items: &[(String, Tensor<'static>)]) -> Vec<u8> {
    let mut v = Vec::new();
    write(
        &mut v,
        items.iter().map(|(n, t)| (n, t)),
        &WriteOptions::default(),
    )
    .unwrap();
    v
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Times `ours` and `base` alternately (which goes first alternates too),
/// `reps` times each; medians.
fn pair(reps: usize, mut ours: impl FnMut(), mut base: impl FnMut()) -> (f64, f64) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let time = |f: &mut dyn FnMut(), into: &mut Vec<f64>| {
        let t = Instant::now();
        f();
        into.push(t.elapsed().as_secs_f64());
    };
    for rep in 0..reps {
        if rep % 2 == 0 {
            time(&mut base, &mut b);
            time(&mut ours, &mut a);
        } else {
            time(&mut ours, &mut a);
            time(&mut base, &mut b);
        }
    }
    (median(a), median(b))
}

/// False when run as a smoke test (`cargo test --benches`): no BENCH lines then.
static MEASURING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn report(op: &str, bytes: u64, seconds: f64, baseline: &str, baseline_seconds: f64) {
    let ratio = baseline_seconds / seconds;
    println!(
        "{op:<16} {:>10.6} s  {:>7.2} GB/s   {baseline}: {:>10.6} s  {:>7.2} GB/s   ratio {ratio:.2}",
        seconds,
        bytes as f64 / seconds / 1e9,
        baseline_seconds,
        bytes as f64 / baseline_seconds / 1e9,
    );
    if !MEASURING.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    println!(
        "BENCH {{\"crate\":\"cvm-params\",\"op\":\"{op}\",\"bytes\":{bytes},\"seconds\":{seconds:.6},\"baseline\":\"{baseline}\",\"baseline_seconds\":{baseline_seconds:.6},\"ratio\":{ratio:.3}}}"
    );
}

fn write_file(path: &Path, bytes: &[u8]) {
    let mut f = File::create(path).unwrap();
    f.write_all(bytes).unwrap();
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs us too: be quick then.
    let quick = !std::env::args().any(|a| a == "--bench");
    MEASURING.store(!quick, std::sync::atomic::Ordering::Relaxed);
    if quick {
        println!("smoke run on a small file (use `cargo bench` to measure)");
    }
    let (big_elems, reps) = if quick {
        (SMALL_ELEMS * 4, 1)
    } else {
        (BIG_ELEMS, REPS)
    };
    let dir = tempfile::tempdir().unwrap();
    let big_path = dir.path().join("big.params");
    let small_path = dir.path().join("small.params");

    let big = tensors(big_elems);
    let big_bytes = file_bytes(&big);
    let small_bytes = file_bytes(&tensors(SMALL_ELEMS));
    write_file(&big_path, &big_bytes);
    write_file(&small_path, &small_bytes);
    let payload: u64 = big.iter().map(|(_, t)| t.bytes().len() as u64).sum();
    println!(
        "files: {} bytes ({} payload, {} tensors) and {} bytes, same names; median of {reps}",
        big_bytes.len(),
        payload,
        N,
        small_bytes.len()
    );
    // warm the page cache
    black_box(std::fs::read(&big_path).unwrap().len());

    // open + index, independent of data size
    let many = 50;
    let (o, s) = pair(
        reps,
        || {
            for _ in 0..many {
                black_box(Params::open(&big_path).unwrap().len());
            }
        },
        || {
            for _ in 0..many {
                black_box(Params::open(&small_path).unwrap().len());
            }
        },
    );
    report(
        "open_index",
        big_bytes.len() as u64,
        o / many as f64,
        "open_index_1mib",
        s / many as f64,
    );
    let (o, s) = pair(
        reps,
        || {
            for _ in 0..many {
                black_box(
                    LazyParams::from_reader(
                        File::open(&big_path).unwrap(),
                        &ReadOptions::default(),
                    )
                    .unwrap()
                    .len(),
                );
            }
        },
        || {
            for _ in 0..many {
                black_box(
                    LazyParams::from_reader(
                        File::open(&small_path).unwrap(),
                        &ReadOptions::default(),
                    )
                    .unwrap()
                    .len(),
                );
            }
        },
    );
    report(
        "open_index_lazy",
        big_bytes.len() as u64,
        o / many as f64,
        "open_index_lazy_1mib",
        s / many as f64,
    );

    // read every tensor into owned Vecs
    let sizes: Vec<(usize, usize)> = {
        let p = Params::parse(&big_bytes).unwrap();
        p.entries()
            .iter()
            .map(|e| (e.info().data_offset as usize, e.info().nbytes as usize))
            .collect()
    };
    let memcpy = || {
        let v: Vec<Vec<u8>> = sizes
            .iter()
            .map(|&(o, n)| big_bytes[o..o + n].to_vec())
            .collect();
        black_box(v.len());
    };
    let (o, s) = pair(
        reps,
        || {
            let p = Params::open(&big_path).unwrap();
            let v: Vec<Vec<u8>> = p
                .entries()
                .iter()
                .map(|e| e.tensor().bytes().to_vec())
                .collect();
            assert_eq!(v.len(), N);
            black_box(v);
        },
        memcpy,
    );
    report("read_owned", payload, o, "memcpy", s);
    let (o, s) = pair(
        reps,
        || {
            let mut l =
                LazyParams::from_reader(File::open(&big_path).unwrap(), &ReadOptions::default())
                    .unwrap();
            let v: Vec<Tensor> = (0..l.len()).map(|i| l.read(i).unwrap()).collect();
            assert_eq!(v.len(), N);
            black_box(v);
        },
        memcpy,
    );
    report("read_owned_lazy", payload, o, "memcpy", s);

    // the same into buffers that already exist (no page faults on either side)
    let mut ours_bufs: Vec<Vec<u8>> = sizes.iter().map(|&(_, n)| vec![1u8; n]).collect();
    let mut base_bufs: Vec<Vec<u8>> = sizes.iter().map(|&(_, n)| vec![1u8; n]).collect();
    let mut lazy =
        LazyParams::from_reader(File::open(&big_path).unwrap(), &ReadOptions::default()).unwrap();
    let (o, s) = pair(
        reps,
        || {
            for (i, b) in ours_bufs.iter_mut().enumerate() {
                lazy.read_into(i, b).unwrap();
            }
            black_box(&ours_bufs);
        },
        || {
            for (b, &(o, n)) in base_bufs.iter_mut().zip(&sizes) {
                b.copy_from_slice(&big_bytes[o..o + n]);
            }
            black_box(&base_bufs);
        },
    );
    assert!(ours_bufs == base_bufs);
    report("read_into_reused", payload, o, "memcpy_prefaulted", s);
    drop((ours_bufs, base_bufs, lazy));

    // write
    let out = dir.path().join("out.params");
    let base_out = dir.path().join("base.params");
    let (o, s) = pair(
        reps,
        || {
            let f = File::create(&out).unwrap();
            write(f, big.iter().map(|(n, t)| (n, t)), &WriteOptions::default()).unwrap();
        },
        || write_file(&base_out, &big_bytes),
    );
    assert!(std::fs::read(&out).unwrap() == big_bytes);
    report("write", big_bytes.len() as u64, o, "write_all", s);
}
