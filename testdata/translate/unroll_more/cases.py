#!/usr/bin/env python3
"""More unrolled Loops and Scans (testdata/translate/unroll_more): each model written with
onnx.helper, its expected outputs computed by onnxruntime on a fixed input (NAME.io.npz:
in/<input>, out/<output>). Models imported with --input-value get their fixed values in the
inputs onnxruntime is fed (and listed in FIXED, which the Rust test and the README use).

    python cases.py OUTDIR      # onnx, onnxruntime, numpy
"""

import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper as h, numpy_helper as nh

F = TensorProto.FLOAT


def vi(name, ty, shape):
    return h.make_tensor_value_info(name, ty, shape)


def model(g, opset):
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def scan8(lens):
    """Opset-8 Scan: batch 2, two sequences of 4 (x forwards, z backwards), state [3]:
    s = s + x_t * z_t, each step's tanh(s) stacked. `lens`: None (absent), "const" (an
    initializer [4, 4]) or "input" (a graph input, fixed by --input-value)."""
    body = h.make_graph(
        [
            h.make_node("Mul", ["x_t", "z_t"], ["p"]),
            h.make_node("Add", ["s_in", "p"], ["s_out"]),
            h.make_node("Tanh", ["s_out"], ["y_t"]),
        ],
        "body",
        [vi("s_in", F, [3]), vi("x_t", F, [3]), vi("z_t", F, [3])],
        [vi("s_out", F, [3]), vi("y_t", F, [3])],
    )
    inputs = [vi("s0", F, [2, 3]), vi("x", F, [2, 4, 3]), vi("z", F, [2, 4, 3])]
    inits = []
    first = ""
    if lens == "const":
        inits.append(nh.from_array(np.array([4, 4], np.int64), "lens"))
        first = "lens"
    elif lens == "input":
        inputs.insert(0, vi("lens", TensorProto.INT64, [2]))
        first = "lens"
    node = h.make_node(
        "Scan", [first, "s0", "x", "z"], ["s", "ys"], body=body, num_scan_inputs=2,
        directions=[0, 1],
    )
    g = h.make_graph(
        [node], "scan8", inputs, [vi("s", F, [2, 3]), vi("ys", F, [2, 4, 3])], inits
    )
    return model(g, 8)


def loop_sum5():
    """Opset 13 Loop, trip count 5 (an initializer), no condition: acc = acc + x (x read
    from the outer graph), each acc * 2 stacked."""
    body = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"]),
            h.make_node("Add", ["acc_in", "x"], ["acc_out"]),
            h.make_node("Add", ["acc_out", "acc_out"], ["twice"]),
        ],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
         vi("acc_in", F, [2, 2])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", F, [2, 2]), vi("twice", F, [2, 2])],
    )
    g = h.make_graph(
        [h.make_node("Loop", ["M", "", "acc0"], ["acc", "each"], body=body, name="sum5")],
        "loop",
        [vi("x", F, [2, 2]), vi("acc0", F, [2, 2])],
        [vi("acc", F, [2, 2]), vi("each", F, [5, 2, 2])],
        [nh.from_array(np.array(5, np.int64), "M")],
    )
    return model(g, 13)


def loop_inputs():
    """The onnx conformance test_loop11 pattern, written anew: trip count and condition graph
    inputs (fixed by --input-value), the body slicing element i of a constant with the
    iteration counter and adding it to y; every y stacked."""
    one = nh.from_array(np.array(1, np.int64), "one")
    xs = nh.from_array(np.array([1, 2, 3, 4, 5], np.float32), "xs")
    body = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"]),
            h.make_node("Add", ["i", "one"], ["end"]),
            h.make_node("Unsqueeze", ["i"], ["start1"], axes=[0]),
            h.make_node("Unsqueeze", ["end"], ["end1"], axes=[0]),
            h.make_node("Slice", ["xs", "start1", "end1"], ["piece"]),
            h.make_node("Add", ["y_in", "piece"], ["y_out"]),
            h.make_node("Identity", ["y_out"], ["y_scan"]),
        ],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("y_in", F, [1])],
        [vi("cond_out", TensorProto.BOOL, []), vi("y_out", F, [1]), vi("y_scan", F, [1])],
        [one, xs],
    )
    g = h.make_graph(
        [h.make_node("Loop", ["trip", "cond", "y0"], ["y", "ys"], body=body, name="loop11")],
        "loop",
        [vi("trip", TensorProto.INT64, []), vi("cond", TensorProto.BOOL, []), vi("y0", F, [1])],
        [vi("y", F, [1]), vi("ys", F, [5, 1])],
    )
    return model(g, 11)


def loop_false():
    """Opset 13 Loop whose condition is a constant false: no iteration, its loop-carried value
    is its initial one (x * 3, then tanh of it)."""
    body = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"]),
            h.make_node("Add", ["y_in", "y_in"], ["y_out"]),
        ],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("y_in", F, [3])],
        [vi("cond_out", TensorProto.BOOL, []), vi("y_out", F, [3])],
    )
    g = h.make_graph(
        [
            h.make_node("Mul", ["x", "three"], ["y0"]),
            h.make_node("Loop", ["M", "cond", "y0"], ["y"], body=body, name="never"),
            h.make_node("Tanh", ["y"], ["z"]),
        ],
        "loop",
        [vi("x", F, [3])],
        [vi("y", F, [3]), vi("z", F, [3])],
        [nh.from_array(np.array(3, np.int64), "M"), nh.from_array(np.array(False), "cond"),
         nh.from_array(np.array(3, np.float32), "three")],
    )
    return model(g, 13)


def loop_nested():
    """Opset 13 Loop of 3 iterations whose body runs a Loop of 2 (the inner body reads the outer
    graph's w and its own counter): s = tanh(inner(s)), inner: a = (a + j) * w; every s stacked."""
    inner = h.make_graph(
        [
            h.make_node("Identity", ["c2"], ["c2_o"]),
            h.make_node("Cast", ["j"], ["jf"], to=F),
            h.make_node("Add", ["a_in", "jf"], ["a1"]),
            h.make_node("Mul", ["a1", "w"], ["a_out"]),
        ],
        "inner",
        [vi("j", TensorProto.INT64, []), vi("c2", TensorProto.BOOL, []), vi("a_in", F, [2])],
        [vi("c2_o", TensorProto.BOOL, []), vi("a_out", F, [2])],
    )
    outer = h.make_graph(
        [
            h.make_node("Identity", ["c"], ["c_o"]),
            h.make_node("Loop", ["M2", "", "s_in"], ["s_mid"], body=inner, name="inner_loop"),
            h.make_node("Tanh", ["s_mid"], ["s_out"]),
            h.make_node("Identity", ["s_out"], ["s_scan"]),
        ],
        "outer",
        [vi("i", TensorProto.INT64, []), vi("c", TensorProto.BOOL, []), vi("s_in", F, [2])],
        [vi("c_o", TensorProto.BOOL, []), vi("s_out", F, [2]), vi("s_scan", F, [2])],
    )
    g = h.make_graph(
        [h.make_node("Loop", ["M3", "", "x"], ["y", "ys"], body=outer, name="outer_loop")],
        "nest",
        [vi("x", F, [2])],
        [vi("y", F, [2]), vi("ys", F, [3, 2])],
        [nh.from_array(np.array(3, np.int64), "M3"), nh.from_array(np.array(2, np.int64), "M2"),
         nh.from_array(np.array([0.5, -0.7], np.float32), "w")],
    )
    return model(g, 13)


CASES = {
    "scan8_dirs_op8": (scan8(None), {}),
    "scan8_lens_const_op8": (scan8("const"), {}),
    "scan8_lens_input_op8": (scan8("input"), {"lens": [4, 4]}),
    "loop_sum5_op13": (loop_sum5(), {}),
    "loop_inputs_fixed_op11": (loop_inputs(), {"trip": [5], "cond": [1]}),
    "loop_false_cond_op13": (loop_false(), {}),
    "loop_nested_op13": (loop_nested(), {}),
}

DTYPES = {"lens": np.int64, "trip": np.int64, "cond": np.bool_}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(1)
    fixed = {}
    for name, (m, values) in CASES.items():
        path = os.path.join(out, name + ".onnx")
        onnx.save(m, path)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        feed = {}
        for i in sess.get_inputs():
            if i.name in values:
                shape = [d if isinstance(d, int) else 1 for d in i.shape]
                feed[i.name] = np.array(values[i.name], DTYPES[i.name]).reshape(shape)
            else:
                feed[i.name] = rng.standard_normal(i.shape).astype(np.float32)
        outs = sess.run(None, feed)
        # the runtimes are fed only the inputs that were not fixed
        arrays = {"in/" + k: v for k, v in feed.items() if k not in values}
        arrays.update({"out/" + o.name: v for o, v in zip(sess.get_outputs(), outs)})
        np.savez(os.path.join(out, name + ".io.npz"), **arrays)
        fixed[name] = values
        print(name, [v.shape for v in outs])
    with open(os.path.join(out, "fixed.json"), "w") as f:
        json.dump(fixed, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
