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
//! - read_owned_cold: `LazyParams::read_all` as the first load of a fresh
//!   process vs TVM's `load_param_dict_from_file` in a fresh Python (set
//!   `MLFORMATS_TVM_PYTHON` to a Python that imports `tvm`; without it, vs a
//!   fresh-process `std::fs::read` of the file), median of fresh processes.
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
    if let Some(p) = std::env::var_os("CVM_BENCH_COLD") {
        cold_child(&p.to_string_lossy());
        return;
    }
    if let Some(p) = std::env::var_os("CVM_BENCH_COLD_FS_READ") {
        let t = Instant::now();
        black_box(std::fs::read(p).unwrap().len());
        println!("{}", t.elapsed().as_secs_f64());
        return;
    }
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

    // the first load of a fresh process, ours against TVM's
    cold_against_tvm(&big_path, payload, reps);
}

/// The child of [`cold_seconds`]: one `read_all` of the file, timed.
fn cold_child(path: &str) {
    let t = Instant::now();
    let mut l =
        LazyParams::from_reader(File::open(path).unwrap(), &ReadOptions::default()).unwrap();
    let all = l.read_all().unwrap();
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(all.len(), N);
    println!("{secs}");
}

/// Median over `reps` fresh processes of the first load of `path`: this
/// benchmark started again as a child, or `python` timing TVM.
fn cold_seconds(reps: usize, mut command: impl FnMut() -> std::process::Command) -> f64 {
    let mut v = Vec::new();
    for _ in 0..reps {
        let out = command().output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        v.push(
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse::<f64>()
                .unwrap(),
        );
    }
    median(v)
}

/// TVM's loader timed inside its own fresh process (the import not counted).
const TVM_SCRIPT: &str = "import sys, time, tvm\n\
t = time.perf_counter()\n\
d = tvm.runtime.load_param_dict_from_file(sys.argv[1])\n\
print(time.perf_counter() - t)\n";

/// `read_owned_cold`: `LazyParams::read_all` as the first thing a fresh
/// process does, against TVM 0.x's `load_param_dict_from_file` in a fresh
/// Python (when `MLFORMATS_TVM_PYTHON` names a Python with `tvm`), files
/// in the page cache. Without TVM the row compares with a fresh-process
/// `std::fs::read` of the whole file (one buffer, as TVM reads it).
fn cold_against_tvm(path: &Path, payload: u64, reps: usize) {
    let reps = reps.max(5);
    let me = std::env::current_exe().unwrap();
    let ours = cold_seconds(reps, || {
        let mut c = std::process::Command::new(&me);
        c.env("CVM_BENCH_COLD", path);
        c
    });
    match std::env::var_os("MLFORMATS_TVM_PYTHON") {
        Some(py) => {
            let tvm = cold_seconds(reps, || {
                let mut c = std::process::Command::new(&py);
                c.arg("-c").arg(TVM_SCRIPT).arg(path);
                c
            });
            report(
                "read_owned_cold",
                payload,
                ours,
                "tvm_load_param_dict_from_file",
                tvm,
            );
        }
        None => {
            println!("(MLFORMATS_TVM_PYTHON not set: the TVM row is left out)");
            let read = cold_seconds(reps, || {
                let mut c = std::process::Command::new(&me);
                c.env("CVM_BENCH_COLD_FS_READ", path);
                c
            });
            report("read_owned_cold", payload, ours, "fs_read_one_buffer", read);
        }
    }
}
