//! What a writer writes to: a buffered file or memory.

use std::fs::File;
use std::io::{BufWriter, Cursor, Seek, SeekFrom, Write};
use std::path::Path;

use crate::{Error, Result};

/// What the writer given to [`write_atomic`](super::write_atomic) writes
/// to: the buffered temporary file, or memory inside
/// [`capture_write`](super::capture_write). It writes and seeks like
/// either.
pub struct Sink(pub(super) SinkInner);

pub(super) enum SinkInner {
    File(BufWriter<File>),
    Memory(Cursor<Vec<u8>>),
}

impl Sink {
    pub(super) fn file(file: File) -> Sink {
        Sink(SinkInner::File(BufWriter::with_capacity(1 << 20, file)))
    }

    /// The file, with every buffered byte written (`path` names it in an
    /// error).
    pub(super) fn into_file(self, path: &Path) -> Result<File> {
        match self.0 {
            SinkInner::File(w) => w
                .into_inner()
                .map_err(|e| Error::io(path.display().to_string(), e.into_error())),
            SinkInner::Memory(_) => Err(Error::io(
                path.display().to_string(),
                std::io::Error::other("the bytes went to memory, not to a file"),
            )),
        }
    }

    pub(super) fn memory() -> Sink {
        Sink(SinkInner::Memory(Cursor::new(Vec::new())))
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
