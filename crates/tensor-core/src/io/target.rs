//! The output's folder, its temporaries' names, and removing the ones
//! whose writer is gone.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{Error, Result};

/// The output's folder and file name, and the names of its temporaries.
pub(super) struct Target {
    pub(super) dir: PathBuf,
    base: String,
}

/// The tag between the output's name and the owner in a temporary's name.
pub(super) const TAG: &str = "mlf-";

impl Target {
    /// The target `path` (a regular file or none: a folder is refused
    /// before, by `output::resolve`).
    pub(super) fn of(path: &Path) -> Target {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let base = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".into());
        Target { dir, base }
    }

    /// A name no other temporary has: `.<base>.mlf-<pid>-<start>-<ns>-<n>.tmp`.
    pub(super) fn temp_name(&self) -> PathBuf {
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

    pub(super) fn create_temp(&self) -> Result<(PathBuf, File)> {
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

    pub(super) fn sync_dir(&self) -> Result<()> {
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
    pub(super) fn remove_stale_temporaries(&self) {
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
pub(in crate::io) mod owner {
    use std::sync::OnceLock;

    use super::TAG;

    /// This process: pid, start time (clock ticks after boot, 0 when
    /// unknown) and pid namespace (0 when unknown).
    pub(in crate::io) struct Me {
        pub pid: u32,
        pub start: u64,
        pub ns: u64,
    }

    pub(in crate::io) fn me() -> &'static Me {
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
    pub(in crate::io) fn is_gone(middle: &str) -> bool {
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

pub(super) struct TempGuard(pub(super) Option<PathBuf>);

impl TempGuard {
    pub(super) fn disarm(mut self) {
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
