#!/usr/bin/env bash
# How the executable is linked decides much of a small run's cost, which is mostly process start
# (testdata/benchmarks.md, "Process start"; issue #29): what it loads and whether it is
# relocated. Checked on the built binary with readelf (binutils).
source "$(dirname "$0")/lib.sh" || exit 1
command -v readelf > /dev/null || { echo "SKIP: readelf (binutils) not installed"; exit 77; }

header=$(readelf -h "$DMLBITS")
dynamic=$(readelf -d "$DMLBITS")

# DMLBITS_PIE=ON (the default): a PIE whose relative relocations are packed (DT_RELR), so the
# loader walks a short bitmap instead of ~4,600 entries. DMLBITS_PIE=OFF: linked at a fixed
# address, nothing relocated at start (a PIE's relocations dirty ~11 pages, each copy ~70 us here).
checks=$((checks + 1))
if [ "${DMLBITS_FIXED_ADDRESS:-0}" = 1 ]; then
  [[ "$header" =~ Type:[[:space:]]+EXEC ]] || fail "linked as a PIE, not at a fixed address: $(grep Type: <<< "$header")"
  [[ "$dynamic" != *RELACOUNT* ]] || fail "relative relocations at start: $(grep RELACOUNT <<< "$dynamic")"
elif [ "${DMLBITS_PACKED_RELOCS:-0}" = 1 ]; then
  [[ "$header" =~ Type:[[:space:]]+DYN ]] || fail "not a PIE: $(grep Type: <<< "$header")"
  [[ "$dynamic" == *"(RELR)"* ]] || fail "a PIE without packed relative relocations (no DT_RELR)"
  relacount=$(sed -nE 's/.*\(RELACOUNT\)[[:space:]]+([0-9]+).*/\1/p' <<< "$dynamic")
  [ "${relacount:-0}" -lt 100 ] || fail "$relacount unpacked relative relocations at start"
else
  echo "note: a sanitizer or fuzzing build, or a linker without -z pack-relative-relocs: linking not checked"
fi

# DMLBITS_STATIC_CXX_RUNTIME=ON: only libc and libm (and the loader) are loaded at start.
checks=$((checks + 1))
needed=$(sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' <<< "$dynamic" | sort | tr '\n' ' ')
if [ "${DMLBITS_STATIC_CXX_LINKED:-0}" = 1 ]; then
  for lib in $needed; do
    case "$lib" in
      libc.so.* | libm.so.* | ld-linux*.so.*) ;;
      *) fail "loads $lib at start (only libc and libm expected): $needed" ;;
    esac
  done
else
  echo "note: C++ runtime linked as shared libraries: $needed"
fi

# CLI11's validators are objects of each file that includes its header, built before main() at
# every start: the app is one unity source, so one copy of them (eight before, one per app file).
# Read from the symbol table, where each copy is a local symbol; a stripped binary has none.
if command -v nm > /dev/null && copies=$(nm -C "$DMLBITS" 2> /dev/null | grep -cE ' CLI::ExistingFile$'); then
  checks=$((checks + 1))
  [ "$copies" -le 1 ] || fail "CLI11's validators are built $copies times at start (one copy expected)"
fi

# And it still runs: a 1 KiB `and` whose output replaces a file, as the benchmarks time it.
python_make='import numpy as np, sys; np.save(sys.argv[1], np.arange(256, dtype=np.uint32)); np.save(sys.argv[2], np.full(256, 0xF0F0F0F0, dtype=np.uint32))'
if "${PYTHON:-python3}" -c "$python_make" "$WORK/a.npy" "$WORK/b.npy" 2> /dev/null; then
  cp "$WORK/a.npy" "$WORK/out.npy"
  expect_status 0 and "$WORK/a.npy" "$WORK/b.npy" -o "$WORK/out.npy" --threads 1
  checks=$((checks + 1))
  "${PYTHON:-python3}" -c 'import numpy as np, sys; a = np.load(sys.argv[1]); b = np.load(sys.argv[2]); sys.exit(0 if np.array_equal(np.load(sys.argv[3]), a & b) else 1)' \
    "$WORK/a.npy" "$WORK/b.npy" "$WORK/out.npy" || fail "1 KiB and: output differs from NumPy's a & b"
fi

# auto with a large output (16 MiB and more may go to a GPU) on a machine with no GPU device
# node: the node is looked for before the D3D12 runtime is loaded, so vkd3d is not (loading it
# cost 1.6-18 ms a run, #29). Seen in /proc while the run is held up writing into a FIFO.
if ! ls /dev/dri/renderD* /dev/nvidia0 /dev/dxg /dev/kgsl-3d0 /dev/mali0 > /dev/null 2>&1 &&
   "${PYTHON:-python3}" -c 'import numpy as np, sys; np.save(sys.argv[1], np.zeros(4 << 20, dtype=np.uint32))' "$WORK/big.npy" 2> /dev/null; then
  mkfifo "$WORK/fifo.npy"
  "$DMLBITS" not "$WORK/big.npy" -o "$WORK/fifo.npy" -v 2> "$WORK/big.err" &
  pid=$!
  exec 3< "$WORK/fifo.npy"
  head -c 4096 <&3 > /dev/null  # it is writing: the backend was chosen
  maps=$(cat "/proc/$pid/maps")
  cat <&3 > /dev/null
  exec 3<&-
  checks=$((checks + 1))
  wait "$pid" || fail "16 MiB not into a FIFO failed: $(cat "$WORK/big.err")"
  [[ "$maps" != *vkd3d* ]] || fail "vkd3d loaded for a 16 MiB run on a machine with no GPU device node: $(grep -m1 vkd3d <<< "$maps")"
  grep -q "auto chose cpu: no hardware adapter" "$WORK/big.err" || grep -q "auto chose cpu: the d3d12 backend is" "$WORK/big.err" ||
    fail "16 MiB auto run's reason: $(cat "$WORK/big.err")"
fi

finish
