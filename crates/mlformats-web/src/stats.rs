//! Statistics, histograms and value slices of one tensor, as JSON.

use mlformats::report::float_json;
use mlformats::tensor_core::stats::{Summarizer, for_each_f64_block};
use mlformats::{DType, MemoryOrder, Tensor};

use crate::ViewError;
use serde_json::{Value, json};

/// The elements `start..end` of a 64-bit integer tensor, exactly (widened
/// to i128, which holds both i64 and u64; an f64 rounds
/// 9223372036854775813 to 9223372036854775808), read from its bytes in
/// place; `None` for other dtypes.
fn int64_elems(t: &Tensor<'_>, start: usize, end: usize) -> Option<impl Iterator<Item = i128>> {
    let signed = match t.dtype() {
        DType::I64 => true,
        DType::U64 => false,
        _ => return None,
    };
    let bytes = t.bytes().get(start.checked_mul(8)?..end.checked_mul(8)?)?;
    Some(bytes.chunks_exact(8).map(move |c| {
        let mut b = [0u8; 8];
        b.copy_from_slice(c);
        if signed {
            i128::from(i64::from_le_bytes(b))
        } else {
            i128::from(u64::from_le_bytes(b))
        }
    }))
}

/// The exact smallest and largest elements of a 64-bit integer tensor
/// part; `None` for other dtypes (or an empty part).
fn int64_range(t: &Tensor<'_>) -> Option<(i128, i128)> {
    int64_elems(t, 0, t.numel())?.fold(None, |acc, x| {
        Some(acc.map_or((x, x), |(lo, hi): (i128, i128)| (lo.min(x), hi.max(x))))
    })
}

/// The elements `start..end` of a 64-bit integer tensor as exact text.
fn int64_text(t: &Tensor<'_>, start: usize, end: usize) -> Option<Vec<String>> {
    Some(int64_elems(t, start, end)?.map(|x| x.to_string()).collect())
}

fn opt(v: Option<f64>) -> Value {
    v.map_or(Value::Null, float_json)
}

/// The tensor's parts, in stored order: calls its argument with each.
pub(crate) type Parts<'a> = dyn FnMut(&mut dyn FnMut(&Tensor<'_>)) -> Result<(), ViewError> + 'a;

/// Summary statistics and a histogram of `bins` equal bins between the
/// smallest and largest finite element, of a tensor of `dtype` and `dims`
/// given as parts (the whole tensor, or slices of a big file read in
/// turn). The histogram needs the range first: the parts are given twice,
/// once for the range and once for the histogram, unless `hold` is
/// `Some(n)`: then the first pass keeps a copy of the parts' bytes (`n`,
/// the tensor's size in bytes, reserved at once; the caller bounds it) and
/// the histogram is counted from that copy, so the parts are read once.
/// Either way the numbers are the same (each element falls in its bin
/// alone).
pub(crate) fn stats(
    dtype: DType,
    dims: &[usize],
    bins: usize,
    hold: Option<usize>,
    parts: &mut Parts<'_>,
) -> Result<Value, ViewError> {
    let mut sum = Summarizer::new(dtype);
    let mut held: Option<Vec<u8>> = hold.and_then(|n| {
        let mut v = Vec::new();
        v.try_reserve_exact(n).ok().map(|()| v)
    });
    let mut exact: Option<(i128, i128)> = None;
    parts(&mut |p| {
        sum.push(p);
        if let Some((lo, hi)) = int64_range(p) {
            exact = Some(exact.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
        let fits = held
            .as_ref()
            .is_some_and(|h| h.len() + p.bytes().len() <= h.capacity());
        if fits {
            if let Some(h) = &mut held {
                h.extend_from_slice(p.bytes());
            }
        } else {
            // none kept, or more than announced: the parts are read again
            held = None;
        }
    })?;
    let s = sum.finish();
    let mut counts = vec![0u64; bins];
    let (lo, hi) = (s.min.unwrap_or(0.0), s.max.unwrap_or(0.0));
    let mut numeric = s.min.is_some();
    if numeric {
        let mut count = |p: &Tensor<'_>| {
            numeric &= for_each_f64_block(p, |xs| {
                let width = hi - lo;
                for &x in xs {
                    if !x.is_finite() {
                        continue;
                    }
                    let i = if width > 0.0 {
                        (((x - lo) / width) * bins as f64) as usize
                    } else {
                        0
                    };
                    counts[i.min(bins - 1)] += 1;
                }
            });
        };
        let size = dtype.size().max(1);
        match held.as_deref() {
            Some(h) if h.len() % size == 0 => {
                let t = Tensor::new(dtype, [h.len() / size], h)
                    .map_err(|e| ViewError(e.to_string()))?;
                count(&t);
            }
            _ => parts(&mut count)?,
        }
    }
    // 64-bit integers: the exact extremes as text, beside the numbers
    let exact = exact.map_or(
        Value::Null,
        |(lo, hi)| json!({ "min": lo.to_string(), "max": hi.to_string() }),
    );
    Ok(json!({
        "dtype": dtype.name(),
        "shape": dims,
        "exact": exact,
        "count": s.count,
        "min": opt(s.min),
        "max": opt(s.max),
        "mean": opt(s.mean),
        "std": opt(s.std),
        "nan": s.nan,
        "inf": s.inf,
        "zeros": s.zeros,
        "histogram": if numeric { json!({ "lo": float_json(lo), "hi": float_json(hi), "counts": counts }) } else { Value::Null },
    }))
}

/// The answer of [`values`] for `part`, the elements of a tensor of `dims`
/// (`numel` elements, in `order`) from its flat index `start`.
pub(crate) fn values_of_part(
    part: &Tensor<'_>,
    dims: &[usize],
    order: MemoryOrder,
    numel: u64,
    start: usize,
) -> Value {
    let mut out: Vec<f64> = Vec::with_capacity(part.numel());
    let numeric = for_each_f64_block(part, |xs| out.extend_from_slice(xs));
    let text: Vec<String> = int64_text(part, 0, part.numel())
        .unwrap_or_else(|| out.iter().map(|x| x.to_string()).collect());
    json!({
        "dtype": part.dtype().name(),
        "shape": dims,
        "order": format!("{order:?}"),
        "numel": numel,
        "start": start,
        "numeric": numeric,
        "values": out.iter().map(|&x| float_json(x)).collect::<Vec<_>>(),
        "text": text,
    })
}

/// `count` elements from the flat index `start`, in stored order.
pub(crate) fn values(t: &Tensor<'_>, start: usize, count: usize) -> Value {
    let end = start.saturating_add(count).min(t.numel());
    let mut out: Vec<f64> = Vec::with_capacity(end.saturating_sub(start));
    let mut seen = 0usize;
    let numeric = for_each_f64_block(t, |xs| {
        let (b, e) = (seen, seen + xs.len());
        seen = e;
        if e <= start || b >= end {
            return;
        }
        let from = start.max(b) - b;
        let to = end.min(e) - b;
        out.extend_from_slice(&xs[from..to]);
    });
    let exact = int64_text(t, start.min(end), end);
    let text: Vec<String> = exact.unwrap_or_else(|| out.iter().map(|x| x.to_string()).collect());
    json!({
        "dtype": t.dtype().name(),
        "shape": t.dims(),
        "order": format!("{:?}", t.order()),
        "numel": t.numel(),
        "start": start,
        "numeric": numeric,
        "values": out.iter().map(|&x| float_json(x)).collect::<Vec<_>>(),
        "text": text,
    })
}
