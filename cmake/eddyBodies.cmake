# The rigid-body engines behind eddy's bodies (issue 30; docs/bodies.md): Bullet in 3D (Debian
# libbullet-dev, its double-precision build: the bodies' poses are integrated in double like the walls'
# motions) and Box2D in 2D (Debian libbox2d-dev). They own the contacts between bodies and with the walls;
# only src/bodies/bullet_world.cpp and src/bodies/box2d_world.cpp include them. As the imported targets
# eddy_deps::bullet and box2d::box2d, for eddy's build and, installed beside eddyConfig.cmake, for
# find_package(eddy).
if(NOT TARGET eddy_deps::bullet)
  find_path(EDDY_BULLET_INCLUDE_DIR btBulletDynamicsCommon.h PATH_SUFFIXES bullet)
  find_library(EDDY_BULLET_DYNAMICS BulletDynamics-float64)
  find_library(EDDY_BULLET_COLLISION BulletCollision-float64)
  find_library(EDDY_BULLET_MATH LinearMath-float64)
  if(NOT EDDY_BULLET_INCLUDE_DIR OR NOT EDDY_BULLET_DYNAMICS OR NOT EDDY_BULLET_COLLISION OR NOT EDDY_BULLET_MATH)
    message(FATAL_ERROR "eddy needs Bullet (double precision) for the contacts of 3D bodies (scene key \"bodies\"): "
                        "Debian libbullet-dev; run scripts/install-deps.sh (make build does)")
  endif()
  add_library(eddy_deps::bullet UNKNOWN IMPORTED)
  set_target_properties(eddy_deps::bullet PROPERTIES
    IMPORTED_LOCATION "${EDDY_BULLET_DYNAMICS}"
    INTERFACE_INCLUDE_DIRECTORIES "${EDDY_BULLET_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS "BT_USE_DOUBLE_PRECISION"
    INTERFACE_LINK_LIBRARIES "${EDDY_BULLET_COLLISION};${EDDY_BULLET_MATH}")
endif()
if(NOT TARGET box2d::box2d)
  find_package(box2d 2.4 CONFIG QUIET)
  if(NOT box2d_FOUND)
    message(FATAL_ERROR "eddy needs Box2D 2.4 for the contacts of 2D bodies (scene key \"bodies\"): "
                        "Debian libbox2d-dev; run scripts/install-deps.sh (make build does)")
  endif()
endif()
