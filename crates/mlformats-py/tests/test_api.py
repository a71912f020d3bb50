"""The module's surface: what the README and the stubs promise."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mlformats
from conftest import REPO, TESTDATA


def test_the_readme_one_liner_prints_the_two_arrays():
    out = subprocess.run(
        [sys.executable, "-c", "import mlformats; print(mlformats.load('testdata/cvm/two_entry.params'))"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "{'w': array([ 1, -1], dtype=int8), 'b': array(258, dtype=int32)}"


def test_public_names_and_stubs_are_shipped():
    for name in mlformats.__all__:
        assert hasattr(mlformats, name), name
    pkg = Path(mlformats.__file__).parent
    assert (pkg / "py.typed").exists()
    stub = (pkg / "_native.pyi").read_text()
    for name in ["def load", "def open", "def save", "def convert", "def inspect", "def diff",
                 "class Document", "class TensorSlice", "class FormatError(ValueError)"]:
        assert name in stub, name
    assert mlformats.__version__
    assert "safetensors" in mlformats.FORMATS and "cvm-params" in mlformats.FORMATS
    for f in [mlformats.load, mlformats.open, mlformats.save, mlformats.convert,
              mlformats.inspect, mlformats.diff, mlformats.Document.get_tensor]:
        assert f.__doc__ and len(f.__doc__) > 80, f


def test_document_is_a_mapping_of_tensors():
    with mlformats.open(TESTDATA / "cvm" / "two_entry.params") as f:
        assert repr(f).startswith("<mlformats.Document ") and "2 tensors" in repr(f)
        assert f.keys() == ["w", "b"] == list(f)
        assert len(f) == 2 and "w" in f
        assert f["w"].tolist() == [1, -1]
        assert f.path.endswith("two_entry.params") and f.kind is None
        assert f.file_size == (TESTDATA / "cvm" / "two_entry.params").stat().st_size
        assert f.metadata() is None and f.graph is None and not f.closed
    assert f.closed and "closed" in repr(f)


def test_graphs_are_plain_python_objects():
    with mlformats.open(TESTDATA / "nnabla" / "convnet.nnp") as f:
        g = f.graph
        (net,) = [n for n in g["graphs"] if n["name"] == "convnet"]
        conv = net["nodes"][0]
        assert conv["op"] == "Convolution"
        assert conv["inputs"] == ["x", "conv1/conv/W", "conv1/conv/b"]
        assert conv["attributes"]["pad"] == [1, 1] and conv["attributes"]["group"] == 1
        assert conv["attributes"]["channel_last"] is False
        x = net["values"][0]
        assert x == {"name": "x", "kind": "Buffer", "shape": [-1, 1, 8, 8], "tensor": None}
        weights = [v for v in net["values"] if v["kind"] == "Parameter"]
        assert weights and all(v["name"] in f for v in weights)
        assert g["executors"][0]["network"] in [n["name"] for n in g["graphs"]]
    with mlformats.open(TESTDATA / "tennis" / "py_convnet.tsm") as f:
        net = f.graph["graphs"][0]
        assert net["inputs"] == ["input"]
        values = [n["attributes"]["value"] for n in net["nodes"] if n["op"] == "<const>"]
        # small constants are inlined as lists, larger ones name a tensor
        assert any(isinstance(v, list) for v in values)
        ref = next(v for v in values if isinstance(v, mlformats.TensorRef))
        assert ref == mlformats.TensorRef(ref.name) and hash(ref) == hash(mlformats.TensorRef(ref.name))
        # a reference names a stored tensor (by its contract name or key)
        (entry,) = [s for s in f.stored if ref.name in (s["name"], s["key"])]
        assert isinstance(f.get_tensor(entry["key"]), np.ndarray)
        # constants' values name the document's tensors
        consts = [v for v in net["values"] if v["kind"] == "Constant"]
        assert consts and all(v["tensor"] in f for v in consts)


def test_metadata_of_primitiv_optimizers():
    with mlformats.open(TESTDATA / "primitiv" / "optimizer_adam_custom.data") as f:
        assert f.kind == "optimizer"
        assert f.metadata()["float_configs"]["Adam.beta1"] == pytest.approx(0.8)
        assert f.metadata()["uint_configs"]["Optimizer.epoch"] == 100000


def test_validate_reports_problems():
    assert mlformats.validate(TESTDATA / "cvm" / "two_entry.params") == []
    problems = mlformats.validate(TESTDATA / "cvm" / "special_floats.params")
    assert any("NaN" in p for p in problems) and any("infinite" in p for p in problems)


def test_char_and_float8_dtypes(tmp):
    import ml_dtypes

    with mlformats.open(TESTDATA / "cvm" / "dtypes_extended.params") as f:
        dtypes = {f.get_tensor(n).dtype for n in f.keys()}
    assert np.dtype(ml_dtypes.bfloat16) in dtypes
    assert np.dtype(ml_dtypes.float8_e4m3fn) in dtypes
    with mlformats.open(TESTDATA / "tennis" / "py_dtypes.tsm") as f:
        chars = [f.get_tensor(n) for n in f.keys() if f.get_tensor(n).dtype == np.dtype("S1")]
        assert chars and all(c.ndim == 1 for c in chars)


def test_bf16_without_ml_dtypes_says_what_to_install(tmp):
    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import mlformats\n"
        "try:\n"
        "    mlformats.load('testdata/cvm/dtypes_extended.params')\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert "pip install ml_dtypes" in out.stdout, out
    # files without such dtypes need no ml_dtypes
    code = "import sys; sys.modules['ml_dtypes'] = None\nimport mlformats\nprint(len(mlformats.load('testdata/cvm/cvm_int.params')))"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True)


def test_threads_read_concurrently(tmp):
    from concurrent.futures import ThreadPoolExecutor

    p = tmp / "m.safetensors"
    mlformats.save(p, {f"t{i}": np.full(1000, i, np.float32) for i in range(16)})

    def work(i):
        with mlformats.open(p) as f:
            return float(f.get_tensor(f"t{i}").sum()), mlformats.inspect(p)["tensors"][i]["sum"]

    with ThreadPoolExecutor(4) as ex:
        for i, (s, t) in enumerate(ex.map(work, range(16))):
            assert s == t == 1000.0 * i
