//! What a writer writes to: a buffered file.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use crate::{Error, Result};

/// What the writer given to [`write_atomic`](super::write_atomic) or
/// [`write_spooled`](super::write_spooled) writes to: the buffered
/// temporary file. It writes and seeks like one.
pub struct Sink(BufWriter<File>);

impl Sink {
    pub(super) fn file(file: File) -> Sink {
        Sink(BufWriter::with_capacity(1 << 20, file))
    }

    /// The file, with every buffered byte written (`path` names it in an
    /// error).
    pub(super) fn into_file(self, path: &Path) -> Result<File> {
        self.0
            .into_inner()
            .map_err(|e| Error::io(path.display().to_string(), e.into_error()))
    }
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sink::File")
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.0.write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl Seek for Sink {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.0.seek(pos)
    }

    fn stream_position(&mut self) -> std::io::Result<u64> {
        self.0.stream_position()
    }
}
