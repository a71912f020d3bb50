"""Read and write primitiv, NNabla, TenniS and TVM/CVM model files (and
``.safetensors`` and ``.npz``) as numpy arrays that share the file's memory map.

The Python face of the Rust library ``mlformats``: every format is read and
written by the library itself; this package hands its tensors to numpy.

>>> import mlformats
>>> tensors = mlformats.load("testdata/cvm/two_entry.params")   # dict of arrays
>>> with mlformats.open("testdata/nnabla/mlp.nnp") as f:         # lazy
...     w = f.get_tensor(f.keys()[0])
>>> mlformats.save("out.safetensors", tensors)
>>> mlformats.convert("testdata/nnabla/mlp.nnp", "mlp.npz")["tensors"]
4

Errors: ``FormatError`` (a ``ValueError``) for files and requests the
library refuses, with its whole message; ``FileNotFoundError`` and other
``OSError`` for the file system.
"""

from ._native import (
    FORMATS,
    Document,
    FormatError,
    TensorBuffer,
    TensorRef,
    TensorSlice,
    __version__,
    convert,
    diff,
    inspect,
    load,
    open,
    save,
    stats,
    validate,
)

__all__ = [
    "FORMATS",
    "Document",
    "FormatError",
    "TensorBuffer",
    "TensorRef",
    "TensorSlice",
    "__version__",
    "convert",
    "diff",
    "inspect",
    "load",
    "open",
    "save",
    "stats",
    "validate",
]
