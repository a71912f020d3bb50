//! Shapes with overflow-checked counts, and the memory order of elements.

use std::fmt;

use crate::{DType, Error, Result};

/// The order in which a tensor's elements are laid out in its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MemoryOrder {
    /// C order: the last index varies fastest (TVM, NNabla, TenniS).
    #[default]
    RowMajor,
    /// Fortran order: the first index varies fastest (primitiv).
    ColumnMajor,
}

impl MemoryOrder {
    /// `"row-major"` or `"column-major"`, as the contract writes it.
    pub const fn name(self) -> &'static str {
        match self {
            MemoryOrder::RowMajor => "row-major",
            MemoryOrder::ColumnMajor => "column-major",
        }
    }
}

/// A tensor shape: a list of dimensions. `[]` is a 0-d scalar with one element.
///
/// `{:?}` prints the dimensions as a list, `[2, 3]`.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Shape(Vec<usize>);

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.0).finish()
    }
}

impl Shape {
    /// A shape of the given dimensions.
    pub fn new(dims: impl Into<Vec<usize>>) -> Self {
        Shape(dims.into())
    }

    /// The 0-d shape of a scalar.
    pub fn scalar() -> Self {
        Shape(Vec::new())
    }

    /// The dimensions.
    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// The number of elements (1 for a scalar), or an error when it overflows.
    pub fn numel(&self) -> Result<usize> {
        checked_numel(&self.0).ok_or_else(|| Error::ShapeOverflow {
            dims: self.0.clone(),
            dtype: DType::U8,
        })
    }

    /// The number of bytes of a tensor of this shape and type, or an error
    /// when the product overflows.
    pub fn byte_len(&self, dtype: DType) -> Result<usize> {
        checked_byte_len(&self.0, dtype).ok_or_else(|| Error::ShapeOverflow {
            dims: self.0.clone(),
            dtype,
        })
    }

    /// Consumes the shape, giving its dimensions.
    pub fn into_dims(self) -> Vec<usize> {
        self.0
    }
}

impl From<Vec<usize>> for Shape {
    fn from(dims: Vec<usize>) -> Self {
        Shape(dims)
    }
}

impl From<&[usize]> for Shape {
    fn from(dims: &[usize]) -> Self {
        Shape(dims.to_vec())
    }
}

impl<const N: usize> From<[usize; N]> for Shape {
    fn from(dims: [usize; N]) -> Self {
        Shape(dims.to_vec())
    }
}

/// The element count of `dims` (1 for none), `None` on overflow.
///
/// A zero dimension makes the product 0 whatever the others are; the
/// product is still checked in order, so `[2^40, 2^40, 0]` overflows.
pub fn checked_numel(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// The byte count of `dims` elements of `dtype`, `None` on overflow.
pub fn checked_byte_len(dims: &[usize], dtype: DType) -> Option<usize> {
    checked_numel(dims)?.checked_mul(dtype.size())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(Shape::scalar().numel().unwrap(), 1);
        assert_eq!(Shape::new([2, 3, 4]).numel().unwrap(), 24);
        assert_eq!(Shape::new([2, 3, 4]).byte_len(DType::F64).unwrap(), 192);
        assert_eq!(Shape::new([5, 0, 7]).byte_len(DType::F32).unwrap(), 0);
        assert_eq!(Shape::new([3]).byte_len(DType::Void).unwrap(), 0);
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        let s = Shape::new([1usize << 32, 1usize << 32, 2]);
        let err = s.byte_len(DType::F32).unwrap_err();
        assert!(
            matches!(
                err,
                Error::ShapeOverflow {
                    dtype: DType::F32,
                    ..
                }
            ),
            "{err}"
        );
        assert!(s.numel().is_err());
        // element count fits, byte count does not
        let s = Shape::new([1usize << 62]);
        assert_eq!(s.numel().unwrap(), 1 << 62);
        assert!(s.byte_len(DType::F32).is_err());
        assert!(s.byte_len(DType::U8).is_ok());
    }

    #[test]
    fn debug_prints_the_dims_as_a_list() {
        assert_eq!(format!("{:?}", Shape::new([2, 3])), "[2, 3]");
        assert_eq!(format!("{:?}", Shape::scalar()), "[]");
        assert_eq!(format!("{:?}", Some(Shape::new([4]))), "Some([4])");
    }

    #[test]
    fn order_names() {
        assert_eq!(MemoryOrder::default(), MemoryOrder::RowMajor);
        assert_eq!(MemoryOrder::ColumnMajor.name(), "column-major");
    }
}
