//! Numeric conversion of tensor elements: the one place that knows how
//! every numeric dtype's bytes decode, used by [`Tensor::to_vec`],
//! [`Tensor::to_f64_vec`] and the [`stats`](crate::stats) functions.
//!
//! [`Tensor::to_vec`]: crate::Tensor::to_vec
//! [`Tensor::to_f64_vec`]: crate::Tensor::to_f64_vec

use std::cmp::Ordering;

use half::{bf16, f16};

use crate::{DType, Element, cast_le, float8};

mod sealed {
    /// The conversions behind [`super::CastTarget`]; private so that the
    /// set of targets stays closed and the methods stay out of the API.
    pub trait Sealed: Copy + Send + Sync + 'static {
        fn from_u64(x: u64) -> Self;
        fn from_i64(x: i64) -> Self;
        /// Every f16, bf16, f32 and 8-bit float value comes through here (exactly).
        fn from_f32(x: f32) -> Self;
        fn from_f64(x: f64) -> Self;
    }
}

/// A Rust type that [`Tensor::to_vec`](crate::Tensor::to_vec) (and, with
/// the `ndarray` feature, `Tensor::to_ndarray`) can convert any numeric
/// tensor to: `f32`, `f64`, [`half::f16`], [`half::bf16`], the primitive
/// integers `i8`..`i64` and `u8`..`u64`, and `bool`.
///
/// The trait is sealed: the set of targets is fixed here.
///
/// # Conversion rules
///
/// Each element converts on its own, as `numpy`'s `astype` (and Rust's
/// `as`) does:
///
/// - **to a float type**: rounded to the nearest representable value, ties
///   to even, with one rounding from the exact source value (also for
///   `f64`/`i64`/`u64` to `f16`/`bf16`, which do not go through an
///   intermediate rounding); out of range gives ±infinity; NaN stays NaN.
/// - **float to integer**: truncated toward zero and **saturated** at the
///   integer's bounds (`1e10` → `i32::MAX`, `-1.0` → `0u8`, ±inf → the
///   bound); **NaN gives 0**. (numpy leaves out-of-range results undefined.)
/// - **integer to integer**: two's-complement wrapping, as numpy and `as`
///   do (`300i32` → `44u8`, `-1i8` → `255u8`).
/// - **to `bool`**: `x != 0`, so NaN is `true` (as in numpy).
/// - **from `bool`**: the stored byte (0 or 1 in a well-formed tensor).
///
/// The 8-bit float types decode exactly through [`float8::f8_to_f32`];
/// their NaN patterns give NaN (and 0 in an integer).
pub trait CastTarget: sealed::Sealed {
    /// The target's name in error messages (`"f32"`, `"bool"`, ...).
    const NAME: &'static str;
}

/// Rounds `r`, the nearest `f32` to some exact value `v`, to odd: when `r`
/// is inexact (`v` compares `cmp` to it) and its last mantissa bit is 0,
/// the neighbour toward `v` is taken instead. An `f32` rounded to odd then
/// rounded to nearest-even `f16` or `bf16` (11 and 8 significant bits, at
/// least two fewer than f32's 24) gives the correctly rounded result; a
/// plain double rounding through `f32` does not always.
fn round_to_odd(r: f32, cmp: Option<Ordering>) -> f32 {
    if r.to_bits() & 1 == 1 || !r.is_finite() {
        return r;
    }
    match cmp {
        Some(Ordering::Greater) => r.next_up(),
        Some(Ordering::Less) => r.next_down(),
        _ => r,
    }
}

fn f64_to_f32_odd(v: f64) -> f32 {
    let r = v as f32;
    round_to_odd(r, v.partial_cmp(&(r as f64)))
}

fn int_to_f32_odd(v: i128) -> f32 {
    let r = v as f32;
    // |v| < 2^64 and r is within one f32 ulp of it, so r is an integer that fits i128.
    round_to_odd(r, Some(v.cmp(&(r as i128))))
}

macro_rules! int_target {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {
            #[inline]
            fn from_u64(x: u64) -> Self { x as $t }
            #[inline]
            fn from_i64(x: i64) -> Self { x as $t }
            #[inline]
            fn from_f32(x: f32) -> Self { x as $t }
            #[inline]
            fn from_f64(x: f64) -> Self { x as $t }
        }
        impl CastTarget for $t {
            const NAME: &'static str = stringify!($t);
        }
    )*};
}

int_target!(i8, i16, i32, i64, u8, u16, u32, u64);

impl sealed::Sealed for f32 {
    #[inline]
    fn from_u64(x: u64) -> Self {
        x as f32
    }
    #[inline]
    fn from_i64(x: i64) -> Self {
        x as f32
    }
    #[inline]
    fn from_f32(x: f32) -> Self {
        x
    }
    #[inline]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl CastTarget for f32 {
    const NAME: &'static str = "f32";
}

impl sealed::Sealed for f64 {
    #[inline]
    fn from_u64(x: u64) -> Self {
        x as f64
    }
    #[inline]
    fn from_i64(x: i64) -> Self {
        x as f64
    }
    #[inline]
    fn from_f32(x: f32) -> Self {
        x as f64
    }
    #[inline]
    fn from_f64(x: f64) -> Self {
        x
    }
}

impl CastTarget for f64 {
    const NAME: &'static str = "f64";
}

macro_rules! half_target {
    ($($t:ty => $name:literal),*) => {$(
        impl sealed::Sealed for $t {
            #[inline]
            fn from_u64(x: u64) -> Self { <$t>::from_f32(int_to_f32_odd(x as i128)) }
            #[inline]
            fn from_i64(x: i64) -> Self { <$t>::from_f32(int_to_f32_odd(x as i128)) }
            #[inline]
            fn from_f32(x: f32) -> Self { <$t>::from_f32(x) }
            #[inline]
            fn from_f64(x: f64) -> Self { <$t>::from_f32(f64_to_f32_odd(x)) }
        }
        impl CastTarget for $t {
            const NAME: &'static str = $name;
        }
    )*};
}

half_target!(f16 => "f16", bf16 => "bf16");

impl sealed::Sealed for bool {
    #[inline]
    fn from_u64(x: u64) -> Self {
        x != 0
    }
    #[inline]
    fn from_i64(x: i64) -> Self {
        x != 0
    }
    #[inline]
    fn from_f32(x: f32) -> Self {
        x != 0.0
    }
    #[inline]
    fn from_f64(x: f64) -> Self {
        x != 0.0
    }
}

impl CastTarget for bool {
    const NAME: &'static str = "bool";
}

/// A stored element type that converts to every [`CastTarget`].
pub(crate) trait Numeric: Element {
    /// This value as `T`, by the rules on [`CastTarget`].
    fn cast<T: CastTarget>(self) -> T;
}

macro_rules! numeric {
    ($via:ident: $($t:ty),*) => {$(
        impl Numeric for $t {
            #[inline]
            fn cast<T: CastTarget>(self) -> T { T::$via(self.into()) }
        }
    )*};
}

numeric!(from_u64: u8, u16, u32, u64);
numeric!(from_i64: i8, i16, i32, i64);
numeric!(from_f64: f64);

impl Numeric for f32 {
    #[inline]
    fn cast<T: CastTarget>(self) -> T {
        T::from_f32(self)
    }
}

impl Numeric for f16 {
    #[inline]
    fn cast<T: CastTarget>(self) -> T {
        T::from_f32(self.to_f32())
    }
}

impl Numeric for bf16 {
    #[inline]
    fn cast<T: CastTarget>(self) -> T {
        T::from_f32(self.to_f32())
    }
}

/// Receives the elements of a numeric tensor as typed slices.
pub(crate) trait Visitor {
    /// Called one or more times, with consecutive runs of the elements.
    fn visit<S: Numeric>(&mut self, xs: &[S]);
}

/// Elements per slice given to a [`Visitor`] for the types decoded through
/// a buffer (the 8-bit floats).
const BLOCK: usize = 1024;

/// Calls `v` with the elements of `bytes` (little-endian elements of
/// `dtype`, in stored order) as typed slices: the whole data at once for
/// the native types (borrowed when aligned, see [`cast_le`]), blocks of
/// exactly decoded `f32` for the 8-bit floats. Returns false, calling
/// nothing, when `dtype` is not numeric ([`DType::is_numeric`]).
///
/// Bool elements are their stored byte, as `u8`.
pub(crate) fn visit_numeric(dtype: DType, bytes: &[u8], v: &mut impl Visitor) -> bool {
    match dtype {
        DType::Bool | DType::U8 => v.visit::<u8>(bytes),
        DType::I8 => v.visit::<i8>(bytemuck::cast_slice(bytes)),
        DType::I16 => v.visit::<i16>(&cast_le(bytes)),
        DType::I32 => v.visit::<i32>(&cast_le(bytes)),
        DType::I64 => v.visit::<i64>(&cast_le(bytes)),
        DType::U16 => v.visit::<u16>(&cast_le(bytes)),
        DType::U32 => v.visit::<u32>(&cast_le(bytes)),
        DType::U64 => v.visit::<u64>(&cast_le(bytes)),
        DType::F16 => v.visit::<f16>(&cast_le(bytes)),
        DType::BF16 => v.visit::<bf16>(&cast_le(bytes)),
        DType::F32 => v.visit::<f32>(&cast_le(bytes)),
        DType::F64 => v.visit::<f64>(&cast_le(bytes)),
        d if float8::is_f8(d) => {
            let lut: [f32; 256] =
                std::array::from_fn(|b| float8::f8_to_f32(d, b as u8).unwrap_or(f32::NAN));
            let mut buf = [0f32; BLOCK];
            for chunk in bytes.chunks(BLOCK) {
                for (o, &b) in buf.iter_mut().zip(chunk) {
                    *o = lut[b as usize];
                }
                v.visit(&buf[..chunk.len()]);
            }
        }
        _ => return false,
    }
    true
}

/// Appends the elements of `bytes` converted to `T` to `out`; false (and
/// nothing appended) when `dtype` is not numeric.
pub(crate) fn decode_into<T: CastTarget>(dtype: DType, bytes: &[u8], out: &mut Vec<T>) -> bool {
    struct Collect<'v, T>(&'v mut Vec<T>);
    impl<T: CastTarget> Visitor for Collect<'_, T> {
        fn visit<S: Numeric>(&mut self, xs: &[S]) {
            self.0.extend(xs.iter().map(|&x| x.cast::<T>()));
        }
    }
    visit_numeric(dtype, bytes, &mut Collect(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c<S: Numeric, T: CastTarget>(x: S) -> T {
        x.cast::<T>()
    }

    #[test]
    fn float_to_int_truncates_saturates_and_maps_nan_to_zero() {
        assert_eq!(c::<f32, i32>(2.9), 2);
        assert_eq!(c::<f32, i32>(-2.9), -2);
        assert_eq!(c::<f64, i32>(1e10), i32::MAX);
        assert_eq!(c::<f64, i32>(-1e10), i32::MIN);
        assert_eq!(c::<f32, u8>(-1.0), 0);
        assert_eq!(c::<f32, u8>(300.0), 255);
        assert_eq!(c::<f32, i64>(f32::NAN), 0);
        assert_eq!(c::<f32, u16>(f32::INFINITY), u16::MAX);
        assert_eq!(c::<f16, i8>(f16::from_f32(-7.5)), -7);
    }

    #[test]
    fn int_to_int_wraps() {
        assert_eq!(c::<i32, u8>(300), 44);
        assert_eq!(c::<i8, u8>(-1), 255);
        assert_eq!(c::<u64, i64>(u64::MAX), -1);
        assert_eq!(c::<i16, i64>(-5), -5);
        assert_eq!(c::<u32, u32>(u32::MAX), u32::MAX);
    }

    #[test]
    fn bool_target_is_non_zero() {
        assert!(!c::<f32, bool>(0.0));
        assert!(!c::<f32, bool>(-0.0));
        assert!(c::<f32, bool>(f32::NAN));
        assert!(c::<u8, bool>(2));
        assert!(!c::<i64, bool>(0));
    }

    #[test]
    fn ints_to_floats_round_once() {
        // 2^24 + 1 is not an f32: nearest-even gives 2^24
        assert_eq!(c::<i32, f32>(16_777_217), 16_777_216.0);
        assert_eq!(c::<u64, f64>(u64::MAX), 18_446_744_073_709_551_616.0);
        assert_eq!(c::<i64, f16>(70_000), f16::INFINITY);
        assert_eq!(c::<i64, f16>(-2049), f16::from_f32(-2048.0));
        assert_eq!(c::<i64, f16>(2051), f16::from_f32(2052.0));
        // 2^32 + 2^24 + 1: an exact f32 rounding would land on the bf16
        // midpoint 2^32 + 2^24 and round to even (2^32); the exact value is
        // above the midpoint, so the correct bf16 is 2^32 + 2^25.
        let v: i64 = (1 << 32) + (1 << 24) + 1;
        assert_eq!(
            c::<i64, bf16>(v).to_f64(),
            ((1u64 << 32) + (1 << 25)) as f64
        );
    }

    #[test]
    fn f64_to_half_types_round_once() {
        // just above the midpoint between 1 and the next f16 (1 + 2^-10):
        // rounding to f32 first would land on the midpoint and round to 1.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(c::<f64, f16>(x), f16::from_f32(1.0 + 2f32.powi(-10)));
        let y = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(c::<f64, bf16>(y), bf16::from_f32(1.0 + 2f32.powi(-7)));
        // exact midpoints still round to even
        assert_eq!(c::<f64, f16>(1.0 + 2f64.powi(-11)), f16::ONE);
        assert_eq!(c::<f64, f16>(1e6), f16::INFINITY);
        assert_eq!(c::<f64, f16>(-1e-10), f16::NEG_ZERO);
        assert!(c::<f64, bf16>(f64::NAN).is_nan());
        assert_eq!(c::<f64, bf16>(1e300), bf16::INFINITY);
        assert_eq!(c::<f32, f16>(0.1), f16::from_f32(0.1));
    }
}
