//! Byte layouts: little-endian element views and the column-major to
//! row-major transpose.

use std::borrow::Cow;

use super::Element;

/// True when row-major and column-major layouts of `dims` coincide: at most
/// one axis is longer than 1, or there is no element.
pub(super) fn order_is_immaterial(dims: &[usize]) -> bool {
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
