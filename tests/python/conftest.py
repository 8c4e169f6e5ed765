"""pytest set-up for the Python module's tests (tests/CMakeLists.txt runs them under CTest).

The module comes from the build tree ($BUILD/python on PYTHONPATH); DMLBITS names the built
CLI, whose answers the module must give.
"""

import os
import subprocess

import pytest


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
