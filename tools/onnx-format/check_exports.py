#!/usr/bin/env python3
"""Checks exported ONNX models: `onnx.checker` and, where a reference exists,
onnxruntime's outputs against it.

usage: check_exports.py [--tolerance T] FILE.onnx...

For every FILE.onnx: `onnx.checker.check_model(full_check=True)`. When
FILE.io.npz sits beside it (arrays `in/<name>` and `out/<name>`, as
nnabla_reference.py writes them), onnxruntime runs the model on the `in/`
arrays and every `out/` array is compared: the largest absolute difference
divided by the largest absolute reference value (at least 1e-6) must be at
most T (default 1e-4). Prints one line per model and a closing
"N passed, N failed" line; exits 1 when anything failed.
"""
import os
import sys

import numpy as np
import onnx


def rel_error(got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        if got.size == want.size:
            got = got.reshape(want.shape)
        else:
            return float("inf")
    # NaN where the reference has NaN matches (nnabla's own output can be NaN)
    both_nan = np.isnan(got) & np.isnan(want)
    got = np.where(both_nan, 0.0, got)
    want = np.where(both_nan, 0.0, want)
    if not want.size:
        return 0.0
    scale = max(float(np.max(np.abs(want))), 1e-6)
    return float(np.max(np.abs(got - want))) / scale


def check(path, tol):
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    ref = path[: -len(".onnx")] + ".io.npz"
    if not os.path.exists(ref):
        return "checker ok"
    import onnxruntime as ort

    io = np.load(ref)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {}
    for i in sess.get_inputs():
        feeds[i.name] = io["in/" + i.name].astype(np.float32)
    names = [o.name for o in sess.get_outputs()]
    got = sess.run(names, feeds)
    worst = 0.0
    for n, g in zip(names, got):
        key = "out/" + n
        if key not in io:
            continue
        e = rel_error(g, io[key])
        worst = max(worst, e)
        if not e <= tol:
            raise AssertionError(f"output {n!r}: relative error {e:.3g} > {tol}")
    return f"checker ok, onnxruntime matches the reference (relative error {worst:.2g})"


def main():
    args = sys.argv[1:]
    tol = 1e-4
    if args[:1] == ["--tolerance"]:
        tol = float(args[1])
        args = args[2:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    passed = failed = 0
    for p in sorted(args):
        try:
            msg = check(p, tol)
            passed += 1
            print(f"ok {p}: {msg}")
        except Exception as e:
            failed += 1
            print(f"FAILED {p}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
