#!/usr/bin/env python3
"""Remote reads against real servers: nginx (HTTP ranges) and moto's
S3-compatible server.

    check_servers.py --cli target/debug/mlformats [--mib 1024] [--work DIR]
                     [--moto-venv V] [--bench] [--rss] [--formats .params,...]
                     [--no-s3]

Makes a file of about MIB MiB in each format that is read by its headers
(`.params` written here; `.safetensors`, `.tsm`, `.onnx` and an `.nnp` with
stored members converted from it by the CLI), serves the directory with
nginx (`nginx` on PATH; its own config in WORK, access log with the bytes
sent) and uploads the files to a moto server (`moto_server` and boto3 from
the virtualenv V, default: made here with pip). For each file and each
server it runs `mlformats inspect URL --remote-stats` and checks:

- the listing equals `mlformats inspect` of the local file (the first line
  names the location, the rest must be the same);
- nginx's log: the bytes sent for the file stay under 1 MiB;
- moto: the bytes the CLI says it fetched stay under 1 MiB;
- `stats` of each remote safetensors, `.params` and `.nnp` (read tensor by
  tensor) equals `stats` of the local file, and `convert` of each (to
  `.npz`; the `.nnp` to `.onnx`) gives the bytes `convert` of the local
  file gives, over nginx and from S3; the CLI fetches about the file once
  (at most its size and 1 MiB).

With --rss it runs `convert` and `stats` of the remote safetensors under
`/usr/bin/time -v` and prints their peak resident memory (and the local
file's, for comparison): reading tensor by tensor, it stays near the
largest tensor (16 MiB here), not the file. --formats limits the files
made (e.g. `.params,.safetensors` for a quick big run); --no-s3 skips moto.

With --bench it also times `inspect URL` against downloading the file
(curl to /dev/null), 3 runs each, and prints a Markdown table.
Exits 1 when a check fails. Needs Python 3.9+ (stdlib); nginx; curl for
--bench.
"""

import argparse
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

FORMATS = [".params", ".safetensors", ".tsm", ".onnx", ".nnp"]
BUDGET = 1 << 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise SystemExit(f"nothing listens on port {port}")


def write_params(path, mib):
    """A TVM `.params` of f32 tensors of 16 MiB each (values from a short
    pattern) and two small ones."""
    chunk = struct.pack("<4f", 0.5, -1.25, 3.0, 0.0) * (1 << 16)  # 1 MiB
    tensors = [(f"layer{i}/weight", 2, 32, [1024, 4096]) for i in range(max(1, mib // 16))]
    tensors += [("bias_i8", 0, 8, [3, 5]), ("steps_i64", 0, 64, [])]
    with open(path, "wb") as f:
        f.write(struct.pack("<QQQ", 0xF7E58D4F05049CB7, 0, len(tensors)))
        for name, *_ in tensors:
            f.write(struct.pack("<Q", len(name)) + name.encode())
        f.write(struct.pack("<Q", len(tensors)))
        for _, code, bits, shape in tensors:
            n = bits // 8
            for d in shape:
                n *= d
            f.write(struct.pack("<QQiiiBBH", 0xDD5E40F096B4A13F, 0, 1, 0, len(shape), code, bits, 1))
            f.write(struct.pack(f"<{len(shape)}q", *shape) + struct.pack("<q", n))
            while n:
                part = chunk[: min(n, len(chunk))]
                f.write(part)
                n -= len(part)


def stored(path):
    """`path`, a zip, rewritten with every member stored (not deflated)."""
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            with src.open(info) as r, dst.open(zipfile.ZipInfo(info.filename, info.date_time), "w",
                                               force_zip64=True) as w:
                shutil.copyfileobj(r, w, 1 << 20)
    tmp.replace(path)


def make_files(cli, work, mib, formats):
    files = work / "files"
    files.mkdir(parents=True, exist_ok=True)
    src = files / "model.params"
    write_params(src, mib)
    out = [src]
    for ext in [f for f in FORMATS[1:] if f in formats]:
        dst = files / f"model{ext}"
        r = subprocess.run([cli, "convert", str(src), str(dst), "-q"], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"cannot make {dst.name}: {r.stderr.strip()}")
        if ext == ".nnp":
            stored(dst)
        out.append(dst)
    os.chmod(work, 0o755)
    os.chmod(files, 0o755)
    return out


def start_nginx(work, root, port):
    conf = work / "nginx.conf"
    user = "user root;\n" if os.geteuid() == 0 else ""
    conf.write_text(
        f"""{user}daemon off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/nginx.error.log;
events {{ worker_connections 64; }}
http {{
  log_format sent '$uri $status $body_bytes_sent $http_range';
  access_log {work}/access.log sent;
  client_body_temp_path {work}/body;
  proxy_temp_path {work}/proxy;
  fastcgi_temp_path {work}/fastcgi;
  uwsgi_temp_path {work}/uwsgi;
  scgi_temp_path {work}/scgi;
  types {{ }}
  default_type application/octet-stream;
  server {{
    listen 127.0.0.1:{port};
    root {root};
  }}
}}
"""
    )
    p = subprocess.Popen(["nginx", "-c", str(conf), "-p", str(work)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    wait_port(port)
    return p


def nginx_sent(work, name):
    total = 0
    for line in (work / "access.log").read_text().splitlines():
        uri, _status, sent, *_ = line.split(" ")
        if uri == f"/{name}":
            total += int(sent)
    return total


def moto(venv, work, files, port):
    if venv is None:
        venv = work / "moto-venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin/pip"), "install", "-q", "moto[server]==5.2.5", "boto3==1.44.8"], check=True)
    server = subprocess.Popen([str(venv / "bin/moto_server"), "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    wait_port(port)
    upload = (
        "import boto3, sys\n"
        f"s3 = boto3.client('s3', endpoint_url='http://127.0.0.1:{port}', region_name='us-east-1',"
        " aws_access_key_id='test', aws_secret_access_key='test')\n"
        "s3.create_bucket(Bucket='models')\n"
        "for p in sys.argv[1:]:\n"
        "    with open(p, 'rb') as f:\n"
        "        s3.put_object(Bucket='models', Key=p.rsplit('/', 1)[-1], Body=f)\n"
    )
    subprocess.run([str(venv / "bin/python"), "-c", upload, *map(str, files)], check=True)
    return server


def run(cli, args, env=None):
    r = subprocess.run([cli, *args], capture_output=True, text=True, env=env)
    return r.returncode, r.stdout, r.stderr


def fetched(stderr):
    for line in stderr.splitlines():
        if line.startswith("remote: "):
            return int(line.split()[1])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--work")
    ap.add_argument("--moto-venv")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--rss", action="store_true")
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--no-s3", action="store_true")
    a = ap.parse_args()
    cli = str(Path(a.cli).resolve())
    work = Path(a.work or tempfile.mkdtemp())
    work.mkdir(parents=True, exist_ok=True)
    files = make_files(cli, work, a.mib, a.formats.split(","))
    fails = []
    procs = []
    http_port, s3_port = free_port(), free_port()
    try:
        procs.append(start_nginx(work, files[0].parent, http_port))
        if not a.no_s3:
            procs.append(moto(Path(a.moto_venv) if a.moto_venv else None, work, files, s3_port))
        env = dict(os.environ, AWS_ENDPOINT=f"http://127.0.0.1:{s3_port}", AWS_ACCESS_KEY_ID="test",
                   AWS_SECRET_ACCESS_KEY="test", AWS_REGION="us-east-1", AWS_ALLOW_HTTP="true")
        servers = [("nginx", f"http://127.0.0.1:{http_port}/")] + ([] if a.no_s3 else [("moto", "s3://models/")])
        rows = []
        for f in files:
            code, local, err = run(cli, ["inspect", str(f)])
            if code != 0:
                fails.append(f"{f.name}: local inspect: {err.strip()}")
                continue
            for where, base in servers:
                url = base + f.name
                code, out, err = run(cli, ["inspect", url, "--remote-stats"], env)
                got = fetched(err)
                same = code == 0 and out.split("\n", 1)[1:] == local.split("\n", 1)[1:]
                sent = nginx_sent(work, f.name) if where == "nginx" else got
                ok = same and sent is not None and sent < BUDGET
                rows.append((f.name, where, f.stat().st_size, sent, got, "ok" if ok else "FAIL"))
                if not same:
                    fails.append(f"{f.name} over {where}: inspect differs or failed: {err.strip()[:300]}")
                elif sent is None or sent >= BUDGET:
                    fails.append(f"{f.name} over {where}: {sent} bytes for its headers")
        streamed = streaming(cli, work, files, servers, env, fails)
        print("| file | server | size | bytes sent (server) | fetched (CLI) | |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print("| " + " | ".join(str(x) for x in r) + " |")
        print("\n| command | server | size | fetched (CLI) | |")
        print("|---|---|---|---|---|")
        for r in streamed:
            print("| " + " | ".join(str(x) for x in r) + " |")
        if a.rss:
            rss(cli, work, files, http_port, env, fails)
        if a.bench:
            bench(cli, files, http_port, env)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=30)
    for f in fails:
        print("FAIL", f)
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if fails else 0)


def streaming(cli, work, files, servers, env, fails):
    """`stats` and `convert` of the remote safetensors, .params and .nnp
    against the local file's; rows of what each fetched."""
    rows = []
    for f in files:
        if f.suffix not in (".safetensors", ".params", ".nnp"):
            continue
        target = "onnx" if f.suffix == ".nnp" else "npz"
        here = work / f"local-{f.stem}{f.suffix}.{target}"
        _, want, _ = run(cli, ["stats", str(f)])
        run(cli, ["convert", str(f), str(here), "-q"])
        size = f.stat().st_size
        for where, base in servers:
            url = base + f.name
            code, got, err = run(cli, ["stats", url, "--remote-stats"], env)
            n = fetched(err)
            good = code == 0 and got.split("\n", 1)[1:] == want.split("\n", 1)[1:]
            good = good and n is not None and n <= size + BUDGET
            rows.append((f"stats {f.name}", where, size, n, "ok" if good else "FAIL"))
            if not good:
                fails.append(f"stats {url} differs or fetched {n}: {err.strip()[:300]}")
            there = work / f"remote-{where}-{f.stem}{f.suffix}.{target}"
            code, _, err = run(cli, ["convert", url, str(there), "-q", "--remote-stats"], env)
            n = fetched(err)
            good = code == 0 and here.read_bytes() == there.read_bytes()
            good = good and n is not None and n <= size + BUDGET
            rows.append((f"convert {f.name} out.{target}", where, size, n, "ok" if good else "FAIL"))
            if not good:
                fails.append(f"convert {url} out.{target} differs or fetched {n}: {err.strip()[:300]}")
            there.unlink(missing_ok=True)
        here.unlink(missing_ok=True)
    return rows


def peak_rss(cmd, env):
    """The peak resident memory (MiB) of `cmd` under /usr/bin/time -v, and
    its stderr."""
    r = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env)
    kb = None
    for line in r.stderr.splitlines():
        if "Maximum resident set size" in line:
            kb = int(line.rsplit(":", 1)[1])
    if r.returncode != 0 or kb is None:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()[-300:]}")
    return kb / 1024, r.stderr


def rss(cli, work, files, port, env, fails):
    """Peak memory of convert and stats of the remote safetensors (and of
    the local file's) against the largest tensor and the file."""
    st = next((f for f in files if f.suffix == ".safetensors"), None)
    if st is None:
        return
    url = f"http://127.0.0.1:{port}/{st.name}"
    nnp = next((f for f in files if f.suffix == ".nnp"), None)
    largest = 1024 * 4096 * 4 / (1 << 20)
    print(f"\npeak memory, {st.name} of {st.stat().st_size / (1 << 20):.0f} MiB, largest tensor {largest:.0f} MiB")
    print("| command | peak RSS (MiB) | fetched (CLI) |")
    print("|---|---|---|")
    for label, cmd in [
        ("convert URL out.npz", [cli, "convert", url, str(work / "rss.npz"), "-q", "--remote-stats"]),
        ("convert URL out.params", [cli, "convert", url, str(work / "rss.params"), "-q", "--remote-stats"]),
        ("stats URL", [cli, "stats", url, "-q", "--remote-stats"]),
        ("show URL layer0/weight[0, :4]", [cli, "show", url, "layer0/weight[0, :4]", "--remote-stats"]),
        ("convert FILE out.npz (local, memory-mapped)", [cli, "convert", str(st), str(work / "rss.npz"), "-q"]),
    ] + ([
        ("convert NNP_URL out.onnx", [cli, "convert", f"http://127.0.0.1:{port}/{nnp.name}", str(work / "rss.onnx"), "-q", "--remote-stats"]),
    ] if nnp else []):
        try:
            mib, err = peak_rss(cmd, env)
        except RuntimeError as e:
            fails.append(f"rss: {e}")
            continue
        print(f"| {label} | {mib:.0f} | {fetched(err)} |")
        if "URL" in label and mib > 4 * largest + 64:
            fails.append(f"{label}: peak RSS {mib:.0f} MiB, not near the largest tensor ({largest:.0f} MiB)")
    for p in ("rss.npz", "rss.params", "rss.onnx"):
        (work / p).unlink(missing_ok=True)


def bench(cli, files, port, env):
    print("\n| file | size | inspect by ranges (s) | download (s) | ratio |")
    print("|---|---|---|---|---|")
    for f in files:
        url = f"http://127.0.0.1:{port}/{f.name}"

        def best(cmd):
            ts = []
            for _ in range(3):
                t = time.perf_counter()
                subprocess.run(cmd, capture_output=True, env=env, check=True)
                ts.append(time.perf_counter() - t)
            return min(ts)

        ins = best([cli, "inspect", url])
        dl = best(["curl", "-s", "-o", "/dev/null", url])
        print(f"| {f.name} | {f.stat().st_size >> 20} MiB | {ins:.3f} | {dl:.3f} | {dl / ins:.0f}× |")


if __name__ == "__main__":
    main()
