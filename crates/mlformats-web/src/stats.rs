//! Statistics, histograms and value slices of one tensor, as JSON.

use mlformats::Tensor;
use mlformats::report::float_json;
use mlformats::tensor_core::stats::{for_each_f64_block, summarize};
use serde_json::{Value, json};

fn opt(v: Option<f64>) -> Value {
    v.map_or(Value::Null, float_json)
}

/// Summary statistics and a histogram of `bins` equal bins between the
/// smallest and largest finite element.
pub(crate) fn stats(t: &Tensor<'_>, bins: usize) -> Value {
    let s = summarize(t);
    let mut counts = vec![0u64; bins];
    let (lo, hi) = (s.min.unwrap_or(0.0), s.max.unwrap_or(0.0));
    let numeric = s.min.is_some()
        && for_each_f64_block(t, |xs| {
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
    json!({
        "dtype": t.dtype().name(),
        "shape": t.dims(),
        "count": s.count,
        "min": opt(s.min),
        "max": opt(s.max),
        "mean": opt(s.mean),
        "std": opt(s.std),
        "nan": s.nan,
        "inf": s.inf,
        "zeros": s.zeros,
        "histogram": if numeric { json!({ "lo": float_json(lo), "hi": float_json(hi), "counts": counts }) } else { Value::Null },
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
    let text: Vec<String> = out.iter().map(|x| x.to_string()).collect();
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
