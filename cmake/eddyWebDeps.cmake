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

set(EDDY_WEB_MUPARSER_SOURCE "" CACHE PATH "muparser's source (Debian's, fetched by make web)")
if(NOT EXISTS "${EDDY_WEB_MUPARSER_SOURCE}/src/muParser.cpp")
  message(FATAL_ERROR "eddy web: muparser's source not found at '${EDDY_WEB_MUPARSER_SOURCE}' "
                      "(make web fetches it with scripts/debian-source.sh muparser 2.3.3 build-web/deps/muparser)")
endif()
file(GLOB EDDY_WEB_MUPARSER_SOURCES ${EDDY_WEB_MUPARSER_SOURCE}/src/*.cpp)
add_library(eddy_web_muparser STATIC ${EDDY_WEB_MUPARSER_SOURCES})
target_include_directories(eddy_web_muparser SYSTEM PUBLIC ${EDDY_WEB_MUPARSER_SOURCE}/include)
target_compile_definitions(eddy_web_muparser PUBLIC MUPARSER_STATIC)
add_library(muparser::muparser ALIAS eddy_web_muparser)

set(EDDY_WEB_BOX2D_SOURCE "" CACHE PATH "Box2D's source (Debian's, fetched by make web)")
if(NOT EXISTS "${EDDY_WEB_BOX2D_SOURCE}/include/box2d/box2d.h")
  message(FATAL_ERROR "eddy web: Box2D's source not found at '${EDDY_WEB_BOX2D_SOURCE}' "
                      "(make web fetches it with scripts/debian-source.sh box2d 2.4.1 build-web/deps/box2d)")
endif()
file(GLOB_RECURSE EDDY_WEB_BOX2D_SOURCES ${EDDY_WEB_BOX2D_SOURCE}/src/*.cpp)
add_library(eddy_web_box2d STATIC ${EDDY_WEB_BOX2D_SOURCES})
target_include_directories(eddy_web_box2d SYSTEM PUBLIC ${EDDY_WEB_BOX2D_SOURCE}/include PRIVATE ${EDDY_WEB_BOX2D_SOURCE}/src)
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
