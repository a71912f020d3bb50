//! Remote files (the `remote` feature) read by ranges from a real HTTP
//! server that answers them (`mlformats view`'s, started here): headers
//! match the local file's and fetch a few blocks; a whole read gives the
//! same tensors; a server or a location that cannot serve says why.

use std::path::Path;

use mlformats::random_access::{FileIndex, ReadAt};
use mlformats::remote::{RemoteFile, RemoteOptions, is_remote};
use mlformats::view::Viewer;
use mlformats::{DType, Headers, Tensor};

/// The location `mlformats view` serves `file` at.
fn served(v: &Viewer) -> String {
    let route = v.url().split("?url=").nth(1).unwrap();
    format!("http://{}/{route}", v.addr())
}

fn testdata(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// A safetensors file of 32 tensors of 256 KiB each (8 MiB).
fn big_safetensors(dir: &Path) -> std::path::PathBuf {
    let data: Vec<Vec<u8>> = (0..32u8).map(|i| vec![i; 256 << 10]).collect();
    let tensors: Vec<(String, Tensor<'_>)> = data
        .iter()
        .enumerate()
        .map(|(i, d)| {
            (
                format!("layer{i}.w"),
                Tensor::new(DType::F32, vec![256, 256], &d[..]).unwrap(),
            )
        })
        .collect();
    let p = dir.join("big.safetensors");
    mlformats::save(&p, tensors.iter().map(|(n, t)| (n.as_str(), t))).unwrap();
    p
}

fn names(h: &Headers) -> Vec<(String, String, Vec<usize>)> {
    h.summary()
        .tensors
        .iter()
        .map(|t| (t.name.clone(), t.dtype.to_string(), t.shape.clone()))
        .collect()
}

#[test]
fn headers_of_served_files_match_the_local_files() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        big_safetensors(dir.path()),
        testdata("cvm/large_1mb.params"),
        testdata("nnabla/convnet.nnp"),
        testdata("translate/if_select/if_select.onnx"),
        testdata("onnx_typed/float_data.onnx"),
    ];
    for f in &files {
        if !f.exists() {
            continue;
        }
        let v = Viewer::start(f, 0).unwrap();
        let location = served(&v);
        assert!(is_remote(&location));
        let local = Headers::open(f, None, &Default::default()).unwrap();
        let remote = Headers::open(&location, None, &Default::default()).unwrap();
        assert_eq!(names(&remote), names(&local), "{}", f.display());
        assert_eq!(remote.summary().format, local.summary().format);
        assert_eq!(remote.metadata(), local.metadata(), "{}", f.display());
        let sent = v.file_bytes_sent();
        let size = std::fs::metadata(f).unwrap().len();
        assert!(
            sent < (1 << 20),
            "{}: {sent} bytes sent for its headers",
            f.display()
        );
        if size > 4 << 20 {
            assert!(sent * 20 < size, "{}: {sent} of {size} bytes", f.display());
        }
        v.stop();
    }
}

#[test]
fn a_remote_file_reads_by_blocks_and_whole() {
    let dir = tempfile::tempdir().unwrap();
    let f = big_safetensors(dir.path());
    let v = Viewer::start(&f, 0).unwrap();
    let location = served(&v);
    let remote = RemoteFile::open(&location, &RemoteOptions::default()).unwrap();
    assert_eq!(remote.len(), std::fs::metadata(&f).unwrap().len());
    assert_eq!(remote.file_name(), "big.safetensors");
    let index = FileIndex::open(
        &remote,
        Some(Path::new("big.safetensors")),
        &Default::default(),
    )
    .unwrap()
    .unwrap();
    assert_eq!(index.tensors().len(), 32);
    // the header (and detection's look at the file's end): a few blocks,
    // a few requests after the first
    let header = remote.bytes_fetched();
    assert!(header <= 3 * (64 << 10), "{header}");
    assert!(remote.requests() <= 8, "{}", remote.requests());
    // one tensor by ranges: its 256 KiB, as stored
    let at = index.position("layer7.w").unwrap();
    let t = index.read_tensor(&remote, at).unwrap();
    assert_eq!(t.dims(), [256, 256]);
    assert!(t.bytes().iter().all(|&b| b == 7));
    assert!(remote.bytes_fetched() <= header + (256 << 10) + (128 << 10));
    // a whole read: the same tensors as the local file's
    let doc = mlformats::open(&location).unwrap();
    let here = mlformats::open(&f).unwrap();
    assert_eq!(doc.tensors().count(), here.tensors().count());
    for (name, t) in here.tensors() {
        assert_eq!(doc.tensor(name).unwrap().bytes(), t.bytes(), "{name}");
    }
    v.stop();
}

#[test]
fn a_budget_stops_a_read_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let f = big_safetensors(dir.path());
    let v = Viewer::start(&f, 0).unwrap();
    let remote = RemoteFile::open(
        &served(&v),
        &RemoteOptions::default().with_max_bytes(Some(100 << 10)),
    )
    .unwrap();
    let mut buf = vec![0u8; 200 << 10];
    let e = remote.read_at(1 << 20, &mut buf).unwrap_err();
    assert!(e.to_string().contains("more than 102400 bytes"), "{e}");
    v.stop();
}

#[test]
fn unreachable_and_missing_files_say_where_and_why() {
    let e =
        RemoteFile::open("http://127.0.0.1:9/model.onnx", &RemoteOptions::default()).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("http://127.0.0.1:9/model.onnx: "),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let f = big_safetensors(dir.path());
    let v = Viewer::start(&f, 0).unwrap();
    let missing = format!("http://{}/file/nothing.safetensors", v.addr());
    let e = Headers::open(&missing, None, &Default::default()).unwrap_err();
    assert!(e.to_string().starts_with(&missing), "{e}");
    assert!(!is_remote("model.onnx") && !is_remote("/tmp/s3://x") && is_remote("S3://b/k"));
    v.stop();
}
