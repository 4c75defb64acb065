"""The model file format: a JSON header and raw numpy arrays, compressed, self-checking.

Layout (format 1; all integers little-endian):

    offset  size  field
    0       8     magic            b"GAMEAIM\\0"
    8       2     format           1
    10      2     flags            0 (reserved)
    12      4     header_length    H, at most 1 MiB
    16      H     header           UTF-8 JSON, see below
    16+H    N     body             zlib stream of the arrays' bytes, concatenated in header order
    end-32  32    checksum         sha256 of every byte before it

The header is ``{"metadata": {...}, "arrays": [{"name", "dtype", "shape"}...],
"body_length": N}``. Only plain numeric dtypes are allowed (no objects, so nothing can be
unpickled: numpy arrays are rebuilt with ``np.frombuffer``). Decoding checks, in order: the
length, the magic, the format, the checksum, the header, each array's dtype and size, and
that the body inflates to exactly the declared bytes (inflation is capped, so a crafted
body cannot exhaust memory). Any failure raises :class:`CorruptModel` naming what was wrong.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

MAGIC = b"GAMEAIM\0"
FORMAT = 1
MAX_HEADER = 1 << 20
MAX_BODY = 1 << 31  # 2 GiB of arrays, well above any tabular model we can train
_PREFIX = struct.Struct("<8sHHI")
_DIGEST = 32
ALLOWED_DTYPES = frozenset({"<u8", "<i8", "<u4", "<i4", "<i2", "<u2", "|i1", "|u1", "<f4",
                            "<f8", "<f2"})


class CorruptModel(ValueError):
    """The bytes are not a valid model: damaged, truncated, forged or of an unknown format."""


@dataclass(frozen=True)
class Container:
    metadata: dict[str, Any]
    arrays: dict[str, npt.NDArray[Any]]


_last_body: tuple[bytes, bytes] = (b"", b"")  # sha256 of the arrays' bytes, their zlib body
# zlib level 9 up to this many raw bytes (every tic-tac-toe model: a few percent smaller),
# level 6 above: on a four-in-a-row table of 37 MB, level 9 takes 14.1 s of CPU for
# 3.96 MB, level 6 1.18 s for 4.32 MB (and a 1,000,000-game table's 108 MB took 36 s, half
# of its whole training). The format is the same: any level inflates the same way.
SMALL_BODY = 1 << 20


def encode(metadata: dict[str, Any], arrays: dict[str, npt.NDArray[Any]]) -> bytes:
    """The file bytes of ``metadata`` (JSON-serialisable) and ``arrays``, deterministically.

    The compressed body of the last arrays encoded is remembered: the trainer encodes the
    same arrays again and again with new metadata (measuring ``model_bytes``, settling it in
    the metadata), and a four-in-a-row table takes seconds to compress but milliseconds to
    hash.
    """
    global _last_body
    specs, chunks = [], []
    hasher = hashlib.sha256()
    for name, array in arrays.items():
        a = np.ascontiguousarray(array)
        dtype = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
        a = a.astype(dtype, copy=False)
        if a.dtype.str not in ALLOWED_DTYPES:
            raise ValueError(f"array {name!r} has dtype {a.dtype}, which models may not store")
        specs.append({"name": name, "dtype": a.dtype.str, "shape": list(a.shape)})
        view = a.reshape(-1).view(np.uint8).data  # the array's own bytes, not a copy
        hasher.update(view)
        chunks.append(view)
    raw_length = sum(len(c) for c in chunks)
    digest = hasher.digest()
    remembered = _last_body
    if remembered[0] == digest:
        body = remembered[1]
    else:
        deflate = zlib.compressobj(level=9 if raw_length <= SMALL_BODY else 6)
        body = b"".join([*(deflate.compress(c) for c in chunks), deflate.flush()])
        _last_body = (digest, body)
    header = json.dumps(
        {"metadata": metadata, "arrays": specs, "body_length": raw_length},
        sort_keys=True, separators=(",", ":"), allow_nan=False,
    ).encode()
    head = _PREFIX.pack(MAGIC, FORMAT, 0, len(header)) + header + body
    return head + hashlib.sha256(head).digest()


def decode(data: bytes) -> Container:
    """The metadata and arrays in ``data``.

    Raises:
        CorruptModel: on any mismatch; the message says which check failed.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise CorruptModel(f"model data must be bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < _PREFIX.size + _DIGEST:
        raise CorruptModel(f"model is truncated: {len(data)} bytes is shorter than any model")
    magic, fmt, _flags, header_length = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise CorruptModel("not a gameai model: bad magic bytes")
    if fmt != FORMAT:
        raise CorruptModel(f"unsupported model format {fmt}; this version reads format {FORMAT}")
    if hashlib.sha256(data[:-_DIGEST]).digest() != data[-_DIGEST:]:
        raise CorruptModel("model checksum mismatch: the bytes are damaged or truncated")
    if header_length > MAX_HEADER or _PREFIX.size + header_length > len(data) - _DIGEST:
        raise CorruptModel(f"model header length {header_length} is out of range")
    try:
        header = json.loads(data[_PREFIX.size : _PREFIX.size + header_length])
        metadata, specs, body_length = header["metadata"], header["arrays"], header["body_length"]
    except (ValueError, KeyError, TypeError) as e:
        raise CorruptModel(f"model header is not valid: {e}") from e
    if not isinstance(metadata, dict) or not isinstance(specs, list):
        raise CorruptModel("model header has the wrong shape")
    layout = _layout(specs, body_length)
    body = _inflate(data[_PREFIX.size + header_length : -_DIGEST], body_length)
    arrays: dict[str, npt.NDArray[Any]] = {}
    for name, dtype, shape, start, size in layout:
        arrays[name] = np.frombuffer(body, dtype=dtype, count=size // dtype.itemsize,
                                     offset=start).reshape(shape)
    return Container(metadata, arrays)


def _layout(specs: list[Any], body_length: Any) -> list[tuple[str, np.dtype[Any], tuple[int, ...],
                                                              int, int]]:
    if not isinstance(body_length, int) or not 0 <= body_length <= MAX_BODY:
        raise CorruptModel(f"model body length {repr(body_length)[:40]} is out of range")
    layout, offset = [], 0
    for spec in specs:
        try:
            name, dtype_str, shape = spec["name"], spec["dtype"], spec["shape"]
        except (KeyError, TypeError) as e:
            raise CorruptModel(f"model array description is not valid: {repr(spec)[:60]}") from e
        if dtype_str not in ALLOWED_DTYPES:
            raise CorruptModel(f"model array {str(name)[:40]!r} has a forbidden dtype "
                               f"{repr(dtype_str)[:40]}")
        if not (isinstance(shape, list) and all(isinstance(n, int) and n >= 0 for n in shape)):
            raise CorruptModel(f"model array {str(name)[:40]!r} has an invalid shape "
                               f"{repr(shape)[:40]}")
        dtype = np.dtype(dtype_str)
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        layout.append((str(name), dtype, tuple(shape), offset, size))
        offset += size
    if offset != body_length:
        raise CorruptModel(f"model arrays need {offset} bytes but the body declares {body_length}")
    return layout


def _inflate(compressed: bytes, expected: int) -> bytes:
    inflater = zlib.decompressobj()
    try:
        body = inflater.decompress(compressed, expected + 1)
    except zlib.error as e:
        raise CorruptModel(f"model body does not decompress: {e}") from e
    if len(body) != expected or not inflater.eof or inflater.unconsumed_tail:
        raise CorruptModel(f"model body inflates to {len(body)}+ bytes, expected {expected}")
    return body
