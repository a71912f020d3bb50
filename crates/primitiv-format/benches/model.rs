//! Loading and saving a generated 256 MiB primitiv Model of 100 parameters
//! (the shape of the C++ benchmark in `docs/formats/primitiv.md` §9), against
//! memcpy / write_all of the same bytes measured in the same run.
//!
//! Run with `cargo bench -p primitiv-format`. Prints one `BENCH {...}` line per operation.

use std::fs::File as FsFile;
use std::hint::black_box;
use std::io::{BufWriter, Write};
use std::time::Instant;

use primitiv_format::{Model, Parameter, Shape, Tensor, WriteOptions};
use tensor_core::MappedFile;

const PARAMS: usize = 100;
const REPS: usize = 3;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn time<T>(mut f: impl FnMut() -> T) -> f64 {
    let mut runs = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        let t = Instant::now();
        black_box(f());
        runs.push(t.elapsed().as_secs_f64());
    }
    median(runs)
}

fn model(dims: [u32; 2]) -> Model<'static> {
    let n = (dims[0] * dims[1]) as usize;
    let mut m = Model::new();
    for i in 0..PARAMS {
        let vals: Vec<f32> = (0..n).map(|j| (i * 7 + j) as f32 * 0.001).collect();
        let t = Tensor::from_values(Shape::new(dims, 1).unwrap(), &vals).unwrap();
        m.insert([format!("p{i:03}")], Parameter::new(t).unwrap());
    }
    m
}

fn report(op: &str, bytes: u64, s: f64, baseline: &str, b: f64) {
    let mib = bytes as f64 / (1 << 20) as f64;
    println!(
        "{op:<22} {mib:8.1} MiB  {s:8.4} s  {:8.1} MiB/s   {baseline}: {b:.4} s  ratio {:.2}",
        mib / s,
        b / s
    );
    println!(
        "BENCH {{\"crate\":\"primitiv-format\",\"op\":\"{op}\",\"bytes\":{bytes},\"seconds\":{s:.6},\"baseline\":\"{baseline}\",\"baseline_seconds\":{b:.6},\"ratio\":{:.4}}}",
        b / s
    );
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let big_path = dir.path().join("big.data");
    let small_path = dir.path().join("small.data");

    let big = model([1024, 656]);
    let small = model([2621, 1]); // ~1 MiB, the same 100 keys
    let data_bytes: u64 = big
        .entries
        .iter()
        .map(|(_, p)| p.value.data().len() as u64)
        .sum();

    // --- save: Model::write through a BufWriter vs one write_all of the same bytes
    let blob = vec![0x5au8; data_bytes as usize];
    let base_write = time(|| {
        let mut f = FsFile::create(dir.path().join("blob")).unwrap();
        f.write_all(&blob).unwrap();
        f.flush().unwrap();
    });
    drop(blob);
    let save = time(|| {
        let f = FsFile::create(&big_path).unwrap();
        let mut w = BufWriter::with_capacity(1 << 20, f);
        big.write(&mut w, &WriteOptions::default()).unwrap();
        w.flush().unwrap();
    });
    let file_bytes = std::fs::metadata(&big_path).unwrap().len();
    report("save", file_bytes, save, "write_all", base_write);
    small.save(&small_path, &WriteOptions::default()).unwrap();
    drop(big);

    // --- load index + borrowed views: 256 MiB vs 1 MiB with the same keys
    let big_map = MappedFile::open(&big_path).unwrap();
    let small_map = MappedFile::open(&small_path).unwrap();
    let idx_small = time(|| Model::parse(&small_map).unwrap().len());
    let idx_big = time(|| Model::parse(&big_map).unwrap().len());
    report(
        "load_index",
        file_bytes,
        idx_big,
        "load_index_1MiB_same_keys",
        idx_small,
    );
    let m = Model::parse(&big_map).unwrap();
    let inside = m
        .entries
        .iter()
        .all(|(_, p)| big_map.range_of(p.value.data()).is_some());
    assert!(inside, "views borrow the map");

    // --- load into owned row-major Vec<f32>s vs memcpy of the same bytes
    // The same bytes copied into 100 fresh vectors that are all kept (as the
    // owned load keeps its 100 vectors), so both pay for fresh pages.
    let base_copy = time(|| {
        let vs: Vec<Vec<u8>> = m
            .entries
            .iter()
            .map(|(_, p)| black_box(p.value.data().to_vec()))
            .collect();
        black_box(vs).len()
    });
    let owned = time(|| {
        let m = Model::parse(&big_map).unwrap();
        let vs: Vec<Vec<f32>> = m
            .entries
            .iter()
            .map(|(_, p)| p.value.to_row_major_vec())
            .collect();
        black_box(vs).len()
    });
    report(
        "load_owned_row_major",
        data_bytes,
        owned,
        "memcpy",
        base_copy,
    );
    let owned_col = time(|| {
        let m = Model::parse(&big_map).unwrap();
        let vs: Vec<Vec<f32>> = m.entries.iter().map(|(_, p)| p.value.to_vec()).collect();
        black_box(vs).len()
    });
    report(
        "load_owned_column_major",
        data_bytes,
        owned_col,
        "memcpy",
        base_copy,
    );

    // --- save through the atomic path (temporary, fsync, rename), for reference
    let m_static = m.into_static();
    let atomic = time(|| m_static.save(&big_path, &WriteOptions::default()).unwrap());
    report(
        "save_atomic_fsync",
        file_bytes,
        atomic,
        "write_all",
        base_write,
    );
}
