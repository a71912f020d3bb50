#!/usr/bin/env python3
"""Converts the models cases.py wrote (with --input-value for those in fixed.json), runs the
.nnp in the real nnabla and the .tsm in the real TenniS runtime, compares both with
onnxruntime's outputs (NAME.io.npz) and writes results.json (inputs, onnxruntime's outputs,
each runtime's outputs, worst absolute differences, sha256 of each file run) and NAME.tsm.

    NNABLA_CHROOT=DIR TENNIS_LIB=libtennis.so check.py --mlformats BIN WORK   # root, numpy
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "..", "..", "tools", "graph-translate")
RUNTIMES = (("nnp", "nnabla", "run_nnabla.py"), ("tsm", "tennis", "run_tennis.py"))


def arr(a):
    return {"shape": list(a.shape), "data": np.asarray(a, np.float64).ravel().tolist()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlformats", required=True)
    ap.add_argument("work")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    with open(os.path.join(HERE, "fixed.json")) as f:
        fixed = json.load(f)
    batches = {ext: [] for ext, _, _ in RUNTIMES}
    cases = {}
    for name, values in fixed.items():
        io = np.load(os.path.join(HERE, name + ".io.npz"))
        ins = {k[3:]: io[k] for k in io.files if k.startswith("in/")}
        outs = {k[4:]: io[k] for k in io.files if k.startswith("out/")}
        feed = os.path.join(a.work, name + ".in.npz")
        np.savez(feed, **ins)
        case = {
            "input_values": values,
            "inputs": {k: arr(v) for k, v in ins.items()},
            "onnxruntime": {k: arr(v) for k, v in outs.items()},
        }
        for ext, runtime, _ in RUNTIMES:
            out = os.path.join(a.work, f"{name}.{ext}")
            cmd = [a.mlformats, "convert", os.path.join(HERE, name + ".onnx"), out]
            for k, v in values.items():
                cmd += ["--input-value", f"{k}={','.join(str(x) for x in v)}"]
            subprocess.run(cmd, check=True)
            with open(out, "rb") as f:
                data = f.read()
            case[runtime] = {"sha256": hashlib.sha256(data).hexdigest()}
            if ext == "tsm":
                with open(os.path.join(HERE, name + ".tsm"), "wb") as f:
                    f.write(data)
            batches[ext].append({"id": name, "model": out, "inputs": feed,
                                 "outputs": os.path.join(a.work, f"{name}.out.{ext}.npz")})
        cases[name] = case
    for ext, _, tool in RUNTIMES:
        b = os.path.join(a.work, f"batch.{ext}.json")
        with open(b, "w") as f:
            json.dump(batches[ext], f)
        subprocess.run([sys.executable, os.path.join(TOOLS, tool), b], check=True)
    for name, case in cases.items():
        expected = [np.array(v["data"]).reshape(v["shape"]) for v in case["onnxruntime"].values()]
        for ext, runtime, _ in RUNTIMES:
            got = np.load(os.path.join(a.work, f"{name}.out.{ext}.npz"))
            outs = [got[k] for k in got.files]
            assert len(outs) == len(expected), (name, runtime)
            rec = case[runtime]
            rec["outputs"] = [arr(g.reshape(e.shape)) for g, e in zip(outs, expected)]
            rec["max_abs_diff"] = [
                float(np.abs(g.reshape(e.shape).astype(np.float64) - e).max())
                for g, e in zip(outs, expected)
            ]
            print(name, runtime, rec["max_abs_diff"])
    with open(os.path.join(HERE, "results.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
