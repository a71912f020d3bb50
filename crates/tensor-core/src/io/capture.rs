//! Sending the one file a writer writes to memory or to any writer
//! (standard output) instead of its path.

use std::cell::RefCell;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};

use super::output;
use super::sink::{Sink, SinkInner};
use crate::{Error, Result};

/// Where a capture keeps the bytes.
#[derive(Clone, Copy)]
enum Kind {
    /// In memory ([`capture_write`]).
    Memory,
    /// In an unnamed temporary file, copied to the caller's writer
    /// afterwards ([`capture_write_to`]).
    Spool,
}

/// What a capture got.
enum Got {
    Memory(Vec<u8>),
    Spool(File),
}

/// The state of a capture on this thread: `None` outside one.
enum Capture {
    Waiting(Kind),
    Done(Got),
}

thread_local! {
    static CAPTURE: RefCell<Option<Capture>> = const { RefCell::new(None) };
}

/// True inside [`capture_write`] or [`capture_write_to`].
pub(super) fn active() -> bool {
    CAPTURE.with(|c| c.borrow().is_some())
}

/// The sink the write of a capture goes to (`None` outside a capture; a
/// second write gets one too, and is refused when it is done).
pub(super) fn sink() -> Result<Option<Sink>> {
    let kind = CAPTURE.with(|c| match *c.borrow() {
        None => None,
        Some(Capture::Waiting(k)) => Some(k),
        // a second file: written to memory, refused in `captured`
        Some(Capture::Done(_)) => Some(Kind::Memory),
    });
    Ok(match kind {
        None => None,
        Some(Kind::Memory) => Some(Sink::memory()),
        Some(Kind::Spool) => Some(Sink::file(output::spool()?)),
    })
}

/// Keeps what a capture's sink got as the captured output: one file per
/// capture.
pub(super) fn captured(sink: Sink) -> Result<()> {
    let got = match sink.0 {
        SinkInner::Memory(cursor) => Got::Memory(cursor.into_inner()),
        SinkInner::File(w) => Got::Spool(
            w.into_inner()
                .map_err(|e| Error::io("writing a temporary file", e.into_error()))?,
        ),
    };
    CAPTURE.with(|c| {
        let mut c = c.borrow_mut();
        match *c {
            Some(Capture::Waiting(_)) => {
                *c = Some(Capture::Done(got));
                Ok(())
            }
            _ => Err(Error::io(
                "writing in memory",
                std::io::Error::other("this writer writes more than one file"),
            )),
        }
    })
}

/// Runs `f` as a capture of `kind`: its result and what its one write got.
fn run<R, E>(
    kind: Kind,
    f: impl FnOnce() -> std::result::Result<R, E>,
) -> std::result::Result<(R, Got), E>
where
    E: From<Error>,
{
    struct Restore(Option<Capture>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CAPTURE.with(|c| *c.borrow_mut() = previous);
        }
    }
    let restore = Restore(CAPTURE.with(|c| c.borrow_mut().replace(Capture::Waiting(kind))));
    let r = f();
    let got = CAPTURE.with(|c| c.borrow_mut().replace(Capture::Waiting(kind)));
    drop(restore);
    let r = r?;
    match got {
        Some(Capture::Done(got)) => Ok((r, got)),
        _ => Err(E::from(Error::io(
            "writing in memory",
            std::io::Error::other("nothing was written"),
        ))),
    }
}

/// Runs `f` with the one [`write_atomic`](super::write_atomic) call it
/// makes on this thread writing to memory instead of a file (the path it
/// names is not touched), and returns `f`'s result with the bytes
/// written: exactly the bytes the file would have got. A writer that
/// insists on a path ([`write_atomic_path`](super::write_atomic_path)) or
/// writes a second file is refused, and so is an `f` that writes nothing.
///
/// ```
/// use std::io::Write;
/// let ((), bytes) = tensor_core::io::capture_write(|| {
///     tensor_core::io::write_atomic("never-written.bin", |w| {
///         w.write_all(b"hello").map_err(|e| tensor_core::Error::io("w", e))
///     })
/// })
/// .unwrap();
/// assert_eq!(bytes, b"hello");
/// assert!(!std::path::Path::new("never-written.bin").exists());
/// ```
pub fn capture_write<R, E>(
    f: impl FnOnce() -> std::result::Result<R, E>,
) -> std::result::Result<(R, Vec<u8>), E>
where
    E: From<Error>,
{
    match run(Kind::Memory, f)? {
        (r, Got::Memory(bytes)) => Ok((r, bytes)),
        (_, Got::Spool(_)) => Err(E::from(Error::io(
            "writing in memory",
            std::io::Error::other("the bytes went to a temporary file"),
        ))),
    }
}

/// Like [`capture_write`], with the bytes written to `out` (standard
/// output, a socket, any writer that cannot seek) once `f` has succeeded,
/// and `f`'s result returned. The one file `f` writes goes to an unnamed
/// temporary file in the temporary folder first (so a writer that seeks
/// works, and the bytes are not held in memory), which is then copied to
/// `out` and flushed. When `f` fails, nothing is written to `out`.
///
/// ```
/// use std::io::Write;
/// let mut out = Vec::new();
/// tensor_core::io::capture_write_to(&mut out, || {
///     tensor_core::io::write_atomic("never-written.bin", |w| {
///         w.write_all(b"hello").map_err(|e| tensor_core::Error::io("w", e))
///     })
/// })
/// .unwrap();
/// assert_eq!(out, b"hello");
/// assert!(!std::path::Path::new("never-written.bin").exists());
/// ```
pub fn capture_write_to<W, R, E>(
    out: &mut W,
    f: impl FnOnce() -> std::result::Result<R, E>,
) -> std::result::Result<R, E>
where
    W: Write + ?Sized,
    E: From<Error>,
{
    let (r, got) = run(Kind::Spool, f)?;
    let copied = match got {
        Got::Memory(bytes) => out.write_all(&bytes),
        Got::Spool(mut file) => file
            .seek(SeekFrom::Start(0))
            .and_then(|_| std::io::copy(&mut file, out))
            .map(|_| ()),
    };
    copied
        .and_then(|()| out.flush())
        .map_err(|e| E::from(Error::io("writing the output", e)))?;
    Ok(r)
}
