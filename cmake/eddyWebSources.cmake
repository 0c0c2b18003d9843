# The library's sources in the WebAssembly build (make web, docs/web.md): the native list less the files
# that include a dependency with no web build. web/unavailable.cpp defines their functions as one-line
# refusals (InputError), so a scene that needs one says so on the page.
#   src/surface/openvdb_bridge.cpp  OpenVDB: .vdb files
list(REMOVE_ITEM EDDY_SOURCES
  ${PROJECT_SOURCE_DIR}/src/surface/openvdb_bridge.cpp)
list(APPEND EDDY_SOURCES ${PROJECT_SOURCE_DIR}/web/unavailable.cpp)
