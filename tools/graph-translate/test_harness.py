#!/usr/bin/env python3
"""Offline checks of the harness itself (no runtime needed; numpy for the comparison part):
the driver survives a worker that segfaults or hangs, and the output comparison flags what
it must. usage: python3 test_harness.py"""

import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import batch_common as bc  # noqa: E402

WORKER = """
import ctypes, sys, time
sys.path.insert(0, {here!r})
import batch_common as bc
jobs = {jobs!r}
def run(job):
    if job["id"] == "segv":
        ctypes.string_at(0)
    if job["id"] == "hang":
        time.sleep(60)
    if job["id"] == "raise":
        raise ValueError("bad model")
    return {{"echo": job["id"]}}
bc.worker_loop(jobs, {start}, {progress!r}, run)
"""


def test_driver():
    ids = ["a", "segv", "b", "hang", "raise", "c"]
    jobs = [{"id": i} for i in ids]
    with tempfile.TemporaryDirectory() as tmp:
        progress = os.path.join(tmp, "progress.jsonl")

        def spawn(start):
            code = WORKER.format(here=HERE, jobs=jobs, start=start, progress=progress)
            return bc.popen_worker([sys.executable, "-c", code], os.path.join(tmp, "err"))

        res = bc.drive(jobs, spawn, progress, job_timeout=2.0)
    got = {r["id"]: r["status"] for r in res}
    want = {"a": "ok", "segv": "crash", "b": "ok", "hang": "timeout", "raise": "error", "c": "ok"}
    assert got == want, got
    assert [r["id"] for r in res] == ids
    assert res[0]["echo"] == "a" and "signal 11" in res[1]["error"], res[:2]
    assert "bad model" in res[4]["error"], res[4]


def test_compare():
    try:
        import numpy as np
    except ImportError:
        print("numpy missing: comparison checks skipped")
        return
    import onnx_conformance as oc

    e = {"y": np.array([1.0, 2.0, np.nan, np.inf], np.float32)}
    same = {"y": e["y"].copy()}
    assert oc.compare(np, same, e, 1e-4, 1e-4)[0] == "pass"
    off = {"y": np.array([1.0, 2.001, np.nan, np.inf], np.float32)}
    assert oc.compare(np, off, e, 1e-4, 1e-4)[0] == "wrong"
    nan = {"y": np.array([1.0, 2.0, 0.0, np.inf], np.float32)}
    assert oc.compare(np, nan, e, 1e-4, 1e-4)[0] == "wrong"
    short = {"y": np.array([1.0, 2.0], np.float32)}
    assert oc.compare(np, short, e, 1e-4, 1e-4)[0] == "wrong"
    by_position = {"out_0": e["y"].copy()}
    assert oc.compare(np, by_position, e, 1e-4, 1e-4)[0] == "pass"
    assert oc.compare(np, {}, e, 1e-4, 1e-4)[0] == "wrong"


if __name__ == "__main__":
    test_driver()
    test_compare()
    print("harness checks passed")
