//! Atomic replacement for writers that insist on writing to a path themselves.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Runs `write` on a fresh temporary path in `out`'s directory, then renames
/// it over `out`. On failure the temporary file is removed and `out` is left
/// as it was.
pub fn with_temp_path(out: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = write(&tmp).and_then(|()| {
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .with_context(|| format!("syncing {}", tmp.display()))?;
        std::fs::rename(&tmp, out).with_context(|| format!("renaming to {}", out.display()))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
