//! The writer: every storable dtype, both bool encodings, layout details
//! checked against the format notes, refusals before any byte is written,
//! streaming (payloads passed through, not assembled), atomic `save`.

use std::io::Write;

use cvm_params::{BoolEncoding, DlType, Error, Params, ParamsWriter, WriteOptions, save, write};
use tensor_core::{DType, MemoryOrder, Tensor};

/// Every dtype a `.params` file can hold, with its (code, bits).
const STORABLE: [(DType, u8, u8); 21] = [
    (DType::Bool, 6, 8),
    (DType::I8, 0, 8),
    (DType::I16, 0, 16),
    (DType::I32, 0, 32),
    (DType::I64, 0, 64),
    (DType::U8, 1, 8),
    (DType::U16, 1, 16),
    (DType::U32, 1, 32),
    (DType::U64, 1, 64),
    (DType::F16, 2, 16),
    (DType::F32, 2, 32),
    (DType::F64, 2, 64),
    (DType::BF16, 4, 16),
    (DType::F8E3M4, 7, 8),
    (DType::F8E4M3, 8, 8),
    (DType::F8E4M3B11Fnuz, 9, 8),
    (DType::F8E4M3Fn, 10, 8),
    (DType::F8E4M3Fnuz, 11, 8),
    (DType::F8E5M2, 12, 8),
    (DType::F8E5M2Fnuz, 13, 8),
    (DType::F8E8M0Fnu, 14, 8),
];

fn tensor(dtype: DType, dims: &[usize]) -> Tensor<'static> {
    let n = dims.iter().product::<usize>() * dtype.size();
    let bytes: Vec<u8> = (0..n)
        .map(|i| {
            if dtype == DType::Bool {
                (i % 2) as u8
            } else {
                (i * 7 + 3) as u8
            }
        })
        .collect();
    Tensor::new(dtype, dims.to_vec(), bytes).unwrap()
}

#[test]
fn every_storable_dtype_has_its_code_and_reads_back() {
    let items: Vec<(String, Tensor)> = STORABLE
        .iter()
        .map(|&(d, _, _)| (d.name().to_string(), tensor(d, &[2, 3])))
        .collect();
    let mut out = Vec::new();
    write(
        &mut out,
        items.iter().map(|(n, t)| (n, t)),
        &WriteOptions::default(),
    )
    .unwrap();
    let p = Params::parse(&out).unwrap();
    assert_eq!(p.len(), STORABLE.len());
    for (e, &(d, code, bits)) in p.entries().iter().zip(&STORABLE) {
        assert_eq!(e.info().dl_type, DlType::new(code, bits), "{d}");
        assert_eq!(e.tensor().dtype(), d);
        assert_eq!(e.tensor().bytes(), items[e.info().index].1.bytes());
        // the record's dtype bytes are where the format notes say
        let rec = e.info().record_offset as usize;
        assert_eq!(&out[rec + 28..rec + 32], &[code, bits, 1, 0], "{d}");
    }
}

#[test]
fn bool_encodings() {
    let mask = Tensor::new(DType::Bool, [4], vec![1u8, 0, 0, 1]).unwrap();
    for (enc, dl) in [
        (BoolEncoding::Dlpack, DlType::new(6, 8)),
        (BoolEncoding::Legacy, DlType::new(1, 1)),
    ] {
        let mut out = Vec::new();
        let opts = WriteOptions::default().with_bools(enc);
        write(&mut out, [("m", &mask)], &opts).unwrap();
        let p = Params::parse(&out).unwrap();
        let e = &p.entries()[0];
        assert_eq!(e.info().dl_type, dl);
        assert_eq!(e.info().nbytes, 4, "one byte per element in both encodings");
        assert_eq!(e.tensor().dtype(), DType::Bool);
        assert_eq!(e.tensor().bytes(), &[1, 0, 0, 1]);
    }
}

#[test]
fn layout_of_the_walk_through_file() {
    let w = Tensor::from_values([2], &[1i8, -1]).unwrap();
    let b = Tensor::from_values([], &[258i32]).unwrap();
    let mut out = Vec::new();
    write(&mut out, [("w", &w), ("b", &b)], &WriteOptions::default()).unwrap();
    let expected = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/cvm/two_entry.params"),
    )
    .unwrap();
    assert_eq!(out, expected);
    // an empty dictionary is 32 bytes
    let mut empty = Vec::new();
    write(
        &mut empty,
        std::iter::empty::<(&str, &Tensor)>(),
        &WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(empty.len(), 32);
    assert_eq!(&empty[16..], &[0u8; 16]);
    assert!(Params::parse(&empty).unwrap().is_empty());
}

#[test]
fn column_major_tensors_are_written_row_major() {
    // [[1,2,3],[4,5,6]] stored column-major
    let col: Vec<u8> = [1i32, 4, 2, 5, 3, 6]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let t = Tensor::with_order(DType::I32, [2, 3], MemoryOrder::ColumnMajor, col).unwrap();
    let mut out = Vec::new();
    write(&mut out, [("m", &t)], &WriteOptions::default()).unwrap();
    let p = Params::parse(&out).unwrap();
    assert_eq!(
        &*p.get("m").unwrap().view::<i32>().unwrap(),
        &[1, 2, 3, 4, 5, 6]
    );
}

#[test]
fn unstorable_dtypes_are_refused_before_writing_anything() {
    for d in [
        DType::C64,
        DType::C128,
        DType::Char8,
        DType::Q8(3),
        DType::Opaque16,
        DType::C32,
    ] {
        let ok = tensor(DType::F32, &[1]);
        let bad = tensor(d, &[2]);
        let mut out = Vec::new();
        let err = write(
            &mut out,
            [("fine", &ok), ("bad/name", &bad)],
            &WriteOptions::default(),
        )
        .unwrap_err();
        assert!(
            matches!(&err, Error::UnsupportedDType { index: 1, name, dtype } if name == "bad/name" && *dtype == d),
            "{err}"
        );
        assert!(err.to_string().contains("bad/name"), "{err}");
        assert!(out.is_empty(), "{d}: bytes written before the refusal");
    }
}

#[test]
fn streaming_writer_counts_its_tensors() {
    let t = tensor(DType::U8, &[3]);
    let mut out = Vec::new();
    let mut w = ParamsWriter::new(&mut out, ["a", "b"], &WriteOptions::default()).unwrap();
    w.write_tensor(&t).unwrap();
    let err = w.finish().unwrap_err();
    assert!(
        matches!(
            err,
            Error::WriterCount {
                names: 2,
                tensors: 1
            }
        ),
        "{err}"
    );
    let mut out = Vec::new();
    let mut w = ParamsWriter::new(&mut out, ["a"], &WriteOptions::default()).unwrap();
    w.write_tensor(&t).unwrap();
    let err = w.write_tensor(&t).unwrap_err();
    assert!(
        matches!(
            err,
            Error::WriterCount {
                names: 1,
                tensors: 2
            }
        ),
        "{err}"
    );
}

/// A sink that remembers the size of every write call.
struct Recorder(Vec<usize>);
impl Write for Recorder {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.push(b.len());
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn payloads_are_passed_through_not_assembled() {
    let big = tensor(DType::F32, &[1000, 256]); // 1,024,000 bytes
    let small = tensor(DType::I8, &[5]);
    let mut rec = Recorder(Vec::new());
    write(
        &mut rec,
        [("big", &big), ("small", &small)],
        &WriteOptions::default(),
    )
    .unwrap();
    // header, name table, count, then per tensor: record header, payload
    let header = 40 + 8 * 2;
    assert_eq!(rec.0, [24, 8 + 3 + 8 + 5, 8, header, 1_024_000, 40 + 8, 5]);
}

#[test]
fn save_is_atomic_and_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.params");
    std::fs::write(&path, b"old").unwrap();
    let bad = tensor(DType::C64, &[1]);
    assert!(save(&path, [("x", &bad)], &WriteOptions::default()).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let good = tensor(DType::F64, &[2, 2]);
    save(&path, [("x", &good)], &WriteOptions::default()).unwrap();
    let p = Params::open(&path).unwrap();
    assert_eq!(p.get("x").unwrap().bytes(), good.bytes());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// The content of `testdata/cvm/written_all_dtypes.params`: every storable
/// dtype, shape (2, 3). That file was written by this writer and loaded by
/// TVM 0.27 (its `.expected.json` is TVM's view of it).
fn all_dtypes_fixture() -> Vec<(String, Tensor<'static>)> {
    STORABLE
        .iter()
        .map(|&(d, _, _)| {
            let b: Vec<u8> = (0..6 * d.size())
                .map(|i| {
                    if d == DType::Bool {
                        (i % 2) as u8
                    } else {
                        (i * 37 + 200) as u8
                    }
                })
                .collect();
            let vals = [1.5f64, -2.25, 3.0e-3, 1024.0, -0.0, 7.75];
            use tensor_core::half::{bf16, f16};
            let t = match d {
                DType::F16 => Tensor::from_values([2, 3], &vals.map(f16::from_f64)),
                DType::BF16 => Tensor::from_values([2, 3], &vals.map(bf16::from_f64)),
                DType::F32 => Tensor::from_values([2, 3], &vals.map(|v| v as f32)),
                DType::F64 => Tensor::from_values([2, 3], &vals),
                _ => Tensor::new(d, [2, 3], b),
            };
            (d.name().to_string(), t.unwrap())
        })
        .collect()
}

#[test]
fn reproduces_the_tvm_checked_all_dtypes_file() {
    let items = all_dtypes_fixture();
    let mut out = Vec::new();
    write(
        &mut out,
        items.iter().map(|(n, t)| (n, t)),
        &WriteOptions::default(),
    )
    .unwrap();
    let fixture = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/cvm/written_all_dtypes.params"),
    )
    .unwrap();
    assert!(
        out == fixture,
        "writer output changed from the TVM-checked file"
    );
}
