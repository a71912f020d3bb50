//! Helpers shared by the integration tests (each test file that needs them
//! says `mod common;`; not every file uses every helper).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;

use sha2::{Digest, Sha256};

/// The sha256 of `bytes`, in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The sha256 of the file at `p`, in lowercase hex.
pub fn sha256_file(p: &Path) -> String {
    sha256_hex(&std::fs::read(p).unwrap())
}

/// The JSON file at `p`.
pub fn json_file(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A GET of `path` from the server at `addr` with extra header lines: the
/// whole head and the body.
pub fn get_with(addr: SocketAddr, path: &str, extra: &str) -> (String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let end = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(all[..end].to_vec()).unwrap();
    (head, all[end + 4..].to_vec())
}

/// The value of header `name` in an HTTP response's `head`.
pub fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Converts the ONNX model `data/NAME.onnx` to `dir/NAME.nnp`: its sha256
/// and its network.
#[cfg(all(feature = "onnx", feature = "nnp"))]
pub fn import_nnp(
    data: &Path,
    name: &str,
    dir: &Path,
) -> (String, nnp_archive::nnabla_proto::proto::NNablaProtoBuf) {
    let out = dir.join(format!("{name}.nnp"));
    let s = mlformats::convert(
        data.join(format!("{name}.onnx")),
        &out,
        &mlformats::ConvertOptions::new(),
    )
    .unwrap();
    assert!(s.whole_model, "{name}");
    let bytes = std::fs::read(&out).unwrap();
    let sha = sha256_hex(&bytes);
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut text = String::new();
    z.by_name("network.nntxt")
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    (sha, nnp_archive::nnabla_proto::text::parse(&text).unwrap())
}

/// Case `name` of `data` (an ONNX model) converted to `.nnp` in `dir`:
/// its network, asserted to be the very bytes nnabla ran (`c`'s
/// `nnp_sha256`).
#[cfg(all(feature = "onnx", feature = "nnp"))]
pub fn recorded_nnp(
    data: &Path,
    name: &str,
    c: &serde_json::Value,
    dir: &Path,
) -> nnp_archive::nnabla_proto::proto::NNablaProtoBuf {
    let (sha, model) = import_nnp(data, name, dir);
    let want = c["nnp_sha256"].as_str().unwrap();
    assert_eq!(sha, want, "{name}: not the bytes nnabla ran");
    model
}

/// The values of tensor `name` of `doc`, as f64.
pub fn values(doc: &mlformats::Document, name: &str) -> Vec<f64> {
    doc.tensor(name)
        .unwrap_or_else(|| panic!("no tensor {name}"))
        .to_f64_vec()
        .unwrap()
}

/// `bytes` opened by slices: a [`mlformats::Document`] at a `ReadAt`, its
/// structure read and no tensor; `None` when no reader knows the bytes
/// (an empty file, or no format detected).
pub fn by_slices(
    bytes: &[u8],
    name: Option<&Path>,
    opts: &mlformats::ReadOptions,
) -> mlformats::Result<Option<mlformats::Document>> {
    match mlformats::Document::open_at(bytes.to_vec(), name, None, opts) {
        Err(mlformats::Error::Empty | mlformats::Error::UnknownFormat) => Ok(None),
        r => r.map(Some),
    }
}

/// Tensor `i` (its position in stored order) of `doc`, read whole.
pub fn read_tensor(
    doc: &mlformats::Document,
    i: usize,
) -> mlformats::Result<mlformats::Tensor<'static>> {
    doc.get(doc.entries()[i].name())
}

/// A file in memory that counts the bytes read from it (a `ReadAt` for
/// [`mlformats::Document::open_at`]; the count shared with [`Counting::read`]).
pub struct Counting {
    bytes: Vec<u8>,
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Counting {
    /// `bytes`, nothing read yet.
    pub fn new(bytes: Vec<u8>) -> Self {
        Counting {
            bytes,
            read: Default::default(),
        }
    }

    /// The count of bytes read, shared with this file (it goes on after
    /// the file is handed to a document).
    pub fn read(&self) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
        std::sync::Arc::clone(&self.read)
    }
}

impl mlformats::random_access::ReadAt for Counting {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        self.read.fetch_add(buf.len() as u64, Relaxed);
        mlformats::random_access::ReadAt::read_at(&self.bytes, offset, buf)
    }
}

/// A file a test keeps a hold on while a document reads it (a document
/// owns its `ReadAt`): reads go to the file behind the `Arc`, whose
/// counters the test still sees.
pub struct Shared<T: ?Sized>(pub std::sync::Arc<T>);

impl<T: mlformats::random_access::ReadAt + ?Sized> mlformats::random_access::ReadAt for Shared<T> {
    fn len(&self) -> u64 {
        self.0.len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.0.read_at(offset, buf)
    }
}
