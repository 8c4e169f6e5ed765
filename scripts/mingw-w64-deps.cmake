# The dependencies of a mingw-w64 cross build (scripts/mingw-w64.cmake), included by the
# top-level CMakeLists.txt instead of its find_package calls. Debian ships CLI11, nlohmann-json
# and fmt as headers under /usr/include, DirectX-Headers under /usr/include/{directx,dxguids},
# and GoogleTest as sources: none of them for mingw. Putting /usr/include on a Windows build's
# include path would let glibc's headers shadow mingw's, so a folder in the build tree holds
# links to just those header folders.
set(DMLBITS_MINGW_INCLUDE ${CMAKE_BINARY_DIR}/mingw-include)
file(MAKE_DIRECTORY ${DMLBITS_MINGW_INCLUDE})
foreach(dir CLI nlohmann fmt directx dxguids)
  if(NOT IS_DIRECTORY /usr/include/${dir})
    message(FATAL_ERROR "/usr/include/${dir} is missing: apt-get install libcli11-dev nlohmann-json3-dev libfmt-dev directx-headers-dev")
  endif()
  file(CREATE_LINK /usr/include/${dir} ${DMLBITS_MINGW_INCLUDE}/${dir} SYMBOLIC)
endforeach()

# The targets the find_package calls would have made. -isystem: third-party headers' warnings
# are not ours to fix.
add_library(CLI11::CLI11 INTERFACE IMPORTED)
target_include_directories(CLI11::CLI11 SYSTEM INTERFACE ${DMLBITS_MINGW_INCLUDE})
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
target_include_directories(nlohmann_json::nlohmann_json SYSTEM INTERFACE ${DMLBITS_MINGW_INCLUDE})
# fmt header-only: Debian's libfmt.so is a Linux library.
add_library(fmt::fmt INTERFACE IMPORTED)
target_include_directories(fmt::fmt SYSTEM INTERFACE ${DMLBITS_MINGW_INCLUDE})
target_compile_definitions(fmt::fmt INTERFACE FMT_HEADER_ONLY=1)

# GoogleTest from Debian's sources (package googletest), built with the cross compiler; the
# targets are those FindGTest makes, for tests/CMakeLists.txt.
if(DMLBITS_BUILD_TESTS)
  if(NOT EXISTS /usr/src/googletest/CMakeLists.txt)
    message(FATAL_ERROR "/usr/src/googletest is missing: apt-get install googletest")
  endif()
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  add_subdirectory(/usr/src/googletest ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL SYSTEM)
  # Debian's googletest 1.12 defines GTest::gtest and GTest::gtest_main itself; older ones not.
  if(NOT TARGET GTest::gtest_main)
    add_library(GTest::gtest ALIAS gtest)
    add_library(GTest::gtest_main ALIAS gtest_main)
  endif()
endif()

# Test programs run under wine, in a WINEPREFIX of this build's own (scripts/wine-run).
set(CMAKE_CROSSCOMPILING_EMULATOR ${PROJECT_SOURCE_DIR}/scripts/wine-run ${CMAKE_BINARY_DIR}/wineprefix)
