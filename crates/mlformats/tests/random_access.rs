//! The random-access path (a `Document` opened at a `ReadAt`, by slices).
//! `Document` reads cvm `.params`, safetensors, primitiv, `.tsm`, `.npz` and
//! ONNX through the same index, so for those six the whole-file path is no
//! second reader: on a sample of each (some `.params` and each converted to
//! the five others, testdata/compressed, every 50th `.tsm`, `.onnx`,
//! primitiv file) every tensor read by slices at odd places, backwards and
//! front to back is the whole tensor's bytes; damaged copies (a stride over
//! each kind of damage) are errors, never panics. NNabla's protobuf
//! parameters keep two readers (`nnabla-proto`/`nnp-archive`, and
//! `random_access/nnp.rs`): `.nnp` rewritten with a stored, text-deflated or
//! all-deflated `parameter.protobuf`, that member alone, the `.protobuf` of
//! testdata/: the same names, dtypes, shapes, fields, bytes, summary,
//! metadata and graph both ways; damaged copies fail exactly where the
//! whole-file path fails (a deflated member possibly at a read), never
//! panic. Also: hand-made ONNX initializers (known values), fixtures
//! converted by slices as `convert_document` converts them (two drivers), a
//! deflated tensor inflated once, a wrong CRC-32 found at the member's end,
//! a document read by slices shared between threads.
#![cfg(all(
    feature = "cvm",
    feature = "safetensors",
    feature = "npz",
    feature = "nnp",
    feature = "tennis"
))]

use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;

use mlformats::{Document, Format};

mod common;
use common::{Counting, by_slices, read_tensor};

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// The files of `ext` under testdata/, sorted, every `every`-th.
fn every(ext: &str, every: usize) -> Vec<PathBuf> {
    let mut v = Vec::new();
    files(&testdata(), ext, &mut v);
    v.sort();
    v.into_iter().step_by(every).collect()
}

fn named(p: &Path) -> (String, Vec<u8>) {
    let name = p.file_name().unwrap().to_string_lossy().into_owned();
    (name, std::fs::read(p).unwrap())
}

/// A sample of the six formats `Document` reads through the index: every
/// 3rd `.params` of testdata/ and each of them the library saves as
/// `.safetensors`, `.npz` (and that again with its members deflated),
/// `.tsm`, `.onnx` and primitiv (in `tmp`); the `.npz` of
/// testdata/compressed and every 300th other one; every 50th `.tsm`,
/// `.onnx` and primitiv file.
fn one_reader_samples(tmp: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for p in every("params", 3) {
        let (name, bytes) = named(&p);
        let doc = Document::open(&p).unwrap();
        for ext in ["safetensors", "npz", "tsm", "onnx", "data"] {
            let st = tmp.join(format!("{name}.{ext}"));
            if mlformats::save(&st, doc.tensors()).is_ok() {
                let bytes = std::fs::read(&st).unwrap();
                if ext == "npz" {
                    let z = deflate_members(&bytes, |_| true);
                    out.push((format!("{name}.deflated.npz"), z));
                }
                out.push((format!("{name}.{ext}"), bytes));
            }
        }
        out.push((name, bytes));
    }
    let mut npz = Vec::new();
    files(&testdata(), "npz", &mut npz);
    npz.sort();
    let (own, other): (Vec<_>, Vec<_>) = npz
        .into_iter()
        .partition(|p| p.starts_with(testdata().join("compressed")));
    let mut paths = own;
    paths.extend(other.into_iter().step_by(300));
    paths.extend(every("tsm", 50));
    paths.extend(every("onnx", 50));
    let mut primitiv = Vec::new();
    files(&testdata().join("primitiv"), "data", &mut primitiv);
    primitiv.sort();
    paths.extend(primitiv.into_iter().step_by(50));
    out.extend(paths.iter().map(|p| named(p)));
    out
}

/// The NNabla samples (two readers): the `.protobuf` of testdata/, and
/// the `.nnp` of testdata/nnabla and every 8th of testdata/onnx: each as
/// it is (its `.h5` parameters located when stored, see
/// random_access_h5.rs; read whole when deflated), with its parameters
/// rewritten into a stored `parameter.protobuf` (that member also as a
/// file of its own), that again with its `network.nntxt` deflated, and
/// with every member deflated.
fn nnabla_samples() -> Vec<(String, Vec<u8>)> {
    let mut nnp = Vec::new();
    files(&testdata().join("nnabla"), "nnp", &mut nnp);
    nnp.sort();
    let mut onnx = Vec::new();
    files(&testdata().join("onnx"), "nnp", &mut onnx);
    onnx.sort();
    nnp.extend(onnx.into_iter().step_by(8));
    let mut out: Vec<_> = every("protobuf", 1).iter().map(|p| named(p)).collect();
    for p in nnp {
        let (name, bytes) = named(&p);
        let opts = nnp_archive::WriteOptions::default()
            .with_param_format(nnp_archive::ParamFormat::Protobuf);
        if let Ok(model) = nnp_archive::Nnp::parse(&bytes)
            && let Ok(pb) = model.write(Cursor::new(Vec::new()), &opts)
        {
            let pb = pb.into_inner();
            // its parameter.protobuf, as a standalone file
            let mut zin = zip::ZipArchive::new(Cursor::new(&pb)).unwrap();
            if let Ok(mut f) = zin.by_name("parameter.protobuf") {
                let mut data = Vec::new();
                f.read_to_end(&mut data).unwrap();
                out.push((format!("{name}.param.protobuf"), data));
            }
            out.push((format!("{name}.pb.nnp"), pb.clone()));
            out.push((format!("{name}.pbz.nnp"), deflate_text(&pb)));
            let all = deflate_members(&pb, |_| true);
            out.push((format!("{name}.pbd.nnp"), all));
        }
        out.push((name, bytes));
    }
    let pb = out.iter().filter(|(n, _)| n.ends_with(".pb.nnp")).count();
    assert!(pb >= 8, "{pb} .nnp rewritten with .protobuf parameters");
    out
}

/// An NNabla sample whose tensors are read by random access: an `.nnp`
/// whose parameters are in a stored or deflated `.protobuf` member, a
/// `.protobuf`.
fn by_offset(name: &str) -> bool {
    name.ends_with(".pb.nnp")
        || name.ends_with(".pbz.nnp")
        || name.ends_with(".pbd.nnp")
        || name == "mlp_pbparam.nnp"
        || name == "params_deflated.nnp"
        || name.ends_with(".protobuf")
}

/// A sample with deflated members holding tensors: read by random access,
/// a damaged stream may be found only when a read reaches it.
fn deflated(name: &str) -> bool {
    name.ends_with(".pbd.nnp")
        || name.ends_with("deflated.nnp")
        || name.ends_with("compressed.npz")
        || name.ends_with(".deflated.npz")
        || name == "mixed.npz"
}

/// The archive `bytes` again, its `.nntxt` members deflated.
fn deflate_text(bytes: &[u8]) -> Vec<u8> {
    deflate_members(bytes, |name| name.ends_with(".nntxt"))
}

/// The archive `bytes` again, the members `which` names deflated.
fn deflate_members(bytes: &[u8], which: impl Fn(&str) -> bool) -> Vec<u8> {
    let mut zin = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut zout = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..zin.len() {
        let mut f = zin.by_index(i).unwrap();
        let name = f.name().unwrap().to_string();
        let method = if which(&name) {
            zip::CompressionMethod::Deflated
        } else {
            zip::CompressionMethod::Stored
        };
        let o = zip::write::SimpleFileOptions::default().compression_method(method);
        let mut data = Vec::new();
        f.read_to_end(&mut data).unwrap();
        zout.start_file(name, o).unwrap();
        zout.write_all(&data).unwrap();
    }
    zout.finish().unwrap().into_inner()
}

/// Both NNabla readers on `bytes`: equal when the whole-file path reads
/// it, both errors when it does not. Returns whether it was read.
fn same(name: &str, bytes: &[u8]) -> bool {
    same_with(name, bytes, false)
}

/// [`same`], and with `slices` every tensor read by slices in several
/// orders too.
fn same_with(name: &str, bytes: &[u8], slices: bool) -> bool {
    let path = Path::new(name);
    let whole = Document::from_bytes(bytes.to_vec(), Some(path), None);
    let index = by_slices(bytes, Some(path), &Default::default());
    match (whole, index) {
        (Ok(doc), Ok(Some(index))) => {
            assert!(
                matches!(doc.format(), Format::NnablaNnp | Format::NnablaProtobuf),
                "{name}: {}",
                doc.format()
            );
            // the whole graph, as text (attributes may hold NaN)
            let graph = |g: Option<&tensor_core::graph::ModelGraph>| format!("{g:?}");
            assert!(
                graph(index.graph()) == graph(doc.graph()),
                "{name}: the graphs differ"
            );
            assert_eq!(index.format(), doc.format(), "{name}");
            assert_eq!(index.kind(), doc.kind(), "{name}");
            assert_eq!(index.file_size(), doc.file_size(), "{name}");
            assert_eq!(index.metadata(), doc.metadata(), "{name}");
            assert_eq!(index.summary(), doc.summary(), "{name}");
            assert_eq!(index.len(), doc.len(), "{name}");
            for (i, (t, s)) in index.entries().iter().zip(doc.stored()).enumerate() {
                let want = doc.tensor(&s.name).unwrap();
                assert_eq!(t.name(), s.name, "{name}");
                assert_eq!(t.stored().stored_name, s.stored_name, "{name}");
                assert_eq!(t.stored().extras, s.extras, "{name}");
                assert_eq!(t.stored().shape, s.shape, "{name}");
                assert_eq!(t.dims(), want.dims(), "{name}");
                assert_eq!(t.dtype(), want.dtype(), "{name}");
                assert_eq!(t.order(), want.order(), "{name}");
                assert_eq!(t.byte_len(), want.bytes().len() as u64, "{name}");
                let got = read_tensor(&index, i).unwrap();
                assert_eq!(got.bytes(), want.bytes(), "{name} {}", s.name);
                assert_eq!(got.dims(), want.dims(), "{name} {}", s.name);
                // a slice in the middle is the same elements
                let n = t.numel();
                let mut buf = Vec::new();
                let part = index.read_elements(i, n / 3, 5, &mut buf).unwrap();
                let size = t.dtype().size();
                let from = (n / 3) as usize * size;
                let to = ((n / 3 + 5).min(n)) as usize * size;
                assert_eq!(part.bytes(), &want.bytes()[from..to], "{name} {}", s.name);
                if slices {
                    slices_are_the_bytes(&index, i, want.bytes(), name);
                }
            }
            true
        }
        // a deflated member is inflated as it is read: damage past the
        // headers is found when a read reaches it
        (Err(e), Ok(Some(index)))
            if deflated(name) || index.entries().iter().any(|t| t.is_deflated()) =>
        {
            let fails = (0..index.len()).any(|i| read_tensor(&index, i).is_err());
            assert!(
                fails,
                "{name}: the whole-file path says {e}, every tensor reads by slices"
            );
            false
        }
        // `None` sends the caller to the whole-file path, which refuses it
        (Err(_), Err(_) | Ok(None)) => false,
        (Err(e), Ok(i)) => panic!("{name}: the whole-file path says {e}, the index {i:?}"),
        (Ok(doc), Ok(None)) => {
            // only archives with parameters elsewhere than in a `.protobuf`
            // member (.nnp) and some .protobuf layouts are read whole
            assert!(
                matches!(doc.format(), Format::NnablaNnp | Format::NnablaProtobuf),
                "{name}: not read by random access"
            );
            false
        }
        (Ok(_), Err(e)) => panic!("{name}: only the random-access path refuses it: {e}"),
    }
}

/// A file of the six formats `Document` reads through the index: opened
/// by slices, every tensor read at odd places, backwards and front to
/// back is the bytes of the whole tensor. Returns how many tensors.
fn slices_read_the_whole_tensors(name: &str, bytes: &[u8]) -> usize {
    let path = Path::new(name);
    let doc = Document::from_bytes(bytes.to_vec(), Some(path), None)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let index = by_slices(bytes, Some(path), &Default::default())
        .unwrap()
        .unwrap_or_else(|| panic!("{name}: not read by random access"));
    assert_eq!(index.len(), doc.len(), "{name}");
    for (i, t) in index.entries().iter().enumerate() {
        let want = doc.tensor(t.name()).unwrap();
        assert_eq!(t.byte_len(), want.bytes().len() as u64, "{name}");
        slices_are_the_bytes(&index, i, want.bytes(), name);
    }
    doc.len()
}

/// A damaged file of the six formats `Document` reads through the index:
/// no panic opening it either way or reading any tensor by slices; what
/// opens whole reads by slices.
fn survives(name: &str, bytes: &[u8]) {
    let path = Path::new(name);
    let whole = Document::from_bytes(bytes.to_vec(), Some(path), None);
    let index = by_slices(bytes, Some(path), &Default::default());
    let reads = match &index {
        Ok(Some(index)) => (0..index.len()).all(|i| read_tensor(index, i).is_ok()),
        _ => false,
    };
    if let Ok(doc) = whole {
        assert!(
            reads || doc.is_empty(),
            "{name}: read whole, not by slices: {:?}",
            index.map(|i| i.is_some())
        );
    }
}

/// Tensor `i` read by slices: at odd places and counts, backwards (each
/// read behind the last), and front to back in odd steps, the bytes
/// `want` of the whole tensor.
fn slices_are_the_bytes(index: &Document, i: usize, want: &[u8], name: &str) {
    let t = &index.entries()[i];
    let n = t.numel();
    let size = t.dtype().size();
    let mut buf = Vec::new();
    let mut check = |start: u64, count: u64| {
        let part = index.read_elements(i, start, count, &mut buf).unwrap();
        let from = (start.min(n) as usize) * size;
        let to = ((start + count).min(n) as usize) * size;
        assert!(
            part.bytes() == &want[from..to],
            "{name} {}: {count} from {start}",
            t.name()
        );
    };
    for (start, count) in [(n, 3), (n + 9, 1), (0, 0), (n.saturating_sub(1), 5), (1, 1)] {
        check(start, count);
    }
    // backwards
    let step = n / 5 + 1;
    let mut at = n;
    while at > 0 {
        at = at.saturating_sub(step);
        check(at, step);
    }
    // front to back, in odd steps
    let step = (n / 7).max(1) | 1;
    let mut at = 0;
    while at < n {
        check(at, step);
        at += step;
    }
}

#[test]
fn tensors_read_by_slices_are_the_whole_tensors() {
    let tmp = tempfile::tempdir().unwrap();
    let mut per_ext = std::collections::BTreeMap::<String, usize>::new();
    for (name, bytes) in one_reader_samples(tmp.path()) {
        // (an empty .params is read, and has nothing to slice)
        let n = slices_read_the_whole_tensors(&name, &bytes);
        let ext = name.rsplit('.').next().unwrap().to_string();
        *per_ext.entry(ext).or_default() += n;
    }
    for ext in ["params", "safetensors", "npz", "tsm", "onnx", "data"] {
        let n = per_ext.get(ext).copied().unwrap_or(0);
        assert!(n >= 5, "{ext}: {n} tensors read by slices ({per_ext:?})");
    }
}

#[test]
fn nnabla_protobuf_parameters_by_slices_read_what_the_whole_file_path_reads() {
    let (mut nnp, mut protobuf) = (0, 0);
    for (name, bytes) in &nnabla_samples() {
        let ok = same_with(name, bytes, true);
        protobuf += (ok && name.ends_with(".protobuf")) as usize;
        nnp += (ok && name.ends_with(".nnp")) as usize;
        // every archive with stored .protobuf parameters is read by offset
        if by_offset(name) {
            assert!(ok, "{name}: not read by random access");
        }
    }
    assert!(nnp >= 15, "{nnp} .nnp read");
    assert!(protobuf >= 8, "{protobuf} .protobuf read");
}

/// Positions `0..len` to damage: every `dense`-th of the first `head`
/// (the headers), then about `spread` more all along the file.
fn spots(len: usize, head: usize, dense: usize, spread: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..len.min(head)).step_by(dense).collect();
    v.extend((head..len).step_by(len / spread + 1));
    v
}

/// Deterministic damage to `bytes`, each copy handed to `check`: cut at
/// header positions and all along the file, a byte flipped (three ways)
/// in the header and all along the file, 8 bytes of 0xff (a huge claimed
/// size) in the header. Returns the number of copies.
fn damage(bytes: &[u8], spread: usize, check: &mut dyn FnMut(&[u8])) -> usize {
    let len = bytes.len();
    let mut cases = 0;
    let mut cuts = spots(len, 300, 5, spread);
    cuts.extend([len / 2, len.saturating_sub(1)]);
    for cut in cuts {
        check(&bytes[..cut]);
        cases += 1;
    }
    for at in spots(len, 200, 4, spread) {
        for x in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.to_vec();
            b[at] ^= x;
            check(&b);
            cases += 1;
        }
    }
    for at in (8..len.min(200)).step_by(8) {
        let mut b = bytes.to_vec();
        b[at..(at + 8).min(len)].fill(0xff);
        check(&b);
        cases += 1;
    }
    cases
}

#[test]
fn damaged_files_of_one_reader_are_errors_never_panics() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cases = 0;
    for (name, bytes) in one_reader_samples(tmp.path()).into_iter().step_by(2) {
        // a deflated member's stream anywhere, the .tsm and .onnx whole
        // structure: damaged all along
        let spread = if deflated(&name) || name.ends_with(".tsm") || name.ends_with(".onnx") {
            60
        } else {
            10
        };
        cases += damage(&bytes, spread, &mut |b| survives(&name, b));
    }
    eprintln!("{cases} damaged copies");
    assert!(cases > 3000, "{cases}");
}

#[test]
fn nnabla_protobuf_parameters_by_slices_refuse_what_the_whole_file_path_refuses() {
    let mut cases = 0;
    // the .nnp read whole (.h5 parameters) are tested by their own crate;
    // of the others, two of each kind (they share a layout): a .protobuf,
    // a rewritten archive's parameter.protobuf, the archive stored, with
    // its network deflated, with every member deflated
    let kinds = [
        ".param.protobuf",
        ".protobuf",
        ".pb.nnp",
        ".pbz.nnp",
        ".pbd.nnp",
        "pbparam.nnp",
    ];
    let mut taken = [0; 6];
    let mut samples = Vec::new();
    for (name, bytes) in nnabla_samples() {
        if let Some(k) = kinds.iter().position(|k| name.ends_with(k))
            && taken[k] < 2
        {
            taken[k] += 1;
            samples.push((name, bytes));
        }
    }
    assert_eq!(taken, [2, 2, 2, 2, 2, 1], "samples of each kind");
    for (name, bytes) in &samples {
        let len = bytes.len();
        // a .protobuf's parameters follow one another, a deflated member's
        // stream: all along the file
        let spread = if deflated(name) || name.ends_with(".protobuf") {
            60
        } else {
            10
        };
        cases += damage(bytes, spread, &mut |b| {
            same(name, b);
        });
        // an .nnp's structure is also in its .protobuf members and its
        // central directory: their first bytes, and the last ones
        if name.ends_with(".nnp") {
            let mut at: Vec<usize> = (len.saturating_sub(250)..len).step_by(5).collect();
            let members = nnp_archive::archive::list(Cursor::new(bytes), &Default::default());
            for m in members.unwrap() {
                if m.name.ends_with(".protobuf") {
                    let s = m.data_start as usize;
                    at.extend((s..(s + 400).min(len)).step_by(7));
                    // a parameter's header after the first one's data
                    at.extend((s + 400..len.min(s + m.size as usize)).step_by(97));
                }
            }
            for at in at {
                for x in [0x01u8, 0x80, 0xff] {
                    let mut b = bytes.clone();
                    b[at] ^= x;
                    same(name, &b);
                    cases += 1;
                }
            }
        }
    }
    eprintln!("{cases} damaged copies");
    assert!(cases > 1000, "{cases}");
}

#[test]
fn other_formats_are_not_read_by_random_access() {
    // NNabla text is parsed whole by the index (its tensors held)
    let p = testdata().join("nnabla/convnet.nntxt");
    let bytes = std::fs::read(&p).unwrap();
    let index = by_slices(&bytes[..], Some(&p), &Default::default())
        .unwrap()
        .unwrap();
    let doc = Document::from_bytes(bytes.clone(), Some(&p), None).unwrap();
    assert_eq!(index.summary(), doc.summary());
    // (a network without parameters: the graph is what it holds)
    assert!(index.graph().is_some_and(|g| !g.graphs.is_empty()));
    let e = Document::open_at(Vec::new(), None, None, &Default::default()).unwrap_err();
    assert!(matches!(e, mlformats::Error::Empty), "{e:?}");
}

/// Protobuf encoding for the hand-made ONNX models below.
fn field(out: &mut Vec<u8>, num: u64, wt: u64, payload: &[u8]) {
    let varint = |out: &mut Vec<u8>, mut v: u64| {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    };
    varint(out, num << 3 | wt);
    if wt == 2 {
        varint(out, payload.len() as u64);
        out.extend_from_slice(payload);
    } else {
        varint(out, payload[0] as u64);
    }
}

/// A model whose graph has one initializer `w` of 2 f32 (1.5, -2): its
/// `TensorProto` fields after the name, dims and type given by `data`.
fn onnx_with(data: &[u8]) -> Vec<u8> {
    let mut t = Vec::new();
    field(&mut t, 1, 0, &[2]); // dims
    field(&mut t, 2, 0, &[1]); // FLOAT
    field(&mut t, 8, 2, b"w");
    t.extend_from_slice(data);
    let mut g = Vec::new();
    field(&mut g, 2, 2, b"g");
    field(&mut g, 5, 2, &t);
    let mut m = Vec::new();
    field(&mut m, 1, 0, &[8]); // ir_version
    field(&mut m, 7, 2, &g);
    m
}

#[test]
fn onnx_initializers_in_typed_fields_are_read_by_slices() {
    let values: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let name = Path::new("m.onnx");
    // raw_data and float_data (packed; more in random_access_onnx_typed.rs):
    // whole and by slices, the values written
    let mut raw = Vec::new();
    field(&mut raw, 9, 2, &values);
    let mut typed = Vec::new();
    field(&mut typed, 4, 2, &values);
    for data in [&raw, &typed] {
        let bytes = onnx_with(data);
        let doc = Document::from_bytes(bytes.clone(), Some(name), None).unwrap();
        assert_eq!(
            doc.tensor("w").unwrap().to_vec::<f32>().unwrap(),
            [1.5, -2.0]
        );
        let index = by_slices(&bytes[..], Some(name), &Default::default()).unwrap();
        let index = index.unwrap();
        assert_eq!(
            read_tensor(&index, 0).unwrap().to_vec::<f32>().unwrap(),
            [1.5, -2.0]
        );
        assert_eq!(slices_read_the_whole_tensors("m.onnx", &bytes), 1);
    }
    // raw_data with data_location EXTERNAL: refused
    let mut ext = raw.clone();
    field(&mut ext, 14, 0, &[1]);
    let bytes = onnx_with(&ext);
    assert!(by_slices(&bytes[..], Some(name), &Default::default()).is_err());
    assert!(Document::from_bytes(bytes, Some(name), None).is_err());
    // raw_data of the wrong length: refused
    let mut short = Vec::new();
    field(&mut short, 9, 2, &values[..6]);
    let bytes = onnx_with(&short);
    assert!(by_slices(&bytes[..], Some(name), &Default::default()).is_err());
    assert!(Document::from_bytes(bytes, Some(name), None).is_err());
}

/// The fixtures of testdata/compressed: deflated and big-endian `.npz`
/// members, a deflated `parameter.protobuf`.
const COMPRESSED: [&str; 5] = [
    "savez_compressed.npz",
    "big_endian.npz",
    "big_endian_compressed.npz",
    "mixed.npz",
    "params_deflated.nnp",
];

#[test]
fn deflated_and_big_endian_files_convert_by_slices_like_whole() {
    use mlformats::{ConvertOptions, DType};
    let mut converted = 0;
    for name in COMPRESSED {
        let bytes = std::fs::read(testdata().join("compressed").join(name)).unwrap();
        let path = Path::new(name);
        let index = by_slices(&bytes[..], Some(path), &Default::default())
            .unwrap()
            .unwrap();
        assert_eq!(
            index.entries().iter().any(|t| t.is_deflated()),
            name != "big_endian.npz",
            "{name}"
        );
        let doc = Document::from_bytes(bytes.clone(), Some(path), None).unwrap();
        for &target in mlformats::SLICED_TARGETS {
            for opts in [
                ConvertOptions::new(),
                ConvertOptions::new().dtype(DType::F16),
                ConvertOptions::new().keep_order(true),
                ConvertOptions::new().exclude("c*").exclude("b1"),
            ] {
                let mut out = Cursor::new(Vec::new());
                let sliced = mlformats::convert_sliced(&index, target, &opts, &mut out);
                let whole = mlformats::convert_document_to_bytes(&doc, target, &opts);
                match (sliced, whole) {
                    (Ok(_), Ok((whole, _))) => {
                        assert!(out.into_inner() == whole, "{name} -> {target}: other bytes");
                        converted += 1;
                    }
                    (Err(_), Err(_)) => {}
                    // what needs the whole model is refused by slices, saying so
                    (Err(s), Ok(_)) if s.to_string().contains("a slice at a time") => {}
                    (s, w) => panic!(
                        "{name} -> {target}: by slices {:?}, whole {:?}",
                        s.err(),
                        w.err()
                    ),
                }
            }
        }
    }
    assert!(converted >= 20, "{converted}");
}

#[test]
fn a_deflated_tensor_read_front_to_back_is_inflated_once() {
    for (file, member, tensor) in [
        ("savez_compressed.npz", "big.npy", "big"),
        ("big_endian_compressed.npz", "big.npy", "big"),
        (
            "params_deflated.nnp",
            "parameter.protobuf",
            "affine1/affine/W",
        ),
    ] {
        let bytes = std::fs::read(testdata().join("compressed").join(file)).unwrap();
        let members = nnp_archive::archive::list(Cursor::new(&bytes), &Default::default()).unwrap();
        let m = members.iter().find(|m| m.name == member).unwrap();
        let r = Counting::new(bytes.clone());
        let counted = r.read();
        let index = Document::open_at(r, Some(Path::new(file)), None, &Default::default()).unwrap();
        let i = index.position(tensor).unwrap();
        let t = &index.entries()[i];
        assert!(t.is_deflated());
        let doc = Document::from_bytes(bytes.clone(), Some(Path::new(file)), None).unwrap();
        let want = doc.tensor(tensor).unwrap().bytes().to_vec();
        // in slices of 1000 elements: the member's compressed bytes read
        // once (the first pass goes on from the header read at opening,
        // the second starts again from the start)
        for pass in 0..2 {
            counted.store(0, Relaxed);
            let mut got = Vec::new();
            let mut buf = Vec::new();
            let mut at = 0;
            while at < t.numel() {
                let part = index.read_elements(i, at, 1000, &mut buf).unwrap();
                got.extend_from_slice(part.bytes());
                at += 1000;
            }
            assert!(got == want, "{file} {tensor}");
            let read = counted.load(Relaxed);
            if pass == 0 {
                assert!(read <= m.compressed_size, "{file} {tensor}: {read}");
            } else {
                assert_eq!(read, m.compressed_size, "{file} {tensor}");
            }
        }
    }
}

#[test]
fn a_wrong_crc_is_found_when_a_read_reaches_the_members_end() {
    let name = "savez_compressed.npz";
    let mut bytes = std::fs::read(testdata().join("compressed").join(name)).unwrap();
    let members = nnp_archive::archive::list(Cursor::new(&bytes), &Default::default()).unwrap();
    let m = members.iter().find(|m| m.name == "big.npy").unwrap();
    // the CRC-32 in the local header and the central directory, both changed
    let crc = m.crc32.to_le_bytes();
    let mut n = 0;
    for at in 0..bytes.len() - 4 {
        if bytes[at..at + 4] == crc {
            bytes[at] ^= 1;
            n += 1;
        }
    }
    assert_eq!(n, 2);
    let path = Path::new(name);
    let whole = Document::from_bytes(bytes.clone(), Some(path), None).unwrap_err();
    assert!(whole.to_string().contains("checksum"), "{whole}");
    let index = by_slices(&bytes[..], Some(path), &Default::default())
        .unwrap()
        .unwrap();
    let i = index.position("big").unwrap();
    let mut buf = Vec::new();
    // the first elements read; the last ones reach the end: the error
    assert!(index.read_elements(i, 0, 10, &mut buf).is_ok());
    let e = index.read_elements(i, 99_990, 10, &mut buf).unwrap_err();
    assert!(
        mlformats::chain_message(&e).ends_with(&mlformats::chain_message(&whole)),
        "{e}"
    );
    // every other tensor reads
    for (k, t) in index.entries().iter().enumerate() {
        if t.name() != "big" {
            read_tensor(&index, k).unwrap();
        }
    }
}

#[test]
fn a_document_read_by_slices_is_shared_between_threads() {
    fn shared<T: Send + Sync + std::fmt::Debug>() {}
    shared::<Document>();
    // the kept inflating places are shared; both threads read the same bytes
    let name = "savez_compressed.npz";
    let bytes = std::fs::read(testdata().join("compressed").join(name)).unwrap();
    let doc = by_slices(&bytes[..], Some(Path::new(name)), &Default::default())
        .unwrap()
        .unwrap();
    let i = doc.position("big").unwrap();
    assert!(doc.entry("big").unwrap().is_deflated());
    let read = |start, count| {
        let mut buf = Vec::new();
        doc.read_elements(i, start, count, &mut buf).unwrap();
        buf
    };
    let (x, y) = std::thread::scope(|s| {
        let x = s.spawn(|| read(50_000, 10));
        let y = s.spawn(|| read(40_000, 10_010));
        (x.join().unwrap(), y.join().unwrap())
    });
    let size = doc.entry("big").unwrap().dtype().size();
    assert_eq!(x, &y[(50_000 - 40_000) * size..]);
}
