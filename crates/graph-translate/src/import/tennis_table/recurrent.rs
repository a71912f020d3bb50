//! TenniS import rows of recurrent layers: `LSTM` lowered (in `tennis_ops_rnn`), `GRU` and `RNN` refused.

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
    refused("GRU", "TenniS has no GRU"),
    refused("RNN", "TenniS has no simple RNN"),
];
