//! Replacing files safely: write to a temporary file beside the target, then rename.

use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Writes `path` through `write`, atomically: the bytes go to a new
/// temporary file in the same directory, which is synced and renamed over
/// `path` only when `write` succeeds. On any error the temporary file is
/// removed and an existing `path` is left as it was.
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
    write: impl FnOnce(&mut BufWriter<File>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E>
where
    E: From<Error>,
{
    let path = path.as_ref();
    let (tmp_path, file) = create_temp_beside(path)?;
    let guard = TempGuard(Some(tmp_path.clone()));
    let mut w = BufWriter::with_capacity(1 << 20, file);
    write(&mut w)?;
    let file = w
        .into_inner()
        .map_err(|e| Error::io(tmp_path.display().to_string(), e.into_error()))?;
    file.sync_all()
        .map_err(|e| Error::io(tmp_path.display().to_string(), e))?;
    drop(file);
    fs::rename(&tmp_path, path).map_err(|e| Error::io(path.display().to_string(), e))?;
    guard.disarm();
    Ok(())
}

/// Like [`write_atomic`], for writers that insist on writing to a path
/// themselves: `write` gets a fresh temporary path beside `path`, which is
/// synced and renamed over `path` when `write` succeeds, and removed
/// otherwise.
pub fn write_atomic_path<E>(
    path: impl AsRef<Path>,
    write: impl FnOnce(&Path) -> std::result::Result<(), E>,
) -> std::result::Result<(), E>
where
    E: From<Error>,
{
    let path = path.as_ref();
    let (tmp_path, file) = create_temp_beside(path)?;
    drop(file);
    let guard = TempGuard(Some(tmp_path.clone()));
    write(&tmp_path)?;
    File::open(&tmp_path)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(tmp_path.display().to_string(), e))?;
    fs::rename(&tmp_path, path).map_err(|e| Error::io(path.display().to_string(), e))?;
    guard.disarm();
    Ok(())
}

fn create_temp_beside(path: &Path) -> Result<(PathBuf, File)> {
    // Said before anything is written (the rename would fail at the end).
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
    let pid = std::process::id();
    for attempt in 0u32..1000 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let tmp = dir.join(format!(".{base}.{pid}.{nanos:x}{attempt}.tmp"));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            // Say what the user can act on: the folder, not our temporary name.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !dir.is_dir() => {
                return Err(Error::io(
                    format!("the folder {} does not exist", dir.display()),
                    e,
                ));
            }
            // The folder exists but takes no new file (`/proc`): the OS's words.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::io(
                    format!("cannot create a file in the folder {}", dir.display()),
                    e,
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Err(Error::io(
                    format!("cannot create a file in the folder {}", dir.display()),
                    e,
                ));
            }
            Err(e) => {
                return Err(Error::io(
                    format!("cannot create a file in the folder {}", dir.display()),
                    e,
                ));
            }
        }
    }
    Err(Error::io(
        dir.display().to_string(),
        std::io::Error::other("could not create a temporary file"),
    ))
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

    #[test]
    fn failed_write_leaves_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.bin");
        fs::write(&path, b"old contents").unwrap();
        let r: std::result::Result<(), Error> = write_atomic(&path, |w| {
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
        write_atomic::<Error>(&path, |w| {
            w.write_all(b"new").map_err(|e| Error::io("w", e))
        })
        .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(count_entries(dir.path()), 1);
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
}
