#!/usr/bin/env python3
"""Round trips through ONNX checked in the real runtimes: NNabla -> ONNX -> NNabla and
TenniS -> ONNX -> TenniS.

    roundtrip.py WORK FILE [FILE ...] --mlformats BIN [--report PREFIX]

FILE is NAME.nnp (or .nntxt) or NAME.tsm with inputs beside it (NAME.in.npz, or the
testdata/onnx layout NAME.io.npz with in/<name> members; for a .tsm also
testdata/onnx/tennis_NAME.io.npz style files may be given as FILE=INPUTS). Each is converted
with `BIN convert FILE WORK/NAME.onnx` and back with `BIN convert WORK/NAME.onnx
WORK/NAME.rt.<ext>` (when the import asks for --input-shape, the shapes of the inputs the
round trip runs with are given); the original and the round-tripped file run in the real runtime
(run_nnabla.py with $NNABLA_CHROOT, run_tennis.py with $TENNIS_LIB) on the same inputs and
their outputs must agree (rtol 1e-5, atol 1e-6; by name, else by position). Report
PREFIX.json/.md (default WORK/roundtrip): per file the stage it reached (export, import,
run, compare) with the tool's message. Exit 1 when a round trip runs but differs.
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

RUNNER = {".nnp": "run_nnabla.py", ".nntxt": "run_nnabla.py", ".tsm": "run_tennis.py"}


def find_inputs(path):
    base = os.path.splitext(path)[0]
    for s in (".in.npz", ".io.npz"):
        if os.path.exists(base + s):
            return base + s
    return None


def main():
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("work")
    ap.add_argument("files", nargs="+", help="FILE or FILE=INPUTS.npz")
    ap.add_argument("--mlformats", default=os.environ.get("MLFORMATS"))
    ap.add_argument("--report")
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args()
    if not args.mlformats:
        raise SystemExit("give --mlformats BIN or set MLFORMATS")
    binary = os.path.abspath(args.mlformats)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    rows = {}
    jobs = {".nnp": [], ".tsm": []}
    for spec in args.files:
        path, _, inputs = spec.partition("=")
        path = os.path.abspath(path)
        name, ext = os.path.splitext(os.path.basename(path))
        inputs = os.path.abspath(inputs) if inputs else find_inputs(path)
        row = rows[name] = {"file": path, "stage": "export"}
        if ext not in RUNNER:
            row.update(stage="skipped", message="not a network or module file")
            continue
        if inputs is None:
            row.update(stage="skipped", message="no NAME.in.npz or NAME.io.npz beside it")
            continue
        onnx_path = os.path.join(work, name + ".onnx")
        back = os.path.join(work, name + ".rt" + (".tsm" if ext == ".tsm" else ".nnp"))
        ok, msg = oc.convert(binary, path, onnx_path, args.timeout)
        if not ok:
            row["message"] = msg
            continue
        row["stage"] = "import"
        ok, msg = oc.convert(binary, onnx_path, back, args.timeout)
        if not ok and "--input-shape" in msg:
            # symbolic dimensions: fix them to the shapes this round trip runs with
            extra = []
            for n, a in bc.read_inputs(np, inputs):
                extra += ["--input-shape", "%s=%s" % (n, ",".join(str(d) for d in a.shape))]
            ok, msg2 = oc.convert(binary, onnx_path, back, args.timeout, extra)
            msg = msg2 if ok else msg + "\n(with the inputs' shapes: " + msg2 + ")"
            row["input_shape"] = " ".join(extra[1::2])
        if not ok:
            row["message"] = msg
            continue
        row["stage"] = "run"
        kind = ".tsm" if ext == ".tsm" else ".nnp"
        for tag, model in (("orig", path), ("rt", back)):
            out = os.path.join(work, "%s.%s.out.npz" % (name, tag))
            jobs[kind].append(
                {"id": name + "/" + tag, "model": model, "inputs": inputs, "outputs": out}
            )
    results = {}
    for kind, batch in jobs.items():
        if not batch:
            continue
        bpath = os.path.join(work, "batch%s.json" % kind)
        rpath = os.path.join(work, "batch%s.results.json" % kind)
        with open(bpath, "w") as f:
            json.dump(batch, f, indent=1)
        script = os.path.join(HERE, RUNNER[kind])
        cmd = [
            sys.executable,
            script,
            bpath,
            "--results",
            rpath,
            "-q",
            "--timeout",
            str(args.timeout),
        ]
        subprocess.run(cmd, check=True)
        with open(rpath) as f:
            for job, res in zip(batch, json.load(f)):
                results[job["id"]] = (job, res)
    bad = 0
    for name, row in rows.items():
        if row["stage"] != "run":
            continue
        (jo, ro), (jr, rr) = results[name + "/orig"], results[name + "/rt"]
        if ro["status"] != "ok":
            row["message"] = "the original does not run: " + ro.get("error", "")
            continue
        if rr["status"] != "ok":
            row["message"] = "the round-tripped file does not run: " + rr.get("error", "")
            bad += 1
            continue
        row["stage"] = "compare"
        with np.load(jo["outputs"]) as z:
            want = {k: z[k] for k in z.files}
        with np.load(jr["outputs"]) as z:
            got = {k: z[k] for k in z.files}
        status, detail, mabs, _ = oc.compare(np, got, want, 1e-5, 1e-6)
        row.update(status=status, max_abs_error=mabs)
        if detail:
            row["message"] = detail
        if status != "pass":
            bad += 1
    prefix = args.report or os.path.join(work, "roundtrip")
    with open(prefix + ".json", "w") as f:
        json.dump(rows, f, indent=1)
    counts = {}
    for row in rows.values():
        key = row.get("status") or "stopped at " + row["stage"]
        counts[key] = counts.get(key, 0) + 1
    lines = [
        "# Round trips through ONNX",
        "",
        ", ".join("%s %d" % kv for kv in sorted(counts.items())),
    ]
    lines += ["", "| file | result | detail |", "|---|---|---|"]
    for name, row in sorted(rows.items()):
        res = row.get("status") or "stopped at " + row["stage"]
        msg = (row.get("message") or "").strip().replace("\n", " ").replace("|", "/")[:200]
        lines.append("| %s | %s | %s |" % (name, res, msg))
    with open(prefix + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print(json.dumps({"report": prefix + ".md", "counts": counts}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
