"""pytest set-up for the Python module's tests (tests/CMakeLists.txt runs them under CTest).

The module comes from a virtual environment it was pip-installed into (CTest's python.pip_install,
DMLBITS_PACKAGE_PREFIX: checked here, so that a copy elsewhere on sys.path, a build tree or
/usr/local, cannot stand in for it unseen); DMLBITS names the built CLI, whose answers the
module must give.
"""

import os
import subprocess

import pytest

import dmlbits

_prefix = os.environ.get("DMLBITS_PACKAGE_PREFIX")
if _prefix and not os.path.realpath(dmlbits.__file__).startswith(os.path.realpath(_prefix) + os.sep):
    raise ImportError(f"dmlbits was imported from {dmlbits.__file__}, not from the environment {_prefix} "
                      f"it was installed into (DMLBITS_PACKAGE_PREFIX)")


@pytest.fixture(scope="session")
def cli():
    """Runs the built dmlbits binary: cli(args..., input=bytes) -> CompletedProcess."""
    path = os.environ.get("DMLBITS")
    if not path:
        pytest.fail("DMLBITS is not set: run these tests through CTest (or set it to the built binary)")

    def run(*args, **kwargs):
        return subprocess.run([path, *map(str, args)], capture_output=True, timeout=120, **kwargs)
    return run


# Property tests run the same examples on every run: a CI failure reproduces, and nothing is
# written beside the sources (no example database).
from hypothesis import settings  # noqa: E402

settings.register_profile("dmlbits", database=None, derandomize=True, print_blob=True)
settings.load_profile("dmlbits")
