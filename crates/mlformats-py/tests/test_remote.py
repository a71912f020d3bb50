"""``mlformats.open`` of a location (``http(s)://``, ``s3://``, ``gs://``,
``az://``): the headers fetched by ranges, each tensor fetched when asked
for; here from the library's own range-serving server (``mlformats.Viewer``)
and from one written here over Python's ``http.server`` (with and without
``HEAD``). A test whose server cannot start is skipped, saying why."""

import http.server
import re
import threading
from contextlib import contextmanager

import numpy as np
import pytest

import mlformats

from conftest import TESTDATA


def served(viewer):
    return f"http://127.0.0.1:{viewer.port}/" + viewer.url.split("?url=")[1]


@contextmanager
def viewer(path):
    """``mlformats.Viewer`` of ``path``; the test skipped when it cannot start."""
    try:
        v = mlformats.Viewer(path)
    except OSError as e:
        if not path.exists():
            raise
        pytest.skip(f"cannot start mlformats.Viewer: {e}")
    with v:
        yield v


def _assert_same(remote, local):
    assert remote.keys() == local.keys()
    assert remote.format == local.format
    for name in local.keys():
        a, b = local.get_tensor(name), remote.get_tensor(name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert np.array_equal(a, b), name


@pytest.mark.parametrize("rel", ["cvm/two_entry.params", "nnabla/convnet.nnp", "tennis/py_convnet.tsm"])
def test_open_a_location_gives_what_the_local_file_gives(rel):
    path = TESTDATA / rel
    with viewer(path) as v:
        url = served(v)
        with mlformats.open(path) as local, mlformats.open(url) as remote:
            _assert_same(remote, local)
        # load and inspect take a location too
        loaded = mlformats.load(url)
        assert sorted(loaded) == sorted(mlformats.load(path))
        assert mlformats.inspect(url)["tensors"] == mlformats.inspect(path)["tensors"]


def test_a_location_that_is_not_there_raises():
    with viewer(TESTDATA / "cvm" / "two_entry.params") as v:
        missing = f"http://127.0.0.1:{v.port}/file/absent.params"
        with pytest.raises(Exception) as e:
            mlformats.open(missing)
        assert "404" in str(e.value) or "not found" in str(e.value).lower()


# --- a range server written here (Python's http.server), independent of the
# library's own: safetensors and .npz by URL, with and without HEAD


class _RangeHandler(http.server.BaseHTTPRequestHandler):
    """Serves the files of ``server.root`` by ``Range`` requests (206,
    ``Content-Range``, ``ETag``), counting the bytes of file data sent;
    ``HEAD`` refused with 405 when ``server.refuse_head``."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def _file(self):
        path = self.server.root / self.path.lstrip("/").split("?")[0]
        return path if path.is_file() else None

    def _headers(self, status, headers):
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()

    def do_HEAD(self):
        f = self._file()
        if self.server.refuse_head:
            self._headers(405, {"Content-Length": "0"})
        elif f is None:
            self._headers(404, {"Content-Length": "0"})
        else:
            self._headers(200, {"Content-Length": str(f.stat().st_size), "ETag": '"v1"', "Accept-Ranges": "bytes"})

    def do_GET(self):
        f = self._file()
        if f is None:
            self._headers(404, {"Content-Length": "0"})
            return
        data = f.read_bytes()
        size = len(data)
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        if m is None:
            start, end, status = 0, size - 1, 200
        elif m.group(1):
            start, end, status = int(m.group(1)), min(int(m.group(2) or size - 1), size - 1), 206
        else:
            start, end, status = max(size - int(m.group(2)), 0), size - 1, 206
        if start > end:
            self._headers(416, {"Content-Range": f"bytes */{size}", "Content-Length": "0"})
            return
        body = data[start : end + 1]
        headers = {"Content-Length": str(len(body)), "ETag": '"v1"', "Accept-Ranges": "bytes"}
        if status == 206:
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        # counted before it is sent: the client may go on once it has it
        with self.server.lock:
            self.server.sent += len(body)
        self._headers(status, headers)
        self.wfile.write(body)


@pytest.fixture(params=[False, True], ids=["head", "no-head"])
def range_server(request, tmp_path):
    """A range server on 127.0.0.1 over ``tmp_path`` (skips the test when
    it cannot listen); ``.url(name)``, ``.sent`` (bytes of data sent)."""
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RangeHandler)
    except OSError as e:
        pytest.skip(f"cannot start a local HTTP server: {e}")
    server.daemon_threads = True
    server.root, server.refuse_head = tmp_path, request.param
    server.sent, server.lock = 0, threading.Lock()
    server.url = lambda name: f"http://127.0.0.1:{server.server_address[1]}/{name}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def _arrays():
    rng = np.random.default_rng(7)
    return {
        "embed.weight": rng.standard_normal((512, 512)).astype(np.float32),
        "layer0.bias": np.arange(300, dtype=np.int64),
        "layer1.weight": rng.standard_normal((256, 384)).astype(np.float16),
        "mask": rng.integers(0, 2, (17, 3)).astype(np.bool_),
    }


@pytest.mark.parametrize("kind", ["safetensors", "npz", "npz-deflated"])
def test_open_load_inspect_by_url_equal_the_local_file(range_server, kind):
    root = range_server.root
    arrays = _arrays()
    if kind == "safetensors":
        path = root / "model.safetensors"
        mlformats.save(path, arrays, metadata={"source": "test"})
    elif kind == "npz":
        path = root / "model.npz"
        np.savez(path, **arrays)
    else:
        path = root / "deflated.npz"
        np.savez_compressed(path, **arrays)
    url = range_server.url(path.name)
    size = path.stat().st_size
    with mlformats.open(path) as local, mlformats.open(url) as remote:
        # the headers alone: names and metadata, no tensor's data
        assert remote.keys() == list(arrays)
        assert remote.metadata() == local.metadata()
        if kind == "safetensors":
            assert remote.metadata() == {"source": "test"}
        assert range_server.sent < size // 4, (range_server.sent, size)
        # a slice fetches its tensor alone, once, at its first read
        before, w = range_server.sent, arrays["embed.weight"]
        s = remote.get_slice("embed.weight")
        assert (s.get_shape(), s.get_dtype()) == ([512, 512], "F32")
        assert range_server.sent == before
        assert np.array_equal(s[:3], w[:3]) and np.array_equal(s[5], w[5])
        fetched = range_server.sent - before
        assert fetched < w.nbytes + (64 << 10), fetched
        if kind != "npz-deflated":
            # the tensor's bytes come from the server (its first bytes may
            # be in a block the header walk fetched: one remote file, and
            # its cache, serves both)
            assert fetched + (64 << 10) >= w.nbytes, fetched
        # each tensor fetched when asked for
        _assert_same(remote, local)
        assert remote.inspect()["tensors"] == local.inspect()["tensors"]
        for name in arrays:
            a, b = local.get_slice(name), remote.get_slice(name)
            assert (b.get_shape(), b.get_dtype()) == (a.get_shape(), a.get_dtype()), name
            assert np.array_equal(b[:3], a[:3]), name
    loaded = mlformats.load(url)
    assert sorted(loaded) == sorted(arrays)
    for name, a in arrays.items():
        assert loaded[name].dtype == a.dtype and np.array_equal(loaded[name], a), name
    assert mlformats.inspect(url)["tensors"] == mlformats.inspect(path)["tensors"]


def test_a_missing_url_names_the_location(range_server):
    missing = range_server.url("absent.safetensors")
    with pytest.raises(mlformats.FormatError) as e:
        mlformats.open(missing)
    assert missing in str(e.value)
    assert "not found" in str(e.value).lower()
