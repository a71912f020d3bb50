#!/usr/bin/env python3
"""Gemm/MatMul weights keep their ONNX names through .nnp and back.

    cases.py OUT MLFORMATS CHROOT

writes OUT/NAME.onnx, NAME.io.npz (in.<input>.<k>, ort.<output>.<k>: onnxruntime),
NAME.nnabla.npz (<output>.<k>: nnabla 1.39 running the .nnp `MLFORMATS convert
NAME.onnx NAME.nnp` wrote), NAME.back.npz (<output>.<k>: onnxruntime running the
ONNX `MLFORMATS convert NAME.nnp NAME.back.onnx` wrote) and results.json (the
.nnp's sha256, its parameter names, the worst differences).
"""
import hashlib, json, os, shutil, subprocess, sys, zipfile
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh
import onnxruntime as ort

OUT, MLF, CHROOT = sys.argv[1:4]
rng = np.random.default_rng(7)


def w(name, *shape):
    return nh.from_array(rng.normal(0, 0.5, shape).astype(np.float32), name)


def model(nodes, ins, outs, inits, opset=17):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in ins],
                     [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in outs], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def cases():
    # torch.nn.Linear as the TorchScript exporter writes it (Gemm transB=1),
    # a Gemm with transB=0, a MatMul + Add with a /-prefixed weight, and a
    # second Gemm reading the first one's weight
    nodes = [h.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h1"], transB=1),
             h.make_node("Relu", ["h1"], ["r1"]),
             h.make_node("Gemm", ["r1", "fc2.weight", "fc2.bias"], ["h2"]),
             h.make_node("MatMul", ["h2", "/proj/MatMul_weight"], ["m3"]),
             h.make_node("Add", ["m3", "proj.bias"], ["y"]),
             h.make_node("Gemm", ["x", "fc1.weight"], ["z"], transB=1)]
    inits = [w("fc1.weight", 6, 8), w("fc1.bias", 6), w("fc2.weight", 6, 5), w("fc2.bias", 5),
             w("/proj/MatMul_weight", 5, 4), w("proj.bias", 4)]
    m = model(nodes, [("x", [2, 8])], [("y", [2, 4]), ("z", [2, 6])], inits)
    yield "mlp_gemm", m, [{"x": rng.normal(0, 1, (2, 8)).astype(np.float32)} for _ in range(2)]
    # a 3-D input through MatMul + Add (the newer exporters' Linear)
    nodes = [h.make_node("MatMul", ["x", "/layers.0/fc/weight"], ["m"]),
             h.make_node("Add", ["m", "layers.0.fc.bias"], ["y"])]
    inits = [w("/layers.0/fc/weight", 8, 6), w("layers.0.fc.bias", 6)]
    m = model(nodes, [("x", [2, 3, 8])], [("y", [2, 3, 6])], inits)
    yield "matmul_3d", m, [{"x": rng.normal(0, 1, (2, 3, 8)).astype(np.float32)}]


def run(path, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return [o.name for o in s.get_outputs()], s.run(None, feeds)


def main():
    os.makedirs(OUT, exist_ok=True)
    results = {"onnxruntime": ort.__version__, "onnx": onnx.__version__, "cases": {}}
    jobs = []
    for name, m, sets in cases():
        p = os.path.join(OUT, name + ".onnx")
        onnx.save(m, p)
        nnp = os.path.join(OUT, name + ".nnp")
        back = os.path.join(OUT, name + ".back.onnx")
        subprocess.run([MLF, "convert", p, nnp], check=True, capture_output=True)
        subprocess.run([MLF, "convert", nnp, back], check=True, capture_output=True)
        io, bk = {}, {}
        for k, s in enumerate(sets):
            for n, v in s.items():
                io["in.%s.%d" % (n, k)] = v
            outs, vals = run(p, s)
            for n, v in zip(outs, vals):
                io["ort.%s.%d" % (n, k)] = v
            bouts, bvals = run(back, s)
            for n, v in zip(bouts, bvals):
                bk["%s.%d" % (n, k)] = v
            jd = "/tmp/wnames/%s_%d" % (name, k)
            host = CHROOT + jd
            shutil.rmtree(host, ignore_errors=True)
            os.makedirs(host)
            shutil.copy(nnp, os.path.join(host, "m.nnp"))
            for i, n in enumerate([i.name for i in m.graph.input]):
                np.save(os.path.join(host, "in_%d.npy" % i), s[n])
            jobs.append((name, k, jd, outs))
        np.savez(os.path.join(OUT, name + ".io.npz"), **io)
        np.savez(os.path.join(OUT, name + ".back.npz"), **bk)
        back_m = onnx.load(back)
        results["cases"][name] = {
            "nnp_sha256": hashlib.sha256(open(nnp, "rb").read()).hexdigest(),
            "back_initializers": sorted(t.name for t in back_m.graph.initializer),
            "back_nodes": [n.op_type for n in back_m.graph.node],
            "sets": [{} for _ in sets]}
        os.remove(nnp)
        os.remove(back)
    subprocess.run(["chroot", CHROOT, "env", "-i", "PATH=/usr/bin:/bin", "HOME=/root",
                    "LC_ALL=C.UTF-8", "/opt/nnenv/bin/python", "/tmp/run_batch.py"]
                   + [j[2] for j in jobs], check=True, capture_output=True)
    got = {}
    for name, k, jd, outs in jobs:
        host = CHROOT + jd
        if os.path.exists(os.path.join(host, "error.txt")):
            raise SystemExit("%s %d: %s" % (name, k, open(os.path.join(host, "error.txt")).read()))
        io = np.load(os.path.join(OUT, name + ".io.npz"))
        bk = np.load(os.path.join(OUT, name + ".back.npz"))
        for i, o in enumerate(outs):
            v = np.load(os.path.join(host, "out_%d.npy" % i))
            got.setdefault(name, {})["%s.%d" % (o, k)] = v
            want = io["ort.%s.%d" % (o, k)]
            results["cases"][name]["sets"][k][o] = {
                "scale": float(np.abs(want).max()),
                "nnabla_diff": float(np.abs(want - v).max()),
                "back_diff": float(np.abs(want - bk["%s.%d" % (o, k)]).max())}
    for name, d in got.items():
        np.savez(os.path.join(OUT, name + ".nnabla.npz"), **d)
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(results, indent=1))


main()
