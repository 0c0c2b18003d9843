# OpenVDB for eddy (Debian libopenvdb-dev 10), as the imported target eddy_deps::openvdb. Debian's own
# FindOpenVDB module pulls in more than eddy needs (Boost, Blosc, its optional components), so the
# library is found directly and wrapped in an imported target with Imath's (OpenVDB's half type).
# Used by eddy's build and, installed beside eddyConfig.cmake, by find_package(eddy): the exported
# targets name eddy_deps::openvdb, never a path on the machine that built eddy.
if(NOT TARGET eddy_deps::openvdb)
  # Imath by hand too: its CMake config also declares PyImath targets whose files Debian leaves out.
  find_library(EDDY_IMATH_LIBRARY NAMES Imath-3_1 Imath REQUIRED)
  find_path(EDDY_OPENVDB_INCLUDE_DIR openvdb/openvdb.h REQUIRED)
  find_library(EDDY_OPENVDB_LIBRARY openvdb REQUIRED)
  add_library(eddy_deps::openvdb UNKNOWN IMPORTED)
  set_target_properties(eddy_deps::openvdb PROPERTIES
    IMPORTED_LOCATION "${EDDY_OPENVDB_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${EDDY_OPENVDB_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${EDDY_IMATH_LIBRARY}")
endif()
