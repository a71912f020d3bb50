//! Remote files (the `remote` feature) read by ranges from a real HTTP
//! server that answers them (`mlformats view`'s, started here): headers
//! match the local file's and fetch a few blocks; a whole read gives the
//! same tensors; a server or a location that cannot serve says why.

use std::path::Path;
use std::sync::Arc;

use mlformats::random_access::ReadAt;
use mlformats::remote::{RemoteFile, RemoteOptions, is_remote};
use mlformats::view::Viewer;
use mlformats::{DType, Document, ReadOptions, Tensor};

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

/// The file at `path` (local or remote) opened by its structure alone.
fn headers(path: impl AsRef<std::path::Path>) -> mlformats::Result<Document> {
    Document::open_with(path, None, &ReadOptions::default().with_lazy(true))
}

fn names(h: &Document) -> Vec<(String, String, Vec<usize>)> {
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
        let local = headers(f).unwrap();
        let remote = headers(&location).unwrap();
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
    let remote = Arc::new(remote);
    let name = Some(Path::new("big.safetensors"));
    let at = Shared(Arc::clone(&remote));
    let index = Document::open_at(at, name, None, &Default::default()).unwrap();
    assert_eq!(index.len(), 32);
    // the header (and detection's look at the file's end): a few blocks,
    // a few requests after the first
    let header = remote.bytes_fetched();
    assert!(header <= 3 * (64 << 10), "{header}");
    assert!(remote.requests() <= 8, "{}", remote.requests());
    // one tensor by ranges: its 256 KiB, as stored
    let at = index.position("layer7.w").unwrap();
    let t = read_tensor(&index, at).unwrap();
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

/// A header walk of a served file asks only near its headers: the first
/// block (format detection looks at a file's end for a zip archive only),
/// then, in a format with a header before each tensor's data, one block at
/// each header the first does not hold. The requests are counted exactly:
/// each costs a round trip, and the viewer's page makes the same ones.
#[test]
fn a_header_walk_asks_for_its_headers_only() {
    let dir = tempfile::tempdir().unwrap();
    let source = big_safetensors(dir.path());
    // HEAD and the first block; then, for `.params` and ONNX, a block at
    // each of the 31 headers after the first (256 KiB apart), and for
    // ONNX the last block (the model's operator sets follow its graph)
    for (ext, requests) in [("safetensors", 2), ("params", 33), ("onnx", 34)] {
        let f = dir.path().join(format!("walk.{ext}"));
        if ext != "safetensors" {
            mlformats::convert(&source, &f, &mlformats::ConvertOptions::new()).unwrap();
        } else {
            std::fs::copy(&source, &f).unwrap();
        }
        let v = Viewer::start(&f, 0).unwrap();
        let remote = RemoteFile::open(&served(&v), &RemoteOptions::default()).unwrap();
        let remote = Arc::new(remote);
        let name = format!("walk.{ext}");
        let at = Shared(Arc::clone(&remote));
        let index = Document::open_at(at, Some(Path::new(&name)), None, &Default::default());
        let index = index.unwrap();
        assert_eq!(index.len(), 32, "{ext}");
        assert_eq!(remote.requests(), requests, "{ext}: requests");
        // a 4 KiB block a request, the first's read ahead at most doubling
        assert!(
            v.file_bytes_sent() <= (requests + 2) * (4 << 10),
            "{ext}: {} bytes sent in {requests} requests",
            v.file_bytes_sent()
        );
        v.stop();
    }
}

mod common;
use common::{Shared, by_slices, read_tensor};

/// Bytes of a file held in pieces (`(offset, bytes)`): a read outside them
/// fails.
struct Pieces {
    len: u64,
    parts: Vec<(u64, Vec<u8>)>,
}

impl ReadAt for Pieces {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let end = offset + buf.len() as u64;
        for (at, bytes) in &self.parts {
            if *at <= offset && end <= at + bytes.len() as u64 {
                let from = (offset - at) as usize;
                buf.copy_from_slice(&bytes[from..from + buf.len()]);
                return Ok(());
            }
        }
        Err(std::io::Error::other(format!(
            "{}..{end}: not among the pieces",
            offset
        )))
    }
}

/// `mlformats view` says where the blocks of the file's header walk are
/// (`X-Mlformats-Walk`) and answers them in one request: each is the
/// file's bytes at a block's start, those the page has (`have=`) left
/// out, and the file's structure reads from the page's first bytes and
/// those blocks alone, so the page's walk, which jumps from header to
/// header in `.params` and ONNX, makes no request of its own.
#[test]
fn the_view_server_answers_the_blocks_of_a_header_walk_in_one_request() {
    use common::{get_with, header};
    let dir = tempfile::tempdir().unwrap();
    let source = big_safetensors(dir.path());
    for ext in ["safetensors", "params", "onnx"] {
        let name = format!("walk.{ext}");
        let f = dir.path().join(&name);
        if ext != "safetensors" {
            mlformats::convert(&source, &f, &mlformats::ConvertOptions::new()).unwrap();
        } else {
            std::fs::copy(&source, &f).unwrap();
        }
        let bytes = std::fs::read(&f).unwrap();
        let v = Viewer::start(&f, 0).unwrap();
        let (head, _) = get_with(v.addr(), &format!("/file/{name}"), "Range: bytes=0-0\r\n");
        let walk = header(&head, "X-Mlformats-Walk").unwrap().to_string();
        assert_eq!(walk, format!("/walk/{name}"));
        let etag = header(&head, "ETag").unwrap().to_string();
        let sent = v.file_bytes_sent();
        let (head, body) = get_with(v.addr(), &format!("{walk}?block=8192&have=65536"), "");
        assert!(head.starts_with("HTTP/1.1 200 OK"), "{ext}: {head}");
        assert_eq!(header(&head, "ETag"), Some(&*etag), "{ext}");
        let mut parts = vec![(0, bytes[..65536].to_vec())];
        let mut at = 0;
        while at < body.len() {
            let off = u64::from_le_bytes(body[at..at + 8].try_into().unwrap());
            let n = u32::from_le_bytes(body[at + 8..at + 12].try_into().unwrap()) as usize;
            let run = body[at + 12..at + 12 + n].to_vec();
            assert_eq!(off % 8192, 0, "{ext}: a run at {off}");
            assert!(off >= 65536, "{ext}: a run at {off}, which the page has");
            assert_eq!(
                run,
                bytes[off as usize..off as usize + n],
                "{ext}: at {off}"
            );
            parts.push((off, run));
            at += 12 + n;
        }
        let runs = parts.len() - 1;
        let data: usize = parts[1..].iter().map(|(_, b)| b.len()).sum();
        assert_eq!(v.file_bytes_sent() - sent, data as u64, "{ext}");
        // a block at each of the 31 headers past the first 64 KiB (and
        // ONNX's operator sets, after its graph, in the last block)
        let (want_runs, want_data) = match ext {
            "safetensors" => (0, 0),
            "params" => (31, 31 * 8192),
            _ => (32, 31 * 8192 + bytes.len() % 8192),
        };
        assert_eq!((runs, data), (want_runs, want_data), "{ext}: runs, bytes");
        let pieces = Pieces {
            len: bytes.len() as u64,
            parts,
        };
        let index = Document::open_at(pieces, Some(Path::new(&name)), None, &Default::default());
        let index = index.unwrap();
        let local = by_slices(&bytes[..], Some(Path::new(&name)), &Default::default())
            .unwrap()
            .unwrap();
        assert_eq!(index.len(), 32, "{ext}");
        for (a, b) in index.entries().iter().zip(local.entries()) {
            assert_eq!((a.name(), a.dims()), (b.name(), b.dims()), "{ext}");
        }
        v.stop();
    }
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
    let e = headers(&missing).unwrap_err();
    assert!(e.to_string().starts_with(&missing), "{e}");
    assert!(!is_remote("model.onnx") && !is_remote("/tmp/s3://x") && is_remote("S3://b/k"));
    v.stop();
}

/// Statistics and conversions of a served file read by its index equal
/// the whole-file path's of the local file.
#[test]
fn served_files_stream_the_local_files_statistics_and_conversions() {
    use mlformats::remote::{Opened, open_streamed};
    use mlformats::streamed::document_stats;
    use mlformats::{ConvertOptions, Format, NameFilter};
    let dir = tempfile::tempdir().unwrap();
    let files = [
        big_safetensors(dir.path()),
        testdata("cvm/special_floats.params"),
        testdata("cvm/dtypes_core.params"),
        testdata("nnabla/convnet.nnp"),
        testdata("nnabla/mlp.nnp"),
    ];
    let all = NameFilter::default();
    for f in &files {
        let v = Viewer::start(f, 0).unwrap();
        let Opened::Streamed { document: s, .. } =
            open_streamed(&served(&v), None, &Default::default()).unwrap()
        else {
            panic!("{}: not read by its index", f.display());
        };
        let doc = mlformats::open(f).unwrap();
        let local = document_stats(&doc, &all, &mut |_| {});
        assert!(!local.is_empty(), "{}", f.display());
        let mut done = 0;
        assert_eq!(
            s.stats(&all, &mut |n| done += n).unwrap(),
            local,
            "{}",
            f.display()
        );
        assert_eq!(
            done,
            doc.tensors()
                .map(|(_, t)| t.bytes().len() as u64)
                .sum::<u64>()
        );
        for target in [Format::Safetensors, Format::Npz, Format::Onnx] {
            let opts = ConvertOptions::new().to(target);
            let (want, said) = mlformats::convert_document_to_bytes(&doc, target, &opts).unwrap();
            let mut got = Vec::new();
            let summary =
                mlformats::convert_document_to_writer(&s, target, &mut got, &opts).unwrap();
            assert!(summary.tensors >= doc.len(), "{} to {target}", f.display());
            assert_eq!(
                summary.to_json(),
                said.to_json(),
                "{} to {target}",
                f.display()
            );
            assert!(got == want, "{} to {target}: bytes differ", f.display());
        }
        v.stop();
    }
}

/// `show` of one tensor of a served file fetches that tensor and the
/// headers, not the file.
#[test]
fn one_tensor_of_a_served_file_fetches_that_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let f = big_safetensors(dir.path());
    let v = Viewer::start(&f, 0).unwrap();
    let mlformats::remote::Opened::Streamed {
        document: s,
        remote,
    } = mlformats::remote::open_streamed(&served(&v), None, &Default::default()).unwrap()
    else {
        panic!("not read by its index");
    };
    let header = remote.bytes_fetched();
    let (name, t, _) = s.tensor_of_spec("layer9.w[0, :4]").unwrap();
    assert_eq!(name, "layer9.w");
    assert!(t.bytes().iter().all(|&b| b == 9));
    let data = remote.bytes_fetched() - header;
    assert!(
        (256 << 10..=(256 << 10) + (16 << 10)).contains(&data),
        "{data}"
    );
    assert!(v.file_bytes_sent() < 400 << 10, "{}", v.file_bytes_sent());
    let e = s.tensor_of_spec("nothing").unwrap_err();
    assert!(e.to_string().contains("of 32"), "{e}");
    v.stop();
}

/// A tiny HTTP server on 127.0.0.1 serving `bytes` by ranges, refusing
/// `HEAD` with `status` (405, 501; or answering it wrongly, `200 OK`
/// with no length), a file that is not there when `bytes` is empty; or,
/// with `silent`, never answering.
/// Returns its address; the thread ends with the test process.
fn odd_server(bytes: Vec<u8>, status: &'static str, silent: bool) -> std::net::SocketAddr {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            if silent {
                held.push(conn);
                continue;
            }
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut lines = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                lines.push(line.trim_end().to_string());
            }
            let Some(first) = lines.first() else { continue };
            let range = lines.iter().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                let (a, b) = k
                    .eq_ignore_ascii_case("range")
                    .then(|| v.trim().strip_prefix("bytes="))??
                    .split_once('-')?;
                let a: usize = a.parse().ok()?;
                let b: usize = b.parse::<usize>().ok()?.min(bytes.len().checked_sub(1)?);
                Some((a, b))
            });
            let head = if first.starts_with("HEAD ") {
                format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            } else if let Some((a, b)) = range {
                format!(
                    "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{b}/{}\r\n\
                     Content-Length: {}\r\nETag: \"v1\"\r\nConnection: close\r\n\r\n",
                    bytes.len(),
                    b + 1 - a
                )
            } else if bytes.is_empty() {
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_string()
            } else {
                "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_string()
            };
            let _ = conn.write_all(head.as_bytes());
            if let (false, Some((a, b))) = (first.starts_with("HEAD "), range) {
                let _ = conn.write_all(&bytes[a..=b]);
            }
        }
    });
    addr
}

#[test]
fn a_server_that_refuses_head_is_asked_by_a_ranged_get() {
    let bytes = std::fs::read(testdata("cvm/large_1mb.params")).unwrap();
    for status in ["405 Method Not Allowed", "501 Not Implemented"] {
        let addr = odd_server(bytes.clone(), status, false);
        let location = format!("http://{addr}/large_1mb.params");
        let remote = RemoteFile::open(&location, &RemoteOptions::default()).unwrap();
        assert_eq!(remote.len(), bytes.len() as u64, "{status}");
        // the first block came with the length, and is kept
        assert_eq!(remote.bytes_fetched(), 4096);
        let mut head = [0u8; 100];
        remote.read_at(0, &mut head).unwrap();
        assert_eq!(remote.bytes_fetched(), 4096);
        assert_eq!(&head[..], &bytes[..100]);
        let local = headers(testdata("cvm/large_1mb.params"));
        let served = headers(&location).unwrap();
        assert_eq!(names(&served), names(&local.unwrap()), "{status}");
        let doc = mlformats::open(&location).unwrap();
        assert_eq!(
            doc.tensor("big").unwrap().bytes(),
            &bytes[bytes.len() - (1 << 20)..]
        );
    }
}

#[test]
fn a_server_that_never_answers_times_out_and_says_so() {
    let addr = odd_server(Vec::new(), "", true);
    let mut options = RemoteOptions::default();
    options.timeout = std::time::Duration::from_millis(500);
    options.retries = 1;
    let location = format!("http://{addr}/model.onnx");
    let t = std::time::Instant::now();
    let e = RemoteFile::open(&location, &options)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with(&format!("{location}: timed out")), "{e}");
    assert!(e.contains("0.5 s a request, 1 retries"), "{e}");
    assert!(t.elapsed() < std::time::Duration::from_secs(20));
    let e = RemoteFile::open("http://127.0.0.1:9/m.onnx", &options)
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot connect to the server"), "{e}");
}

/// A safetensors file through a server that refuses `HEAD` (405, 501) or
/// answers it wrongly (200 with no length): the ranged `GET` that follows
/// learns the length and ETag, and the headers (what `inspect` prints)
/// and the tensors equal the local file's.
#[test]
fn a_safetensors_through_a_server_without_head_reads_as_the_local_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = big_safetensors(dir.path());
    let bytes = std::fs::read(&f).unwrap();
    let local = headers(&f).unwrap();
    for status in ["405 Method Not Allowed", "501 Not Implemented", "200 OK"] {
        let addr = odd_server(bytes.clone(), status, false);
        let location = format!("http://{addr}/big.safetensors");
        let remote = RemoteFile::open(&location, &RemoteOptions::default()).unwrap();
        assert_eq!(remote.len(), bytes.len() as u64, "{status}");
        assert_eq!(remote.requests(), 2, "{status}: HEAD, then GET");
        let served = headers(&location).unwrap();
        assert_eq!(served.summary(), local.summary(), "{status}");
        assert_eq!(served.metadata(), local.metadata(), "{status}");
        let mlformats::remote::Opened::Streamed { document: s, .. } =
            mlformats::remote::open_streamed(&location, None, &Default::default()).unwrap()
        else {
            panic!("{status}: not read by its index");
        };
        let (_, t, _) = s.tensor_of_spec("layer31.w").unwrap();
        assert!(t.bytes().iter().all(|&b| b == 31), "{status}");
    }
    // a file that is not there: the location, and why for both requests
    let addr = odd_server(Vec::new(), "405 Method Not Allowed", false);
    let missing = format!("http://{addr}/absent.safetensors");
    let e = RemoteFile::open(&missing, &RemoteOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.starts_with(&format!("{missing}: ")), "{e}");
    assert!(e.contains("(and HEAD: not found"), "{e}");
}

/// The progress callback of [`RemoteOptions`] is called after each
/// request that fetched data; its counts add up to what the file fetched,
/// the first block of a server without `HEAD` among them.
#[test]
fn progress_is_told_every_byte_fetched() {
    use mlformats::remote::Fetch;
    use std::sync::Mutex;
    let dir = tempfile::tempdir().unwrap();
    let f = big_safetensors(dir.path());
    let bytes = std::fs::read(&f).unwrap();
    let v = Viewer::start(&f, 0).unwrap();
    let refusing = odd_server(bytes.clone(), "405 Method Not Allowed", false);
    for location in [served(&v), format!("http://{refusing}/big.safetensors")] {
        let seen: Arc<Mutex<Vec<Fetch>>> = Arc::default();
        let log = Arc::clone(&seen);
        let options = RemoteOptions::default().with_progress(move |f| log.lock().unwrap().push(f));
        let remote = Arc::new(RemoteFile::open(&location, &options).unwrap());
        let at = Shared(Arc::clone(&remote));
        let name = Some(Path::new("big.safetensors"));
        let index = Document::open_at(at, name, None, &Default::default()).unwrap();
        let t = read_tensor(&index, index.position("layer3.w").unwrap()).unwrap();
        assert!(t.bytes().iter().all(|&b| b == 3));
        let seen = seen.lock().unwrap();
        assert!(seen.len() >= 2, "{location}: {seen:?}");
        let sum: u64 = seen.iter().map(|f| f.bytes).sum();
        assert_eq!(sum, remote.bytes_fetched(), "{location}");
        assert!(sum >= 256 << 10, "{location}: {sum}");
        let last = seen.last().unwrap();
        assert_eq!(last.fetched, sum, "{location}");
        assert_eq!(last.requests, remote.requests(), "{location}");
        let mut running = 0;
        for f in seen.iter() {
            running += f.bytes;
            assert_eq!(f.fetched, running, "{location}");
            assert_eq!(f.len, bytes.len() as u64, "{location}");
        }
        // the same callback set on an open file: a whole read is told its bytes
        let remote = RemoteFile::open(&location, &RemoteOptions::default()).unwrap();
        let total = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let t2 = Arc::clone(&total);
        remote.set_progress(move |f| {
            t2.fetch_add(f.bytes, std::sync::atomic::Ordering::Relaxed);
        });
        let before = remote.bytes_fetched();
        let all = mlformats::remote::read_all(&remote).unwrap();
        assert!(all == bytes, "{location}");
        assert_eq!(
            total.load(std::sync::atomic::Ordering::Relaxed),
            remote.bytes_fetched() - before,
            "{location}"
        );
    }
    v.stop();
}
