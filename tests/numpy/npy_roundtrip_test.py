#!/usr/bin/python3
"""dmlbits against NumPy on every good .npy fixture (testdata/npy, made by
scripts/make_npy_fixtures.py):

- `dmlbits info --json FILE` reports the dtype, shape, layout, byte order, version and sizes
  that NumPy reports for the same file;
- `dmlbits xor FILE 0 -o out.npy` (the identity) writes a file NumPy loads with the same shape,
  the same dtype (bool becomes uint8) and the same element bits in C order, with a version 1.0
  header whose length is a multiple of 64;
- FILE -> out.json -> back.npy through `xor ... 0` keeps every bit (NaN payloads, -0.0,
  infinities and subnormals included), and the JSON holds the values NumPy holds.

Expected values come from NumPy reading the fixture, cross-checked against the stored
expected.json (also written by NumPy), never from dmlbits.
"""

import json
import math
import os
import sys

import numpy as np
from numpy.lib import format as npf

import dmlbits_testlib as testlib

NPY_DIR = testlib.testdata("npy")

CHECKS = testlib.stderr_checks()
check = CHECKS.check


def run(*args):
    return testlib.run(*args, timeout=60)


def bits_view(arr):
    """The array's elements as native unsigned integers holding their bit patterns, C order."""
    c = np.ascontiguousarray(arr)
    if c.dtype.kind == "b":
        return c.view("u1")
    order = ">" if c.dtype.byteorder == ">" else "<"
    return c.view(f"{order}u{c.dtype.itemsize}").astype(f"<u{c.dtype.itemsize}")


def numpy_header(path):
    with open(path, "rb") as f:
        version = npf.read_magic(f)
        shape, fortran_order, dtype = npf._read_array_header(f, version)
        offset = f.tell()
    return version, shape, fortran_order, dtype, offset


def flatten(value):
    if isinstance(value, list):
        for v in value:
            yield from flatten(v)
    else:
        yield value


# dmlbits' byte_order word -> NumPy's dtype.byteorder on this (little-endian) machine.
BYTE_ORDER_TO_NUMPY = {"little": "=", "native": "=", "big": ">", "not applicable": "|"}


def check_info(name, path, arr, exp):
    version, shape, fortran_order, dtype, offset = numpy_header(path)
    r = run("info", "--json", path)
    if not check(r.returncode == 0 and r.stderr == "", f"{name}: info exited {r.returncode}: {r.stderr}"):
        return
    infos = json.loads(r.stdout)
    check(len(infos) == 1, f"{name}: info --json gave {len(infos)} objects")
    info = infos[0]
    want_dtype = "uint8" if dtype.kind == "b" else dtype.name
    check(info["dtype"] == want_dtype, f"{name}: info dtype {info['dtype']}, NumPy {dtype.name}")
    check(info["numpy_bool"] == (dtype.kind == "b"), f"{name}: numpy_bool {info['numpy_bool']}")
    check(info["shape"] == list(shape), f"{name}: info shape {info['shape']}, NumPy {list(shape)}")
    check(info["elements"] == arr.size, f"{name}: info elements {info['elements']}, NumPy {arr.size}")
    check(info["bytes"] == arr.nbytes, f"{name}: info bytes {info['bytes']}, NumPy {arr.nbytes}")
    check(info["fortran_order"] == fortran_order, f"{name}: info fortran_order {info['fortran_order']}")
    check(info["version"] == f"{version[0]}.{version[1]}", f"{name}: info version {info['version']}")
    check(info["header_bytes"] == offset, f"{name}: info header_bytes {info['header_bytes']}, NumPy {offset}")
    check(info["descr"] == exp["descr"], f"{name}: info descr {info['descr']}, written {exp['descr']}")
    got_order = BYTE_ORDER_TO_NUMPY.get(info["byte_order"])
    check(got_order == dtype.byteorder,
          f"{name}: info byte_order {info['byte_order']}, NumPy byteorder {dtype.byteorder!r}")
    check(info["format"] == "npy", f"{name}: format {info['format']}")


def check_written_npy(name, path, arr, want_bits):
    """`path` was written by dmlbits from `arr`: a v1.0, 64-aligned, C-order, little-endian copy."""
    with open(path, "rb") as f:
        raw = f.read()
    version, shape, fortran_order, dtype, offset = numpy_header(path)
    check(version == (1, 0), f"{name}: written version {version}")
    check(offset % 64 == 0, f"{name}: written header is {offset} bytes, not a multiple of 64")
    check(raw[offset - 1:offset] == b"\n", f"{name}: written header does not end in a newline")
    check(not fortran_order, f"{name}: written fortran_order True")
    out = np.load(path, allow_pickle=False)
    want_dtype = np.dtype("u1") if arr.dtype.kind == "b" else arr.dtype.newbyteorder("<")
    check(out.dtype == want_dtype, f"{name}: written dtype {out.dtype}, want {want_dtype}")
    check(out.dtype.byteorder in "=|", f"{name}: written byte order {out.dtype.byteorder!r}")
    check(out.shape == arr.shape, f"{name}: written shape {out.shape}, want {arr.shape}")
    check(len(raw) - offset == arr.nbytes, f"{name}: written data is {len(raw) - offset} bytes, want {arr.nbytes}")
    check(raw[offset:] == want_bits.tobytes(), f"{name}: written bytes differ from NumPy's C-order data")


def check_json_values(name, doc, arr, want_bits):
    """The JSON dmlbits wrote holds NumPy's values: integers exactly, finite floats as text that
    reads back to the same bits, non-finite floats as their bit pattern in hex."""
    want_dtype = "uint8" if arr.dtype.kind == "b" else arr.dtype.name
    check(doc.get("dtype") == want_dtype, f"{name}: JSON dtype {doc.get('dtype')}, want {want_dtype}")
    check(doc.get("shape") == list(arr.shape), f"{name}: JSON shape {doc.get('shape')}, want {list(arr.shape)}")
    values = list(flatten(doc.get("data")))
    flat = np.ascontiguousarray(arr).reshape(-1)
    if not check(len(values) == flat.size, f"{name}: JSON has {len(values)} values, want {flat.size}"):
        return
    bits = want_bits.reshape(-1)
    for i, (v, x) in enumerate(zip(values, flat)):
        if arr.dtype.kind in "uib":
            check(v == int(x), f"{name}: JSON data[{i}] = {v!r}, NumPy {int(x)}")
        elif isinstance(v, str):
            check(not math.isfinite(float(x)), f"{name}: JSON data[{i}] = {v!r} for finite {x!r}")
            check(int(v, 16) == int(bits[i]), f"{name}: JSON data[{i}] = {v!r}, bits 0x{int(bits[i]):x}")
        else:
            back = np.array([float(v)], dtype=np.float64).astype(arr.dtype.newbyteorder("<"))
            got = int(back.view(f"<u{arr.dtype.itemsize}")[0])
            check(got == int(bits[i]), f"{name}: JSON data[{i}] = {v!r} reads as 0x{got:x}, want 0x{int(bits[i]):x}")


def main():
    missing = testlib.dmlbits_missing("DMLBITS is not set to an executable", stream=sys.stderr, need="executable")
    if missing is not None:
        return missing
    with open(os.path.join(NPY_DIR, "expected.json")) as f:
        expected = json.load(f)
    names = sorted(n for n in os.listdir(NPY_DIR) if n.endswith(".npy"))
    check(sorted(expected) == names, f"expected.json lists {sorted(expected)}, the folder has {names}")
    check(len(names) >= 40, f"only {len(names)} fixtures")

    with testlib.temp_dir() as tmp:
        for name in names:
            path = os.path.join(NPY_DIR, name)
            exp = expected.get(name)
            if not check(exp is not None, f"{name}: not in expected.json"):
                continue
            arr = np.load(path, allow_pickle=False)
            want_bits = bits_view(arr)
            # The stored expectations still describe the file (guards against stale fixtures).
            check([f"0x{int(b):0{2 * arr.dtype.itemsize}x}" for b in want_bits.reshape(-1)] == exp["data"],
                  f"{name}: NumPy's data differ from expected.json")
            check(list(arr.shape) == exp["shape"] and arr.dtype.name == exp["dtype"],
                  f"{name}: NumPy's shape/dtype differ from expected.json")

            check_info(name, path, arr, exp)

            out_npy = os.path.join(tmp, "out.npy")
            r = run("xor", path, "0", "-o", out_npy)
            if check(r.returncode == 0, f"{name}: xor -o out.npy exited {r.returncode}: {r.stderr}"):
                check_written_npy(name, out_npy, arr, want_bits)
            if os.path.exists(out_npy):
                os.remove(out_npy)

            out_json = os.path.join(tmp, "out.json")
            back_npy = os.path.join(tmp, "back.npy")
            r = run("xor", path, "0", "-o", out_json)
            if check(r.returncode == 0, f"{name}: xor -o out.json exited {r.returncode}: {r.stderr}"):
                with open(out_json) as f:
                    check_json_values(name, json.load(f), arr, want_bits)
                r = run("xor", out_json, "0", "-o", back_npy)
                if check(r.returncode == 0, f"{name}: xor out.json -o back.npy exited {r.returncode}: {r.stderr}"):
                    check_written_npy(name + " (via JSON)", back_npy, arr, want_bits)
            for p in (out_json, back_npy):
                if os.path.exists(p):
                    os.remove(p)

    if CHECKS.failures:
        print(f"{len(CHECKS.failures)} of {CHECKS.count} checks failed", file=sys.stderr)
        return 1
    print(f"{CHECKS.count} checks passed on {len(names)} fixtures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
