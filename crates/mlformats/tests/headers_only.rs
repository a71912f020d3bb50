//! A document opened lazily (what `inspect` prints) reads headers, not
//! data: a compressed file whose data a reader must refuse to inflate
//! still lists its tensors.

use mlformats::{Document, ReadOptions};
use tensor_core::{Limits, Tensor};

const ZEROS: &str = "../../testdata/hostile/zeros_compressed.npz";

/// `path` opened lazily with `opts`: its structure alone.
fn headers(path: impl AsRef<std::path::Path>, opts: &ReadOptions) -> Document {
    Document::open_with(path, None, &opts.clone().with_lazy(true)).unwrap()
}

#[test]
fn a_deflated_npz_lists_its_tensors_without_inflating_them() {
    let h = headers(ZEROS, &ReadOptions::default());
    assert!(!h.was_read_whole());
    let sm = h.summary();
    assert_eq!(sm.tensors.len(), 8);
    assert_eq!(sm.tensors[0].name, "w0");
    assert_eq!(sm.tensors[7].shape, vec![2048, 4096]);
    assert_eq!(sm.total_bytes, 8 * (32 << 20));
    assert_eq!(sm.parameters, 8 * 2048 * 4096);
}

#[test]
fn headers_fit_a_budget_the_data_does_not() {
    // 256 MiB inflated from a 262 KB file: over the default 100:1 and over
    // a 1 MiB budget, which the .npy headers (a few hundred bytes) fit
    let tight = ReadOptions::default().with_limits(
        Limits::default()
            .with_max_inflate_ratio(1)
            .with_min_inflate_budget(1 << 20),
    );
    let h = headers(ZEROS, &tight);
    assert_eq!(h.summary().tensors.len(), 8);
    // the first tensor read is refused, as the whole file is
    let e = h.get("w0").unwrap_err();
    assert!(mlformats::chain_message(&e).contains("inflat"), "{e}");
    // and checked before any is read, reading one element (what
    // `load` and Python's `get_slice` do): refused the same way, naming it
    let e = h.check_readable("w1").unwrap_err();
    let msg = mlformats::chain_message(&e);
    assert!(msg.contains("inflat") && msg.contains("w1"), "{msg}");
    let e = h.check_readable("nope").unwrap_err();
    assert!(matches!(e, mlformats::Error::NoTensorNamed { .. }), "{e:?}");
    let e = Document::open_with(ZEROS, None, &tight).unwrap_err();
    let msg = mlformats::chain_message(&e);
    assert!(msg.contains("inflat"), "{msg}");
    // the default limits refuse the whole file too: 32 MiB of zeros
    // deflate about 1000:1
    let e = Document::open(ZEROS).unwrap_err();
    let msg = mlformats::chain_message(&e);
    assert!(msg.contains("inflat"), "{msg}");
    // and a trusted read gives the zeros
    let trusted = ReadOptions::default().with_limits(Limits::unlimited());
    let doc = Document::open_with(ZEROS, None, &trusted).unwrap();
    let w = doc.tensor("w3").unwrap();
    assert!(w.to_vec::<f32>().unwrap().iter().all(|&v| v == 0.0));
}

#[test]
fn headers_of_bytes_in_memory_match_the_file_s() {
    let bytes = std::fs::read(ZEROS).unwrap();
    let map = tensor_core::MappedFile::from_vec(bytes);
    let lazy = ReadOptions::default().with_lazy(true);
    let a = Document::from_map(map, None, None, &lazy).unwrap();
    let b = headers(ZEROS, &ReadOptions::default());
    assert_eq!(a.summary(), b.summary());
}

#[test]
fn a_format_read_whole_says_so_and_matches_the_document() {
    // NNabla text is read whole, lazily or not
    let p = "../../testdata/nnabla/convnet.nntxt";
    let h = headers(p, &ReadOptions::default());
    assert!(h.was_read_whole());
    assert_eq!(h.summary(), Document::open(p).unwrap().summary());
}

/// An `.nnp` whose `parameter.h5` (nnabla's layout: every header before
/// the data) is deflated: two 16 MiB tensors of zeros in about 64 KB.
fn nnp_of_zeros() -> Vec<u8> {
    use std::io::Write;
    let zeros = Tensor::from_values([4 << 20], &vec![0f32; 4 << 20]).unwrap();
    let mut h5 = Vec::new();
    nnp_archive::h5::write_tensors(&mut h5, [("a/W", &zeros, true), ("b/W", &zeros, true)])
        .unwrap();
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    z.start_file("nnp_version.txt", stored).unwrap();
    z.write_all(b"0.1\n").unwrap();
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    z.start_file("parameter.h5", deflated).unwrap();
    z.write_all(&h5).unwrap();
    z.finish().unwrap().into_inner()
}

#[test]
fn a_deflated_parameter_h5_lists_its_tensors_from_its_headers() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("zeros.nnp");
    std::fs::write(&p, nnp_of_zeros()).unwrap();
    // a 1 MiB budget: the headers (a few KB) fit, the 32 MiB of data do not
    let tight = ReadOptions::default().with_limits(
        Limits::default()
            .with_max_inflate_ratio(1)
            .with_min_inflate_budget(1 << 20),
    );
    let h = headers(&p, &tight);
    assert!(!h.was_read_whole());
    let summary = h.summary();
    let names: Vec<&str> = summary.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a/W", "b/W"]);
    assert_eq!(h.summary().total_bytes, 32 << 20);
    let e = Document::open_with(&p, None, &tight).unwrap_err();
    assert!(mlformats::chain_message(&e).contains("inflat"), "{e}");
    // by slices, the first read checks the whole member, within the budget
    // it is given
    let bytes = std::fs::read(&p).unwrap();
    let doc = Document::open_at(bytes.clone(), Some(&p), None, &tight).unwrap();
    assert!(doc.get("b/W").is_err());
    let doc = Document::open_at(bytes, Some(&p), None, &ReadOptions::default()).unwrap();
    let b = doc.get("b/W").unwrap();
    assert!(b.to_vec::<f32>().unwrap().iter().all(|&v| v == 0.0));
}

#[test]
fn a_damaged_deflated_parameter_h5_fails_at_its_first_read() {
    let mut bytes = nnp_of_zeros();
    // a byte in the middle of the deflated member: in its data, past the
    // part of the stream that holds the headers
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    let p = std::path::Path::new("damaged.nnp");
    assert!(Document::from_bytes(bytes.clone(), Some(p), None).is_err());
    // its headers are whole: it opens by slices, and whichever tensor is
    // read first fails (the member is checked whole), every read after too
    let doc = Document::open_at(bytes, Some(p), None, &ReadOptions::default()).unwrap();
    assert!(doc.get(doc.entries()[1].name()).is_err());
    assert!(doc.get(doc.entries()[0].name()).is_err());
}
