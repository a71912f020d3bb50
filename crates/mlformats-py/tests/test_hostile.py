"""Truncated, corrupted and garbage files raise FormatError (or read
cleanly) and never crash the interpreter."""

import json
import os
import random

import numpy as np
import pytest

import mlformats
from conftest import GOLDENS, TESTDATA, golden_params

# formats whose every truncation is invalid
STRICT = {".params", ".data", ".h5", ".nnp", ".tsm"}
# an empty protobuf message (text or binary) is an empty file
EMPTY_OK = {".nntxt", ".protobuf"}


def read_all(path):
    """Everything a user can ask of a file: every tensor, the graph, the
    metadata, the inspect document (which reads and hashes all data)."""
    with mlformats.open(path) as f:
        for name in f.keys():
            try:
                f.get_tensor(name)
            except ImportError:  # a dtype that needs ml_dtypes
                pass
        f.graph, f.metadata(), f.stored
    mlformats.inspect(path)
    mlformats.validate(path)


def outcome(path):
    """'ok' or 'refused'; any other exception fails the test."""
    try:
        read_all(path)
        return "ok"
    except mlformats.FormatError as e:
        assert str(e).startswith(str(path)), e
        assert "internal error" not in str(e), e
        return "refused"


@golden_params()
def test_truncated_files_are_refused(tmp, path, expected):
    data = path.read_bytes()
    for cut in sorted({0, 1, 7, len(data) // 3, len(data) // 2, len(data) - 1}):
        if cut >= len(data):
            continue
        p = tmp / f"cut{path.suffix}"
        p.write_bytes(data[:cut])
        got = outcome(p)
        if path.suffix in STRICT or (cut == 0 and path.suffix not in EMPTY_OK):
            assert got == "refused", (cut, len(data))


@golden_params()
def test_corrupted_files_never_crash(tmp, path, expected):
    data = bytearray(path.read_bytes())
    if not data:
        return
    rng = random.Random(path.name)
    p = tmp / f"bad{path.suffix}"
    for _ in range(24):
        bad = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(bad))
            bad[i] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
        p.write_bytes(bytes(bad))
        outcome(p)


@pytest.mark.parametrize("ext", ["params", "data", "nntxt", "protobuf", "nnp", "h5", "tsm", "safetensors", "npz", "bin"])
def test_garbage_is_refused(tmp, ext):
    rng = random.Random(ext)
    for n in [1, 8, 64, 1000, 70000]:
        p = tmp / f"garbage.{ext}"
        p.write_bytes(bytes(rng.randrange(256) for _ in range(n)))
        assert outcome(p) == "refused", n
        with pytest.raises(mlformats.FormatError):
            mlformats.load(p)


def test_hostile_headers_that_claim_huge_sizes(tmp):
    # a safetensors header length far past the file, and one whose tensor
    # claims more bytes than exist
    p = tmp / "h.safetensors"
    p.write_bytes((2**62).to_bytes(8, "little") + b"{}")
    assert outcome(p) == "refused"
    header = json.dumps({"x": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 16]}}).encode()
    p.write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 16)
    assert outcome(p) == "refused"
    # a .params entry count in the billions
    good = (TESTDATA / "cvm" / "two_entry.params").read_bytes()
    p = tmp / "h.params"
    p.write_bytes(good[:16] + (2**60).to_bytes(8, "little") + good[24:])
    assert outcome(p) == "refused"


def rejected_cases():
    cases = []
    for pattern in ["tennis/edge/bad_*.tsm", "primitiv/reader_cases/bad_*.data"]:
        for f in sorted(TESTDATA.glob(pattern)):
            exp = f.with_name(f.stem + ".expected.json")
            if exp.exists() and json.loads(exp.read_text()).get("reject"):
                cases.append(f)
    assert len(cases) >= 20
    return cases


@pytest.mark.parametrize("path", rejected_cases(), ids=lambda p: p.name)
def test_files_the_real_libraries_reject_are_refused(path):
    with pytest.raises(mlformats.FormatError) as e:
        mlformats.load(path)
    assert str(e.value).startswith(str(path))


def test_fuzz_regressions_never_crash():
    files = [f for f in sorted((TESTDATA / "fuzz-regressions").rglob("*")) if f.is_file()]
    assert files
    for f in files:
        outcome(f)


def test_error_types(tmp):
    with pytest.raises(FileNotFoundError) as e:
        mlformats.open(tmp / "missing.params")
    assert e.value.errno == 2 and e.value.filename == str(tmp / "missing.params")
    with pytest.raises(FileNotFoundError):
        mlformats.load(tmp / "missing.params")
    with pytest.raises(IsADirectoryError):
        mlformats.open(tmp)
    p = tmp / "empty.params"
    p.write_bytes(b"")
    with pytest.raises(mlformats.FormatError, match="is empty"):
        mlformats.open(p)
    p.write_bytes(b"hello world")
    with pytest.raises(mlformats.FormatError, match="not a file of any format"):
        mlformats.inspect(p)
    assert issubclass(mlformats.FormatError, ValueError)
    # the whole chain of the library's message, with the path first
    data = (TESTDATA / "cvm" / "two_entry.params").read_bytes()
    p.write_bytes(data[:-3])
    with pytest.raises(mlformats.FormatError) as e:
        mlformats.load(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: ") and len(msg) > len(str(p)) + 20
    with mlformats.open(TESTDATA / "cvm" / "two_entry.params") as f:
        with pytest.raises(KeyError):
            f.get_tensor("nope")
        with pytest.raises(KeyError):
            f["nope"]
        assert "nope" not in f and 1 not in f
    with pytest.raises(KeyError, match="nope"):
        mlformats.load(TESTDATA / "cvm" / "two_entry.params", names=["w", "nope"])
    with pytest.raises(ValueError, match="unknown format"):
        mlformats.open(TESTDATA / "cvm" / "two_entry.params", format="no-such-format")
    # a file read as another format than its own
    with pytest.raises(mlformats.FormatError):
        mlformats.open(TESTDATA / "cvm" / "two_entry.params", format="tsm")


def test_unsupported_dtypes_are_named(tmp):
    # TenniS void/complex32-like data has no numpy dtype; the exchange of
    # opaque bytes follows the library (unsigned integers)
    with pytest.raises(TypeError, match="has no mlformats dtype"):
        mlformats.save(tmp / "x.npz", {"t": np.array(["ab"], dtype="S2")})
    with pytest.raises(TypeError, match="has no mlformats dtype"):
        mlformats.save(tmp / "x.npz", {"t": np.zeros(2, dtype="datetime64[s]")})


# ---- crafted files (testdata/hostile): bounded work, a catchable error

HOSTILE = TESTDATA / "hostile"


def test_a_decompression_bomb_raises_a_catchable_error():
    # 8 members of 32 MiB of zeros deflated into 262 KB: past the default
    # 100:1 and the 64 MiB floor
    bomb = HOSTILE / "zeros_compressed.npz"
    # names, shapes and metadata come from the headers: nothing is inflated
    # until a tensor is asked for, and that is refused
    with mlformats.open(bomb) as f:
        assert sorted(f.keys()) == [f"w{i}" for i in range(8)]
        assert len(f) == 8 and "w3" in f and f.metadata() is None
        with pytest.raises(mlformats.FormatError, match="inflat"):
            f.get_tensor("w0")
        with pytest.raises(mlformats.FormatError, match="inflat"):
            f.get_slice("w1")
        assert f.keys() == sorted(f.keys())
    with pytest.raises(ValueError, match="max-inflate-ratio"):
        mlformats.load(bomb)
    # a file the caller trusts reads, with the keyword of either limit
    with mlformats.open(bomb, max_inflate_ratio=2000) as f:
        assert len(f.keys()) == 8
        assert not f.get_tensor("w7").any()
    assert mlformats.load(bomb, trust=True)["w0"].shape == (2048, 4096)


def test_hard_links_to_one_dataset_are_one_tensor():
    # h5py lists each object once (visititems): so does mlformats
    with mlformats.open(HOSTILE / "links.h5") as f:
        names = f.keys()
    assert len(names) == len(set(names))


def test_every_crafted_file_reads_or_raises_format_error():
    files = [p for p in sorted(HOSTILE.iterdir()) if p.suffix in {".h5", ".npz", ".nnp"}]
    assert files
    for p in files:
        assert outcome(p) in ("ok", "refused"), p


def test_the_crafted_files_stay_within_1_gib_of_address_space():
    # what a server that lists uploaded models runs, under RLIMIT_AS: each
    # call ends with a result or FormatError, never a killed interpreter
    import subprocess
    import sys

    code = f"""
import resource
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
import pathlib, mlformats
outcomes = []
for p in sorted(pathlib.Path({str(HOSTILE)!r}).iterdir()):
    if p.suffix not in ('.h5', '.npz', '.nnp'):
        continue
    for call in (mlformats.inspect, mlformats.load, mlformats.stats):
        try:
            call(p)
            outcomes.append('ok')
        except mlformats.FormatError:
            outcomes.append('refused')
print(outcomes.count('ok'), outcomes.count('refused'))
"""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
    )
    assert r.returncode == 0, r.stderr
    ok, refused = map(int, r.stdout.split())
    assert ok > 0 and refused > 0, r.stdout


def test_a_tensor_is_read_alone_without_decoding_the_others(tmp_path):
    # an .npz whose second member's deflate stream is damaged past its npy
    # header: the headers read, the first tensor reads by itself (nothing
    # else is inflated for it), the damaged one raises, and reading the
    # whole file refuses it
    import io
    import struct
    import zipfile

    rng = np.random.default_rng(0)
    buf = io.BytesIO()
    np.savez_compressed(buf, a=np.arange(6, dtype=np.float32).reshape(2, 3),
                        b=rng.standard_normal(4000).astype(np.float32))
    data = bytearray(buf.getvalue())
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("b.npy")
    h = info.header_offset
    n, e = struct.unpack("<HH", data[h + 26:h + 30])
    start = h + 30 + n + e
    assert info.compress_size > 9000
    for i in range(start + 8000, start + 8100):
        data[i] ^= 0x5A
    p = tmp_path / "half_damaged.npz"
    p.write_bytes(bytes(data))
    with mlformats.open(p) as f:
        assert f.keys() == ["a", "b"]
        a = f.get_tensor("a")
        assert a.tolist() == [[0, 1, 2], [3, 4, 5]] and a.dtype == np.float32
        with pytest.raises(mlformats.FormatError, match='"b"'):
            f.get_tensor("b")
        # the first tensor again: still read alone
        assert f["a"].sum() == 15
    with pytest.raises(mlformats.FormatError):
        mlformats.load(p)
