# Packages, built with CPack from this build (issue #27), included from CMakeLists.txt:
#   Linux:   cd build && cpack -G DEB      -> dmlbits_<version>-1_<arch>.deb and, where the Python
#            module is built, python3-dmlbits_<version>-1_<arch>.deb (scripts/deb-test checks both)
#   Windows: cd build-win && cpack -G ZIP  -> dmlbits-<version>-win64.zip (scripts/windows-test runs from it)
# They hold what scripts/install.cmake installs: the Python module (component python,
# lib/python/CMakeLists.txt) in python3-dmlbits, everything else in dmlbits and the zip.
set(CPACK_PACKAGE_NAME dmlbits)
set(CPACK_PACKAGE_VENDOR "The dmlbits authors")
set(CPACK_PACKAGE_CONTACT "dmlbits maintainers <dmlbits@users.noreply.github.com>")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
# The executable and the Python extension; CMake never strips static libraries, so
# scripts/install.cmake strips libdmlbits.a itself when CMake strips (CMAKE_INSTALL_DO_STRIP).
set(CPACK_STRIP_FILES ON)
set(CPACK_SOURCE_GENERATOR "")

if(WIN32)
  set(CPACK_GENERATOR ZIP)
  set(CPACK_SYSTEM_NAME win64)
  set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
else()
  set(CPACK_GENERATOR DEB)
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
  set(CPACK_DEBIAN_PACKAGE_SECTION science)
  set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
  # Depends: what the executable links, found by dpkg-shlibdeps (libc6 alone: libstdc++ and
  # {fmt} are linked in, app/CMakeLists.txt). The headers need {fmt} and nlohmann_json, which
  # a user of the library installs with their -dev packages: Suggests.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  # Loaded at run time by --backend d3d12 (and auto), not linked: vkd3d's D3D12
  # (libvkd3d-utils.so.1, which loads libvkd3d.so.1), the Vulkan loader and a Vulkan driver
  # (lavapipe, in mesa-vulkan-drivers, runs it without a GPU). The CPU backends need none.
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libvkd3d-utils1, libvkd3d1, libvulkan1, mesa-vulkan-drivers")
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libfmt-dev, nlohmann-json3-dev, bash-completion")
  set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

  # One package per component: dmlbits (every install rule without a component: Unspecified)
  # and python3-dmlbits (component python), so that the command-line tool does not pull in
  # Python and NumPy. Each description's first line is its summary (CPackDeb would put a
  # CPACK_PACKAGE_DESCRIPTION_SUMMARY on both).
  set(CPACK_DEB_COMPONENT_INSTALL ON)
  set(CPACK_COMPONENTS_ALL Unspecified)
  set(CPACK_DEBIAN_UNSPECIFIED_PACKAGE_NAME dmlbits)
  set(CPACK_DEBIAN_UNSPECIFIED_DESCRIPTION
  "DirectML's element-wise bitwise operators on tensors
dmlbits runs DirectML's element-wise bitwise operators (and, or, xor,
not, popcount, shift left, shift right) on tensors read from .npy or JSON
files, with DirectML's semantics and validation at a chosen feature level,
on the CPU (SIMD kernels) or on Direct3D 12 (vkd3d over Vulkan; Mesa's
lavapipe runs it without a GPU). It writes the results and timings, and
checks results against golden files.
.
The package also holds libdmlbits.a with its C++ headers, a CMake package
and a pkg-config file, the manual page and bash completion. The Python
module is in python3-dmlbits.")
  if(DMLBITS_PYTHON)
    list(APPEND CPACK_COMPONENTS_ALL python)
    set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-dmlbits)
    set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
    # The extension is built for one Python (its name says cpython-3XX) and reads arrays through
    # NumPy's C ABI: the relations dh_python3 and dh_numpy3 would write, from the Python the
    # module was built for and from python3-numpy's own record of its ABI
    # (/usr/share/numpy3/versions). dpkg-shlibdeps adds what the extension links (libc6, libstdc++6).
    set(numpy_depends python3-numpy)
    if(EXISTS /usr/share/numpy3/versions)
      file(STRINGS /usr/share/numpy3/versions numpy_versions REGEX "^(abi|api-min-version) ")
      set(numpy_min "")
      set(numpy_abi "")
      foreach(line ${numpy_versions})
        if(line MATCHES "^abi (.+)$")
          set(numpy_abi ", python3-numpy-abi${CMAKE_MATCH_1}")
        elseif(line MATCHES "^api-min-version (.+)$")
          set(numpy_min " (>= ${CMAKE_MATCH_1})")
        endif()
      endforeach()
      set(numpy_depends "python3-numpy${numpy_min}${numpy_abi}")
    endif()
    math(EXPR next_minor "${DMLBITS_PYTHON_VERSION_MINOR} + 1")
    set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
        "python3 (>= ${DMLBITS_PYTHON_VERSION_MAJOR}.${DMLBITS_PYTHON_VERSION_MINOR}~), python3 (<< ${DMLBITS_PYTHON_VERSION_MAJOR}.${next_minor}), ${numpy_depends}")
    # The d3d12 backend loads the same libraries into python as into the executable
    # (CPACK_DEBIAN_PACKAGE_RECOMMENDS, inherited); dmlbits.dask needs Dask (and Zarr for its examples).
    set(CPACK_DEBIAN_PYTHON_PACKAGE_SUGGESTS "python3-dask, python3-distributed, python3-zarr")
    # Byte-compiled on installation and removed before removal, as dh_python3 does: a python3
    # run as root would otherwise leave __pycache__ folders that purging does not remove.
    set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA
        ${PROJECT_SOURCE_DIR}/scripts/deb/python3-dmlbits/postinst ${PROJECT_SOURCE_DIR}/scripts/deb/python3-dmlbits/prerm)
    set(CPACK_DEBIAN_PYTHON_DESCRIPTION
    "DirectML's element-wise bitwise operators on NumPy arrays (Python 3)
The Python module dmlbits runs DirectML's element-wise bitwise operators
(bitwise_and, bitwise_or, bitwise_xor, bitwise_not, bitwise_count,
left_shift, right_shift) on NumPy arrays in process, with NumPy's names
and DirectML's semantics, on the CPU or on Direct3D 12 (vkd3d over
Vulkan), as the dmlbits command does; dmlbits.dask runs them on Dask
arrays.")
  endif()
endif()
if(WIN32)
  # The zip carries every install rule without a component (Windows builds no Python module).
  set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};${PROJECT_NAME};Unspecified;/")
endif()
include(CPack)
