# Writes OUTPUT, a C++ file defining dmlbits::app::kBuildCommit (app.hpp): the commit the source tree is at (12 hex
# digits, "-modified" when tracked files differ from it), or "unknown" outside a git checkout
# (a release tarball). Run at every build (app/CMakeLists.txt), so that a commit or a checkout
# changes `dmlbits --version` without a new configure; the file is rewritten only when its text
# changes, so an unchanged commit recompiles nothing.
#   cmake -DSOURCE_DIR=... -DOUTPUT=... -P scripts/build-commit.cmake
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE head_status ERROR_QUIET)
  if(head_status EQUAL 0 AND head)
    set(commit "${head}")
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes RESULT_VARIABLE status_status ERROR_QUIET)
    if(status_status EQUAL 0 AND NOT changes STREQUAL "")
      string(APPEND commit "-modified")
    endif()
  endif()
endif()
set(text "// Written by scripts/build-commit.cmake at build time (declared in app/app.hpp).\nnamespace dmlbits::app {\nextern const char kBuildCommit[] = \"${commit}\";\n}\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUTPUT}" "${text}")
endif()
