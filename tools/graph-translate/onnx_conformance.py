#!/usr/bin/env python3
"""ONNX import checked in the real runtimes: the ONNX backend node tests and model tests.

Step 1, generate a suite (Python with the pinned onnx, numpy, onnxruntime; with --venv DIR the
script makes that venv itself and re-runs in it):

    onnx_conformance.py generate nodes OUT    # the onnx wheel's node test cases
    onnx_conformance.py generate models OUT   # its light/ architectures and pytorch-converted/

Every case becomes OUT/<case>/model.onnx, inputs.npz (graph inputs without initializers, in graph
order), expected.npz (graph outputs in order) and case.json (kind, operators, tolerance). Node
cases keep the expected outputs the onnx package defines; model cases get onnxruntime's outputs
on the same input (light models: the onnx test runner's deterministic input arange(n)/n).

Step 2, run it (root when nnabla runs in its chroot):

    onnx_conformance.py run SUITE WORK --mlformats BIN [--targets nnp,tsm] [--only REGEX]
        [--report PREFIX]

For each case and target: `BIN convert model.onnx WORK/<case>/model.<target>` (a non-zero exit
is a refusal, its message kept), the converted files run in the real runtime (run_nnabla.py with
$NNABLA_CHROOT, run_tennis.py with $TENNIS_LIB), and each output is compared with the expected one
(by name, else by position) within rtol/atol: 1e-4/1e-4 unless the case sets its own tolerance.
A case that converts but computes something else is "WRONG"; the report lists those first.
Writes PREFIX.json (per case: converted?, refusal message, sha256 of the converted file,
status pass/wrong/error/crash/timeout, max errors) and PREFIX.md (per ONNX operator counts).

Step 3, offline re-check (what CI can do without the runtimes):

    onnx_conformance.py manifest PREFIX.json MANIFEST.json     # the verified conversions' sha256
    onnx_conformance.py check-sha SUITE MANIFEST.json --mlformats BIN

check-sha re-converts each listed case and fails unless every file is byte-identical to the one
the real runtime verified.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PINS = ["onnx==1.23.2", "onnxruntime==1.32.0", "numpy==2.4.6"]
ONNX_DEFAULT_TOL = (1e-3, 1e-7)  # what onnx's expect() gives a case that sets none
OUR_TOL = (1e-4, 1e-4)
TARGETS = {"nnp": "run_nnabla.py", "tsm": "run_tennis.py"}


def ensure_python(venv):
    """Re-run this script in `venv` (made with the pinned packages) unless onnx is importable."""
    if venv is None:
        return
    py = os.path.join(venv, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run(pip + PINS, check=True)
    os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])


# ---------------------------------------------------------------- generate


def write_case(out, name, model, inputs, expected, meta):
    import numpy as np
    import onnx

    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))

    meta = dict(meta)
    exotic = {}

    # strings as fixed-width unicode (an object array would need pickle to load); types numpy
    # lacks (bfloat16, float8, int4: ml_dtypes) as their raw bits, the case marked as such
    def plain(pairs):
        out = {}
        for k, v in pairs:
            if v.dtype == object:
                v = v.astype(str)
            elif not isinstance(v.dtype.type, type) or v.dtype.type.__module__ != "numpy":
                exotic[k] = str(v.dtype)
                v = v.view("u%d" % v.dtype.itemsize)
            out[k] = v
        return out

    np.savez(os.path.join(d, "inputs.npz"), **plain(inputs))
    np.savez(os.path.join(d, "expected.npz"), **plain(expected))
    if exotic:
        meta["exotic_dtypes"] = exotic
    meta["ops"] = sorted({n.op_type for n in model.graph.node})
    meta["nodes"] = len(model.graph.node)
    meta["opset"] = {o.domain or "ai.onnx": o.version for o in model.opset_import}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(meta, f, indent=1)


def graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in inits]


def gen_nodes(out):
    import numpy as np
    from onnx import numpy_helper
    from onnx.backend.test.case import node

    n = skipped = 0
    for case in node.collect_testcases(None):
        if not case.data_sets:
            continue
        ins, outs = case.data_sets[0]
        g = case.model.graph
        try:
            inputs = [(v.name, to_array(np, numpy_helper, x)) for v, x in zip(g.input, ins)]
            expected = [(v.name, to_array(np, numpy_helper, x)) for v, x in zip(g.output, outs)]
        except TypeError:
            skipped += 1  # sequences, maps, optionals: not tensors
            continue
        own = (case.rtol, case.atol) != ONNX_DEFAULT_TOL
        meta = {
            "kind": "node",
            "rtol": case.rtol if own else OUR_TOL[0],
            "atol": case.atol if own else OUR_TOL[1],
            "tolerance_from": "case" if own else "default",
        }
        write_case(out, case.name, case.model, inputs, expected, meta)
        n += 1
    print("wrote %d node cases to %s (%d with non-tensor data left out)" % (n, out, skipped))


def to_array(np, numpy_helper, x):
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (np.generic, int, float, bool)):
        return np.array(x)
    if hasattr(x, "dims") and hasattr(x, "data_type"):
        return numpy_helper.to_array(x)
    raise TypeError("not a tensor: %s" % type(x).__name__)


def gen_models(out, max_bytes=150 << 20):
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    data = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
    n = 0
    light = os.path.join(data, "light")
    for f in sorted(os.listdir(light)):
        if not f.endswith(".onnx"):
            continue
        model = onnx.load(os.path.join(light, f))
        inputs = []
        for v in graph_inputs(model):
            shape = [
                d.dim_value if d.HasField("dim_value") else 1 for d in v.type.tensor_type.shape.dim
            ]
            count = int(np.prod(shape))
            inputs.append((v.name, (np.arange(count).reshape(shape) / count).astype(np.float32)))
        shipped = os.path.join(light, f[: -len(".onnx")] + "_output_0.pb")
        meta = {"kind": "model", "source": "light/" + f, "rtol": OUR_TOL[0], "atol": OUR_TOL[1]}
        if os.path.exists(shipped):
            meta["shipped_output"] = "light/" + os.path.basename(shipped)
        expected = ort_outputs(ort, model, inputs)
        meta["expected_from"] = "onnxruntime"
        scale = logit_scale(np, onnx, ort, model, inputs)
        if scale is not None and scale > 1e6:
            # float32 rounding of logits this large is hundreds of units: a final softmax then
            # depends on the summation order, so no runtime can be held to onnxruntime's output
            meta["ill_conditioned"] = "softmax of logits up to %.3g" % scale
        write_case(out, f[: -len(".onnx")], model, inputs, expected, meta)
        n += 1
        # The light models compute every weight as ConstantOfShape(0.02): all classes come out
        # equal. A variant with random weights (as initializers) and a random input checks more.
        rand = random_weights(np, onnx, numpy_helper, model, max_bytes)
        if rand is not None:
            rng = np.random.RandomState(1)
            rin = [(k, rng.uniform(0, 1, v.shape).astype(np.float32)) for k, v in inputs]
            meta = dict(meta, source=meta["source"] + " with random weights (numpy seed 0)")
            meta.pop("shipped_output", None)
            meta.pop("ill_conditioned", None)  # it outputs the logits
            write_case(
                out, f[: -len(".onnx")] + "_randw", rand, rin, ort_outputs(ort, rand, rin), meta
            )
            n += 1
    for sub in ("pytorch-converted",):
        root = os.path.join(data, sub)
        for name in sorted(os.listdir(root)):
            d = os.path.join(root, name)
            model = onnx.load(os.path.join(d, "model.onnx"))
            ds = os.path.join(d, "test_data_set_0")
            inputs = []
            for i, v in enumerate(graph_inputs(model)):
                t = onnx.load_tensor(os.path.join(ds, "input_%d.pb" % i))
                inputs.append((v.name, numpy_helper.to_array(t)))
            meta = {
                "kind": "model",
                "source": sub + "/" + name,
                "rtol": OUR_TOL[0],
                "atol": OUR_TOL[1],
            }
            try:
                expected = ort_outputs(ort, model, inputs)
                meta["expected_from"] = "onnxruntime"
            except Exception as e:  # opsets onnxruntime dropped: the outputs the test ships
                expected = []
                for i, v in enumerate(model.graph.output):
                    t = onnx.load_tensor(os.path.join(ds, "output_%d.pb" % i))
                    expected.append((v.name, numpy_helper.to_array(t)))
                meta["expected_from"] = "shipped test_data_set_0 (onnxruntime: %s)" % str(e)[:200]
            write_case(out, sub.split("-")[0] + "_" + name, model, inputs, expected, meta)
            n += 1
    print("wrote %d model cases to %s" % (n, out))


def random_weights(np, onnx, numpy_helper, model, max_bytes):
    """Copy of a light model whose ConstantOfShape(shape initializer) weights become random
    initializers: rank >= 2 normal with variance 1/fan-in (values stay well-conditioned),
    rank 1 uniform in [0.5, 1.5) (positive: variances, scales); a final Softmax is left out
    (the logits are the output). None when the weights would exceed max_bytes."""
    g = model.graph
    shapes = {t.name: numpy_helper.to_array(t) for t in g.initializer if t.name.endswith("__SHAPE")}
    nodes = [n for n in g.node if n.op_type == "ConstantOfShape" and n.input[0] in shapes]
    total = sum(int(np.prod(shapes[n.input[0]])) * 4 for n in nodes)
    if not nodes or total > max_bytes:
        return None
    rng = np.random.RandomState(0)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    drop = {id(n) for n in nodes}
    # a final Softmax saturates on random weights (one-hot outputs hide errors): compare logits
    for n in g.node:
        if n.op_type == "Softmax" and len(g.output) == 1 and n.output[0] == g.output[0].name:
            drop.add(id(n))
            logits = n.input[0]
    keep = [n for n in g.node if id(n) not in drop]
    del m.graph.node[:]
    m.graph.node.extend(keep)
    used = {n.input[0] for n in nodes}
    inits = [t for t in m.graph.initializer if t.name not in used]
    for n in nodes:
        shape = [int(d) for d in shapes[n.input[0]]]
        if len(shape) >= 2:
            fan_in = int(np.prod(shape[1:]))
            w = rng.normal(0, np.sqrt(1.0 / max(fan_in, 1)), shape)
        else:
            w = rng.uniform(0.5, 1.5, shape)
        inits.append(numpy_helper.from_array(w.astype(np.float32), n.output[0]))
    del m.graph.initializer[:]
    m.graph.initializer.extend(inits)
    if "logits" in locals():
        m.graph.output[0].name = logits
    gi = [v for v in m.graph.input if v.name not in used]
    del m.graph.input[:]
    m.graph.input.extend(gi)
    return m


def logit_scale(np, onnx, ort, model, inputs):
    """Largest magnitude entering a final Softmax (None when the model ends otherwise)."""
    g = model.graph
    last = [n for n in g.node if n.op_type == "Softmax" and n.output[0] == g.output[0].name]
    if len(g.output) != 1 or not last:
        return None
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.graph.output[0].name = last[0].input[0]
    return float(np.abs(ort_outputs(ort, m, inputs)[0][1]).max())


def ort_outputs(ort, model, inputs):
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    res = s.run(None, dict(inputs))
    return [(o.name, r) for o, r in zip(s.get_outputs(), res)]


# ---------------------------------------------------------------- run


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def convert(binary, src, dst, timeout, extra=()):
    env = dict(os.environ)
    try:
        p = subprocess.run(
            [binary, "convert", src, dst] + list(extra),
            capture_output=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return False, "convert timed out after %ss" % timeout
    msg = (p.stderr or p.stdout).decode(errors="replace").strip()
    if p.returncode != 0 or not os.path.exists(dst):
        return False, msg[-2000:] or "exit %d" % p.returncode
    return True, msg[-500:]


def compare(np, got, expected, rtol, atol):
    """(status, detail, max_abs, max_rel) of runtime outputs against expected ones."""
    names = list(expected)
    gkeys = list(got)
    if all(n in got for n in names):
        pairs = [(n, got[n]) for n in names]
    elif len(gkeys) >= len(names):
        pairs = [(n, got[k]) for n, k in zip(names, gkeys)]
    else:
        return (
            "wrong",
            "runtime gave %d outputs %s, expected %d" % (len(gkeys), gkeys, len(names)),
            None,
            None,
        )
    worst_abs = worst_rel = 0.0
    notes = []
    status = "pass"
    for n, g in pairs:
        e = expected[n]
        if g.shape != e.shape:
            if g.size != e.size:
                return (
                    "wrong",
                    "%s: shape %s, expected %s" % (n, list(g.shape), list(e.shape)),
                    None,
                    None,
                )
            notes.append("%s: shape %s for %s" % (n, list(g.shape), list(e.shape)))
            g = g.reshape(e.shape)
        if e.dtype.kind in "US" or g.dtype.kind in "US":
            ok = np.array_equal(g.astype(str), e.astype(str))
            if not ok:
                status = "wrong"
                notes.append("%s: strings differ" % n)
            continue
        ef = e.astype(np.float64)
        gf = g.astype(np.float64)
        nan_e, nan_g = np.isnan(ef), np.isnan(gf)
        if (nan_e != nan_g).any():
            status = "wrong"
            notes.append("%s: NaN at other places" % n)
        same_inf = (ef == gf) | (nan_e & nan_g)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.where(same_inf, 0.0, np.abs(gf - ef))
        diff = np.nan_to_num(diff, nan=np.inf)
        if diff.size:
            worst_abs = max(worst_abs, float(diff.max()))
            rel = diff / np.maximum(np.abs(ef), 1e-30)
            worst_rel = max(worst_rel, float(np.where(diff == 0, 0.0, rel).max()))
        if (diff > atol + rtol * np.abs(np.nan_to_num(ef))).any():
            status = "wrong"
            notes.append("%s: max abs error %.3g" % (n, float(diff.max())))
        if e.dtype != g.dtype:
            notes.append("%s: dtype %s for %s" % (n, g.dtype, e.dtype))
    return status, "; ".join(notes), worst_abs, worst_rel


def run_suite(args):
    import numpy as np

    suite = os.path.abspath(args.suite)
    work = os.path.abspath(args.work)
    cases = sorted(
        d for d in os.listdir(suite) if os.path.exists(os.path.join(suite, d, "case.json"))
    )
    if args.only:
        cases = [c for c in cases if re.search(args.only, c)]
    targets = [t for t in args.targets.split(",") if t]
    report = {"suite": suite, "mlformats": args.mlformats, "targets": targets, "cases": {}}
    metas = {}
    for c in cases:
        with open(os.path.join(suite, c, "case.json")) as f:
            metas[c] = json.load(f)
        report["cases"][c] = {
            "ops": metas[c]["ops"],
            "kind": metas[c]["kind"],
            "onnx_sha256": sha256(os.path.join(suite, c, "model.onnx")),
        }
    for t in targets:
        batch = []
        for i, c in enumerate(cases):
            d = os.path.join(work, c)
            os.makedirs(d, exist_ok=True)
            dst = os.path.join(d, "model." + t)
            if os.path.exists(dst):
                os.remove(dst)
            ok, msg = convert(
                args.mlformats, os.path.join(suite, c, "model.onnx"), dst, args.convert_timeout
            )
            rec = {"converted": ok}
            if ok and metas[c].get("exotic_dtypes"):
                rec["sha256"] = sha256(dst)
                rec["status"] = "not comparable"
                rec["error"] = "data of types numpy lacks: %s" % metas[c]["exotic_dtypes"]
            elif ok:
                rec["sha256"] = sha256(dst)
                batch.append(
                    {
                        "id": c,
                        "model": dst,
                        "inputs": os.path.join(suite, c, "inputs.npz"),
                        "outputs": os.path.join(d, "out." + t + ".npz"),
                    }
                )
            else:
                rec["refusal"] = msg
                rec["status"] = "refused"
            report["cases"][c][t] = rec
            if not args.quiet and (i + 1) % 200 == 0:
                print("%s: converted %d/%d" % (t, i + 1, len(cases)), file=sys.stderr)
        if batch:
            run_runtime(args, t, batch, work, report, metas, np)
        if not args.keep_converted:
            for c in cases:
                p = os.path.join(work, c, "model." + t)
                if os.path.exists(p):
                    os.remove(p)
    summarize(report, targets)
    prefix = args.report or os.path.join(work, "conformance")
    with open(prefix + ".json", "w") as f:
        json.dump(report, f, indent=1)
    with open(prefix + ".md", "w") as f:
        f.write(markdown(report, targets))
    print(json.dumps({"report": prefix + ".md", "totals": report["totals"]}))
    return 1 if any(report["totals"][t].get("wrong", 0) for t in targets) else 0


def run_runtime(args, t, batch, work, report, metas, np):
    batch_path = os.path.join(work, "batch." + t + ".json")
    with open(batch_path, "w") as f:
        json.dump(batch, f, indent=1)
    results_path = os.path.join(work, "batch." + t + ".results.json")
    if t == "nnp" and not os.environ.get("NNABLA_CHROOT"):
        missing = "no nnabla: set NNABLA_CHROOT"
    elif t == "tsm" and not os.environ.get("TENNIS_LIB"):
        missing = "no TenniS: set TENNIS_LIB"
    else:
        missing = None
    if missing:
        for job in batch:
            report["cases"][job["id"]][t].update(status="not run", error=missing)
        return
    cmd = [
        sys.executable,
        os.path.join(HERE, TARGETS[t]),
        batch_path,
        "--results",
        results_path,
        "-q",
    ]
    cmd += ["--timeout", str(args.run_timeout)]
    subprocess.run(cmd, check=True)
    with open(results_path) as f:
        results = json.load(f)
    for job, res in zip(batch, results):
        c = job["id"]
        rec = report["cases"][c][t]
        if res["status"] != "ok":
            rec["status"] = res["status"]
            rec["error"] = (res.get("error", "") + "\n" + res.get("stderr", ""))[-1500:]
            continue
        meta = metas[c]
        with np.load(os.path.join(args.suite, c, "expected.npz")) as z:
            expected = {k: z[k] for k in z.files}
        with np.load(job["outputs"]) as z:
            got = {k: z[k] for k in z.files}
        status, detail, mabs, mrel = compare(np, got, expected, meta["rtol"], meta["atol"])
        if status == "wrong" and meta.get("ill_conditioned"):
            status = "ill-conditioned"
            detail = "%s (%s; see the case's _randw variant)" % (detail, meta["ill_conditioned"])
        rec.update(status=status, max_abs_error=mabs, max_rel_error=mrel)
        if detail:
            rec["detail"] = detail
        if not args.keep_outputs:
            os.remove(job["outputs"])


def summarize(report, targets):
    totals = {t: {} for t in targets}
    per_op = {}
    for c, rec in report["cases"].items():
        for t in targets:
            st = rec[t]["status"]
            totals[t][st] = totals[t].get(st, 0) + 1
            for op in rec["ops"]:
                o = per_op.setdefault(op, {}).setdefault(
                    t,
                    {"cases": 0, "converted": 0, "pass": 0, "wrong": 0, "refused": 0, "failed": 0},
                )
                o["cases"] += 1
                if rec[t]["converted"]:
                    o["converted"] += 1
                if st == "pass" and len(rec["ops"]) == 1:
                    o["pass_alone"] = o.get("pass_alone", 0) + 1
                if st in ("pass", "wrong", "refused"):
                    o[st] += 1
                elif st not in ("not run", "not comparable", "ill-conditioned"):
                    o["failed"] += 1
    for op, by_t in per_op.items():
        for t, o in by_t.items():
            o["verified"] = o["pass"] > 0 and o["wrong"] == 0
    report["totals"] = totals
    report["per_op"] = dict(sorted(per_op.items()))
    report["verified_ops_alone"] = {
        t: sorted(op for op, b in per_op.items() if b[t]["verified"] and b[t].get("pass_alone"))
        for t in targets
    }
    report["verified_ops"] = {
        t: sorted(op for op, b in per_op.items() if b[t]["verified"]) for t in targets
    }


def markdown(report, targets):
    lines = ["# ONNX conformance of the import", ""]
    lines.append(
        "suite `%s`, %d cases; targets %s"
        % (os.path.basename(report["suite"]), len(report["cases"]), targets)
    )
    lines.append("")
    for t in targets:
        tot = report["totals"][t]
        lines.append(
            "- **%s**: %s; operators verified (a pass, no wrong result): %d, of which %d pass"
            " in a case of their own (a graph of that operator alone)"
            % (
                t,
                ", ".join("%s %d" % kv for kv in sorted(tot.items())),
                len(report["verified_ops"][t]),
                len(report["verified_ops_alone"][t]),
            )
        )
    wrong = [
        (c, t) for c, r in report["cases"].items() for t in targets if r[t]["status"] == "wrong"
    ]
    lines += ["", "## WRONG RESULTS (converted, ran, computed something else): %d" % len(wrong), ""]
    for c, t in wrong:
        r = report["cases"][c][t]
        lines.append(
            "- `%s` -> %s: %s (max abs %s)" % (c, t, r.get("detail", ""), r.get("max_abs_error"))
        )
    failed = [
        (c, t)
        for c, r in report["cases"].items()
        for t in targets
        if r[t]["status"]
        not in ("pass", "wrong", "refused", "not run", "not comparable", "ill-conditioned")
    ]
    lines += ["", "## Converted but failed in the runtime: %d" % len(failed), ""]
    groups = {}
    for c, t in failed:
        r = report["cases"][c][t]
        err = (r.get("error") or "").strip().splitlines()
        key = (t, r["status"], err[0][:200] if err else "")
        groups.setdefault(key, []).append(c)
    for (t, st, msg), cs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        more = " ..." if len(cs) > 12 else ""
        lines.append(
            "- %s, %d × %s `%s`: %s%s"
            % (t, len(cs), st, msg.replace("`", "'"), ", ".join(cs[:12]), more)
        )
    lines += ["", "## Per ONNX operator", ""]
    head = (
        "| operator | "
        + " | ".join("%s cases / converted / pass / wrong / failed / refused" % t for t in targets)
        + " |"
    )
    lines += [head, "|---|" + "---|" * len(targets)]
    for op, by_t in report["per_op"].items():
        cells = []
        for t in targets:
            o = by_t[t]
            mark = " ✓" if o["verified"] else (" ✗" if o["wrong"] else "")
            cells.append(
                "%d / %d / %d / %d / %d / %d%s"
                % (
                    o["cases"],
                    o["converted"],
                    o["pass"],
                    o["wrong"],
                    o["failed"],
                    o["refused"],
                    mark,
                )
            )
        lines.append("| %s | %s |" % (op, " | ".join(cells)))
    lines += ["", "Refusal messages (first line, by count):", ""]
    for t in targets:
        msgs = {}
        for r in report["cases"].values():
            if r[t]["status"] == "refused":
                first = (r[t].get("refusal") or "").strip().splitlines()
                key = first[-1][:200] if first else ""
                msgs[key] = msgs.get(key, 0) + 1
        lines.append("- %s:" % t)
        for m, k in sorted(msgs.items(), key=lambda kv: -kv[1])[:25]:
            lines.append("  - %d × `%s`" % (k, m.replace("`", "'")))
    return "\n".join(lines) + "\n"


def write_manifest(args):
    """Manifest of the converted files that passed in the real runtime: case, target, sha256."""
    with open(args.report_json) as f:
        report = json.load(f)
    rows = []
    for c, rec in sorted(report["cases"].items()):
        for t in report["targets"]:
            if rec[t]["status"] == "pass":
                rows.append(
                    {
                        "case": c,
                        "target": t,
                        "onnx_sha256": rec["onnx_sha256"],
                        "sha256": rec[t]["sha256"],
                    }
                )
    with open(args.out, "w") as f:
        json.dump(rows, f, indent=0)
        f.write("\n")
    print("%d verified conversions in %s" % (len(rows), args.out))
    return 0


def check_manifest(args):
    """Re-convert every case of a manifest; the files must have the recorded sha256."""
    import tempfile

    with open(args.manifest) as f:
        rows = json.load(f)
    bad = moved = 0
    with tempfile.TemporaryDirectory(prefix="mlf-sha-") as tmp:
        for r in rows:
            dst = os.path.join(tmp, "model." + r["target"])
            src = os.path.join(args.suite, r["case"], "model.onnx")
            if not os.path.exists(src) or sha256(src) != r["onnx_sha256"]:
                moved += 1  # the case's model is generated differently (random constants)
                continue
            ok, msg = convert(args.mlformats, src, dst, args.convert_timeout)
            got = sha256(dst) if ok else None
            if got != r["sha256"]:
                bad += 1
                print("%s -> %s: %s" % (r["case"], r["target"], "sha256 " + got if ok else msg))
            if os.path.exists(dst):
                os.remove(dst)
    print(
        "%d of %d conversions byte-identical to the verified ones; %d skipped (the regenerated"
        " model.onnx differs from the verified one)" % (len(rows) - bad - moved, len(rows), moved)
    )
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--venv",
        default=os.environ.get("MLF_HARNESS_VENV"),
        help="venv with the pinned packages (made when missing)",
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("what", choices=["nodes", "models"])
    g.add_argument("out")
    r = sub.add_parser("run")
    r.add_argument("suite")
    r.add_argument("work")
    r.add_argument(
        "--mlformats",
        default=os.environ.get("MLFORMATS"),
        required=os.environ.get("MLFORMATS") is None,
    )
    r.add_argument("--targets", default="nnp,tsm")
    r.add_argument("--only", help="regular expression on case names")
    r.add_argument("--report", help="output prefix (default WORK/conformance)")
    r.add_argument("--convert-timeout", type=float, default=60.0)
    r.add_argument("--run-timeout", type=float, default=120.0)
    r.add_argument("--keep-outputs", action="store_true", help="keep the runtimes' outputs")
    r.add_argument("--keep-converted", action="store_true", help="keep the converted files")
    r.add_argument("-q", "--quiet", action="store_true")
    m = sub.add_parser("manifest", help="sha256 list of the conversions a report verified")
    m.add_argument("report_json")
    m.add_argument("out")
    k = sub.add_parser("check-sha", help="re-convert a manifest's cases, compare sha256")
    k.add_argument("suite")
    k.add_argument("manifest")
    k.add_argument("--mlformats", default=os.environ.get("MLFORMATS"))
    k.add_argument("--convert-timeout", type=float, default=60.0)
    args = ap.parse_args()
    if args.cmd == "manifest":
        return write_manifest(args)
    ensure_python(args.venv)
    if args.cmd == "check-sha":
        if not args.mlformats:
            raise SystemExit("give --mlformats BIN or set MLFORMATS")
        return check_manifest(args)
    if args.cmd == "generate":
        os.makedirs(args.out, exist_ok=True)
        (gen_nodes if args.what == "nodes" else gen_models)(args.out)
        return 0
    args.mlformats = os.path.abspath(args.mlformats)
    return run_suite(args)


if __name__ == "__main__":
    sys.exit(main())
