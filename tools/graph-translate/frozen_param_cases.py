#!/usr/bin/env python3
"""Node-test cases with their parameters frozen into constants.

The ONNX backend node tests feed every input at run time, so an import that needs constant
parameters (Resize's scales/sizes/roi, Pad's pads, QuantizeLinear's scale and zero point, ...)
refuses them all. This writes, for every single-node case of SUITE (the layout of
`onnx_conformance.py generate nodes`) whose operator is one of OPS, the same case with every
graph input but the first turned into an initializer holding the value the case feeds, named
`const_<case>`, in the same layout: OUT/const_<case>/{model.onnx, inputs.npz, expected.npz,
case.json}. The expected outputs are the suite's own (onnx's reference), the tolerance the
case's. Cases whose frozen inputs or outputs need a type numpy lacks (float8, int4, ...) are
skipped. `onnx_conformance.py run OUT ...` checks them in the real runtimes.

usage: frozen_param_cases.py [--venv DIR] SUITE OUT OP[,OP...]
"""

import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import onnx_conformance as oc  # noqa: E402


def main():
    args = sys.argv[1:]
    venv = None
    if "--venv" in args:
        i = args.index("--venv")
        venv = args[i + 1]
        del args[i : i + 2]
    oc.ensure_python(venv)
    import numpy as np
    import onnx
    from onnx import numpy_helper

    suite, out, ops = args
    ops = set(ops.split(","))
    n = 0
    for case in sorted(os.listdir(suite)):
        src = os.path.join(suite, case)
        meta_path = os.path.join(src, "case.json")
        if not os.path.exists(meta_path):
            continue
        meta = json.load(open(meta_path))
        if meta.get("nodes") != 1 or not ops & set(meta.get("ops", [])):
            continue
        if meta.get("exotic_dtypes"):
            continue
        m = onnx.load(os.path.join(src, "model.onnx"))
        g = m.graph
        feeds = dict(np.load(os.path.join(src, "inputs.npz")))
        frozen = [i for i in g.input[1:] if i.name in feeds]
        if not frozen:
            continue
        for i in frozen:
            g.initializer.append(numpy_helper.from_array(feeds.pop(i.name), i.name))
        keep = [i for i in g.input if i.name in feeds]
        del g.input[:]
        g.input.extend(keep)
        onnx.checker.check_model(m, full_check=True)
        name = "const_" + case
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        onnx.save(m, os.path.join(d, "model.onnx"))
        np.savez(os.path.join(d, "inputs.npz"), **feeds)
        shutil.copyfile(os.path.join(src, "expected.npz"), os.path.join(d, "expected.npz"))
        meta = dict(meta, kind="const-param", frozen_from=case)
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(meta, f, indent=1)
        n += 1
    print("wrote %d frozen-parameter cases to %s" % (n, out))


if __name__ == "__main__":
    sys.exit(main())
