#!/usr/bin/env python3
"""Validate an OINF file and print its human-readable view.

Implements every reading rule of docs/oinf-format.md independently of the
writer (dataclass_to_oinf.py). Hostile input is expected: no length or count
read from the file is used for allocation or iteration before it has been
checked against the bytes that are actually left.

    verify_oinf.py FILE

prints the view on stdout and exits 0, or prints
``verify_oinf: invalid OINF file FILE: <reason>`` on stderr and exits 1.

Importable: ``parse_oinf(data: bytes) -> OinfFile``, ``render(parsed) -> str``.
"""

from __future__ import annotations

import math
import os
import re
import struct
import sys
from typing import List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["OinfFormatError", "OinfFile", "SizeVar", "Metadata", "Tensor",
           "parse_oinf", "render", "main"]

MAGIC = b"OINF\x00"
HEADER_SIZE = 69
HEADER_PADDED = 72
MAX_RANK = 64
MAX_ENTRIES = 1_048_576
MAX_FILE_SIZE = 1 << 40
HAS_DATA = 1

# tag -> (printed name, element size, numpy dtype)
_TYPES = {
    1: ("i8", 1, np.dtype("<i1")),
    2: ("i16", 2, np.dtype("<i2")),
    3: ("i32", 4, np.dtype("<i4")),
    4: ("i64", 8, np.dtype("<i8")),
    5: ("u8", 1, np.dtype("<u1")),
    6: ("u16", 2, np.dtype("<u2")),
    7: ("u32", 4, np.dtype("<u4")),
    8: ("u64", 8, np.dtype("<u8")),
    9: ("f16", 2, np.dtype("<f2")),
    10: ("f32", 4, np.dtype("<f4")),
    11: ("f64", 8, np.dtype("<f8")),
    12: ("bool", 1, np.dtype("<u1")),  # read as bytes, validated 0/1
}
BOOL = 12
BITSET, STRING, NDARRAY = 13, 14, 15
_META_TYPE_NAMES = {BITSET: "bitset", STRING: "str", NDARRAY: "ndarray"}

_NAME_RE = re.compile(rb"[A-Za-z0-9._-]+\Z")

# minimum encoded sizes (a String is at least 8 bytes: length >= 1)
_MIN_SIZEVAR = 8 + 8
_MIN_METADATA = 8 + 24
_MIN_TENSOR = 8 + 28


class OinfFormatError(ValueError):
    """The input is not a valid OINF file; the message names the byte offset."""


def _align8(x: int) -> int:
    return (x + 7) & ~7


# ---------------------------------------------------------------------------
# Parsed representation
# ---------------------------------------------------------------------------


class SizeVar:
    def __init__(self, name: str, value: int):
        self.name = name
        self.value = value

    def __repr__(self) -> str:
        return f"SizeVar({self.name!r}, {self.value})"


class Metadata:
    """value: int/float/bool (scalar tags 1-12), str (14),
    list of bools (13), or (element_tag, dims, flat ndarray) (15)."""

    def __init__(self, key: str, value_type: int, value, nbytes: int, offset: int):
        self.key = key
        self.value_type = value_type
        self.value = value
        self.nbytes = nbytes
        self.offset = offset

    def __repr__(self) -> str:
        return f"Metadata({self.key!r}, type={self.value_type}, value={self.value!r})"


class Tensor:
    """data: flat numpy array of numel elements (bool tensors as uint8 0/1),
    or None without HAS_DATA."""

    def __init__(self, name: str, dtype: int, dims: Tuple[int, ...], flags: int,
                 nbytes: int, offset: int):
        self.name = name
        self.dtype = dtype
        self.dims = dims
        self.flags = flags
        self.nbytes = nbytes
        self.offset = offset
        self.data: Optional[np.ndarray] = None

    @property
    def has_data(self) -> bool:
        return bool(self.flags & HAS_DATA)

    def __repr__(self) -> str:
        return f"Tensor({self.name!r}, {_TYPES[self.dtype][0]}{list(self.dims)}, has_data={self.has_data})"


class OinfFile:
    def __init__(self):
        self.version = 1
        self.file_size = 0
        self.sizevars: List[SizeVar] = []
        self.metadata: List[Metadata] = []
        self.tensors: List[Tensor] = []


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------


class _Reader:
    def __init__(self, data: bytes):
        self.buf = data
        self.size = len(data)

    def need(self, off: int, n: int, what: str) -> None:
        if n < 0 or off < 0 or off > self.size or n > self.size - off:
            raise OinfFormatError(
                f"{what} at byte {off}: needs {n} bytes but the file ends at byte {self.size}"
            )

    def u32(self, off: int, what: str) -> int:
        self.need(off, 4, what)
        return struct.unpack_from("<I", self.buf, off)[0]

    def u64(self, off: int, what: str) -> int:
        self.need(off, 8, what)
        return struct.unpack_from("<Q", self.buf, off)[0]

    def zeros(self, start: int, end: int, what: str) -> None:
        """Check that the padding bytes [start, end) exist and are zero."""
        if end <= start:
            return
        self.need(start, end - start, what)
        chunk = self.buf[start:end]
        if chunk.count(0) != len(chunk):
            for i, b in enumerate(chunk):
                if b != 0:
                    raise OinfFormatError(
                        f"{what} at byte {start + i}: padding byte is 0x{b:02x}, expected 0x00"
                    )

    def string(self, off: int, what: str, limit: Optional[int] = None) -> Tuple[str, int]:
        """Read a String at off; return (text, end offset incl. padding).

        ``limit`` bounds the String (for a metadata STRING payload)."""
        end_limit = self.size if limit is None else limit
        if off + 4 > end_limit:
            raise OinfFormatError(
                f"{what} at byte {off}: string length field needs 4 bytes but only "
                f"{max(end_limit - off, 0)} remain")
        length = struct.unpack_from("<I", self.buf, off)[0]
        if length == 0:
            raise OinfFormatError(f"{what} at byte {off}: string length is 0 (empty names are not allowed)")
        total = _align8(4 + length)
        if total > end_limit - off:
            raise OinfFormatError(
                f"{what} at byte {off}: string length {length} (padded {total} bytes) exceeds the "
                f"{end_limit - off} bytes remaining")
        raw = self.buf[off + 4: off + 4 + length]
        if not _NAME_RE.match(raw):
            for i, b in enumerate(raw):
                if not (48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122 or b in (0x2E, 0x5F, 0x2D)):
                    raise OinfFormatError(
                        f"{what} at byte {off + 4 + i}: string byte 0x{b:02x} is outside [A-Za-z0-9._-]")
        self.zeros(off + 4 + length, off + total, f"{what} string padding")
        return raw.decode("ascii"), off + total


def _numel(dims: Sequence[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _check_count(r: _Reader, count: int, start: int, min_entry: int, table: str, field_off: int) -> None:
    if count > MAX_ENTRIES:
        raise OinfFormatError(
            f"file header at byte {field_off}: {table} count {count} exceeds the limit of {MAX_ENTRIES}")
    remaining = max(r.size - start, 0)
    if count * min_entry > remaining:
        raise OinfFormatError(
            f"{table} table at byte {start}: {count} entries need at least {count * min_entry} bytes "
            f"but only {remaining} remain")


def _check_section_offset(r: _Reader, name: str, field_off: int, value: int, table_end: int,
                          prev: str) -> None:
    expected = _align8(table_end)
    if value != expected:
        raise OinfFormatError(
            f"file header at byte {field_off}: {name} {value} != expected {expected} "
            f"(align8 of the end of the {prev} table at byte {table_end})")
    r.zeros(table_end, expected, f"padding after the {prev} table")


def _read_elements(r: _Reader, off: int, tag: int, numel: int, what: str) -> np.ndarray:
    """View numel elements of type tag at off (bounds already checked)."""
    _, size, dt = _TYPES[tag]
    arr = np.frombuffer(r.buf, dtype=dt, count=numel, offset=off)
    if tag == BOOL and numel:
        bad = np.flatnonzero(arr > 1)
        if bad.size:
            i = int(bad[0])
            raise OinfFormatError(
                f"{what} at byte {off + i}: bool element {i} is {int(arr[i])}, expected 0 or 1")
    return arr


def _parse_meta_value(r: _Reader, m: Metadata, idx: int) -> None:
    what = f"metadata entry {idx} ('{m.key}') value"
    off, nbytes, t = m.offset, m.nbytes, m.value_type
    end = off + nbytes
    # blob must be in bounds before anything is read from it
    if end > r.size:
        raise OinfFormatError(
            f"{what} at byte {off}: value_nbytes {nbytes} extends past the end of the file "
            f"(byte {r.size})")
    if 1 <= t <= 12:
        size = _TYPES[t][1]
        if nbytes != size:
            raise OinfFormatError(
                f"{what} at byte {off}: value_nbytes {nbytes} != sizeof({_TYPES[t][0]}) {size}")
        arr = _read_elements(r, off, t, 1, what)
        if t == BOOL:
            m.value = bool(arr[0])
        elif t >= 9:
            m.value = float(arr[0])
        else:
            m.value = int(arr[0])
    elif t == STRING:
        text, send = r.string(off, what, limit=end)
        if send != end:
            raise OinfFormatError(
                f"{what} at byte {off}: value_nbytes {nbytes} != align8(4 + length {len(text)}) "
                f"= {send - off}")
        m.value = text
    elif t == BITSET:
        if nbytes < 8:
            raise OinfFormatError(f"{what} at byte {off}: value_nbytes {nbytes} is smaller than the "
                                  f"8-byte bitset header")
        bit_count, byte_count = struct.unpack_from("<II", r.buf, off)
        if byte_count != (bit_count + 7) // 8:
            raise OinfFormatError(
                f"{what} at byte {off + 4}: bitset byte_count {byte_count} != ceil(bit_count "
                f"{bit_count} / 8) = {(bit_count + 7) // 8}")
        expected = _align8(8 + byte_count)
        if nbytes != expected:
            raise OinfFormatError(
                f"{what} at byte {off}: value_nbytes {nbytes} != align8(8 + byte_count {byte_count}) "
                f"= {expected}")
        raw = np.frombuffer(r.buf, dtype=np.uint8, count=byte_count, offset=off + 8)
        if bit_count % 8 and byte_count:
            last = int(raw[-1])
            if last >> (bit_count % 8):
                raise OinfFormatError(
                    f"{what} at byte {off + 8 + byte_count - 1}: unused high bits of the last bitset "
                    f"byte are not zero (0x{last:02x}, bit_count {bit_count})")
        bits = np.unpackbits(raw, bitorder="little")[:bit_count] if byte_count else np.zeros(0, np.uint8)
        m.value = bits.astype(bool)
        r.zeros(off + 8 + byte_count, end, f"{what} bitset padding")
    elif t == NDARRAY:
        if nbytes < 8:
            raise OinfFormatError(f"{what} at byte {off}: value_nbytes {nbytes} is smaller than the "
                                  f"8-byte ndarray header")
        etype, ndim = struct.unpack_from("<II", r.buf, off)
        if not 1 <= etype <= 12:
            raise OinfFormatError(
                f"{what} at byte {off}: ndarray element_type {etype} is not a numeric/bool type (1-12)")
        if ndim > MAX_RANK:
            raise OinfFormatError(
                f"{what} at byte {off + 4}: ndarray ndim {ndim} exceeds the limit of {MAX_RANK}")
        if 8 + 8 * ndim > nbytes:
            raise OinfFormatError(
                f"{what} at byte {off + 8}: ndarray dims ({ndim} x 8 bytes) exceed value_nbytes {nbytes}")
        dims = struct.unpack_from(f"<{ndim}Q", r.buf, off + 8)
        numel = _numel(dims)
        size = _TYPES[etype][1]
        data_len = numel * size
        expected = _align8(8 + 8 * ndim + data_len)
        if nbytes != expected:
            raise OinfFormatError(
                f"{what} at byte {off}: value_nbytes {nbytes} != align8(8 + 8 x ndim {ndim} + numel "
                f"{numel} x sizeof({_TYPES[etype][0]}) {size}) = {expected}")
        data_off = off + 8 + 8 * ndim
        arr = _read_elements(r, data_off, etype, numel, what)
        r.zeros(data_off + data_len, end, f"{what} ndarray padding")
        m.value = (etype, tuple(dims), arr)
    else:  # pragma: no cover - tag validated earlier
        raise OinfFormatError(f"{what} at byte {off}: unknown value_type {t}")


def parse_oinf(data: bytes) -> OinfFile:
    """Validate ``data`` against docs/oinf-format.md and return its contents.

    Raises OinfFormatError (message names the structure and byte offset)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("parse_oinf expects bytes")
    data = bytes(data)
    r = _Reader(data)
    out = OinfFile()

    # ---- header ----
    if r.size > MAX_FILE_SIZE:
        raise OinfFormatError(f"file header at byte 0: file size {r.size} exceeds the limit of {MAX_FILE_SIZE}")
    if r.size < 5 or data[:5] != MAGIC:
        raise OinfFormatError(f"file header at byte 0: bad magic {data[:5]!r}, expected b'OINF\\x00'")
    if r.size < HEADER_PADDED:
        raise OinfFormatError(
            f"file header at byte 0: file is {r.size} bytes, shorter than the {HEADER_PADDED}-byte "
            f"padded header")
    (version, flags, n_sv, n_meta, n_tens, reserved,
     off_sv, off_meta, off_tens, off_data, file_size) = struct.unpack_from("<IIIIIIQQQQQ", data, 5)
    if version != 1:
        raise OinfFormatError(f"file header at byte 5: version {version} is not supported (expected 1)")
    if flags != 0:
        raise OinfFormatError(f"file header at byte 9: flags {flags} != 0")
    if reserved != 0:
        raise OinfFormatError(f"file header at byte 25: reserved {reserved} != 0")
    if file_size != r.size:
        raise OinfFormatError(f"file header at byte 61: file_size {file_size} != actual file size {r.size}")
    r.zeros(HEADER_SIZE, HEADER_PADDED, "header padding")
    if off_sv != HEADER_PADDED:
        raise OinfFormatError(f"file header at byte 29: offset_sizevars {off_sv} != {HEADER_PADDED}")
    out.version = version
    out.file_size = file_size

    # ---- sizevars ----
    pos = off_sv
    _check_count(r, n_sv, pos, _MIN_SIZEVAR, "sizevar", 13)
    seen = set()
    for i in range(n_sv):
        what = f"sizevar entry {i}"
        name, pos = r.string(pos, what)
        what = f"sizevar entry {i} ('{name}')"
        if name in seen:
            raise OinfFormatError(f"{what} at byte {pos - _align8(4 + len(name))}: duplicate sizevar name")
        seen.add(name)
        value = r.u64(pos, f"{what} value")
        pos += 8
        out.sizevars.append(SizeVar(name, value))
    _check_section_offset(r, "offset_metadata", 37, off_meta, pos, "sizevar")
    pos = off_meta

    # ---- metadata table ----
    _check_count(r, n_meta, pos, _MIN_METADATA, "metadata", 17)
    seen = set()
    for i in range(n_meta):
        what = f"metadata entry {i}"
        start = pos
        key, pos = r.string(pos, what)
        what = f"metadata entry {i} ('{key}')"
        if key in seen:
            raise OinfFormatError(f"{what} at byte {start}: duplicate metadata key")
        seen.add(key)
        r.need(pos, 24, what)
        vtype, vflags, nbytes, voff = struct.unpack_from("<IIQQ", data, pos)
        if not 1 <= vtype <= 15:
            raise OinfFormatError(f"{what} at byte {pos}: value_type {vtype} is not in 1-15")
        if vflags != 0:
            raise OinfFormatError(f"{what} at byte {pos + 4}: value_flags {vflags} != 0")
        out.metadata.append(Metadata(key, vtype, None, nbytes, voff))
        pos += 24
    _check_section_offset(r, "offset_tensors", 45, off_tens, pos, "metadata")
    pos = off_tens

    # ---- tensor index ----
    _check_count(r, n_tens, pos, _MIN_TENSOR, "tensor", 21)
    seen = set()
    for i in range(n_tens):
        what = f"tensor index entry {i}"
        start = pos
        name, pos = r.string(pos, what)
        what = f"tensor index entry {i} ('{name}')"
        if name in seen:
            raise OinfFormatError(f"{what} at byte {start}: duplicate tensor name")
        seen.add(name)
        r.need(pos, 12, what)
        dtype, ndim, tflags = struct.unpack_from("<III", data, pos)
        if not 1 <= dtype <= 12:
            raise OinfFormatError(f"{what} at byte {pos}: dtype {dtype} is not a numeric/bool type (1-12)")
        if ndim > MAX_RANK:
            raise OinfFormatError(f"{what} at byte {pos + 4}: ndim {ndim} exceeds the limit of {MAX_RANK}")
        if tflags & ~HAS_DATA:
            raise OinfFormatError(f"{what} at byte {pos + 8}: flags 0x{tflags:x} has bits other than HAS_DATA")
        pos += 12
        r.need(pos, 8 * ndim + 16, what + " dims/data fields")
        dims = struct.unpack_from(f"<{ndim}Q", data, pos)
        pos += 8 * ndim
        nbytes, doff = struct.unpack_from("<QQ", data, pos)
        t = Tensor(name, dtype, tuple(dims), tflags, nbytes, doff)
        if not t.has_data:
            if nbytes != 0:
                raise OinfFormatError(f"{what} at byte {pos}: data_nbytes {nbytes} != 0 without HAS_DATA")
            if doff != 0:
                raise OinfFormatError(f"{what} at byte {pos + 8}: data_offset {doff} != 0 without HAS_DATA")
        else:
            numel = _numel(dims)
            tname, size, _ = _TYPES[dtype]
            if nbytes != numel * size:
                raise OinfFormatError(
                    f"{what} at byte {pos}: data_nbytes {nbytes} != numel {numel} x sizeof({tname}) "
                    f"{size} = {numel * size}")
        pos += 16
        out.tensors.append(t)
    _check_section_offset(r, "offset_data", 53, off_data, pos, "tensor index")

    # ---- data section: exact placement ----
    cursor = off_data
    for i, m in enumerate(out.metadata):
        if m.offset != cursor:
            raise OinfFormatError(
                f"metadata entry {i} ('{m.key}') value_offset: {m.offset} != expected byte {cursor}")
        _parse_meta_value(r, m, i)
        end = m.offset + m.nbytes
        cursor = _align8(end)
        r.zeros(end, cursor, f"metadata entry {i} ('{m.key}') blob padding")
    for i, t in enumerate(out.tensors):
        if not t.has_data:
            continue
        what = f"tensor index entry {i} ('{t.name}') data"
        if t.offset != cursor:
            raise OinfFormatError(f"{what}: data_offset {t.offset} != expected byte {cursor}")
        end = t.offset + t.nbytes
        if end > r.size:
            raise OinfFormatError(
                f"{what} at byte {t.offset}: data_nbytes {t.nbytes} extends past the end of the file "
                f"(byte {r.size})")
        t.data = _read_elements(r, t.offset, t.dtype, t.nbytes // _TYPES[t.dtype][1], what)
        cursor = _align8(end)
        r.zeros(end, cursor, f"{what} blob padding")
    if cursor != r.size:
        raise OinfFormatError(
            f"data section at byte {cursor}: file_size {r.size} != expected {cursor} "
            f"(align8 of the end of the last blob)")
    return out


# ---------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------


def _fmt_float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    return "{:.6g}".format(x)


def _fmt_values(tag: int, arr: np.ndarray) -> List[str]:
    if tag == BOOL:
        return ["true" if v else "false" for v in arr.tolist()]
    if tag >= 9:
        return [_fmt_float(float(v)) for v in arr.tolist()]
    return [str(int(v)) for v in arr.tolist()]


def _preview_flat(tag: int, arr: np.ndarray) -> str:
    n = arr.shape[0]
    if n == 0:
        return "{ }"
    if n <= 10:
        vals = _fmt_values(tag, arr)
    else:
        vals = _fmt_values(tag, arr[:5]) + ["..."] + _fmt_values(tag, arr[n - 5:])
    return "{ " + ", ".join(vals) + " }"


def _preview(tag: int, dims: Sequence[int], flat: np.ndarray) -> str:
    if len(dims) <= 1:
        return _preview_flat(tag, flat)
    rows = dims[0]
    row_len = _numel(dims[1:])
    lines = ["{"]

    def row(i: int) -> str:
        return _preview_flat(tag, flat[i * row_len:(i + 1) * row_len]) + " ,"

    if rows <= 10:
        lines += [row(i) for i in range(rows)]
    else:
        lines += [row(i) for i in range(5)] + ["..."] + [row(i) for i in range(rows - 5, rows)]
    lines.append("}")
    return "\n".join(lines)


def _dims_str(dims: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def _stats_lines(tag: int, nbytes: int, flat: np.ndarray) -> List[str]:
    x = flat.astype(np.float64)
    n = x.shape[0]
    with np.errstate(all="ignore"):
        if np.isnan(x).any():
            stats = "- [nbytes: %d, min: nan, max: nan, mean: nan, median: nan, std: nan]" % nbytes
            return [stats, "- hist:", "    (not finite)"]
        mn = float(np.min(x))
        mx = float(np.max(x))
        mean = float(np.mean(x))
        median = float(np.median(x))
        std = float(np.std(x))
    stats = "- [nbytes: %d, min: %s, max: %s, mean: %s, median: %s, std: %s]" % (
        nbytes, _fmt_float(mn), _fmt_float(mx), _fmt_float(mean), _fmt_float(median), _fmt_float(std))
    lines = [stats, "- hist:"]
    if math.isinf(mn) or math.isinf(mx):
        lines.append("    (not finite)")
        return lines
    if mn == mx:
        lines.append("    [%s,%s]:%d" % (_fmt_float(mn), _fmt_float(mx), n))
        return lines
    with np.errstate(all="ignore"):
        width = (mx - mn) / 10.0
        edges = [mn] + [mn + i * width for i in range(1, 10)] + [mx]
        e = np.array(edges, dtype=np.float64)
        f = ((x - mn) / (mx - mn)) * 10.0
        f = np.where(np.isnan(f), 0.0, f)
        idx = np.clip(np.floor(f), 0, 9).astype(np.int64)
        # numpy-style correction against the printed edges
        for _ in range(10):
            down = (idx > 0) & (x < e[idx])
            if not down.any():
                break
            idx[down] -= 1
        for _ in range(10):
            up = (idx < 9) & (x >= e[idx + 1])
            if not up.any():
                break
            idx[up] += 1
    counts = np.bincount(idx, minlength=10)
    for i in range(10):
        close = "]" if i == 9 else ")"
        lines.append("    [%s,%s%s:%d" % (_fmt_float(edges[i]), _fmt_float(edges[i + 1]), close, int(counts[i])))
    return lines


def _type_name(tag: int) -> str:
    if tag in _TYPES:
        return _TYPES[tag][0]
    return _META_TYPE_NAMES[tag]


BUNDLE_FORMAT = "oaax-vulkan-bundle"


def is_bundle(parsed: OinfFile) -> bool:
    """True when metadata ``format`` is the string "oaax-vulkan-bundle" (a model.oinf)."""
    return any(m.key == "format" and m.value_type == STRING and m.value == BUNDLE_FORMAT
               for m in parsed.metadata)


def _quoted_text(etype: int, dims: Sequence[int], arr: np.ndarray) -> Optional[str]:
    """A rank-1 u8 array that holds UTF-8 text without control characters
    (tab and newline allowed) as a quoted string, backslash, quote, tab and
    newline escaped C-style, else None: the rule of oinf-inspect's RenderOptions::text_arrays."""
    if etype != 5 or len(dims) != 1:
        return None
    raw = arr.tobytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if any((b < 0x20 and b not in (0x09, 0x0A)) or b == 0x7F for b in raw):
        return None
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n")
    return f'"{out}"'


def render(parsed: OinfFile, text_arrays: Optional[bool] = None) -> str:
    """Return the human-readable view defined in docs/oinf-format.md.

    ``text_arrays``: print rank-1 u8 metadata arrays that hold text as quoted
    strings (an oaax-vulkan bundle stores every name and text that way);
    None (the default) turns it on for bundles only, as oinf-inspect does."""
    if text_arrays is None:
        text_arrays = is_bundle(parsed)
    lines: List[str] = []
    for s in parsed.sizevars:
        lines.append(f"{s.name} := {s.value}")
    if parsed.sizevars:
        lines.append("")
    for m in parsed.metadata:
        t = m.value_type
        if 1 <= t <= 12:
            if t == BOOL:
                v = "true" if m.value else "false"
            elif t >= 9:
                v = _fmt_float(m.value)
            else:
                v = str(m.value)
            lines.append(f"{m.key}: {_TYPES[t][0]} = {v}")
        elif t == STRING:
            lines.append(f'{m.key}: str = "{m.value}"')
        elif t == BITSET:
            bits = "".join("1" if b else "0" for b in m.value.tolist()) if len(m.value) <= 64 else (
                "".join("1" if b else "0" for b in m.value[:32].tolist()) + "..."
                + "".join("1" if b else "0" for b in m.value[-32:].tolist()))
            lines.append(f"{m.key}: bitset[{len(m.value)}] = {bits}")
        elif t == NDARRAY:
            etype, dims, arr = m.value
            text = _quoted_text(etype, dims, arr) if text_arrays else None
            shown = text if text is not None else _preview(etype, dims, arr)
            lines.append(f"{m.key}: ndarray<{_TYPES[etype][0]}>{_dims_str(dims)} = {shown}")
    if parsed.metadata:
        lines.append("")
    for t in parsed.tensors:
        tname = _TYPES[t.dtype][0]
        if not t.has_data:
            lines.append(f"{t.name}: {tname}{_dims_str(t.dims)} -- uninitialized")
        elif len(t.dims) == 0:
            lines.append(f"{t.name}: {tname} = {_fmt_values(t.dtype, t.data[:1])[0]}")
        else:
            lines.append(f"{t.name}: {tname}{_dims_str(t.dims)} = {_preview(t.dtype, t.dims, t.data)}")
            if t.data.shape[0] > 0:
                lines += _stats_lines(t.dtype, t.nbytes, t.data)
        lines.append("")
    return "".join(line + "\n" for line in lines)


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print("usage: verify_oinf.py FILE", file=sys.stderr if len(args) != 1 else sys.stdout)
        return 0 if args and args[0] in ("-h", "--help") else 2
    path = args[0]
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_SIZE:
            raise OinfFormatError(
                f"file header at byte 0: file size {size} exceeds the limit of {MAX_FILE_SIZE}")
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        print(f"verify_oinf: invalid OINF file {path}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except OinfFormatError as exc:
        print(f"verify_oinf: invalid OINF file {path}: {exc}", file=sys.stderr)
        return 1
    try:
        parsed = parse_oinf(data)
    except OinfFormatError as exc:
        print(f"verify_oinf: invalid OINF file {path}: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(render(parsed))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
