#!/usr/bin/env python3
"""Single-operator ONNX cases whose parameters are constants (initializers).

The ONNX backend node tests feed every input at run time, so an import that needs constant
parameters (Slice's starts, Pad's pads, Gather's indices, Tile's repeats, a grouped Conv's
weights, ...) refuses them. These cases give the same operators constant parameters, in the
suite layout of `onnx_conformance.py generate` (OUT/<case>/{model.onnx, inputs.npz,
expected.npz, case.json}), so `onnx_conformance.py run OUT ...` checks them in the real
runtimes. Inputs are seeded random numbers; expected outputs come from onnxruntime, except
LRN of an even size, which onnxruntime does not take: the specification's formula in numpy
(onnx's reference evaluator sums the window only for channels below the batch size).
The `range_dyn_*` cases are the exception to the title: `Range` with its start, limit and
delta fed at run time, positive and negative steps, f32, f64 and the integers (TenniS counts a
range's steps otherwise than ONNX; the import computes ONNX's count).

usage: const_param_cases.py [--venv DIR] OUT
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import onnx_conformance as oc  # noqa: E402


def cases():
    """(name, opset, op, inputs [(name, array)], constants [(name, array)], attrs, n_outputs)."""
    import numpy as np

    r = np.random.default_rng(20261126)

    def x(*shape):
        return r.standard_normal(shape).astype(np.float32)

    def i64(*v):
        return np.array(v, dtype=np.int64)

    c = []
    a = x(3, 4, 5)
    c += [
        (
            "slice_2axes",
            13,
            "Slice",
            [("x", a)],
            [("s", i64(1, 0)), ("e", i64(3, -1)), ("ax", i64(0, 2))],
            {},
            1,
        ),
        (
            "slice_steps",
            13,
            "Slice",
            [("x", a)],
            [
                ("s", i64(0, 4, 1)),
                ("e", i64(9, -100, 5)),
                ("ax", i64(0, 1, 2)),
                ("st", i64(2, -1, 3)),
            ],
            {},
            1,
        ),
        (
            "slice_neg_step_end",
            13,
            "Slice",
            [("x", a)],
            [("s", i64(-1)), ("e", i64(-9)), ("ax", i64(2)), ("st", i64(-2))],
            {},
            1,
        ),
        (
            "slice_opset9",
            9,
            "Slice",
            [("x", a)],
            [],
            {"starts": [1, -3], "ends": [100, -1], "axes": [1, 2]},
            1,
        ),
        ("split_attr_opset11", 11, "Split", [("x", a)], [], {"axis": 2, "split": [1, 3, 1]}, 3),
        ("split_input_opset13", 13, "Split", [("x", a)], [("sp", i64(1, 2))], {"axis": 0}, 2),
        ("split_equal_axis1", 13, "Split", [("x", a)], [], {"axis": -2}, 2),
        ("gather_axis0", 13, "Gather", [("x", a)], [("i", i64(2, 0, 2, 1).reshape(2, 2))], {}, 1),
        ("gather_axis1_neg", 13, "Gather", [("x", a)], [("i", i64(-1, 0, -3))], {"axis": 1}, 1),
        (
            "gather_scalar",
            13,
            "Gather",
            [("x", a)],
            [("i", np.array(3, dtype=np.int64))],
            {"axis": -1},
            1,
        ),
        ("tile_3d", 13, "Tile", [("x", a)], [("rp", i64(2, 1, 3))], {}, 1),
        (
            "pad_const_value",
            13,
            "Pad",
            [("x", a)],
            [("p", i64(1, 0, 2, 0, 3, 1)), ("v", np.array(1.5, np.float32))],
            {},
            1,
        ),
        (
            "pad_axes_opset18",
            18,
            "Pad",
            [("x", x(2, 3, 4, 5))],
            [("p", i64(1, 2, 0, 3)), ("v", np.array(-2.0, np.float32)), ("ax", i64(-1, 1))],
            {},
            1,
        ),
        (
            "pad_attr_opset7",
            7,
            "Pad",
            [("x", x(2, 3, 4))],
            [],
            {"pads": [0, 1, 2, 0, 0, 1], "value": 0.25},
            1,
        ),
        ("expand_rank_up", 13, "Expand", [("x", x(3, 1))], [("sh", i64(2, 3, 4))], {}, 1),
        ("expand_both", 13, "Expand", [("x", x(1, 4, 1))], [("sh", i64(3, 1, 5))], {}, 1),
        (
            "reduce_mean_axes_attr",
            13,
            "ReduceMean",
            [("x", x(2, 3, 4, 5))],
            [],
            {"axes": [0, 2], "keepdims": 0},
            1,
        ),
        (
            "reduce_mean_axes_input",
            18,
            "ReduceMean",
            [("x", x(2, 3, 4, 5))],
            [("ax", i64(-1, 1))],
            {},
            1,
        ),
        ("reduce_mean_all", 18, "ReduceMean", [("x", x(2, 3, 4))], [], {"keepdims": 0}, 1),
        (
            "reduce_sum_axes_input",
            13,
            "ReduceSum",
            [("x", x(2, 3, 4, 5))],
            [("ax", i64(1, 3))],
            {"keepdims": 0},
            1,
        ),
        ("reduce_sum_attr_opset11", 11, "ReduceSum", [("x", x(2, 3, 4))], [], {"axes": [-1]}, 1),
        ("reduce_sum_noop", 13, "ReduceSum", [("x", x(2, 3))], [], {"noop_with_empty_axes": 1}, 1),
        ("pow_square", 13, "Pow", [("x", x(2, 3, 4))], [("y", np.array(2.0, np.float32))], {}, 1),
        ("pow_int_cube", 13, "Pow", [("x", x(3, 4))], [("y", np.array([3], np.int64))], {}, 1),
        (
            "pow_sqrt",
            13,
            "Pow",
            [("x", np.abs(x(2, 5)) + 0.1)],
            [("y", np.array(0.5, np.float32))],
            {},
            1,
        ),
        ("cast_float_to_float", 13, "Cast", [("x", x(2, 3))], [], {"to": 1}, 1),
    ]
    neg = -np.abs(x(3, 4, 5))
    neg[1, 2] = neg[0, 2]  # ties: the first index wins
    c += [
        ("argmax_negative_ties", 13, "ArgMax", [("x", neg)], [], {"axis": 0, "keepdims": 0}, 1),
        ("argmax_mixed_axis2", 13, "ArgMax", [("x", x(3, 4, 5))], [], {"axis": -1}, 1),
    ]
    img = x(1, 3, 4, 5)
    f32 = np.float32
    c += [
        (
            "lrn_size4",
            13,
            "LRN",
            [("x", x(2, 6, 3, 4))],
            [],
            {"size": 4, "alpha": 0.01, "beta": 0.5, "bias": 2.0},
            1,
        ),
        ("lrn_size5", 13, "LRN", [("x", x(1, 7, 2, 3))], [], {"size": 5}, 1),
        (
            "resize_scales_half_pixel",
            13,
            "Resize",
            [("x", img)],
            [("", None), ("sc", np.array([1, 1, 2, 3], f32))],
            {"mode": "nearest"},
            1,
        ),
        (
            "resize_sizes_asymmetric_floor",
            13,
            "Resize",
            [("x", img)],
            [("", None), ("", None), ("sz", i64(1, 3, 12, 5))],
            {
                "mode": "nearest",
                "coordinate_transformation_mode": "asymmetric",
                "nearest_mode": "floor",
            },
            1,
        ),
        (
            "resize_opset10",
            10,
            "Resize",
            [("x", img)],
            [("sc", np.array([1, 1, 5, 2], f32))],
            {"mode": "nearest"},
            1,
        ),
        (
            "upsample_opset9",
            9,
            "Upsample",
            [("x", img)],
            [("sc", np.array([1, 1, 2, 2], f32))],
            {"mode": "nearest"},
            1,
        ),
        (
            "upsample_opset7",
            7,
            "Upsample",
            [("x", img)],
            [],
            {"mode": "nearest", "scales": [1.0, 1.0, 3.0, 2.0]},
            1,
        ),
    ]
    for name, g, cin, cout, k, s, p, bias in [
        ("conv_group2", 2, 4, 6, 3, 1, 1, False),
        ("conv_group3_bias_stride", 3, 6, 9, 3, 2, 0, True),
        ("conv_group2_1x1", 2, 8, 4, 1, 1, 0, True),
    ]:
        consts = [("w", x(cout, cin // g, k, k))]
        if bias:
            consts.append(("b", x(cout)))
        attrs = {"group": g, "strides": [s, s], "pads": [p] * 4, "kernel_shape": [k, k]}
        c.append((name, 13, "Conv", [("x", x(1, cin, 7, 6))], consts, attrs, 1))
    # after the others: their random draws leave the earlier cases as they were
    c += [
        ("squeeze_axes_input", 13, "Squeeze", [("x", x(3, 1, 4, 1))], [("ax", i64(-1, 1))], {}, 1),
        ("squeeze_attr_opset11", 11, "Squeeze", [("x", x(1, 3, 1))], [], {"axes": [0]}, 1),
        ("unsqueeze_axes_input", 13, "Unsqueeze", [("x", x(3, 4))], [("ax", i64(0, -1))], {}, 1),
    ]
    c += [
        (
            "reduce_max_axes_attr",
            13,
            "ReduceMax",
            [("x", x(2, 3, 4, 5))],
            [],
            {"axes": [0, 2], "keepdims": 0},
            1,
        ),
        ("reduce_max_axes_input", 18, "ReduceMax", [("x", x(2, 3, 4))], [("ax", i64(-1))], {}, 1),
        ("reduce_min_all", 13, "ReduceMin", [("x", x(3, 4))], [], {"keepdims": 0}, 1),
        ("reduce_min_axes_input", 18, "ReduceMin", [("x", x(2, 3, 4))], [("ax", i64(1, 0))], {}, 1),
    ]
    # the cases below were added by two changes at once, each drawing its random numbers
    # from this point: both draw from the same state, so each keeps the inputs it was made with
    fork = r.bit_generator.state
    ties = np.array([[1, 2, 2, 1, 3, 3, 0], [5, 5, 5, 5, 5, 5, 5]], dtype=np.float32)
    c += [
        ("topk_axis1", 11, "TopK", [("x", x(3, 5, 4))], [("k", i64(2))], {"axis": 1}, 2),
        ("topk_smallest", 11, "TopK", [("x", x(3, 6))], [("k", i64(3))], {"largest": 0}, 2),
        ("topk_opset9_attr", 9, "TopK", [("x", x(2, 7))], [], {"k": 4}, 2),
        ("topk_ties", 11, "TopK", [("x", ties)], [("k", i64(4))], {}, 2),
        (
            "topk_ties_smallest_axis0",
            11,
            "TopK",
            [("x", ties.T.copy())],
            [("k", i64(5))],
            {"axis": 0, "largest": 0},
            2,
        ),
    ]
    idx_q2 = np.array([[0, -1], [3, 1], [-2, 0]], dtype=np.int64)
    c += [
        (
            "gathernd_q2_negative_input",
            13,
            "GatherND",
            [("x", x(4, 3, 2)), ("i", idx_q2)],
            [],
            {},
            1,
        ),
        (
            "scatternd_q2_negative_input",
            13,
            "ScatterND",
            [("x", x(4, 3, 2)), ("i", idx_q2), ("u", x(3, 2))],
            [],
            {},
            1,
        ),
        (
            "scatternd_q1_const_indices",
            13,
            "ScatterND",
            [("x", x(5, 2, 3)), ("u", x(2, 2, 3))],
            [("i", np.array([[-1], [1]], dtype=np.int64))],
            {"_order": ["x", "i", "u"]},
            1,
        ),
    ]
    rois = np.array(
        [[0.5, 1.0, 6.0, 7.5], [2.0, 0.0, 8.5, 5.0], [-1.0, 3.0, 4.0, 16.0]], dtype=np.float32
    )
    c += [
        (
            "roialign_adaptive_opset10",
            10,
            "RoiAlign",
            [("x", x(2, 3, 8, 9)), ("r", rois), ("b", i64(1, 0, 1))],
            [],
            {"output_height": 3, "output_width": 2, "spatial_scale": 0.5, "sampling_ratio": 0},
            1,
        ),
    ]
    # Slice with its parameters fed at run time, at the bounds where TenniS's clamping differs
    c += [
        (
            "slice_runtime_negative_step_edges",
            13,
            "Slice",
            [
                ("x", x(5, 6, 4)),
                ("s", i64(4, -10)),
                ("e", i64(-5, -7)),
                ("ax", i64(0, -2)),
                ("st", i64(-1, -2)),
            ],
            [],
            {},
            1,
        ),
        (
            "slice_runtime_const_axes",
            13,
            "Slice",
            [("x", x(5, 6, 4)), ("s", i64(1, -3)), ("e", i64(-6, 100))],
            [("ax", i64(1, 2))],
            {},
            1,
        ),
    ]
    # Pad with its pads fed at run time (negative ones crop)
    c += [
        (
            "pad_runtime_pads_negative",
            13,
            "Pad",
            [("x", x(3, 4, 5)), ("p", i64(1, -1, 2, -1, 2, 0))],
            [("v", np.array(0.5, dtype=np.float32))],
            {},
            1,
        ),
        (
            "pad_runtime_pads_axes_opset18",
            18,
            "Pad",
            [("x", x(2, 3, 4)), ("p", i64(0, 1, 2, 1))],
            [("ax", i64(2, -2))],
            {"_order": ["x", "p", "", "ax"]},
            1,
        ),
    ]
    # Not: the node tests have it only at opset 1
    c += [("not_opset13", 13, "Not", [("x", x(3, 4, 5) > 0)], [], {}, 1)]
    r.bit_generator.state = fork
    # int8 linear quantisation per channel: halves (rounded to even) and values past the
    # int8 range (saturated) among the inputs
    q = np.concatenate([x(2, 3, 3) * 300, np.full((2, 3, 1), 2.5, np.float32)], axis=2)
    scale = np.array([0.5, 2.0, 1.0], dtype=np.float32)
    zp8 = np.array([-3, 0, 7], dtype=np.int8)
    c += [
        ("quantize_int8_axis", 13, "QuantizeLinear", [("x", q)], [("s", scale), ("z", zp8)], {}, 1),
        (
            "dequantize_int8_axis",
            13,
            "DequantizeLinear",
            [("x", r.integers(-128, 128, (2, 3, 4)).astype(np.int8))],
            [("s", scale), ("z", zp8)],
            {},
            1,
        ),
    ]
    # GRU in the linear_before_reset=1 form (the node tests have only 0), with biases and an
    # initial state, one direction and both (onnxruntime has no batch-first GRU)
    for name, nd, layout in [("gru_lbr1_bias_h0", 1, 0), ("gru_lbr1_bidirectional", 2, 0)]:
        t, b, i, h = 4, 2, 3, 5
        xin = x(b, t, i) if layout else x(t, b, i)
        h0 = x(b, nd, h) if layout else x(nd, b, h)
        consts = [
            ("w", x(nd, 3 * h, i)),
            ("r", x(nd, 3 * h, h)),
            ("b", x(nd, 6 * h)),
            ("", None),
            ("h0", h0),
        ]
        attrs = {"hidden_size": h, "linear_before_reset": 1, "layout": layout}
        if nd == 2:
            attrs["direction"] = "bidirectional"
        c.append((name, 14, "GRU", [("x", xin)], consts, attrs, 2))
    # f32 cases of operators whose node tests are all f64 (which the NNabla import refuses)
    ax1 = np.array(1, dtype=np.int64)
    c += [
        ("cumsum_f32_axis1", 14, "CumSum", [("x", x(3, 4))], [("ax", ax1)], {}, 1),
        (
            "cumsum_f32_exclusive_reverse",
            14,
            "CumSum",
            [("x", x(2, 5, 3))],
            [("ax", ax1)],
            {"exclusive": 1, "reverse": 1},
            1,
        ),
        (
            "einsum_f32_batch_matmul",
            12,
            "Einsum",
            [("a", x(2, 3, 4)), ("b", x(2, 4, 5))],
            [],
            {"equation": "bij,bjk->bik"},
            1,
        ),
        ("einsum_f32_transpose", 12, "Einsum", [("a", x(3, 4))], [], {"equation": "ij->ji"}, 1),
        (
            "einsum_f32_inner",
            12,
            "Einsum",
            [("a", x(5)), ("b", x(5))],
            [],
            {"equation": "i,i->"},
            1,
        ),
        (
            "reduce_log_sum_exp_f32_axes",
            18,
            "ReduceLogSumExp",
            [("x", x(3, 4, 5))],
            [("ax", i64(1))],
            {"keepdims": 1},
            1,
        ),
        (
            "reduce_log_sum_exp_f32_all",
            13,
            "ReduceLogSumExp",
            [("x", x(3, 4))],
            [],
            {"keepdims": 0},
            1,
        ),
    ]
    # Range with its inputs at run time: TenniS's range counts steps otherwise than ONNX
    # (5, 0, -2: TenniS 2, ONNX 3); the import computes ONNX's count
    for k, (t, start, limit, delta) in enumerate(
        [
            (np.float32, 0.0, 10.0, 3.0),
            (np.float32, 5.0, 0.0, -2.0),
            (np.float32, 1.5, -2.2, -0.7),
            (np.float32, 0.0, 1.0, 0.1),
            (np.float32, 3.0, 1.0, 1.0),
            (np.float64, 1.0, 0.0, -0.25),
            (np.int32, 10, 0, -3),
            (np.int32, 0, 7, 2),
            (np.int32, -5, 5, 4),
            (np.int64, 10, -10, -7),
            (np.int64, 2, 3, 5),
            (np.int16, 3, -4, -2),
        ]
    ):
        c.append(
            (
                "range_dyn_%d" % k,
                11,
                "Range",
                [("s", np.array(start, t)), ("l", np.array(limit, t)), ("d", np.array(delta, t))],
                [],
                {},
                1,
            )
        )
    # Pad's other modes (TenniS: a gather per padded axis); ReflectionPad2d's form first.
    # Last, so that the random numbers of the cases above stay what they were.
    c += [
        ("pad_reflect_hw", 13, "Pad", [("x", x(1, 2, 5, 6))], [("p", i64(0, 0, 2, 1, 0, 0, 1, 3))],
         {"mode": "reflect"}, 1),
        ("pad_edge_3d", 13, "Pad", [("x", x(2, 3, 4))], [("p", i64(1, 0, 2, 0, 3, 1))],
         {"mode": "edge"}, 1),
        ("pad_wrap_opset19", 19, "Pad", [("x", x(2, 3, 4))], [("p", i64(0, 2, 1, 0, 1, 3))],
         {"mode": "wrap"}, 1),
        ("pad_reflect_axes_opset18", 18, "Pad", [("x", x(2, 3, 4, 5))],
         [("p", i64(2, 1, 3, 1)), ("", None), ("ax", i64(-1, 1))], {"mode": "reflect"}, 1),
        # Softplus where TenniS's log(exp(x) + 1) in f32 overflows (x above 88.7)
        ("softplus_wide", 13, "Softplus",
         [("x", np.linspace(-120, 120, 49).astype(np.float32))], [], {}, 1),
        # ReduceLogSum of positive values (its node tests are f64 or feed their axes at run time)
        ("reduce_log_sum_f32_axes", 18, "ReduceLogSum", [("x", np.abs(x(3, 4, 5)) + np.float32(0.5))],
         [("ax", i64(1))], {"keepdims": 1}, 1),
        ("reduce_log_sum_f32_all", 13, "ReduceLogSum", [("x", np.abs(x(3, 4)) + np.float32(0.5))], [],
         {"keepdims": 0}, 1),
    ]
    return c


def lrn(x, size, alpha=1e-4, beta=0.75, bias=1.0):
    """LRN as the ONNX specification defines it, in float64, over the channels of NCHW x."""
    import numpy as np

    c = x.shape[1]
    sq = x.astype(np.float64) ** 2
    s = np.zeros_like(sq)
    for k in range(c):
        lo = max(0, k - (size - 1) // 2)
        hi = min(c - 1, k + -(-(size - 1) // 2))
        s[:, k] = sq[:, lo : hi + 1].sum(axis=1)
    return (x / (bias + alpha / size * s) ** beta).astype(np.float32)


def main():
    args = sys.argv[1:]
    venv = None
    if "--venv" in args:
        i = args.index("--venv")
        venv = args[i + 1]
        del args[i : i + 2]
    oc.ensure_python(venv)
    import onnx
    from onnx import helper, numpy_helper
    import onnxruntime as ort

    ort.set_default_logger_severity(3)

    (out,) = args
    n = 0
    for name, opset, op, inputs, consts, attrs, nout in cases():
        outs = ["y%d" % k for k in range(nout)]
        attrs = dict(attrs)
        # "_order": the node's inputs in another order than inputs, then constants
        order = attrs.pop("_order", [v for v, _ in inputs] + [v for v, _ in consts])
        node = helper.make_node(op, order, outs, **attrs)
        consts = [(v, t) for v, t in consts if v]

        out_types = {
            "ArgMax": [onnx.TensorProto.INT64],
            "TopK": [onnx.TensorProto.FLOAT, onnx.TensorProto.INT64],
            "Not": [onnx.TensorProto.BOOL],
            "QuantizeLinear": [onnx.TensorProto.INT8],
        }.get(op, [onnx.TensorProto.FLOAT] * nout)
        if op == "Range":
            out_types = [helper.np_dtype_to_tensor_dtype(inputs[0][1].dtype)]

        def graph(shapes):
            return helper.make_graph(
                [node],
                name,
                [
                    helper.make_tensor_value_info(
                        v, helper.np_dtype_to_tensor_dtype(t.dtype), t.shape
                    )
                    for v, t in inputs
                ],
                [
                    helper.make_tensor_value_info(o, t, sh)
                    for o, t, sh in zip(outs, out_types, shapes)
                ],
                [numpy_helper.from_array(t, v) for v, t in consts],
            )

        def model(g):
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
            m.ir_version = 8
            return m

        m0 = model(graph([[] for _ in outs]))
        if op == "LRN" and attrs["size"] % 2 == 0:
            got = [lrn(inputs[0][1], **attrs)]  # onnxruntime takes odd sizes only
        else:
            sess = ort.InferenceSession(m0.SerializeToString(), providers=["CPUExecutionProvider"])
            got = sess.run(None, dict(inputs))
        m = model(graph([list(t.shape) for t in got]))
        onnx.checker.check_model(m, full_check=True)
        meta = {
            "expected_from": "onnxruntime",
            "kind": "const-param",
            "rtol": oc.OUR_TOL[0],
            "atol": oc.OUR_TOL[1],
            "tolerance_from": "default",
        }
        oc.write_case(out, "tsm_" + name, m, inputs, list(zip(outs, got)), meta)
        n += 1
    print("wrote %d constant-parameter cases to %s" % (n, out))


if __name__ == "__main__":
    sys.exit(main())
