"""What the NumPy tests (tests/numpy/*_test.py) share: the environment CTest gives them, running
the built binary, the record of checks and failures, and the exit statuses CTest reads.

Not a test itself (CTest runs only *_test.py). The scripts import it from their own folder,
which Python puts first on sys.path when it runs a script.

Env from CTest (tests/CMakeLists.txt, DMLBITS_TEST_ENV): DMLBITS (the binary),
DMLBITS_SOURCE_DIR, DMLBITS_CONFORMANCE_DIR.
"""

import json
import os
import subprocess
import sys
import tempfile

# The binary under test; None when the variable is not set.
DMLBITS = os.environ.get("DMLBITS")
# The project's root: DMLBITS_SOURCE_DIR, else two folders above this file.
SOURCE_DIR = os.environ.get("DMLBITS_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
# Conformance data (testdata/conformance), "" when not given.
CONFORMANCE_DIR = os.environ.get("DMLBITS_CONFORMANCE_DIR", "")

# CTest's SKIP_RETURN_CODE for these tests: "skipped", not "passed".
EXIT_SKIP = 77


def testdata(*parts):
    """A path under the project's testdata folder."""
    return os.path.join(SOURCE_DIR, "testdata", *parts)


def dmlbits_missing(message, status=1, stream=None, need="set"):
    """None when DMLBITS names a usable binary; otherwise prints `message` (to `stream`, standard
    output by default) and returns `status`, for main() to return. `need` is how usable: "set"
    (any value), "exists" (the path exists) or "executable" (it can be run)."""
    ok = bool(DMLBITS)
    if ok and need == "exists":
        ok = os.path.exists(DMLBITS)
    elif ok and need == "executable":
        ok = os.access(DMLBITS, os.X_OK)
    if ok:
        return None
    print(message, file=stream)
    return status


def program_ops():
    """The program's operator table, `dmlbits ops --json` parsed: the list the tests enumerate
    operators from (never a list of their own), so that a new operator reaches every test."""
    r = run("ops", "--json", timeout=120)
    if r.returncode != 0:
        raise SystemExit("dmlbits ops --json failed (%d): %s" % (r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def skip(message):
    """Prints why the test does not run and returns EXIT_SKIP, for main() to return."""
    print(message)
    return EXIT_SKIP


def run(*args, timeout=None, **kwargs):
    """Runs `DMLBITS args...` to completion with output captured as text (unless kwargs say
    otherwise): subprocess.run's CompletedProcess."""
    options = {"capture_output": True, "text": True}
    options.update(kwargs)
    return subprocess.run([DMLBITS, *args], timeout=timeout, **options)


def temp_dir(**kwargs):
    """A temporary folder removed with its contents: `with temp_dir() as tmp:`."""
    return tempfile.TemporaryDirectory(**kwargs)


class Checks:
    """Checks and failures of one test run. Each failure is printed at once as "FAIL: what"
    (to `stream`, standard output by default) and kept in `failures`; `count` is the number
    of checks made."""

    def __init__(self, stream=None):
        self.stream = stream
        self.failures = []
        self.count = 0

    def fail(self, what):
        self.failures.append(what)
        print("FAIL: " + what, file=self.stream)

    def check(self, cond, what):
        """Counts a check; a false `cond` is a failure described by `what`. Returns `cond`."""
        self.count += 1
        if not cond:
            self.fail(what)
        return cond


def stderr_checks():
    """Checks whose failures go to standard error."""
    return Checks(sys.stderr)
