//! Putting a complete temporary in place of the output, and unnamed
//! (`O_TMPFILE`) temporaries.

use std::fs;
use std::path::Path;

use crate::{Error, Result};

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
pub(super) fn replace(tmp: &Path, path: &Path, sync: bool) -> Result<()> {
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

/// Unnamed temporary files (`O_TMPFILE`), linked into the folder when
/// complete.
#[cfg(target_os = "linux")]
pub(super) mod unnamed {
    use std::fs::File;
    use std::io::{Seek, SeekFrom};
    use std::os::fd::AsRawFd;
    use std::path::Path;

    use rustix::fs::{AtFlags, CWD, Mode, OFlags};

    use super::super::WriteOptions;
    use super::super::target::{Target, TempGuard};
    use crate::{Error, Result};

    /// An unnamed file in `dir`, or `None` where the filesystem (or the
    /// kernel) has no `O_TMPFILE`, `/proc` is not mounted, or the folder
    /// cannot take a file: the named path then says why, in its words.
    pub(in crate::io) fn create(dir: &Path) -> Option<File> {
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
    pub(in crate::io) fn finish(
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
