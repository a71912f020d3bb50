//! Limits that keep hostile files from making a reader allocate or loop without bound.

use crate::{Error, Result};

/// Bounds a reader enforces before it allocates or iterates on a count the
/// input claims.
///
/// Every reader also checks claimed lengths against the bytes that remain,
/// so these limits matter for what the remaining bytes cannot bound: counts
/// of tiny records, decompression, and copies a caller asks for.
///
/// The defaults are safe for untrusted input and large enough for real
/// models; raise them explicitly for trusted files:
///
/// ```
/// use tensor_core::Limits;
/// let trusted = Limits::default().with_max_alloc(64 << 30).with_max_tensors(10_000_000);
/// assert_eq!(trusted.max_alloc, 64 << 30);
/// assert!(Limits::default().check_alloc("name table", 1 << 20).is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The largest single allocation a reader makes on behalf of the input, in bytes.
    pub max_alloc: u64,
    /// The most tensors (or parameters, nodes, members) in one file.
    pub max_tensors: u64,
    /// The most nodes in one graph (a TenniS module's node list, an ONNX
    /// graph with its subgraphs). A node costs a few hundred bytes in
    /// memory however few it takes in the file, so this bounds what a
    /// small file of tiny nodes can make a reader build.
    pub max_nodes: u64,
    /// The highest rank of a tensor.
    pub max_rank: u64,
    /// The longest name, in bytes.
    pub max_name_len: u64,
    /// The most bytes a reader inflates from compressed input in total,
    /// whatever the input's size (a ceiling over [`Limits::inflate_budget`]).
    pub max_total_inflated: u64,
    /// The most bytes inflated per byte of input (the zip-bomb ratio): a
    /// file of `n` bytes may inflate to `n * max_inflate_ratio` bytes in
    /// total, or [`Limits::min_inflate_budget`] if that is more. Real
    /// weights compress about 1.1:1; zeros compress about 1000:1.
    pub max_inflate_ratio: u64,
    /// What any file may inflate to in total, however small it is (the
    /// floor of [`Limits::inflate_budget`]).
    pub min_inflate_budget: u64,
}

/// The default [`Limits::max_inflate_ratio`].
pub const DEFAULT_INFLATE_RATIO: u64 = 100;
/// The default [`Limits::max_nodes`]: 131,072, about ten times the
/// nodes of the largest exported language models.
pub const DEFAULT_MAX_NODES: u64 = 1 << 17;
/// The default [`Limits::min_inflate_budget`] (64 MiB).
pub const DEFAULT_MIN_INFLATE_BUDGET: u64 = 64 << 20;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_alloc: 4 << 30,
            max_tensors: 1 << 20,
            max_nodes: DEFAULT_MAX_NODES,
            max_rank: 64,
            max_name_len: 1 << 16,
            max_total_inflated: 16 << 30,
            max_inflate_ratio: DEFAULT_INFLATE_RATIO,
            min_inflate_budget: DEFAULT_MIN_INFLATE_BUDGET,
        }
    }
}

impl Limits {
    /// No limits at all: only for files you trust.
    pub fn unlimited() -> Self {
        Limits {
            max_alloc: u64::MAX,
            max_tensors: u64::MAX,
            max_nodes: u64::MAX,
            max_rank: u64::MAX,
            max_name_len: u64::MAX,
            max_total_inflated: u64::MAX,
            max_inflate_ratio: u64::MAX,
            min_inflate_budget: u64::MAX,
        }
    }

    /// Sets [`Limits::max_alloc`].
    pub fn with_max_alloc(mut self, bytes: u64) -> Self {
        self.max_alloc = bytes;
        self
    }

    /// Sets [`Limits::max_tensors`].
    pub fn with_max_tensors(mut self, n: u64) -> Self {
        self.max_tensors = n;
        self
    }

    /// Sets [`Limits::max_nodes`].
    pub fn with_max_nodes(mut self, n: u64) -> Self {
        self.max_nodes = n;
        self
    }

    /// Sets [`Limits::max_rank`].
    pub fn with_max_rank(mut self, n: u64) -> Self {
        self.max_rank = n;
        self
    }

    /// Sets [`Limits::max_name_len`].
    pub fn with_max_name_len(mut self, n: u64) -> Self {
        self.max_name_len = n;
        self
    }

    /// Sets [`Limits::max_total_inflated`].
    pub fn with_max_total_inflated(mut self, n: u64) -> Self {
        self.max_total_inflated = n;
        self
    }

    /// Sets [`Limits::max_inflate_ratio`].
    pub fn with_max_inflate_ratio(mut self, ratio: u64) -> Self {
        self.max_inflate_ratio = ratio;
        self
    }

    /// Sets [`Limits::min_inflate_budget`].
    pub fn with_min_inflate_budget(mut self, bytes: u64) -> Self {
        self.min_inflate_budget = bytes;
        self
    }

    /// How many bytes a reader may inflate in total from an input of
    /// `input_len` bytes: `input_len * max_inflate_ratio`, at least
    /// `min_inflate_budget`, at most `max_total_inflated`.
    ///
    /// ```
    /// use tensor_core::Limits;
    /// let l = Limits::default();
    /// assert_eq!(l.inflate_budget(1_000), 64 << 20); // the floor
    /// assert_eq!(l.inflate_budget(1 << 30), 16 << 30); // the ceiling
    /// assert_eq!(l.inflate_budget(10 << 20), 1000 << 20); // 100:1
    /// ```
    pub fn inflate_budget(&self, input_len: u64) -> u64 {
        input_len
            .saturating_mul(self.max_inflate_ratio)
            .max(self.min_inflate_budget)
            .min(self.max_total_inflated)
    }

    /// Checks an allocation of `bytes` for `what`.
    pub fn check_alloc(&self, what: &'static str, bytes: u64) -> Result<()> {
        check(what, bytes, self.max_alloc)
    }

    /// Checks a tensor (or record) count.
    pub fn check_tensors(&self, count: u64) -> Result<()> {
        check("tensor count", count, self.max_tensors)
    }

    /// Checks a graph's node count.
    pub fn check_nodes(&self, count: u64) -> Result<()> {
        check("node count", count, self.max_nodes)
    }

    /// Checks a rank.
    pub fn check_rank(&self, rank: u64) -> Result<()> {
        check("rank", rank, self.max_rank)
    }

    /// Checks a name length in bytes.
    pub fn check_name_len(&self, len: u64) -> Result<()> {
        check("name length", len, self.max_name_len)
    }
}

fn check(what: &'static str, value: u64, limit: u64) -> Result<()> {
    if value > limit {
        Err(Error::LimitExceeded { what, value, limit })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_refuse_absurd_counts_and_can_be_raised() {
        let l = Limits::default();
        assert!(l.check_tensors(1 << 40).is_err());
        assert!(l.check_rank(65).is_err());
        assert!(l.check_rank(64).is_ok());
        let e = l.check_alloc("name table", 1 << 40).unwrap_err();
        assert!(e.to_string().contains("name table"), "{e}");
        assert!(Limits::unlimited().check_alloc("x", u64::MAX).is_ok());
        assert!(l.with_max_rank(100).check_rank(65).is_ok());
    }
}

/// The options of a reader whose one option is its [`Limits`] (the ONNX
/// reader, `onnx-format`; the NNabla protobuf readers, `nnabla-proto`):
/// `ReadOptions::default().with_limits(limits)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Bounds on what a hostile file can make the reader allocate.
    pub limits: Limits,
}

impl ReadOptions {
    /// The same options with other limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}
