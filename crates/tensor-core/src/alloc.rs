//! Allocations sized by file content that fail with an error, never abort,
//! and the shared count of bytes inflated from one input.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{Error, Limits, Result};

/// A zero-filled buffer of `len` bytes for `what`, or
/// [`Error::OutOfMemory`] when the allocator refuses it (instead of the
/// global allocator's abort). Check the size against [`Limits`] first.
pub fn try_zeroed(what: &str, len: usize) -> Result<Vec<u8>> {
    let mut v = try_with_capacity(what, len)?;
    v.resize(len, 0);
    Ok(v)
}

/// An empty vector with room for `n` elements, or [`Error::OutOfMemory`]
/// when the allocator refuses it.
pub fn try_with_capacity<T>(what: &str, n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::OutOfMemory {
        what: what.to_string(),
        bytes: (n as u64).saturating_mul(std::mem::size_of::<T>() as u64),
    })?;
    Ok(v)
}

/// Reserves room for `additional` more elements in `v`, or
/// [`Error::OutOfMemory`] when the allocator refuses it.
pub fn try_reserve<T>(v: &mut Vec<T>, what: &str, additional: usize) -> Result<()> {
    v.try_reserve(additional).map_err(|_| Error::OutOfMemory {
        what: what.to_string(),
        bytes: (v.len().saturating_add(additional) as u64)
            .saturating_mul(std::mem::size_of::<T>() as u64),
    })
}

/// The bytes a reader has inflated from one input, against the budget
/// [`Limits::inflate_budget`] gives that input. Clones share the count, so
/// every reader of one file (members of an archive, datasets of an HDF5
/// file, tensors decoded later) draws on one budget.
///
/// ```
/// use tensor_core::{InflateBudget, Limits};
/// let budget = InflateBudget::new(&Limits::default(), 1_000);
/// assert!(budget.charge("member a.npy", 60 << 20).is_ok());
/// let e = budget.clone().charge("member b.npy", 60 << 20).unwrap_err();
/// assert!(e.to_string().contains("member b.npy"), "{e}");
/// assert_eq!(budget.used(), 60 << 20);
/// ```
#[derive(Debug, Clone)]
pub struct InflateBudget {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    used: AtomicU64,
    limit: u64,
    input_len: u64,
}

impl InflateBudget {
    /// The budget of an input of `input_len` bytes under `limits`.
    pub fn new(limits: &Limits, input_len: u64) -> Self {
        Self::with_limit(limits.inflate_budget(input_len), input_len)
    }

    /// A budget of exactly `limit` bytes for an input of `input_len` bytes.
    pub fn with_limit(limit: u64, input_len: u64) -> Self {
        InflateBudget {
            inner: Arc::new(Inner {
                used: AtomicU64::new(0),
                limit,
                input_len,
            }),
        }
    }

    /// No limit (trusted input).
    pub fn unlimited() -> Self {
        Self::with_limit(u64::MAX, 0)
    }

    /// Counts `bytes` more inflated for `what` (a member, a dataset, a
    /// chunk), or refuses them with [`Error::InflateLimit`] when the total
    /// would pass the budget; a refused charge is not counted.
    pub fn charge(&self, what: &str, bytes: u64) -> Result<()> {
        let i = &self.inner;
        let mut used = i.used.load(Ordering::Relaxed);
        loop {
            let total = used.saturating_add(bytes);
            if total > i.limit {
                return Err(Error::InflateLimit {
                    what: what.to_string(),
                    total,
                    limit: i.limit,
                    input: i.input_len,
                });
            }
            match i
                .used
                .compare_exchange_weak(used, total, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Ok(()),
                Err(now) => used = now,
            }
        }
    }

    /// Bytes counted so far.
    pub fn used(&self) -> u64 {
        self.inner.used.load(Ordering::Relaxed)
    }

    /// The budget in bytes.
    pub fn limit(&self) -> u64 {
        self.inner.limit
    }

    /// Bytes that may still be inflated.
    pub fn remaining(&self) -> u64 {
        self.inner.limit.saturating_sub(self.used())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_allocation_is_an_error() {
        let e = try_zeroed("a huge tensor", usize::MAX).unwrap_err();
        assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
        assert!(e.to_string().contains("a huge tensor"), "{e}");
        assert_eq!(try_zeroed("small", 3).unwrap(), vec![0, 0, 0]);
        let e = try_with_capacity::<u64>("table", usize::MAX / 4).unwrap_err();
        assert!(e.to_string().contains("table"), "{e}");
    }

    #[test]
    fn the_budget_is_shared_and_a_refused_charge_is_not_counted() {
        let b = InflateBudget::with_limit(100, 10);
        let c = b.clone();
        b.charge("a", 60).unwrap();
        assert!(c.charge("b", 41).is_err());
        c.charge("b", 40).unwrap();
        assert_eq!(b.used(), 100);
        assert_eq!(b.remaining(), 0);
        assert!(InflateBudget::unlimited().charge("x", u64::MAX).is_ok());
    }
}
