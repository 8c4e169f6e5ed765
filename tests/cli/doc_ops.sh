#!/usr/bin/env bash
# The documents' operator parts are what the operator table makes (issue #45 item 1): the man
# page's SYNOPSIS verbs and COMMANDS entries and the Python guide's operator table, between
# their markers, are scripts/update-doc-ops' output for this binary's `ops --json`. An operator
# added to the table fails here until the script is run; a hand edit between the markers too.
source "$(dirname "$0")/lib.sh"
P="${PYTHON:-python3}"
checks=$((checks + 1))
"$P" "$DMLBITS_SOURCE_DIR/scripts/update-doc-ops" "$DMLBITS" --check 2> "$WORK/err" ||
  fail "the documents' operator parts are stale: $(cat "$WORK/err")"

# The check can fail: a copy of the tree with one COMMANDS line removed, and one with the
# Python table's markers gone, are refused.
mkdir -p "$WORK/tree/scripts" "$WORK/tree/man" "$WORK/tree/lib/docs"
cp "$DMLBITS_SOURCE_DIR/scripts/update-doc-ops" "$WORK/tree/scripts/"
cp "$DMLBITS_SOURCE_DIR/lib/docs/python.md" "$WORK/tree/lib/docs/"
grep -v '^\\fBBIT_AND\\fR,$' "$DMLBITS_SOURCE_DIR/man/dmlbits.1" > "$WORK/tree/man/dmlbits.1"
checks=$((checks + 1))
"$P" "$WORK/tree/scripts/update-doc-ops" "$DMLBITS" --check 2> "$WORK/err" && fail "a removed alias line passed"
grep -q "man/dmlbits.1 (.\\\\\" BEGIN OPS COMMANDS)" "$WORK/err" || fail "the refusal does not name the part: $(cat "$WORK/err")"
checks=$((checks + 1))
"$P" "$WORK/tree/scripts/update-doc-ops" "$DMLBITS" > /dev/null && "$P" "$WORK/tree/scripts/update-doc-ops" "$DMLBITS" --check ||
  fail "the script does not restore what it checks"
checks=$((checks + 1))
cmp -s "$WORK/tree/man/dmlbits.1" "$DMLBITS_SOURCE_DIR/man/dmlbits.1" || fail "the restored page differs from the tree's"
grep -v 'BEGIN OPS TABLE' "$DMLBITS_SOURCE_DIR/lib/docs/python.md" > "$WORK/tree/lib/docs/python.md"
checks=$((checks + 1))
"$P" "$WORK/tree/scripts/update-doc-ops" "$DMLBITS" --check 2> "$WORK/err" && fail "a missing marker passed"
grep -q "must hold one '<!-- BEGIN OPS TABLE -->' line" "$WORK/err" || fail "missing marker: $(cat "$WORK/err")"
finish
