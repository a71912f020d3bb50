#!/usr/bin/env python3
"""The population check: models people export to ONNX, imported into NNabla and TenniS.

Two steps, each in the Python that has what it needs:

    population.py export OUTDIR [--only NAME,...]        # torch, torchvision, timm, onnx,
                                                          # onnxruntime, onnxscript (dynamo)
    population.py check OUTDIR --mlformats BIN [--chroot DIR] [--results R.json]
                                                          # host Python (root for the chroot)

`export` builds each model of MODELS (torchvision and timm architectures with their
random initial weights: what is checked is the conversion, not the weights; and a few
torch.nn recurrent and attention modules), in eval mode, exports it with both torch.onnx
exporters (the TorchScript one at opset 17, `dynamo=True` at opset 18), and runs each
export in onnxruntime on a fixed input: OUTDIR/NAME.EXPORTER.onnx and NAME.EXPORTER.io.npz
(`in/<input>` and `out/<output>` members, the layout of testdata/onnx). A model an
exporter refuses is recorded in OUTDIR/export.json with the reason.

`check` converts every export with `mlformats convert X.onnx X.nnp` and `X.tsm`, runs the
`.nnp` files in the real nnabla 1.39 (run_nnabla.py, the chroot), and compares each
output with onnxruntime's: the worst absolute difference over the output's largest
absolute value. TenniS conversions are recorded (converted or refused with the reason).
The results go to R.json: one record per export.

    population.py tennis OUTDIR --lib LIBTENNIS [--version TEXT] [--mlformats BIN]
        [--results R.json]                                # numpy; after `check`

`tennis` runs the `.tsm` files `check` wrote (re-converted first with --mlformats BIN) in
the real TenniS runtime (run_tennis.py, its C API, one thread), on the same inputs, compares
each output with onnxruntime's the same way, and adds `tennis`, `tennis_reason` and
`tennis_worst_relative_difference` to each record of R.json; --version (say, the TenniS
commit the library was built from) goes into the summary.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, source, constructor argument, input shape)
MODELS = [
    ("resnet18", "torchvision", "resnet18", [1, 3, 224, 224]),
    ("resnet50", "torchvision", "resnet50", [1, 3, 224, 224]),
    ("resnext50_32x4d", "torchvision", "resnext50_32x4d", [1, 3, 224, 224]),
    ("mobilenet_v2", "torchvision", "mobilenet_v2", [1, 3, 224, 224]),
    ("mobilenet_v3_small", "torchvision", "mobilenet_v3_small", [1, 3, 224, 224]),
    ("mobilenet_v3_large", "torchvision", "mobilenet_v3_large", [1, 3, 224, 224]),
    ("efficientnet_b0", "torchvision", "efficientnet_b0", [1, 3, 224, 224]),
    ("squeezenet1_1", "torchvision", "squeezenet1_1", [1, 3, 224, 224]),
    ("shufflenet_v2_x1_0", "torchvision", "shufflenet_v2_x1_0", [1, 3, 224, 224]),
    ("mnasnet0_5", "torchvision", "mnasnet0_5", [1, 3, 224, 224]),
    ("densenet121", "torchvision", "densenet121", [1, 3, 224, 224]),
    ("regnet_y_400mf", "torchvision", "regnet_y_400mf", [1, 3, 224, 224]),
    ("googlenet", "torchvision", "googlenet", [1, 3, 224, 224]),
    ("alexnet", "torchvision", "alexnet", [1, 3, 224, 224]),
    ("vgg11", "torchvision", "vgg11", [1, 3, 224, 224]),
    ("convnext_tiny", "torchvision", "convnext_tiny", [1, 3, 224, 224]),
    ("swin_t", "torchvision", "swin_t", [1, 3, 224, 224]),
    ("vit_b_16", "torchvision", "vit_b_16", [1, 3, 224, 224]),
    ("lraspp_mobilenet_v3_large", "segmentation", "lraspp_mobilenet_v3_large", [1, 3, 224, 224]),
    ("fcn_resnet50", "segmentation", "fcn_resnet50", [1, 3, 224, 224]),
    ("r3d_18", "video", "r3d_18", [1, 3, 8, 112, 112]),
    ("timm_resnet18d", "timm", "resnet18d", [1, 3, 224, 224]),
    ("timm_efficientnet_b0", "timm", "efficientnet_b0", [1, 3, 224, 224]),
    ("timm_mobilenetv3_large_100", "timm", "mobilenetv3_large_100", [1, 3, 224, 224]),
    ("timm_ghostnet_100", "timm", "ghostnet_100", [1, 3, 224, 224]),
    ("timm_regnetx_002", "timm", "regnetx_002", [1, 3, 224, 224]),
    ("timm_convnext_atto", "timm", "convnext_atto", [1, 3, 224, 224]),
    ("timm_vit_tiny_patch16_224", "timm", "vit_tiny_patch16_224", [1, 3, 224, 224]),
    ("timm_deit_tiny_patch16_224", "timm", "deit_tiny_patch16_224", [1, 3, 224, 224]),
    ("timm_levit_128s", "timm", "levit_128s", [1, 3, 224, 224]),
    ("timm_mixnet_s", "timm", "mixnet_s", [1, 3, 224, 224]),
    ("timm_rexnet_100", "timm", "rexnet_100", [1, 3, 224, 224]),
    ("timm_dla34", "timm", "dla34", [1, 3, 224, 224]),
    ("timm_mobilevit_xxs", "timm", "mobilevit_xxs", [1, 3, 256, 256]),
    ("timm_poolformer_s12", "timm", "poolformer_s12", [1, 3, 224, 224]),
    ("timm_cspresnet50", "timm", "cspresnet50", [1, 3, 224, 224]),
    ("lstm2", "nn", "lstm2", [1, 7, 16]),
    ("gru_bidirectional", "nn", "gru_bi", [1, 7, 16]),
    ("transformer_encoder", "nn", "encoder", [1, 10, 32]),
]

EXPORTERS = [("torchscript", 17), ("dynamo", 18)]


def build(torch, source, arg):
    if source == "torchvision":
        import torchvision

        return getattr(torchvision.models, arg)(weights=None)
    if source == "segmentation":
        import torchvision

        return getattr(torchvision.models.segmentation, arg)(weights=None, weights_backbone=None)
    if source == "video":
        import torchvision

        return getattr(torchvision.models.video, arg)(weights=None)
    if source == "timm":
        import timm

        return timm.create_model(arg, pretrained=False)
    nn = torch.nn

    class Recurrent(nn.Module):
        def __init__(self, cell):
            super().__init__()
            self.rnn = cell
            out = cell.hidden_size * (2 if cell.bidirectional else 1)
            self.head = nn.Linear(out, 5)

        def forward(self, x):
            y, _ = self.rnn(x)
            return self.head(y)

    if arg == "lstm2":
        return Recurrent(nn.LSTM(16, 24, num_layers=2, batch_first=True))
    if arg == "gru_bi":
        return Recurrent(nn.GRU(16, 24, bidirectional=True, batch_first=True))
    if arg == "encoder":
        layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True, dropout=0.0)
        return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    raise SystemExit("unknown model " + arg)


def export(out, only):
    import numpy as np
    import onnxruntime as ort
    import torch

    torch.manual_seed(0)
    os.makedirs(out, exist_ok=True)
    record = {}
    rng = np.random.default_rng(0)
    for name, source, arg, shape in MODELS:
        if only and name not in only:
            continue
        model = build(torch, source, arg).eval()
        x = rng.standard_normal(shape).astype(np.float32)
        for exporter, opset in EXPORTERS:
            key = f"{name}.{exporter}"
            path = os.path.join(out, key + ".onnx")
            t = time.time()
            try:
                with torch.no_grad():
                    torch.onnx.export(model, (torch.from_numpy(x),), path, dynamo=exporter == "dynamo",
                                      opset_version=opset, input_names=["input"], output_names=["output"],
                                      external_data=False)
                sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
                feed = {sess.get_inputs()[0].name: x}
                outs = sess.run(None, feed)
                arrays = {"in/" + sess.get_inputs()[0].name: x}
                for o, v in zip(sess.get_outputs(), outs):
                    arrays["out/" + o.name] = v
                np.savez(os.path.join(out, key + ".io.npz"), **arrays)
                record[key] = {"status": "ok", "seconds": round(time.time() - t, 1), "shape": shape}
            except Exception as e:  # an exporter's refusal is a result
                record[key] = {"status": "refused", "reason": f"{type(e).__name__}: {e}"[:400]}
                if os.path.exists(path):
                    os.remove(path)
            print(key, record[key]["status"], flush=True)
        with open(os.path.join(out, "export.json"), "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)


def first_line(text, out=None):
    """The last non-empty line of a message (mlformats' error), OUT's path left out."""
    lines = [x for x in text.strip().splitlines() if x.strip()]
    line = lines[-1] if lines else ""
    if out:
        line = line.replace(os.path.join(os.path.abspath(out), ""), "")
    return line[:500]


def check(out, mlformats, chroot, results):
    import numpy as np
    import onnx

    exports = json.load(open(os.path.join(out, "export.json")))
    record = {}
    jobs = []
    for key, e in sorted(exports.items()):
        r = {"export": e["status"]}
        record[key] = r
        if e["status"] != "ok":
            r["reason"] = e["reason"]
            continue
        src = os.path.join(out, key + ".onnx")
        m = onnx.load(src, load_external_data=False)
        r["opset"] = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), None)
        r["producer"] = f"{m.producer_name} {m.producer_version}".strip()
        r["nodes"] = len(m.graph.node)
        r["ops"] = sorted({n.op_type for n in m.graph.node})
        for target in ("nnp", "tsm"):
            dst = os.path.join(out, f"{key}.{target}")
            p = subprocess.run([mlformats, "convert", src, dst, "-q"], capture_output=True, text=True)
            r[target] = "converted" if p.returncode == 0 else "refused"
            if p.returncode != 0:
                r[target + "_reason"] = first_line(p.stderr, out)
        if r["nnp"] == "converted":
            os.makedirs(os.path.join(out, "nnabla"), exist_ok=True)
            jobs.append({"id": key, "model": f"{key}.nnp", "inputs": f"{key}.io.npz",
                         "outputs": f"nnabla/{key}.npz"})
    batch = os.path.join(out, "batch.json")
    json.dump(jobs, open(batch, "w"), indent=1)
    if jobs:
        cmd = [sys.executable, os.path.join(HERE, "run_nnabla.py"), "--timeout", "300", batch]
        if chroot:
            cmd[2:2] = ["--chroot", chroot]
        subprocess.run(cmd, check=False)
        # one result per job, in the batch's order
        ran = json.load(open(os.path.join(out, "batch.results.json")))
        for job, res in zip(jobs, ran):
            key = job["id"]
            r = record[key]
            res = res or {}
            r["nnabla"] = res.get("status", "not run")
            if r["nnabla"] != "ok":
                r["nnabla_reason"] = str(res.get("error") or res.get("reason") or "")[:500]
                continue
            r["nnabla_worst_relative_difference"] = worst_relative(np, out, key, "nnabla")
    write_results(record, results)


def worst_relative(np, out, key, runtime):
    """The worst absolute difference of the runtime's outputs (OUT/RUNTIME/KEY.npz, in
    output order) from onnxruntime's (KEY.io.npz) over each output's largest absolute
    value; inf when a shape differs or an output is missing."""
    ref = np.load(os.path.join(out, key + ".io.npz"))
    got = np.load(os.path.join(out, runtime, key + ".npz"))
    want = [ref[k] for k in ref.files if k.startswith("out/")]
    have = [got[k] for k in got.files]
    if len(have) < len(want):
        return float("inf")
    worst = 0.0
    for w, h in zip(want, have):
        if w.shape != h.shape and w.size == h.size:
            h = h.reshape(w.shape)
        if w.shape != h.shape:
            return float("inf")
        scale = float(np.abs(w).max()) or 1.0
        worst = max(worst, float(np.abs(w.astype(np.float64) - h).max()) / scale)
    return worst


def write_results(record, results, extra=None):
    summary = {
        "exports": len(record),
        "exported": sum(r["export"] == "ok" for r in record.values()),
        "nnp_converted": sum(r.get("nnp") == "converted" for r in record.values()),
        "tsm_converted": sum(r.get("tsm") == "converted" for r in record.values()),
        "nnabla_ran": sum(r.get("nnabla") == "ok" for r in record.values()),
        "nnabla_within_1e-3": sum(r.get("nnabla_worst_relative_difference", 1) <= 1e-3 for r in record.values()),
    }
    if any("tennis" in r for r in record.values()):
        summary["tennis_ran"] = sum(r.get("tennis") == "ok" for r in record.values())
        summary["tennis_within_1e-3"] = sum(
            r.get("tennis_worst_relative_difference", 1) <= 1e-3 for r in record.values())
        summary["tennis_worst_relative_difference"] = max(
            (r["tennis_worst_relative_difference"] for r in record.values()
             if "tennis_worst_relative_difference" in r), default=None)
    summary.update(extra or {})
    with open(results, "w") as f:
        json.dump({"summary": summary, "models": record}, f, indent=1, sort_keys=True)
    print(json.dumps(summary))


def tennis(out, lib, version, mlformats, results):
    import numpy as np

    with open(results) as f:
        data = json.load(f)
    record = data["models"]
    jobs = []
    for key, r in sorted(record.items()):
        for k in ("tennis", "tennis_reason", "tennis_worst_relative_difference"):
            r.pop(k, None)
        if r.get("export") != "ok":
            continue
        if mlformats:
            src, dst = (os.path.join(out, key + ext) for ext in (".onnx", ".tsm"))
            p = subprocess.run([mlformats, "convert", src, dst, "-q"],
                               capture_output=True, text=True)
            r["tsm"] = "converted" if p.returncode == 0 else "refused"
            r.pop("tsm_reason", None)
            if p.returncode != 0:
                r["tsm_reason"] = first_line(p.stderr, out)
        if r.get("tsm") != "converted":
            continue
        with np.load(os.path.join(out, key + ".io.npz")) as z:
            names = [k[3:] for k in z.files if k.startswith("in/")]
        jobs.append({"id": key, "model": f"{key}.tsm", "inputs": f"{key}.io.npz",
                     "outputs": f"tennis/{key}.npz", "input_names": names})
    os.makedirs(os.path.join(out, "tennis"), exist_ok=True)
    batch = os.path.join(out, "batch.tennis.json")
    with open(batch, "w") as f:
        json.dump(jobs, f, indent=1)
    ran_path = os.path.join(out, "batch.tennis.results.json")
    cmd = [sys.executable, os.path.join(HERE, "run_tennis.py"), "--lib", lib, "--timeout", "600",
           "--results", ran_path, batch]
    subprocess.run(cmd, check=False)
    with open(ran_path) as f:
        ran = json.load(f)
    for job, res in zip(jobs, ran):
        r = record[job["id"]]
        res = res or {}
        r["tennis"] = res.get("status", "not run")
        if r["tennis"] != "ok":
            r["tennis_reason"] = str(res.get("error") or res.get("reason") or "")[:500]
            continue
        r["tennis_worst_relative_difference"] = worst_relative(np, out, job["id"], "tennis")
    extra = {"tennis_runtime": version} if version else {}
    write_results(record, results, extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("out")
    e.add_argument("--only", default="")
    c = sub.add_parser("check")
    c.add_argument("out")
    c.add_argument("--mlformats", required=True)
    c.add_argument("--chroot", default=os.environ.get("NNABLA_CHROOT"))
    c.add_argument("--results", default=None)
    t = sub.add_parser("tennis")
    t.add_argument("out")
    t.add_argument("--lib", default=os.environ.get("TENNIS_LIB"))
    t.add_argument("--version", default="", help="what the library was built from")
    t.add_argument("--mlformats", default=None, help="re-convert the .tsm files first")
    t.add_argument("--results", default=None)
    a = ap.parse_args()
    results = a.results or os.path.join(a.out, "results.json")
    if a.cmd == "export":
        export(a.out, set(filter(None, a.only.split(","))))
    elif a.cmd == "tennis":
        if not a.lib:
            raise SystemExit("no TenniS library: give --lib PATH or set TENNIS_LIB")
        tennis(a.out, a.lib, a.version, a.mlformats, results)
    else:
        check(a.out, a.mlformats, a.chroot, results)


if __name__ == "__main__":
    main()
