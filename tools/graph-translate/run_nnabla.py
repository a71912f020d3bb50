#!/usr/bin/env python3
"""Run NNabla networks (.nnp/.nntxt) in the real nnabla, many per process.

Host side (root; the chroot made by the project's shared nnabla tools):

    run_nnabla.py [--chroot DIR] [--timeout S] [--results R.json] BATCH.json

DIR defaults to $NNABLA_CHROOT; its /opt/nnenv/bin/python holds nnabla 1.39.
The folders the jobs name are bind-mounted into the chroot for the run and
unmounted after. With --in-process the worker runs in this Python (which then
needs nnabla itself). The batch format is batch_common.py's; for each job the
first executor (or job["executor"]) of the network is loaded with
nnabla.utils.load.load (batch size: job["batch_size"], else the first input's
first dimension), its data variables get the .npz inputs (by variable name,
else by position), generators run, every output variable is computed, and the
outputs are written to job["outputs"] as a .npz keyed by output variable
name, in executor order. With job["save_parameters"] (an .h5 path) the
parameters as loaded (from the file, or made by the network's initializers
where it holds none) are saved there too; with job["generated"] (an .npz
path) so are the values the executor's generator variables were given.
Results (status ok/error/crash/timeout per job) go to R.json (default:
BATCH.results.json) and a summary to stdout.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import batch_common as bc  # noqa: E402

CHROOT_PYTHON = "/opt/nnenv/bin/python"


def run_job(job):
    import nnabla as nn
    import numpy as np
    from nnabla.utils import load

    arrays = bc.read_inputs(np, job["inputs"])
    batch = job.get("batch_size")
    if batch is None:
        first = arrays[0][1] if arrays else None
        batch = int(first.shape[0]) if first is not None and first.ndim else 1
    nn.clear_parameters()
    np.random.seed(0)
    info = load.load([job["model"]], prepare_data_iterator=False, batch_size=batch)
    if job.get("save_parameters"):
        # the parameters as loaded: from the file, or made by its initializers
        nn.save_parameters(job["save_parameters"])
    if not info.executors:
        raise RuntimeError("the network file has no executor (no graph to run)")
    name = job.get("executor") or next(iter(info.executors))
    ex = info.executors[name]
    data = list(ex.dataset_assign.keys())
    ordered, how = bc.order_inputs(arrays, job.get("input_names") or [v.name for v in data])
    for v, (_, a) in zip(data, ordered):
        vi = v.variable_instance
        if vi is None:
            continue  # a data variable no function reads: nnabla made no variable for it
        if tuple(vi.shape) != tuple(a.shape):
            vi.reset_shape(a.shape, force=True)
        vi.d = a
    for v, gen in ex.generator_assign.items():
        v.variable_instance.d = gen(v.variable_instance.d.shape)
    if job.get("generated") and ex.generator_assign:
        # what the generators made, so another file can be fed the same values
        gen = {v.name: np.array(v.variable_instance.d) for v in ex.generator_assign}
        np.savez(job["generated"], **gen)
    outs = list(ex.output_assign.keys())
    for v in outs:
        if v.variable_instance is None:
            raise RuntimeError("output variable %r is computed by no function" % v.name)
        v.variable_instance.forward(clear_no_need_grad=False)
    result = {}
    for v in outs:
        result[v.name] = np.array(v.variable_instance.d)
    tmp = job["outputs"] + ".tmp.npz"
    np.savez(tmp, **result)
    os.replace(tmp, job["outputs"])
    return {
        "executor": name,
        "inputs_fed": how,
        "outputs": [v.name for v in outs],
        "shapes": [list(result[v.name].shape) for v in outs],
    }


def worker_main(argv):
    jobs_path, start, progress = argv[0], int(argv[1]), argv[2]
    with open(jobs_path) as f:
        jobs = json.load(f)
    bc.worker_loop(jobs, start, progress, run_job)


def mount_points(jobs):
    """Top-level host folders the jobs (and this script) live in."""
    tops = set()
    for job in jobs:
        for key in ("model", "inputs", "outputs"):
            p = os.path.realpath(job[key])
            tops.add("/" + p.split("/")[1])
    tops.add("/" + os.path.realpath(HERE).split("/")[1])
    return sorted(tops)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("batch")
    ap.add_argument("--chroot", default=os.environ.get("NNABLA_CHROOT"))
    ap.add_argument("--in-process", action="store_true", help="run nnabla in this Python")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per job")
    ap.add_argument("--results")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()
    jobs = bc.load_jobs(args.batch)
    for job in jobs:
        os.makedirs(os.path.dirname(job["outputs"]) or ".", exist_ok=True)
    results_path = args.results or os.path.splitext(args.batch)[0] + ".results.json"

    def log(i, rec):
        if not args.quiet and rec["status"] != "ok":
            print("%s: %s %s" % (rec["id"], rec["status"], rec.get("error", "")), file=sys.stderr)

    if args.in_process:
        work = tempfile.mkdtemp(prefix="mlf-nnabla-")
        jobs_file = os.path.join(work, "jobs.json")
        with open(jobs_file, "w") as f:
            json.dump(jobs, f)
        progress = os.path.join(work, "progress.jsonl")

        def spawn(start):
            cmd = [
                sys.executable,
                os.path.abspath(__file__),
                "--worker",
                jobs_file,
                str(start),
                progress,
            ]
            return bc.popen_worker(cmd, os.path.join(work, "stderr.txt"))

        results = bc.drive(jobs, spawn, progress, job_timeout=args.timeout, log=log)
        bc.remove_run_dir(work, ["jobs.json", "progress.jsonl", "stderr.txt"])
    else:
        results = run_in_chroot(args, jobs, log)
    with open(results_path, "w") as f:
        json.dump(results, f, indent=1)
    print(
        json.dumps({"batch": args.batch, "results": results_path, "counts": bc.summarize(results)})
    )


def run_in_chroot(args, jobs, log):
    if not args.chroot or not os.path.exists(os.path.join(args.chroot, CHROOT_PYTHON.lstrip("/"))):
        raise SystemExit("no nnabla chroot: give --chroot DIR or set NNABLA_CHROOT")
    root = os.path.realpath(args.chroot)
    for kind, sub, opts in (
        ("proc", "proc", ["-t", "proc", "proc"]),
        ("sysfs", "sys", ["-t", "sysfs", "sys"]),
    ):
        mp = os.path.join(root, sub)
        if subprocess.run(["mountpoint", "-q", mp]).returncode != 0:
            subprocess.run(["mount"] + opts + [mp], check=True)
    for sub in ("dev", "dev/pts"):
        mp = os.path.join(root, sub)
        if subprocess.run(["mountpoint", "-q", mp]).returncode != 0:
            subprocess.run(["mount", "--bind", "/" + sub, mp], check=True)
    work = tempfile.mkdtemp(prefix="mlf-nnabla-", dir=os.path.join(root, "tmp"))
    inner = "/tmp/" + os.path.basename(work)
    host_view = os.path.join(work, "host")
    mounted = []
    try:
        for top in mount_points(jobs):
            mp = host_view + top
            os.makedirs(mp, exist_ok=True)
            subprocess.run(["mount", "--bind", top, mp], check=True)
            mounted.append(mp)

        def inside(p):
            return inner + "/host" + os.path.realpath(p)

        mapped = []
        for job in jobs:
            job = dict(job)
            for key in ("model", "inputs", "outputs", "save_parameters", "generated"):
                if key in job:
                    job[key] = inside(job[key])
            mapped.append(job)
        with open(os.path.join(work, "jobs.json"), "w") as f:
            json.dump(mapped, f)
        progress = os.path.join(work, "progress.jsonl")
        script = inside(os.path.abspath(__file__))

        def spawn(start):
            cmd = [
                "chroot",
                root,
                "env",
                "-i",
                "PATH=/usr/bin:/bin",
                "HOME=/root",
                "LC_ALL=C.UTF-8",
                "PYTHONHASHSEED=0",
                "OMP_NUM_THREADS=1",
                CHROOT_PYTHON,
                script,
                "--worker",
                inner + "/jobs.json",
                str(start),
                inner + "/progress.jsonl",
            ]
            return bc.popen_worker(cmd, os.path.join(work, "stderr.txt"))

        return bc.drive(jobs, spawn, progress, job_timeout=args.timeout, log=log)
    finally:
        for mp in reversed(mounted):
            if subprocess.run(["umount", mp]).returncode != 0:
                subprocess.run(["umount", "-l", mp])
        cleanup(work, mounted)


def cleanup(work, dirs):
    """Remove the run folder without ever following a mount: the files we wrote are
    unlinked by name, the folders we made only with rmdir (which refuses a folder
    that is not empty, such as a mount point still in use)."""
    for name in ("jobs.json", "progress.jsonl", "stderr.txt"):
        p = os.path.join(work, name)
        if os.path.exists(p):
            os.remove(p)
    for d in list(reversed(dirs)) + [os.path.join(work, "host"), work]:
        if os.path.ismount(d):
            continue
        try:
            os.rmdir(d)
        except OSError:
            pass


if __name__ == "__main__":
    main()
