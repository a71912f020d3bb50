//! Writing an output file the way Unix tools do, safely: a regular file is
//! replaced through a temporary file in its folder, renamed over it only
//! when complete.
//!
//! # Where the bytes go
//!
//! - **A symlink** is followed (to at most 40 links): its final target is
//!   replaced and the link stays a link. A dangling symlink gets the file
//!   it names created.
//! - **A FIFO, a character or a block device** (`/dev/stdout` on a pipe,
//!   `/dev/null`, a disk) is written through, as the shell's `>` does: it
//!   is opened for writing (truncated, except a block device) and never
//!   renamed over or removed. The writer's bytes go to an unnamed
//!   temporary file in the temporary folder first (a writer may seek),
//!   which is then copied to it.
//! - **A folder or a socket** is refused, before anything is written.
//! - **A regular file being replaced**: the new file gets its permission
//!   bits (a `0600` file stays `0600`) and, where allowed (as root, or as
//!   its owner for a group one belongs to), its owner and group, as
//!   `cp -p` does. New files get the permissions the umask gives
//!   (`0666 & !umask`).
//! - A folder that takes no new file is an error naming it; nothing is
//!   left in it.
//!
//! [`write_spooled`] sends the bytes to any writer (standard output)
//! instead of a path, through an unnamed temporary file; a writer that
//! writes to memory takes a `std::io::Cursor<Vec<u8>>` instead of a
//! [`Sink`].
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

use std::fs::{self, File};
use std::path::Path;

use crate::Error;

mod output;
mod replace;
mod sink;
mod target;
#[cfg(test)]
mod tests;

use output::Output;
use replace::replace;
#[cfg(target_os = "linux")]
use replace::unnamed;
pub use sink::Sink;
use target::{Target, TempGuard};

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

/// Writes `path` through `write`, atomically: the bytes go to a new
/// temporary file in the same directory, which is renamed over `path` only
/// when `write` succeeds. On any error the temporary file is removed and an
/// existing `path` is left as it was. With the default [`WriteOptions`]
/// (no flush to the disk; see the [module docs](self));
/// [`write_atomic_with`] takes others.
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
    write_atomic_with(path, &WriteOptions::default(), write)
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
    let (path, previous) = match output::resolve(path)? {
        Output::Through(mut out) => {
            let mut sink = Sink::file(output::spool()?);
            write(&mut sink)?;
            let spool = sink.into_file(path)?;
            return output::copy_through(spool, &mut out, path, opts.sync).map_err(E::from);
        }
        Output::Replace { path, previous } => (path, previous),
    };
    let path = path.as_path();
    let target = Target::of(path);
    target.remove_stale_temporaries();
    #[cfg(target_os = "linux")]
    if !opts.named_temporary
        && let Some(file) = unnamed::create(&target.dir)
    {
        output::keep_attributes(&file, previous.as_ref(), path)?;
        let mut w = Sink::file(file);
        write(&mut w)?;
        let file = w.into_file(path)?;
        return unnamed::finish(file, &target, path, opts).map_err(E::from);
    }
    let (tmp_path, file) = target.create_temp()?;
    let guard = TempGuard(Some(tmp_path.clone()));
    output::keep_attributes(&file, previous.as_ref(), &tmp_path)?;
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
/// same output removes it.) Symlinks, special files and the previous
/// file's permissions are handled as the [module docs](self) say (for a
/// special file, the temporary path is in the temporary folder).
pub fn write_atomic_path<E>(
    path: impl AsRef<Path>,
    write: impl FnOnce(&Path) -> std::result::Result<(), E>,
) -> std::result::Result<(), E>
where
    E: From<Error>,
{
    write_atomic_path_with(path, &WriteOptions::default(), write)
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
    let (path, previous) = match output::resolve(path)? {
        Output::Through(mut out) => {
            // removed when dropped, after the copy
            let spool_path = output::named_spool()?;
            write(&spool_path)?;
            let spool = File::open(&spool_path)
                .map_err(|e| Error::io(spool_path.display().to_string(), e))?;
            return output::copy_through(spool, &mut out, path, opts.sync).map_err(E::from);
        }
        Output::Replace { path, previous } => (path, previous),
    };
    let path = path.as_path();
    let target = Target::of(path);
    target.remove_stale_temporaries();
    let (tmp_path, file) = target.create_temp()?;
    drop(file);
    let guard = TempGuard(Some(tmp_path.clone()));
    write(&tmp_path)?;
    if let Some(previous) = &previous {
        let file =
            File::open(&tmp_path).map_err(|e| Error::io(tmp_path.display().to_string(), e))?;
        output::keep_attributes(&file, Some(previous), &tmp_path)?;
    }
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

/// Runs `write` on an unnamed temporary file in the temporary folder (a
/// [`Sink`]: it may seek), then copies what it wrote to `out` (standard
/// output, a socket, any writer that cannot seek), flushes `out` and
/// returns `write`'s result. The bytes are not held in memory. When
/// `write` fails, nothing is written to `out`.
///
/// ```
/// use std::io::{Seek, SeekFrom, Write};
/// let mut out = Vec::new();
/// let n = tensor_core::io::write_spooled(&mut out, |w| {
///     let e = |e| tensor_core::Error::io("w", e);
///     w.write_all(b"hello").map_err(e)?;
///     w.seek(SeekFrom::Start(0)).map_err(e)?;
///     w.write_all(b"J").map_err(e)?;
///     Ok::<_, tensor_core::Error>(5)
/// })
/// .unwrap();
/// assert_eq!((n, out.as_slice()), (5, &b"Jello"[..]));
/// ```
pub fn write_spooled<W, R, E>(
    out: &mut W,
    write: impl FnOnce(&mut Sink) -> std::result::Result<R, E>,
) -> std::result::Result<R, E>
where
    W: std::io::Write + ?Sized,
    E: From<Error>,
{
    use std::io::{Seek, SeekFrom};
    let mut sink = Sink::file(output::spool()?);
    let r = write(&mut sink)?;
    let mut file = sink.into_file(Path::new("a temporary file"))?;
    file.seek(SeekFrom::Start(0))
        .and_then(|_| std::io::copy(&mut file, out))
        .and_then(|_| out.flush())
        .map_err(|e| E::from(Error::io("writing the output", e)))?;
    Ok(r)
}

/// Number of files in `dir` (a test helper for "no temporary left behind").
#[doc(hidden)]
pub fn count_entries(dir: &Path) -> usize {
    fs::read_dir(dir).map(|r| r.count()).unwrap_or(0)
}
