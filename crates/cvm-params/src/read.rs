//! Reading `.params` files: over a byte slice or memory map (zero-copy), or
//! lazily over any `Read + Seek`.
//!
//! All three readers share one parser, which checks every claimed count and
//! length against the bytes that remain *before* allocating anything, and
//! validates per `docs/formats/cvm.md` §5:
//!
//! - rejected: wrong list or tensor magic, EOF anywhere (a short payload
//!   included), tensor count ≠ name count, negative ndim or dimension,
//!   byte-count overflow or mismatch, unknown dtype, sub-byte dtypes other
//!   than the legacy bool `(1,1,1)`, lanes ≠ 1, device type ≠ CPU;
//! - accepted: zero-size tensors (any dimension 0), 0-d scalars, empty
//!   names, names that are not UTF-8 (kept as raw bytes), empty dictionaries,
//!   nonzero reserved words and device ids (ignored);
//! - policy ([`ReadOptions`]): trailing bytes after the last tensor and
//!   duplicate names are errors by default; `lenient_trailing` ignores the
//!   former (as TVM and CVM do), `allow_duplicates` keeps all entries in file
//!   order and makes lookups give the *last* one (as TVM's `Map` does).

use tensor_core::{DType, Limits};

use crate::dtype::DlType;

mod input;
mod lazy;
mod params;
mod parser;

pub use lazy::LazyParams;
pub use params::{Entry, Params};

/// How strictly to read, and the allocation limits for untrusted input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Ignore bytes after the last tensor instead of failing (TVM and CVM ignore them).
    pub lenient_trailing: bool,
    /// Accept a name stored more than once; lookups give the last entry (as TVM does).
    pub allow_duplicates: bool,
    /// Bounds on counts, ranks, name lengths and (lazy reader) allocations.
    pub limits: Limits,
}

impl ReadOptions {
    /// The default: strict (trailing bytes and duplicate names are errors), default limits.
    pub fn strict() -> Self {
        Self::default()
    }

    /// Accepts whatever TVM 0.27 accepts and loads correctly: trailing bytes
    /// ignored, duplicate names allowed (last one wins on lookup).
    pub fn lenient() -> Self {
        ReadOptions {
            lenient_trailing: true,
            allow_duplicates: true,
            limits: Limits::default(),
        }
    }

    /// Sets [`ReadOptions::lenient_trailing`].
    pub fn with_lenient_trailing(mut self, yes: bool) -> Self {
        self.lenient_trailing = yes;
        self
    }

    /// Sets [`ReadOptions::allow_duplicates`].
    pub fn with_allow_duplicates(mut self, yes: bool) -> Self {
        self.allow_duplicates = yes;
        self
    }

    /// Sets [`ReadOptions::limits`].
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}

/// What the record of one tensor says, besides its name and payload.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TensorInfo {
    /// Position in the file (0-based).
    pub index: usize,
    /// Byte offset of the record (its tensor magic).
    pub record_offset: u64,
    /// Byte offset of the payload.
    pub data_offset: u64,
    /// Element type.
    pub dtype: DType,
    /// The stored DLPack type (tells the two bool encodings apart).
    pub dl_type: DlType,
    /// Dimensions (`[]` for a 0-d scalar).
    pub dims: Vec<usize>,
    /// Payload bytes.
    pub nbytes: u64,
    /// The stored device id (ignored by every loader; writers store 0).
    pub device_id: i32,
}
