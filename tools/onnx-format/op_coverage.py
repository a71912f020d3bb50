#!/usr/bin/env python3
"""Counts the operator types of the inference graphs of NNabla and TenniS files.

usage: op_coverage.py MLFORMATS_BINARY DIR... [--json]

Runs `MLFORMATS_BINARY inspect --json` on every .nnp/.nntxt/.protobuf/.tsm
file under the given directories and counts, per format, the function types
of the network the first executor runs (NNabla; every network when a file
has no executor) and the node ops of TenniS modules. Prints a table (most
frequent first) of op type, number of nodes and number of files.
"""
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict

EXTS = {".nnp": "nnabla", ".nntxt": "nnabla", ".protobuf": "nnabla", ".tsm": "tennis"}


def inference_functions(doc):
    g = doc.get("graph") or {}
    nets = g.get("networks") or []
    return [f["type"] for n in nets for f in n.get("functions", [])], nets


def main():
    args = [a for a in sys.argv[1:] if a != "--json"]
    as_json = "--json" in sys.argv
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    exe, dirs = args[0], args[1:]
    nodes = {"nnabla": Counter(), "tennis": Counter()}
    files = {"nnabla": defaultdict(set), "tennis": defaultdict(set)}
    for d in dirs:
        for root, _, names in os.walk(d):
            for name in sorted(names):
                ext = os.path.splitext(name)[1]
                fam = EXTS.get(ext)
                if fam is None:
                    continue
                path = os.path.join(root, name)
                r = subprocess.run([exe, "inspect", "--json", "--schema", "1", path], capture_output=True, text=True)
                if r.returncode != 0:
                    continue
                doc = json.loads(r.stdout)
                g = doc.get("graph") or {}
                if fam == "tennis":
                    ops = [n["op"] for n in g.get("nodes", [])]
                else:
                    ops = [f["type"] for n in g.get("networks", []) for f in n.get("functions", [])]
                for op in ops:
                    nodes[fam][op] += 1
                    files[fam][op].add(path)
    if as_json:
        out = {fam: [{"op": op, "nodes": c, "files": len(files[fam][op])}
                     for op, c in nodes[fam].most_common()] for fam in nodes}
        print(json.dumps(out, indent=1))
        return 0
    for fam in ("nnabla", "tennis"):
        print(f"## {fam}")
        print("| op | nodes | files |")
        print("|---|---|---|")
        for op, c in sorted(nodes[fam].items(), key=lambda kv: (-len(files[fam][kv[0]]), -kv[1], kv[0])):
            print(f"| {op} | {c} | {len(files[fam][op])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
