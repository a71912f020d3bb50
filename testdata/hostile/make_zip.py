"""Makes the hostile zip containers of this directory (run from it with
Python 3 and numpy). Each is small; what numpy and nnabla (both through
Python's zipfile) do with it is printed, and is what the tests expect.

- dup_name.npz: the name a.npy stored twice (arange(3) then arange(5)),
  b.npy between them. numpy lists ['a', 'b', 'a'], both 'a' giving the
  last entry, arange(5).
- shared_local.npz: one deflated local entry a.npy (4096 float32 zeros)
  that three central entries point at, as a.npy, b.npy and c.npy (an
  "overlapping" zip bomb's trick). zipfile refuses b and c (their local
  header names a.npy).
- same_name_shared.npz: one deflated local entry a.npy that 50 central
  entries named a.npy point at. numpy lists 'a' 50 times, one array.
- protobuf_bomb.nnp: network.nntxt, then parameter.protobuf: 70 MiB of
  zeros, deflated (about 70 KB), over the 64 MiB any file may inflate to
  with the default limits.
"""
import io
import struct
import zipfile

import numpy as np


def npy(a):
    f = io.BytesIO()
    np.save(f, a)
    return f.getvalue()


def write(path, members, method=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in members:
            z.writestr(name, data)


def central_entries(data):
    """The central directory's entries (bytes each), its offset and the EOCD."""
    eocd = data.rindex(b"PK\x05\x06")
    n, size, offset = struct.unpack_from("<HII", data, eocd + 10)
    entries, at = [], offset
    for _ in range(n):
        ln, le, lc = struct.unpack_from("<HHH", data, at + 28)
        end = at + 46 + ln + le + lc
        entries.append(data[at:end])
        at = end
    return entries, offset, data[eocd:]


def with_central(data, entries):
    """`data` with its central directory replaced by `entries`."""
    _, offset, eocd = central_entries(data)
    cd = b"".join(entries)
    eocd = bytearray(eocd)
    struct.pack_into("<HHII", eocd, 8, len(entries), len(entries), len(cd), offset)
    return data[:offset] + cd + bytes(eocd)


def renamed(entry, name):
    ln = struct.unpack_from("<H", entry, 28)[0]
    assert len(name) == ln
    return entry[:46] + name + entry[46 + ln:]


def show(path):
    try:
        d = np.load(path)
        print(path, "numpy lists", d.files)
        for k in dict.fromkeys(d.files):  # each name once
            try:
                print("  ", k, d[k].shape, d[k].ravel()[:6])
            except Exception as e:  # noqa: BLE001 - printing what numpy says
                print("  ", k, "->", type(e).__name__, e)
    except Exception as e:  # noqa: BLE001
        print(path, "->", type(e).__name__, e)


import warnings

warnings.simplefilter("ignore")  # zipfile warns of the duplicate name
write("dup_name.npz", [("a.npy", npy(np.arange(3))), ("b.npy", npy(np.arange(2))),
                       ("a.npy", npy(np.arange(5)))], zipfile.ZIP_STORED)
show("dup_name.npz")

b = io.BytesIO()
write(b, [("a.npy", npy(np.zeros(4096, np.float32)))])
base = b.getvalue()
(entry,), _, _ = central_entries(base)
with open("shared_local.npz", "wb") as f:
    f.write(with_central(base, [entry, renamed(entry, b"b.npy"), renamed(entry, b"c.npy")]))
show("shared_local.npz")
with open("same_name_shared.npz", "wb") as f:
    f.write(with_central(base, [entry] * 50))
show("same_name_shared.npz")

write("protobuf_bomb.nnp", [("nnp_version.txt", b"0.1\n"),
                            ("network.nntxt", b'network { name: "n" }\n'),
                            ("parameter.protobuf", bytes(70 << 20))])
with zipfile.ZipFile("protobuf_bomb.nnp") as z:
    print("protobuf_bomb.nnp", [(i.filename, i.compress_size, i.file_size) for i in z.infolist()])
