"""Writes the fixtures of this folder (see README.md); run from this folder.

numpy's own writers (`np.savez`, `np.savez_compressed`) for the `.npz`;
Python's `zipfile` for the mixed archive and the `.nnp` (a protobuf encoded
by hand below, deflated).
"""

import io
import struct
import zipfile

import numpy as np


def arrays(endian, big=True):
    """Arrays of every numpy type the library reads, in byte order `endian`
    (the 400 KB one only when `big`)."""
    a = {
        "f4": np.arange(6, dtype="f4").reshape(2, 3) / 7,
        "i8": np.array([-(2**40), -1, 0, 1, 2**50], dtype="i8"),
        "u2": np.array([1, 258, 65535], dtype="u2"),
        "i2": np.array([[-300, 5], [7, 32000]], dtype="i2"),
        "i4": np.array([-123456, 7], dtype="i4"),
        "u4": np.array([4000000000, 1], dtype="u4"),
        "u8": np.array([2**63 + 5], dtype="u8"),
        "f2": np.array([0.5, -1.25, 65504], dtype="f2"),
        "f8_fortran": np.asfortranarray(np.arange(12, dtype="f8").reshape(3, 4) * 1.5),
        "c8": np.array([1 + 2j, -3.5 - 0.25j], dtype="c8"),
        "c16": np.array([[1e300 + 1j], [-2 - 1e-300j]], dtype="c16"),
        "i1": np.array([-128, 127], dtype="i1"),
        "u1": np.array([0, 255], dtype="u1"),
        "b1": np.array([True, False, True], dtype="?"),
        "scalar": np.array(3.25, dtype="f4"),
        "empty": np.zeros((0, 3), dtype="f4"),
    }
    if big:
        # bigger than the inflater's buffers: 400 KB inflated
        a["big"] = ((np.arange(100_000) * 7919) % 1009).astype("f4") / 8
    return {k: v.astype(v.dtype.newbyteorder(endian)) for k, v in a.items()}


np.savez_compressed("savez_compressed.npz", **arrays("<"))
np.savez("big_endian.npz", **arrays(">", big=False))
np.savez_compressed("big_endian_compressed.npz", **arrays(">"))

# stored and deflated members in one archive, and a deflated member that is
# not an array (ignored, but inflated and checked by the whole-file path)
with zipfile.ZipFile("mixed.npz", "w") as z:
    for i, (name, a) in enumerate(arrays("<").items()):
        if i % 3 == 2:
            a = a.astype(a.dtype.newbyteorder(">"))
        buf = io.BytesIO()
        np.lib.format.write_array(buf, a)
        method = zipfile.ZIP_DEFLATED if i % 2 == 0 else zipfile.ZIP_STORED
        z.writestr(name + ".npy", buf.getvalue(), compress_type=method)
    z.writestr("README.txt", b"not an array\n" * 50, compress_type=zipfile.ZIP_DEFLATED)


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def parameter(name, shape, values, need_grad):
    dims = b"".join(varint(d) for d in shape)
    msg = field(1, name.encode()) + field(20, field(1, dims))
    if len(values):
        msg += field(100, struct.pack(f"<{len(values)}f", *values))
    if need_grad:
        msg += varint(101 << 3) + varint(1)
    return field(200, msg)


# an .nnp whose parameter.protobuf is deflated: the network of
# ../nnabla/mlp_pbparam.nnp, parameters of its names (bigger than the
# inflater's buffers) and a field after them
with zipfile.ZipFile("../nnabla/mlp_pbparam.nnp") as src:
    network = src.read("network.nntxt")
w1 = ((np.arange(784 * 64) * 31) % 997).astype("f4") / 997 - 0.5
pb = (
    parameter("affine1/affine/W", [784, 64], w1, True)
    + parameter("affine1/affine/b", [64], np.linspace(-1, 1, 64), True)
    + parameter("affine2/affine/W", [64, 10], np.arange(640) / 640, False)
    + parameter("affine2/affine/b", [10], np.zeros(10), True)
    + parameter("unused/empty", [0, 4], [], False)
    + varint(1 << 3 | 2)
    + varint(3)
    + b"0.1"
)
with zipfile.ZipFile("params_deflated.nnp", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("nnp_version.txt", b"0.1\n")
    z.writestr("network.nntxt", network)
    z.writestr("parameter.protobuf", pb)
