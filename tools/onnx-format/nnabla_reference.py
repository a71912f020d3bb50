#!/usr/bin/env python3
"""Reference outputs of NNabla networks from the real nnabla, for the ONNX export tests.

A maintainer step, run with nnabla 1.39 (for example in the Debian chroot of
the project's shared tools); never run by CI and builds nothing:

    python3 nnabla_reference.py OUT_DIR NAME=FILE [NAME=FILE ...]

FILE is an .nnp, or an .nntxt (with or without parameters). For each one:
- nnabla loads it (`nnabla.utils.load.load`, batch size 2); parameters the
  file lacks are created by nnabla's own initializers under numpy seed 0;
- OUT_DIR/NAME.nnp is written: nnp_version.txt, the network text as given
  (for an .nnp: its network member) and every parameter in parameter.h5
  (`nnabla.save_parameters`), so the test exports exactly what nnabla ran;
- the first executor's data variables get fixed inputs (numpy seed 1,
  uniform in [-1, 1)), the executor runs once (`forward_target.forward`), and
  OUT_DIR/NAME.io.npz holds `in/<variable>` and `out/<variable>` arrays;
- OUT_DIR/NAME.json names the executor, network, inputs and outputs.

A network nnabla cannot run is reported and skipped.
"""
import json
import os
import sys
import tempfile
import zipfile

import numpy as np


def network_text(path):
    if path.endswith(".nnp"):
        with zipfile.ZipFile(path) as z:
            for n in z.namelist():
                if n.endswith(".nntxt") or n.endswith(".prototxt"):
                    return z.read(n)
        raise SystemExit(f"{path}: no network member")
    with open(path, "rb") as f:
        return f.read()


def run(out_dir, name, path):
    import nnabla as nn
    from nnabla.utils import load

    nn.clear_parameters()
    np.random.seed(0)
    info = load.load([path], prepare_data_iterator=False, batch_size=2)
    exec_name, executor = list(info.executors.items())[0]
    rng = np.random.RandomState(1)
    inputs = {}
    for v, _ in executor.dataset_assign.items():
        x = rng.uniform(-1, 1, v.variable_instance.d.shape).astype(np.float32)
        v.variable_instance.d = x
        inputs[v.name] = x
    for v, gen in executor.generator_assign.items():
        inputs[v.name] = v.variable_instance.d = gen(v.variable_instance.d.shape)
    executor.forward_target.forward(clear_buffer=True)
    outputs = {v.name: np.array(v.variable_instance.d) for v in executor.output_assign.keys()}

    with tempfile.TemporaryDirectory() as tmp:
        h5 = os.path.join(tmp, "parameter.h5")
        nn.save_parameters(h5)
        with zipfile.ZipFile(os.path.join(out_dir, name + ".nnp"), "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("nnp_version.txt", "0.1\n")
            z.writestr("network.nntxt", network_text(path))
            z.write(h5, "parameter.h5")
    arrays = {f"in/{k}": v for k, v in inputs.items()}
    arrays.update({f"out/{k}": v for k, v in outputs.items()})
    np.savez(os.path.join(out_dir, name + ".io.npz"), **arrays)
    manifest = {
        "source": os.path.basename(path),
        "executor": exec_name,
        "network": executor.proto.network_name,
        "batch_size": 2,
        "inputs": list(inputs),
        "outputs": list(outputs),
        "writer": "nnabla " + nn.__version__,
    }
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    failed = 0
    for arg in sys.argv[2:]:
        name, path = arg.split("=", 1)
        try:
            run(out_dir, name, path)
            print("ok", name)
        except Exception as e:  # nnabla's own errors: report and go on
            failed += 1
            print("FAILED", name, type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
