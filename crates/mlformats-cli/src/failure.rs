//! Errors that name the file they concern: `error: <path>: <what>`.

use std::path::{Path, PathBuf};

/// An error and the file it concerns.
pub struct Failure {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub error: anyhow::Error,
}

/// Attaches a path to an `anyhow` result.
pub trait AtPath<T> {
    /// The error, about `path`.
    fn at(self, path: &Path) -> Result<T, Failure>;
}

impl<T> AtPath<T> for anyhow::Result<T> {
    fn at(self, path: &Path) -> Result<T, Failure> {
        self.map_err(|error| Failure {
            path: path.to_path_buf(),
            error,
        })
    }
}
