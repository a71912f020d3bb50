#!/usr/bin/env python3
"""Float → integer Cast and QuantizeLinear/DequantizeLinear with scales and
zero points computed at run time, into NNabla, run in the real nnabla.

    cases.py OUT MLFORMATS CHROOT

writes OUT/NAME.onnx, NAME.io.npz (in.<input>.<k>, ort.<output>.<k>:
onnxruntime with graph optimizations off), NAME.nnabla.npz (<output>.<k>:
nnabla running the .nnp `MLFORMATS convert NAME.onnx NAME.nnp` wrote) and
results.json (the .nnp's sha256, its functions, worst difference per output).
CHROOT holds nnabla 1.39 at /opt/nnenv and /tmp/run_batch.py. The
dynamicquantizelinear*_expanded cases are onnx's node tests (SUITE env var:
a folder of NAME/model.onnx + inputs.npz).
"""
import hashlib, json, os, shutil, subprocess, sys, zipfile
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h
import onnxruntime as ort

OUT, MLF, CHROOT = sys.argv[1:4]
SUITE = os.environ.get("SUITE")
rng = np.random.default_rng(31)


def model(nodes, ins, outs, inits=(), opset=21):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, t, s) for n, t, s in ins],
                     [h.make_tensor_value_info(n, t, s) for n, t, s in outs], list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 10
    onnx.checker.check_model(m, full_check=True)
    return m


CASTS = [("u8", T.UINT8, -0.99, 255.99), ("i8", T.INT8, -128.99, 127.99),
         ("u16", T.UINT16, -0.99, 65535.99), ("i16", T.INT16, -32768.99, 32767.99),
         ("i32", T.INT32, -2.0e9, 2.0e9), ("u32", T.UINT32, -0.99, 4.0e9),
         ("i64", T.INT64, -1.0e15, 1.0e15)]


def cast_inputs(lo, hi, n=24):
    v = rng.uniform(lo, hi, n).astype(np.float32)
    # ends, halves, values just inside, zero and -0
    v[:10] = np.array([lo, hi, -0.5, 0.5, -0.0, 0.0, 1.5, -1.5, 2.999, -2.999], np.float32)
    v = np.clip(v, lo, hi).astype(np.float32)
    return v.reshape(2, 12)


def cases():
    nodes = [h.make_node("Cast", ["x_" + k], ["y_" + k], to=t) for k, t, _, _ in CASTS]
    m = model(nodes, [("x_" + k, T.FLOAT, [2, 12]) for k, *_ in CASTS],
              [("y_" + k, t, [2, 12]) for k, t, *_ in CASTS])
    sets = [{("x_" + k): cast_inputs(lo, hi) for k, _, lo, hi in CASTS} for _ in range(2)]
    yield "cast_float_to_int", m, sets
    # out of range: undefined in ONNX; NNabla saturates. Recorded, not compared.
    m = model([h.make_node("Cast", ["x"], ["y"], to=T.UINT8),
               h.make_node("Cast", ["x"], ["z"], to=T.INT8)],
              [("x", T.FLOAT, [1, 8])], [("y", T.UINT8, [1, 8]), ("z", T.INT8, [1, 8])])
    x = np.array([[-300.5, -129.5, -1.5, 127.5, 128.5, 255.5, 256.5, 1e6]], np.float32)
    yield "cast_out_of_range", m, [{"x": x}]
    # QuantizeLinear / DequantizeLinear, scale from the data (per tensor) and
    # a zero point fed at run time
    nodes = [h.make_node("Abs", ["x"], ["a"]),
             h.make_node("ReduceMax", ["a"], ["m"], keepdims=0),
             h.make_node("Div", ["m", "c127"], ["s"]),
             h.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
             h.make_node("DequantizeLinear", ["q", "s", "zp"], ["d"])]
    c = h.make_tensor("c127", T.FLOAT, [], [127.0])
    m = model(nodes, [("x", T.FLOAT, [2, 3, 4, 4]), ("zp", T.INT8, [])],
              [("q", T.INT8, [2, 3, 4, 4]), ("d", T.FLOAT, [2, 3, 4, 4])], [c])
    sets = [{"x": rng.normal(0, 2, (2, 3, 4, 4)).astype(np.float32), "zp": np.array(z, np.int8)}
            for z in (0, 5, -100)]
    yield "quantize_runtime_per_tensor", m, sets
    # per axis: scale [3] and uint8 zero point [3] fed as inputs
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], axis=1),
             h.make_node("DequantizeLinear", ["q", "s", "zp"], ["d"], axis=1)]
    m = model(nodes, [("x", T.FLOAT, [2, 3, 5]), ("s", T.FLOAT, [3]), ("zp", T.UINT8, [3])],
              [("q", T.UINT8, [2, 3, 5]), ("d", T.FLOAT, [2, 3, 5])])
    sets = []
    for k in range(3):
        x = rng.normal(0, 3, (2, 3, 5)).astype(np.float32)
        if k == 2:  # exact ties x / s = n + 0.5
            x = (np.arange(30).reshape(2, 3, 5) - 15 + 0.5).astype(np.float32) * 0.25
        sets.append({"x": x, "s": np.array([0.05, 0.25, 0.02], np.float32),
                     "zp": np.array([128, 3, 250], np.uint8)})
    yield "quantize_runtime_per_axis", m, sets
    if SUITE:
        for n in ("test_dynamicquantizelinear_expanded",
                  "test_dynamicquantizelinear_max_adjusted_expanded",
                  "test_dynamicquantizelinear_min_adjusted_expanded"):
            d = os.path.join(SUITE, n)
            m = onnx.load(os.path.join(d, "model.onnx"))
            z = np.load(os.path.join(d, "inputs.npz"))
            yield n, m, [{k: z[k] for k in z.files}]


def main():
    os.makedirs(OUT, exist_ok=True)
    results = {"nnabla": None, "onnxruntime": ort.__version__, "onnx": onnx.__version__,
               "cases": {}}
    jobs = []
    for name, m, sets in cases():
        p = os.path.join(OUT, name + ".onnx")
        onnx.save(m, p)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(p, so, providers=["CPUExecutionProvider"])
        outs = [o.name for o in sess.get_outputs()]
        io = {}
        for k, s in enumerate(sets):
            for n, v in s.items():
                io["in.%s.%d" % (n, k)] = v
            for n, v in zip(outs, sess.run(None, s)):
                io["ort.%s.%d" % (n, k)] = v
        np.savez(os.path.join(OUT, name + ".io.npz"), **io)
        nnp = os.path.join(OUT, name + ".nnp")
        subprocess.run([MLF, "convert", p, nnp], check=True, capture_output=True)
        order = [i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]
        for k, s in enumerate(sets):
            jd = "/tmp/castq/%s_%d" % (name, k)
            host = CHROOT + jd
            shutil.rmtree(host, ignore_errors=True)
            os.makedirs(host)
            shutil.copy(nnp, os.path.join(host, "m.nnp"))
            for i, n in enumerate(order):
                np.save(os.path.join(host, "in_%d.npy" % i), np.asarray(s[n], np.float32))
            jobs.append((name, k, jd, outs))
        with zipfile.ZipFile(nnp) as z:
            text = z.read("network.nntxt").decode()
        funcs = [l.split('"')[1] for l in text.splitlines() if l.strip().startswith("type:")
                 and "Buffer" not in l and "Parameter" not in l]
        results["cases"][name] = {"nnp_sha256": hashlib.sha256(open(nnp, "rb").read()).hexdigest(),
                                  "functions": funcs, "sets": [{"outputs": {}} for _ in sets]}
        os.remove(nnp)
    subprocess.run(["chroot", CHROOT, "env", "-i", "PATH=/usr/bin:/bin", "HOME=/root",
                    "LC_ALL=C.UTF-8", "/opt/nnenv/bin/python", "-c",
                    "import nnabla;open('/tmp/castq/version','w').write(nnabla.__version__)"],
                   check=True, capture_output=True)
    results["nnabla"] = open(CHROOT + "/tmp/castq/version").read()
    subprocess.run(["chroot", CHROOT, "env", "-i", "PATH=/usr/bin:/bin", "HOME=/root",
                    "LC_ALL=C.UTF-8", "/opt/nnenv/bin/python", "/tmp/run_batch.py"]
                   + [j[2] for j in jobs], check=True, capture_output=True)
    got = {}
    for name, k, jd, outs in jobs:
        host = CHROOT + jd
        if os.path.exists(os.path.join(host, "error.txt")):
            raise SystemExit("%s %d: %s" % (name, k, open(os.path.join(host, "error.txt")).read()))
        io = np.load(os.path.join(OUT, name + ".io.npz"))
        for i, o in enumerate(outs):
            v = np.load(os.path.join(host, "out_%d.npy" % i))
            got.setdefault(name, {})["%s.%d" % (o, k)] = v
            want = io["ort.%s.%d" % (o, k)]
            diff = float(np.max(np.abs(want.astype(np.float64) - v.astype(np.float64))))
            results["cases"][name]["sets"][k]["outputs"][o] = {"dtype": str(want.dtype), "diff": diff}
    for name, d in got.items():
        np.savez(os.path.join(OUT, name + ".nnabla.npz"), **d)
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")
    for name, c in results["cases"].items():
        print(name, [max(o["diff"] for o in s["outputs"].values()) for s in c["sets"]])


main()
