//! `mlformats view FILE`: serves the viewer page (built into this binary)
//! and the file on 127.0.0.1, and opens the default browser.
//!
//! The page reads the file in the browser with the library compiled to
//! WebAssembly: this server only hands out the page's files and the bytes
//! of the one file named on the command line (no other path is served).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;

/// The page's files, as `cargo xtask web` builds them into `web/` beside
/// this crate's sources (checked in, so that a build needs no wasm
/// toolchain; CI rebuilds them and tests the fresh build in a browser).
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
        "layout.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../web/layout.js"),
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

/// The URL path under which the file is served.
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

/// Serves until the process is stopped (Ctrl-C).
pub fn serve(file: &Path, port: u16, open_browser: bool) -> anyhow::Result<()> {
    if !file.is_file() {
        anyhow::bail!("not a file");
    }
    std::fs::File::open(file)?; // readable, or say so now
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    let addr = listener.local_addr()?;
    let route = file_route(file);
    let url = format!("http://{addr}/?url={route}");
    println!("serving {} at {url} (Ctrl-C stops)", file.display());
    let _ = std::io::stdout().flush();
    if open_browser {
        open_url(&url);
    }
    let file = file.to_path_buf();
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let file = file.clone();
        let route = route.clone();
        std::thread::spawn(move || {
            let _ = handle(stream, &file, &route);
        });
    }
    Ok(())
}

fn handle(mut stream: TcpStream, file: &Path, route: &str) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
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
    match ASSETS.iter().find(|(name, _, _)| *name == path) {
        Some((_, mime, body)) => {
            respond(&mut stream, "200 OK", mime, if head { b"" } else { body })
        }
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

/// Opens `url` in the default browser; a failure only prints the URL again.
fn open_url(url: &str) {
    let result = if cfg!(target_os = "macos") {
        std::process::Command::new("open").arg(url).spawn()
    } else if cfg!(windows) {
        std::process::Command::new("cmd")
            .args(["/C", "start", "", url])
            .spawn()
    } else {
        std::process::Command::new("xdg-open").arg(url).spawn()
    };
    if result.is_err() {
        eprintln!("could not open a browser: open {url}");
    }
}
