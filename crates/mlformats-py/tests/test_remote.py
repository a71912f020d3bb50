"""``mlformats.open`` of a location (``http(s)://``, ``s3://``, ``gs://``,
``az://``): the headers fetched by ranges, each tensor fetched when asked
for; here from the library's own range-serving server (``mlformats.Viewer``)."""

import numpy as np
import pytest

import mlformats

from conftest import TESTDATA


def served(viewer):
    return f"http://127.0.0.1:{viewer.port}/" + viewer.url.split("?url=")[1]


@pytest.mark.parametrize("rel", ["cvm/two_entry.params", "nnabla/convnet.nnp", "tennis/py_convnet.tsm"])
def test_open_a_location_gives_what_the_local_file_gives(rel):
    path = TESTDATA / rel
    with mlformats.Viewer(path) as v:
        url = served(v)
        with mlformats.open(path) as local, mlformats.open(url) as remote:
            assert remote.keys() == local.keys()
            assert remote.format == local.format
            for name in local.keys():
                a, b = local.get_tensor(name), remote.get_tensor(name)
                assert a.dtype == b.dtype and a.shape == b.shape, name
                assert np.array_equal(a, b), name
        # load and inspect take a location too
        loaded = mlformats.load(url)
        assert sorted(loaded) == sorted(mlformats.load(path))
        assert mlformats.inspect(url)["tensors"] == mlformats.inspect(path)["tensors"]


def test_a_location_that_is_not_there_raises():
    with mlformats.Viewer(TESTDATA / "cvm" / "two_entry.params") as v:
        missing = f"http://127.0.0.1:{v.port}/file/absent.params"
        with pytest.raises(Exception) as e:
            mlformats.open(missing)
        assert "404" in str(e.value) or "not found" in str(e.value).lower()
