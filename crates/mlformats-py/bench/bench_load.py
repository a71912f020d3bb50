"""Benchmark: mlformats.load against TVM's, nnabla's and safetensors' own loaders.

Not a test. Builds a .params file (default 512 MiB of float32 tensors) with
mlformats.save and a .safetensors file of the same tensors, and an NNabla
.nnp (default 256 MiB: 64 float32 [1024, 1024] tensors, parameters in
parameter.h5, written by mlformats.save; and the same tensors as an .nnp
with parameter.protobuf), then times, in one run, each loader on the same
files (best of --repeat runs, files in the page cache):

- mlformats.load(.params): lazy, arrays share the memory map where aligned;
- mlformats.load(.params) + touching every page of every array (what a
  loader that reads everything pays; the fair comparison with TVM);
- tvm.runtime.load_param_dict_from_file (and + .numpy() of each tensor),
  run by a Python that has TVM (--tvm-python or MLFORMATS_TVM_PYTHON; this
  interpreter when it imports tvm), timed inside that process;
- mlformats.load(.safetensors) (+ touch) and safetensors.numpy.load_file
  (when the safetensors package is installed);
- mlformats.load(.nnp) (+ touch, + copies) and the real nnabla's
  nnabla.load_parameters(.nnp) and nnabla.utils.load.load([.nnp]), each
  followed by taking every parameter as numpy (p.d), run by the Python of a
  chroot that has nnabla (--nnabla-chroot or MLFORMATS_NNABLA_CHROOT; the
  .nnp files are written under its /tmp), timed inside that process. Needs
  root (chroot). Without a chroot the nnabla rows are skipped.

Ratios are the other loader's time over mlformats' in the same run
(above 1: mlformats is faster).

    python bench/bench_load.py [--size-mib 512] [--tensors 64] [--repeat 3]
                               [--dir DIR] [--tvm-python PYTHON]
                               [--nnp-size-mib 256] [--nnp-tensors 64]
                               [--nnabla-chroot DIR] [--nnabla-python PATH]
                               [--no-nnp-protobuf]
"""

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

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


# Run inside the chroot: argv = repeat, then the .nnp paths (as seen in the
# chroot). Prints one JSON line: nnabla's version and, per path, the best
# time of load_parameters, of load_parameters + p.d of every parameter, and
# of nnabla.utils.load.load + p.d of every parameter.
NNABLA_SCRIPT = r"""
import json, sys, time
import nnabla as nn
from nnabla.utils import load as nnload
repeat, paths = int(sys.argv[1]), sys.argv[2:]
out = {"version": nn.__version__, "files": {}}
for path in paths:
    lp = lp_d = full_d = float("inf")
    count = 0
    for _ in range(repeat):
        nn.clear_parameters()
        t = time.perf_counter()
        nn.load_parameters(path)
        t1 = time.perf_counter()
        arrays = {k: v.d for k, v in nn.get_parameters(grad_only=False).items()}
        t2 = time.perf_counter()
        lp, lp_d = min(lp, t1 - t), min(lp_d, t2 - t)
        count = len(arrays)
        del arrays
    for _ in range(repeat):
        nn.clear_parameters()
        t = time.perf_counter()
        info = nnload.load([path], prepare_data_iterator=False)
        arrays = {k: v.d for k, v in nn.get_parameters(grad_only=False).items()}
        full_d = min(full_d, time.perf_counter() - t)
        del arrays, info
    nn.clear_parameters()
    out["files"][path] = {"load_parameters": lp, "load_parameters_d": lp_d, "load_d": full_d, "parameters": count}
print("NNABLA_RESULT " + json.dumps(out))
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


def write_nnp_protobuf(h5_nnp, protobuf_params, out):
    """An .nnp like h5_nnp (written by mlformats.save) with its parameters as
    parameter.protobuf (written by mlformats.save), members stored."""
    with zipfile.ZipFile(h5_nnp) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            if info.filename == "parameter.h5":
                dst.write(protobuf_params, "parameter.protobuf")
            else:
                dst.writestr(info.filename, src.read(info.filename))


def run_nnabla(chroot, python, paths, repeat):
    """Times nnabla's loaders on paths (host paths under chroot) in the chroot."""
    root = os.path.realpath(chroot)
    inside = ["/" + os.path.relpath(os.path.realpath(p), root) for p in paths]
    cmd = ["chroot", root, "env", "-i", "PATH=/usr/bin:/bin", "HOME=/root", "LC_ALL=C.UTF-8", python, "-c", NNABLA_SCRIPT, str(repeat), *inside]
    done = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("NNABLA_RESULT ")]
    if done.returncode != 0 or not lines:
        sys.exit(f"nnabla in {chroot} failed (status {done.returncode}):\n{done.stdout}{done.stderr}")
    out = json.loads(lines[-1][len("NNABLA_RESULT ") :])
    return out["version"], [out["files"][p] for p in inside]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mib", type=int, default=512)
    ap.add_argument("--tensors", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None, help="where to write the files (default: a temporary folder)")
    ap.add_argument("--tvm-python", default=os.environ.get("MLFORMATS_TVM_PYTHON"))
    ap.add_argument("--nnp-size-mib", type=int, default=256)
    ap.add_argument("--nnp-tensors", type=int, default=64)
    ap.add_argument(
        "--nnabla-chroot",
        default=os.environ.get("MLFORMATS_NNABLA_CHROOT"),
        help="a chroot whose Python has nnabla (needs root); the .nnp files go under its /tmp",
    )
    ap.add_argument("--nnabla-python", default="/opt/nnenv/bin/python", help="nnabla's Python, as a path inside the chroot")
    ap.add_argument("--no-nnp-protobuf", action="store_true", help="skip the .nnp with parameter.protobuf (nnabla takes ~10 s per load of it)")
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

    nnp_dir = workdir
    if args.nnabla_chroot:
        chroot = os.path.realpath(args.nnabla_chroot)
        if not os.path.isfile(os.path.join(chroot, args.nnabla_python.lstrip("/"))):
            sys.exit(f"--nnabla-chroot {args.nnabla_chroot}: no {args.nnabla_python} in it")
        if os.path.commonpath([chroot, os.path.realpath(workdir)]) != chroot:
            nnp_dir = tempfile.mkdtemp(prefix="mlformats-bench-", dir=os.path.join(chroot, "tmp"))
            atexit.register(shutil.rmtree, nnp_dir, True)  # also when a step fails
    nnp_h5 = os.path.join(nnp_dir, "bench_h5.nnp")
    nnp_pb = os.path.join(nnp_dir, "bench_pb.nnp")
    nnp_size = args.nnp_size_mib * 2**20
    nnp_per = nnp_size // args.nnp_tensors // 4 // 1024 * 1024
    nnp_tensors = {
        f"l{i:03d}/affine/W": rng.standard_normal(nnp_per, dtype=np.float32).reshape(-1, 1024) for i in range(args.nnp_tensors)
    }
    nnp_shape = next(iter(nnp_tensors.values())).shape
    nnp_bytes = sum(a.nbytes for a in nnp_tensors.values())
    t = time.perf_counter()
    mlformats.save(nnp_h5, nnp_tensors)
    save_nnp = time.perf_counter() - t
    nnp_files = [("parameter.h5", nnp_h5)]
    if not args.no_nnp_protobuf:
        pb_params = os.path.join(nnp_dir, "bench_params.protobuf")
        mlformats.save(pb_params, nnp_tensors)
        write_nnp_protobuf(nnp_h5, pb_params, nnp_pb)
        os.remove(pb_params)
        nnp_files.append(("parameter.protobuf", nnp_pb))
    del nnp_tensors
    nnp_gib = nnp_bytes / 2**30
    with zipfile.ZipFile(nnp_h5) as z:
        members = ", ".join(f"{i.filename} ({'stored' if i.compress_type == zipfile.ZIP_STORED else 'compressed'})" for i in z.infolist())
    print(
        f"{args.nnp_tensors} float32 {list(nnp_shape)} tensors, {nnp_bytes / 2**20:.0f} MiB, as .nnp in {nnp_dir};"
        f" save .nnp {save_nnp:.3f} s ({nnp_gib / save_nnp:.2f} GiB/s); members: {members}"
    )

    sample = mlformats.load(params)
    shared = sum(not a.flags.owndata for a in sample.values())
    sample_st = mlformats.load(st)
    shared_st = sum(not a.flags.owndata for a in sample_st.values())
    del sample, sample_st
    print(
        f"zero-copy arrays: .params {shared}/{args.tensors}, .safetensors {shared_st}/{args.tensors}"
        " (a .params file has no padding: whether data is aligned follows from the names and shapes)"
    )
    for label, path in nnp_files:
        sample = mlformats.load(path)
        print(f"zero-copy arrays: .nnp with {label} {sum(not a.flags.owndata for a in sample.values())}/{len(sample)}")
        del sample

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
    st_copy = best_of(r, lambda: {k: np.array(v) for k, v in mlformats.load(st).items()})
    rows += [
        ("mlformats.load(.safetensors)", st_load, None),
        ("mlformats.load(.safetensors) + touch", st_touch, None),
        ("mlformats.load(.safetensors) + np.array copies (owned)", st_copy, None),
    ]
    try:
        import safetensors
        import safetensors.numpy

        hf = best_of(r, lambda: safetensors.numpy.load_file(st))
        rows += [
            (f"safetensors {safetensors.__version__} numpy.load_file", hf, st_touch),
            ("  (same, vs mlformats.load + np.array copies)", hf, st_copy),
        ]
    except ImportError:
        print("safetensors: not installed; skipped")

    nnp_ml = []
    for label, path in nnp_files:
        load = best_of(r, lambda p=path: mlformats.load(p))
        touched = best_of(r, lambda p=path: touch(mlformats.load(p)))
        copied = best_of(r, lambda p=path: {k: np.array(v) for k, v in mlformats.load(p).items()})
        nnp_ml.append((load, touched, copied))
    nn_version, nn_times = None, [None] * len(nnp_files)
    if args.nnabla_chroot:
        nn_version, nn_times = run_nnabla(args.nnabla_chroot, args.nnabla_python, [p for _, p in nnp_files], r)
    else:
        print("nnabla: no --nnabla-chroot (or MLFORMATS_NNABLA_CHROOT) given; nnabla rows skipped")
    for (label, _), (load, touched, copied), times in zip(nnp_files, nnp_ml, nn_times):
        rows += [
            (f"mlformats.load(.nnp, {label})", load, None, nnp_gib),
            (f"mlformats.load(.nnp, {label}) + touch", touched, None, nnp_gib),
            (f"mlformats.load(.nnp, {label}) + np.array copies", copied, None, nnp_gib),
        ]
        if times is None:
            continue
        if times["parameters"] != args.nnp_tensors:
            sys.exit(f"nnabla registered {times['parameters']} parameters from the .nnp with {label}, not {args.nnp_tensors}")
        rows += [
            (f"nnabla {nn_version} load_parameters(.nnp, {label})", times["load_parameters"], touched, nnp_gib),
            (f"nnabla {nn_version} load_parameters(.nnp, {label}) + .d", times["load_parameters_d"], touched, nnp_gib),
            ("  (same, vs mlformats.load + np.array copies)", times["load_parameters_d"], copied, nnp_gib),
            (f"nnabla {nn_version} utils.load.load([.nnp, {label}]) + .d", times["load_d"], touched, nnp_gib),
        ]

    print()
    print(f"{'operation':64} {'seconds':>9} {'GiB/s':>9} {'ratio':>8}")
    for row in rows:
        name, secs, base = row[:3]
        size_gib = row[3] if len(row) > 3 else gib
        ratio = f"{secs / base:.2f}x" if base else "-"
        print(f"{name:64} {secs:9.4f} {size_gib / secs:9.2f} {ratio:>8}")
    print()
    print("ratio: that loader's time over mlformats' (load + touch; or as named) in this run")
    if tvm_python:
        print(f"lazy: mlformats.load(.params) returns {tvm_load / ml_load:.0f}x sooner than TVM's load")
    if not args.dir:
        shutil.rmtree(workdir)


if __name__ == "__main__":
    main()
