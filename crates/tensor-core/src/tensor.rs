//! A tensor: element type, shape, memory order and bytes, with typed views.

use std::borrow::Cow;
use std::sync::Arc;

use half::{bf16, f16};

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

    /// The elements converted to `f64` (for statistics and comparisons), or
    /// `None` when the dtype is not an integer, bool or float type.
    pub fn to_f64_vec(&self) -> Option<Vec<f64>> {
        let b = self.bytes();
        let v: Vec<f64> = match self.dtype {
            DType::Bool | DType::U8 => b.iter().map(|&x| x as f64).collect(),
            DType::I8 => b.iter().map(|&x| x as i8 as f64).collect(),
            DType::I16 => map_le::<i16>(b, |x| x as f64),
            DType::I32 => map_le::<i32>(b, |x| x as f64),
            DType::I64 => map_le::<i64>(b, |x| x as f64),
            DType::U16 => map_le::<u16>(b, |x| x as f64),
            DType::U32 => map_le::<u32>(b, |x| x as f64),
            DType::U64 => map_le::<u64>(b, |x| x as f64),
            DType::F16 => map_le::<f16>(b, |x| x.to_f64()),
            DType::BF16 => map_le::<bf16>(b, |x| x.to_f64()),
            DType::F32 => map_le::<f32>(b, |x| x as f64),
            DType::F64 => map_le::<f64>(b, |x| x),
            _ => return None,
        };
        Some(v)
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

fn map_le<T: Element>(b: &[u8], f: impl Fn(T) -> f64) -> Vec<f64> {
    cast_le::<T>(b).iter().map(|&x| f(x)).collect()
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
    let rank = dims.len();
    if rank <= 1 || dims.iter().filter(|&&d| d > 1).count() <= 1 {
        out.copy_from_slice(src);
        return out;
    }
    // Column-major stride (in elements) of every axis.
    let mut col_stride = vec![1usize; rank];
    for k in 1..rank {
        col_stride[k] = col_stride[k - 1] * dims[k - 1];
    }
    // Walk the output in row-major order with an odometer over the indices,
    // keeping the source offset incrementally. The innermost axis is the
    // last; copy it as a strided gather.
    let last = rank - 1;
    let inner = dims[last];
    let inner_stride = col_stride[last] * elem;
    let mut idx = vec![0usize; rank];
    let mut src_off = 0usize;
    let mut dst = 0usize;
    let total_rows = src.len() / elem / inner;
    for _ in 0..total_rows {
        let mut s = src_off * elem;
        for _ in 0..inner {
            out[dst..dst + elem].copy_from_slice(&src[s..s + elem]);
            dst += elem;
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
