"""Shared pieces of the runtime harness: the batch job file and the crash-safe driver.

A batch is a JSON file: either a list of jobs or {"jobs": [...]}. A job is
    {"id": "name", "model": "m.nnp|m.tsm", "inputs": "in.npz", "outputs": "out.npz",
     optional "input_names": [...], "batch_size": N, "executor": "name"}
Paths are relative to the batch file's folder unless absolute.

The driver starts a worker process that runs the jobs in order and appends one JSON
line per event to a progress file ({"start": i} before job i, {"done": i, ...} after).
When the worker dies (a segfault in the runtime) or a job exceeds its timeout, the job
in flight is recorded as "crash"/"timeout" and a new worker resumes after it: one bad
model never ends the batch. Kept compatible with Python 3.9 (the nnabla chroot).
"""

import json
import os
import signal
import subprocess
import time


def load_jobs(path):
    """Jobs of a batch file with absolute paths."""
    with open(path) as f:
        data = json.load(f)
    jobs = data["jobs"] if isinstance(data, dict) else data
    base = os.path.dirname(os.path.abspath(path))
    out = []
    for i, job in enumerate(jobs):
        job = dict(job)
        job.setdefault("id", str(i))
        for key in ("model", "inputs", "outputs"):
            if key not in job:
                raise SystemExit("job %r has no %r" % (job["id"], key))
            job[key] = os.path.normpath(os.path.join(base, job[key]))
        out.append(job)
    return out


def read_inputs(np, path):
    """Arrays of an inputs .npz in stored order; an "in/" prefix is dropped
    (the layout of testdata/onnx/*.io.npz), "out/" entries are skipped."""
    arrays = []
    with np.load(path, allow_pickle=False) as z:
        keys = list(z.keys())
        if any(k.startswith("in/") for k in keys):
            keys = [k for k in keys if k.startswith("in/")]
        for k in keys:
            name = k[3:] if k.startswith("in/") else k
            arrays.append((name, z[k]))
    return arrays


def order_inputs(arrays, wanted):
    """Pairs (name, array) in the order of `wanted` names: by name when every wanted
    name is present, else by position when the counts agree."""
    by_name = dict(arrays)
    if all(w in by_name for w in wanted):
        return [(w, by_name[w]) for w in wanted], "by name"
    if len(arrays) == len(wanted):
        return list(arrays), "by position"
    raise RuntimeError(
        "model wants %d inputs %s, the .npz holds %d %s"
        % (len(wanted), wanted, len(arrays), [n for n, _ in arrays])
    )


def worker_loop(jobs, start, progress_path, run_one):
    """Worker side: run jobs[start:], reporting to the progress file."""
    import traceback

    with open(progress_path, "a") as prog:
        for i in range(start, len(jobs)):
            prog.write(json.dumps({"start": i}) + "\n")
            prog.flush()
            t0 = time.time()
            try:
                info = run_one(jobs[i]) or {}
                rec = {"done": i, "status": "ok"}
                rec.update(info)
            except Exception as e:  # one job's failure is that job's result
                rec = {
                    "done": i,
                    "status": "error",
                    "error": "%s: %s" % (type(e).__name__, e),
                    "traceback": traceback.format_exc()[-1500:],
                }
            rec["seconds"] = round(time.time() - t0, 3)
            prog.write(json.dumps(rec) + "\n")
            prog.flush()


class _Progress:
    """Reads the progress file incrementally: only complete new lines."""

    def __init__(self, path):
        self.path = path
        self.pos = 0

    def new_events(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path, "rb") as f:
            f.seek(self.pos)
            data = f.read()
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self.pos += end + 1
        events = []
        for line in data[: end + 1].splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                pass  # a line cut short by a crash
        return events


def drive(jobs, spawn, progress_path, job_timeout=120.0, startup_timeout=600.0, log=None):
    """Host side: run every job through workers made by spawn(start) -> Popen
    (made by popen_worker, so a timeout can end its whole process group).
    Returns one result dict per job, in job order."""
    results = [None] * len(jobs)
    start = 0
    while start < len(jobs):
        if os.path.exists(progress_path):
            os.remove(progress_path)
        proc = spawn(start)
        began = time.time()
        current = None
        current_t = None
        seen = 0
        killed = None
        progress = _Progress(progress_path)
        while True:
            rc = proc.poll()
            events = progress.new_events()
            seen += len(events)
            for ev in events:
                if "start" in ev:
                    current, current_t = ev["start"], time.time()
                elif "done" in ev:
                    i = ev.pop("done")
                    ev["id"] = jobs[i]["id"]
                    results[i] = ev
                    current = None
                    if log:
                        log(i, ev)
            if rc is not None:
                break
            now = time.time()
            if current is not None and now - current_t > job_timeout:
                killed = "timeout"
            elif current is None and seen == 0 and now - began > startup_timeout:
                killed = "startup timeout"
            if killed:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
                break
            time.sleep(0.02)
        err = _tail(getattr(proc, "err_path", None))
        if current is not None:
            status = "timeout" if killed == "timeout" else "crash"
            rc = proc.returncode
            what = ("signal %d" % -rc) if rc is not None and rc < 0 else "exit %s" % rc
            results[current] = {
                "id": jobs[current]["id"],
                "status": status,
                "error": "worker %s during this job (%s)" % (status, what),
                "stderr": err,
            }
            if log:
                log(current, results[current])
            start = current + 1
        else:
            missing = [i for i in range(start, len(jobs)) if results[i] is None]
            if not missing:
                break
            if seen == 0:
                raise SystemExit(
                    "worker failed before running a job (%s, exit %s): %s"
                    % (killed or "ended", proc.returncode, err)
                )
            start = missing[0]
    return results


def popen_worker(cmd, err_path, env=None):
    """Start a worker in its own session; its stderr goes to err_path (a pipe could
    fill up with a runtime's logging and block the worker)."""
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True, env=env
        )
    proc.err_path = err_path
    return proc


def _tail(path, n=1500):
    if not path or not os.path.exists(path):
        return ""
    with open(path, "rb") as f:
        f.seek(0, 2)
        f.seek(max(0, f.tell() - n))
        return f.read().decode(errors="replace")


def remove_run_dir(work, names):
    """Remove a private run folder: the named files, then the (empty) folder."""
    for name in names:
        p = os.path.join(work, name)
        if os.path.exists(p):
            os.remove(p)
    try:
        os.rmdir(work)
    except OSError:
        pass


def summarize(results):
    counts = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return counts
