//! Validation per docs/formats/cvm.md §5: every rejection, truncation at
//! every offset of two goldens, and the edge cases that must be accepted.

use std::io::{Cursor, Read, Seek, SeekFrom, Write};
use std::path::Path;

use cvm_params::{Error, LazyParams, Params, ReadOptions};
use tensor_core::{DType, Limits};

fn golden(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/cvm")
            .join(name),
    )
    .unwrap()
}

/// One tensor record, every field settable.
#[derive(Clone)]
struct Rec {
    magic: u64,
    device_type: i32,
    device_id: i32,
    ndim: Option<i32>,
    code: u8,
    bits: u8,
    lanes: u16,
    dims: Vec<i64>,
    nbytes: Option<i64>,
    payload: Vec<u8>,
}

impl Rec {
    /// int32 of the given dims, payload 0, 1, 2, ...
    fn i32(dims: &[i64]) -> Rec {
        let n: i64 = dims.iter().product();
        Rec {
            magic: 0xDD5E_40F0_96B4_A13F,
            device_type: 1,
            device_id: 0,
            ndim: None,
            code: 0,
            bits: 32,
            lanes: 1,
            dims: dims.to_vec(),
            nbytes: None,
            payload: (0..n.max(0) as i32).flat_map(|v| v.to_le_bytes()).collect(),
        }
    }
}

/// A file of `names` and `recs`, with an optional tensor count override.
fn file(names: &[&[u8]], recs: &[Rec], count: Option<u64>) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&0xF7E5_8D4F_0504_9CB7u64.to_le_bytes());
    f.extend_from_slice(&0u64.to_le_bytes());
    f.extend_from_slice(&(names.len() as u64).to_le_bytes());
    for n in names {
        f.extend_from_slice(&(n.len() as u64).to_le_bytes());
        f.extend_from_slice(n);
    }
    f.extend_from_slice(&count.unwrap_or(recs.len() as u64).to_le_bytes());
    for r in recs {
        f.extend_from_slice(&r.magic.to_le_bytes());
        f.extend_from_slice(&0u64.to_le_bytes());
        f.extend_from_slice(&r.device_type.to_le_bytes());
        f.extend_from_slice(&r.device_id.to_le_bytes());
        f.extend_from_slice(&r.ndim.unwrap_or(r.dims.len() as i32).to_le_bytes());
        f.push(r.code);
        f.push(r.bits);
        f.extend_from_slice(&r.lanes.to_le_bytes());
        for d in &r.dims {
            f.extend_from_slice(&d.to_le_bytes());
        }
        f.extend_from_slice(&r.nbytes.unwrap_or(r.payload.len() as i64).to_le_bytes());
        f.extend_from_slice(&r.payload);
    }
    f
}

fn one(r: Rec) -> Vec<u8> {
    file(&[b"t"], &[r], None)
}

/// Parses with both readers; they must agree on failing. Returns the slice error.
fn reject(bytes: &[u8]) -> Error {
    reject_with(bytes, &ReadOptions::default())
}

fn reject_with(bytes: &[u8], opts: &ReadOptions) -> Error {
    let e = match Params::parse_with(bytes, opts) {
        Ok(p) => panic!("accepted: {} entries", p.len()),
        Err(e) => e,
    };
    let lazy = LazyParams::from_reader(Cursor::new(bytes), opts);
    assert!(
        lazy.is_err(),
        "lazy reader accepted what the slice reader rejects ({e})"
    );
    let lazy = lazy.unwrap_err();
    assert_eq!(lazy.to_string(), e.to_string(), "readers disagree");
    // a stream that returns at most 3 bytes per read
    let trickle = LazyParams::from_reader(Trickle(Cursor::new(bytes)), opts);
    assert_eq!(trickle.unwrap_err().to_string(), e.to_string());
    // Params::open (headers read from the file, payloads mapped)
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(bytes).unwrap();
    let opened = Params::open_with(f.path(), opts);
    assert_eq!(opened.unwrap_err().to_string(), e.to_string());
    e
}

/// A reader that returns at most 3 bytes per `read` call.
#[derive(Debug)]
struct Trickle<R>(R);
impl<R: Read> Read for Trickle<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(3);
        self.0.read(&mut buf[..n])
    }
}
impl<R: Seek> Seek for Trickle<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.0.seek(pos)
    }
}

#[test]
fn baseline_is_valid() {
    let f = one(Rec::i32(&[2]));
    let p = Params::parse(&f).unwrap();
    assert_eq!(&*p.get("t").unwrap().view::<i32>().unwrap(), &[0, 1]);
}

#[test]
fn wrong_magics() {
    let mut f = one(Rec::i32(&[2]));
    f[0] ^= 1;
    assert!(matches!(reject(&f), Error::BadListMagic { .. }));
    let mut r = Rec::i32(&[2]);
    r.magic = 0x1234;
    let e = reject(&one(r));
    assert!(
        matches!(&e, Error::BadTensorMagic { at, found: 0x1234 } if at.offset == 41),
        "{e}"
    );
    assert!(e.to_string().contains("tensor 0 \"t\""), "{e}");
}

#[test]
fn count_mismatch_both_ways() {
    let r = Rec::i32(&[2]);
    for count in [0u64, 2, u64::MAX] {
        let e = reject(&file(&[b"t"], std::slice::from_ref(&r), Some(count)));
        assert!(matches!(e, Error::CountMismatch { names: 1, .. }), "{e}");
    }
    // more tensors stored than names
    let e = reject(&file(&[b"t"], &[r.clone(), r], None));
    assert!(
        matches!(
            e,
            Error::CountMismatch {
                names: 1,
                tensors: 2,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn missing_tensor_count_is_truncation() {
    let f = file(&[], &[], None);
    let e = reject(&f[..24]);
    assert!(
        matches!(
            e,
            Error::Truncated {
                what: "the tensor count",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn negative_ndim_and_dims() {
    let mut r = Rec::i32(&[2]);
    r.ndim = Some(-1);
    assert!(matches!(
        reject(&one(r)),
        Error::NegativeNdim { ndim: -1, .. }
    ));
    let mut r = Rec::i32(&[]);
    r.dims = vec![2, -3];
    r.payload.clear();
    let e = reject(&one(r));
    assert!(
        matches!(
            e,
            Error::NegativeDim {
                axis: 1,
                value: -3,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn byte_count_mismatch_and_overflow() {
    for nb in [7, 9, 0, -8, i64::MIN] {
        let mut r = Rec::i32(&[2]);
        r.nbytes = Some(nb);
        let e = reject(&one(r));
        assert!(
            matches!(e, Error::ByteCountMismatch { expected: 8, .. }),
            "{nb}: {e}"
        );
    }
    // numel fits in i64 but × 4 bytes does not; and numel itself overflows
    for dims in [vec![1i64 << 62], vec![1 << 40, 1 << 40], vec![i64::MAX, 2]] {
        let mut r = Rec::i32(&[]);
        r.dims = dims.clone();
        r.payload.clear();
        r.nbytes = Some(0);
        let e = reject(&one(r));
        assert!(
            matches!(e, Error::ByteCountOverflow { .. }),
            "{dims:?}: {e}"
        );
    }
}

#[test]
fn dtype_refusals() {
    let cases: [(u8, u8, u16, &str); 10] = [
        (99, 32, 1, "unknown"),
        (5, 64, 1, "unknown"), // complex: TVM 0.27 cannot create it
        (3, 64, 1, "unknown"), // opaque handle
        (2, 8, 1, "unknown"),  // float8 without a variant
        (0, 0, 1, "unknown"),
        (17, 4, 1, "sub-byte"), // float4_e2m1fn
        (15, 6, 1, "sub-byte"), // float6_e2m3fn
        (16, 6, 1, "sub-byte"), // float6_e3m2fn
        (0, 12, 1, "sub-byte"), // int12
        (2, 32, 2, "lanes"),
    ];
    for (code, bits, lanes, kind) in cases {
        let mut r = Rec::i32(&[2]);
        (r.code, r.bits, r.lanes) = (code, bits, lanes);
        let e = reject(&one(r));
        let ok = match kind {
            "unknown" => matches!(e, Error::UnknownDType { .. }),
            "sub-byte" => matches!(e, Error::SubByteDType { .. }),
            _ => matches!(e, Error::Lanes { lanes: 2, .. }),
        };
        assert!(ok, "({code},{bits},{lanes}) should be {kind}: {e}");
        assert!(e.to_string().contains("byte 69"), "dtype offset: {e}");
    }
    let mut r = Rec::i32(&[2]);
    r.lanes = 0;
    assert!(matches!(reject(&one(r)), Error::Lanes { lanes: 0, .. }));
    let mut r = Rec::i32(&[1]);
    (r.code, r.bits) = (17, 4);
    assert!(reject(&one(r)).to_string().contains("sub-byte"));
}

#[test]
fn non_cpu_device() {
    for dev in [2, 0, -1] {
        let mut r = Rec::i32(&[2]);
        r.device_type = dev;
        let e = reject(&one(r));
        assert!(
            matches!(e, Error::NonCpuDevice { device_type, .. } if device_type == dev),
            "{e}"
        );
    }
}

#[test]
fn short_payload_is_truncation_with_offset_and_name() {
    // TVM and CVM accept a short payload and leave the tail uninitialised
    for dims in [&[2i64][..], &[]] {
        let mut f = file(&[b"weight"], &[Rec::i32(dims)], None);
        let full = f.len();
        f.pop();
        let e = reject(&f);
        let Error::Truncated {
            at,
            what,
            needed,
            available,
        } = &e
        else {
            panic!("{e}")
        };
        assert_eq!(*what, "the payload");
        assert_eq!(*available, *needed - 1);
        assert_eq!(at.offset as usize, full - *needed as usize);
        assert!(e.to_string().contains("\"weight\""), "{e}");
    }
}

#[test]
fn trailing_bytes_policy() {
    let mut f = one(Rec::i32(&[2]));
    let end = f.len() as u64;
    f.extend_from_slice(b"junk");
    let e = reject(&f);
    assert!(
        matches!(e, Error::TrailingBytes { offset, len: 4 } if offset == end),
        "{e}"
    );
    let opts = ReadOptions::default().with_lenient_trailing(true);
    let p = Params::parse_with(&f, &opts).unwrap();
    assert_eq!(p.trailing_bytes(), 4);
    assert_eq!(p.get("t").unwrap().bytes().len(), 8);
    assert_eq!(
        LazyParams::from_reader(Cursor::new(&f), &opts)
            .unwrap()
            .trailing_bytes(),
        4
    );
}

#[test]
fn duplicate_names_policy() {
    let mut a = Rec::i32(&[1]);
    a.payload = 1i32.to_le_bytes().to_vec();
    let mut b = Rec::i32(&[1]);
    b.payload = 2i32.to_le_bytes().to_vec();
    let f = file(&[b"x", b"a", b"x"], &[a.clone(), Rec::i32(&[2]), b], None);
    let e = reject(&f);
    assert!(
        matches!(&e, Error::DuplicateName { first: 0, at } if at.offset == 42),
        "{e}"
    );
    assert!(e.to_string().contains("name 2 \"x\""), "{e}");
    // allowed: all kept in file order, lookups give the last (as TVM does)
    let opts = ReadOptions::default().with_allow_duplicates(true);
    let p = Params::parse_with(&f, &opts).unwrap();
    assert_eq!(p.len(), 3);
    assert_eq!(p.position(b"x"), Some(2));
    assert_eq!(p.get("x").unwrap().view::<i32>().unwrap()[0], 2);
    let mut lazy = LazyParams::from_reader(Cursor::new(&f), &opts).unwrap();
    assert_eq!(
        lazy.read_by_name("x")
            .unwrap()
            .unwrap()
            .view::<i32>()
            .unwrap()[0],
        2
    );
    let map = p.into_tensor_map();
    assert_eq!(map.names().collect::<Vec<_>>(), ["x", "a"]);
    assert_eq!(map.get("x").unwrap().view::<i32>().unwrap()[0], 2);
}

#[test]
fn truncation_at_every_offset_is_an_error_never_a_panic() {
    for name in ["two_entry.params", "dtypes_core.params"] {
        let g = golden(name);
        assert!(Params::parse(&g).is_ok());
        for cut in 0..g.len() {
            let e = reject(&g[..cut]);
            assert!(matches!(e, Error::Truncated { .. }), "{name}[..{cut}]: {e}");
        }
    }
}

#[test]
fn short_reads_and_every_golden_through_every_reader() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cvm");
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "params") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let p = Params::parse(&bytes).unwrap();
        let o = Params::open(&path).unwrap();
        let mut t =
            LazyParams::from_reader(Trickle(Cursor::new(&bytes)), &ReadOptions::default()).unwrap();
        assert_eq!(o.file_size(), bytes.len() as u64);
        for (i, e) in p.entries().iter().enumerate() {
            assert_eq!(o.entries()[i].info(), e.info());
            assert_eq!(o.entries()[i].name_bytes(), e.name_bytes());
            assert_eq!(o.entries()[i].tensor().bytes(), e.tensor().bytes());
            assert_eq!(
                t.read(i).unwrap().bytes(),
                e.tensor().bytes(),
                "{}",
                path.display()
            );
        }
    }
}

#[test]
fn every_single_byte_corruption_is_handled() {
    // Not every flip is invalid (payload bytes, reserved words), but none may panic.
    for name in ["two_entry.params", "dtypes_core.params"] {
        let g = golden(name);
        for i in 0..g.len() {
            for v in [0x00, 0xff, g[i] ^ 0x80] {
                let mut f = g.clone();
                f[i] = v;
                let a = Params::parse(&f)
                    .map(|p| p.len())
                    .map_err(|e| e.to_string());
                let b = LazyParams::from_reader(Trickle(Cursor::new(&f)), &ReadOptions::default())
                    .map(|p| p.len())
                    .map_err(|e| e.to_string());
                assert_eq!(a, b, "{name} byte {i} = {v:#x}");
            }
        }
    }
}

#[test]
fn huge_counts_and_lengths_fail_early() {
    // 40 bytes claiming 2^40 names
    let mut f = file(&[], &[], None);
    f[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
    f.extend_from_slice(&[0u8; 8]);
    assert_eq!(f.len(), 40);
    let e = reject(&f);
    assert!(
        matches!(e, Error::Truncated { needed, .. } if needed == 48 << 40),
        "{e}"
    );
    // With no limits at all the claim is still refused by the remaining-bytes
    // check: allocating for 2^40 names would abort the test process.
    let unlimited = ReadOptions::default().with_limits(Limits::unlimited());
    assert!(matches!(
        reject_with(&f, &unlimited),
        Error::Truncated { .. }
    ));
    // u64::MAX names: no overflow either
    f[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(reject(&f), Error::Truncated { .. }));
    // a name length past the end
    let mut f = one(Rec::i32(&[2]));
    f[24..32].copy_from_slice(&(1u64 << 50).to_le_bytes());
    let e = reject_with(&f, &unlimited);
    assert!(matches!(e, Error::Truncated { what: "a name", .. }), "{e}");
    // a huge ndim
    let mut r = Rec::i32(&[2]);
    r.ndim = Some(i32::MAX);
    assert!(matches!(reject(&one(r)), Error::Limit { .. }));
    // ndim within the limit but past the end
    let mut r = Rec::i32(&[2]);
    r.ndim = Some(60);
    let e = reject(&one(r));
    assert!(
        matches!(
            e,
            Error::Truncated {
                what: "the shape",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn limits_apply() {
    let f = file(
        &[b"a", b"bb"],
        &[Rec::i32(&[2]), Rec::i32(&[1, 1, 1])],
        None,
    );
    assert!(Params::parse(&f).is_ok());
    let strict = |l: Limits| ReadOptions::default().with_limits(l);
    let e = reject_with(&f, &strict(Limits::default().with_max_tensors(1)));
    assert!(e.to_string().contains("tensor count is 2"), "{e}");
    let e = reject_with(&f, &strict(Limits::default().with_max_name_len(1)));
    assert!(e.to_string().contains("name 1"), "{e}");
    let e = reject_with(&f, &strict(Limits::default().with_max_rank(2)));
    assert!(e.to_string().contains("rank is 3"), "{e}");
    // the lazy reader checks max_alloc before allocating a payload
    let mut lazy = LazyParams::from_reader(
        Cursor::new(&f),
        &strict(Limits::default().with_max_alloc(4)),
    )
    .unwrap();
    assert!(lazy.read(1).is_ok());
    let e = lazy.read(0).unwrap_err();
    assert!(
        matches!(e, Error::Limit { .. }) && e.to_string().contains("\"a\""),
        "{e}"
    );
    assert!(matches!(
        lazy.read(2),
        Err(Error::NoSuchEntry { index: 2, len: 2 })
    ));
}

#[test]
fn edge_cases_are_accepted() {
    let mut zero_mid = Rec::i32(&[3, 0, 2]);
    zero_mid.payload.clear();
    let scalar = Rec::i32(&[]);
    let zero_first = Rec::i32(&[0, 4]);
    let mut reserved = Rec::i32(&[1]);
    reserved.device_id = 3;
    let mut legacy_bool = Rec::i32(&[3]);
    (legacy_bool.code, legacy_bool.bits) = (1, 1);
    legacy_bool.payload = vec![1, 0, 1];
    let mut f = file(
        &[
            b"",
            b"zero_mid",
            b"scalar",
            b"zero_first",
            b"dev3",
            b"\xff\xfe",
            b"nul\0in",
        ],
        &[
            Rec::i32(&[1]),
            zero_mid,
            scalar,
            zero_first,
            reserved,
            legacy_bool,
            Rec::i32(&[2]),
        ],
        None,
    );
    f[8] = 0x55; // list reserved word: ignored
    let p = Params::parse(&f).unwrap();
    assert_eq!(p.len(), 7);
    assert_eq!(p.get("").unwrap().dims(), &[1]);
    assert_eq!(p.get("zero_mid").unwrap().dims(), &[3, 0, 2]);
    assert!(p.get("zero_mid").unwrap().bytes().is_empty());
    assert_eq!(p.get("scalar").unwrap().dims(), &[] as &[usize]);
    assert_eq!(p.get("scalar").unwrap().bytes().len(), 4);
    assert_eq!(p.get("zero_first").unwrap().numel(), 0);
    assert_eq!(p.entries()[4].info().device_id, 3);
    let b = p.get_bytes(b"\xff\xfe").unwrap();
    assert_eq!(b.dtype(), DType::Bool);
    assert_eq!(b.bytes(), &[1, 0, 1]);
    assert_eq!(p.entries()[5].name(), "\u{fffd}\u{fffd}");
    assert!(p.get_bytes(b"nul\0in").is_some());
    assert!(p.get("missing").is_none());
    // empty dictionaries, written by TVM and hand-made
    assert!(Params::parse(&golden("empty.params")).unwrap().is_empty());
    assert!(
        LazyParams::from_reader(Cursor::new(file(&[], &[], None)), &ReadOptions::default())
            .unwrap()
            .is_empty()
    );
    // the tensor record of a scalar is 40 bytes; a dict starting mid-stream
    let mut stream = b"prefix".to_vec();
    stream.extend_from_slice(&f);
    let mut c = Cursor::new(stream);
    c.set_position(6);
    let mut lazy = LazyParams::from_reader(c, &ReadOptions::default()).unwrap();
    assert_eq!(
        lazy.read_by_name("scalar").unwrap().unwrap().bytes(),
        &[0, 0, 0, 0]
    );
}
