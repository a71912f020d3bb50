//! ONNX initializers kept in `TensorProto`'s typed fields (`float_data`,
//! `double_data`, `int32_data`, `int64_data`, `uint64_data`), on the
//! models of `testdata/onnx_typed` (made by its `make_fixtures.py`; every
//! dtype each field carries, packed, unpacked and in several runs, mixed
//! with `raw_data`): `Document` reads what `onnx.numpy_helper.to_array`
//! reads (`expected.json`). `Document` reads ONNX through its index
//! whether opened whole or at a `ReadAt`, so the two are not compared field
//! by field (one reader); what is checked is the reads by slices (at odd
//! offsets, front to back and backwards) against the whole tensor's bytes;
//! converting by slices (`convert_sliced`) gives the bytes `convert_document` gives (two
//! drivers); truncated and mutated copies (every 3rd byte of a small
//! model, a stride over a big one) and hand-made broken fields fail at
//! open or at the first read of the tensor, with the whole-file path's
//! message for a count, never panic; reading front to back in slices is
//! one pass over the field's bytes (counted through a `ReadAt`), a read
//! behind or far ahead starts from a checkpoint; `max_alloc` refuses a
//! typed tensor at open as the whole-file path does.
#![cfg(all(
    feature = "onnx",
    feature = "cvm",
    feature = "safetensors",
    feature = "npz"
))]

use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, DType, Document, Format};

mod common;
use common::{Counting, by_slices, read_tensor};
use serde_json::Value;
use std::sync::atomic::Ordering::Relaxed;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/onnx_typed")
}

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "onnx"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    assert_eq!(out.len(), 7, "the models of testdata/onnx_typed");
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn fnv1a64(b: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h = (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[test]
fn the_whole_file_path_reads_what_onnx_reads() {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("expected.json")).unwrap())
            .unwrap();
    let mut tensors = 0;
    for (name, bytes) in fixtures() {
        let doc = Document::from_bytes(bytes, Some(Path::new(&name)), None).unwrap();
        let rows = expected[&name].as_array().unwrap();
        assert_eq!(doc.len(), rows.len(), "{name}");
        for r in rows {
            let key = r["name"].as_str().unwrap();
            let t = doc.tensor(key).unwrap();
            let shape: Vec<usize> = r["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            assert_eq!(t.dims(), shape, "{name} {key}");
            let b = t.bytes();
            if let Some(h) = r["le_hex"].as_str() {
                assert_eq!(hex(b), h, "{name} {key}");
            } else {
                assert_eq!(b.len() as u64, r["len"].as_u64().unwrap(), "{name} {key}");
                assert_eq!(
                    hex(&b[..64]),
                    r["head_hex"].as_str().unwrap(),
                    "{name} {key}"
                );
                assert_eq!(fnv1a64(b), r["fnv1a64"].as_str().unwrap(), "{name} {key}");
            }
            // onnxruntime ran an Identity of it where it has the type
            let ort = r["onnxruntime"].as_str().unwrap();
            assert!(
                ort == "same" || ort.starts_with("not run"),
                "{name} {key}: {ort}"
            );
            tensors += 1;
        }
    }
    assert!(tensors >= 38, "{tensors}");
}

/// `bytes` opened whole and by slices (one reader): each tensor read by
/// slices is the whole tensor's bytes (with `slices`, at odd offsets, front
/// to back, backwards, from a second opening), both errors when the whole-file path
/// refuses it, or the first read failing. Returns whether it was read.
fn same(name: &str, bytes: &[u8], slices: bool) -> bool {
    let path = Path::new(name);
    let whole = Document::from_bytes(bytes.to_vec(), Some(path), None);
    let index = by_slices(bytes, Some(path), &Default::default());
    let (doc, index) = match (whole, index) {
        (Ok(doc), Ok(Some(index))) => (doc, index),
        // `None` (proto2 groups) sends the caller to the whole-file path
        (Err(_), Err(_) | Ok(None)) => return false,
        // a big initializer's count (or a varint of it) is checked at its
        // first read: that read fails, with the whole path's message for
        // a count
        (Err(e), Ok(Some(index))) => {
            fails_at_first_read(name, &e, &index);
            return false;
        }
        (Ok(_), Ok(None)) if !slices => return false,
        (Ok(_), Ok(None)) => panic!("{name}: not read by slices"),
        (Ok(_), Err(e)) => panic!("{name}: only the index refuses it: {e}"),
    };
    assert_eq!(index.format(), Format::Onnx);
    assert_eq!(index.len(), doc.len(), "{name}");
    for (i, t) in index.entries().iter().enumerate() {
        let want = doc.tensor(t.name()).unwrap();
        let what = format!("{name} {}", t.name());
        let got = read_tensor(&index, i).unwrap();
        assert_eq!(got.bytes(), want.bytes(), "{what}");
        if !slices {
            continue;
        }
        let size = t.dtype().size();
        let n = t.numel();
        let mut buf = Vec::new();
        let mut part = |start: u64, count: u64| {
            let p = index.read_elements(i, start, count, &mut buf).unwrap();
            let from = (start.min(n) as usize) * size;
            let to = ((start + count).min(n) as usize) * size;
            assert_eq!(
                p.bytes(),
                &want.bytes()[from..to],
                "{what} [{start}; {count}]"
            );
        };
        // front to back in odd steps, then backwards, then jumps
        for step in [1u64, 7, 1000, 4099] {
            let mut at = 0;
            while at < n {
                part(at, step);
                at += step;
            }
        }
        let mut at = n;
        while at > 0 {
            let s = at.saturating_sub(13);
            part(s, at - s);
            at = s;
        }
        for (s, c) in [
            (n / 3, 5),
            (1, 3),
            (n / 2, n),
            (n, 4),
            (n + 9, 2),
            (0, 0),
            (n / 5, 1),
        ] {
            part(s, c);
        }
        // a second opening, read there first, reads the same
        let again = by_slices(bytes, Some(path), &Default::default());
        let again = again.unwrap().unwrap();
        let p = again.read_elements(i, n / 4, 3, &mut buf).unwrap();
        let from = (n / 4) as usize * size;
        let to = ((n / 4 + 3).min(n)) as usize * size;
        assert_eq!(p.bytes(), &want.bytes()[from..to], "{what} (again)");
    }
    true
}

/// The whole path refuses `bytes` (`whole`), the index opened it: the
/// first read (of one value) of some tensor fails; of the first such
/// tensor, with the whole path's message when that is a count; every later
/// read of it fails the same way.
fn fails_at_first_read(name: &str, whole: &mlformats::Error, index: &Document) {
    let whole = mlformats::chain_message(whole);
    let mut buf = Vec::new();
    for (i, t) in index.entries().iter().enumerate() {
        let n = t.numel();
        let Err(e) = index.read_elements(i, n / 2, 1, &mut buf) else {
            continue;
        };
        let first = mlformats::chain_message(&e);
        if whole.contains(" values but shape ") {
            assert_eq!(first, whole, "{name}: the first read of {}", t.name());
        }
        for (start, count) in [(0, 1), (n.saturating_sub(1), 1), (0, n)] {
            let again = index.read_elements(i, start, count, &mut buf);
            assert_eq!(
                again.err().map(|e| mlformats::chain_message(&e)),
                Some(first.clone()),
                "{name}: a later read of {} [{start}; {count}]",
                t.name()
            );
        }
        return;
    }
    panic!("{name}: the whole-file path says {whole}, the index reads every tensor");
}

#[test]
fn typed_fields_open_by_slices_like_the_whole_file() {
    for (name, bytes) in fixtures() {
        assert!(same(&name, &bytes, true), "{name}");
    }
}

#[test]
fn converting_by_slices_gives_the_whole_files_bytes() {
    let sets = [
        ConvertOptions::new(),
        ConvertOptions::new().dtype(DType::F16),
        ConvertOptions::new().dtype(DType::F32).exclude("*big*"),
    ];
    let mut compared = 0;
    for (name, bytes) in fixtures() {
        let path = Path::new(&name);
        let index = by_slices(&bytes[..], Some(path), &Default::default())
            .unwrap()
            .unwrap();
        let doc = Document::from_bytes(bytes.clone(), Some(path), None).unwrap();
        for target in [Format::Safetensors, Format::Npz, Format::CvmParams] {
            for (k, opts) in sets.iter().enumerate() {
                let mut out = std::io::Cursor::new(Vec::new());
                let s = mlformats::convert_sliced(&index, target, opts, &mut out);
                let w = mlformats::convert_document_to_bytes(&doc, target, opts);
                match (s, w) {
                    (Ok(_), Ok((w, _))) => {
                        assert!(out.into_inner() == w, "{name} -> {target} ({k})");
                        compared += 1;
                    }
                    (Err(s), Err(w)) => assert_eq!(
                        mlformats::chain_message(&s),
                        mlformats::chain_message(&w),
                        "{name} -> {target} ({k})"
                    ),
                    (s, w) => panic!(
                        "{name} -> {target} ({k}): by slices {:?}, whole {:?}",
                        s.err(),
                        w.err()
                    ),
                }
            }
        }
    }
    assert!(compared >= 30, "{compared}");
}

#[test]
fn broken_copies_fail_where_the_whole_file_fails() {
    let mut cases = 0;
    let mut read = 0;
    for (name, bytes) in fixtures() {
        let len = bytes.len();
        // small models: every 3rd byte; big ones: every 3rd of the first
        // 300 and every 499th
        let every: Box<dyn Iterator<Item = usize>> = if len < 4096 {
            Box::new((0..len).step_by(3))
        } else {
            Box::new((0..300).step_by(3).chain((300..len).step_by(499)))
        };
        for at in every {
            for x in [0x01u8, 0x80, 0xff, 0x7f] {
                let mut b = bytes.clone();
                b[at] ^= x;
                read += same(&name, &b, false) as usize;
                cases += 1;
            }
            same(&name, &bytes[..at], false);
            cases += 1;
        }
    }
    assert!(cases > 2000, "{cases}");
    assert!(read > 30, "{read}");
}

/// Protobuf encoding for the hand-made models below.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn ld(out: &mut Vec<u8>, num: u64, payload: &[u8]) {
    varint(out, num << 3 | 2);
    varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// A model whose graph has one initializer `w` of `dims` and ONNX type
/// `data_type`, its data fields `data`.
fn model(data_type: u64, dims: &[u64], data: &[u8]) -> Vec<u8> {
    let mut t = Vec::new();
    for &d in dims {
        varint(&mut t, 1 << 3);
        varint(&mut t, d);
    }
    varint(&mut t, 2 << 3);
    varint(&mut t, data_type);
    ld(&mut t, 8, b"w");
    t.extend_from_slice(data);
    let mut g = Vec::new();
    ld(&mut g, 2, b"g");
    ld(&mut g, 5, &t);
    let mut m = Vec::new();
    varint(&mut m, 1 << 3);
    varint(&mut m, 8);
    ld(&mut m, 7, &g);
    m
}

fn whole_error(bytes: &[u8]) -> String {
    let e = Document::from_bytes(bytes.to_vec(), Some(Path::new("m.onnx")), None).unwrap_err();
    mlformats::chain_message(&e)
}

fn index_error(bytes: &[u8]) -> String {
    let e = by_slices(bytes, Some(Path::new("m.onnx")), &Default::default()).unwrap_err();
    mlformats::chain_message(&e)
}

const FLOAT: u64 = 1;
const UINT8: u64 = 2;
const BOOL: u64 = 9;
const INT32: u64 = 6;
const INT64: u64 = 7;
const STRING: u64 = 8;

#[test]
fn hand_made_typed_fields() {
    let f32s = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    // raw_data wins over a typed field, which is still decoded (checked)
    let mut d = Vec::new();
    ld(&mut d, 9, &[3, 0, 0, 0, 4, 0, 0, 0]);
    ld(&mut d, 4, &f32s(&[9.0]));
    assert!(same("m.onnx", &model(INT32, &[2], &d), true));
    let mut bad = d.clone();
    ld(&mut bad, 5, &[0x80]); // a varint cut by its run's end
    assert!(!same("m.onnx", &model(INT32, &[2], &bad), true));
    // the count differs: the whole path's message
    let mut d = Vec::new();
    ld(&mut d, 4, &f32s(&[1.0, 2.0, 3.0]));
    let m = model(FLOAT, &[2], &d);
    assert!(!same("m.onnx", &m, true));
    assert_eq!(index_error(&m), whole_error(&m));
    assert!(
        index_error(&m).contains("float_data holds 3 values"),
        "{}",
        index_error(&m)
    );
    // values in another typed field than the dtype's: the same message
    let mut d = Vec::new();
    ld(&mut d, 7, &[1, 2]);
    let m = model(FLOAT, &[2], &d);
    assert_eq!(index_error(&m), whole_error(&m));
    // ... and beside the dtype's field: ignored
    ld(&mut d, 4, &f32s(&[1.0, 2.0]));
    assert!(same("m.onnx", &model(FLOAT, &[2], &d), true));
    // a packed float run of 5 bytes, a float written as a varint
    let mut d = Vec::new();
    ld(&mut d, 4, &[0, 0, 128, 63, 0]);
    assert!(!same("m.onnx", &model(FLOAT, &[1], &d), true));
    let d = [4 << 3, 1];
    assert!(!same("m.onnx", &model(FLOAT, &[1], &d), true));
    // an 11-byte varint, a 10-byte one whose last byte is 2
    let mut d = Vec::new();
    ld(&mut d, 7, &[0xff; 11]);
    assert!(!same("m.onnx", &model(INT64, &[1], &d), true));
    let mut long = vec![0xffu8; 9];
    long.push(2);
    let mut d = Vec::new();
    ld(&mut d, 7, &long);
    assert!(!same("m.onnx", &model(INT64, &[1], &d), true));
    long[9] = 1;
    let mut d = Vec::new();
    ld(&mut d, 7, &long);
    assert!(same("m.onnx", &model(INT64, &[1], &d), true));
    // uint8 from int32_data values past 255: the low byte, as the whole path
    let mut d = Vec::new();
    let mut run = Vec::new();
    for v in [300u64, u64::MAX, 7] {
        varint(&mut run, v);
    }
    ld(&mut d, 5, &run);
    let m = model(UINT8, &[3], &d);
    assert!(same("m.onnx", &m, true));
    let doc = Document::from_bytes(m, Some(Path::new("m.onnx")), None).unwrap();
    assert_eq!(doc.tensor("w").unwrap().bytes(), [44, 255, 7]);
    // bool from int32_data values 2 and 256: the low byte, as the whole path
    let mut d = Vec::new();
    ld(&mut d, 5, &[2, 0x80, 0x02, 1]);
    let m = model(BOOL, &[3], &d);
    let read = same("m.onnx", &m, true);
    assert_eq!(read, Document::from_bytes(m, None, None).is_ok());
    // an empty tensor with no data field; a string tensor (refused by both)
    assert!(same("m.onnx", &model(INT64, &[0, 3], &[]), true));
    let mut d = Vec::new();
    ld(&mut d, 6, b"hello");
    assert!(!same("m.onnx", &model(STRING, &[1], &d), true));
    // two initializers named `w` (one typed, one raw): the second is
    // `w#2`, its stored name `w`
    let mut d = Vec::new();
    ld(&mut d, 4, &f32s(&[1.0]));
    let m = model(FLOAT, &[1], &d);
    let mut t = Vec::new();
    ld(&mut t, 8, b"w");
    t.extend_from_slice(&[2 << 3, FLOAT as u8]);
    ld(&mut t, 9, &f32s(&[2.0, 3.0]));
    t.extend_from_slice(&[1 << 3, 2]);
    let mut g = Vec::new();
    ld(&mut g, 5, &t);
    let mut m2 = Vec::new();
    ld(&mut m2, 7, &g); // merged into the first graph, as protobuf merges
    let m: Vec<u8> = m.into_iter().chain(m2).collect();
    assert!(same("m.onnx", &m, true));
    let index = by_slices(&m[..], None, &Default::default())
        .unwrap()
        .unwrap();
    assert_eq!(index.entries()[1].name(), "w#2");
    assert_eq!(index.entries()[1].stored().stored_name, "w");
    // external data: refused by both, with the same message
    let mut d = Vec::new();
    ld(&mut d, 4, &f32s(&[1.0]));
    d.extend_from_slice(&[14 << 3, 1]);
    let m = model(FLOAT, &[1], &d);
    assert_eq!(index_error(&m), whole_error(&m));
}

#[test]
fn reading_front_to_back_is_one_pass() {
    // 300,000 int64 in one packed run (1.5 MB of varints), read 1000 at a
    // time: each slice goes on from where the last one stopped
    let n = 300_000u64;
    let mut run = Vec::new();
    for i in 0..n {
        varint(&mut run, (i * 7919) ^ (i << 20));
    }
    let mut d = Vec::new();
    ld(&mut d, 7, &run);
    let m = model(INT64, &[n], &d);
    let file = Counting::new(m.clone());
    let counted = file.read();
    let index = Document::open_at(file, Some(Path::new("m.onnx")), None, &Default::default());
    let index = index.unwrap();
    let doc = Document::from_bytes(m.clone(), Some(Path::new("m.onnx")), None).unwrap();
    let want = doc.tensor("w").unwrap().bytes().to_vec();
    counted.store(0, Relaxed);
    let mut buf = Vec::new();
    let mut calls = 0u64;
    for at in (0..n).step_by(1000) {
        let p = index.read_elements(0, at, 1000, &mut buf).unwrap();
        let from = at as usize * 8;
        assert_eq!(p.bytes(), &want[from..(from + 8000).min(want.len())]);
        calls += 1;
    }
    let read = counted.load(Relaxed);
    let bound = run.len() as u64 + calls * 16_000;
    assert!(
        read <= bound,
        "{read} bytes read for {} (bound {bound})",
        run.len()
    );
    // backwards and far ahead: each slice from the last checkpoint (one
    // every 65,536 values) before it, not from the field's start
    for at in [n - 1000, n / 2, 0, n - 5, 70_000] {
        counted.store(0, Relaxed);
        let p = index.read_elements(0, at, 1000, &mut buf).unwrap();
        let from = at as usize * 8;
        assert_eq!(p.bytes(), &want[from..(from + 8000).min(want.len())]);
        let read = counted.load(Relaxed);
        assert!(read < run.len() as u64 / 2, "{read} bytes read from {at}");
    }
    // and again from where the last read stood
    let p = index.read_elements(0, 70_500, 10, &mut buf).unwrap();
    assert_eq!(p.bytes(), &want[70_500 * 8..70_510 * 8]);
}

#[test]
fn checkpoints_in_unpacked_values_and_several_runs() {
    // int64: 70,000 unpacked, a packed run of 70,000, 70,000 unpacked;
    // float: a run, unpacked, a run (70,000 each), a doc_string between
    let k = 70_000i64;
    let mut d = Vec::new();
    for i in 0..k {
        varint(&mut d, 7 << 3);
        varint(&mut d, (-i * 3) as u64);
    }
    let mut run = Vec::new();
    for i in k..2 * k {
        varint(&mut run, (i * 1_000_003) as u64);
    }
    ld(&mut d, 7, &run);
    for i in 2 * k..3 * k {
        varint(&mut d, 7 << 3);
        varint(&mut d, i as u64);
    }
    let m64 = model(INT64, &[3 * k as u64], &d);
    let f = |i: i64| (i as f32) * 0.5 - 7.0;
    let mut d = Vec::new();
    let run: Vec<u8> = (0..k).flat_map(|i| f(i).to_le_bytes()).collect();
    ld(&mut d, 4, &run);
    ld(&mut d, 12, b"between");
    for i in k..2 * k {
        varint(&mut d, 4 << 3 | 5);
        d.extend_from_slice(&f(i).to_le_bytes());
    }
    let run: Vec<u8> = (2 * k..3 * k).flat_map(|i| f(i).to_le_bytes()).collect();
    ld(&mut d, 4, &run);
    let m32 = model(FLOAT, &[3 * k as u64], &d);
    for m in [m64, m32] {
        let index = by_slices(&m[..], None, &Default::default())
            .unwrap()
            .unwrap();
        let doc = Document::from_bytes(m.clone(), None, None).unwrap();
        let want = doc.tensor("w").unwrap();
        let size = want.dtype().size();
        let want = want.bytes();
        assert_eq!(read_tensor(&index, 0).unwrap().bytes(), want);
        let n = 3 * k as u64;
        let mut buf = Vec::new();
        for (at, count) in [
            (n - 3, 10),
            (0, 5),
            (65_535, 3),
            (65_536, 1),
            (139_999, 2),
            (131_071, 70_000),
            (70_000, 1),
            (n / 2, 999),
            (196_607, 2),
            (69_999, 2),
            (1, 0),
            (n - 1, 1),
        ] {
            let p = index.read_elements(0, at, count, &mut buf).unwrap();
            let from = at as usize * size;
            let to = ((at + count).min(n)) as usize * size;
            assert_eq!(p.bytes(), &want[from..to], "[{at}; {count}]");
        }
    }
}

#[test]
fn limits_and_threads() {
    // a typed tensor past `max_alloc` is refused by both paths at open
    let mut run = Vec::new();
    for v in [1u64, 2, 3, 4] {
        varint(&mut run, v);
    }
    let mut d = Vec::new();
    ld(&mut d, 7, &run);
    let m = model(INT64, &[4], &d);
    let mut limits = tensor_core::Limits::default();
    limits.max_alloc = 16;
    let opts = mlformats::ReadOptions::default().with_limits(limits);
    let map = tensor_core::MappedFile::from_vec(m.clone());
    assert!(Document::from_map(map, None, Some(Format::Onnx), &opts).is_err());
    let at = |opts| Document::open_at(m.clone(), None, Some(Format::Onnx), opts);
    assert!(at(&opts).is_err());
    limits.max_alloc = 32;
    let opts = mlformats::ReadOptions::default().with_limits(limits);
    let map = tensor_core::MappedFile::from_vec(m.clone());
    assert!(Document::from_map(map, None, Some(Format::Onnx), &opts).is_ok());
    assert!(at(&opts).is_ok());
    // a document read by slices (its decoding cursor included) stays Send,
    // Sync, Debug
    fn shareable<T: Send + Sync + std::fmt::Debug>() {}
    shareable::<Document>();
}

/// A packed run of `n` int64 varints of 1 to 10 bytes (past the 4 MiB
/// counted at open for `n` of 800,000), and the values.
fn big_run(n: u64) -> (Vec<u8>, Vec<i64>) {
    let mut run = Vec::new();
    let mut values = Vec::new();
    for i in 0..n {
        let v = match i % 5 {
            0 => -((i * 31) as i64),
            1 => (i % 100) as i64,
            2 => (i * 2_654_435_761 % (1 << 40)) as i64,
            3 => i as i64,
            _ => (i << 30) as i64,
        };
        varint(&mut run, v as u64);
        values.push(v);
    }
    (run, values)
}

fn le(values: &[i64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn a_big_fields_count_is_checked_at_its_first_read() {
    let n = 800_000u64;
    let (run, values) = big_run(n);
    assert!(
        run.len() > 4 << 20,
        "{} bytes: past the open budget",
        run.len()
    );
    let mut d = Vec::new();
    ld(&mut d, 7, &run);
    // right: read like the whole file (a first read deep in it, then all)
    let m = model(INT64, &[n], &d);
    let index = by_slices(&m[..], None, &Default::default())
        .unwrap()
        .unwrap();
    let mut buf = Vec::new();
    let p = index.read_elements(0, n - 7, 3, &mut buf).unwrap();
    assert_eq!(p.bytes(), le(&values[(n - 7) as usize..(n - 4) as usize]));
    assert_eq!(read_tensor(&index, 0).unwrap().bytes(), le(&values));
    // too many values (dims n - 1), too few (dims n + 1, and a second
    // tensor after it), both within what the run's bytes could hold: the
    // index opens (the table shows), the first read of any slice fails
    // with the whole path's message, as does every later read, the
    // statistics' pass and a conversion
    for dims in [n - 1, n + 1] {
        let mut m = model(INT64, &[dims], &d);
        if dims > n {
            let mut t = Vec::new();
            ld(&mut t, 8, b"after");
            t.extend_from_slice(&[2 << 3, INT64 as u8]);
            ld(&mut t, 9, &[0; 8]);
            let mut g = Vec::new();
            ld(&mut g, 5, &t);
            ld(&mut m, 7, &g);
        }
        let whole = whole_error(&m);
        assert!(
            whole.contains(&format!("int64_data holds {n} values but shape [{dims}]")),
            "{whole}"
        );
        let index = by_slices(&m[..], Some(Path::new("m.onnx")), &Default::default())
            .unwrap()
            .unwrap();
        assert_eq!(index.entries()[0].numel(), dims);
        for (start, count) in [(0, 1), (dims - 1, 1), (dims / 2, 1000), (0, dims)] {
            let e = index.read_elements(0, start, count, &mut buf).unwrap_err();
            assert_eq!(mlformats::chain_message(&e), whole, "[{start}; {count}]");
        }
        // a fresh index: its first read is deep in the tensor
        let index = by_slices(&m[..], None, &Default::default())
            .unwrap()
            .unwrap();
        let e = index.read_elements(0, dims / 3, 5, &mut buf).unwrap_err();
        assert_eq!(mlformats::chain_message(&e), whole);
        // ... and through a conversion
        let index = by_slices(&m[..], None, &Default::default())
            .unwrap()
            .unwrap();
        let mut out = std::io::Cursor::new(Vec::new());
        let e = mlformats::convert_sliced(
            &index,
            Format::Safetensors,
            &ConvertOptions::new(),
            &mut out,
        )
        .unwrap_err();
        assert_eq!(mlformats::chain_message(&e), whole);
        assert!(!same("m.onnx", &m, false));
    }
    // a count the run's bytes cannot hold (more values than bytes, fewer
    // than a tenth): counted at open, the whole path's message there
    for dims in [run.len() as u64 + 1, run.len() as u64 / 10 - 1] {
        let m = model(INT64, &[dims], &d);
        assert_eq!(index_error(&m), whole_error(&m));
    }
    // a broken varint deep in the run (11 bytes): the first read fails,
    // and every later one
    let mut bad = run.clone();
    let at = bad.len() * 3 / 4;
    let at = at + bad[at..].iter().position(|&b| b < 0x80).unwrap() + 1;
    bad.splice(at..at, [0xff; 10]);
    let mut d = Vec::new();
    ld(&mut d, 7, &bad);
    let m = model(INT64, &[n + 1], &d);
    assert!(Document::from_bytes(m.clone(), None, None).is_err());
    let index = by_slices(&m[..], None, &Default::default())
        .unwrap()
        .unwrap();
    let e = index.read_elements(0, 0, 1, &mut buf).unwrap_err();
    assert!(
        mlformats::chain_message(&e).contains("invalid varint"),
        "{e}"
    );
    assert!(!same("m.onnx", &m, false));
}

#[test]
fn random_slices_deep_in_a_big_field_start_from_checkpoints() {
    let n = 800_000u64;
    let (run, values) = big_run(n);
    let mut d = Vec::new();
    ld(&mut d, 7, &run);
    let m = model(INT64, &[n], &d);
    let file = Counting::new(m.clone());
    let counted = file.read();
    let index = Document::open_at(file, None, None, &Default::default()).unwrap();
    // open reads the structure only, not the run
    assert!(
        counted.load(Relaxed) < 200_000,
        "{} bytes read at open",
        counted.load(Relaxed)
    );
    // front to back in slices: one pass, plus the first read's count
    counted.store(0, Relaxed);
    let mut buf = Vec::new();
    let mut calls = 0;
    for at in (0..n).step_by(30_000) {
        let p = index.read_elements(0, at, 30_000, &mut buf).unwrap();
        let to = (at + 30_000).min(n) as usize;
        assert_eq!(p.bytes(), le(&values[at as usize..to]));
        calls += 1;
    }
    let read = counted.load(Relaxed);
    let bound = 2 * run.len() as u64 + calls * 300_000;
    assert!(read <= bound, "{read} bytes read (bound {bound})");
    // random slices deep in it: each from the checkpoint before it (one
    // every 65,536 values: at most 655,360 bytes of varints before it)
    let mut x = 12_345u64;
    for _ in 0..40 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let at = (x >> 33) % n;
        let count = 1 + (x >> 20) % 500;
        counted.store(0, Relaxed);
        let p = index.read_elements(0, at, count, &mut buf).unwrap();
        let to = (at + count).min(n) as usize;
        assert_eq!(p.bytes(), le(&values[at as usize..to]), "[{at}; {count}]");
        let read = counted.load(Relaxed);
        assert!(
            read <= 655_360 + 2 * (256 << 10),
            "{read} bytes read for [{at}; {count}]"
        );
    }
    // a fresh index whose first read is deep: correct, and it records
    // the checkpoints of the whole field (its count)
    let file = Counting::new(m.clone());
    let counted = file.read();
    let index = Document::open_at(file, None, None, &Default::default()).unwrap();
    let p = index.read_elements(0, n - 10, 10, &mut buf).unwrap();
    assert_eq!(p.bytes(), le(&values[(n - 10) as usize..]));
    counted.store(0, Relaxed);
    let p = index.read_elements(0, n / 2, 10, &mut buf).unwrap();
    assert_eq!(
        p.bytes(),
        le(&values[(n / 2) as usize..(n / 2 + 10) as usize])
    );
    assert!(counted.load(Relaxed) <= 655_360 + 2 * (256 << 10));
}

#[test]
fn broken_copies_of_a_big_field_never_panic() {
    // truncated and mutated copies of a model past the open budget: they
    // fail where the whole path fails (at open, or at the first read of
    // the tensor), never panic
    let n = 800_000u64;
    let (run, _) = big_run(n);
    let mut d = Vec::new();
    ld(&mut d, 7, &run);
    let m = model(INT64, &[n], &d);
    let len = m.len();
    let mut x = 99u64;
    let mut opened_broken = 0;
    for k in 0..24 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        // the first 40 bytes (headers), then anywhere
        let at = if k < 8 {
            k * 5
        } else {
            ((x >> 33) % len as u64) as usize
        };
        let mut b = m.clone();
        b[at] ^= [0x80u8, 0x01, 0xff, 0x7f][k % 4];
        let whole = Document::from_bytes(b.clone(), None, None).is_ok();
        let index = by_slices(&b[..], None, &Default::default());
        if !whole && matches!(index, Ok(Some(_))) {
            opened_broken += 1;
        }
        same("m.onnx", &b, false);
        same("m.onnx", &m[..at], false);
    }
    assert!(opened_broken > 4, "{opened_broken}");
}
