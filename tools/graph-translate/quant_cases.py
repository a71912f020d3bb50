#!/usr/bin/env python3
"""Quantized ONNX models through the NNabla import, checked against onnxruntime.

    quant_cases.py generate OUT [--conformance SUITE]
    quant_cases.py run OUT --mlformats BIN [--chroot DIR]
    quant_cases.py export OUT DEST

generate (a Python with onnx, onnxruntime and numpy): writes OUT/<case>/model.onnx
and OUT/<case>/io.npz for
- two small float networks built with onnx.helper (a conv net: three Conv + Relu, a
  Flatten and a MatMul + Add; an MLP: two MatMul + Add with a Relu), quantized by
  onnxruntime.quantization.quantize_dynamic (DynamicQuantizeLinear, MatMulInteger,
  ConvInteger; per tensor and per channel) and quantize_static with QuantFormat.QDQ
  (QuantizeLinear/DequantizeLinear pairs around the float operators, int8 weights and
  int32 biases as initializers; a calibration reader of 8 seeded random batches);
- single-operator models: DynamicQuantizeLinear (random, all-positive, all-negative,
  all-zero and halfway inputs), MatMulInteger (zero points per tensor and per column,
  constant and run-time B; onnxruntime takes no per-row a_zero_point), ConvInteger
  (padding, stride, dilation, groups, constant and run-time zero points), Round (ties,
  large values), a float Conv weight through QuantizeLinear and DequantizeLinear;
- with --conformance SUITE (the layout `onnx_conformance.py generate nodes` writes, or
  onnx's node test folders with test_data_set_0/*.pb): the node cases of
  DynamicQuantizeLinear, ConvInteger and MatMulInteger (their expected outputs are
  the reference where onnxruntime refuses the case: a per-channel w_zero_point).
io.npz holds `in.<name>.<k>` for input set k, `ort.<name>.<k>` the outputs of
onnxruntime with graph optimizations off (each ONNX operator as specified: the
reference) and `ortopt.<name>.<k>` with its default optimizations (what a user gets:
fused QLinearConv and the like, whose requantization may differ by a step).

run (host, root, numpy; the nnabla chroot of run_nnabla.py): converts each model
(`BIN convert model.onnx model.nnp`), runs every input set in nnabla 1.39 and
compares with `ort`: integer outputs must be equal, float outputs within 1e-5 of the
output's largest magnitude (1e-3 for the QDQ networks, where an f32 difference of one
ulp before a QuantizeLinear may move a value by one quantization step). Writes
OUT/results.json (per case: the nnp's sha256, the NNabla functions it holds, per
output the worst difference from onnxruntime with and without optimizations, the
verdict) and OUT/<case>/nnabla.npz (`<name>.<k>`: what nnabla computed).

export: copies the generated cases (not the conformance ones) and their results to DEST
as <case>.onnx, <case>.io.npz, <case>.nnabla.npz and results.json (how
testdata/translate/quant/ is made).
"""

import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 13


def _onnx():
    import onnx
    from onnx import helper, numpy_helper

    return onnx, helper, numpy_helper


def _save(model, path):
    onnx, _, _ = _onnx()
    onnx.checker.check_model(model)
    onnx.save(model, path)


def float_convnet(rng):
    """x [2,3,8,8] -> Conv3x3 -> Relu -> Conv3x3/2 -> Relu -> Conv1x1 -> Flatten -> MatMul+Add."""
    onnx, helper, nh = _onnx()
    f = np.float32
    w = {
        "c1.w": (rng.standard_normal((8, 3, 3, 3)) * 0.4).astype(f),
        "c1.b": (rng.standard_normal(8) * 0.1).astype(f),
        "c2.w": (rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(f),
        "c2.b": (rng.standard_normal(16) * 0.1).astype(f),
        "c3.w": (rng.standard_normal((4, 16, 1, 1)) * 0.3).astype(f),
        "c3.b": (rng.standard_normal(4) * 0.1).astype(f),
        "fc.w": (rng.standard_normal((64, 10)) * 0.2).astype(f),
        "fc.b": (rng.standard_normal(10) * 0.1).astype(f),
    }
    nodes = [
        helper.make_node(
            "Conv", ["x", "c1.w", "c1.b"], ["h1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]
        ),
        helper.make_node("Relu", ["h1"], ["r1"]),
        helper.make_node(
            "Conv",
            ["r1", "c2.w", "c2.b"],
            ["h2"],
            kernel_shape=[3, 3],
            pads=[1, 1, 1, 1],
            strides=[2, 2],
        ),
        helper.make_node("Relu", ["h2"], ["r2"]),
        helper.make_node("Conv", ["r2", "c3.w", "c3.b"], ["h3"], kernel_shape=[1, 1]),
        helper.make_node("Flatten", ["h3"], ["fl"], axis=1),
        helper.make_node("MatMul", ["fl", "fc.w"], ["mm"]),
        helper.make_node("Add", ["mm", "fc.b"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "convnet",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 10])],
        [nh.from_array(v, k) for k, v in w.items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8), (
        2,
        3,
        8,
        8,
    )


def float_mlp(rng):
    """x [4,16] -> MatMul+Add -> Relu -> MatMul+Add."""
    onnx, helper, nh = _onnx()
    f = np.float32
    w = {
        "l1.w": (rng.standard_normal((16, 32)) * 0.3).astype(f),
        "l1.b": (rng.standard_normal(32) * 0.1).astype(f),
        "l2.w": (rng.standard_normal((32, 10)) * 0.3).astype(f),
        "l2.b": (rng.standard_normal(10) * 0.1).astype(f),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "l1.w"], ["m1"]),
        helper.make_node("Add", ["m1", "l1.b"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["r1"]),
        helper.make_node("MatMul", ["r1", "l2.w"], ["m2"]),
        helper.make_node("Add", ["m2", "l2.b"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4, 10])],
        [nh.from_array(v, k) for k, v in w.items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8), (
        4,
        16,
    )


class Calib:
    """quantize_static's calibration reader: 8 seeded random batches."""

    def __init__(self, name, shape, seed):
        rng = np.random.default_rng(seed)
        self.data = [{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(8)]

    def get_next(self):
        return self.data.pop() if self.data else None


def quantized(out, tmp, rng):
    """The float networks through quantize_dynamic and quantize_static (QDQ)."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static

    cases = {}
    for name, build in (("convnet", float_convnet), ("mlp", float_mlp)):
        model, shape = build(rng)
        src = os.path.join(tmp, name + ".onnx")
        _save(model, src)
        ins = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
        variants = {
            "dynamic": dict(kind="dynamic", per_channel=False, weight_type=QuantType.QUInt8),
            "dynamic_perchannel": dict(
                kind="dynamic", per_channel=True, weight_type=QuantType.QInt8
            ),
            "qdq": dict(kind="static", per_channel=False),
            "qdq_perchannel": dict(kind="static", per_channel=True),
        }
        for v, o in variants.items():
            dst = os.path.join(tmp, "%s_%s.onnx" % (name, v))
            if o["kind"] == "dynamic":
                quantize_dynamic(
                    src, dst, per_channel=o["per_channel"], weight_type=o["weight_type"]
                )
            else:
                quantize_static(
                    src,
                    dst,
                    Calib("x", shape, 7),
                    quant_format=QuantFormat.QDQ,
                    per_channel=o["per_channel"],
                    activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8,
                )
            cases["%s_%s" % (name, v)] = (dst, [{"x": a} for a in ins], "qdq" in v)
    return cases


def single_ops(tmp, rng):
    """Single-operator models of the integer operators."""
    onnx, helper, nh = _onnx()
    T = onnx.TensorProto
    cases = {}

    def model(name, nodes, ins, outs, inits=()):
        g = helper.make_graph(nodes, name, ins, outs, list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)
        p = os.path.join(tmp, name + ".onnx")
        _save(m, p)
        return p

    vi = helper.make_tensor_value_info
    # DynamicQuantizeLinear: y, scale and zero point of several ranges.
    p = model(
        "dql",
        [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "y_scale", "y_zero_point"])],
        [vi("x", T.FLOAT, [2, 3, 4])],
        [vi("y", T.UINT8, [2, 3, 4]), vi("y_scale", T.FLOAT, []), vi("y_zero_point", T.UINT8, [])],
    )
    f = np.float32
    sets = [
        rng.standard_normal((2, 3, 4)).astype(f) * 3,
        rng.uniform(0.5, 4.0, (2, 3, 4)).astype(f),
        -rng.uniform(0.5, 4.0, (2, 3, 4)).astype(f),
        np.zeros((2, 3, 4), f),
        # 0 .. 255 in halves times the scale 1: y = round half to even of k/2
        np.concatenate([[0.0, 255.0], np.arange(22) * 0.5 + 0.5]).reshape(2, 3, 4).astype(f),
        np.linspace(-1.0, 2.0, 24).reshape(2, 3, 4).astype(f),
    ]
    cases["dql"] = (p, [{"x": a} for a in sets], False)
    # Round (half to even), which DynamicQuantizeLinear's expanded form uses.
    p = model(
        "round",
        [helper.make_node("Round", ["x"], ["y"])],
        [vi("x", T.FLOAT, [16])],
        [vi("y", T.FLOAT, [16])],
    )
    ties = [
        -2.5,
        -1.5,
        -0.5,
        0.5,
        1.5,
        2.5,
        3.5,
        0.49999997,
        -0.49999997,
        4194304.5,
        8388607.0,
        8388609.0,
    ]
    x = np.array(ties + [1e30, -7.25, 100.75, 0.0], f)
    cases["round"] = (p, [{"x": x}, {"x": rng.standard_normal(16).astype(f) * 5}], False)
    # MatMulInteger: per-tensor a_zero_point, per-column b_zero_point, constant B.
    b = rng.integers(-128, 128, (6, 5)).astype(np.int8)
    p = model(
        "matmulinteger_const_b",
        [helper.make_node("MatMulInteger", ["a", "b", "a_zp", "b_zp"], ["y"])],
        [vi("a", T.UINT8, [3, 6])],
        [vi("y", T.INT32, [3, 5])],
        [
            nh.from_array(b, "b"),
            nh.from_array(np.array(131, np.uint8), "a_zp"),
            nh.from_array(np.array([0, 3, -5, 127, -128], np.int8), "b_zp"),
        ],
    )
    ua = [rng.integers(0, 256, (3, 6)).astype(np.uint8) for _ in range(2)]
    cases["matmulinteger_const_b"] = (p, [{"a": a} for a in ua], False)
    # MatMulInteger: run-time A, B and zero points; A batched [2,3,6] against B [6,5].
    p = model(
        "matmulinteger_runtime",
        [helper.make_node("MatMulInteger", ["a", "b", "a_zp", "b_zp"], ["y"])],
        [
            vi("a", T.UINT8, [2, 3, 6]),
            vi("b", T.UINT8, [6, 5]),
            vi("a_zp", T.UINT8, []),
            vi("b_zp", T.UINT8, []),
        ],
        [vi("y", T.INT32, [2, 3, 5])],
    )
    sets = [
        {
            "a": rng.integers(0, 256, (2, 3, 6)).astype(np.uint8),
            "b": rng.integers(0, 256, (6, 5)).astype(np.uint8),
            "a_zp": np.array(zp, np.uint8),
            "b_zp": np.array(255 - zp, np.uint8),
        }
        for zp in (0, 77, 255)
    ]
    cases["matmulinteger_runtime"] = (p, sets, False)
    # ConvInteger: padding and stride, run-time x_zero_point (onnxruntime takes no
    # per-channel w_zero_point).
    p = model(
        "convinteger",
        [
            helper.make_node(
                "ConvInteger",
                ["x", "w", "x_zp", "w_zp"],
                ["y"],
                pads=[1, 1, 1, 1],
                strides=[2, 1],
                kernel_shape=[3, 3],
            )
        ],
        [vi("x", T.UINT8, [1, 2, 5, 5]), vi("x_zp", T.UINT8, [])],
        [vi("y", T.INT32, [1, 3, 3, 5])],
        [
            nh.from_array(rng.integers(0, 256, (3, 2, 3, 3)).astype(np.uint8), "w"),
            nh.from_array(np.array(128, np.uint8), "w_zp"),
        ],
    )
    sets = [
        {"x": rng.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8), "x_zp": np.array(zp, np.uint8)}
        for zp in (0, 100)
    ]
    cases["convinteger"] = (p, sets, False)
    # ConvInteger with groups and a constant x_zero_point, dilation.
    p = model(
        "convinteger_group",
        [
            helper.make_node(
                "ConvInteger",
                ["x", "w", "x_zp"],
                ["y"],
                group=2,
                dilations=[2, 2],
                kernel_shape=[2, 2],
                pads=[1, 0, 0, 1],
            )
        ],
        [vi("x", T.UINT8, [2, 4, 6, 6])],
        [vi("y", T.INT32, [2, 4, 5, 5])],
        [
            nh.from_array(rng.integers(0, 256, (4, 2, 2, 2)).astype(np.uint8), "w"),
            nh.from_array(np.array(17, np.uint8), "x_zp"),
        ],
    )
    cases["convinteger_group"] = (
        p,
        [{"x": rng.integers(0, 256, (2, 4, 6, 6)).astype(np.uint8)}],
        False,
    )
    # A float weight through QuantizeLinear and DequantizeLinear (per output channel, int8)
    # into a Conv: both fold at import (fake quantisation as some exporters write it).
    wf = (rng.standard_normal((4, 3, 3, 3)) * 0.5).astype(f)
    ws = (np.abs(wf).reshape(4, -1).max(axis=1) / 127).astype(f)
    p = model(
        "qdq_float_weight",
        [
            helper.make_node("QuantizeLinear", ["w", "w_s", "w_zp"], ["w_q"], axis=0),
            helper.make_node("DequantizeLinear", ["w_q", "w_s", "w_zp"], ["w_dq"], axis=0),
            helper.make_node(
                "Conv", ["x", "w_dq", "b"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]
            ),
        ],
        [vi("x", T.FLOAT, [1, 3, 6, 6])],
        [vi("y", T.FLOAT, [1, 4, 6, 6])],
        [
            nh.from_array(wf, "w"),
            nh.from_array(ws, "w_s"),
            nh.from_array(np.array([0, 1, -2, 3], np.int8), "w_zp"),
            nh.from_array((rng.standard_normal(4) * 0.1).astype(f), "b"),
        ],
    )
    sets = [{"x": rng.standard_normal((1, 3, 6, 6)).astype(f)} for _ in range(2)]
    cases["qdq_float_weight"] = (p, sets, False)
    return cases


def conformance(suite, tmp):
    """The node cases of the integer operators from an onnx test suite folder."""
    onnx, _, nh = _onnx()
    cases = {}
    pats = ("test_dynamicquantizelinear*", "test_convinteger*", "test_matmulinteger*")
    for d in sorted(p for pat in pats for p in glob.glob(os.path.join(suite, pat))):
        name = os.path.basename(d)
        m = onnx.load(os.path.join(d, "model.onnx"))
        feeds = {}
        if os.path.exists(os.path.join(d, "inputs.npz")):
            with np.load(os.path.join(d, "inputs.npz")) as z:
                feeds = {k: z[k] for k in z.keys()}
        else:
            init = {i.name for i in m.graph.initializer}
            names = [i.name for i in m.graph.input if i.name not in init]
            for k, n in enumerate(names):
                t = onnx.TensorProto()
                with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "rb") as fh:
                    t.ParseFromString(fh.read())
                feeds[n] = nh.to_array(t)
        expected = {}
        for k, o in enumerate(m.graph.output):
            t = onnx.TensorProto()
            with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % k), "rb") as fh:
                t.ParseFromString(fh.read())
            expected[o.name] = nh.to_array(t)
        p = os.path.join(tmp, name + ".onnx")
        onnx.save(m, p)
        cases[name] = (p, [feeds], False, expected)
    return cases


def ort_run(path, feeds, optimize):
    import onnxruntime as ort

    so = ort.SessionOptions()
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in s.get_outputs()]
    return dict(zip(names, s.run(None, feeds)))


def generate(args):
    import onnxruntime

    rng = np.random.default_rng(15)
    os.makedirs(args.out, exist_ok=True)
    tmp = os.path.join(args.out, ".tmp")
    os.makedirs(tmp, exist_ok=True)
    cases = {}
    cases.update(quantized(args.out, tmp, rng))
    cases.update(single_ops(tmp, rng))
    if args.conformance:
        cases.update(conformance(args.conformance, tmp))
    meta = {"onnxruntime": onnxruntime.__version__, "cases": {}}
    for name, (path, sets, qdq, *expected) in cases.items():
        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        shutil.copy(path, os.path.join(d, "model.onnx"))
        z, ref = {}, "onnxruntime"
        for k, feeds in enumerate(sets):
            for n, a in feeds.items():
                z["in.%s.%d" % (n, k)] = a
            for tag, opt in (("ort", False), ("ortopt", True)):
                try:
                    outs = ort_run(path, feeds, opt)
                except Exception as e:  # onnxruntime refuses some forms the spec allows
                    if not expected:
                        raise
                    outs = expected[0]
                    ref = (
                        "the case's expected outputs (onnxruntime: %s)"
                        % str(e).split("\n")[0][-160:]
                    )
                for n, a in outs.items():
                    z["%s.%s.%d" % (tag, n, k)] = a
        np.savez_compressed(os.path.join(d, "io.npz"), **z)
        meta["cases"][name] = {
            "sets": len(sets),
            "qdq": qdq,
            "inputs": list(sets[0]),
            "outputs": [o.name for o in _onnx()[0].load(path).graph.output],
            "reference": ref,
        }
    shutil.rmtree(tmp)
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print("%d cases in %s" % (len(cases), args.out))


def functions(nnp):
    """The NNabla function types of a .nnp's network, in order."""
    with zipfile.ZipFile(nnp) as z:
        text = z.read("network.nntxt").decode()
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("type: ") and not line.startswith('type: "Buffer"'):
            t = line[6:].strip('"')
            if t not in ("Buffer", "Parameter"):
                out.append(t)
    return out


def compare(got, want, tol):
    """Worst absolute difference, relative to want's largest magnitude, and the verdict."""
    got = np.asarray(got, np.float64).reshape(np.shape(want))
    want = np.asarray(want)
    diff = float(np.max(np.abs(got - want.astype(np.float64)))) if want.size else 0.0
    if want.dtype.kind in "iu":
        return diff, diff == 0.0
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    return diff, diff <= tol * max(scale, 1e-30)


RUNTIMES = {"nnp": ("nnabla", "run_nnabla.py"), "tsm": ("tennis", "run_tennis.py")}


def convert_all(args, meta, t):
    """Converts every case to `t` (nnp or tsm): per case its record and the batch jobs."""
    rt = RUNTIMES[t][0]
    jobs, results = [], {}
    for name, c in sorted(meta["cases"].items()):
        d = os.path.join(args.out, name)
        dst = os.path.join(d, "model." + t)
        r = subprocess.run(
            [args.mlformats, "convert", os.path.join(d, "model.onnx"), dst],
            capture_output=True,
            text=True,
        )
        rec = {"converted": r.returncode == 0}
        results[name] = rec
        if r.returncode != 0:
            rec["refusal"] = (r.stderr or r.stdout).strip()
            continue
        with open(dst, "rb") as fh:
            rec[t + "_sha256"] = hashlib.sha256(fh.read()).hexdigest()
        if t == "nnp":
            rec["functions"] = sorted(set(functions(dst)))
        with np.load(os.path.join(d, "io.npz")) as z:
            for k in range(c["sets"]):
                ins = {n: z["in.%s.%d" % (n, k)] for n in c["inputs"]}
                np.savez(os.path.join(d, "in.%d.npz" % k), **ins)
                jobs.append(
                    {
                        "id": "%s.%d" % (name, k),
                        "model": os.path.join(name, "model." + t),
                        "inputs": os.path.join(name, "in.%d.npz" % k),
                        "outputs": os.path.join(name, "%s.%d.npz" % (rt, k)),
                        "input_names": c["inputs"],
                    }
                )
    return results, jobs


def run_target(args, meta, t):
    """Converts to `t`, runs the runtime, compares: per case its record."""
    rt, script = RUNTIMES[t]
    results, jobs = convert_all(args, meta, t)
    batch = os.path.join(args.out, "batch.%s.json" % t)
    with open(batch, "w") as f:
        json.dump(jobs, f, indent=1)
    cmd = [sys.executable, os.path.join(HERE, script), batch, "-q"]
    if t == "nnp" and args.chroot:
        cmd += ["--chroot", args.chroot]
    if t == "tsm" and args.tennis_lib:
        cmd += ["--lib", args.tennis_lib]
    subprocess.run(cmd, check=False)
    with open(os.path.join(args.out, "batch.%s.results.json" % t)) as f:
        data = json.load(f)
        status = {r["id"]: r for r in (data["jobs"] if isinstance(data, dict) else data)}
    for name, c in sorted(meta["cases"].items()):
        rec = results[name]
        if not rec["converted"]:
            rec["verdict"] = "refused"
            continue
        tol = 1e-3 if c["qdq"] else 1e-5
        rec["tolerance"] = tol
        rec["sets"], ok, merged = [], True, {}
        with np.load(os.path.join(args.out, name, "io.npz")) as z:
            for k in range(c["sets"]):
                st = status.get("%s.%d" % (name, k), {})
                if st.get("status") != "ok":
                    rec["sets"].append(
                        {"status": st.get("status"), "error": str(st.get("error", ""))[-400:]}
                    )
                    ok = False
                    continue
                outs = dict(np.load(os.path.join(args.out, name, "%s.%d.npz" % (rt, k))))
                if t == "tsm":  # out_0, out_1, ... in the graph's output order
                    outs = {n: outs.get("out_%d" % i) for i, n in enumerate(c["outputs"])}
                s = {"status": "ok", "outputs": {}}
                for n in c["outputs"]:
                    want, wopt = z["ort.%s.%d" % (n, k)], z["ortopt.%s.%d" % (n, k)]
                    got = outs.get(n)
                    if got is None:
                        s["outputs"][n] = {"missing": True}
                        ok = False
                        continue
                    merged["%s.%d" % (n, k)] = got
                    d, good = compare(got, want, tol)
                    dopt, _ = compare(got, wopt, tol)
                    s["outputs"][n] = {
                        "dtype": str(want.dtype),
                        "got_dtype": str(got.dtype),
                        "shape": list(want.shape),
                        "max_abs": float(np.max(np.abs(want))) if want.size else 0.0,
                        "diff": d,
                        "diff_ort_optimized": dopt,
                        "ok": good,
                    }
                    ok = ok and good
                rec["sets"].append(s)
        np.savez_compressed(os.path.join(args.out, name, "%s.npz" % rt), **merged)
        rec["verdict"] = "pass" if ok else "wrong"
    return results


def run(args):
    with open(os.path.join(args.out, "cases.json")) as f:
        meta = json.load(f)
    targets = [t for t in args.targets.split(",") if t]
    results = {name: {} for name in meta["cases"]}
    for t in targets:
        for name, rec in run_target(args, meta, t).items():
            if t == "nnp":
                results[name].update(rec)
            else:
                results[name]["tennis"] = rec
    out = {"onnxruntime": meta["onnxruntime"], "nnabla": "1.39.0", "cases": results}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    bad = sorted(
        "%s (%s)" % (n, t)
        for n, r in results.items()
        for t, v in (("nnp", r.get("verdict")), ("tsm", r.get("tennis", {}).get("verdict")))
        if t in targets and v != "pass"
    )
    print("%d cases, not passing: %s" % (len(results), bad or "none"))
    return 1 if bad else 0


def export(args):
    """The generated cases (not the conformance ones, committed with the import records)
    as DEST/<case>.onnx, <case>.io.npz, <case>.nnabla.npz and DEST/results.json."""
    with open(os.path.join(args.out, "results.json")) as f:
        res = json.load(f)
    os.makedirs(args.dest, exist_ok=True)
    keep = {}
    for name, rec in sorted(res["cases"].items()):
        if name.startswith("test_"):
            continue
        d = os.path.join(args.out, name)
        shutil.copy(os.path.join(d, "model.onnx"), os.path.join(args.dest, name + ".onnx"))
        shutil.copy(os.path.join(d, "io.npz"), os.path.join(args.dest, name + ".io.npz"))
        for rt in ("nnabla", "tennis"):
            if os.path.exists(os.path.join(d, rt + ".npz")):
                shutil.copy(
                    os.path.join(d, rt + ".npz"), os.path.join(args.dest, "%s.%s.npz" % (name, rt))
                )
        keep[name] = rec
    res["cases"] = keep
    with open(os.path.join(args.dest, "results.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    print("%d cases in %s" % (len(keep), args.dest))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("out")
    g.add_argument("--conformance")
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--mlformats", required=True)
    r.add_argument("--chroot", default=os.environ.get("NNABLA_CHROOT"))
    r.add_argument("--tennis-lib", default=os.environ.get("TENNIS_LIB"))
    r.add_argument("--targets", default="nnp,tsm")
    x = sub.add_parser("export")
    x.add_argument("out")
    x.add_argument("dest")
    args = ap.parse_args()
    return {"generate": generate, "run": run, "export": export}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main() or 0)
