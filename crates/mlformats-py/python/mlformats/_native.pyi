"""Type stubs of ``mlformats._native``, the Rust extension (re-exported by ``mlformats``)."""

import os
from types import TracebackType
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Type, Union, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "__version__",
    "FORMATS",
    "Document",
    "FormatError",
    "TensorBuffer",
    "TensorRef",
    "TensorSlice",
    "convert",
    "diff",
    "inspect",
    "load",
    "open",
    "save",
    "validate",
]

_Path = Union[str, "os.PathLike[str]"]
_DTypeArg = Union[str, "npt.DTypeLike"]

__version__: str

#: Every format's contract name, as ``Document.format`` gives it.
FORMATS: List[str]

class FormatError(ValueError):
    """A file mlformats cannot read or write, or a request it cannot carry out.

    The message is the library's whole error (what is wrong and where: byte
    offsets, archive members, tensor names), after the path it concerns.
    """

@final
class TensorBuffer:
    """The ``base`` of every array mlformats hands out: it holds the bytes the
    array looks at (a memory map, or the reader's buffer), so the map stays
    open exactly as long as an array still uses it."""

    @property
    def mapped(self) -> bool:
        """True when the bytes are the file's memory map."""
    @property
    def nbytes(self) -> int:
        """The number of bytes of the tensor."""

@final
class TensorRef:
    """A graph node attribute naming a tensor of the file."""

    def __new__(cls, name: str) -> "TensorRef": ...
    @property
    def name(self) -> str: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Viewer:
    """The viewer page and one file served on 127.0.0.1 (``mlformats.view``)."""

    def __new__(cls, path: _Path, port: int = 0) -> "Viewer": ...
    @property
    def url(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def running(self) -> bool: ...
    def open_browser(self) -> bool: ...
    def stop(self) -> None: ...
    def __enter__(self) -> "Viewer": ...
    def __exit__(self, *args: object) -> bool: ...

@final
class TensorSlice:
    """One tensor, not read yet: index it to read only the part selected.

    >>> with mlformats.open("big.params") as f:
    ...     rows = f.get_slice("embedding")[100:104]   # reads 4 rows
    """

    @property
    def name(self) -> str: ...
    @property
    def shape(self) -> Tuple[int, ...]: ...
    @property
    def dtype(self) -> str:
        """The contract's dtype name (``f32``, ``bf16``, ``i64``, ...)."""
    def get_shape(self) -> List[int]:
        """The shape as a list, as safetensors' slices give it."""
    def get_dtype(self) -> str:
        """The dtype in safetensors' spelling (``F32``, ``BF16``, ``I64``,
        ``BOOL``, ``F8_E4M3``, ...); readable without ml_dtypes."""
    def __len__(self) -> int: ...
    def __getitem__(self, key: Any, /) -> Any:
        """numpy basic indexing of the tensor: an array (read-only view, or a
        copy of just the selection when the data is unaligned) or a scalar."""
    def __array__(self, dtype: Optional[npt.DTypeLike] = None, copy: Optional[bool] = None) -> np.ndarray: ...

@final
class Document:
    """A file of any supported format, opened and memory-mapped; tensors are
    read when asked for. A context manager: ``with mlformats.open(p) as f:``.

    >>> with mlformats.open("testdata/cvm/two_entry.params") as f:
    ...     print(f.format, f.keys(), int(f.get_tensor("b")))
    cvm-params ['w', 'b'] 258
    """

    @property
    def format(self) -> str:
        """The format's contract name (``cvm-params``, ``primitiv``,
        ``nnabla-nnp``, ``nnabla-nntxt``, ``nnabla-protobuf``, ``nnabla-h5``,
        ``tennis-module``, ``safetensors``, ``npz``)."""
    @property
    def path(self) -> Optional[str]: ...
    @property
    def kind(self) -> Optional[str]:
        """primitiv's data type (``model``, ``optimizer``, ...); None otherwise."""
    @property
    def file_size(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    def metadata(self) -> Optional[Dict[str, Any]]:
        """The metadata as a flat dict, None when there is none, as
        safetensors' ``safe_open(...).metadata()``: a safetensors file's
        ``__metadata__``; other formats' file-level fields (primitiv shape and
        optimizer configs, NNabla solver_states)."""
    @property
    def graph(self) -> Optional[Dict[str, Any]]:
        """``{"graphs": [{"name", "batch_size", "inputs", "outputs", "values",
        "nodes": [{"op", "name", "inputs", "outputs", "attributes"}]}],
        "executors": [{"name", "network", "data", "outputs"}], "optimizers",
        "datasets", "monitors"}`` for NNabla and TenniS files; None otherwise."""
    @property
    def stored(self) -> List[Dict[str, Any]]:
        """Each tensor as stored, in the inspect contract's terms: ``name``
        (its one name, for ``get_tensor``), ``key`` (the same),
        ``stored_name`` (as the file stores it), stored ``shape`` and the
        format's fields."""
    def keys(self) -> List[str]: ...
    def need_grad(self, name: str) -> Optional[bool]: ...
    def get_tensor(self, name: str, *, copy: bool = False) -> np.ndarray:
        """The tensor as a read-only array, zero-copy when aligned; reads
        nothing else. ``copy=True``: an array numpy owns (writable).
        KeyError for an unknown name."""
    def get_slice(self, name: str) -> TensorSlice: ...
    def inspect(self, schema: int = 2) -> Dict[str, Any]:
        """The ``inspect --json`` document of this file (schema 2, or 1)."""
    def close(self) -> None: ...
    def __len__(self) -> int: ...
    def __contains__(self, name: object, /) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def __getitem__(self, name: str, /) -> np.ndarray: ...
    def __enter__(self) -> "Document": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

def open(
    path: _Path,
    format: Optional[str] = None,
    *,
    copy_unaligned: bool = True,
    copy: bool = False,
    max_inflate_ratio: Optional[int] = None,
    trust: bool = False,
) -> Document:
    """Opens a file of any supported format, memory-mapped and lazy
    (``copy=True``: read into memory, safe from the file being truncated).
    Compressed data may inflate to ``max_inflate_ratio`` (default 100) bytes
    per byte of the file, at least 64 MiB (``FormatError`` past it);
    ``trust=True`` lifts every reading limit. ``path`` may be a location
    (``https://``, ``s3://``, ``gs://``, ``az://``): headers fetched by
    ranges, each tensor when asked for."""

def load(
    path: _Path,
    names: Optional[Iterable[str]] = None,
    *,
    copy_unaligned: bool = True,
    copy: bool = False,
    max_inflate_ratio: Optional[int] = None,
    trust: bool = False,
) -> Dict[str, np.ndarray]:
    """Every tensor (or those in ``names``) as read-only numpy arrays sharing
    the file's memory map where aligned (everywhere with ``copy_unaligned=False``);
    ``copy=True``: writable arrays numpy owns, read without a memory map.

    >>> mlformats.load("testdata/cvm/two_entry.params")["w"]
    array([ 1, -1], dtype=int8)
    """

def save(
    path: _Path,
    tensors: Union[Mapping[str, npt.ArrayLike], Iterable[Tuple[str, npt.ArrayLike]]],
    format: Optional[str] = None,
    *,
    need_grad: Optional[Mapping[str, bool]] = None,
    metadata: Optional[Mapping[str, str]] = None,
    keep_order: bool = False,
    sync: bool = False,
) -> None:
    """Saves named arrays to any writable format (from the extension, or
    ``format``), atomically; ``sync=True`` flushes file and folder to the
    disk so the file survives a power loss."""

def convert(
    src: _Path,
    dst: _Path,
    *,
    to: Optional[str] = None,
    from_: Optional[str] = None,
    only: Union[str, Iterable[str], None] = None,
    exclude: Union[str, Iterable[str], None] = None,
    dtype: Optional[_DTypeArg] = None,
    keep_order: bool = False,
    rename: Union[Dict[str, str], Iterable[Tuple[str, str]], None] = None,
    weights_only: bool = False,
    skip_unsupported: bool = False,
    params: Optional[_Path] = None,
    network: Optional[str] = None,
    opset: Optional[int] = None,
    input_shape: Optional[Dict[str, Sequence[int]]] = None,
    input_value: Optional[Dict[str, Sequence[float]]] = None,
    sync: bool = False,
    max_inflate_ratio: Optional[int] = None,
    trust: bool = False,
) -> Dict[str, Any]:
    """Converts a file to another format (an ONNX model to NNabla with its
    graph; ``input_shape`` fixes symbolic input dimensions, ``input_value``
    fixes inputs to constants (an ``If`` on them imports as its branch); ``params`` an
    NNabla network's parameter file; ``network``/``opset`` for ONNX export;
    ``sync`` flushes to the disk); returns ``{"from", "to", "tensors",
    "whole_model", "skipped", "warnings", "cast", "renamed", "graph"}``."""

def inspect(path: _Path, schema: int = 2) -> Dict[str, Any]:
    """The ``inspect --json`` document (schema 2, or 1) of a file."""

def diff(
    a: _Path,
    b: _Path,
    tolerance: float = 0.0,
    rtol: float = 0.0,
    *,
    strict_dtype: bool = False,
) -> Dict[str, Any]:
    """Compares the tensors of two files of any formats."""

def stats(
    path: _Path,
    *,
    only: Union[str, Iterable[str], None] = None,
    exclude: Union[str, Iterable[str], None] = None,
) -> Dict[str, Dict[str, Any]]:
    """Per-tensor statistics: name to ``{"dtype", "shape", "count", "min",
    "max", "mean", "std", "nan", "inf", "zeros"}``."""

def validate(path: _Path) -> List[str]:
    """The problems a check of the file's data finds (empty when valid)."""
