#!/usr/bin/env python3
"""Compares ONNX exports of the SeetaFace6 TenniS modules with a third
party's hand-made ONNX conversions of the same modules (onnxruntime on both,
the same fixed input).

usage: compare_tennis.py MLFORMATS_BINARY TENNIS_CORPUS_DIR

TENNIS_CORPUS_DIR holds seetaface6/<name>.tsm and onnx_thirdparty/<name>.onnx.
The third party's files are a second opinion, not ground truth:
- its average poolings leave `count_include_pad` at 0, while these modules
  use TenniS's white padding (`padding_type` 3: a window's sum is divided by
  the window size); the comparison sets count_include_pad=1 in a copy of
  their model and says so;
- it hard-codes the floor-rule pads of `_onnx_pooling2d_padding` for even
  sizes, so inputs are chosen with even feature-map sizes.
Modules the exporter refuses (operators without a lowering) are reported as
refused, with the exporter's message. Exit 1 when an export fails
unexpectedly or an output differs by more than 1e-4 (relative).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

INPUTS = {
    "mask_detector": (1, 3, 112, 112),
    "face_landmarker_mask_pts5": (1, 3, 112, 112),
    "face_detector": (1, 3, 256, 320),
}
REFUSED: set = set()  # every SeetaFace6 module of the corpus exports


def run(path, x):
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return s.run(None, {s.get_inputs()[0].name: x})


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    exe, corpus = sys.argv[1:]
    ort.set_default_logger_severity(3)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for tsm in sorted(f for f in os.listdir(os.path.join(corpus, "seetaface6")) if f.endswith(".tsm")):
            name = tsm[:-4]
            out = os.path.join(tmp, name + ".onnx")
            r = subprocess.run([exe, "convert", os.path.join(corpus, "seetaface6", tsm), out, "-q"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                msg = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
                if name in REFUSED:
                    print(f"refused (expected) {name}: {msg}")
                else:
                    print(f"FAILED {name}: {msg}")
                    bad += 1
                continue
            onnx.checker.check_model(onnx.load(out), full_check=True)
            ref = os.path.join(corpus, "onnx_thirdparty", name + ".onnx")
            if name not in INPUTS or not os.path.exists(ref):
                print(f"ok {name}: checker ok (no third-party conversion)")
                continue
            m = onnx.load(ref)
            adjusted = False
            for n in m.graph.node:
                if n.op_type == "AveragePool" and not any(a.name == "count_include_pad" for a in n.attribute):
                    n.attribute.append(helper.make_attribute("count_include_pad", 1))
                    adjusted = True
            ref2 = os.path.join(tmp, name + ".thirdparty.onnx")
            onnx.save(m, ref2)
            x = np.random.RandomState(0).uniform(0, 255, INPUTS[name]).astype(np.float32)
            worst = 0.0
            for a, b in zip(run(out, x), run(ref2, x)):
                a = np.asarray(a, np.float64)
                b = np.asarray(b, np.float64)
                if a.shape != b.shape:
                    worst = float("inf")
                    break
                worst = max(worst, float(np.max(np.abs(a - b))) / max(float(np.max(np.abs(b))), 1e-6))
            note = " (their average poolings set to count_include_pad=1)" if adjusted else ""
            if worst <= 1e-4:
                print(f"ok {name}: checker ok, matches the third-party conversion{note}: relative error {worst:.2g}")
            else:
                print(f"FAILED {name}: relative error {worst:.3g} against the third-party conversion{note}")
                bad += 1
    print(f"{'0 failed' if not bad else str(bad) + ' failed'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
