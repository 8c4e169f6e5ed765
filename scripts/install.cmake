# What `cmake --install BUILD [--prefix DIR]` installs (issue #27), included from CMakeLists.txt.
#
# Linux (and any non-Windows build):
#   bin/dmlbits
#   share/man/man1/dmlbits.1.gz
#   share/bash-completion/completions/dmlbits   (`dmlbits completion bash`, run at build time)
#   share/doc/dmlbits/{LICENSE,NOTICE,copyright,changelog.Debian.gz}
#   lib/<arch>/libdmlbits.a and include/dmlbits/ (every public header: the whole folder)
#   lib/<arch>/cmake/dmlbits/   find_package(dmlbits CONFIG) -> dmlbits::dmlbits
#   lib/<arch>/pkgconfig/dmlbits.pc
# Windows (the zip; scripts/packaging.cmake): dmlbits.exe, dmlbits.html (the manual),
#   LICENSE.txt, NOTICE.txt and third-party/ (the license texts of what the .exe carries).
# The Python module (issue #25) is built where Python 3 and pybind11 are found and installs
# itself from lib/python/CMakeLists.txt (lib/python3/dist-packages under a prefix /usr,
# lib/python3.X/dist-packages under others; component python): `cmake --install` installs it with the rest;
# CPack makes it a package of its own, python3-dmlbits (scripts/packaging.cmake), with
# share/doc/python3-dmlbits/{copyright,changelog.Debian.gz}.
set(DMLBITS_NOTICE_FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE)
# The license texts of the code compiled into the executable (NOTICE lists it), as Debian's
# packages of it state them: the build uses those packages, so their files are on this machine.
set(DMLBITS_THIRD_PARTY_COPYRIGHT
  "CLI11=/usr/share/doc/libcli11-dev/copyright"
  "fmt=/usr/share/doc/libfmt-dev/copyright"
  "nlohmann-json=/usr/share/doc/nlohmann-json3-dev/copyright"
  "DirectX-Headers=/usr/share/doc/directx-headers-dev/copyright")
if(WIN32)
  list(APPEND DMLBITS_THIRD_PARTY_COPYRIGHT "mingw-w64=/usr/share/doc/mingw-w64-common/copyright")
endif()

# Sets `name` and `file` from a NAME=FILE entry of the list above, failing where FILE is missing.
macro(dmlbits_license_entry entry carrier)
  string(REPLACE "=" ";" dmlbits_pair "${entry}")
  list(GET dmlbits_pair 0 name)
  list(GET dmlbits_pair 1 file)
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "${file} (the license of ${name}, which ${carrier} carries) is missing: install its Debian package")
  endif()
endmacro()

if(WIN32)
  # The zip's layout: everything at its top level, documents with a .txt name Windows opens.
  install(TARGETS dmlbits RUNTIME DESTINATION .)
  install(FILES LICENSE DESTINATION . RENAME LICENSE.txt)
  install(FILES NOTICE DESTINATION . RENAME NOTICE.txt)
  foreach(entry ${DMLBITS_THIRD_PARTY_COPYRIGHT})
    dmlbits_license_entry("${entry}" dmlbits.exe)
    install(FILES "${file}" DESTINATION third-party RENAME "${name}.txt")
  endforeach()
  # The manual as HTML: Windows has no man.
  find_program(DMLBITS_MANDOC mandoc)
  if(NOT DMLBITS_MANDOC)
    message(FATAL_ERROR "mandoc is needed to write the manual as HTML for the Windows zip (apt-get install mandoc)")
  endif()
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/dmlbits.html
    COMMAND ${DMLBITS_MANDOC} -T html -O man=%N.%S.html ${PROJECT_SOURCE_DIR}/man/dmlbits.1 > ${PROJECT_BINARY_DIR}/dmlbits.html
    DEPENDS ${PROJECT_SOURCE_DIR}/man/dmlbits.1)
  add_custom_target(dmlbits_manual_html ALL DEPENDS ${PROJECT_BINARY_DIR}/dmlbits.html)
  install(FILES ${PROJECT_BINARY_DIR}/dmlbits.html DESTINATION .)
  return()
endif()

install(TARGETS dmlbits RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The manual, compressed as Debian's policy asks (-n: no name or time stamp, so it is
# reproducible).
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/man/dmlbits.1.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
  COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/man/dmlbits.1 > ${PROJECT_BINARY_DIR}/man/dmlbits.1.gz
  DEPENDS ${PROJECT_SOURCE_DIR}/man/dmlbits.1)
# Bash completion, from the binary just built (CMAKE_CROSSCOMPILING builds cannot run it).
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/completion/dmlbits
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/completion
  COMMAND $<TARGET_FILE:dmlbits> completion bash > ${PROJECT_BINARY_DIR}/completion/dmlbits
  DEPENDS dmlbits)
add_custom_target(dmlbits_install_files ALL DEPENDS ${PROJECT_BINARY_DIR}/man/dmlbits.1.gz ${PROJECT_BINARY_DIR}/completion/dmlbits)
install(FILES ${PROJECT_BINARY_DIR}/man/dmlbits.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_BINARY_DIR}/completion/dmlbits DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions)

# The copyright file Debian packages carry: ours, then NOTICE, then the license of each
# third-party library compiled in. Installed everywhere (it is the one file that says it all).
set(copyright "${PROJECT_BINARY_DIR}/copyright")
file(READ ${PROJECT_SOURCE_DIR}/LICENSE license_text)
file(READ ${PROJECT_SOURCE_DIR}/NOTICE notice_text)
set(text "dmlbits\n\n${license_text}\n\n${notice_text}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${DMLBITS_NOTICE_FILES})
# Appends to `text` the license of each NAME=FILE of the list `entries`.
function(dmlbits_append_copyright entries)
  foreach(entry ${entries})
    dmlbits_license_entry("${entry}" dmlbits)
    file(READ "${file}" third)
    string(APPEND text "\n\n--------------------------------------------------------------------------\n"
                       "${name}: ${file} of the Debian package dmlbits was built with\n\n${third}")
  endforeach()
  set(text "${text}" PARENT_SCOPE)
endfunction()
dmlbits_append_copyright("${DMLBITS_THIRD_PARTY_COPYRIGHT}")
file(WRITE ${copyright} "${text}")
# A changelog for the package (Debian's policy asks for one; the project's history is git's).
string(TIMESTAMP changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${PROJECT_BINARY_DIR}/changelog.Debian
  "dmlbits (${PROJECT_VERSION}-1) unstable; urgency=medium\n\n"
  "  * Built with CPack from the dmlbits repository; its history is the git log.\n\n"
  " -- dmlbits maintainers <dmlbits@users.noreply.github.com>  ${changelog_date}\n")
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/changelog.Debian.gz
  COMMAND gzip -9nc ${PROJECT_BINARY_DIR}/changelog.Debian > ${PROJECT_BINARY_DIR}/changelog.Debian.gz
  DEPENDS ${PROJECT_BINARY_DIR}/changelog.Debian)
add_custom_target(dmlbits_changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/changelog.Debian.gz)
install(FILES ${DMLBITS_NOTICE_FILES} ${copyright} ${PROJECT_BINARY_DIR}/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The package python3-dmlbits (scripts/packaging.cmake) needs the same two files in its own
# folder, and its copyright names pybind11 too, which the extension carries besides the library.
# EXCLUDE_FROM_ALL: only CPack's install of the component python puts them there; `cmake
# --install` has /usr/share/doc/dmlbits already.
if(DMLBITS_PYTHON)
  dmlbits_append_copyright("pybind11=/usr/share/doc/pybind11-dev/copyright")
  file(WRITE ${PROJECT_BINARY_DIR}/python3-dmlbits/copyright "${text}")
  install(FILES ${PROJECT_BINARY_DIR}/python3-dmlbits/copyright ${PROJECT_BINARY_DIR}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/python3-dmlbits COMPONENT python EXCLUDE_FROM_ALL)
endif()

# The library, its headers, its CMake package and its pkg-config file.
install(TARGETS dmlbits_library EXPORT dmlbits-targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# CMake strips executables and shared objects when asked (`cmake --install --strip`, and the
# .deb: CPACK_STRIP_FILES), never a static library, whose debug information is nearly all of
# a RelWithDebInfo package (lintian: unstripped-static-library). Stripped as dh_strip strips one:
# debug sections and the .comment and .note sections go (static-library-has-unneeded-sections),
# the symbol table a linker needs stays.
if(CMAKE_STRIP)
  install(CODE "if(CMAKE_INSTALL_DO_STRIP)
  execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug --remove-section=.comment --remove-section=.note
                          --enable-deterministic-archives
                          \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:dmlbits_library>\"
                  COMMAND_ERROR_IS_FATAL ANY)
endif()")
endif()
install(DIRECTORY lib/include/dmlbits DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
set(DMLBITS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dmlbits)
install(EXPORT dmlbits-targets NAMESPACE dmlbits:: DESTINATION ${DMLBITS_CMAKE_DIR})
include(CMakePackageConfigHelpers)
configure_package_config_file(scripts/dmlbits-config.cmake.in ${PROJECT_BINARY_DIR}/dmlbits-config.cmake
  INSTALL_DESTINATION ${DMLBITS_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dmlbits-config-version.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dmlbits-config.cmake ${PROJECT_BINARY_DIR}/dmlbits-config-version.cmake
  DESTINATION ${DMLBITS_CMAKE_DIR})
# pkg-config: paths relative to the .pc file, so that an installed tree may be moved (and
# `cmake --install --prefix` is honoured).
file(RELATIVE_PATH pc_to_prefix /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
set(DMLBITS_PC_PREFIX "\${pcfiledir}/${pc_to_prefix}")
string(REGEX REPLACE "/$" "" DMLBITS_PC_PREFIX "${DMLBITS_PC_PREFIX}")
set(DMLBITS_PC_DL "")
foreach(lib ${CMAKE_DL_LIBS})
  string(APPEND DMLBITS_PC_DL " -l${lib}")
endforeach()
configure_file(scripts/dmlbits.pc.in ${PROJECT_BINARY_DIR}/dmlbits.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dmlbits.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The Python module (issue #25, lib/python) installs itself from its own CMakeLists.txt: see the
# header.
