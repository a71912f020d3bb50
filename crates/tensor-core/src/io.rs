//! Replacing files safely: the new bytes go to a temporary file in the
//! target's folder, which is renamed over the target only when complete.
//!
//! # What a crash or a kill leaves
//!
//! - **Killed writer** (`kill -9`, an OOM killer, Ctrl-C): the previous file
//!   is intact. On Linux filesystems with `O_TMPFILE` (ext4, xfs, btrfs,
//!   tmpfs, ...) the bytes are written into an *unnamed* file that is
//!   linked into the folder only when complete, so a killed writer leaves
//!   nothing behind. Elsewhere the temporary file has a name,
//!   `.<output>.mlf-<pid>-<start>-<ns>-<n>.tmp`, which says which process
//!   owns it (its pid, the process' start time, its pid namespace); the next
//!   write to the same output removes the temporaries whose owner is gone.
//!   A live writer's temporary file is never touched.
//! - **Operating-system crash or power loss**, with the default
//!   ([`WriteOptions::sync`] off): the rename is atomic for every program
//!   still running, but the new contents may not have reached the disk
//!   yet. After a power loss the output may be the previous file, or (on
//!   some filesystems) the new name with incomplete or empty contents. This
//!   is what `cp`, `safetensors` and `torch.save` do; a converted file can
//!   be made again from its input.
//! - **With [`WriteOptions::sync`] on**: the file is flushed to the disk
//!   (`fsync`) before the rename and the folder after it, so once the write
//!   returns the new file survives a power loss; before it returns, the
//!   output is the previous file or the complete new one. This costs a wait
//!   for the disk.
//!
//! New files get the permissions the umask gives (`0666 & !umask`).

use std::cell::{Cell, RefCell};
use std::fs::{self, File};
use std::io::{BufWriter, Cursor, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{Error, Result};

/// How [`write_atomic_with`] writes: durability, chosen by the caller.
///
/// ```
/// let opts = tensor_core::io::WriteOptions::new().sync(true);
/// assert!(opts.is_sync());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    sync: bool,
    named_temporary: bool,
}

impl WriteOptions {
    /// The default: atomic rename into place, without waiting for the disk.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same options, flushing the file to the disk before the rename
    /// and the folder after it when `yes` (see the [module docs](self) for
    /// what each setting guarantees).
    pub fn sync(mut self, yes: bool) -> Self {
        self.sync = yes;
        self
    }

    /// True when writes are flushed to the disk.
    pub fn is_sync(&self) -> bool {
        self.sync
    }

    /// The same options, never using an unnamed (`O_TMPFILE`) file: for
    /// testing the named-temporary path on filesystems that support both.
    #[doc(hidden)]
    pub fn named_temporary(mut self, yes: bool) -> Self {
        self.named_temporary = yes;
        self
    }
}

thread_local! {
    static CURRENT: Cell<WriteOptions> = const {
        Cell::new(WriteOptions { sync: false, named_temporary: false })
    };
}

/// Runs `f` with `opts` as the options of every [`write_atomic`] and
/// [`write_atomic_path`] call made on this thread while it runs (the way
/// `mlformats`' `save_with` and `convert` pass their `sync` option down to
/// every format's writer). The previous options are restored afterwards,
/// also when `f` panics.
///
/// ```
/// use tensor_core::io::{WriteOptions, current_write_options, with_write_options};
/// let synced = with_write_options(WriteOptions::new().sync(true), || {
///     current_write_options().is_sync()
/// });
/// assert!(synced);
/// assert!(!current_write_options().is_sync());
/// ```
pub fn with_write_options<R>(opts: WriteOptions, f: impl FnOnce() -> R) -> R {
    struct Restore(WriteOptions);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(opts)));
    f()
}

/// The options [`write_atomic`] uses on this thread now (the default
/// unless inside [`with_write_options`]).
pub fn current_write_options() -> WriteOptions {
    CURRENT.with(|c| c.get())
}

/// Writes `path` through `write`, atomically: the bytes go to a new
/// temporary file in the same directory, which is renamed over `path` only
/// when `write` succeeds. On any error the temporary file is removed and an
/// existing `path` is left as it was. Uses this thread's
/// [`current_write_options`] (by default: no flush to the disk; see the
/// [module docs](self)). Inside [`capture_write`] the bytes go to memory
/// instead, and `path` is not touched.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::io::Write;
/// let dir = std::env::temp_dir().join(format!("tc-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("out.bin");
/// tensor_core::io::write_atomic(&path, |w| {
///     w.write_all(b"hello").map_err(|e| tensor_core::Error::io("out.bin", e))
/// })?;
/// assert_eq!(std::fs::read(&path)?, b"hello");
/// # std::fs::remove_dir_all(&dir)?; Ok(()) }
/// ```
pub fn write_atomic<E>(
    path: impl AsRef<Path>,
    write: impl FnOnce(&mut Sink) -> std::result::Result<(), E>,
) -> std::result::Result<(), E>
where
    E: From<Error>,
{
    write_atomic_with(path, &current_write_options(), write)
}

/// What the writer given to [`write_atomic`] writes to: the buffered
/// temporary file, or memory inside [`capture_write`]. It writes and seeks
/// like either.
pub struct Sink(SinkInner);

enum SinkInner {
    File(BufWriter<File>),
    Memory(Cursor<Vec<u8>>),
}

impl Sink {
    fn file(file: File) -> Sink {
        Sink(SinkInner::File(BufWriter::with_capacity(1 << 20, file)))
    }

    /// The file, with every buffered byte written (`path` names it in an
    /// error).
    fn into_file(self, path: &Path) -> Result<File> {
        match self.0 {
            SinkInner::File(w) => w
                .into_inner()
                .map_err(|e| Error::io(path.display().to_string(), e.into_error())),
            SinkInner::Memory(_) => unreachable!("a file sink was made for a file"),
        }
    }
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            SinkInner::File(_) => "Sink::File",
            SinkInner::Memory(_) => "Sink::Memory",
        })
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.0 {
            SinkInner::File(w) => w.write(buf),
            SinkInner::Memory(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match &mut self.0 {
            SinkInner::File(w) => w.write_all(buf),
            SinkInner::Memory(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.0 {
            SinkInner::File(w) => w.flush(),
            SinkInner::Memory(w) => w.flush(),
        }
    }
}

impl Seek for Sink {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        match &mut self.0 {
            SinkInner::File(w) => w.seek(pos),
            SinkInner::Memory(w) => w.seek(pos),
        }
    }

    fn stream_position(&mut self) -> std::io::Result<u64> {
        match &mut self.0 {
            SinkInner::File(w) => w.stream_position(),
            SinkInner::Memory(w) => w.stream_position(),
        }
    }
}

/// The state of [`capture_write`] on this thread: `None` outside it.
enum Capture {
    Waiting,
    Done(Vec<u8>),
}

thread_local! {
    static CAPTURE: RefCell<Option<Capture>> = const { RefCell::new(None) };
}

fn capturing() -> bool {
    CAPTURE.with(|c| c.borrow().is_some())
}

/// Keeps the bytes a memory sink got as the captured output: one file per
/// [`capture_write`].
fn captured(sink: Sink) -> Result<()> {
    let SinkInner::Memory(cursor) = sink.0 else {
        unreachable!("a memory sink was made for capturing")
    };
    CAPTURE.with(|c| {
        let mut c = c.borrow_mut();
        match *c {
            Some(Capture::Waiting) => {
                *c = Some(Capture::Done(cursor.into_inner()));
                Ok(())
            }
            _ => Err(Error::io(
                "writing in memory",
                std::io::Error::other("this writer writes more than one file"),
            )),
        }
    })
}

/// Runs `f` with the one [`write_atomic`] call it makes on this thread
/// writing to memory instead of a file (the path it names is not touched),
/// and returns `f`'s result with the bytes written: exactly the bytes the
/// file would have got. A writer that insists on a path
/// ([`write_atomic_path`]) or writes a second file is refused, and so is an
/// `f` that writes nothing.
///
/// ```
/// use std::io::Write;
/// let ((), bytes) = tensor_core::io::capture_write(|| {
///     tensor_core::io::write_atomic("never-written.bin", |w| {
///         w.write_all(b"hello").map_err(|e| tensor_core::Error::io("w", e))
///     })
/// })
/// .unwrap();
/// assert_eq!(bytes, b"hello");
/// assert!(!std::path::Path::new("never-written.bin").exists());
/// ```
pub fn capture_write<R, E>(
    f: impl FnOnce() -> std::result::Result<R, E>,
) -> std::result::Result<(R, Vec<u8>), E>
where
    E: From<Error>,
{
    struct Restore(Option<Capture>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CAPTURE.with(|c| *c.borrow_mut() = previous);
        }
    }
    let restore = Restore(CAPTURE.with(|c| c.borrow_mut().replace(Capture::Waiting)));
    let r = f();
    let got = CAPTURE.with(|c| c.borrow_mut().replace(Capture::Waiting));
    drop(restore);
    let r = r?;
    match got {
        Some(Capture::Done(bytes)) => Ok((r, bytes)),
        _ => Err(E::from(Error::io(
            "writing in memory",
            std::io::Error::other("nothing was written"),
        ))),
    }
}

/// Writes `bytes` (typically a tensor borrowed from a memory-mapped input)
/// to `w` in 1 MiB pieces, reading one byte of every 4 KiB page of a piece
/// before writing it.
///
/// Handing the kernel a source page that is not mapped yet makes its copy
/// stop short, zero the destination pages it had prepared, fault the source
/// in and copy again; touching the pages first maps them (several per fault)
/// and lets each write copy in one pass. The bytes written are `bytes`,
/// unchanged.
///
/// ```
/// let mut out = Vec::new();
/// tensor_core::io::write_prefaulted(&mut out, &[7u8; 10_000]).unwrap();
/// assert_eq!(out, [7u8; 10_000]);
/// ```
pub fn write_prefaulted<W: std::io::Write + ?Sized>(
    w: &mut W,
    bytes: &[u8],
) -> std::io::Result<()> {
    for piece in bytes.chunks(1 << 20) {
        let mut sum = 0u8;
        for page in piece.chunks(4096) {
            sum = sum.wrapping_add(page[0]);
        }
        std::hint::black_box(sum);
        w.write_all(piece)?;
    }
    Ok(())
}

/// [`write_atomic`] with explicit options.
pub fn write_atomic_with<E>(
    path: impl AsRef<Path>,
    opts: &WriteOptions,
    write: impl FnOnce(&mut Sink) -> std::result::Result<(), E>,
) -> std::result::Result<(), E>
where
    E: From<Error>,
{
    let path = path.as_ref();
    if capturing() {
        let mut sink = Sink(SinkInner::Memory(Cursor::new(Vec::new())));
        write(&mut sink)?;
        return captured(sink).map_err(E::from);
    }
    let target = Target::of(path)?;
    target.remove_stale_temporaries();
    #[cfg(target_os = "linux")]
    if !opts.named_temporary
        && let Some(file) = unnamed::create(&target.dir)
    {
        let mut w = Sink::file(file);
        write(&mut w)?;
        let file = w.into_file(path)?;
        return unnamed::finish(file, &target, path, opts).map_err(E::from);
    }
    let (tmp_path, file) = target.create_temp()?;
    let guard = TempGuard(Some(tmp_path.clone()));
    let mut w = Sink::file(file);
    write(&mut w)?;
    let file = w.into_file(&tmp_path)?;
    if opts.sync {
        file.sync_all()
            .map_err(|e| Error::io(tmp_path.display().to_string(), e))?;
    }
    drop(file);
    replace(&tmp_path, path, opts.sync)?;
    guard.disarm();
    if opts.sync {
        target.sync_dir()?;
    }
    Ok(())
}

/// Like [`write_atomic`], for writers that insist on writing to a path
/// themselves: `write` gets a fresh temporary path beside `path`, which is
/// renamed over `path` when `write` succeeds, and removed otherwise. (A
/// killed writer leaves this named temporary behind; the next write to the
/// same output removes it.)
pub fn write_atomic_path<E>(
    path: impl AsRef<Path>,
    write: impl FnOnce(&Path) -> std::result::Result<(), E>,
) -> std::result::Result<(), E>
where
    E: From<Error>,
{
    write_atomic_path_with(path, &current_write_options(), write)
}

/// [`write_atomic_path`] with explicit options.
pub fn write_atomic_path_with<E>(
    path: impl AsRef<Path>,
    opts: &WriteOptions,
    write: impl FnOnce(&Path) -> std::result::Result<(), E>,
) -> std::result::Result<(), E>
where
    E: From<Error>,
{
    let path = path.as_ref();
    if capturing() {
        return Err(E::from(Error::io(
            format!("writing {} in memory", path.display()),
            std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "this writer writes to a file only",
            ),
        )));
    }
    let target = Target::of(path)?;
    target.remove_stale_temporaries();
    let (tmp_path, file) = target.create_temp()?;
    drop(file);
    let guard = TempGuard(Some(tmp_path.clone()));
    write(&tmp_path)?;
    if opts.sync {
        File::open(&tmp_path)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io(tmp_path.display().to_string(), e))?;
    }
    replace(&tmp_path, path, opts.sync)?;
    guard.disarm();
    if opts.sync {
        target.sync_dir()?;
    }
    Ok(())
}

/// Puts the complete temporary `tmp` in place of `path`, atomically: every
/// reader sees the previous file or the new one.
///
/// Without `sync`, on Linux, an existing regular file is swapped with the
/// temporary (`renameat2(RENAME_EXCHANGE)`) and the previous contents,
/// now under the temporary name, removed (large ones freed in the
/// background: [`release::remove_previous`]): ext4 flushes a file renamed
/// over another one (`auto_da_alloc`), which would make every replacement
/// wait for the disk. (If the process dies between the two calls, the next
/// write sweeps the temporary.) With `sync` the data is on the disk
/// already, so a plain rename costs nothing more.
fn replace(tmp: &Path, path: &Path, sync: bool) -> Result<()> {
    #[cfg(target_os = "linux")]
    if !sync
        && fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
        && rustix::fs::renameat_with(
            rustix::fs::CWD,
            tmp,
            rustix::fs::CWD,
            path,
            rustix::fs::RenameFlags::EXCHANGE,
        )
        .is_ok()
    {
        release::remove_previous(tmp);
        return Ok(());
    }
    let _ = sync;
    fs::rename(tmp, path).map_err(|e| Error::io(path.display().to_string(), e))
}

/// Removing the previous contents of a replaced output.
#[cfg(target_os = "linux")]
mod release {
    use std::fs::{self, File};
    use std::path::Path;
    use std::process::{Command, Stdio};

    /// Previous contents at least this large are released in the background.
    const BACKGROUND_FROM: u64 = 32 << 20;

    /// Removes `tmp`, the previous contents of an output just replaced.
    ///
    /// The name goes at once, so the folder holds only the output when the
    /// write returns. Freeing a large file's blocks takes the filesystem a
    /// while (0.1-0.5 s for 512 MiB on ext4, longer with `discard`), and
    /// the kernel does it when the last open descriptor of the unlinked
    /// file is closed. For a large file that last descriptor is handed to a
    /// short-lived child process (`sh`, waiting for the end of a pipe this
    /// process closes at once), so the freeing happens in that process
    /// instead of delaying this write. Nothing is left behind whatever
    /// happens: an unlinked file's blocks are freed when its holder exits
    /// or is killed, and after a crash the filesystem frees such orphans
    /// when it is mounted. Where the child cannot be started, the file is
    /// removed here.
    pub(super) fn remove_previous(tmp: &Path) {
        let big = File::open(tmp).ok().filter(|f| {
            f.metadata()
                .is_ok_and(|m| m.is_file() && m.len() >= BACKGROUND_FROM)
        });
        let removed = fs::remove_file(tmp).is_ok();
        if let (Some(file), true) = (big, removed) {
            release_in_background(file);
        }
    }

    /// Closes `file` (unlinked) in a child process, after this process has
    /// closed its own descriptor, so the child's exit frees the blocks.
    fn release_in_background(file: File) {
        let Ok((reader, writer)) = std::io::pipe() else {
            return; // `file` is closed here, freeing its blocks now
        };
        let spawned = {
            let mut cmd = Command::new("/bin/sh");
            cmd.args(["-c", "read _"])
                .stdin(reader)
                .stdout(file)
                .stderr(Stdio::null());
            cmd.spawn()
            // `cmd` drops here, with this process' copies of both descriptors
        };
        // the child's `read` now sees the end of its input and it exits,
        // closing the last descriptor of the previous contents
        drop(writer);
        if let Ok(mut child) = spawned {
            // reap it, so a long-running program collects no zombies
            let _ = std::thread::Builder::new()
                .name("mlformats-release".into())
                .spawn(move || child.wait());
        }
    }
}

/// The output's folder and file name, and the names of its temporaries.
struct Target {
    dir: PathBuf,
    base: String,
}

/// The tag between the output's name and the owner in a temporary's name.
const TAG: &str = "mlf-";

impl Target {
    /// The target `path`, refused when it is a folder: said before anything
    /// is written (the final rename would fail).
    fn of(path: &Path) -> Result<Target> {
        if path.is_dir() {
            return Err(Error::io(
                "cannot write the output here",
                std::io::Error::from(std::io::ErrorKind::IsADirectory),
            ));
        }
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let base = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".into());
        Ok(Target { dir, base })
    }

    /// A name no other temporary has: `.<base>.mlf-<pid>-<start>-<ns>-<n>.tmp`.
    fn temp_name(&self) -> PathBuf {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let me = owner::me();
        self.dir.join(format!(
            ".{}.{TAG}{}-{}-{}-{nanos:x}{n:x}.tmp",
            self.base, me.pid, me.start, me.ns
        ))
    }

    fn create_temp(&self) -> Result<(PathBuf, File)> {
        for _ in 0u32..1000 {
            let tmp = self.temp_name();
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
            {
                Ok(f) => return Ok((tmp, f)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(self.create_error(e)),
            }
        }
        Err(Error::io(
            self.dir.display().to_string(),
            std::io::Error::other("could not create a temporary file"),
        ))
    }

    /// Says what the user can act on: the folder, not our temporary name.
    fn create_error(&self, e: std::io::Error) -> Error {
        match e.kind() {
            // Say what the user can act on: the folder, not our temporary name.
            std::io::ErrorKind::NotFound if !self.dir.is_dir() => Error::io(
                format!("the folder {} does not exist", self.dir.display()),
                e,
            ),
            // The folder exists but takes no new file (`/proc`), or refuses
            // us: the OS's words.
            _ => Error::io(
                format!("cannot create a file in the folder {}", self.dir.display()),
                e,
            ),
        }
    }

    fn sync_dir(&self) -> Result<()> {
        #[cfg(unix)]
        {
            File::open(&self.dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| Error::io(self.dir.display().to_string(), e))
        }
        #[cfg(not(unix))]
        {
            Ok(())
        }
    }

    /// Removes this output's temporaries whose writer is gone (never one a
    /// live process owns, nor one whose owner cannot be told). Best effort:
    /// a folder that cannot be listed is left alone.
    fn remove_stale_temporaries(&self) {
        let prefix = format!(".{}.", self.base);
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(middle) = name
                .strip_prefix(prefix.as_str())
                .and_then(|r| r.strip_suffix(".tmp"))
            else {
                continue;
            };
            if owner::is_gone(middle) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// Who owns a temporary file, and whether it is still running.
mod owner {
    use std::sync::OnceLock;

    use super::TAG;

    /// This process: pid, start time (clock ticks after boot, 0 when
    /// unknown) and pid namespace (0 when unknown).
    pub(super) struct Me {
        pub pid: u32,
        pub start: u64,
        pub ns: u64,
    }

    pub(super) fn me() -> &'static Me {
        static ME: OnceLock<Me> = OnceLock::new();
        ME.get_or_init(|| {
            let pid = std::process::id();
            Me {
                pid,
                start: start_time(pid).unwrap_or(0),
                ns: pid_namespace().unwrap_or(0),
            }
        })
    }

    /// Field 22 of `/proc/<pid>/stat`: when the process started, which
    /// tells a reused pid from the original owner.
    fn start_time(pid: u32) -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name (field 2) is in parentheses and may hold spaces.
        let after = &stat[stat.rfind(')')? + 1..];
        after.split_whitespace().nth(19)?.parse().ok()
    }

    fn pid_namespace() -> Option<u64> {
        let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
        let s = link.to_str()?;
        s.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
    }

    /// True when the temporary whose name holds `middle` (between
    /// `.<base>.` and `.tmp`) belongs to a process that is gone.
    pub(super) fn is_gone(middle: &str) -> bool {
        let me = me();
        if me.start == 0 {
            // No /proc: no way to tell a live owner from a dead one.
            return false;
        }
        if let Some(rest) = middle.strip_prefix(TAG) {
            let parts: Vec<&str> = rest.split('-').collect();
            let [pid, start, ns, _n] = parts[..] else {
                return false;
            };
            let (Ok(pid), Ok(start), Ok(ns)) =
                (pid.parse::<u32>(), start.parse::<u64>(), ns.parse::<u64>())
            else {
                return false;
            };
            if ns != me.ns || ns == 0 || start == 0 {
                // Another pid namespace (a container sharing the folder):
                // its pids mean nothing here.
                return false;
            }
            if pid == me.pid && start == me.start {
                // Ours: a write of this process that is still under way
                // (another thread) or failed without cleaning up.
                return false;
            }
            match start_time(pid) {
                Some(now) => now != start,
                None => !proc_exists(pid),
            }
        } else {
            // Named by an earlier version: `.<base>.<pid>.<hex>.tmp`.
            let Some((pid, n)) = middle.split_once('.') else {
                return false;
            };
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_hexdigit()) {
                return false;
            }
            let Ok(pid) = pid.parse::<u32>() else {
                return false;
            };
            pid != me.pid && !proc_exists(pid)
        }
    }

    fn proc_exists(pid: u32) -> bool {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    }
}

/// Unnamed temporary files (`O_TMPFILE`), linked into the folder when
/// complete.
#[cfg(target_os = "linux")]
mod unnamed {
    use std::fs::File;
    use std::io::{Seek, SeekFrom};
    use std::os::fd::AsRawFd;
    use std::path::Path;

    use rustix::fs::{AtFlags, CWD, Mode, OFlags};

    use super::{Target, TempGuard, WriteOptions};
    use crate::{Error, Result};

    /// An unnamed file in `dir`, or `None` where the filesystem (or the
    /// kernel) has no `O_TMPFILE`, `/proc` is not mounted, or the folder
    /// cannot take a file: the named path then says why, in its words.
    pub(super) fn create(dir: &Path) -> Option<File> {
        if !Path::new("/proc/self/fd").is_dir() {
            return None;
        }
        let fd = rustix::fs::open(
            dir,
            OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .ok()?;
        Some(File::from(fd))
    }

    /// Gives the complete unnamed `file` a name and renames it over
    /// `path`. A link cannot replace a file, so the file is linked to a
    /// fresh temporary name first (which exists only between these two
    /// calls; the stale-temporary sweep removes it if the process dies
    /// right there).
    pub(super) fn finish(
        mut file: File,
        target: &Target,
        path: &Path,
        opts: &WriteOptions,
    ) -> Result<()> {
        if opts.sync {
            file.sync_all()
                .map_err(|e| Error::io(path.display().to_string(), e))?;
        }
        let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
        let mut tmp = None;
        for _ in 0..1000 {
            let name = target.temp_name();
            let linked = rustix::fs::linkat(CWD, &proc_path, CWD, &name, AtFlags::SYMLINK_FOLLOW)
                .or_else(|_| rustix::fs::linkat(&file, "", CWD, &name, AtFlags::EMPTY_PATH));
            match linked {
                Ok(()) => {
                    tmp = Some(name);
                    break;
                }
                Err(rustix::io::Errno::EXIST) => continue,
                Err(_) => break,
            }
        }
        let tmp = match tmp {
            Some(t) => t,
            None => {
                // The file cannot be linked here (an unusual /proc or
                // filesystem): copy it to a named temporary instead.
                let (t, mut out) = target.create_temp()?;
                let guard = TempGuard(Some(t.clone()));
                file.seek(SeekFrom::Start(0))
                    .and_then(|_| std::io::copy(&mut file, &mut out))
                    .map_err(|e| Error::io(t.display().to_string(), e))?;
                if opts.sync {
                    out.sync_all()
                        .map_err(|e| Error::io(t.display().to_string(), e))?;
                }
                guard.disarm();
                t
            }
        };
        drop(file);
        let guard = TempGuard(Some(tmp.clone()));
        super::replace(&tmp, path, opts.sync)?;
        guard.disarm();
        if opts.sync {
            target.sync_dir()?;
        }
        Ok(())
    }
}

struct TempGuard(Option<PathBuf>);

impl TempGuard {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = fs::remove_file(p);
        }
    }
}

/// Number of files in `dir` (a test helper for "no temporary left behind").
#[doc(hidden)]
pub fn count_entries(dir: &Path) -> usize {
    fs::read_dir(dir).map(|r| r.count()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn both() -> [WriteOptions; 2] {
        [
            WriteOptions::new(),
            WriteOptions::new().named_temporary(true),
        ]
    }

    #[test]
    fn failed_write_leaves_old_file_and_no_temporary() {
        for opts in both() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("model.bin");
            fs::write(&path, b"old contents").unwrap();
            let r: std::result::Result<(), Error> = write_atomic_with(&path, &opts, |w| {
                w.write_all(&[7u8; 3 << 20])
                    .map_err(|e| Error::io("w", e))?;
                Err(Error::io(
                    "halfway",
                    std::io::Error::other("writer failed halfway"),
                ))
            });
            assert!(r.unwrap_err().to_string().contains("halfway"));
            assert_eq!(fs::read(&path).unwrap(), b"old contents");
            assert_eq!(count_entries(dir.path()), 1, "temporary left behind");
            write_atomic_with::<Error>(&path, &opts, |w| {
                w.write_all(b"new").map_err(|e| Error::io("w", e))
            })
            .unwrap();
            assert_eq!(fs::read(&path).unwrap(), b"new");
            assert_eq!(count_entries(dir.path()), 1);
        }
    }

    #[test]
    fn capture_gives_the_files_bytes_and_refuses_what_it_cannot_hold() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.bin");
        let write = |w: &mut Sink| -> Result<()> {
            w.write_all(b"abcdef").map_err(|e| Error::io("w", e))?;
            w.seek(SeekFrom::Start(1)).map_err(|e| Error::io("w", e))?;
            w.write_all(b"X").map_err(|e| Error::io("w", e))
        };
        write_atomic(&path, write).unwrap();
        let ((), bytes) = capture_write(|| write_atomic(&path, write)).unwrap();
        assert_eq!(bytes, fs::read(&path).unwrap());
        assert_eq!(bytes, b"aXcdef");
        let two = capture_write(|| {
            write_atomic(&path, write)?;
            write_atomic(&path, write)
        });
        assert!(two.unwrap_err().to_string().contains("more than one file"));
        let by_path = capture_write(|| write_atomic_path::<Error>(&path, |_| Ok(())));
        assert!(by_path.unwrap_err().to_string().contains("to a file only"));
        let none = capture_write(|| Ok::<(), Error>(()));
        assert!(
            none.unwrap_err()
                .to_string()
                .contains("nothing was written")
        );
        // outside the capture, files are written again
        write_atomic(dir.path().join("n.bin"), write).unwrap();
        assert_eq!(count_entries(dir.path()), 2);
    }

    #[test]
    fn path_writer_failing_leaves_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.bin");
        fs::write(&path, b"old contents").unwrap();
        let r: std::result::Result<(), Error> = write_atomic_path(&path, |tmp| {
            fs::write(tmp, [7u8; 1000]).map_err(|e| Error::io("w", e))?;
            Err(Error::io(
                "halfway",
                std::io::Error::other("writer failed halfway"),
            ))
        });
        assert!(r.is_err());
        assert_eq!(fs::read(&path).unwrap(), b"old contents");
        assert_eq!(count_entries(dir.path()), 1, "temporary left behind");
        write_atomic_path::<Error>(&path, |tmp| {
            fs::write(tmp, b"new").map_err(|e| Error::io("w", e))
        })
        .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(count_entries(dir.path()), 1);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn unnamed_file_leaves_no_name_while_writing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.bin");
        if unnamed::create(dir.path()).is_none() {
            return; // this filesystem has no O_TMPFILE: the named path is tested
        }
        write_atomic_with::<Error>(&path, &WriteOptions::new(), |w| {
            w.write_all(&[1u8; 2 << 20])
                .map_err(|e| Error::io("w", e))?;
            // tmpfs, ext4, xfs and btrfs take O_TMPFILE: nothing is named yet
            assert_eq!(count_entries(dir.path()), 0);
            Ok(())
        })
        .unwrap();
        assert_eq!(fs::read(&path).unwrap().len(), 2 << 20);
        assert_eq!(count_entries(dir.path()), 1);
    }

    #[cfg(unix)]
    #[test]
    fn new_files_get_umask_permissions_and_sync_writes_the_same_bytes() {
        use std::os::unix::fs::PermissionsExt;
        for opts in both() {
            for sync in [false, true] {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("m.bin");
                write_atomic_with::<Error>(&path, &opts.sync(sync), |w| {
                    w.write_all(b"abc").map_err(|e| Error::io("w", e))
                })
                .unwrap();
                assert_eq!(fs::read(&path).unwrap(), b"abc");
                // compare with a file made the ordinary way
                let plain = dir.path().join("plain");
                fs::write(&plain, b"x").unwrap();
                let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode(&path), mode(&plain), "{opts:?} sync={sync}");
            }
        }
    }

    #[test]
    fn stale_temporaries_of_dead_writers_go_live_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        let me = owner::me();
        if me.start == 0 {
            return; // no /proc: nothing can be told, nothing is removed
        }
        // pid 4194304 is above Linux's largest pid: never a live process
        let dead = dir
            .path()
            .join(format!(".out.bin.{TAG}4194304-1-{}-0.tmp", me.ns));
        let dead_legacy = dir.path().join(".out.bin.4194304.1a2b.tmp");
        // pid 1 is alive, but it started at another time: a reused pid
        let reused = dir
            .path()
            .join(format!(".out.bin.{TAG}1-999999999999-{}-0.tmp", me.ns));
        // this process, a live writer
        let live = dir.path().join(format!(
            ".out.bin.{TAG}{}-{}-{}-0.tmp",
            me.pid, me.start, me.ns
        ));
        // another namespace: cannot tell, left alone
        let foreign = dir
            .path()
            .join(format!(".out.bin.{TAG}4194304-1-{}-0.tmp", me.ns + 1));
        // another output's temporary
        let other = dir
            .path()
            .join(format!(".other.bin.{TAG}4194304-1-{}-0.tmp", me.ns));
        for p in [&dead, &dead_legacy, &reused, &live, &foreign, &other] {
            fs::write(p, b"x").unwrap();
        }
        write_atomic::<Error>(&path, |w| {
            w.write_all(b"new").map_err(|e| Error::io("w", e))
        })
        .unwrap();
        assert!(!dead.exists());
        assert!(!dead_legacy.exists());
        assert!(!reused.exists());
        assert!(live.exists());
        assert!(foreign.exists());
        assert!(other.exists());
    }

    /// Whether any process still holds `ino` on device `dev` open.
    #[cfg(target_os = "linux")]
    fn held_open(dev: u64, ino: u64) -> bool {
        use std::os::unix::fs::MetadataExt;
        let Ok(procs) = fs::read_dir("/proc") else {
            return false;
        };
        procs.flatten().any(|p| {
            fs::read_dir(p.path().join("fd")).is_ok_and(|fds| {
                fds.flatten().any(|fd| {
                    fs::metadata(fd.path()).is_ok_and(|m| m.dev() == dev && m.ino() == ino)
                })
            })
        })
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn replacing_a_large_file_leaves_only_the_output_and_frees_the_previous() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        for opts in both() {
            let big = vec![7u8; 40 << 20];
            fs::write(&path, &big).unwrap();
            let old = fs::metadata(&path).unwrap();
            write_atomic_with::<Error>(&path, &opts, |w| {
                w.write_all(b"new").map_err(|e| Error::io("w", e))
            })
            .unwrap();
            assert_eq!(fs::read(&path).unwrap(), b"new");
            assert_eq!(count_entries(dir.path()), 1, "{opts:?}");
            // the previous contents are released: whoever freed them (this
            // process or the child it handed them to) lets go within seconds
            let mut waited = 0;
            while held_open(old.dev(), old.ino()) {
                assert!(waited < 600, "the previous contents are still open");
                std::thread::sleep(std::time::Duration::from_millis(50));
                waited += 1;
            }
        }
    }
}
