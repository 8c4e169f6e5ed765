#!/usr/bin/env bash
# `dmlbits eval` (issue #46) through the binary: values against NumPy (python3-numpy) or hand
# calculation, literals bound by name, --explain's graph, -v, and every refusal of item 5 with
# its status, its message (a caret under the column where there is one) and no output written.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
P="${PYTHON:-python3}"
"$P" -c "
import numpy as np
rng = np.random.default_rng(46)
np.save('a.npy', rng.integers(0, 2**32, size=1000, dtype=np.uint32))
np.save('b.npy', rng.integers(0, 2**32, size=1000, dtype=np.uint32))
np.save('c16.npy', rng.integers(0, 2**16, size=1000, dtype=np.uint16))
np.save('i32.npy', rng.integers(-2**31, 2**31, size=4, dtype=np.int32))
np.save('col.npy', rng.integers(0, 2**32, size=(3, 1), dtype=np.uint32))
np.save('row.npy', rng.integers(0, 2**32, size=(4,), dtype=np.uint32))
"

# The value NumPy computes for a Python expression over the saved arrays, compared with out.npy.
same_as_numpy() {
  checks=$((checks + 1))
  local why
  why=$("$P" -c "
import numpy as np
a, b, c16, col, row = (np.load(n + '.npy') for n in ('a', 'b', 'c16', 'col', 'row'))
pc = lambda x, dt=np.uint8: np.unpackbits(np.ascontiguousarray(x).view(np.uint8).reshape(x.shape + (-1,)), axis=-1).sum(-1).astype(dt)
want = np.asarray($1)
got = np.load('out.npy')
if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
    print(got.dtype, got.shape, 'want', want.dtype, want.shape)
") || why="python failed"
  [ -z "$why" ] || fail "eval '$2': $why"
}

# ---- Values ---------------------------------------------------------------------------------------
for backend in cpu cpu-reference; do
  expect_status 0 eval 'popcount(a ^ b)' a=a.npy b=b.npy -o out.npy --backend $backend
  same_as_numpy "pc(a ^ b)" "popcount(a ^ b) on $backend"
  expect_status 0 eval 'popcount(a ^ b, out_dtype=uint32)' a=a.npy b=b.npy -o out.npy --backend $backend
  same_as_numpy "pc(a ^ b, np.uint32)" "popcount(a ^ b, out_dtype=uint32)"
  expect_status 0 eval 'a & ~b' a=a.npy b=b.npy -o out.npy --backend $backend
  same_as_numpy "a & ~b" "a & ~b"
  expect_status 0 eval '(a >> 3) & 0xff' a=a.npy -o out.npy --backend $backend
  same_as_numpy "(a >> 3) & np.uint32(0xff)" "(a >> 3) & 0xff"
  # C's precedence: | loosest, then ^, then &, then the shifts.
  expect_status 0 eval 'a | b ^ a & b << 2' a=a.npy b=b.npy -o out.npy --backend $backend
  same_as_numpy "a | (b ^ (a & (b << np.uint32(2))))" "a | b ^ a & b << 2"
  # A name bound to a literal is that literal; --out-dtype for counts that name none.
  expect_status 0 eval 'popcount(c & k)' c=c16.npy k=0x0ff0 --out-dtype uint32 -o out.npy --backend $backend
  same_as_numpy "pc(c16 & np.uint16(0x0ff0), np.uint32)" "popcount(c & k) k=0x0ff0"
  # Broadcasting along an axis, and a list literal.
  expect_status 0 eval 'popcount(x ^ y) & [1, 2, 3, 255]' x=col.npy y=row.npy -o out.npy --backend $backend
  same_as_numpy "pc(col ^ row) & np.array([1, 2, 3, 255], np.uint8)" "broadcast"
  # Function names in any case and Python's names.
  expect_status 0 eval 'BIT_XOR(a, bitwise_and(a, b))' a=a.npy b=b.npy -o out.npy --backend $backend
  same_as_numpy "a ^ (a & b)" "BIT_XOR(a, bitwise_and(a, b))"
done
# popcount(5) with --dtype: 5 as UINT8 has two bits (hand count).
expect_status 0 eval 'popcount(5)' --dtype uint8 --json
expect_out '"data": 2'

# ---- --explain, -v --------------------------------------------------------------------------------
expect_status 0 eval 'popcount(a ^ b)' a=a.npy b=b.npy --explain
expect_out '"expression": "popcount(a ^ b)"'
expect_out '"DML_OPERATOR_ELEMENT_WISE_BIT_XOR"'
expect_out '"DML_OPERATOR_ELEMENT_WISE_BIT_COUNT"'
expect_out '"cpu": "one pass"'
expect_status 0 eval 'popcount(x ^ y)' x=col.npy y=row.npy --explain
expect_out '"cpu": "node by node: an operand broadcast along an axis (not flat)"'
expect_status 0 eval 'popcount(a ^ b)' a=a.npy b=b.npy -o out.npy -v --backend cpu
expect_err "'popcount(a ^ b)' runs on the cpu backend"

# ---- Refusals: status, message, nothing written ---------------------------------------------------
refused() {  # STATUS TEXT ARGS...
  local status=$1 text=$2
  shift 2
  rm -f out.npy
  expect_status "$status" eval "$@" -o out.npy
  expect_err "$text"
  expect_no_file out.npy
}
refused 2 "unexpected '^' (column 13)" 'popcount(a ^^ b)' a=a.npy b=b.npy
expect_err "$(printf '  popcount(a ^^ b)\n              ^')"
refused 2 "frob" 'frob(a)' a=a.npy
refused 2 "xor takes 2 arguments, given 1" 'xor(a)' a=a.npy
refused 2 "the name 'b' is not bound to an operand" 'popcount(a ^ b)' a=a.npy
refused 2 "operand 'a' is bound twice" 'a ^ b' a=a.npy b=b.npy a=b.npy
refused 2 "operand 'c' is bound but the expression does not use it" 'a ^ b' a=a.npy b=b.npy c=a.npy
refused 2 "binds no name" 'a ^ b' a=a.npy b.npy
refused 2 "computes nothing" 'a' a=a.npy
refused 2 "out_dtype" 'popcount(a, out_dtype=uint16)' a=a.npy
deep=$(printf '~%.0s' $(seq 70))a
refused 2 "64" "$deep" a=a.npy
# A node refused at the level: the operator's own message under the node, and the level that takes it.
refused 3 "xor: data type INT32 needs DML_FEATURE_LEVEL_4_1 or later (requested 3_0)" 'popcount(a ^ a)' a=i32.npy -l 3_0
expect_err "^^^^^"
# popcount's UINT8 count cannot meet a UINT32 operand (DirectML: one dtype per node).
refused 3 "different data types" 'popcount(a) & b' a=a.npy b=b.npy
# A literal nothing gives a dtype.
refused 3 "no operand meets it" 'popcount(5)'
# The output may not be one of the inputs, and the expression never writes in place.
cp a.npy keep.npy
expect_status 2 eval 'a ^ b' a=keep.npy b=b.npy -o keep.npy
expect_err "name the same file"
cmp -s a.npy keep.npy || fail "keep.npy changed"
expect_status 2 eval 'a ^ b' a=keep.npy b=b.npy --in-place
# Standard input once: one operand may be '-', not two.
expect_status 2 eval 'a ^ b' a=- b=- < a.npy
expect_err "standard input ('-') can be given as one operand only"
expect_status 0 eval 'popcount(a ^ b)' a=- b=b.npy -o out.npy < a.npy
same_as_numpy "pc(a ^ b)" "a from standard input"
finish
