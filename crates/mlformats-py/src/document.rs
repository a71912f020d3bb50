//! `mlformats.Document`: an opened file, lazy and context-managed.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use mlformats::{Document, Format};
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::array::{self, Hold, Mode};
use crate::pyobj;

/// A model or parameter file of any supported format, opened (memory-mapped):
/// tensors are read only when asked for, as read-only numpy arrays sharing
/// the map where the data allows.
///
/// Get one with ``mlformats.open(path)``; use it as a context manager or
/// call ``close()``. Closing drops the document's own hold on the file;
/// arrays already handed out keep the bytes they look at (their ``base``)
/// until they are gone.
///
/// >>> import mlformats
/// >>> with mlformats.open("testdata/cvm/two_entry.params") as f:
/// ...     print(f.format, f.keys())
/// ...     b = f.get_tensor("b")
/// cvm-params ['w', 'b']
/// >>> int(b), b.flags.writeable
/// (258, False)
#[pyclass(frozen, module = "mlformats", name = "Document")]
pub(crate) struct PyDocument {
    /// The document (its structure read; each tensor read when asked
    /// for), or `None` once closed.
    doc: Mutex<Option<Arc<Document>>>,
    path: Option<PathBuf>,
    format: Format,
    mode: Mode,
}

fn closed() -> PyErr {
    PyValueError::new_err("I/O operation on a closed mlformats.Document")
}

impl PyDocument {
    pub(crate) fn new(doc: Document, mode: Mode) -> Self {
        PyDocument {
            mode,
            path: doc.path().map(PathBuf::from),
            format: doc.format(),
            doc: Mutex::new(Some(Arc::new(doc))),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<Arc<Document>>> {
        self.doc.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The document, or ValueError once closed.
    fn doc(&self) -> PyResult<Arc<Document>> {
        self.lock().clone().ok_or_else(closed)
    }
}

/// The tensor `name` of `doc`, read now unless the document keeps it (the
/// interpreter released meanwhile), as an array sharing its bytes: an
/// array of a mapped file keeps only the map alive, an array of a tensor
/// decoded for it owns that tensor.
fn read_array<'py>(
    py: Python<'py>,
    doc: Arc<Document>,
    name: &str,
    mode: Mode,
) -> PyResult<Bound<'py, PyAny>> {
    if doc.position(name).is_none() {
        return Err(missing(name));
    }
    let path = doc.path().map(PathBuf::from);
    let n = name.to_string();
    let t = crate::error::run(py, path.as_deref(), move || doc.get(&n))?;
    match t.storage() {
        mlformats::tensor_core::Bytes::Mapped(map, _) => {
            let map = Arc::clone(map);
            array::to_numpy(py, name, &t, Hold::Map(map), mode)
        }
        _ => array::into_numpy(py, name, t, mode),
    }
}

fn missing(name: &str) -> PyErr {
    PyKeyError::new_err(name.to_string())
}

#[pymethods]
impl PyDocument {
    /// The format's contract name: ``cvm-params``, ``primitiv``,
    /// ``nnabla-nnp``, ``nnabla-nntxt``, ``nnabla-protobuf``, ``nnabla-h5``,
    /// ``tennis-module``, ``safetensors`` or ``npz``.
    #[getter]
    fn format(&self) -> &'static str {
        self.format.name()
    }

    /// The path the file was opened from.
    #[getter]
    fn path(&self) -> Option<String> {
        self.path.as_ref().map(|p| p.display().to_string())
    }

    /// primitiv's data type (``shape``, ``tensor``, ``parameter``, ``model``,
    /// ``optimizer``); None for other formats.
    #[getter]
    fn kind(&self) -> PyResult<Option<&'static str>> {
        Ok(self.doc()?.kind())
    }

    /// The file's size in bytes.
    #[getter]
    fn file_size(&self) -> PyResult<u64> {
        Ok(self.doc()?.file_size())
    }

    /// True once ``close()`` was called (or the ``with`` block ended).
    #[getter]
    fn closed(&self) -> bool {
        self.lock().is_none()
    }

    /// The tensor names, in stored order (unique: a name a TenniS module
    /// repeats gets ``#2``, ``#3``, ...).
    fn keys(&self) -> PyResult<Vec<String>> {
        Ok(self.doc()?.names().map(String::from).collect())
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.doc()?.len())
    }

    fn __contains__(&self, name: &Bound<'_, PyAny>) -> PyResult<bool> {
        let doc = self.doc()?;
        Ok(match name.cast::<PyString>() {
            Ok(s) => doc.position(&s.to_cow()?).is_some(),
            Err(_) => false,
        })
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyList::new(py, self.keys()?)?
            .try_iter()
            .map(Bound::into_any)
    }

    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.get_tensor(py, name, false)
    }

    /// The file's metadata as a flat dict, or None when it has none, as
    /// ``safetensors.safe_open(...).metadata()`` gives it: a safetensors
    /// file's ``__metadata__`` (str to str); for other formats their
    /// file-level fields (primitiv ``shape`` and optimizer configs, NNabla
    /// ``solver_states``).
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let doc = self.doc()?;
        let map = doc.metadata();
        let flat = match (self.format, map.get("metadata")) {
            (mlformats::Format::Safetensors, Some(serde_json::Value::Object(inner))) => inner,
            _ => map,
        };
        if flat.is_empty() {
            return Ok(None);
        }
        pyobj::json_map(py, flat).map(Some)
    }

    /// The networks of NNabla files and TenniS modules as plain Python
    /// objects, or None for formats without one::
    ///
    ///     {"graphs": [{"name", "batch_size", "inputs", "outputs",
    ///                  "values": [{"name", "kind", "shape", "tensor"}],
    ///                  "nodes": [{"op", "name", "inputs", "outputs",
    ///                             "attributes": {name: value}}]}],
    ///      "executors": [{"name", "network", "data", "outputs"}],
    ///      "optimizers": [...], "datasets": [...], "monitors": [...]}
    ///
    /// Attribute values are ints, floats, bools, strings, lists of those,
    /// dicts (nested messages), or ``TensorRef`` naming a tensor.
    #[getter]
    fn graph<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let doc = self.doc()?;
        doc.graph().map(|g| pyobj::model_graph(py, g)).transpose()
    }

    /// Every tensor as the file stores it, in the ``inspect`` contract's
    /// terms: dicts with ``name`` (its one name, what ``keys()`` lists and
    /// ``get_tensor`` and ``inspect`` take), ``key`` (the same, kept for
    /// older callers), ``stored_name`` (the name as the file stores it:
    /// TenniS ``<node>/value``, a repeated name; schema 1 of the contract),
    /// ``shape`` (as the file states it) and the format's own fields
    /// (primitiv ``order``, NNabla ``need_grad``, ...).
    #[getter]
    fn stored<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let doc = self.doc()?;
        let out = PyList::empty(py);
        for s in doc.stored() {
            let d = PyDict::new(py);
            d.set_item("name", &s.name)?;
            d.set_item("key", &s.name)?;
            d.set_item("stored_name", &s.stored_name)?;
            d.set_item("shape", &s.shape)?;
            for (k, v) in &s.extras {
                d.set_item(k, pyobj::json(py, v)?)?;
            }
            out.append(d)?;
        }
        Ok(out)
    }

    /// NNabla's ``need_grad`` of the tensor ``name`` (None where the format
    /// has none).
    fn need_grad(&self, name: &str) -> PyResult<Option<bool>> {
        let doc = self.doc()?;
        if doc.position(name).is_none() {
            return Err(missing(name));
        }
        Ok(doc.need_grad(name))
    }

    /// The tensor ``name`` as a read-only numpy array, reading nothing else.
    ///
    /// Zero-copy (``arr.flags.owndata`` is False, ``arr.base`` a
    /// ``TensorBuffer``) when the bytes are aligned for the dtype; otherwise
    /// an aligned copy (or an unaligned view, opened with
    /// ``copy_unaligned=False``). primitiv's column-major tensors are
    /// Fortran-ordered arrays. Raises KeyError for an unknown name.
    ///
    /// ``copy=True`` returns an array numpy owns (writable, ``owndata``
    /// True) that no longer depends on the file. (To be safe from a file
    /// truncated on disk while it is being read, open it with
    /// ``mlformats.open(path, copy=True)``.)
    #[pyo3(signature = (name, *, copy=false))]
    fn get_tensor<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        copy: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arr = read_array(py, self.doc()?, name, self.mode)?;
        if copy {
            array::owned_copy(&arr)
        } else {
            Ok(arr)
        }
    }

    /// A lazy slice of the tensor ``name``: index it (``f.get_slice(n)[2:4]``,
    /// ``[..., 0]``) to read only that part. Nothing is read until then;
    /// its shape and dtype are known without numpy's help (a bf16 tensor's
    /// too, without ml_dtypes).
    fn get_slice(&self, py: Python<'_>, name: &str) -> PyResult<TensorSlice> {
        let doc = self.doc()?;
        let t = doc.entry(name).ok_or_else(|| missing(name))?;
        // a compressed member past the inflation limits is refused here,
        // as opening the file whole refuses it
        let (d, n) = (Arc::clone(&doc), name.to_string());
        crate::error::run(py, self.path.as_deref(), move || d.check_readable(&n))?;
        Ok(TensorSlice {
            dtype: t.dtype().name(),
            dims: t.dims().to_vec(),
            name: name.to_string(),
            doc: Arc::clone(&doc),
            kept: OnceLock::new(),
        })
    }

    /// The ``inspect --json`` document (schema 2, or ``schema=1``) of this
    /// file as a dict; hashes and sums every tensor, so reads them all.
    #[pyo3(signature = (schema=2))]
    fn inspect<'py>(&self, py: Python<'py>, schema: u32) -> PyResult<Bound<'py, PyAny>> {
        let doc = self.doc()?;
        let path = self.path.clone();
        let v = crate::error::run(py, path.as_deref(), move || {
            // every tensor read (and kept) first: a tensor that does not
            // read is the error, not a row without its hash
            doc.load()?;
            doc.inspect_json_schema(schema)
                .ok_or_else(|| mlformats::Error::Invalid(format!("no inspect schema {schema}")))
        })?;
        pyobj::json(py, &v)
    }

    /// Drops the document's hold on the file. Arrays handed out stay valid
    /// (each keeps the bytes it uses); other methods raise ValueError.
    fn close(&self) {
        let doc = self.lock().take();
        drop(doc);
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        let path = self
            .path
            .as_ref()
            .map(|p| format!(" {:?}", p.display().to_string()))
            .unwrap_or_default();
        let format = self.format.name();
        match self.doc() {
            Ok(d) => format!("<mlformats.Document{path} ({format}, {} tensors)>", d.len()),
            Err(_) => format!("<mlformats.Document{path} ({format}, closed)>"),
        }
    }
}

/// One tensor of a document, not read yet: index it with numpy's basic
/// indexing to read only the part selected.
///
/// >>> with mlformats.open("big.params") as f:
/// ...     s = f.get_slice("embedding")
/// ...     rows = s[100:104]            # reads these 4 rows, nothing else
/// ...     print(s.shape, s.dtype, rows.shape)
/// (50000, 512) f32 (4, 512)
///
/// Of a remote file (``mlformats.open("https://...")``), the first read
/// fetches the tensor alone and the slice keeps it for the reads after.
#[pyclass(frozen, module = "mlformats", name = "TensorSlice")]
pub(crate) struct TensorSlice {
    doc: Arc<Document>,
    name: String,
    dtype: &'static str,
    dims: Vec<usize>,
    /// The tensor's view, made at the first read and kept for the reads
    /// after (a remote tensor is fetched once).
    kept: OnceLock<Py<PyAny>>,
}

impl TensorSlice {
    /// A read-only view of the whole tensor (possibly unaligned): made
    /// when the data is asked for, so that the shape and dtype can be read
    /// without the numpy type (ml_dtypes').
    fn view<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(a) = self.kept.get() {
            return Ok(a.bind(py).clone());
        }
        let a = read_array(py, Arc::clone(&self.doc), &self.name, Mode::View)?;
        let _ = self.kept.set(a.clone().unbind());
        Ok(a)
    }

    /// `r` as an aligned array when it is an unaligned view.
    fn aligned<'py>(r: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match r.getattr("flags") {
            Ok(flags) if !flags.getattr("aligned")?.is_truthy()? => r.call_method0("copy"),
            _ => Ok(r),
        }
    }
}

#[pymethods]
impl TensorSlice {
    /// The tensor's shape.
    // (named apart from `get_shape` below: pyo3 names a getter's wrapper
    // after the Rust function, a method's after its Python name)
    #[getter(shape)]
    fn shape_tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.dims)
    }

    /// The tensor's dtype, as the ``inspect`` contract names it (``f32``,
    /// ``bf16``, ``i64``, ...).
    #[getter(dtype)]
    fn dtype_name(&self) -> &'static str {
        self.dtype
    }

    /// The tensor's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The shape as a list (safetensors' ``get_shape()``).
    #[pyo3(name = "get_shape")]
    fn shape_list(&self) -> Vec<usize> {
        self.dims.clone()
    }

    /// The dtype in safetensors' spelling (``F32``, ``BF16``, ``I64``,
    /// ``BOOL``, ``F8_E4M3``, ``F8_E5M2``); dtypes safetensors lacks are
    /// the contract name in capitals (``C64``, ``F8E4M3FNUZ``, ...).
    #[pyo3(name = "get_dtype")]
    fn safetensors_dtype(&self) -> String {
        match self.dtype {
            "f8e4m3fn" => "F8_E4M3".to_string(),
            "f8e5m2" => "F8_E5M2".to_string(),
            "f8e8m0fnu" => "F8_E8M0".to_string(),
            d => d.to_ascii_uppercase(),
        }
    }

    fn __len__(&self) -> PyResult<usize> {
        self.dims
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-d tensor"))
    }

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        Self::aligned(self.view(py)?.get_item(key)?)
    }

    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut a = Self::aligned(self.view(py)?)?;
        if let Some(dt) = dtype {
            a = a.call_method1("astype", (dt,))?;
        } else if copy == Some(true) {
            a = a.call_method0("copy")?;
        }
        Ok(a)
    }

    fn __repr__(&self) -> String {
        format!(
            "<mlformats.TensorSlice {:?} {} {:?}>",
            self.name, self.dtype, self.dims
        )
    }
}
