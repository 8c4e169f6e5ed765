#!/usr/bin/python3
"""Writes the .npy test fixtures: testdata/npy/*.npy (files dmlbits must read), their
expected.json (what NumPy reports for each), testdata/npy/bad/*.npy (files dmlbits must refuse)
and bad/expected_errors.json (a substring each refusal's message must contain).

Every expectation is computed by NumPy from the written files (or, for the refusals, stated by
hand), never by dmlbits. Run with Debian's /usr/bin/python3 (it has NumPy); the output is
deterministic, so re-running it leaves the committed files unchanged.

    /usr/bin/python3 scripts/make_npy_fixtures.py [OUTDIR]   # default: testdata/npy
"""

import io
import json
import os
import struct
import sys

import numpy as np
from numpy.lib import format as npf

MAGIC = b"\x93NUMPY"


def hand_built(header_text, data=b"", version=(1, 0), align=64, pad=True):
    """A .npy file from a literal header dict text: magic, version, length, header, padding
    (spaces and a final newline up to a multiple of `align`), then `data`."""
    hdr = header_text.encode("latin1" if version < (3, 0) else "utf8")
    prefix = len(MAGIC) + 2 + (2 if version == (1, 0) else 4)
    if pad:
        total = prefix + len(hdr) + 1
        hdr += b" " * ((-total) % align) + b"\n"
    length = struct.pack("<H" if version == (1, 0) else "<I", len(hdr))
    return MAGIC + bytes(version) + length + hdr + data


def numpy_written(arr, version=None, allow_pickle=False):
    buf = io.BytesIO()
    npf.write_array(buf, arr, version=version, allow_pickle=allow_pickle)
    return buf.getvalue()


def bits_dtype(dt):
    """The unsigned integer dtype with dt's size and byte order, to look at raw bit patterns."""
    order = ">" if dt.byteorder == ">" else "<"
    return np.dtype(f"{order}u{dt.itemsize}")


def from_bits(patterns, descr, shape):
    """An array of dtype `descr` holding exactly these bit patterns (NaN payloads included):
    built as unsigned integers and reinterpreted, so no float conversion can touch them."""
    dt = np.dtype(descr)
    return np.array(patterns, dtype=bits_dtype(dt)).view(dt).reshape(shape)


# Interesting bit patterns per element size: 0, 1, the sign bit alone, the largest signed value,
# all ones, and a pattern whose bytes all differ (so a missed or doubled byte swap shows).
def int_patterns(size):
    bits = 8 * size
    distinct = int.from_bytes(bytes(range(1, size + 1)), "big")
    return [0, 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, (1 << bits) - 1, distinct]


# Float patterns: +0, -0, 1, -2.5, +inf, -inf, quiet NaN, quiet NaN with a payload, negative
# signalling NaN with a payload, smallest subnormal, largest subnormal, largest finite.
FLOAT_PATTERNS = {
    2: [0x0000, 0x8000, 0x3C00, 0xC100, 0x7C00, 0xFC00, 0x7E00, 0x7E01, 0xFC01, 0x0001, 0x03FF, 0x7BFF],
    4: [0x00000000, 0x80000000, 0x3F800000, 0xC0200000, 0x7F800000, 0xFF800000, 0x7FC00000,
        0x7FC00001, 0xFF800001, 0x00000001, 0x007FFFFF, 0x7F7FFFFF],
    8: [0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000, 0xC004000000000000,
        0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x7FF8000000000001,
        0xFFF0000000000001, 0x0000000000000001, 0x000FFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF],
}

INT_CODES = ["u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8"]
FLOAT_CODES = ["f2", "f4", "f8"]


def good_fixtures():
    """name -> (file bytes, header descr as written)."""
    out = {}

    def add(name, data, descr):
        out[name] = (data, descr)

    for code in INT_CODES + FLOAT_CODES:
        size = int(code[1])
        pats = int_patterns(size) if code[0] in "ui" else FLOAT_PATTERNS[size]
        shape = (2, 3) if len(pats) == 6 else (3, 4)
        orders = ["<"] if size == 1 else ["<", ">"]
        for order in orders:
            arr = from_bits(pats, order + code, shape)
            descr = arr.dtype.str  # '|u1' for one-byte types
            tag = {"<": "le", ">": "be"}[order]
            add(f"{tag}_{np.dtype(code).name}", numpy_written(arr), descr)

    add("bool", numpy_written(np.array([[True, False, True], [False, False, True]])), "|b1")
    add("bool_fortran", numpy_written(np.asfortranarray(np.array([[True, False, False], [True, True, False]]))), "|b1")

    # Fortran order: NumPy writes the data column-major and sets fortran_order.
    add("fortran_2d_i4", numpy_written(np.asfortranarray(np.arange(6, dtype="<i4").reshape(2, 3))), "<i4")
    add("fortran_3d_u2", numpy_written(np.asfortranarray(np.arange(24, dtype="<u2").reshape(2, 3, 4))), "<u2")
    add("fortran_3d_be_u4",
        numpy_written(np.asfortranarray((np.arange(24, dtype="<u4") | 0x0A0B0C00).reshape(2, 4, 3).astype(">u4"))), ">u4")
    add("fortran_4d_i1", numpy_written(np.asfortranarray(np.arange(-6, 6, dtype="i1").reshape(2, 1, 3, 2))), "|i1")
    # NumPy never writes fortran_order True for 0-d, 1-d or empty arrays (they are also C
    # contiguous), but it reads such files; the data order is then the same either way.
    add("fortran_1d_u2", hand_built("{'descr': '<u2', 'fortran_order': True, 'shape': (4,), }",
                                    np.array([1, 2, 0x0300, 0xFFFF], "<u2").tobytes()), "<u2")
    add("fortran_0d_u4", hand_built("{'descr': '<u4', 'fortran_order': True, 'shape': (), }",
                                    np.array(0x12345678, "<u4").tobytes()), "<u4")
    add("fortran_empty_f4", hand_built("{'descr': '<f4', 'fortran_order': True, 'shape': (0, 3), }"), "<f4")

    # 0-d arrays hold one element.
    add("zero_d_u4", numpy_written(np.array(0xDEADBEEF, dtype="<u4")), "<u4")
    add("zero_d_be_f8", numpy_written(from_bits([0x8000000000000000], ">f8", ())), ">f8")

    # Empty arrays: a zero dimension anywhere means no data.
    add("empty_0x3_f4", numpy_written(np.zeros((0, 3), dtype="<f4")), "<f4")
    add("empty_2x0_i2", numpy_written(np.zeros((2, 0), dtype="<i2")), "<i2")
    add("empty_1d_u1", numpy_written(np.zeros((0,), dtype="u1")), "|u1")
    add("empty_3d_be_u8", numpy_written(np.zeros((2, 0, 4), dtype=">u8")), ">u8")

    # The largest rank DirectML allows.
    add("rank8_u1", numpy_written(np.arange(16, dtype="u1").reshape(1, 2, 1, 2, 1, 2, 1, 2)), "|u1")

    # Versions 2.0 (uint32 header length, latin-1) and 3.0 (uint32, UTF-8).
    add("v2_u2", numpy_written(np.array([[1, 0x0203], [0xFFFF, 0x8000]], dtype="<u2"), version=(2, 0)), "<u2")
    add("v3_f4", numpy_written(from_bits([0x3F800000, 0x7FC00001, 0x80000000], "<f4", (3,)), version=(3, 0)), "<f4")
    add("v2_be_i8", numpy_written(np.array([-1, 2, -(2**63)], dtype=">i8"), version=(2, 0)), ">i8")

    # Older writers (NumPy < 1.14, cnpy, libnpy) pad the header to 16 bytes, not 64.
    pad16 = hand_built("{'descr': '<i2', 'fortran_order': False, 'shape': (5,), }",
                       np.array([1, -1, 300, -300, 0x7FFF], "<i2").tobytes(), align=16)
    header_end = len(pad16) - 10  # 5 int16 elements follow the header
    assert header_end % 16 == 0 and header_end % 64 != 0
    add("pad16_i2", pad16, "<i2")
    # Keys in another order, odd spacing, a tab, double quotes, no trailing comma.
    add("key_order_u4", hand_built('{ "shape":(2 ,2) ,\t\'fortran_order\' :False,   "descr":\'<u4\'}',
                                   np.array([[1, 2], [3, 0xFFFFFFFF]], "<u4").tobytes()), "<u4")
    # Python 2's long integers in the shape.
    add("py2_long_i8", hand_built("{'descr': '<i8', 'fortran_order': False, 'shape': (2L, 3L), }",
                                  np.arange(-3, 3, dtype="<i8").tobytes()), "<i8")
    # '=' (native order) and a byte-order mark on a one-byte type: NumPy reads both.
    add("native_order_u2", hand_built("{'descr': '=u2', 'fortran_order': False, 'shape': (3,), }",
                                      np.array([1, 0x0102, 0xFFFE], "<u2").tobytes()), "=u2")
    # No byte-order mark at all: NumPy takes it as native order.
    add("no_order_mark_u2", hand_built("{'descr': 'u2', 'fortran_order': False, 'shape': (2,), }",
                                       np.array([0x0102, 0x8000], "<u2").tobytes()), "u2")
    add("lt_one_byte_i1", hand_built("{'descr': '<i1', 'fortran_order': False, 'shape': (3,), }",
                                     bytes([0x00, 0x7F, 0x80])), "<i1")
    # A header with NumPy >= 1.24's spare growth space is just more padding; this one has more.
    add("long_padding_u1", hand_built("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }" + " " * 300,
                                      bytes([7, 9])), "|u1")
    return out


def numpy_report(data, header_descr):
    """What NumPy says about a file: it parses the header itself and loads the data."""
    f = io.BytesIO(data)
    version = npf.read_magic(f)
    shape, fortran_order, dtype = npf._read_array_header(f, version)
    arr = np.load(io.BytesIO(data), allow_pickle=False)
    assert arr.shape == shape and arr.dtype == dtype
    assert np.dtype(header_descr) == dtype, (header_descr, dtype.str)
    c = np.ascontiguousarray(arr)  # C order, as dmlbits presents it
    flat = c.reshape(-1)
    if dtype.kind == "b":
        patterns = [int(x) for x in flat.view("u1")]
    else:
        patterns = [int(x) for x in flat.view(bits_dtype(dtype))]
    return {
        "version": f"{version[0]}.{version[1]}",
        "dtype": dtype.name,                # 'uint16', 'float32', 'bool'
        "descr": header_descr,              # as written in the header
        "numpy_descr": dtype.str,           # NumPy's normalised descr: '>u2', '<u2', '|b1'
        "byteorder": dtype.byteorder,       # NumPy's: '=' native, '>' big, '<' little, '|' n/a
        "itemsize": dtype.itemsize,
        "shape": list(shape),
        "fortran_order": bool(fortran_order),
        "data_offset": len(data) - arr.nbytes,
        "data": [f"0x{p:0{2 * dtype.itemsize}x}" for p in patterns],
    }


def bad_fixtures():
    """name -> (file bytes, substring the error message must contain)."""
    u4x3 = np.array([1, 2, 3], "<u4").tobytes()
    good_hdr = "{'descr': '<u4', 'fortran_order': False, 'shape': (3,), }"
    good = hand_built(good_hdr, u4x3)
    out = {}

    def add(name, data, substring):
        out[name] = (data, substring)

    # Magic and version.
    add("bad_magic", b"\x93NUMPZ" + good[6:], "neither .npy nor JSON")
    add("short_magic", b"\x93NUMPY\x01", "truncated header")
    add("version_4_0", good[:6] + b"\x04\x00" + good[8:], "unsupported .npy version 4.0")
    add("version_1_1", good[:6] + b"\x01\x01" + good[8:], "unsupported .npy version 1.1")
    add("version_0_0", good[:6] + b"\x00\x00" + good[8:], "unsupported .npy version 0.0")
    # Header length.
    add("length_field_truncated", MAGIC + b"\x02\x00\x10\x00", "truncated header")
    add("header_len_beyond_file", MAGIC + b"\x01\x00" + struct.pack("<H", 4000) + good[10:],
        "truncated header: expected 4000 bytes")
    add("v2_header_len_beyond_file", MAGIC + b"\x02\x00" + struct.pack("<I", 70000) + good[10:],
        "truncated header: expected 70000 bytes")
    # A hostile length field: only the 12-byte prefix is present.
    add("header_too_long", MAGIC + b"\x02\x00" + struct.pack("<I", (1 << 20) + 1), "header too long")
    add("header_too_long_v3", MAGIC + b"\x03\x00" + struct.pack("<I", 0xFFFFFFFF), "header too long")
    # The header dictionary.
    add("missing_key", hand_built("{'descr': '<u4', 'shape': (3,), }", u4x3), "missing key 'fortran_order'")
    add("missing_descr", hand_built("{'fortran_order': False, 'shape': (3,), }", u4x3), "missing key 'descr'")
    add("missing_shape", hand_built("{'descr': '<u4', 'fortran_order': False, }", u4x3), "missing key 'shape'")
    add("unknown_key", hand_built("{'descr': '<u4', 'fortran_order': False, 'shape': (3,), 'extra': 1, }", u4x3),
        "unexpected key 'extra'")
    add("duplicate_key", hand_built("{'descr': '<u4', 'descr': '<u4', 'fortran_order': False, 'shape': (3,), }",
                                    u4x3), "duplicate key 'descr'")
    add("unterminated_string", hand_built("{'descr': \"<u4', 'fortran_order': False, 'shape': (3,), }", u4x3),
        "unterminated string")
    add("shape_not_tuple", hand_built("{'descr': '<u4', 'fortran_order': False, 'shape': (3), }", u4x3),
        "not a tuple")
    add("shape_list", hand_built("{'descr': '<u4', 'fortran_order': False, 'shape': [3], }", u4x3),
        "malformed header")
    add("shape_negative", hand_built("{'descr': '<u4', 'fortran_order': False, 'shape': (-3,), }", u4x3),
        "bad shape")
    add("shape_empty_element", hand_built("{'descr': '<u4', 'fortran_order': False, 'shape': (3,,), }", u4x3),
        "bad shape")
    add("shape_lowercase_l", hand_built("{'descr': '<u4', 'fortran_order': False, 'shape': (3l,), }", u4x3),
        "bad shape")
    add("fortran_order_int", hand_built("{'descr': '<u4', 'fortran_order': 0, 'shape': (3,), }", u4x3),
        "fortran_order must be True or False")
    add("fortran_order_lowercase", hand_built("{'descr': '<u4', 'fortran_order': false, 'shape': (3,), }", u4x3),
        "fortran_order must be True or False")
    add("no_braces", hand_built("'descr': '<u4', 'fortran_order': False, 'shape': (3,)", u4x3),
        "malformed header")
    add("unclosed_dict", hand_built("{'descr': '<u4', 'fortran_order': False, 'shape': (3,), ", u4x3),
        "malformed header")
    add("text_after_dict", hand_built(good_hdr + " x", u4x3), "unexpected text after the dictionary")
    add("missing_comma", hand_built("{'descr': '<u4' 'fortran_order': False, 'shape': (3,), }", u4x3),
        "malformed header")
    add("empty_header", MAGIC + b"\x01\x00\x00\x00" + u4x3, "malformed header")
    add("control_char", hand_built("{'descr': '<u4', 'fortran_order': False,\x00 'shape': (3,), }", u4x3),
        "control character")
    add("nine_dims", hand_built("{'descr': '|u1', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }",
                                b"\x00"), "more than 8 dimensions")
    # dtypes that are not tensors of a DirectML type (the first four written by NumPy itself).
    add("object_dtype", numpy_written(np.array([1, "a"], dtype=object), allow_pickle=True), "object")
    add("structured_dtype", numpy_written(np.zeros(2, dtype=[("a", "<u2"), ("b", "<f4")])), "structured")
    add("complex_c8", numpy_written(np.array([1 + 2j], dtype="<c8")), "complex")
    add("string_U3", numpy_written(np.array(["abc"], dtype="<U3")), "string")
    add("bytes_S2", hand_built("{'descr': '|S2', 'fortran_order': False, 'shape': (1,), }", b"ab"), "string")
    add("datetime_M8", hand_built("{'descr': '<M8[s]', 'fortran_order': False, 'shape': (1,), }", bytes(8)),
        "datetime")
    add("odd_size_u3", hand_built("{'descr': '<u3', 'fortran_order': False, 'shape': (1,), }", bytes(3)),
        "unsupported dtype '<u3'")
    add("float128", hand_built("{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }", bytes(16)),
        "unsupported dtype '<f16'")
    add("empty_descr", hand_built("{'descr': '', 'fortran_order': False, 'shape': (1,), }", bytes(1)),
        "unsupported dtype ''")
    # Sizes that do not fit in 64 bits: the element count, the byte count, one dimension.
    add("shape_elements_overflow",
        hand_built("{'descr': '|u1', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
        "overflows 64 bits")
    add("shape_bytes_overflow",
        hand_built("{'descr': '<u8', 'fortran_order': False, 'shape': (2305843009213693952,), }"), "too large")
    add("shape_dim_overflow",
        hand_built("{'descr': '|u1', 'fortran_order': False, 'shape': (18446744073709551616,), }"),
        "overflows 64 bits")
    # Data length.
    add("truncated_data", good[:-4], "truncated: expected 12 bytes of data, found 8")
    add("no_data", hand_built(good_hdr), "truncated: expected 12 bytes of data, found 0")
    add("truncated_fortran", numpy_written(np.asfortranarray(np.zeros((2, 3), "<u2")))[:-1],
        "truncated: expected 12 bytes of data, found 11")
    add("trailing_garbage", good + b"\x00", "trailing garbage: expected 12 bytes of data, found 13")
    add("empty_with_data", hand_built("{'descr': '<u4', 'fortran_order': False, 'shape': (0, 3), }", b"\x01"),
        "trailing garbage: expected 0 bytes of data, found 1")
    return out


def check_numpy_refuses(name, data):
    """NumPy itself must refuse (or, for limits dmlbits adds, at least be beyond DirectML)."""
    dmlbits_only = {"nine_dims", "object_dtype", "structured_dtype", "complex_c8", "string_U3", "bytes_S2",
                    "datetime_M8", "float128", "trailing_garbage", "header_too_long", "header_too_long_v3",
                    "duplicate_key", "empty_with_data", "bad_magic"}
    if name in dmlbits_only:
        return
    try:
        np.load(io.BytesIO(data), allow_pickle=False)
    except Exception:
        return
    raise AssertionError(f"NumPy reads bad fixture {name}")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "testdata", "npy")
    baddir = os.path.join(outdir, "bad")
    os.makedirs(baddir, exist_ok=True)

    expected = {}
    for name, (data, descr) in sorted(good_fixtures().items()):
        fname = name + ".npy"
        with open(os.path.join(outdir, fname), "wb") as f:
            f.write(data)
        expected[fname] = numpy_report(data, descr)
    with open(os.path.join(outdir, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")

    errors = {}
    for name, (data, substring) in sorted(bad_fixtures().items()):
        check_numpy_refuses(name, data)
        fname = name + ".npy"
        with open(os.path.join(baddir, fname), "wb") as f:
            f.write(data)
        errors[fname] = substring
    with open(os.path.join(baddir, "expected_errors.json"), "w") as f:
        json.dump(errors, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(expected)} fixtures and {len(errors)} bad files to {outdir}")


if __name__ == "__main__":
    main()
