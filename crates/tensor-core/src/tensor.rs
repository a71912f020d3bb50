//! A tensor: element type, shape, memory order and bytes, with typed views.

use std::borrow::Cow;
use std::sync::Arc;

use half::{bf16, f16};

use crate::cast::{self, CastTarget};
use crate::{Bytes, DType, Error, MappedFile, MemoryOrder, Result, Shape};

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

/// True when row-major and column-major layouts of `dims` coincide: at most
/// one axis is longer than 1, or there is no element.
fn order_is_immaterial(dims: &[usize]) -> bool {
    dims.iter().filter(|&&d| d > 1).count() <= 1 || dims.contains(&0)
}

/// Views little-endian bytes as `T`: borrowed when aligned on a
/// little-endian host, copied otherwise. Trailing bytes that do not make a
/// whole element are ignored (callers pass exact lengths).
pub fn cast_le<T: Element>(bytes: &[u8]) -> Cow<'_, [T]> {
    let n = std::mem::size_of::<T>();
    let whole = &bytes[..bytes.len() - bytes.len() % n.max(1)];
    #[cfg(target_endian = "little")]
    {
        if let Ok(s) = bytemuck::try_cast_slice::<u8, T>(whole) {
            return Cow::Borrowed(s);
        }
        // Misaligned: one memcpy into fresh (zero-on-demand) aligned memory.
        let mut v: Vec<T> = bytemuck::allocation::zeroed_vec(whole.len() / n.max(1));
        bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(whole);
        Cow::Owned(v)
    }
    #[cfg(not(target_endian = "little"))]
    Cow::Owned(whole.chunks_exact(n).map(T::from_le).collect())
}

/// Transposes column-major bytes of `dims` (first index fastest) into
/// row-major order (last index fastest), `elem` bytes per element.
pub fn column_to_row_major(src: &[u8], dims: &[usize], elem: usize) -> Vec<u8> {
    let mut out = vec![0u8; src.len()];
    if src.is_empty() || elem == 0 {
        return out;
    }
    if order_is_immaterial(dims) {
        out.copy_from_slice(src);
        return out;
    }
    // axes of length 1 do not change where anything is
    let dims: Vec<usize> = dims.iter().copied().filter(|&d| d != 1).collect();
    let dims = dims.as_slice();
    match elem {
        1 => reorder::<1>(src, &mut out, dims),
        2 => reorder::<2>(src, &mut out, dims),
        4 => reorder::<4>(src, &mut out, dims),
        8 => reorder::<8>(src, &mut out, dims),
        16 => reorder::<16>(src, &mut out, dims),
        _ => reorder_any(src, &mut out, dims, elem),
    }
    out
}

/// Side of the square tiles a matrix is transposed in: both the rows read
/// and the rows written stay in cache.
const TILE: usize = 32;

/// [`column_to_row_major`] for elements of `N` bytes: a tiled transpose for
/// matrices, the odometer walk for higher ranks.
fn reorder<const N: usize>(src: &[u8], out: &mut [u8], dims: &[usize]) {
    let (src, _) = src.as_chunks::<N>();
    let (out, _) = out.as_chunks_mut::<N>();
    if let [d0, d1] = *dims {
        // column-major [d0, d1] is the row-major matrix [d1][d0]; the output
        // is its transpose
        for jb in (0..d1).step_by(TILE) {
            let je = (jb + TILE).min(d1);
            for ib in (0..d0).step_by(TILE) {
                let ie = (ib + TILE).min(d0);
                for i in ib..ie {
                    let row = &mut out[i * d1 + jb..i * d1 + je];
                    for (k, o) in row.iter_mut().enumerate() {
                        *o = src[(jb + k) * d0 + i];
                    }
                }
            }
        }
        return;
    }
    walk(dims, |dst, s| out[dst] = src[s]);
}

/// [`column_to_row_major`] for elements of any size.
fn reorder_any(src: &[u8], out: &mut [u8], dims: &[usize], elem: usize) {
    walk(dims, |dst, s| {
        out[dst * elem..(dst + 1) * elem].copy_from_slice(&src[s * elem..(s + 1) * elem])
    });
}

/// Calls `copy(dst, src)` for every element (as element indices), walking
/// the output in row-major order with an odometer over the indices and
/// keeping the column-major source index incrementally.
fn walk(dims: &[usize], mut copy: impl FnMut(usize, usize)) {
    let rank = dims.len();
    let mut col_stride = vec![1usize; rank];
    for k in 1..rank {
        col_stride[k] = col_stride[k - 1] * dims[k - 1];
    }
    let last = rank - 1;
    let inner = dims[last];
    let inner_stride = col_stride[last];
    let total: usize = dims.iter().product();
    let mut idx = vec![0usize; rank];
    let mut src_off = 0usize;
    let mut dst = 0usize;
    for _ in 0..total / inner {
        let mut s = src_off;
        for _ in 0..inner {
            copy(dst, s);
            dst += 1;
            s += inner_stride;
        }
        // advance the odometer over axes 0..last (last-but-one fastest)
        let mut k = last;
        while k > 0 {
            k -= 1;
            idx[k] += 1;
            src_off += col_stride[k];
            if idx[k] < dims[k] {
                break;
            }
            src_off -= col_stride[k] * dims[k];
            idx[k] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ALL_DTYPES;

    #[test]
    fn try_as_slice_says_why_it_cannot_lend() {
        let t = Tensor::from_values([2, 2], &[1i32, 2, 3, 4]).unwrap();
        assert_eq!(t.try_as_slice::<i32>().unwrap(), &[1, 2, 3, 4]);
        assert!(matches!(
            t.try_as_slice::<u32>(),
            Err(Error::DTypeMismatch { .. })
        ));
        let col: Vec<u8> = [1i32, 3, 2, 4]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let c = Tensor::with_order(DType::I32, [2, 2], MemoryOrder::ColumnMajor, col).unwrap();
        let e = c.try_as_slice::<i32>().unwrap_err();
        assert!(e.to_string().contains("column-major"), "{e}");
        // one axis longer than 1: the same bytes in both orders, lent
        let col: Vec<u8> = [5i32, 6].iter().flat_map(|v| v.to_le_bytes()).collect();
        let c = Tensor::with_order(DType::I32, [1, 2], MemoryOrder::ColumnMajor, col).unwrap();
        assert_eq!(c.try_as_slice::<i32>().unwrap(), &[5, 6]);
    }

    /// Row-major from column-major the obvious way, element by element.
    fn reference(src: &[u8], dims: &[usize], elem: usize) -> Vec<u8> {
        let total: usize = dims.iter().product();
        let mut out = vec![0u8; total * elem];
        for r in 0..total {
            // row-major index r -> multi-index -> column-major offset
            let (mut rest, mut c, mut stride) = (r, 0, 1);
            let mut idx = vec![0; dims.len()];
            for k in (0..dims.len()).rev() {
                idx[k] = rest % dims[k];
                rest /= dims[k];
            }
            for k in 0..dims.len() {
                c += idx[k] * stride;
                stride *= dims[k];
            }
            out[r * elem..(r + 1) * elem].copy_from_slice(&src[c * elem..(c + 1) * elem]);
        }
        out
    }

    #[test]
    fn column_to_row_major_agrees_with_the_definition() {
        for elem in [1, 2, 3, 4, 8, 16] {
            for dims in [
                vec![5, 7],
                vec![33, 65],
                vec![64, 32],
                vec![1, 9],
                vec![9, 1],
                vec![3, 4, 5],
                vec![2, 33, 3, 2],
                vec![40, 70, 2],
            ] {
                let n: usize = dims.iter().product::<usize>() * elem;
                let src: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
                assert_eq!(
                    column_to_row_major(&src, &dims, elem),
                    reference(&src, &dims, elem),
                    "elem {elem}, dims {dims:?}"
                );
            }
        }
    }

    #[test]
    fn new_checks_length() {
        let err = Tensor::new(DType::F32, [2, 2], vec![0u8; 15]).unwrap_err();
        assert!(
            matches!(
                err,
                Error::LengthMismatch {
                    expected: 16,
                    actual: 15,
                    ..
                }
            ),
            "{err}"
        );
        let t = Tensor::new(DType::F32, [2, 2], vec![0u8; 16]).unwrap();
        assert_eq!(t.numel(), 4);
        let scalar = Tensor::new(DType::I64, Shape::scalar(), vec![0u8; 8]).unwrap();
        assert_eq!(scalar.numel(), 1);
        let err = Tensor::new(DType::F32, [1usize << 32, 1usize << 32, 2], vec![]).unwrap_err();
        assert!(matches!(err, Error::ShapeOverflow { .. }));
    }

    #[test]
    fn typed_view_borrows_when_aligned_and_copies_when_not() {
        let values = [1.5f32, -2.0, 3.25];
        let owned = Tensor::from_values([3], &values).unwrap();
        // aligned: a u32 buffer viewed at offset 4
        let mut words = vec![0u32; 4];
        bytemuck::cast_slice_mut::<u32, u8>(&mut words)[4..16].copy_from_slice(owned.bytes());
        let wb: &[u8] = bytemuck::cast_slice(&words);
        let t = Tensor::new(DType::F32, [3], &wb[4..16]).unwrap();
        let v = t.view::<f32>().unwrap();
        assert!(matches!(v, Cow::Borrowed(_)), "aligned view must borrow");
        assert_eq!(&*v, &values);
        // misaligned: offset 5 of a u32 buffer
        let mut mis = vec![0u32; 5];
        bytemuck::cast_slice_mut::<u32, u8>(&mut mis)[5..17].copy_from_slice(owned.bytes());
        let mb: &[u8] = bytemuck::cast_slice(&mis);
        let t = Tensor::new(DType::F32, [3], &mb[5..17]).unwrap();
        let v = t.view::<f32>().unwrap();
        assert!(matches!(v, Cow::Owned(_)), "misaligned view must copy");
        assert_eq!(&*v, &values);
        // wrong type
        assert!(matches!(t.view::<i32>(), Err(Error::DTypeMismatch { .. })));
    }

    #[test]
    fn half_types_and_bool_views() {
        let t = Tensor::from_values([2], &[f16::from_f32(1.5), f16::from_f32(-0.25)]).unwrap();
        assert_eq!(t.dtype(), DType::F16);
        assert_eq!(t.to_f64_vec().unwrap(), vec![1.5, -0.25]);
        let t = Tensor::from_values([1], &[bf16::from_f32(2.0)]).unwrap();
        assert_eq!(t.view::<bf16>().unwrap()[0].to_f32(), 2.0);
        let b = Tensor::new(DType::Bool, [3], vec![1u8, 0, 1]).unwrap();
        assert_eq!(&*b.view_as::<u8>(DType::Bool).unwrap(), &[1, 0, 1]);
        assert!(b.view::<u8>().is_err());
        assert!(
            Tensor::new(DType::Char8, [1], vec![b'a'])
                .unwrap()
                .to_f64_vec()
                .is_none()
        );
    }

    #[test]
    fn column_major_to_row_major() {
        // 2x3 matrix [[1,2,3],[4,5,6]] stored column-major: 1,4,2,5,3,6
        let col = [1f32, 4., 2., 5., 3., 6.];
        let t = Tensor::from_values([2, 3], &col).unwrap();
        let t = Tensor::with_order(
            DType::F32,
            [2, 3],
            MemoryOrder::ColumnMajor,
            t.bytes().to_vec(),
        )
        .unwrap();
        let r = t.to_row_major().unwrap();
        assert_eq!(r.order(), MemoryOrder::RowMajor);
        assert_eq!(&*r.view::<f32>().unwrap(), &[1., 2., 3., 4., 5., 6.]);
        // and back
        let c = r.to_column_major().unwrap();
        assert_eq!(&*c.view::<f32>().unwrap(), &col);
        // a row-major tensor is borrowed, not copied
        let rr = r.to_row_major().unwrap();
        assert!(rr.storage().is_zero_copy());
    }

    #[test]
    fn column_major_3d_matches_index_formula() {
        let dims = [2usize, 3, 4];
        let n = 24;
        // column-major element (i,j,k) at i + 2*(j + 3*k) holds value 100i+10j+k
        let mut col = vec![0i32; n];
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    col[i + 2 * (j + 3 * k)] = (100 * i + 10 * j + k) as i32;
                }
            }
        }
        let bytes = Tensor::from_values(dims, &col).unwrap().bytes().to_vec();
        let t = Tensor::with_order(DType::I32, dims, MemoryOrder::ColumnMajor, bytes).unwrap();
        let r = t.to_row_major().unwrap();
        let v = r.view::<i32>().unwrap();
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    assert_eq!(v[(i * 3 + j) * 4 + k], (100 * i + 10 * j + k) as i32);
                }
            }
        }
        // with a size-1 axis in the middle and zero-size tensors
        let t = Tensor::with_order(
            DType::U8,
            [2, 1, 2],
            MemoryOrder::ColumnMajor,
            vec![1, 2, 3, 4],
        )
        .unwrap();
        assert_eq!(t.to_row_major().unwrap().bytes(), &[1, 3, 2, 4]);
        let t = Tensor::with_order(DType::U8, [2, 0, 2], MemoryOrder::ColumnMajor, vec![]).unwrap();
        assert!(t.to_row_major().unwrap().bytes().is_empty());
    }

    fn le<T: Element>(values: &[T]) -> Vec<u8> {
        Tensor::from_values([values.len()], values)
            .unwrap()
            .into_storage()
            .into_vec()
    }

    /// f32 equality that treats NaN as equal to NaN.
    fn same(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
    }

    #[test]
    fn every_numeric_dtype_converts_to_f32() {
        let cases: Vec<(DType, Vec<u8>, Vec<f32>)> = vec![
            (DType::Bool, vec![0, 1, 1], vec![0., 1., 1.]),
            (DType::I8, le(&[-128i8, 127, 0]), vec![-128., 127., 0.]),
            (DType::I16, le(&[-300i16, 1234]), vec![-300., 1234.]),
            (
                DType::I32,
                le(&[-70_000i32, 16_777_217]),
                vec![-70_000., 16_777_216.],
            ),
            (DType::I64, le(&[i64::MIN, 5]), vec![-9.223_372e18, 5.]),
            (DType::U8, le(&[0u8, 255]), vec![0., 255.]),
            (DType::U16, le(&[65_535u16]), vec![65_535.]),
            (DType::U32, le(&[4_000_000_000u32]), vec![4e9]),
            (DType::U64, le(&[u64::MAX]), vec![1.844_674_4e19]),
            (
                DType::F16,
                le(&[f16::from_f32(1.5), f16::from_f32(-0.25), f16::INFINITY]),
                vec![1.5, -0.25, f32::INFINITY],
            ),
            (
                DType::BF16,
                le(&[bf16::from_f32(2.0), bf16::from_f32(-3.5), bf16::NAN]),
                vec![2.0, -3.5, f32::NAN],
            ),
            (DType::F32, le(&[0.1f32, -0.0]), vec![0.1, -0.0]),
            (DType::F64, le(&[0.1f64, 1e300]), vec![0.1, f32::INFINITY]),
            (DType::F8E3M4, vec![0x30, 0x6f], vec![1.0, 15.5]),
            (DType::F8E4M3, vec![0x78, 0x77], vec![f32::INFINITY, 240.0]),
            (DType::F8E4M3B11Fnuz, vec![0x7f, 0x80], vec![30.0, f32::NAN]),
            (
                DType::F8E4M3Fn,
                vec![0x38, 0x7e, 0xb8, 0x01, 0x7f],
                vec![1.0, 448.0, -1.0, 2f32.powi(-9), f32::NAN],
            ),
            (DType::F8E4M3Fnuz, vec![0x40, 0x7f], vec![1.0, 240.0]),
            (
                DType::F8E5M2,
                vec![0x3c, 0x7c, 0x7b, 0x7e, 0xc0],
                vec![1.0, f32::INFINITY, 57344.0, f32::NAN, -2.0],
            ),
            (DType::F8E5M2Fnuz, vec![0x7f, 0x80], vec![57344.0, f32::NAN]),
            (
                DType::F8E8M0Fnu,
                vec![127, 130, 0xff],
                vec![1.0, 8.0, f32::NAN],
            ),
        ];
        let covered: Vec<DType> = cases.iter().map(|c| c.0).collect();
        for d in ALL_DTYPES {
            assert_eq!(d.is_numeric(), covered.contains(&d), "{d}");
        }
        for (d, bytes, want) in cases {
            let n = want.len();
            let t = Tensor::new(d, [n], bytes).unwrap();
            let got = t.to_vec::<f32>().unwrap();
            assert!(same(&got, &want), "{d}: {got:?} != {want:?}");
            // and the same values through f64
            let wide: Vec<f32> = t
                .to_vec::<f64>()
                .unwrap()
                .iter()
                .map(|&x| x as f32)
                .collect();
            assert!(same(&wide, &want), "{d} via f64: {wide:?}");
        }
    }

    #[test]
    fn every_8_bit_float_byte_decodes_as_float8_says() {
        let all: Vec<u8> = (0..=255).collect();
        for d in ALL_DTYPES.into_iter().filter(|&d| crate::float8::is_f8(d)) {
            let t = Tensor::new(d, [256], &all[..]).unwrap();
            let want: Vec<f32> = all
                .iter()
                .map(|&b| crate::float8::f8_to_f32(d, b).unwrap())
                .collect();
            assert!(same(&t.to_vec::<f32>().unwrap(), &want), "{d}");
            // more than one decoding block
            let big = Tensor::new(d, [3000], all.repeat(12)[..3000].to_vec()).unwrap();
            let v = big.to_vec::<f32>().unwrap();
            assert_eq!(v.len(), 3000);
            assert!(same(&v[2560..2816], &want), "{d}");
        }
    }

    #[test]
    fn to_f64_vec_keeps_its_dtypes_and_agrees_with_to_vec() {
        for d in ALL_DTYPES {
            let t = Tensor::new(d, [2], vec![0x41u8; 2 * d.size()]).unwrap();
            match t.to_f64_vec() {
                Some(v) => {
                    assert!(d.sum_kind() != crate::SumKind::None, "{d}");
                    assert_eq!(v, t.to_vec::<f64>().unwrap(), "{d}");
                }
                None => assert!(d.sum_kind() == crate::SumKind::None, "{d}"),
            }
        }
    }

    #[test]
    fn ints_to_f32_and_f32_to_ints() {
        let t = Tensor::from_values([4], &[-7i32, 0, 123_456, i32::MAX]).unwrap();
        assert_eq!(
            t.to_vec::<f32>().unwrap(),
            vec![-7.0, 0.0, 123_456.0, 2_147_483_648.0]
        );
        let t = Tensor::from_values(
            [8],
            &[
                2.7f32,
                -2.7,
                0.5,
                -0.0,
                3e9,
                -3e9,
                f32::NAN,
                f32::NEG_INFINITY,
            ],
        )
        .unwrap();
        assert_eq!(
            t.to_vec::<i32>().unwrap(),
            vec![2, -2, 0, 0, i32::MAX, i32::MIN, 0, i32::MIN]
        );
        assert_eq!(t.to_vec::<u8>().unwrap(), vec![2, 0, 0, 0, 255, 0, 0, 0]);
        assert_eq!(
            t.to_vec::<bool>().unwrap(),
            vec![true, true, true, false, true, true, true, true]
        );
        // integer to integer wraps (numpy's astype)
        let t = Tensor::from_values([3], &[300i32, -1, 65_536]).unwrap();
        assert_eq!(t.to_vec::<u8>().unwrap(), vec![44, 255, 0]);
        assert_eq!(t.to_vec::<i16>().unwrap(), vec![300, -1, 0]);
        assert_eq!(t.to_vec::<i32>().unwrap(), vec![300, -1, 65_536]);
        // to the half types
        let t = Tensor::from_values([2], &[1.0f64 / 3.0, 65_519.0]).unwrap();
        assert_eq!(
            t.to_vec::<f16>().unwrap(),
            vec![f16::from_f64(1.0 / 3.0), f16::MAX]
        );
        assert_eq!(t.to_vec::<bf16>().unwrap()[0], bf16::from_f32(1.0 / 3.0));
    }

    #[test]
    fn to_vec_gives_row_major_order() {
        // 2x3x4, column-major element (i,j,k) at i + 2*(j + 3*k) holds 100i+10j+k
        let dims = [2usize, 3, 4];
        let mut col = vec![0i16; 24];
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    col[i + 2 * (j + 3 * k)] = (100 * i + 10 * j + k) as i16;
                }
            }
        }
        let t = Tensor::with_order(DType::I16, dims, MemoryOrder::ColumnMajor, le(&col)).unwrap();
        let want: Vec<f32> = (0..2)
            .flat_map(|i| {
                (0..3).flat_map(move |j| (0..4).map(move |k| (100 * i + 10 * j + k) as f32))
            })
            .collect();
        assert_eq!(t.to_vec::<f32>().unwrap(), want);
        assert_eq!(
            t.to_vec::<i16>().unwrap(),
            t.to_row_major().unwrap().view::<i16>().unwrap().to_vec()
        );
        // one-byte elements, and a layout where the order is immaterial
        let t = Tensor::with_order(
            DType::F8E4M3Fn,
            [2, 2],
            MemoryOrder::ColumnMajor,
            vec![0x38, 0x40, 0x30, 0x48],
        )
        .unwrap();
        // [[1, 0.5], [2, 4]] stored column-major as 1, 2, 0.5, 4
        assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, 0.5, 2.0, 4.0]);
        let t = Tensor::with_order(
            DType::U8,
            [1, 3, 1],
            MemoryOrder::ColumnMajor,
            vec![1, 2, 3],
        )
        .unwrap();
        assert_eq!(t.to_vec::<u8>().unwrap(), vec![1, 2, 3]);
        let t = Tensor::with_order(DType::U8, [3, 0], MemoryOrder::ColumnMajor, vec![]).unwrap();
        assert!(t.to_vec::<f64>().unwrap().is_empty());
        let t = Tensor::new(DType::F32, Shape::scalar(), le(&[2.5f32])).unwrap();
        assert_eq!(t.to_vec::<f64>().unwrap(), vec![2.5]);
    }

    #[test]
    fn non_numeric_dtypes_are_refused_by_name() {
        let t = Tensor::new(DType::Char8, [3], b"abc".to_vec()).unwrap();
        let err = t.to_vec::<f32>().unwrap_err();
        assert!(
            matches!(
                err,
                Error::NotNumeric {
                    dtype: DType::Char8,
                    target: "f32"
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "cannot convert char8 elements to f32: char8 is not a numeric type"
        );
        for d in ALL_DTYPES.into_iter().filter(|d| !d.is_numeric()) {
            let t = Tensor::new(d, [1], vec![0u8; d.size()]).unwrap();
            let msg = t.to_vec::<i64>().unwrap_err().to_string();
            assert!(msg.contains(d.name()) && msg.contains("i64"), "{msg}");
            assert!(t.to_vec::<bool>().is_err(), "{d}");
        }
        let q = Tensor::new(DType::Q8(3), [1], vec![16]).unwrap();
        assert!(q.to_vec::<f32>().unwrap_err().to_string().contains("q8_3"));
    }

    #[test]
    fn as_slice_borrows_only_when_exact_aligned_and_row_major() {
        let values = [1.5f32, -2.0, 3.25];
        let bytes = le(&values);
        // aligned: the bytes of a u32 buffer
        let mut words = vec![0u32; 4];
        bytemuck::cast_slice_mut::<u32, u8>(&mut words)[..12].copy_from_slice(&bytes);
        let wb: &[u8] = bytemuck::cast_slice(&words);
        let t = Tensor::new(DType::F32, [3], &wb[..12]).unwrap();
        let s = t.as_slice::<f32>().unwrap();
        assert_eq!(s, &values);
        assert_eq!(s.as_ptr() as *const u8, wb.as_ptr(), "must borrow");
        assert_eq!(t.as_slice::<u32>(), None, "dtype must match exactly");
        assert_eq!(t.as_slice::<i32>(), None);
        // misaligned: the same bytes at offset 1 (of a 4-aligned buffer)
        bytemuck::cast_slice_mut::<u32, u8>(&mut words)[1..13].copy_from_slice(&bytes);
        let wb: &[u8] = bytemuck::cast_slice(&words);
        let t = Tensor::new(DType::F32, [3], &wb[1..13]).unwrap();
        assert_eq!(t.as_slice::<f32>(), None);
        assert_eq!(&*t.view::<f32>().unwrap(), &values);
        assert_eq!(t.to_vec::<f32>().unwrap(), values);
        // bytes never misalign
        let t = Tensor::new(DType::U8, [2], &wb[1..3]).unwrap();
        assert_eq!(t.as_slice::<u8>(), Some(&wb[1..3]));
        // column-major: only when the order does not matter
        let t =
            Tensor::with_order(DType::F32, [3, 1], MemoryOrder::ColumnMajor, &wb[4..16]).unwrap();
        assert_eq!(t.as_slice::<f32>().map(<[f32]>::len), Some(3));
        let t = Tensor::with_order(DType::U8, [2, 2], MemoryOrder::ColumnMajor, &wb[..4]).unwrap();
        assert_eq!(t.as_slice::<u8>(), None);
        assert_eq!(
            t.to_row_major().unwrap().as_slice::<u8>().map(<[u8]>::len),
            Some(4)
        );
        // empty and scalar
        let t = Tensor::new(DType::F64, [0, 4], Vec::new()).unwrap();
        assert_eq!(t.as_slice::<f64>(), Some(&[][..]));
        let t = Tensor::from_values(Shape::scalar(), &[7u64]).unwrap();
        assert_eq!(t.as_slice::<u64>(), Some(&[7][..]));
    }

    #[cfg(feature = "ndarray")]
    #[test]
    fn ndarray_arrays_and_views() {
        use ndarray::{ArrayD, IxDyn, arr2};
        // [[1, 2, 3], [4, 5, 6]] row-major and column-major
        let rows = Tensor::from_values([2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
        let cols = Tensor::with_order(
            DType::F32,
            [2, 3],
            MemoryOrder::ColumnMajor,
            le(&[1f32, 4., 2., 5., 3., 6.]),
        )
        .unwrap();
        let want = arr2(&[[1f64, 2., 3.], [4., 5., 6.]]).into_dyn();
        for t in [&rows, &cols] {
            let a = t.to_ndarray::<f64>().unwrap();
            assert_eq!(a.shape(), &[2, 3]);
            assert_eq!(a, want);
            assert!(a.is_standard_layout());
            let v = t.as_array_view::<f32>().unwrap();
            assert_eq!(v.shape(), &[2, 3]);
            assert_eq!(v.mapv(f64::from), want);
            assert_eq!(v.as_ptr() as *const u8, t.bytes().as_ptr(), "zero-copy");
            assert!(t.as_array_view::<f64>().is_none());
        }
        assert!(rows.as_array_view::<f32>().unwrap().is_standard_layout());
        assert_eq!(cols.as_array_view::<f32>().unwrap().strides(), &[1, 2]);
        // conversion to integers and bool, a 3-d and a 0-d shape
        let t = Tensor::from_values([2, 1, 2], &[0.5f32, -1.5, 0.0, 9.9]).unwrap();
        let a: ArrayD<i8> = t.to_ndarray().unwrap();
        assert_eq!(
            a,
            ArrayD::from_shape_vec(IxDyn(&[2, 1, 2]), vec![0i8, -1, 0, 9]).unwrap()
        );
        let b = t.to_ndarray::<bool>().unwrap();
        assert_eq!(
            b.iter().copied().collect::<Vec<_>>(),
            [true, true, false, true]
        );
        let s = Tensor::from_values(Shape::scalar(), &[3u16]).unwrap();
        let a = s.to_ndarray::<u64>().unwrap();
        assert_eq!((a.ndim(), a[IxDyn(&[])]), (0, 3));
        assert_eq!(s.as_array_view::<u16>().unwrap().ndim(), 0);
        // misaligned bytes: no view, but the array converts
        let words = vec![0u32; 4];
        let wb: &[u8] = bytemuck::cast_slice(&words);
        let t = Tensor::new(DType::I32, [3], &wb[1..13]).unwrap();
        assert!(t.as_array_view::<i32>().is_none());
        assert_eq!(t.to_ndarray::<i32>().unwrap().len(), 3);
        // refusals
        let c = Tensor::new(DType::Char8, [1], vec![b'x']).unwrap();
        assert!(matches!(
            c.to_ndarray::<f32>(),
            Err(Error::NotNumeric { .. })
        ));
        let huge = Tensor::new(DType::U8, [0, 1usize << 63], Vec::new()).unwrap();
        assert!(matches!(
            huge.to_ndarray::<u8>(),
            Err(Error::ArrayShape { .. })
        ));
        assert!(huge.as_array_view::<u8>().is_none());
    }
}
