"""The package's types (PEP 561: py.typed, stubs *.pyi), checked by Debian's mypy (python3-mypy)
against the installed package: mypy over the package's stubs, stubtest (the stubs against the
module at run time), a typed program of the API under --strict (typed_usage.py, also run), a
program of wrong calls each of which must be reported (typed_misuse.py), and the operators'
stubs against the operator table (scripts/update-python-stubs --check)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dmlbits

HERE = Path(__file__).resolve().parent
PACKAGE = Path(dmlbits.__file__).resolve().parent


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    # One cache for the file's mypy runs (NumPy's stubs are read once), none beside the sources.
    return tmp_path_factory.mktemp("mypy-cache")


def mypy(cache, *args, module="mypy", cwd=None):
    # The python whose site-packages hold the installed package, as a user's mypy finds it.
    # (stubtest takes no --cache-dir: it runs from the cache's folder.)
    options = ["--cache-dir", str(cache)] if module == "mypy" else []
    return subprocess.run([sys.executable, "-m", module, *options, *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd or cache)


def test_the_package_is_typed():
    assert (PACKAGE / "py.typed").is_file()
    for module in ("__init__", "dask", "shards", "testing"):
        assert (PACKAGE / f"{module}.pyi").is_file(), module


def test_mypy_accepts_the_package(cache):
    r = mypy(cache, "-p", "dmlbits", cwd=PACKAGE.parent)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_stubs_match_the_module(cache):
    r = mypy(cache, "--allowlist", str(HERE / "stubtest_allowlist.txt"), "dmlbits", module="mypy.stubtest")
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_typed_program_passes_strict_mypy_and_runs(cache):
    r = mypy(cache, "--strict", str(HERE / "typed_usage.py"))
    assert r.returncode == 0, r.stdout + r.stderr
    run = subprocess.run([sys.executable, str(HERE / "typed_usage.py")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


def test_wrong_calls_are_reported_on_their_lines(cache):
    source = HERE / "typed_misuse.py"
    marked = {i for i, line in enumerate(source.read_text().splitlines(), 1) if re.search(r"  # error: ", line)}
    assert len(marked) == 14
    r = mypy(cache, "--strict", str(source))
    assert r.returncode == 1, r.stdout + r.stderr
    reported = {int(m.group(1)) for m in re.finditer(r"^[^:\n]*typed_misuse\.py:(\d+): error:", r.stdout, re.M)}
    assert reported == marked, r.stdout


def test_the_operator_stubs_follow_the_operator_table():
    source = os.environ.get("DMLBITS_SOURCE_DIR")
    if not source:
        pytest.fail("DMLBITS_SOURCE_DIR is not set: run these tests through CTest")
    r = subprocess.run([sys.executable, os.path.join(source, "scripts", "update-python-stubs"), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name", sorted(dmlbits.OPERATORS))
def test_help_names_directmls_operator_the_differences_and_every_keyword(name):
    import inspect
    f = dmlbits.OPERATORS[name]
    row = next(r for r in dmlbits.ops()["ops"] if name in (r["python_name"], r["python_alias"]))
    doc = inspect.getdoc(f)
    flat = " ".join(doc.split())
    assert row["dml_operator"] in flat
    assert " ".join(row["python_notes"].split()) in flat  # the semantics that differ from NumPy's
    keywords = [p.name for p in inspect.signature(f).parameters.values()
                if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert "shift_overflow" in keywords if row["shift"] else "shift_overflow" not in keywords
    for k in keywords:
        assert f"\n{k}: " in doc, k
