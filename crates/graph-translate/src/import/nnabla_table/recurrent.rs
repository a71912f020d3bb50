//! NNabla import rows of recurrent layers (lowered in `nnabla_ops_rnn` and, for `GRU`, `nnabla_ops_gru`).

use super::super::nnabla_ops_gru as gru;
use super::super::nnabla_ops_rnn as rnn;
use super::{Entry, e, since};

/// The recurrent-layer rows.
pub(super) static RECURRENT: &[Entry] = &[
    e(
        "RNN",
        "activations (Tanh, Relu), direction, hidden_size, layout",
        "Concatenate, Sum, RNN, Flip (reverse), Reshape, Transpose",
        "clip, sequence_lens, other activations",
        rnn::rnn,
    ),
    e(
        "LSTM",
        "direction, hidden_size, layout",
        "Reshape, Concatenate, Gather (gate order), Sum, LSTM, Flip (reverse), Transpose",
        "clip, sequence_lens, peepholes, input_forget, other activations",
        rnn::lstm,
    ),
    since(
        e(
            "CausalConvWithState",
            "activation (none, silu, swish), bias, past_state",
            "Concatenate, Convolution (depthwise), Sigmoid, Mul2, Slice",
            "an empty present_state (kernel size 1)",
            rnn::causal_conv,
        ),
        27,
    ),
    e(
        "GRU",
        "direction, hidden_size, layout, linear_before_reset",
        "BatchMatmul, Slice, Add2, Mul2, RSubScalar, Sigmoid, Tanh, Concatenate (unrolled)",
        "clip, sequence_lens, activations other than Sigmoid, Tanh; sequences over 1024 steps",
        gru::gru,
    ),
];
