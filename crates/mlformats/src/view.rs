//! The model viewer: a page that shows any file the library reads (graph,
//! tensors, summary) in a browser, served with that one file on 127.0.0.1.
//!
//! The page reads the file in the browser with this library compiled to
//! WebAssembly (`crates/mlformats-web`, built by `cargo xtask web` into the
//! checked-in `web/` folder beside this crate's sources, which is built into
//! this module): the server only hands out the page's own files and the
//! byte ranges the page asks of the one file it was started with, and needs
//! no network, unless that file is a location on a server or in a bucket
//! (the `remote` feature), whose ranges it then fetches by range.
//! `mlformats view FILE` and Python's `mlformats.view(path)` are this module.
//!
//! **The header walk's blocks in one answer.** A header walk asks for the
//! file's structure a piece at a time, and in most formats each piece says
//! where the next is (a `.params`, `.tsm` or ONNX file has a header before
//! each tensor's data): one round trip per tensor, tens of milliseconds in
//! a browser. So the answers for the file carry `X-Mlformats-Walk`, the
//! path of the walk's blocks: there the server walks the local file's
//! headers as the page will ([`crate::Document::open_at`]) and
//! answers every block the walk read ([`WALK_BUDGET`] at most), in one
//! answer; the page puts them in its cache and reads the file by ranges as
//! before, the walk finding its blocks there. A page on any other server
//! (no such header) reads as it always does.
//!
//! ```no_run
//! let viewer = mlformats::view::Viewer::start("model.nnp", 0)?;
//! println!("open {}", viewer.url());
//! mlformats::view::open_in_browser(viewer.url());
//! viewer.wait(); // serves until the process ends
//! # Ok::<(), mlformats::Error>(())
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::{Error, Result};

/// The most bytes of the file the walk's blocks answer holds (see the
/// [module documentation](self)): a walk that reads more is stopped there,
/// and the page reads the rest itself.
pub const WALK_BUDGET: u64 = 1 << 20;

/// The page's files: name, media type, bytes.
const ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_bytes!("../web/index.html"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../web/app.js"),
    ),
    (
        "mlformats.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../web/mlformats.js"),
    ),
    (
        "remote.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../web/remote.js"),
    ),
    (
        "drawing.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../web/drawing.js"),
    ),
    (
        "graphview.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../web/graphview.js"),
    ),
    (
        "worker.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../web/worker.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_bytes!("../web/style.css"),
    ),
    (
        "mlformats_web.wasm",
        "application/wasm",
        include_bytes!("../web/mlformats_web.wasm"),
    ),
];

/// The viewer page's file `name` (`index.html`, `app.js`, ...): its media
/// type and bytes, as the server hands them out.
pub fn asset(name: &str) -> Option<(&'static str, &'static [u8])> {
    ASSETS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, mime, body)| (*mime, *body))
}

/// The names of the viewer page's files.
pub fn asset_names() -> impl Iterator<Item = &'static str> {
    ASSETS.iter().map(|(n, _, _)| *n)
}

/// A running viewer server. Dropping it (or [`Viewer::stop`]) stops it.
#[derive(Debug)]
pub struct Viewer {
    addr: SocketAddr,
    url: String,
    stopping: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Viewer {
    /// Serves the page and `file` on `127.0.0.1:port` (`0`: a free port)
    /// from a background thread. Fails when `file` is not a readable file
    /// or the port cannot be bound.
    ///
    /// With the `remote` feature, `file` may be a location
    /// (`http(s)://`, `s3://`, `gs://`, `az://`, as [`crate::open`] takes):
    /// the server then hands the page the byte ranges it asks for, each
    /// fetched from there by range ([`crate::remote::RemoteFile`]), so the
    /// page reads a model on a server or in a bucket as it reads a local
    /// one, with the credentials of this process, and nothing is
    /// downloaded whole.
    pub fn start(file: impl AsRef<Path>, port: u16) -> Result<Viewer> {
        let file = file.as_ref();
        let backing = Backing::open(file)?;
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let addr = listener.local_addr()?;
        let route = file_route(file);
        let url = format!("http://{addr}/?url={route}");
        let walk_route = format!("walk/{}", &route["file/".len()..]);
        let stopping = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicU64::new(0));
        let served = Served {
            backing: Arc::new(backing),
            route,
            walk_route,
            sent: Arc::clone(&sent),
        };
        let flag = Arc::clone(&stopping);
        let thread = std::thread::Builder::new()
            .name("mlformats-view".into())
            .spawn(move || accept_loop(&listener, served, &flag))?;
        Ok(Viewer {
            addr,
            url,
            stopping,
            sent,
            thread: Some(thread),
        })
    }

    /// The page's address, with the file to open
    /// (`http://127.0.0.1:PORT/?url=file/NAME`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many bytes of the file the server has sent so far, over every
    /// request (the page reads a file by ranges: a header walk costs a few
    /// requests, not the whole file).
    pub fn file_bytes_sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Blocks while the server runs (until the process ends).
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Stops accepting connections and waits for the server thread to end
    /// (a request being answered finishes on its own thread).
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stopping.store(true, Ordering::SeqCst);
            // wakes the blocking accept; it then sees the flag
            let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
            let _ = t.join();
        }
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// What the server hands out besides the page: the one file, under its
/// route, the blocks of its header walk under theirs, and the count of its
/// bytes sent.
#[derive(Debug, Clone)]
struct Served {
    backing: Arc<Backing>,
    route: String,
    walk_route: String,
    sent: Arc<AtomicU64>,
}

/// Where the served file's bytes come from.
#[derive(Debug)]
enum Backing {
    /// A local file, opened for each request.
    Local(PathBuf),
    /// A remote file, read by ranges (the `remote` feature).
    #[cfg(feature = "remote")]
    Remote(Box<crate::remote::RemoteFile>),
}

impl Backing {
    /// The file at `file`, or the remote file at that location; fails
    /// now, saying why, when it cannot be read.
    fn open(file: &Path) -> Result<Backing> {
        #[cfg(feature = "remote")]
        if let Some(location) = file.to_str().filter(|s| crate::remote::is_remote(s)) {
            let options = crate::remote::RemoteOptions::default();
            return Ok(Backing::Remote(Box::new(crate::remote::RemoteFile::open(
                location, &options,
            )?)));
        }
        if file.is_dir() {
            return Err(Error::IsDirectory);
        }
        std::fs::File::open(file)?; // readable, or say so now
        Ok(Backing::Local(file.to_path_buf()))
    }

    /// The file's length and an `ETag` that changes when the file does
    /// (a local file's length and modification time; a remote file is
    /// checked against its own ETag on every read, so its length does).
    fn describe(&self) -> std::io::Result<(u64, String)> {
        match self {
            Backing::Local(path) => {
                let meta = std::fs::metadata(path)?;
                let len = meta.len();
                let modified = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                Ok((len, format!("\"{len:x}-{modified:x}\"")))
            }
            #[cfg(feature = "remote")]
            Backing::Remote(r) => {
                let len = tensor_core::wire::ReadAt::len(r.as_ref());
                Ok((len, format!("\"{len:x}-remote\"")))
            }
        }
    }

    /// Copies `count` bytes from `start` to `out`; the bytes copied.
    fn copy(&self, start: u64, count: u64, out: &mut impl Write) -> std::io::Result<u64> {
        use std::io::{Seek, SeekFrom};
        match self {
            Backing::Local(path) => {
                let mut f = std::fs::File::open(path)?;
                f.seek(SeekFrom::Start(start))?;
                std::io::copy(&mut f.take(count), out)
            }
            #[cfg(feature = "remote")]
            Backing::Remote(r) => {
                const CHUNK: u64 = 1 << 20;
                let mut buf = vec![0u8; CHUNK.min(count) as usize];
                let mut done = 0;
                while done < count {
                    let n = CHUNK.min(count - done) as usize;
                    tensor_core::wire::ReadAt::read_at(r.as_ref(), start + done, &mut buf[..n])?;
                    out.write_all(&buf[..n])?;
                    done += n as u64;
                }
                Ok(done)
            }
        }
    }
}

fn accept_loop(listener: &TcpListener, served: Served, stopping: &AtomicBool) {
    for stream in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let served = served.clone();
        let _ = std::thread::Builder::new()
            .name("mlformats-view-request".into())
            .spawn(move || {
                let _ = handle(stream, &served);
            });
    }
}

/// The URL path under which the file is served: `file/` and its name,
/// percent-encoded.
fn file_route(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    let encoded: String = name
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    format!("file/{encoded}")
}

fn handle(mut stream: TcpStream, served: &Served) -> std::io::Result<()> {
    // a client that connects and says nothing does not hold a thread forever
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?.take(64 * 1024));
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // the headers (bounded): only the Host and Range are looked at
    let mut line = String::new();
    let mut host_ok = false;
    let mut range: Option<String> = None;
    for _ in 0..100 {
        line.clear();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("host")
        {
            // another name for this address (DNS rebinding) gets nothing
            let host = v.trim();
            let name = host.rsplit_once(':').map_or(host, |(h, _)| h);
            host_ok = matches!(name, "127.0.0.1" | "localhost");
        } else if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("range")
        {
            range = Some(v.trim().to_string());
        }
    }
    let mut parts = request.split_whitespace();
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("/");
    let path = target
        .split('?')
        .next()
        .unwrap_or("/")
        .trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    if !host_ok {
        return respond(&mut stream, "403 Forbidden", "text/plain", b"forbidden");
    }
    if method != "GET" && method != "HEAD" {
        return respond(&mut stream, "405 Method Not Allowed", "text/plain", b"");
    }
    let head = method == "HEAD";
    if path == served.route {
        return serve_file(&mut stream, served, range.as_deref(), head);
    }
    if path == served.walk_route {
        let query = target.split_once('?').map_or("", |(_, q)| q);
        return serve_walk(&mut stream, served, query, head);
    }
    match asset(path) {
        Some((mime, body)) => respond(&mut stream, "200 OK", mime, if head { b"" } else { body }),
        None => respond(&mut stream, "404 Not Found", "text/plain", b"not found"),
    }
}

/// Sends the file, or the one byte range a `Range: bytes=...` header asks
/// for (`206 Partial Content`; `416` past the end). A header this server
/// does not take (several ranges, another unit) gets the whole file, as
/// HTTP allows. Every answer carries an `ETag` made of the file's length
/// and modification time, so a reader can tell when the file changed
/// between its requests.
fn serve_file(
    stream: &mut TcpStream,
    served: &Served,
    range: Option<&str>,
    head: bool,
) -> std::io::Result<()> {
    let (len, etag) = served.backing.describe()?;
    let walk = match served.backing.as_ref() {
        Backing::Local(_) => format!("X-Mlformats-Walk: /{}\r\n", served.walk_route),
        #[cfg(feature = "remote")]
        Backing::Remote(_) => String::new(),
    };
    let common = format!(
        "Content-Type: application/octet-stream\r\nAccept-Ranges: bytes\r\nETag: {etag}\r\n{walk}Cache-Control: no-store\r\nConnection: close\r\n"
    );
    let (status, start, count) = match range.map(|r| byte_range(r, len)) {
        Some(Some(Ok((a, b)))) => (
            format!("206 Partial Content\r\nContent-Range: bytes {a}-{b}/{len}"),
            a,
            b - a + 1,
        ),
        Some(Some(Err(()))) => {
            write!(
                stream,
                "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\nContent-Length: 0\r\n{common}\r\n"
            )?;
            return stream.flush();
        }
        Some(None) | None => ("200 OK".to_string(), 0, len),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Length: {count}\r\n{common}\r\n"
    )?;
    if !head {
        let n = served.backing.copy(start, count, stream)?;
        served.sent.fetch_add(n, Ordering::Relaxed);
    }
    stream.flush()
}

/// Answers the blocks the header walk of the (local) file reads: the
/// query says the page's block size (`block=`, 512 bytes to 1 MiB) and
/// how many of the file's first bytes it has already (`have=`: blocks
/// wholly below are left out). The body is a run of records, each the
/// offset of a run of blocks (8 bytes, little-endian), its length (4 bytes)
/// and its bytes; the `ETag` is the file's, as [`serve_file`] sends it.
fn serve_walk(
    stream: &mut TcpStream,
    served: &Served,
    query: &str,
    head: bool,
) -> std::io::Result<()> {
    let Backing::Local(path) = served.backing.as_ref() else {
        return respond(stream, "404 Not Found", "text/plain", b"not found");
    };
    let param = |key: &str| {
        query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == key)
            .and_then(|(_, v)| v.parse::<u64>().ok())
    };
    let block = param("block").unwrap_or(8 << 10).clamp(512, 1 << 20);
    let have = param("have").unwrap_or(0);
    let (_, etag) = served.backing.describe()?;
    let file = std::fs::File::open(path)?;
    let runs = walk_blocks(file, path, block, WALK_BUDGET);
    let mut body = Vec::new();
    let mut data = 0;
    for (at, bytes) in runs {
        // blocks wholly below `have` the page has
        let skip = if at + (bytes.len() as u64) <= have {
            bytes.len()
        } else if at < have {
            ((have - at) / block * block) as usize
        } else {
            0
        };
        let rest = &bytes[skip..];
        if rest.is_empty() {
            continue;
        }
        body.extend_from_slice(&(at + skip as u64).to_le_bytes());
        body.extend_from_slice(&(rest.len() as u32).to_le_bytes());
        body.extend_from_slice(rest);
        data += rest.len() as u64;
    }
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nETag: {etag}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if !head {
        stream.write_all(&body)?;
        served.sent.fetch_add(data, Ordering::Relaxed);
    }
    stream.flush()
}

/// The runs of `block`-sized blocks (the last of the file may be short)
/// that the header walk of `file` (named `path`, as the page names it)
/// reads, with their bytes, in order: at most `budget` bytes; a walk that
/// reads more is stopped there. A file the walk refuses gives the blocks
/// it read until then.
fn walk_blocks(file: std::fs::File, path: &Path, block: u64, budget: u64) -> Vec<(u64, Vec<u8>)> {
    use std::collections::BTreeSet;
    use std::sync::Mutex;
    use tensor_core::wire::ReadAt;

    /// The file, noting the blocks each read touches; reads past the
    /// budget fail.
    struct Noting {
        file: std::fs::File,
        len: u64,
        block: u64,
        budget: u64,
        blocks: Mutex<BTreeSet<u64>>,
    }
    impl ReadAt for Noting {
        fn len(&self) -> u64 {
            self.len
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
            if !buf.is_empty() {
                let end = offset.saturating_add(buf.len() as u64);
                let mut blocks = self
                    .blocks
                    .lock()
                    .map_err(|_| std::io::Error::other("poisoned"))?;
                let new: Vec<u64> = (offset / self.block..=(end - 1) / self.block)
                    .filter(|b| !blocks.contains(b))
                    .collect();
                if (blocks.len() + new.len()) as u64 * self.block > self.budget {
                    return Err(std::io::Error::other("past the walk's budget"));
                }
                blocks.extend(new);
            }
            self.file.read_at(offset, buf)
        }
    }

    let len = file.metadata().map_or(0, |m| m.len());
    let noting = Noting {
        file,
        len,
        block,
        budget,
        blocks: Mutex::new(BTreeSet::new()),
    };
    let name = path.file_name().map(Path::new);
    let _ = crate::random_access::FileIndex::open(&noting, name, &Default::default());
    let blocks = noting.blocks.into_inner().unwrap_or_default();
    let mut runs: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut last = None;
    for b in blocks {
        let at = b * block;
        if at >= len {
            break;
        }
        let n = block.min(len - at) as usize;
        let mut bytes = vec![0u8; n];
        if noting.file.read_at(at, &mut bytes).is_err() {
            break;
        }
        match runs.last_mut() {
            Some((_, run)) if last == Some(b.wrapping_sub(1)) => run.extend_from_slice(&bytes),
            _ => runs.push((at, bytes)),
        }
        last = Some(b);
    }
    runs
}

/// The first and last byte a `Range` header's value asks for in a file of
/// `len` bytes: `None` for a value this server does not take (another unit,
/// several ranges, bad syntax: the whole file is sent), `Err` for a range
/// that starts past the end (416).
fn byte_range(value: &str, len: u64) -> Option<std::result::Result<(u64, u64), ()>> {
    let spec = value.strip_prefix("bytes=")?.trim();
    if spec.contains(',') {
        return None;
    }
    let (a, b) = spec.split_once('-')?;
    let (a, b) = (a.trim(), b.trim());
    if a.is_empty() {
        // the last `b` bytes
        let n: u64 = b.parse().ok()?;
        if n == 0 || len == 0 {
            return Some(Err(()));
        }
        return Some(Ok((len.saturating_sub(n), len - 1)));
    }
    let first: u64 = a.parse().ok()?;
    let last: u64 = if b.is_empty() {
        u64::MAX
    } else {
        b.parse().ok()?
    };
    if last < first {
        return None;
    }
    if first >= len {
        return Some(Err(()));
    }
    Some(Ok((first, last.min(len - 1))))
}

fn respond(stream: &mut TcpStream, status: &str, mime: &str, body: &[u8]) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {mime}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body)?;
    stream.flush()
}

/// Opens `url` in the default browser (`xdg-open`, `open`, `start`).
/// Returns whether a browser could be started.
pub fn open_in_browser(url: &str) -> bool {
    let result = if cfg!(target_os = "macos") {
        std::process::Command::new("open").arg(url).spawn()
    } else if cfg!(windows) {
        std::process::Command::new("cmd")
            .args(["/C", "start", "", url])
            .spawn()
    } else {
        std::process::Command::new("xdg-open").arg(url).spawn()
    };
    result.is_ok()
}

#[cfg(all(test, feature = "cvm"))]
mod tests {
    use super::*;

    /// The walk's blocks of a `.params` of 8 tensors of 64 KiB: one block
    /// a header; with a budget of 3 blocks, the first 3 only.
    #[test]
    fn a_walk_past_its_budget_stops_there() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.params");
        let data: Vec<Vec<u8>> = (0..8u8).map(|i| vec![i; 64 << 10]).collect();
        let tensors: Vec<(String, tensor_core::Tensor<'_>)> = data
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let t = tensor_core::Tensor::new(tensor_core::DType::F32, vec![128, 128], &d[..]);
                (format!("w{i}"), t.unwrap())
            })
            .collect();
        crate::save(&p, tensors.iter().map(|(n, t)| (n.as_str(), t))).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let all = walk_blocks(std::fs::File::open(&p).unwrap(), &p, 4096, WALK_BUDGET);
        // a block at each header: the first's at 0, each other's in the
        // 64 KiB of the tensor before it
        let starts: Vec<u64> = all.iter().map(|(at, _)| *at).collect();
        assert_eq!(starts, (0..8).map(|i| i << 16).collect::<Vec<u64>>());
        assert!(all.iter().all(|(_, run)| run.len() == 4096));
        for (at, run) in &all {
            assert_eq!(run[..], bytes[*at as usize..*at as usize + run.len()]);
        }
        let some = walk_blocks(std::fs::File::open(&p).unwrap(), &p, 4096, 3 * 4096);
        let kept: usize = some.iter().map(|(_, b)| b.len()).sum();
        assert_eq!(kept, 3 * 4096);
        assert_eq!(some[..], all[..some.len()]);
    }
}
