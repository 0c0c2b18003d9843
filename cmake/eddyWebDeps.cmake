# The WebAssembly build's dependencies (make web, docs/web.md): emcc cannot link Debian's x86-64 libraries,
# so each dependency the web build keeps comes as headers or as source compiled here, under the same target
# name the native build links. The parts whose dependency has no web build are left out in
# cmake/eddyWebSources.cmake, behind the same interfaces.
#   nlohmann-json, stb        Debian's headers (header-only)
#   fmt                       Debian's headers, FMT_HEADER_ONLY
#   muparser                  Debian's source package (scripts/debian-source.sh), compiled with emcc
#   Box2D                     the same (2D bodies' contacts)
#   Bullet                    the same, its three core libraries in double precision as Debian's -float64
#                             (3D bodies' contacts; native Linux Bullet has no SIMD path in double, so both
#                             builds run the same scalar code)
#   meshoptimizer             the same (decimation of reconstructed surfaces)
#   assimp                    the same, with only the importers of OBJ, STL, PLY and glTF (1 and 2, text and
#                             binary), no exporters; utfcpp, which Debian's assimp source leaves out, from
#                             Debian's headers (libutfcpp-dev)
#   oneTBB                    none: EDDY_SERIAL, the fixed blocks run in order, or EDDY_POOL (EDDY_WEB_THREADS),
#                             on a pool of pthreads (eddy/exec.hpp)
# Only these folders of /usr/include are made visible (symlinked into the build): the rest of it is the
# host's C library, which must not shadow Emscripten's.
set(EDDY_WEB_HOST_INCLUDE ${PROJECT_BINARY_DIR}/host-include)
file(MAKE_DIRECTORY ${EDDY_WEB_HOST_INCLUDE})
foreach(dir nlohmann fmt stb utf8cpp)
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

# These first, so that the dependencies compiled below get them too (a muparser error is thrown through
# them; their vectorised loops round as scalar ones).
# Threads (docs/web.md, "Threads"): EDDY_WEB_THREADS builds eddy-mt.js, whose parallel loops take their fixed
# blocks on a pool of pthreads (Web Workers sharing the module's memory; EDDY_POOL, eddy/exec.hpp); every object,
# the dependencies' too, is compiled with -pthread (shared memory needs atomics and bulk memory in all of them).
# Without it (eddy.js) every parallel loop runs its fixed blocks in order (EDDY_SERIAL). The same bits either way.
option(EDDY_WEB_THREADS "The web build with pthreads: eddy-mt.js, for cross-origin isolated pages" OFF)
if(EDDY_WEB_THREADS)
  add_compile_options(-pthread)
  add_link_options(-pthread)
  add_compile_definitions(EDDY_POOL=1)
else()
  add_compile_definitions(EDDY_SERIAL=1)
endif()
# Exceptions: bad input is an InputError caught and shown on the page, so they must be caught. WebAssembly's
# own exception handling (Chromium, Node 20), not Emscripten's JavaScript emulation (slower on every call).
add_compile_options(-fwasm-exceptions)
add_link_options(-fwasm-exceptions)
# WebAssembly's 128-bit SIMD (every current browser): the compiler vectorises the same loops it does natively,
# 4 floats wide (the shallow-water passes ran 25-30% faster; the particle methods the same). The same bits:
# vectorised loops round as scalar ones without fast-math (tests/web, web.hash).
add_compile_options(-msimd128)

# The folder of a Debian source package that make web fetched (scripts/debian-source.sh PACKAGE VERSION
# build-web/deps/PACKAGE), named by the cache variable VAR; `probe` is a file the source must hold.
function(eddy_web_source package version var probe)
  set(${var} "" CACHE PATH "${package}'s source (Debian's, fetched by make web)")
  if(NOT EXISTS "${${var}}/${probe}")
    message(FATAL_ERROR "eddy web: ${package}'s source not found at '${${var}}' "
                        "(make web fetches it with scripts/debian-source.sh ${package} ${version} build-web/deps/${package})")
  endif()
endfunction()

# Such a source compiled with emcc as the static library eddy_web_PACKAGE: its .cpp files under src/ (all of
# them below it with RECURSE), its headers in include/.
function(eddy_web_source_library package version var probe)
  cmake_parse_arguments(ARG "RECURSE" "" "" ${ARGN})
  eddy_web_source(${package} ${version} ${var} ${probe})
  set(dir "${${var}}")
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

# Bullet 3.24 (Debian's bullet source package): LinearMath, the collision library without GImpact (eddy's
# mesh walls are triangle BVHs) and the dynamics' rigid bodies and constraint solver (no Featherstone,
# vehicles or MLCP), as Debian's libBulletDynamics-float64 and its two companions: BT_USE_DOUBLE_PRECISION.
eddy_web_source(bullet 3.24 EDDY_WEB_BULLET_SOURCE src/btBulletDynamicsCommon.h)
file(GLOB_RECURSE bullet_sources ${EDDY_WEB_BULLET_SOURCE}/src/LinearMath/*.cpp
     ${EDDY_WEB_BULLET_SOURCE}/src/BulletCollision/*.cpp)
list(FILTER bullet_sources EXCLUDE REGEX "/Gimpact/")
file(GLOB bullet_dynamics ${EDDY_WEB_BULLET_SOURCE}/src/BulletDynamics/Dynamics/*.cpp
     ${EDDY_WEB_BULLET_SOURCE}/src/BulletDynamics/ConstraintSolver/*.cpp)
add_library(eddy_web_bullet STATIC ${bullet_sources} ${bullet_dynamics})
target_include_directories(eddy_web_bullet SYSTEM PUBLIC ${EDDY_WEB_BULLET_SOURCE}/src)
target_compile_definitions(eddy_web_bullet PUBLIC BT_USE_DOUBLE_PRECISION)
target_compile_options(eddy_web_bullet PRIVATE -w)  # its own warnings are not eddy's to mend
add_library(eddy_deps::bullet ALIAS eddy_web_bullet)

# meshoptimizer 0.18 (Debian's source package): its header sits beside its sources.
eddy_web_source(meshoptimizer 0.18 EDDY_WEB_MESHOPTIMIZER_SOURCE src/meshoptimizer.h)
file(GLOB meshoptimizer_sources ${EDDY_WEB_MESHOPTIMIZER_SOURCE}/src/*.cpp)
add_library(eddy_web_meshoptimizer STATIC ${meshoptimizer_sources})
target_include_directories(eddy_web_meshoptimizer SYSTEM PUBLIC ${EDDY_WEB_MESHOPTIMIZER_SOURCE}/src)
add_library(meshoptimizer::meshoptimizer ALIAS eddy_web_meshoptimizer)
set(EDDY_HAVE_MESHOPTIMIZER ON)

# assimp 5.2.5 (Debian's assimp source package): the importer's core, its post-processing steps and the
# importers of OBJ, STL, PLY and glTF 1 and 2; every other importer is left out by assimp's own switches
# (ASSIMP_BUILD_NO_<FORMAT>_IMPORTER), the exporters by ASSIMP_BUILD_NO_EXPORT. None of these formats is
# compressed: no zlib. Its two generated headers are made here as its CMakeLists.txt makes them.
eddy_web_source(assimp 5.2.5 EDDY_WEB_ASSIMP_SOURCE code/Common/Importer.cpp)
set(assimp_dir ${EDDY_WEB_ASSIMP_SOURCE})
file(GLOB assimp_sources ${assimp_dir}/code/Common/*.cpp ${assimp_dir}/code/CApi/*.cpp
     ${assimp_dir}/code/Material/*.cpp ${assimp_dir}/code/PostProcessing/*.cpp
     ${assimp_dir}/code/AssetLib/Obj/*.cpp ${assimp_dir}/code/AssetLib/STL/*.cpp ${assimp_dir}/code/AssetLib/Ply/*.cpp
     ${assimp_dir}/code/AssetLib/glTF/*.cpp ${assimp_dir}/code/AssetLib/glTF2/*.cpp)
list(FILTER assimp_sources EXCLUDE REGEX "(Exporter|Compression|ZipArchiveIOSystem|AssimpCExport)\\.cpp$")
set(assimp_gen ${PROJECT_BINARY_DIR}/assimp-gen)
configure_file(${assimp_dir}/include/assimp/config.h.in ${assimp_gen}/include/assimp/config.h @ONLY)
set(GIT_COMMIT_HASH 0)
set(GIT_BRANCH debian)
set(ASSIMP_VERSION_MAJOR 5)
set(ASSIMP_VERSION_MINOR 2)
set(ASSIMP_VERSION_PATCH 5)
set(ASSIMP_PACKAGE_VERSION 0)
set(LIBRARY_SUFFIX "")
set(CMAKE_DEBUG_POSTFIX "")
configure_file(${assimp_dir}/revision.h.in ${assimp_gen}/include/revision.h)
# BaseImporter.cpp includes "../contrib/utf8cpp/source/utf8.h": found through code/ here.
file(MAKE_DIRECTORY ${assimp_gen}/code ${assimp_gen}/contrib/utf8cpp)
file(CREATE_LINK /usr/include/utf8cpp ${assimp_gen}/contrib/utf8cpp/source SYMBOLIC)
add_library(eddy_web_assimp STATIC ${assimp_sources})
target_include_directories(eddy_web_assimp SYSTEM PUBLIC ${assimp_gen}/include ${assimp_dir}/include
  PRIVATE ${assimp_dir}/code ${assimp_dir} ${assimp_gen}/code ${assimp_dir}/contrib/rapidjson/include
          ${assimp_dir}/contrib/pugixml/src ${assimp_dir}/contrib/openddlparser/include)
set(assimp_left_out 3DS 3D 3MF AC AMF ASE ASSBIN B3D BLEND BVH C4D COB COLLADA CSM DXF FBX HMP IFC IQM IRRMESH IRR
    LWO LWS M3D MD2 MD3 MD5 MDC MDL MMD MS3D NDO NFF OFF OGRE OPENGEX Q3BSP Q3D RAW SIB SMD STEP TERRAGEN X3D XGL X)
list(TRANSFORM assimp_left_out REPLACE "(.+)" "ASSIMP_BUILD_NO_\\1_IMPORTER")
target_compile_definitions(eddy_web_assimp PUBLIC ASSIMP_BUILD_NO_EXPORT
  PRIVATE ${assimp_left_out} RAPIDJSON_HAS_STDSTRING=1 RAPIDJSON_NOMEMBERITERATORCLASS ASSIMP_BUILD_NO_OWN_ZLIB)
target_compile_options(eddy_web_assimp PRIVATE -w)
target_link_libraries(eddy_web_assimp PUBLIC eddy_web_headers)
add_library(assimp::assimp ALIAS eddy_web_assimp)
