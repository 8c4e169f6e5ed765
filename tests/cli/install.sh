#!/usr/bin/env bash
# `cmake --install` (issue #27): installs the binary, the man page, bash completion, the
# license files, the library with every public header, a CMake package and a pkg-config file;
# and a consumer project (tests/consumer) builds against that installed tree, through the
# umbrella header dmlbits/dmlbits.hpp alone, once with find_package(dmlbits CONFIG) and once
# with pkg-config, and runs: its output (the operator table, 12 AND 10 computed in memory, and a
# usage error's status, 2 in the manual) must agree with the installed binary's and Python's.
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
checks=$((checks + 1))
[ "$(pkg-config --modversion dmlbits)" = "$("$DMLBITS" --version | head -1 | cut -d' ' -f2)" ] || fail "dmlbits.pc's version is not --version's"
finish
