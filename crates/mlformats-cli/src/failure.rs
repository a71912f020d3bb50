//! Errors that name the file they concern: `error: <path>: <what>`.

use std::path::{Path, PathBuf};

/// An error and the file it concerns.
pub struct Failure {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub error: anyhow::Error,
    /// A usage error (exit status 2) rather than a file that failed (1).
    pub usage: bool,
}

impl Failure {
    /// A usage error about `path`.
    pub fn usage(path: &Path, message: String) -> Failure {
        Failure {
            path: path.to_path_buf(),
            error: anyhow::anyhow!(message),
            usage: true,
        }
    }
}

/// Attaches a path to an `anyhow` result.
pub trait AtPath<T> {
    /// The error, about `path`.
    fn at(self, path: &Path) -> Result<T, Failure>;
}

impl<T> AtPath<T> for anyhow::Result<T> {
    fn at(self, path: &Path) -> Result<T, Failure> {
        self.map_err(|error| {
            // the library's "which format?" is a usage error too
            let usage = error
                .downcast_ref::<mlformats::Error>()
                .is_some_and(|e| matches!(e, mlformats::Error::UnknownExtension { .. }));
            Failure {
                path: path.to_path_buf(),
                error,
                usage,
            }
        })
    }
}
