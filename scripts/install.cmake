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
# itself from lib/python/CMakeLists.txt (install(TARGETS _dmlbits ...) into
# DMLBITS_PYTHON_INSTALL_DIR): the .deb then carries it too. For the .deb that folder must be
# lib/python3/dist-packages (Debian's python3 path under /usr), whatever CMAKE_INSTALL_PREFIX
# the build was configured with; and the package must then depend on python3 and python3-numpy.
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

if(WIN32)
  # The zip's layout: everything at its top level, documents with a .txt name Windows opens.
  install(TARGETS dmlbits RUNTIME DESTINATION .)
  install(FILES LICENSE DESTINATION . RENAME LICENSE.txt)
  install(FILES NOTICE DESTINATION . RENAME NOTICE.txt)
  foreach(entry ${DMLBITS_THIRD_PARTY_COPYRIGHT})
    string(REPLACE "=" ";" entry "${entry}")
    list(GET entry 0 name)
    list(GET entry 1 file)
    if(NOT EXISTS "${file}")
      message(FATAL_ERROR "${file} (the license of ${name}, which dmlbits.exe carries) is missing: install its Debian package")
    endif()
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
foreach(entry ${DMLBITS_THIRD_PARTY_COPYRIGHT})
  string(REPLACE "=" ";" entry "${entry}")
  list(GET entry 0 name)
  list(GET entry 1 file)
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "${file} (the license of ${name}, which dmlbits carries) is missing: install its Debian package")
  endif()
  file(READ "${file}" third)
  string(APPEND text "\n\n--------------------------------------------------------------------------\n"
                     "${name}: ${file} of the Debian package dmlbits was built with\n\n${third}")
endforeach()
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

# The library, its headers, its CMake package and its pkg-config file.
install(TARGETS dmlbits_library EXPORT dmlbits-targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
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

# The Python module (issue #25, lib/python) installs itself from its own CMakeLists.txt, into
# DMLBITS_PYTHON_INSTALL_DIR: see the header.
