//! A tensor: element type, shape, memory order and bytes, with typed views.

use std::borrow::Cow;
use std::sync::Arc;

use half::{bf16, f16};

use crate::cast::{self, CastTarget};
use crate::{Bytes, DType, Error, MappedFile, MemoryOrder, Result, Shape};

mod layout;
#[cfg(test)]
mod tests;

use layout::order_is_immaterial;
pub use layout::{cast_le, column_to_row_major};

/// A Rust element type that a typed view can give.
///
/// Implemented for the primitive integers, `f32`, `f64`, [`half::f16`] and
/// [`half::bf16`]. Bool and character tensors are viewed as `u8` (and
/// `u16`/`u32`) through [`Tensor::view_as`].
pub trait Element: bytemuck::Pod + Send + Sync + 'static {
    /// The dtype a tensor must have to be viewed as `Self`.
    const DTYPE: DType;
    /// Decodes one element from its little-endian bytes (`size_of::<Self>()` of them).
    fn from_le(bytes: &[u8]) -> Self;
    /// Writes this element's little-endian bytes to `out` (`size_of::<Self>()` of them).
    fn write_le(self, out: &mut [u8]);
}

macro_rules! element {
    ($($t:ty => $d:expr),* $(,)?) => {$(
        impl Element for $t {
            const DTYPE: DType = $d;
            fn from_le(bytes: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&bytes[..std::mem::size_of::<$t>()]);
                <$t>::from_le_bytes(a)
            }
            fn write_le(self, out: &mut [u8]) {
                out[..std::mem::size_of::<$t>()].copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

element!(
    i8 => DType::I8, i16 => DType::I16, i32 => DType::I32, i64 => DType::I64,
    u8 => DType::U8, u16 => DType::U16, u32 => DType::U32, u64 => DType::U64,
    f32 => DType::F32, f64 => DType::F64, f16 => DType::F16, bf16 => DType::BF16,
);

/// A tensor whose bytes are owned, borrowed from the input, or mapped.
///
/// The bytes are the elements in `order`, each little-endian, exactly as the
/// file stores them. A `Tensor` is always consistent: its byte length equals
/// `shape × dtype.size()` (checked by [`Tensor::new`]).
#[derive(Debug, Clone)]
pub struct Tensor<'a> {
    dtype: DType,
    shape: Shape,
    order: MemoryOrder,
    data: Bytes<'a>,
}

impl<'a> Tensor<'a> {
    /// A row-major tensor over `data`; fails unless `data` has exactly the
    /// bytes the shape and dtype need.
    pub fn new(dtype: DType, shape: impl Into<Shape>, data: impl Into<Bytes<'a>>) -> Result<Self> {
        Self::with_order(dtype, shape, MemoryOrder::RowMajor, data)
    }

    /// A tensor in the given memory order.
    pub fn with_order(
        dtype: DType,
        shape: impl Into<Shape>,
        order: MemoryOrder,
        data: impl Into<Bytes<'a>>,
    ) -> Result<Self> {
        let shape = shape.into();
        let data = data.into();
        let expected = shape.byte_len(dtype)?;
        if expected != data.len() {
            return Err(Error::LengthMismatch {
                dims: shape.into_dims(),
                dtype,
                expected,
                actual: data.len(),
            });
        }
        Ok(Tensor {
            dtype,
            shape,
            order,
            data,
        })
    }

    /// A row-major tensor that owns the little-endian bytes of `values`.
    pub fn from_values<T: Element>(
        shape: impl Into<Shape>,
        values: &[T],
    ) -> Result<Tensor<'static>> {
        let mut bytes = vec![0u8; std::mem::size_of_val(values)];
        let n = std::mem::size_of::<T>();
        for (v, out) in values.iter().zip(bytes.chunks_exact_mut(n)) {
            v.write_le(out);
        }
        Tensor::new(T::DTYPE, shape, bytes)
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The dimensions (shorthand for `shape().dims()`).
    pub fn dims(&self) -> &[usize] {
        self.shape.dims()
    }

    /// The memory order of the bytes.
    pub fn order(&self) -> MemoryOrder {
        self.order
    }

    /// The number of elements.
    pub fn numel(&self) -> usize {
        // Checked in `with_order`: byte_len fitted, so numel does too, except
        // for zero-size dtypes, where the checked product is used again.
        self.shape.numel().unwrap_or(0)
    }

    /// The raw bytes, little-endian elements in [`Tensor::order`].
    pub fn bytes(&self) -> &[u8] {
        self.data.as_slice()
    }

    /// The storage.
    pub fn storage(&self) -> &Bytes<'a> {
        &self.data
    }

    /// Consumes the tensor, giving its storage.
    pub fn into_storage(self) -> Bytes<'a> {
        self.data
    }

    /// A typed view of the elements (in [`Tensor::order`]).
    ///
    /// Borrows when the bytes are aligned for `T` and the host is
    /// little-endian; copies otherwise. Fails when the dtype is not `T`'s.
    pub fn view<T: Element>(&self) -> Result<Cow<'_, [T]>> {
        self.view_as::<T>(T::DTYPE)
    }

    /// A typed view that accepts any dtype of `T`'s size listed in `also`
    /// besides `T::DTYPE` (e.g. `bool` or `char8` as `u8`).
    pub fn view_as<T: Element>(&self, accepted: DType) -> Result<Cow<'_, [T]>> {
        if self.dtype != T::DTYPE
            && (self.dtype != accepted || accepted.size() != std::mem::size_of::<T>())
        {
            return Err(Error::DTypeMismatch {
                expected: T::DTYPE,
                actual: self.dtype,
            });
        }
        Ok(cast_le(self.bytes()))
    }

    /// The elements converted to `f64` **in stored order** ([`Tensor::order`]),
    /// or `None` when the dtype is not bool, an integer or `f16`/`bf16`/`f32`/`f64`.
    ///
    /// The 8-bit floats give `None` here; [`Tensor::to_vec`]`::<f64>()`
    /// converts them too, and gives row-major order whatever the storage.
    pub fn to_f64_vec(&self) -> Option<Vec<f64>> {
        if crate::float8::is_f8(self.dtype) {
            return None;
        }
        let mut out = Vec::with_capacity(self.numel());
        cast::decode_into(self.dtype, self.bytes(), &mut out).then_some(out)
    }

    /// The elements converted to `T`, in row-major (C) order whatever the
    /// storage order: a column-major tensor (primitiv's) is transposed.
    ///
    /// Every numeric dtype converts to every [`CastTarget`] (`f32`, `f64`,
    /// `f16`, `bf16`, `i8`..`i64`, `u8`..`u64`, `bool`): bool, the integers,
    /// `f16`, `bf16`, `f32`, `f64` and all 8-bit floats (decoded exactly by
    /// [`crate::float8`]). The rules are numpy's `astype`: floats round to
    /// nearest, float → integer truncates toward zero and **saturates**,
    /// NaN → integer is **0**, integer → integer wraps; see [`CastTarget`].
    ///
    /// # Errors
    ///
    /// [`Error::NotNumeric`], naming the dtype and `T`, for characters,
    /// complex numbers, quantized `q8_*`, opaque bytes, `ptr` and `void`
    /// (see [`DType::is_numeric`]).
    ///
    /// # Example
    ///
    /// ```
    /// use tensor_core::{DType, MemoryOrder, Tensor};
    ///
    /// let t = Tensor::from_values([3], &[1.9f32, -2.5, f32::NAN])?;
    /// assert_eq!(t.to_vec::<i32>()?, vec![1, -2, 0]);
    /// assert_eq!(t.to_vec::<f64>()?[..2], [1.899999976158142, -2.5]);
    ///
    /// // A 2x2 column-major i16 matrix [[1, 2], [3, 4]] comes out row-major.
    /// let col: Vec<u8> = [1i16, 3, 2, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    /// let m = Tensor::with_order(DType::I16, [2, 2], MemoryOrder::ColumnMajor, col)?;
    /// assert_eq!(m.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
    ///
    /// let s = Tensor::new(DType::Char8, [2], &b"hi"[..])?;
    /// assert_eq!(
    ///     s.to_vec::<u8>().unwrap_err().to_string(),
    ///     "cannot convert char8 elements to u8: char8 is not a numeric type"
    /// );
    /// # Ok::<(), tensor_core::Error>(())
    /// ```
    pub fn to_vec<T: CastTarget>(&self) -> Result<Vec<T>> {
        if !self.dtype.is_numeric() {
            return Err(Error::NotNumeric {
                dtype: self.dtype,
                target: T::NAME,
            });
        }
        let transposed;
        let bytes = if self.is_row_major_layout() {
            self.bytes()
        } else {
            transposed = column_to_row_major(self.bytes(), self.dims(), self.dtype.size());
            &transposed[..]
        };
        let mut out = Vec::with_capacity(self.numel());
        cast::decode_into(self.dtype, bytes, &mut out);
        Ok(out)
    }

    /// The elements as a borrowed `&[T]` in row-major order, without
    /// copying, or `None` when that is not possible: when the dtype is not
    /// exactly `T::DTYPE`, the bytes are not aligned for `T`, the host is
    /// big-endian, or the tensor is column-major with more than one axis
    /// longer than 1 (its bytes are then not in row-major order).
    ///
    /// [`Tensor::view`] always succeeds for the right dtype (copying when
    /// it must) and [`Tensor::to_vec`] converts; this is the zero-copy
    /// accessor. [`Tensor::try_as_slice`] is the same as a `Result`, for `?`.
    ///
    /// ```
    /// use tensor_core::Tensor;
    ///
    /// let t = Tensor::from_values([2, 2], &[1i32, 2, 3, 4])?;
    /// assert_eq!(t.as_slice::<i32>(), Some(&[1, 2, 3, 4][..]));
    /// assert_eq!(t.as_slice::<u32>(), None); // dtype is i32
    /// # Ok::<(), tensor_core::Error>(())
    /// ```
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        if !self.is_row_major_layout() {
            return None;
        }
        self.stored_slice()
    }

    /// [`Tensor::as_slice`] as a `Result`, for `?`: the elements as `&[T]`
    /// without copying, or why not.
    ///
    /// # Errors
    ///
    /// [`Error::DTypeMismatch`] when the dtype is not exactly `T::DTYPE`;
    /// [`Error::NotZeroCopy`] when the bytes are unaligned for `T`, the host
    /// is big-endian, or the tensor is column-major with more than one axis
    /// longer than 1.
    ///
    /// ```
    /// use tensor_core::Tensor;
    ///
    /// fn first(t: &Tensor<'_>) -> Result<f32, tensor_core::Error> {
    ///     let v = t.try_as_slice::<f32>()?;
    ///     Ok(v[0])
    /// }
    /// let t = Tensor::from_values([2], &[1.5f32, 2.0])?;
    /// assert_eq!(first(&t)?, 1.5);
    /// let i = Tensor::from_values([1], &[7i32])?;
    /// assert_eq!(
    ///     first(&i).unwrap_err().to_string(),
    ///     "tensor holds i32, not f32"
    /// );
    /// # Ok::<(), tensor_core::Error>(())
    /// ```
    pub fn try_as_slice<T: Element>(&self) -> Result<&[T]> {
        if self.dtype != T::DTYPE {
            return Err(Error::DTypeMismatch {
                expected: T::DTYPE,
                actual: self.dtype,
            });
        }
        if !self.is_row_major_layout() {
            return Err(Error::NotZeroCopy {
                dtype: self.dtype,
                reason: "the data is column-major",
            });
        }
        if cfg!(target_endian = "big") {
            return Err(Error::NotZeroCopy {
                dtype: self.dtype,
                reason: "the host is big-endian",
            });
        }
        self.stored_slice().ok_or(Error::NotZeroCopy {
            dtype: self.dtype,
            reason: "the bytes are not aligned for the element type",
        })
    }

    /// True when the bytes are in row-major order: the tensor is row-major,
    /// or its layout is the same in both orders (at most one axis longer
    /// than 1, or no element at all).
    fn is_row_major_layout(&self) -> bool {
        self.order == MemoryOrder::RowMajor || order_is_immaterial(self.dims())
    }

    /// The stored elements (in [`Tensor::order`]) as `&[T]`, when the dtype
    /// is `T`'s, the bytes are aligned and the host is little-endian.
    fn stored_slice<T: Element>(&self) -> Option<&[T]> {
        if self.dtype != T::DTYPE || cfg!(target_endian = "big") {
            return None;
        }
        let b = self.bytes();
        if b.is_empty() {
            // An empty Vec's dangling pointer may be misaligned for T.
            return Some(&[]);
        }
        bytemuck::try_cast_slice(b).ok()
    }

    /// The elements converted to `T` as an `ndarray` array of the tensor's
    /// shape, in row-major logical order (a column-major tensor is
    /// transposed, so `a[[i, j]]` is element `(i, j)` either way). The
    /// conversion is [`Tensor::to_vec`]'s.
    ///
    /// # Errors
    ///
    /// [`Error::NotNumeric`] as for [`Tensor::to_vec`], and
    /// [`Error::ArrayShape`] for a shape ndarray cannot hold (an empty
    /// tensor whose non-zero dimensions multiply past `isize::MAX`).
    ///
    /// ```
    /// use tensor_core::Tensor;
    ///
    /// let t = Tensor::from_values([2, 3], &[0u8, 1, 2, 3, 4, 5])?;
    /// let a = t.to_ndarray::<f32>()?;
    /// assert_eq!(a.shape(), &[2, 3]);
    /// assert_eq!(a[[1, 2]], 5.0);
    /// # Ok::<(), tensor_core::Error>(())
    /// ```
    #[cfg(feature = "ndarray")]
    pub fn to_ndarray<T: CastTarget>(&self) -> Result<ndarray::ArrayD<T>> {
        let values = self.to_vec::<T>()?;
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(self.dims()), values).map_err(|e| {
            Error::ArrayShape {
                dims: self.dims().to_vec(),
                reason: e.to_string(),
            }
        })
    }

    /// A zero-copy `ndarray` view of the elements, or `None` when the dtype
    /// is not exactly `T::DTYPE`, the bytes are not aligned for `T`, or the
    /// host is big-endian (as for [`Tensor::as_slice`]).
    ///
    /// Unlike [`Tensor::as_slice`], a column-major tensor is viewed too,
    /// with Fortran strides: indexing is logical either way (`v[[i, j]]` is
    /// element `(i, j)`), only the memory order differs.
    ///
    /// ```
    /// use tensor_core::{DType, MemoryOrder, Tensor};
    ///
    /// // [[1, 2, 3], [4, 5, 6]] stored column-major
    /// let col: Vec<u8> = [1f64, 4., 2., 5., 3., 6.].iter().flat_map(|v| v.to_le_bytes()).collect();
    /// let words: Vec<u64> = bytemuck::pod_collect_to_vec(&col); // 8-aligned bytes
    /// let t = Tensor::with_order(DType::F64, [2, 3], MemoryOrder::ColumnMajor, bytemuck::cast_slice::<u64, u8>(&words))?;
    /// let v = t.as_array_view::<f64>().unwrap();
    /// assert_eq!(v[[0, 2]], 3.0);
    /// assert!(v.t().is_standard_layout()); // Fortran order in memory
    /// # Ok::<(), tensor_core::Error>(())
    /// ```
    #[cfg(feature = "ndarray")]
    pub fn as_array_view<T: Element>(&self) -> Option<ndarray::ArrayViewD<'_, T>> {
        use ndarray::ShapeBuilder;
        let s = self.stored_slice::<T>()?;
        let dims = ndarray::IxDyn(self.dims());
        match self.order {
            MemoryOrder::RowMajor => ndarray::ArrayView::from_shape(dims, s).ok(),
            MemoryOrder::ColumnMajor => ndarray::ArrayView::from_shape(dims.f(), s).ok(),
        }
    }

    /// The same tensor in row-major order: borrows when it already is,
    /// and otherwise copies with the axes transposed.
    ///
    /// A column-major tensor of dims `[d0, d1, …]` has element `(i0, i1, …)`
    /// at `i0 + d0·(i1 + d1·(…))`; the result has it at the row-major offset.
    pub fn to_row_major(&self) -> Result<Tensor<'_>> {
        match self.order {
            MemoryOrder::RowMajor => Ok(Tensor {
                dtype: self.dtype,
                shape: self.shape.clone(),
                order: self.order,
                data: Bytes::Borrowed(self.bytes()),
            }),
            MemoryOrder::ColumnMajor => {
                let data = column_to_row_major(self.bytes(), self.dims(), self.dtype.size());
                Ok(Tensor {
                    dtype: self.dtype,
                    shape: self.shape.clone(),
                    order: MemoryOrder::RowMajor,
                    data: Bytes::Owned(data),
                })
            }
        }
    }

    /// The same tensor in column-major order (copies unless it already is).
    pub fn to_column_major(&self) -> Result<Tensor<'_>> {
        match self.order {
            MemoryOrder::ColumnMajor => Ok(Tensor {
                dtype: self.dtype,
                shape: self.shape.clone(),
                order: self.order,
                data: Bytes::Borrowed(self.bytes()),
            }),
            MemoryOrder::RowMajor => {
                // Row-major [d0..dn] is column-major [dn..d0]; transposing that
                // view gives column-major [d0..dn].
                let rev: Vec<usize> = self.dims().iter().rev().copied().collect();
                let data = column_to_row_major(self.bytes(), &rev, self.dtype.size());
                Ok(Tensor {
                    dtype: self.dtype,
                    shape: self.shape.clone(),
                    order: MemoryOrder::ColumnMajor,
                    data: Bytes::Owned(data),
                })
            }
        }
    }

    /// A tensor that no longer borrows the input (copies borrowed bytes only).
    pub fn into_static(self) -> Tensor<'static> {
        Tensor {
            dtype: self.dtype,
            shape: self.shape,
            order: self.order,
            data: self.data.into_static(),
        }
    }

    /// A `'static` tensor sharing bytes that lie inside `map` without copying.
    pub fn rebase(self, map: &Arc<MappedFile>) -> Tensor<'static> {
        Tensor {
            dtype: self.dtype,
            shape: self.shape,
            order: self.order,
            data: self.data.rebase(map),
        }
    }

    /// An owned copy.
    pub fn to_owned_tensor(&self) -> Tensor<'static> {
        Tensor {
            dtype: self.dtype,
            shape: self.shape.clone(),
            order: self.order,
            data: Bytes::Owned(self.bytes().to_vec()),
        }
    }
}
