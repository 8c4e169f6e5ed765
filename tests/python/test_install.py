"""`cmake --install` puts the package where Debian's python3 finds it."""

import os
import subprocess
import sys
import sysconfig

import pytest


def test_installed_package_imports_from_the_prefix(tmp_path):
    build = os.environ.get("DMLBITS_BUILD_DIR")
    if not build:
        pytest.fail("DMLBITS_BUILD_DIR is not set: run these tests through CTest")
    subprocess.run(["cmake", "--install", build, "--prefix", str(tmp_path)], check=True, capture_output=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = tmp_path / "lib" / version / "dist-packages"
    assert (site / "dmlbits" / "__init__.py").is_file()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    r = subprocess.run([sys.executable, "-c", "import dmlbits, numpy as np; print(dmlbits.__file__); "
                        "print(dmlbits.bitwise_not(np.uint8(1)))"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(site / "dmlbits" / "__init__.py"), "254"]


def test_the_default_prefix_is_on_debians_path():
    # /usr/local (CMake's default prefix) -> lib/pythonX.Y/dist-packages, which Debian's python3
    # puts on sys.path; the prefix /usr -> lib/python3/dist-packages, where Debian's packages go.
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    assert f"/usr/local/lib/{version}/dist-packages" in sys.path
    assert "/usr/lib/python3/dist-packages" in sys.path
    assert sysconfig.get_config_var("EXT_SUFFIX").endswith(".so")


def test_a_prefix_usr_installs_into_debians_python3_folder(tmp_path):
    # The folder follows the prefix installed to, not the one configured (/usr/local here): the
    # .deb (CPack installs into a staging folder ending in /usr) and `--prefix /usr` get
    # lib/python3/dist-packages, which every Debian python3 reads.
    build = os.environ.get("DMLBITS_BUILD_DIR")
    if not build:
        pytest.fail("DMLBITS_BUILD_DIR is not set: run these tests through CTest")
    prefix = tmp_path / "usr"
    subprocess.run(["cmake", "--install", build, "--prefix", str(prefix), "--component", "python"],
                   check=True, capture_output=True)
    package = prefix / "lib" / "python3" / "dist-packages" / "dmlbits"
    assert (package / "__init__.py").is_file()
    assert list(package.glob("_dmlbits.*.so"))
    assert not (prefix / "bin").exists()  # the component python alone
