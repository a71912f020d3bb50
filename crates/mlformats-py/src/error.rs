//! Library errors and panics as Python exceptions.

use std::any::Any;
use std::io::ErrorKind;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyIsADirectoryError, PyMemoryError, PyOSError,
    PyPermissionError, PyValueError,
};
use pyo3::prelude::*;

pyo3::create_exception!(
    mlformats,
    FormatError,
    PyValueError,
    "A file mlformats cannot read or write, or a request it cannot carry out.\n\n\
     The message is the library's whole error (what is wrong and where: byte\n\
     offsets, archive members, tensor names), after the path it concerns."
);

/// What went wrong inside the library: an error it returned, or a panic
/// (a bug, reported as [`FormatError`] all the same).
pub(crate) enum Failure {
    Lib(mlformats::Error),
    Panic(String),
}

/// Runs `f`, turning a panic into [`Failure::Panic`] so that no input can
/// unwind into Python as a `PanicException`.
pub(crate) fn guarded<T>(f: impl FnOnce() -> mlformats::Result<T>) -> Result<T, Failure> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Failure::Lib(e)),
        Err(p) => Err(Failure::Panic(panic_message(p.as_ref()))),
    }
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

impl Failure {
    /// The Python exception, with `path` (the file concerned) in the message:
    /// `OSError` subclasses for the file system, [`FormatError`] otherwise.
    pub(crate) fn into_pyerr(self, path: Option<&Path>) -> PyErr {
        let prefix = |msg: &str| match path {
            Some(p) => format!("{}: {msg}", p.display()),
            None => msg.to_string(),
        };
        let e = match self {
            Failure::Panic(msg) => {
                return FormatError::new_err(prefix(&format!(
                    "internal error (a bug in mlformats; please report it): {msg}"
                )));
            }
            Failure::Lib(e) => e,
        };
        match &e {
            mlformats::Error::Io(io) => os_error(io, None, path),
            mlformats::Error::IsDirectory => PyIsADirectoryError::new_err(prefix("is a directory")),
            _ if out_of_memory(&e) => PyMemoryError::new_err(prefix(&e.full_message())),
            _ => match file_system_cause(&e) {
                // e.g. writing into a folder that does not exist
                Some(io) => os_error(io, Some(e.full_message()), path),
                None => FormatError::new_err(prefix(&e.full_message())),
            },
        }
    }
}

/// True when the allocator refused a buffer the file asked for
/// (`tensor_core::Error::OutOfMemory` among the causes of `e`).
fn out_of_memory(e: &mlformats::Error) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cur {
        if let Some(mlformats::tensor_core::Error::OutOfMemory { .. }) =
            c.downcast_ref::<mlformats::tensor_core::Error>()
        {
            return true;
        }
        cur = c.source();
    }
    false
}

/// An I/O error of the file system among the causes of `e` (not one a
/// parser reports for bytes that end too soon: those are format errors).
fn file_system_cause(e: &mlformats::Error) -> Option<&std::io::Error> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cur {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                ErrorKind::NotFound
                    | ErrorKind::PermissionDenied
                    | ErrorKind::AlreadyExists
                    | ErrorKind::IsADirectory
                    | ErrorKind::NotADirectory
                    | ErrorKind::StorageFull
                    | ErrorKind::ReadOnlyFilesystem
            )
            .then_some(io);
        }
        cur = c.source();
    }
    None
}

/// `OSError(errno, strerror, filename)` of the subclass Python itself would
/// raise for the error's kind.
/// `message` replaces the error's own text (a library message around it).
fn os_error(io: &std::io::Error, message: Option<String>, path: Option<&Path>) -> PyErr {
    let text = message.unwrap_or_else(|| io.to_string());
    // std's message ends with " (os error N)", which the errno already says
    let strerror = text
        .split(" (os error ")
        .next()
        .unwrap_or(&text)
        .to_string();
    let filename = path.map(|p| p.display().to_string());
    macro_rules! raise {
        ($ty:ty) => {
            match (io.raw_os_error(), filename) {
                (Some(errno), Some(f)) => <$ty>::new_err((errno, strerror, f)),
                (Some(errno), None) => <$ty>::new_err((errno, strerror)),
                (None, Some(f)) => <$ty>::new_err(format!("{f}: {strerror}")),
                (None, None) => <$ty>::new_err(strerror),
            }
        };
    }
    match io.kind() {
        ErrorKind::NotFound => raise!(PyFileNotFoundError),
        ErrorKind::PermissionDenied => raise!(PyPermissionError),
        ErrorKind::AlreadyExists => raise!(PyFileExistsError),
        ErrorKind::IsADirectory => raise!(PyIsADirectoryError),
        _ => raise!(PyOSError),
    }
}

/// Runs library work with the interpreter released (other Python threads
/// run meanwhile), panics caught, errors mapped with `path` as context.
pub(crate) fn run<T: Send>(
    py: Python<'_>,
    path: Option<&Path>,
    f: impl FnOnce() -> mlformats::Result<T> + Send,
) -> PyResult<T> {
    py.detach(|| guarded(f)).map_err(|e| e.into_pyerr(path))
}

/// Like [`run`], keeping the interpreter (for work that reads numpy memory,
/// which must not change while the library reads it).
pub(crate) fn run_attached<T>(
    path: Option<&Path>,
    f: impl FnOnce() -> mlformats::Result<T>,
) -> PyResult<T> {
    guarded(f).map_err(|e| e.into_pyerr(path))
}
