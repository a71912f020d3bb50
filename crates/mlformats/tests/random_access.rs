//! The random-access path (`mlformats::random_access::FileIndex`) against
//! the whole-file path (`Document`): on every `.params` and `.safetensors`
//! of `testdata/`, the `.npz` of `testdata/npz` and some others, and each
//! `.params` converted to `.safetensors` and `.npz`, the same names, dtypes, shapes, stored
//! fields and bytes; each `.nnp` of `testdata/` with stored `.protobuf`
//! parameters, and each `.nnp` of `testdata/nnabla` and some of
//! `testdata/onnx` rewritten with its parameters in a stored
//! `parameter.protobuf` (and again with its network deflated): the same and
//! the same graph; on truncated and mutated copies, an error exactly where
//! the whole-file path has one, and never a panic.
#![cfg(all(
    feature = "cvm",
    feature = "safetensors",
    feature = "npz",
    feature = "nnp"
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
    params.sort();
    // testdata/ holds a thousand small .npz (runtime inputs and outputs):
    // those of testdata/npz and a few others
    let mut npz = Vec::new();
    files(&testdata(), "npz", &mut npz);
    npz.sort();
    let (own, other): (Vec<_>, Vec<_>) = npz
        .into_iter()
        .partition(|p| p.starts_with(testdata().join("npz")));
    params.extend(own);
    params.extend(other.into_iter().step_by(97));
    assert!(params.len() >= 10, "{} samples", params.len());
    let mut out = nnp_samples();
    for p in params {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if let Ok(doc) = Document::open(&p)
            && doc.format() == Format::CvmParams
        {
            for ext in ["safetensors", "npz"] {
                let st = tmp.join(format!("{name}.{ext}"));
                if mlformats::save(&st, doc.tensors()).is_ok() {
                    out.push((format!("{name}.{ext}"), std::fs::read(&st).unwrap()));
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
            out.push((format!("{name}.pb.nnp"), pb.clone()));
            out.push((format!("{name}.pbz.nnp"), deflate_text(&pb)));
        }
        out.push((name, bytes));
    }
    let pb = out.iter().filter(|(n, _)| n.ends_with(".pb.nnp")).count();
    assert!(pb >= 8, "{pb} .nnp rewritten with .protobuf parameters");
    out
}

/// An `.nnp` sample whose parameters are in a stored `.protobuf` member.
fn by_offset(name: &str) -> bool {
    name.ends_with(".pb.nnp") || name.ends_with(".pbz.nnp") || name == "mlp_pbparam.nnp"
}

/// The archive `bytes` again, its `.nntxt` members deflated.
fn deflate_text(bytes: &[u8]) -> Vec<u8> {
    let mut zin = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut zout = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..zin.len() {
        let mut f = zin.by_index(i).unwrap();
        let name = f.name().unwrap().to_string();
        let method = if name.ends_with(".nntxt") {
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
    let path = Path::new(name);
    let whole = Document::from_bytes(bytes.to_vec(), Some(path), None);
    let index = FileIndex::open(bytes, Some(path), &Default::default());
    match (whole, index) {
        (Ok(doc), Ok(Some(index))) => {
            assert!(
                matches!(
                    doc.format(),
                    Format::CvmParams | Format::Safetensors | Format::Npz | Format::NnablaNnp
                ),
                "{name}"
            );
            let nodes = |g: Option<&tensor_core::graph::ModelGraph>| {
                g.map(|g| g.graphs.iter().map(|g| g.nodes.len()).collect::<Vec<_>>())
            };
            assert_eq!(nodes(index.graph()), nodes(doc.graph()), "{name}");
            assert_eq!(index.format(), doc.format(), "{name}");
            assert_eq!(index.file_size(), doc.file_size(), "{name}");
            assert_eq!(index.metadata(), doc.metadata(), "{name}");
            assert_eq!(index.summary(), doc.summary(), "{name}");
            assert_eq!(index.tensors().len(), doc.len(), "{name}");
            for (i, (t, s)) in index.tensors().iter().zip(doc.stored()).enumerate() {
                let want = doc.tensor(&s.name).unwrap();
                assert_eq!(t.name(), s.name, "{name}");
                assert_eq!(t.stored().stored_name, s.stored_name, "{name}");
                assert_eq!(t.stored().extras, s.extras, "{name}");
                assert_eq!(t.dims(), &s.shape[..], "{name}");
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
            }
            true
        }
        // `None` sends the caller to the whole-file path, which refuses it
        (Err(_), Err(_) | Ok(None)) => false,
        (Err(e), Ok(i)) => panic!("{name}: the whole-file path says {e}, the index {i:?}"),
        (Ok(doc), Ok(None)) => {
            // only archives with a deflated or big-endian member (.npz) or
            // with parameters elsewhere than in stored .protobuf (.nnp) are
            // read whole
            assert!(
                matches!(doc.format(), Format::Npz | Format::NnablaNnp),
                "{name}: not read by random access"
            );
            false
        }
        (Ok(_), Err(e)) => panic!("{name}: only the random-access path refuses it: {e}"),
    }
}

#[test]
fn random_access_reads_what_the_whole_file_path_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let samples = samples(tmp.path());
    let mut read = 0;
    let mut npz = 0;
    let mut nnp = 0;
    for (name, bytes) in &samples {
        let ok = same(name, bytes);
        read += ok as usize;
        npz += (ok && name.ends_with(".npz")) as usize;
        nnp += (ok && name.ends_with(".nnp")) as usize;
        // every archive with stored .protobuf parameters is read by offset
        if by_offset(name) {
            assert!(ok, "{name}: not read by random access");
        }
    }
    assert!(read >= 30, "{read} of {} files read", samples.len());
    assert!(npz >= 20, "{npz} .npz read");
    assert!(nnp >= 15, "{nnp} .nnp read");
}

#[test]
fn random_access_refuses_what_the_whole_file_path_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cases = 0;
    let mut nnp = 0;
    for (name, bytes) in samples(tmp.path()) {
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
    let p = testdata().join("nnabla/convnet.nntxt");
    let bytes = std::fs::read(&p).unwrap();
    assert!(
        FileIndex::open(&bytes[..], Some(&p), &Default::default())
            .unwrap()
            .is_none()
    );
    assert!(
        FileIndex::open(&[][..], None, &Default::default())
            .unwrap()
            .is_none()
    );
}
