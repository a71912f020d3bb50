//! Progress bars on stderr for long jobs: only for files over 64 MiB, only
//! when stderr is a terminal, and never with `--quiet`.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// Files at least this large get a progress bar.
pub const THRESHOLD: u64 = 64 << 20;

/// A bar over `total` bytes, or a hidden one when it should not show.
pub fn bar(file_size: u64, total: u64, quiet: bool, what: &str) -> ProgressBar {
    if quiet || file_size < THRESHOLD || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb
}
