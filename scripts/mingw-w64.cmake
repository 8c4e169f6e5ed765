# CMake toolchain file: a Windows x86-64 build of dmlbits from Debian with mingw-w64 (GCC, posix
# threads: std::thread needs them).
#   apt-get install --no-install-recommends g++-mingw-w64-x86-64-posix mingw-w64-x86-64-dev
#   cmake -S . -B build-win -DCMAKE_TOOLCHAIN_FILE=scripts/mingw-w64.cmake && cmake --build build-win
# Debian has no mingw builds of CLI11, nlohmann-json, fmt or GoogleTest: scripts/mingw-w64-deps.cmake
# (included by the top-level CMakeLists.txt in this build only) uses Debian's own headers
# through a narrow include folder, and GoogleTest's sources, compiled with this compiler.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(DMLBITS_MINGW_TRIPLET x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${DMLBITS_MINGW_TRIPLET}-gcc-posix)
set(CMAKE_CXX_COMPILER ${DMLBITS_MINGW_TRIPLET}-g++-posix)
set(CMAKE_RC_COMPILER ${DMLBITS_MINGW_TRIPLET}-windres)
# Libraries and headers come from the mingw sysroot only, never from the host's /usr: a Linux
# library or a glibc header in a Windows build compiles into something that cannot run. Programs
# (pkg-config, python) are the host's.
set(CMAKE_FIND_ROOT_PATH /usr/${DMLBITS_MINGW_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# One self-contained .exe: libstdc++, libgcc and winpthread linked in, so that it runs without
# mingw's DLLs beside it (it then imports only system DLLs).
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
# Tests run under wine: scripts/mingw-w64-deps.cmake sets CMAKE_CROSSCOMPILING_EMULATOR to
# scripts/wine-run with a WINEPREFIX in the build folder (it needs the build folder, which a
# toolchain file read by try_compile does not know for sure).
