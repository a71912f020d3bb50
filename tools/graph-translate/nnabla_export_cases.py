"""Single-function NNabla networks for the ONNX export tests.

Builds one small network per case (a function of nnabla 1.39 with one set
of attribute values and input shapes), saves it as NAME.nnp with nnabla's
own writer and its inputs as NAME.in.npz, in OUT (the repository's
testdata/translate/export/nnabla). The reference outputs NAME.out.npz are
then computed by nnabla's runtime from the saved file with
reference_outputs.py (run_nnabla.py), the same loader users run.

Runs in a Python that has nnabla 1.39, e.g. the nnabla chroot's:

    cp nnabla_export_cases.py nnabla_export_cases_signal.py CHROOT/tmp/ && \
        chroot CHROOT /opt/nnenv/bin/python /tmp/nnabla_export_cases.py /tmp/cases \
        [--only REGEX]

(nnabla_export_cases_signal.py holds the warp, spectral, deformable and
detection cases; FFT/IFFT, which nnabla 1.39 computes only on CUDA, get
their NAME.out.npz from nnabla's documented formula here.)

then copy /tmp/cases/* from the chroot to OUT and run
    reference_outputs.py OUT --runtime nnabla

The exports are checked in onnxruntime too (a Python with onnxruntime and
numpy; the ONNX files are written by the cargo test
`nnabla_export_ops` when MLFORMATS_DUMP_ONNX names a folder):

    MLFORMATS_DUMP_ONNX=ONNXDIR cargo test -p graph-translate \
        --test nnabla_export_ops
    python nnabla_export_cases.py check OUT ONNXDIR [--report FILE.json]
"""

import argparse
import json
import os
import re

import numpy as np


# case name -> how many places earlier its random inputs were seeded (see
# cases())
SEED_SHIFT = {}
# the seed before the first case of the quantisation / fused convolution /
# RoiAlign / BoolScatter block (see cases())
GROUP_SEED = 1000


def cases():
    """(name, function, inputs, params, kwargs). inputs: list of
    (shape, lo, hi) (or ('int', shape, hi) / ('bool', shape) / ('special',
    shape)); params: list of (name, shape) created as parameters."""
    u = [((2, 3, 4), -2.0, 2.0)]
    u2 = [((3, 5), -2.0, 2.0)]
    b2 = [((2, 3, 4), -2.0, 2.0), ((2, 3, 4), -2.0, 2.0)]
    bb = [((2, 3, 4), -2.0, 2.0), ((1, 3, 1), -2.0, 2.0)]
    pos = [((2, 3, 4), 0.1, 3.0)]
    unit = [((2, 3, 4), -0.9, 0.9)]
    img = [((2, 3, 6, 6), -1.0, 1.0)]
    c = []

    def add(name, fn, inputs, params=(), **kw):
        c.append((name, fn, inputs, list(params), kw))

    add("affine_b1", "affine", [((2, 6), -1, 1)], [("W", (6, 4)), ("b", (4,))], base_axis=1)
    add("affine_b2", "affine", [((2, 3, 2, 2), -1, 1)], [("W", (4, 5)), ("b", (5,))], base_axis=2)
    add("conv_basic", "convolution", img, [("W", (4, 3, 3, 3)), ("b", (4,))], pad=(1, 1))
    add(
        "conv_stride_dil",
        "convolution",
        img,
        [("W", (6, 1, 2, 2))],
        stride=(2, 1),
        dilation=(1, 2),
        group=3,
    )
    add("deconv_basic", "deconvolution", img, [("W", (3, 2, 3, 3)), ("b", (2,))], stride=(2, 2))
    add(
        "deconv_pad_outpad",
        "deconvolution",
        img,
        [("W", (3, 2, 3, 3))],
        stride=(2, 2),
        pad=(1, 1),
        output_padding=(1, 1),
    )
    add("maxpool_2", "max_pooling", img, kernel=(2, 2))
    add("maxpool_pad", "max_pooling", img, kernel=(3, 3), stride=(2, 2), pad=(1, 1))
    add("maxpool_noborder", "max_pooling", img, kernel=(4, 4), stride=(3, 3), ignore_border=False)
    add("avgpool_2", "average_pooling", img, kernel=(2, 2))
    add("avgpool_pad_incl", "average_pooling", img, kernel=(3, 3), pad=(1, 1), including_pad=True)
    add(
        "avgpool_pad_excl",
        "average_pooling",
        img,
        kernel=(3, 3),
        stride=(2, 2),
        pad=(1, 1),
        including_pad=False,
    )
    add("gap", "global_average_pooling", img)
    add("sumpool_2", "sum_pooling", img, kernel=(2, 2))
    add("sumpool_pad", "sum_pooling", img, kernel=(3, 3), stride=(2, 2), pad=(1, 1))
    add("unpool_2", "unpooling", img, kernel=(2, 2))
    add("unpool_21", "unpooling", img, kernel=(2, 1))
    for fn in ["sigmoid", "swish", "tanh", "relu", "mish", "relu6", "hard_sigmoid", "hard_tanh"]:
        add(fn, fn, u)
    for fn in ["log_sigmoid", "softsign", "tanh_shrink", "sign", "abs", "exp", "identity"]:
        add(fn, fn, u)
    for fn in ["round", "ceil", "floor", "sin", "cos", "tan", "sinh", "cosh", "atan", "asinh"]:
        add(fn, fn, u)
    for fn in ["asin", "acos", "atanh", "erf"]:
        add(fn, fn, unit)
    add("log", "log", pos)
    add("acosh", "acosh", [((2, 3, 4), 1.1, 3.0)])
    add("leaky_relu_01", "leaky_relu", u, alpha=0.1)
    add("leaky_relu_2", "leaky_relu", u2, alpha=0.25)
    add("softmax_ax1", "softmax", u, axis=1)
    add("softmax_ax2", "softmax", u, axis=2)
    add("log_softmax_ax1", "log_softmax", u, axis=1)
    add("log_softmax_ax0", "log_softmax", u2, axis=0)
    add("elu_1", "elu", u, alpha=1.0)
    add("elu_05", "elu", u2, alpha=0.5)
    add("selu_default", "selu", u)
    add("selu_custom", "selu", u2, scale=1.5, alpha=2.0)
    add("prelu_shared", "prelu", img, [("slope", (1,))], base_axis=1)
    add("prelu_channel", "prelu", img, [("slope", (3,))], base_axis=1)
    add("softplus_1", "softplus", u, beta=1.0)
    add("softplus_2", "softplus", u2, beta=2.0)
    add(
        "batchnorm",
        "batch_normalization",
        img,
        [
            ("beta", (1, 3, 1, 1)),
            ("gamma", (1, 3, 1, 1)),
            ("mean", (1, 3, 1, 1)),
            ("var", (1, 3, 1, 1)),
        ],
        batch_stat=False,
        eps=1e-3,
    )
    for fn in ["sum", "mean", "max", "min", "prod"]:
        add(f"{fn}_ax1", fn, u, axis=1)
        add(f"{fn}_ax02_keep", fn, u, axis=(0, 2), keepdims=True)
        add(f"{fn}_all", fn, u2)
    for fn in ["add2", "sub2", "mul2", "div2", "minimum2", "maximum2"]:
        add(fn, fn, b2)
        add(f"{fn}_bc", fn, bb)
    add("pow2", "pow2", [((2, 3, 4), 0.2, 2.0), ((2, 3, 4), -2.0, 2.0)])
    add("pow2_bc", "pow2", [((2, 3, 4), 0.2, 2.0), ((1, 3, 1), -2.0, 2.0)])
    add("bc_add2", "bc_add2", bb)
    add("add_n", "add_n", [((2, 3), -1, 1)] * 3)
    for fn, v in [("add_scalar", 1.5), ("mul_scalar", -2.0), ("r_sub_scalar", 0.5)]:
        add(fn, fn, u, val=v)
    add("r_div_scalar", "r_div_scalar", pos, val=2.0)
    add("pow_scalar", "pow_scalar", pos, val=1.7)
    add("pow_scalar_neg", "pow_scalar", pos, val=-2.0)
    add("r_pow_scalar", "r_pow_scalar", u, val=1.5)
    add("minimum_scalar", "minimum_scalar", u, val=0.3)
    add("maximum_scalar", "maximum_scalar", u, val=-0.3)
    bools = [("bool", (2, 3, 4)), ("bool", (2, 3, 4))]
    for fn in ["logical_and", "logical_or", "logical_xor"]:
        add(fn, fn, bools)
    add("logical_not", "logical_not", [("bool", (2, 3, 4))])
    ints = [("int", (2, 3, 4), 3), ("int", (2, 3, 4), 3)]
    for fn in ["equal", "not_equal", "greater_equal", "greater", "less_equal", "less"]:
        add(fn, fn, ints)
    add("isnan", "isnan", [("special", (2, 3, 4))])
    add("isinf", "isinf", [("special", (2, 3, 4))])
    add("batch_matmul", "batch_matmul", [((2, 3, 4), -1, 1), ((2, 4, 5), -1, 1)])
    add(
        "batch_matmul_t",
        "batch_matmul",
        [((2, 4, 3), -1, 1), ((2, 5, 4), -1, 1)],
        transpose_a=True,
        transpose_b=True,
    )
    add("concat_ax1", "concatenate", [((2, 3, 4), -1, 1), ((2, 2, 4), -1, 1)], axis=1)
    add("concat_ax2", "concatenate", [((2, 3, 4), -1, 1), ((2, 3, 1), -1, 1)], axis=2)
    add("split_ax1", "split", u, axis=1)
    add("split_ax2", "split", u, axis=2)
    add("stack_ax0", "stack", b2, axis=0)
    add("stack_ax3", "stack", b2, axis=3)
    add("slice_basic", "slice", u, start=(0, 1, 0), stop=(2, 3, 4), step=(1, 1, 2))
    add("slice_neg", "slice", u, start=(1, 0, 3), stop=(2, 3, 0), step=(1, 2, -1))
    add("pad_const", "pad", img, pad_width=(1, 2, 0, 1), mode="constant", constant_value=0.5)
    add("pad_reflect", "pad", img, pad_width=(2, 1), mode="reflect")
    add("transpose_021", "transpose", u, axes=(0, 2, 1))
    add("transpose_201", "transpose", u, axes=(2, 0, 1))
    add("broadcast_to_ax1", "broadcast_to", [((2, 3, 4), -1, 1), ((3, 4), -1, 1)], axis=1)
    add("broadcast_to_ax0", "broadcast_to", [((2, 3, 4), -1, 1), ((2, 3), -1, 1)], axis=0)
    add("flip_2", "flip", u, axes=(2,))
    add("flip_01", "flip", u, axes=(0, 1))
    add("reshape_flat", "reshape", u, shape=(2, 12))
    add("reshape_3d", "reshape", u, shape=(4, 3, 2))
    add("bool_fill", "bool_fill", [((2, 3, 4), -1, 1), ("bool", (2, 3, 4))], value=7.0)
    add("dropout", "dropout", u, p=0.5)
    add("binary_sigmoid", "binary_sigmoid", u)
    add("binary_tanh", "binary_tanh", u)
    add(
        "bc_affine",
        "binary_connect_affine",
        [((2, 6), -1, 1)],
        [("W", (6, 4)), ("Wb", (6, 4)), ("b", (4,))],
    )
    add(
        "bc_conv",
        "binary_connect_convolution",
        img,
        [("W", (4, 3, 3, 3)), ("Wb", (4, 3, 3, 3)), ("b", (4,))],
        pad=(1, 1),
    )
    add(
        "bw_affine",
        "binary_weight_affine",
        [((2, 6), -1, 1)],
        [("W", (6, 4)), ("Wb", (6, 4)), ("alpha", (4,)), ("b", (4,))],
    )
    add("unlink", "unlink", u)
    # functions lowered in this round
    add("crelu_ax1", "crelu", u, axis=1)
    add("crelu_ax2", "crelu", u2, axis=1)
    add("celu_ax1", "celu", u, alpha=1.0, axis=1)
    add("celu_ax2", "celu", u, alpha=0.5, axis=2)
    add("gelu", "gelu", u)
    add("sinc", "sinc", [("zeros", (2, 3, 4))])
    add("layer_norm", "layer_normalization", img, [("beta", (1, 3, 6, 6)), ("gamma", (1, 3, 6, 6))])
    add(
        "layer_norm_2d",
        "layer_normalization",
        [((4, 5), -1, 1)],
        [("beta", (1, 5)), ("gamma", (1, 5))],
        eps=1e-3,
    )
    add(
        "instance_norm",
        "instance_normalization",
        img,
        [("beta", (1, 3, 1, 1)), ("gamma", (1, 3, 1, 1))],
    )
    add(
        "group_norm",
        "group_normalization",
        [((2, 4, 3, 3), -1, 1)],
        [("beta", (1, 4, 1, 1)), ("gamma", (1, 4, 1, 1))],
        num_groups=2,
    )
    add(
        "mean_subtraction",
        "mean_subtraction",
        img,
        [("mean", (3, 6, 6)), ("t", (1,))],
        update_running_mean=False,
    )
    add("cumsum_ax1", "cumsum", u, axis=1)
    add("cumsum_excl_rev", "cumsum", u, axis=2, exclusive=True, reverse=True)
    add("norm_2", "norm", u, p=2.0, axis=1)
    add("norm_1_keep", "norm", u, p=1.0, axis=(1, 2), keepdims=True)
    add("norm_3", "norm", u, p=3.0)
    add("mul_n", "mul_n", [((2, 3), -1, 1)] * 3)
    for fn in ["logical_and_scalar", "logical_or_scalar", "logical_xor_scalar"]:
        add(f"{fn}_t", fn, [("bool", (2, 3, 4))], val=True)
        add(f"{fn}_f", fn, [("bool", (2, 3, 4))], val=False)
    for fn in ["equal_scalar", "not_equal_scalar", "greater_equal_scalar", "greater_scalar"]:
        add(fn, fn, [("int", (2, 3, 4), 3)], val=1.0)
    for fn in ["less_equal_scalar", "less_scalar"]:
        add(fn, fn, [("int", (2, 3, 4), 3)], val=1.0)
    add("reset_nan", "reset_nan", [("special", (2, 3, 4))], val=-5.0)
    add("reset_inf", "reset_inf", [("special", (2, 3, 4))], val=7.0)
    add("where", "where", [("bool", (2, 3, 4)), ((2, 3, 4), -1, 1), ((2, 3, 4), -1, 1)])
    add("atan2", "atan2", [("quadrants", (2, 3, 4)), ("quadrants", (2, 3, 4))])
    add("broadcast", "broadcast", [((1, 3, 1), -1, 1)], shape=(2, 3, 4))
    add("tile_3", "tile", u, reps=(1, 2, 3))
    add("tile_short", "tile", u, reps=(2,))
    add("tile_long", "tile", u2, reps=(2, 1, 2))
    add("embed", "embed", [("int", (2, 3), 5)], [("W", (5, 4))])
    add("gather_ax0", "gather", [((5, 3), -1, 1), ("int", (2, 3), 5)], axis=0)
    add("gather_ax1", "gather", [((2, 4, 3), -1, 1), ("int", (2,), 4)], axis=1)
    for L in (1, 2):
        for D in (1, 2):
            tag = f"l{L}_d{D}"
            hs = [((3, 2, 3), -1, 1), ((L, D, 2, 4), -1, 1)]
            w = [("weight_l0", (D, 4, 4, 3 + 4))]
            wr = [("weight_l0", (D, 4, 3 + 4))]
            wg = [("weight_l0", (D, 3, 4, 3 + 4))]

            def rest(g):
                """`weight` of layers 1.. (none for one layer)."""
                if L == 1:
                    return []
                if g:
                    return [("weight", (L - 1, D, g, 4, D * 4 + 4))]
                return [("weight", (L - 1, D, 4, D * 4 + 4))]

            add(
                f"lstm_{tag}",
                "lstm",
                hs + [((L, D, 2, 4), -1, 1)],
                w + rest(4) + [("bias", (L, D, 4, 4))],
                num_layers=L,
                bidirectional=D == 2,
                training=False,
            )
            add(
                f"gru_{tag}",
                "gru",
                hs,
                wg + rest(3) + [("bias", (L, D, 4, 4))],
                num_layers=L,
                bidirectional=D == 2,
                training=False,
            )
            add(
                f"rnn_{tag}",
                "rnn",
                hs,
                wr + rest(0) + [("bias", (L, D, 4))],
                num_layers=L,
                bidirectional=D == 2,
                training=False,
            )
    add(
        "rnn_relu_nobias",
        "rnn",
        [((3, 2, 3), -1, 1), ((1, 1, 2, 4), -1, 1)],
        [("weight_l0", (1, 4, 7))],
        nonlinearity="relu",
        training=False,
    )
    add(
        "lstm_nobias",
        "lstm",
        [((3, 2, 3), -1, 1), ((1, 1, 2, 4), -1, 1), ((1, 1, 2, 4), -1, 1)],
        [("weight_l0", (1, 4, 4, 7))],
        training=False,
    )
    # Two sets of cases were appended to the same list at once, each seeded
    # by its position as if it came first after the cases above (`SEED_SHIFT`
    # keeps the second set's inputs as they were generated).
    first_new = len(c)
    # gradient clipping, linear (de)quantisation
    add("clip_grad_by_value", "clip_grad_by_value", [u[0], u[0], u[0]])
    add("clip_grad_by_norm", "clip_grad_by_norm", u)
    add("clip_grad_by_norm_ax", "clip_grad_by_norm", u, clip_norm=2.0, axes=(1,))
    sc = ((1, 3, 1), 0.1, 2.0)
    add(
        "dequantize_linear",
        "dequantize_linear",
        [("int", (2, 3, 4), 256), sc, ("int", (1, 3, 1), 9)],
    )
    add(
        "dequantize_linear_s",
        "dequantize_linear",
        [("int", (2, 3, 4), 256), ((1, 1, 1), 0.1, 2.0), ("int", (1, 1, 1), 9)],
    )
    q = [((2, 3, 4), -40.0, 40.0), ((1, 3, 1), 0.1, 0.5), ("int", (1, 3, 1), 9)]
    qh = [("halves", (2, 3, 4)), ("const", (1, 3, 1), 1.0), ("int", (1, 3, 1), 3)]
    add("quantize_linear", "quantize_linear", q)
    add("quantize_linear_u8", "quantize_linear", q, dtype=np.uint8)
    add("quantize_linear_narrow", "quantize_linear", q, narrow_range=True)
    add("quantize_linear_half_away", "quantize_linear", qh)
    add("quantize_linear_half_even", "quantize_linear", qh, round_mode="HALF_TO_EVEN")
    add(
        "quantize_linear_even_u8_narrow",
        "quantize_linear",
        qh,
        round_mode="HALF_TO_EVEN",
        dtype=np.uint8,
        narrow_range=True,
    )
    add("batch_det_3", "batch_det", [((2, 3, 3), -1.0, 1.0)])
    add("batch_det_2", "batch_det", [((4, 2, 2), -2.0, 2.0)])
    add("batch_logdet_3", "batch_logdet", [((2, 3, 3), -1.0, 1.0)])
    add("batch_logdet_4", "batch_logdet", [((3, 4, 4), -2.0, 2.0)])
    add("norm_normalization", "norm_normalization", u)
    add("norm_normalization_p1", "norm_normalization", u, p=1.0, axes=(1,))
    add("norm_normalization_p3", "norm_normalization", u, p=3.0, axes=(0, 2), eps=1e-3)
    add("weight_standardization", "weight_standardization", [((4, 3, 2, 2), -1.0, 1.0)])
    add(
        "weight_standardization_ax1",
        "weight_standardization",
        [((3, 5), -1.0, 1.0)],
        channel_axis=1,
        eps=0.1,
    )
    add(
        "weight_normalization",
        "weight_normalization",
        [((4, 3, 2, 2), -1.0, 1.0), ((4,), 0.5, 2.0)],
    )
    add(
        "weight_normalization_dim1",
        "weight_normalization",
        [((3, 5), -1.0, 1.0), ((5,), 0.5, 2.0)],
        dim=1,
        eps=1e-2,
    )
    # nnabla.functions.tensor_normalization is a Python batch_normalization;
    # "base." picks the function of nnabla.function_bases
    add(
        "tensor_normalization",
        "base.tensor_normalization",
        img,
        [("beta", (1, 3, 1, 1)), ("gamma", (1, 3, 1, 1))],
    )
    add(
        "tensor_normalization_01",
        "base.tensor_normalization",
        img,
        axes=(0, 1),
        eps=0.1,
        no_scale=True,
        no_bias=True,
    )
    im = [((1, 2, 4, 5), -1.0, 1.0)]
    add("interpolate_linear", "interpolate", im, output_size=(7, 3))
    add("interpolate_linear_ac", "interpolate", im, output_size=(7, 3), align_corners=True)
    add("interpolate_linear_hp", "interpolate", im, output_size=(6, 8), half_pixel=True)
    add("interpolate_linear_1d", "interpolate", [((2, 3, 5), -1.0, 1.0)], output_size=(8,))
    add("interpolate_nearest", "interpolate", im, output_size=(7, 3), mode="nearest")
    add(
        "interpolate_nearest_hp",
        "interpolate",
        im,
        output_size=(7, 8),
        mode="nearest",
        half_pixel=True,
        half_pixel_for_nn=True,
    )
    add("onnx_resize_nearest", "onnx_resize", im, sizes=(1, 2, 7, 3))
    add(
        "onnx_resize_linear",
        "onnx_resize",
        im,
        scales=(1.0, 1.0, 2.0, 1.5),
        mode="linear",
    )
    add(
        "onnx_resize_cubic_ac",
        "onnx_resize",
        im,
        sizes=(1, 2, 6, 9),
        mode="cubic",
        coordinate_transformation_mode="align_corners",
    )
    add(
        "onnx_resize_nearest_floor",
        "onnx_resize",
        im,
        scales=(1.0, 1.0, 2.0, 2.0),
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
    )
    add(
        "onnx_resize_linear_pt",
        "onnx_resize",
        im,
        sizes=(1, 2, 1, 3),
        mode="linear",
        coordinate_transformation_mode="pytorch_half_pixel",
    )
    add("fixed_point_quantize", "fixed_point_quantize", [((2, 3, 4), -9.0, 9.0)])
    add(
        "fixed_point_quantize_u4",
        "fixed_point_quantize",
        [((2, 3, 4), -1.0, 2.0)],
        sign=False,
        n=4,
        delta=0.125,
    )
    add(
        "fixed_point_quantize_halves",
        "fixed_point_quantize",
        [("halves", (2, 3, 4))],
        n=6,
        delta=1.0,
    )
    add("prune", "prune", u)
    add("prune_half", "prune", u2, rate=0.5)
    add("prune_zero", "prune", u, rate=0.0)
    add(
        "bw_conv",
        "binary_weight_convolution",
        img,
        [("W", (4, 3, 3, 3)), ("Wb", (4, 3, 3, 3)), ("alpha", (4,)), ("b", (4,))],
        pad=(1, 1),
    )
    add(
        "bw_conv_group_nobias",
        "binary_weight_convolution",
        img,
        [("W", (6, 1, 2, 2)), ("Wb", (6, 1, 2, 2)), ("alpha", (6,))],
        stride=(2, 1),
        group=3,
    )
    add("affine_grid", "affine_grid", [((2, 2, 3), -1.0, 1.0)], size=(3, 4))
    add("affine_grid_ac", "affine_grid", [((2, 2, 3), -1.0, 1.0)], size=(5, 2), align_corners=True)
    add("spectral_norm", "spectral_norm", [((4, 6), -1.0, 1.0), ((4,), -1.0, 1.0)], test=True)
    add(
        "spectral_norm_dim1",
        "spectral_norm",
        [((3, 4, 2), -1.0, 1.0), ((4,), -1.0, 1.0)],
        dim=1,
        itr=2,
        eps=1e-3,
        test=True,
    )
    second_new = len(c)
    # reductions, sorting, shape and one-hot (appended so earlier
    # cases keep their random inputs)
    add("reduce_sum", "reduce_sum", u)
    add("reduce_sum_2d", "reduce_sum", u2)
    add("reduce_mean", "reduce_mean", u)
    add("reduce_mean_2d", "reduce_mean", u2)
    add("cumprod_ax1", "cumprod", u, axis=1)
    add("cumprod_excl_rev", "cumprod", u, axis=2, exclusive=True, reverse=True)
    add("cumprod_rev_ax0", "cumprod", u2, axis=0, reverse=True)
    add("shape_all", "shape", u)
    add("shape_1_2", "shape", u, start=1, end=2)
    add("shape_neg", "shape", img, start=-3, end=-1)
    add("sort_last", "sort", u)
    add("sort_ax1_rev", "sort", u, axis=1, reverse=True)
    add("sort_ax0", "sort", u2, axis=0)
    add("top_k_data", "top_k_data", u, k=3)
    add("top_k_data_abs_keep", "top_k_data", u, k=5, abs=True, reduce=False)
    add("top_k_data_b2", "top_k_data", u, k=2, base_axis=2)
    add("top_k_data_small", "top_k_data", u2, k=2, largest=False)
    add("one_hot_1", "one_hot", [("int", (5, 1), 4)], shape=(4,))
    add("one_hot_2", "one_hot", [("int", (2, 3, 2), 3)], shape=(3, 4))
    # matrices and remainders
    add("trilu_upper", "trilu", u)
    add("trilu_lower_k1", "trilu", u, k=1, upper=False)
    add("trilu_upper_kneg", "trilu", u2, k=-1)
    add("matrix_diag", "matrix_diag", u)
    add("matrix_diag_1d", "matrix_diag", [((4,), -2.0, 2.0)])
    add("matrix_diag_part", "matrix_diag_part", [((2, 3, 3), -2.0, 2.0)])
    add("matrix_diag_part_2d", "matrix_diag_part", [((4, 4), -2.0, 2.0)])
    add("eye_like", "eye_like", u2)
    add("eye_like_k", "eye_like", [((4, 3), -1.0, 1.0)], k=-1)
    mod_in = [((2, 3, 4), -5.0, 5.0), ((2, 3, 4), 0.5, 2.0)]
    add("mod2", "mod2", mod_in)
    add("mod2_fmod", "mod2", mod_in, fmod=True)
    mod_neg = [((2, 3, 4), -5.0, 5.0), ((1, 3, 1), -2.0, -0.5)]
    add("mod2_neg_bc", "mod2", mod_neg)
    add("mod2_fmod_neg_bc", "mod2", mod_neg, fmod=True)
    # gathering, grids and depthwise convolution
    add("gather_nd_2", "gather_nd", [((2, 3, 4), -1, 1), ("int", (2, 5), 2)])
    add("gather_nd_1", "gather_nd", [((3, 4), -1, 1), ("int", (1, 2, 3), 3)])
    add("meshgrid_xy", "meshgrid", [((2,), -1, 1), ((3,), -1, 1)])
    add("meshgrid_ij3", "meshgrid", [((2,), -1, 1), ((3,), -1, 1), ((4,), -1, 1)], ij_indexing=True)
    add("meshgrid_xy3", "meshgrid", [((2,), -1, 1), ((3,), -1, 1), ((4,), -1, 1)])
    add("dwconv", "depthwise_convolution", img, [("W", (3, 3, 3)), ("b", (3,))], pad=(1, 1))
    add(
        "dwconv_mult",
        "depthwise_convolution",
        img,
        [("W", (6, 2, 3))],
        stride=(2, 1),
        dilation=(1, 2),
        multiplier=2,
    )
    add("dwdeconv", "depthwise_deconvolution", img, [("W", (3, 3, 3)), ("b", (3,))], pad=(1, 1))
    add(
        "dwdeconv_div",
        "depthwise_deconvolution",
        [((2, 4, 5, 5), -1, 1)],
        [("W", (4, 2, 3))],
        stride=(2, 1),
        divisor=2,
    )
    add("shift_nearest", "shift", u, shifts=(1, -1))
    add("shift_reflect", "shift", u, shifts=(2, -3), border_mode="reflect")
    add("shift_reflect_3", "shift", img, shifts=(1, 4, -2), border_mode="reflect")
    bn = [
        ("beta", (1, 3, 1, 1)),
        ("gamma", (1, 3, 1, 1)),
        ("mean", (1, 3, 1, 1)),
        ("var", (1, 3, 1, 1)),
    ]
    add("fused_bn", "fused_batch_normalization", img, bn, batch_stat=False, eps=1e-3)
    add("fused_bn_z", "fused_batch_normalization", img + img, bn, batch_stat=False)
    add("fused_bn_batch_z", "fused_batch_normalization", img + img, bn)
    add("scatter_nd_1", "scatter_nd", [((4,), -1, 1), ("perm", (6,))], shape=(6,))
    add("scatter_nd_2", "scatter_nd", [((3, 4), -1, 1), ("perm", (3, 5))], shape=(3, 5, 4))
    # functions without inputs
    add("arange", "arange", [], start=-1.0, stop=3.0, step=0.5)
    add("arange_neg", "arange", [], start=5.0, stop=-2.0, step=-1.5)
    add("linspace", "linspace", [], start=-1.0, stop=2.0, num=7)
    add("linspace_1", "linspace", [], start=3.0, stop=4.0, num=1)
    add("constant", "constant", [], val=2.5, shape=(2, 3))
    sa = [((2, 3, 4), -1, 1), ("int", (2, 3, 4), 2), ((2, 3, 4), -1, 1)]
    add("scatter_add_ax0", "scatter_add", sa, axis=0)
    sa1 = [((2, 3, 4), -1, 1), ("int", (2, 2, 4), 3), ((2, 2, 4), -1, 1)]
    add("scatter_add_ax1", "scatter_add", sa1, axis=1)
    ss = [("sorted", (2, 3, 6)), ((2, 3, 4), -2.5, 2.5)]
    add("search_sorted", "searchsorted", ss)
    add("search_sorted_right", "searchsorted", [("sorted", (5,)), ("sorted", (7,))], right=True)
    add(
        "einsum_matmul", "einsum", [((2, 3, 4), -1, 1), ((2, 4, 5), -1, 1)], equation="bij,bjk->bik"
    )
    add("einsum_trace_t", "einsum", [((3, 3, 4), -1, 1)], equation="iij->ji")
    add(
        "einsum_outer3",
        "einsum",
        [((3,), -1, 1), ((4,), -1, 1), ((3, 4), -1, 1)],
        equation="i,j,ij->j",
    )
    # warps, correlation, spectra, special convolutions and detection
    # (appended so earlier cases keep their random inputs)
    from nnabla_export_cases_signal import signal_cases

    signal_cases(add)
    for case in c[second_new:]:
        SEED_SHIFT[case[0]] = second_new - first_new
    # quantisation, INQ, fused convolution, RoiAlign and BoolScatter: seeded
    # from GROUP_SEED (the j-th case with GROUP_SEED + j + 1) wherever the
    # block stands, so that cases appended before it leave these as made
    group = len(c)
    add("pow2_quantize", "pow2_quantize", [("zeros", (2, 3, 4))])
    add(
        "pow2_quantize_u_zero",
        "pow2_quantize",
        [((2, 3, 4), -0.2, 1.0)],
        sign=False,
        n=5,
        m=0,
    )
    add("pow2_quantize_n3", "pow2_quantize", [((2, 3, 4), -1.5, 1.5)], n=3, m=0)
    add(
        "pow2_quantize_nozero",
        "pow2_quantize",
        [("zeros", (3, 5))],
        with_zero=False,
        n=5,
        m=2,
    )
    add(
        "pow2_quantize_u_nozero",
        "pow2_quantize",
        [((2, 3, 4), -0.5, 3.0)],
        sign=False,
        with_zero=False,
        n=3,
        m=1,
    )
    mm = [
        ((2, 3, 4), -1.5, 1.5),
        ("const", (1, 1, 1), -0.8),
        ("const", (1, 1, 1), 0.9),
        ("const", (1, 1, 1), 0.0),
        ("const", (1, 1, 1), 255.0),
    ]
    add("min_max_quantize", "base.min_max_quantize", mm)
    mmc = [
        ((2, 3, 4), -2.0, 2.0),
        ((1, 3, 1), -1.0, -0.2),
        ((1, 3, 1), 0.3, 1.0),
        ("const", (1, 3, 1), -8.0),
        ("const", (1, 3, 1), 7.0),
    ]
    add("min_max_quantize_channel", "base.min_max_quantize", mmc)
    add("min_max_quantize_x_channel", "base.min_max_quantize", mmc, x_min_max=True)
    add("min_max_quantize_x", "base.min_max_quantize", mm, x_min_max=True)
    mmn = [
        ((3, 5), -1.0, 1.0),
        ("const", (1, 1), 0.2),
        ("const", (1, 1), 0.21),
        ("const", (1, 1), 0.0),
        ("const", (1, 1), 15.0),
    ]
    add("min_max_quantize_narrow", "base.min_max_quantize", mmn, eps=0.05)
    add(
        "inq_affine",
        "base.inq_affine",
        [((2, 6), -1, 1)],
        [("W", (6, 4)), ("indicator", (6, 4)), ("b", (4,))],
    )
    add(
        "inq_affine_all_b5",
        "base.inq_affine",
        [((2, 3, 2, 2), -1, 1)],
        [("W", (4, 5)), ("indicator", (4, 5))],
        base_axis=2,
        num_bits=5,
        inq_iterations=(0,),
    )
    add(
        "inq_conv",
        "base.inq_convolution",
        img,
        [("W", (4, 3, 3, 3)), ("indicator", (4, 3, 3, 3)), ("b", (4,))],
        pad=(1, 1),
    )
    add(
        "inq_conv_group_b3",
        "base.inq_convolution",
        img,
        [("W", (6, 1, 2, 2)), ("indicator", (6, 1, 2, 2))],
        stride=(2, 1),
        group=3,
        num_bits=3,
    )
    add(
        "fused_conv_bias_relu",
        "base.fused_convolution",
        img,
        [("weight", (4, 3, 3, 3)), ("bias", (4,))],
        pad=(1, 1),
    )
    fbn = [
        ("weight", (4, 3, 3, 3)),
        ("beta", (1, 4, 1, 1)),
        ("gamma", (1, 4, 1, 1)),
        ("mean", (1, 4, 1, 1)),
        ("var", (1, 4, 1, 1)),
    ]
    add(
        "fused_conv_bn_z_leaky",
        "base.fused_convolution",
        img + [((2, 4, 6, 6), -1, 1)],
        fbn,
        pad=(1, 1),
        batch_stat=False,
        nonlinearity="leaky_relu",
        nonlinearity_args=(0.1,),
    )
    add(
        "fused_conv_bn_batch_reflect",
        "base.fused_convolution",
        img,
        fbn,
        pad=(2, 0, 1, 1),
        stride=(2, 2),
        pad_mode="reflect",
        nonlinearity="sigmoid",
    )
    add(
        "fused_conv_bias_z_const",
        "base.fused_convolution",
        img + [((2, 6, 7, 4), -1, 1)],
        [("weight", (6, 1, 2, 3)), ("bias", (6,))],
        pad=(1, 0),
        group=3,
        pad_mode="constant",
        constant_value=0.5,
        nonlinearity="identity",
    )
    add(
        "fused_conv_z_elu_repeat",
        "base.fused_convolution",
        img + [((2, 2, 6, 6), -1, 1)],
        [("weight", (2, 3, 3, 3))],
        pad=(1, 1),
        pad_mode="repeat",
        nonlinearity="elu",
        nonlinearity_args=(0.5,),
    )
    add(
        "fused_conv_relu6_dil",
        "base.fused_convolution",
        [((2, 3, 6, 6), -4.0, 4.0)],
        [("weight", (3, 3, 2, 2))],
        dilation=(2, 1),
        nonlinearity="relu6",
    )
    add(
        "fused_conv_tanh_bn",
        "base.fused_convolution",
        img,
        fbn,
        batch_stat=False,
        nonlinearity="tanh",
    )
    feat = [((2, 3, 8, 8), -1.0, 1.0)]
    add("roi_align", "roi_align", feat + [("boxes", (4, 5), 2, 8.0)], output_size=(2, 2))
    add(
        "roi_align_scaled_sr2",
        "roi_align",
        feat + [("boxes", (3, 5), 2, 24.0)],
        output_size=(3, 2),
        spatial_scale=(0.25, 0.5),
        sampling_ratio=2,
    )
    add(
        "roi_align_small_sr1",
        "roi_align",
        [((1, 2, 5, 7), -1.0, 1.0), ("boxes", (5, 5), 1, 3.0)],
        output_size=(2, 3),
        spatial_scale=(2.0, 1.0),
        sampling_ratio=1,
    )
    add("bool_scatter", "bool_scatter", [((4, 2), -1, 1), ("mask", (2, 3), 4)])
    add("bool_scatter_1d", "bool_scatter", [((3,), -1, 1), ("mask", (5,), 3)])
    add("bool_scatter_short", "bool_scatter", [((2, 3), -1, 1), ("mask", (2, 2), 3)])
    add(
        "bool_scatter_inplace",
        "bool_scatter",
        [((3, 2, 2), -1, 1), ("mask", (2, 2), 3), ((2, 2, 2, 2), -1, 1)],
    )
    for case in c[group:]:
        SEED_SHIFT[case[0]] = group - GROUP_SEED
    # multi-layer recurrent functions as users save them: 5 steps, 2 or 3
    # layers, one or two directions, `training` as saved (True is nnabla's
    # default, dropout 0) (appended: the cases above keep their inputs)
    recurrent_deep_cases(add)
    return c


def recurrent_deep_cases(add):
    """LSTM with 2 and 3 layers, GRU and RNN with 2, one or two
    directions; x (5, 2, 3), hidden 4."""
    gates = {"lstm": 4, "gru": 3, "rnn": 0}
    runs = [("lstm", 2), ("lstm", 3), ("gru", 2), ("rnn", 2)]
    for (fn, L), D, train in (
        (r, d, t) for r in runs for d in (1, 2) for t in (False, True)
    ):
        g = gates[fn]
        gs = (g,) if g else ()
        states = [((5, 2, 3), -1, 1)] + [((L, D, 2, 4), -1, 1)] * (2 if fn == "lstm" else 1)
        params = [
            ("weight_l0", (D,) + gs + (4, 3 + 4)),
            ("weight", (L - 1, D) + gs + (4, D * 4 + 4)),
            ("bias", (L, D) + ((4,) if g else ()) + (4,)),
        ]
        add(
            f"{fn}_t5_l{L}_d{D}" + ("_train" if train else ""),
            fn,
            states,
            params,
            num_layers=L,
            bidirectional=D == 2,
            training=train,
        )


def value(spec, rng):
    if spec[0] == "bool":
        return (rng.random(spec[1]) < 0.5).astype(np.float32)
    if spec[0] == "int":
        return rng.integers(0, spec[2], spec[1]).astype(np.float32)
    if spec[0] == "sorted":
        # ascending along the last axis, on a grid of halves so that values
        # and sequence elements meet
        return np.sort(rng.integers(-4, 5, spec[1]) / 2.0, axis=-1).astype(np.float32)
    if spec[0] == "perm":
        # index tuples along the first axis, all distinct (row k: distinct
        # values below spec[1][k], as many as the tuples)
        n = {(6,): 4, (3, 5): 3}[spec[1]]
        return np.stack([rng.permutation(h)[:n] for h in spec[1]]).astype(np.float32)
    if spec[0] == "zeros":
        v = rng.uniform(-4, 4, spec[1]).astype(np.float32)
        v.reshape(-1)[::5] = 0.0
        return v
    if spec[0] == "halves":
        return (rng.integers(-600, 600, spec[1]) / 2.0).astype(np.float32)
    if spec[0] == "mask":
        # exactly spec[2] nonzero entries
        v = np.zeros(int(np.prod(spec[1])), np.float32)
        v[rng.permutation(v.size)[: spec[2]]] = 1.0
        return v.reshape(spec[1])
    if spec[0] == "boxes":
        # (batch index, x1, y1, x2, y2) rows over spec[2] samples of an
        # image spec[3] wide and high (corners may fall a little outside)
        k, size = spec[1][0], spec[3]
        b = rng.integers(0, spec[2], (k, 1))
        lo = rng.uniform(-0.1 * size, 0.6 * size, (k, 2))
        wh = rng.uniform(0.05 * size, 0.6 * size, (k, 2))
        return np.concatenate([b, lo, lo + wh], axis=1).astype(np.float32)
    if spec[0] == "const":
        return np.full(spec[1], spec[2], np.float32)
    if spec[0] == "quadrants":
        v = rng.choice([-1.5, -0.5, 0.0, 0.5, 1.5], spec[1]).astype(np.float32)
        return v
    if spec[0] == "detections":
        # boxes (centre x, y in [0, extent) (default 10), size in [1, 5)),
        # objectness and class probabilities in [0, 1): many overlaps
        v = rng.uniform(0.0, 1.0, spec[1])
        v[..., 0:2] *= spec[2] if len(spec) > 2 else 10.0
        v[..., 2:4] = 1.0 + 4.0 * v[..., 2:4]
        return v.astype(np.float32)
    if spec[0] == "special":
        v = rng.uniform(-2, 2, spec[1]).astype(np.float32)
        flat = v.reshape(-1)
        flat[1], flat[4], flat[7], flat[9] = np.nan, np.inf, -np.inf, np.nan
        return v
    shape, lo, hi = spec
    return rng.uniform(lo, hi, shape).astype(np.float32)


def build(case, rng):
    import nnabla as nn
    import nnabla.functions as F

    name, fn, inputs, params, kw = case
    nn.clear_parameters()
    xs, feeds = [], {}
    for i, spec in enumerate(inputs):
        v = value(spec, rng)
        x = nn.Variable(v.shape)
        x.d = v
        xs.append(x)
        feeds[f"x{i}"] = v
    ps = []
    with nn.parameter_scope(name):
        for pname, shape in params:
            init = rng.uniform(-1, 1, shape).astype(np.float32)
            if pname == "var":
                init = np.abs(init) + 0.5
            if pname == "indicator":
                init = (init < 0.0).astype(np.float32)
            p = nn.parameter.get_parameter_or_create(pname, shape, init)
            ps.append(p)
    if fn in ("rnn", "lstm", "gru"):
        # weight_l0 positional, the optional weight and bias by name
        kw = dict(kw, **{pn: p for (pn, _), p in zip(params[1:], ps[1:])})
        ps = ps[:1]
    mod = F
    if fn.startswith("base."):
        import nnabla.function_bases as mod

        fn = fn[len("base.") :]
    if fn == "fused_convolution":
        # the optional inputs by name; z is the second data input
        kw = dict(kw, **{pn: p for (pn, _), p in zip(params[1:], ps[1:])})
        if "var" in kw:
            kw["variance"] = kw.pop("var")
        if len(xs) == 2:
            kw["z"] = xs[1]
        y = mod.fused_convolution(xs[0], ps[0], **kw)
    elif fn == "deformable_convolution":
        # x, weight, offset, mask, bias: the offset and mask are inputs
        mask = xs[2] if len(xs) > 2 else None
        bias = ps[1] if len(ps) > 1 else None
        y = F.deformable_convolution(xs[0], ps[0], xs[1], mask, bias, **kw)
    elif fn == "fused_batch_normalization" and len(xs) == 2:
        # the residual z is a keyword input after the parameters
        kw = dict(kw, z=xs[1])
        y = getattr(mod, fn)(xs[0], *ps, **kw)
    else:
        y = getattr(mod, fn)(*xs, *ps, **kw)
    ys = list(y) if isinstance(y, (list, tuple)) else [y]
    return feeds, {f"x{i}": x for i, x in enumerate(xs)}, ys


def check(cases_dir, onnx_dir, report):
    """Runs every ONNXDIR/NAME.onnx in onnxruntime on NAME.in.npz and
    compares with nnabla's NAME.out.npz (rtol 1e-4 of the largest value)."""
    import onnxruntime as ort

    counts, rows = {"pass": 0, "wrong": 0, "error": 0}, []
    for f in sorted(os.listdir(onnx_dir)):
        if not f.endswith(".onnx"):
            continue
        name = f[: -len(".onnx")]
        row = {"case": name}
        try:
            sess = ort.InferenceSession(
                os.path.join(onnx_dir, f), providers=["CPUExecutionProvider"]
            )
            ins = np.load(os.path.join(cases_dir, name + ".in.npz"))
            want = np.load(os.path.join(cases_dir, name + ".out.npz"))
            got = sess.run(None, {i.name: ins[i.name] for i in sess.get_inputs()})
            worst = 0.0
            for k, g in enumerate(got):
                w = want[f"y{k}"]
                both_nan = np.isnan(g) & np.isnan(w)
                same_inf = np.isinf(w) & (g == w)
                ok = ~(both_nan | same_inf)
                scale = max(1e-6, float(np.abs(w[ok]).max(initial=0.0)))
                err = float(np.abs(g[ok] - w[ok]).max(initial=0.0)) / scale
                worst = max(worst, err if g.shape == w.shape else float("inf"))
            row["error"] = worst
            row["status"] = "pass" if worst <= 1e-4 else "wrong"
        except Exception as e:  # noqa: BLE001 - reported per case
            row["status"], row["message"] = "error", str(e)
        counts[row["status"]] += 1
        rows.append(row)
        if row["status"] != "pass":
            print(name, row)
    print(json.dumps(counts))
    if report:
        with open(report, "w") as f:
            json.dump({"counts": counts, "cases": rows}, f, indent=1)
    return counts["wrong"] + counts["error"] == 0


def main():
    import sys

    if len(sys.argv) > 1 and sys.argv[1] == "check":
        ap = argparse.ArgumentParser(description="onnxruntime against nnabla")
        ap.add_argument("cases")
        ap.add_argument("onnx")
        ap.add_argument("--report")
        args = ap.parse_args(sys.argv[2:])
        sys.exit(0 if check(args.cases, args.onnx, args.report) else 1)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--only", help="regular expression on case names")
    args = ap.parse_args()
    import nnabla as nn
    from nnabla.utils.save import save

    os.makedirs(args.out, exist_ok=True)
    made = []
    for k, case in enumerate(cases()):
        name = case[0]
        if args.only and not re.search(args.only, name):
            continue
        rng = np.random.default_rng(k + 1 - SEED_SHIFT.get(name, 0))
        feeds, xs, ys = build(case, rng)
        outs = {f"y{i}": y for i, y in enumerate(ys)}
        contents = {
            "networks": [
                {"name": name, "batch_size": 1, "outputs": outs, "names": xs},
            ],
            "executors": [
                {
                    "name": "runtime",
                    "network": name,
                    "data": list(xs),
                    "output": list(outs),
                },
            ],
        }
        path = os.path.join(args.out, name)
        save(path + ".nnp", contents, include_params=True, variable_batch_size=False)
        np.savez(path + ".in.npz", **feeds)
        if case[1] in ("fft", "ifft"):
            from nnabla_export_cases_signal import formula_reference

            np.savez(path + ".out.npz", y0=formula_reference(case[1], feeds["x0"], case[4]))
        made.append({"name": name, "function": case[1], "kwargs": repr(case[4])})
        if case[1] in ("fft", "ifft"):
            made[-1]["reference"] = "documented formula (numpy): nnabla 1.39's CPU has no FFT"
        nn.clear_parameters()
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump(made, f, indent=1)
    print(f"{len(made)} cases written to {args.out}")


if __name__ == "__main__":
    main()
