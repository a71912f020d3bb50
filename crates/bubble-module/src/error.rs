//! The error type of `bubble-module`.

/// Everything that can go wrong reading, checking, building or writing a module.
///
/// Every variant names where: a byte offset, and the node (index, and its
/// `#name` once known) or the parameter key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ends before a value the format requires.
    #[error("truncated: {what} at offset {offset} needs {need} bytes, {left} left")]
    Truncated {
        /// What was being read, with where (e.g. `input count of node 1`).
        what: String,
        /// Byte offset of the value.
        offset: usize,
        /// Bytes the value needs.
        need: u64,
        /// Bytes that remain.
        left: usize,
    },
    /// The header code is not `0x19910929`.
    #[error("bad header code {found:#010x} at offset 4 (want 0x19910929): not a TenniS module")]
    BadCode {
        /// The code found.
        found: u32,
    },
    /// A count, index or dimension is 2^31 or more (both writers use 31-bit values).
    #[error("{what} at offset {offset} is {value}, which is not below 2^31")]
    ValueTooLarge {
        /// What the value is, with where.
        what: String,
        /// Byte offset of the value.
        offset: usize,
        /// The value read.
        value: u32,
    },
    /// A count claims more entries than the remaining bytes can hold.
    #[error(
        "{what} at offset {offset} is {count}, but {left} bytes left cannot hold that many entries of at least {min_size} bytes"
    )]
    CountTooLarge {
        /// What was counted, with where.
        what: String,
        /// Byte offset of the count.
        offset: usize,
        /// The count claimed.
        count: u64,
        /// The smallest encoding of one entry, in bytes.
        min_size: usize,
        /// Bytes that remain after the count.
        left: usize,
    },
    /// A dtype code outside the DTYPE table (0..=32).
    #[error("unknown dtype code {code} at offset {offset} ({at})")]
    UnknownDType {
        /// The code read.
        code: u8,
        /// Byte offset of the code.
        offset: usize,
        /// Where: node and parameter key.
        at: String,
    },
    /// A field's element or byte count overflows.
    #[error("shape {dims:?} at offset {offset} ({at}) overflows its byte count")]
    ShapeOverflow {
        /// The dimensions.
        dims: Vec<usize>,
        /// Byte offset of the field.
        offset: usize,
        /// Where: node and parameter key.
        at: String,
    },
    /// A node breaks a rule of the format (`#op`/`#name` missing or not a
    /// string, `#output_count` not 1, ...).
    #[error("{at} (offset {offset}): {what}")]
    BadNode {
        /// The node, e.g. `node 1` or `node 1 ("y")`.
        at: String,
        /// Byte offset of the node (0 for a node built in memory).
        offset: usize,
        /// What is wrong.
        what: String,
    },
    /// An index into the node list is out of range.
    #[error("{what} {index} at offset {offset} is out of range ({count} nodes)")]
    IndexOutOfRange {
        /// Which list the index is in, with where.
        what: String,
        /// The index.
        index: u64,
        /// Byte offset of the index (0 for a module built in memory).
        offset: usize,
        /// The number of nodes.
        count: usize,
    },
    /// The graph has a cycle.
    #[error("the graph has a cycle through {at}")]
    Cycle {
        /// Index of a node on the cycle.
        node: usize,
        /// The node, e.g. `node 3 ("a")`.
        at: String,
    },
    /// An operator node without inputs is reachable from the outputs (the
    /// C++ library refuses it: "Found not computable node").
    #[error(
        "{at}: not computable: operator {op:?} has no inputs but is reachable from the outputs"
    )]
    NotComputable {
        /// Index of the node.
        node: usize,
        /// The node, e.g. `node 1 ("y")`.
        at: String,
        /// Its `#op`.
        op: String,
    },
    /// A `<param>` reachable from the outputs is not in the module inputs
    /// (the C++ library refuses it: "The sorted inputs must content ...").
    #[error("{at}: <param> node is reachable from the outputs but missing from the module inputs")]
    MissingInput {
        /// Index of the node.
        node: usize,
        /// The node, e.g. `node 0 ("x")`.
        at: String,
    },
    /// A limit from [`tensor_core::Limits`] was exceeded.
    #[error("{at}: {source}")]
    Limit {
        /// Where, with the byte offset.
        at: String,
        /// The limit error.
        #[source]
        source: tensor_core::Error,
    },
    /// A module cannot be written as asked (a dtype TenniS has no code for,
    /// a column-major tensor, a count of 2^31 or more, ...).
    #[error("cannot write {at}: {what}")]
    Unwritable {
        /// Where: node and parameter.
        at: String,
        /// What is wrong.
        what: String,
    },
    /// A builder call was invalid.
    #[error("module builder: {0}")]
    Build(String),
    /// An error from `tensor-core`.
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// An I/O error while writing.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
