#!/usr/bin/env python3
"""More of the population: ONNX files written by other exporters, for `population.py check`.

Each subcommand runs in the Python that has its exporter, writes OUTDIR/NAME.EXPORTER.onnx
and NAME.EXPORTER.io.npz (onnxruntime's outputs on a fixed input, the layout of
testdata/onnx) and merges what it did into OUTDIR/export.json, so that

    population.py check OUTDIR --mlformats BIN --chroot DIR --results R.json
    population.py tennis OUTDIR --lib LIBTENNIS --results R.json

convert, run and compare them as they do the torch exports:

    population_more.py paddle OUTDIR      # paddlepaddle, paddle2onnx, onnxruntime, numpy
    population_more.py tf OUTDIR          # tensorflow(-cpu), tf2onnx, onnxruntime, numpy
    population_more.py onnxscript OUTDIR  # onnxscript, onnx, onnxruntime, numpy
    population_more.py torch OUTDIR       # torch, torchvision, timm, onnxruntime, numpy:
                                          # the TorchScript exporter at opsets 11 and 13

The weights are each architecture's random initial ones: the conversion is checked, not
the weights. A model an exporter refuses is recorded with the reason.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# paddle.vision.models: (name, constructor, input shape)
PADDLE = [
    ("resnet18", "resnet18", [1, 3, 224, 224]),
    ("resnet50", "resnet50", [1, 3, 224, 224]),
    ("resnext50_32x4d", "resnext50_32x4d", [1, 3, 224, 224]),
    ("wide_resnet50_2", "wide_resnet50_2", [1, 3, 224, 224]),
    ("mobilenet_v1", "mobilenet_v1", [1, 3, 224, 224]),
    ("mobilenet_v2", "mobilenet_v2", [1, 3, 224, 224]),
    ("mobilenet_v3_small", "mobilenet_v3_small", [1, 3, 224, 224]),
    ("mobilenet_v3_large", "mobilenet_v3_large", [1, 3, 224, 224]),
    ("vgg11", "vgg11", [1, 3, 224, 224]),
    ("squeezenet1_0", "squeezenet1_0", [1, 3, 224, 224]),
    ("shufflenet_v2_x0_25", "shufflenet_v2_x0_25", [1, 3, 224, 224]),
    ("shufflenet_v2_swish", "shufflenet_v2_swish", [1, 3, 224, 224]),
    ("densenet121", "densenet121", [1, 3, 224, 224]),
    ("googlenet", "googlenet", [1, 3, 224, 224]),
    ("inception_v3", "inception_v3", [1, 3, 299, 299]),
    ("alexnet", "alexnet", [1, 3, 224, 224]),
    ("lenet", "LeNet", [1, 1, 28, 28]),
]
PADDLE_OPSETS = [11, 16]

# tf.keras.applications: (name, constructor, input shape NHWC)
KERAS = [
    ("mobilenet_v2", "MobileNetV2", [1, 96, 96, 3]),
    ("mobilenet_v3_small", "MobileNetV3Small", [1, 96, 96, 3]),
    ("mobilenet_v3_large", "MobileNetV3Large", [1, 96, 96, 3]),
    ("resnet50", "ResNet50", [1, 64, 64, 3]),
    ("resnet50_v2", "ResNet50V2", [1, 64, 64, 3]),
    ("densenet121", "DenseNet121", [1, 64, 64, 3]),
    ("efficientnet_b0", "EfficientNetB0", [1, 64, 64, 3]),
    ("efficientnet_v2_b0", "EfficientNetV2B0", [1, 64, 64, 3]),
    ("xception", "Xception", [1, 71, 71, 3]),
    ("inception_v3", "InceptionV3", [1, 75, 75, 3]),
    ("vgg16", "VGG16", [1, 64, 64, 3]),
    ("convnext_tiny", "ConvNeXtTiny", [1, 64, 64, 3]),
    ("regnetx_002", "RegNetX002", [1, 64, 64, 3]),
    ("lstm_text", "lstm", [1, 12, 16]),
    ("conv1d_text", "conv1d", [1, 32, 8]),
]
TF_OPSETS = [13, 17]

# the TorchScript exporter at older opsets, on population.py's architectures
TORCH_OPSETS = [11, 13]


def save_io(np, ort, out, key, path, feed_value):
    """Runs OUTDIR/KEY.onnx in onnxruntime on `feed_value` and writes KEY.io.npz."""
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    outs = sess.run(None, {name: feed_value})
    arrays = {"in/" + name: feed_value}
    for o, v in zip(sess.get_outputs(), outs):
        arrays["out/" + o.name] = v
    np.savez(os.path.join(out, key + ".io.npz"), **arrays)


def merge_record(out, record):
    path = os.path.join(out, "export.json")
    old = json.load(open(path)) if os.path.exists(path) else {}
    old.update(record)
    with open(path, "w") as f:
        json.dump(old, f, indent=1, sort_keys=True)


def run_all(out, only, items, export_one):
    """Exports each (key, shape, make) of `items` with export_one(key, path, x, make)."""
    import numpy as np
    import onnxruntime as ort

    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    record = {}
    for key, shape, make in items:
        if only and key.split(".")[0] not in only:
            continue
        path = os.path.join(out, key + ".onnx")
        x = rng.standard_normal(shape).astype(np.float32)
        t = time.time()
        try:
            export_one(key, path, x, make)
            save_io(np, ort, out, key, path, x)
            record[key] = {"status": "ok", "seconds": round(time.time() - t, 1), "shape": shape}
        except Exception as e:  # an exporter's refusal is a result
            record[key] = {"status": "refused", "reason": f"{type(e).__name__}: {e}"[:400]}
            if os.path.exists(path):
                os.remove(path)
        print(key, record[key]["status"], flush=True)
        merge_record(out, {key: record[key]})


def paddle(out, only, key=None):
    import tempfile

    import paddle as pd
    import paddle2onnx
    from paddle.static import InputSpec

    def export_one(key, path, x, make):
        opset = int(key.rsplit("paddle2onnx", 1)[1])
        model = getattr(pd.vision.models, make)()
        model.eval()
        with tempfile.TemporaryDirectory() as tmp:
            prefix = os.path.join(tmp, "m")
            pd.jit.save(model, prefix, input_spec=[InputSpec(list(x.shape), "float32", "x")])
            graph = prefix + (".json" if os.path.exists(prefix + ".json") else ".pdmodel")
            paddle2onnx.export(graph, prefix + ".pdiparams", save_file=path, opset_version=opset,
                               auto_upgrade_opset=False, enable_optimize=False)
        if not os.path.exists(path):
            raise RuntimeError("paddle2onnx wrote no model")

    pd.seed(0)
    items = [(f"{name}.paddle2onnx{o}", shape, make)
             for name, make, shape in PADDLE for o in PADDLE_OPSETS]
    if key:
        run_all(out, set(), [i for i in items if i[0] == key], export_one)
        return
    # paddle2onnx aborts the process on some operators: one process per export
    import subprocess

    for k, _, _ in items:
        if only and k.split(".")[0] not in only:
            continue
        p = subprocess.run([sys.executable, __file__, "paddle", out, "--key", k], capture_output=True, text=True)
        done = json.load(open(os.path.join(out, "export.json"))) if os.path.exists(
            os.path.join(out, "export.json")) else {}
        if k not in done:
            why = [x for x in p.stderr.splitlines() if "Error" in x or "error" in x][-3:]
            merge_record(out, {k: {"status": "refused",
                                   "reason": f"paddle2onnx ended the process ({p.returncode}): " + " ".join(why)[:300]}})
            print(k, "refused", flush=True)


def keras_model(tf, make, shape):
    keras = tf.keras
    if make == "lstm":
        inp = keras.Input(shape=shape[1:], batch_size=1)
        h = keras.layers.LSTM(24, return_sequences=True)(inp)
        return keras.Model(inp, keras.layers.Dense(5)(h))
    if make == "conv1d":
        inp = keras.Input(shape=shape[1:], batch_size=1)
        h = keras.layers.Conv1D(16, 3, padding="same", activation="relu")(inp)
        h = keras.layers.MaxPooling1D(2)(h)
        h = keras.layers.GlobalAveragePooling1D()(h)
        return keras.Model(inp, keras.layers.Dense(4, activation="softmax")(h))
    return getattr(keras.applications, make)(weights=None, input_shape=tuple(shape[1:]))


def tf_export(out, only):
    import tensorflow as tf
    import tf2onnx

    def export_one(key, path, x, make):
        opset = int(key.rsplit("tf2onnx", 1)[1])
        model = keras_model(tf, make, list(x.shape))
        spec = (tf.TensorSpec(x.shape, tf.float32, name="input"),)
        tf2onnx.convert.from_keras(model, input_signature=spec, opset=opset, output_path=path)

    tf.random.set_seed(0)
    items = [(f"{name}.tf2onnx{o}", shape, make) for name, make, shape in KERAS for o in TF_OPSETS]
    run_all(out, only, items, export_one)


def onnxscript_models(op_sets):
    """Small networks written with onnxscript at several opsets: (name, opset, function, shape)."""
    import numpy as np
    from onnxscript import FLOAT, script

    # onnxscript resolves the names of a function's signature in its module
    globals()["FLOAT"] = FLOAT
    rng = np.random.default_rng(1)

    def w(*shape):
        return rng.standard_normal(shape).astype(np.float32) * 0.3

    models = []
    for version in op_sets:
        op = __import__("onnxscript", fromlist=[f"opset{version}"]).__dict__[f"opset{version}"]
        w1, b1, w2, b2 = w(16, 32), w(32), w(32, 4), w(4)
        k, kb = w(8, 3, 3, 3), w(8)
        g, bt = np.ones(32, np.float32), np.zeros(32, np.float32)
        q, kk, v = w(32, 32), w(32, 32), w(32, 32)

        @script(default_opset=op)
        def mlp(x: FLOAT[1, 16]) -> FLOAT[1, 4]:
            h = op.Relu(op.Add(op.MatMul(x, op.Constant(value=w1)), op.Constant(value=b1)))
            return op.Softmax(op.Add(op.MatMul(h, op.Constant(value=w2)), op.Constant(value=b2)), axis=-1)

        @script(default_opset=op)
        def convnet(x: FLOAT[1, 3, 16, 16]) -> FLOAT[1, 8]:
            c = op.Conv(x, op.Constant(value=k), op.Constant(value=kb), pads=[1, 1, 1, 1])
            s = op.Mul(c, op.Sigmoid(c))
            p = op.MaxPool(s, kernel_shape=[2, 2], strides=[2, 2])
            return op.Flatten(op.GlobalAveragePool(p), axis=1)

        minus1 = np.array([-1], np.int64)
        if version >= 18:

            @script(default_opset=op)
            def layer_mean(t: FLOAT[1, 6, 32]) -> FLOAT[1, 6, 1]:
                return op.ReduceMean(t, op.Constant(value=minus1))
        else:

            @script(default_opset=op)
            def layer_mean(t: FLOAT[1, 6, 32]) -> FLOAT[1, 6, 1]:
                return op.ReduceMean(t, axes=[-1])

        globals()["layer_mean"] = layer_mean

        @script(default_opset=op)
        def attention(x: FLOAT[1, 6, 32]) -> FLOAT[1, 6, 32]:
            d = op.Sub(x, layer_mean(x))
            n = op.Div(d, op.Sqrt(op.Add(layer_mean(op.Mul(d, d)), op.Constant(value_float=1e-5))))
            n = op.Add(op.Mul(n, op.Constant(value=g)), op.Constant(value=bt))
            qq = op.MatMul(n, op.Constant(value=q))
            kt = op.Transpose(op.MatMul(n, op.Constant(value=kk)), perm=[0, 2, 1])
            a = op.Softmax(op.Div(op.MatMul(qq, kt), op.Constant(value_float=5.656854)), axis=-1)
            return op.Add(x, op.MatMul(a, op.MatMul(n, op.Constant(value=v))))

        @script(default_opset=op)
        def gelu_tanh(x: FLOAT[2, 32]) -> FLOAT[2, 32]:
            inner = op.Mul(op.Constant(value_float=0.7978846), op.Add(x, op.Mul(op.Constant(value_float=0.044715),
                                                                                op.Pow(x, op.Constant(value_float=3.0)))))
            return op.Mul(op.Mul(op.Constant(value_float=0.5), x), op.Add(op.Constant(value_float=1.0), op.Tanh(inner)))

        models += [("mlp", version, mlp, [1, 16]), ("convnet", version, convnet, [1, 3, 16, 16]),
                   ("attention", version, attention, [1, 6, 32]), ("gelu_tanh", version, gelu_tanh, [2, 32])]
    return models


def onnxscript_export(out, only):
    import onnx

    models = {f"{name}.onnxscript{v}": (fn, shape) for name, v, fn, shape in onnxscript_models([15, 18, 21])}

    def export_one(key, path, x, fn):
        onnx.save(fn.to_model_proto(), path)

    run_all(out, only, [(k, shape, fn) for k, (fn, shape) in models.items()], export_one)


def torch_export(out, only):
    import torch

    sys.path.insert(0, HERE)
    import population

    torch.manual_seed(0)

    def export_one(key, path, x, make):
        opset = int(key.rsplit("torchscript", 1)[1])
        source, arg = make
        model = population.build(torch, source, arg).eval()
        with torch.no_grad():
            torch.onnx.export(model, (torch.from_numpy(x),), path, dynamo=False, opset_version=opset,
                              input_names=["input"], output_names=["output"])

    items = [(f"{name}.torchscript{o}", shape, (source, arg))
             for name, source, arg, shape in population.MODELS for o in TORCH_OPSETS]
    run_all(out, only, items, export_one)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("exporter", choices=["paddle", "tf", "onnxscript", "torch"])
    ap.add_argument("out")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--key", help=argparse.SUPPRESS)  # paddle: one export, in this process
    a = ap.parse_args()
    only = {s for s in a.only.split(",") if s}
    if a.exporter == "paddle":
        paddle(a.out, only, a.key)
        return
    {"tf": tf_export, "onnxscript": onnxscript_export, "torch": torch_export}[a.exporter](a.out, only)


if __name__ == "__main__":
    main()
