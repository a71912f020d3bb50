#!/usr/bin/env python3
"""Turns a conformance report of the ONNX import (onnx_conformance.py run ... --targets nnp
--report PREFIX, i.e. PREFIX.json) into the committed reference results:

  testdata/translate/import/nnabla.json   totals, per-operator counts and, per case that
                                           converted, its status, max error and the sha256 of
                                           the .nnp written
  testdata/translate/import/cases/*.onnx   the smallest passing models, up to PER_OP per
                                           operator the import verified (re-converted by
                                           crates/mlformats/tests/onnx_import.rs)

usage: import_reference.py REPORT.json SUITE_DIR REPO_ROOT [--per-op N]

With --target tsm (a report of `run ... --targets tsm`) it writes the TenniS records instead:

  testdata/translate/import/tennis.json   totals over the node tests, the same over the
                                           constant-parameter cases (const_param_cases.py,
                                           named tsm_*), per-operator pass counts, and per
                                           passing case its operators and the .tsm's sha256
  testdata/translate/import/cases/*.onnx   every passing tsm_* case and one smallest passing
                                           model per verified operator (the cases already
                                           committed kept; nothing removed)

  usage: import_reference.py REPORT.json SUITE_DIR REPO_ROOT --target tsm

With --merge (NNabla) the report covers only some cases (a folder of symlinks to some node
cases, plus constant-parameter cases: const_* from frozen_param_cases.py, tsm_* from
const_param_cases.py): their results replace the ones in the committed nnabla.json, the totals
and per-operator counts move accordingly (a node case absent from the record was refused),
constant-parameter cases are counted apart (const_param_totals) and in per_op, the committed
models are kept, every passing constant-parameter case is added and the smallest passing case
for each operator with fewer than PER_OP; verified.json gets the passing conversions' rows
(a row per case replaced).

  usage: import_reference.py REPORT.json SUITE_DIR REPO_ROOT --merge
"""

import json
import os
import shutil
import sys


def main():
    args = sys.argv[1:]
    per_op = 2
    if "--per-op" in args:
        i = args.index("--per-op")
        per_op = int(args[i + 1])
        del args[i : i + 2]
    target = "nnp"
    if "--target" in args:
        i = args.index("--target")
        target = args[i + 1]
        del args[i : i + 2]
    merge = "--merge" in args
    if merge:
        args.remove("--merge")
    report, suite, root = args
    r = json.load(open(report))
    if target == "tsm":
        return tennis(r, suite, root)
    if merge:
        return merge_nnabla(r, suite, root, per_op)
    out_dir = os.path.join(root, "testdata", "translate", "import")
    cases_dir = os.path.join(out_dir, "cases")
    os.makedirs(cases_dir, exist_ok=True)
    cases = {}
    for name, c in sorted(r["cases"].items()):
        n = c.get("nnp", {})
        if n.get("status") in (None, "refused"):
            continue
        cases[name] = {
            "ops": c["ops"],
            "status": n["status"],
            "sha256": n.get("sha256"),
            "max_abs_error": n.get("max_abs_error"),
        }
    per = {}
    for op, v in sorted(r["per_op"].items()):
        n = v.get("nnp", {})
        per[op] = {k: n.get(k, 0) for k in ("cases", "pass", "wrong", "failed", "refused")}
    # The smallest passing models, up to per_op for each operator.
    chosen = set()

    def size(c):
        return os.path.getsize(os.path.join(suite, c, "model.onnx"))

    passing = sorted(
        (c for c, v in cases.items() if v["status"] == "pass"), key=lambda c: (size(c), c)
    )
    for op in per:
        got = [c for c in chosen if op in cases[c]["ops"]]
        for c in passing:
            if len(got) >= per_op:
                break
            if op in cases[c]["ops"] and c not in chosen and size(c) <= 64 * 1024:
                chosen.add(c)
                got.append(c)
    for f in os.listdir(cases_dir):
        os.remove(os.path.join(cases_dir, f))
    for c in sorted(chosen):
        shutil.copyfile(os.path.join(suite, c, "model.onnx"), os.path.join(cases_dir, c + ".onnx"))
    doc = {
        "suite": "onnx 1.23.2 backend node tests (onnx.backend.test.case.node)",
        "runtime": "nnabla 1.39.0 (CPU), rtol 1e-4 or the case's own tolerance",
        "totals": r["totals"]["nnp"],
        "verified_ops": sorted(op for op, v in per.items() if v["pass"] > 0 and v["wrong"] == 0),
        "per_op": per,
        "cases": cases,
        "committed": sorted(chosen),
    }
    with open(os.path.join(out_dir, "nnabla.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(len(cases), "converted cases,", len(chosen), "committed models")


def merge_nnabla(r, suite, root, per_op):
    out_dir = os.path.join(root, "testdata", "translate", "import")
    path = os.path.join(out_dir, "nnabla.json")
    doc = json.load(open(path))
    cases, per = doc["cases"], doc["per_op"]
    totals = doc["totals"]
    const_totals = doc.get("const_param_totals", {})
    keys = ("cases", "pass", "wrong", "failed", "refused")

    def bucket(st):
        return st if st in ("pass", "wrong", "refused") else "failed"

    for name, c in sorted(r["cases"].items()):
        n = c["nnp"]
        new = bucket(n["status"])
        const = not name.startswith("test_")
        if const:
            old = None
            const_totals[new] = const_totals.get(new, 0) + 1
        else:
            old = bucket(cases[name]["status"]) if name in cases else "refused"
            totals[old] -= 1
            totals[new] = totals.get(new, 0) + 1
        for op in c["ops"]:
            b = per.setdefault(op, {k: 0 for k in keys})
            if old is None:
                b["cases"] += 1
            else:
                b[old] -= 1
            b[new] += 1
        cases.pop(name, None)
        if n["status"] != "refused":
            cases[name] = {
                "ops": c["ops"],
                "status": n["status"],
                "sha256": n.get("sha256"),
                "max_abs_error": n.get("max_abs_error"),
            }
    totals = {k: v for k, v in totals.items() if v}
    chosen = set(doc["committed"])

    def size(c):
        return os.path.getsize(os.path.join(suite, c, "model.onnx"))

    passing = sorted(
        (c for c in r["cases"] if c in cases and cases[c]["status"] == "pass"),
        key=lambda c: (size(c), c),
    )
    cases_dir = os.path.join(out_dir, "cases")
    # Every passing constant-parameter case (small, and CI regenerates only the node tests).
    chosen |= {c for c in passing if not c.startswith("test_")}
    for op in sorted({op for c in r["cases"].values() for op in c["ops"]}):
        got = [c for c in chosen if op in cases[c]["ops"]]
        for c in passing:
            if len(got) >= per_op:
                break
            if op in cases[c]["ops"] and c not in chosen and size(c) <= 64 * 1024:
                chosen.add(c)
                got.append(c)
    for c in sorted(chosen):
        dst = os.path.join(cases_dir, c + ".onnx")
        if not os.path.exists(dst):
            shutil.copyfile(os.path.join(suite, c, "model.onnx"), dst)
    doc.update(
        suite="onnx 1.23.2 backend node tests (onnx.backend.test.case.node); const_* cases:"
        " the node cases of some operators with their parameters frozen into initializers"
        " (tools/graph-translate/frozen_param_cases.py), tsm_* cases:"
        " tools/graph-translate/const_param_cases.py",
        totals=totals,
        const_param_totals={k: v for k, v in const_totals.items() if v},
        verified_ops=sorted(op for op, v in per.items() if v["pass"] > 0 and v["wrong"] == 0),
        per_op=per,
        cases=cases,
        committed=sorted(chosen),
    )
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    vpath = os.path.join(out_dir, "verified.json")
    rows = [v for v in json.load(open(vpath)) if v["case"] not in r["cases"]]
    for name, c in r["cases"].items():
        if c["nnp"]["status"] == "pass":
            rows.append(
                {
                    "case": name,
                    "target": "nnp",
                    "onnx_sha256": c["onnx_sha256"],
                    "sha256": c["nnp"]["sha256"],
                }
            )
    rows.sort(key=lambda v: (v["case"], v["target"]))
    with open(vpath, "w") as f:
        json.dump(rows, f, indent=0)
        f.write("\n")
    print(len(cases), "converted cases,", len(chosen), "committed models,", totals, const_totals)


def tennis(r, suite, root):
    out_dir = os.path.join(root, "testdata", "translate", "import")
    cases_dir = os.path.join(out_dir, "cases")
    old_path = os.path.join(out_dir, "tennis.json")
    old = json.load(open(old_path)) if os.path.exists(old_path) else {}
    cases = {}
    totals = {k: {"pass": 0, "wrong": 0, "refused": 0} for k in ("node", "const")}
    per = {}
    for name, c in sorted(r["cases"].items()):
        t = c["tsm"]
        st = t["status"]
        kind = "const" if name.startswith("tsm_") else "node"
        totals[kind][st] = totals[kind].get(st, 0) + 1
        for op in c["ops"]:
            per.setdefault(op, {})
            per[op][st] = per[op].get(st, 0) + 1
        if st == "pass":
            cases[name] = {"ops": c["ops"], "sha256": t["sha256"], "status": "pass"}
    per = {op: {k: v for k, v in b.items() if k != "refused"} for op, b in per.items()}
    per = {op: b for op, b in per.items() if b}
    verified = sorted(op for op, b in per.items() if b.get("pass", 0) > 0 and set(b) == {"pass"})

    def size(c):
        return os.path.getsize(os.path.join(suite, c, "model.onnx"))

    # Every passing constant-parameter case (CI regenerates only the node tests), the cases
    # committed before, then one smallest case for each verified operator still without one.
    chosen = sorted(
        {c for c in cases if c.startswith("tsm_")}
        | {c for c in old.get("committed", []) if c in cases}
    )
    passing = sorted(cases, key=lambda c: (size(c), c))
    for op in verified:
        if any(op in cases[c]["ops"] for c in chosen):
            continue
        for c in passing:
            if op in cases[c]["ops"] and size(c) <= 64 * 1024:
                chosen.append(c)
                break
    for c in chosen:
        dst = os.path.join(cases_dir, c + ".onnx")
        if not os.path.exists(dst):
            shutil.copyfile(os.path.join(suite, c, "model.onnx"), dst)
    doc = {
        "suite": "onnx 1.23.2 backend node tests (onnx.backend.test.case.node); tsm_* cases:"
        " tools/graph-translate/const_param_cases.py (constant parameters)",
        "runtime": "TenniS (TenniS-Open/TenniS 1e052961, CPU), rtol 1e-4 or the case's own"
        " tolerance",
        "totals": totals["node"],
        "const_param_totals": totals["const"],
        "verified_ops": verified,
        "per_op": per,
        "cases": cases,
        "committed": sorted(chosen),
        "models": old.get("models", {}),
    }
    with open(old_path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(len(cases), "passing cases,", len(chosen), "committed models,", totals)


main()
