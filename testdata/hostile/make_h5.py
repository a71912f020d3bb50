"""Makes the hostile .h5 files of this directory with h5py (run it here:
`python make_h5.py`), and prints the names h5py's `visititems` lists for
each (nnabla's `.h5` parameter loader lists datasets that way), which
`crates/nnp-archive/tests/hostile_h5.rs` asserts.

- links.h5: one gzip dataset `w` of 1 MiB of f4 zeros (4 chunks of 256 KiB)
  and 100 hard links `l00`..`l99` to it; h5py lists it once, as `l00`
  (visititems goes in name order and visits an object once).
- group_twice.h5: a group `g` (datasets `W`, `b`) also linked as `a/inner`
  and `h`: listed once, under `a/inner`.
- cycle.h5: `g/x`, with `g/self` linking to `g` and `g/up` to the root.
- links_v2.h5: links.h5's layout with 5 links, libver=("v108", "v108") (version-2
  object headers, links stored as link messages).
- links_deep.h5: a dataset `g/w` of 3 f4 with 300 hard links `l000`..`l299`
  in the root (a symbol table whose B-tree has two levels): listed once,
  as `g/w`.
- chunk_overflow.h5: a gzip dataset of 1024 f4 (chunks of 256) whose first
  chunk inflates to 1 MiB (written with write_direct_chunk).
- chunk_far.h5: an 8x8 f4 dataset `x` in chunks of 4x4 (no filter) whose
  chunk B-tree key for the chunk at [4, 0] is patched to place it at
  [2**64 - 3, 0]: h5py refuses to read it; a reader adding positions in
  the chunk to that offset overflows.
"""

import struct

import zlib

import h5py
import numpy as np


def param(f, path, data, **kw):
    d = f.create_dataset(path, data=data, **kw)
    d.attrs["need_grad"] = np.bool_(True)
    return d


def listed(path):
    names = []
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
    return names


with h5py.File("links.h5", "w") as f:
    d = param(f, "w", np.zeros(1 << 18, "f4"), chunks=(1 << 16,), compression="gzip")
    for i in range(100):
        f[f"l{i:02}"] = d

with h5py.File("group_twice.h5", "w") as f:
    g = f.create_group("g")
    param(g, "W", np.arange(6, dtype="f4").reshape(2, 3))
    param(g, "b", np.array([0.5, -1.5], "f4"))
    f.create_group("a")
    f["a/inner"] = g
    f["h"] = g

with h5py.File("cycle.h5", "w") as f:
    g = f.create_group("g")
    param(g, "x", np.array([1.0, 2.0, 3.0], "f4"))
    g["self"] = g
    g["up"] = f["/"]

with h5py.File("links_v2.h5", "w", libver=("v108", "v108")) as f:
    d = param(f, "w", np.full(1 << 16, 0.25, "f4"), chunks=(1 << 14,), compression="gzip")
    for i in range(5):
        f[f"l{i}"] = d

with h5py.File("links_deep.h5", "w") as f:
    d = param(f, "g/w", np.array([1.0, 2.0, 3.0], "f4"))
    for i in range(300):
        f[f"l{i:03}"] = d

with h5py.File("chunk_overflow.h5", "w") as f:
    d = param(f, "x", np.ones(1024, "f4"), chunks=(256,), compression="gzip")
    d.id.write_direct_chunk((0,), zlib.compress(bytes(1 << 20)), 0)

with h5py.File("chunk_far.h5", "w") as f:
    param(f, "x", np.arange(64, dtype="f4").reshape(8, 8), chunks=(4, 4))
with open("chunk_far.h5", "r+b") as f:
    data = f.read()
    # a chunk's key: its stored size, filter mask and offsets ([4, 0] and
    # the element's 0)
    key = struct.pack("<IIQQQ", 64, 0, 4, 0, 0)
    assert data.count(key) == 1
    f.seek(data.index(key) + 8)
    f.write(struct.pack("<Q", 2**64 - 3))

for name in ["links.h5", "group_twice.h5", "cycle.h5", "links_v2.h5", "links_deep.h5", "chunk_overflow.h5"]:
    print(name, listed(name))
