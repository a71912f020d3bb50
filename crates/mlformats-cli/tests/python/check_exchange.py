"""Check that Python's own readers load what `mlformats convert` writes.

For every golden file with tensors under TESTDATA, converts it with the
`mlformats` binary to `.safetensors` and `.npz`, loads them with
`safetensors.numpy.load_file` and `numpy.load`, and checks that

- both hold the same names as the source (`inspect --json`), in any order;
- every array has the source's shape, and its bytes hash to the source's
  `sha256` (the contract hashes the stored bytes: row-major, or column-major
  for primitiv, which the converter transposes to row-major) whenever the
  dtype is unchanged; a dtype the target lacks (bf16 and 8-bit floats in npz,
  some 8-bit floats in safetensors, characters) must hold the same values;
- safetensors and npz hold identical values.

CI runs the Rust side (crates/mlformats-cli/tests/tools.rs checks the same
files with the Rust readers of those formats); this script is the check
against the real Python libraries. Usage:

    python3 -m venv .venv && .venv/bin/pip install numpy safetensors ml_dtypes
    cargo build --release
    .venv/bin/python crates/mlformats-cli/tests/python/check_exchange.py \
        target/release/mlformats testdata /tmp/exchange-check
"""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
from safetensors.numpy import load_file

try:  # registers bfloat16 and the 8-bit floats with numpy, for safetensors' BF16/F8
    import ml_dtypes  # noqa: F401
except ImportError:
    pass

EXTS = (".params", ".data", ".nnp", ".h5", ".protobuf", ".nntxt", ".tsm")


def load_safetensors(path):
    """safetensors.numpy.load_file; numpy's loader there knows no 8-bit
    float, so files holding F8_* tensors are read from their header and
    bytes with ml_dtypes' types instead (what torch would give)."""
    try:
        return load_file(path)
    except (AttributeError, TypeError):
        import ml_dtypes
        f8 = {"F8_E4M3": ml_dtypes.float8_e4m3fn, "F8_E5M2": ml_dtypes.float8_e5m2,
              "F8_E8M0": ml_dtypes.float8_e8m0fnu, "F8_E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
              "F8_E5M2FNUZ": ml_dtypes.float8_e5m2fnuz, "BF16": ml_dtypes.bfloat16}
        plain = {"BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "U16": np.uint16,
                 "F16": np.float16, "I32": np.int32, "U32": np.uint32, "F32": np.float32,
                 "F64": np.float64, "I64": np.int64, "U64": np.uint64, "C64": np.complex64}
        with open(path, "rb") as fh:
            data = fh.read()
        n = int.from_bytes(data[:8], "little")
        header = json.loads(data[8:8 + n])
        out = {}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            start, end = info["data_offsets"]
            dt = np.dtype(f8.get(info["dtype"]) or plain[info["dtype"]])
            out[name] = np.frombuffer(data[8 + n + start:8 + n + end], dtype=dt).reshape(info["shape"])
        return out


def inspect(binary, path):
    r = subprocess.run([binary, "inspect", "--json", path], capture_output=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


def main(binary, testdata, outdir):
    os.makedirs(outdir, exist_ok=True)
    checked = problems = 0
    for root, _, files in sorted(os.walk(testdata)):
        for f in sorted(files):
            if not f.endswith(EXTS) or "fuzz" in root:
                continue
            src = os.path.join(root, f)
            doc = inspect(binary, src)
            if not doc or not doc["tensors"]:
                continue
            expected = {t["name"]: t for t in doc["tensors"]}
            loaded = {}
            for ext in ("safetensors", "npz"):
                out = os.path.join(outdir, f + "." + ext)
                r = subprocess.run([binary, "convert", "--quiet", src, out], capture_output=True)
                if r.returncode != 0:
                    print("FAIL convert %s -> %s: %s" % (src, ext, r.stderr.decode().strip()))
                    problems += 1
                    continue
                if ext == "safetensors":
                    arrays = load_safetensors(out)
                else:
                    with np.load(out) as z:
                        arrays = {k: z[k] for k in z.files}
                loaded[ext] = arrays
                if set(arrays) != set(expected):
                    print("FAIL %s %s: names %s vs %s" % (src, ext, sorted(arrays), sorted(expected)))
                    problems += 1
                    continue
                for name, a in arrays.items():
                    e = expected[name]
                    # primitiv: a batch above 1 is the slowest axis of the data
                    want = e["shape"] + ([e["batch"]] if e.get("batch", 1) > 1 else [])
                    if list(a.shape) != want:
                        print("FAIL %s %s %s: shape %s vs %s" % (src, ext, name, a.shape, want))
                        problems += 1
                        continue
                    order = "F" if e.get("order") == "column-major" else "C"
                    raw = np.ascontiguousarray(a).tobytes(order=order)
                    same_dtype = a.dtype.itemsize * a.size == len(raw) and e["dtype"] in (
                        a.dtype.name.replace("float", "f").replace("uint", "u").replace("int", "i"),
                        "bool" if a.dtype == np.bool_ else "-",
                    )
                    if same_dtype and hashlib.sha256(raw).hexdigest() != e["sha256"]:
                        print("FAIL %s %s %s: sha256 differs from the source" % (src, ext, name))
                        problems += 1
                    checked += 1
            if len(loaded) == 2:
                st, nz = loaded["safetensors"], loaded["npz"]
                for name in st:
                    a, b = st[name], nz.get(name)
                    if b is None:
                        continue
                    if a.dtype.kind == "f" or b.dtype.kind == "f":
                        ok = np.array_equal(a.astype(np.float64), b.astype(np.float64), equal_nan=True)
                    else:
                        ok = a.tobytes() == b.tobytes()
                    if not ok:
                        print("FAIL %s %s: safetensors and npz values differ" % (src, name))
                        problems += 1
    print("%d passed, %d failed" % (checked, problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
