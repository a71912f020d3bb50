//! `mlformats view FILE --no-browser`: the page (built into the binary) and
//! the file served on 127.0.0.1, nothing else; the browser side is
//! `crates/mlformats-web/tests/browser.py` (a CI step).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};

/// One HTTP/1.1 GET with the given Host; the status line and the body.
fn get(addr: &str, path: &str, host: &str) -> (String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let end = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(all[..end].to_vec()).unwrap();
    let status = head.lines().next().unwrap().to_string();
    (status, all[end + 4..].to_vec())
}

#[test]
fn view_serves_the_page_and_the_file_only() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla/convnet.nnp");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mlformats"))
        .args(["view", "--no-browser"])
        .arg(&file)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let result = std::panic::catch_unwind(|| {
        // serving .../convnet.nnp at http://127.0.0.1:PORT/?url=file/convnet.nnp (Ctrl-C stops)
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap();
        let rest = url.strip_prefix("http://").unwrap();
        let (addr, query) = rest.split_once('/').unwrap();
        let route = query.strip_prefix("?url=").unwrap();
        assert_eq!(route, "file/convnet.nnp");

        let (status, page) = get(addr, "/", addr);
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert!(String::from_utf8_lossy(&page).contains("<title>mlformats viewer</title>"));
        let (status, wasm) = get(addr, "/mlformats_web.wasm", addr);
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(&wasm[..4], b"\0asm");
        let (status, body) = get(addr, &format!("/{route}"), "localhost");
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(body, std::fs::read(&file).unwrap());
        // nothing else: not another file, not another host name
        let (status, _) = get(addr, "/../Cargo.toml", addr);
        assert_eq!(status, "HTTP/1.1 404 Not Found");
        let (status, _) = get(addr, "/", "attacker.example:80");
        assert_eq!(status, "HTTP/1.1 403 Forbidden");
    });
    child.kill().unwrap();
    child.wait().unwrap();
    result.unwrap();
}

#[test]
fn view_of_a_missing_file_is_an_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_mlformats"))
        .args(["view", "--no-browser", "no/such/file.nnp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: no/such/file.nnp: "), "{err}");
}
