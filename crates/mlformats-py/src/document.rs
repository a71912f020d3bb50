//! `mlformats.Document`: an opened file, lazy and context-managed.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use mlformats::tensor_core::MappedFile;
use mlformats::{Document, Format, Headers, ReadOptions};
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
    state: Mutex<State>,
    path: Option<PathBuf>,
    format: Format,
    mode: Mode,
    /// How to open the whole document when only its headers were read.
    opts: ReadOptions,
}

/// What a document holds: its headers only (nothing decoded yet), the
/// whole document (once a tensor was asked for, or for a format read
/// whole), or nothing once closed.
enum State {
    /// The headers, and the file's map they were read from, kept so that
    /// the document opened later reads the same bytes (a file removed
    /// meanwhile stays readable); dropped on close.
    Headers(Arc<Headers>, Bytes),
    Open(Arc<Document>),
    Closed,
}

/// Where a document opened by its headers reads its tensors' bytes.
#[derive(Clone)]
pub(crate) enum Bytes {
    /// The file's memory map (arrays share it where the data allows).
    Map(Arc<MappedFile>),
    /// A remote file, read by ranges (each tensor fetched when asked for).
    Remote(Arc<mlformats::remote::RemoteFile>),
}

/// What the names, shapes and metadata are answered from.
enum View {
    Headers(Arc<Headers>),
    Open(Arc<Document>),
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
            state: Mutex::new(State::Open(Arc::new(doc))),
            opts: ReadOptions::default(),
        }
    }

    /// A document of which only `headers` were read from `map` (the file
    /// at `path`): the whole document is opened over the same map with
    /// `opts` when a tensor is first asked for.
    pub(crate) fn of_headers(
        headers: Headers,
        map: Bytes,
        path: PathBuf,
        opts: ReadOptions,
        mode: Mode,
    ) -> Self {
        PyDocument {
            mode,
            format: headers.summary().format,
            path: Some(path),
            state: Mutex::new(State::Headers(Arc::new(headers), map)),
            opts,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The headers or the document, or ValueError once closed.
    fn view(&self) -> PyResult<View> {
        match &*self.lock() {
            State::Headers(h, _) => Ok(View::Headers(h.clone())),
            State::Open(d) => Ok(View::Open(d.clone())),
            State::Closed => Err(closed()),
        }
    }

    /// The whole document, opened now if only its headers were read, or
    /// ValueError once closed. The lock is not held while the file is
    /// opened (that releases the GIL, which another thread waiting on the
    /// lock would hold).
    fn get(&self, py: Python<'_>) -> PyResult<Arc<Document>> {
        let bytes = match &*self.lock() {
            State::Open(d) => return Ok(d.clone()),
            State::Closed => return Err(closed()),
            State::Headers(_, bytes) => bytes.clone(),
        };
        let Some(path) = self.path.clone() else {
            return Err(closed());
        };
        let (format, opts) = (self.format, self.opts.clone());
        let doc = crate::error::run(py, Some(&path.clone()), move || match bytes {
            Bytes::Map(map) => Document::from_map(map, Some(path), Some(format), &opts),
            // the whole remote file, fetched once (a remote file changed
            // since its headers were read is an error, not a mix)
            Bytes::Remote(remote) => {
                let all = mlformats::remote::read_all(&remote)?;
                let map = MappedFile::from_vec(all);
                Document::from_map(map, Some(path), Some(format), &opts)
            }
        })?;
        let doc = Arc::new(doc);
        let mut state = self.lock();
        match &*state {
            State::Open(d) => Ok(d.clone()),
            State::Closed => Err(closed()),
            State::Headers(..) => {
                *state = State::Open(doc.clone());
                Ok(doc)
            }
        }
    }
}

impl PyDocument {
    /// The tensor `name` read alone through the file's index, while only
    /// the headers are open (the whole document is not decoded for one
    /// tensor): shared with the map where the file stores it as it is.
    /// `None` when the document is open whole (or its format has no index).
    fn read_alone<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let (headers, bytes) = match &*self.lock() {
            State::Headers(h, b) => (h.clone(), b.clone()),
            State::Open(_) => return Ok(None),
            State::Closed => return Err(closed()),
        };
        let Some(index) = headers.index() else {
            return Ok(None);
        };
        let i = index.position(name).ok_or_else(|| missing(name))?;
        let path = self.path.clone();
        let held = bytes.clone();
        let t = crate::error::run(py, path.as_deref(), move || {
            let ix = headers
                .index()
                .ok_or_else(|| mlformats::Error::Invalid("no index".into()))?;
            match &held {
                Bytes::Map(map) => ix.tensor_in(map, i),
                Bytes::Remote(remote) => ix.read_tensor(remote.as_ref(), i),
            }
        })?;
        // bytes in a map (the file's, or a held tensor's own) keep only
        // that map alive
        match t.storage() {
            mlformats::tensor_core::Bytes::Mapped(map, _) => {
                let map = std::sync::Arc::clone(map);
                array::to_numpy(py, name, &t, Hold::Map(map), self.mode).map(Some)
            }
            _ => array::into_numpy(py, name, t, self.mode).map(Some),
        }
    }
}

impl View {
    /// The tensor names, in stored order.
    fn names(&self) -> Vec<String> {
        match self {
            View::Headers(h) => h.summary().tensors.iter().map(|t| t.name.clone()).collect(),
            View::Open(d) => d.names().map(String::from).collect(),
        }
    }

    fn len(&self) -> usize {
        match self {
            View::Headers(h) => h.summary().tensors.len(),
            View::Open(d) => d.len(),
        }
    }

    fn contains(&self, name: &str) -> bool {
        match self {
            View::Headers(h) => h.summary().tensors.iter().any(|t| t.name == name),
            View::Open(d) => d.tensor(name).is_some(),
        }
    }

    fn metadata(&self) -> &serde_json::Map<String, serde_json::Value> {
        match self {
            View::Headers(h) => h.metadata(),
            View::Open(d) => d.metadata(),
        }
    }

    fn graph(&self) -> Option<&mlformats::tensor_core::graph::ModelGraph> {
        match self {
            View::Headers(h) => h.graph(),
            View::Open(d) => d.graph(),
        }
    }

    fn kind(&self) -> Option<&'static str> {
        match self {
            View::Headers(h) => h.summary().kind,
            View::Open(d) => d.kind(),
        }
    }

    fn file_size(&self) -> u64 {
        match self {
            View::Headers(h) => h.summary().file_size,
            View::Open(d) => d.file_size(),
        }
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
        Ok(self.view()?.kind())
    }

    /// The file's size in bytes.
    #[getter]
    fn file_size(&self) -> PyResult<u64> {
        Ok(self.view()?.file_size())
    }

    /// True once ``close()`` was called (or the ``with`` block ended).
    #[getter]
    fn closed(&self) -> bool {
        matches!(*self.lock(), State::Closed)
    }

    /// The tensor names, in stored order (unique: a name a TenniS module
    /// repeats gets ``#2``, ``#3``, ...).
    fn keys(&self) -> PyResult<Vec<String>> {
        Ok(self.view()?.names())
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.view()?.len())
    }

    fn __contains__(&self, name: &Bound<'_, PyAny>) -> PyResult<bool> {
        let view = self.view()?;
        Ok(match name.cast::<PyString>() {
            Ok(s) => view.contains(&s.to_cow()?),
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
        let view = self.view()?;
        let map = view.metadata();
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
        let view = self.view()?;
        view.graph().map(|g| pyobj::model_graph(py, g)).transpose()
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
        let doc = self.get(py)?;
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
    fn need_grad(&self, py: Python<'_>, name: &str) -> PyResult<Option<bool>> {
        let doc = self.get(py)?;
        if doc.tensor(name).is_none() {
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
        let arr = match self.read_alone(py, name)? {
            Some(arr) => arr,
            None => {
                let doc = self.get(py)?;
                let t = doc.tensor(name).ok_or_else(|| missing(name))?;
                array::to_numpy(py, name, t, Hold::of(t, &doc), self.mode)?
            }
        };
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
        // a remote file's headers: the tensor fetched alone when read,
        // not the whole file now
        if let State::Headers(h, Bytes::Remote(remote)) = &*self.lock()
            && let Some(ix) = h.index()
        {
            let i = ix.position(name).ok_or_else(|| missing(name))?;
            let t = ix.tensors().get(i).ok_or_else(|| missing(name))?;
            return Ok(TensorSlice {
                dtype: t.dtype().name(),
                dims: t.dims().to_vec(),
                name: name.to_string(),
                source: SliceSource::Remote(h.clone(), remote.clone(), i, Default::default()),
            });
        }
        let doc = self.get(py)?;
        let t = doc.tensor(name).ok_or_else(|| missing(name))?;
        Ok(TensorSlice {
            dtype: t.dtype().name(),
            dims: t.dims().to_vec(),
            name: name.to_string(),
            source: SliceSource::Doc(doc),
        })
    }

    /// The ``inspect --json`` document (schema 2, or ``schema=1``) of this
    /// file as a dict; hashes and sums every tensor, so reads them all.
    #[pyo3(signature = (schema=2))]
    fn inspect<'py>(&self, py: Python<'py>, schema: u32) -> PyResult<Bound<'py, PyAny>> {
        let doc = self.get(py)?;
        let path = self.path.clone();
        let v = crate::error::run(py, path.as_deref(), move || {
            doc.inspect_json_schema(schema)
                .ok_or_else(|| mlformats::Error::Invalid(format!("no inspect schema {schema}")))
        })?;
        pyobj::json(py, &v)
    }

    /// Drops the document's hold on the file. Arrays handed out stay valid
    /// (each keeps the bytes it uses); other methods raise ValueError.
    fn close(&self) {
        let state = std::mem::replace(&mut *self.lock(), State::Closed);
        drop(state);
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
        match self.view() {
            Ok(v) => format!("<mlformats.Document{path} ({format}, {} tensors)>", v.len()),
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
    source: SliceSource,
    name: String,
    dtype: &'static str,
    dims: Vec<usize>,
}

/// Where a [`TensorSlice`]'s data comes from.
enum SliceSource {
    /// The document (a mapped file's tensors are views of the map).
    Doc(Arc<Document>),
    /// A remote file's headers: tensor `i` fetched alone at the first
    /// read, then kept.
    Remote(
        Arc<Headers>,
        Arc<mlformats::remote::RemoteFile>,
        usize,
        std::sync::OnceLock<Py<PyAny>>,
    ),
}

impl TensorSlice {
    /// A read-only view of the whole tensor (possibly unaligned): made
    /// when the data is asked for, so that the shape and dtype can be read
    /// without the numpy type (ml_dtypes').
    fn view<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (headers, remote, i, kept) = match &self.source {
            SliceSource::Doc(doc) => {
                let t = doc.tensor(&self.name).ok_or_else(|| missing(&self.name))?;
                return array::to_numpy(py, &self.name, t, Hold::of(t, doc), Mode::View);
            }
            SliceSource::Remote(h, r, i, kept) => (h.clone(), r.clone(), *i, kept),
        };
        if let Some(a) = kept.get() {
            return Ok(a.bind(py).clone());
        }
        let location = PathBuf::from(remote.location());
        let t = crate::error::run(py, Some(&location), move || {
            let ix = headers
                .index()
                .ok_or_else(|| mlformats::Error::Invalid("no index".into()))?;
            ix.read_tensor(remote.as_ref(), i)
        })?;
        let a = array::into_numpy(py, &self.name, t, Mode::View)?;
        let _ = kept.set(a.clone().unbind());
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
