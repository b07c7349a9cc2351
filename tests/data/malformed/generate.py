#!/usr/bin/env python3
"""Regenerates the malformed-OINF corpus in this directory.

Builds one valid file with a tiny encoder of its own (stdlib only, so it
depends on neither the C++ nor the Python writer), then writes one corrupted
copy per case and `expected.tsv`: file name, TAB, a fragment of the message
the C++ reader must give. Run: python3 tests/data/malformed/generate.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def a8(n):
    return (n + 7) & ~7


def string(s):
    raw = struct.pack("<I", len(s)) + s.encode("ascii")
    return raw + b"\0" * (a8(len(raw)) - len(raw))


def build():
    """Same content as tests/oinf/test_util.h BuildSample()."""
    sizevars = [("B", 5), ("D", 3)]
    bits = [1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0]
    packed = bytes([sum(b << i for i, b in enumerate(bits[k:k + 8])) for k in range(0, len(bits), 8)])
    meta = [
        ("flag", 12, b"\x01"),
        ("mask", 13, struct.pack("<II", len(bits), len(packed)) + packed),
        ("mode", 14, string("clamp_up")),
        ("scale", 10, struct.pack("<f", 0.5)),
        ("shape", 15, struct.pack("<IIQ", 4, 1, 3) + struct.pack("<3q", 1, -2, 3)),
    ]
    meta = [(k, t, p + b"\0" * (a8(len(p)) - len(p)) if t in (13, 15) else p) for k, t, p in meta]
    tensors = [
        ("W.0", 10, [3], struct.pack("<3f", 1.5, -2.0, 3.25)),
        ("k", 5, [2, 3], bytes([1, 2, 3, 4, 5, 6])),
        ("x", 10, [], struct.pack("<f", 10.35)),
        ("y", 2, [], None),
    ]
    sv = b"".join(string(n) + struct.pack("<Q", v) for n, v in sizevars)
    md_len = sum(len(string(k)) + 24 for k, _, _ in meta)
    t_len = sum(len(string(n)) + 12 + 8 * len(d) + 16 for n, _, d, _ in tensors)
    off_sv = 72
    off_md = a8(off_sv + len(sv))
    off_t = a8(off_md + md_len)
    off_d = a8(off_t + t_len)
    cur = off_d
    md = b""
    blobs = b""
    for k, t, p in meta:
        md += string(k) + struct.pack("<IIQQ", t, 0, len(p), cur)
        blobs += p + b"\0" * (a8(len(p)) - len(p))
        cur = a8(cur + len(p))
    tt = b""
    for n, t, d, p in tensors:
        tt += string(n) + struct.pack("<III", t, len(d), 1 if p is not None else 0)
        tt += b"".join(struct.pack("<Q", x) for x in d)
        if p is None:
            tt += struct.pack("<QQ", 0, 0)
        else:
            tt += struct.pack("<QQ", len(p), cur)
            blobs += p + b"\0" * (a8(len(p)) - len(p))
            cur = a8(cur + len(p))
    head = b"OINF\0" + struct.pack("<6I5Q", 1, 0, len(sizevars), len(meta), len(tensors), 0,
                                   off_sv, off_md, off_t, off_d, cur)
    out = bytearray(head + b"\0" * 3)
    out += sv
    out += b"\0" * (off_md - len(out))
    out += md
    out += b"\0" * (off_t - len(out))
    out += tt
    out += b"\0" * (off_d - len(out))
    out += blobs
    assert len(out) == cur
    return bytes(out)


def find_entry(data, name, start):
    """Offset just past the String `name` in the table starting at `start`."""
    needle = string(name)
    at = data.index(needle, start)
    return at + len(needle)


def main():
    base = build()
    off_md, off_t, off_d = struct.unpack_from("<3Q", base, 37)
    cases = []

    def put(name, data, fragment):
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(bytes(data))
        cases.append((name, fragment))

    def patched(fmt, at, *values, data=None):
        b = bytearray(base if data is None else data)
        struct.pack_into(fmt, b, at, *values)
        return b

    def resized(b):
        b = bytearray(b)
        struct.pack_into("<Q", b, 61, len(b))
        return b

    with open(os.path.join(HERE, "valid_base.oinf"), "wb") as f:
        f.write(base)

    w0 = find_entry(base, "W.0", off_t)   # dtype, ndim, flags, dims[1], nbytes, offset
    k = find_entry(base, "k", off_t)      # dims[2]
    x = find_entry(base, "x", off_t)      # rank 0
    y = find_entry(base, "y", off_t)
    mask = find_entry(base, "mask", off_md)
    mode = find_entry(base, "mode", off_md)
    flag = find_entry(base, "flag", off_md)
    shape = find_entry(base, "shape", off_md)
    mask_blob = struct.unpack_from("<Q", base, mask + 16)[0]
    shape_blob = struct.unpack_from("<Q", base, shape + 16)[0]
    flag_blob = struct.unpack_from("<Q", base, flag + 16)[0]
    w0_blob = struct.unpack_from("<Q", base, w0 + 12 + 8 + 8)[0]

    put("empty.oinf", b"", "too small")
    put("truncated_header.oinf", base[:40], "too small for the 69-byte header")
    put("bad_magic.oinf", b"ONNX" + base[4:], "bad magic")
    put("bad_version.oinf", patched("<I", 5, 2), "unsupported version 2")
    put("nonzero_flags.oinf", patched("<I", 9, 1), "header flags must be 0")
    put("nonzero_reserved.oinf", patched("<I", 25, 7), "reserved field must be 0")
    put("file_size_mismatch.oinf", patched("<Q", 61, len(base) + 8), "file_size field says")
    put("truncated_tail.oinf", resized(base[:-8]), "runs past the end of the file")
    put("misaligned_offset.oinf", patched("<Q", 37, off_md + 1), "offset_metadata 105 is not 8-byte aligned")
    put("descending_offsets.oinf", patched("<Q", 45, off_md - 8), "is not ascending")
    put("offset_past_eof.oinf", patched("<Q", 53, 1 << 40), "lies past the end of the file")
    put("overlapping_blobs.oinf", patched("<Q", k + 36, w0_blob), "overlaps the previous blob")
    gap = resized(patched("<Q", x + 12 + 8, struct.unpack_from("<Q", base, x + 12 + 8)[0] + 8) + b"\0" * 8)
    put("gap_between_blobs.oinf", gap, "leaves a gap")
    put("blob_past_eof.oinf", patched("<Q", k + 36, 1 << 62), "runs past the end of the file")
    put("blob_offset_misaligned.oinf", patched("<Q", k + 36, w0_blob + 12), "is not 8-byte aligned")
    put("tensor_nbytes_near_2_64.oinf", patched("<Q", w0 + 20, 2**64 - 8), "!= numel 3 x sizeof(f32)")
    put("metadata_nbytes_near_2_64.oinf", patched("<Q", flag + 8, 2**64 - 1), "runs past the end of the file")
    put("metadata_offset_near_2_64.oinf", patched("<Q", flag + 16, 2**64 - 8), "runs past the end of the file")
    put("string_length_near_2_32.oinf", patched("<I", 72, 0xFFFFFFFF), "runs past the end of its table")
    put("empty_name.oinf", patched("<I", 72, 0), "empty string")
    bad = bytearray(base)
    bad[w0 - 8 + 4] = ord("/")
    put("bad_charset.oinf", bad, "outside the OINF charset")
    dup = bytearray(base)
    dup[x - 8 + 4] = ord("k")
    put("duplicate_names.oinf", dup, "duplicate tensor name 'k'")
    put("dtype_size_mismatch.oinf", patched("<I", w0, 11), "data_nbytes 12 != numel 3 x sizeof(f64) 8")
    put("tensor_dtype_bitset.oinf", patched("<I", w0, 13), "dtype 13 is not a tensor type (1-12)")
    put("tensor_dtype_zero.oinf", patched("<I", y, 0), "dtype 0 is not a tensor type (1-12)")
    put("tensor_ndim_overflow.oinf", patched("<I", w0 + 4, 0x80000000), "ndim 2147483648 exceeds the limit")
    put("tensor_unknown_flags.oinf", patched("<I", w0 + 8, 3), "unknown flag bits 0x2")
    put("uninitialized_with_offset.oinf", patched("<Q", y + 12 + 8, 560), "HAS_DATA is 0 but")
    put("bitset_count_mismatch.oinf", patched("<I", mask_blob + 4, 3), "BITSET byte_count 3, expected ceil(11/8) = 2")
    put("ndarray_bad_element_type.oinf", patched("<I", shape_blob, 14), "NDARRAY element_type 14")
    put("ndarray_ndim_overflow.oinf", patched("<I", shape_blob + 4, 0xFFFFFFFF), "ndim 4294967295 exceeds the limit")
    put("ndarray_dims_overflow.oinf", patched("<Q", shape_blob + 8, 2**62), "does not fit value_nbytes")
    put("metadata_bad_type.oinf", patched("<I", flag, 99), "value_type 99 is not a valid tag")
    put("metadata_nonzero_flags.oinf", patched("<I", flag + 4, 1), "value_flags must be 0")
    put("string_nbytes_mismatch.oinf", patched("<Q", mode + 8, 24), "STRING value_nbytes 24, expected 16")
    put("bool_metadata_value_2.oinf", patched("<B", flag_blob, 2), "BOOL byte 2")
    put("nonzero_string_padding.oinf", patched("<B", 77, 1), "non-zero padding byte 0x01 in string padding")
    put("nonzero_header_padding.oinf", patched("<B", 70, 9), "non-zero padding byte 0x09 in header padding")
    put("nonzero_blob_padding.oinf", patched("<B", flag_blob + 3, 1), "blob padding")
    put("entry_count_over_limit.oinf", patched("<I", 21, 0xFFFFFFFF), "over the limit")
    put("entry_count_past_section.oinf", patched("<I", 21, 1000), "claims 1000 entries but its section holds only")
    put("trailing_bytes.oinf", resized(base + b"\0" * 8), "unexpected trailing bytes")
    put("table_offset_not_tight.oinf", patched("<Q", 37, off_md + 8, data=resized(base)), "offset_metadata")

    with open(os.path.join(HERE, "expected.tsv"), "w") as f:
        f.write("# file\tfragment of the C++ reader's message (generated by generate.py)\n")
        for name, fragment in cases:
            f.write(f"{name}\t{fragment}\n")
    print(f"wrote {len(cases)} malformed files")


if __name__ == "__main__":
    main()
