#!/usr/bin/env bash
# What a new user ran into (issue #13), each through the binary: where reports go, usage errors
# before work, file modes, manifest validation, command names, closed pipes, output paths,
# messages. Expected values are hand-computed.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
P="$PYTHON"
"$P" -c "
import numpy as np
np.save('x.npy', np.array([0, 1, 2, 3], dtype=np.uint8))
np.save('g_bad.npy', np.array([255, 251, 255, 253], dtype=np.uint8))    # not(x) is [255,254,253,252]
np.save('g_good.npy', np.array([255, 254, 253, 252], dtype=np.uint8))
np.save('u64.npy', np.array([0, 2**64 - 1], dtype=np.uint64))
np.save('u64_g.npy', np.array([1, 1], dtype=np.uint64))
np.save('f32.npy', np.array([1.0, 2.0], dtype=np.float32))
np.save('f32_nan.npy', np.array([float('nan'), 2.0], dtype=np.float32))
np.save('be.npy', np.array([1, 2], dtype='>u2'))
np.save('fo.npy', np.asfortranarray(np.array([[1, 2], [3, 4]], dtype=np.uint16)))
"

# ---- 1. --expect with -o -: the report goes to standard error, the tensor alone to stdout --------
set +e
"$DMLBITS" not x.npy -o - --expect g_bad.npy 2>report.txt > piped.npy
st=$?
[ "$st" -eq 1 ] || fail "(1) --expect with -o - exited $st, expected 1"
grep -q "mismatch with 'g_bad.npy'" report.txt || fail "(1) the report is not on stderr: $(cat report.txt)"
expect_status 0 info piped.npy
expect_out "(4,)"
"$DMLBITS" not x.npy -o - --expect g_bad.npy 2>/dev/null | "$DMLBITS" info - >/dev/null 2>info_err.txt ||
  fail "(1) dmlbits info - refused the piped tensor: $(cat info_err.txt)"
# Without -o -, the report stays on standard output.
expect_status 1 not x.npy --expect g_bad.npy
expect_out "mismatch with 'g_bad.npy'"

# ---- 2. check: command-line and environment mistakes are usage errors before any case ------
cat > m.json <<'JSON'
{"cases": [{"name": "not_x", "op": "not", "inputs": ["x.npy"], "expected": "g_good.npy"}]}
JSON
expect_status 0 check m.json
expect_out "1 passed, 0 failed"
for args in "--backend gpu" "--isa sse" "--backend cpu-reference --isa scalar" "--backend d3d12 --isa avx2"; do
  # shellcheck disable=SC2086
  expect_status 2 check m.json $args
  expect_one_line
  [[ "$out" != *passed* ]] || fail "(2) check $args ran cases: $out"
done
DMLBITS_THREADS=abc expect_status 2 check m.json
expect_err "DMLBITS_THREADS"; expect_one_line
DMLBITS_ISA=avx9 expect_status 2 check m.json
expect_err "DMLBITS_ISA"; expect_one_line

# ---- 3. check --isa applies to CPU cases only ------------------------------------------------
cat > mixed.json <<'JSON'
{"cases": [{"name": "on_cpu", "op": "not", "inputs": ["x.npy"], "expected": "g_good.npy"},
           {"name": "on_reference", "op": "not", "inputs": ["x.npy"], "expected": "g_good.npy",
            "backend": "cpu-reference"}]}
JSON
expect_status 0 check mixed.json --isa scalar
expect_out "2 passed, 0 failed"
DMLBITS_ISA=scalar expect_status 0 check mixed.json
expect_out "2 passed, 0 failed"

# ---- 4. replacing a file keeps its mode; a new file gets 0666 less the umask ------------------
cp x.npy private.npy && chmod 600 private.npy
expect_status 0 xor private.npy 0x0f --in-place
[ "$(stat -c %a private.npy)" = 600 ] || fail "(4) --in-place made a 0600 file $(stat -c %a private.npy)"
cp x.npy out600.npy && chmod 600 out600.npy
expect_status 0 not x.npy -o out600.npy
[ "$(stat -c %a out600.npy)" = 600 ] || fail "(4) -o over a 0600 file made it $(stat -c %a out600.npy)"
chmod 640 out600.npy
expect_status 0 not x.npy -o out600.npy
[ "$(stat -c %a out600.npy)" = 640 ] || fail "(4) -o over a 0640 file made it $(stat -c %a out600.npy)"
(umask 027 && "$DMLBITS" not x.npy -o new.npy) || fail "(4) writing new.npy failed"
[ "$(stat -c %a new.npy)" = 640 ] || fail "(4) a new file under umask 027 is $(stat -c %a new.npy), expected 640"

# ---- 5. manifest validation: status 3, naming the case and the key ----------------------------
manifest_error() {  # TEXT JSON: the manifest is invalid (status 3) and the message has TEXT
  printf '%s\n' "$2" > bad.json
  expect_status 3 check bad.json
  expect_err "$1"; expect_one_line
}
manifest_error "case 'c': \"backend\": unknown backend \"gpu\"" \
  '{"cases": [{"name": "c", "op": "not", "inputs": ["x.npy"], "expected": "g_good.npy", "backend": "gpu"}]}'
manifest_error "case 'c': \"out_dtype\" does not apply to xor" \
  '{"cases": [{"name": "c", "op": "xor", "inputs": ["x.npy", "1"], "expected": "g_good.npy", "out_dtype": "uint8"}]}'
manifest_error "case 'c': \"shift_overflow\" does not apply to and" \
  '{"cases": [{"name": "c", "op": "and", "inputs": ["x.npy", "1"], "expected": "g_good.npy", "shift_overflow": "wrap"}]}'
manifest_error "case 'c': key \"op\" is given twice" \
  '{"cases": [{"name": "c", "op": "not", "op": "xor", "inputs": ["x.npy"], "expected": "g_good.npy"}]}'
for input in 5 1.5 true '{"a": 1}' null; do
  manifest_error "case 'c': \"inputs\"[1]" \
    "{\"cases\": [{\"name\": \"c\", \"op\": \"and\", \"inputs\": [\"x.npy\", $input], \"expected\": \"g_good.npy\"}]}"
done
manifest_error "defaults: unknown key \"feature_levle\"" \
  '{"defaults": {"feature_levle": "4_1"}, "cases": [{"name": "c", "op": "not", "inputs": ["x.npy"], "expected": "g_good.npy"}]}'
manifest_error "invalid JSON at line 3, column" $'{"cases": [\n  {"name": "c",\n   "op": }\n]}'
# Arrays stay array literals; a default shift_overflow does not break an `and` case.
printf '%s\n' '{"defaults": {"shift_overflow": "wrap"}, "cases": [
  {"name": "arr", "op": "and", "inputs": ["x.npy", [255, 255, 255, 255]], "expected": "x.npy"}]}' > ok.json
expect_status 0 check ok.json
expect_out "1 passed, 0 failed"

# ---- 6. a filter that matches nothing, and a manifest with no cases, are errors ----------------
expect_status 2 check m.json --filter nosuchcase
expect_err "--filter 'nosuchcase' matches no case"; expect_one_line
echo '{"cases": []}' > empty.json
expect_status 3 check empty.json
expect_err "no cases"; expect_one_line

# ---- 7. --version after a command --------------------------------------------------------------
for cmd in ops info check devices xor popcount; do
  expect_status 0 "$cmd" --version
  [ "$out" = "$("$DMLBITS" --version)" ] || fail "(7) dmlbits $cmd --version printed: $out"
done

# ---- 8. unknown commands, help, any case -------------------------------------------------------
expect_status 2 xr x.npy 1
expect_err "unknown command 'xr'"; expect_err "did you mean 'xor'"; expect_one_line
expect_status 0 help
expect_out "Usage: dmlbits"
expect_status 0 help xor
expect_out "Usage: dmlbits xor"
expect_status 0 AND x.npy 0x0f
expect_out '"data": [0, 1, 2, 3]'
expect_status 0 Bit_Xor x.npy 1
expect_status 0 dml_operator_element_wise_bit_not x.npy
expect_status 0 OPS

# ---- 9. one rule for options that need --expect; counts are not negative ----------------------
for args in "--show 3" "--report-json r.json" "--update"; do
  # shellcheck disable=SC2086
  expect_status 2 not x.npy $args
  expect_err "needs --expect"; expect_one_line
done
expect_no_file r.json
expect_status 2 not x.npy --expect g_good.npy --show -1
expect_err "--show: '-1' is not a count"; expect_one_line
expect_status 2 check m.json --show -5
expect_err "--show: '-5' is not a count"; expect_one_line

# ---- 10. output names of 241 to 255 bytes ------------------------------------------------------
for n in 241 250 255; do
  name=$(printf 'n%.0s' $(seq 1 $((n - 4)))).npy
  expect_status 0 not x.npy -o "$name"
  [ -s "$name" ] || fail "(10) no output named with $n bytes"
  expect_status 0 not x.npy -o "$name"  # replacing it too
done
[ -z "$(ls -A | grep dmlbits-)" ] || fail "(10) temporary files left behind"

# ---- 11. every output path is checked before computing ----------------------------------------
rm -f main.npy
expect_status 5 not x.npy -o main.npy --time-json no/such/dir/t.json
expect_err "no/such/dir"; expect_one_line; expect_no_file main.npy
expect_status 5 not x.npy -o main.npy --expect g_bad.npy --report-json no/such/dir/r.json
expect_one_line; expect_no_file main.npy
expect_status 5 not x.npy -o main.npy --explain-json no/such/dir/e.json
expect_one_line; expect_no_file main.npy
expect_status 5 not x.npy -o main.npy --emit-dxdispatch no/such/dir/model
expect_one_line; expect_no_file main.npy
expect_status 5 check m.json --junit no/such/dir/x.xml
expect_one_line
[[ "$out" != *passed* ]] || fail "(11) check ran its cases before refusing --junit: $out"

# ---- 12. standard input once for info; an empty --adapter -------------------------------------
expect_status 2 info - - < x.npy
expect_err "standard input"; expect_one_line
expect_status 2 not x.npy --adapter ''
expect_err "--adapter"; expect_one_line
expect_status 2 check m.json --adapter ''
expect_err "--adapter"; expect_one_line

# ---- 13. a closed pipe: status 141, quietly, for every command; other failures say why --------
pipe_closed() {  # ARGS...: dmlbits ARGS into a pipe whose reader has already gone
  checks=$((checks + 1))
  set +e
  (sleep 0.3; "$DMLBITS" "$@" 2>pipe_err.txt) | true
  local st=${PIPESTATUS[0]}
  [ "$st" -eq 141 ] || fail "(13) dmlbits $* into a closed pipe exited $st, expected 141: $(cat pipe_err.txt)"
  [ ! -s pipe_err.txt ] || fail "(13) dmlbits $* into a closed pipe printed: $(cat pipe_err.txt)"
}
pipe_closed ops --json
pipe_closed ops
pipe_closed devices
pipe_closed info x.npy
pipe_closed check m.json
pipe_closed not x.npy
pipe_closed not x.npy -o -
pipe_closed --help
"$DMLBITS" ops --json > /dev/full 2> full_err.txt
grep -q "writing standard output: No space left on device" full_err.txt || fail "(13) /dev/full: $(cat full_err.txt)"

# ---- usage errors in the house style ------------------------------------------------------------
house_style() {  # COMMAND ARGS...: status 2, "dmlbits: COMMAND: ...; see dmlbits COMMAND --help"
  local cmd=$1
  expect_status 2 "$@"
  expect_one_line
  [[ "$err" == "dmlbits: $cmd: "*"; see dmlbits $cmd --help" ]] || fail "not in the house style: $err"
}
house_style xor x.npy 1 --out-dtype uint32
expect_err "unknown option '--out-dtype'"
house_style xor x.npy 1 --format npy --format json
house_style check m.json --jobs -1
house_style xor x.npy
expect_err "missing operand B"
house_style xor x.npy 1 --feature-level 9_9
house_style popcount x.npy --in-place
expect_err "DirectML does not let BIT_COUNT's output alias its input"
[[ "$err" != *"Run 'dmlbits --help'"* ]] || fail "CLI11's own advice: $err"

# ---- operands that look like numbers ------------------------------------------------------------
for operand in 1.5 nan +5 1e2 0xg; do
  expect_status 2 and x.npy "$operand"
  expect_err "operand B: '$operand' is not a literal"; expect_one_line
done
expect_status 2 and x.npy 1.5
expect_err "[1.5]"
echo '[7]' > 1.5 && expect_status 0 and x.npy ./1.5 && expect_status 0 and x.npy 1.5  # a file by that name is read
expect_status 3 and x.npy 300
expect_err "operand B (literal '300')"

# ---- --time: the phases add up to the total -----------------------------------------------------
for args in "" "--repeat 5 --warmup 2" "--format json"; do
  # shellcheck disable=SC2086
  run not x.npy -o /dev/null --time-json t.json --time $args
  [ "$status" -eq 0 ] || fail "--time $args exited $status"
  "$P" - t.json <<'PY' || fail "--time $args: phases do not add up: $(cat t.json)"
import json, sys
d = json.load(open(sys.argv[1]))
total = d["total_s"]; parts = sum(d["phases"].values())
assert "backend_s" in d["phases"], d["phases"]
assert abs(parts - total) <= 0.05 * total + 2e-4, (parts, total)
PY
done
run not x.npy -o /dev/null --time --repeat 4
expect_err "sum of 4 runs"

# ---- the comparison report -----------------------------------------------------------------------
expect_status 1 not u64.npy --expect u64_g.npy --report-json rep.json --show 1
expect_out "18446744073709551615 (0xffffffffffffffff)"
expect_out "... 1 more"
"$P" -c "
import json; r = json.load(open('rep.json'))
assert len(r['mismatches']) == 2, r" || fail "--report-json does not hold every differing element: $(cat rep.json)"
# Columns stay aligned: every row's xor column starts where the header's does.
"$P" - "$out" <<'PY' || fail "mismatch table not aligned: $out"
import sys
lines = [l for l in sys.argv[1].splitlines() if l.startswith("  ")]
col = lines[0].index("differing bits")
for l in lines[1:]:
    if not l.startswith("  ..."): assert l[col:col + 2] == "0x", (col, l)
PY
expect_status 1 and f32_nan.npy 0xffffffff --expect f32.npy
expect_out "0x7fc00000 "
[[ "$out" != *'"0x7fc00000"'* ]] || fail "a NaN is printed twice: $out"
expect_status 1 not x.npy --expect g_bad.npy
expect_out "(1 bit)"; expect_out "(2 bits)"
expect_status 0 not x.npy --expect created.npy --update
expect_err "created created.npy"
expect_status 0 not x.npy --expect created.npy --update
expect_err "created.npy unchanged"

# ---- golden files carry their dtype; JSON with a byte-order mark is read -------------------------
echo '[255, 254, 253, 252]' > nodtype.json
expect_status 3 not x.npy --expect nodtype.json
expect_err "a golden file must name its data type"
[[ "$err" == *"--dtype applies to inputs"* ]] || fail "golden message: $err"
printf '\xef\xbb\xbf{"dtype": "uint8", "data": [1, 2]}' > bom.json
expect_status 0 not bom.json
expect_out '"data": [254, 253]'
expect_status 0 info bom.json

# ---- FLOAT16 from text is rounded once ----------------------------------------------------------
expect_status 0 and --dtype float16 '[1.0004882812500001, 1.00048828125, 1.0004882812499999]' 0xffff --hex
expect_out '["0x3c01", "0x3c00", "0x3c00"]'

# ---- sizes over the JSON limit are exact; "need" agrees with the count --------------------------
"$P" -c "open('big.json', 'w').write('[' + ' ' * (64 * 1024 * 1024 - 2) + '1]')"
expect_status 3 not big.json --dtype uint8
expect_err "(67108865 bytes)"
expect_status 3 shl --dtype uint8 '[[[[[1]]]]]' 1 -l 2_1
expect_err "5 dimensions need DML_FEATURE_LEVEL_3_0"

# ---- --in-place on big-endian or Fortran order says how it writes --------------------------------
expect_status 0 xor be.npy 1 --in-place -v
expect_err "big-endian; the result is written little-endian in C order"
"$P" -c "import numpy as np; a = np.load('be.npy'); assert a.dtype.str == '<u2' and a.tolist() == [0, 3], a" ||
  fail "be.npy after --in-place"
expect_status 0 xor fo.npy 1 --in-place -v
expect_err "in Fortran order; the result is written little-endian in C order"

# ---- every command's help ends with the manual, and --shift-overflow has a description ---------
for cmd in $(op_verbs) info ops check devices; do
  run "$cmd" --help
  [ "$(printf '%s\n' "$out" | tail -n 1)" = "See dmlbits(1) for details." ] ||
    fail "dmlbits $cmd --help does not end with the manual: $(printf '%s\n' "$out" | tail -n 2)"
done
run shl --help
grep -qE -- '--shift-overflow .*[A-Za-z]{4,} .*zero' <<<"$out" || fail "--shift-overflow has no description on its line: $out"

# ---- 14. scripts/bootstrap demo builds the binary only ------------------------------------------
# A fake cmake and dpkg-query record what bootstrap asks for; the build directory has a cache,
# so nothing is configured, and the demo runs the real binary.
mkdir -p fakebin fakebuild
cat > fakebin/cmake <<'SH'
#!/bin/sh
echo "cmake $*" >> "$FAKE_LOG"
SH
printf '#!/bin/sh\nprintf "install ok installed"\n' > fakebin/dpkg-query
chmod +x fakebin/cmake fakebin/dpkg-query
touch fakebuild/CMakeCache.txt
ln -s "$DMLBITS" fakebuild/dmlbits
export FAKE_LOG=$WORK/cmake.log
PATH="$WORK/fakebin:$PATH" DMLBITS_BUILD_DIR=$WORK/fakebuild "$DMLBITS_SOURCE_DIR/scripts/bootstrap" demo > demo.txt 2>/dev/null ||
  fail "(14) scripts/bootstrap demo failed"
grep -q -- "--build .* --target dmlbits" cmake.log || fail "(14) the demo does not build the binary alone: $(cat cmake.log)"
grep -q '"data"' demo.txt || fail "(14) the demo printed no result: $(cat demo.txt)"
: > cmake.log
PATH="$WORK/fakebin:$PATH" DMLBITS_BUILD_DIR=$WORK/fakebuild DMLBITS_CMAKE_ARGS=-DDMLBITS_WERROR=ON \
  "$DMLBITS_SOURCE_DIR/scripts/bootstrap" build 2>/dev/null || fail "(14) scripts/bootstrap build failed"
grep -q -- "-DDMLBITS_WERROR=ON" cmake.log || fail "(15) DMLBITS_CMAKE_ARGS did not reach an existing build: $(cat cmake.log)"
if grep -q -- "--target" cmake.log; then fail "(14) bootstrap build builds one target only: $(cat cmake.log)"; fi

# ---- 15. CI builds with -Werror, the sanitizer build too ------------------------------------------
checks=$((checks + 1))
[ "$(grep -c -- "-DDMLBITS_WERROR=ON" "$DMLBITS_SOURCE_DIR/.ci/run")" -ge 2 ] ||
  fail "(15) .ci/run does not build both its builds with -DDMLBITS_WERROR=ON"
finish
