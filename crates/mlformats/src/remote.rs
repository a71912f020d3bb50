//! Files on web servers and in object stores, read by ranges: a
//! [`RemoteFile`] is a [`ReadAt`] over `http://`, `https://`, `s3://`,
//! `gs://` or `az://` locations (through the `object_store` crate), so the
//! one reader of each format (a [`crate::Document`] opened at it) reads a remote file as it reads a local one,
//! fetching only the ranges it asks for.
//!
//! - **Credentials and endpoints** come from the environment, as the
//!   providers' own tools read them: `AWS_ACCESS_KEY_ID`,
//!   `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL` (an
//!   S3-compatible server), `AWS_ALLOW_HTTP`; `GOOGLE_SERVICE_ACCOUNT`, ...;
//!   `AZURE_STORAGE_ACCOUNT_NAME`, `AZURE_STORAGE_ACCOUNT_KEY`, ... (each
//!   builder's `from_env`). A plain `http://` server needs none.
//! - **Blocks.** Reads go through a cache of blocks ([`RemoteOptions`]:
//!   4 KiB, 1024 of them): a read fetches the blocks it misses, neighbours in
//!   one request. Reads that go on where the last one ended fetch ahead
//!   (from the second in a row: 1 block, then twice as far each time, up
//!   to 1 MiB), so a header read in small steps
//!   costs a handful of requests; a header walk that jumps (one header per
//!   tensor, as `.params` and `.tsm` have) costs one small request a
//!   header. A read larger than half the cache (a tensor's data) is
//!   fetched as it is, uncached.
//! - **One version.** The first request (a `HEAD`; where the server
//!   answers it with an error, such as `405` or `501`, or says the file
//!   is empty, a ranged `GET` of the first block, whose `Content-Range`
//!   and `ETag` say the same) learns the file's length and ETag;
//!   every range request after it asks for that ETag (`If-Match`), so a file
//!   replaced while it is read is an error ("changed while it was read"),
//!   never a mix of two versions.
//! - **A budget.** [`RemoteOptions::max_bytes`] bounds the bytes one file
//!   may fetch: a hostile server is a hostile file.
//! - **Progress.** [`RemoteOptions::progress`] (or
//!   [`RemoteFile::set_progress`]) is called after each request that
//!   fetched data with a [`Fetch`]: its bytes, the bytes and requests so
//!   far, the file's length (what the CLI's progress bars show).
//! - Timeouts and retries are `object_store`'s (a request times out after
//!   [`RemoteOptions::timeout`]; transient failures are retried with
//!   backoff); an error says the location and why, the reason first
//!   ("timed out", "cannot connect to the server", "not found", "access
//!   refused", with the timeout and retries where they matter).
//! - **Tensor by tensor.** [`open_streamed`] walks a file's headers within
//!   [`HEADER_BUDGET`] and then reads each tensor when it is asked for
//!   (a [`crate::Document`] opened at the remote file: statistics, one tensor, conversion, see [`crate::streamed`]),
//!   so memory stays near the largest tensor; a read larger than the
//!   cache is fetched 8 MiB a request into the caller's buffer.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use object_store::path::Path as StorePath;
use object_store::{ClientOptions, GetOptions, GetRange, ObjectStore, ObjectStoreExt, RetryConfig};

use crate::random_access::ReadAt;
use crate::{Error, Result};

/// The most bytes a header walk of a remote file fetches
/// ([`crate::Document::open_with`] of a location with
/// [`crate::ReadOptions::lazy`], [`open_streamed`]): 64 MiB.
pub const HEADER_BUDGET: u64 = 64 << 20;

/// Bytes fetched per request when a remote file is read whole.
const WHOLE_CHUNK: u64 = 8 << 20;

/// Bytes and requests every [`RemoteFile`] of this process has fetched
/// and made ([`fetched_total`]).
static FETCHED_TOTAL: AtomicU64 = AtomicU64::new(0);
static REQUESTS_TOTAL: AtomicU64 = AtomicU64::new(0);

/// Bytes fetched and requests made by every remote file this process has
/// read so far (what `mlformats --remote-stats` prints).
pub fn fetched_total() -> (u64, u64) {
    (
        FETCHED_TOTAL.load(Ordering::Relaxed),
        REQUESTS_TOTAL.load(Ordering::Relaxed),
    )
}

/// The location schemes a [`RemoteFile`] opens.
pub const SCHEMES: &[&str] = &["http://", "https://", "s3://", "gs://", "az://"];

/// Whether `location` names a remote file (`http://`, `https://`, `s3://`,
/// `gs://`, `az://`) rather than a local path.
pub fn is_remote(location: &str) -> bool {
    SCHEMES.iter().any(|s| {
        location
            .get(..s.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(s))
    })
}

/// What a progress callback ([`RemoteOptions::progress`]) is told after
/// each request that fetched data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fetch {
    /// Bytes this request fetched.
    pub bytes: u64,
    /// Bytes the file has fetched so far, this request's among them
    /// ([`RemoteFile::bytes_fetched`]).
    pub fetched: u64,
    /// Requests the file has made so far, the first (for its length)
    /// among them ([`RemoteFile::requests`]).
    pub requests: u64,
    /// The file's length: the total of a whole read (always known by the
    /// first request that fetches data).
    pub len: u64,
}

/// A progress callback ([`RemoteOptions::progress`]).
pub type ProgressFn = Arc<dyn Fn(Fetch) + Send + Sync>;

/// How a remote file is read.
#[derive(Clone)]
#[non_exhaustive]
pub struct RemoteOptions {
    /// Bytes fetched at least per request, the cache's unit; default 4 KiB.
    pub block_size: u64,
    /// Blocks kept; default 1024 (4 MiB).
    pub cache_blocks: usize,
    /// The most bytes the file may fetch in all (`None`: no limit).
    pub max_bytes: Option<u64>,
    /// How long one request may take; default 60 s.
    pub timeout: Duration,
    /// Retries of a failed request; default 3.
    pub retries: usize,
    /// Called after each request that fetched data, with what it fetched
    /// and the totals so far (a progress bar on a long read); default none.
    pub progress: Option<ProgressFn>,
}

impl std::fmt::Debug for RemoteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteOptions")
            .field("block_size", &self.block_size)
            .field("cache_blocks", &self.cache_blocks)
            .field("max_bytes", &self.max_bytes)
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            block_size: 4 << 10,
            cache_blocks: 1024,
            max_bytes: None,
            timeout: Duration::from_secs(60),
            retries: 3,
            progress: None,
        }
    }
}

impl RemoteOptions {
    /// The same options with a budget of `bytes` fetched.
    pub fn with_max_bytes(mut self, bytes: Option<u64>) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// The same options calling `f` after each request that fetched data
    /// ([`RemoteOptions::progress`]).
    pub fn with_progress(mut self, f: impl Fn(Fetch) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

/// Blocks fetched, the least recently used first out.
#[derive(Default)]
struct Cache {
    blocks: HashMap<u64, Arc<[u8]>>,
    order: VecDeque<u64>,
    /// The block after the last one fetched, and how many fetches in a
    /// row started where the one before ended.
    next: u64,
    streak: u32,
}

/// The most blocks read ahead of a sequential read.
const MAX_AHEAD_BYTES: u64 = 1 << 20;

/// A remote file read by ranges (see the [module documentation](self)).
pub struct RemoteFile {
    location: String,
    store: Arc<dyn ObjectStore>,
    path: StorePath,
    len: u64,
    etag: Option<String>,
    runtime: tokio::runtime::Runtime,
    options: RemoteOptions,
    cache: Mutex<Cache>,
    fetched: AtomicU64,
    requests: AtomicU64,
    /// Set when a read was refused for going past the budget.
    over_budget: std::sync::atomic::AtomicBool,
    /// The most bytes it may fetch in all (`u64::MAX`: no limit), from
    /// `options.max_bytes`, then [`RemoteFile::set_max_bytes`].
    max_bytes: AtomicU64,
    /// What is called after each request that fetched data, from
    /// `options.progress`, then [`RemoteFile::set_progress`].
    progress: Mutex<Option<ProgressFn>>,
}

impl std::fmt::Debug for RemoteFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteFile")
            .field("location", &self.location)
            .field("len", &self.len)
            .field("etag", &self.etag)
            .finish_non_exhaustive()
    }
}

fn remote_error(location: &str, why: impl std::fmt::Display) -> Error {
    Error::Remote {
        location: location.to_string(),
        why: why.to_string(),
    }
}

/// True when `e` is a failure to reach the server or to hear from it (no
/// answer, a connection refused or cut, a timeout), not an answer.
fn is_transport(e: &object_store::Error) -> bool {
    transport_kind(e).is_some()
}

/// True when the server refused the credentials or the access.
fn is_refusal(e: &object_store::Error) -> bool {
    matches!(
        e,
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. }
    )
}

/// The kind of the transport failure under `e`, if it is one.
fn transport_kind(e: &object_store::Error) -> Option<object_store::client::HttpErrorKind> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(h) = s.downcast_ref::<object_store::client::HttpError>() {
            return Some(h.kind());
        }
        source = s.source();
    }
    None
}

/// Why a request failed, the reason first: a timeout or a connection
/// that failed with the retries made, a missing file, refused
/// credentials; then `object_store`'s own account.
fn why(e: &object_store::Error, options: &RemoteOptions) -> String {
    use object_store::client::HttpErrorKind as K;
    let tries = format!(
        "{} s a request, {} retries",
        options.timeout.as_secs_f64(),
        options.retries
    );
    let reason = match (e, transport_kind(e)) {
        (_, Some(K::Timeout)) => format!("timed out: no answer in time ({tries})"),
        (_, Some(K::Connect)) => format!("cannot connect to the server ({tries})"),
        (_, Some(K::Interrupted | K::Request)) => {
            format!("the connection failed ({tries})")
        }
        (_, Some(K::Decode)) => "the answer could not be read".to_string(),
        (object_store::Error::NotFound { .. }, _) => "not found".to_string(),
        (object_store::Error::PermissionDenied { .. }, _)
        | (object_store::Error::Unauthenticated { .. }, _) => {
            "access refused (credentials come from the environment: AWS_*, GOOGLE_*, AZURE_*)"
                .to_string()
        }
        (object_store::Error::NotSupported { .. }, _) => {
            "the server does not answer range requests".to_string()
        }
        _ => return e.to_string(),
    };
    format!("{reason}: {e}")
}

/// The store and the object's path for `location`.
fn store_of(location: &str, options: &RemoteOptions) -> Result<(Arc<dyn ObjectStore>, StorePath)> {
    let url = url::Url::parse(location)
        .map_err(|e| remote_error(location, format!("not a location: {e}")))?;
    let client = ClientOptions::new()
        .with_allow_http(true)
        .with_timeout(options.timeout)
        .with_connect_timeout(options.timeout.min(Duration::from_secs(10)));
    let retry = RetryConfig {
        max_retries: options.retries,
        retry_timeout: options.timeout.saturating_mul(2),
        ..RetryConfig::default()
    };
    let key = StorePath::from_url_path(url.path().trim_start_matches('/'))
        .map_err(|e| remote_error(location, format!("bad object path: {e}")))?;
    let host = url.host_str().unwrap_or_default().to_string();
    let bad = |e: object_store::Error| remote_error(location, e);
    let store: Arc<dyn ObjectStore> = match url.scheme() {
        "http" | "https" => {
            let origin = url.origin().ascii_serialization();
            Arc::new(
                object_store::http::HttpBuilder::new()
                    .with_url(origin)
                    .with_client_options(client)
                    .with_retry(retry)
                    .build()
                    .map_err(bad)?,
            )
        }
        "s3" => Arc::new(
            object_store::aws::AmazonS3Builder::from_env()
                .with_bucket_name(host)
                .with_client_options(client)
                .with_retry(retry)
                .build()
                .map_err(bad)?,
        ),
        "gs" => Arc::new(
            object_store::gcp::GoogleCloudStorageBuilder::from_env()
                .with_bucket_name(host)
                .with_client_options(client)
                .with_retry(retry)
                .build()
                .map_err(bad)?,
        ),
        "az" => Arc::new(
            object_store::azure::MicrosoftAzureBuilder::from_env()
                .with_container_name(host)
                .with_client_options(client)
                .with_retry(retry)
                .build()
                .map_err(bad)?,
        ),
        other => return Err(remote_error(location, format!("no store for {other}://"))),
    };
    Ok((store, key))
}

/// The object's metadata (its length and ETag, from `Content-Range` and
/// `ETag`) and its first `block` bytes, by one ranged `GET`: the first
/// request to a server that does not answer `HEAD`.
fn first_block(
    runtime: &tokio::runtime::Runtime,
    store: &Arc<dyn ObjectStore>,
    path: &StorePath,
    block: u64,
) -> std::result::Result<
    (
        object_store::ObjectMeta,
        impl std::ops::Deref<Target = [u8]> + use<>,
    ),
    object_store::Error,
> {
    REQUESTS_TOTAL.fetch_add(1, Ordering::Relaxed);
    runtime.block_on(async {
        let opts = GetOptions {
            range: Some(GetRange::Bounded(0..block)),
            ..GetOptions::default()
        };
        let r = store.get_opts(path, opts).await?;
        let meta = r.meta.clone();
        Ok((meta, r.bytes().await?))
    })
}

impl RemoteFile {
    /// Opens `location`: one request for its length and ETag, no data
    /// (a `HEAD`; a server that refuses it, `405` or `501`, or answers it
    /// with no length, is asked for the file's first block by a ranged
    /// `GET` instead, which the cache keeps).
    pub fn open(location: &str, options: &RemoteOptions) -> Result<RemoteFile> {
        // one TLS provider for the process (ring: no C toolchain beyond cc)
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (store, path) = store_of(location, options)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| remote_error(location, e))?;
        let options = RemoteOptions {
            block_size: options.block_size.max(1),
            ..options.clone()
        };
        REQUESTS_TOTAL.fetch_add(1, Ordering::Relaxed);
        let mut requests = 1;
        let mut first = None;
        let meta = match runtime.block_on(store.head(&path)) {
            // a server that says a file is empty may have answered HEAD
            // wrongly (no length): asked by GET, an empty file is kept
            Ok(meta) if meta.size == 0 => {
                requests += 1;
                match first_block(&runtime, &store, &path, options.block_size) {
                    Ok((meta, bytes)) => {
                        first = Some(bytes);
                        meta
                    }
                    Err(_) => meta,
                }
            }
            Ok(meta) => meta,
            // the server answered, but not to HEAD: the first block by GET
            Err(e) if !is_transport(&e) && !is_refusal(&e) => {
                requests += 1;
                let (meta, bytes) = first_block(&runtime, &store, &path, options.block_size)
                    .map_err(|e2| {
                        remote_error(
                            location,
                            format!("{} (and HEAD: {})", why(&e2, &options), why(&e, &options)),
                        )
                    })?;
                first = Some(bytes);
                meta
            }
            Err(e) => return Err(remote_error(location, why(&e, &options))),
        };
        let mut cache = Cache::default();
        let mut fetched = 0;
        if let Some(bytes) = first {
            let want = options.block_size.min(meta.size);
            if bytes.len() as u64 != want {
                return Err(remote_error(
                    location,
                    format!(
                        "asked for {want} bytes at 0, the server sent {}",
                        bytes.len()
                    ),
                ));
            }
            fetched = want;
            FETCHED_TOTAL.fetch_add(want, Ordering::Relaxed);
            cache.blocks.insert(0, Arc::from(&bytes[..]));
            cache.order.push_back(0);
            if let Some(p) = &options.progress {
                p(Fetch {
                    bytes: want,
                    fetched,
                    requests,
                    len: meta.size,
                });
            }
        }
        let (max_bytes, progress) = (
            options.max_bytes.unwrap_or(u64::MAX),
            options.progress.clone(),
        );
        Ok(RemoteFile {
            location: location.to_string(),
            store,
            path,
            len: meta.size,
            etag: meta.e_tag,
            runtime,
            options,
            cache: Mutex::new(cache),
            fetched: AtomicU64::new(fetched),
            over_budget: std::sync::atomic::AtomicBool::new(false),
            requests: AtomicU64::new(requests),
            max_bytes: AtomicU64::new(max_bytes),
            progress: Mutex::new(progress),
        })
    }

    /// Sets the most bytes the file may fetch in all from now on (`None`:
    /// no limit): a header walk within [`HEADER_BUDGET`], then the data
    /// read without one.
    pub fn set_max_bytes(&self, bytes: Option<u64>) {
        let max = bytes.unwrap_or(u64::MAX);
        self.max_bytes.store(max, Ordering::Relaxed);
    }

    /// Calls `f` after each request that fetches data from now on (a
    /// progress bar on a long read), in place of
    /// [`RemoteOptions::progress`].
    pub fn set_progress(&self, f: impl Fn(Fetch) + Send + Sync + 'static) {
        if let Ok(mut p) = self.progress.lock() {
            *p = Some(Arc::new(f));
        }
    }

    /// The location it was opened at.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The file's name: the last part of its location.
    pub fn file_name(&self) -> &str {
        self.path.filename().unwrap_or(&self.location)
    }

    /// Bytes fetched so far (the data of every range request).
    pub fn bytes_fetched(&self) -> u64 {
        self.fetched.load(Ordering::Relaxed)
    }

    /// Requests made so far, the first (length and ETag) among them.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Bytes `range` of the file, in one request asking for the version
    /// first seen.
    fn fetch(&self, range: Range<u64>) -> io::Result<impl std::ops::Deref<Target = [u8]> + use<>> {
        let want = range.end - range.start;
        let total = self.fetched.load(Ordering::Relaxed).saturating_add(want);
        let max = self.max_bytes.load(Ordering::Relaxed);
        if total > max {
            self.over_budget.store(true, Ordering::Relaxed);
            return Err(io::Error::other(format!(
                "{}: reading it would fetch more than {max} bytes (the limit of this read)",
                self.location
            )));
        }
        let opts = GetOptions {
            range: Some(GetRange::Bounded(range.clone())),
            if_match: self.etag.clone(),
            ..GetOptions::default()
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        REQUESTS_TOTAL.fetch_add(1, Ordering::Relaxed);
        let got = self.runtime.block_on(async {
            let r = self.store.get_opts(&self.path, opts).await?;
            r.bytes().await
        });
        let bytes = got.map_err(|e| match e {
            object_store::Error::Precondition { .. } => io::Error::other(format!(
                "{}: the file changed while it was read (its ETag is no longer {})",
                self.location,
                self.etag.as_deref().unwrap_or("?")
            )),
            e => io::Error::other(format!("{}: {}", self.location, why(&e, &self.options))),
        })?;
        if bytes.len() as u64 != want {
            return Err(io::Error::other(format!(
                "{}: asked for {want} bytes at {}, the server sent {}",
                self.location,
                range.start,
                bytes.len()
            )));
        }
        let fetched = self.fetched.fetch_add(want, Ordering::Relaxed) + want;
        FETCHED_TOTAL.fetch_add(want, Ordering::Relaxed);
        let progress = self.progress.lock().ok().and_then(|p| p.clone());
        if let Some(p) = progress {
            p(Fetch {
                bytes: want,
                fetched,
                requests: self.requests.load(Ordering::Relaxed),
                len: self.len,
            });
        }
        Ok(bytes)
    }
}

impl ReadAt for RemoteFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&e| e <= self.len)
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        let bs = self.options.block_size;
        let cap = self.options.cache_blocks as u64;
        let (first, last) = (offset / bs, (end - 1) / bs);
        // larger than the cache: fetched as it is, 8 MiB a request (so
        // that no more than that is held besides `buf`)
        if last - first + 1 > cap / 2 {
            for (k, part) in buf.chunks_mut(WHOLE_CHUNK as usize).enumerate() {
                let at = offset + k as u64 * WHOLE_CHUNK;
                let got = self.fetch(at..at + part.len() as u64)?;
                part.copy_from_slice(&got);
            }
            return Ok(());
        }
        let mut cache = self
            .cache
            .lock()
            .map_err(|_| io::Error::other("remote cache poisoned"))?;
        // the blocks missing, neighbours fetched together
        let mut b = first;
        while b <= last {
            if cache.blocks.contains_key(&b) {
                b += 1;
                continue;
            }
            let mut e = b;
            while e < last && !cache.blocks.contains_key(&(e + 1)) {
                e += 1;
            }
            // going on where the last fetch ended: further ahead each time
            let blocks_total = self.len.div_ceil(bs);
            // (a second fetch in a row reads 1 block ahead, then 2, 4, ...)
            if b == cache.next && b > 0 {
                cache.streak = cache.streak.saturating_add(1);
            } else {
                cache.streak = 0;
            }
            let mut ahead = match cache.streak {
                0 => 0,
                k => (1u64 << (k - 1).min(20)).min((MAX_AHEAD_BYTES / bs).max(1)),
            };
            while ahead > 0 && e + 1 < blocks_total && !cache.blocks.contains_key(&(e + 1)) {
                e += 1;
                ahead -= 1;
            }
            cache.next = e + 1;
            let start = b * bs;
            let stop = ((e + 1) * bs).min(self.len);
            let got = self.fetch(start..stop)?;
            for k in b..=e {
                let lo = ((k - b) * bs) as usize;
                let hi = (((k - b + 1) * bs) as usize).min(got.len());
                cache.blocks.insert(k, Arc::from(&got[lo..hi]));
                cache.order.push_back(k);
            }
            b = e + 1;
        }
        for k in first..=last {
            let block = cache.blocks.get(&k).ok_or(io::ErrorKind::UnexpectedEof)?;
            let base = k * bs;
            let from = offset.max(base);
            let to = end.min(base + block.len() as u64);
            let dst = (from - offset) as usize..(to - offset) as usize;
            let src = (from - base) as usize..(to - base) as usize;
            buf[dst].copy_from_slice(&block[src]);
        }
        // the least recently fetched out, keeping this read's blocks
        while cache.blocks.len() as u64 > cap {
            let Some(old) = cache.order.pop_front() else {
                break;
            };
            if (first..=last).contains(&old) {
                cache.order.push_back(old);
                if cache.order.len() as u64 <= last - first + 1 {
                    break;
                }
                continue;
            }
            cache.blocks.remove(&old);
        }
        Ok(())
    }
}

/// All of `remote`'s bytes, fetched 8 MiB at a time into one buffer of
/// its length (refused when it cannot be had).
pub fn read_all(remote: &RemoteFile) -> Result<Vec<u8>> {
    let len = usize::try_from(remote.len()).map_err(|_| Error::TooLarge)?;
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| Error::TooLarge)?;
    out.resize(len, 0);
    let mut at = 0u64;
    for chunk in out.chunks_mut(WHOLE_CHUNK as usize) {
        remote
            .read_at(at, chunk)
            .map_err(|e| remote_error(remote.location(), e))?;
        at += chunk.len() as u64;
    }
    Ok(out)
}

/// The whole remote file at `location` and its file name, within
/// `opts`' allocation limit ([`crate::Document::open`] of a location).
pub fn download(
    location: &str,
    opts: &crate::ReadOptions,
) -> Result<(Vec<u8>, std::path::PathBuf)> {
    download_with_progress(location, opts, |_| {}, |_| {})
}

/// [`download`], calling `start` with the file's length once it is known
/// and `progress` after each request (a progress bar).
pub fn download_with_progress(
    location: &str,
    opts: &crate::ReadOptions,
    start: impl FnOnce(u64),
    progress: impl Fn(Fetch) + Send + Sync + 'static,
) -> Result<(Vec<u8>, std::path::PathBuf)> {
    let remote = RemoteFile::open(location, &RemoteOptions::default())?;
    remote.set_progress(progress);
    start(remote.len());
    check_whole(&remote, opts)?;
    let name = std::path::PathBuf::from(remote.file_name());
    Ok((read_all(&remote)?, name))
}

/// A remote file opened for reading tensor by tensor
/// ([`open_streamed`]), or one whose format is read whole.
#[derive(Debug)]
#[non_exhaustive]
pub enum Opened {
    /// Its headers walked within [`HEADER_BUDGET`], its tensors' places
    /// known: each is fetched when it is read (no budget then). The
    /// document reads through `remote` (its progress can be set there).
    Streamed {
        /// The file, opened at the remote file ([`crate::Document::open_at`]).
        document: Box<crate::Document>,
        /// The remote file the document reads.
        remote: Arc<RemoteFile>,
    },
    /// A file whose structure (its index, as [`crate::Document::open_at`]
    /// reads it) is not read within [`HEADER_BUDGET`]: read it whole
    /// ([`read_document`]).
    Whole(Arc<RemoteFile>),
}

/// Opens the remote file at `location` (as `format`, or detected) for
/// reading tensor by tensor: its headers alone are fetched, at most
/// [`HEADER_BUDGET`] bytes; [`Opened::Whole`] when its format is not read
/// by its index, or its index needs more than that (an NNabla file parsed
/// whole).
pub fn open_streamed(
    location: &str,
    format: Option<crate::Format>,
    opts: &crate::ReadOptions,
) -> Result<Opened> {
    let options = RemoteOptions::default().with_max_bytes(Some(HEADER_BUDGET));
    let remote = Arc::new(RemoteFile::open(location, &options)?);
    let name = std::path::PathBuf::from(remote.file_name());
    let at = Shared(Arc::clone(&remote));
    let document = crate::Document::open_at(at, Some(&name), format, opts);
    // a file whose index needs more than the budget (an NNabla file parsed
    // whole: a text model, a deflated chunked `.h5`) is read whole
    let document = match document {
        Err(_) if remote.over_budget.load(Ordering::Relaxed) => None,
        other => Some(other?),
    };
    remote.set_max_bytes(None);
    Ok(match document {
        Some(d) => Opened::Streamed {
            document: Box::new(d),
            remote,
        },
        None => Opened::Whole(remote),
    })
}

/// A remote file shared with the caller, as a document reads it.
struct Shared(Arc<RemoteFile>);

impl ReadAt for Shared {
    fn len(&self) -> u64 {
        self.0.len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.0.read_at(offset, buf)
    }
}

/// The [`crate::Document`] of a remote file read whole (as `format`, or
/// detected), within `opts`' allocation limit, as
/// [`crate::Document::open_with`] reads a location.
pub fn read_document(
    remote: &RemoteFile,
    format: Option<crate::Format>,
    opts: &crate::ReadOptions,
) -> Result<crate::Document> {
    check_whole(remote, opts)?;
    let map = tensor_core::MappedFile::from_vec(read_all(remote)?);
    let name = std::path::PathBuf::from(remote.file_name());
    crate::Document::from_map(map, Some(name), format, opts)
}

/// Refuses reading `remote` whole past `opts`' allocation limit.
fn check_whole(remote: &RemoteFile, opts: &crate::ReadOptions) -> Result<()> {
    if remote.len() > opts.limits.max_alloc {
        return Err(remote_error(
            remote.location(),
            format!(
                "{} bytes, more than the {} bytes a file read whole may take (--trust lifts it)",
                remote.len(),
                opts.limits.max_alloc
            ),
        ));
    }
    Ok(())
}
