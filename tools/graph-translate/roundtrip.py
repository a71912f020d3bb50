#!/usr/bin/env python3
"""Round trips through ONNX checked in the real runtimes: NNabla -> ONNX -> NNabla and
TenniS -> ONNX -> TenniS.

    roundtrip.py WORK FILE [FILE ...] --mlformats BIN [--report PREFIX] [--make-inputs]
                 [--make-params]

FILE is NAME.nnp (or .nntxt) or NAME.tsm with inputs beside it (NAME.in.npz, or the
testdata/onnx layout NAME.io.npz with in/<name> members; for a .tsm also
testdata/onnx/tennis_NAME.io.npz style files may be given as FILE=INPUTS). An .nntxt whose
parameters are a separate file is given as NAME.nntxt+PARAMS (.h5 or .protobuf): the export
reads it with --params and the original runs as an .nnp archive of the two files, unchanged.
With --make-inputs, a network without inputs beside it gets seeded random ones (normal,
float32) of its first executor's input shapes (`BIN inspect --json`; the batch dimension is
the network's batch size), written to WORK/NAME.in.npz. With --make-params, an .nntxt that
holds no parameter data and has none beside it (a Neural Network Console network as
published) gets the parameters nnabla makes from its initializers when it loads it (seeded;
run_nnabla.py's save_parameters), saved to WORK/NAME.params.h5 and used as NAME.nntxt+PARAMS.
Each is converted
with `BIN convert FILE WORK/NAME.onnx` and back with `BIN convert WORK/NAME.onnx
WORK/NAME.rt.<ext>` (when the import asks for --input-shape, the shapes of the inputs the
round trip runs with are given); the original and the round-tripped file run in the real runtime
(run_nnabla.py with $NNABLA_CHROOT, run_tennis.py with $TENNIS_LIB) on the same inputs and
their outputs must agree (rtol 1e-5, atol 1e-6; by name, else by position). The export
makes an NNabla executor's generator variables (e.g. a Delay's initial state) ONNX inputs:
the file imported back is fed the values the original's generators made. Report
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


def archive(nntxt, params, dst):
    """An .nnp archive of an .nntxt and its separate parameter file, both unchanged."""
    import zipfile

    with zipfile.ZipFile(dst, "w") as z:
        z.write(nntxt, "network.nntxt")
        z.write(params, "parameter" + os.path.splitext(params)[1])
    return dst


def make_inputs(np, binary, path, dst, name):
    """Seeded random inputs of the first executor's inputs; None when unknown."""
    p = subprocess.run([binary, "inspect", path, "--json"], capture_output=True, timeout=120)
    if p.returncode != 0:
        return None
    g = (json.loads(p.stdout) or {}).get("graph") or {}
    exes = g.get("executors") or []
    nets = {n["name"]: n for n in g.get("graphs") or []}
    if not exes or exes[0].get("network") not in nets:
        return None
    net = nets[exes[0]["network"]]
    shapes = {v["name"]: v.get("shape") for v in net.get("values") or []}
    batch = net.get("batch_size") or 1
    seed = sum(name.encode()) * 7919 % (2**31)
    rng = np.random.default_rng(seed)
    arrays = {}
    for i in exes[0].get("inputs") or []:
        shape = shapes.get(i)
        if shape is None:
            return None
        dims = [batch if d < 0 else d for d in shape]
        arrays[i] = rng.standard_normal(dims).astype(np.float32)
    np.savez(dst, **arrays)
    return dst


def generator_shapes(onnx_path, given):
    """--input-shape options for the ONNX inputs the inputs .npz does not hold (an NNabla
    executor's generator variables): their symbolic dimensions take the batch size of the
    inputs given."""
    import onnx

    if not given or not given[0][1].ndim:
        return []
    batch = given[0][1].shape[0]
    names = {n for n, _ in given}
    model = onnx.load(onnx_path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    extra = []
    for i in model.graph.input:
        if i.name in names or i.name in inits:
            continue
        dims = i.type.tensor_type.shape.dim
        shape = [d.dim_value if d.HasField("dim_value") else batch for d in dims]
        extra += ["--input-shape", "%s=%s" % (i.name, ",".join(str(d) for d in shape))]
    return extra


def sha256(path):
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_record(dst, rows, work):
    """The committed record of a run: what each file reached, and the sha256 of both
    conversions of the files that matched, so a test can redo them offline."""
    rec = {}
    for name, row in sorted(rows.items()):
        r = {
            "source": os.path.basename(row["file"]),
            "result": row.get("status") or "stopped at " + row["stage"],
        }
        if row.get("params"):
            r["params"] = os.path.basename(row["params"])
        if row.get("params_made"):
            r["params"] = "made by nnabla from the network's initializers"
        if row.get("inputs"):
            r["inputs"] = row["inputs"]
        if row.get("status"):
            r["max_abs_error"] = row.get("max_abs_error")
        if row.get("status") == "pass":
            back = ".rt.tsm" if row["file"].endswith(".tsm") else ".rt.nnp"
            r["onnx_sha256"] = sha256(os.path.join(work, name + ".onnx"))
            r["sha256"] = sha256(os.path.join(work, name + back))
            r["input_shape"] = (row.get("input_shape") or "").split()
        elif row.get("message"):
            if row.get("input_shape"):
                # the import was retried with these (the message is the retry's)
                r["input_shape"] = row["input_shape"].split()
            msg = row["message"].replace(work + os.sep, "")
            msg = msg.replace(os.path.dirname(row["file"]) + os.sep, "")
            lines = msg.strip().splitlines()
            # the retry with the inputs' shapes says what stopped the import
            retry = [x for x in lines if x.startswith("(with the inputs' shapes: ")]
            if retry:
                lines = [retry[-1][len("(with the inputs' shapes: ") :].rstrip(")")]
            r["message"] = lines[0][:300]
        rec[name] = r
    kinds = {
        "TenniS C++ runtime (CPU)" if r["file"].endswith(".tsm") else "nnabla 1.39.0"
        for r in rows.values()
    }
    runtime = " and ".join(sorted(kinds)) or "nnabla 1.39.0"
    with open(dst, "w") as f:
        json.dump({"runtime": runtime, "rtol": 1e-5, "atol": 1e-6, "files": rec}, f, indent=1)
        f.write("\n")


def main():
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("work")
    ap.add_argument("files", nargs="+", help="FILE or FILE=INPUTS.npz")
    ap.add_argument("--mlformats", default=os.environ.get("MLFORMATS"))
    ap.add_argument("--report")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--make-inputs", action="store_true")
    ap.add_argument("--make-params", action="store_true")
    ap.add_argument(
        "--record",
        help="also write this JSON record (no paths of this machine): per file the result, "
        "the sha256 of the ONNX export and of the file imported back, the input shapes given",
    )
    args = ap.parse_args()
    if not args.mlformats:
        raise SystemExit("give --mlformats BIN or set MLFORMATS")
    binary = os.path.abspath(args.mlformats)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    rows = {}
    jobs = {".nnp": [], ".tsm": []}

    def convert_one(name, path, ext, inputs, params):
        """Both conversions of one file; queues its runs. False when the export stopped
        because the network holds no parameter data."""
        row = rows[name]
        read = ["--params", os.path.abspath(params)] if params else []
        onnx_path = os.path.join(work, name + ".onnx")
        back = os.path.join(work, name + ".rt" + (".tsm" if ext == ".tsm" else ".nnp"))
        ok, msg = oc.convert(binary, path, onnx_path, args.timeout, read)
        if not ok:
            row["message"] = msg
            return "has no data in this file" not in msg
        row["stage"] = "import"
        ok, msg = oc.convert(binary, onnx_path, back, args.timeout)
        if not ok and "--input-shape" in msg:
            # symbolic dimensions: fix them to the shapes this round trip runs with
            extra = []
            given = bc.read_inputs(np, inputs)
            for n, a in given:
                extra += ["--input-shape", "%s=%s" % (n, ",".join(str(d) for d in a.shape))]
            extra += generator_shapes(onnx_path, given)
            ok, msg2 = oc.convert(binary, onnx_path, back, args.timeout, extra)
            msg = msg2 if ok else msg + "\n(with the inputs' shapes: " + msg2 + ")"
            row["input_shape"] = " ".join(extra[1::2])
        if not ok:
            row["message"] = msg
            return True
        row["stage"] = "run"
        kind = ".tsm" if ext == ".tsm" else ".nnp"
        orig = path
        if params:
            orig = archive(path, params, os.path.join(work, name + ".orig.nnp"))
        for tag, model in (("orig", orig), ("rt", back)):
            out = os.path.join(work, "%s.%s.out.npz" % (name, tag))
            job = {"id": name + "/" + tag, "model": model, "inputs": inputs, "outputs": out}
            if kind == ".nnp" and tag == "orig":
                # the export makes generator variables inputs: the file imported back
                # is fed the values the original's generators made
                job["generated"] = os.path.join(work, name + ".generated.npz")
            jobs[kind].append(job)
        return True

    no_params = []
    for spec in args.files:
        path, _, inputs = spec.partition("=")
        path, _, params = path.partition("+")
        path = os.path.abspath(path)
        name, ext = os.path.splitext(os.path.basename(path))
        base, k = name, 1
        while name in rows:
            k += 1
            name = "%s_%d" % (base, k)
        inputs = os.path.abspath(inputs) if inputs else find_inputs(path)
        row = rows[name] = {"file": path, "stage": "export"}
        if params:
            row["params"] = os.path.abspath(params)
        if ext not in RUNNER:
            row.update(stage="skipped", message="not a network or module file")
            continue
        if inputs is None and args.make_inputs:
            dst = os.path.join(work, name + ".in.npz")
            inputs = make_inputs(np, binary, path, dst, name)
            row["inputs"] = "made"
        if inputs is None:
            msg = "no NAME.in.npz or NAME.io.npz beside it"
            if args.make_inputs:
                msg += ", and none made: the file has no executor, or its input shapes are unknown"
            row.update(stage="skipped", message=msg)
            continue
        if not convert_one(name, path, ext, inputs, params) and ext == ".nntxt":
            no_params.append((name, path, ext, inputs))
    if no_params and args.make_params:
        # nnabla makes the parameters of each such network from its initializers
        # (seeded); the round trip then runs with those, as NAME.nntxt+NAME.params.h5
        made = [
            {
                "id": name,
                "model": path,
                "inputs": inputs,
                "outputs": os.path.join(work, name + ".params.out.npz"),
                "save_parameters": os.path.join(work, name + ".params.h5"),
            }
            for name, path, _, inputs in no_params
        ]
        bpath = os.path.join(work, "batch.params.json")
        with open(bpath, "w") as f:
            json.dump(made, f, indent=1)
        rpath = os.path.join(work, "batch.params.results.json")
        script = os.path.join(HERE, RUNNER[".nnp"])
        cmd = [sys.executable, script, bpath, "--results", rpath, "-q"]
        subprocess.run(cmd + ["--timeout", str(args.timeout)], check=True)
        with open(rpath) as f:
            res = json.load(f)
        for (name, path, ext, inputs), job, r in zip(no_params, made, res):
            if r["status"] != "ok" or not os.path.exists(job["save_parameters"]):
                rows[name]["message"] += "\n(nnabla made no parameters: %s)" % r.get("error", "")
                continue
            rows[name].pop("message", None)
            rows[name]["params"] = job["save_parameters"]
            rows[name]["params_made"] = True
            convert_one(name, path, ext, inputs, job["save_parameters"])

    def with_generated(job):
        """The rt job, its inputs joined by what the original's generators made."""
        gen = job["id"][: -len("/rt")] + ".generated.npz"
        gen = os.path.join(work, gen)
        if not job["id"].endswith("/rt") or not os.path.exists(gen):
            return job
        arrays = dict(bc.read_inputs(np, job["inputs"]))
        with np.load(gen) as z:
            arrays.update({k: z[k] for k in z.files})
        merged = gen[: -len(".generated.npz")] + ".rt.in.npz"
        np.savez(merged, **arrays)
        return dict(job, inputs=merged)

    results = {}
    # nnabla: the originals first (their generators' values feed the files imported back)
    phases = [
        (".nnp", "orig", [j for j in jobs[".nnp"] if j["id"].endswith("/orig")]),
        (".nnp", "rt", [j for j in jobs[".nnp"] if not j["id"].endswith("/orig")]),
        (".tsm", "", jobs[".tsm"]),
    ]
    for kind, phase, batch in phases:
        if not batch:
            continue
        if phase == "rt":
            batch = [with_generated(j) for j in batch]
        bpath = os.path.join(work, "batch%s%s.json" % (kind, phase and "." + phase))
        rpath = os.path.join(work, "batch%s%s.results.json" % (kind, phase and "." + phase))
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
    if args.record:
        write_record(args.record, rows, work)
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
