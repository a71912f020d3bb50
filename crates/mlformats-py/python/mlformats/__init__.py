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
>>> mlformats.view("testdata/nnabla/mlp.nnp")   # the viewer page, until Ctrl-C

Errors: ``FormatError`` (a ``ValueError``) for files and requests the
library refuses, with its whole message; ``FileNotFoundError`` and other
``OSError`` for the file system.
"""

import os as _os
import time as _time
from typing import Union

from ._native import (
    FORMATS,
    Document,
    FormatError,
    TensorBuffer,
    TensorRef,
    TensorSlice,
    Viewer,
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
    "Viewer",
    "__version__",
    "convert",
    "diff",
    "inspect",
    "load",
    "open",
    "save",
    "stats",
    "validate",
    "view",
]


def view(
    path: Union[str, "_os.PathLike[str]"],
    *,
    port: int = 0,
    browser: bool = True,
    block: bool = True,
) -> Viewer:
    """Look at a model file in the browser, as ``mlformats view FILE`` does.

    Serves the viewer page (built into the package: no network needed) and
    the file on 127.0.0.1:``port`` (0: a free port) and opens the default
    browser unless ``browser=False``. With ``block=True`` (the default) it
    serves until Ctrl-C, then stops; with ``block=False`` it returns at once
    and serves from a background thread until the returned
    :class:`Viewer`'s ``stop()`` (or the end of a ``with`` block). Returns the
    :class:`Viewer` (``url``, ``port``, ``running``, ``stop()``).
    """
    viewer = Viewer(path, port=port)
    if block:
        print(f"serving {path} at {viewer.url} (Ctrl-C stops)", flush=True)
    if browser and not viewer.open_browser():
        print(f"could not open a browser: open {viewer.url}", flush=True)
    if not block:
        return viewer
    try:
        while viewer.running:
            _time.sleep(0.25)
    except KeyboardInterrupt:
        pass
    finally:
        viewer.stop()
    return viewer
