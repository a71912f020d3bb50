//! Bounded memory: a counting global allocator measures the peak bytes each
//! reader allocates while reading every golden file under `testdata/`, every
//! golden truncated at several offsets, and synthetic hostile files that
//! claim huge counts and lengths. Each read must stay under
//! `input length × K + C` for its format (K and C are chosen per format in
//! [`BOUNDS`], with the reason). Memory-mapped reads (`open`, `load`,
//! `from_map`) must stay under a fixed cap whatever the file size: they
//! index the file and allocate almost nothing.
//!
//! The input bytes are allocated before the measurement starts; the peak is
//! relative to what the thread held when it started. Tests run on several
//! threads, so the counters are per thread (const thread-locals: no
//! allocation and no destructor inside the allocator). Each reader is run
//! once before measuring, so lazily built statics (the protobuf descriptor
//! pool of the text parser) are not counted against the first file.

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

use mlformats::cvm::{Params, WriteOptions as CvmWriteOptions};
use mlformats::nnabla::{binary, text};
use mlformats::nnp::{Nnp, ParamFormat, Parameter, ParameterSet, ReadOptions, h5};
use mlformats::primitiv;
use mlformats::tennis::{Module, ModuleBuilder, WriteOptions as TsmWriteOptions};
use mlformats::tensor_core::{MappedFile, Tensor};

// ---------------------------------------------------------------------------
// The counting allocator.

mod counting;
use counting::{Counting, peak_of};

#[global_allocator]
static ALLOC: Counting = Counting;

// ---------------------------------------------------------------------------
// Formats, readers and bounds.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Cvm,
    Primitiv,
    Nntxt,
    Protobuf,
    ProtobufOwned,
    H5,
    Nnp,
    Tsm,
}

/// `(kind, K, C)`: peak ≤ input length × K + C. The worst measured ratio
/// (debug build, this test's inputs) is given for each; K leaves room above it.
const BOUNDS: &[(Kind, usize, usize)] = &[
    // `.params`: tensors borrow the input; what is allocated is one `Entry`
    // per record (tensor, dims, name; ~300 bytes) and the name index. The
    // smallest record is 48 bytes plus a 10-byte name entry: 4096 empty
    // records measure 5.5 bytes per input byte.
    (Kind::Cvm, 8, 64 << 10),
    // primitiv: data borrowed; a model entry (key path, parameter, stats
    // vector) costs ~140 bytes for 20 bytes of input at the smallest
    // (one-letter key, 0-d shape, 4-byte bin): 4096 of them measure 6.9.
    (Kind::Primitiv, 10, 64 << 10),
    // Text builds a message tree (prost-reflect values, then prost
    // structs): `variable {} ` is 12 bytes of text for a ~200-byte message,
    // 17.7 measured; a float list (`1,`: 2 bytes per 4-byte value held as a
    // dynamic value) 8.2; a long string 2.0.
    (Kind::Nntxt, 24, 128 << 10),
    // Binary, borrowed: float data stays in the input; each parameter is a
    // `ParamTensor` (name, dims, tensor; ~150 bytes) for as little as 11
    // bytes of input: 10 000 zero-size parameters measure 13.9.
    (Kind::Protobuf, 20, 64 << 10),
    // Binary, owned (`binary::decode`, prost): an empty `parameter {}` is 3
    // bytes of input for a ~130-byte `Parameter` in a doubling Vec: 43.7
    // measured. Float data is copied into `Vec<f32>` once.
    (Kind::ProtobufOwned, 64, 64 << 10),
    // `.h5` from a slice: hdf5-pure parses an owned buffer, so the file is
    // copied once (×1), plus its object headers and B-trees: 1000 scalar
    // datasets measure 2.03, the goldens at most 1.65.
    (Kind::H5, 4, 256 << 10),
    // `.nnp`: stored members are borrowed, but the h5 member is copied for
    // hdf5-pure (h5's ×2), the text member becomes a message tree (text's
    // K: 17.7 measured for a stored network.nntxt of empty variables), and
    // a deflated member is inflated into a buffer that follows the stream
    // (a 1 MiB member lying that it holds 1 GiB measures 2.05).
    (Kind::Nnp, 24, 256 << 10),
    // `.tsm`: data borrowed; a node is a struct with its params, keys and
    // field tensors for as little as 8 bytes of input (no params, no
    // inputs): 8192 empty nodes measure 7.0, a chain of 2048 named
    // operators 7.2.
    (Kind::Tsm, 12, 64 << 10),
];

fn bound(kind: Kind, len: usize) -> usize {
    let (_, k, c) = BOUNDS
        .iter()
        .copied()
        .find(|(b, _, _)| *b == kind)
        .expect("every kind has a bound");
    len * k + c
}

/// Reads `bytes` as `kind` with the crate's normal reader; true when it succeeded.
fn read(kind: Kind, bytes: &[u8]) -> bool {
    match kind {
        Kind::Cvm => Params::parse(bytes).is_ok(),
        Kind::Primitiv => primitiv::File::parse(bytes).is_ok(),
        Kind::Nntxt => std::str::from_utf8(bytes).is_ok_and(|s| text::parse(s).is_ok()),
        Kind::Protobuf => binary::parse(bytes).is_ok(),
        Kind::ProtobufOwned => binary::decode(bytes).is_ok(),
        Kind::H5 => h5::parse(bytes).is_ok(),
        Kind::Nnp => Nnp::parse_with(bytes, &ReadOptions::default()).is_ok(),
        Kind::Tsm => Module::parse(bytes).is_ok(),
    }
}

/// Reads `bytes` as `kind`, returns the peak, and fails when it is over the bound.
fn check(kind: Kind, what: &str, bytes: &[u8]) -> usize {
    let peak = peak_of(|| {
        read(kind, bytes);
    });
    let limit = bound(kind, bytes.len());
    assert!(
        peak <= limit,
        "{kind:?} {what}: {} input bytes, peak {peak} bytes > bound {limit}",
        bytes.len()
    );
    peak
}

/// The synthetic inputs that are valid files (the "many tiny records" cases
/// that set K); every other synthetic input must be refused.
const VALID_SYNTHETIC: &[&str] = &[
    "4096 empty records",
    "4096 one-float parameters",
    "2048 tiny operator nodes",
    "10000 zero-size parameters",
    "50000 unpacked floats",
    "200 nested length-delimited fields",
    "5000 empty parameters",
    "5000 empty variables",
    "50000 floats in a list",
    "a 200 kB string",
    "200 kB of a comment",
    "1000 scalar datasets",
    "deflated mlp.nnp",
    "stored network.nntxt of 5000 variables",
];

/// Checks the bound and that `bytes` is accepted or refused as expected.
fn check_synthetic(kind: Kind, what: &str, bytes: &[u8]) -> usize {
    let valid = VALID_SYNTHETIC.contains(&what);
    assert_eq!(
        read(kind, bytes),
        valid,
        "{kind:?} {what}: unexpected result"
    );
    check(kind, what, bytes)
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Golden files of `dir` whose names end in one of `exts`, sorted.
fn goldens(dir: &str, exts: &[&str]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(testdata().join(dir))
        .unwrap_or_else(|e| panic!("testdata/{dir}: {e}"))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            exts.iter().any(|x| n.ends_with(x))
        })
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no {exts:?} in testdata/{dir}");
    v
}

/// Truncation offsets: the header region and fractions of the file.
fn cuts(len: usize) -> Vec<usize> {
    let mut v = vec![0, 1, 4, 8, 15, 16, 24, 32, 40, 64, 100, 128, 200];
    v.extend([
        len / 4,
        len / 2,
        3 * len / 4,
        len.saturating_sub(9),
        len.saturating_sub(1),
    ]);
    v.retain(|&c| c < len);
    v.sort_unstable();
    v.dedup();
    v
}

/// Every golden and its truncations; returns the largest golden's (name, size, peak).
fn check_goldens(kind: Kind, files: &[PathBuf]) -> (String, usize, usize) {
    read(kind, &std::fs::read(&files[0]).expect("readable")); // warm-up
    let mut biggest = (String::new(), 0, 0);
    let mut worst = (0f64, String::new());
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).expect("readable");
        // The goldens not named `bad_*` are valid: measure a complete read.
        // (`bad_datatype_param_as_model` is a valid Parameter file, bad only
        // when loaded as a Model; `read` detects the type.)
        let valid = !name.starts_with("bad_") || name.ends_with("_as_model.data");
        assert_eq!(
            read(kind, &bytes),
            valid,
            "{kind:?} {name}: unexpected result"
        );
        let peak = check(kind, &name, &bytes);
        let ratio = peak as f64 / bytes.len().max(1) as f64;
        if ratio > worst.0 {
            worst = (ratio, name.clone());
        }
        if bytes.len() >= biggest.1 {
            biggest = (name.clone(), bytes.len(), peak);
        }
        for cut in cuts(bytes.len()) {
            check(kind, &format!("{name} cut at {cut}"), &bytes[..cut]);
        }
    }
    eprintln!(
        "{kind:?}: {} goldens; largest {} ({} bytes): peak {} bytes (bound {}); highest peak/size {:.2} ({})",
        files.len(),
        biggest.0,
        biggest.1,
        biggest.2,
        bound(kind, biggest.1),
        worst.0,
        worst.1
    );
    biggest
}

// ---------------------------------------------------------------------------
// Goldens and their truncations.

#[test]
fn cvm_goldens_and_truncations() {
    check_goldens(Kind::Cvm, &goldens("cvm", &[".params"]));
}

#[test]
fn primitiv_goldens_and_truncations() {
    let mut files = goldens("primitiv", &[".data"]);
    files.extend(goldens("primitiv/reader_cases", &[".data"]));
    check_goldens(Kind::Primitiv, &files);
}

#[test]
fn nnabla_goldens_and_truncations() {
    check_goldens(Kind::Nntxt, &goldens("nnabla", &[".nntxt"]));
    let pb = goldens("nnabla", &[".protobuf"]);
    check_goldens(Kind::Protobuf, &pb);
    check_goldens(Kind::ProtobufOwned, &pb);
    check_goldens(Kind::H5, &goldens("nnabla", &[".h5"]));
    check_goldens(Kind::Nnp, &goldens("nnabla", &[".nnp"]));
}

#[test]
fn tennis_goldens_and_truncations() {
    let mut files = goldens("tennis", &[".tsm"]);
    files.extend(goldens("tennis/edge", &[".tsm"]));
    check_goldens(Kind::Tsm, &files);
}

// ---------------------------------------------------------------------------
// Synthetic hostile files.

fn u64le(v: u64) -> [u8; 8] {
    v.to_le_bytes()
}

const CVM_MAGIC: u64 = 0xF7E5_8D4F_0504_9CB7;
const CVM_TENSOR_MAGIC: u64 = 0xDD5E_40F0_96B4_A13F;

#[test]
fn cvm_hostile_claims() {
    let warm = std::fs::read(testdata().join("cvm/two_entry.params")).unwrap();
    read(Kind::Cvm, &warm);
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();

    // 40 bytes claiming 2^40 names.
    let mut f = [u64le(CVM_MAGIC), u64le(0), u64le(1 << 40)].concat();
    f.extend(u64le(4));
    f.extend(b"abcdefgh");
    assert_eq!(f.len(), 40);
    cases.push(("2^40 names", f));

    // One name claiming 2^40 bytes.
    let f = [
        u64le(CVM_MAGIC),
        u64le(0),
        u64le(1),
        u64le(1 << 40),
        u64le(0),
    ]
    .concat();
    cases.push(("a 2^40-byte name", f));

    // No names, 2^40 tensors.
    let f = [
        u64le(CVM_MAGIC),
        u64le(0),
        u64le(0),
        u64le(1 << 40),
        u64le(0),
    ]
    .concat();
    cases.push(("2^40 tensors", f));

    // One tensor record with 2^31-1 dims, one of 2^62 elements, one of 2^40 bytes.
    let rec = |ndim: i32, dims: &[i64], nbytes: i64| {
        let mut f = [u64le(CVM_MAGIC), u64le(0), u64le(1), u64le(1)].concat();
        f.push(b'w');
        f.extend(u64le(1));
        f.extend(u64le(CVM_TENSOR_MAGIC));
        f.extend(u64le(0));
        f.extend(1i32.to_le_bytes());
        f.extend(0i32.to_le_bytes());
        f.extend(ndim.to_le_bytes());
        f.extend([2u8, 32, 1, 0]);
        for d in dims {
            f.extend(d.to_le_bytes());
        }
        f.extend(nbytes.to_le_bytes());
        f.extend([0u8; 16]);
        f
    };
    cases.push(("ndim 2^31-1", rec(i32::MAX, &[1, 1], 4)));
    cases.push(("2^62 elements", rec(2, &[1 << 31, 1 << 31], 1 << 62)));
    cases.push(("payload of 2^40 bytes", rec(1, &[1 << 38], 1 << 40)));

    // Many tiny records: a file of 4096 empty 0-d int8 tensors (the K case).
    let n = 4096u64;
    let mut f = [u64le(CVM_MAGIC), u64le(0), u64le(n)].concat();
    for i in 0..n {
        f.extend(u64le(2));
        f.extend((i as u16).to_le_bytes());
    }
    f.extend(u64le(n));
    for _ in 0..n {
        f.extend(u64le(CVM_TENSOR_MAGIC));
        f.extend(u64le(0));
        f.extend(1i32.to_le_bytes());
        f.extend(0i32.to_le_bytes());
        f.extend(1i32.to_le_bytes());
        f.extend([0u8, 8, 1, 0]);
        f.extend(0i64.to_le_bytes());
        f.extend(0i64.to_le_bytes());
    }
    cases.push(("4096 empty records", f));

    for (what, bytes) in &cases {
        let peak = check_synthetic(Kind::Cvm, what, bytes);
        eprintln!("Cvm {what}: {} bytes, peak {peak}", bytes.len());
    }
}

/// A primitiv header: version 0.1 and `data_type`, each a fixed-width uint32.
fn primitiv_header(data_type: u32) -> Vec<u8> {
    let mut v = Vec::new();
    for x in [0u32, 1, data_type] {
        v.push(0xce);
        v.extend(x.to_be_bytes());
    }
    v
}

fn mp_u32(v: u32) -> Vec<u8> {
    let mut b = vec![0xce];
    b.extend(v.to_be_bytes());
    b
}

#[test]
fn primitiv_hostile_claims() {
    let warm = std::fs::read(testdata().join("primitiv/tensor_2x3.data")).unwrap();
    read(Kind::Primitiv, &warm);
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();

    // A 0-d tensor whose bin32 claims 4 GiB (21 bytes).
    let mut f = primitiv_header(0x100);
    f.extend([0x90]);
    f.extend(mp_u32(1));
    f.extend([0xc6, 0xff, 0xff, 0xff, 0xff]);
    cases.push(("0-d tensor, bin32 of 4 GiB", f));

    // A shape of 2^30-1 floats and a bin32 that agrees with it (4 GiB - 4).
    let mut f = primitiv_header(0x100);
    f.push(0x91);
    f.extend(mp_u32(0x3fff_ffff));
    f.extend(mp_u32(1));
    f.extend([0xc6, 0xff, 0xff, 0xff, 0xfc]);
    cases.push(("tensor of 2^30-1 floats", f));

    // A shape whose array32 claims 2^32-1 dims.
    let mut f = primitiv_header(0x0);
    f.extend([0xdd, 0xff, 0xff, 0xff, 0xff]);
    f.extend(mp_u32(1));
    cases.push(("array32 of 2^32-1 dims", f));

    // A model claiming 2^32-1 parameters, and one entry whose key path claims 2^32-1 parts.
    let mut f = primitiv_header(0x300);
    f.extend(mp_u32(u32::MAX));
    f.extend([0x91, 0xa1, b'a']);
    cases.push(("model of 2^32-1 parameters", f));
    let mut f = primitiv_header(0x300);
    f.extend(mp_u32(1));
    f.extend([0xdd, 0xff, 0xff, 0xff, 0xff, 0xa1, b'a']);
    cases.push(("key path of 2^32-1 parts", f));

    // A key str32 claiming 4 GiB.
    let mut f = primitiv_header(0x300);
    f.extend(mp_u32(1));
    f.extend([0x91, 0xdb, 0xff, 0xff, 0xff, 0xff, b'a']);
    cases.push(("str32 of 4 GiB", f));

    // A parameter claiming 2^32-1 stats.
    let mut f = primitiv_header(0x200);
    f.push(0x90);
    f.extend(mp_u32(1));
    f.extend([0xc4, 4, 0, 0, 0x80, 0x3f]);
    f.extend(mp_u32(u32::MAX));
    f.extend([0xa1, b'm']);
    cases.push(("2^32-1 stats", f));

    // An optimizer whose map32 claims 2^32-1 configs.
    let mut f = primitiv_header(0x400);
    f.extend([0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, b'k']);
    cases.push(("map32 of 2^32-1 configs", f));

    // Many tiny entries: 4096 parameters of one float (20 bytes each: the K case).
    let n = 4096u32;
    let mut f = primitiv_header(0x300);
    f.extend(mp_u32(n));
    for _ in 0..n {
        f.extend([0x91, 0xa1, b'a', 0x90]);
        f.extend(mp_u32(1));
        f.extend([0xc4, 4, 0, 0, 0x80, 0x3f]);
        f.extend(mp_u32(0));
    }
    cases.push(("4096 one-float parameters", f));

    for (what, bytes) in &cases {
        let peak = check_synthetic(Kind::Primitiv, what, bytes);
        eprintln!("Primitiv {what}: {} bytes, peak {peak}", bytes.len());
    }
}

/// A TenniS header: fake 0, the module code, 120 zero bytes.
fn tsm_header() -> Vec<u8> {
    let mut v = 0u32.to_le_bytes().to_vec();
    v.extend(mlformats::tennis::MODULE_CODE.to_le_bytes());
    v.extend([0u8; 120]);
    v
}

fn le32(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

#[test]
fn tennis_hostile_claims() {
    let warm = std::fs::read(testdata().join("tennis/edge/ok_minimal.tsm")).unwrap();
    read(Kind::Tsm, &warm);
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    let pad = |mut f: Vec<u8>| {
        f.resize(200.max(f.len()), 0);
        f
    };

    // 200 bytes claiming 2^31 nodes (and 2^31-1).
    for n in [1u32 << 31, (1 << 31) - 1] {
        let mut f = tsm_header();
        f.extend(le32(0));
        f.extend(le32(0));
        f.extend(le32(n));
        cases.push((format!("{n} nodes"), pad(f)));
    }
    // 2^31-1 module inputs.
    let mut f = tsm_header();
    f.extend(le32(0x7fff_ffff));
    cases.push(("2^31-1 inputs".into(), pad(f)));
    // One node with 2^31-1 params; one param whose key claims 2^31-1 bytes.
    let mut f = tsm_header();
    f.extend([le32(0), le32(1), le32(0), le32(1), le32(0x7fff_ffff)].concat());
    cases.push(("2^31-1 params".into(), pad(f)));
    let mut f = tsm_header();
    f.extend(
        [
            le32(0),
            le32(1),
            le32(0),
            le32(1),
            le32(1),
            le32(0x7fff_ffff),
        ]
        .concat(),
    );
    cases.push(("key of 2^31-1 bytes".into(), pad(f)));
    // A field of 2^31-1 tensors; a field of rank 2^31-1; dims of 2^62 f32 elements.
    let field = |tail: &[u8]| {
        let mut f = tsm_header();
        f.extend([le32(0), le32(1), le32(0), le32(1), le32(1), le32(5)].concat());
        f.extend(b"value");
        f.extend(tail);
        pad(f)
    };
    cases.push(("2^31-1 fields".into(), field(&le32(0x7fff_ffff))));
    cases.push((
        "rank 2^31-1".into(),
        field(&[le32(1).as_slice(), &[10], &le32(0x7fff_ffff)].concat()),
    ));
    cases.push((
        "2^62 elements".into(),
        field(
            &[
                le32(1).as_slice(),
                &[10],
                &le32(2),
                &le32(0x7fff_ffff),
                &le32(0x7fff_ffff),
            ]
            .concat(),
        ),
    ));
    // A node claiming 2^31-1 inputs.
    let mut f = tsm_header();
    f.extend(
        [
            le32(0),
            le32(1),
            le32(0),
            le32(1),
            le32(0),
            le32(0x7fff_ffff),
        ]
        .concat(),
    );
    cases.push(("2^31-1 node inputs".into(), pad(f)));

    // The K case: a chain of 2048 operator nodes with one-letter names.
    let mut b = ModuleBuilder::new();
    let mut prev = b.input("x");
    for _ in 0..2048 {
        prev = b.op("a", "b", &[prev]).unwrap();
    }
    b.output(prev).unwrap();
    let chain = b
        .build()
        .unwrap()
        .to_bytes(&TsmWriteOptions::default())
        .unwrap();
    cases.push(("2048 tiny operator nodes".into(), chain));
    // Nodes with no params at all (8 bytes each), which a structural read allocates for.
    let n = 8192u32;
    let mut f = tsm_header();
    f.extend([le32(0), le32(0), le32(n)].concat());
    for _ in 0..n {
        f.extend([le32(0), le32(0)].concat());
    }
    cases.push(("8192 empty nodes".into(), f));

    for (what, bytes) in &cases {
        let peak = check_synthetic(Kind::Tsm, what, bytes);
        let structural = peak_of(|| {
            drop(Module::parse_with(
                bytes,
                &mlformats::tennis::ReadOptions::structural(),
            ))
        });
        assert!(
            structural <= bound(Kind::Tsm, bytes.len()),
            "{what}: structural read peak {structural}"
        );
        eprintln!(
            "Tsm {what}: {} bytes, peak {peak} (structural {structural})",
            bytes.len()
        );
    }
}

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

/// A length-delimited field header: key (`tag`, wire type 2) and length.
fn ld(tag: u64, len: u64) -> Vec<u8> {
    [varint(tag << 3 | 2), varint(len)].concat()
}

#[test]
fn nnabla_hostile_claims() {
    let warm_pb = std::fs::read(testdata().join("nnabla/mlp.protobuf")).unwrap();
    read(Kind::Protobuf, &warm_pb);
    read(Kind::ProtobufOwned, &warm_pb);
    let warm_txt = std::fs::read(testdata().join("nnabla/mlp.nntxt")).unwrap();
    read(Kind::Nntxt, &warm_txt);

    let mut pb: Vec<(&str, Vec<u8>)> = Vec::new();
    // A root `parameter` field claiming 2 GiB, a `network` claiming 2^31-1,
    // an unknown field claiming 2 GiB.
    pb.push((
        "parameter of 2 GiB",
        [ld(200, 1 << 31), vec![0; 10]].concat(),
    ));
    pb.push((
        "network of 2^31-1",
        [ld(100, (1 << 31) - 1), vec![0; 10]].concat(),
    ));
    pb.push((
        "unknown field of 2 GiB",
        [ld(999, 1 << 31), vec![0; 10]].concat(),
    ));
    // A parameter whose packed `data` claims 2 GiB; one whose shape claims 2^40
    // elements for one float.
    let inner = [ld(100, 1 << 31), vec![0; 8]].concat();
    pb.push((
        "packed data of 2 GiB",
        [ld(200, inner.len() as u64), inner].concat(),
    ));
    let shape = [
        varint(1 << 3),
        varint(1 << 20),
        varint(1 << 3),
        varint(1 << 20),
    ]
    .concat();
    let param = [
        ld(20, shape.len() as u64),
        shape,
        ld(100, 4),
        vec![0, 0, 0x80, 0x3f],
    ]
    .concat();
    pb.push((
        "shape of 2^40 for one float",
        [ld(200, param.len() as u64), param].concat(),
    ));
    // 20 000 empty parameters (3 bytes each: refused by the borrowed reader
    // at the first, since a 0-d parameter needs a value; prost decodes all).
    pb.push(("20000 empty parameters", ld(200, 0).repeat(20_000)));
    // The K case: 10 000 valid zero-size parameters `a` of shape [0] (11 bytes each).
    let tiny = [ld(1, 1), b"a".to_vec(), ld(20, 3), ld(1, 1), vec![0]].concat();
    let tiny = [ld(200, tiny.len() as u64), tiny].concat();
    let many = tiny.repeat(10_000);
    let n = binary::parse(&many).expect("valid");
    assert_eq!(n.parameters.len(), 10_000);
    pb.push(("10000 zero-size parameters", many));
    // 50 000 unpacked floats (5 bytes each) in one parameter: appended in place.
    let dims = varint(50_000);
    let shape = [ld(1, dims.len() as u64), dims].concat();
    let mut unpacked = [ld(1, 1), b"w".to_vec(), ld(20, shape.len() as u64), shape].concat();
    for _ in 0..50_000 {
        unpacked.extend(varint(100 << 3 | 5));
        unpacked.extend(1f32.to_le_bytes());
    }
    let unpacked = [ld(200, unpacked.len() as u64), unpacked].concat();
    let n = binary::parse(&unpacked).expect("valid");
    assert_eq!(n.parameters[0].tensor.numel(), 50_000);
    pb.push(("50000 unpacked floats", unpacked));
    // Deep nesting of network → function → context … is bounded by the decoder.
    let mut deep = Vec::new();
    for _ in 0..200 {
        deep = [ld(100, deep.len() as u64), deep].concat();
    }
    pb.push(("200 nested length-delimited fields", deep));
    for (what, bytes) in &pb {
        let peak = check_synthetic(Kind::Protobuf, what, bytes);
        let owned = check(Kind::ProtobufOwned, what, bytes);
        eprintln!(
            "Protobuf {what}: {} bytes, peak {peak} (owned {owned})",
            bytes.len()
        );
    }

    let mut txt: Vec<(&str, Vec<u8>)> = Vec::new();
    txt.push(("5000 empty parameters", b"parameter {}\n".repeat(5000)));
    txt.push(("10000 nested networks", b"network { ".repeat(10_000)));
    let mut vars = b"network { variable { name: \"x\" } ".to_vec();
    vars.extend(b"variable {} ".repeat(5000));
    vars.extend(b"}");
    txt.push(("5000 empty variables", vars));
    let mut floats = b"parameter { variable_name: \"w\" data: [".to_vec();
    floats.extend(b"1,".repeat(50_000));
    floats.extend(b"1] }");
    txt.push(("50000 floats in a list", floats));
    let mut long = b"version: \"".to_vec();
    long.extend(vec![b'a'; 200_000]);
    long.extend(b"\"");
    txt.push(("a 200 kB string", long));
    txt.push((
        "200 kB of a comment",
        [b"# ".as_slice(), &vec![b'x'; 200_000]].concat(),
    ));
    for (what, bytes) in &txt {
        let peak = check_synthetic(Kind::Nntxt, what, bytes);
        eprintln!("Nntxt {what}: {} bytes, peak {peak}", bytes.len());
    }
}

fn zip_of(members: &[(&str, &[u8], zip::CompressionMethod)]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, data, method) in members {
        let opts = zip::write::SimpleFileOptions::default().compression_method(*method);
        z.start_file(*name, opts).expect("zip entry");
        z.write_all(data).expect("zip data");
    }
    z.finish().expect("zip").into_inner()
}

/// Sets the sizes of the member whose local header starts at `local` (and
/// its central-directory entry, the `nth` one) to `compressed`/`size`.
fn patch_member(z: &mut [u8], local: usize, nth: usize, compressed: Option<u32>, size: u32) {
    assert_eq!(&z[local..local + 4], b"PK\x03\x04");
    if let Some(c) = compressed {
        z[local + 18..local + 22].copy_from_slice(&c.to_le_bytes());
    }
    z[local + 22..local + 26].copy_from_slice(&size.to_le_bytes());
    let cd = z
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"PK\x01\x02")
        .map(|(i, _)| i)
        .nth(nth)
        .expect("central entry");
    if let Some(c) = compressed {
        z[cd + 20..cd + 24].copy_from_slice(&c.to_le_bytes());
    }
    z[cd + 24..cd + 28].copy_from_slice(&size.to_le_bytes());
}

/// Pseudo-random bytes (incompressible for deflate).
fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn golden_members(name: &str) -> Vec<(String, Vec<u8>)> {
    let bytes = std::fs::read(testdata().join("nnabla").join(name)).unwrap();
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut f, &mut v).unwrap();
            (f.name().unwrap().to_string(), v)
        })
        .collect()
}

#[test]
fn h5_and_nnp_hostile_claims() {
    let warm = std::fs::read(testdata().join("nnabla/mlp.nnp")).unwrap();
    read(Kind::Nnp, &warm);
    let warm = std::fs::read(testdata().join("nnabla/mlp_params.h5")).unwrap();
    read(Kind::H5, &warm);

    // .h5: a dataset whose dataspace claims 2^20 × 2^20 elements.
    let w = Tensor::from_values([7, 13], &[0.5f32; 91]).unwrap();
    let mut file = Vec::new();
    h5::write_tensors(&mut file, [("fc/W", &w, true)]).unwrap();
    let dims = [7u64.to_le_bytes(), 13u64.to_le_bytes()].concat();
    let at = file
        .windows(16)
        .position(|x| x == dims.as_slice())
        .expect("the dataspace dims");
    let mut huge = file.clone();
    huge[at..at + 8].copy_from_slice(&(1u64 << 20).to_le_bytes());
    huge[at + 8..at + 16].copy_from_slice(&(1u64 << 20).to_le_bytes());
    let mut h5_cases: Vec<(&str, Vec<u8>)> = vec![("dataspace of 2^40 elements", huge)];
    // The superblock's end-of-file address claiming 2^40 (superblock v2: at 28).
    let mut eof = file.clone();
    eof[28..36].copy_from_slice(&(1u64 << 40).to_le_bytes());
    h5_cases.push(("end of file at 2^40", eof));
    // Metadata-heavy: 1000 scalar datasets in 10 groups.
    let s = Tensor::from_values([], &[1f32]).unwrap();
    let names: Vec<String> = (0..1000).map(|i| format!("g{}/p{i}", i % 10)).collect();
    let mut many = Vec::new();
    h5::write_tensors(&mut many, names.iter().map(|n| (n.as_str(), &s, false))).unwrap();
    assert_eq!(h5::parse(&many).unwrap().len(), 1000);
    h5_cases.push(("1000 scalar datasets", many));
    for (what, bytes) in &h5_cases {
        let peak = check_synthetic(Kind::H5, what, bytes);
        eprintln!("H5 {what}: {} bytes, peak {peak}", bytes.len());
    }

    let members = golden_members("mlp.nnp");
    let as_refs = |method| -> Vec<(&str, &[u8], zip::CompressionMethod)> {
        members
            .iter()
            .map(|(n, d)| (n.as_str(), d.as_slice(), method))
            .collect()
    };
    let mut nnp: Vec<(&str, Vec<u8>)> = Vec::new();
    // Every member deflated (a valid archive: the member is inflated once).
    let deflated = zip_of(&as_refs(zip::CompressionMethod::Deflated));
    let n = Nnp::parse_with(&deflated, &ReadOptions::default()).expect("a valid archive");
    assert_eq!(n.parameters().len(), 4);
    eprintln!("deflated mlp.nnp is {} bytes", deflated.len());
    nnp.push(("deflated mlp.nnp", deflated));
    // A stored member whose sizes claim 1 GiB (past the end).
    let mut z = zip_of(&as_refs(zip::CompressionMethod::Stored));
    let local = z
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"PK\x03\x04")
        .map(|(i, _)| i)
        .nth(2)
        .unwrap();
    patch_member(&mut z, local, 2, Some(1 << 30), 1 << 30);
    nnp.push(("stored member of 1 GiB", z));
    // A deflate bomb declaring 1 GiB from 4 MiB of zeros (refused on its ratio).
    let zeros = vec![0u8; 4 << 20];
    let mut z = zip_of(&[("parameter.h5", &zeros, zip::CompressionMethod::Deflated)]);
    patch_member(&mut z, 0, 0, None, 1 << 30);
    nnp.push(("deflate bomb declaring 1 GiB", z));
    // A deflated member of 1 MiB of noise declaring 1 GiB: a possible ratio,
    // but the stream ends long before (the buffer must follow the stream).
    let data = noise(1 << 20);
    let mut z = zip_of(&[("parameter.h5", &data, zip::CompressionMethod::Deflated)]);
    patch_member(&mut z, 0, 0, None, 1 << 30);
    nnp.push(("1 MiB deflated, declaring 1 GiB", z));
    // An end-of-central-directory record claiming 65535 entries.
    let mut z = zip_of(&as_refs(zip::CompressionMethod::Stored));
    let eocd = z.windows(4).rposition(|w| w == b"PK\x05\x06").unwrap();
    z[eocd + 8..eocd + 12].copy_from_slice(&[0xff, 0xff, 0xff, 0xff]);
    nnp.push(("central directory claiming 65535 entries", z));
    // A stored network.nntxt of 5000 empty variables: the text member's tree
    // is what sets K for archives.
    let mut text = b"network { name: \"n\" ".to_vec();
    text.extend(b"variable {} ".repeat(5000));
    text.extend(b"}\n");
    let z = zip_of(&[
        ("nnp_version.txt", b"0.1\n", zip::CompressionMethod::Stored),
        ("network.nntxt", &text, zip::CompressionMethod::Stored),
    ]);
    let n = Nnp::parse_with(&z, &ReadOptions::default()).expect("a valid archive");
    assert_eq!(n.networks()[0].variable.len(), 5000);
    nnp.push(("stored network.nntxt of 5000 variables", z));
    for (what, bytes) in &nnp {
        let peak = check_synthetic(Kind::Nnp, what, bytes);
        eprintln!("Nnp {what}: {} bytes, peak {peak}", bytes.len());
    }
}

// ---------------------------------------------------------------------------
// Memory-mapped reads allocate (almost) nothing, whatever the file size.

/// Mapped reads may allocate the index (names, dims, member list) but never
/// the data: 1 MiB covers every file here with room to spare.
const MAPPED_CAP: usize = 1 << 20;

fn check_mapped(what: &str, len: u64, f: impl FnOnce()) -> usize {
    let peak = peak_of(f);
    eprintln!("mapped {what}: {len} bytes on disk, peak {peak}");
    assert!(
        peak <= MAPPED_CAP,
        "mapped {what} ({len} bytes): peak {peak} > {MAPPED_CAP}"
    );
    peak
}

#[test]
fn mapped_reads_allocate_almost_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let big = 16usize << 20;
    let values: Vec<f32> = (0..big / 4).map(|i| i as f32).collect();
    let t = Tensor::from_values([big / 4 / 1024, 1024], &values).unwrap();
    drop(values);

    // The large goldens.
    let large = testdata().join("cvm/large_1mb.params");
    drop(Params::open(&large));
    check_mapped(
        "cvm/large_1mb.params",
        large.metadata().unwrap().len(),
        || {
            let p = Params::open(&large).unwrap();
            assert!(p.iter().next().is_some());
        },
    );
    let pr = testdata().join("primitiv/tensor_128x129_bin32.data");
    check_mapped(
        "primitiv/tensor_128x129_bin32.data",
        pr.metadata().unwrap().len(),
        || {
            primitiv::File::open(&pr).unwrap();
        },
    );
    let tsm = testdata().join("tennis/py_convnet.tsm");
    check_mapped(
        "tennis/py_convnet.tsm",
        tsm.metadata().unwrap().len(),
        || {
            Module::open(&tsm).unwrap();
        },
    );
    for name in ["loop_nested_params.h5", "train_with_solver_state.nnp"] {
        let p = testdata().join("nnabla").join(name);
        drop(Nnp::open(testdata().join("nnabla/mlp.nnp")));
        let len = p.metadata().unwrap().len();
        check_mapped(name, len, || {
            if name.ends_with(".h5") {
                h5::open(&p).unwrap();
            } else {
                Nnp::open(&p).unwrap();
            }
        });
    }

    // 16 MiB files written by each crate's writer.
    let cvm = dir.path().join("big.params");
    mlformats::cvm::save(&cvm, [("w", &t)], &CvmWriteOptions::default()).unwrap();
    check_mapped("16 MiB .params (open)", big as u64, || {
        let p = Params::open(&cvm).unwrap();
        assert_eq!(p.get("w").unwrap().bytes().len(), big);
    });
    check_mapped("16 MiB .params (from_map)", big as u64, || {
        let map = MappedFile::open(&cvm).unwrap();
        let p = Params::from_map(&map, &mlformats::cvm::ReadOptions::default()).unwrap();
        assert_eq!(p.len(), 1);
    });

    let pt = primitiv::Tensor::from_core(&t).unwrap();
    let p = primitiv::Parameter::new(pt).unwrap();
    let mut m = primitiv::Model::new();
    m.insert(["enc", "w"], p);
    let pf = dir.path().join("big.data");
    m.save(&pf, &primitiv::WriteOptions::default()).unwrap();
    check_mapped("16 MiB primitiv model (load)", big as u64, || {
        let f = primitiv::File::open(&pf).unwrap();
        assert_eq!(f.data_type(), primitiv::DataType::Model);
    });

    let mut b = ModuleBuilder::new();
    let x = b.input("x");
    let c = b.constant("c", t.clone()).unwrap();
    let y = b.op("add", "y", &[x, c]).unwrap();
    b.output(y).unwrap();
    let tf = dir.path().join("big.tsm");
    b.build()
        .unwrap()
        .save(&tf, &TsmWriteOptions::default())
        .unwrap();
    check_mapped("16 MiB .tsm (open)", big as u64, || {
        let m = Module::open(&tf).unwrap();
        assert_eq!(m.len(), 3);
    });

    let params: ParameterSet = [Parameter::new("fc/W", t.clone(), true)]
        .into_iter()
        .collect();
    let hf = dir.path().join("big.h5");
    h5::save(&hf, params.iter()).unwrap();
    check_mapped("16 MiB .h5 (h5::open)", big as u64, || {
        let ps = h5::open(&hf).unwrap();
        assert!(ps[0].tensor.storage().is_zero_copy());
    });
    let model = mlformats::nnabla::text::parse("network { name: \"net\" batch_size: 1 }").unwrap();
    let nnp = Nnp::new(model, params).unwrap();
    for format in [ParamFormat::H5, ParamFormat::Protobuf] {
        let f = dir.path().join(format!("big_{format:?}.nnp"));
        nnp.save(
            &f,
            &mlformats::nnp::WriteOptions::default().with_param_format(format),
        )
        .unwrap();
        check_mapped(
            &format!("16 MiB .nnp with {format:?} (open)"),
            big as u64,
            || {
                let n = Nnp::open(&f).unwrap();
                assert!(
                    n.parameters()
                        .get("fc/W")
                        .unwrap()
                        .tensor
                        .storage()
                        .is_zero_copy()
                );
            },
        );
    }
    let pbf = dir.path().join("big.protobuf");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&pbf).unwrap());
    mlformats::nnabla::binary::write_parameters(&mut out, [("fc/W", &t, true)]).unwrap();
    drop(out);
    check_mapped(
        "16 MiB .protobuf (mapped, borrowed decode)",
        big as u64,
        || {
            let map = MappedFile::open(&pbf).unwrap();
            let f = binary::parse(map.as_bytes()).unwrap();
            assert_eq!(f.parameters[0].tensor.bytes().len(), big);
        },
    );
}
