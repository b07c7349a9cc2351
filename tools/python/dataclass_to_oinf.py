#!/usr/bin/env python3
"""Serialize a Python dataclass instance into an OINF file.

The layout follows docs/oinf-format.md (the reading shared with the C++
library). Field mapping, decided from each field's *value*:

* ``int`` (not ``bool``)          -> sizevar (u64, 0 .. 2**64-1)
* ``bool``                        -> metadata BOOL
* ``str``                         -> metadata STRING
* ``float``                       -> metadata F64
* numpy scalar (``np.float32(1)``) -> metadata scalar of that numpy type
* ``ScalarValue(value, dtype)``   -> metadata scalar of ``dtype``
* ``Bitset(bits)``                -> metadata BITSET
* ``list`` / ``tuple``            -> metadata NDARRAY (numpy infers the type:
  float -> f64, int -> i64, bool -> bool)
* ``NdArray(array)``              -> metadata NDARRAY with the array's dtype
* ``np.ndarray`` / ``TensorSpec`` -> tensor with data
* ``UninitializedTensor``         -> tensor without data

Names come from the field names unless a wrapper is given ``name=``.

Library use::

    from dataclass_to_oinf import TensorSpec, write_oinf
    write_oinf(instance, "model.oinf")

CLI::

    dataclass_to_oinf.py --input module.path:ClassOrInstanceOrFunction \
        --output out.oinf [--json data.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import json
import os
import re
import struct
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "OinfError",
    "TensorSpec",
    "UninitializedTensor",
    "Bitset",
    "ScalarValue",
    "NdArray",
    "dataclass_to_oinf",
    "write_oinf",
    "main",
]

# ---------------------------------------------------------------------------
# Format constants
# ---------------------------------------------------------------------------

MAGIC = b"OINF\x00"
VERSION = 1
HEADER_SIZE = 69
HEADER_PADDED = 72
MAX_RANK = 64
MAX_ENTRIES = 1_048_576
MAX_FILE_SIZE = 1 << 40
U64_MAX = (1 << 64) - 1
TENSOR_HAS_DATA = 1

# value-type tags
I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, BOOL = range(1, 13)
BITSET, STRING, NDARRAY = 13, 14, 15

# alias -> (tag, numpy little-endian dtype)
_DTYPES: Dict[str, Tuple[int, np.dtype]] = {
    "i8": (I8, np.dtype("<i1")),
    "i16": (I16, np.dtype("<i2")),
    "i32": (I32, np.dtype("<i4")),
    "i64": (I64, np.dtype("<i8")),
    "u8": (U8, np.dtype("<u1")),
    "u16": (U16, np.dtype("<u2")),
    "u32": (U32, np.dtype("<u4")),
    "u64": (U64, np.dtype("<u8")),
    "f16": (F16, np.dtype("<f2")),
    "f32": (F32, np.dtype("<f4")),
    "f64": (F64, np.dtype("<f8")),
    "bool": (BOOL, np.dtype("bool")),
}
_KIND_SIZE_TO_ALIAS = {
    (np.dtype(dt).kind, np.dtype(dt).itemsize): alias for alias, (_, dt) in _DTYPES.items()
}

_NAME_RE = re.compile(r"[A-Za-z0-9._-]+\Z")


class OinfError(ValueError):
    """Raised for anything that cannot be written as a valid OINF file."""


def _align8(x: int) -> int:
    return (x + 7) & ~7


# ---------------------------------------------------------------------------
# Public wrapper types
# ---------------------------------------------------------------------------


def _dtype_alias(dtype: Any, what: str) -> str:
    """Map a dtype alias / numpy dtype to one of the 12 aliases, or raise."""
    if isinstance(dtype, str):
        if dtype in _DTYPES:
            return dtype
        raise OinfError(
            f"{what}: unsupported dtype {dtype!r} (expected one of {', '.join(_DTYPES)})"
        )
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise OinfError(f"{what}: unsupported dtype {dtype!r}") from None
    alias = _KIND_SIZE_TO_ALIAS.get((dt.kind, dt.itemsize))
    if alias is None:
        raise OinfError(f"{what}: unsupported dtype {dt}")
    return alias


class TensorSpec:
    """A tensor with data. ``dtype`` (an alias like ``"f32"``) converts the data."""

    def __init__(self, data: Any, dtype: Any = None, name: Optional[str] = None):
        self.data = data
        self.dtype = dtype
        self.name = name

    def __repr__(self) -> str:
        return f"TensorSpec(dtype={self.dtype!r}, name={self.name!r}, data={self.data!r})"


class UninitializedTensor:
    """A tensor declared by type and shape only (no data blob)."""

    def __init__(self, dtype: Any, shape: Any, name: Optional[str] = None):
        self.dtype = dtype
        self.shape = shape
        self.name = name

    def __repr__(self) -> str:
        return f"UninitializedTensor(dtype={self.dtype!r}, shape={self.shape!r}, name={self.name!r})"


class Bitset:
    """Metadata bitset: an iterable of bools / 0-1 ints, or a string of '0'/'1'."""

    def __init__(self, bits: Any, name: Optional[str] = None):
        self.bits = bits
        self.name = name

    def __repr__(self) -> str:
        return f"Bitset({self.bits!r}, name={self.name!r})"


class ScalarValue:
    """Typed metadata scalar, e.g. ``ScalarValue(3, "u32")``."""

    def __init__(self, value: Any, dtype: Any, name: Optional[str] = None):
        self.value = value
        self.dtype = dtype
        self.name = name

    def __repr__(self) -> str:
        return f"ScalarValue({self.value!r}, {self.dtype!r}, name={self.name!r})"


class NdArray:
    """Metadata NDARRAY carrying a numpy array with its own dtype."""

    def __init__(self, array: Any, name: Optional[str] = None):
        self.array = array
        self.name = name

    def __repr__(self) -> str:
        return f"NdArray({self.array!r}, name={self.name!r})"


# ---------------------------------------------------------------------------
# Encoding helpers
# ---------------------------------------------------------------------------


def _check_name(name: Any, what: str) -> str:
    if not isinstance(name, str):
        raise OinfError(f"{what}: name must be a str, got {type(name).__name__}")
    if not name:
        raise OinfError(f"{what}: name must not be empty")
    if not _NAME_RE.match(name):
        raise OinfError(f"{what}: name {name!r} contains characters outside [A-Za-z0-9._-]")
    if len(name) > 0xFFFFFFFF:
        raise OinfError(f"{what}: name is too long")
    return name


def _encode_string(text: str, what: str) -> bytes:
    """String: u32 length, bytes, zero padding to align8(4 + length)."""
    _check_name(text, what)
    raw = text.encode("ascii")
    total = _align8(4 + len(raw))
    return struct.pack("<I", len(raw)) + raw + b"\x00" * (total - 4 - len(raw))


def _to_le_array(arr: np.ndarray, alias: str) -> np.ndarray:
    dt = _DTYPES[alias][1]
    return np.ascontiguousarray(arr, dtype=dt)


def _array_alias(arr: np.ndarray, what: str) -> str:
    return _dtype_alias(arr.dtype, what)


def _check_shape(shape: Sequence[int], what: str) -> Tuple[int, ...]:
    if len(shape) > MAX_RANK:
        raise OinfError(f"{what}: rank {len(shape)} exceeds the maximum of {MAX_RANK}")
    dims = []
    for d in shape:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise OinfError(f"{what}: dimension {d!r} is not an integer")
        d = int(d)
        if d < 0 or d > U64_MAX:
            raise OinfError(f"{what}: dimension {d} is out of range 0..2^64-1")
        dims.append(d)
    return tuple(dims)


def _numel(dims: Iterable[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _check_integer_range(value: int, alias: str, what: str) -> None:
    dt = _DTYPES[alias][1]
    info = np.iinfo(dt)
    if value < int(info.min) or value > int(info.max):
        raise OinfError(f"{what}: value {value} does not fit in {alias}")


def _scalar_bytes(value: Any, alias: str, what: str) -> bytes:
    tag, dt = _DTYPES[alias]
    if alias == "bool":
        if isinstance(value, (bool, np.bool_)):
            v = bool(value)
        elif isinstance(value, (int, np.integer)) and int(value) in (0, 1):
            v = bool(int(value))
        else:
            raise OinfError(f"{what}: value {value!r} is not a bool")
        return b"\x01" if v else b"\x00"
    if dt.kind in "iu":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise OinfError(f"{what}: value {value!r} is not an integer (dtype {alias})")
        _check_integer_range(int(value), alias, what)
        return np.array(int(value), dtype=dt).tobytes()
    # float types
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise OinfError(f"{what}: value {value!r} is not a number (dtype {alias})")
    return np.array(float(value), dtype=np.float64).astype(dt).tobytes()


def _bitset_payload(bits: Any, what: str) -> Tuple[bytes, int]:
    if isinstance(bits, str):
        if any(c not in "01" for c in bits):
            raise OinfError(f"{what}: bitset string may only contain '0' and '1'")
        values = [c == "1" for c in bits]
    else:
        try:
            items = list(bits)
        except TypeError:
            raise OinfError(f"{what}: bitset bits must be iterable") from None
        values = []
        for b in items:
            if isinstance(b, (bool, np.bool_)):
                values.append(bool(b))
            elif isinstance(b, (int, np.integer)) and int(b) in (0, 1):
                values.append(bool(int(b)))
            else:
                raise OinfError(f"{what}: bitset element {b!r} is not 0/1/bool")
    bit_count = len(values)
    if bit_count > 0xFFFFFFFF:
        raise OinfError(f"{what}: bitset has too many bits")
    byte_count = (bit_count + 7) // 8
    data = bytearray(byte_count)
    for i, v in enumerate(values):
        if v:
            data[i >> 3] |= 1 << (i & 7)
    body = struct.pack("<II", bit_count, byte_count) + bytes(data)
    nbytes = _align8(len(body))
    return body + b"\x00" * (nbytes - len(body)), nbytes


def _ndarray_payload(arr: np.ndarray, alias: str, what: str) -> Tuple[bytes, int]:
    dims = _check_shape(arr.shape, what)
    tag = _DTYPES[alias][0]
    data = _to_le_array(arr, alias).tobytes()
    body = struct.pack("<II", tag, len(dims)) + b"".join(struct.pack("<Q", d) for d in dims) + data
    nbytes = _align8(len(body))
    return body + b"\x00" * (nbytes - len(body)), nbytes


# ---------------------------------------------------------------------------
# Logical entries
# ---------------------------------------------------------------------------


class _SizeVar:
    def __init__(self, name: str, value: int):
        self.name = name
        self.value = value


class _Meta:
    def __init__(self, name: str, tag: int, payload: bytes, nbytes: int):
        self.name = name
        self.tag = tag
        self.payload = payload  # the exact value_nbytes bytes
        self.nbytes = nbytes


class _Tensor:
    def __init__(self, name: str, tag: int, dims: Tuple[int, ...], data: Optional[bytes]):
        self.name = name
        self.tag = tag
        self.dims = dims
        self.data = data  # None: no HAS_DATA


def _tensor_from_array(data: Any, dtype: Any, name: str, what: str) -> _Tensor:
    if isinstance(data, np.ndarray):
        arr = data
    else:
        try:
            arr = np.asarray(data)
        except Exception as exc:  # ragged lists etc.
            raise OinfError(f"{what}: cannot convert tensor data to an array: {exc}") from None
    if dtype is not None:
        alias = _dtype_alias(dtype, what)
        try:
            arr = arr.astype(_DTYPES[alias][1])
        except (TypeError, ValueError) as exc:
            raise OinfError(f"{what}: cannot convert tensor data to {alias}: {exc}") from None
    else:
        alias = _array_alias(arr, what)
    dims = _check_shape(arr.shape, what)
    raw = _to_le_array(arr, alias).tobytes()
    return _Tensor(name, _DTYPES[alias][0], dims, raw)


def _list_to_ndarray(value: Any, what: str) -> Tuple[np.ndarray, str]:
    try:
        arr = np.asarray(value)
    except Exception as exc:
        raise OinfError(f"{what}: cannot convert list to an array: {exc}") from None
    kind = arr.dtype.kind
    if kind == "b":
        alias = "bool"
    elif kind == "i":
        alias = "i64"
    elif kind == "u":
        alias = "u64"  # only when an int does not fit in i64
    elif kind == "f":
        alias = "f64"
    else:
        raise OinfError(
            f"{what}: list elements must be all numbers or all bools (numpy inferred {arr.dtype})"
        )
    return arr, alias


def _classify(field_name: str, value: Any, sizevars, metas, tensors) -> None:
    what = f"field {field_name!r}"
    explicit = getattr(value, "name", None) if isinstance(
        value, (TensorSpec, UninitializedTensor, Bitset, ScalarValue, NdArray)
    ) else None
    name = _check_name(explicit if explicit is not None else field_name, what)

    if isinstance(value, (bool, np.bool_)):
        metas.append(_Meta(name, BOOL, b"\x01" if value else b"\x00", 1))
    elif isinstance(value, int):
        if value < 0 or value > U64_MAX:
            raise OinfError(f"{what}: sizevar value {value} is out of range 0..2^64-1")
        sizevars.append(_SizeVar(name, int(value)))
    elif isinstance(value, str):
        payload = _encode_string(value, f"{what} (string value)")
        metas.append(_Meta(name, STRING, payload, len(payload)))
    elif isinstance(value, float):  # includes np.float64
        metas.append(_Meta(name, F64, struct.pack("<d", value), 8))
    elif isinstance(value, np.generic):  # other numpy scalars: typed metadata
        alias = _dtype_alias(value.dtype, what)
        tag, dt = _DTYPES[alias]
        metas.append(_Meta(name, tag, np.array(value, dtype=dt).tobytes(), dt.itemsize))
    elif isinstance(value, ScalarValue):
        alias = _dtype_alias(value.dtype, what)
        tag, dt = _DTYPES[alias]
        metas.append(_Meta(name, tag, _scalar_bytes(value.value, alias, what), dt.itemsize))
    elif isinstance(value, Bitset):
        payload, nbytes = _bitset_payload(value.bits, what)
        metas.append(_Meta(name, BITSET, payload, nbytes))
    elif isinstance(value, NdArray):
        arr = value.array if isinstance(value.array, np.ndarray) else np.asarray(value.array)
        alias = _array_alias(arr, what)
        payload, nbytes = _ndarray_payload(arr, alias, what)
        metas.append(_Meta(name, NDARRAY, payload, nbytes))
    elif isinstance(value, (list, tuple)):
        arr, alias = _list_to_ndarray(value, what)
        payload, nbytes = _ndarray_payload(arr, alias, what)
        metas.append(_Meta(name, NDARRAY, payload, nbytes))
    elif isinstance(value, np.ndarray):
        tensors.append(_tensor_from_array(value, None, name, what))
    elif isinstance(value, TensorSpec):
        tensors.append(_tensor_from_array(value.data, value.dtype, name, what))
    elif isinstance(value, UninitializedTensor):
        alias = _dtype_alias(value.dtype, what)
        shape = value.shape
        if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
            shape = (shape,)
        try:
            shape = tuple(shape)
        except TypeError:
            raise OinfError(f"{what}: shape {value.shape!r} is not a sequence of integers") from None
        dims = _check_shape(shape, what)
        tensors.append(_Tensor(name, _DTYPES[alias][0], dims, None))
    else:
        raise OinfError(f"{what}: unsupported value type {type(value).__name__}")


def _check_unique(entries, table: str) -> None:
    if len(entries) > MAX_ENTRIES:
        raise OinfError(f"{table} table has {len(entries)} entries (maximum {MAX_ENTRIES})")
    seen = set()
    for e in entries:
        if e.name in seen:
            raise OinfError(f"duplicate {table} name {e.name!r}")
        seen.add(e.name)


def _serialize(sizevars: List[_SizeVar], metas: List[_Meta], tensors: List[_Tensor]) -> bytes:
    _check_unique(sizevars, "sizevar")
    _check_unique(metas, "metadata")
    _check_unique(tensors, "tensor")
    key = lambda e: e.name.encode("ascii")  # noqa: E731
    sizevars = sorted(sizevars, key=key)
    metas = sorted(metas, key=key)
    tensors = sorted(tensors, key=key)

    # Table sizes do not depend on offset values, so lay out first.
    sv_blob = b"".join(_encode_string(s.name, "sizevar") + struct.pack("<Q", s.value) for s in sizevars)
    off_sv = HEADER_PADDED
    off_meta = _align8(off_sv + len(sv_blob))
    meta_size = sum(len(_encode_string(m.name, "metadata")) + 24 for m in metas)
    off_tens = _align8(off_meta + meta_size)
    tens_size = sum(len(_encode_string(t.name, "tensor")) + 28 + 8 * len(t.dims) for t in tensors)
    off_data = _align8(off_tens + tens_size)

    # Data placement: metadata values first, then tensors with data.
    cursor = off_data
    meta_offsets = []
    for m in metas:
        meta_offsets.append(cursor)
        cursor = _align8(cursor + m.nbytes)
    tensor_offsets = []
    for t in tensors:
        if t.data is None:
            tensor_offsets.append(0)
        else:
            tensor_offsets.append(cursor)
            cursor = _align8(cursor + len(t.data))
    file_size = cursor
    if file_size > MAX_FILE_SIZE:
        raise OinfError(f"file would be {file_size} bytes, more than the {MAX_FILE_SIZE} byte limit")

    out = bytearray()
    out += MAGIC
    out += struct.pack(
        "<IIIIIIQQQQQ",
        VERSION, 0, len(sizevars), len(metas), len(tensors), 0,
        off_sv, off_meta, off_tens, off_data, file_size,
    )
    assert len(out) == HEADER_SIZE
    out += b"\x00" * (HEADER_PADDED - HEADER_SIZE)
    out += sv_blob
    out += b"\x00" * (off_meta - len(out))
    for m, off in zip(metas, meta_offsets):
        out += _encode_string(m.name, "metadata")
        out += struct.pack("<IIQQ", m.tag, 0, m.nbytes, off)
    out += b"\x00" * (off_tens - len(out))
    for t, off in zip(tensors, tensor_offsets):
        out += _encode_string(t.name, "tensor")
        flags = TENSOR_HAS_DATA if t.data is not None else 0
        out += struct.pack("<III", t.tag, len(t.dims), flags)
        out += b"".join(struct.pack("<Q", d) for d in t.dims)
        nbytes = len(t.data) if t.data is not None else 0
        out += struct.pack("<QQ", nbytes, off)
    out += b"\x00" * (off_data - len(out))
    for m in metas:
        out += m.payload
        out += b"\x00" * (_align8(len(out)) - len(out))
    for t in tensors:
        if t.data is not None:
            out += t.data
            out += b"\x00" * (_align8(len(out)) - len(out))
    assert len(out) == file_size
    return bytes(out)


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def dataclass_to_oinf(instance: Any) -> bytes:
    """Return the OINF bytes for a dataclass instance."""
    if not dataclasses.is_dataclass(instance) or isinstance(instance, type):
        raise OinfError(f"expected a dataclass instance, got {type(instance).__name__}")
    sizevars: List[_SizeVar] = []
    metas: List[_Meta] = []
    tensors: List[_Tensor] = []
    for f in dataclasses.fields(instance):
        _classify(f.name, getattr(instance, f.name), sizevars, metas, tensors)
    return _serialize(sizevars, metas, tensors)


def write_oinf(instance: Any, path: Any) -> None:
    """Serialize ``instance`` and write it to ``path``."""
    data = dataclass_to_oinf(instance)
    with open(path, "wb") as fh:
        fh.write(data)


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------


def _resolve(spec: str) -> Any:
    if ":" not in spec:
        raise OinfError(f"--input must look like module.path:Name, got {spec!r}")
    mod_name, _, attr_path = spec.partition(":")
    if not mod_name or not attr_path:
        raise OinfError(f"--input must look like module.path:Name, got {spec!r}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.append(cwd)
    try:
        obj: Any = importlib.import_module(mod_name)
    except Exception as exc:
        raise OinfError(f"cannot import module {mod_name!r}: {exc}") from None
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise OinfError(f"module {mod_name!r} has no attribute {attr_path!r}") from None
    return obj


def _instantiate(obj: Any, kwargs: Optional[Dict[str, Any]], spec: str) -> Any:
    if isinstance(obj, type):
        if not dataclasses.is_dataclass(obj):
            raise OinfError(f"{spec} is a class but not a dataclass")
        if kwargs is None:
            missing = [
                f.name for f in dataclasses.fields(obj)
                if f.init and f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING  # type: ignore[misc]
            ]
            if missing:
                raise OinfError(
                    f"dataclass {obj.__name__} has fields without defaults "
                    f"({', '.join(missing)}); provide values with --json"
                )
            kwargs = {}
        try:
            return obj(**kwargs)
        except Exception as exc:
            raise OinfError(f"cannot instantiate {obj.__name__}: {exc}") from None
    if dataclasses.is_dataclass(obj):
        if kwargs is not None:
            raise OinfError(f"{spec} is already an instance; --json cannot be applied")
        return obj
    if callable(obj):
        try:
            result = obj(**(kwargs or {}))
        except Exception as exc:
            raise OinfError(f"calling {spec} failed: {exc}") from None
        if not dataclasses.is_dataclass(result) or isinstance(result, type):
            raise OinfError(f"{spec} returned {type(result).__name__}, not a dataclass instance")
        return result
    raise OinfError(f"{spec} is neither a dataclass, a dataclass instance nor a function")


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str):  # exit 1 (argparse's default is 2)
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = _ArgumentParser(
        prog="dataclass_to_oinf",
        description="Serialize a Python dataclass into an OINF file.",
    )
    parser.add_argument("--input", required=True,
                        help="module.path:Name (a dataclass, a dataclass instance, or a function returning one)")
    parser.add_argument("--output", required=True, help="output .oinf path")
    parser.add_argument("--json", help="JSON object with keyword arguments for the class or function")
    args = parser.parse_args(argv)
    try:
        kwargs = None
        if args.json is not None:
            try:
                with open(args.json, "r", encoding="utf-8") as fh:
                    kwargs = json.load(fh)
            except (OSError, ValueError) as exc:
                raise OinfError(f"cannot read JSON file {args.json!r}: {exc}") from None
            if not isinstance(kwargs, dict):
                raise OinfError(f"JSON file {args.json!r} must contain an object")
        obj = _resolve(args.input)
        instance = _instantiate(obj, kwargs, args.input)
        data = dataclass_to_oinf(instance)
        try:
            with open(args.output, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise OinfError(f"cannot write {args.output!r}: {exc}") from None
    except OinfError as exc:
        print(f"dataclass_to_oinf: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # Modules imported by --input do `from dataclass_to_oinf import TensorSpec`;
    # make that the same module object as this script so isinstance() works.
    sys.modules.setdefault("dataclass_to_oinf", sys.modules[__name__])
    sys.exit(main())
