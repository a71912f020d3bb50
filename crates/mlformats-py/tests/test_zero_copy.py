"""Arrays share the memory map (zero-copy), read nothing else, and let the
map go when the last array using it is gone."""

import gc
import os
import sys
import weakref

import numpy as np
import pytest

import mlformats
from conftest import TESTDATA

linux_only = pytest.mark.skipif(
    not os.path.exists("/proc/self/smaps"), reason="reads /proc/self/smaps (Linux)"
)


def assert_shares_the_map(arr):
    assert not arr.flags.owndata
    assert not arr.flags.writeable
    assert isinstance(arr.base, mlformats.TensorBuffer)
    assert arr.base.mapped
    assert arr.base.nbytes == arr.nbytes


def test_get_tensor_and_load_share_the_memory_map(tmp):
    tensors = {
        "w": np.arange(12, dtype=np.float32).reshape(3, 4),
        "b": np.arange(4, dtype=np.float32),
        "steps": np.arange(3, dtype=np.int32),
    }
    p = tmp / "m.safetensors"  # f32/i32 after an 8-aligned header: all aligned
    mlformats.save(p, tensors)
    with mlformats.open(p) as f:
        for name, want in tensors.items():
            a, b = f.get_tensor(name), f.get_tensor(name)
            assert_shares_the_map(a)
            np.testing.assert_array_equal(a, want)
            # two calls give two views of the same bytes
            assert a is not b and np.shares_memory(a, b)
            # numpy slicing gives views of the view
            assert a[1:].base is a and np.shares_memory(a[1:], b)
            with pytest.raises(ValueError, match="read-only"):
                a[...] = 0
    loaded = mlformats.load(p)
    for name, want in tensors.items():
        assert_shares_the_map(loaded[name])
        np.testing.assert_array_equal(loaded[name], want)


def test_params_files_share_the_map_where_tvm_laid_the_data_out_aligned(tmp):
    # a .params file has no padding: data offsets follow from the names
    for name_len in range(1, 9):
        p = tmp / "a.params"
        x = np.arange(10, dtype=np.float32)
        mlformats.save(p, {"n" * name_len: x})
        with mlformats.open(p) as f:
            a = f.get_tensor("n" * name_len)
            np.testing.assert_array_equal(a, x)
            assert not a.flags.writeable
            if a.flags.owndata:  # unaligned: an aligned copy
                assert a.base is None and a.flags.aligned
            else:
                assert_shares_the_map(a)
        with mlformats.open(p, copy_unaligned=False) as f:
            a = f.get_tensor("n" * name_len)
            assert_shares_the_map(a)  # a view even where unaligned
            np.testing.assert_array_equal(a, x)
        (a,) = mlformats.load(p, copy_unaligned=False).values()
        assert_shares_the_map(a)


def test_column_major_primitiv_tensors_are_fortran_views():
    path = TESTDATA / "primitiv" / "tensor_128x129_bin32.data"
    with mlformats.open(path, copy_unaligned=False) as f:
        (entry,) = f.stored
        assert entry["order"] == "column-major"
        a = f.get_tensor(entry["key"])
        assert a.shape == (128, 129)
        assert a.flags.f_contiguous and not a.flags.c_contiguous
        assert_shares_the_map(a)
        # a.T is the stored, row-major-by-columns block: no copy either way
        assert a.T.flags.c_contiguous and np.shares_memory(a, a.T)
    # the library's own transpose (diff, conversion) agrees element by element
    d = mlformats.diff(path, path)
    assert d["equal"]


def test_slices_and_scalars():
    path = TESTDATA / "cvm" / "large_1mb.params"
    with mlformats.open(path) as f:
        name = f.keys()[0]
        full = f.get_tensor(name)
        s = f.get_slice(name)
        assert s.shape == full.shape and len(s) == full.shape[0]
        assert s.name == name and s.dtype == mlformats.inspect(path)["tensors"][0]["dtype"]
        np.testing.assert_array_equal(s[2:5], full[2:5])
        np.testing.assert_array_equal(s[..., -1], full[..., -1])
        assert s[(0,) * full.ndim] == full[(0,) * full.ndim]
        np.testing.assert_array_equal(np.asarray(s), full)
        assert np.asarray(s, dtype=np.float64).dtype == np.float64
        assert "TensorSlice" in repr(s)
    with mlformats.open(TESTDATA / "cvm" / "two_entry.params") as f:
        b = f.get_tensor("b")
        assert b.shape == () and int(b) == 258
        with pytest.raises(TypeError):
            len(f.get_slice("b"))


def mapped_kib(path):
    """Resident KiB of our mappings of ``path`` (0 when not mapped)."""
    total, mine = 0, False
    with open("/proc/self/smaps") as maps:
        for line in maps:
            first = line.split()[0]
            if "-" in first and ":" not in first:  # a mapping's header line
                mine = line.rstrip().endswith(str(path)) or line.rstrip().endswith(
                    f"{path} (deleted)"
                )
            elif mine and line.startswith("Rss:"):
                total += int(line.split()[1])
    return total


def is_mapped(path):
    with open("/proc/self/maps") as maps:
        return any(str(path) in line for line in maps)


@linux_only
def test_get_tensor_on_a_big_file_reads_nothing_else(tmp):
    p = tmp / "big.safetensors"
    big = np.ones((64, 1024, 256), np.float32)  # 64 MiB
    mlformats.save(p, {"small": np.arange(8, dtype=np.float32), "big": big})
    del big
    with mlformats.open(p) as f:
        small = f.get_tensor("small")
        assert_shares_the_map(small)
        assert small.sum() == 28
        b = f.get_tensor("big")  # a view: no page of it is read yet
        assert_shares_the_map(b)
        # (the kernel maps a few pages around each page read, up to a
        # 2 MiB folio: far below the 64 MiB of the tensor)
        assert mapped_kib(p) < 8192, mapped_kib(p)
        part = f.get_slice("big")[10, :4]  # reads only those rows' pages
        assert part.shape == (4, 256) and part.sum() == 1024
        assert mapped_kib(p) < 8192, mapped_kib(p)
        assert b.sum() == 64 * 1024 * 256  # now it is read
        assert mapped_kib(p) > 60 * 1024, mapped_kib(p)


@linux_only
def test_closing_releases_the_map_once_no_array_uses_it(tmp):
    p = tmp / "m.safetensors"
    mlformats.save(p, {"x": np.arange(1024, dtype=np.float32)})
    f = mlformats.open(p)
    assert is_mapped(p)
    f.close()
    assert f.closed and not is_mapped(p)
    with pytest.raises(ValueError, match="closed"):
        f.keys()

    with mlformats.open(p) as f:
        x = f.get_tensor("x")
        buffer = weakref.ref(x.base)
        y = x[10:20]
    assert is_mapped(p)  # x and y still use it
    os.unlink(p)  # Linux: the mapping outlives the name
    np.testing.assert_array_equal(y, np.arange(10, 20, dtype=np.float32))
    del x
    gc.collect()
    assert buffer() is not None and is_mapped(p)  # y keeps it
    del y
    gc.collect()
    assert buffer() is None
    assert not is_mapped(p)

    mlformats.save(p, {"x": np.arange(1024, dtype=np.float32)})
    d = mlformats.load(p)
    assert is_mapped(p)
    del d
    gc.collect()
    assert not is_mapped(p)

    # dropping the handle without close() does the same
    f = mlformats.open(p)
    del f
    gc.collect()
    assert not is_mapped(p)


def test_decoded_tensors_outlive_their_document():
    # NNabla text: the values are decoded at open (the file's index holds
    # them) and each array gets a buffer of its own
    with mlformats.open(TESTDATA / "nnabla" / "mlp_with_params.nntxt") as f:
        arrays = {n: f.get_tensor(n) for n in f.keys()}
        first = next(iter(arrays.values()))
        assert isinstance(first.base, mlformats.TensorBuffer) and not first.base.mapped
        assert "tensor" in repr(first.base)
        want = {n: a.copy() for n, a in arrays.items()}
    gc.collect()
    for n, a in arrays.items():
        np.testing.assert_array_equal(a, want[n])
    # load hands each array its own decoded buffer
    loaded = mlformats.load(TESTDATA / "nnabla" / "mlp_with_params.nntxt")
    for n, a in loaded.items():
        assert isinstance(a.base, mlformats.TensorBuffer) and "tensor" in repr(a.base)
        np.testing.assert_array_equal(a, want[n])


def test_refcounts_do_not_leak(tmp):
    p = tmp / "m.safetensors"
    mlformats.save(p, {"x": np.arange(16, dtype=np.float32)})
    with mlformats.open(p) as f:
        x = f.get_tensor("x")
        base = x.base
        assert sys.getrefcount(base) == 3  # x, `base`, the call's argument
