//! Progress bars on stderr for long jobs: only for files over 64 MiB (a
//! remote read: only once it has taken a second, whatever its size), only
//! when stderr is a terminal, and never with `--quiet`.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Files at least this large get a progress bar.
pub const THRESHOLD: u64 = 64 << 20;

/// A remote read that has gone on this long gets a progress bar.
pub const REMOTE_AFTER: Duration = Duration::from_secs(1);

/// A bar over `total` bytes, or a hidden one when it should not show.
pub fn bar(file_size: u64, total: u64, quiet: bool, what: &str) -> ProgressBar {
    if quiet || file_size < THRESHOLD || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    styled(ProgressBar::new(total), what)
}

fn styled(pb: ProgressBar, what: &str) -> ProgressBar {
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb
}

/// The bar of a remote read over `total` bytes: a slow server makes a
/// small read long, so it is kept hidden until the read has taken
/// [`REMOTE_AFTER`], then drawn on stderr (when it is a terminal and not
/// `quiet`). Clones share the bar.
#[derive(Clone)]
pub struct Remote {
    pb: ProgressBar,
    start: Instant,
    after: Option<Duration>,
}

impl Remote {
    /// A bar over `total` bytes fetched by a remote read.
    pub fn new(total: u64, quiet: bool, what: &str) -> Remote {
        let after = (!quiet && std::io::stderr().is_terminal()).then_some(REMOTE_AFTER);
        Remote::showing_after(total, after, what)
    }

    /// A bar shown once the read has taken `after` (`None`: never).
    fn showing_after(total: u64, after: Option<Duration>, what: &str) -> Remote {
        let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        Remote {
            pb: styled(pb, what),
            start: Instant::now(),
            after,
        }
    }

    /// `n` more bytes fetched; the bar drawn from now on if the read has
    /// taken long enough. Returns whether it is drawn.
    pub fn inc(&self, n: u64) -> bool {
        self.pb.inc(n);
        match self.after {
            Some(after) if self.start.elapsed() >= after => {
                if self.pb.is_hidden() {
                    self.pb.set_draw_target(ProgressDrawTarget::stderr());
                }
                true
            }
            _ => false,
        }
    }

    /// The bar taken off the screen (the read is done).
    pub fn finish(&self) {
        self.pb.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_bar_shows_only_once_the_read_takes_long() {
        let never = Remote::showing_after(100, None, "fetching");
        assert!(!never.inc(10));
        let later = Remote::showing_after(100, Some(Duration::from_secs(3600)), "fetching");
        assert!(!later.inc(10));
        let now = Remote::showing_after(100, Some(Duration::ZERO), "fetching");
        let shared = now.clone();
        assert!(shared.inc(30) && now.inc(20));
        assert_eq!(now.pb.position(), 50);
        assert_eq!(later.pb.position(), 10);
        now.finish();
        // a quiet bar, or one with stderr not a terminal (as here), never shows
        assert!(!Remote::new(100, true, "fetching").inc(100));
    }
}
