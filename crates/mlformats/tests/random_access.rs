//! The random-access path (`mlformats::random_access::FileIndex`) against
//! the whole-file path (`Document`): on every `.params` and `.safetensors`
//! of `testdata/`, the `.npz` of `testdata/compressed` (deflated,
//! big-endian, mixed) and some others, and each `.params` converted to
//! `.safetensors` and `.npz` (and that `.npz` again with its members
//! deflated), the same names, dtypes, shapes, stored fields and bytes (read
//! whole, and by slices at odd places, backwards and front to back); each
//! `.nnp` of `testdata/` with stored or deflated `.protobuf` parameters,
//! and each `.nnp` of `testdata/nnabla` and some of `testdata/onnx`
//! rewritten with its parameters in a stored `parameter.protobuf` (and
//! again with its network deflated, and with every member deflated): the
//! same and the same graph; every `.tsm` of `testdata/` (and each `.params`
//! converted to `.tsm`), and every `.protobuf` (with the
//! `parameter.protobuf` of each rewritten `.nnp` as a file of its own),
//! and every `.onnx` (and each `.params` converted to `.onnx`; their
//! initializers in `raw_data` or in typed fields, see also
//! random_access_onnx_typed.rs): the same and the same graph; every primitiv file of `testdata/primitiv` (and each
//! `.params` converted to primitiv): the same and the same kind and
//! metadata; on truncated and
//! mutated copies, an error exactly where the whole-file path has one (in a
//! deflated member, possibly only when a read reaches the damage), and
//! never a panic; converted by slices (`convert_index`), the bytes
//! `convert_document` writes.
#![cfg(all(
    feature = "cvm",
    feature = "safetensors",
    feature = "npz",
    feature = "nnp",
    feature = "tennis"
))]

use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};

use mlformats::random_access::FileIndex;
use mlformats::{Document, Format};

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

/// Every file of both formats: the `.params` of testdata/ and each one the
/// library converts to `.safetensors` (in `tmp`).
fn samples(tmp: &Path) -> Vec<(String, Vec<u8>)> {
    let mut params = Vec::new();
    files(&testdata(), "params", &mut params);
    files(&testdata(), "safetensors", &mut params);
    files(&testdata(), "tsm", &mut params);
    files(&testdata(), "protobuf", &mut params);
    files(&testdata(), "onnx", &mut params);
    files(&testdata().join("primitiv"), "data", &mut params);
    params.sort();
    // testdata/ holds a thousand small .npz (runtime inputs and outputs):
    // those of testdata/npz and a few others
    let mut npz = Vec::new();
    files(&testdata(), "npz", &mut npz);
    npz.sort();
    let (own, other): (Vec<_>, Vec<_>) = npz
        .into_iter()
        .partition(|p| p.starts_with(testdata().join("compressed")));
    params.extend(own);
    params.extend(other.into_iter().step_by(97));
    assert!(params.len() >= 10, "{} samples", params.len());
    let mut out = nnp_samples();
    for p in params {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if let Ok(doc) = Document::open(&p)
            && doc.format() == Format::CvmParams
        {
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
        }
        out.push((name, std::fs::read(&p).unwrap()));
    }
    out
}

/// The `.nnp` of testdata/nnabla and every 8th of testdata/onnx: each as
/// it is (its `.h5` parameters located when stored, see
/// random_access_h5.rs; read whole when deflated), with its parameters
/// rewritten into a stored `parameter.protobuf`, and that again with its
/// `network.nntxt` deflated.
fn nnp_samples() -> Vec<(String, Vec<u8>)> {
    let mut nnp = Vec::new();
    files(&testdata().join("nnabla"), "nnp", &mut nnp);
    nnp.sort();
    let mut onnx = Vec::new();
    files(&testdata().join("onnx"), "nnp", &mut onnx);
    onnx.sort();
    nnp.extend(onnx.into_iter().step_by(8));
    let mut out = Vec::new();
    for p in nnp {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&p).unwrap();
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

/// A sample whose tensors are read by random access: an `.nnp` whose
/// parameters are in a stored or deflated `.protobuf` member, a
/// `.protobuf`, any `.npz`.
fn by_offset(name: &str) -> bool {
    name.ends_with(".pb.nnp")
        || name.ends_with(".pbz.nnp")
        || name.ends_with(".pbd.nnp")
        || name == "mlp_pbparam.nnp"
        || name == "params_deflated.nnp"
        || name.ends_with(".param.protobuf")
        || name.ends_with(".npz")
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

/// Both paths on `bytes`: equal when the whole-file path reads it, both
/// errors when it does not. Returns whether it was read.
fn same(name: &str, bytes: &[u8]) -> bool {
    same_with(name, bytes, false)
}

/// [`same`], and with `slices` every tensor read by slices in several
/// orders too.
fn same_with(name: &str, bytes: &[u8], slices: bool) -> bool {
    let path = Path::new(name);
    let whole = Document::from_bytes(bytes.to_vec(), Some(path), None);
    let index = FileIndex::open(bytes, Some(path), &Default::default());
    match (whole, index) {
        (Ok(doc), Ok(Some(index))) => {
            assert!(
                matches!(
                    doc.format(),
                    Format::CvmParams
                        | Format::Safetensors
                        | Format::Npz
                        | Format::NnablaNnp
                        | Format::NnablaProtobuf
                        | Format::TennisModule
                        | Format::Onnx
                        | Format::Primitiv
                ),
                "{name}"
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
            assert_eq!(index.tensors().len(), doc.len(), "{name}");
            for (i, (t, s)) in index.tensors().iter().zip(doc.stored()).enumerate() {
                let want = doc.tensor(&s.name).unwrap();
                assert_eq!(t.name(), s.name, "{name}");
                assert_eq!(t.stored().stored_name, s.stored_name, "{name}");
                assert_eq!(t.stored().extras, s.extras, "{name}");
                assert_eq!(t.stored().shape, s.shape, "{name}");
                assert_eq!(t.dims(), want.dims(), "{name}");
                assert_eq!(t.dtype(), want.dtype(), "{name}");
                assert_eq!(t.order(), want.order(), "{name}");
                assert_eq!(t.byte_len(), want.bytes().len() as u64, "{name}");
                let got = index.read_tensor(bytes, i).unwrap();
                assert_eq!(got.bytes(), want.bytes(), "{name} {}", s.name);
                assert_eq!(got.dims(), want.dims(), "{name} {}", s.name);
                // a slice in the middle is the same elements
                let n = t.numel();
                let mut buf = Vec::new();
                let part = index.read_elements(bytes, i, n / 3, 5, &mut buf).unwrap();
                let size = t.dtype().size();
                let from = (n / 3) as usize * size;
                let to = ((n / 3 + 5).min(n)) as usize * size;
                assert_eq!(part.bytes(), &want.bytes()[from..to], "{name} {}", s.name);
                if slices {
                    slices_are_the_bytes(&index, bytes, i, want.bytes(), name);
                }
            }
            true
        }
        // a deflated member is inflated as it is read: damage past the
        // headers is found when a read reaches it
        // (known by name, or by what the index found: the archives of
        // testdata/translate/quant/ were written by np.savez_compressed)
        (Err(e), Ok(Some(index)))
            if deflated(name) || index.tensors().iter().any(|t| t.is_deflated()) =>
        {
            let fails = (0..index.tensors().len()).any(|i| index.read_tensor(bytes, i).is_err());
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
            // member (.nnp) and some .protobuf layouts are read whole (every
            // .onnx and .npz is read by slices, typed fields, deflated and
            // big-endian members too)
            assert!(
                matches!(doc.format(), Format::NnablaNnp | Format::NnablaProtobuf),
                "{name}: not read by random access"
            );
            false
        }
        (Ok(_), Err(e)) => panic!("{name}: only the random-access path refuses it: {e}"),
    }
}

/// Tensor `i` read by slices: at odd places and counts, backwards (each
/// read behind the last), and front to back in odd steps, the bytes
/// `want` of the whole-file path.
fn slices_are_the_bytes(index: &FileIndex, bytes: &[u8], i: usize, want: &[u8], name: &str) {
    let t = &index.tensors()[i];
    let n = t.numel();
    let size = t.dtype().size();
    let mut buf = Vec::new();
    let mut check = |start: u64, count: u64| {
        let part = index
            .read_elements(bytes, i, start, count, &mut buf)
            .unwrap();
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
fn random_access_reads_what_the_whole_file_path_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let samples = samples(tmp.path());
    let mut read = 0;
    let mut npz = 0;
    let mut nnp = 0;
    let mut tsm = 0;
    let mut protobuf = 0;
    let mut onnx = 0;
    let mut primitiv = 0;
    let mut converted = 0;
    for (name, bytes) in &samples {
        let ok = same_with(name, bytes, true);
        primitiv += (ok && name.ends_with(".data")) as usize;
        converted += (ok && name.ends_with(".params.data")) as usize;
        // every primitiv file the whole-file path reads is read by slices
        if name.ends_with(".data") && Document::from_bytes(bytes.clone(), None, None).is_ok() {
            assert!(ok, "{name}: not read by random access");
        }
        onnx += (ok && name.ends_with(".onnx")) as usize;
        protobuf += (ok && name.ends_with(".protobuf")) as usize;
        read += ok as usize;
        npz += (ok && name.ends_with(".npz")) as usize;
        nnp += (ok && name.ends_with(".nnp")) as usize;
        tsm += (ok && name.ends_with(".tsm")) as usize;
        // every archive with stored .protobuf parameters is read by offset
        if by_offset(name) {
            assert!(ok, "{name}: not read by random access");
        }
    }
    assert!(read >= 30, "{read} of {} files read", samples.len());
    assert!(npz >= 20, "{npz} .npz read");
    assert!(nnp >= 15, "{nnp} .nnp read");
    assert!(tsm >= 200, "{tsm} .tsm read");
    assert!(protobuf >= 8, "{protobuf} .protobuf read");
    assert!(onnx >= 20, "{onnx} .onnx read");
    assert!(primitiv >= 40, "{primitiv} primitiv read");
    eprintln!("{converted} .params converted to primitiv read");
    assert!(
        converted >= 1,
        "{converted} .params converted to primitiv read"
    );
}

#[test]
fn random_access_refuses_what_the_whole_file_path_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cases = 0;
    let mut nnp = 0;
    let mut tsm = 0;
    let mut primitiv = 0;
    let mut generated = 0;
    for (name, bytes) in samples(tmp.path()) {
        // the archives deflated here share their layout with the fixtures
        // of testdata/compressed: every 3rd
        if name.ends_with(".deflated.npz") || name.ends_with(".pbd.nnp") {
            generated += 1;
            if generated % 3 != 1 {
                continue;
            }
        }
        // a deflated member's stream, anywhere: a byte changed, and cut
        if deflated(&name) {
            let len = bytes.len();
            for at in (0..len).step_by(len / 200 + 1) {
                for x in [0x01u8, 0x80, 0xff] {
                    let mut b = bytes.clone();
                    b[at] ^= x;
                    same(&name, &b);
                    cases += 1;
                }
            }
        }
        // the primitiv files share a layout (primitiv-format tests the
        // index on every one): every 4th, and every converted .params
        if name.ends_with(".data") {
            primitiv += 1;
            if primitiv % 4 != 1 && !name.ends_with(".params.data") {
                continue;
            }
        }
        // the .tsm (and the .onnx) share a layout (bubble-module tests
        // every golden against its index): every 16th, its whole structure
        if name.ends_with(".tsm") || name.ends_with(".onnx") {
            tsm += 1;
            if tsm % 16 != 1 {
                continue;
            }
            let len = bytes.len();
            for at in (0..len).step_by(len / 150 + 1) {
                for x in [0x01u8, 0x80, 0xff] {
                    let mut b = bytes.clone();
                    b[at] ^= x;
                    same(&name, &b);
                    cases += 1;
                }
                same(&name, &bytes[..at]);
                cases += 1;
            }
        }
        // the .nnp read whole (.h5 parameters) are tested by their own
        // crate; of the others, every second one (they share a layout)
        if name.ends_with(".nnp") {
            nnp += 1;
            if !by_offset(&name) || nnp % 2 == 0 {
                continue;
            }
        }
        let len = bytes.len();
        // truncated at every header position and a few in the data
        let mut cuts: Vec<usize> = (0..len.min(300)).collect();
        cuts.extend([len / 2, len.saturating_sub(1)]);
        for cut in cuts {
            same(&name, &bytes[..cut]);
            cases += 1;
        }
        // a byte of the header changed, one at a time
        for at in 0..len.min(200) {
            for x in [0x01u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[at] ^= x;
                same(&name, &b);
                cases += 1;
            }
        }
        // huge claimed sizes
        for at in (8..len.min(200)).step_by(8) {
            let mut b = bytes.clone();
            b[at..(at + 8).min(len)].fill(0xff);
            same(&name, &b);
            cases += 1;
        }
        // a .protobuf's parameters follow one another: a byte of each
        // header after the first one's data
        if name.ends_with(".protobuf") {
            for at in (200..len).step_by(len / 300 + 1) {
                for x in [0x01u8, 0x80, 0xff] {
                    let mut b = bytes.clone();
                    b[at] ^= x;
                    same(&name, &b);
                    cases += 1;
                }
                same(&name, &bytes[..at]);
                cases += 1;
            }
        }
        // an .nnp's structure is also in its .protobuf members and its
        // central directory: each of their first bytes, and the last ones
        if name.ends_with(".nnp") {
            let mut at: Vec<usize> = (len.saturating_sub(250)..len).collect();
            let members = nnp_archive::archive::list(Cursor::new(&bytes), &Default::default());
            for m in members.unwrap() {
                if m.name.ends_with(".protobuf") {
                    let s = m.data_start as usize;
                    at.extend(s..(s + 400).min(len));
                    // a parameter's header after the first one's data
                    at.extend((s + 400..len.min(s + m.size as usize)).step_by(29));
                }
            }
            for at in at {
                for x in [0x01u8, 0x80, 0xff] {
                    let mut b = bytes.clone();
                    b[at] ^= x;
                    same(&name, &b);
                    cases += 1;
                }
            }
        }
    }
    assert!(cases > 1000, "{cases}");
}

#[test]
fn other_formats_are_not_read_by_random_access() {
    // NNabla text is parsed whole by the index (its tensors held)
    let p = testdata().join("nnabla/convnet.nntxt");
    let bytes = std::fs::read(&p).unwrap();
    let index = FileIndex::open(&bytes[..], Some(&p), &Default::default())
        .unwrap()
        .unwrap();
    let doc = Document::from_bytes(bytes.clone(), Some(&p), None).unwrap();
    assert_eq!(index.summary(), doc.summary());
    // (a network without parameters: the graph is what it holds)
    assert!(index.graph().is_some_and(|g| !g.graphs.is_empty()));
    assert!(
        FileIndex::open(&[][..], None, &Default::default())
            .unwrap()
            .is_none()
    );
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
    // raw_data: by slices, the same tensor
    let mut raw = Vec::new();
    field(&mut raw, 9, 2, &values);
    assert!(same("raw.onnx", &onnx_with(&raw)));
    // float_data (packed): by slices too (more in random_access_onnx_typed.rs)
    let mut typed = Vec::new();
    field(&mut typed, 4, 2, &values);
    let bytes = onnx_with(&typed);
    assert!(same("typed.onnx", &bytes));
    let index = FileIndex::open(&bytes[..], Some(name), &Default::default()).unwrap();
    let index = index.unwrap();
    assert_eq!(
        index
            .read_tensor(&bytes[..], 0)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        [1.5, -2.0]
    );
    // raw_data with data_location EXTERNAL: both refuse it
    let mut ext = raw.clone();
    field(&mut ext, 14, 0, &[1]);
    let bytes = onnx_with(&ext);
    assert!(FileIndex::open(&bytes[..], Some(name), &Default::default()).is_err());
    assert!(Document::from_bytes(bytes, Some(name), None).is_err());
    // raw_data of the wrong length: both refuse it
    let mut short = Vec::new();
    field(&mut short, 9, 2, &values[..6]);
    assert!(!same("short.onnx", &onnx_with(&short)));
    let bytes = onnx_with(&short);
    assert!(FileIndex::open(&bytes[..], Some(name), &Default::default()).is_err());
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
        let index = FileIndex::open(&bytes[..], Some(path), &Default::default())
            .unwrap()
            .unwrap();
        assert_eq!(
            index.tensors().iter().any(|t| t.is_deflated()),
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
                let sliced = mlformats::convert_index(
                    &index,
                    &bytes[..],
                    Some(path),
                    target,
                    &opts,
                    &mut out,
                );
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

/// A `ReadAt` counting the bytes read through it.
struct Counting<'a> {
    bytes: &'a [u8],
    read: std::cell::Cell<u64>,
}

impl mlformats::random_access::ReadAt for Counting<'_> {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.read.set(self.read.get() + buf.len() as u64);
        self.bytes.read_at(offset, buf)
    }
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
        let r = Counting {
            bytes: &bytes,
            read: Default::default(),
        };
        let index = FileIndex::open(&r, Some(Path::new(file)), &Default::default())
            .unwrap()
            .unwrap();
        let i = index.position(tensor).unwrap();
        let t = &index.tensors()[i];
        assert!(t.is_deflated());
        let doc = Document::from_bytes(bytes.clone(), Some(Path::new(file)), None).unwrap();
        let want = doc.tensor(tensor).unwrap().bytes().to_vec();
        // in slices of 1000 elements: the member's compressed bytes read
        // once (the first pass goes on from the header read at opening,
        // the second starts again from the start)
        for pass in 0..2 {
            r.read.set(0);
            let mut got = Vec::new();
            let mut buf = Vec::new();
            let mut at = 0;
            while at < t.numel() {
                let part = index.read_elements(&r, i, at, 1000, &mut buf).unwrap();
                got.extend_from_slice(part.bytes());
                at += 1000;
            }
            assert!(got == want, "{file} {tensor}");
            let read = r.read.get();
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
    let index = FileIndex::open(&bytes[..], Some(path), &Default::default())
        .unwrap()
        .unwrap();
    let i = index.position("big").unwrap();
    let mut buf = Vec::new();
    // the first elements read; the last ones reach the end: the error
    assert!(index.read_elements(&bytes[..], i, 0, 10, &mut buf).is_ok());
    let e = index
        .read_elements(&bytes[..], i, 99_990, 10, &mut buf)
        .unwrap_err();
    assert!(
        mlformats::chain_message(&e).ends_with(&mlformats::chain_message(&whole)),
        "{e}"
    );
    // every other tensor reads
    for (k, t) in index.tensors().iter().enumerate() {
        if t.name() != "big" {
            index.read_tensor(&bytes[..], k).unwrap();
        }
    }
}

#[test]
fn an_index_is_shared_between_threads_and_cloned() {
    fn shared<T: Send + Sync + Clone + std::fmt::Debug>() {}
    shared::<FileIndex>();
    // a clone shares the kept inflating places; both read the same bytes
    let name = "savez_compressed.npz";
    let bytes = std::fs::read(testdata().join("compressed").join(name)).unwrap();
    let index = FileIndex::open(&bytes[..], Some(Path::new(name)), &Default::default())
        .unwrap()
        .unwrap();
    let i = index.position("big").unwrap();
    let copy = index.clone();
    assert!(format!("{copy:?}").contains("big.npy"));
    let mut a = Vec::new();
    let mut b = Vec::new();
    let x = index
        .read_elements(&bytes[..], i, 50_000, 10, &mut a)
        .unwrap();
    let y = copy
        .read_elements(&bytes[..], i, 40_000, 10_010, &mut b)
        .unwrap();
    assert_eq!(x.bytes(), &y.bytes()[40_000..]);
}
