//! TenniS import rows of recurrent layers: `LSTM` and `GRU` lowered (in `tennis_ops_rnn`), `RNN` refused.

use super::super::tennis_ops_rnn as rnn;
use super::{Entry, e, refused};

/// The recurrent-layer rows.
pub(super) static RECURRENT: &[Entry] = &[
    e(
        "LSTM",
        "direction, hidden_size, default activations",
        "LSTM (packed Y, Y_h, Y_c), _field; reverse: strided_slice (step −1) around a forward LSTM",
        "sequence_lens, peepholes, clip, input_forget, layout 1, other activations",
        rnn::lstm,
    ),
    e(
        "GRU",
        "direction, hidden_size, layout, linear_before_reset, default activations",
        "unrolled (TenniS has no GRU): _transpose, gemm (all steps' x·Wᵀ), per step strided_slice, gemm, add, sigmoid, mul, tanh, sub; concat (Y, Y_h); layout 1: _transpose in and out",
        "sequence_lens, clip, other activations, more than 1024 steps × directions, symbolic shapes",
        rnn::gru,
    ),
    refused("RNN", "TenniS has no simple RNN"),
];
