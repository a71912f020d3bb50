//! NNabla import rows of attention (lowered in `nnabla_ops_attention`).

use super::super::nnabla_ops_attention as attn;
use super::{Entry, e, since};

/// The attention rows.
pub(super) static ATTENTION: &[Entry] = &[
    since(
        e(
            "Attention",
            "is_causal, scale, softcap, q_num_heads, kv_num_heads, left/right_window_size, qk_matmul_output_mode, attn_mask (bool or additive, padded), past_key/past_value, nonpad_kv_seqlen",
            "Reshape, Transpose, Concatenate (cache), Broadcast (grouped heads), MulScalar, BatchMatmul, Tanh, Add2, Softmax, TopKData, LessScalar, Where",
            "softmax_precision other than FLOAT",
            attn::attention,
        ),
        23,
    ),
    since(
        e(
            "RotaryEmbedding",
            "interleaved, rotary_embedding_dim, num_heads, position_ids",
            "Transpose/Reshape, Gather (position_ids), Slice, Mul2, Sub2, Add2, Concatenate",
            "symbolic dimensions",
            attn::rotary_embedding,
        ),
        23,
    ),
    since(
        e(
            "LinearAttention",
            "update_rule, q_num_heads, kv_num_heads, scale, past_state, decay, beta",
            "Reshape, Transpose, Slice, Exp, Mul2, Sub2, Add2, BatchMatmul, Broadcast, MulScalar, Concatenate (unrolled over the sequence)",
            "sequences longer than 256",
            attn::linear_attention,
        ),
        27,
    ),
];
