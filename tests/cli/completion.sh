#!/usr/bin/env bash
# Bash completion (issue #27): `dmlbits completion bash` is a script that bash accepts, that
# registers itself with `complete`, and whose answers, asked through the function `complete`
# names (as bash does on TAB), are those of the manual and DirectML's documentation: commands
# and aliases, options per command, data types per operator, feature levels, backends,
# instruction sets, shift modes, file names where a file is expected, --opt=value, and nothing
# where a number is expected. Every long option a command's --help lists is offered.
source "$(dirname "$0")/lib.sh" || exit 1

expect_status 0 completion bash
printf '%s\n' "$out" > "$WORK/dmlbits.bash"
checks=$((checks + 1))
bash -n "$WORK/dmlbits.bash" || fail "the script is not valid bash"
expect_status 2 completion zsh
expect_err "zsh"

mkdir -p "$WORK/files/sub dir"
touch "$WORK/files/a1.npy" "$WORK/files/a2.npy" "$WORK/files/b.json"

# The script, loaded into this shell as bash loads it; the function is the one `complete`
# registered for dmlbits.
source "$WORK/dmlbits.bash"
spec=$(complete -p dmlbits 2>&1)
completion_function=$(sed -n 's/.* -F \([^ ]*\) dmlbits$/\1/p' <<< "$spec")
checks=$((checks + 1))
[ -n "$completion_function" ] || { fail "the script registers no completion function for dmlbits: '$spec'"; finish; }

# complete_words WORD...: the completions bash offers for the command line WORD... (the last
# word is the one being completed), one per line, sorted; run from $WORK/files.
complete_words() {
  (cd "$WORK/files" || exit
   COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
   "$completion_function" dmlbits "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
   printf "%s\n" "${COMPREPLY[@]}" | sort)
}
# expect_completion WANT WORD...: the completions are exactly WANT (space-separated, any order).
expect_completion() {
  local want=$1; shift
  checks=$((checks + 1))
  local got
  got=$(complete_words "$@")
  got=${got//$'\n'/ }
  want=$(printf '%s\n' $want | sort)
  want=${want//$'\n'/ }
  [ "$got" = "$want" ] || fail "completing '$*': got '$got', expected '$want'"
}
# expect_offers WORD... :: ITEM...: every ITEM is among the completions.
expect_offers() {
  local words=()
  while [ "$1" != :: ]; do words+=("$1"); shift; done; shift
  local got
  got=$'\n'$(complete_words "${words[@]}")$'\n'
  for item in "$@"; do
    checks=$((checks + 1))
    [[ "$got" == *$'\n'"$item"$'\n'* ]] || fail "completing '${words[*]}' does not offer '$item'"
  done
}

# Commands: the operators of the program's table (DirectML's DML_ELEMENT_WISE_BIT_*; man page,
# COMMANDS), the other commands, and the aliases.
verbs=$(op_verbs)
[ -n "$verbs" ] || fail "dmlbits ops --json lists no operator"
# shellcheck disable=SC2086
expect_offers dmlbits "" :: $verbs info ops check devices completion help
expect_completion "xor" dmlbits x
expect_completion "popcount" dmlbits po
# The aliases in DirectML's capitals, from the program's table (as the verbs above).
bit_aliases=$("$DMLBITS" ops --json | "${PYTHON:-python3}" -c 'import json, sys
print(" ".join(sorted(a for o in json.load(sys.stdin)["ops"] for a in o["aliases"] if a.startswith("BIT_"))))')
[ "$(wc -w <<< "$bit_aliases")" -eq "$(wc -w <<< "$verbs")" ] || fail "not one BIT_ alias per operator: $bit_aliases"
expect_completion "$bit_aliases" dmlbits BIT_
expect_completion "bit-shift-left bit-shift-right" dmlbits bit-sh
expect_completion "--help --version" dmlbits --
expect_completion "popcount" dmlbits help pop
# Options per command: shifts have --shift-overflow, popcount --out-dtype, `and` neither.
expect_completion "--shift-overflow" dmlbits shl --shi
expect_completion "" dmlbits and --shi
expect_completion "--out-dtype --output" dmlbits popcount --out
expect_completion "--output" dmlbits and --out
expect_completion "--feature-level" dmlbits BIT_XOR --fea   # an alias, in DirectML's capitals
expect_completion "--feature-level" dmlbits Bit_Xor --fea
expect_completion "--jobs --junit" dmlbits check --j
# Values.
expect_completion "uint8 uint32" dmlbits popcount --out-dtype ""
expect_completion "uint8 uint16 uint32 uint64 int8 int16 int32 int64 float16 float32 float64" dmlbits info --dtype ""
expect_completion "6_0 6_1 6_2 6_3 6_4" dmlbits and --feature-level 6_
expect_completion "4_0 4_1" dmlbits and -l 4
expect_completion "4_0 4_1" dmlbits and --feature-level = 4   # --feature-level=4<TAB>
expect_completion "1_0 2_0 2_1 3_0 3_1 4_0 4_1 5_0 5_1 5_2 6_0 6_1 6_2 6_3 6_4" dmlbits ops -l ""
expect_completion "auto cpu cpu-reference d3d12 directml" dmlbits xor --backend ""
expect_completion "cpu cpu-reference" dmlbits check --backend cp
expect_completion "scalar avx2 avx512" dmlbits not --isa ""
expect_completion "directml zero wrap" dmlbits shr --shift-overflow ""
expect_completion "npy json" dmlbits and --format ""
expect_completion "bash" dmlbits completion ""
# Nothing where a number or a name is expected.
expect_completion "" dmlbits and --threads ""
expect_completion "" dmlbits check --jobs ""
# File names: operands, -o, manifests; after a flag too.
expect_completion "a1.npy a2.npy" dmlbits and a
expect_completion "a1.npy a2.npy" dmlbits and a1.npy --hex a
expect_completion "b.json" dmlbits check b
expect_completion "a1.npy a2.npy" dmlbits not x.npy -o a
checks=$((checks + 1))
[ "$(complete_words dmlbits info su)" = "sub dir" ] || fail "a folder name with a space: got '$(complete_words dmlbits info su)'"
expect_completion "" dmlbits devices ""

# Every long option of each command's --help is offered after `--`.
for cmd in $verbs info ops check devices completion; do
  "$DMLBITS" "$cmd" --help > "$WORK/help" 2>&1
  options=$(grep -oE '(^|[ ,])--[a-z][a-z0-9-]*' "$WORK/help" | sed 's/^[ ,]//' | sort -u)
  [ -n "$options" ] || fail "no options found in 'dmlbits $cmd --help'"
  # shellcheck disable=SC2086
  expect_offers dmlbits "$cmd" -- :: $options
done
finish
