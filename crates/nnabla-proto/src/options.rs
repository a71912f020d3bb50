//! Reading options.

/// How to read a binary `.protobuf` ([`crate::binary::parse_with`] and the
/// other `binary` readers): bounds on the parameter count, shape ranks and
/// name lengths (`tensor-core`'s options of a reader whose one option is
/// its limits).
pub use tensor_core::ReadOptions;
