#!/usr/bin/env bash
# The Python suite's set-up (CTest fixture dmlbits_venv, tests/CMakeLists.txt): a fresh virtual
# environment with Debian's packages visible (NumPy, Dask, pytest: no package index is needed
# or asked), and dmlbits pip-installed into it from the source tree, as a user installs it
# (`pip install --no-build-isolation .`). The wheel is made from this build folder (the
# backend's build-dir: seconds), so the suite then tests what a wheel installs, not the build tree.
#   pip_install.sh PYTHON VENV SOURCE_DIR BUILD_DIR
set -euo pipefail
python=$1 venv=$2 source=$3 build=$4
rm -rf "$venv"
# No pip of its own: Debian's pip, visible through --system-site-packages, installs into the
# environment it runs in (ensurepip would add seconds for the same pip).
"$python" -m venv --system-site-packages --without-pip "$venv"
"$venv/bin/python" -m pip install --quiet --no-build-isolation --no-index --no-cache-dir \
  --disable-pip-version-check --config-settings "build-dir=$build" "$source"
"$venv/bin/python" -m pip show --files dmlbits
