//! Tensors as numpy arrays (zero-copy views of the memory map where
//! possible) and numpy arrays as tensors (borrowed, for saving).

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use mlformats::tensor_core::{Bytes, MappedFile};
use mlformats::{DType, MemoryOrder, Tensor};
use numpy::npyffi::{self, NpyTypes, PyArrayObject, npy_intp};
use numpy::{PY_ARRAY_API, PyArrayDescr, PyArrayDescrMethods, PyUntypedArray};
use pyo3::exceptions::{PyImportError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::error::FormatError;

/// What keeps an array's bytes alive.
pub(crate) enum Hold {
    /// A range of a memory map (or of bytes shared the same way).
    Map(Arc<MappedFile>),
    /// A tensor of its own (what `load` hands over from the document).
    Tensor(Tensor<'static>),
}

/// The `base` of every array mlformats hands out: it owns (or shares) the
/// bytes the array looks at, so the memory map stays open exactly as long as
/// some array still uses it.
#[pyclass(frozen, weakref, module = "mlformats", name = "TensorBuffer")]
pub(crate) struct TensorBuffer {
    hold: Hold,
    nbytes: usize,
}

#[pymethods]
impl TensorBuffer {
    /// True when the bytes are the file's memory map (the array is a view
    /// of the file itself), False when they are in memory (decoded or
    /// inflated by the reader).
    #[getter]
    fn mapped(&self) -> bool {
        match &self.hold {
            Hold::Map(m) => m.is_mapped(),
            Hold::Tensor(t) => matches!(t.storage(), Bytes::Mapped(m, _) if m.is_mapped()),
        }
    }

    /// The number of bytes of the tensor this buffer holds.
    #[getter]
    fn nbytes(&self) -> usize {
        self.nbytes
    }

    fn __repr__(&self) -> String {
        let what = match &self.hold {
            Hold::Map(m) if m.is_mapped() => "memory map",
            // a tensor's own bytes in memory, shared (a value held decoded)
            Hold::Map(_) => "tensor",
            Hold::Tensor(_) => "tensor",
        };
        format!(
            "<mlformats.TensorBuffer of {} bytes ({what}{})>",
            self.nbytes,
            if self.mapped() { ", mapped" } else { "" }
        )
    }
}

/// How an array may look at its bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A view when the bytes are aligned for the dtype on a little-endian
    /// host, an aligned copy otherwise.
    Array,
    /// Always a view, even unaligned (numpy handles those; `get_slice`
    /// copies only what is sliced out).
    View,
}

/// The numpy type of a dtype: a type string, or a type of `ml_dtypes`.
enum NpType {
    Plain(&'static str),
    MlDtypes(&'static str),
}

fn np_type(d: DType) -> Option<NpType> {
    use NpType::*;
    if let Some(s) = mlformats::numpy::descr_of(d) {
        return Some(Plain(s));
    }
    if mlformats::numpy::needs_ml_dtypes(d) {
        return mlformats::numpy::name_of(d).map(MlDtypes);
    }
    Some(match d {
        // characters: numpy's one-byte strings and UCS-4 code points
        DType::Char8 => Plain("|S1"),
        DType::Char32 => Plain("<U1"),
        // raw bytes the library itself exchanges as unsigned integers of
        // the same size (as it writes them to safetensors and npz)
        DType::Char16 | DType::Opaque16 => Plain("<u2"),
        DType::Q8(_) | DType::Opaque8 => Plain("|u1"),
        DType::Opaque32 => Plain("<u4"),
        DType::Opaque64 => Plain("<u8"),
        _ => return None,
    })
}

/// The numpy dtype of a tensor's dtype (`name` is the tensor's, for messages).
pub(crate) fn descr<'py>(
    py: Python<'py>,
    name: &str,
    d: DType,
) -> PyResult<Bound<'py, PyArrayDescr>> {
    match np_type(d) {
        Some(NpType::Plain(s)) => PyArrayDescr::new(py, s),
        Some(NpType::MlDtypes(s)) => {
            let module = py.import("ml_dtypes").map_err(|_| {
                PyImportError::new_err(format!(
                    "tensor {name:?} is {d}, which numpy has no type for: \
                     install ml_dtypes (pip install ml_dtypes) to read it"
                ))
            })?;
            PyArrayDescr::new(py, module.getattr(s)?)
        }
        None => Err(FormatError::new_err(format!(
            "tensor {name:?}: numpy has no type for {d} elements{}",
            if d == DType::C32 {
                " (complex numbers of two f16)"
            } else {
                ""
            }
        ))),
    }
}

/// An aligned spot for the data pointer of empty arrays.
#[repr(align(16))]
struct Empty([u8; 16]);
static EMPTY: Empty = Empty([0; 16]);

/// The tensor `t` (named `name`), whose bytes `hold` keeps alive, as a
/// read-only numpy array whose base is a [`TensorBuffer`] holding `hold`.
/// Column-major tensors become Fortran-ordered arrays.
pub(crate) fn to_numpy<'py>(
    py: Python<'py>,
    name: &str,
    t: &Tensor<'static>,
    hold: Hold,
    mode: Mode,
) -> PyResult<Bound<'py, PyAny>> {
    let valid = match (&hold, t.storage()) {
        (Hold::Map(m), Bytes::Mapped(tm, _)) => Arc::ptr_eq(m, tm),
        _ => false,
    };
    if !valid {
        return Err(FormatError::new_err(format!(
            "internal error: tensor {name:?} is not held by its buffer"
        )));
    }
    let layout = Layout::of(t);
    // SAFETY: checked just above: `hold` owns the map or the document whose
    // bytes `t` (and so `layout`) points at.
    unsafe { layout.to_numpy(py, name, hold, mode) }
}

/// The tensor `t` (named `name`) as a read-only numpy array that owns it
/// through its base: a mapped tensor keeps only the map open, a decoded one
/// hands over its buffer (no copy either way).
pub(crate) fn into_numpy<'py>(
    py: Python<'py>,
    name: &str,
    t: Tensor<'static>,
    mode: Mode,
) -> PyResult<Bound<'py, PyAny>> {
    let layout = Layout::of(&t);
    // SAFETY: moving the tensor into the base moves its storage handle, not
    // the bytes (a Vec's heap buffer or a map range), so `layout` still
    // points at them, and the base keeps them.
    unsafe { layout.to_numpy(py, name, Hold::Tensor(t), mode) }
}

/// A copy of `arr` that numpy owns: writable, in `arr`'s memory order,
/// independent of the file.
pub(crate) fn owned_copy<'py>(arr: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    arr.call_method1("copy", ("K",))
}

/// Where a tensor's bytes are and how they are laid out.
struct Layout {
    dtype: DType,
    dims: Vec<usize>,
    order: MemoryOrder,
    data: *const u8,
    len: usize,
}

impl Layout {
    fn of(t: &Tensor<'_>) -> Layout {
        let bytes = t.bytes();
        Layout {
            dtype: t.dtype(),
            dims: t.dims().to_vec(),
            order: t.order(),
            data: if bytes.is_empty() {
                EMPTY.0.as_ptr()
            } else {
                bytes.as_ptr()
            },
            len: bytes.len(),
        }
    }

    /// # Safety
    ///
    /// `hold` must keep the `len` bytes at `data` alive and unchanged.
    unsafe fn to_numpy<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        hold: Hold,
        mode: Mode,
    ) -> PyResult<Bound<'py, PyAny>> {
        let descr = descr(py, name, self.dtype)?;
        // the numpy type must cover exactly the tensor's bytes
        let covered = self
            .dims
            .iter()
            .try_fold(descr.itemsize(), |n, &d| n.checked_mul(d));
        if covered != Some(self.len) {
            return Err(FormatError::new_err(format!(
                "internal error: tensor {name:?} has {} bytes, its numpy type covers {covered:?}",
                self.len
            )));
        }
        let aligned = cfg!(target_endian = "little")
            && (self.data as usize).is_multiple_of(descr.alignment().max(1));
        let keeper = Bound::new(
            py,
            TensorBuffer {
                hold,
                nbytes: self.len,
            },
        )?;
        // SAFETY: the keeper, the array's base, keeps the bytes alive; dims
        // and strides describe exactly them (Tensor checked the length).
        let view = unsafe {
            raw_view(
                py,
                descr,
                &self.dims,
                self.order,
                self.data,
                keeper.into_any(),
            )?
        };
        if mode == Mode::Array && !aligned {
            // read-only too, so that no array's writability depends on
            // where its bytes happened to lie in the file
            let copy = view.call_method1("copy", ("K",))?;
            copy.call_method1("setflags", (false,))?;
            return Ok(copy);
        }
        Ok(view)
    }
}

/// A read-only array over `data` (laid out as `dims` in `order`) whose base
/// is `base`.
///
/// # Safety
///
/// `data` must point at `product(dims) * itemsize` bytes that `base` keeps
/// alive and unchanged.
unsafe fn raw_view<'py>(
    py: Python<'py>,
    descr: Bound<'py, PyArrayDescr>,
    dims: &[usize],
    order: MemoryOrder,
    data: *const u8,
    base: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let too_big = || FormatError::new_err("the tensor's shape is too large for numpy");
    let mut np_dims = dims
        .iter()
        .map(|&d| npy_intp::try_from(d).map_err(|_| too_big()))
        .collect::<PyResult<Vec<npy_intp>>>()?;
    let itemsize = npy_intp::try_from(descr.itemsize()).map_err(|_| too_big())?;
    let mut strides = vec![itemsize; dims.len()];
    if !dims.contains(&0) {
        let mut step = itemsize;
        let axes: Vec<usize> = match order {
            MemoryOrder::ColumnMajor => (0..dims.len()).collect(),
            _ => (0..dims.len()).rev().collect(),
        };
        for k in axes {
            strides[k] = step;
            step = step.checked_mul(np_dims[k]).ok_or_else(too_big)?;
        }
    }
    let nd = c_int::try_from(dims.len()).map_err(|_| too_big())?;
    // SAFETY: the NumPy C API, called with the interpreter attached; the
    // descriptor reference is stolen by PyArray_NewFromDescr and the base
    // reference by PyArray_SetBaseObject (which releases it on failure).
    unsafe {
        let arr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            npyffi::get_type_object(py, NpyTypes::PyArray_Type),
            descr.into_dtype_ptr(),
            nd,
            np_dims.as_mut_ptr(),
            strides.as_mut_ptr(),
            data as *mut c_void,
            0, // flags: not writeable; numpy works out contiguity and alignment
            std::ptr::null_mut(),
        );
        let arr = Bound::from_owned_ptr_or_err(py, arr)?;
        if PY_ARRAY_API.PyArray_SetBaseObject(
            py,
            arr.as_ptr() as *mut PyArrayObject,
            base.into_ptr(),
        ) < 0
        {
            return Err(PyErr::fetch(py));
        }
        Ok(arr)
    }
}

/// The dtype of a numpy dtype: numpy's own types, ml_dtypes' bfloat16 and
/// 8-bit floats, one-byte strings (`S1`, char8) and one-character unicode
/// (`U1`, char32).
pub(crate) fn dtype_from_numpy(dt: &Bound<'_, PyAny>) -> Option<DType> {
    let name: String = dt.getattr("name").ok()?.extract().ok()?;
    if let Some(d) = mlformats::numpy::dtype_of_name(&name) {
        return Some(d);
    }
    Some(match name.as_str() {
        "bytes8" => DType::Char8,
        "str32" => DType::Char32,
        _ => return None,
    })
}

/// A dtype given by the caller: a contract name (`f16`, `bf16`), a numpy
/// name (`float16`, `bfloat16`) or anything `numpy.dtype` accepts.
pub(crate) fn dtype_arg(np: &Bound<'_, PyModule>, v: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(s) = v.cast::<PyString>() {
        let s = s.to_cow()?;
        if let Some(d) = DType::from_name(&s) {
            return Ok(d);
        }
        if s == "bfloat16" {
            return Ok(DType::BF16);
        }
    }
    let dt = np.call_method1("dtype", (v,))?;
    dtype_from_numpy(&dt).ok_or_else(|| PyTypeError::new_err(format!("unsupported dtype {dt}")))
}

/// A numpy array prepared for saving: contiguous, little-endian, with the
/// dtype and memory order the tensor gets.
pub(crate) struct Input<'py> {
    arr: Bound<'py, PyUntypedArray>,
    dtype: DType,
    order: MemoryOrder,
    dims: Vec<usize>,
    nbytes: usize,
}

impl<'py> Input<'py> {
    /// `value` (anything `numpy.asarray` takes) as the tensor `name`.
    /// C-contiguous arrays are saved row-major, Fortran-contiguous ones
    /// column-major (without a copy either way); others are copied to C order.
    pub(crate) fn new(
        np: &Bound<'py, PyModule>,
        name: &str,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Input<'py>> {
        let mut arr = np.call_method1("asarray", (value,))?;
        let mut dt = arr.getattr("dtype")?;
        let dtype = dtype_from_numpy(&dt).ok_or_else(|| {
            PyTypeError::new_err(format!(
                "tensor {name:?}: numpy dtype {dt} has no mlformats dtype \
                 (bool, integers, floats, complex, ml_dtypes' bfloat16 and \
                 float8 types, S1, U1)"
            ))
        })?;
        if dt.getattr("byteorder")?.extract::<String>()? == ">" {
            let little = dt.call_method1("newbyteorder", ("<",))?;
            arr = arr.call_method1("astype", (little,))?;
            dt = arr.getattr("dtype")?;
        }
        let _ = dt;
        let flags = arr.getattr("flags")?;
        let order = if flags.getattr("c_contiguous")?.is_truthy()? {
            MemoryOrder::RowMajor
        } else if flags.getattr("f_contiguous")?.is_truthy()? {
            MemoryOrder::ColumnMajor
        } else {
            arr = np.call_method1("ascontiguousarray", (arr,))?;
            MemoryOrder::RowMajor
        };
        let dims: Vec<usize> = arr.getattr("shape")?.extract()?;
        let nbytes: usize = arr.getattr("nbytes")?.extract()?;
        let arr = arr.cast_into::<PyUntypedArray>().map_err(PyErr::from)?;
        Ok(Input {
            arr,
            dtype,
            order,
            dims,
            nbytes,
        })
    }

    /// The tensor, borrowing the array's memory (which the caller must not
    /// let Python change while the tensor is used: keep the interpreter).
    pub(crate) fn tensor(&self) -> mlformats::Result<Tensor<'_>> {
        let bytes: &[u8] = if self.nbytes == 0 {
            &[]
        } else {
            // SAFETY: a contiguous array's data pointer covers `nbytes`
            // bytes, alive while `self.arr` holds a reference to the array.
            unsafe {
                let fields = npyffi::_PyArray_GET_ITEM_DATA(
                    numpy::PyUntypedArrayMethods::as_array_ptr(&self.arr),
                );
                let data = (*fields).data;
                std::slice::from_raw_parts(data as *const u8, self.nbytes)
            }
        };
        Ok(Tensor::with_order(
            self.dtype,
            self.dims.clone(),
            self.order,
            bytes,
        )?)
    }
}
