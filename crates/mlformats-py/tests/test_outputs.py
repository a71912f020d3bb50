"""`save` and `convert` write outputs as Unix tools do: a symlink's target is
replaced (the link stays), a FIFO is written through, a replaced file keeps
its permissions."""

import os
import stat
import threading

import numpy as np
import pytest

import mlformats
from conftest import TESTDATA

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symlinks, FIFOs and modes are POSIX")

SRC = TESTDATA / "cvm" / "two_entry.params"


def test_a_symlink_to_a_0600_file_has_its_target_replaced(tmp_path):
    real = tmp_path / "real.safetensors"
    real.write_bytes(b"old")
    real.chmod(0o600)
    link = tmp_path / "link.safetensors"
    link.symlink_to("real.safetensors")
    mlformats.save(link, {"w": np.arange(3, dtype=np.float32)})
    assert link.is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    np.testing.assert_array_equal(mlformats.load(real)["w"], np.arange(3, dtype=np.float32))
    mlformats.convert(SRC, link)
    assert link.is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert sorted(mlformats.load(real)) == ["b", "w"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.safetensors", "real.safetensors"]


def test_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "out.npz"
    os.mkfifo(fifo)
    got = {}
    reader = threading.Thread(target=lambda: got.setdefault("bytes", fifo.read_bytes()))
    reader.start()
    mlformats.convert(SRC, fifo)
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    plain = tmp_path / "plain.npz"
    mlformats.convert(SRC, plain)
    assert got["bytes"] == plain.read_bytes()
