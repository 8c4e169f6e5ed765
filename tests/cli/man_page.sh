#!/usr/bin/env bash
# The man page stays true to the program. Each failure names its item:
#   (a) mandoc -Tlint -W warning reports nothing
#   (b) every long option in `dmlbits --help` and `dmlbits SUB --help` is documented in OPTIONS
#   (c) every subcommand (and each of its aliases) is documented in COMMANDS
#   (d) the ops table rows between the markers are exactly `dmlbits ops --roff`
#   (e) EXIT STATUS lists every status of the `Exit status:` help footer with its number
#   (f) FEATURE LEVELS names every level --feature-level accepts
#   (g) the .TH line carries the version `dmlbits --version` prints
#   (h) every project file an example names (testdata/..., tests/...) exists
# The help texts are the reference, so an option, command or status added to the program
# without a word in the manual fails here.
source "$(dirname "$0")/lib.sh" || exit 1

MAN="$DMLBITS_SOURCE_DIR/man/dmlbits.1"
[ -f "$MAN" ] || { echo "FAIL: $MAN is missing" >&2; exit 1; }

# The page's text with roff escapes that hide plain words removed: \- becomes -, font
# changes (\fB, \fI, \fR, \fP, \f(CW, \f[B]), \% and \& disappear.
plain() {
  sed -E 's/\\-/-/g; s/\\f(\[[^]]*\]|\(..|.)//g; s/\\%//g; s/\\&//g' "$MAN"
}
# Lines of section NAME (between `.SH NAME` and the next .SH), plain.
section() {
  plain | awk -v name="$1" '
    /^\.SH / { t = $0; sub(/^\.SH +/, "", t); gsub(/"/, "", t); inside = (t == name); next }
    inside'
}
# The tag lines (the line after each .TP) of section NAME: what the section documents.
tags() {
  section "$1" | awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }'
}
# word_in TEXT WORD: WORD occurs in TEXT, not as part of a longer name.
word_in() {
  grep -qE -- "(^|[^A-Za-z0-9_-])$2([^A-Za-z0-9_-]|\$)" <<<"$1"
}

# ---- (a) lint -------------------------------------------------------------------------------
have_mandoc=1
if command -v mandoc >/dev/null; then
  checks=$((checks + 1))
  lint=$(mandoc -Tlint -W warning "$MAN" 2>&1) && lint_status=0 || lint_status=$?
  [ -z "$lint" ] && [ "$lint_status" -eq 0 ] ||
    fail "(a) mandoc -Tlint -W warning reports problems (status $lint_status):"$'\n'"$lint"
else
  have_mandoc=0
fi
checks=$((checks + 1))
[ "$(head -n 1 "$MAN")" = "'\\\" t" ] ||
  fail "(a) the first line must be '\\\" t so that man(1) runs tbl for the ops table"

# ---- the program's own description of itself -------------------------------------------------
run --help
[ "$status" -eq 0 ] || fail "dmlbits --help exited $status: $err"
top_help=$out

# Subcommands: the "Subcommands:" block lists each as "  name, alias, ...   description"; a
# line starting with more than two spaces continues a description.
sub_lines=$(awk '/^Subcommands:/ { inside = 1; next } inside && /^[^ ]/ { inside = 0 }
                 inside && /^  [^ ]/ { sub(/^  /, ""); sub(/  .*/, ""); print }' <<<"$top_help")
subcommands=()
while IFS= read -r line; do
  [ -n "$line" ] && subcommands+=("${line%%,*}")
done <<<"$sub_lines"
checks=$((checks + 1))
[ "${#subcommands[@]}" -ge 3 ] ||
  fail "found ${#subcommands[@]} subcommands in 'dmlbits --help' (the parser no longer fits its format?): $top_help"

# ---- (b) every long option is documented in OPTIONS -------------------------------------------
option_tags=$(tags OPTIONS)
declare -A option_sources=()
for opt in $(grep -oE -- '--[A-Za-z0-9][A-Za-z0-9-]*' <<<"$top_help" | sort -u); do
  option_sources[$opt]="dmlbits --help"
done
for sub in "${subcommands[@]}"; do
  run "$sub" --help
  [ "$status" -eq 0 ] || { fail "(b) dmlbits $sub --help exited $status: $err"; continue; }
  found=0
  for opt in $(grep -oE -- '--[A-Za-z0-9][A-Za-z0-9-]*' <<<"$out" | sort -u); do
    found=1
    option_sources[$opt]="${option_sources[$opt]:+${option_sources[$opt]}, }dmlbits $sub --help"
  done
  [ "$found" -eq 1 ] || fail "(b) no long options found in 'dmlbits $sub --help'"
done
for opt in "${!option_sources[@]}"; do
  checks=$((checks + 1))
  word_in "$option_tags" "$opt" ||
    fail "(b) option $opt (in ${option_sources[$opt]}) has no entry (.TP tag) in OPTIONS"
done

# ---- (c) every subcommand and alias is documented in COMMANDS ---------------------------------
command_tags=$(tags COMMANDS)
command_text=$(section COMMANDS)
while IFS= read -r line; do
  [ -n "$line" ] || continue
  IFS=', ' read -r -a names <<<"$line"
  checks=$((checks + 1))
  word_in "$command_tags" "${names[0]}" || fail "(c) subcommand '${names[0]}' has no entry (.TP tag) in COMMANDS"
  for alias in "${names[@]:1}"; do
    checks=$((checks + 1))
    word_in "$command_text" "$alias" || fail "(c) alias '$alias' of '${names[0]}' is not named in COMMANDS"
  done
done <<<"$sub_lines"

# ---- (d) the ops table is the program's ---------------------------------------------------------
begin='.\" BEGIN OPS TABLE'
end='.\" END OPS TABLE'
checks=$((checks + 1))
if [ "$(grep -cxF -- "$begin" "$MAN")" -ne 1 ] || [ "$(grep -cxF -- "$end" "$MAN")" -ne 1 ]; then
  fail "(d) the page must hold exactly one '$begin' line and one '$end' line"
else
  # ENVIRON, not -v: awk would interpret the markers' backslash.
  export BEGIN_MARK=$begin END_MARK=$end
  awk '$0 == ENVIRON["END_MARK"] { inside = 0 } inside { print }
       $0 == ENVIRON["BEGIN_MARK"] { inside = 1 }' "$MAN" >"$WORK/man_rows"
  # The markers must sit inside one tbl table, or the rows would print as text.
  awk '/^\.TS/ { ts = 1 } /^\.TE/ { ts = 0 } $0 == ENVIRON["BEGIN_MARK"] { exit !ts }' "$MAN" ||
    fail "(d) '$begin' is not inside a .TS/.TE table"
  run ops --roff
  if [ "$status" -ne 0 ]; then
    fail "(d) dmlbits ops --roff exited $status: $err"
  else
    # Through a file, not $(...), which would drop trailing newlines.
    "$DMLBITS" ops --roff >"$WORK/program_rows"
    [ -s "$WORK/program_rows" ] || fail "(d) dmlbits ops --roff printed nothing"
    cmp -s "$WORK/man_rows" "$WORK/program_rows" ||
      fail "(d) the ops table differs from 'dmlbits ops --roff' (< page, > program; run scripts/update-man-ops-table):"$'\n'"$(diff "$WORK/man_rows" "$WORK/program_rows")"
  fi
fi

# ---- (e) every exit status, with its number ----------------------------------------------------
footer=$(grep -m1 '^Exit status:' <<<"$top_help" || true)
statuses=$(sed -E 's/^Exit status: *//; s/\.$//' <<<"$footer" | tr ',' '\n' | sed -E 's/^ +//; s/ +$//')
status_tags=$(tags "EXIT STATUS" | sed -E 's/^\.[A-Z]+ +//; s/"//g')
count=0
while read -r number name; do
  [ -n "${number:-}" ] || continue
  count=$((count + 1))
  checks=$((checks + 1))
  grep -qE -- "^$number[^0-9A-Za-z]+\(?$name\)?([^A-Za-z0-9-]|\$)" <<<"$status_tags" ||
    fail "(e) EXIT STATUS has no entry '$number ($name)'"
done <<<"$statuses"
checks=$((checks + 1))
[ "$count" -ge 2 ] || fail "(e) no statuses parsed from the help footer: '$footer'"

# ---- (f) every feature level ----------------------------------------------------------------
run "${subcommands[-1]}" --help
levels=$(grep -oE 'DirectML feature level: [0-9_, ]+' <<<"$out" | sed 's/.*: //' | tr ',' ' ')
level_text=$(section "FEATURE LEVELS")
checks=$((checks + 1))
[ -n "$levels" ] || fail "(f) no feature levels found in 'dmlbits ${subcommands[-1]} --help'"
for level in $levels; do
  checks=$((checks + 1))
  word_in "$level_text" "$level" || fail "(f) FEATURE LEVELS does not name level $level"
done

# ---- (g) the version -----------------------------------------------------------------------
run --version
version=${out%%$'\n'*}
version=${version#dmlbits }
checks=$((checks + 1))
grep -qE "^\.TH .*\"dmlbits ${version//./\\.}\"" "$MAN" ||
  fail "(g) the .TH line does not say \"dmlbits $version\" (from dmlbits --version): $(grep '^\.TH' "$MAN")"

# ---- (h) the examples' project files ---------------------------------------------------------
for path in $(section EXAMPLES | grep -oE '(^|[ ])(testdata|tests)/[A-Za-z0-9_./-]+' | sort -u); do
  checks=$((checks + 1))
  [ -e "$DMLBITS_SOURCE_DIR/$path" ] || fail "(h) EXAMPLES names $path, which is not in the project"
done

if [ "$have_mandoc" -eq 0 ]; then
  # The other checks ran; only the lint could not. Report failures first, else skip.
  [ "$failures" -eq 0 ] || finish
  echo "mandoc is not installed: the lint (a) was not run; skipping"
  exit 77
fi
finish
