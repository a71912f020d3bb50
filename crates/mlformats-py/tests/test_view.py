"""``mlformats.view``: the viewer page and the file served on 127.0.0.1 by
the library's server, started and stopped from Python."""

import http.client
import socket
import threading
import time

import pytest

import mlformats

from conftest import TESTDATA


def get(port, path, host=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", path, headers={"Host": host or f"127.0.0.1:{port}"})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, r.getheader("Content-Type"), body


def test_view_serves_the_page_and_the_file():
    path = TESTDATA / "nnabla" / "convnet.nnp"
    v = mlformats.view(path, browser=False, block=False)
    try:
        assert v.running
        assert v.url == f"http://127.0.0.1:{v.port}/?url=file/convnet.nnp"
        status, mime, page = get(v.port, "/")
        assert status == 200 and mime.startswith("text/html")
        assert b"<title>mlformats viewer</title>" in page
        status, mime, wasm = get(v.port, "/mlformats_web.wasm")
        assert (status, mime, wasm[:4]) == (200, "application/wasm", b"\0asm")
        status, _, body = get(v.port, "/file/convnet.nnp")
        assert status == 200 and body == path.read_bytes()
        assert get(v.port, "/../conftest.py")[0] == 404
        assert get(v.port, "/", host="rebound.example")[0] == 403
    finally:
        v.stop()
    assert not v.running
    v.stop()  # a second stop does nothing
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", v.port), timeout=2).close()


def test_viewer_is_a_context_manager():
    with mlformats.Viewer(TESTDATA / "tennis" / "py_convnet.tsm") as v:
        assert get(v.port, "/file/py_convnet.tsm")[2] == (
            TESTDATA / "tennis" / "py_convnet.tsm"
        ).read_bytes()
        assert "serving" in repr(v)
    assert not v.running and "stopped" in repr(v)


def test_blocking_view_stops_on_ctrl_c(capsys):
    # block=True serves until KeyboardInterrupt; raise one in the main
    # thread from a timer once the page has been fetched
    import _thread

    seen = {}

    def poke():
        for _ in range(100):
            out = capsys.readouterr().out
            if "http://" in out:
                url = out.split()[out.split().index("at") + 1]
                port = int(url.split(":")[2].split("/")[0])
                seen["status"] = get(port, "/")[0]
                seen["port"] = port
                break
            time.sleep(0.05)
        _thread.interrupt_main()

    t = threading.Thread(target=poke)
    t.start()
    v = mlformats.view(TESTDATA / "nnabla" / "convnet.nnp", browser=False)
    t.join()
    assert seen["status"] == 200
    assert v.port == seen["port"] and not v.running


def test_view_of_a_missing_file_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        mlformats.view(tmp_path / "absent.nnp", browser=False, block=False)
    with pytest.raises(IsADirectoryError):
        mlformats.view(tmp_path, browser=False, block=False)
