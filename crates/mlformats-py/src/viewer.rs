//! `mlformats.Viewer`: the library's viewer server (`mlformats::view`),
//! started from Python; `mlformats.view(path)` (in `__init__.py`) wraps it.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::prelude::*;

use crate::error::run;

/// The viewer page and one file served on 127.0.0.1 until ``stop()``
/// (or the end of a ``with`` block).
#[pyclass(frozen, module = "mlformats", name = "Viewer")]
pub(crate) struct PyViewer {
    server: Mutex<Option<mlformats::view::Viewer>>,
    url: String,
    port: u16,
    path: PathBuf,
}

#[pymethods]
impl PyViewer {
    #[new]
    #[pyo3(signature = (path, port = 0))]
    fn new(py: Python<'_>, path: PathBuf, port: u16) -> PyResult<Self> {
        let p = path.clone();
        let server = run(py, Some(&path), move || {
            mlformats::view::Viewer::start(&p, port)
        })?;
        Ok(PyViewer {
            url: server.url().to_string(),
            port: server.addr().port(),
            server: Mutex::new(Some(server)),
            path,
        })
    }

    /// The page's address, with the file to open.
    #[getter]
    fn url(&self) -> &str {
        &self.url
    }

    /// The port the server listens on (127.0.0.1).
    #[getter]
    fn port(&self) -> u16 {
        self.port
    }

    /// Whether the server still runs.
    #[getter]
    fn running(&self) -> bool {
        self.server.lock().map(|s| s.is_some()).unwrap_or(false)
    }

    /// Opens the page in the default browser; whether one could be started.
    fn open_browser(&self) -> bool {
        mlformats::view::open_in_browser(&self.url)
    }

    /// Stops the server (a second call does nothing).
    fn stop(&self, py: Python<'_>) {
        let server = self.server.lock().ok().and_then(|mut s| s.take());
        if let Some(server) = server {
            py.detach(move || server.stop());
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.stop(py);
        false
    }

    fn __repr__(&self) -> String {
        let state = if self.running() { "serving" } else { "stopped" };
        format!(
            "<mlformats.Viewer {state} {:?} at {}>",
            self.path.display().to_string(),
            self.url
        )
    }
}
