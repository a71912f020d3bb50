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
