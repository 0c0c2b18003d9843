# The WebAssembly build's dependencies (make web, docs/web.md): emcc cannot link Debian's x86-64 libraries,
# so each dependency the web build keeps comes as headers or as source compiled here, under the same target
# name the native build links. The parts whose dependency has no web build are left out in
# cmake/eddyWebSources.cmake, behind the same interfaces.
#   nlohmann-json, stb        Debian's headers (header-only)
#   fmt                       Debian's headers, FMT_HEADER_ONLY
#   muparser                  Debian's source package (scripts/debian-source.sh), compiled with emcc
#   Box2D                     the same (2D bodies' contacts)
#   oneTBB                    none: EDDY_SERIAL, the fixed blocks run in order (eddy/exec.hpp)
# Only these folders of /usr/include are made visible (symlinked into the build): the rest of it is the
# host's C library, which must not shadow Emscripten's.
set(EDDY_WEB_HOST_INCLUDE ${PROJECT_BINARY_DIR}/host-include)
file(MAKE_DIRECTORY ${EDDY_WEB_HOST_INCLUDE})
foreach(dir nlohmann fmt stb)
  if(NOT EXISTS /usr/include/${dir})
    message(FATAL_ERROR "eddy web: /usr/include/${dir} is missing: run scripts/install-deps.sh (make web does)")
  endif()
  file(CREATE_LINK /usr/include/${dir} ${EDDY_WEB_HOST_INCLUDE}/${dir} SYMBOLIC)
endforeach()

add_library(eddy_web_headers INTERFACE)
target_include_directories(eddy_web_headers SYSTEM INTERFACE ${EDDY_WEB_HOST_INCLUDE})
add_library(nlohmann_json::nlohmann_json ALIAS eddy_web_headers)
add_library(eddy_web_fmt INTERFACE)
target_link_libraries(eddy_web_fmt INTERFACE eddy_web_headers)
target_compile_definitions(eddy_web_fmt INTERFACE FMT_HEADER_ONLY)
add_library(fmt::fmt ALIAS eddy_web_fmt)

# A library from a Debian source package that make web fetched (scripts/debian-source.sh PACKAGE VERSION
# build-web/deps/PACKAGE) into the folder the cache variable VAR names, compiled with emcc as the static
# library eddy_web_PACKAGE: its .cpp files under src/ (all of them below it with RECURSE), its headers in
# include/. `probe` is a file the source must hold.
function(eddy_web_source_library package version var probe)
  cmake_parse_arguments(ARG "RECURSE" "" "" ${ARGN})
  set(${var} "" CACHE PATH "${package}'s source (Debian's, fetched by make web)")
  set(dir "${${var}}")
  if(NOT EXISTS "${dir}/${probe}")
    message(FATAL_ERROR "eddy web: ${package}'s source not found at '${dir}' "
                        "(make web fetches it with scripts/debian-source.sh ${package} ${version} build-web/deps/${package})")
  endif()
  if(ARG_RECURSE)
    file(GLOB_RECURSE sources ${dir}/src/*.cpp)
  else()
    file(GLOB sources ${dir}/src/*.cpp)
  endif()
  add_library(eddy_web_${package} STATIC ${sources})
  target_include_directories(eddy_web_${package} SYSTEM PUBLIC ${dir}/include PRIVATE ${dir}/src)
endfunction()

eddy_web_source_library(muparser 2.3.3 EDDY_WEB_MUPARSER_SOURCE src/muParser.cpp)
target_compile_definitions(eddy_web_muparser PUBLIC MUPARSER_STATIC)
add_library(muparser::muparser ALIAS eddy_web_muparser)
eddy_web_source_library(box2d 2.4.1 EDDY_WEB_BOX2D_SOURCE include/box2d/box2d.h RECURSE)
add_library(box2d::box2d ALIAS eddy_web_box2d)

# No threads: every parallel loop runs its fixed blocks in order (eddy/exec.hpp).
add_compile_definitions(EDDY_SERIAL=1)
# Exceptions: bad input is an InputError caught and shown on the page, so they must be caught. WebAssembly's
# own exception handling (Chromium, Node 20), not Emscripten's JavaScript emulation (slower on every call).
add_compile_options(-fwasm-exceptions)
add_link_options(-fwasm-exceptions)
# WebAssembly's 128-bit SIMD (every current browser): the compiler vectorises the same loops it does natively,
# 4 floats wide (the shallow-water passes ran 25-30% faster; the particle methods the same). The same bits:
# vectorised loops round as scalar ones without fast-math (tests/web, web.hash).
add_compile_options(-msimd128)
