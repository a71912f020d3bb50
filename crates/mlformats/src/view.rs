//! The model viewer: a page that shows any file the library reads (graph,
//! tensors, summary) in a browser, served with that one file on 127.0.0.1.
//!
//! The page reads the file in the browser with this library compiled to
//! WebAssembly (`crates/mlformats-web`, built by `cargo xtask web` into the
//! checked-in `web/` folder beside this crate's sources, which is built into
//! this module): the server only hands out the page's own files and the
//! bytes of the one file it was started with, and needs no network.
//! `mlformats view FILE` and Python's `mlformats.view(path)` are this module.
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
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::{Error, Result};

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
    thread: Option<JoinHandle<()>>,
}

impl Viewer {
    /// Serves the page and `file` on `127.0.0.1:port` (`0`: a free port)
    /// from a background thread. Fails when `file` is not a readable file
    /// or the port cannot be bound.
    pub fn start(file: impl AsRef<Path>, port: u16) -> Result<Viewer> {
        let file = file.as_ref();
        if file.is_dir() {
            return Err(Error::IsDirectory);
        }
        std::fs::File::open(file)?; // readable, or say so now
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let addr = listener.local_addr()?;
        let route = file_route(file);
        let url = format!("http://{addr}/?url={route}");
        let stopping = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stopping);
        let file = file.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("mlformats-view".into())
            .spawn(move || accept_loop(&listener, &file, &route, &flag))?;
        Ok(Viewer {
            addr,
            url,
            stopping,
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

fn accept_loop(listener: &TcpListener, file: &Path, route: &str, stopping: &AtomicBool) {
    for stream in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let file: PathBuf = file.to_path_buf();
        let route = route.to_string();
        let _ = std::thread::Builder::new()
            .name("mlformats-view-request".into())
            .spawn(move || {
                let _ = handle(stream, &file, &route);
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

fn handle(mut stream: TcpStream, file: &Path, route: &str) -> std::io::Result<()> {
    // a client that connects and says nothing does not hold a thread forever
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?.take(64 * 1024));
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // the headers (bounded): only the Host is looked at
    let mut line = String::new();
    let mut host_ok = false;
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
    if path == route {
        let mut f = std::fs::File::open(file)?;
        let len = f.metadata()?.len();
        write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {len}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
        )?;
        if !head {
            std::io::copy(&mut (&mut f).take(len), &mut stream)?;
        }
        return stream.flush();
    }
    match asset(path) {
        Some((mime, body)) => respond(&mut stream, "200 OK", mime, if head { b"" } else { body }),
        None => respond(&mut stream, "404 Not Found", "text/plain", b"not found"),
    }
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
