//! The protobuf wire cursor of `tensor-core` ([`tensor_core::wire`]) as
//! the `.nnp`/`.protobuf` walk (`nnp.rs`) uses it: its errors as this
//! crate's, and [`Stop`] for a layout the walk does not index.

pub(super) use tensor_core::wire::{Cursor, FIXED32, FIXED64, LEN, VARINT};

use crate::Error;

impl From<tensor_core::wire::Error> for Error {
    fn from(e: tensor_core::wire::Error) -> Self {
        match e {
            tensor_core::wire::Error::Io(e) => Error::Io(e),
            tensor_core::wire::Error::Core(e) => Error::Core(e),
            other => Error::Invalid(other.to_string()),
        }
    }
}

/// The walk stops: an error (the whole-file path has one too), or a layout
/// this path does not index (the whole-file path reads it).
pub(super) enum Stop {
    Err(Error),
    Whole,
}

impl<E: Into<Error>> From<E> for Stop {
    fn from(e: E) -> Self {
        Stop::Err(e.into())
    }
}

pub(super) type Walk<T> = std::result::Result<T, Stop>;

pub(super) fn bad(member: &str, at: u64, what: impl std::fmt::Display) -> Stop {
    Stop::Err(tensor_core::wire::bad(member, at, what).into())
}
