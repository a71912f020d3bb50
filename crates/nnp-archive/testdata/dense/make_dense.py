"""Makes the .h5 files of this directory with h5py (run it here:
`python make_dense.py`; h5py 3.14, HDF5 1.14.6 wrote the committed ones) and
prints what h5py's `visititems` lists in each (dataset path and values),
which `crates/nnp-archive/tests/h5_dense.rs` asserts.

Every file is written with libver="latest", so a group of more than 8 links
keeps them in dense storage: a Link Info message pointing at a fractal heap
of link messages and a version-2 B-tree indexing their names.

- dense20.h5: group `g` with 20 datasets `d00`..`d19` (d<i> = [i, i + 0.5]
  as f4) and a dataset `top` at the root.
- track_order.h5: group `t` created with track_order=True holding 12
  datasets made in reverse name order (`k11` first); values [i] as i4.
- links50.h5: dense group `g` with one gzip dataset `w` (4096 f4, chunks of
  1024, w[j] = j / 8) and 50 hard links `l00`..`l49` to it, plus a second
  small dataset `z`.
- cycle.h5: dense group `g` with 10 datasets `x0`..`x9` ([i] as f8), a link
  `self` to `g` and a link `up` to the root.
- nested.h5: dense group `a` (9 datasets `p0`..`p8` and the group `b`),
  `a/b` dense (10 datasets `q0`..`q9`), `a/b/c` compact (one dataset `r`),
  and `a/b/again` a hard link back to `a/b/c`.
- wide.h5: group `g` with 1200 hard links `n0000`..`n1199` to one dataset
  `g/v` ([7] as i2): a name index of more than one B-tree node level.
- long.h5: dense group `g` with 9 datasets `s0`..`s8` ([i] as f4), a
  dataset named with 1000 `m` ([1.5]), one named with 5000 `h` ([2.5]) and
  a second link to it named with 6000 `x`: link messages over the heap's
  4 KiB of managed objects are huge objects, in their own B-tree.
"""

import h5py
import numpy as np


def param(g, path, data, **kw):
    d = g.create_dataset(path, data=data, **kw)
    d.attrs["need_grad"] = np.bool_(True)
    return d


def listed(path):
    out = []
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                v = obj[()].ravel()
                out.append((name, v.dtype.str, list(v[:4]), len(v)))
        f.visititems(visit)
    return out


def new(path):
    return h5py.File(path, "w", libver="latest")


with new("dense20.h5") as f:
    g = f.create_group("g")
    for i in range(20):
        param(g, f"d{i:02}", np.array([i, i + 0.5], "f4"))
    param(f, "top", np.array([1.0, 2.0, 3.0], "f4"))

with new("track_order.h5") as f:
    t = f.create_group("t", track_order=True)
    for i in reversed(range(12)):
        param(t, f"k{i:02}", np.array([i], "i4"))

with new("links50.h5") as f:
    g = f.create_group("g")
    w = param(g, "w", np.arange(4096, dtype="f4") / 8, chunks=(1024,), compression="gzip")
    for i in range(50):
        g[f"l{i:02}"] = w
    param(g, "z", np.array([-1.0], "f4"))

with new("cycle.h5") as f:
    g = f.create_group("g")
    for i in range(10):
        param(g, f"x{i}", np.array([float(i)], "f8"))
    g["self"] = g
    g["up"] = f["/"]

with new("nested.h5") as f:
    a = f.create_group("a")
    for i in range(9):
        param(a, f"p{i}", np.array([i], "u1"))
    b = a.create_group("b")
    for i in range(10):
        param(b, f"q{i}", np.array([i * 10], "i8"))
    c = b.create_group("c")
    param(c, "r", np.array([0.25], "f4"))
    b["again"] = c

with new("wide.h5") as f:
    g = f.create_group("g")
    v = param(g, "v", np.array([7], "i2"))
    for i in range(1200):
        g[f"n{i:04}"] = v

with new("long.h5") as f:
    g = f.create_group("g")
    for i in range(9):
        param(g, f"s{i}", np.array([i], "f4"))
    param(g, "m" * 1000, np.array([1.5], "f4"))
    h = param(g, "h" * 5000, np.array([2.5], "f4"))
    g["x" * 6000] = h

for name in ["dense20.h5", "track_order.h5", "links50.h5", "cycle.h5", "nested.h5", "wide.h5",
             "long.h5"]:
    print(name)
    for path, *rest in listed(name):
        if len(path) > 40:
            path = f"{path[:12]}... ({len(path)} bytes)"
        print("   ", path, *rest)
