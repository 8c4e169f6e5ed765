#!/usr/bin/env bash
# Every path of this repository that the documents name exists: README.md, shaders/README.md,
# testdata/benchmarks.md, lib/docs/*.md and the man page (a moved or deleted file otherwise
# leaves its old path behind, as #24 found). A path is a word that starts with one of the
# top-level folders (app/ lib/ shaders/ testdata/ tests/ man/ scripts/ .ci/); one written as
# another project's ("vkd3d's tests/d3d12.c") is not ours.
source "$(dirname "$0")/lib.sh"
checks=$((checks + 1))
missing=$("$PYTHON" - "$DMLBITS_SOURCE_DIR" <<'PY'
import glob, os, re, sys
root = sys.argv[1]
docs = ["README.md", "shaders/README.md", "testdata/benchmarks.md", "man/dmlbits.1"]
docs += sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "lib", "docs", "*.md")))
path = re.compile(r"(?<![\w./-])((?:app|lib|shaders|testdata|tests|man|scripts|\.ci)/[A-Za-z0-9_.+/-]*[A-Za-z0-9_+])")
found = 0
for doc in docs:
    with open(os.path.join(root, doc), encoding="utf-8") as f:
        text = f.read().replace("\\-", "-")  # roff's hyphen
    for m in path.finditer(text):
        if text[max(0, m.start() - 3):m.start()] == "'s ":
            continue
        found += 1
        if not os.path.exists(os.path.join(root, m.group(1))):
            print("%s:%d: %s" % (doc, text.count("\n", 0, m.start()) + 1, m.group(1)))
if found < 50:
    print("only %d paths found in the documents: is the pattern broken?" % found)
PY
)
[ -z "$missing" ] || fail "documents name paths that do not exist:
$missing"
finish
