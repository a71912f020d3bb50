"""What users coming from safetensors expect, and the options the library
has that Python must reach: stats(), convert(network=, opset=), sync=,
metadata(), get_shape()/get_dtype(), copy=True."""

import os
import subprocess
import sys

import numpy as np
import pytest

import mlformats
from conftest import REPO, TESTDATA


def test_stats_agree_with_numpy():
    path = TESTDATA / "cvm" / "large_1mb.params"
    arrays = mlformats.load(path)
    st = mlformats.stats(path)
    assert list(st) == list(arrays)
    for name, a in arrays.items():
        s = st[name]
        assert s["dtype"] == "f32" and s["shape"] == list(a.shape)
        assert s["count"] == a.size
        assert s["min"] == pytest.approx(float(a.min()))
        assert s["max"] == pytest.approx(float(a.max()))
        assert s["mean"] == pytest.approx(float(a.astype(np.float64).mean()), rel=1e-6, abs=1e-9)
        assert s["std"] == pytest.approx(float(a.astype(np.float64).std()), rel=1e-6)
        assert s["zeros"] == int((a == 0).sum()) and s["nan"] == 0 and s["inf"] == 0
    two = mlformats.stats(TESTDATA / "cvm" / "two_entry.params", only="b")
    assert list(two) == ["b"] and two["b"]["max"] == 258.0
    assert list(mlformats.stats(TESTDATA / "cvm" / "two_entry.params", exclude=["b"])) == ["w"]


def test_convert_takes_network_and_opset(tmp):
    src = TESTDATA / "onnx" / "lenet_010000.nnp"
    with mlformats.open(src) as f:
        networks = [g["name"] for g in f.graph["graphs"]]
    default = tmp / "default.onnx"
    mlformats.convert(src, default)
    v17 = tmp / "v17.onnx"
    mlformats.convert(src, v17, opset=17, network=networks[0])
    assert default.read_bytes() != v17.read_bytes()
    assert mlformats.inspect(v17)["tensors"] == mlformats.inspect(default)["tensors"]
    with pytest.raises(mlformats.FormatError, match="no-such-network"):
        mlformats.convert(src, tmp / "x.onnx", network="no-such-network")
    with pytest.raises(mlformats.FormatError):
        mlformats.convert(src, tmp / "x.onnx", opset=5)
    assert not (tmp / "x.onnx").exists()


def test_sync_writes_the_same_bytes_and_sweeps_dead_temporaries(tmp):
    t = {"w": np.arange(6, dtype=np.float32).reshape(2, 3)}
    # a temporary left by a writer that is gone (pid 4194304 is above Linux's largest)
    dead = tmp / ".b.safetensors.4194304.1a.tmp"
    dead.write_bytes(b"x")
    mlformats.save(tmp / "a.safetensors", t)
    mlformats.save(tmp / "b.safetensors", t, sync=True)
    assert (tmp / "a.safetensors").read_bytes() == (tmp / "b.safetensors").read_bytes()
    if sys.platform.startswith("linux"):
        assert not dead.exists()
    src = TESTDATA / "cvm" / "large_1mb.params"
    r = mlformats.convert(src, tmp / "c.npz", sync=True)
    mlformats.convert(src, tmp / "d.npz")
    assert r["tensors"] == len(mlformats.load(src))
    assert (tmp / "c.npz").read_bytes() == (tmp / "d.npz").read_bytes()
    assert sorted(p.name for p in tmp.iterdir()) == ["a.safetensors", "b.safetensors", "c.npz", "d.npz"]


def test_metadata_is_flat_like_safetensors(tmp):
    p = tmp / "m.safetensors"
    mlformats.save(p, {"w": np.ones(2, np.float32)}, metadata={"format": "pt", "step": "3"})
    with mlformats.open(p) as f:
        assert f.metadata() == {"format": "pt", "step": "3"}
    mlformats.save(p, {"w": np.ones(2, np.float32)})
    with mlformats.open(p) as f:
        assert f.metadata() is None


def test_slices_give_shape_and_dtype_like_safetensors():
    with mlformats.open(TESTDATA / "cvm" / "dtypes_extended.params") as f:
        s = f.get_slice("bfloat16")
        assert s.get_shape() == [2, 3] and s.shape == (2, 3)
        assert s.get_dtype() == "BF16" and s.dtype == "bf16"
        assert f.get_slice("float8_e4m3fn").get_dtype() == "F8_E4M3"
        assert f.get_slice("bool").get_dtype() == "BOOL"
    with mlformats.open(TESTDATA / "cvm" / "large_1mb.params") as f:
        name = f.keys()[0]
        s = f.get_slice(name)
        assert s.get_dtype() == "F32"
        np.testing.assert_array_equal(s[1:3], f.get_tensor(name)[1:3])


def test_bf16_slice_shape_and_dtype_without_ml_dtypes():
    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import mlformats\n"
        "with mlformats.open('testdata/cvm/dtypes_extended.params') as f:\n"
        "    s = f.get_slice('bfloat16')\n"
        "    print(s.get_shape(), s.get_dtype(), s.shape, s.dtype)\n"
        "    try:\n"
        "        s[0]\n"
        "    except ImportError as e:\n"
        "        print('data:', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[0] == "[2, 3] BF16 (2, 3) bf16", out
    assert lines[1].startswith("data:") and "ml_dtypes" in lines[1]


def test_copy_gives_owned_writable_arrays():
    path = TESTDATA / "cvm" / "large_1mb.params"
    mapped = mlformats.load(path)
    owned = mlformats.load(path, copy=True)
    assert list(owned) == list(mapped)
    for name, a in owned.items():
        assert a.flags.owndata and a.flags.writeable
        np.testing.assert_array_equal(a, mapped[name])
    # without copy=True, aligned tensors are views of the map (int8: always aligned)
    two = TESTDATA / "cvm" / "two_entry.params"
    assert not mlformats.load(two)["w"].flags.owndata
    w = mlformats.load(two, copy=True)["w"]
    assert w.flags.owndata and w.flags.writeable and list(w) == [1, -1]
    with mlformats.open(path) as f:
        name = f.keys()[0]
        a = f.get_tensor(name, copy=True)
        assert a.flags.owndata and a.flags.writeable
        a[...] = 0  # the file is not touched
        assert not (f.get_tensor(name) == 0).all()


@pytest.mark.skipif(sys.platform == "win32", reason="a file in use cannot be truncated there")
def test_copy_survives_the_file_truncated_underneath(tmp):
    src = TESTDATA / "cvm" / "large_1mb.params"
    p = tmp / "t.params"
    p.write_bytes(src.read_bytes())
    want = mlformats.load(src)
    # in a child: a mapped array of a truncated file would die of SIGBUS
    code = (
        "import os, sys, numpy as np, mlformats\n"
        f"p = {str(p)!r}\n"
        "owned = mlformats.load(p, copy=True)\n"
        "f = mlformats.open(p, copy=True)\n"
        "os.truncate(p, 0)\n"
        "total = sum(float(a.astype(np.float64).sum()) for a in owned.values())\n"
        "total2 = sum(float(f.get_tensor(n).astype(np.float64).sum()) for n in f.keys())\n"
        "print(repr(total), repr(total2))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out
    expect = sum(float(a.astype(np.float64).sum()) for a in want.values())
    t1, t2 = (float(x) for x in out.stdout.split())
    assert t1 == expect and t2 == expect
    assert os.path.getsize(p) == 0
