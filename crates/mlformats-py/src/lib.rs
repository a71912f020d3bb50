//! `mlformats._native`: the Python binding of the `mlformats` library.
//!
//! Every format operation is the library's (`mlformats::open`, `save_with`,
//! `convert_document`, `diff_documents`, `validate`, `Document::inspect_json`);
//! this crate only turns tensors into numpy arrays (views of the memory map
//! where possible), numpy arrays into borrowed tensors, and library values
//! into Python objects.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mlformats::diff::DiffOptions;
use mlformats::{ConvertOptions, Document, Format, ReadOptions, SaveOptions};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

mod array;
mod document;
mod error;
mod pyobj;
mod viewer;

use array::{Input, Mode, TensorBuffer};
use document::{PyDocument, TensorSlice};
use error::{FormatError, run, run_attached};
use pyobj::TensorRef;

fn open_document(
    py: Python<'_>,
    path: &Path,
    format: Option<Format>,
    opts: &ReadOptions,
) -> PyResult<Document> {
    let p = path.to_path_buf();
    run(py, Some(path), move || {
        Document::open_with(&p, format, opts)
    })
}

/// The reading limits of the ``max_inflate_ratio`` and ``trust`` keywords.
fn read_options(max_inflate_ratio: Option<u64>, trust: bool) -> ReadOptions {
    let mut limits = if trust {
        mlformats::tensor_core::Limits::unlimited()
    } else {
        mlformats::tensor_core::Limits::default()
    };
    if let Some(r) = max_inflate_ratio {
        limits = limits.with_max_inflate_ratio(r);
    }
    ReadOptions::default().with_limits(limits)
}

fn format_arg(name: Option<&str>) -> PyResult<Option<Format>> {
    name.map(|n| {
        Format::from_name(n).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown format {n:?}; one of: {}",
                Format::names().join(", ")
            ))
        })
    })
    .transpose()
}

/// One glob or a list of globs.
fn globs(v: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    match v {
        None => Ok(Vec::new()),
        Some(v) if v.is_none() => Ok(Vec::new()),
        Some(v) => match v.cast::<PyString>() {
            Ok(s) => Ok(vec![s.to_cow()?.into_owned()]),
            Err(_) => v.extract(),
        },
    }
}

/// Opens a file of any supported format (detected from its first bytes and
/// name), memory-mapped, and returns a lazy ``Document``: nothing but the
/// file's index is read until a tensor is asked for.
///
/// ``path`` may also be a location on a server or in a bucket
/// (``https://...``, ``s3://bucket/key``, ``gs://...``, ``az://...``;
/// credentials and endpoints from the environment, as the AWS, GCP and
/// Azure tools read them): its headers are fetched by HTTP range
/// requests, and each tensor when it is asked for; a format without an
/// index is fetched whole. ``load``, ``inspect``, ``stats``, ``diff`` and
/// ``convert`` take locations too (they fetch the file whole).
///
/// ``format`` reads the file as that format instead of detecting it (a
/// contract name such as ``"nnabla-h5"`` or an alias such as ``"h5"``).
/// ``copy_unaligned=False`` makes ``get_tensor`` return views even of data
/// that is not aligned for its dtype (see ``load``).
///
/// >>> with mlformats.open("testdata/nnabla/mlp.nnp") as f:
/// ...     w = f.get_tensor(f.keys()[0])      # reads this tensor only
///
/// Raises ``FileNotFoundError`` (and other ``OSError``) for the file system,
/// ``FormatError`` for a file that is not valid.
///
/// ``copy=True`` reads the whole file into memory instead of mapping it:
/// nothing then depends on the file staying as it is (a mapped file that is
/// truncated on disk while its arrays are in use kills the interpreter
/// with SIGBUS; a file read into memory cannot).
///
/// Limits: compressed data may inflate to at most ``max_inflate_ratio``
/// (default 100) bytes per byte of the file (any file to 64 MiB); past it
/// the file is refused with ``FormatError`` as a decompression bomb.
/// ``trust=True`` lifts every reading limit (only for files you trust). An
/// allocation the system refuses raises ``MemoryError``; neither ever
/// kills the interpreter.
#[pyfunction]
#[pyo3(signature = (path, format=None, *, copy_unaligned=true, copy=false, max_inflate_ratio=None, trust=false))]
fn open(
    py: Python<'_>,
    path: PathBuf,
    format: Option<&str>,
    copy_unaligned: bool,
    copy: bool,
    max_inflate_ratio: Option<u64>,
    trust: bool,
) -> PyResult<PyDocument> {
    let format = format_arg(format)?;
    let opts = read_options(max_inflate_ratio, trust);
    if copy {
        let doc = read_document(py, &path, format, &opts)?;
        return Ok(PyDocument::new(doc, mode(copy_unaligned)));
    }
    // Names, shapes and metadata from the file's structure alone (a remote
    // file's by ranges): no tensor is decoded (nor a compressed member
    // inflated) until one is asked for; formats without an index are
    // parsed whole at once.
    let (p, lazy) = (path.clone(), opts.with_lazy(true));
    let doc = run(py, Some(&path), move || {
        if p.is_dir() {
            return Err(mlformats::Error::IsDirectory);
        }
        Document::open_with(&p, format, &lazy)
    })?;
    Ok(PyDocument::new(doc, mode(copy_unaligned)))
}

/// Reads `path` into memory (no memory map; a remote file fetched whole)
/// and opens it.
fn read_document(
    py: Python<'_>,
    path: &Path,
    format: Option<Format>,
    opts: &ReadOptions,
) -> PyResult<Document> {
    let p = path.to_path_buf();
    run(py, Some(path), move || {
        if p.to_str().is_some_and(mlformats::remote::is_remote) {
            return Document::open_with(&p, format, opts);
        }
        if p.is_dir() {
            return Err(mlformats::Error::IsDirectory);
        }
        let bytes = std::fs::read(&p)?;
        let map = mlformats::tensor_core::MappedFile::from_vec(bytes);
        Document::from_map(map, Some(p.clone()), format, opts)
    })
}

fn mode(copy_unaligned: bool) -> Mode {
    if copy_unaligned {
        Mode::Array
    } else {
        Mode::View
    }
}

/// Reads the tensors of a file of any supported format as a dict of
/// read-only numpy arrays, in stored order (or in the order of ``names``,
/// which selects the tensors to read; an unknown name raises KeyError).
///
/// Arrays share the file's memory map when their data is aligned for the
/// dtype (``arr.flags.owndata`` is False; ``arr.base`` keeps the map open);
/// others are aligned copies, unless ``copy_unaligned=False``: then they are
/// unaligned views (``arr.flags.aligned`` False), which numpy handles, more
/// slowly. primitiv's column-major tensors are Fortran-ordered.
///
/// >>> import mlformats
/// >>> t = mlformats.load("testdata/cvm/two_entry.params")
/// >>> sorted(t), t["b"].dtype
/// (['b', 'w'], dtype('int32'))
///
/// ``copy=True`` returns arrays numpy owns (writable, ``owndata`` True),
/// read with plain reads instead of a memory map: safe from the file being
/// truncated or rewritten in place on disk, at the cost of a copy.
///
/// ``max_inflate_ratio`` and ``trust`` are the reading limits of ``open``.
#[pyfunction]
#[pyo3(signature = (path, names=None, *, copy_unaligned=true, copy=false, max_inflate_ratio=None, trust=false))]
fn load<'py>(
    py: Python<'py>,
    path: PathBuf,
    names: Option<Vec<String>>,
    copy_unaligned: bool,
    copy: bool,
    max_inflate_ratio: Option<u64>,
    trust: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = read_options(max_inflate_ratio, trust);
    let doc = if copy {
        read_document(py, &path, None, &opts)?
    } else {
        open_document(py, &path, None, &opts)?
    };
    let mut tensors: Vec<(String, mlformats::Tensor<'static>)> =
        doc.into_tensor_map().into_iter().collect();
    if let Some(names) = names {
        let mut by_name: HashMap<String, mlformats::Tensor<'static>> =
            tensors.into_iter().collect();
        let missing: Vec<&String> = names.iter().filter(|n| !by_name.contains_key(*n)).collect();
        if !missing.is_empty() {
            return Err(PyKeyError::new_err(format!(
                "{}: no tensor named {}",
                path.display(),
                missing
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        tensors = Vec::with_capacity(names.len());
        for n in names {
            if let Some(t) = by_name.remove(&n) {
                tensors.push((n, t));
            }
        }
    }
    let out = PyDict::new(py);
    for (name, t) in tensors {
        // each array owns its tensor: a mapped tensor shares the map (kept
        // open by the array's base), a decoded one hands over its buffer
        let mut arr = array::into_numpy(py, &name, t, mode(copy_unaligned))?;
        if copy {
            arr = array::owned_copy(&arr)?;
        }
        out.set_item(name, arr)?;
    }
    Ok(out)
}

/// Saves named tensors (a dict of name to numpy array, or anything
/// ``numpy.asarray`` takes) as a new file, replaced atomically (a
/// symlink's target is replaced and the link kept; a FIFO or device is
/// written through; a replaced file keeps its permissions and owner).
///
/// ``format`` (a contract name or alias: ``safetensors``, ``npz``,
/// ``params``, ``primitiv``/``data``, ``nntxt``, ``protobuf``, ``nnp``,
/// ``h5``, ``tsm``) defaults to the one the extension names. ``need_grad``
/// sets NNabla's flag per name (default True); ``metadata`` (str to str) goes
/// where the format stores string metadata (safetensors' ``__metadata__``).
/// ``keep_order`` keeps Fortran-ordered arrays in Fortran order in npz.
///
/// C-contiguous arrays are written as they are, Fortran-ordered ones as
/// column-major (primitiv takes them without a transpose), others are first
/// made C-contiguous. A TenniS module stores each tensor as a constant node:
/// it reads back as ``<name>/value``.
///
/// >>> import numpy as np, mlformats
/// >>> mlformats.save("w.safetensors", {"fc/W": np.ones((2, 3), np.float32)})
/// >>> mlformats.save("w.h5", {"fc/W": np.ones((2, 3), np.float32)},
/// ...                need_grad={"fc/W": False})
///
/// ``sync=True`` flushes the file and its folder to the disk before
/// returning, so the new file survives a power loss. By default the file
/// is still replaced atomically (a killed or crashed writer leaves the
/// previous file and no temporary file) but a power loss or an
/// operating-system crash may lose the new contents, as with
/// ``safetensors`` and ``torch.save``.
#[pyfunction]
#[pyo3(signature = (path, tensors, format=None, *, need_grad=None, metadata=None, keep_order=false, sync=false))]
#[allow(clippy::too_many_arguments)]
fn save(
    py: Python<'_>,
    path: PathBuf,
    tensors: &Bound<'_, PyAny>,
    format: Option<&str>,
    need_grad: Option<HashMap<String, bool>>,
    metadata: Option<&Bound<'_, PyDict>>,
    keep_order: bool,
    sync: bool,
) -> PyResult<()> {
    let np = py.import("numpy")?;
    let pairs = if tensors.hasattr("items")? {
        tensors.call_method0("items")?
    } else {
        tensors.clone()
    };
    let mut inputs = Vec::new();
    for item in pairs.try_iter()? {
        let (name, value): (String, Bound<'_, PyAny>) = item?.extract()?;
        let input = Input::new(&np, &name, &value)?;
        inputs.push((name, input));
    }
    let mut opts = SaveOptions::new();
    if let Some(f) = format_arg(format)? {
        opts = opts.format(f);
    }
    for (k, v) in need_grad.unwrap_or_default() {
        opts = opts.need_grad(k, v);
    }
    if let Some(m) = metadata {
        for (k, v) in m.iter() {
            opts = opts.metadata(k.extract::<String>()?, v.extract::<String>()?);
        }
    }
    opts.keep_order = keep_order;
    opts.sync = sync;
    // The tensors borrow numpy memory: the interpreter stays attached so no
    // Python code can change or free it while the library writes.
    run_attached(Some(&path), || {
        let mut list = Vec::with_capacity(inputs.len());
        for (name, input) in &inputs {
            list.push((
                name.as_str(),
                input.tensor().map_err(|e| e.in_tensor(name))?,
            ));
        }
        mlformats::save_with(&path, list.iter().map(|(n, t)| (*n, t)), &opts)
    })
}

/// Converts the file ``src`` into ``dst`` (replaced atomically, as ``save``
/// replaces it: symlinks followed, FIFOs written through), the format
/// from ``to`` or ``dst``'s extension; returns what was done as a dict
/// (``from``, ``to``, ``tensors``, ``whole_model``, ``skipped``: a list of
/// ``(name, reason)``, ``warnings``: a list of strings, ``cast``: a list of
/// ``(name, from dtype, to dtype)``, ``renamed``: a list of ``(old, new)``,
/// ``graph``: ``{"network", "nodes", "opset"}`` of a graph exported to ONNX,
/// else ``None``).
///
/// To the input's own format the whole file is re-encoded; between NNabla's
/// encodings the whole model is kept; otherwise tensors are copied,
/// selected by ``only`` / ``exclude`` (a glob or a list of globs), float
/// tensors cast to ``dtype`` (``"f16"``, ``"bf16"``, ``"f32"``, ``"f64"`` or a
/// numpy dtype), renamed by ``rename`` (a dict or list of pairs: regular
/// expression, replacement), and column-major data kept as it is for npz
/// with ``keep_order``. Between NNabla formats the network goes along
/// unless ``weights_only``; ``skip_unsupported`` leaves out the tensors the
/// target cannot hold instead of refusing. ``from_`` reads ``src`` as that
/// format instead of detecting it. ``params`` merges an NNabla parameter
/// file (``.h5``, ``.protobuf``) into an NNabla network (``net.nntxt``).
/// ``network`` and ``opset`` choose what an ONNX export writes. A graph
/// (NNabla network, TenniS module) going to ONNX keeps its graph with the
/// changes carried through it (a ``Cast`` node after each cast weight,
/// renamed uses), or the conversion is refused; options that do not apply
/// to the target raise ``FormatError``.
/// An ONNX model converted to ``.nnp``,
/// ``.nntxt`` or ``.protobuf`` is imported with its graph; ``input_shape``
/// (a dict: input name -> list of dimensions) fixes inputs with symbolic
/// dimensions; ``input_value`` (a dict: input name -> list of values, e.g.
/// ``{"sr": [16000]}``) fixes inputs to constants, and an ``If`` they decide
/// imports as the branch it takes.
///
/// ONNX export: ``network`` names the NNabla network to export (default:
/// the first executor's), ``opset`` the operator set (13 to 21; default
/// 13, or the lowest one the network's functions need, e.g. 16 for
/// WarpByGrid). ``sync=True`` flushes the output to the disk before
/// returning (see ``save``). ``max_inflate_ratio`` and ``trust`` are the
/// reading limits of ``open``.
///
/// >>> mlformats.convert("testdata/nnabla/mlp.nnp", "mlp.safetensors", only="*W*", dtype="f16", weights_only=True)
/// {'from': 'nnabla-nnp', 'to': 'safetensors', 'tensors': 2, 'whole_model': False, 'skipped': [], 'warnings': [], 'cast': [('fc1/affine/W', 'f32', 'f16'), ('fc2/affine/W', 'f32', 'f16')], 'renamed': [], 'graph': None}
#[pyfunction]
#[pyo3(signature = (src, dst, *, to=None, from_=None, only=None, exclude=None, dtype=None, keep_order=false, rename=None, weights_only=false, skip_unsupported=false, params=None, network=None, opset=None, input_shape=None, input_value=None, sync=false, max_inflate_ratio=None, trust=false))]
#[allow(clippy::too_many_arguments)]
fn convert<'py>(
    py: Python<'py>,
    src: PathBuf,
    dst: PathBuf,
    to: Option<&str>,
    from_: Option<&str>,
    only: Option<&Bound<'py, PyAny>>,
    exclude: Option<&Bound<'py, PyAny>>,
    dtype: Option<&Bound<'py, PyAny>>,
    keep_order: bool,
    rename: Option<&Bound<'py, PyAny>>,
    weights_only: bool,
    skip_unsupported: bool,
    params: Option<PathBuf>,
    network: Option<String>,
    opset: Option<i64>,
    input_shape: Option<HashMap<String, Vec<i64>>>,
    input_value: Option<HashMap<String, Vec<f64>>>,
    sync: bool,
    max_inflate_ratio: Option<u64>,
    trust: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let read = read_options(max_inflate_ratio, trust);
    let mut opts = ConvertOptions::new()
        .keep_order(keep_order)
        .weights_only(weights_only)
        .skip_unsupported(skip_unsupported)
        .sync(sync);
    opts.params = params;
    opts.network = network;
    opts.opset = opset;
    if let Some(r) = rename.filter(|r| !r.is_none()) {
        let pairs: Vec<(String, String)> = match r.cast::<PyDict>() {
            Ok(d) => d.items().extract()?,
            Err(_) => r.extract()?,
        };
        for (from, to) in pairs {
            opts = opts.rename(from, to);
        }
    }
    if let Some(f) = format_arg(to)? {
        opts = opts.to(f);
    }
    let mut shapes: Vec<(String, Vec<i64>)> = input_shape.unwrap_or_default().into_iter().collect();
    shapes.sort();
    for (name, dims) in shapes {
        opts = opts.input_shape(name, dims);
    }
    let mut values: Vec<(String, Vec<f64>)> = input_value.unwrap_or_default().into_iter().collect();
    values.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, v) in values {
        opts = opts.input_value(name, v);
    }
    for g in globs(only)? {
        opts = opts.only(g);
    }
    for g in globs(exclude)? {
        opts = opts.exclude(g);
    }
    if let Some(d) = dtype.filter(|d| !d.is_none()) {
        opts = opts.dtype(array::dtype_arg(&py.import("numpy")?, d)?);
    }
    let doc = open_document(py, &src, format_arg(from_)?, &read)?;
    let out = dst.clone();
    let s = run(py, Some(&dst), move || {
        mlformats::convert_document(&doc, &out, &opts)
    })?;
    let d = PyDict::new(py);
    d.set_item("from", s.from.name())?;
    d.set_item("to", s.to.name())?;
    d.set_item("tensors", s.tensors)?;
    d.set_item("whole_model", s.whole_model)?;
    d.set_item("skipped", s.skipped)?;
    d.set_item("warnings", s.warnings)?;
    let cast: Vec<(String, &str, &str)> = s
        .cast
        .iter()
        .map(|(n, a, b)| (n.clone(), a.name(), b.name()))
        .collect();
    d.set_item("cast", cast)?;
    d.set_item("renamed", s.renamed)?;
    match &s.graph {
        Some(g) => {
            let gd = PyDict::new(py);
            gd.set_item("network", &g.network)?;
            gd.set_item("nodes", g.nodes)?;
            gd.set_item("opset", g.opset)?;
            d.set_item("graph", gd)?;
        }
        None => d.set_item("graph", py.None())?,
    }
    Ok(d)
}

/// The ``mlformats inspect --json`` document of a file as a dict (schema 2
/// of docs/INSPECT_JSON.md, or ``schema=1``): format, kind, file size,
/// tensors (name, dtype, stored shape, sha256 of the stored bytes, sum and
/// the format's own fields), graph, metadata. Schema 2 names tensors as
/// ``keys()`` and ``get_tensor`` do (``stored_name`` beside where the file
/// stores another name); schema 1 names them as stored.
///
/// >>> mlformats.inspect("testdata/cvm/two_entry.params")["tensors"][1]["name"]
/// 'b'
#[pyfunction]
#[pyo3(signature = (path, schema=2))]
fn inspect<'py>(py: Python<'py>, path: PathBuf, schema: u32) -> PyResult<Bound<'py, PyAny>> {
    let doc = open_document(py, &path, None, &ReadOptions::default())?;
    let v = run(py, Some(&path), move || {
        doc.inspect_json_schema(schema)
            .ok_or_else(|| mlformats::Error::Invalid(format!("no inspect schema {schema}")))
    })?;
    pyobj::json(py, &v)
}

/// Compares the tensors of two files of any formats (column-major data in
/// row-major order) and returns a dict: ``equal``, ``differences``,
/// ``format_a``, ``format_b``, ``only_in_a``, ``only_in_b`` and per common
/// tensor a dict with ``name``, ``status`` (``equal``, ``values``,
/// ``shape``, ``bytes``, ``dtype``), ``different`` and the details (for
/// ``values``: ``differing``, ``count``, ``max_abs``, ``max_rel``, ``index``,
/// ``at``, ``within_tolerance``).
///
/// Values within ``tolerance`` (absolute) or ``rtol`` (relative, when not
/// 0) count as equal; ``strict_dtype`` counts a dtype change as a difference.
///
/// >>> d = mlformats.diff("testdata/nnabla/mlp.nnp", "mlp.safetensors", tolerance=1e-2)
/// >>> d["only_in_a"], [t["status"] for t in d["tensors"]]
/// (['fc1/affine/b', 'fc2/affine/b'], ['values', 'values'])
#[pyfunction]
#[pyo3(signature = (a, b, tolerance=0.0, rtol=0.0, *, strict_dtype=false))]
fn diff<'py>(
    py: Python<'py>,
    a: PathBuf,
    b: PathBuf,
    tolerance: f64,
    rtol: f64,
    strict_dtype: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let da = open_document(py, &a, None, &ReadOptions::default())?;
    let db = open_document(py, &b, None, &ReadOptions::default())?;
    let opts = DiffOptions::new()
        .tolerance(tolerance)
        .rtol(rtol)
        .strict_dtype(strict_dtype);
    let r = run(py, None, move || {
        mlformats::diff::diff_documents(&da, &db, &opts)
    })?;
    pyobj::diff_report(py, &r)
}

/// Checks a file: it must open, and its data must hold no name stored
/// twice, no empty name, no NaN or infinite value. Returns the problems
/// found, one sentence each (an empty list for a valid file); a file that
/// does not open raises as ``open`` does.
/// Per-tensor statistics of a file, as ``mlformats stats`` prints them: a
/// dict of tensor name (in stored order) to a dict with ``dtype``,
/// ``shape``, ``count``, ``min``, ``max``, ``mean``, ``std`` (None where
/// the tensor has no numeric value, or no finite one) and the counts
/// ``nan``, ``inf``, ``zeros``. ``only`` / ``exclude`` (a glob or a list of
/// globs) select the tensors.
///
/// >>> mlformats.stats("testdata/cvm/two_entry.params")["b"]["max"]
/// 258.0
#[pyfunction]
#[pyo3(signature = (path, *, only=None, exclude=None))]
fn stats<'py>(
    py: Python<'py>,
    path: PathBuf,
    only: Option<&Bound<'py, PyAny>>,
    exclude: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let select = |v: Vec<String>, flag: &str| -> PyResult<Option<globset::GlobSet>> {
        if v.is_empty() {
            return Ok(None);
        }
        let mut b = globset::GlobSetBuilder::new();
        for p in &v {
            let g = globset::Glob::new(p).map_err(|e| {
                pyo3::exceptions::PyValueError::new_err(format!("{flag}: bad glob {p:?}: {e}"))
            })?;
            b.add(g);
        }
        b.build()
            .map(Some)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("{flag}: {e}")))
    };
    let only = select(globs(only)?, "only")?;
    let exclude = select(globs(exclude)?, "exclude")?;
    let doc = open_document(py, &path, None, &ReadOptions::default())?;
    let rows = run(py, Some(&path), || {
        Ok(doc
            .tensors()
            .filter(|(n, _)| only.as_ref().is_none_or(|g| g.is_match(n)))
            .filter(|(n, _)| !exclude.as_ref().is_some_and(|g| g.is_match(n)))
            .map(|(n, t)| {
                (
                    n.to_string(),
                    t.dtype().name(),
                    t.dims().to_vec(),
                    mlformats::tensor_core::stats::summarize(t),
                )
            })
            .collect::<Vec<_>>())
    })?;
    let out = PyDict::new(py);
    for (name, dtype, dims, s) in rows {
        let d = PyDict::new(py);
        d.set_item("dtype", dtype)?;
        d.set_item("shape", dims)?;
        d.set_item("count", s.count)?;
        d.set_item("min", s.min)?;
        d.set_item("max", s.max)?;
        d.set_item("mean", s.mean)?;
        d.set_item("std", s.std)?;
        d.set_item("nan", s.nan)?;
        d.set_item("inf", s.inf)?;
        d.set_item("zeros", s.zeros)?;
        out.set_item(name, d)?;
    }
    Ok(out)
}

#[pyfunction]
fn validate(py: Python<'_>, path: PathBuf) -> PyResult<Vec<String>> {
    let doc = open_document(py, &path, None, &ReadOptions::default())?;
    let v = run(py, Some(&path), move || {
        Ok(mlformats::validate_document(&doc, &|_| {}))
    })?;
    Ok(v.problems)
}

/// Read and write primitiv, NNabla, TenniS and TVM/CVM model files (and
/// .safetensors and .npz) as zero-copy numpy arrays: the Rust library
/// ``mlformats``, from Python.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add_class::<PyDocument>()?;
    m.add_class::<TensorSlice>()?;
    m.add_class::<TensorBuffer>()?;
    m.add_class::<TensorRef>()?;
    m.add_class::<viewer::PyViewer>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(save, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(inspect, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(stats, m)?)?;
    m.add(
        "FORMATS",
        Format::ALL.iter().map(|f| f.name()).collect::<Vec<_>>(),
    )?;
    Ok(())
}
