"""Shared helpers: the repository's testdata/ goldens and their expectations."""

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

# crates/mlformats-py/tests -> the repository root
REPO = Path(__file__).resolve().parents[3]
TESTDATA = Path(os.environ.get("MLFORMATS_TESTDATA", REPO / "testdata"))

# every format mlformats writes, by extension
WRITABLE = ["safetensors", "npz", "params", "data", "nntxt", "protobuf", "nnp", "h5", "tsm"]

# the inspect contract's dtype names and the numpy dtype names arrays get
NUMPY_NAMES = {
    "bool": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "c64": "complex64",
    "c128": "complex128",
    "bf16": "bfloat16",
    "f8e3m4": "float8_e3m4",
    "f8e4m3": "float8_e4m3",
    "f8e4m3b11fnuz": "float8_e4m3b11fnuz",
    "f8e4m3fn": "float8_e4m3fn",
    "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2": "float8_e5m2",
    "f8e5m2fnuz": "float8_e5m2fnuz",
    "f8e8m0fnu": "float8_e8m0fnu",
    "char8": "bytes8",
    "char32": "str32",
}


def goldens():
    """Every data file of testdata/{cvm,primitiv,nnabla,tennis}/ with its
    expectation: ``name.ext.expected.json`` or ``name.expected.json``."""
    out = []
    for d in ["cvm", "primitiv", "nnabla", "tennis"]:
        for f in sorted((TESTDATA / d).iterdir()):
            if not f.is_file() or f.suffix in (".json", ".md"):
                continue
            for exp in (f.with_name(f.name + ".expected.json"), f.with_name(f.stem + ".expected.json")):
                if exp.exists():
                    out.append((f, json.loads(exp.read_text())))
                    break
            else:
                raise AssertionError(f"no expectation for {f}")
    assert len(out) >= 75, f"only {len(out)} goldens"
    return out


GOLDENS = goldens()


def golden_params():
    return pytest.mark.parametrize(
        "path,expected", GOLDENS, ids=[f"{p.parent.name}/{p.name}" for p, _ in GOLDENS]
    )


def stored_bytes(arr: np.ndarray) -> bytes:
    """The bytes of ``arr`` in its own memory order: a Fortran-ordered array
    (primitiv's column-major data) gives its column-major bytes, as stored."""
    return arr.tobytes(order="A")


def sha256(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal element values (NaN equal to NaN), whatever the dtype and memory
    order: numbers compared as float64 (complex as complex128), characters
    and raw bytes by their bytes in row-major order."""
    if a.size != b.size:
        return False
    if a.dtype.kind in "SU" or b.dtype.kind in "SU":
        return a.tobytes(order="C") == b.tobytes(order="C")
    kind = np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64
    x = np.asarray(a).astype(kind).reshape(-1)
    y = np.asarray(b).astype(kind).reshape(-1)
    return bool(np.array_equal(x, y, equal_nan=True))


@pytest.fixture
def tmp(tmp_path):
    return tmp_path
