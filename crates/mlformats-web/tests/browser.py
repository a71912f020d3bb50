#!/usr/bin/env python3
"""The viewer page in a real browser (headless Chromium driven by Playwright).

usage: browser.py --dist DIR --cli PATH --out DIR [--chromium PATH] [--per-format N]
                  [--extra FILE]... [--big-mib N] [--no-huge]
                  [--bench [--bench-extra FILE=WHAT]... [--bench-repeat N] [--bench-tensors N]]

- DIR (from `cargo xtask web`) is served over HTTP beside copies of the
  samples of testdata/ (N of every file extension, the largest first; all
  with --per-format 0) plus a .safetensors the CLI converts and any --extra
  file, and each is opened with `?url=`: the tensor table (names, dtypes,
  shapes) and every network's node count must equal `mlformats inspect
  --json`;
- a node is clicked and its attributes read (the attribute names inspect
  lists); search counts the nodes of an op; the network is switched; an
  --extra file with a graph is searched and a hit clicked (a TenniS module,
  such as the SeetaFace6 detector `face_detector.tsm`, which cannot be
  committed: its network named in the chooser, no internal `#` field among
  the attributes, the node described);
- truncated and mutated samples show the error panel with the CLI's message
  (never a hang);
- "Convert": NNabla and TenniS samples are converted by the page to every
  target format and downloaded; the bytes must equal what `mlformats
  convert` writes, and where the CLI refuses, the page says the CLI's message;
- no console error on any page; screenshots go to --out;
- `mlformats view --no-browser` is started, the page and the file fetched
  over HTTP from 127.0.0.1 and loaded in the browser;
- a big file (a generated `.params` of --big-mib MiB, 200 by default, in a
  temporary folder, and the `.safetensors`, `.npz`, `.tsm`, `.protobuf`,
  `.onnx`, NNabla `.h5`, `.nnp` (a stored `parameter.h5`) and primitiv
  `.data` the CLI converts it to) is opened with the file picker: it is
  read by slices (the table and node counts equal `inspect --json`,
  statistics stream in, values), it is converted by slices in the page (the
  download's sha256 equals the CLI's output; ONNX is refused with the
  reason), and every instance of the module keeps its memory far below the
  file's size (asserted on memory sizes, never on time);
- convert with options, `--params` (a second file) and `--input-shape`
  included: the download equals the CLI's output with the same flags, or
  the error panel shows the CLI's message;
- a sparse `.safetensors` past 4 GiB (no disk used) is opened by slices:
  the table equals `inspect --json` and the values past 4 GiB read back
  (--no-huge skips it).

--bench (a benchmark, not a test; nothing else runs): a 1 GiB `.params`
(64 f32 tensors of 16 MiB, pseudo-random values), and the `.safetensors`,
`.npz`, `.tsm`, `.protobuf`, `.onnx`, `.h5`, `.nnp` and primitiv `.data`
the CLI converts it to, that `.npz` rewritten with deflated members and
with big-endian ones, that `.onnx` with its initializers in packed
`float_data`, an `.onnx` of about 1 GiB of int64 initializers in
`int64_data` varints, and each --bench-extra FILE (WHAT: the row's words
on it, e.g. how it was made) are opened in the page (time to the tensor
table, and to every tensor's statistics) and by `mlformats inspect` (the
CLI given, each a fresh process), in the same run; one row per file is
printed. Then the conversions that need the whole model: an NNabla
network of 48 Affine layers of 16 MiB (768 MiB, the page's limit,
WHOLE_CONVERT_MAX in crates/mlformats/web/app.js) opened by slices and exported to ONNX in
the page, and that ONNX imported back to `.nnp` (the page reads the file
whole in a worker): time, the converting worker's module memory, the
CLI's time, and whether the download is the CLI's output; if one fails,
32 layers are tried.
"""

import argparse
import array
import functools
import hashlib
import http.server
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from playwright.sync_api import sync_playwright

ROOT = pathlib.Path(__file__).resolve().parents[3]
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
SAMPLE_EXT = {".params", ".data", ".nnp", ".nntxt", ".protobuf", ".h5", ".tsm", ".npz",
              ".onnx", ".safetensors"}


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".js": "text/javascript"}

    def log_message(self, *a):
        pass


def serve(directory):
    h = functools.partial(Handler, directory=str(directory))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}/"


def inspect(cli, path):
    r = subprocess.run([cli, "inspect", "--json", str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return json.loads(r.stdout), None


def node_counts(doc):
    """Every network's node count, as inspect --json (schema 2) gives it."""
    g = doc.get("graph")
    if not g:
        return []
    return [len(n["nodes"]) for n in g["graphs"]]


class Failures:
    def __init__(self):
        self.items = []

    def check(self, ok, what):
        if not ok:
            self.items.append(what)
            print("FAIL", what, flush=True)


def wait_done(page, timeout=20000):
    page.wait_for_function(
        "['ready','error'].includes(document.body.dataset.state)", timeout=timeout)
    return page.evaluate("document.body.dataset.state")


def check_sample(page, base, name, path, cli, fails, shots, screenshot=False):
    doc, err = inspect(cli, path)
    page.goto(f"{base}index.html?url=files/{name}")
    state = wait_done(page)
    if doc is None:
        fails.check(state == "error", f"{name}: the CLI refuses it ({err}) but the page shows it")
        if state == "error":
            msg = page.inner_text("#error-message")
            cli_msg = err.split(": ", 2)[-1] if err else ""
            fails.check(cli_msg in msg, f"{name}: page says {msg!r}, CLI {cli_msg!r}")
        return None
    fails.check(state == "ready", f"{name}: page shows an error: "
                + (page.inner_text("#error-message") if state == "error" else ""))
    if state != "ready":
        return None
    rows = page.evaluate("""[...document.querySelectorAll('#tensor-table tbody tr')].map(r =>
        [r.dataset.name, r.children[1].textContent, r.children[2].textContent])""")
    want = [[t["name"], t["dtype"] or "", "[" + ", ".join(str(d) for d in t["shape"]) + "]"]
            for t in doc["tensors"]]
    fails.check(rows == want, f"{name}: tensor table differs from inspect --json "
                f"({len(rows)} rows, {len(want)} tensors)")
    counts = node_counts(doc)
    options = page.evaluate("document.querySelectorAll('#network option').length")
    fails.check(options == len(counts), f"{name}: {options} networks, inspect has {len(counts)}")
    if options:
        # (a file of tensors alone opens at its summary: the chooser is on the graph tab)
        page.click("#tabs button[data-tab=graph]")
    for i, want_n in enumerate(counts[:options]):
        page.select_option("#network", str(i))
        got = int(page.get_attribute("#graph-count", "data-nodes"))
        fails.check(got == want_n, f"{name}: network {i} has {got} nodes, inspect {want_n}")
    if screenshot:
        page.click("#tabs button[data-tab=graph]")
        page.screenshot(path=str(shots / f"{name}.png"))
    return doc


def check_convert(page, base, name, path, cli, fails, shots, tmp):
    """Converts the sample `name` to every format the page offers: the
    download equals the CLI's output, or both refuse with the same message."""
    page.goto(f"{base}index.html?url=files/{name}")
    if wait_done(page) != "ready":
        fails.check(False, f"{name}: cannot convert, the page shows an error")
        return 0
    targets = page.evaluate("""[...document.querySelectorAll('#convert-to option')].map(o =>
        [o.value, o.dataset.ext])""")
    same = 0
    for fmt, ext in targets:
        want_name = pathlib.Path(name).stem + "." + ext
        out = tmp / f"cli-{want_name}"
        r = subprocess.run([cli, "convert", str(path), str(out), "-q"],
                           capture_output=True, text=True)
        page.select_option("#convert-to", fmt)
        if r.returncode != 0:
            page.click("#convert-go")
            page.wait_for_function("document.body.dataset.convert === 'error'", timeout=20000)
            msg = page.inner_text("#status")
            cli_msg = r.stderr.strip().split(": ", 2)[-1]
            fails.check(cli_msg in msg, f"{name} -> {fmt}: page says {msg!r}, CLI {cli_msg!r}")
            page.screenshot(path=str(shots / f"convert-refused-{name}.png"))
            continue
        with page.expect_download(timeout=30000) as dl:
            page.click("#convert-go")
        d = dl.value
        got = pathlib.Path(d.path()).read_bytes()
        fails.check(d.suggested_filename == want_name,
                    f"{name} -> {fmt}: downloaded as {d.suggested_filename}, want {want_name}")
        want = out.read_bytes()
        ok = got == want
        fails.check(ok, f"{name} -> {fmt}: {len(got)} bytes downloaded, the CLI writes {len(want)}")
        same += ok
    page.screenshot(path=str(shots / f"convert-{name}.png"))
    print(f"{name}: {same} of {len(targets)} conversions byte-identical with the CLI", flush=True)
    return same


# Conversions with options: (sample, target's extension, the CLI's flags). The page
# gets the same values in its convert panel; a flag's value is the field's.
CONVERT_OPTIONS = [
    ("nnabla_convnet.nnp", "safetensors", ["--dtype", "f16"]),
    ("nnabla_convnet.nnp", "npz", ["--only", "conv*", "--only", "fc/*", "--exclude", "*/b"]),
    ("nnabla_convnet.nnp", "onnx", ["--opset", "17"]),
    ("nnabla_convnet.nnp", "nnp", ["--dtype", "f16", "--weights-only"]),
    ("tennis_py_convnet.tsm", "safetensors", ["--dtype", "bf16", "--exclude", "*bias*"]),
    ("tennis_py_convnet.tsm", "onnx", ["--opset", "17"]),
    # refused: the page's error panel shows the CLI's message
    ("nnabla_convnet.nnp", "onnx", ["--opset", "99"]),
    ("nnabla_convnet.nnp", "onnx", ["--opset", "seventeen"]),
    ("nnabla_convnet.nnp", "npz", ["--only", "conv[1"]),
    # --params: a network and its parameters in a separate file
    ("nnabla_convnet.nntxt", "onnx", ["--params", "nnabla_convnet_params.h5"]),
    ("nnabla_convnet.nntxt", "nnp", ["--params", "nnabla_convnet_params.h5"]),
    # --input-shape: ONNX import of a model with symbolic dimensions
    ("symbolic.onnx", "nnp", ["--input-shape", "Input=2,1,28,28",
                              "--input-shape", "Delay_Initial=2,1,28"]),
    ("symbolic.onnx", "nnp", []),  # refused: a symbolic dimension needs --input-shape
    ("symbolic.onnx", "nnp", ["--input-shape", "Input=2,1,a"]),  # refused: not a shape
]


def set_convert_options(page, flags):
    """Sets the convert panel's fields to the CLI flags `flags`."""
    page.click("#convert-options > summary")
    words = {}
    i = 0
    while i < len(flags):
        flag = flags[i][2:]
        if flag in ("skip-unsupported", "weights-only", "keep-order"):
            page.check(f"#convert-{flag}")
            i += 1
            continue
        words.setdefault(flag, []).append(flags[i + 1])
        i += 2
    for flag, values in words.items():
        if flag == "params":
            page.set_input_files("#convert-params", values[-1])
        elif flag == "dtype":
            page.select_option("#convert-dtype", values[-1])
        else:
            page.fill(f"#convert-{flag}", " ".join(values))
    page.click("#convert-options > summary")


def check_convert_options(page, base, files, cli, fails, shots, tmp):
    """Converts with non-default options in the page: the download equals
    `mlformats convert` with the same flags, or the page's error panel
    shows the CLI's message."""
    same = refused = 0
    for k, (name, fmt, flags) in enumerate(CONVERT_OPTIONS):
        what = f"{name} -> {fmt} {' '.join(flags)}"
        page.goto(f"{base}index.html?url=files/{name}")
        if wait_done(page) != "ready":
            fails.check(False, f"{what}: the page shows an error")
            continue
        # the target by its extension, which also tells the CLI
        value = page.evaluate(f"document.querySelector('#convert-to option[data-ext={fmt}]').value")
        out = tmp / f"cli-options-{k}.{fmt}"
        # a file's flag (--params) names a file of files/
        flags = [str(files / f) if i and flags[i - 1] == "--params" else f for i, f in enumerate(flags)]
        r = subprocess.run([cli, "convert", str(files / name), str(out), "-q", *flags],
                           capture_output=True, text=True)
        page.select_option("#convert-to", value)
        set_convert_options(page, flags)
        if r.returncode != 0:
            page.click("#convert-go")
            page.wait_for_function("document.body.dataset.convert === 'error'", timeout=30000)
            shown = page.is_visible("#error-message")
            msg = page.inner_text("#error-message") if shown else ""
            # the CLI's first line without "error: " and the output's name
            first = r.stderr.strip().splitlines()[0].removeprefix("error: ")
            cli_msg = first.removeprefix(f"{out}: ")
            fails.check(shown and cli_msg in msg, f"{what}: the error panel says {msg!r}, the CLI {cli_msg!r}")
            fails.check(page.evaluate("document.body.dataset.state") == "ready",
                        f"{what}: the open file is gone after a refused conversion")
            page.screenshot(path=str(shots / f"convert-options-refused-{k}.png"))
            refused += 1
            continue
        with page.expect_download(timeout=30000) as dl:
            page.click("#convert-go")
        got = pathlib.Path(dl.value.path()).read_bytes()
        want = out.read_bytes()
        fails.check(got == want, f"{what}: {len(got)} bytes downloaded, the CLI writes {len(want)}")
        # converted by the worker's instance of the module, not the page's
        fails.check(page.evaluate("mlformatsViewer.memory.convert || 0") > 0,
                    f"{what}: no worker converted it")
        same += got == want
    print(f"convert with options: {same} downloads byte-identical with the CLI, "
          f"{refused} refusals with the CLI's message, of {len(CONVERT_OPTIONS)}", flush=True)
    return same, refused


def write_params(path, tensors):
    """A TVM `.params` (docs/formats/cvm.md section 2) of `tensors`: (name,
    DLPack code, bits, shape, chunk) with the payload `chunk` repeated (cut
    to the tensor's size)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<QQQ", 0xF7E58D4F05049CB7, 0, len(tensors)))
        for name, *_ in tensors:
            f.write(struct.pack("<Q", len(name.encode())) + name.encode())
        f.write(struct.pack("<Q", len(tensors)))
        for _, code, bits, shape, chunk in tensors:
            n = bits // 8
            for d in shape:
                n *= d
            f.write(
                struct.pack("<QQiiiBBH", 0xDD5E40F096B4A13F, 0, 1, 0, len(shape), code, bits, 1)
            )
            f.write(struct.pack(f"<{len(shape)}q", *shape) + struct.pack("<q", n))
            while n:
                part = chunk[:n]
                f.write(part)
                n -= len(part)


def f32_chunk(seed):
    """1 MiB of float32 values (a zero, a NaN and an infinity among them)."""
    xs = [((i * 37 + seed) % 2001 - 1000) / 7.0 for i in range(1 << 18)]
    xs[5], xs[6], xs[7] = 0.0, float("nan"), float("inf")
    return array.array("f", xs).tobytes()


def f32_noise_chunk(seed):
    """1 MiB of float32 values of a pseudo-random sequence (a zero, a NaN
    and an infinity among them): no pattern deflate's window finds, so a
    compressed copy stays about as big."""
    xs, x = [], seed * 2654435761 + 1
    for _ in range(1 << 18):
        x = (x * 6364136223846793005 + 1442695040888963407) & ((1 << 64) - 1)
        xs.append(((x >> 40) / (1 << 24) * 2000 - 1000) / 7.0)
    xs[5], xs[6], xs[7] = 0.0, float("nan"), float("inf")
    return array.array("f", xs).tobytes()


def big_params(path, mib):
    """A `.params` of about `mib` MiB: f32 tensors of 16 MiB, a few small
    ones of other dtypes."""
    chunk = f32_chunk(1)
    tensors = [(f"layer{i}/weight", 2, 32, [1024, 4096], chunk) for i in range(-(-mib // 16))]
    tensors += [
        ("bias_i8", 0, 8, [3, 5], bytes(range(15))),
        ("scale_f64", 2, 64, [7], array.array("d", [0.5 * i for i in range(7)]).tobytes()),
        ("steps_i64", 0, 64, [], struct.pack("<q", 123456789)),
    ]
    write_params(path, tensors)


def open_by_picker(page, base, path, timeout):
    page.goto(f"{base}index.html")
    page.wait_for_function("document.body.dataset.state === 'empty'", timeout=20000)
    page.set_input_files("#file", str(path))
    return wait_done(page, timeout)


def check_big(page, base, cli, fails, shots, tmp, mib):
    """The big `.params`, and the same tensors in a `.safetensors`, an
    `.npz` (stored members), a TenniS `.tsm` (a graph of constants), an
    NNabla `.protobuf`, an ONNX `.onnx`, an NNabla `.h5`, an `.nnp` (a
    stored `parameter.h5`) and a primitiv Model `.data` the CLI converts it
    to."""
    path = tmp / "big.params"
    big_params(path, mib)
    check_big_file(page, base, cli, fails, shots, path)
    check_view_ranges(page, cli, fails, shots, path, inspect(cli, path)[0], 1 << 20, max_requests=2)
    for ext in ["safetensors", "npz", "tsm", "protobuf", "onnx", "h5", "nnp", "data"]:
        other = tmp / f"big.{ext}"
        # NNabla parameters and primitiv are f32 only: the small tensors of
        # other dtypes left out
        extra = ["--skip-unsupported"] if ext in ("protobuf", "data") else []
        r = subprocess.run([cli, "convert", str(path), str(other), "-q", *extra],
                           capture_output=True, text=True)
        fails.check(r.returncode == 0, f"big.{ext}: the CLI cannot write it: {r.stderr.strip()}")
        if r.returncode == 0:
            check_big_file(page, base, cli, fails, shots, other)
            if ext in ("safetensors", "onnx", "tsm"):
                check_view_ranges(page, cli, fails, shots, other, inspect(cli, other)[0], 1 << 20,
                                  max_requests=2)
            if ext in ("safetensors", "nnp"):
                # `mlformats view http://...`: fetched by ranges as the page asks
                check_view_ranges(page, cli, fails, shots, other, inspect(cli, other)[0], 4 << 20, remote=True)
            other.unlink()


def check_big_file(page, base, cli, fails, shots, path):
    name = path.name
    size = path.stat().st_size
    doc, err = inspect(cli, path)
    fails.check(doc is not None, f"{name}: the CLI refuses it: {err}")
    state = open_by_picker(page, base, path, 60000)
    fails.check(
        state == "ready",
        f"{name}: the page shows an error: "
        + (page.inner_text("#error-message") if state == "error" else ""),
    )
    if state != "ready" or doc is None:
        return
    fails.check(
        page.evaluate("window.mlformatsViewer.summary.sliced") is True,
        f"{name}: not opened by slices",
    )
    rows = page.evaluate("""[...document.querySelectorAll('#tensor-table tbody tr')].map(r =>
        [r.dataset.name, r.children[1].textContent, r.children[2].textContent, r.children[4].textContent])""")
    want = [
        [
            t["name"],
            t["dtype"],
            "[" + ", ".join(str(d) for d in t["shape"]) + "]",
            f"{t['bytes']:,}",
        ]
        for t in doc["tensors"]
    ]
    fails.check(
        rows == want, f"{name}: tensor table differs from inspect --json ({len(rows)} rows)"
    )
    counts = node_counts(doc)
    options = page.evaluate("document.querySelectorAll('#network option').length")
    fails.check(options == len(counts), f"{name}: {options} networks, inspect has {len(counts)}")
    if options:
        # (a file of tensors alone opens at its summary: the chooser is on the graph tab)
        page.click("#tabs button[data-tab=graph]")
    for i, want_n in enumerate(counts[:options]):
        page.select_option("#network", str(i))
        got = int(page.get_attribute("#graph-count", "data-nodes"))
        fails.check(got == want_n, f"{name}: network {i} has {got} nodes, inspect {want_n}")
    page.wait_for_function("document.body.dataset.stats === 'done'", timeout=300000)
    mins = page.evaluate(
        "[...document.querySelectorAll('#tensor-table tbody tr')].map(r => r.children[5].textContent)"
    )
    fails.check(all(m != "" for m in mins), f"{name}: statistics missing: {mins}")
    page.click("#tabs button[data-tab=tensors]")
    page.locator("#tensor-table tbody tr").first.click()
    page.wait_for_selector("#values-text", timeout=20000)
    vals = page.inner_text("#values-text").split()
    fails.check(len(vals) == 100, f"{name}: {len(vals)} values shown")
    page.screenshot(path=str(shots / f"big-{path.suffix[1:]}.png"))
    # converted a slice at a time, the output handed to the page in pieces:
    # the download is the CLI's output, byte for byte
    opened = page.evaluate(
        "({...window.mlformatsViewer.memory, page: window.mlformatsViewer.lib.memoryBytes()})"
    )
    # opened, its statistics and values read: no instance holds the file
    for k, v in opened.items():
        fails.check(
            v < 32 << 20, f"{name} ({size >> 20} MiB): opened, the {k} module's memory is {v >> 20} MiB"
        )
    # converted a slice at a time (.safetensors, .npz, .params) or one
    # tensor at a time (the other writers), the output handed to the page
    # in pieces: the download is the CLI's output, byte for byte
    for ext in BIG_CONVERT[path.suffix]:
        convert_big(page, cli, fails, path, ext)
    mem = page.evaluate(
        "({...window.mlformatsViewer.memory, page: window.mlformatsViewer.lib.memoryBytes()})"
    )
    # an instance holds its code's data and a 4 MiB slice, not the file;
    # a writer that takes one tensor at a time (and converting a
    # column-major file, primitiv, to a row-major target) holds one tensor
    # (16 MiB here) and its converted copy: bounded at four such tensors
    # over the base (the module's allocator keeps what it grew to)
    limit = (32 << 20) + 4 * (16 << 20)
    for k, v in mem.items():
        fails.check(
            v < limit, f"{name} ({size >> 20} MiB): the {k} module's memory is {v >> 20} MiB"
        )
    fails.check(set(mem) >= {"model", "stats", "page"}, f"{name}: memory of {sorted(mem)}")
    print(
        f"{name} ({size >> 20} MiB) read by slices; module memory (MiB): "
        + ", ".join(f"{k} {v / (1 << 20):.1f}" for k, v in sorted(mem.items())),
        flush=True,
    )


# The targets each big file is converted to in the page (by slices): one
# written a slice at a time, one whose writer takes a tensor at a time.
BIG_CONVERT = {".params": ["safetensors", "h5"], ".safetensors": ["npz", "tsm"],
               ".npz": ["params", "onnx"], ".tsm": ["npz", "nnp"],
               ".protobuf": ["safetensors", "tsm"], ".onnx": ["params", "h5"],
               ".h5": ["safetensors", "onnx"], ".nnp": ["npz", "tsm"],
               ".data": ["npz", "onnx"]}


def convert_big(page, cli, fails, path, ext, flags=(), whole=False):
    """Converts the open big file `path` to `.ext` in the page (with the
    convert panel's `flags`, the CLI's): the download's sha256 equals
    `mlformats convert`'s; `whole`: the library needs the whole model for
    it, and the page read the file whole to convert it."""
    name = path.name
    what = f"{name} -> .{ext} {' '.join(flags)}".strip()
    out = path.with_name(f"cli-{path.stem}.{ext}")
    r = subprocess.run([cli, "convert", str(path), str(out), "-q", *flags],
                       capture_output=True, text=True)
    fails.check(r.returncode == 0, f"{what}: the CLI refuses: {r.stderr.strip()}")
    if r.returncode != 0:
        return
    value = page.evaluate(f"document.querySelector('#convert-to option[data-ext={ext}]').value")
    page.select_option("#convert-to", value)
    if flags:
        set_convert_options(page, list(flags))
    with page.expect_download(timeout=600000) as dl:
        page.click("#convert-go")
    got = sha256_file(dl.value.path())
    want = sha256_file(out) if r.returncode == 0 else None
    fails.check(got == want, f"{what}: the download's sha256 {got}, the CLI's {want}")
    fails.check(dl.value.suggested_filename == f"{path.stem}.{ext}",
                f"{what}: downloaded as {dl.value.suggested_filename}")
    how = page.evaluate("document.body.dataset.convertPath")
    fails.check(how == ("whole" if whole else "sliced"), f"{what}: converted {how}")
    out.unlink(missing_ok=True)
    pathlib.Path(dl.value.path()).unlink(missing_ok=True)
    print(f"{what}: converted ({how}), sha256 equal to the CLI's: {got == want}", flush=True)


# A network of big Affine layers (NNabla text format), for the conversions
# that need the whole model: exporting its graph to ONNX, importing that
# ONNX graph back.
BIG_NET_LAYERS = 5


def big_network(tmp, cli, layers=BIG_NET_LAYERS):
    """`big-net.nnp` (`layers` Affine layers of 2048 x 2048 f32, 16 MiB
    each: 80 MiB by default) made by the CLI from a network and a `.params`
    of its weights."""
    n = 2048
    lines = ['network {', '  name: "net"', '  batch_size: 1',
             f'  variable {{ name: "x0" type: "Buffer" shape {{ dim: 1 dim: {n} }} }}']
    for i in range(layers):
        lines += [
            f'  variable {{ name: "fc{i}/W" type: "Parameter" shape {{ dim: {n} dim: {n} }} }}',
            f'  variable {{ name: "x{i + 1}" type: "Buffer" shape {{ dim: 1 dim: {n} }} }}',
            f'  function {{ name: "fc{i}" type: "Affine" input: "x{i}" input: "fc{i}/W" '
            f'output: "x{i + 1}" affine_param {{ base_axis: 1 }} }}',
        ]
    lines += ['}', 'executor {', '  name: "runtime"', '  network_name: "net"',
              '  data_variable { variable_name: "x0" data_name: "x" }',
              f'  output_variable {{ variable_name: "x{layers}" data_name: "y" }}', '}']
    net = tmp / "big-net.nntxt"
    net.write_text("\n".join(lines) + "\n")
    params = tmp / "big-net-weights.params"
    write_params(params, [(f"fc{i}/W", 2, 32, [n, n], f32_chunk(i)) for i in range(layers)])
    h5 = tmp / "big-net-weights.h5"  # NNabla's parameter file
    nnp = tmp / "big-net.nnp"
    r = subprocess.run([cli, "convert", str(params), str(h5), "-q"], capture_output=True, text=True)
    if r.returncode == 0:
        r = subprocess.run([cli, "convert", str(net), str(nnp), "-q", "--params", str(h5)],
                           capture_output=True, text=True)
    for f in (net, params, h5):
        f.unlink(missing_ok=True)
    return nnp if r.returncode == 0 else r.stderr.strip()


def check_big_whole(page, base, cli, fails, shots, tmp):
    """Conversions of a big network opened by slices, byte-identical with
    the CLI: its export to ONNX and its ONNX rewritten to f16 stream by
    slices (weights read one at a time); the ones that need the whole model
    in memory (the NNabla model kept in .nnp with --dtype f16, the ONNX
    import to .nnp) read the file whole (under 768 MiB)."""
    nnp = big_network(tmp, cli)
    fails.check(isinstance(nnp, pathlib.Path), f"big-net.nnp: the CLI cannot write it: {nnp}")
    if not isinstance(nnp, pathlib.Path):
        return
    onnx = tmp / "big-net.onnx"
    r = subprocess.run([cli, "convert", str(nnp), str(onnx), "-q"], capture_output=True, text=True)
    fails.check(r.returncode == 0, f"big-net.onnx: the CLI cannot write it: {r.stderr.strip()}")
    for path, conversions in [
        (nnp, [("onnx", (), False), ("nnp", ("--dtype", "f16"), True)]),
        (onnx, [("nnp", (), True), ("onnx", ("--dtype", "f16"), False)]),
    ]:
        if not path.exists():
            continue
        state = open_by_picker(page, base, path, 60000)
        fails.check(state == "ready", f"{path.name}: the page shows an error")
        if state != "ready":
            continue
        fails.check(page.evaluate("window.mlformatsViewer.summary.sliced") is True,
                    f"{path.name}: not opened by slices")
        nodes = int(page.get_attribute("#graph-count", "data-nodes"))
        fails.check(nodes >= BIG_NET_LAYERS, f"{path.name}: {nodes} nodes shown")
        for ext, flags, whole in conversions:
            convert_big(page, cli, fails, path, ext, flags, whole=whole)
            open_by_picker(page, base, path, 60000)  # the convert panel's fields reset
        page.screenshot(path=str(shots / f"big-whole-{path.suffix[1:]}.png"))
        path.unlink()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def huge_safetensors(path):
    """A sparse `.safetensors` past 4 GiB costing no disk: an f32 tensor
    `big` of 4 GiB + 4 MiB (zeros but its last four values) and a tensor
    `tail` of four values after it; answers the values written."""
    big = 1025 * 1048576
    header = {"big": {"dtype": "F32", "shape": [1025, 1048576], "data_offsets": [0, big * 4]},
              "tail": {"dtype": "F32", "shape": [4], "data_offsets": [big * 4, big * 4 + 16]}}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    last, tail = [1.5, -2.25, 3.0, 4.75], [10.0, 20.0, 30.0, 40.0]
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.seek(8 + len(h) + big * 4 - 16)
        f.write(struct.pack("<8f", *last, *tail))
    return {"big": (big - 4, last), "tail": (0, tail)}


def check_huge(page, base, fails, shots, path, written, doc):
    """The sparse file past 4 GiB opened by slices: its table equals
    `inspect --json` (`doc`), and the values past 4 GiB read back."""
    name = path.name
    state = open_by_picker(page, base, path, 120000)
    fails.check(state == "ready", f"{name}: the page shows an error: "
                + (page.inner_text("#error-message") if state == "error" else ""))
    if state != "ready":
        return
    fails.check(page.evaluate("window.mlformatsViewer.summary.sliced") is True,
                f"{name}: not opened by slices")
    fails.check(page.evaluate("window.mlformatsViewer.summary.file_size") == path.stat().st_size,
                f"{name}: the file's size")
    rows = page.evaluate("""[...document.querySelectorAll('#tensor-table tbody tr')].map(r =>
        [r.dataset.name, r.children[1].textContent, r.children[2].textContent, r.children[4].textContent])""")
    want = [[t["name"], t["dtype"], "[" + ", ".join(str(d) for d in t["shape"]) + "]", f"{t['bytes']:,}"]
            for t in doc["tensors"]]
    fails.check(rows == want, f"{name}: tensor table {rows}, inspect --json {want}")
    for tensor, (start, values) in written.items():
        got = page.evaluate(f"""window.mlformatsViewer.model.request(
            {{op: 'values', name: '{tensor}', start: {start}, count: 4}}).then(v => v.values)""")
        fails.check(got == values, f"{name}: {tensor} from {start}: {got}, written {values}")
    page.screenshot(path=str(shots / "huge-safetensors.png"))
    print(f"{name} ({path.stat().st_size / (1 << 30):.2f} GiB, sparse) read by slices: "
          "table and the values past 4 GiB checked", flush=True)


def counting_proxy(upstream, route):
    """A reverse proxy in front of `mlformats view` (at `upstream`): it
    passes HEADs, and GETs and their Range header, on and counts the GETs for the
    file's `route` and the bytes of the file it sent back, and the GETs of
    the blocks of its header walk (`walk/NAME`, which `view` names in
    X-Mlformats-Walk) and their bytes (counted as file bytes)."""
    count = {"requests": 0, "bytes": 0, "ranges": 0, "walks": 0}
    walk_route = "walk/" + route.split("/", 1)[1]

    class Proxy(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):
            req = urllib.request.Request(upstream + self.path.lstrip("/"), method="HEAD")
            try:
                r = urllib.request.urlopen(req)
            except urllib.error.HTTPError as e:
                r = e
            self.send_response(r.status)
            for k, v in r.headers.items():
                if k.lower() not in ("connection", "transfer-encoding", "date", "server"):
                    self.send_header(k, v)
            self.end_headers()

        def do_GET(self):
            headers = {k: v for k, v in self.headers.items() if k.lower() == "range"}
            req = urllib.request.Request(upstream + self.path.lstrip("/"), headers=headers)
            try:
                r = urllib.request.urlopen(req)
            except urllib.error.HTTPError as e:
                r = e
            body = r.read()
            self.send_response(r.status)
            for k, v in r.headers.items():
                if k.lower() not in ("connection", "transfer-encoding", "date", "server"):
                    self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
            path = self.path.split("?")[0].lstrip("/")
            if path == route:
                count["requests"] += 1
                count["bytes"] += len(body)
                count["ranges"] += "range" in (k.lower() for k in headers)
            elif path == walk_route:
                count["walks"] += 1
                count["bytes"] += len(body)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}/", count


def start_view(cli, target):
    """`mlformats view TARGET --no-browser`: the process, the server's root
    and the file's route (None, None when no URL was printed)."""
    proc = subprocess.Popen([cli, "view", str(target), "--no-browser"], stdout=subprocess.PIPE, text=True)
    m = re.search(r"(http://127\.0\.0\.1:\d+/)\?url=(\S+)", proc.stdout.readline())
    return proc, (m.group(1) if m else None), (m.group(2) if m else None)


def check_view_ranges(page, cli, fails, shots, path, doc, budget, remote=False, max_requests=None):
    """`mlformats view FILE` of a big file: the page reads it by range
    requests, as it reads a picked file by slices. Its table equals
    `inspect --json` (`doc`), and the server sent at most `budget` bytes of
    the file for it (counted by a proxy in front of the server), in at
    most `max_requests` requests (the page's first, for the size and first
    bytes, and the one for the blocks of the header walk, which then makes
    none: each costs a round trip, the time to the table). `remote`:
    the file is viewed at a location (`mlformats view http://...`, the
    first server's address through the proxy): the second server fetches
    by ranges what the page asks of it, and the first sends at most
    `budget` bytes."""
    name = path.name
    size = path.stat().st_size
    what = f"view {'http://.../' if remote else ''}{name}"
    if doc is None:
        fails.check(False, f"{what}: the CLI does not read it")
        return
    procs = []
    try:
        proc, root, route = start_view(cli, path)
        procs.append(proc)
        fails.check(root is not None, f"{what}: no URL printed")
        if not root:
            return
        srv, front, count = counting_proxy(root, route)
        try:
            if remote:
                proc, second, route = start_view(cli, f"{front}{route}")
                procs.append(proc)
                fails.check(second is not None, f"{what}: the second server printed no URL")
                if not second:
                    return
                front = second
            t = time.time()
            page.goto(f"{front}?url={route}")
            state = wait_done(page, 60000)
            took = time.time() - t
            fails.check(state == "ready", f"{what}: the page shows an error: "
                        + (page.inner_text("#error-message") if state == "error" else ""))
            if state != "ready":
                return
            fails.check(page.evaluate("window.mlformatsViewer.summary.sliced") is True,
                        f"{what}: not read by slices")
            shown = (page.evaluate("window.mlformatsViewer.summary.file"), page.inner_text("#filename"))
            fails.check(shown == (name, name), f"{what}: the page names the file {shown}")
            rows = page.evaluate("""[...document.querySelectorAll('#tensor-table tbody tr')].map(r =>
                [r.dataset.name, r.children[1].textContent, r.children[2].textContent])""")
            want = [[t["name"], t["dtype"], "[" + ", ".join(str(d) for d in t["shape"]) + "]"]
                    for t in doc["tensors"]]
            fails.check(rows == want, f"{what}: tensor table {rows[:3]}..., inspect --json {want[:3]}...")
            sent, requests = count["bytes"], count["requests"]
            fails.check(sent <= budget, f"{what}: the server sent {sent} bytes of {size} to open it "
                        f"({requests} requests), more than {budget}")
            if max_requests is not None:
                fails.check(requests + count["walks"] <= max_requests,
                            f"{what}: {requests} range requests and {count['walks']} for the walk's blocks "
                            f"to open it, more than {max_requests}")
            fails.check(count["ranges"] == requests, f"{what}: a request for the file without a range")
            # the statistics of a file read over the network are on request
            fails.check(page.evaluate("!document.getElementById('stats-go').hidden") or not doc["tensors"],
                        f"{what}: no button for the statistics")
            page.screenshot(path=str(shots / f"view-ranges-{'remote-' if remote else ''}{path.suffix[1:]}.png"))
            print(f"{what} ({size / (1 << 20):.0f} MiB): table in {took:.2f} s after "
                  f"{requests} range requests and {count['walks']} for the walk's blocks, "
                  f"{sent / 1024:.0f} KiB sent", flush=True)
        finally:
            srv.shutdown()
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()


def check_url_answers(page, base, fails, sample):
    """`?url=` on servers that do not answer ranges, or not at all: the
    file read whole, with a note; a message that says why."""
    page.goto(f"{base}index.html?url=files/{sample}")
    fails.check(wait_done(page) == "ready", f"?url= without ranges: {sample} does not open")
    status = page.inner_text("#status")
    fails.check("does not answer range requests" in status, f"?url= without ranges: status {status!r}")
    bad = "http://127.0.0.1:9/model.onnx"
    page.goto(f"{base}index.html?url={bad}")
    fails.check(wait_done(page) == "error", "?url= of a closed port: no error shown")
    msg = page.inner_text("#error-message")
    fails.check("could not be read" in msg and "Access-Control-Allow-Origin" in msg,
                f"?url= of a closed port: {msg!r}")


def bench(page, base, cli, tmp, extra=(), repeat=5, tensors=64):
    """Time to the tensor table of a 1 GiB `.params` (pseudo-random f32
    values: `f32_noise_chunk`; and the `.safetensors`,
    `.npz`, `.tsm`, `.protobuf`, `.onnx`, `.h5`, `.nnp` and `.data` the CLI
    converts it to; that `.npz` rewritten deflated and big-endian, that
    `.onnx` with its initializers in packed `float_data`, an `.onnx` of
    int64 initializers in `int64_data` varints, and each `extra` file,
    `(path, what)`) in the page against `mlformats inspect` on the same file,
    in the same run (median of `repeat`); prints one row per file; then the
    conversions that read a file whole (`bench_whole`). `tensors` of 16 MiB
    (64: 1 GiB; fewer for a quick try of the bench itself)."""
    params = tmp / "bench-1gib.params"
    write_params(
        params,
        [(f"layer{i}/weight", 2, 32, [1024, 4096], f32_noise_chunk(i)) for i in range(tensors)],
    )
    print(
        "| file | page: time to table | page: all statistics | `mlformats inspect` "
        "| page / CLI | module memory (largest instance) |"
    )
    print("|---|---|---|---|---|---|")
    what = f"{tensors} f32 tensors"
    for ext in ["params", "safetensors", "npz", "tsm", "protobuf", "onnx", "h5", "nnp", "data"]:
        path = tmp / f"bench-1gib.{ext}"
        if ext != "params":
            r = subprocess.run([cli, "convert", str(params), str(path), "-q"], capture_output=True)
            if r.returncode != 0:
                raise SystemExit(f"bench: cannot write {path.name}: " + r.stderr.decode())
        bench_file(page, base, cli, path, repeat, what)
        if ext == "npz":
            deflated = tmp / "bench-1gib-deflated.npz"
            t = time.perf_counter()
            npz_deflated(path, deflated)
            made = time.perf_counter() - t
            bench_file(
                page,
                base,
                cli,
                deflated,
                repeat,
                f"{what}, deflated members (zipfile level 1, written in {made:.0f} s)",
            )
            deflated.unlink()
            swapped = tmp / "bench-1gib-big-endian.npz"
            npz_big_endian(path, swapped)
            bench_file(page, base, cli, swapped, repeat, f"{what}, big-endian `>f4` members")
            swapped.unlink()
        if ext == "onnx":
            packed = tmp / "bench-1gib-float-data.onnx"
            onnx_float_data(path, packed)
            bench_file(page, base, cli, packed, repeat, f"{what} in packed `float_data`")
            packed.unlink()
            varints = tmp / "bench-1gib-int64-data.onnx"
            t = time.perf_counter()
            n, elements = onnx_int64_data(path, varints, tensors << 24)
            made = time.perf_counter() - t
            bench_file(
                page,
                base,
                cli,
                varints,
                repeat,
                f"{n} int64 tensors ({elements / 1e6:.0f} M elements) in `int64_data` "
                f"varints (written in {made:.0f} s)",
            )
            varints.unlink()
        if ext != "params":
            path.unlink()
    for path, what in extra:
        bench_file(page, base, cli, pathlib.Path(path), repeat, what)
    params.unlink()
    print(f"(median of {repeat}; the CLI is {cli})", flush=True)
    bench_whole(page, base, cli, tmp, (48, 32) if tensors == 64 else (tensors,))


def bench_file(page, base, cli, path, repeat, what, cli_budget=60, cli_timeout=120):
    """One row: the page opens `path` `repeat` times (time to the table,
    to every tensor's statistics); `mlformats inspect` runs as often, but
    no more once its runs took `cli_budget` seconds, and a run past
    `cli_timeout` seconds is stopped (the row says so)."""
    size = path.stat().st_size
    page_ms, stats_ms, cli_ms, mem = [], [], [], {}
    stopped = False
    viewer = "window.mlformatsViewer"
    for _ in range(repeat):
        if open_by_picker(page, base, path, 120000) != "ready":
            raise SystemExit(
                "bench: the page did not open the file: " + page.inner_text("#error-message")
            )
        if not page.evaluate(f"{viewer}.summary.sliced"):
            raise SystemExit(f"bench: {path.name} was not opened by slices")
        page_ms.append(page.evaluate(f"{viewer}.timing.ready - {viewer}.timing.start"))
        page.wait_for_function("document.body.dataset.stats === 'done'", timeout=900000)
        stats_ms.append(page.evaluate(f"{viewer}.timing.stats - {viewer}.timing.start"))
        mem = page.evaluate(f"({{...{viewer}.memory, page: {viewer}.lib.memoryBytes()}})")
        if stopped or sum(cli_ms) > cli_budget * 1000:
            continue
        t = time.perf_counter()
        try:
            r = subprocess.run(
                [cli, "inspect", str(path)], capture_output=True, timeout=cli_timeout
            )
        except subprocess.TimeoutExpired:
            stopped = True
            continue
        cli_ms.append((time.perf_counter() - t) * 1000)
        if r.returncode != 0:
            raise SystemExit("bench: inspect failed: " + r.stderr.decode())
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    peak = max(mem.values()) / (1 << 20)
    if cli_ms:
        runs = "" if len(cli_ms) == repeat else f" ({len(cli_ms)} runs)"
        cli_col = f"{med(cli_ms):.0f} ms{runs} | {med(page_ms) / med(cli_ms):.1f}x"
    else:
        cli_col = f"over {cli_timeout} s (stopped) | -"
    print(
        f"| `.{path.suffix[1:]}` {size / (1 << 30):.2f} GiB, {what} | {med(page_ms):.0f} ms | "
        f"{med(stats_ms) / 1000:.1f} s | {cli_col} | {peak:.0f} MiB |",
        flush=True,
    )


def npz_deflated(src, dst):
    """`src` (an `.npz`) rewritten with deflated members, as
    `numpy.savez_compressed` writes them (at zlib level 1, for speed)."""
    import zipfile

    with (
        zipfile.ZipFile(src) as zin,
        zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zout,
    ):
        for name in zin.namelist():
            with zin.open(name) as r, zout.open(name, "w") as w:
                shutil.copyfileobj(r, w, 1 << 22)


def npz_big_endian(src, dst):
    """`src` (an `.npz` of little-endian members) rewritten with big-endian
    members: each `.npy` header's `'<` descr made `'>`, its data byte-swapped."""
    import zipfile

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for name in zin.namelist():
            with zin.open(name) as r, zout.open(name, "w") as w:
                head = r.read(10)
                assert head[:6] == b"\x93NUMPY", name
                if head[6] == 1:
                    n = struct.unpack("<H", head[8:10])[0]
                else:
                    head += r.read(2)
                    n = struct.unpack("<I", head[8:12])[0]
                header = r.read(n)
                m = re.search(rb"'descr': '<[a-z](\d+)'", header)
                assert m, (name, header)
                code = {2: "H", 4: "I", 8: "Q"}[int(m.group(1))]
                w.write(head + header.replace(b"'descr': '<", b"'descr': '>", 1))
                while chunk := r.read(1 << 22):
                    a = array.array(code, chunk)
                    a.byteswap()
                    w.write(a.tobytes())


def pb_varint(f):
    """A protobuf varint read from `f` (a file): (value, bytes read)."""
    v = shift = n = 0
    while True:
        b = f.read(1)[0]
        n += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, n


def pb_fields(f, start, end):
    """The fields of the protobuf message at `start..end` of `f`: (field
    number, wire type, the tag's offset, the value's offset, the value's
    length (wire type 2) or the value)."""
    at = start
    while at < end:
        f.seek(at)
        tag, n = pb_varint(f)
        field, wire = tag >> 3, tag & 7
        if wire == 2:
            length, m = pb_varint(f)
            yield field, wire, at, at + n + m, length
            at += n + m + length
        elif wire == 0:
            v, m = pb_varint(f)
            yield field, wire, at, at + n, v
            at += n + m
        elif wire in (1, 5):
            yield field, wire, at, at + n, None
            at += n + (8 if wire == 1 else 4)
        else:
            raise ValueError(f"wire type {wire} at {at}")


def onnx_initializers(f, size):
    """The ONNX model in `f` (`size` bytes): (graph field's tag offset,
    value offset, length) and the initializers' (offset, length) in it."""
    graph = next(x for x in pb_fields(f, 0, size) if x[0] == 7 and x[1] == 2)
    inits = [
        (v, n) for k, w, _, v, n in pb_fields(f, graph[3], graph[3] + graph[4]) if k == 5 and w == 2
    ]
    return graph, inits


def onnx_float_data(src, dst):
    """`src` (an `.onnx` of f32 initializers in `raw_data`) with each
    initializer's data in packed `float_data` instead: the same bytes,
    field 9 renamed field 4 (both one-byte tags)."""
    shutil.copyfile(src, dst)
    with open(dst, "r+b") as f:
        _, inits = onnx_initializers(f, dst.stat().st_size)
        for v, n in inits:
            fields = list(pb_fields(f, v, v + n))
            assert any(k == 2 and x == 1 for k, _, _, _, x in fields), "not f32"
            for k, w, tag_at, _, _ in fields:
                if k == 9 and w == 2:
                    f.seek(tag_at)
                    f.write(bytes([(4 << 3) | 2]))


def pb_encode_varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def pb_len_field(field, payload_len):
    return pb_encode_varint((field << 3) | 2) + pb_encode_varint(payload_len)


def onnx_int64_data(src, dst, target=1 << 30):
    """An `.onnx` with `src`'s model and graph fields but its initializers
    replaced by int64 tensors of [1024, 4096] in packed `int64_data`
    varints (values -1000..1000: a negative one takes 10 bytes, a positive
    one 1 or 2), as many as make about `target` bytes; answers (tensors,
    elements)."""
    rows, cols = 1024, 4096
    chunks = []
    for seed in range(4):  # 256 Ki elements each, repeated
        chunks.append(
            b"".join(pb_encode_varint((i * 37 + seed) % 2001 - 1000) for i in range(1 << 18))
        )
    reps = rows * cols // (1 << 18)
    count = max(1, round(target / (reps * len(chunks[0]))))
    tensors = []
    for t in range(count):
        name = f"layer{t}/steps".encode()
        data = chunks[t % 4]
        head = (
            b"\x08"
            + pb_encode_varint(rows)
            + b"\x08"
            + pb_encode_varint(cols)
            + b"\x10\x07"
            + pb_len_field(8, len(name))
            + name
            + pb_len_field(7, reps * len(data))
        )
        tensors.append((head, data))
    size = src.stat().st_size
    with open(src, "rb") as f, open(dst, "wb") as out:
        graph, _ = onnx_initializers(f, size)
        # the model's other fields as they are
        for k, w, at, v, n in pb_fields(f, 0, size):
            if not (k == 7 and w == 2):
                end = v + n if w == 2 else None
                if end is None:
                    f.seek(at)
                    _, t = pb_varint(f)
                    if w == 0:
                        _, m = pb_varint(f)
                        end = at + t + m
                    else:
                        end = at + t + (8 if w == 1 else 4)
                f.seek(at)
                out.write(f.read(end - at))
        keep = [
            (at, v + n if w == 2 else None)
            for k, w, at, v, n in pb_fields(f, graph[3], graph[3] + graph[4])
            if not (k == 5 and w == 2)
        ]
        assert all(end is not None for _, end in keep), "a graph field that is not bytes"
        inits = [
            len(pb_len_field(5, len(h) + reps * len(d))) + len(h) + reps * len(d)
            for h, d in tensors
        ]
        out.write(pb_len_field(7, sum(e - a for a, e in keep) + sum(inits)))
        for a, e in keep:
            f.seek(a)
            out.write(f.read(e - a))
        for head, data in tensors:
            out.write(pb_len_field(5, len(head) + reps * len(data)) + head)
            for _ in range(reps):
                out.write(data)
    return count, count * rows * cols


def bench_whole(page, base, cli, tmp, sizes=(48, 32)):
    """The conversions of a file opened by slices that need the whole model:
    an NNabla network of `layers` Affine layers of 16 MiB (48: 768 MiB,
    the page's limit; 63, 1008 MiB, ran out of memory importing) exported
    to ONNX in the page, and that
    ONNX imported back to `.nnp`: time (the click to the download, the file
    read whole in a worker), the converting worker's module memory, and the
    download's sha256 against `mlformats convert` (timed too). The first
    size of `sizes` (layers) whose conversions both succeed ends it."""
    print(
        "| file | page: convert (read whole) | converting worker's module memory "
        "| `mlformats convert` | download = CLI's |"
    )
    print("|---|---|---|---|---|")
    for layers in sizes:
        nnp = big_network(tmp, cli, layers)
        if not isinstance(nnp, pathlib.Path):
            raise SystemExit(f"bench: cannot write big-net.nnp: {nnp}")
        ok, onnx = bench_whole_convert(page, base, cli, nnp, "onnx", f"{layers} Affine layers")
        nnp.unlink()
        if ok:
            ok, back = bench_whole_convert(page, base, cli, onnx, "nnp", "imported back")
            back.unlink(missing_ok=True)
        onnx.unlink(missing_ok=True)
        if ok:
            break


def bench_whole_convert(page, base, cli, path, ext, what):
    """Converts `path` to `.ext` in the page (the whole-file path) and by
    the CLI; prints a row; answers whether the page's download is the CLI's
    output, and that output's path (kept for the next conversion)."""
    size = path.stat().st_size
    out = path.with_name(f"cli-{path.stem}.{ext}")
    t = time.perf_counter()
    r = subprocess.run([cli, "convert", str(path), str(out), "-q"], capture_output=True, text=True)
    cli_s = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"bench: the CLI cannot convert {path.name}: {r.stderr.strip()}")
    if open_by_picker(page, base, path, 120000) != "ready":
        raise SystemExit(
            "bench: the page did not open the file: " + page.inner_text("#error-message")
        )
    if not page.evaluate("window.mlformatsViewer.summary.sliced"):
        raise SystemExit(f"bench: {path.name} was not opened by slices")
    downloads = []

    def on_download(d):
        downloads.append(d)

    page.on("download", on_download)
    value = page.evaluate(f"document.querySelector('#convert-to option[data-ext={ext}]').value")
    page.select_option("#convert-to", value)
    row = f"| `{path.name}` {size / (1 << 20):.0f} MiB ({what}) -> `.{ext}` "
    t = time.perf_counter()
    try:
        page.click("#convert-go")
        page.wait_for_function(
            "['done', 'error'].includes(document.body.dataset.convert)",
            timeout=1800000,
            polling=100,
        )
    except Exception as e:  # the page crashed (out of memory) or never finished
        print(row + f"| failed: {str(e).splitlines()[0]} | - | {cli_s:.1f} s | - |", flush=True)
        page.remove_listener("download", on_download)
        return False, out
    page_s = time.perf_counter() - t
    state = page.evaluate("document.body.dataset.convert")
    how = page.evaluate("document.body.dataset.convertPath")
    mem = page.evaluate("window.mlformatsViewer.memory.convert || 0")
    if state != "done":
        msg = page.inner_text("#error-message")
        print(row + f"| failed ({how}): {msg} | - | {cli_s:.1f} s | - |", flush=True)
        page.remove_listener("download", on_download)
        return False, out
    deadline = time.time() + 60
    while not downloads and time.time() < deadline:
        page.wait_for_timeout(100)
    page.remove_listener("download", on_download)
    got = sha256_file(downloads[0].path()) if downloads else None
    same = got == sha256_file(out)
    if downloads:
        pathlib.Path(downloads[0].path()).unlink(missing_ok=True)
    print(
        row + f"| {page_s:.1f} s ({how}) | {mem / (1 << 20):.0f} MiB | {cli_s:.1f} s "
        f"| {'yes' if same else 'NO'} ({out.stat().st_size / (1 << 20):.0f} MiB) |",
        flush=True,
    )
    return same, out

def residual_nntxt(blocks):
    """An NNabla network of `blocks` residual blocks (ReLU, Sigmoid, Tanh,
    then Add2 of that and the block's input: a skip over three layers) and
    a Concatenate of three block outputs: edges that only a layout routing
    around boxes shows."""
    v, f = [], []

    def var(name):
        v.append(f'  variable {{\n    name: "{name}"\n    type: "Buffer"\n    shape {{\n      dim: -1\n      dim: 8\n    }}\n  }}\n')

    def fun(name, op, ins, out):
        i = "".join(f'    input: "{x}"\n' for x in ins)
        f.append(f'  function {{\n    name: "{name}"\n    type: "{op}"\n{i}    output: "{out}"\n  }}\n')

    var("x")
    prev, outs = "x", []
    for b in range(blocks):
        for op in ["ReLU", "Sigmoid", "Tanh"]:
            var(f"b{b}/{op}")
            fun(f"b{b}/{op}", op, [f"b{b}/ReLU" if op == "Sigmoid" else f"b{b}/Sigmoid" if op == "Tanh" else prev], f"b{b}/{op}")
        var(f"b{b}/add")
        fun(f"b{b}/add", "Add2", [f"b{b}/Tanh", prev], f"b{b}/add")
        prev = f"b{b}/add"
        outs.append(prev)
    var("y")
    fun("concat", "Concatenate", [outs[0], outs[len(outs) // 2], outs[-1]], "y")
    return ('network {\n  name: "residual"\n  batch_size: 1\n' + "".join(v) + "".join(f) + "}\n"
            'executor {\n  name: "runtime"\n  network_name: "residual"\n'
            '  data_variable {\n    variable_name: "x"\n    data_name: "x"\n  }\n'
            '  output_variable {\n    variable_name: "y"\n    data_name: "y"\n  }\n}\n')


def view_scale(page):
    return page.evaluate("Number(/scale\\(([^)]+)\\)/.exec(document.getElementById('viewport').getAttribute('transform'))[1])")


def view_translate(page):
    return page.evaluate("""/translate\\(([^,]+),([^)]+)\\)/.exec(document.getElementById('viewport')
        .getAttribute('transform')).slice(1, 3).map(Number)""")


def if_model_onnx():
    """`y = If(cond, Relu(x), Neg(Neg(x)))` as ONNX bytes (opset 13),
    encoded here: the details panel lists the branches' nodes."""
    def ld(tag, b):
        return pb_len_field(tag, len(b)) + b

    def vi(tag, v):
        return pb_encode_varint(tag << 3) + pb_encode_varint(v)

    def value(name, elem):
        return ld(1, name.encode()) + ld(2, ld(1, vi(1, elem)))

    def node(op, name, ins, outs, attrs=b""):
        return (b"".join(ld(1, i.encode()) for i in ins) + b"".join(ld(2, o.encode()) for o in outs)
                + ld(3, name.encode()) + ld(4, op.encode()) + attrs)

    def branch(name, nodes, out):
        g = b"".join(ld(1, n) for n in nodes) + ld(2, name.encode()) + ld(12, value(out, 1))
        return ld(5, ld(1, name.encode()) + ld(6, g) + vi(20, 5))

    then = branch("then_branch", [node("Relu", "relu_t", ["x"], ["t"])], "t")
    other = branch("else_branch", [node("Neg", "neg_a", ["x"], ["a"]), node("Neg", "neg_e", ["a"], ["e"])], "e")
    graph = (ld(1, node("If", "choose", ["cond"], ["y"], then + other)) + ld(2, b"if_model")
             + ld(11, value("cond", 9)) + ld(11, value("x", 1)) + ld(12, value("y", 1)))
    return vi(1, 8) + ld(2, b"browser.py") + ld(7, graph) + ld(8, ld(1, b"") + vi(2, 13))


def near_2_63_onnx():
    """An ONNX model of two initializers whose values an f64 cannot hold:
    u64 `u` = [9223372036854775813, 9223372036854775807, 1] (2^63 + 5,
    2^63 - 1) and i64 `i` = [-9223372036854775807, 9223372036854775806,
    -3], encoded here (raw_data, little-endian)."""
    def ld(tag, b):
        return pb_len_field(tag, len(b)) + b

    def vi(tag, v):
        return pb_encode_varint(tag << 3) + pb_encode_varint(v)

    def tensor(name, elem, fmt, values):
        return (vi(1, len(values)) + vi(2, elem) + ld(8, name.encode())
                + ld(9, struct.pack("<%d%s" % (len(values), fmt), *values)))

    graph = (ld(2, b"near_2_63")
             + ld(5, tensor("u", 13, "Q", [9223372036854775813, 9223372036854775807, 1]))
             + ld(5, tensor("i", 7, "q", [-9223372036854775807, 9223372036854775806, -3])))
    return vi(1, 8) + ld(2, b"browser.py") + ld(7, graph) + ld(8, ld(1, b"") + vi(2, 13))


def check_subgraph_bodies(page, base, files, fails, shots):
    """An If node's branches expand in the details panel into their node
    lists (ONNX subgraph bodies, issue 32)."""
    name = "if_model.onnx"
    (files / name).write_bytes(if_model_onnx())
    page.goto(f"{base}index.html?url=files/{name}")
    fails.check(wait_done(page) == "ready", f"{name}: not opened")
    page.click("#tabs button[data-tab=graph]")
    page.locator("#viewport .node[data-op=If]").first.click()
    bodies = page.locator("#details details.body")
    fails.check(bodies.count() == 2, f"{name}: {bodies.count()} expandable branches, want 2")
    if bodies.count() != 2:
        return
    fails.check(not page.is_visible("#details details.body li"), f"{name}: the branches open expanded")
    bodies.nth(1).locator("summary").click()
    items = bodies.nth(1).locator("li").all_text_contents()
    summary = bodies.nth(1).locator("summary").text_content()
    fails.check(items == ["Neg neg_a", "Neg neg_e"] and summary == "else_branch: 2 nodes",
                f"{name}: else_branch lists {items} ({summary!r})")
    page.screenshot(path=str(shots / "if-body.png"))
    # drawn: the If opens into a group of its two branches and itself
    page.click("#open-bodies")
    page.wait_for_function("document.querySelectorAll('#viewport .group').length === 3")
    titles = page.locator("#viewport .group .group-title").all_text_contents()
    fails.check(titles == ["▾ If choose", "▾ then_branch", "▾ else_branch"],
                f"{name}: the opened If shows groups {titles}")
    negs = page.locator("#viewport .node[data-op=Neg]").count()
    relus = page.locator("#viewport .node[data-op=Relu]").count()
    fails.check((negs, relus) == (2, 1), f"{name}: {negs} Neg and {relus} Relu boxes drawn, want the branches' 2 and 1")
    page.screenshot(path=str(shots / "if-open.png"))
    page.locator("#viewport .group .group-title").first.click()
    page.wait_for_function("document.querySelectorAll('#viewport .group').length === 0")
    fails.check(page.locator("#viewport .node[data-op=If]").count() == 1, f"{name}: the If does not close again")


def check_groups(page, base, fails, shots):
    """NNabla repeat blocks drawn as groups (issue 32): the nested blocks of
    testdata's loop_nested.nntxt open, two frames with their titles; a
    click on the inner title closes it into one box, a click on that box
    opens it again; the view stays where it was."""
    name = "nnabla_loop_nested.nntxt"
    page.goto(f"{base}index.html?url=files/{name}")
    fails.check(wait_done(page) == "ready", f"{name}: not opened")
    page.click("#tabs button[data-tab=graph]")
    titles = page.locator("#viewport .group .group-title").all_text_contents()
    fails.check(titles == ["▾ repeat RepeatStart_2 ×2", "▾ repeat RepeatStart ×2"], f"{name}: group titles {titles}")
    ports = sorted(page.locator("#viewport .node.port").evaluate_all("els => els.map(e => e.dataset.name)"))
    fails.check(ports == ["RepeatEnd", "RepeatEnd_2", "RepeatStart_2", "Tanh"], f"{name}: ports {ports}")
    page.screenshot(path=str(shots / "groups-open.png"))
    if len(titles) != 2:
        return
    shown = int(page.get_attribute("#graph-count", "data-shown"))
    before = page.get_attribute("#viewport", "transform")
    page.locator("#viewport .group .group-title").nth(1).click()
    page.wait_for_selector("#viewport .node.closed")
    closed = page.locator("#viewport .node.closed")
    after = int(page.get_attribute("#graph-count", "data-shown"))
    fails.check(closed.count() == 1 and closed.first.get_attribute("data-group") == "RepeatStart_2/RepeatStart"
                and after == shown - 4 and page.locator("#viewport .group").count() == 1,
                f"{name}: closing the inner block: {closed.count()} closed boxes, {shown} -> {after} operators")
    fails.check(page.get_attribute("#viewport", "transform") == before, f"{name}: the view moved when a group closed")
    fails.check("(1 closed)" in (page.text_content("#graph-count") or ""), f"{name}: the count does not say a block is closed")
    page.screenshot(path=str(shots / "groups-closed.png"))
    closed.first.click()
    page.wait_for_function("document.querySelectorAll('#viewport .group').length === 2")
    fails.check(page.locator("#viewport .node.closed").count() == 0 and
                int(page.get_attribute("#graph-count", "data-shown")) == shown, f"{name}: the block does not open again")


def check_panels(page, base, files, cli, fails, shots):
    """A file of tensors alone (an ONNX of initializers: a `.params`
    converted) opens at its summary, and its graph tab says there is
    nothing to draw; the details panel widens as its left edge is dragged,
    and keeps that width on the next visit."""
    name = "initializers_only.onnx"
    r = subprocess.run([cli, "convert", str(ROOT / "testdata/cvm/dtypes_core.params"),
                        str(files / name), "-q"], capture_output=True, text=True)
    fails.check(r.returncode == 0, f"{name}: the CLI cannot write it: {r.stderr.strip()}")
    if r.returncode == 0:
        page.goto(f"{base}index.html?url=files/{name}")
        fails.check(wait_done(page) == "ready", f"{name}: not opened")
        fails.check(page.is_visible("#summary") and not page.is_visible("#graph"),
                    f"{name}: does not open at its summary")
        page.click("#tabs button[data-tab=graph]")
        said = page.text_content("#graph-count") or ""
        nodes = page.locator("#viewport .node").count()
        fails.check("no operators" in said and nodes == 0, f"{name}: the graph tab says {said!r}, {nodes} boxes")
        page.screenshot(path=str(shots / "initializers-only-graph.png"))

    page.goto(f"{base}index.html?url=files/convnet.onnx")
    fails.check(wait_done(page) == "ready", "convnet.onnx: not opened")
    page.click("#tabs button[data-tab=graph]")
    fails.check(not page.is_visible("#details-grip"), "the details grip shows without the panel")
    page.locator("#viewport .node[data-op=Conv]").first.click()
    fails.check(page.is_visible("#details-grip"), "no grip on the details panel's edge")
    page.wait_for_selector("#details .first-values")
    wide = page.evaluate("(() => { const d = document.getElementById('details'); return [d.scrollWidth, d.clientWidth]; })()")
    fails.check(wide[0] <= wide[1] + 1, f"details panel: content {wide[0]} px wide in {wide[1]} px: a value runs past its edge")
    before = page.locator("#details").bounding_box()
    grip = page.locator("#details-grip").bounding_box()
    x, y = grip["x"] + grip["width"] / 2, grip["y"] + 100
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 100, y, steps=4)
    page.mouse.move(x - 200, y, steps=4)
    page.mouse.up()
    after = page.locator("#details").bounding_box()
    grown = after["width"] - before["width"]
    fails.check(190 <= grown <= 210 and abs(after["x"] + after["width"] - before["x"] - before["width"]) < 2,
                f"details panel: dragged 200 px, grew {grown:.0f} px")
    page.screenshot(path=str(shots / "details-wide.png"))
    page.reload()
    fails.check(wait_done(page) == "ready", "convnet.onnx: not opened again")
    page.click("#tabs button[data-tab=graph]")
    page.locator("#viewport .node[data-op=Conv]").first.click()
    again = page.locator("#details").bounding_box()["width"]
    fails.check(abs(again - after["width"]) < 2, f"details panel: {again:.0f} px after a reload, want {after['width']:.0f}")
    page.evaluate("localStorage.removeItem('mlformats.detailsWidth')")


def check_graph_aids(page, base, files, cli, fails, shots):
    """Reading aids of issue 32's second part: each operator's reference
    linked from the details panel (ONNX Conv, NNabla Convolution) with
    what our conversions do with it (the support tables' rows) and a
    one-line description drawn from them (also the box's tooltip), a
    minimap on a graph larger than the view (hidden on one that fits)
    whose click moves the view, and the left-to-right toggle that redraws
    the CLI's `graph --direction lr` layout, boxes left to right."""
    for name, op, want in [
            ("convnet.onnx", "Conv", "https://onnx.ai/onnx/operators/onnx__Conv.html"),
            ("nnabla_convnet.nnp", "Convolution",
             "https://nnabla.readthedocs.io/en/latest/python/api/function.html#nnabla.functions.convolution")]:
        if not (files / name).exists():
            fails.check(False, f"{name}: missing for the documentation link")
            continue
        page.goto(f"{base}index.html?url=files/{name}")
        fails.check(wait_done(page) == "ready", f"{name}: not opened")
        page.click("#tabs button[data-tab=graph]")
        page.locator(f"#viewport .node[data-op={op}]").first.click()
        href = page.get_attribute("#doc-link", "href") if page.locator("#doc-link").count() else None
        fails.check(href == want, f"{name}: {op}'s reference link is {href!r}, want {want}")
        fails.check(page.get_attribute("#doc-link", "target") == "_blank", f"{name}: the link opens in this page")
        # what our conversions do with it, from the support tables
        rows = page.locator("#details table.support tr").all_inner_texts()
        want_row = {"Conv": ("ONNX → NNabla", "Convolution"), "Convolution": ("→ ONNX", "Conv")}[op]
        fails.check(any(want_row[0] in r and want_row[1] in r for r in rows),
                    f"{name}: {op}'s conversions {rows!r}, want a row {want_row}")
        # its one-line description, under its name (mlformats::layout::describe)
        said = page.text_content("#op-description") if page.locator("#op-description").count() else None
        want_said = {"Conv": "ONNX Conv → NNabla Convolution", "Convolution": "NNabla Convolution → ONNX Conv"}[op]
        fails.check(said is not None and said.startswith(want_said),
                    f"{name}: {op}'s description {said!r}, want one starting {want_said!r}")
        tip = page.evaluate(f"(document.querySelector('#viewport .node[data-op={op}] > title') || {{}}).textContent")
        fails.check(tip == said, f"{name}: {op}'s box tooltip {tip!r}, want its description")
        page.screenshot(path=str(shots / f"doc-link-{name}.png"))
    # a graph that fits has no minimap
    small = "residual1.nntxt"
    (files / small).write_text(residual_nntxt(1))
    page.goto(f"{base}index.html?url=files/{small}")
    wait_done(page)
    page.click("#tabs button[data-tab=graph]")
    fails.check(not page.is_visible("#minimap"), f"{small}: a minimap on a graph that fits")
    # a tall graph has one; a click in it moves the view there
    name = "residual.nntxt"
    page.goto(f"{base}index.html?url=files/{name}")
    fails.check(wait_done(page) == "ready", f"{name}: not opened")
    page.click("#tabs button[data-tab=graph]")
    fails.check(page.is_visible("#minimap"), f"{name}: no minimap on a graph taller than the view")
    if page.is_visible("#minimap"):
        box = page.locator("#minimap canvas").bounding_box()
        frame0 = page.locator("#minimap .frame").bounding_box()
        before = view_translate(page)
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.9)
        after = view_translate(page)
        frame1 = page.locator("#minimap .frame").bounding_box()
        fails.check(after[1] < before[1] - 500, f"{name}: a click low in the minimap moved the view {before} -> {after}")
        fails.check(frame1["y"] > frame0["y"] + 20, f"{name}: the minimap's frame did not follow ({frame0} -> {frame1})")
        # the middle of the view now shows the bottom of the drawing: the
        # Concatenate box is in view
        inside = page.evaluate("""(() => { const v = document.getElementById('graph-svg').getBoundingClientRect();
            const b = document.querySelector('#viewport .node[data-op=Concatenate]').getBoundingClientRect();
            return b.top >= v.top && b.bottom <= v.bottom; })()""")
        fails.check(inside, f"{name}: after the minimap click the bottom of the graph is not in view")
        # a drag in it moves the view as well
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.9)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.3, steps=5)
        page.mouse.up()
        fails.check(view_translate(page)[1] > after[1] + 300, f"{name}: a drag in the minimap did not move the view")
        page.screenshot(path=str(shots / "minimap.png"))
    # left to right: the CLI's `--direction lr` layout, redrawn on a click
    r = subprocess.run([cli, "graph", str(files / name), "--to", "layout", "--direction", "lr"],
                       capture_output=True, text=True)
    fails.check(r.returncode == 0, f"{name}: graph --direction lr: {r.stderr.strip()}")
    if r.returncode != 0:
        return
    want = json.loads(r.stdout)
    page.click("#direction")
    page.wait_for_function("window.mlformatsViewer.layout && window.mlformatsViewer.layout.direction === 'lr'")
    got = page.evaluate("""[...document.querySelectorAll('#viewport polyline.edge')].map(p =>
        [Number(p.dataset.from), Number(p.dataset.to), p.getAttribute('points')])""")
    cli_edges = sorted([e["from"], e["to"], " ".join(f"{x:g},{y:g}" for x, y in e["points"])] for e in want["edges"])
    page_edges = sorted([f, t, " ".join(f"{float(a):g},{float(b):g}" for a, b in (q.split(",") for q in pts.split()))]
                        for f, t, pts in got)
    fails.check(page_edges == cli_edges, f"{name}: the page's left-to-right edges are not the CLI's --direction lr")
    # boxes left to right: each layer right of the one before, in the page
    xs = page.evaluate("""[...document.querySelectorAll('#viewport .node')].map(g => {
        const n = window.mlformatsViewer.layout.nodes[Number(g.dataset.index)], r = g.getBoundingClientRect();
        return [n.layer, r.left, r.right]; })""")
    later = [(a, b) for a in xs for b in xs if b[0] == a[0] + 1]
    fails.check(later and all(a[2] < b[1] for a, b in later), f"{name}: left to right, a layer is not right of the one before")
    fails.check(want["width"] > want["height"] and page.is_visible("#direction.on"), f"{name}: not drawn left to right")
    inside = page.evaluate("""(() => { const v = document.getElementById('graph-svg').getBoundingClientRect();
        const b = document.querySelector('#viewport .node[data-op=input]').getBoundingClientRect();
        return b.left >= v.left && b.right <= v.right && b.top >= v.top && b.bottom <= v.bottom; })()""")
    fails.check(inside, f"{name}: left to right, the input box is not in view")
    fails.check(page.is_visible("#minimap"), f"{name}: left to right, no minimap on a graph wider than the view")
    page.screenshot(path=str(shots / "left-to-right.png"))
    # l switches back
    page.click("#graph-bar", position={"x": 2, "y": 2})  # the bar, not a button on it
    page.keyboard.press("l")
    page.wait_for_function("window.mlformatsViewer.layout.direction === 'tb'")
    fails.check(not page.is_visible("#direction.on"), f"{name}: l did not switch back to top to bottom")


def check_reading(page, base, files, cli, fails, shots):
    """The graph as the library lays it out (issue 32): every edge of the
    CLI's `graph --to layout` drawn as its own polyline with the same points
    (skip connections and Concatenate's three inputs included), boxes
    coloured by family, opened at scale 1 at the inputs, keys (/ f + -),
    SVG and PNG export; 64-bit integers shown exactly (u64 up to 2^64 - 1,
    u64 and i64 values near ±2^63 that an f64 cannot hold, in values and
    statistics); every metadata_props entry of an ONNX file in the model
    properties."""
    name = "residual.nntxt"
    (files / name).write_text(residual_nntxt(12))
    r = subprocess.run([cli, "graph", str(files / name), "--to", "layout"], capture_output=True, text=True)
    fails.check(r.returncode == 0, f"{name}: graph --to layout: {r.stderr.strip()}")
    if r.returncode != 0:
        return
    want = json.loads(r.stdout)
    page.goto(f"{base}index.html?url=files/{name}")
    fails.check(wait_done(page) == "ready", f"{name}: not opened")
    page.click("#tabs button[data-tab=graph]")
    got = page.evaluate("""[...document.querySelectorAll('#viewport polyline.edge')].map(p =>
        [Number(p.dataset.from), Number(p.dataset.to), p.dataset.tensor, p.getAttribute('points')])""")
    cli_edges = sorted([e["from"], e["to"], e["tensor"], " ".join(f"{x:g},{y:g}" for x, y in e["points"])]
                       for e in want["edges"])
    page_edges = sorted([f, t, n, " ".join(f"{float(a):g},{float(b):g}" for a, b in (q.split(",") for q in pts.split()))]
                        for f, t, n, pts in got)
    fails.check(len(got) == len(want["edges"]) == int(page.get_attribute("#graph-count", "data-edges")),
                f"{name}: {len(got)} polylines, the layout has {len(want['edges'])} edges")
    fails.check(page_edges == cli_edges, f"{name}: the page's edges are not the library's layout")
    nodes = want["nodes"]
    skips = [e for e in want["edges"] if nodes[e["to"]]["op"] == "Add2" and nodes[e["to"]]["layer"] - nodes[e["from"]]["layer"] >= 3]
    fails.check(len(skips) == 12, f"{name}: {len(skips)} skip connections in the layout, want 12")
    for e in skips:
        sel = f'#viewport polyline.edge[data-from="{e["from"]}"][data-to="{e["to"]}"]'
        fails.check(page.locator(sel).count() == 1, f"{name}: skip {e['tensor']} not drawn")
    concat = next(n["id"] for n in nodes if n["op"] == "Concatenate")
    fails.check(page.locator(f'#viewport polyline.edge[data-to="{concat}"]').count() == 3,
                f"{name}: Concatenate's three inputs are not all drawn")
    fam = page.evaluate("""Object.fromEntries([...document.querySelectorAll('#viewport .node')].map(g =>
        [g.dataset.op, [g.dataset.family, g.querySelector('rect').getAttribute('fill')]]))""")
    for op, family in [("Add2", "elementwise"), ("ReLU", "activation"), ("Concatenate", "shape"), ("input", "io")]:
        n = next(n for n in nodes if n["op"] == op)
        fails.check(fam.get(op) == [family, n["fill"]], f"{name}: {op} drawn as {fam.get(op)}, want {family} {n['fill']}")
    # opens readable at the top: scale 1, the input box in view
    fails.check(view_scale(page) == 1, f"{name}: opens at scale {view_scale(page)}")
    inside = page.evaluate("""(() => { const v = document.getElementById('graph-svg').getBoundingClientRect();
        const b = document.querySelector('#viewport .node[data-op=input]').getBoundingClientRect();
        return b.top >= v.top && b.bottom <= v.bottom && b.left >= v.left && b.right <= v.right; })()""")
    fails.check(inside, f"{name}: the input box is not in view when the graph opens")
    page.screenshot(path=str(shots / "residual-open.png"))
    # the shape labels of edges entering one box neither overlap nor touch
    # (Add2 reads two): 3 px apart at least
    overlaps = page.evaluate("""(() => { const r = [...document.querySelectorAll('#viewport .edge-label')]
        .map(t => t.getBoundingClientRect()); let n = 0;
        for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++)
          if (r[i].left < r[j].right + 3 && r[j].left < r[i].right + 3 && r[i].top < r[j].bottom && r[j].top < r[i].bottom) n++;
        return [r.length, n]; })()""")
    fails.check(overlaps[0] > 0 and overlaps[1] == 0, f"{name}: edge labels (count, overlapping pairs): {overlaps}")
    # keys: f fits the tall graph (smaller than 1), + zooms, / finds
    page.click("#graph-bar", position={"x": 2, "y": 2})  # the bar, not a button on it
    page.keyboard.press("f")
    fitted = view_scale(page)
    fails.check(fitted < 1, f"{name}: f: scale {fitted}")
    page.screenshot(path=str(shots / "residual-fit.png"))
    page.keyboard.press("+")
    fails.check(abs(view_scale(page) - fitted * 1.25) < 1e-6, f"{name}: +: scale {view_scale(page)}")
    page.keyboard.press("-")
    fails.check(abs(view_scale(page) - fitted) < 1e-6, f"{name}: -: scale {view_scale(page)}")
    page.keyboard.press("/")
    fails.check(page.evaluate("document.activeElement.id") == "search", f"{name}: / does not focus the search")
    # search results as a list: one row per hit, a click selects it
    page.keyboard.type("Add2")
    rows = page.locator("#search-results li[data-index]")
    fails.check(rows.count() == 12 and page.get_attribute("#search-count", "data-count") == "12",
                f"{name}: {rows.count()} rows listed for Add2, want 12")
    pick = rows.nth(5).get_attribute("data-index")
    rows.nth(5).click()
    fails.check(page.is_visible("#details") and page.get_attribute("#viewport .node.selected", "data-index") == pick,
                f"{name}: clicking a listed hit does not select it")
    page.screenshot(path=str(shots / "residual-search-list.png"))
    page.press("#search", "Escape")
    fails.check(not page.is_visible("#search-results"), f"{name}: Escape leaves the list of hits open")
    # export: the SVG holds every edge, the PNG is a PNG of the drawing's size
    with page.expect_download(timeout=30000) as dl:
        page.click("#export-svg")
    svg = pathlib.Path(dl.value.path()).read_text()
    fails.check(dl.value.suggested_filename == "residual.svg", f"SVG export named {dl.value.suggested_filename}")
    fails.check(svg.count("<polyline") == len(want["edges"]) and svg.startswith("<svg"), f"{name}: the SVG export")
    with page.expect_download(timeout=30000) as dl:
        page.click("#export-png")
    png = pathlib.Path(dl.value.path()).read_bytes()
    ok = png[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", png[16:24]) if ok else (0, 0)
    fails.check(ok and w >= want["width"] and h >= want["height"], f"{name}: PNG export {w}x{h}")
    (shots / "residual-export.png").write_bytes(png)

    # 64-bit integers, exactly: values and statistics
    name = "onnx_typed_uint64_data.onnx"
    if (files / name).exists():
        page.goto(f"{base}index.html?url=files/{name}")
        wait_done(page)
        page.wait_for_function("document.body.dataset.stats === 'done'", timeout=20000)
        page.click("#tabs button[data-tab=tensors]")
        page.click('#tensor-table tr[data-name="u64"]')
        page.wait_for_selector("#values-text")
        text = page.text_content("#values-text")
        fails.check(text == "0 1 18446744073709551615 9223372036854775808", f"{name}: values {text!r}")
        row = page.evaluate("""[...document.querySelector('#tensor-table tr[data-name="u64"]').children].map(c => c.textContent)""")
        fails.check(row[5:7] == ["0", "18446744073709551615"], f"{name}: statistics {row[5:7]}")
        page.screenshot(path=str(shots / "u64-values.png"))
    # near 2^63, where an f64 is 1,024 apart: values and statistics exact
    name = "near_2_63.onnx"
    (files / name).write_bytes(near_2_63_onnx())
    page.goto(f"{base}index.html?url=files/{name}")
    fails.check(wait_done(page) == "ready", f"{name}: not opened")
    page.wait_for_function("document.body.dataset.stats === 'done'", timeout=20000)
    page.click("#tabs button[data-tab=tensors]")
    for tensor, values, lo, hi in [
            ("u", "9223372036854775813 9223372036854775807 1", "1", "9223372036854775813"),
            ("i", "-9223372036854775807 9223372036854775806 -3", "-9223372036854775807", "9223372036854775806")]:
        page.click(f'#tensor-table tr[data-name="{tensor}"]')
        page.wait_for_function("(want) => (document.getElementById('values-text') || {}).textContent === want",
                               arg=values, timeout=10000)
        text = page.text_content("#values-text")
        fails.check(text == values, f"{name}: {tensor} values {text!r}, want {values!r}")
        row = page.evaluate(f"""[...document.querySelector('#tensor-table tr[data-name="{tensor}"]').children].map(c => c.textContent)""")
        fails.check(row[5:7] == [lo, hi], f"{name}: {tensor} statistics {row[5:7]}, want {[lo, hi]}")
    page.screenshot(path=str(shots / "near-2-63-values.png"))

    # the model properties: every metadata_props entry, appended to an
    # ONNX export of the CLI (a repeated field may follow the others)
    name = "props.onnx"
    r = subprocess.run([cli, "convert", str(ROOT / "testdata/nnabla/convnet.nnp"), str(files / name), "-q"],
                       capture_output=True, text=True)
    fails.check(r.returncode == 0, f"{name}: {r.stderr.strip()}")
    if r.returncode != 0:
        return
    props = {"author": "Ultralytics", "license": "AGPL-3.0 License",
             "names": "{0: 'person', 1: 'bicycle', 2: 'car'}", "stride": "32"}

    def field(tag, payload):
        out, n = bytearray([tag << 3 | 2]), len(payload)
        while n >= 0x80:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        return bytes(out + bytes([n])) + payload

    extra = b"".join(field(14, field(1, k.encode()) + field(2, v.encode())) for k, v in props.items())
    with open(files / name, "ab") as f:
        f.write(extra + field(6, b"a detector, with its class names"))
    page.goto(f"{base}index.html?url=files/{name}")
    fails.check(wait_done(page) == "ready", f"{name}: not opened")
    page.click("#tabs button[data-tab=summary]")
    rows = page.evaluate("""Object.fromEntries([...document.querySelectorAll('#properties tr')]
        .filter(r => r.children.length === 2).map(r => [r.children[0].textContent, r.children[1].textContent]))""")
    for k, v in {**props, "doc_string": "a detector, with its class names", "producer": "mlformats"}.items():
        fails.check(rows.get(k) == v, f"{name}: property {k} shown as {rows.get(k)!r}, want {v!r}")
    fails.check("ir_version" in rows and "opset" in rows, f"{name}: properties {sorted(rows)}")
    page.screenshot(path=str(shots / "properties.png"))

def box_text(page, name):
    """The lines drawn in the box of the node named `name`."""
    return page.evaluate("""(name) => [...document.querySelectorAll('#viewport .node')]
        .filter(g => g.dataset.name === name).flatMap(g => [...g.querySelectorAll('text')].map(t => t.textContent))""", name)


def check_onnx_styles(page, base, files, cli, fails, shots):
    """Models as exporters write them (testdata/onnx_styles, made by
    tools/onnx-styles/make_models.py): a YOLOv8-style graph whose bypass
    edges (each SiLU's Conv→Mul, the C2f Split→Concat) are polylines of
    their own; its boxes' names, weights and attributes shown and hidden
    by the keys n, w and a, the view kept; a selected box never left
    behind the details panel; a paddle2onnx-style graph whose Constant
    weights are folded into the boxes that read them."""
    name = "onnx_styles_yolov8_style.onnx"
    r = subprocess.run([cli, "graph", str(files / name), "--to", "layout"], capture_output=True, text=True)
    fails.check(r.returncode == 0, f"{name}: graph --to layout: {r.stderr.strip()}")
    if r.returncode != 0:
        return
    want = json.loads(r.stdout)
    ids = {n["name"]: n["id"] for n in want["nodes"]}
    page.goto(f"{base}index.html?url=files/{name}")
    fails.check(wait_done(page) == "ready", f"{name}: not opened")
    page.click("#tabs button[data-tab=graph]")
    edges = page.evaluate("""[...document.querySelectorAll('#viewport polyline.edge')].map(p =>
        [Number(p.dataset.from), Number(p.dataset.to), p.dataset.tensor, p.getAttribute('points').split(' ').length])""")
    fails.check(sorted(e[:3] for e in edges) == sorted([e["from"], e["to"], e["tensor"]] for e in want["edges"]),
                f"{name}: the page's edges are not the layout's")
    between = lambda a, b: sorted(e[2] for e in edges if e[0] == ids.get(a) and e[1] == ids.get(b))
    fails.check(between("/model.1/Split", "/model.1/Concat") == ["/model.1/Split_output_0", "/model.1/Split_output_1"],
                f"{name}: Split→Concat bypasses drawn: {between('/model.1/Split', '/model.1/Concat')}")
    for p in ["/model.0", "/model.1/cv1", "/model.1/m.0/cv1", "/model.1/m.0/cv2", "/model.1/cv2"]:
        got = between(f"{p}/conv/Conv", f"{p}/act/Mul")
        fails.check(got == [f"{p}/conv/Conv_output_0"], f"{name}: {p}: Conv→Mul bypass drawn: {got}")
    fails.check(sum(1 for e in edges if e[1] == ids.get("/model.1/Concat")) == 3, f"{name}: Concat's three inputs")
    # the two bypasses join the same boxes: drawn apart, each seen
    bypass = page.evaluate("""(to) => [...document.querySelectorAll('#viewport polyline.edge')]
        .filter(p => p.dataset.tensor.startsWith('/model.1/Split_output_') && p.dataset.to === String(to))
        .map(p => p.getAttribute('points'))""", ids.get("/model.1/Concat"))
    fails.check(len(bypass) == 2 and bypass[0] != bypass[1], f"{name}: the Split→Concat bypasses run on one line: {bypass}")
    page.screenshot(path=str(shots / "yolov8-style.png"))

    # n, w, a: what the boxes show, the view kept
    conv = "/model.0/conv/Conv"
    full = ["Conv", conv, "model.0.conv.weight ⟨8×3×3×3⟩", "model.0.conv.bias ⟨8⟩"]
    fails.check(box_text(page, conv) == full, f"{name}: the Conv box shows {box_text(page, conv)}")
    page.evaluate("window.mlformatsViewer.view.zoom(1.25)")
    view = view_translate(page), view_scale(page)
    page.click("#graph-bar", position={"x": 2, "y": 2})  # the bar, not a button on it
    # (four, the most telling for a convolution first: stored sorted by
    # name, dilations is fifth)
    attrs = ["kernel_shape = 3,3", "strides = 2,2", "pads = 1,1,1,1", "group = 1"]
    for key, lines, on in [("n", [full[0], *full[2:]], "names"), ("w", ["Conv"], "weights"),
                           ("a", ["Conv", *attrs], "attributes"), ("n", ["Conv", conv, *attrs], "names"),
                           ("w", [*full, *attrs], "weights"), ("a", full, "attributes")]:
        page.keyboard.press(key)
        try:
            page.wait_for_function("""([name, want]) => JSON.stringify([...document.querySelectorAll('#viewport .node')]
                .filter(g => g.dataset.name === name).flatMap(g => [...g.querySelectorAll('text')].map(t => t.textContent)))
                === JSON.stringify(want)""", arg=[conv, lines], timeout=5000)
        except Exception:
            pass
        fails.check(box_text(page, conv) == lines, f"{name}: after {key}, the Conv box shows {box_text(page, conv)}, want {lines}")
        shown = page.evaluate(f"window.mlformatsViewer.labels.{on}")
        fails.check(page.is_visible(f"#show-{on}.on") == shown, f"{name}: the {on} button does not say it is {shown}")
        fails.check((view_translate(page), view_scale(page)) == view, f"{name}: {key} moved the view")
        if key == "a" and len(lines) > 1:
            height = page.evaluate("(n) => Number(document.querySelector(`#viewport .node[data-name='${n}'] rect`).getAttribute('height'))", conv)
            fails.check(height == 8 + 13 * len(lines), f"{name}: the box is {height} high for {len(lines)} lines")
    # the buttons do the same
    page.click("#show-attributes")
    page.wait_for_function("window.mlformatsViewer.labels.attributes && document.querySelector('#show-attributes.on')")
    fails.check(box_text(page, conv) == [*full, *attrs], f"{name}: the Attributes button: {box_text(page, conv)}")
    page.screenshot(path=str(shots / "yolov8-style-attributes.png"))

    # a selected box is never behind the details panel: a box at the right
    # of the view, clicked, moves left of the panel that opens over it
    page.evaluate("document.getElementById('details').style.width = '700px'")
    for target in ["/model.1/cv2/conv/Conv", "/model.0/act/Sigmoid"]:
        page.keyboard.press("Escape")
        page.evaluate("""(name) => { const v = window.mlformatsViewer.view, n = window.mlformatsViewer.layout.nodes
            .find(n => n.name === name), r = document.getElementById('graph-svg').getBoundingClientRect();
            v.restore({ k: 1, x: r.width - 40 - n.x - n.width, y: r.height / 2 - n.y }); }""", target)
        page.locator(f'#viewport .node[data-name="{target}"]').click()
        box = page.locator(f'#viewport .node[data-name="{target}"]').bounding_box()
        panel = page.locator("#details").bounding_box()
        view = page.locator("#graph-svg").bounding_box()
        fails.check(page.is_visible("#details") and box["x"] + box["width"] <= panel["x"] and box["x"] >= view["x"]
                    and box["y"] >= view["y"] and box["y"] + box["height"] <= view["y"] + view["height"],
                    f"{name}: the selected {target} at {box} is not in view left of the details at {panel}")
    page.screenshot(path=str(shots / "selected-beside-details.png"))
    # a box found by the search list: centred left of the panel
    page.fill("#search", "Sigmoid")
    page.locator("#search-results li[data-index]").nth(3).click()
    sel = page.locator("#viewport .node.selected").bounding_box()
    panel = page.locator("#details").bounding_box()
    fails.check(sel is not None and sel["x"] + sel["width"] <= panel["x"],
                f"{name}: the hit picked from the list at {sel} is behind the details at {panel}")
    page.evaluate("document.getElementById('details').style.width = ''")

    name = "onnx_styles_paddle2onnx_style.onnx"
    page.goto(f"{base}index.html?url=files/{name}")
    fails.check(wait_done(page) == "ready", f"{name}: not opened")
    page.click("#tabs button[data-tab=graph]")
    fails.check(page.locator("#viewport .node[data-op=Constant]").count() == 0, f"{name}: Constant nodes drawn as boxes")
    counts = [page.get_attribute("#graph-count", f"data-{k}") for k in ("nodes", "shown")]
    fails.check(counts == ["10", "5"], f"{name}: nodes and boxes shown {counts}, want 10 and 5")
    fails.check(" 5 folded" in page.text_content("#graph-count"), f"{name}: {page.text_content('#graph-count')}")
    conv = box_text(page, "p2o.Conv.0")
    fails.check(conv == ["Conv", "p2o.Conv.0", "conv2d_0.w_0 ⟨8×3×3×3⟩", "conv2d_0.b_0 ⟨8⟩"],
                f"{name}: the Conv box shows {conv}")
    fails.check(box_text(page, "p2o.MatMul.0")[2:] == ["linear_0.w_0 ⟨512×4⟩"], f"{name}: the MatMul box")
    fails.check(page.locator('#viewport polyline.edge[data-tensor="conv2d_0.w_0"]').count() == 0,
                f"{name}: an edge drawn for a folded weight")
    page.locator('#viewport .node[data-name="p2o.Conv.0"]').click()
    page.wait_for_selector("#details .hist", timeout=10000)
    heads = page.evaluate("[...document.querySelectorAll('#details h4')].map(h => h.textContent)")
    fails.check("Weight conv2d_0.w_0" in heads and "Weight conv2d_0.b_0" in heads, f"{name}: the details list {heads}")
    page.screenshot(path=str(shots / "paddle2onnx-style.png"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dist", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--per-format", type=int, default=4,
                    help="samples of each file extension, the largest first (0: all)")
    ap.add_argument("--extra", action="append", default=[], help="another file to open")
    ap.add_argument("--big-mib", type=int, default=200,
                    help="size of the generated big file, in MiB (0: no big-file check)")
    ap.add_argument("--no-huge", dest="huge", action="store_false",
                    help="no sparse .safetensors past 4 GiB")
    ap.add_argument("--bench", action="store_true",
                    help="only the 1 GiB benchmark: the page against mlformats inspect")
    ap.add_argument("--bench-extra", action="append", default=[], metavar="FILE=WHAT",
                    help="another file for --bench (WHAT: the row's words on it)")
    ap.add_argument("--bench-repeat", type=int, default=5, help="--bench: runs of each file")
    ap.add_argument("--bench-tensors", type=int, default=64,
                    help="--bench: f32 tensors of 16 MiB (64: 1 GiB)")
    a = ap.parse_args()
    cli = str(pathlib.Path(a.cli).resolve())
    shots = pathlib.Path(a.out)
    shots.mkdir(parents=True, exist_ok=True)
    fails = Failures()

    tmp = pathlib.Path(tempfile.mkdtemp())
    site = tmp / "site"
    shutil.copytree(a.dist, site)
    files = site / "files"
    files.mkdir()
    samples = []
    for p in sorted((ROOT / "testdata").rglob("*")):
        if p.is_file() and p.suffix in SAMPLE_EXT and "fuzz-regressions" not in p.parts:
            name = "_".join(p.relative_to(ROOT / "testdata").parts)
            shutil.copy(p, files / name)
            samples.append(name)
    if a.per_format:
        by_ext = {}
        for s in sorted(samples, key=lambda s: -(files / s).stat().st_size):
            by_ext.setdefault(pathlib.Path(s).suffix, []).append(s)
        keep = {s for v in by_ext.values() for s in v[: a.per_format]}
        # the files the checks below click into
        keep |= {"nnabla_convnet.nnp", "tennis_py_convnet.tsm", "convnet.onnx", "tennis.onnx",
                 "nnabla_convnet.nntxt", "symbolic.onnx", "onnx_typed_uint64_data.onnx",
                 "nnabla_loop_nested.nntxt", "onnx_styles_yolov8_style.onnx",
                 "onnx_styles_paddle2onnx_style.onnx"}
        samples = [s for s in samples if s in keep]
    extras = {pathlib.Path(x).name for x in a.extra}
    for x in a.extra:
        x = pathlib.Path(x)
        shutil.copy(x, files / x.name)
        samples.append(x.name)
    # formats testdata/ keeps no sample of: made by the CLI (and two ONNX
    # exports the checks below click into)
    for src, dst in [("nnabla/convnet.nnp", "convnet.onnx"),
                     ("tennis/" + sorted(f for f in os.listdir(ROOT / "testdata/tennis") if f.endswith(".tsm") and f != "py_dtypes.tsm")[0], "tennis.onnx"),
                     ("cvm/dtypes_core.params", "dtypes_core.safetensors"),
                     ("onnx/nnc_elman_net.nnp", "symbolic.onnx")]:
        r = subprocess.run([cli, "convert", str(ROOT / "testdata" / src), str(files / dst), "-q"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            samples.append(dst)
        else:
            print("note: could not make", dst, r.stderr.strip())

    # the sparse file past 4 GiB: inspect hashes all of it (minutes with a
    # debug CLI), so it runs while the other checks do
    huge = tmp / "huge.safetensors"
    huge_written = huge_safetensors(huge) if a.huge and not a.bench else None
    huge_inspect = (subprocess.Popen([cli, "inspect", "--json", str(huge)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True) if huge_written else None)

    srv, base = serve(site)
    console = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=a.chromium, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.on("console", lambda m: m.type == "error" and console.append(f"{page.url}: {m.text}"))
        page.on("pageerror", lambda e: console.append(f"{page.url}: {e}"))

        if a.bench:
            extra = [x.split("=", 1) if "=" in x else (x, "") for x in a.bench_extra]
            bench(page, base, cli, tmp, extra, a.bench_repeat, a.bench_tensors)
            browser.close()
            srv.shutdown()
            shutil.rmtree(tmp, ignore_errors=True)
            return

        if a.big_mib:
            check_big(page, base, cli, fails, shots, tmp, a.big_mib)
            check_big_whole(page, base, cli, fails, shots, tmp)

        t0 = time.time()
        docs = {}
        seen_ext = set()
        for name in samples:
            ext = pathlib.Path(name).suffix
            docs[name] = check_sample(page, base, name, files / name, cli, fails, shots,
                                      screenshot=ext not in seen_ext or name in extras)
            seen_ext.add(ext)
        print(f"{len(samples)} samples opened in {time.time() - t0:.1f} s", flush=True)

        # click a node: its attributes are the ones inspect lists (ONNX)
        for name in ["convnet.onnx", "tennis.onnx"]:
            doc = docs.get(name)
            if not doc:
                continue
            page.goto(f"{base}index.html?url=files/{name}")
            wait_done(page)
            nodes = doc["graph"]["graphs"][0]["nodes"]
            k = next((i for i, n in enumerate(nodes) if n["attributes"]), None)
            if k is None:
                continue
            target = nodes[k]
            page.click(f"#viewport .node[data-name=\"{target['name']}\"]") if target["name"] else \
                page.locator(f"#viewport .node[data-op=\"{target['op']}\"]").first.click()
            attrs = page.evaluate("[...document.querySelectorAll('#details .attrs tr')].map(r => r.children[0].textContent)")
            listed = [a for a in target["attributes"] if not a.startswith("#")]  # (internal fields left out)
            fails.check(attrs == listed, f"{name}: clicked {target['op']}: attributes {attrs}, inspect {listed}")
            page.screenshot(path=str(shots / f"{name}-details.png"))
            # search by op
            op = target["op"]
            page.fill("#search", op)
            n_found = int(page.get_attribute("#search-count", "data-count"))
            want = sum(1 for n in nodes if op.lower() in n["op"].lower() or op.lower() in n["name"].lower())
            fails.check(n_found == want, f"{name}: search {op!r} found {n_found}, want {want}")

        # a large graph is navigable: search centres a hit at a readable
        # scale, clicking it shows its details (screenshots of both)
        for name in sorted(extras):
            doc = docs.get(name)
            if not doc or not doc.get("graph"):
                continue
            page.goto(f"{base}index.html?url=files/{name}")
            wait_done(page)
            page.click("#tabs button[data-tab=graph]")
            op = doc["graph"]["graphs"][0]["nodes"][len(doc["graph"]["graphs"][0]["nodes"]) // 2]["op"]
            page.fill("#search", op)
            page.press("#search", "Enter")
            found = int(page.get_attribute("#search-count", "data-count"))
            fails.check(found > 0, f"{name}: search {op!r} found nothing")
            scale = page.evaluate("Number(/scale\\(([^)]+)\\)/.exec(document.getElementById('viewport').getAttribute('transform'))[1])")
            fails.check(scale >= 0.8, f"{name}: a search hit is shown at scale {scale}")
            page.screenshot(path=str(shots / f"{name}-search.png"))
            page.press("#search", "Escape")  # the list of hits closes
            hit = page.locator("#viewport .node.hit").nth(min(1, found - 1))
            hit.click()
            fails.check(page.is_visible("#details"), f"{name}: clicking a node shows no details")
            page.screenshot(path=str(shots / f"{name}-node.png"))
            if name.endswith(".tsm"):
                # a TenniS module (the SeetaFace6 detector: --extra
                # face_detector.tsm): the chooser names its network, the
                # details list no internal `#op`/`#name` field, and its
                # boxes are described (the export to ONNX)
                chooser = page.evaluate("[...document.querySelectorAll('#network option')].map(o => o.textContent)")
                fails.check(all(t.strip() not in ("", "network") for t in chooser), f"{name}: network chooser {chooser!r}")
                keys = page.evaluate("[...document.querySelectorAll('#details table.attrs tr td:first-child')].map(c => c.textContent)")
                fails.check(not any(k.startswith("#") for k in keys), f"{name}: internal fields as attributes {keys}")
                said = page.text_content("#op-description") if page.locator("#op-description").count() else ""
                fails.check(said.startswith("TenniS "), f"{name}: the node's description {said!r}")

        # click a node with a weight: statistics, histogram and first values appear
        name = "nnabla_convnet.nnp"
        if name in docs and docs[name]:
            page.goto(f"{base}index.html?url=files/{name}")
            wait_done(page)
            page.locator("#viewport .node[data-op=Convolution]").first.click()
            fails.check(page.locator("#details .hist").count() >= 1, f"{name}: no histogram for a weight")
            fails.check(page.locator("#details .first-values").count() >= 1, f"{name}: no values for a weight")
            page.screenshot(path=str(shots / "convnet-node.png"))
            # statistics stream in from the worker
            page.wait_for_function("document.body.dataset.stats === 'done'", timeout=20000)
            page.click("#tabs button[data-tab=tensors]")
            page.fill("#filter", "conv")
            shown = int(page.get_attribute("#totals", "data-count"))
            want = sum(1 for t in docs[name]["tensors"] if "conv" in t["name"].lower())
            fails.check(shown == want, f"{name}: filter shows {shown}, want {want}")
            page.screenshot(path=str(shots / "convnet-tensors.png"))

        check_reading(page, base, files, cli, fails, shots)
        check_graph_aids(page, base, files, cli, fails, shots)
        check_onnx_styles(page, base, files, cli, fails, shots)
        check_subgraph_bodies(page, base, files, fails, shots)
        check_panels(page, base, files, cli, fails, shots)
        check_groups(page, base, fails, shots)

        # convert and download: the bytes the CLI writes
        converted = {}
        for name in ["nnabla_convnet.nnp", "tennis_py_convnet.tsm"]:
            if name in docs and docs[name]:
                converted[name] = check_convert(page, base, name, files / name, cli, fails,
                                                shots, tmp)
            fails.check(converted.get(name, 0) >= 3, f"{name}: fewer than 3 conversions checked")
        if all(docs.get(n) for n in {c[0] for c in CONVERT_OPTIONS}):
            same, refused = check_convert_options(page, base, files, cli, fails, shots, tmp)
            fails.check(same + refused == len(CONVERT_OPTIONS), "convert with options: not every case checked")
        else:
            fails.check(False, "convert with options: a sample is missing")

        # hostile files: truncated and mutated samples
        hostile = 0
        for name in samples[:: max(1, len(samples) // 12)]:
            data = (files / name).read_bytes()
            for kind, bad in [("trunc", data[: len(data) // 2]),
                              ("mut", bytes(b ^ 0x5A if i % 7 == 3 else b for i, b in enumerate(data)))]:
                hname = f"hostile_{kind}_{name}"
                (files / hname).write_bytes(bad)
                t = time.time()
                check_sample(page, base, hname, files / hname, cli, fails, shots)
                fails.check(time.time() - t < 20, f"{hname}: took {time.time() - t:.1f} s")
                hostile += 1
        page.goto(f"{base}index.html?url=files/hostile_trunc_{samples[0]}")
        wait_done(page)
        page.screenshot(path=str(shots / "error-panel.png"))
        print(f"{hostile} hostile files opened", flush=True)

        check_url_answers(page, base, fails, samples[0])
        console[:] = [c for c in console if "127.0.0.1:9/" not in c]

        # mlformats view --no-browser, end to end
        sample = files / "nnabla_convnet.nnp"
        proc = subprocess.Popen([cli, "view", str(sample), "--no-browser"], stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            m = re.search(r"(http://127\.0\.0\.1:\d+/)\?url=(\S+)", line)
            fails.check(m is not None, f"view printed {line!r}")
            if m:
                root, route = m.group(1), m.group(2)
                html = urllib.request.urlopen(root).read()
                fails.check(b"mlformats viewer" in html, "view: the page")
                body = urllib.request.urlopen(root + route).read()
                fails.check(body == sample.read_bytes(), "view: the file's bytes")
                page.goto(f"{root}?url={route}")
                fails.check(wait_done(page) == "ready", "view: the page opened the file")
                page.screenshot(path=str(shots / "view-cli.png"))
        finally:
            proc.terminate()
            proc.wait()

        if huge_inspect:
            out, err = huge_inspect.communicate()
            fails.check(huge_inspect.returncode == 0, f"huge.safetensors: the CLI refuses it: {err}")
            if huge_inspect.returncode == 0:
                check_huge(page, base, fails, shots, huge, huge_written, json.loads(out))
                check_view_ranges(page, cli, fails, shots, huge, json.loads(out), 1 << 20)

        browser.close()
    srv.shutdown()
    for c in console:
        fails.check(False, f"console error: {c}")
    shutil.rmtree(tmp, ignore_errors=True)
    if fails.items:
        print(f"{len(fails.items)} failures")
        sys.exit(1)
    print("browser tests passed")


if __name__ == "__main__":
    main()
