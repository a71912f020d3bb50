//! Reading options.

use tensor_core::Limits;

/// How to read a binary `.protobuf` ([`crate::binary::parse_with`] and the
/// other `binary` readers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Bounds on the parameter count, shape ranks and name lengths.
    pub limits: Limits,
}

impl ReadOptions {
    /// Sets [`ReadOptions::limits`].
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}
