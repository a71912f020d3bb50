//! Where an output really goes: symlinks followed to the file they name,
//! special files (FIFOs, devices) written through instead of replaced, and
//! the previous file's permissions and owner given to its replacement.

use std::fs::{self, File, Metadata};
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// At most this many symlinks are followed (Linux's own limit).
const MAX_LINKS: usize = 40;

/// What writing an output path means.
pub(super) enum Output {
    /// Create or replace the regular file `path` (the end of the symlinks
    /// the output named); `previous`: the file being replaced.
    Replace {
        path: PathBuf,
        previous: Option<Metadata>,
    },
    /// A FIFO or a device, opened for writing: the bytes are written
    /// through it.
    Through(File),
}

/// Says what writing `path` means, or why it cannot be written: a folder
/// or a socket, a symlink loop, a FIFO or device that cannot be opened.
pub(super) fn resolve(path: &Path) -> Result<Output> {
    let shown = || path.display().to_string();
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(Error::io(
            "cannot write the output here",
            std::io::Error::from(std::io::ErrorKind::IsADirectory),
        )),
        Ok(m) if m.is_file() => {
            let real = follow_links(path)?;
            match fs::symlink_metadata(&real) {
                Ok(r) if same_file(&r, &m) => Ok(Output::Replace {
                    path: real,
                    previous: Some(m),
                }),
                // a link with no name to follow to (`/proc/self/fd/N` of a
                // deleted file): written through, as the shell would
                _ => open_through(path, &m).map(Output::Through),
            }
        }
        Ok(m) => {
            if is_socket(&m) {
                return Err(Error::io(
                    format!("cannot write {}", shown()),
                    std::io::Error::new(
                        std::io::ErrorKind::Unsupported,
                        "it is a socket, not a file",
                    ),
                ));
            }
            open_through(path, &m).map(Output::Through)
        }
        // nothing there, or a dangling symlink: the file it names is created
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Output::Replace {
            path: follow_links(path)?,
            previous: None,
        }),
        Err(e) => Err(Error::io(shown(), e)),
    }
}

/// The path `path`'s chain of symlinks ends at (`path` itself when it is
/// not a link): followed one link at a time, at most [`MAX_LINKS`].
fn follow_links(path: &Path) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p).map_err(|e| Error::io(p.display().to_string(), e))?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(Error::io(
        path.display().to_string(),
        std::io::Error::other(format!(
            "more than {MAX_LINKS} symlinks to follow (a loop?)"
        )),
    ))
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &Metadata, _: &Metadata) -> bool {
    a.is_file()
}

#[cfg(unix)]
fn is_socket(m: &Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    m.file_type().is_socket()
}

#[cfg(not(unix))]
fn is_socket(_: &Metadata) -> bool {
    false
}

#[cfg(unix)]
fn is_block_device(m: &Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    m.file_type().is_block_device()
}

#[cfg(not(unix))]
fn is_block_device(_: &Metadata) -> bool {
    false
}

/// Opens the special file (or unnamed regular file) `path` for writing, as
/// the shell's `>` does: truncated, except a block device, whose size is
/// its size. A FIFO waits here for a reader.
fn open_through(path: &Path, m: &Metadata) -> Result<File> {
    let mut o = fs::OpenOptions::new();
    o.write(true);
    if !is_block_device(m) {
        o.truncate(true);
    }
    o.open(path)
        .map_err(|e| Error::io(path.display().to_string(), e))
}

/// An unnamed temporary file in the temporary folder, where the bytes for
/// a special file or [`super::write_spooled`] go first.
pub(super) fn spool() -> Result<File> {
    tempfile::tempfile().map_err(|e| {
        Error::io(
            format!(
                "cannot create a temporary file in {}",
                std::env::temp_dir().display()
            ),
            e,
        )
    })
}

/// A named temporary file in the temporary folder, removed when dropped.
pub(super) fn named_spool() -> Result<tempfile::TempPath> {
    tempfile::Builder::new()
        .prefix(".mlf-")
        .suffix(".tmp")
        .tempfile()
        .map(tempfile::NamedTempFile::into_temp_path)
        .map_err(|e| {
            Error::io(
                format!(
                    "cannot create a temporary file in {}",
                    std::env::temp_dir().display()
                ),
                e,
            )
        })
}

/// Copies the complete `spool` to `out`, the special file `path` names
/// (flushed to the device with `sync`, where it can be).
pub(super) fn copy_through(mut spool: File, out: &mut File, path: &Path, sync: bool) -> Result<()> {
    let err = |e| Error::io(path.display().to_string(), e);
    spool.seek(SeekFrom::Start(0)).map_err(err)?;
    std::io::copy(&mut spool, out).map_err(err)?;
    if sync {
        match out.sync_all() {
            // a pipe or a terminal has nothing to flush
            Err(e) if e.raw_os_error() == Some(EINVAL) => {}
            r => r.map_err(err)?,
        }
    }
    Ok(())
}

/// `EINVAL`: what `fsync` of a pipe or a character device says.
const EINVAL: i32 = 22;

/// Gives the new file `file` (`path` names it in errors) the permission
/// bits of the file it replaces, and its owner and group where allowed (as
/// `cp -p` does: as root, or the group alone for one's own file; a refusal
/// is not an error). Nothing for a new file.
pub(super) fn keep_attributes(file: &File, previous: Option<&Metadata>, path: &Path) -> Result<()> {
    let Some(previous) = previous else {
        return Ok(());
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt, fchown};
        let err = |e| Error::io(path.display().to_string(), e);
        let now = file.metadata().map_err(err)?;
        if now.uid() != previous.uid() || now.gid() != previous.gid() {
            let owner = (now.uid() != previous.uid()).then_some(previous.uid());
            if fchown(file, owner, Some(previous.gid())).is_err() && owner.is_some() {
                // not root: the group alone, when one belongs to it
                let _ = fchown(file, None, Some(previous.gid()));
            }
        }
        let mode = previous.mode() & 0o777;
        if now.mode() & 0o7777 != mode {
            file.set_permissions(fs::Permissions::from_mode(mode))
                .map_err(err)?;
        }
    }
    #[cfg(not(unix))]
    let _ = (file, path, previous);
    Ok(())
}
