#!/usr/bin/env bash
# JSON tensors through the binary: JSON inputs print JSON, --dtype for nested arrays that name
# none, malformed files refused (exit 3, one stderr line naming the file and the position),
# -o x.json read back, --hex, and .npy -> JSON -> .npy bit-exactness. Fixtures in
# testdata/json; expected values are hand-computed (xor with 0 is the identity).
source "$(dirname "$0")/lib.sh"
cd "$WORK"
P="$PYTHON"
J="$TESTDATA/json"

# check_json TEXT PYTHON_EXPR: parses TEXT as JSON into `j` and asserts the expression.
check_json() {
  printf '%s' "$1" | "$P" -c "
import json, sys, struct
j = json.load(sys.stdin)
sys.exit(0 if ($2) else 1)" || fail "JSON check failed: $2; text was: $1"
}

# --- JSON in, JSON out -----------------------------------------------------------------------
expect_status 0 xor "$J/u32_nested.json" 0
check_json "$out" 'j == {"dtype": "uint32", "shape": [2, 2], "data": [[0, 123], [456, 789]]}'
# 123 ^ 255 = 132, 0x1c8 ^ 0xff = 0x137 = 311, 0x315 ^ 0xff = 0x3ea = 1002.
expect_status 0 xor "$J/u32_nested.json" 0xff
check_json "$out" 'j["data"] == [[255, 132], [311, 1002]]'
expect_status 0 xor "$J/i16_flat_keys_reversed.json" 0
check_json "$out" 'j == {"dtype": "int16", "shape": [2, 3], "data": [[1, -2, 3], [-4, 32767, -32768]]}'
# Exact 64-bit integers, in the text itself (not merely equal after a trip through double).
expect_status 0 xor "$J/i64_limits.json" 0
expect_out '-9223372036854775808'
expect_out '9223372036854775807'
check_json "$out" 'j["data"] == [-9223372036854775808, 9223372036854775807]'
expect_status 0 xor "$J/u64_scalar.json" 0
expect_out '18446744073709551615'
check_json "$out" 'j == {"dtype": "uint64", "shape": [], "data": 18446744073709551615}'
expect_status 0 xor "$J/u8_empty.json" 0
check_json "$out" 'j == {"dtype": "uint8", "shape": [0, 3], "data": []}'
# Floats: shortest texts, -0.0 kept, NaN (with its payload) and infinity as bit patterns.
expect_status 0 xor "$J/f32_special.json" 0
check_json "$out" 'j["data"][:2] == [1.5, -0.0] and str(j["data"][1]) == "-0.0"'
check_json "$out" 'j["data"][2:4] == ["0x7fc00001", "0xff800000"]'
check_json "$out" '[struct.unpack("<I", struct.pack("<f", v))[0] for v in j["data"][4:]] == [0x00000001, 0x7f7fffff]'
expect_status 0 xor "$J/f16.json" 0
check_json "$out" 'j["dtype"] == "float16" and j["data"][0][0] == 0.1 and j["data"][1] == ["0x7c00", -0.0]'
# 65504 is the largest float16; 65500.0 reads back to it (NumPy prints it so too).
check_json "$out" 'j["data"][0][1] in (65500.0, 65504.0)'

# --- the dtype of nested arrays ----------------------------------------------------------------
# No dtype anywhere: exit 3, one line naming the file and suggesting --dtype.
expect_status 3 xor "$J/no_dtype.json" 0
expect_one_line
expect_err "reading '$J/no_dtype.json'"
expect_err "--dtype"
expect_status 3 xor '[1, 2]' '[3, 4]'
expect_one_line
expect_err "--dtype"
expect_status 0 xor "$J/no_dtype.json" 0 --dtype uint16
check_json "$out" 'j == {"dtype": "uint16", "shape": [2, 2], "data": [[0, 123], [456, 789]]}'
expect_status 0 xor "$J/no_dtype.json" 0 --dtype UINT64
check_json "$out" 'j["dtype"] == "uint64"'
# ... or from the other operand (an .npy or a JSON object naming its dtype).
"$P" -c "import numpy as np; np.save('zeros_i32.npy', np.zeros((2, 2), dtype=np.int32))"
expect_status 0 xor "$J/no_dtype.json" zeros_i32.npy
check_json "$out" 'j == {"dtype": "int32", "shape": [2, 2], "data": [[0, 123], [456, 789]]}'
expect_status 0 xor "$J/no_dtype.json" "$J/u32_nested.json"
check_json "$out" 'j["dtype"] == "uint32" and j["data"] == [[0, 0], [0, 0]]'
# 456 does not fit the uint8 the other operand imposes: the position is named.
"$P" -c "import numpy as np; np.save('zeros_u8.npy', np.zeros((2, 2), dtype=np.uint8))"
expect_status 3 xor "$J/no_dtype.json" zeros_u8.npy
expect_one_line
expect_err "data[1][0]"
expect_err "out of range for uint8"
# From standard input.
run xor - 0 --dtype uint8 <<<'[[1, 2], [3, 4]]'
[ "$status" -eq 0 ] || fail "stdin JSON exited $status: $err"
check_json "$out" 'j == {"dtype": "uint8", "shape": [2, 2], "data": [[1, 2], [3, 4]]}'

# --- malformed files: exit 3, one line, the file and the position --------------------------------
bad() {  # bad FILE TEXT...: each TEXT must appear in the message
  local file="$J/bad/$1"; shift
  expect_status 3 xor "$file" 0
  expect_one_line
  expect_err "reading '$file'"
  local t
  for t in "$@"; do expect_err "$t"; done
}
bad ragged.json "data[1]:" "ragged"
bad null_value.json "data[1][1]:" "null"
bad out_of_range.json "data[1][0]:" "256" "out of range for uint8"
bad u64_beyond.json "data[1]:" "out of range for uint64"
bad nine_levels.json "more than 8 nested levels"
bad hex_too_wide.json "data[1]:" "wider than float16's 16 bits"
bad syntax.json "invalid JSON" "line 2, column 5"
bad shape_mismatch.json "shape [2,2]" "does not match"
bad unknown_dtype.json 'unknown dtype "uint9"'
bad no_data.json 'no "data"'
bad string_value.json "data[1]:" '"one"'
bad float_for_int.json "data[1]:" "not an integer"
bad f32_overflow.json "data[1][0]:" "out of range for float32"

# A 100000-deep document is refused at the ninth level: quickly, with a message, no crash.
"$P" -c "print('[' * 100000 + ']' * 100000)" > deep.json
"$P" -c "print('{\"data\": ' * 100000)" > deep_objects.json
start=$(date +%s%N)
expect_status 3 xor deep.json 0 --dtype uint8
expect_one_line
expect_err "more than 8 nested levels"
expect_status 3 xor deep_objects.json 0 --dtype uint8
expect_one_line
expect_err "unexpected object"
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$elapsed_ms" -lt 3000 ] || fail "deep documents took ${elapsed_ms} ms"

# Literals beyond uint64 are refused as out of range, not wrapped.
expect_status 3 xor "$J/u64_scalar.json" 18446744073709551616
expect_one_line
expect_err "out of range for uint64"
expect_status 0 xor "$J/u64_scalar.json" 18446744073709551615
check_json "$out" 'j["data"] == 0'

# --- -o x.json, read back ------------------------------------------------------------------------
expect_status 0 xor "$J/f32_special.json" 0 -o out.json
[ -z "$out" ] || fail "-o out.json also printed: $out"
expect_status 0 xor out.json 0 -o out2.json
cmp -s out.json out2.json || fail "out.json re-read and rewritten differs: $(diff out.json out2.json)"
check_json "$(cat out.json)" 'j["dtype"] == "float32" and j["shape"] == [6]'
# --format json for an output without a .json name.
expect_status 0 xor "$J/u32_nested.json" 0 -o out.txt --format json
check_json "$(cat out.txt)" 'j["data"] == [[0, 123], [456, 789]]'

# --hex: every value as its zero-padded bit pattern, and it reads back.
expect_status 0 xor "$J/f32_special.json" 0 --hex
check_json "$out" 'j["data"] == ["0x3fc00000", "0x80000000", "0x7fc00001", "0xff800000", "0x00000001", "0x7f7fffff"]'
expect_status 0 xor "$J/i16_flat_keys_reversed.json" 0 --hex -o hex.json
check_json "$(cat hex.json)" 'j["data"] == [["0x0001", "0xfffe", "0x0003"], ["0xfffc", "0x7fff", "0x8000"]]'
expect_status 0 xor hex.json 0
check_json "$out" 'j["data"] == [[1, -2, 3], [-4, 32767, -32768]]'

# .npy -> JSON -> .npy keeps every bit, for every dtype (special floats included).
"$P" -c "
import numpy as np
rng = np.random.default_rng(7)
for t in ['u1','u2','u4','u8','i1','i2','i4','i8']:
    info = np.iinfo(t)
    a = np.concatenate([np.array([info.min, info.max, 0, 1], dtype=t),
                        rng.integers(info.min, info.max, size=60, dtype=t, endpoint=True)])
    np.save(t + '.npy', a.reshape(4, 16))
for t, u in [('f2','u2'), ('f4','u4'), ('f8','u8')]:
    bits = rng.integers(0, np.iinfo(u).max, size=48, dtype=u, endpoint=True)
    special = np.array([0, 0.0, -0.0, np.inf, -np.inf, np.nan, np.finfo(t).max, np.finfo(t).tiny,
                        np.finfo(t).smallest_subnormal, -np.finfo(t).smallest_subnormal,
                        np.finfo(t).min, 1.0 / 3, 0.1, 1e-3, 65504, 2.0], dtype=t)
    np.save(t + '.npy', np.concatenate([special, bits.view(t)]).reshape(2, 4, 8))
"
for t in u1 u2 u4 u8 i1 i2 i4 i8 f2 f4 f8; do
  expect_status 0 xor "$t.npy" 0 -o "$t.json"
  expect_status 0 xor "$t.json" 0 -o "$t.back.npy"
  expect_status 0 xor "$t.npy" 0 --hex -o "$t.hex.json"
  expect_status 0 xor "$t.hex.json" 0 -o "$t.hexback.npy"
  "$P" -c "
import numpy as np, sys
a = np.load('$t.npy'); b = np.load('$t.back.npy'); c = np.load('$t.hexback.npy')
u = 'u%d' % a.dtype.itemsize
ok = all(x.dtype == a.dtype and x.shape == a.shape and np.array_equal(x.view(u), a.view(u)) for x in (b, c))
sys.exit(0 if ok else 1)" || fail "$t: .npy -> JSON -> .npy changed bits"
done

finish
