"""Tests for tools/python/dataclass_to_oinf.py and tools/python/verify_oinf.py.

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s tests/python -v
"""

import dataclasses
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import unittest
from dataclasses import dataclass, field, make_dataclass

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOLS = os.path.join(REPO, "tools", "python")
EXAMPLES = os.path.join(TOOLS, "examples")
for p in (TOOLS, EXAMPLES):
    if p not in sys.path:
        sys.path.insert(0, p)

import dataclass_to_oinf as d2o  # noqa: E402
import verify_oinf as vo  # noqa: E402
from dataclass_to_oinf import (  # noqa: E402
    Bitset, NdArray, OinfError, ScalarValue, TensorSpec, UninitializedTensor,
    dataclass_to_oinf, write_oinf,
)

ALIASES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bool"]
NP_TYPES = {
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64, "bool": np.bool_,
}


def model(**fields):
    """Build a dataclass instance with the given field values (in order)."""
    cls = make_dataclass("M", [(k, object) for k in fields])
    return cls(**fields)


def oinf(**fields) -> bytes:
    return dataclass_to_oinf(model(**fields))


def view(data: bytes) -> str:
    return vo.render(vo.parse_oinf(data))


def read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def patch(data: bytes, off: int, fmt: str, value) -> bytes:
    b = bytearray(data)
    struct.pack_into(fmt, b, off, value)
    return bytes(b)


# The tiny file of TestExactLayout, hand-computed from docs/oinf-format.md.
TINY_HEX = "".join([
    # header (69 bytes) + 3 bytes padding
    "4f494e4600",            # magic "OINF\0"
    "01000000",              # version 1
    "00000000",              # flags
    "01000000",              # n_sizevars
    "01000000",              # n_metadata
    "01000000",              # n_tensors
    "00000000",              # reserved
    "4800000000000000",      # offset_sizevars = 72
    "5800000000000000",      # offset_metadata = 88
    "7800000000000000",      # offset_tensors = 120
    "a800000000000000",      # offset_data = 168
    "b800000000000000",      # file_size = 184
    "000000",                # header padding
    # sizevars @72: String "N" (4 + 1 + 3 pad), u64 3
    "01000000" "4e" "000000", "0300000000000000",
    # metadata @88: String "k", type u16 (6), flags 0, nbytes 2, offset 168
    "01000000" "6b" "000000", "06000000", "00000000", "0200000000000000", "a800000000000000",
    # tensors @120: String "t", dtype u8 (5), ndim 1, flags HAS_DATA, dims [2], nbytes 2, offset 176
    "01000000" "74" "000000", "05000000", "01000000", "01000000", "0200000000000000",
    "0200000000000000", "b000000000000000",
    "00000000",              # tensor table ends at 164 -> padding to 168
    # data @168: metadata k = 0x1234 (u16) + 6 padding; @176: tensor t = [1, 2] + 6 padding
    "3412" "000000000000",
    "0102" "000000000000",
])


def tiny() -> bytes:
    return oinf(N=3, k=ScalarValue(0x1234, "u16"), t=np.array([1, 2], dtype=np.uint8))


class TestExactLayout(unittest.TestCase):
    def test_tiny_file_bytes(self):
        data = tiny()
        self.assertEqual(len(data), 184)
        self.assertEqual(data.hex(), TINY_HEX)

    def test_tiny_file_view(self):
        self.assertEqual(view(bytes.fromhex(TINY_HEX)),
                         "N := 3\n\nk: u16 = 4660\n\nt: u8[2] = { 1, 2 }\n"
                         "- [nbytes: 2, min: 1, max: 2, mean: 1.5, median: 1.5, std: 0.5]\n"
                         "- hist:\n"
                         "    [1,1.1):1\n    [1.1,1.2):0\n    [1.2,1.3):0\n    [1.3,1.4):0\n"
                         "    [1.4,1.5):0\n    [1.5,1.6):0\n    [1.6,1.7):0\n    [1.7,1.8):0\n"
                         "    [1.8,1.9):0\n    [1.9,2]:1\n\n")

    def test_empty_file(self):
        data = dataclass_to_oinf(make_dataclass("E", [])())
        self.assertEqual(len(data), 72)
        hdr = struct.unpack_from("<IIIIIIQQQQQ", data, 5)
        self.assertEqual(hdr, (1, 0, 0, 0, 0, 0, 72, 72, 72, 72, 72))
        self.assertEqual(view(data), "")

    def test_tensor_strings_unaligned_and_zero_length_blobs(self):
        # two tensor entries: the second String starts 4 bytes past a boundary
        data = oinf(a=np.zeros((0,), np.float32), b=np.array([7], np.int64), c=ScalarValue(1, "u8"))
        p = vo.parse_oinf(data)
        off_tens, off_data = struct.unpack_from("<QQ", data, 45)
        self.assertEqual(off_tens % 8, 0)
        # entry 'a' = String 8 + 12 + 8 dims + 16 = 44 bytes; 'b' starts at 4 mod 8
        self.assertEqual(data[off_tens + 44:off_tens + 49], b"\x01\x00\x00\x00b")
        a, b = p.tensors
        meta = p.metadata[0]
        self.assertEqual(meta.offset, off_data)
        self.assertEqual(a.offset, off_data + 8)       # zero-length blob ...
        self.assertEqual(b.offset, off_data + 8)       # ... occupies no bytes
        self.assertEqual(len(data), off_data + 16)

    def test_string_metadata_nbytes(self):
        data = oinf(s="abcd")  # 4 + 4 = 8 -> nbytes 8, no padding
        self.assertEqual(vo.parse_oinf(data).metadata[0].nbytes, 8)
        data = oinf(s="abcde")  # 4 + 5 -> 16
        self.assertEqual(vo.parse_oinf(data).metadata[0].nbytes, 16)


class TestRoundTrip(unittest.TestCase):
    def test_all_tensor_dtypes(self):
        rng = np.random.default_rng(3)
        fields = {}
        expected = {}
        for alias in ALIASES:
            t = NP_TYPES[alias]
            if alias == "bool":
                arr = rng.integers(0, 2, size=(3, 4)).astype(bool)
            elif alias.startswith("f"):
                arr = rng.normal(size=(3, 4)).astype(t)
            else:
                info = np.iinfo(t)
                arr = rng.integers(info.min, info.max, size=(3, 4), dtype=t, endpoint=True)
            fields["t_" + alias] = arr
            expected["t_" + alias] = (alias, arr)
        data = oinf(**fields)
        p = vo.parse_oinf(data)
        self.assertEqual(len(p.tensors), 12)
        for t in p.tensors:
            alias, arr = expected[t.name]
            self.assertEqual(vo._TYPES[t.dtype][0], alias)
            self.assertEqual(t.dims, (3, 4))
            got = t.data.astype(bool) if alias == "bool" else t.data
            np.testing.assert_array_equal(got.reshape(3, 4), arr)
            self.assertEqual(t.nbytes, arr.nbytes)

    def test_tensorspec_dtype_conversion_and_names(self):
        data = oinf(w=TensorSpec([1, 2, 3], dtype="f16", name="W.0"),
                    v=TensorSpec(np.arange(4, dtype=">i4")))  # big-endian source
        p = vo.parse_oinf(data)
        self.assertEqual([t.name for t in p.tensors], ["W.0", "v"])
        self.assertEqual(vo._TYPES[p.tensors[0].dtype][0], "f16")
        np.testing.assert_array_equal(p.tensors[0].data, [1, 2, 3])
        np.testing.assert_array_equal(p.tensors[1].data, [0, 1, 2, 3])

    def test_rank0_uninitialized_zero_size(self):
        data = oinf(
            s0=np.array(2.5, dtype=np.float64),
            b0=np.array(True),
            u0=UninitializedTensor("i16", ()),
            u2=UninitializedTensor("f32", (3, 5), name="u.2"),
            u1=UninitializedTensor(np.uint8, 7),
            z1=np.zeros((0,), np.int32),
            z2=np.zeros((3, 0), np.uint16),
            z3=np.zeros((0, 4), np.float16),
        )
        p = vo.parse_oinf(data)
        names = [t.name for t in p.tensors]
        self.assertEqual(names, sorted(names))
        by = {t.name: t for t in p.tensors}
        self.assertEqual(by["s0"].dims, ())
        self.assertFalse(by["u0"].has_data)
        self.assertEqual((by["u0"].nbytes, by["u0"].offset), (0, 0))
        self.assertTrue(by["z1"].has_data)
        self.assertEqual(by["z2"].dims, (3, 0))
        text = view(data)
        self.assertEqual(text, "\n".join([
            "b0: bool = true", "",
            "s0: f64 = 2.5", "",
            "u.2: f32[3, 5] -- uninitialized", "",
            "u0: i16[] -- uninitialized", "",
            "u1: u8[7] -- uninitialized", "",
            "z1: i32[0] = { }", "",
            "z2: u16[3, 0] = {", "{ } ,", "{ } ,", "{ } ,", "}", "",
            "z3: f16[0, 4] = {", "}", "",
        ]) + "\n")

    def test_every_metadata_kind(self):
        fields = dict(
            flag=True, off=False, mode="clamp_up", eps=1e-5,
            bits=Bitset([1, 0, 1, 1, 0]), nobits=Bitset([]), wide=Bitset("1" + "0" * 98 + "1"),
            fl=[1.5, 2.0], il=[1, -2, 3], bl=(True, False), nested=[[1, 2, 3], [4, 5, 6]],
            nd=NdArray(np.array([[1, 2], [3, 4]], dtype=np.uint16)),
            nd0=NdArray(np.array(9, dtype=np.int8)),
            npf=np.float32(0.5),
        )
        for alias in ALIASES:
            fields["s_" + alias] = ScalarValue(1 if alias != "bool" else True, alias)
        fields["s_neg"] = ScalarValue(-128, "i8")
        fields["s_big"] = ScalarValue(2 ** 64 - 1, "u64")
        fields["s_half"] = ScalarValue(0.1, "f16")
        data = oinf(**fields)
        p = vo.parse_oinf(data)
        self.assertEqual(p.tensors, [])
        self.assertEqual(p.sizevars, [])
        keys = [m.key for m in p.metadata]
        self.assertEqual(keys, sorted(keys))
        lines = view(data).split("\n")
        for line in [
            "flag: bool = true", "off: bool = false", 'mode: str = "clamp_up"', "eps: f64 = 1e-05",
            "bits: bitset[5] = 10110", "nobits: bitset[0] = ",
            "wide: bitset[100] = " + "1" + "0" * 31 + "..." + "0" * 31 + "1",
            "fl: ndarray<f64>[2] = { 1.5, 2 }", "il: ndarray<i64>[3] = { 1, -2, 3 }",
            "bl: ndarray<bool>[2] = { true, false }",
            "nested: ndarray<i64>[2, 3] = {", "{ 1, 2, 3 } ,", "{ 4, 5, 6 } ,", "}",
            "nd: ndarray<u16>[2, 2] = {", "nd0: ndarray<i8>[] = { 9 }", "npf: f32 = 0.5",
            "s_i8: i8 = 1", "s_u64: u64 = 1", "s_f16: f16 = 1", "s_bool: bool = true",
            "s_neg: i8 = -128", "s_big: u64 = 18446744073709551615", "s_half: f16 = 0.0999756",
        ]:
            self.assertIn(line, lines)
        self.assertEqual(lines[-1], "")
        self.assertEqual(lines[-2], "")  # metadata block closed by one empty line
        by = {m.key: m for m in p.metadata}
        self.assertEqual(by["bits"].nbytes, 16)
        self.assertEqual(by["nobits"].nbytes, 8)
        np.testing.assert_array_equal(by["wide"].value, [True] + [False] * 98 + [True])
        self.assertEqual(by["s_f64"].nbytes, 8)
        self.assertEqual(by["s_bool"].nbytes, 1)

    def test_sizevars(self):
        data = oinf(B=1024, D=128, zero=0, big=2 ** 64 - 1)
        self.assertEqual(view(data), "B := 1024\nD := 128\nbig := 18446744073709551615\nzero := 0\n\n")

    def test_preview_truncation(self):
        data = oinf(v=np.arange(11, dtype=np.int32), m=np.arange(12 * 11, dtype=np.int16).reshape(12, 11),
                    ten=np.arange(10, dtype=np.uint8))
        lines = view(data).split("\n")
        self.assertIn("v: i32[11] = { 0, 1, 2, 3, 4, ..., 6, 7, 8, 9, 10 }", lines)
        self.assertIn("ten: u8[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }", lines)
        i = lines.index("m: i16[12, 11] = {")
        self.assertEqual(lines[i + 1], "{ 0, 1, 2, 3, 4, ..., 6, 7, 8, 9, 10 } ,")
        self.assertEqual(lines[i + 6], "...")
        self.assertEqual(lines[i + 7], "{ 77, 78, 79, 80, 81, ..., 83, 84, 85, 86, 87 } ,")
        self.assertEqual(lines[i + 11], "{ 121, 122, 123, 124, 125, ..., 127, 128, 129, 130, 131 } ,")
        self.assertEqual(lines[i + 12], "}")
        self.assertTrue(lines[i + 13].startswith("- [nbytes: 264, min: 0, max: 131, mean: 65.5, median: 65.5"))

    def test_stats_special_values(self):
        data = oinf(
            n=np.array([1.0, np.nan, 2.0], np.float32),
            i=np.array([1.0, np.inf], np.float64),
            c=np.array([5, 5, 5], np.int8),
            b=np.array([True, False, True, True]),
            h=np.array([-np.inf, 0.5, 1.0], np.float16),
        )
        lines = view(data).split("\n")
        self.assertIn("n: f32[3] = { 1, nan, 2 }", lines)
        i = lines.index("n: f32[3] = { 1, nan, 2 }")
        self.assertEqual(lines[i + 1:i + 4], [
            "- [nbytes: 12, min: nan, max: nan, mean: nan, median: nan, std: nan]",
            "- hist:", "    (not finite)"])
        i = lines.index("i: f64[2] = { 1, inf }")
        self.assertEqual(lines[i + 1:i + 4], [
            "- [nbytes: 16, min: 1, max: inf, mean: inf, median: inf, std: nan]",
            "- hist:", "    (not finite)"])
        i = lines.index("h: f16[3] = { -inf, 0.5, 1 }")
        self.assertEqual(lines[i + 3], "    (not finite)")
        i = lines.index("c: i8[3] = { 5, 5, 5 }")
        self.assertEqual(lines[i + 1:i + 4], [
            "- [nbytes: 3, min: 5, max: 5, mean: 5, median: 5, std: 0]", "- hist:", "    [5,5]:3"])
        i = lines.index("b: bool[4] = { true, false, true, true }")
        self.assertEqual(lines[i + 1], "- [nbytes: 4, min: 0, max: 1, mean: 0.75, median: 1, std: 0.433013]")
        self.assertEqual(lines[i + 3], "    [0,0.1):1")
        self.assertEqual(lines[i + 12], "    [0.9,1]:3")

    def test_histogram_matches_numpy(self):
        rng = np.random.default_rng(11)
        for k in range(60):
            n = int(rng.integers(2, 400))
            if k % 3 == 0:
                x = rng.normal(size=n) * 10.0 ** rng.uniform(-4, 4)
            elif k % 3 == 1:
                x = rng.integers(-20, 20, size=n).astype(np.float64)
            else:
                x = np.round(rng.uniform(-3, 3, size=n), 1)
            if x.min() == x.max():
                continue
            lines = vo._stats_lines(11, x.nbytes, x)
            counts = [int(line.rsplit(":", 1)[1]) for line in lines[2:]]
            self.assertEqual(counts, np.histogram(x, bins=10)[0].tolist())


class TestDeterminism(unittest.TestCase):
    def test_same_input_same_bytes(self):
        import simple_oinf
        a = dataclass_to_oinf(simple_oinf.build_example())
        b = dataclass_to_oinf(simple_oinf.build_example())
        self.assertEqual(a, b)
        self.assertEqual(dataclass_to_oinf(simple_oinf.ExampleModel()), a)

    def test_field_order_does_not_matter(self):
        arr = np.arange(6, dtype=np.float32)
        one = oinf(z=3, a=5, m="x", b=ScalarValue(2, "u32"), t=arr, s=UninitializedTensor("u8", (2,)))
        two = oinf(s=UninitializedTensor("u8", (2,)), t=arr, b=ScalarValue(2, "u32"), m="x", a=5, z=3)
        self.assertEqual(one, two)


class TestWriterErrors(unittest.TestCase):
    def check(self, msg_part, **fields):
        with self.assertRaises(OinfError) as cm:
            oinf(**fields)
        self.assertIn(msg_part, str(cm.exception))
        return str(cm.exception)

    def test_errors(self):
        msg = self.check("contains characters outside", bad=TensorSpec(np.zeros(2), name="a b"))
        self.assertIn("field 'bad'", msg)
        self.check("duplicate tensor name 'a'", a=np.zeros(2), b=TensorSpec(np.zeros(1), name="a"))
        self.check("unsupported dtype", c=np.zeros(2, np.complex64))
        self.check("unsupported dtype", c=UninitializedTensor("f128", (2,)))
        self.check("unsupported dtype", c=ScalarValue(1, "int"))
        self.check("out of range", n=-1)
        self.check("out of range", n=2 ** 64)
        self.check("does not fit in u8", s=ScalarValue(256, "u8"))
        self.check("not an integer", s=ScalarValue(1.5, "i32"))
        self.check("contains characters outside", s="hello world")
        self.check("must not be empty", s="")
        self.check("unsupported value type NoneType", x=None)
        self.check("list elements", x=["a", "b"])
        self.check("dimension -1", u=UninitializedTensor("u8", (-1,)))
        self.check("rank 65 exceeds", u=UninitializedTensor("u8", (1,) * 65))
        self.check("bitset element", b=Bitset([0, 2]))

    def test_same_name_in_different_tables_is_allowed(self):
        data = oinf(x=1, y=TensorSpec(np.zeros(1), name="x"), z=ScalarValue(1, "u8", name="x"))
        text = view(data)
        self.assertIn("x := 1\n", text)
        self.assertIn("x: u8 = 1\n", text)
        self.assertIn("x: f64[1] = { 0 }\n", text)

    def test_not_a_dataclass(self):
        with self.assertRaises(OinfError):
            dataclass_to_oinf({"a": 1})


class TestVerifierRejects(unittest.TestCase):
    """Corruptions of the hand-checked tiny file (offsets from TINY_HEX)."""

    def reject(self, data, *parts):
        with self.assertRaises(vo.OinfFormatError) as cm:
            vo.parse_oinf(data)
        msg = str(cm.exception)
        for part in parts:
            self.assertIn(part, msg)
        self.assertRegex(msg, r"at byte \d+|byte \d+")
        return msg

    def setUp(self):
        self.tiny = tiny()
        self.assertEqual(self.tiny.hex(), TINY_HEX)

    def test_valid(self):
        vo.parse_oinf(self.tiny)

    def test_bad_magic(self):
        self.reject(b"OINX" + self.tiny[4:], "bad magic", "byte 0")

    def test_bad_version(self):
        self.reject(patch(self.tiny, 5, "<I", 2), "at byte 5", "version 2")

    def test_bad_flags(self):
        self.reject(patch(self.tiny, 9, "<I", 1), "at byte 9", "flags 1 != 0")

    def test_bad_reserved(self):
        self.reject(patch(self.tiny, 25, "<I", 7), "at byte 25", "reserved 7")

    def test_truncated(self):
        self.reject(self.tiny[:-8], "at byte 61", "file_size 184 != actual file size 176")
        self.reject(self.tiny[:40], "shorter than the 72-byte")
        self.reject(b"", "bad magic")

    def test_file_size_mismatch(self):
        self.reject(patch(self.tiny, 61, "<Q", 192), "file_size 192 != actual file size 184")
        # trailing bytes, header adjusted: caught by exact data placement
        grown = patch(self.tiny + b"\0" * 8, 61, "<Q", 192)
        self.reject(grown, "data section at byte 184", "expected 184")

    def test_blob_past_eof(self):
        cut = patch(self.tiny[:176], 61, "<Q", 176)
        self.reject(cut, "tensor index entry 0 ('t') data at byte 176", "extends past the end of the file")

    def test_misaligned_offsets(self):
        self.reject(patch(self.tiny, 37, "<Q", 89), "at byte 37", "offset_metadata 89 != expected 88")
        self.reject(patch(self.tiny, 53, "<Q", 164), "at byte 53", "offset_data 164 != expected 168")
        self.reject(patch(self.tiny, 29, "<Q", 76), "at byte 29", "offset_sizevars 76")
        self.reject(patch(self.tiny, 112, "<Q", 172), "metadata entry 0 ('k') value_offset: 172 != expected byte 168")
        self.reject(patch(self.tiny, 156, "<Q", 180), "tensor index entry 0 ('t') data: data_offset 180 != expected byte 176")

    def test_nonzero_padding(self):
        self.reject(patch(self.tiny, 70, "B", 1), "header padding at byte 70")
        self.reject(patch(self.tiny, 78, "B", 0x20), "at byte 78", "padding byte is 0x20")
        self.reject(patch(self.tiny, 165, "B", 1), "padding after the tensor index table at byte 165")
        self.reject(patch(self.tiny, 171, "B", 1), "metadata entry 0 ('k') blob padding at byte 171")
        self.reject(patch(self.tiny, 183, "B", 9), "('t') data blob padding at byte 183")

    def test_bad_charset(self):
        self.reject(patch(self.tiny, 76, "B", ord("!")), "sizevar entry 0 at byte 76", "0x21 is outside [A-Za-z0-9._-]")
        self.reject(patch(self.tiny, 124, "B", 0), "tensor index entry 0 at byte 124", "0x00")

    def test_empty_name(self):
        # "k" -> length 0: the String is then only 4 bytes + 4 padding whose bytes are 'k',0,0,0
        self.reject(patch(self.tiny, 88, "<I", 0), "metadata entry 0 at byte 88", "length is 0")

    def test_duplicate_name(self):
        data = oinf(a=np.zeros(1, np.uint8), b=np.zeros(1, np.uint8))
        off_tens = struct.unpack_from("<Q", data, 45)[0]
        second = off_tens + 8 + 12 + 8 + 16  # 'b' string starts at 4 mod 8
        self.assertEqual(data[second + 4:second + 5], b"b")
        self.reject(patch(data, second + 4, "B", ord("a")), f"tensor index entry 1 ('a') at byte {second}", "duplicate tensor name")
        data = oinf(a=1, b=2)
        self.reject(patch(data, 72 + 16 + 4, "B", ord("a")), "sizevar entry 1 ('a') at byte 88", "duplicate sizevar name")

    def test_size_mismatch(self):
        self.reject(patch(self.tiny, 148, "<Q", 3), "tensor index entry 0 ('t') at byte 148",
                    "data_nbytes 3 != numel 2 x sizeof(u8) 1 = 2")
        self.reject(patch(self.tiny, 140, "<Q", 3), "data_nbytes 2 != numel 3 x sizeof(u8) 1 = 3")
        self.reject(patch(self.tiny, 104, "<Q", 4), "metadata entry 0 ('k') value at byte 168",
                    "value_nbytes 4 != sizeof(u16) 2")

    def test_bad_types_and_flags(self):
        self.reject(patch(self.tiny, 96, "<I", 16), "metadata entry 0 ('k') at byte 96", "value_type 16")
        self.reject(patch(self.tiny, 100, "<I", 1), "at byte 100", "value_flags 1 != 0")
        self.reject(patch(self.tiny, 128, "<I", 13), "at byte 128", "dtype 13")
        self.reject(patch(self.tiny, 136, "<I", 3), "at byte 136", "bits other than HAS_DATA")
        self.reject(patch(self.tiny, 132, "<I", 65), "at byte 132", "ndim 65 exceeds")

    def test_uninitialized_with_offset(self):
        data = oinf(u=UninitializedTensor("f32", (2,)))
        off_tens = struct.unpack_from("<Q", data, 45)[0]
        fields = off_tens + 8 + 12 + 8
        self.reject(patch(data, fields, "<Q", 8), "data_nbytes 8 != 0 without HAS_DATA")
        self.reject(patch(data, fields + 8, "<Q", 80), "data_offset 80 != 0 without HAS_DATA")

    def test_bool_values(self):
        data = oinf(f=True, t=np.array([True, False]))
        off_data = struct.unpack_from("<Q", data, 53)[0]
        self.reject(patch(data, off_data, "B", 2), "bool element 0 is 2")
        self.reject(patch(data, off_data + 9, "B", 3), f"at byte {off_data + 9}", "bool element 1 is 3")

    def test_bitset(self):
        data = oinf(b=Bitset([1, 0, 1]))
        off_data = struct.unpack_from("<Q", data, 53)[0]
        self.assertEqual(data[off_data:off_data + 9], bytes([3, 0, 0, 0, 1, 0, 0, 0, 5]))
        self.reject(patch(data, off_data + 4, "<I", 2), f"at byte {off_data + 4}",
                    "bitset byte_count 2 != ceil(bit_count 3 / 8) = 1")
        self.reject(patch(data, off_data, "<I", 9), "byte_count 1 != ceil(bit_count 9 / 8) = 2")
        self.reject(patch(data, off_data + 8, "B", 0x0D), "unused high bits")
        self.reject(patch(data, off_data + 9, "B", 1), "bitset padding")

    def test_ndarray(self):
        data = oinf(v=[1, 2, 3])
        off_data = struct.unpack_from("<Q", data, 53)[0]
        self.reject(patch(data, off_data, "<I", 13), f"at byte {off_data}", "ndarray element_type 13")
        self.reject(patch(data, off_data, "<I", 0), "element_type 0")
        self.reject(patch(data, off_data + 8, "<Q", 4), "value_nbytes 40 != align8(8 + 8 x ndim 1 + numel 4")
        self.reject(patch(data, off_data + 4, "<I", 70), "ndarray ndim 70 exceeds")
        self.reject(patch(data, off_data + 4, "<I", 5), "dims (5 x 8 bytes) exceed value_nbytes 40")

    def test_string_payload(self):
        data = oinf(s="abcde")
        off_data = struct.unpack_from("<Q", data, 53)[0]
        self.reject(patch(data, off_data + 6, "B", ord(" ")), f"at byte {off_data + 6}", "0x20 is outside")
        self.reject(patch(data, off_data, "<I", 4), "value_nbytes 16 != align8(4 + length 4) = 8")
        self.reject(patch(data, off_data, "<I", 13), "exceeds the 16 bytes remaining")

    def test_huge_lengths_do_not_hang_or_allocate(self):
        t0 = time.time()
        base = self.tiny
        cases = [
            (patch(base, 104, "<Q", 2 ** 64 - 8), "extends past the end of the file"),
            (patch(base, 88, "<I", 0xFFFFFFFF), "string length 4294967295"),
            (patch(base, 72, "<I", 0xFFFFFFF9), "exceeds the"),
            (patch(base, 21, "<I", 0xFFFFFFFF), "tensor count 4294967295 exceeds the limit"),
            (patch(base, 13, "<I", 1_000_000), "1000000 entries need at least"),
            (patch(base, 132, "<I", 0xFFFFFFFF), "ndim 4294967295 exceeds"),
            (patch(patch(base, 140, "<Q", 2 ** 63), 148, "<Q", 2 ** 64 - 1),
             "data_nbytes 18446744073709551615 != numel 9223372036854775808"),
            (patch(base, 61, "<Q", 2 ** 64 - 1), "file_size 18446744073709551615"),
            (patch(base, 53, "<Q", 2 ** 64 - 8), "offset_data"),
        ]
        for data, part in cases:
            self.reject(data, part)
        nd = oinf(v=[1])
        off_data = struct.unpack_from("<Q", nd, 53)[0]
        self.reject(patch(nd, off_data + 8, "<Q", 2 ** 64 - 1), "value_nbytes 24 != align8")
        self.assertLess(time.time() - t0, 2.0)

    def test_random_corruption_never_crashes(self):
        good = dataclass_to_oinf(model(
            n=3, s="abc", b=Bitset([1, 0, 1]), v=[[1.0, 2.0]], f=ScalarValue(2, "u32"),
            t=np.arange(6, dtype=np.int16).reshape(2, 3), u=UninitializedTensor("f16", (4,))))
        rng = np.random.default_rng(7)
        for _ in range(1500):
            b = bytearray(good)
            for _ in range(int(rng.integers(1, 4))):
                b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
            try:
                p = vo.parse_oinf(bytes(b))
                vo.render(p)
            except vo.OinfFormatError as exc:
                self.assertIn("byte", str(exc))
        for n in range(len(good)):
            try:
                vo.parse_oinf(good[:n])
                self.fail("truncated file accepted")
            except vo.OinfFormatError:
                pass


class TestExamplesAndCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_py(self, *args, env_extra=None, cwd=None):
        env = dict(os.environ)
        if env_extra:
            env.update(env_extra)
        return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                              env=env, cwd=cwd or self.dir, timeout=60)

    def test_examples_and_cli(self):
        r = self.run_py(os.path.join(EXAMPLES, "simple_oinf.py"))
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.run_py(os.path.join(EXAMPLES, "minimal_oinf.py"), os.path.join(self.dir, "min.oinf"))
        self.assertEqual(r.returncode, 0, r.stderr)
        simple = os.path.join(self.dir, "simple_model.oinf")
        minimal = os.path.join(self.dir, "min.oinf")

        # CLI with a class (defaults), a function and an instance-producing module
        out = os.path.join(self.dir, "cli.oinf")
        r = self.run_py(os.path.join(TOOLS, "dataclass_to_oinf.py"), "--input", "simple_oinf:ExampleModel",
                        "--output", out, env_extra={"PYTHONPATH": EXAMPLES})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(read(out), read(simple))
        out2 = os.path.join(self.dir, "cli2.oinf")
        r = self.run_py(os.path.join(TOOLS, "dataclass_to_oinf.py"), "--input", "minimal_oinf:build_minimal",
                        "--output", out2, env_extra={"PYTHONPATH": EXAMPLES})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(read(out2), read(minimal))

        # class without defaults and no --json: error
        r = self.run_py(os.path.join(TOOLS, "dataclass_to_oinf.py"), "--input", "minimal_oinf:MinimalModel",
                        "--output", out2, env_extra={"PYTHONPATH": EXAMPLES})
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith("dataclass_to_oinf: error: "), r.stderr)
        self.assertIn("B, a", r.stderr)

        # --json payload with a module in the cwd
        with open(os.path.join(self.dir, "jmod.py"), "w") as fh:
            fh.write("from dataclasses import dataclass\n"
                     "@dataclass\nclass J:\n    n: int\n    tag: str\n    vals: list\n"
                     "inst = J(n=1, tag='x', vals=[1])\n")
        with open(os.path.join(self.dir, "j.json"), "w") as fh:
            json.dump({"n": 5, "tag": "hello", "vals": [1.5, 2.5]}, fh)
        out3 = os.path.join(self.dir, "j.oinf")
        r = self.run_py(os.path.join(TOOLS, "dataclass_to_oinf.py"), "--input", "jmod:J", "--json", "j.json",
                        "--output", out3)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.run_py(os.path.join(TOOLS, "verify_oinf.py"), out3)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, 'n := 5\n\ntag: str = "hello"\nvals: ndarray<f64>[2] = { 1.5, 2.5 }\n\n')
        r = self.run_py(os.path.join(TOOLS, "dataclass_to_oinf.py"), "--input", "jmod:inst", "--output", out3)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.run_py(os.path.join(TOOLS, "dataclass_to_oinf.py"), "--input", "jmod:nope", "--output", out3)
        self.assertEqual(r.returncode, 1)
        self.assertIn("dataclass_to_oinf: error: module 'jmod' has no attribute 'nope'", r.stderr)

        # verifier CLI: valid and invalid files
        r = self.run_py(os.path.join(TOOLS, "verify_oinf.py"), simple)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, view(read(simple)))
        bad = os.path.join(self.dir, "bad.oinf")
        with open(bad, "wb") as fh:
            fh.write(patch(read(simple), 5, "<I", 9))
        r = self.run_py(os.path.join(TOOLS, "verify_oinf.py"), bad)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr, f"verify_oinf: invalid OINF file {bad}: file header at byte 5: "
                                   "version 9 is not supported (expected 1)\n")

    def test_simple_view(self):
        import simple_oinf
        text = view(dataclass_to_oinf(simple_oinf.build_example()))
        lines = text.split("\n")
        self.assertEqual(lines[:5], ["B := 1024", "D := 128", "", 'mode: str = "clamp_up"', ""])
        for line in [
            "x: f32 = 10.35",
            "y: i16[] -- uninitialized",
            "kernel: u8[128, 128] = {",
            "{ 163, 255, 148, 186, 142, ..., 208, 23, 236, 196, 15 } ,",
            "{ 200, 64, 246, 249, 250, ..., 171, 56, 243, 37, 201 } ,",
            "- [nbytes: 16384, min: 0, max: 255, mean: 127.408, median: 128, std: 74.2236]",
            "    [0,25.5):1710",
            "W.0: f32[128] = { 0.48424, 1.61435, -0.782165, -0.0947963, 1.15624, ..., "
            "-0.646709, 0.947614, 0.625521, -0.300354, 0.897275 }",
            "- [nbytes: 512, min: -3.19735, max: 2.8745, mean: 0.093444, median: 0.16931, std: 1.02064]",
            "    [-3.19735,-2.59016):1",
            "    [-2.59016,-1.98298):2",
            "a: f16[1024] = { 0.125732, -0.13208, 0.640625, 0.104919, -0.535645, ..., "
            "1.37988, -1.17969, 0.509766, -1.0752, -0.334229 }",
            "- [nbytes: 2048, min: -3.90039, max: 3.06641, mean: -0.0491846, median: -0.0691223, std: 0.971848]",
            "    [-3.90039,-3.20371):2",
        ]:
            self.assertIn(line, lines)
        # tensor order is byte order of names: 'W.0' < 'a' < 'kernel' < 'x' < 'y'
        order = [ln.split(":")[0] for ln in lines if ln and ln[0].isalpha() and ":" in ln and ":=" not in ln]
        self.assertEqual(order, ["mode", "W.0", "a", "kernel", "x", "y"])
        self.assertTrue(text.endswith("y: i16[] -- uninitialized\n\n"))
        i = lines.index("kernel: u8[128, 128] = {")
        self.assertEqual(lines[i + 6], "...")
        self.assertEqual(lines[i + 12], "}")
        self.assertEqual(lines[i + 14], "- hist:")
        self.assertEqual(lines[i + 24], "    [229.5,255]:1689")

    def test_minimal_view(self):
        import minimal_oinf
        text = view(dataclass_to_oinf(minimal_oinf.build_minimal()))
        lines = text.split("\n")
        self.assertEqual(lines[:2], ["B := 1024", ""])
        self.assertTrue(lines[2].startswith("a: f32[1024] = { "))
        self.assertTrue(lines[3].startswith("- [nbytes: 4096, min: -0.99"))
        self.assertEqual(lines[4], "- hist:")
        self.assertEqual(sum(int(ln.rsplit(":", 1)[1]) for ln in lines[5:15]), 1024)
        self.assertTrue(lines[14].endswith("]:112"))
        self.assertEqual(lines[15:], ["", ""])


if __name__ == "__main__":
    unittest.main()
