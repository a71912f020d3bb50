//! The error type of `cvm-params`.

use std::fmt;

use tensor_core::DType;

/// Where in a file something went wrong: a byte offset and, where there is
/// one, the name-table slot or tensor being read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Byte offset from the start of the parameter dictionary.
    pub offset: u64,
    /// What was being read, e.g. `tensor 3 "conv1/W"` or `name 7`.
    pub context: Option<String>,
}

impl Location {
    /// A location with no context.
    pub fn at(offset: u64) -> Self {
        Location {
            offset,
            context: None,
        }
    }

    /// A location inside the record of tensor `index` named `name`.
    pub fn tensor(offset: u64, index: usize, name: &[u8]) -> Self {
        Location {
            offset,
            context: Some(format!(
                "tensor {index} {:?}",
                String::from_utf8_lossy(name)
            )),
        }
    }

    /// A location inside the name table, at name `index`.
    pub fn name(offset: u64, index: usize) -> Self {
        Location {
            offset,
            context: Some(format!("name {index}")),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}", self.offset)?;
        if let Some(c) = &self.context {
            write!(f, " ({c})")?;
        }
        Ok(())
    }
}

/// Everything that can go wrong reading or writing a `.params` file.
///
/// Reader errors say what is wrong and where ([`Location`]: byte offset and
/// tensor name); writer errors name the entry concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file does not start with the list magic `0xF7E58D4F05049CB7`.
    #[error(
        "not a TVM/CVM parameter file: list magic at byte 0 is {found:#018x}, expected 0xf7e58d4f05049cb7"
    )]
    BadListMagic {
        /// The 8 bytes found, as a little-endian u64.
        found: u64,
    },
    /// A tensor record does not start with the tensor magic `0xDD5E40F096B4A13F`.
    #[error("{at}: tensor magic is {found:#018x}, expected 0xdd5e40f096b4a13f")]
    BadTensorMagic {
        /// Where the record starts.
        at: Location,
        /// The value found.
        found: u64,
    },
    /// The input ends before a field or payload does.
    #[error("{at}: file ends inside {what}: {needed} bytes needed, {available} left")]
    Truncated {
        /// Where the field starts.
        at: Location,
        /// The field, e.g. "the name count" or "the payload".
        what: &'static str,
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left in the input.
        available: u64,
    },
    /// The tensor count differs from the name count.
    #[error("{at}: the file stores {tensors} tensors but {names} names")]
    CountMismatch {
        /// Where the tensor count is.
        at: Location,
        /// The name count.
        names: u64,
        /// The tensor count.
        tensors: u64,
    },
    /// A tensor's rank is negative.
    #[error("{at}: negative ndim {ndim}")]
    NegativeNdim {
        /// Where the ndim field is.
        at: Location,
        /// The value found.
        ndim: i32,
    },
    /// A tensor dimension is negative.
    #[error("{at}: dimension {axis} is negative ({value})")]
    NegativeDim {
        /// Where the dimension is.
        at: Location,
        /// Which axis.
        axis: usize,
        /// The value found.
        value: i64,
    },
    /// The device type is not CPU (1).
    #[error("{at}: device type {device_type} is not CPU (1); TVM only stores CPU tensors")]
    NonCpuDevice {
        /// Where the device type is.
        at: Location,
        /// The value found.
        device_type: i32,
    },
    /// The dtype has lanes ≠ 1.
    #[error(
        "{at}: dtype has {lanes} lanes; only 1 is supported (payload sizes ignore lanes, so other values are inconsistent)"
    )]
    Lanes {
        /// Where the dtype is.
        at: Location,
        /// The value found.
        lanes: u16,
    },
    /// A sub-byte element type (float4, float6, int4, ...) other than the legacy bool.
    #[error(
        "{at}: sub-byte element type (code {code}, {bits} bits) is not supported: TVM stores one byte per element on disk but packs such tensors in memory, so no loader reads them correctly"
    )]
    SubByteDType {
        /// Where the dtype is.
        at: Location,
        /// DLPack type code.
        code: u8,
        /// Bits per element.
        bits: u8,
    },
    /// A type code or bit width outside the table of `docs/formats/cvm.md` §4.
    #[error("{at}: unknown or unsupported element type (code {code}, {bits} bits)")]
    UnknownDType {
        /// Where the dtype is.
        at: Location,
        /// DLPack type code.
        code: u8,
        /// Bits per element.
        bits: u8,
    },
    /// The element or byte count overflows a signed 64-bit integer.
    #[error("{at}: shape {dims:?} of {dtype} has a byte count that overflows 64 bits")]
    ByteCountOverflow {
        /// Where the tensor record starts.
        at: Location,
        /// The dimensions.
        dims: Vec<u64>,
        /// The element type.
        dtype: DType,
    },
    /// The stored byte count differs from numel × element size.
    #[error("{at}: stored byte count {stated} but shape {dims:?} of {dtype} needs {expected}")]
    ByteCountMismatch {
        /// Where the byte-count field is.
        at: Location,
        /// The stored value.
        stated: i64,
        /// numel × element size.
        expected: u64,
        /// The dimensions.
        dims: Vec<usize>,
        /// The element type.
        dtype: DType,
    },
    /// Bytes follow the last tensor (strict mode).
    #[error(
        "byte {offset}: {len} trailing bytes after the last tensor (ReadOptions::lenient_trailing ignores them)"
    )]
    TrailingBytes {
        /// Where the trailing bytes start.
        offset: u64,
        /// How many there are.
        len: u64,
    },
    /// The same name is stored twice (strict mode).
    #[error(
        "{at}: name stored again (first as tensor {first}); ReadOptions::allow_duplicates accepts it (lookups give the last one, as TVM does)"
    )]
    DuplicateName {
        /// Where the second name is in the name table.
        at: Location,
        /// Index of the first tensor with that name.
        first: usize,
    },
    /// A [`tensor_core::Limits`] bound was exceeded.
    #[error("{at}: {error}")]
    Limit {
        /// Where the count or length was read.
        at: Location,
        /// The limit error (the error's source, so a caller walking the
        /// causes finds [`tensor_core::Error::OutOfMemory`]).
        #[source]
        error: tensor_core::Error,
    },
    /// Reading the underlying stream failed (lazy reader).
    #[error("{at}: I/O error: {error}")]
    Io {
        /// Where reading failed.
        at: Location,
        /// The I/O error.
        error: std::io::Error,
    },
    /// An element type that a `.params` file cannot hold (writer).
    #[error(
        "tensor {index} {name:?}: {dtype} cannot be stored in a .params file (no DLPack type TVM reads)"
    )]
    UnsupportedDType {
        /// Entry index.
        index: usize,
        /// Entry name (lossy UTF-8).
        name: String,
        /// The element type.
        dtype: DType,
    },
    /// A dimension or byte count does not fit in the file's i64 fields (writer).
    #[error("tensor {index} {name:?}: shape {dims:?} does not fit the file's 64-bit fields")]
    TooLarge {
        /// Entry index.
        index: usize,
        /// Entry name (lossy UTF-8).
        name: String,
        /// The dimensions.
        dims: Vec<usize>,
    },
    /// The streaming writer was given a different number of tensors than names.
    #[error("the writer declared {names} names but was given {tensors} tensors")]
    WriterCount {
        /// Names declared up front.
        names: usize,
        /// Tensors written (so far, or in total at `finish`).
        tensors: usize,
    },
    /// An entry index past the end (lazy reader).
    #[error("entry {index} does not exist: the file has {len} entries")]
    NoSuchEntry {
        /// The index asked for.
        index: usize,
        /// The number of entries.
        len: usize,
    },
    /// Writing to the output failed.
    #[error("writing the .params output: {0}")]
    Write(std::io::Error),
    /// An error from `tensor-core` (mapping a file, shapes, atomic save).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
