#!/usr/bin/env bash
# The license and the notices (issue #27): LICENSE is the MIT license, and every vendored
# folder is named in NOTICE. A folder is vendored when it holds a license file of its own
# (LICENSE, COPYING or NOTICE, with or without an extension, any case), as third-party material must: so a new vendored
# folder without a "Folder:" line in NOTICE fails here, and so does a "Folder:" line whose
# folder exists without a license file. The rule is checked first on made-up trees, so that this test
# is known to fail when it should.
source "$(dirname "$0")/lib.sh" || exit 1

# vendored_folders ROOT: the folders below ROOT (not ROOT itself) that hold a license file, one
# per line, relative to ROOT with a trailing slash. In a git checkout, only the files git
# tracks (build folders and wine prefixes hold licenses of their own); elsewhere every file
# outside build*/ folders.
vendored_folders() {
  local root=$1
  if git -C "$root" rev-parse --show-toplevel 2>/dev/null | grep -qxF "$(cd "$root" && pwd -P)"; then
    git -C "$root" ls-files
  else
    (cd "$root" && find . -path './build*' -prune -o -type f -print | sed 's|^\./||')
  fi | grep -iE '(^|/)(LICEN[CS]E|COPYING|NOTICE)(\.[^/]*)?$' | grep / | sed 's|/[^/]*$|/|' | sort -u
}

# check_tree ROOT: prints one line per problem.
check_tree() {
  local root=$1 folder
  [ -f "$root/NOTICE" ] || { echo "no NOTICE at the top"; return; }
  local named
  named=$(sed -n 's|^Folder: *\(.*[^/]\)/*$|\1/|p' "$root/NOTICE" | sort -u)
  while IFS= read -r folder; do
    [ -n "$folder" ] || continue
    grep -qxF "$folder" <<< "$named" || echo "vendored folder $folder (it has a license file) is not named in NOTICE"
  done <<< "$(vendored_folders "$root")"
  while IFS= read -r folder; do
    [ -n "$folder" ] || continue
    # A folder NOTICE names before it lands (the ONNX data arrives with issue #27's sibling
    # work) is said, not failed; once there, it must carry its license.
    if [ ! -d "$root/$folder" ]; then
      echo "note: NOTICE names $folder, which is not in this tree" >&2
    elif ! ls "$root/$folder" | grep -qiE '^(LICEN[CS]E|COPYING|NOTICE)(\.|$)'; then
      echo "NOTICE names $folder, which holds no license file"
    fi
  done <<< "$named"
}

# The rule on made-up trees (not git checkouts): one that follows it, then each way of breaking it.
t=$WORK/tree
mkdir -p "$t/testdata/third" "$t/testdata/own"
printf 'Folder: testdata/third/\n' > "$t/NOTICE"
echo "Apache License" > "$t/testdata/third/LICENSE.txt"
echo data > "$t/testdata/own/a.npy"
mkdir -p "$t/build/_deps/x" && echo "MIT" > "$t/build/_deps/x/COPYING"  # a build folder: ignored
checks=$((checks + 1))
[ -z "$(check_tree "$t")" ] || fail "a tree that follows the rule was refused: $(check_tree "$t")"
mkdir -p "$t/testdata/new-vendor" && echo "BSD" > "$t/testdata/new-vendor/copying"
checks=$((checks + 1))
[[ "$(check_tree "$t")" == *"testdata/new-vendor/ (it has a license file) is not named"* ]] ||
  fail "a vendored folder missing from NOTICE was not found: '$(check_tree "$t")'"
printf 'Folder: testdata/new-vendor\nFolder: testdata/own/\n' >> "$t/NOTICE"
checks=$((checks + 1))
[ "$(check_tree "$t")" = "NOTICE names testdata/own/, which holds no license file" ] ||
  fail "a NOTICE entry for a folder without a license file was not found: '$(check_tree "$t")'"

# The repository.
checks=$((checks + 1))
problems=$(check_tree "$DMLBITS_SOURCE_DIR")
[ -z "$problems" ] || fail "$problems"
checks=$((checks + 1))
[ "$(head -1 "$DMLBITS_SOURCE_DIR/LICENSE")" = "MIT License" ] &&
  grep -q "^Permission is hereby granted, free of charge" "$DMLBITS_SOURCE_DIR/LICENSE" ||
  fail "LICENSE is not the MIT license"
echo "vendored folders: $(vendored_folders "$DMLBITS_SOURCE_DIR" | tr '\n' ' ')"
finish
