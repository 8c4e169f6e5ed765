#!/usr/bin/env bash
# The fourth new-user pass (issue #44), items seen through the binary: an empty operand name is
# a usage error as -o '' is (8), the nested JSON of every empty shape reads (7), -v's auto rule
# never reads as its own contradiction (6), a golden without a dtype names the command line's
# option (9), NaN payloads through JSON literals (2). Item 1 is check_interrupt.sh; items 3
# and 4 are request_test.cpp's (the library as a program's dependency). Expected values are
# NumPy's (np.empty(shape).tolist(), np.float32(x)) or hand-computed.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
P="${PYTHON:-python3}"
"$P" -c "
import numpy as np
np.save('a.npy', np.array([1, 2, 3], dtype=np.uint8))
np.save('big.npy', np.zeros(16 * 2**20 - 1, dtype=np.uint8))
"

# ---- 8. An empty name is a usage error wherever it appears --------------------------------------
for args in "and a.npy ''" "and '' a.npy" "not ''" "popcount '' -o out.npy"; do
  eval "expect_status 2 $args"
  expect_err "an empty name names no file"
done
expect_status 2 not a.npy -o ''
expect_no_file out.npy

# ---- 7. JSON: the nested form of an empty shape, as NumPy's tolist() writes it ------------------
for shape in "2,0,3" "0,3" "2,3,0" "1,0" "3,0,0,2"; do
  data=$("$P" -c "import numpy as np, json; print(json.dumps(np.empty(($shape,), np.uint8).tolist()))")
  printf '{"dtype": "uint8", "shape": [%s], "data": %s}' "$shape" "$data" > e.json
  expect_status 0 not e.json -o e.npy
  got=$("$P" -c "import numpy as np; a = np.load('e.npy'); print(a.dtype, ','.join(map(str, a.shape)))")
  checks=$((checks + 1))
  [ "$got" = "uint8 $shape" ] || fail "(7) shape [$shape] as $data read as $got"
done
printf '{"dtype": "uint8", "shape": [3, 0, 3], "data": [[], []]}' > e.json
expect_status 3 not e.json
expect_err "does not match the data"

# ---- 6. -v: the auto rule's comparison in exact bytes where rounding would contradict it --------
expect_status 0 not big.npy -o /dev/null -v --backend auto
expect_err "auto chose cpu: the output (16777215 bytes) is below 16 MiB"
checks=$((checks + 1))
[[ "$err" != *"16.0 MiB) is below 16 MiB"* ]] || fail "(6) $err"

# ---- 9. A golden without a dtype: the command line's option, in the command line's words --------
printf '[1, 2, 3]' > g.json
expect_status 3 not a.npy --expect g.json
expect_err "a golden file must name its data type"
expect_err "(--dtype applies to inputs, not to goldens)"
printf '{"cases": [{"name": "c", "op": "not", "inputs": ["a.npy"], "expected": "g.json"}]}' > m.json
expect_status 1 check m.json
expect_out '("dtype" applies to inputs, not to goldens)'

# ---- 2. NaN payloads in JSON and array literals: NumPy's conversion of the float64 --------------
expect_status 0 or '["-nan(0x4000000000000)", "nan(0x1)"]' '[0, 0]' --dtype float32 --hex
want=$("$P" -c "
import numpy as np, struct
d = lambda b: struct.unpack('<d', struct.pack('<Q', b))[0]
print(' '.join(hex(np.float32(d(b)).view(np.uint32)) for b in (0xfff4000000000000, 0x7ff0000000000001)))")
checks=$((checks + 1))
got=$(printf '%s' "$out" | "$P" -c "import json, sys; print(' '.join(json.load(sys.stdin)['data']))")
[ "$got" = "$want" ] || fail "(2) float32 NaN payloads: $got, NumPy: $want"
finish
