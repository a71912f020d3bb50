#!/usr/bin/env python3
"""Run TenniS modules (.tsm) in the real TenniS C++ runtime through its C API (ctypes).

    run_tennis.py [--lib PATH] [--timeout S] [--results R.json] BATCH.json

PATH is the TenniS shared library (libtennis.so), default $TENNIS_LIB; this
script builds nothing. Needs numpy. The batch format is batch_common.py's. For
each job: ts_Module_Load (binary), ts_Workbench_Load on device cpu:0 (one
computing thread), the .npz arrays fed with ts_Workbench_input_by_name when the
job gives "input_names", else ts_Workbench_input in the module's input order
(the order of the .npz members), ts_Workbench_run, and every output
(ts_Workbench_output, in the module's output order) written to job["outputs"]
as out_0, out_1, ... (a packed output becomes out_I.J per field). Each worker
process runs many jobs; a crash or hang in TenniS ends only its job (see
batch_common.drive). Results go to R.json (default BATCH.results.json).
"""

import argparse
import ctypes
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import batch_common as bc  # noqa: E402

# ts_DTYPE codes (TenniS include/core/dtype.h) -> numpy type names
DTYPES = {
    1: "int8",
    2: "uint8",
    3: "int16",
    4: "uint16",
    5: "int32",
    6: "uint32",
    7: "int64",
    8: "uint64",
    9: "float16",
    10: "float32",
    11: "float64",
    13: "uint8",
    21: "bool",
}
CODES = {
    "int8": 1,
    "uint8": 2,
    "int16": 3,
    "uint16": 4,
    "int32": 5,
    "uint32": 6,
    "int64": 7,
    "uint64": 8,
    "float16": 9,
    "float32": 10,
    "float64": 11,
    "bool": 21,
}


class Device(ctypes.Structure):
    _fields_ = [("type", ctypes.c_char_p), ("id", ctypes.c_int32)]


def open_lib(path):
    lib = ctypes.CDLL(path)
    P, N, B = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32
    sigs = {
        "ts_last_error_message": (ctypes.c_char_p, []),
        "ts_Module_Load": (P, [ctypes.c_char_p, N]),
        "ts_free_Module": (None, [P]),
        "ts_Workbench_Load": (P, [P, ctypes.POINTER(Device)]),
        "ts_free_Workbench": (None, [P]),
        "ts_Workbench_set_computing_thread_number": (B, [P, N]),
        "ts_Workbench_input_count": (N, [P]),
        "ts_Workbench_output_count": (N, [P]),
        "ts_Workbench_input": (B, [P, N, P]),
        "ts_Workbench_input_by_name": (B, [P, ctypes.c_char_p, P]),
        "ts_Workbench_run": (B, [P]),
        "ts_Workbench_output": (B, [P, N, P]),
        "ts_new_Tensor": (P, [ctypes.POINTER(ctypes.c_int32), N, N, P]),
        "ts_free_Tensor": (None, [P]),
        "ts_Tensor_shape": (ctypes.POINTER(ctypes.c_int32), [P]),
        "ts_Tensor_shape_size": (N, [P]),
        "ts_Tensor_dtype": (N, [P]),
        "ts_Tensor_data": (P, [P]),
        "ts_Tensor_sync_cpu": (B, [P]),
        "ts_Tensor_packed": (B, [P]),
        "ts_Tensor_fields_count": (N, [P]),
        "ts_Tensor_field": (P, [P, N]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


def fail(lib, what):
    msg = lib.ts_last_error_message()
    raise RuntimeError("%s failed: %s" % (what, msg.decode(errors="replace") if msg else "?"))


def to_tensor(lib, np, a):
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        # TenniS's C API builds no BOOLEAN tensors (ts_new_Tensor: "Not
        # support dtype: 21"); a boolean input is fed as uint8 0/1.
        a = a.astype(np.uint8)
    if a.dtype.name not in CODES:
        raise RuntimeError("TenniS has no type for numpy %s" % a.dtype)
    shape = (ctypes.c_int32 * max(a.ndim, 1))(*a.shape)
    t = lib.ts_new_Tensor(shape, a.ndim, CODES[a.dtype.name], a.ctypes.data_as(ctypes.c_void_p))
    if not t:
        fail(lib, "ts_new_Tensor")
    return t


def from_tensor(lib, np, t):
    if not lib.ts_Tensor_sync_cpu(t):
        fail(lib, "ts_Tensor_sync_cpu")
    code = lib.ts_Tensor_dtype(t)
    if code not in DTYPES:
        raise RuntimeError("output of TenniS type code %d" % code)
    n = lib.ts_Tensor_shape_size(t)
    sp = lib.ts_Tensor_shape(t)
    shape = tuple(sp[i] for i in range(n))
    dt = np.dtype(DTYPES[code])
    count = 1
    for d in shape:
        count *= d
    if count == 0:
        return np.zeros(shape, dt)
    ptr = lib.ts_Tensor_data(t)
    buf = (ctypes.c_char * (count * dt.itemsize)).from_address(ptr)
    return np.frombuffer(bytes(buf), dt).reshape(shape)


def make_runner(lib_path):
    import numpy as np

    lib = open_lib(lib_path)

    def run_job(job):
        arrays = bc.read_inputs(np, job["inputs"])
        module = lib.ts_Module_Load(job["model"].encode(), 0)
        if not module:
            fail(lib, "ts_Module_Load")
        dev = Device(b"cpu", 0)
        wb = lib.ts_Workbench_Load(module, ctypes.byref(dev))
        if not wb:
            lib.ts_free_Module(module)
            fail(lib, "ts_Workbench_Load")
        try:
            lib.ts_Workbench_set_computing_thread_number(wb, 1)
            n_in = lib.ts_Workbench_input_count(wb)
            names = job.get("input_names")
            if names:
                ordered, how = bc.order_inputs(arrays, names)
            elif len(arrays) == n_in:
                ordered, how = arrays, "by position"
            else:
                raise RuntimeError("module has %d inputs, the .npz holds %d" % (n_in, len(arrays)))
            for i, (name, a) in enumerate(ordered):
                t = to_tensor(lib, np, a)
                ok = (
                    lib.ts_Workbench_input_by_name(wb, name.encode(), t)
                    if names
                    else lib.ts_Workbench_input(wb, i, t)
                )
                lib.ts_free_Tensor(t)
                if not ok:
                    fail(lib, "ts_Workbench_input %s" % name)
            if not lib.ts_Workbench_run(wb):
                fail(lib, "ts_Workbench_run")
            result = {}
            for i in range(lib.ts_Workbench_output_count(wb)):
                t = lib.ts_new_Tensor(None, 0, 0, None)
                try:
                    if not lib.ts_Workbench_output(wb, i, t):
                        fail(lib, "ts_Workbench_output %d" % i)
                    if lib.ts_Tensor_packed(t):
                        for j in range(lib.ts_Tensor_fields_count(t)):
                            f = lib.ts_Tensor_field(t, j)
                            result["out_%d.%d" % (i, j)] = from_tensor(lib, np, f)
                            lib.ts_free_Tensor(f)
                    else:
                        result["out_%d" % i] = from_tensor(lib, np, t)
                finally:
                    lib.ts_free_Tensor(t)
        finally:
            lib.ts_free_Workbench(wb)
            lib.ts_free_Module(module)
        tmp = job["outputs"] + ".tmp.npz"
        np.savez(tmp, **result)
        os.replace(tmp, job["outputs"])
        return {
            "inputs_fed": how,
            "outputs": list(result),
            "shapes": [list(v.shape) for v in result.values()],
            "dtypes": [v.dtype.name for v in result.values()],
        }

    return run_job


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        lib_path, jobs_path, start, progress = sys.argv[2:6]
        with open(jobs_path) as f:
            jobs = json.load(f)
        return bc.worker_loop(jobs, int(start), progress, make_runner(lib_path))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("batch")
    ap.add_argument("--lib", default=os.environ.get("TENNIS_LIB"))
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per job")
    ap.add_argument("--results")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()
    if not args.lib or not os.path.exists(args.lib):
        raise SystemExit("no TenniS library: give --lib PATH or set TENNIS_LIB")
    jobs = bc.load_jobs(args.batch)
    for job in jobs:
        os.makedirs(os.path.dirname(job["outputs"]) or ".", exist_ok=True)
    results_path = args.results or os.path.splitext(args.batch)[0] + ".results.json"
    work = tempfile.mkdtemp(prefix="mlf-tennis-")
    jobs_file = os.path.join(work, "jobs.json")
    with open(jobs_file, "w") as f:
        json.dump(jobs, f)
    progress = os.path.join(work, "progress.jsonl")

    def spawn(start):
        cmd = [
            sys.executable,
            os.path.abspath(__file__),
            "--worker",
            os.path.abspath(args.lib),
            jobs_file,
            str(start),
            progress,
        ]
        env = dict(os.environ, OMP_NUM_THREADS="1")
        return bc.popen_worker(cmd, os.path.join(work, "stderr.txt"), env=env)

    def log(i, rec):
        if not args.quiet and rec["status"] != "ok":
            print("%s: %s %s" % (rec["id"], rec["status"], rec.get("error", "")), file=sys.stderr)

    try:
        results = bc.drive(jobs, spawn, progress, job_timeout=args.timeout, log=log)
    finally:
        bc.remove_run_dir(work, ["jobs.json", "progress.jsonl", "stderr.txt"])
    with open(results_path, "w") as f:
        json.dump(results, f, indent=1)
    print(
        json.dumps({"batch": args.batch, "results": results_path, "counts": bc.summarize(results)})
    )


if __name__ == "__main__":
    main()
