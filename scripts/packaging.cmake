# Packages, built with CPack from this build (issue #27), included from CMakeLists.txt:
#   Linux:   cd build && cpack -G DEB      -> dmlbits_<version>-1_<arch>.deb (scripts/deb-test checks it)
#   Windows: cd build-win && cpack -G ZIP  -> dmlbits-<version>-win64.zip (scripts/windows-test runs from it)
# Both hold what scripts/install.cmake installs.
set(CPACK_PACKAGE_NAME dmlbits)
set(CPACK_PACKAGE_VENDOR "The dmlbits authors")
set(CPACK_PACKAGE_CONTACT "dmlbits maintainers <dmlbits@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "DirectML's element-wise bitwise operators on tensors")
set(CPACK_PACKAGE_DESCRIPTION
  "dmlbits runs DirectML's element-wise bitwise operators (and, or, xor,
not, popcount, shift left, shift right) on tensors read from .npy or JSON
files, with DirectML's semantics and validation at a chosen feature level,
on the CPU (SIMD kernels) or on Direct3D 12 (vkd3d over Vulkan; Mesa's
lavapipe runs it without a GPU). It writes the results and timings, and
checks results against golden files.
.
The package also holds libdmlbits.a with its C++ headers, a CMake package
and a pkg-config file, the manual page and bash completion.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)  # the executable; CMake never strips static libraries
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
endif()
# The packages carry every install rule but the Python module's (component python,
# lib/python/CMakeLists.txt): see there.
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};${PROJECT_NAME};Unspecified;/")
include(CPack)
