#!/usr/bin/env python3
"""Reference outputs of generated NNabla networks and TenniS modules, from the real runtimes.

    reference_outputs.py DIR [DIR ...] [--runtime nnabla|tennis|both] [--force]

Every DIR/NAME.nnp (or .nntxt) and DIR/NAME.tsm that has inputs DIR/NAME.in.npz (or the
testdata/onnx layout DIR/NAME.io.npz with in/<name> members) is run, in one batch per runtime,
by run_nnabla.py ($NNABLA_CHROOT, root) or run_tennis.py ($TENNIS_LIB); what the runtime
computed is written to DIR/NAME.out.npz (nnabla: one member per output variable, by name;
TenniS: out_0, out_1, ... in the module's output order). An existing .out.npz is kept unless
--force. Files the runtime cannot run are listed with the runtime's error and get no
.out.npz; the exit status is 1 when any did. This is the maintainer step that produces the
reference outputs committed under testdata/; it builds nothing.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = {"nnabla": ((".nnp", ".nntxt"), "run_nnabla.py"), "tennis": ((".tsm",), "run_tennis.py")}


def collect(dirs, exts, force):
    jobs = []
    for d in dirs:
        for f in sorted(os.listdir(d)):
            stem, ext = os.path.splitext(f)
            if ext not in exts:
                continue
            base = os.path.join(os.path.abspath(d), stem)
            inputs = next(
                (base + s for s in (".in.npz", ".io.npz") if os.path.exists(base + s)), None
            )
            out = base + ".out.npz"
            if inputs is None:
                print("%s: no %s.in.npz, skipped" % (f, stem), file=sys.stderr)
                continue
            if os.path.exists(out) and not force:
                continue
            jobs.append({"id": f, "model": base + ext, "inputs": inputs, "outputs": out})
    return jobs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--runtime", choices=["nnabla", "tennis", "both"], default="both")
    ap.add_argument("--force", action="store_true", help="recompute existing .out.npz")
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args()
    failed = 0
    for kind in ("nnabla", "tennis"):
        if args.runtime not in (kind, "both"):
            continue
        exts, script = KINDS[kind]
        jobs = collect(args.dirs, exts, args.force)
        if not jobs:
            continue
        with tempfile.TemporaryDirectory(prefix="mlf-ref-") as tmp:
            batch = os.path.join(tmp, "batch.json")
            results = os.path.join(tmp, "results.json")
            with open(batch, "w") as f:
                json.dump(jobs, f)
            cmd = [sys.executable, os.path.join(HERE, script), batch, "--results", results, "-q"]
            subprocess.run(cmd + ["--timeout", str(args.timeout)], check=True)
            with open(results) as f:
                res = json.load(f)
        for r in res:
            if r["status"] == "ok":
                print("%s: %s -> %s" % (kind, r["id"], ", ".join(r.get("outputs", []))))
            else:
                failed += 1
                err = (r.get("error") or "").strip()
                print("%s: %s FAILED (%s): %s" % (kind, r["id"], r["status"], err), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
