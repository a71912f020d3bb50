"""Benchmark: mlformats.load against TVM's and safetensors' own loaders.

Not a test. Builds a .params file (default 512 MiB of float32 tensors) with
mlformats.save and a .safetensors file of the same tensors, then times, in
one run, each loader on the same files (best of --repeat runs, files in the
page cache):

- mlformats.load(.params): lazy, arrays share the memory map where aligned;
- mlformats.load(.params) + touching every page of every array (what a
  loader that reads everything pays; the fair comparison with TVM);
- tvm.runtime.load_param_dict_from_file (and + .numpy() of each tensor),
  run by a Python that has TVM (--tvm-python or MLFORMATS_TVM_PYTHON; this
  interpreter when it imports tvm), timed inside that process;
- mlformats.load(.safetensors) (+ touch) and safetensors.numpy.load_file
  (when the safetensors package is installed).

Ratios are the other loader's time over mlformats' in the same run
(above 1: mlformats is faster).

    python bench/bench_load.py [--size-mib 512] [--tensors 64] [--repeat 3]
                               [--dir DIR] [--tvm-python PYTHON]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import mlformats

TVM_SCRIPT = r"""
import sys, time
import tvm
path, repeat = sys.argv[1], int(sys.argv[2])
best = best_np = float("inf")
for _ in range(repeat):
    t = time.perf_counter()
    d = tvm.runtime.load_param_dict_from_file(path)
    best = min(best, time.perf_counter() - t)
    del d
    t = time.perf_counter()
    d = {k: v.numpy() for k, v in tvm.runtime.load_param_dict_from_file(path).items()}
    best_np = min(best_np, time.perf_counter() - t)
    del d
print(best, best_np, tvm.__version__)
"""


def best_of(repeat, f):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
        del out
    return best


def touch(arrays):
    """Read one byte of every 4 KiB page of every array."""
    total = 0
    for a in arrays.values():
        flat = a.reshape(-1).view(np.uint8) if a.flags.c_contiguous else np.ascontiguousarray(a).view(np.uint8)
        total += int(flat[::4096].sum())
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mib", type=int, default=512)
    ap.add_argument("--tensors", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None, help="where to write the files (default: a temporary folder)")
    ap.add_argument("--tvm-python", default=os.environ.get("MLFORMATS_TVM_PYTHON"))
    args = ap.parse_args()

    workdir = args.dir or tempfile.mkdtemp(prefix="mlformats-bench-")
    os.makedirs(workdir, exist_ok=True)
    params = os.path.join(workdir, "bench.params")
    st = os.path.join(workdir, "bench.safetensors")
    size = args.size_mib * 2**20
    per = size // args.tensors // 4
    rng = np.random.default_rng(0)
    tensors = {f"layer{i:03d}.weight": rng.standard_normal(per, dtype=np.float32).reshape(-1, 256) for i in range(args.tensors)}
    nbytes = sum(a.nbytes for a in tensors.values())
    t = time.perf_counter()
    mlformats.save(params, tensors)
    save_params = time.perf_counter() - t
    t = time.perf_counter()
    mlformats.save(st, tensors)
    save_st = time.perf_counter() - t
    del tensors
    gib = nbytes / 2**30
    print(f"mlformats {mlformats.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}")
    print(f"{args.tensors} float32 tensors, {nbytes / 2**20:.0f} MiB, in {workdir}")
    print(f"save .params {save_params:.3f} s ({gib / save_params:.2f} GiB/s), .safetensors {save_st:.3f} s ({gib / save_st:.2f} GiB/s)")

    sample = mlformats.load(params)
    shared = sum(not a.flags.owndata for a in sample.values())
    sample_st = mlformats.load(st)
    shared_st = sum(not a.flags.owndata for a in sample_st.values())
    del sample, sample_st
    print(
        f"zero-copy arrays: .params {shared}/{args.tensors}, .safetensors {shared_st}/{args.tensors}"
        " (a .params file has no padding: whether data is aligned follows from the names and shapes)"
    )

    rows = []
    r = args.repeat
    ml_load = best_of(r, lambda: mlformats.load(params))
    ml_touch = best_of(r, lambda: touch(mlformats.load(params)))
    ml_view_touch = best_of(r, lambda: touch(mlformats.load(params, copy_unaligned=False)))
    ml_copy = best_of(r, lambda: {k: np.array(v) for k, v in mlformats.load(params).items()})
    rows += [
        ("mlformats.load(.params)", ml_load, None),
        ("mlformats.load(.params) + touch", ml_touch, None),
        ("mlformats.load(.params, copy_unaligned=False) + touch", ml_view_touch, None),
        ("mlformats.load(.params) + np.array copies (owned)", ml_copy, None),
    ]

    tvm_python = args.tvm_python
    if not tvm_python:
        try:
            import tvm  # noqa: F401

            tvm_python = sys.executable
        except ImportError:
            pass
    if tvm_python:
        out = subprocess.run(
            [tvm_python, "-c", TVM_SCRIPT, params, str(r)], capture_output=True, text=True, check=True
        ).stdout.split()
        tvm_load, tvm_np, tvm_version = float(out[0]), float(out[1]), out[2]
        rows += [
            (f"tvm {tvm_version} load_param_dict_from_file", tvm_load, ml_touch),
            (f"tvm {tvm_version} load_param_dict_from_file + .numpy()", tvm_np, ml_touch),
            ("  (same, vs mlformats.load + np.array copies)", tvm_np, ml_copy),
        ]
    else:
        print("tvm: not importable here and no --tvm-python given; skipped")

    st_load = best_of(r, lambda: mlformats.load(st))
    st_touch = best_of(r, lambda: touch(mlformats.load(st)))
    rows += [
        ("mlformats.load(.safetensors)", st_load, None),
        ("mlformats.load(.safetensors) + touch", st_touch, None),
    ]
    try:
        import safetensors
        import safetensors.numpy

        hf = best_of(r, lambda: safetensors.numpy.load_file(st))
        rows.append((f"safetensors {safetensors.__version__} numpy.load_file", hf, st_touch))
    except ImportError:
        print("safetensors: not installed; skipped")

    print()
    print(f"{'operation':58} {'seconds':>9} {'GiB/s':>9} {'ratio':>8}")
    for name, secs, base in rows:
        ratio = f"{secs / base:.2f}x" if base else "-"
        print(f"{name:58} {secs:9.4f} {gib / secs:9.2f} {ratio:>8}")
    print()
    print("ratio: that loader's time over mlformats' (load + touch; or as named) in this run")
    if tvm_python:
        print(f"lazy: mlformats.load(.params) returns {tvm_load / ml_load:.0f}x sooner than TVM's load")
    if not args.dir:
        shutil.rmtree(workdir)


if __name__ == "__main__":
    main()
