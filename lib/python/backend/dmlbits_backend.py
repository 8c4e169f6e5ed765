"""dmlbits' PEP 517 build backend: the Python module's wheel, built and installed by CMake.

pyproject.toml names it (``backend-path``): ``pip install --no-build-isolation .`` and
``python3 -m build --no-isolation`` run it from the source tree or an sdist.

Why a backend of our own rather than setuptools with a CMake build_ext: the module is built and
installed by CMake already (lib/python/CMakeLists.txt: the extension, the package's files, the
folder they go to), so the wheel is what ``cmake --install --component python`` installs; a
setuptools build_ext would only wrap that call, and would bring setuptools' own build/ folder
(the project's CMake build folder has that name), an .egg-info written into the source tree and
a MANIFEST.in restating the tree's layout. scikit-build-core, which does this job elsewhere, is
not in Debian 12. This file needs only the standard library (and tomli on Pythons before 3.11).

Settings (``--config-settings KEY=VALUE`` to pip, ``-C KEY=VALUE`` to build; or the environment):

  build-dir   (DMLBITS_WHEEL_BUILD_DIR)  an existing CMake build folder of this tree to build the
              target dmlbits_python in and install from: seconds when it is up to date (the
              tests do this). Without it a fresh build folder is configured in a temporary
              folder (Release, no tests) and removed afterwards: minutes.
  cmake-args  (CMAKE_ARGS)  more arguments for CMake when it configures the fresh folder, split
              as a shell splits them (-DCMAKE_CXX_COMPILER_LAUNCHER=ccache).

The wheel: the package folder ``dmlbits`` as CMake installs it (stripped), and
dmlbits-VERSION.dist-info. It is tagged for the running interpreter (cp311-cp311-linux_x86_64:
the extension loads in that Python only), whose EXT_SUFFIX the extension must carry, so that a
build folder configured for another Python is refused rather than packed.

The sdist: the files a build needs (``SDIST_PATHS``; git's tracked files in a checkout, every
file in an unpacked sdist) and PKG-INFO. Not tests/ or testdata/: the backend configures
without tests.
"""

import base64
import gzip
import hashlib
import io
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

# What a build of the module reads, relative to the source tree (an sdist's contents).
SDIST_PATHS = ["pyproject.toml", "CMakeLists.txt", "LICENSE", "NOTICE", "README.md", "app", "lib", "man",
               "scripts", "shaders"]


def _root():
    # PEP 517 runs the hooks in the source tree's root.
    return os.getcwd()


def _version():
    # CMake's project() version: the one place the project states it.
    with open(os.path.join(_root(), "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\s*dmlbits\s+VERSION\s+([0-9][0-9A-Za-z.]*)", f.read())
    if not m:
        raise RuntimeError("dmlbits_backend: CMakeLists.txt has no project(dmlbits VERSION x.y.z)")
    return m.group(1)


def _project():
    with open(os.path.join(_root(), "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _metadata():
    """Core metadata 2.1 (METADATA, PKG-INFO) from pyproject.toml's [project] and the version."""
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {_version()}",
             f"Summary: {p['description']}"]
    if "license" in p:
        lines.append(f"License: {p['license']['text']}")
    lines += [f"Classifier: {c}" for c in p.get("classifiers", [])]
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    for extra, deps in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    if "readme" in p:
        lines.append("Description-Content-Type: text/markdown")
    text = "\n".join(lines) + "\n"
    if "readme" in p:
        with open(os.path.join(_root(), p["readme"]), encoding="utf-8") as f:
            text += "\n" + f.read()
    return text


def _setting(config_settings, key, env):
    value = (config_settings or {}).get(key)
    if isinstance(value, list):  # given more than once
        value = value[-1]
    return value if value else os.environ.get(env) or None


def _tag():
    # The running interpreter's: cp311-cp311-linux_x86_64. Not manylinux: the extension is
    # built against this machine's libraries, for this machine.
    impl = {"cpython": "cp"}.get(sys.implementation.name, sys.implementation.name)
    version = f"{sys.version_info.major}{sys.version_info.minor}"
    abi = impl + version + getattr(sys, "abiflags", "")
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}{version}-{abi}-{platform}"


def _run(cmd, **kwargs):
    print("dmlbits_backend: " + " ".join(map(shlex.quote, cmd)), file=sys.stderr, flush=True)
    # CMake's and the compiler's output on stderr: a PEP 517 front end may read stdout.
    subprocess.run(cmd, check=True, stdout=sys.stderr, **kwargs)


def _configure(build_dir, config_settings):
    args = shlex.split(_setting(config_settings, "cmake-args", "CMAKE_ARGS") or "")
    _run(["cmake", "-S", _root(), "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DDMLBITS_BUILD_TESTS=OFF",
          "-DDMLBITS_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}", *args])


def _install_package(build_dir, staging):
    """Builds dmlbits_python in ``build_dir``, installs the component python into ``staging``,
    returns the folder holding the package ``dmlbits``."""
    jobs = str(os.cpu_count() or 2)
    # dmlbits_changelog: the component python installs it too (python3-dmlbits' doc folder, for
    # the .deb); the wheel takes the package folder only.
    _run(["cmake", "--build", build_dir, "--target", "dmlbits_python", "dmlbits_changelog", "-j", jobs])
    _run(["cmake", "--install", build_dir, "--component", "python", "--prefix", staging, "--strip"])
    found = [d for d, _, files in os.walk(staging) if os.path.basename(d) == "dmlbits" and "__init__.py" in files]
    if len(found) != 1:
        raise RuntimeError(f"dmlbits_backend: `cmake --install` put {len(found)} packages dmlbits in {staging}")
    package = found[0]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    extensions = [f for f in os.listdir(package) if f.startswith("_dmlbits.") and f.endswith(".so")]
    if extensions != [f"_dmlbits{suffix}"]:
        raise RuntimeError(f"dmlbits_backend: the build folder {build_dir} holds {extensions}, not _dmlbits{suffix}: "
                           f"it was configured for another Python than {sys.executable}")
    return os.path.dirname(package)


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _zip_info(name, executable=False):
    # Fixed times and modes: the same tree makes the same wheel.
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = (0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version = "dmlbits", _version()
    wheel_name = f"{name}-{version}-{_tag()}.whl"
    dist_info = f"{name}-{version}.dist-info"
    with tempfile.TemporaryDirectory(prefix="dmlbits-wheel-") as tmp:
        build_dir = _setting(config_settings, "build-dir", "DMLBITS_WHEEL_BUILD_DIR")
        if build_dir:
            build_dir = os.path.abspath(build_dir)
            if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
                raise RuntimeError(f"dmlbits_backend: build-dir {build_dir} is not a configured CMake build folder")
        else:
            build_dir = os.path.join(tmp, "build")
            _configure(build_dir, config_settings)
        site = _install_package(build_dir, os.path.join(tmp, "staging"))
        files = []
        for folder, dirs, names in os.walk(site):
            dirs.sort()
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for n in sorted(names):
                path = os.path.join(folder, n)
                files.append((os.path.relpath(path, site).replace(os.sep, "/"), path))
        record = []
        with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w") as z:
            for arcname, path in files:
                with open(path, "rb") as f:
                    data = f.read()
                z.writestr(_zip_info(arcname, os.access(path, os.X_OK) and arcname.endswith(".so")), data)
                record.append(_record_line(arcname, data))
            meta = {
                "METADATA": _metadata(),
                "WHEEL": f"Wheel-Version: 1.0\nGenerator: dmlbits_backend\nRoot-Is-Purelib: false\nTag: {_tag()}\n",
            }
            for license_file in ("LICENSE", "NOTICE"):
                with open(os.path.join(_root(), license_file), encoding="utf-8") as f:
                    meta[f"licenses/{license_file}"] = f.read()
            for n, text in meta.items():
                data = text.encode("utf-8")
                z.writestr(_zip_info(f"{dist_info}/{n}"), data)
                record.append(_record_line(f"{dist_info}/{n}", data))
            record.append(f"{dist_info}/RECORD,,")
            z.writestr(_zip_info(f"{dist_info}/RECORD"), "\n".join(record) + "\n")
    return wheel_name


def _sdist_files():
    root = _root()
    if os.path.exists(os.path.join(root, ".git")):
        # A checkout: its tracked files (a build folder or editor files beside them stay out).
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", *SDIST_PATHS], check=True,
                             capture_output=True).stdout
        files = [f for f in out.decode().split("\0") if f and os.path.isfile(os.path.join(root, f))]
    else:
        # An unpacked sdist: everything it has.
        files = []
        for top in SDIST_PATHS:
            path = os.path.join(root, top)
            if os.path.isfile(path):
                files.append(top)
            for folder, dirs, names in os.walk(path):
                dirs[:] = [d for d in dirs if d != "__pycache__"]
                files += [os.path.relpath(os.path.join(folder, n), root) for n in names]
    return sorted(set(files))


def build_sdist(sdist_directory, config_settings=None):
    base = f"dmlbits-{_version()}"
    name = f"{base}.tar.gz"

    def add(tar, arcname, data, mode):
        info = tarfile.TarInfo(f"{base}/{arcname}")
        info.size, info.mode, info.mtime = len(data), mode, 0
        info.uname = info.gname = ""
        tar.addfile(info, io.BytesIO(data))

    with open(os.path.join(sdist_directory, name), "wb") as raw, \
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for f in _sdist_files():
            path = os.path.join(_root(), f)
            with open(path, "rb") as fh:
                add(tar, f, fh.read(), 0o755 if os.access(path, os.X_OK) else 0o644)
        add(tar, "PKG-INFO", _metadata().encode("utf-8"), 0o644)
    return name


def get_requires_for_build_wheel(config_settings=None):
    # CMake, a compiler, pybind11 and NumPy's headers come from the system (Debian's packages);
    # CMake says which is missing.
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []
