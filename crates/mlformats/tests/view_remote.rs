//! `mlformats view LOCATION` (the `remote` and `view` features): the view
//! server hands the page the byte ranges it asks for, each fetched from the
//! remote file by range, so a model on a server is read by slices without
//! being downloaded. The "remote server" here is another view server,
//! which serves a local file by ranges and counts the bytes it sends.

use mlformats::view::Viewer;

mod common;
use common::{get_with, header};

#[test]
fn a_remote_location_is_served_by_ranges_fetched_by_ranges() {
    let dir = tempfile::tempdir().unwrap();
    // 16 MiB of bytes that differ with their offset
    let bytes: Vec<u8> = (0..16u32 << 20).map(|i| (i % 251) as u8).collect();
    let file = dir.path().join("big.bin");
    std::fs::write(&file, &bytes).unwrap();
    let origin = Viewer::start(&file, 0).unwrap();
    let route = origin.url().split("?url=").nth(1).unwrap().to_string();
    let location = format!("http://{}/{route}", origin.addr());

    let viewer = Viewer::start(&location, 0).unwrap();
    // the page is told to open the file under its own name
    assert!(
        viewer.url().ends_with("?url=file/big.bin"),
        "{}",
        viewer.url()
    );
    let before = origin.file_bytes_sent();
    assert!(before < 64 << 10, "opening fetched {before} bytes");

    // a range from the middle: the same bytes, fetched by range
    let (a, b) = (9_000_000usize, 9_000_099usize);
    let (head, body) = get_with(
        viewer.addr(),
        "/file/big.bin",
        &format!("Range: bytes={a}-{b}\r\n"),
    );
    assert!(head.starts_with("HTTP/1.1 206 Partial Content"), "{head}");
    assert_eq!(
        header(&head, "Content-Range"),
        Some(&*format!("bytes {a}-{b}/{}", bytes.len()))
    );
    assert_eq!(header(&head, "Accept-Ranges"), Some("bytes"));
    assert!(header(&head, "ETag").is_some(), "{head}");
    assert_eq!(body, &bytes[a..=b]);
    assert_eq!(viewer.file_bytes_sent(), 100);
    let fetched = origin.file_bytes_sent() - before;
    assert!(
        (100..=(1 << 20) + (64 << 10)).contains(&fetched),
        "a 100-byte range fetched {fetched} bytes from the origin"
    );

    // a range across the 1 MiB chunks the server copies by
    let (a, b) = (1_000_000usize, 3_500_000usize);
    let (head, body) = get_with(
        viewer.addr(),
        "/file/big.bin",
        &format!("Range: bytes={a}-{b}\r\n"),
    );
    assert!(head.starts_with("HTTP/1.1 206"), "{head}");
    assert_eq!(body, &bytes[a..=b]);

    // the whole file, when asked
    let (head, body) = get_with(viewer.addr(), "/file/big.bin", "");
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert_eq!(body.len(), bytes.len());
    assert!(body == bytes);
}

#[test]
fn a_remote_location_that_cannot_be_read_is_refused_before_serving() {
    let origin = Viewer::start(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/cvm/two_entry.params"),
        0,
    )
    .unwrap();
    let missing = format!("http://{}/file/absent.params", origin.addr());
    let err = Viewer::start(&missing, 0).unwrap_err();
    let text = mlformats::chain_message(&err);
    assert!(
        text.contains("404") || text.to_lowercase().contains("not found"),
        "{text}"
    );
}
