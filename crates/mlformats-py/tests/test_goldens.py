"""Every golden of testdata/ reads with the hashes, dtypes and shapes its
expected.json records (the `inspect --json` contract)."""

import numpy as np
import pytest

import mlformats
from conftest import NUMPY_NAMES, golden_params, sha256, stored_bytes


@golden_params()
def test_every_tensor_has_the_expected_sha256_dtype_and_shape(path, expected):
    with mlformats.open(path) as f:
        assert f.format == expected["format"]
        assert f.kind == expected["kind"]
        assert f.file_size == expected["file_size"]
        stored = f.stored
        assert [s["stored_name"] for s in stored] == [t["name"] for t in expected["tensors"]]
        assert len(f) == len(stored)
        for s, t in zip(stored, expected["tensors"]):
            arr = f.get_tensor(s["key"])
            assert isinstance(arr, np.ndarray)
            assert arr.dtype.name == NUMPY_NAMES[t["dtype"]], s["key"]
            # the hash is of the bytes as stored (primitiv: column-major)
            assert sha256(stored_bytes(arr)) == t["sha256"], s["key"]
            # primitiv tensors carry a batch other than 1 as a last axis
            batch = t.get("batch", 1)
            want = tuple(t["shape"]) + ((batch,) if batch != 1 else ())
            assert arr.shape == want, s["key"]
            assert not arr.flags.writeable
            if t.get("order") == "column-major" and sum(d > 1 for d in arr.shape) > 1:
                assert arr.flags.f_contiguous and not arr.flags.c_contiguous


@golden_params()
def test_load_gives_the_same_arrays_as_get_tensor(path, expected):
    loaded = mlformats.load(path)
    with mlformats.open(path) as f:
        assert list(loaded) == f.keys()
        for name, arr in loaded.items():
            other = f.get_tensor(name)
            assert arr.dtype == other.dtype and arr.shape == other.shape
            assert stored_bytes(arr) == stored_bytes(other)
    # a selection, in the order asked for
    names = list(reversed(list(loaded)))[:3]
    assert list(mlformats.load(path, names=names)) == names


@golden_params()
def test_inspect_is_the_contract_document(path, expected):
    got = mlformats.inspect(path, schema=1)
    for key in ["schema", "format", "kind", "file_size"]:
        assert got[key] == expected[key], key
    assert len(got["tensors"]) == len(expected["tensors"])
    for a, b in zip(got["tensors"], expected["tensors"]):
        for key in ["name", "dtype", "shape", "sha256"]:
            assert a[key] == b[key], (key, b["name"])
        # sums are exact below 2^53 (a file may have a larger integer sum,
        # which the library gives as an f64)
        if isinstance(a["sum"], float) or isinstance(b["sum"], float):
            assert float(a["sum"]) == float(b["sum"]), b["name"]
        else:
            assert a["sum"] == b["sum"], b["name"]
    assert got["graph"] == expected["graph"]
    with mlformats.open(path) as f:
        assert f.inspect(schema=1) == got


@golden_params()
def test_graph_is_there_where_the_contract_has_one(path, expected):
    with mlformats.open(path) as f:
        g = f.graph
    if expected["graph"] is None:
        assert g is None
        return
    assert set(g) == {"graphs", "executors", "optimizers", "datasets", "monitors"}
    for net in g["graphs"]:
        assert set(net) == {"name", "batch_size", "inputs", "outputs", "values", "nodes"}
        for n in net["nodes"]:
            assert set(n) == {"op", "name", "inputs", "outputs", "attributes"}
            assert isinstance(n["attributes"], dict)
    if expected["format"].startswith("nnabla"):
        networks = expected["graph"]["networks"]
        assert [n["name"] for n in g["graphs"]] == [n["name"] for n in networks]
        for net, want in zip(g["graphs"], networks):
            assert [n["op"] for n in net["nodes"]] == [f["type"] for f in want["functions"]]
            assert [v["name"] for v in net["values"]] == [v["name"] for v in want["variables"]]
        assert [e["name"] for e in g["executors"]] == expected["graph"]["executors"]
    else:  # TenniS: nodes in file order
        nodes = g["graphs"][0]["nodes"]
        assert [n["op"] for n in nodes] == [n["op"] for n in expected["graph"]["nodes"]]
        assert [n["name"] for n in nodes] == [n["name"] for n in expected["graph"]["nodes"]]
