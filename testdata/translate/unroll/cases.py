#!/usr/bin/env python3
"""Models with a Loop of constant trip count and a Scan over a sequence of static length
(testdata/translate/unroll): each written with onnx.helper, its expected outputs computed by
onnxruntime on a fixed input (NAME.io.npz: in/<input>, out/<output>).

    python cases.py OUTDIR      # onnx, onnxruntime, numpy
"""

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper as h, numpy_helper as nh


def loop_model(opset):
    # y = x; for i in range(4): y = tanh(y * w + i); every y stacked
    w = nh.from_array(np.linspace(-0.5, 0.5, 6, dtype=np.float32).reshape(2, 3), "w")
    body = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"]),
            h.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
            h.make_node("Mul", ["y_in", "w"], ["m"]),
            h.make_node("Add", ["m", "i_f"], ["a"]),
            h.make_node("Tanh", ["a"], ["y_out"]),
            h.make_node("Identity", ["y_out"], ["y_scan"]),
        ],
        "body",
        [h.make_tensor_value_info("i", TensorProto.INT64, []),
         h.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         h.make_tensor_value_info("y_in", TensorProto.FLOAT, [2, 3])],
        [h.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         h.make_tensor_value_info("y_out", TensorProto.FLOAT, [2, 3]),
         h.make_tensor_value_info("y_scan", TensorProto.FLOAT, [2, 3])],
    )
    m = nh.from_array(np.array(4, np.int64), "M")
    cond = nh.from_array(np.array(True), "cond")
    g = h.make_graph(
        [h.make_node("Loop", ["M", "cond", "x"], ["y", "ys"], body=body)],
        "loop",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         h.make_tensor_value_info("ys", TensorProto.FLOAT, [4, 2, 3])],
        [w, m, cond],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def loop_stops_itself(opset):
    # trip count 10, but the body's condition (i + 1 < 3) stops it after 3 iterations,
    # as tf2onnx writes a Keras while loop: y = y * 0.5 + 1 each time, every y stacked
    body = h.make_graph(
        [
            h.make_node("Add", ["i", "one"], ["next"]),
            h.make_node("Less", ["next", "three"], ["cond_out"]),
            h.make_node("Mul", ["y_in", "half"], ["m"]),
            h.make_node("Add", ["m", "onef"], ["y_out"]),
            h.make_node("Identity", ["y_out"], ["y_scan"]),
        ],
        "body",
        [h.make_tensor_value_info("i", TensorProto.INT64, []),
         h.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         h.make_tensor_value_info("y_in", TensorProto.FLOAT, [4])],
        [h.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         h.make_tensor_value_info("y_out", TensorProto.FLOAT, [4]),
         h.make_tensor_value_info("y_scan", TensorProto.FLOAT, [4])],
        [nh.from_array(np.array(1, np.int64), "one"), nh.from_array(np.array(3, np.int64), "three"),
         nh.from_array(np.array(0.5, np.float32), "half"), nh.from_array(np.array(1.0, np.float32), "onef")],
    )
    g = h.make_graph(
        [h.make_node("Loop", ["M", "cond", "x"], ["y", "ys"], body=body)],
        "loop",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, [4]),
         h.make_tensor_value_info("ys", TensorProto.FLOAT, [3, 4])],
        [nh.from_array(np.array(10, np.int64), "M"), nh.from_array(np.array(True), "cond")],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def loop_on_input(opset):
    """loop_model with its trip count M a graph input (fixed by --input-value M=4)."""
    m = loop_model(opset)
    g = m.graph
    keep = [t for t in g.initializer if t.name != "M"]
    del g.initializer[:]
    g.initializer.extend(keep)
    g.input.insert(0, h.make_tensor_value_info("M", TensorProto.INT64, []))
    return m


def scan_model(opset, reverse=False):
    # a running sum over the sequence axis, and each step's sum scaled
    body = h.make_graph(
        [
            h.make_node("Add", ["s_in", "x_t"], ["s_out"]),
            h.make_node("Mul", ["s_out", "k"], ["y_t"]),
        ],
        "body",
        [h.make_tensor_value_info("s_in", TensorProto.FLOAT, [3]),
         h.make_tensor_value_info("x_t", TensorProto.FLOAT, [3])],
        [h.make_tensor_value_info("s_out", TensorProto.FLOAT, [3]),
         h.make_tensor_value_info("y_t", TensorProto.FLOAT, [3])],
    )
    attrs = {"num_scan_inputs": 1}
    if reverse:
        attrs.update(scan_input_directions=[1], scan_output_directions=[1], scan_output_axes=[1])
    g = h.make_graph(
        [h.make_node("Scan", ["s0", "x"], ["s", "ys"], body=body, **attrs)],
        "scan",
        [h.make_tensor_value_info("s0", TensorProto.FLOAT, [3]),
         h.make_tensor_value_info("x", TensorProto.FLOAT, [5, 3])],
        [h.make_tensor_value_info("s", TensorProto.FLOAT, [3]),
         h.make_tensor_value_info("ys", TensorProto.FLOAT, [3, 5] if reverse else [5, 3])],
        [nh.from_array(np.array([0.5, -1.0, 2.0], np.float32), "k")],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(0)
    cases = {
        "loop_const_trip_op11": loop_model(11),
        "loop_const_trip_op17": loop_model(17),
        "scan_running_sum_op11": scan_model(11),
        "scan_reverse_op17": scan_model(17, reverse=True),
        "loop_stops_itself_op13": loop_stops_itself(13),
    }
    extra = loop_on_input(17)
    extra.ir_version = 8
    onnx.checker.check_model(extra)
    onnx.save(extra, os.path.join(out, "loop_trip_input_op17.onnx"))
    for name, model in cases.items():
        model.ir_version = 8
        onnx.checker.check_model(model)
        path = os.path.join(out, name + ".onnx")
        onnx.save(model, path)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        feed = {}
        for i in sess.get_inputs():
            shape = [d if isinstance(d, int) else 1 for d in i.shape]
            feed[i.name] = rng.standard_normal(shape).astype(np.float32)
        outs = sess.run(None, feed)
        arrays = {"in/" + k: v for k, v in feed.items()}
        arrays.update({"out/" + o.name: v for o, v in zip(sess.get_outputs(), outs)})
        np.savez(os.path.join(out, name + ".io.npz"), **arrays)
        print(name, [v.shape for v in outs])


if __name__ == "__main__":
    main()
