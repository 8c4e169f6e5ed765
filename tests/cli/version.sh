#!/usr/bin/env bash
# dmlbits --version (issue #27): the version is CMakeLists.txt's project() VERSION, the commit
# is the source tree's (git), the compiler is named, and the backends listed are exactly those
# `dmlbits devices --json` reports as built, the cpu backend with its instruction sets.
source "$(dirname "$0")/lib.sh" || exit 1

expect_status 0 --version
mapfile -t lines <<< "$out"
project_version=$(sed -nE 's/^project\(dmlbits VERSION ([0-9.]+).*/\1/p' "$DMLBITS_SOURCE_DIR/CMakeLists.txt")
checks=$((checks + 1))
[ -n "$project_version" ] && [ "${lines[0]}" = "dmlbits $project_version" ] ||
  fail "first line '${lines[0]}', expected 'dmlbits $project_version' (project() in CMakeLists.txt)"

checks=$((checks + 1))
if git -C "$DMLBITS_SOURCE_DIR" rev-parse HEAD > /dev/null 2>&1; then
  commit=$(git -C "$DMLBITS_SOURCE_DIR" rev-parse --short=12 HEAD)
  [ -z "$(git -C "$DMLBITS_SOURCE_DIR" status --porcelain --untracked-files=no)" ] || commit+="-modified"
  [ "${lines[1]}" = "commit $commit" ] || fail "second line '${lines[1]}', expected 'commit $commit'"
else
  [ "${lines[1]}" = "commit unknown" ] || fail "outside git: second line '${lines[1]}', expected 'commit unknown'"
fi

checks=$((checks + 1))
[[ "${lines[2]}" =~ ^compiler\ (GCC|clang)\ [0-9]+\.[0-9]+ ]] || fail "third line '${lines[2]}' names no compiler and version"

expect_status 0 devices --json
want=$(/usr/bin/python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
out = []
for b in d["backends"]:  # the backends this machine can run, built ones only
    out.append(b["name"])
if d["d3d12"]["built"] and "d3d12" not in out: out.append("d3d12")
if d["directml"]["built"] and "directml" not in out: out.append("directml")
print(" ".join(sorted(out)))' <<< "$out")
got=$(sed -E 's/^backends //; s/ \([^)]*\)//g; s/, /\n/g' <<< "${lines[3]}" | sort | tr '\n' ' ' | sed 's/ $//')
checks=$((checks + 1))
[ "$got" = "$want" ] || fail "backends line '${lines[3]}' lists '$got', devices --json says built: '$want'"
checks=$((checks + 1))
[[ "${lines[3]}" == *"cpu (scalar, avx2, avx512)"* ]] || fail "backends line '${lines[3]}' lacks the cpu backend's instruction sets"
checks=$((checks + 1))
[ "${#lines[@]}" -eq 4 ] || fail "--version printed ${#lines[@]} lines, expected 4: $out"

# The same after a command.
expect_status 0 ops --version
checks=$((checks + 1))
[ "$out" = "$(printf '%s\n' "${lines[@]}")" ] || fail "ops --version differs from --version: $out"
finish
