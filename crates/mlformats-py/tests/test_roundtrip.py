"""Saving to every writable format and reading back; convert and diff."""

import numpy as np
import pytest

import mlformats
from conftest import WRITABLE, golden_params, same_values


def key(doc, name):
    """The name a saved tensor reads back under: its own, or (a TenniS
    module stores each tensor as a constant node's value) ``<name>/value``
    where the document names it so."""
    return name if name in doc else f"{name}/value"


def trimmed(shape):
    """primitiv drops trailing 1s of a shape (a scalar becomes [1])."""
    s = list(shape)
    while s and s[-1] == 1:
        s.pop()
    return tuple(s)


@pytest.mark.parametrize("ext", WRITABLE)
def test_f32_tensors_round_trip_through_every_writable_format(tmp, ext):
    w = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    b = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    p = tmp / f"m.{ext}"
    mlformats.save(p, {"fc/W": w, "fc/b": b})
    with mlformats.open(p) as f:
        assert f.format == {
            "safetensors": "safetensors",
            "npz": "npz",
            "params": "cvm-params",
            "data": "primitiv",
            "nntxt": "nnabla-nntxt",
            "protobuf": "nnabla-protobuf",
            "nnp": "nnabla-nnp",
            "h5": "nnabla-h5",
            "tsm": "tennis-module",
        }[ext]
        for name, want in [("fc/W", w), ("fc/b", b)]:
            got = f.get_tensor(key(f, name))
            assert got.dtype == np.float32
            assert got.shape == want.shape
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("ext", WRITABLE)
def test_format_argument_overrides_the_extension(tmp, ext):
    p = tmp / "no_extension.bin"
    mlformats.save(p, {"x": np.ones(4, np.float32)}, format=ext)
    with mlformats.open(p, format=ext) as f:
        np.testing.assert_array_equal(f.get_tensor(key(f, "x")), np.ones(4, np.float32))


@golden_params()
def test_every_golden_round_trips_through_every_format_that_takes_it(tmp, path, expected):
    src = mlformats.load(path)
    written = []
    for ext in WRITABLE:
        out = tmp / f"o.{ext}"
        try:
            mlformats.save(out, src)
        except mlformats.FormatError as e:
            # refused cleanly: a dtype or a name the format cannot hold
            assert str(e).startswith(str(out)), e
            assert not out.exists()
            continue
        written.append(ext)
        try:
            back = mlformats.load(out)
        except mlformats.FormatError:
            # no tensors in an NNabla message is an empty file, which older
            # builds of the library refuse to open ("is empty")
            if not src and ext in ("nntxt", "protobuf"):
                continue
            raise
        assert len(back) == len(src), ext
        for name, a in src.items():
            b = back[key(back, name)]
            assert same_values(a, b), (ext, name)
            if ext == "data":
                assert trimmed(a.shape) == trimmed(b.shape), (ext, name)
            else:
                assert a.shape == b.shape, (ext, name)
    # the exchange formats take every golden (a dtype they lack is written
    # as one that holds its values)
    assert "safetensors" in written and "npz" in written


def test_dtypes_round_trip_exactly_through_safetensors_and_npz(tmp):
    import ml_dtypes

    tensors = {
        "bool": np.array([True, False, True]),
        "i8": np.array([-128, 0, 127], np.int8),
        "i16": np.array([-3, 4], np.int16),
        "i32": np.arange(6, dtype=np.int32).reshape(3, 2),
        "i64": np.array([-(2**62), 2**62], np.int64),
        "u8": np.array([0, 255], np.uint8),
        "u16": np.array([65535], np.uint16),
        "u32": np.array([2**32 - 1], np.uint32),
        "u64": np.array([2**64 - 1], np.uint64),
        "f16": np.array([0.5, -np.inf, np.nan], np.float16),
        "f32": np.float32(3.5),  # a scalar: shape ()
        "f64": np.linspace(0, 1, 5),
        "empty": np.zeros((0, 3), np.float32),
        "bf16": np.array([1.5, -2.0], ml_dtypes.bfloat16),
    }
    st = tmp / "d.safetensors"
    mlformats.save(st, tensors)
    back = mlformats.load(st)
    for name, want in tensors.items():
        want = np.asarray(want)
        got = back[name]
        assert got.dtype == want.dtype, name
        assert got.shape == want.shape, name
        assert got.tobytes() == want.tobytes(), name
    npz = tmp / "d.npz"
    mlformats.save(npz, tensors)
    back = mlformats.load(npz)
    for name, want in tensors.items():
        want = np.asarray(want)
        assert same_values(back[name], want), name
        # npz has no bfloat16: the library writes f32, which holds it exactly
        assert back[name].dtype == (np.float32 if name == "bf16" else want.dtype), name
    # and numpy itself reads what we wrote
    with np.load(npz) as z:
        np.testing.assert_array_equal(z["i32"], tensors["i32"])


def test_float8_and_characters_survive_safetensors_and_tennis(tmp):
    import ml_dtypes

    f8 = np.array([0.5, -2.0, 448.0], ml_dtypes.float8_e4m3fn)
    e5 = np.array([1.0, -0.25], ml_dtypes.float8_e5m2)
    text = np.frombuffer(b"hello", dtype="S1")
    p = tmp / "f8.safetensors"
    mlformats.save(p, {"f8": f8, "e5": e5})
    back = mlformats.load(p)
    assert back["f8"].dtype == f8.dtype and back["f8"].tobytes() == f8.tobytes()
    assert back["e5"].dtype == e5.dtype and back["e5"].tobytes() == e5.tobytes()
    # TenniS has char8 (strings are 1-D char8 tensors): numpy's S1
    p = tmp / "s.tsm"
    mlformats.save(p, {"name": text, "h": np.array([1.5], np.float16)})
    back = mlformats.load(p)
    assert back[key(back, "name")].dtype == np.dtype("S1")
    assert back[key(back, "name")].tobytes() == b"hello"
    assert back[key(back, "h")].dtype == np.float16
    # TenniS has no 8-bit floats: refused by name
    with pytest.raises(mlformats.FormatError, match="no dtype code for f8e4m3fn"):
        mlformats.save(p, {"f8": f8})


def test_fortran_arrays_are_saved_column_major_without_a_transpose(tmp):
    a = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    p = tmp / "f.data"
    mlformats.save(p, {"w": a})
    with mlformats.open(p) as f:
        (entry,) = f.stored
        assert entry["order"] == "column-major"
        got = f.get_tensor("w")
        assert got.flags.f_contiguous
        np.testing.assert_array_equal(got, a)
    # npz keeps Fortran order when asked to
    p = tmp / "f.npz"
    mlformats.save(p, {"w": a}, keep_order=True)
    with np.load(p) as z:
        assert z["w"].flags.f_contiguous
        np.testing.assert_array_equal(z["w"], a)
    # a non-contiguous view is copied to C order first
    p = tmp / "v.safetensors"
    mlformats.save(p, {"w": a[:, ::2], "lst": [[1, 2], [3, 4]]})
    back = mlformats.load(p)
    np.testing.assert_array_equal(back["w"], a[:, ::2])
    np.testing.assert_array_equal(back["lst"], np.array([[1, 2], [3, 4]]))
    # big-endian arrays are saved by value
    mlformats.save(p, {"be": np.arange(3, dtype=">i4")})
    np.testing.assert_array_equal(mlformats.load(p)["be"], [0, 1, 2])


def test_need_grad_and_metadata(tmp):
    t = {"fc/W": np.ones((2, 2), np.float32), "fc/b": np.zeros(2, np.float32)}
    for ext in ["h5", "nnp", "nntxt", "protobuf"]:
        p = tmp / f"g.{ext}"
        mlformats.save(p, t, need_grad={"fc/b": False})
        with mlformats.open(p) as f:
            assert f.need_grad("fc/W") is True, ext
            assert f.need_grad("fc/b") is False, ext
            with pytest.raises(KeyError):
                f.need_grad("nope")
    p = tmp / "m.safetensors"
    mlformats.save(p, t, metadata={"author": "me", "step": "10"})
    with mlformats.open(p) as f:
        assert f.metadata() == {"author": "me", "step": "10"}
        assert f.need_grad("fc/W") is None
    # a list of pairs works as well as a dict, and keeps its order
    mlformats.save(p, [("z", np.ones(1, np.float32)), ("a", np.ones(1, np.float32))])
    assert list(mlformats.load(p)) == ["z", "a"]


def test_save_refuses_clearly(tmp):
    with pytest.raises(mlformats.FormatError, match="cannot tell the output format"):
        mlformats.save(tmp / "m.xyz", {"a": np.ones(1, np.float32)})
    with pytest.raises(mlformats.FormatError, match="primitiv stores only f32"):
        mlformats.save(tmp / "m.data", {"a": np.ones(1, np.int32)})
    with pytest.raises(ValueError, match="unknown format"):
        mlformats.save(tmp / "m.bin", {"a": np.ones(1, np.float32)}, format="nope")
    with pytest.raises(TypeError, match="numpy dtype object"):
        mlformats.save(tmp / "m.npz", {"a": np.array([object()])})
    with pytest.raises(FileNotFoundError):
        mlformats.save(tmp / "missing_dir" / "m.npz", {"a": np.ones(1, np.float32)})
    assert not (tmp / "m.xyz").exists() and not (tmp / "m.data").exists()


def test_convert_and_diff(tmp):
    from conftest import TESTDATA

    src = TESTDATA / "primitiv" / "model_nested_adam.data"
    st = tmp / "m.safetensors"
    s = mlformats.convert(src, st)
    assert s == {
        "from": "primitiv",
        "to": "safetensors",
        "tensors": len(mlformats.load(src)),
        "whole_model": False,
        "skipped": [],
        "warnings": [],
    }
    d = mlformats.diff(src, st)
    assert d["equal"] and d["differences"] == 0
    assert all(t["status"] == "equal" for t in d["tensors"])
    with mlformats.open(st) as f:
        assert f.metadata()["mlformats.source_format"] == "primitiv"
    # filters and a cast
    h = tmp / "h.safetensors"
    s = mlformats.convert(TESTDATA / "nnabla" / "mlp.nnp", h, only="*W*", dtype="f16")
    back = mlformats.load(h)
    assert s["tensors"] == len(back) == 2
    assert all(a.dtype == np.float16 for a in back.values())
    d = mlformats.diff(TESTDATA / "nnabla" / "mlp.nnp", h, tolerance=1e-2)
    assert d["only_in_a"] == ["fc1/affine/b", "fc2/affine/b"]
    values = [t for t in d["tensors"] if t["status"] == "values"]
    assert values and all(t["within_tolerance"] and not t["different"] for t in values)
    assert all(t["dtypes"] == ["f32", "f16"] for t in values)
    s = mlformats.convert(TESTDATA / "nnabla" / "mlp.nnp", tmp / "x.npz", exclude=["*b", "fc1*"], dtype=np.float64)
    assert list(mlformats.load(tmp / "x.npz")) == ["fc2/affine/W"]
    # to its own format: the whole file, byte-identical for real files
    s = mlformats.convert(TESTDATA / "cvm" / "two_entry.params", tmp / "t.params")
    assert s["whole_model"]
    assert (tmp / "t.params").read_bytes() == (TESTDATA / "cvm" / "two_entry.params").read_bytes()
    # NNabla encodings keep the whole model
    s = mlformats.convert(TESTDATA / "nnabla" / "mlp.nnp", tmp / "m.nntxt")
    assert s["whole_model"] and s["to"] == "nnabla-nntxt"
    with mlformats.open(tmp / "m.nntxt") as f:
        assert f.graph["graphs"][0]["name"] == "net1"
    # differences are reported
    mlformats.save(tmp / "a.npz", {"x": np.array([1.0, 2.0, 3.0]), "y": np.ones(2)})
    mlformats.save(tmp / "b.npz", {"x": np.array([1.0, 2.5, 3.0]), "z": np.ones(2)})
    d = mlformats.diff(tmp / "a.npz", tmp / "b.npz")
    assert not d["equal"] and d["differences"] == 3
    assert d["only_in_a"] == ["y"] and d["only_in_b"] == ["z"]
    (x,) = d["tensors"]
    assert x["status"] == "values" and x["differing"] == 1 and x["max_abs"] == 0.5
    assert x["index"] == 1 and x["at"] == [1] and x["different"]
    assert mlformats.diff(tmp / "a.npz", tmp / "b.npz", tolerance=0.5)["tensors"][0]["within_tolerance"]
    with pytest.raises(mlformats.FormatError, match="bad glob"):
        mlformats.convert(src, tmp / "e.npz", only="[")


def test_convert_between_nnabla_formats_keeps_the_network_unless_weights_only(tmp):
    from conftest import TESTDATA

    src = TESTDATA / "nnabla" / "mlp.nnp"
    s = mlformats.convert(src, tmp / "w.nnp", only="*/W")
    assert s["whole_model"] and s["tensors"] == 2
    assert len(s["warnings"]) == 1 and "fc1/affine/b, fc2/affine/b" in s["warnings"][0]
    with mlformats.open(tmp / "w.nnp") as f:
        assert [g["name"] for g in f.graph["graphs"]] == ["net1"]
        assert f.keys() == ["fc1/affine/W", "fc2/affine/W"]
    with pytest.raises(mlformats.FormatError, match="--weights-only"):
        mlformats.convert(src, tmp / "r.nnp", rename={"fc": "dense"})
    s = mlformats.convert(src, tmp / "r.nnp", rename=[("fc", "dense")], weights_only=True)
    assert not s["whole_model"] and s["warnings"] == []
    with mlformats.open(tmp / "r.nnp") as f:
        assert not f.graph or not f.graph["graphs"]
        assert f.keys()[0] == "dense1/affine/W"


def test_convert_skip_unsupported_lists_what_it_left_out(tmp):
    from conftest import TESTDATA

    src = tmp / "mixed.safetensors"
    mlformats.save(src, {"w": np.ones((2, 2), np.float32), "i": np.arange(3, dtype=np.int64)})
    with pytest.raises(mlformats.FormatError, match="cannot hold 1 of the tensors"):
        mlformats.convert(src, tmp / "x.protobuf")
    s = mlformats.convert(src, tmp / "x.protobuf", skip_unsupported=True)
    assert s["tensors"] == 1 and [n for n, _ in s["skipped"]] == ["i"]
    assert list(mlformats.load(tmp / "x.protobuf")) == ["w"]
