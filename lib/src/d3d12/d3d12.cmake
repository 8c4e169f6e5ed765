# The D3D12 backend's sources (target dmlbits_d3d12), included from lib/CMakeLists.txt. Nothing links against a D3D12 runtime:
# d3d12_runtime.cpp loads it at run time (libvkd3d-utils.so.1 on Linux, d3d12.dll on Windows) so that one binary runs
# with or without it. Only that file sees the D3D12 headers, chosen by DMLBITS_D3D12_HEADERS
# (see d3d12_api.hpp for why the choice matters):
#   vkd3d    vkd3d's headers, for vkd3d on Linux (the default; needs libvkd3d-dev)
#   directx  DirectX-Headers, for Windows' d3d12.dll or WSL's libd3d12.so
# Without the chosen headers the backend is built as a stub that reports "not built".
set(DMLBITS_D3D12_HEADERS "vkd3d" CACHE STRING "Headers for the D3D12 backend: vkd3d or directx")
set_property(CACHE DMLBITS_D3D12_HEADERS PROPERTY STRINGS vkd3d directx)
if(NOT DMLBITS_D3D12_HEADERS MATCHES "^(vkd3d|directx)$")
  message(FATAL_ERROR "DMLBITS_D3D12_HEADERS must be vkd3d or directx, not '${DMLBITS_D3D12_HEADERS}'")
endif()

set(_d3d12_dir ${CMAKE_CURRENT_LIST_DIR})
# HRESULT names and errors, in every build: the directml layer reports its calls with them.
target_sources(dmlbits_d3d12 PRIVATE ${_d3d12_dir}/hresult.cpp)

# Windows: DirectX-Headers' d3d12.h with mingw's DXGI headers (d3d12_api.hpp), from the narrow
# include folder scripts/mingw-w64-deps.cmake makes (never the host's /usr/include); d3d12.dll
# and dxgi.dll are loaded at run time like vkd3d on Linux, so nothing is linked. The host's
# pkg-config must not be asked: it describes Linux packages.
if(WIN32)
  if(DMLBITS_MINGW_INCLUDE AND EXISTS ${DMLBITS_MINGW_INCLUDE}/directx/d3d12.h AND EXISTS ${DMLBITS_MINGW_INCLUDE}/dxguids/dxguids.h)
    message(STATUS "D3D12 backend: built against DirectX-Headers, d3d12.dll and dxgi.dll loaded at run time")
    target_sources(dmlbits_d3d12 PRIVATE
      ${_d3d12_dir}/d3d12_runtime.cpp
      ${_d3d12_dir}/d3d12_backend.cpp
      ${_d3d12_dir}/copy_team.cpp
      ${_d3d12_dir}/adapters.cpp
      ${_d3d12_dir}/dxgi_adapters.cpp)
    set_source_files_properties(${_d3d12_dir}/d3d12_runtime.cpp ${_d3d12_dir}/dxgi_adapters.cpp PROPERTIES
      COMPILE_OPTIONS "-DNOMINMAX;-DDMLBITS_D3D12_HEADERS_DIRECTX;-isystem${DMLBITS_MINGW_INCLUDE}/directx")
    target_compile_definitions(dmlbits_d3d12 PUBLIC DMLBITS_HAVE_D3D12=1)
  else()
    message(STATUS "D3D12 backend: not built (no DirectX-Headers in the mingw include folder)")
    target_sources(dmlbits_d3d12 PRIVATE ${_d3d12_dir}/d3d12_not_built.cpp)
  endif()
  return()
endif()
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(DMLBITS_VKD3D QUIET libvkd3d-utils)
  pkg_check_modules(DMLBITS_DIRECTX QUIET DirectX-Headers)
endif()
include(CheckIncludeFileCXX)
check_include_file_cxx(vulkan/vulkan.h DMLBITS_HAVE_VULKAN_H)

# Compile flags of the one file that includes the D3D12 headers, for either header set. The
# headers go in with -isystem: they are not ours to keep free of -Wpedantic warnings.
function(dmlbits_d3d12_header_flags out headers)
  if(headers STREQUAL "vkd3d")
    # gnu++: vkd3d's __uuidof uses typeof. NOMINMAX: vkd3d_windows.h defines min and max.
    # WIDL_EXPLICIT_AGGREGATE_RETURNS: vkd3d's ABI for methods returning structures (without
    # it GetCPUDescriptorHandleForHeapStart crashes).
    set(flags -std=gnu++20 -DNOMINMAX -DWIDL_EXPLICIT_AGGREGATE_RETURNS -DDMLBITS_D3D12_HEADERS_VKD3D)
    foreach(dir ${DMLBITS_VKD3D_INCLUDE_DIRS})
      list(APPEND flags -isystem${dir})  # joined: CMake would merge repeated -isystem
    endforeach()
  else()
    set(flags -DNOMINMAX -DDMLBITS_D3D12_HEADERS_DIRECTX)
    foreach(dir ${DMLBITS_DIRECTX_INCLUDE_DIRS})
      list(APPEND flags -isystem${dir})  # joined: CMake would merge repeated -isystem
    endforeach()
  endif()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

if(DMLBITS_D3D12_HEADERS STREQUAL "vkd3d")
  set(_d3d12_headers_found ${DMLBITS_VKD3D_FOUND})
else()
  set(_d3d12_headers_found ${DMLBITS_DIRECTX_FOUND})
endif()

if(_d3d12_headers_found AND DMLBITS_HAVE_VULKAN_H)
  message(STATUS "D3D12 backend: built against ${DMLBITS_D3D12_HEADERS} headers, runtime loaded with dlopen")
  dmlbits_d3d12_header_flags(_d3d12_flags ${DMLBITS_D3D12_HEADERS})
  target_sources(dmlbits_d3d12 PRIVATE
    ${_d3d12_dir}/d3d12_runtime.cpp
    ${_d3d12_dir}/d3d12_backend.cpp
    ${_d3d12_dir}/copy_team.cpp
    ${_d3d12_dir}/adapters.cpp
    ${_d3d12_dir}/vulkan_adapters.cpp)
  # vkd3d's COM objects are C structures without C++ type information, so UBSan's vptr check
  # (in sanitizer builds) would flag every method call through them.
  if(DMLBITS_SANITIZE OR DMLBITS_FUZZ)
    list(APPEND _d3d12_flags -fno-sanitize=vptr)
  endif()
  set_source_files_properties(${_d3d12_dir}/d3d12_runtime.cpp PROPERTIES COMPILE_OPTIONS "${_d3d12_flags}")
  target_compile_definitions(dmlbits_d3d12 PUBLIC DMLBITS_HAVE_D3D12=1)
else()
  message(STATUS "D3D12 backend: not built (no ${DMLBITS_D3D12_HEADERS} headers or no vulkan/vulkan.h)")
  target_sources(dmlbits_d3d12 PRIVATE ${_d3d12_dir}/d3d12_not_built.cpp)
endif()

# The other header set, compiled but not linked, so that the variant not in use keeps
# compiling (CI has both header sets installed).
if(DMLBITS_D3D12_HEADERS STREQUAL "vkd3d" AND DMLBITS_DIRECTX_FOUND)
  set(_d3d12_other directx)
elseif(DMLBITS_D3D12_HEADERS STREQUAL "directx" AND DMLBITS_VKD3D_FOUND)
  set(_d3d12_other vkd3d)
endif()
if(DEFINED _d3d12_other)
  dmlbits_d3d12_header_flags(_d3d12_other_flags ${_d3d12_other})
  # A file of its own: d3d12_runtime.cpp's source properties carry the other header set's flags.
  set(_d3d12_check_source ${CMAKE_CURRENT_BINARY_DIR}/d3d12_runtime_${_d3d12_other}_check.cpp)
  file(CONFIGURE OUTPUT ${_d3d12_check_source} CONTENT "#include \"${_d3d12_dir}/d3d12_runtime.cpp\"\n")
  add_library(dmlbits_d3d12_${_d3d12_other}_check OBJECT ${_d3d12_check_source})
  target_include_directories(dmlbits_d3d12_${_d3d12_other}_check PRIVATE ${_d3d12_dir})
  target_compile_options(dmlbits_d3d12_${_d3d12_other}_check PRIVATE ${_d3d12_other_flags})
  target_link_libraries(dmlbits_d3d12_${_d3d12_other}_check PRIVATE dmlbits_shaders dmlbits_machine dmlbits_ops dmlbits_platform dmlbits_core
    dmlbits_warnings)
  if(_d3d12_other STREQUAL "vkd3d")
    # The target's own -std=c++20 would follow (and override) the -std=gnu++20 above.
    set_target_properties(dmlbits_d3d12_vkd3d_check PROPERTIES CXX_EXTENSIONS ON)
  endif()
endif()
