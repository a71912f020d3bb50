//! `Headers` (what `inspect` prints) reads headers, not data: a compressed
//! file whose data a reader must refuse to inflate still lists its tensors.

use mlformats::{Document, Headers, ReadOptions};
use tensor_core::Limits;

const ZEROS: &str = "../../testdata/hostile/zeros_compressed.npz";

#[test]
fn a_deflated_npz_lists_its_tensors_without_inflating_them() {
    let h = Headers::open(ZEROS, None, &ReadOptions::default()).unwrap();
    assert!(h.is_headers_only());
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
    let h = Headers::open(ZEROS, None, &tight).unwrap();
    assert_eq!(h.summary().tensors.len(), 8);
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
    let a = Headers::from_bytes(bytes, None, None, &ReadOptions::default()).unwrap();
    let b = Headers::open(ZEROS, None, &ReadOptions::default()).unwrap();
    assert_eq!(a.summary(), b.summary());
}

#[test]
fn a_format_read_whole_says_so_and_matches_the_document() {
    // NNabla text is read whole: Headers falls back to the Document
    let p = "../../testdata/nnabla/convnet.nntxt";
    let h = Headers::open(p, None, &ReadOptions::default()).unwrap();
    assert!(!h.is_headers_only());
    assert_eq!(h.summary(), &Document::open(p).unwrap().summary());
}
