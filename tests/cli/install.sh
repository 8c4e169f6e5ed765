#!/usr/bin/env bash
# `cmake --install` (issue #27): installs the binary, the man page, bash completion, the
# license files, the library with every public header, a CMake package and a pkg-config file;
# and a consumer project (tests/consumer) builds against that installed tree, through the
# umbrella header dmlbits/dmlbits.hpp alone, once with find_package(dmlbits CONFIG) and once
# with pkg-config, and runs: its output (the operator table, 12 AND 10 computed in memory, and a
# usage error's status, 2 in the manual) must agree with the installed binary's and Python's.
# The C++ guide's program (lib/docs/cpp.md) builds the same way with pkg-config and prints what
# the guide says it prints.
source "$(dirname "$0")/lib.sh" || exit 1

build=$(dirname "$DMLBITS")
prefix=$WORK/prefix
checks=$((checks + 1))
cmake --install "$build" --prefix "$prefix" > "$WORK/install.log" 2>&1 || { cat "$WORK/install.log" >&2; fail "cmake --install"; finish; }

# The files, where they belong.
libdir=$(cd "$prefix" && ls -d lib/*/libdmlbits.a lib/libdmlbits.a 2>/dev/null | head -1 | xargs -r dirname)
for f in bin/dmlbits share/man/man1/dmlbits.1.gz share/bash-completion/completions/dmlbits \
         share/doc/dmlbits/LICENSE share/doc/dmlbits/NOTICE share/doc/dmlbits/copyright \
         "$libdir/libdmlbits.a" "$libdir/cmake/dmlbits/dmlbits-config.cmake" "$libdir/pkgconfig/dmlbits.pc"; do
  checks=$((checks + 1))
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done
# Every public header, whatever they are called.
for h in "$DMLBITS_SOURCE_DIR"/lib/include/dmlbits/*.hpp; do
  checks=$((checks + 1))
  cmp -s "$h" "$prefix/include/dmlbits/$(basename "$h")" || fail "header not installed: $(basename "$h")"
done
# The installed binary runs; the installed manual and completion are this binary's.
checks=$((checks + 1))
[ "$("$prefix/bin/dmlbits" --version)" = "$("$DMLBITS" --version)" ] || fail "the installed dmlbits --version differs"
checks=$((checks + 1))
zcat "$prefix/share/man/man1/dmlbits.1.gz" | cmp -s - "$DMLBITS_SOURCE_DIR/man/dmlbits.1" || fail "the installed man page is not man/dmlbits.1"
checks=$((checks + 1))
"$prefix/bin/dmlbits" completion bash | cmp -s - "$prefix/share/bash-completion/completions/dmlbits" ||
  fail "the installed completion is not 'dmlbits completion bash'"
checks=$((checks + 1))
grep -q "^Permission is hereby granted" "$prefix/share/doc/dmlbits/copyright" &&
  grep -q "BSD-3-clause" "$prefix/share/doc/dmlbits/copyright" || fail "the copyright file lacks the MIT text or CLI11's license"

# What the consumer must print: the installed binary's operator table, 12 & 10, and status 2.
"$prefix/bin/dmlbits" ops --json > "$WORK/ops.json"
want=$(/usr/bin/python3 -c '
import json, sys
for op in json.load(open(sys.argv[1]))["ops"]: print(op["verb"], op["arity"])
print("and 12 10:", 12 & 10)
print("usage error: exit status 2")' "$WORK/ops.json")

flags=""
[ "$DMLBITS_SANITIZED" = 1 ] && flags="-fsanitize=address,undefined"

# With CMake.
checks=$((checks + 1))
if cmake -S "$DMLBITS_SOURCE_DIR/tests/consumer" -B "$WORK/consumer-cmake" -DCMAKE_PREFIX_PATH="$prefix" \
     -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" > "$WORK/cmake.log" 2>&1 &&
   cmake --build "$WORK/consumer-cmake" >> "$WORK/cmake.log" 2>&1; then
  got=$("$WORK/consumer-cmake/consumer")
  [ "$got" = "$want" ] || fail "the CMake consumer printed '$got', expected '$want'"
else
  cat "$WORK/cmake.log" >&2
  fail "the consumer did not build with find_package(dmlbits CONFIG)"
fi

# With pkg-config.
checks=$((checks + 1))
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
if pc_flags=$(pkg-config --cflags --libs dmlbits) &&
   c++ -std=c++20 $flags -o "$WORK/consumer-pc" "$DMLBITS_SOURCE_DIR/tests/consumer/main.cpp" $pc_flags > "$WORK/pc.log" 2>&1; then
  got=$("$WORK/consumer-pc")
  [ "$got" = "$want" ] || fail "the pkg-config consumer printed '$got', expected '$want'"
else
  cat "$WORK/pc.log" >&2
  fail "the consumer did not build with pkg-config (flags: ${pc_flags:-none})"
fi

# The C++ guide's program (lib/docs/cpp.md: its first ```cpp block), built with pkg-config as the
# guide says and run: it must print what the guide's ```text block after it says, which must be
# what NumPy computes from the same arrays (and a refusal's words, written here by hand), and
# the .npy it writes must load in NumPy as the `and` line's array.
guide="$DMLBITS_SOURCE_DIR/lib/docs/cpp.md"
awk 'state == 0 && /^```cpp$/ {state = 1; next} state == 1 && /^```$/ {exit} state == 1' "$guide" > "$WORK/guide.cpp"
awk 'state == 0 && /^```cpp$/ {state = 1; next} state == 1 && /^```$/ {state = 2; next}
     state == 2 && /^```text$/ {state = 3; next} state == 3 && /^```$/ {exit} state == 3' "$guide" > "$WORK/guide-said.txt"
/usr/bin/python3 - "$WORK/guide-want.txt" <<'PY'
import sys
import numpy as np
a = np.array([[0x00ff, 0x1234, 0xffff], [0x8001, 0x0000, 0x0f0f]], np.uint16)
mask = np.array([0x00f0, 0xff00, 0x0ff0], np.uint16)
hexs = lambda x: " ".join("0x%04x" % v for v in x.ravel())
with open(sys.argv[1], "w") as f:
    f.write("xor: uint16 (2, 3) %s\n" % hexs(a ^ np.uint16(0x0f0f)))
    f.write("popcount: uint32 (2, 3) %s\n" % " ".join(str(bin(int(v)).count("1")) for v in a.ravel()))
    f.write("and: uint16 (2, 3) %s\n" % hexs(a & mask))
    f.write("refused, invalid-input (exit status 3): "
            "xor: data type INT32 needs DML_FEATURE_LEVEL_4_1 or later (requested 3_0)\n")
PY
checks=$((checks + 1))
grep -q '^#include "dmlbits/dmlbits.hpp"$' "$WORK/guide.cpp" &&
  ! grep -E '^#include [<"]dmlbits/' "$WORK/guide.cpp" | grep -qv 'dmlbits/dmlbits.hpp' ||
  fail "lib/docs/cpp.md: its first cpp block is not a program that includes dmlbits/dmlbits.hpp alone"
checks=$((checks + 1))
cmp -s "$WORK/guide-said.txt" "$WORK/guide-want.txt" ||
  fail "lib/docs/cpp.md says its program prints:
$(cat "$WORK/guide-said.txt")
but NumPy computes:
$(cat "$WORK/guide-want.txt")"
checks=$((checks + 1))
if c++ -std=c++20 $flags -o "$WORK/guide-example" "$WORK/guide.cpp" $pc_flags > "$WORK/guide.log" 2>&1; then
  got=$("$WORK/guide-example" "$WORK/masked.npy" 2> "$WORK/guide-stderr.txt") && status=0 || status=$?
  [ "$status" = 0 ] && [ ! -s "$WORK/guide-stderr.txt" ] ||
    fail "lib/docs/cpp.md's program exited $status; stderr: $(cat "$WORK/guide-stderr.txt")"
  [ "$got" = "$(cat "$WORK/guide-want.txt")" ] ||
    fail "lib/docs/cpp.md's program printed:
$got
expected:
$(cat "$WORK/guide-want.txt")"
  checks=$((checks + 1))
  /usr/bin/python3 -c '
import sys
import numpy as np
x = np.load(sys.argv[1])
a = np.array([[0x00ff, 0x1234, 0xffff], [0x8001, 0x0000, 0x0f0f]], np.uint16)
mask = np.array([0x00f0, 0xff00, 0x0ff0], np.uint16)
sys.exit(0 if x.dtype == np.uint16 and x.shape == (2, 3) and (x == (a & mask)).all() else 1)' "$WORK/masked.npy" ||
    fail "lib/docs/cpp.md's program did not write a & mask to masked.npy as NumPy computes it"
else
  cat "$WORK/guide.log" >&2
  fail "lib/docs/cpp.md's program did not build with pkg-config (flags: ${pc_flags:-none})"
fi

checks=$((checks + 1))
[ "$(pkg-config --modversion dmlbits)" = "$("$DMLBITS" --version | head -1 | cut -d' ' -f2)" ] || fail "dmlbits.pc's version is not --version's"
finish
