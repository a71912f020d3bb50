//! Decoding of the 8-bit float types TVM writes (ml_dtypes' definitions).
//!
//! Every 8-bit float value is exactly representable as an `f32`, so
//! [`f8_to_f32`] is exact; it is how these tensors are summarised, compared
//! and converted for formats that lack them.

use crate::DType;

struct Layout {
    man_bits: u32,
    bias: i32,
    /// IEEE-like: an all-ones exponent means inf (mantissa 0) or NaN.
    ieee_specials: bool,
    /// "fn": only the all-ones exponent and mantissa pattern is NaN, no infinities.
    fn_nan_all_ones: bool,
    /// "fnuz": 0x80 (negative zero) is the only NaN; no infinities.
    nan_is_neg_zero: bool,
}

fn layout(d: DType) -> Option<Layout> {
    let l = |man_bits, bias, ieee_specials, fn_nan_all_ones, nan_is_neg_zero| Layout {
        man_bits,
        bias,
        ieee_specials,
        fn_nan_all_ones,
        nan_is_neg_zero,
    };
    Some(match d {
        DType::F8E3M4 => l(4, 3, true, false, false),
        DType::F8E4M3 => l(3, 7, true, false, false),
        DType::F8E4M3Fn => l(3, 7, false, true, false),
        DType::F8E4M3Fnuz => l(3, 8, false, false, true),
        DType::F8E4M3B11Fnuz => l(3, 11, false, false, true),
        DType::F8E5M2 => l(2, 15, true, false, false),
        DType::F8E5M2Fnuz => l(2, 16, false, false, true),
        _ => return None,
    })
}

/// True for the 8-bit float types [`f8_to_f32`] decodes.
pub fn is_f8(d: DType) -> bool {
    layout(d).is_some() || d == DType::F8E8M0Fnu
}

/// The value of byte `b` as an 8-bit float of type `d`; `None` when `d` is
/// not an 8-bit float type.
pub fn f8_to_f32(d: DType, b: u8) -> Option<f32> {
    if d == DType::F8E8M0Fnu {
        // exponent only, bias 127, unsigned; 0xff is NaN
        return Some(match b {
            0xff => f32::NAN,
            // 2^-127 is an f32 subnormal: bit 22
            0 => f32::from_bits(1 << 22),
            e => f32::from_bits((e as u32) << 23),
        });
    }
    let l = layout(d)?;
    let exp_bits = 7 - l.man_bits;
    let exp_max = (1u32 << exp_bits) - 1;
    let man_mask = (1u32 << l.man_bits) - 1;
    if l.nan_is_neg_zero && b == 0x80 {
        return Some(f32::NAN);
    }
    let neg = b & 0x80 != 0;
    let exp = (b as u32 >> l.man_bits) & exp_max;
    let man = b as u32 & man_mask;
    let mag = if l.ieee_specials && exp == exp_max {
        if man == 0 { f32::INFINITY } else { f32::NAN }
    } else if l.fn_nan_all_ones && exp == exp_max && man == man_mask {
        f32::NAN
    } else if exp == 0 {
        man as f32 * 2f32.powi(1 - l.bias - l.man_bits as i32)
    } else {
        (1.0 + man as f32 / (1u32 << l.man_bits) as f32) * 2f32.powi(exp as i32 - l.bias)
    };
    Some(if neg { -mag } else { mag })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // e4m3fn: max 448 (0x7e), NaN 0x7f, 1.0 = 0x38, smallest subnormal 2^-9
        assert_eq!(f8_to_f32(DType::F8E4M3Fn, 0x7e), Some(448.0));
        assert!(f8_to_f32(DType::F8E4M3Fn, 0x7f).unwrap().is_nan());
        assert_eq!(f8_to_f32(DType::F8E4M3Fn, 0x38), Some(1.0));
        assert_eq!(f8_to_f32(DType::F8E4M3Fn, 0x01), Some(2f32.powi(-9)));
        assert_eq!(f8_to_f32(DType::F8E4M3Fn, 0xb8), Some(-1.0));
        // e5m2: 1.0 = 0x3c, inf 0x7c, NaN 0x7e, max 57344 (0x7b)
        assert_eq!(f8_to_f32(DType::F8E5M2, 0x3c), Some(1.0));
        assert_eq!(f8_to_f32(DType::F8E5M2, 0x7c), Some(f32::INFINITY));
        assert!(f8_to_f32(DType::F8E5M2, 0x7e).unwrap().is_nan());
        assert_eq!(f8_to_f32(DType::F8E5M2, 0x7b), Some(57344.0));
        // fnuz: 0x80 is NaN; e4m3fnuz 1.0 = 0x40, max 240 (0x7f)
        assert!(f8_to_f32(DType::F8E4M3Fnuz, 0x80).unwrap().is_nan());
        assert_eq!(f8_to_f32(DType::F8E4M3Fnuz, 0x40), Some(1.0));
        assert_eq!(f8_to_f32(DType::F8E4M3Fnuz, 0x7f), Some(240.0));
        assert_eq!(f8_to_f32(DType::F8E5M2Fnuz, 0x7f), Some(57344.0));
        assert_eq!(f8_to_f32(DType::F8E4M3B11Fnuz, 0x7f), Some(30.0));
        // e4m3 (IEEE-like): inf 0x78, max 240 (0x77); e3m4: 1.0 = 0x30, max 15.5 (0x6f)
        assert_eq!(f8_to_f32(DType::F8E4M3, 0x78), Some(f32::INFINITY));
        assert_eq!(f8_to_f32(DType::F8E4M3, 0x77), Some(240.0));
        assert_eq!(f8_to_f32(DType::F8E3M4, 0x30), Some(1.0));
        assert_eq!(f8_to_f32(DType::F8E3M4, 0x6f), Some(15.5));
        // e8m0fnu: 127 is 1.0, 0xff NaN, 0 is 2^-127
        assert_eq!(f8_to_f32(DType::F8E8M0Fnu, 127), Some(1.0));
        assert_eq!(f8_to_f32(DType::F8E8M0Fnu, 130), Some(8.0));
        assert!(f8_to_f32(DType::F8E8M0Fnu, 0xff).unwrap().is_nan());
        assert_eq!(f8_to_f32(DType::F8E8M0Fnu, 0), Some(2f32.powi(-127)));
        assert_eq!(f8_to_f32(DType::F32, 0), None);
        assert!(is_f8(DType::F8E8M0Fnu) && !is_f8(DType::U8));
    }
}
