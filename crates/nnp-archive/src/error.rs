//! The error type of `nnp-archive`.

/// Everything that can go wrong reading or writing `.nnp` archives and `.h5`
/// parameter files. Each variant says what is wrong and where (member name,
/// dataset path, byte offset).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A shape, dtype or limit problem found by `tensor-core`.
    #[error(transparent)]
    Tensor(#[from] tensor_core::Error),

    /// The HDF5 library refused the file or an object in it.
    #[error("HDF5 {context}: {message}")]
    Hdf5 {
        /// Which object (dataset path) or step (`open`, `write`).
        context: String,
        /// What the HDF5 layer reported.
        message: String,
    },

    /// A dataset has no `need_grad` attribute (nnabla's Python loader raises
    /// `KeyError` for it).
    #[error("HDF5 dataset {dataset:?} has no need_grad attribute (nnabla requires one)")]
    MissingNeedGrad {
        /// The dataset path.
        dataset: String,
    },

    /// Some datasets have an `index` attribute and others do not. nnabla's
    /// Python loader sorts by `(index, path)` and raises `TypeError` on such
    /// a file, so it is refused here too.
    #[error(
        "HDF5 datasets mix index attributes: {with_index:?} has one, {without_index:?} has none (nnabla refuses such files)"
    )]
    MixedIndex {
        /// A dataset with an `index` attribute.
        with_index: String,
        /// A dataset without one.
        without_index: String,
    },

    /// An attribute has a type or value nnabla cannot use.
    #[error("HDF5 dataset {dataset:?}: attribute {attr}: {reason}")]
    BadAttribute {
        /// The dataset path.
        dataset: String,
        /// The attribute name.
        attr: &'static str,
        /// What is wrong with it.
        reason: String,
    },

    /// A dataset's element type is not a number type this crate reads or writes.
    #[error("HDF5 dataset {dataset:?}: unsupported element type {datatype}")]
    UnsupportedDtype {
        /// The dataset path (or parameter name, when writing).
        dataset: String,
        /// A description of the type.
        datatype: String,
    },

    /// A dataset's stored data does not fit its shape or the file.
    #[error("HDF5 dataset {dataset:?}: {reason}")]
    BadData {
        /// The dataset path.
        dataset: String,
        /// What is wrong.
        reason: String,
    },

    /// A parameter name cannot be stored (empty path component, `.`, NUL, or
    /// a name that is both a dataset and a group).
    #[error("parameter name {name:?} cannot be stored in HDF5: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// Why.
        reason: &'static str,
    },

    /// A streaming writer ([`crate::h5::StreamWriter`],
    /// [`crate::NnpStreamWriter`]) was given a tensor that differs from the
    /// declared dtype or shape, more tensors than declared, or was finished
    /// before all were given.
    #[error("streaming write of {name:?}: {reason}")]
    Stream {
        /// The dataset or parameter concerned (empty when there is none).
        name: String,
        /// What does not match.
        reason: String,
    },

    /// The zip container is malformed.
    #[error("zip archive: {0}")]
    Zip(String),

    /// A member of the zip container is malformed or refused.
    #[error("zip member {member:?}: {reason}")]
    Member {
        /// The member name as stored.
        member: String,
        /// What is wrong.
        reason: String,
    },

    /// A member name is a path that would escape an extraction directory
    /// (`../x`, `/abs`, `C:\x`). Names are never used as paths by this crate,
    /// but such archives are refused unless [`crate::ReadOptions`] allows them.
    #[error("zip member {name:?} has an unsafe path name (absolute, drive or `..`)")]
    UnsafeMemberName {
        /// The member name as stored.
        name: String,
    },

    /// A member's declared size is larger than the archive or the limits allow.
    #[error("zip member {member:?} declares {declared} bytes, over the limit of {limit}")]
    TooLarge {
        /// The member name.
        member: String,
        /// The declared (uncompressed) size.
        declared: u64,
        /// The limit in force.
        limit: u64,
    },

    /// The archive holds a nested `.nnp` (nnabla refuses it).
    #[error("zip member {0:?} is a nested .nnp archive, which nnabla refuses")]
    NestedNnp(String),

    /// Reading or writing the NNabla protobuf content failed.
    #[error("{context}: {message}")]
    Proto {
        /// The member or step.
        context: String,
        /// What the protobuf layer reported.
        message: String,
    },

    /// An I/O error.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    #[allow(dead_code)]
    pub(crate) fn member(member: &str, reason: impl Into<String>) -> Self {
        Error::Member {
            member: member.to_string(),
            reason: reason.into(),
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
