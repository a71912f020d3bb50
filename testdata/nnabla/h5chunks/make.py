"""Writes the .h5/.nnp fixtures of this folder with h5py, in nnabla's
parameter layout (one dataset per parameter path, attributes `index`
(int64) and `need_grad` (bool)), stored chunked, compact or big-endian.

Run: python make.py (needs h5py and numpy), from this folder.
"""

import io
import zipfile

import h5py
import numpy as np


def values(shape, dtype, seed):
    n = int(np.prod(shape))
    x = (np.arange(n, dtype=np.float64) * 0.37 + seed).reshape(shape)
    x = np.sin(x) * 100
    return x.astype(dtype)


def param(f, i, name, data, need_grad=True, **kw):
    d = f.create_dataset(name, data=data, **kw)
    d.attrs["need_grad"] = need_grad
    d.attrs["index"] = np.int64(i)
    return d


def compact(f, i, name, data, need_grad=True):
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    space = h5py.h5s.create_simple(data.shape)
    tid = h5py.h5t.py_create(data.dtype)
    parts = name.split("/")
    g = f.require_group("/".join(parts[:-1])) if len(parts) > 1 else f
    dsid = h5py.h5d.create(g.id, parts[-1].encode(), tid, space, dcpl=dcpl)
    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(data))
    d = f[name]
    d.attrs["need_grad"] = need_grad
    d.attrs["index"] = np.int64(i)
    assert d.id.get_create_plist().get_layout() == h5py.h5d.COMPACT
    return d


def chunked(path, libver):
    with h5py.File(path, "w", libver=libver) as f:
        # 1-D, a partial edge chunk, no filter
        param(f, 0, "a/W", values((100,), "f4", 1), chunks=(16,))
        # 2-D split in both axes, partial edge chunks, gzip
        param(f, 1, "b/W", values((37, 23), "f4", 2), chunks=(8, 5), compression="gzip")
        # 3-D, shuffle + gzip
        param(
            f,
            2,
            "c/W",
            values((5, 7, 9), "f4", 3),
            chunks=(2, 3, 4),
            compression="gzip",
            shuffle=True,
            need_grad=False,
        )
        # a chunk larger than the data (resizable), f64
        param(
            f,
            3,
            "d/b",
            values((10,), "f8", 4),
            chunks=(32,),
            maxshape=(None,),
            compression="gzip",
        )
        # integers, shuffle + gzip, chunks split only the first axis
        param(
            f,
            4,
            "e/idx",
            np.arange(-60, 60, dtype="i2").reshape(12, 10),
            chunks=(5, 10),
            shuffle=True,
            compression="gzip",
            compression_opts=9,
        )
        # one chunk holding all, and a contiguous scalar beside them
        param(f, 5, "f/W", values((3, 4), "f2", 5), chunks=(3, 4), compression="gzip")
        param(f, 6, "g/s", np.float32(2.5), need_grad=False)


def many_chunks(path):
    """210 small chunks: a chunk B-tree with an internal node."""
    with h5py.File(path, "w") as f:
        param(f, 0, "w", values((40, 30), "f4", 30), chunks=(3, 2), compression="gzip")
        param(f, 1, "v", values((50,), "f4", 31), chunks=(1,))


def filters(path):
    """lzf, fletcher32 and their mixes with shuffle and gzip; a chunk lzf
    cannot shrink is stored unfiltered (its filter mask says so)."""
    noise = np.random.default_rng(0).standard_normal((64, 50)).astype("f4")
    with h5py.File(path, "w") as f:
        param(f, 0, "lzf/W", values((33, 21), "f4", 40), chunks=(8, 8), compression="lzf")
        param(
            f,
            1,
            "lzf/b",
            values((50,), "f8", 41),
            chunks=(16,),
            compression="lzf",
            shuffle=True,
        )
        param(f, 2, "sum/W", values((20, 7), "f4", 42), chunks=(6, 7), fletcher32=True)
        param(
            f,
            3,
            "all/W",
            values((9, 11), "f4", 43),
            chunks=(4, 4),
            shuffle=True,
            compression="gzip",
            fletcher32=True,
        )
        param(f, 4, "noise/W", noise, chunks=(16, 50), compression="lzf", fletcher32=True)


def compacts(path):
    with h5py.File(path, "w") as f:
        compact(f, 0, "conv/W", values((2, 3, 3, 3), "f4", 6))
        compact(f, 1, "conv/b", values((2,), "f4", 7), need_grad=False)
        compact(f, 2, "bn/mean", values((4,), "f8", 8))
        param(f, 3, "fc/W", values((6, 5), "f4", 9))


def big_endian(path):
    with h5py.File(path, "w") as f:
        param(f, 0, "fc1/W", values((7, 9), ">f4", 10))
        param(f, 1, "fc1/b", values((9,), ">f8", 11), chunks=(4,), compression="gzip")
        param(
            f,
            2,
            "fc2/W",
            values((9, 6), ">f4", 12),
            chunks=(4, 4),
            shuffle=True,
            compression="gzip",
        )
        compact(f, 3, "fc2/b", values((6,), ">f4", 13))
        param(f, 4, "steps", np.arange(5, dtype=">i4"), need_grad=False)
        param(f, 5, "half", values((3,), ">f2", 14))


def nnp(path, network):
    """The nnp of `network` (mlp.nnp's network), its parameter.h5 stored and
    chunked with gzip."""
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        param(f, 0, "fc1/affine/W", values((8, 16), "f4", 20), chunks=(3, 5), compression="gzip")
        param(
            f,
            1,
            "fc1/affine/b",
            values((16,), "f4", 21),
            chunks=(5,),
            shuffle=True,
            compression="gzip",
        )
        param(f, 2, "fc2/affine/W", values((16, 4), ">f4", 22), chunks=(16, 2))
        compact(f, 3, "fc2/affine/b", values((4,), "f4", 23))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("nnp_version.txt", "0.1\n")
        z.writestr("network.nntxt", network)
        z.writestr("parameter.h5", buf.getvalue())


def deflated(path, src):
    """`src` (an .nnp) with every member deflated, its parameter.h5 too."""
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name in z.namelist():
            out.writestr(name, z.read(name))


def deflated_mixed(path, network):
    """The nnp of `network` (mlp.nnp's network), its parameter.h5 deflated:
    contiguous little- and big-endian datasets and a compact one, and a
    96 KiB table written first whose name sorts last (the walk reads back
    past its 64 KiB of history: inflated again from the member's start)."""
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        param(f, 4, "zz/table", values((96, 256), "f4", 30), need_grad=False)
        param(f, 0, "fc1/affine/W", values((8, 16), ">f4", 31))
        compact(f, 1, "fc1/affine/b", values((16,), "f4", 32))
        param(f, 2, "fc2/affine/W", values((16, 4), "f4", 33))
        param(f, 3, "fc2/affine/b", values((4,), ">f4", 34))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("nnp_version.txt", "0.1\n")
        z.writestr("network.nntxt", network)
        z.writestr("parameter.h5", buf.getvalue())


if __name__ == "__main__":
    chunked("chunked_params.h5", "earliest")
    chunked("chunked_v110_params.h5", "v110")
    many_chunks("many_chunks_params.h5")
    filters("filters_params.h5")
    compacts("compact_params.h5")
    big_endian("big_endian_params.h5")
    with zipfile.ZipFile("../mlp.nnp") as z:
        network = z.read("network.nntxt").decode()
    nnp("mlp_chunked.nnp", network)
    deflated("mlp_deflated.nnp", "../mlp.nnp")
    deflated("mlp_chunked_deflated.nnp", "mlp_chunked.nnp")
    deflated_mixed("mlp_deflated_mixed.nnp", network)
