//! Checked shape arithmetic on integers a model file gives (declared dims,
//! attributes such as `pads`/`strides`/`dilations`, constant `shape`
//! inputs): a hostile file gives any `i64`, and the lowerings must refuse
//! it rather than overflow.
//!
//! The invariant the driver keeps ([`check_shape`]): every shape a
//! lowering reads has dimensions of at most 2^48 and at most 2^48
//! elements (zeros counted as 1), so that products of its dimensions and
//! sums of two of them fit in `i64`. Window attributes are bounded as
//! they are read ([`window_ints`], [`check_pads`]: strides and dilations
//! at most [`MAX_STRIDE`], pads at most 2^48), so that the window formulas
//! (`stride * (len - 1) + dil * (k - 1) + 1 + pads`) fit in `i64` too.

use super::LowerError;

/// The most elements (and the largest dimension) of any shape.
pub(crate) const MAX_ELEMENTS: i64 = 1 << 48;

/// The refusal of a shape past [`MAX_ELEMENTS`].
pub(crate) fn too_large() -> LowerError {
    LowerError::TooLarge("a shape of more than 2^48 elements")
}

/// Refuses `dims` with a dimension past 2^48 or a product of its
/// non-zero dimensions (the symbolic batch `-1` counted as 1) past 2^48.
pub(crate) fn check_shape(dims: &[i64]) -> Result<(), LowerError> {
    let mut n: i64 = 1;
    for &d in dims {
        if !(-1..=MAX_ELEMENTS).contains(&d) {
            return Err(too_large());
        }
        n = n.checked_mul(d.max(1)).ok_or_else(too_large)?;
        if n > MAX_ELEMENTS {
            return Err(too_large());
        }
    }
    Ok(())
}

/// The product of `dims` (checked: at most 2^48 in magnitude).
#[cfg(feature = "nnabla")]
pub(crate) fn dims_product(dims: &[i64]) -> Result<i64, LowerError> {
    dims.iter()
        .try_fold(1i64, |p, &d| p.checked_mul(d))
        .filter(|p| p.unsigned_abs() <= MAX_ELEMENTS as u64)
        .ok_or_else(too_large)
}

/// The largest stride or dilation taken (2^12: a window formula's
/// products of one with a length of 2^48 stay below 2^61).
pub(crate) const MAX_STRIDE: i64 = 1 << 12;

/// A spatial attribute of `n` values (`default` each when absent or
/// empty), each in `lo..=hi` (strides and dilations: `1..=MAX_STRIDE`;
/// kernel shapes `1..=2^48`, output padding `0..=2^48`).
#[cfg(feature = "nnabla")]
pub(crate) fn window_ints(
    node: &super::onnx_graph::Node,
    name: &str,
    n: usize,
    default: i64,
    (lo, hi): (i64, i64),
) -> Result<Vec<i64>, LowerError> {
    let v = node
        .ints(name)
        .filter(|x| !x.is_empty())
        .unwrap_or_else(|| vec![default; n]);
    if v.len() != n || v.iter().any(|x| !(lo..=hi).contains(x)) {
        return Err(LowerError::Other(format!("{name} {v:?}")));
    }
    Ok(v)
}

/// The `strides` and `dilations` of a window over `n` axes (each in
/// `1..=MAX_STRIDE`, `n` of them).
#[cfg(feature = "nnabla")]
pub(crate) fn strides_dilations(
    node: &super::onnx_graph::Node,
    n: usize,
) -> Result<(Vec<i64>, Vec<i64>), LowerError> {
    let b = (1, MAX_STRIDE);
    Ok((
        window_ints(node, "strides", n, 1, b)?,
        window_ints(node, "dilations", n, 1, b)?,
    ))
}

/// Refuses strides or dilations past [`MAX_STRIDE`] or a kernel past
/// 2^48 (the lower bounds are the caller's).
pub(crate) fn check_window(strides: &[i64], dil: &[i64], k: &[i64]) -> Result<(), LowerError> {
    if strides.iter().chain(dil).any(|&v| v > MAX_STRIDE) || k.iter().any(|&v| v > MAX_ELEMENTS) {
        return Err(LowerError::Other(format!(
            "strides {strides:?}, dilations {dil:?} or kernel {k:?} past any length"
        )));
    }
    Ok(())
}

/// Refuses `pads` with a value past 2^48 in magnitude.
pub(crate) fn check_pads(pads: &[i64]) -> Result<(), LowerError> {
    if pads.iter().any(|p| p.unsigned_abs() > MAX_ELEMENTS as u64) {
        return Err(LowerError::Other("pads past any length".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        assert!(check_shape(&[-1, 3, 224, 224]).is_ok());
        assert!(check_shape(&[0, 1 << 30, 1 << 30]).is_err());
        assert!(check_shape(&[1 << 49]).is_err());
        assert!(check_shape(&[-5]).is_err());
    }

    #[cfg(feature = "nnabla")]
    #[test]
    fn product() {
        assert_eq!(dims_product(&[2, 3, 4]).unwrap(), 24);
        assert!(dims_product(&[1 << 40, 1 << 40]).is_err());
    }
}
