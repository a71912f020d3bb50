"""One name per tensor: every name ``inspect`` gives, for every file of
testdata/ that opens, is a name ``keys()`` lists and ``get_tensor`` takes."""

import mlformats
from conftest import TESTDATA


def _files():
    for p in sorted(TESTDATA.rglob("*")):
        if p.is_file() and p.suffix not in (".json", ".md"):
            yield p


def test_every_inspect_name_works_in_get_tensor():
    opened = names = renamed = 0
    for p in _files():
        try:
            f = mlformats.open(p)
            # from the headers alone (nothing decoded yet), then whole
            # (inspect reads every tensor): a file whose data is refused is
            # not one that opens
            from_headers = f.keys()
            stored = f.stored
            f.inspect()
        except (mlformats.FormatError, OSError, ValueError):
            continue
        opened += 1
        with f:
            doc = mlformats.inspect(p)
            assert doc["schema"] == 2
            listed = [t["name"] for t in doc["tensors"]]
            assert from_headers == listed, p
            assert list(f.keys()) == listed, p
            assert [s["name"] for s in stored] == listed, p
            for t in doc["tensors"]:
                names += 1
                renamed += "stored_name" in t
                arr = f.get_tensor(t["name"])
                assert arr is not None
                assert f.get_slice(t["name"]) is not None
            # schema 1 keeps the stored names
            v1 = mlformats.inspect(p, schema=1)
            assert [t["name"] for t in v1["tensors"]] == [s["stored_name"] for s in f.stored]
    assert opened >= 200 and names >= 900 and renamed >= 15, (opened, names, renamed)


def test_a_tennis_constant_is_named_by_its_node():
    p = TESTDATA / "tennis/py_convnet.tsm"
    with mlformats.open(p) as f:
        assert "_const_fc_rhs" in f.keys()
        assert "_const_fc_rhs/value" not in f.keys()
        (s,) = [s for s in f.stored if s["name"] == "_const_fc_rhs"]
        assert s["stored_name"] == "_const_fc_rhs/value"
        assert f.get_tensor("_const_fc_rhs").shape == (512, 10)
