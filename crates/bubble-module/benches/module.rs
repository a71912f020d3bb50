//! `cargo bench -p bubble-module --bench module`: a generated module of
//! 1,000 nodes holding 256 MiB of constants (set `MLF_BENCH_MIB` to change
//! the size), read and written, each against a baseline measured in the
//! same run:
//!
//! - `read_index`: parse (header, indices, every node and bubble) and take
//!   each constant's borrowed bytes, against a memcpy of the constant bytes;
//! - `read_mmap`: the same from a memory-mapped file (`Module::open`),
//!   against the same memcpy;
//! - `read_typed_views`: `read_index` plus `view::<f32>()` of every
//!   constant, which borrows when aligned and copies when not;
//! - `write`: `Module::write` to a reused `Vec`, against one `write_all`
//!   of the same number of bytes into it;
//! - `save`: `Module::save` to a temporary directory (atomic, synced),
//!   against one `write_all` of the same bytes to a file, synced.

use std::hint::black_box;
use std::io::Write;
use std::time::Instant;

use bubble_module::{Module, ModuleBuilder, NodeKind, WriteOptions};
use tensor_core::{DType, Tensor};

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
    println!(
        "{op:<18} {gbs:10.2} GB/s  {secs:.6} s   {:.2}x {baseline} ({base:.6} s)",
        base / secs
    );
    println!(
        "BENCH {{\"crate\":\"bubble-module\",\"op\":\"{op}\",\"bytes\":{bytes},\"seconds\":{secs:.6},\"baseline\":\"{baseline}\",\"baseline_seconds\":{base:.6},\"ratio\":{:.3}}}",
        base / secs
    );
}

/// 1 input, 499 constants, 499 `add`s chaining them, 1 `relu`: 1,000 nodes.
fn generate(data: &[u8]) -> Module<'_> {
    let consts = 499;
    let per = (data.len() / consts / 4) * 4;
    let mut b = ModuleBuilder::new();
    let mut prev = b
        .input_with("input", DType::F32, &[1, (per / 4) as i32])
        .expect("input");
    for i in 0..consts {
        let start = i * per;
        let end = if i + 1 == consts {
            data.len() / 4 * 4
        } else {
            start + per
        };
        let t = Tensor::new(DType::F32, [(end - start) / 4], &data[start..end]).expect("tensor");
        let c = b.constant(&format!("w{i}"), t).expect("constant");
        prev = b.op("add", &format!("add{i}"), &[prev, c]).expect("add");
    }
    let out = b.op("relu", "out", &[prev]).expect("relu");
    b.output(out).expect("output");
    let m = b.build().expect("build");
    assert_eq!(m.len(), 1000);
    m
}

fn touch_constants(m: &Module<'_>) -> usize {
    let mut n = 0usize;
    for node in m.nodes() {
        if node.kind() == NodeKind::Const
            && let Some(t) = node.value()
        {
            let b = t.bytes();
            n += b.len() + b.first().copied().unwrap_or(0) as usize;
        }
    }
    n
}

fn main() {
    let mib: usize = std::env::var("MLF_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let data: Vec<u8> = (0..mib << 20).map(|i| (i * 31 % 251) as u8).collect();
    let module = generate(&data);
    let const_bytes: usize = module
        .constants()
        .iter()
        .map(|c| c.tensor.bytes().len())
        .sum();

    // write, into a reused (already faulted-in) buffer
    let mut out: Vec<u8> = Vec::new();
    module
        .write(&mut out, &WriteOptions::default())
        .expect("write");
    let file = out.clone();
    let file_len = file.len();
    let write = best_of(5, || {
        out.clear();
        module
            .write(&mut out, &WriteOptions::default())
            .expect("write")
    });
    let write_all = best_of(5, || {
        out.clear();
        out.write_all(&file).expect("write_all")
    });
    assert_eq!(out, file);
    drop(out);

    // read: index + borrowed views vs copying the constant bytes once
    let mut dst = vec![0u8; const_bytes];
    let memcpy = best_of(5, || dst.copy_from_slice(&data[..const_bytes]));
    let read = best_of(7, || {
        let m = Module::parse(&file).expect("parse");
        touch_constants(&m)
    });
    let typed = best_of(5, || {
        let m = Module::parse(&file).expect("parse");
        let mut s = 0usize;
        let mut copied = 0usize;
        for c in m.constants() {
            let v = c.tensor.view::<f32>().expect("f32");
            if matches!(v, std::borrow::Cow::Owned(_)) {
                copied += 1;
            }
            s += v.len();
        }
        (s, copied)
    });
    let parsed = Module::parse(&file).expect("parse");
    let misaligned = parsed
        .constants()
        .iter()
        .filter(|c| !(c.tensor.bytes().as_ptr() as usize).is_multiple_of(4))
        .count();

    // memory-mapped and saved files
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bench.tsm");
    let save = best_of(3, || {
        module.save(&path, &WriteOptions::default()).expect("save")
    });
    let raw = dir.path().join("raw.bin");
    let write_file = best_of(3, || {
        let mut f = std::fs::File::create(&raw).expect("create");
        f.write_all(&file).expect("write_all");
        f.sync_all().expect("sync")
    });
    let mmap = best_of(7, || {
        let m = Module::open(&path).expect("open");
        touch_constants(&m)
    });

    println!(
        "module: {} nodes, {} constants, {} bytes of constants, file {} bytes; {} of {} constants' data not 4-aligned in the file",
        module.len(),
        module.constants().len(),
        const_bytes,
        file_len,
        misaligned,
        parsed.constants().len()
    );
    report("read_index", const_bytes, read, "memcpy", memcpy);
    report("read_mmap", const_bytes, mmap, "memcpy", memcpy);
    report("read_typed_views", const_bytes, typed, "memcpy", memcpy);
    report("write", file_len, write, "write_all", write_all);
    report("save", file_len, save, "write_all_file", write_file);
}
