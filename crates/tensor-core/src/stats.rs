//! Statistics over a tensor's elements and element-wise comparison of two
//! tensors, at memory-bandwidth speed: typed loops over borrowed data, no
//! per-element allocation.

use crate::cast::{Numeric, Visitor, visit_numeric};
use crate::{DType, Tensor, cast_le};

/// Summary statistics of one tensor.
///
/// `min`, `max`, `mean` and `std` are over the finite elements (NaN and
/// infinities are counted, not averaged); they are `None` when there is no
/// finite element or the dtype is not numeric.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct Summary {
    /// Number of elements.
    pub count: u64,
    /// Smallest finite element.
    pub min: Option<f64>,
    /// Largest finite element.
    pub max: Option<f64>,
    /// Mean of the finite elements.
    pub mean: Option<f64>,
    /// Population standard deviation of the finite elements.
    pub std: Option<f64>,
    /// Number of NaN elements.
    pub nan: u64,
    /// Number of infinite elements (either sign).
    pub inf: u64,
    /// Number of elements equal to zero (either sign).
    pub zeros: u64,
}

const LANES: usize = 16;
const BLOCK: usize = 1024;

#[derive(Clone, Copy)]
struct Acc {
    n: u64,
    sum: f64,
    sumsq: f64,
    min: f64,
    max: f64,
    nan: u64,
    inf: u64,
    zeros: u64,
}

impl Acc {
    fn new() -> Self {
        Acc {
            n: 0,
            sum: 0.0,
            sumsq: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            nan: 0,
            inf: 0,
            zeros: 0,
        }
    }

    fn merge(&mut self, o: &Acc) {
        self.n += o.n;
        self.sum += o.sum;
        self.sumsq += o.sumsq;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.nan += o.nan;
        self.inf += o.inf;
        self.zeros += o.zeros;
    }

    fn push(&mut self, x: f64) {
        if x.is_finite() {
            self.n += 1;
            self.sum += x;
            self.sumsq += x * x;
            self.min = self.min.min(x);
            self.max = self.max.max(x);
            self.zeros += (x == 0.0) as u64;
        } else if x.is_nan() {
            self.nan += 1;
        } else {
            self.inf += 1;
        }
    }

    fn finish(self, count: u64) -> Summary {
        let (min, max, mean, std) = if self.n == 0 {
            (None, None, None, None)
        } else {
            let mean = self.sum / self.n as f64;
            let var = (self.sumsq / self.n as f64 - mean * mean).max(0.0);
            (Some(self.min), Some(self.max), Some(mean), Some(var.sqrt()))
        };
        Summary {
            count,
            min,
            max,
            mean,
            std,
            nan: self.nan,
            inf: self.inf,
            zeros: self.zeros,
        }
    }
}

/// f32 block of at most [`BLOCK`] elements. The fast loop assumes every
/// element is finite: sixteen independent f32 lanes the compiler can
/// vectorise (sums of at most 64 values per lane, then widened to f64),
/// with a count of non-finite bit patterns on the side. A block that holds
/// any NaN or infinity is summed again element by element, so the result
/// never depends on that assumption.
fn f32_block(xs: &[f32], acc: &mut Acc) {
    const EXP: u32 = 0x7f80_0000;
    let mut sum = [0f32; LANES];
    let mut sumsq = [0f32; LANES];
    let mut mn = [f32::INFINITY; LANES];
    let mut mx = [f32::NEG_INFINITY; LANES];
    let mut zero = [0u32; LANES];
    let mut special = [0u32; LANES];
    let chunks = xs.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for l in 0..LANES {
            let x = c[l];
            sum[l] += x;
            sumsq[l] += x * x;
            mn[l] = if x < mn[l] { x } else { mn[l] };
            mx[l] = if x > mx[l] { x } else { mx[l] };
            zero[l] += (x == 0.0) as u32;
            special[l] += (x.to_bits() & EXP == EXP) as u32;
        }
    }
    if special.iter().any(|&s| s != 0) {
        for &x in xs {
            acc.push(x as f64);
        }
        return;
    }
    for l in 0..LANES {
        acc.sum += sum[l] as f64;
        acc.sumsq += sumsq[l] as f64;
        acc.min = acc.min.min(mn[l] as f64);
        acc.max = acc.max.max(mx[l] as f64);
        acc.zeros += zero[l] as u64;
    }
    acc.n += (xs.len() - rest.len()) as u64;
    for &x in rest {
        acc.push(x as f64);
    }
}

/// Accumulates every element converted to f64.
struct Push<'a>(&'a mut Acc);

impl Visitor for Push<'_> {
    fn visit<S: Numeric>(&mut self, xs: &[S]) {
        for &x in xs {
            self.0.push(x.cast::<f64>());
        }
    }
}

/// Summary statistics of `t`'s elements (in stored order; the order does
/// not change the result beyond rounding). Non-numeric dtypes (char,
/// complex, quantized, opaque) give only `count`; the 8-bit floats are
/// decoded exactly.
pub fn summarize(t: &Tensor<'_>) -> Summary {
    let mut s = Summarizer::new(t.dtype());
    s.push(t);
    s.finish()
}

/// [`summarize`] a part at a time: for a tensor read in slices (a file
/// too big to hold), each slice pushed in stored order as a tensor of the
/// same dtype. With every part but the last a multiple of 1024 elements,
/// the result is bit for bit what [`summarize`] gives on the whole tensor.
///
/// ```
/// use tensor_core::Tensor;
/// use tensor_core::stats::{Summarizer, summarize};
/// let xs: Vec<f32> = (0..3000).map(|i| i as f32 * 0.5 - 7.0).collect();
/// let whole = Tensor::from_values([3000], &xs).unwrap();
/// let mut s = Summarizer::new(whole.dtype());
/// for part in xs.chunks(2048) {
///     s.push(&Tensor::from_values([part.len()], part).unwrap());
/// }
/// assert_eq!(s.finish(), summarize(&whole));
/// ```
#[derive(Debug, Clone)]
pub struct Summarizer {
    dtype: DType,
    acc: Acc,
    count: u64,
    numeric: bool,
}

impl std::fmt::Debug for Acc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Acc")
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

impl Summarizer {
    /// An empty accumulator for elements of `dtype`.
    pub fn new(dtype: DType) -> Self {
        Summarizer {
            dtype,
            acc: Acc::new(),
            count: 0,
            numeric: true,
        }
    }

    /// Adds the elements of `part` (of the dtype given to [`Summarizer::new`];
    /// another dtype makes the result count-only).
    pub fn push(&mut self, part: &Tensor<'_>) {
        self.count += part.numel() as u64;
        if !self.numeric || part.dtype() != self.dtype {
            self.numeric = false;
            return;
        }
        let b = part.bytes();
        if self.dtype == DType::F32 {
            let v = cast_le::<f32>(b);
            for block in v.chunks(BLOCK) {
                let mut a = Acc::new();
                f32_block(block, &mut a);
                self.acc.merge(&a);
            }
        } else if !visit_numeric(self.dtype, b, &mut Push(&mut self.acc)) {
            self.numeric = false;
        }
    }

    /// The statistics of every element pushed so far.
    pub fn finish(&self) -> Summary {
        if !self.numeric {
            return Summary {
                count: self.count,
                ..Summary::default()
            };
        }
        self.acc.finish(self.count)
    }
}

/// Calls `f` with the elements of `t` converted to f64, a block at a time
/// (no allocation proportional to the tensor). Returns false when the dtype
/// is not numeric ([`DType::is_numeric`]).
pub fn for_each_f64_block(t: &Tensor<'_>, mut f: impl FnMut(&[f64])) -> bool {
    struct Blocks<'f, F>(&'f mut F);
    impl<F: FnMut(&[f64])> Visitor for Blocks<'_, F> {
        fn visit<S: Numeric>(&mut self, xs: &[S]) {
            let mut buf = [0f64; BLOCK];
            for c in xs.chunks(buf.len()) {
                for (o, &x) in buf.iter_mut().zip(c) {
                    *o = x.cast::<f64>();
                }
                (self.0)(&buf[..c.len()]);
            }
        }
    }
    visit_numeric(t.dtype(), t.bytes(), &mut Blocks(&mut f))
}

/// How two tensors of the same shape differ, element by element.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct Difference {
    /// Largest `|a - b|` (NaN against a number counts as infinite).
    pub max_abs: f64,
    /// Largest `|a - b| / max(|a|, |b|)` (0 where both are 0).
    pub max_rel: f64,
    /// Row-major element index of the largest absolute difference.
    pub index_of_max_abs: Option<u64>,
    /// Number of elements that differ at all (NaN equals NaN here).
    pub differing: u64,
}

/// Compares two numeric tensors of the same element count, both in the
/// same memory order, element by element. `None` when either is not numeric
/// or the counts differ. Raw bytes are compared for non-numeric dtypes by
/// the caller.
pub fn compare(a: &Tensor<'_>, b: &Tensor<'_>) -> Option<Difference> {
    if a.numel() != b.numel() || !a.dtype().is_numeric() || !b.dtype().is_numeric() {
        return None;
    }
    let mut d = Difference::default();
    if a.dtype() == DType::F32 && b.dtype() == DType::F32 {
        let (x, y) = (cast_le::<f32>(a.bytes()), cast_le::<f32>(b.bytes()));
        for (i, (&p, &q)) in x.iter().zip(y.iter()).enumerate() {
            if p != q && !(p.is_nan() && q.is_nan()) {
                note(&mut d, i as u64, p as f64, q as f64);
            }
        }
        return Some(d);
    }
    // Generic path: convert a block of `a`, then the same range of `b`.
    let bb = b.bytes();
    let mut bv: Vec<f64> = Vec::with_capacity(1024);
    let mut pos = 0u64;
    let mut ok = true;
    for_each_f64_block(a, |blk| {
        bv.clear();
        let start = pos as usize;
        if !ok || !fill_f64(b, bb, start, start + blk.len(), &mut bv) {
            ok = false;
            return;
        }
        for (k, (&p, &q)) in blk.iter().zip(&bv).enumerate() {
            if p != q && !(p.is_nan() && q.is_nan()) {
                note(&mut d, pos + k as u64, p, q);
            }
        }
        pos += blk.len() as u64;
    });
    ok.then_some(d)
}

fn fill_f64(t: &Tensor<'_>, bytes: &[u8], start: usize, end: usize, out: &mut Vec<f64>) -> bool {
    let sz = t.dtype().size();
    let Some(slice) = bytes.get(start * sz..end * sz) else {
        return false;
    };
    match Tensor::new(t.dtype(), [end - start], slice) {
        Ok(sub) => for_each_f64_block(&sub, |blk| out.extend_from_slice(blk)),
        Err(_) => false,
    }
}

fn note(d: &mut Difference, i: u64, p: f64, q: f64) {
    d.differing += 1;
    let abs = if p.is_nan() || q.is_nan() {
        f64::INFINITY
    } else {
        (p - q).abs()
    };
    let scale = p.abs().max(q.abs());
    let rel = if abs == 0.0 {
        0.0
    } else if scale == 0.0 || !scale.is_finite() {
        if abs.is_finite() { 0.0 } else { f64::INFINITY }
    } else {
        abs / scale
    };
    if abs > d.max_abs || d.index_of_max_abs.is_none() {
        d.max_abs = abs;
        d.index_of_max_abs = Some(i);
    }
    d.max_rel = d.max_rel.max(rel);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_f32_with_specials() {
        let mut v: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        v[3] = f32::NAN;
        v[4] = f32::INFINITY;
        v[5] = f32::NEG_INFINITY;
        let t = Tensor::from_values([v.len()], &v).unwrap();
        let s = summarize(&t);
        assert_eq!(s.count, 1000);
        assert_eq!((s.nan, s.inf, s.zeros), (1, 2, 1));
        assert_eq!(s.min, Some(0.0));
        assert_eq!(s.max, Some(999.0));
        let finite: Vec<f64> = (0..1000)
            .filter(|i| !(3..=5).contains(i))
            .map(|i| i as f64)
            .collect();
        let mean = finite.iter().sum::<f64>() / finite.len() as f64;
        let var = finite.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / finite.len() as f64;
        assert!((s.mean.unwrap() - mean).abs() < 1e-9);
        assert!((s.std.unwrap() - var.sqrt()).abs() < 1e-6);
    }

    #[test]
    fn summary_matches_between_fast_and_generic_paths() {
        let v: Vec<f32> = (0..10_007)
            .map(|i| ((i * 7919) % 1000) as f32 / 7.0 - 50.0)
            .collect();
        let a = summarize(&Tensor::from_values([v.len()], &v).unwrap());
        let d: Vec<f64> = v.iter().map(|&x| x as f64).collect();
        let b = summarize(&Tensor::from_values([d.len()], &d).unwrap());
        assert_eq!(a.min, b.min);
        assert_eq!(a.max, b.max);
        // the fast path sums short runs in f32: equal to 1e-6 relative
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-6 * y.abs().max(1.0);
        assert!(close(a.mean.unwrap(), b.mean.unwrap()), "{a:?} {b:?}");
        assert!(close(a.std.unwrap(), b.std.unwrap()), "{a:?} {b:?}");
        assert_eq!(a.zeros, b.zeros);
    }

    #[test]
    fn summary_of_ints_and_non_numeric() {
        let s = summarize(&Tensor::from_values([4], &[-3i64, 0, 5, 2]).unwrap());
        assert_eq!((s.min, s.max, s.zeros), (Some(-3.0), Some(5.0), 1));
        assert_eq!(s.mean, Some(1.0));
        let s = summarize(&Tensor::new(DType::Char8, [2], b"ab".to_vec()).unwrap());
        assert_eq!(s.count, 2);
        assert_eq!(s.min, None);
        let s = summarize(&Tensor::from_values([0], &[0f32; 0]).unwrap());
        assert_eq!((s.count, s.mean), (0, None));
    }

    #[test]
    fn compare_finds_the_changed_element() {
        let a: Vec<f32> = (0..5000).map(|i| i as f32).collect();
        let mut b = a.clone();
        b[4321] += 0.5;
        let ta = Tensor::from_values([5000], &a).unwrap();
        let tb = Tensor::from_values([5000], &b).unwrap();
        let d = compare(&ta, &tb).unwrap();
        assert_eq!(d.index_of_max_abs, Some(4321));
        assert_eq!(d.max_abs, 0.5);
        assert_eq!(d.differing, 1);
        assert!((d.max_rel - 0.5 / 4321.5).abs() < 1e-12);
        // across dtypes: f64 vs f32 with equal values
        let c: Vec<f64> = a.iter().map(|&x| x as f64).collect();
        let tc = Tensor::from_values([5000], &c).unwrap();
        let d = compare(&ta, &tc).unwrap();
        assert_eq!(d.differing, 0);
        let d = compare(&tc, &tb).unwrap();
        assert_eq!(d.index_of_max_abs, Some(4321));
        // NaN against a number is an infinite difference; NaN against NaN is equal
        let n1 = Tensor::from_values([2], &[f32::NAN, 1.0]).unwrap();
        let n2 = Tensor::from_values([2], &[f32::NAN, f32::NAN]).unwrap();
        let d = compare(&n1, &n2).unwrap();
        assert_eq!(
            (d.differing, d.max_abs, d.index_of_max_abs),
            (1, f64::INFINITY, Some(1))
        );
        assert!(compare(&ta, &n1).is_none());
    }
}
