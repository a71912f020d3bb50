#!/usr/bin/env python3
"""ONNX exports checked against the real runtimes: what onnxruntime computes on the export
must be what nnabla or TenniS computed on the original.

    export_check.py WORK DIR [DIR ...] --mlformats BIN [--rtol R] [--atol A] [--report PREFIX]
                    [--random STEM ...]

For every DIR/NAME.nnp (.nntxt) and DIR/NAME.tsm with inputs DIR/NAME.in.npz (or
NAME.io.npz with in/<name> members): the runtime's outputs DIR/NAME.out.npz are made with
reference_outputs.py when missing (needs $NNABLA_CHROOT / $TENNIS_LIB; committed ones are
used as they are), the file is exported with `BIN convert FILE WORK/NAME.onnx`, onnxruntime
runs the export on the same inputs (by input name, else in order), and its outputs must
match the runtime's (by name, else in order) within rtol/atol (default 1e-4/1e-5). Report
PREFIX.json/.md (default WORK/export_check); exit 1 when an export runs but differs.
A file named by --random (its stem, e.g. `dropout`) computes random values in its runtime
(nnabla's Dropout): only the names and shapes of its outputs are compared.
Needs numpy and onnxruntime.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import batch_common as bc  # noqa: E402
import onnx_conformance as oc  # noqa: E402

EXTS = (".nnp", ".nntxt", ".tsm")


def main():
    import numpy as np
    import onnxruntime as ort

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("work")
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--mlformats", default=os.environ.get("MLFORMATS"))
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--report")
    ap.add_argument("--random", action="append", default=[], metavar="STEM")
    args = ap.parse_args()
    if not args.mlformats:
        raise SystemExit("give --mlformats BIN or set MLFORMATS")
    binary = os.path.abspath(args.mlformats)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    missing = [d for d in args.dirs if needs_reference(d)]
    if missing:
        cmd = [sys.executable, os.path.join(HERE, "reference_outputs.py")] + missing
        subprocess.run(cmd)  # files the runtime cannot run are reported below
    rows = {}
    bad = 0
    for d in args.dirs:
        for f in sorted(os.listdir(d)):
            stem, ext = os.path.splitext(f)
            if ext not in EXTS:
                continue
            base = os.path.join(d, stem)
            inputs = next(
                (base + s for s in (".in.npz", ".io.npz") if os.path.exists(base + s)), None
            )
            row = rows[f] = {"file": os.path.abspath(base + ext)}
            if inputs is None:
                row["status"] = "no inputs"
                continue
            if not os.path.exists(base + ".out.npz"):
                row["status"] = "runtime failed"
                continue
            onnx_path = os.path.join(work, stem + ext.replace(".", "_") + ".onnx")
            ok, msg = oc.convert(binary, base + ext, onnx_path, 120)
            if not ok:
                row.update(status="refused", message=msg)
                continue
            try:
                sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
                names = [i.name for i in sess.get_inputs()]
                feed, _ = bc.order_inputs(bc.read_inputs(np, inputs), names)
                res = sess.run(None, {n: a for n, (_, a) in zip(names, feed)})
            except Exception as e:  # the export does not load or run: a failure of the export
                row.update(status="onnxruntime error", message=str(e)[:500])
                bad += 1
                continue
            got = {o.name: r for o, r in zip(sess.get_outputs(), res)}
            with np.load(base + ".out.npz") as z:
                want = {k: z[k] for k in z.files}
            if stem in args.random:
                shapes = lambda d: sorted((k, np.shape(v)) for k, v in d.items())  # noqa: E731
                same = shapes(got) == shapes(want) or [s for _, s in shapes(got)] == [
                    np.shape(v) for v in want.values()
                ]
                row.update(status="pass (random: shapes)" if same else "wrong")
                if not same:
                    row["message"] = f"shapes {shapes(got)} against {shapes(want)}"
                    bad += 1
                continue
            status, detail, mabs, _ = oc.compare(np, got, want, args.rtol, args.atol)
            row.update(status=status, max_abs_error=mabs, sha256=oc.sha256(onnx_path))
            if detail:
                row["message"] = detail
            if status != "pass":
                bad += 1
    prefix = args.report or os.path.join(work, "export_check")
    with open(prefix + ".json", "w") as f:
        json.dump(rows, f, indent=1)
    counts = {}
    for r in rows.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    lines = ["# ONNX exports against the real runtimes", "", json.dumps(counts), ""]
    lines += ["| file | result | max abs error | detail |", "|---|---|---|---|"]
    for name, r in sorted(rows.items()):
        msg = (r.get("message") or "").strip().replace("\n", " ").replace("|", "/")[:200]
        lines.append("| %s | %s | %s | %s |" % (name, r["status"], r.get("max_abs_error", ""), msg))
    with open(prefix + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print(json.dumps({"report": prefix + ".md", "counts": counts}))
    return 1 if bad else 0


def needs_reference(d):
    for f in os.listdir(d):
        stem, ext = os.path.splitext(f)
        base = os.path.join(d, stem)
        has_in = os.path.exists(base + ".in.npz") or os.path.exists(base + ".io.npz")
        if ext in EXTS and has_in and not os.path.exists(base + ".out.npz"):
            return True
    return False


if __name__ == "__main__":
    sys.exit(main())
