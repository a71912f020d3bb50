//! The page's interface to the module: a small plain C ABI, so that the
//! page needs no generated glue (no wasm-bindgen), only
//! `WebAssembly.instantiate` and the module's memory.
//!
//! The module keeps two buffers and at most one open file:
//!
//! - the page asks for an input buffer of `len` bytes with [`mlf_input`]
//!   and copies its bytes into the module's memory at the pointer it gets;
//! - [`mlf_open_sliced`] opens a big file by slices: the module reads the
//!   page's file through the import `mlformats.mlf_read` ([`PageFile`]),
//!   never all of it;
//! - [`mlf_open`] opens the input (the file's name, `name_len` bytes of
//!   UTF-8, followed by the file's bytes) and answers the summary;
//!   [`mlf_request`] answers the JSON request in the input buffer
//!   (`{"op": "tensors"}`, `{"op": "stats", "name": N, "bins": 40}`, ...;
//!   see [`request`]);
//! - every call returns 0 (the answer is in the output buffer) or 1 (the
//!   output buffer holds the error message); the page reads the output at
//!   [`mlf_output_ptr`], [`mlf_output_len`] bytes;
//! - a panic traps (the module is built with `panic = "abort"`): the page
//!   catches the `WebAssembly.RuntimeError`, reads the panic's message
//!   through [`mlf_last_panic`] and starts a fresh instance for the next file.
//!
//! The same functions run natively ([`set_input`] and [`output`] stand for
//! the page's copies), which is how the ABI is tested.
//!
//! The exported names carry `#[unsafe(no_mangle)]`: an unmangled symbol is
//! unsafe only because two symbols of the same name would clash at link
//! time. Every name here starts with `mlf_`, which no dependency defines,
//! and each is defined once; so the attribute is sound. No other `unsafe`
//! is used: the page writes the input buffer only between calls, when no
//! Rust reference to it is alive. The import `mlf_read` is declared `safe`
//! in an `unsafe extern` block: it writes only into the buffer its one
//! caller ([`PageFile`]) lends it.

use std::cell::RefCell;

use serde_json::{Value, json};

use mlformats::layout::Labels;
use mlformats::random_access::ReadAt;
use mlformats::{ConvertOptions, Document};

use crate::Model;

thread_local! {
    static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static MODEL: RefCell<Option<Model>> = const { RefCell::new(None) };
    static PARAMS: RefCell<Option<Document>> = const { RefCell::new(None) };
    static STREAMED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

const BROKEN: &str = "the viewer's module failed earlier (reload the page)";

/// Installs a panic hook that keeps the panic's message for
/// [`mlf_last_panic`] (the page calls this once, after instantiating).
#[unsafe(no_mangle)]
pub extern "C" fn mlf_init() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info.to_string();
        LAST_PANIC.with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                *p = Some(msg);
            }
        });
    }));
}

/// Makes the input buffer `len` zero bytes long and returns where it
/// starts, for the page to copy its bytes in; null when the memory cannot
/// be had (a file too big for the module's memory).
#[unsafe(no_mangle)]
pub extern "C" fn mlf_input(len: usize) -> *mut u8 {
    INPUT.with(|i| {
        let Ok(mut input) = i.try_borrow_mut() else {
            return std::ptr::null_mut();
        };
        *input = Vec::new();
        if input.try_reserve_exact(len).is_err() {
            return std::ptr::null_mut();
        }
        input.resize(len, 0);
        input.as_mut_ptr()
    })
}

/// Where the last answer (or error message) starts.
#[unsafe(no_mangle)]
pub extern "C" fn mlf_output_ptr() -> *const u8 {
    OUTPUT.with(|o| o.try_borrow().map_or(std::ptr::null(), |o| o.as_ptr()))
}

/// The last answer's (or error message's) length in bytes.
#[unsafe(no_mangle)]
pub extern "C" fn mlf_output_len() -> usize {
    OUTPUT.with(|o| o.try_borrow().map_or(0, |o| o.len()))
}

/// Opens the input buffer: the file's name (`name_len` bytes of UTF-8)
/// then the file's bytes. 0: the output is the summary (JSON); 1: the
/// output is the error message. The input buffer is consumed.
#[unsafe(no_mangle)]
pub extern "C" fn mlf_open(name_len: usize) -> u32 {
    let mut input = match INPUT.with(|i| i.try_borrow_mut().map(|mut i| std::mem::take(&mut *i))) {
        Ok(v) => v,
        Err(_) => return answer(Err(BROKEN.into())),
    };
    if name_len > input.len() {
        return answer(Err("the name is longer than the input".into()));
    }
    let name = match std::str::from_utf8(&input[..name_len]) {
        Ok(n) => n.to_string(),
        Err(_) => return answer(Err("the file's name is not UTF-8".into())),
    };
    // moves the file's bytes to the front: no second copy of the file
    input.drain(..name_len);
    let result = MODEL.with(|m| {
        let Ok(mut slot) = m.try_borrow_mut() else {
            return Err(BROKEN.to_string());
        };
        *slot = None; // the previous file's memory goes first
        let model = Model::open_bytes(input, &name).map_err(|e| e.0)?;
        let summary = model.summary();
        *slot = Some(model);
        Ok(summary.into_bytes())
    });
    answer(result)
}

/// Opens a big file by slices: the input buffer holds the file's name
/// (UTF-8); the file (`size` bytes) stays in the page, which the module
/// reads through the import `mlformats.mlf_read` (see [`PageFile`]). 0: the
/// output is the summary; 1: the output is the error message; 2: the
/// library reads this format whole only (the page opens it with
/// [`mlf_open`]). `block` is the size of the block small reads are
/// cached by (0: 64 KiB, for a file the page holds; a file the page reads
/// by range requests, which it caches itself, gives a small one, so that
/// a header per tensor costs a small request each).
#[unsafe(no_mangle)]
pub extern "C" fn mlf_open_sliced(size: f64, block: u32) -> u32 {
    let input = match INPUT.with(|i| i.try_borrow_mut().map(|mut i| std::mem::take(&mut *i))) {
        Ok(v) => v,
        Err(_) => return answer(Err(BROKEN.into())),
    };
    let Ok(name) = String::from_utf8(input) else {
        return answer(Err("the file's name is not UTF-8".into()));
    };
    if !(0.0..=9_007_199_254_740_992.0).contains(&size) {
        return answer(Err(format!("a file size of {size} bytes")));
    }
    let block = if block == 0 {
        BLOCK
    } else {
        u64::from(block.clamp(512, 1 << 20))
    };
    open_sliced(
        Box::new(PageFile::new(size as u64).with_block(block)),
        &name,
    )
}

/// Loads a parameter file for converting with `--params` (an NNabla
/// `.h5`, `.protobuf`, `.nntxt` or `.nnp` whose parameters merge into the
/// open network): the input buffer holds its name (`name_len` bytes of
/// UTF-8) then its bytes. 0: the output is `{"file", "format", "tensors"}`;
/// 1: the output is the error message. A convert request with `"params":
/// true` uses it.
#[unsafe(no_mangle)]
pub extern "C" fn mlf_params(name_len: usize) -> u32 {
    let mut input = match INPUT.with(|i| i.try_borrow_mut().map(|mut i| std::mem::take(&mut *i))) {
        Ok(v) => v,
        Err(_) => return answer(Err(BROKEN.into())),
    };
    if name_len > input.len() {
        return answer(Err("the name is longer than the input".into()));
    }
    let name = match std::str::from_utf8(&input[..name_len]) {
        Ok(n) => n.to_string(),
        Err(_) => return answer(Err("the file's name is not UTF-8".into())),
    };
    input.drain(..name_len);
    let result = PARAMS.with(|p| {
        let Ok(mut slot) = p.try_borrow_mut() else {
            return Err(BROKEN.to_string());
        };
        *slot = None;
        let path = (!name.is_empty()).then(|| std::path::Path::new(&name));
        // the CLI's message names the parameter file
        let doc = Document::from_bytes(input, path, None)
            .map_err(|e| format!("{name}: {}", mlformats::chain_message(&e)))?;
        let info = json!({"file": name, "format": doc.format().name(), "tensors": doc.len()});
        *slot = Some(doc);
        Ok(info.to_string().into_bytes())
    });
    answer(result)
}

/// Opens `reader` by slices as [`mlf_open_sliced`] does (natively: how the
/// tests drive it).
pub fn open_sliced(reader: Box<dyn ReadAt + Send + Sync>, name: &str) -> u32 {
    let result = MODEL.with(|m| {
        let Ok(mut slot) = m.try_borrow_mut() else {
            return Err(BROKEN.to_string());
        };
        *slot = None;
        match Model::open_indexed(reader, name).map_err(|e| e.0)? {
            Some(model) => {
                let summary = model.summary();
                *slot = Some(model);
                Ok(Some(summary.into_bytes()))
            }
            None => Ok(None),
        }
    });
    match result {
        Ok(Some(summary)) => answer(Ok(summary)),
        Ok(None) => {
            set_output(Vec::new());
            2
        }
        Err(e) => answer(Err(e)),
    }
}

/// The file the page holds (a `File`, a `Blob`), read through the page:
/// the import `mlformats.mlf_read(offset, ptr, len)` copies `len` bytes
/// of the file from `offset` into the module's memory at `ptr` (in a web
/// worker, `FileReaderSync` over `Blob.slice`) and returns 0, or 1 when it
/// cannot. Small reads go through a cache of one block (64 KiB unless
/// [`PageFile::with_block`] says otherwise): the library reads a structure
/// a few fields at a time, and every call into the page costs about a
/// millisecond.
pub struct PageFile {
    len: u64,
    block_size: u64,
    block: std::sync::Mutex<(u64, Vec<u8>)>,
    /// Natively (tests): what stands for the page.
    inner: Option<Box<dyn ReadAt + Send + Sync>>,
}

/// The cached block's size.
const BLOCK: u64 = 64 << 10;

impl PageFile {
    /// The page's file of `len` bytes.
    pub fn new(len: u64) -> Self {
        PageFile {
            len,
            block_size: BLOCK,
            block: std::sync::Mutex::new((0, Vec::new())),
            inner: None,
        }
    }

    /// The same, small reads cached by blocks of `size` bytes (at least 1).
    pub fn with_block(mut self, size: u64) -> Self {
        self.block_size = size.max(1);
        self
    }

    /// `file` read the way the page's file is (through the block cache):
    /// how the tests drive it natively.
    pub fn over(file: Box<dyn ReadAt + Send + Sync>) -> Self {
        PageFile {
            len: file.len(),
            block_size: BLOCK,
            block: std::sync::Mutex::new((0, Vec::new())),
            inner: Some(file),
        }
    }

    /// Reads from the page, uncached.
    fn read_page(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        if let Some(file) = &self.inner {
            return file.read_at(offset, buf);
        }
        #[cfg(target_arch = "wasm32")]
        {
            if buf.is_empty() || mlf_read(offset as f64, buf.as_mut_ptr(), buf.len()) == 0 {
                return Ok(());
            }
            Err(std::io::Error::other("the page could not read the file"))
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            let _ = (offset, buf);
            Err(std::io::Error::other("no page to read from"))
        }
    }
}

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "mlformats")]
unsafe extern "C" {
    // Declared safe: it writes only the `len` bytes at `ptr`, which the one
    // caller below passes from a live `&mut [u8]` no other reference sees.
    safe fn mlf_read(offset: f64, ptr: *mut u8, len: usize) -> u32;
}

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "mlformats")]
unsafe extern "C" {
    // Declared safe: it only reads the `len` bytes at `ptr`, which the one
    // caller below passes from a live `&[u8]`.
    safe fn mlf_write(offset: f64, ptr: *const u8, len: usize) -> u32;
}

/// The converted file, handed to the page a piece at a time: the import
/// `mlformats.mlf_write(offset, ptr, len)` gives the page `len` bytes at
/// `ptr` to put at `offset` of the output (appended at its end, or over
/// bytes it has: a writer seeks back to patch a header), which the page
/// keeps as the parts of a `Blob`. Pieces are gathered into 1 MiB before
/// they go. Natively (tests) the output is kept in memory ([`streamed`]).
pub struct PageSink {
    buf: Vec<u8>,
    /// Where `buf` goes in the output.
    buf_at: u64,
    /// The writer's position.
    pos: u64,
    /// The output's length so far.
    len: u64,
}

/// Bytes gathered before they go to the page.
const PIECE: usize = 1 << 20;

impl PageSink {
    /// An empty output.
    pub fn new() -> Self {
        STREAMED.with(|s| s.borrow_mut().clear());
        PageSink {
            buf: Vec::new(),
            buf_at: 0,
            pos: 0,
            len: 0,
        }
    }

    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        #[cfg(target_arch = "wasm32")]
        {
            if mlf_write(self.buf_at as f64, self.buf.as_ptr(), self.buf.len()) != 0 {
                return Err(std::io::Error::other("the page could not keep the output"));
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        STREAMED.with(|s| {
            let mut s = s.borrow_mut();
            let at = usize::try_from(self.buf_at).map_err(std::io::Error::other)?;
            let end = at + self.buf.len();
            if s.len() < end {
                s.resize(end, 0);
            }
            s[at..end].copy_from_slice(&self.buf);
            Ok::<(), std::io::Error>(())
        })?;
        self.buf_at += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

impl Default for PageSink {
    fn default() -> Self {
        Self::new()
    }
}

impl std::io::Write for PageSink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.pos != self.buf_at + self.buf.len() as u64 {
            self.send()?;
            self.buf_at = self.pos;
        }
        self.buf.extend_from_slice(data);
        self.pos += data.len() as u64;
        self.len = self.len.max(self.pos);
        if self.buf.len() >= PIECE {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

impl std::io::Seek for PageSink {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let pos = match to {
            std::io::SeekFrom::Start(p) => Some(p),
            std::io::SeekFrom::End(d) => self.len.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        let pos = pos.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        if pos != self.pos {
            self.send()?;
            self.pos = pos;
            self.buf_at = pos;
        }
        Ok(pos)
    }
}

/// Natively: the output the last `convert_stream` request streamed (what
/// the page assembles from the pieces it got).
pub fn streamed() -> Vec<u8> {
    STREAMED.with(|s| s.borrow().clone())
}

impl ReadAt for PageFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let end = offset.checked_add(buf.len() as u64);
        if end.is_none_or(|e| e > self.len) {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let size = self.block_size;
        let start = offset - offset % size;
        let in_block = (offset - start) as usize;
        if buf.len() as u64 > size / 4 || in_block + buf.len() > size as usize {
            return self.read_page(offset, buf);
        }
        let Ok(mut block) = self.block.try_lock() else {
            return self.read_page(offset, buf);
        };
        if block.1.is_empty() || block.0 != start {
            let n = (self.len - start).min(size) as usize;
            block.1.clear();
            block.1.resize(n, 0);
            if let Err(e) = self.read_page(start, &mut block.1) {
                block.1.clear();
                return Err(e);
            }
            block.0 = start;
        }
        // end <= len (checked above), so the block holds the range
        buf.copy_from_slice(&block.1[in_block..in_block + buf.len()]);
        Ok(())
    }
}

/// Answers the JSON request in the input buffer (see [`request`]). 0: the
/// output is the answer; 1: the output is the error message.
#[unsafe(no_mangle)]
pub extern "C" fn mlf_request() -> u32 {
    let input = match INPUT.with(|i| i.try_borrow_mut().map(|mut i| std::mem::take(&mut *i))) {
        Ok(v) => v,
        Err(_) => return answer(Err(BROKEN.into())),
    };
    let result = match serde_json::from_slice::<Value>(&input) {
        Ok(req) => request(&req),
        Err(e) => Err(format!("a request that is not JSON: {e}")),
    };
    answer(result)
}

/// Puts the last panic's message in the output; 1 if there was one, 0 if
/// not.
#[unsafe(no_mangle)]
pub extern "C" fn mlf_last_panic() -> u32 {
    let msg = LAST_PANIC.with(|p| p.try_borrow().ok().and_then(|p| p.clone()));
    match msg {
        Some(m) => {
            set_output(m.into_bytes());
            1
        }
        None => 0,
    }
}

fn set_output(bytes: Vec<u8>) {
    OUTPUT.with(|o| {
        if let Ok(mut o) = o.try_borrow_mut() {
            *o = bytes;
        }
    });
}

fn answer(result: Result<Vec<u8>, String>) -> u32 {
    match result {
        Ok(bytes) => {
            set_output(bytes);
            0
        }
        Err(msg) => {
            set_output(msg.into_bytes());
            1
        }
    }
}

fn str_field<'a>(req: &'a Value, key: &str) -> Result<&'a str, String> {
    req[key]
        .as_str()
        .ok_or_else(|| format!("the request has no string {key:?}"))
}

/// The strings of an array field (none when absent or not an array).
fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn usize_field(req: &Value, key: &str, default: usize) -> usize {
    req[key]
        .as_u64()
        .map_or(default, |v| usize::try_from(v).unwrap_or(usize::MAX))
}

/// What a `layout` request's boxes show: its `names`, `weights` and
/// `attributes` flags (a missing or non-boolean one keeps the default).
fn labels(req: &Value) -> Labels {
    let mut l = Labels::default();
    l.names = req["names"].as_bool().unwrap_or(l.names);
    l.weights = req["weights"].as_bool().unwrap_or(l.weights);
    l.attributes = req["attributes"].as_bool().unwrap_or(l.attributes);
    l
}

/// Answers one request on the open file, as bytes (JSON text):
///
/// - `{"op": "version"}`: the module's version (needs no file);
/// - `{"op": "summary" | "tensors" | "graph" | "inspect"}`: see
///   [`Model::summary`], [`Model::tensors`], [`Model::graph`],
///   [`Model::inspect_json`];
/// - `{"op": "layout", "network": I, "direction": "tb" | "lr",
///   "collapsed": [GROUP, ...], "expanded": [GROUP, ...], "names": B,
///   "weights": B, "attributes": B}`: the drawing of the network at index
///   `I`, its layers top to bottom (default) or left to right, the groups
///   in `collapsed` drawn closed and the subgraphs in `expanded` open, its
///   boxes with (`true`) or without their node's name (default with), their
///   folded weights (default with) and up to four attributes (default
///   without), [`Model::layout_json`];
/// - `{"op": "stats", "name": N, "bins": B}`: [`Model::stats_json`];
/// - `{"op": "values", "name": N, "start": S, "count": C}`:
///   [`Model::values_json`];
/// - `{"op": "formats"}`: the target formats, see [`crate::formats`]
///   (needs no file);
/// - `{"op": "convert", "to": F, ...options}`: the open file converted to
///   the format `F`, as the file's bytes (not JSON), see [`Model::convert`];
///   the options are `mlformats convert`'s, see [`convert_options`];
///   with `"params": true`, the parameter file [`mlf_params`] loaded is
///   merged in first (`--params`);
/// - `{"op": "convert_stream", "to": F, ...options}`: the same conversion
///   streamed to the page through [`PageSink`] (a file opened by slices: see
///   [`Model::convert_stream`]); the answer is `{"bytes": length}`, or
///   `{"whole": reason}` when the conversion needs the whole model in
///   memory (nothing written: the page may read the file whole and
///   `convert` it);
/// - `{"op": "close"}`: forgets the open file.
pub fn request(req: &Value) -> Result<Vec<u8>, String> {
    let op = str_field(req, "op")?;
    if op == "version" {
        return Ok(json!(crate::version()).to_string().into_bytes());
    }
    if op == "formats" {
        return Ok(crate::formats().into_bytes());
    }
    MODEL.with(|m| {
        if op == "close" {
            let mut slot = m.try_borrow_mut().map_err(|_| BROKEN.to_string())?;
            *slot = None;
            return Ok(b"null".to_vec());
        }
        let slot = m.try_borrow().map_err(|_| BROKEN.to_string())?;
        let model = slot.as_ref().ok_or("no file is open")?;
        let text = match op {
            "summary" => model.summary(),
            "tensors" => model.tensors(),
            "graph" => model.graph(),
            "layout" => model
                .layout_json(
                    usize_field(req, "network", 0),
                    req["direction"].as_str() == Some("lr"),
                    (&names(&req["collapsed"]), &names(&req["expanded"])),
                    labels(req),
                )
                .map_err(|e| e.0)?,
            "inspect" => model.inspect_json().map_err(|e| e.0)?,
            "stats" => model
                .stats_json(str_field(req, "name")?, usize_field(req, "bins", 40))
                .map_err(|e| e.0)?,
            "values" => model
                .values_json(
                    str_field(req, "name")?,
                    usize_field(req, "start", 0),
                    usize_field(req, "count", 100),
                )
                .map_err(|e| e.0)?,
            "convert" => {
                let opts = convert_options(req)?;
                let to = str_field(req, "to")?;
                if !want_params(req)? {
                    return model.convert(to, &opts, None).map_err(|e| e.0);
                }
                return PARAMS.with(|p| {
                    let p = p.try_borrow().map_err(|_| BROKEN.to_string())?;
                    let p = p.as_ref().ok_or("--params: no parameter file is loaded")?;
                    model.convert(to, &opts, Some(p)).map_err(|e| e.0)
                });
            }
            "convert_stream" => {
                let opts = convert_options(req)?;
                let mut sink = PageSink::new();
                let streamed = model
                    .convert_stream(str_field(req, "to")?, &opts, want_params(req)?, &mut sink)
                    .map_err(|e| e.0)?;
                std::io::Write::flush(&mut sink).map_err(|e| e.to_string())?;
                let answer = match streamed {
                    crate::Streamed::Written(len) => json!({ "bytes": len }),
                    crate::Streamed::NeedsWholeModel(why) => json!({ "whole": why }),
                };
                return Ok(answer.to_string().into_bytes());
            }
            other => return Err(format!("unknown request {other:?}")),
        };
        Ok(text.into_bytes())
    })
}

/// The options of a convert request, `mlformats convert`'s flags by the
/// same names (every one optional): `"dtype"` (a name of
/// [`mlformats::CAST_TARGETS`]: `--dtype`), `"only"` and `"exclude"` (lists of patterns:
/// `--only`, `--exclude`), `"opset"` (an integer: `--opset`), `"network"`
/// (`--network`), `"rename"` (a list of `FROM=TO`: `--rename`),
/// `"input_shape"` (a list of `NAME=D0,D1,...`: `--input-shape`),
/// `"skip_unsupported"`, `"weights_only"` and `"keep_order"` (booleans).
/// Only the values are parsed here: what they mean (and which values the
/// library refuses, with the CLI's message) is the library's.
pub fn convert_options(req: &Value) -> Result<ConvertOptions, String> {
    let strings = |key: &str| -> Result<Vec<String>, String> {
        match &req[key] {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| format!("--{}: a value that is not text: {v}", flag(key)))
                })
                .collect(),
            other => Err(format!(
                "--{}: a value that is not a list: {other}",
                flag(key)
            )),
        }
    };
    let flag_on = |key: &str| -> Result<bool, String> {
        match &req[key] {
            Value::Null => Ok(false),
            Value::Bool(b) => Ok(*b),
            other => Err(format!(
                "--{}: a value that is not true or false: {other}",
                flag(key)
            )),
        }
    };
    let mut opts = ConvertOptions::new()
        .skip_unsupported(flag_on("skip_unsupported")?)
        .weights_only(flag_on("weights_only")?)
        .keep_order(flag_on("keep_order")?);
    opts.only = strings("only")?;
    opts.exclude = strings("exclude")?;
    for r in strings("rename")? {
        // the CLI's `FROM=TO`, split at the first `=` as the CLI does
        let (from, to) = r.split_once('=').ok_or_else(|| {
            format!("invalid value '{r}' for '--rename <FROM=TO>': {r:?} is not FROM=TO")
        })?;
        opts.renames.push((from.to_string(), to.to_string()));
    }
    opts.dtype = match &req["dtype"] {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        v => {
            let s = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            let found = mlformats::CAST_TARGETS.iter().find(|d| d.name() == s);
            Some(found.copied().ok_or_else(|| {
                let names: Vec<&str> = mlformats::CAST_TARGETS.iter().map(|d| d.name()).collect();
                format!(
                    "invalid value '{s}' for '--dtype <TYPE>' [possible values: {}]",
                    names.join(", ")
                )
            })?)
        }
    };
    // a number, or the text the page's field holds (parsed as the CLI does)
    opts.opset = match &req["opset"] {
        Value::Null => None,
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) => Some(
            s.trim()
                .parse::<i64>()
                .map_err(|e| format!("invalid value '{s}' for '--opset <N>': {e}"))?,
        ),
        v => Some(
            v.as_i64()
                .ok_or_else(|| format!("invalid value '{v}' for '--opset <N>'"))?,
        ),
    };
    for s in strings("input_shape")? {
        // parsed by the library, as the CLI parses --input-shape
        let shape = mlformats::parse_input_shape(&s).map_err(|e| {
            format!("invalid value '{s}' for '--input-shape <NAME=D0,D1,...>': {e}")
        })?;
        opts.input_shapes.push(shape);
    }
    opts.network = match &req["network"] {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::String(s) => Some(s.clone()),
        other => return Err(format!("--network: a value that is not text: {other}")),
    };
    Ok(opts)
}

/// Whether a convert request asks for the loaded parameter file.
fn want_params(req: &Value) -> Result<bool, String> {
    match &req["params"] {
        Value::Null | Value::Bool(false) => Ok(false),
        Value::Bool(true) => Ok(true),
        other => Err(format!(
            "--params: a value that is not true or false: {other}"
        )),
    }
}

/// The CLI's flag for a request's key (`skip_unsupported`: `skip-unsupported`).
fn flag(key: &str) -> String {
    key.replace('_', "-")
}

/// Natively: replaces the input buffer (what the page does by copying into
/// the pointer [`mlf_input`] returns).
pub fn set_input(bytes: Vec<u8>) {
    INPUT.with(|i| *i.borrow_mut() = bytes);
}

/// Natively: a copy of the output buffer (what the page reads at
/// [`mlf_output_ptr`]).
pub fn output() -> Vec<u8> {
    OUTPUT.with(|o| o.borrow().clone())
}
