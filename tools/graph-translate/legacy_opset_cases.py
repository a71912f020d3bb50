#!/usr/bin/env python3
"""ONNX cases of opsets 1 to 6, the forms that changed before opset 7.

Each case is a small graph written with the old operator versions (limited broadcast with
`broadcast`/`axis`, `consumed_inputs`, `is_test`, Reshape's `shape` attribute, Pad's
`paddings`, Cast's string `to`, Split's second input, Tile's `tiles`/`axis`, Upsample's
`height_scale`/`width_scale`, Selu's old defaults, ...), in the suite layout of
`onnx_conformance.py generate` (OUT/<case>/{model.onnx, inputs.npz, expected.npz,
case.json}), so `onnx_conformance.py run OUT ...` checks the import in the real runtimes.

onnxruntime runs no model older than opset 7, so the expected outputs come from onnxruntime
on the same computation written by hand with current operators (the `modern` graph of each
case, in opset 13): the old meaning is taken from the ONNX operator changelog, not from the
import being tested. Inputs are seeded random numbers.

usage: legacy_opset_cases.py [--venv DIR] OUT
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import onnx_conformance as oc  # noqa: E402

MODERN = 13


def cases(np, helper):
    """(name, opset, old nodes, modern nodes, inputs [(name, array)], constants, outputs)."""
    r = np.random.default_rng(20261127)

    def x(*shape):
        return r.standard_normal(shape).astype(np.float32)

    def i64(*v):
        return np.array(v, dtype=np.int64)

    n = helper.make_node
    c = []

    a4 = x(2, 3, 4, 5)
    c.append(
        (
            "add_bcast_axis1_op6",
            6,
            [n("Add", ["x", "b"], ["y"], broadcast=1, axis=1)],
            [n("Add", ["x", "b3"], ["y"])],
            [("x", a4)],
            [("b", x(3)), ("b3s", i64(3, 1, 1))],
            ["y"],
        )
    )
    c[-1][3].insert(0, n("Reshape", ["b", "b3s"], ["b3"]))
    c.append(
        (
            "mul_bcast_axis0_input_op6",
            6,
            [n("Mul", ["x", "b"], ["y"], broadcast=1, axis=0)],
            [n("Reshape", ["b", "s"], ["b2"]), n("Mul", ["x", "b2"], ["y"])],
            [("x", x(2, 3, 4)), ("b", x(2, 3))],
            [("s", i64(2, 3, 1))],
            ["y"],
        )
    )
    c.append(
        (
            "sub_bcast_suffix_op6",
            6,
            [n("Sub", ["x", "b"], ["y"], broadcast=1)],
            [n("Sub", ["x", "b"], ["y"])],
            [("x", x(2, 3, 4)), ("b", x(4))],
            [],
            ["y"],
        )
    )
    c.append(
        (
            "div_same_shape_op1",
            1,
            [n("Div", ["x", "z"], ["y"], consumed_inputs=[0, 0])],
            [n("Div", ["x", "z"], ["y"])],
            [("x", x(3, 4)), ("z", (np.abs(x(3, 4)) + 0.5).astype(np.float32))],
            [],
            ["y"],
        )
    )
    c.append(
        (
            "pow_bcast_scalar_op6",
            6,
            [n("Pow", ["x", "e"], ["y"], broadcast=1)],
            [n("Pow", ["x", "e"], ["y"])],
            [("x", (np.abs(x(2, 3)) + 0.1).astype(np.float32))],
            [("e", np.array([2.0], dtype=np.float32))],
            ["y"],
        )
    )
    c.append(
        (
            "greater_bcast_axis1_op6",
            6,
            [n("Greater", ["x", "b"], ["y"], broadcast=1, axis=1)],
            [n("Reshape", ["b", "s"], ["b2"]), n("Greater", ["x", "b2"], ["y"])],
            [("x", x(2, 3, 4)), ("b", x(3))],
            [("s", i64(3, 1))],
            ["y"],
        )
    )
    c.append(
        (
            "gemm_bcast_op6",
            6,
            [n("Gemm", ["a", "w", "c"], ["y"], broadcast=1, transB=1, alpha=0.5, beta=2.0)],
            [n("Gemm", ["a", "w", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
            [("a", x(3, 4))],
            [("w", x(5, 4)), ("c", x(5))],
            ["y"],
        )
    )
    c.append(
        (
            "gemm_full_c_op1",
            1,
            [n("Gemm", ["a", "w", "c"], ["y"])],
            [n("Gemm", ["a", "w", "c"], ["y"])],
            [("a", x(3, 4))],
            [("w", x(4, 5)), ("c", x(3, 5))],
            ["y"],
        )
    )
    bn = [
        ("scale", x(3)),
        ("bias", x(3)),
        ("mean", x(3)),
        ("var", (np.abs(x(3)) + 0.2).astype(np.float32)),
    ]
    names = ["x", "scale", "bias", "mean", "var"]
    c.append(
        (
            "batchnorm_is_test_op5",
            5,
            [
                n(
                    "BatchNormalization",
                    names,
                    ["y"],
                    is_test=1,
                    epsilon=1e-3,
                    consumed_inputs=[0, 0, 0, 1, 1],
                )
            ],
            [n("BatchNormalization", names, ["y"], epsilon=1e-3)],
            [("x", x(2, 3, 4, 4))],
            bn,
            ["y"],
        )
    )
    c.append(
        (
            "batchnorm_is_test_op6",
            6,
            [n("BatchNormalization", names, ["y"], is_test=1, spatial=1, momentum=0.7)],
            [n("BatchNormalization", names, ["y"])],
            [("x", x(2, 3, 2, 5))],
            bn,
            ["y"],
        )
    )
    c.append(
        (
            "dropout_is_test_op6",
            6,
            [n("Dropout", ["x"], ["d"], is_test=1, ratio=0.3), n("Relu", ["d"], ["y"])],
            [n("Relu", ["x"], ["y"])],
            [("x", x(2, 3, 4))],
            [],
            ["y"],
        )
    )
    slope = x(3)
    c.append(
        (
            "prelu_channel_slope_op6",
            6,
            [n("PRelu", ["x", "s"], ["y"])],
            [n("PRelu", ["x", "s3"], ["y"])],
            [("x", x(2, 3, 4, 5))],
            [("s", slope), ("s3", slope.reshape(3, 1, 1))],
            ["y"],
        )
    )
    c.append(
        (
            "prelu_shared_slope_op1",
            1,
            [n("PRelu", ["x", "s"], ["y"], consumed_inputs=[0, 0])],
            [n("PRelu", ["x", "s"], ["y"])],
            [("x", x(2, 3, 4))],
            [("s", np.array([0.25], dtype=np.float32))],
            ["y"],
        )
    )
    c.append(
        (
            "upsample_nearest_op6",
            6,
            [n("Upsample", ["x"], ["y"], height_scale=2.0, width_scale=3.0, mode="nearest")],
            [
                n(
                    "Resize",
                    ["x", "", "sc"],
                    ["y"],
                    mode="nearest",
                    coordinate_transformation_mode="asymmetric",
                    nearest_mode="floor",
                )
            ],
            [("x", x(1, 2, 3, 4))],
            [("sc", np.array([1, 1, 2, 3], dtype=np.float32))],
            ["y"],
        )
    )
    c.append(
        (
            "tile_axis_op5",
            5,
            [n("Tile", ["x", "t", "ax"], ["y"])],
            [n("Tile", ["x", "rep"], ["y"])],
            [("x", x(2, 3))],
            [("t", i64(3)), ("ax", i64(1)), ("rep", i64(1, 3))],
            ["y"],
        )
    )
    c.append(
        (
            "reshape_shape_attr_op4",
            4,
            [n("Reshape", ["x"], ["y"], shape=[0, -1], consumed_inputs=[0])],
            [n("Reshape", ["x", "s"], ["y"])],
            [("x", x(2, 3, 4))],
            [("s", i64(0, -1))],
            ["y"],
        )
    )
    c.append(
        (
            "concat_default_axis_op3",
            3,
            [n("Concat", ["x", "z"], ["y"])],
            [n("Concat", ["x", "z"], ["y"], axis=1)],
            [("x", x(2, 3, 4)), ("z", x(2, 2, 4))],
            [],
            ["y"],
        )
    )
    c.append(
        (
            "pad_paddings_op1",
            1,
            [n("Pad", ["x"], ["y"], paddings=[0, 0, 1, 2, 0, 0, 2, 1], value=1.5)],
            [n("Pad", ["x", "p", "v"], ["y"])],
            [("x", x(1, 2, 3, 4))],
            [("p", i64(0, 0, 1, 2, 0, 0, 2, 1)), ("v", np.array(1.5, dtype=np.float32))],
            ["y"],
        )
    )
    c.append(
        (
            "cast_string_to_op5",
            5,
            [n("Cast", ["x"], ["y"], to="FLOAT")],
            [n("Cast", ["x"], ["y"], to=1)],
            [("x", r.integers(-50, 50, (2, 3)).astype(np.int32))],
            [],
            ["y"],
        )
    )
    c.append(
        (
            "split_lengths_input_op1",
            1,
            [n("Split", ["x", "sp"], ["y0", "y1"], axis=1)],
            [n("Split", ["x", "sp"], ["y0", "y1"], axis=1)],
            [("x", x(2, 6))],
            [("sp", i64(2, 4))],
            ["y0", "y1"],
        )
    )
    c.append(
        (
            "selu_old_defaults_op5",
            5,
            [n("Selu", ["x"], ["y"], consumed_inputs=[0])],
            [n("Selu", ["x"], ["y"], alpha=1.6732, gamma=1.0507)],
            [("x", (x(3, 4) * 3).astype(np.float32))],
            [],
            ["y"],
        )
    )
    c.append(
        (
            "clip_no_bounds_op5",
            5,
            [n("Clip", ["x"], ["c"]), n("Clip", ["c"], ["y"], min=-0.5, max=0.7)],
            [n("Clip", ["x", "lo", "hi"], ["y"])],
            [("x", x(3, 4))],
            [("lo", np.array(-0.5, dtype=np.float32)), ("hi", np.array(0.7, dtype=np.float32))],
            ["y"],
        )
    )
    c.append(
        (
            "sum_consumed_inputs_op1",
            1,
            [n("Sum", ["x", "z", "w"], ["y"], consumed_inputs=[0, 0, 0])],
            [n("Sum", ["x", "z", "w"], ["y"])],
            [("x", x(2, 3)), ("z", x(2, 3)), ("w", x(2, 3))],
            [],
            ["y"],
        )
    )
    # a Caffe2-style block: a Conv without bias, the bias added with axis 1, Relu with
    # consumed_inputs, Reshape by attribute, Gemm with a broadcast bias, Softmax
    c.append(
        (
            "caffe2_block_op3",
            3,
            [
                n("Conv", ["x", "k"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                n("Add", ["c", "cb"], ["a"], broadcast=1, axis=1),
                n("Relu", ["a"], ["r"], consumed_inputs=[1]),
                n("Reshape", ["r"], ["f"], shape=[2, -1]),
                n("Gemm", ["f", "fw", "fb"], ["g"], broadcast=1, transB=1),
                n("Softmax", ["g"], ["y"]),
            ],
            [
                n("Conv", ["x", "k"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                n("Reshape", ["cb", "cbs"], ["cb3"]),
                n("Add", ["c", "cb3"], ["a"]),
                n("Relu", ["a"], ["r"]),
                n("Reshape", ["r", "fs"], ["f"]),
                n("Gemm", ["f", "fw", "fb"], ["g"], transB=1),
                n("Softmax", ["g"], ["y"], axis=1),
            ],
            [("x", x(2, 3, 5, 5))],
            [
                ("k", (x(4, 3, 3, 3) * 0.3).astype(np.float32)),
                ("cb", x(4)),
                ("fw", (x(6, 100) * 0.1).astype(np.float32)),
                ("fb", x(6)),
                ("cbs", i64(4, 1, 1)),
                ("fs", i64(2, -1)),
            ],
            ["y"],
        )
    )
    rnn = [
        ("w", (x(1, 5, 4) * 0.5).astype(np.float32)),
        ("rr", (x(1, 5, 5) * 0.5).astype(np.float32)),
        ("bb", x(1, 10)),
    ]
    c.append(
        (
            "rnn_output_sequence_op6",
            6,
            [n("RNN", ["x", "w", "rr", "bb"], ["y", "yh"], hidden_size=5, output_sequence=1)],
            [n("RNN", ["x", "w", "rr", "bb"], ["y", "yh"], hidden_size=5)],
            [("x", x(3, 2, 4))],
            rnn,
            ["y", "yh"],
        )
    )
    gru = [
        ("w", (x(1, 9, 4) * 0.5).astype(np.float32)),
        ("rr", (x(1, 9, 3) * 0.5).astype(np.float32)),
        ("bb", x(1, 18)),
    ]
    c.append(
        (
            "gru_first_version_op1",
            1,
            [n("GRU", ["x", "w", "rr", "bb"], ["y", "yh"], hidden_size=3)],
            [n("GRU", ["x", "w", "rr", "bb"], ["y", "yh"], hidden_size=3, linear_before_reset=0)],
            [("x", x(3, 2, 4))],
            gru,
            ["y", "yh"],
        )
    )
    # the first AveragePool divides by the elements inside the input (no
    # count_include_pad yet: opset 7's default 0)
    c.append(
        (
            "avgpool_pads_op6",
            6,
            [
                n(
                    "AveragePool",
                    ["x"],
                    ["y"],
                    kernel_shape=[3, 3],
                    pads=[1, 1, 1, 1],
                    strides=[2, 2],
                )
            ],
            [
                n(
                    "AveragePool",
                    ["x"],
                    ["y"],
                    kernel_shape=[3, 3],
                    pads=[1, 1, 1, 1],
                    strides=[2, 2],
                    count_include_pad=0,
                )
            ],
            [("x", x(1, 2, 5, 5))],
            [],
            ["y"],
        )
    )
    c.append(
        (
            "lppool_float_p_op1",
            1,
            [n("LpPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], p=2.0)],
            [n("LpPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], p=2)],
            [("x", x(1, 2, 4, 4))],
            [],
            ["y"],
        )
    )
    return c


def main():
    args = sys.argv[1:]
    venv = None
    if "--venv" in args:
        i = args.index("--venv")
        venv = args[i + 1]
        del args[i : i + 2]
    oc.ensure_python(venv)
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    ort.set_default_logger_severity(3)
    (out,) = args
    count = 0
    for name, opset, old, modern, inputs, consts, outs in cases(np, helper):
        old_used = {i for nd in old for i in nd.input}
        new_used = {i for nd in modern for i in nd.input}

        def graph(nodes, used, shapes, title):
            vi = [
                helper.make_tensor_value_info(v, helper.np_dtype_to_tensor_dtype(t.dtype), t.shape)
                for v, t in inputs
            ]
            res = [
                helper.make_tensor_value_info(o, helper.np_dtype_to_tensor_dtype(t), sh)
                for o, (t, sh) in zip(outs, shapes)
            ]
            inits = [numpy_helper.from_array(t, v) for v, t in consts if v in used]
            if title.endswith("old"):
                # IR version 3 (opsets 1 to 6) lists every initializer among the inputs
                vi += [
                    helper.make_tensor_value_info(
                        v, helper.np_dtype_to_tensor_dtype(t.dtype), t.shape
                    )
                    for v, t in consts
                    if v in used
                ]
            return helper.make_graph(nodes, title, vi, res, inits)

        def model(g, o):
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", o)])
            m.ir_version = 3 if o < 7 else 8
            return m

        ref = model(
            graph(
                modern,
                new_used,
                [(np.dtype(bool if "greater" in name else np.float32), None)] * len(outs),
                name,
            ),
            MODERN,
        )
        sess = ort.InferenceSession(ref.SerializeToString(), providers=["CPUExecutionProvider"])
        got = sess.run(None, dict(inputs))
        shapes = [(g.dtype, list(g.shape)) for g in got]
        m = model(graph(old, old_used, shapes, name + "_old"), opset)
        onnx.checker.check_model(m)
        meta = {
            "expected_from": "onnxruntime on the same computation with opset-%d operators" % MODERN,
            "kind": "legacy-opset",
            "rtol": oc.OUR_TOL[0],
            "atol": oc.OUR_TOL[1],
            "tolerance_from": "default",
        }
        oc.write_case(out, "legacy_" + name, m, inputs, list(zip(outs, got)), meta)
        count += 1
    print("wrote %d legacy-opset cases to %s" % (count, out))


if __name__ == "__main__":
    sys.exit(main())
