//! `mlformats::view::Viewer`: the page and one file on 127.0.0.1, nothing
//! else; stopping it frees the port. (The CLI's `mlformats view` and
//! Python's `mlformats.view` are this server; the page itself is tested in
//! a browser by `crates/mlformats-web/tests/browser.py`.)
#![cfg(feature = "view")]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;

use mlformats::view::{Viewer, asset, asset_names};

/// One HTTP/1.1 request with the given Host; the status line, the
/// Content-Type and the body.
fn request(addr: SocketAddr, method: &str, path: &str, host: &str) -> (String, String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let end = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(all[..end].to_vec()).unwrap();
    let status = head.lines().next().unwrap().to_string();
    let mime = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Type: "))
        .unwrap_or("")
        .to_string();
    (status, mime, all[end + 4..].to_vec())
}

fn testdata(p: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(p)
}

#[test]
fn serves_every_page_file_and_the_one_model() {
    let file = testdata("tennis/py_convnet.tsm");
    let viewer = Viewer::start(&file, 0).unwrap();
    let addr = viewer.addr();
    assert!(addr.ip().is_loopback());
    assert_eq!(
        viewer.url(),
        format!("http://{addr}/?url=file/py_convnet.tsm")
    );
    let host = addr.to_string();
    let names: Vec<&str> = asset_names().collect();
    assert_eq!(names.len(), 9);
    for name in names {
        let (status, mime, body) = request(addr, "GET", &format!("/{name}"), &host);
        assert_eq!(status, "HTTP/1.1 200 OK", "{name}");
        let (want_mime, want) = asset(name).unwrap();
        assert_eq!(mime, want_mime, "{name}");
        assert_eq!(body, want, "{name}");
    }
    // "/" is the page; the wasm is a wasm module
    let (_, _, page) = request(addr, "GET", "/", "localhost");
    assert_eq!(page, asset("index.html").unwrap().1);
    assert_eq!(&asset("mlformats_web.wasm").unwrap().1[..4], b"\0asm");
    // the model, byte for byte; HEAD gives no body
    let (status, mime, body) = request(addr, "GET", "/file/py_convnet.tsm", &host);
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(mime, "application/octet-stream");
    assert_eq!(body, std::fs::read(&file).unwrap());
    let (status, _, body) = request(addr, "HEAD", "/file/py_convnet.tsm", &host);
    assert_eq!((status.as_str(), body.len()), ("HTTP/1.1 200 OK", 0));
    // nothing else: no other path, no other method, no other host name
    let (status, _, _) = request(addr, "GET", "/../Cargo.toml", &host);
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    let (status, _, _) = request(addr, "GET", "/file/py_dtypes.tsm", &host);
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    let (status, _, _) = request(addr, "POST", "/index.html", &host);
    assert_eq!(status, "HTTP/1.1 405 Method Not Allowed");
    let (status, _, body) = request(addr, "GET", "/", "rebound.example:80");
    assert_eq!(
        (status.as_str(), body.as_slice()),
        ("HTTP/1.1 403 Forbidden", &b"forbidden"[..])
    );

    viewer.stop();
    // the port is free again: nothing listens there any more
    let again = TcpListener::bind(addr);
    assert!(again.is_ok(), "port still bound after stop: {again:?}");
}

#[test]
fn file_names_are_percent_encoded_in_the_route() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("my model (v2).nnp");
    std::fs::copy(testdata("nnabla/convnet.nnp"), &file).unwrap();
    let viewer = Viewer::start(&file, 0).unwrap();
    assert!(
        viewer
            .url()
            .ends_with("?url=file/my%20model%20%28v2%29.nnp"),
        "{}",
        viewer.url()
    );
    let (status, _, body) = request(
        viewer.addr(),
        "GET",
        "/file/my%20model%20%28v2%29.nnp",
        "127.0.0.1",
    );
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(body, std::fs::read(&file).unwrap());
    drop(viewer); // dropping stops it too
}

#[test]
fn a_directory_or_missing_file_is_refused_before_serving() {
    let dir = tempfile::tempdir().unwrap();
    let err = Viewer::start(dir.path(), 0).unwrap_err();
    assert_eq!(err.to_string(), "is a directory");
    let err = Viewer::start(dir.path().join("absent.nnp"), 0).unwrap_err();
    assert!(
        matches!(&err, mlformats::Error::Io(e) if e.kind() == std::io::ErrorKind::NotFound),
        "{err:?}"
    );
}

mod common;
use common::{get_with, header};

#[test]
fn the_file_is_served_by_byte_ranges_and_the_bytes_sent_are_counted() {
    let file = testdata("tennis/py_convnet.tsm");
    let bytes = std::fs::read(&file).unwrap();
    let len = bytes.len();
    assert!(len > 100);
    let viewer = Viewer::start(&file, 0).unwrap();
    let addr = viewer.addr();
    let route = "/file/py_convnet.tsm";
    assert_eq!(viewer.file_bytes_sent(), 0);

    // the whole file says it takes ranges, with a validator
    let (head, body) = get_with(addr, route, "");
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert_eq!(header(&head, "Accept-Ranges"), Some("bytes"));
    let etag = header(&head, "ETag").unwrap().to_string();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    assert_eq!(body, bytes);
    assert_eq!(viewer.file_bytes_sent(), len as u64);

    // first-last, first-, and the last n bytes
    let cases = [
        ("bytes=10-19", 10, 19),
        ("bytes=0-0", 0, 0),
        (&*format!("bytes={}-", len - 7), len - 7, len - 1),
        ("bytes=-5", len - 5, len - 1),
        (&*format!("bytes=3-{}", len * 4), 3, len - 1),
    ];
    let mut sent = len as u64;
    for (value, a, b) in cases {
        let (head, body) = get_with(addr, route, &format!("Range: {value}\r\n"));
        assert!(
            head.starts_with("HTTP/1.1 206 Partial Content"),
            "{value}: {head}"
        );
        assert_eq!(
            header(&head, "Content-Range"),
            Some(&*format!("bytes {a}-{b}/{len}")),
            "{value}"
        );
        assert_eq!(
            header(&head, "Content-Length"),
            Some(&*(b - a + 1).to_string())
        );
        assert_eq!(header(&head, "ETag"), Some(&*etag), "{value}");
        assert_eq!(body, &bytes[a..=b], "{value}");
        sent += (b - a + 1) as u64;
        assert_eq!(viewer.file_bytes_sent(), sent, "{value}");
    }

    // past the end: 416 with the length; nothing sent
    let (head, body) = get_with(addr, route, &format!("Range: bytes={len}-\r\n"));
    assert!(head.starts_with("HTTP/1.1 416"), "{head}");
    assert_eq!(
        header(&head, "Content-Range"),
        Some(&*format!("bytes */{len}"))
    );
    assert!(body.is_empty());
    // several ranges, another unit or bad syntax: the whole file, as HTTP allows
    for value in ["bytes=0-1,5-6", "items=0-1", "bytes=9-2", "bytes=x-y"] {
        let (head, body) = get_with(addr, route, &format!("Range: {value}\r\n"));
        assert!(head.starts_with("HTTP/1.1 200 OK"), "{value}: {head}");
        assert_eq!(body.len(), len, "{value}");
    }
    viewer.stop();
}
