# What `cmake --install build --prefix P` puts under P, and the Debian packages `cpack -G DEB` makes
# of it. Two components, as Debian splits a library:
#   runtime      bin/splatc, lib/libsplatc.so.<soversion> and the Python module (package splatc)
#   development  include/splatc.h, lib/libsplatc.a, the lib/libsplatc.so link, the pkg-config file
#                and the CMake package (package libsplatc-dev)
# Everything installed finds the rest by relative paths, so a prefix can be moved or unpacked
# anywhere (tests/install/check_install.sh builds against a moved one).
include(CMakePackageConfigHelpers)

set(SPLAT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/splatc)
set(SPLAT_PYTHON_DIR ${CMAKE_INSTALL_LIBDIR}/python3/dist-packages CACHE STRING
    "Where the Python module goes, relative to the prefix (Debian's python3 reads /usr/lib/python3/dist-packages)")
foreach(dir CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR SPLAT_PYTHON_DIR)
  if(IS_ABSOLUTE "${${dir}}")
    message(FATAL_ERROR "${dir} must be relative to the prefix (the installed tree is relocatable), got ${${dir}}")
  endif()
endforeach()

install(TARGETS splatc_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS splatc_shared EXPORT splatc_shared_targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development)
install(TARGETS splatc EXPORT splatc_static_targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
install(FILES include/splatc.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)

# The CMake package: find_package(splatc CONFIG) gives splatc::splatc (shared) and
# splatc::splatc_static; each library's targets in a file of its own, so that the shared one needs
# none of the static one's dependencies.
install(EXPORT splatc_shared_targets NAMESPACE splatc:: FILE splatcTargets-shared.cmake
        DESTINATION ${SPLAT_CMAKE_DIR} COMPONENT development)
install(EXPORT splatc_static_targets NAMESPACE splatc:: FILE splatcTargets-static.cmake
        DESTINATION ${SPLAT_CMAKE_DIR} COMPONENT development)
configure_package_config_file(cmake/splatcConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/splatcConfig.cmake
                              INSTALL_DESTINATION ${SPLAT_CMAKE_DIR})
# 0.x: the API still changes between minor versions
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/splatcConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/splatcConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/splatcConfigVersion.cmake
        DESTINATION ${SPLAT_CMAKE_DIR} COMPONENT development)

# pkg-config: the prefix is found from the file's own folder (${pcfiledir}, which pkgconf and
# pkg-config both define). The static library's dependencies are the Requires.private and
# Libs.private of what the build links (SPLAT_LIB_DEPS in CMakeLists.txt).
file(RELATIVE_PATH SPLAT_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" SPLAT_PC_TO_PREFIX "${SPLAT_PC_TO_PREFIX}")
configure_file(cmake/splatc.pc.in ${CMAKE_CURRENT_BINARY_DIR}/splatc.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/splatc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)

# The Python module, and beside it where the shared library lies relative to it (python/splatc
# looks there after SPLATC_LIBRARY).
install(DIRECTORY python/splatc/ DESTINATION ${SPLAT_PYTHON_DIR}/splatc COMPONENT runtime
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
file(RELATIVE_PATH SPLAT_PY_TO_LIB /prefix/${SPLAT_PYTHON_DIR}/splatc /prefix/${CMAKE_INSTALL_LIBDIR}/)
string(REGEX REPLACE "([^/])$" "\\1/" SPLAT_PY_TO_LIB "${SPLAT_PY_TO_LIB}")
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/python_install/_install.py CONTENT
"# Written by cmake/install.cmake: the shared library, relative to this folder.
library = '${SPLAT_PY_TO_LIB}$<TARGET_SONAME_FILE_NAME:splatc_shared>'
")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/python_install/_install.py DESTINATION ${SPLAT_PYTHON_DIR}/splatc
        COMPONENT runtime)

# Debian packages: `cpack -G DEB` in the build folder (needs dpkg-dev, for dpkg-shlibdeps).
set(CPACK_PACKAGE_NAME splatc)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "3D Gaussian Splatting training and rendering on Vulkan compute")
set(CPACK_PACKAGE_CONTACT "splatc developers")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runtime development)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME splatc)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION graphics)
# the libraries bin/splatc and libsplatc.so load, as dpkg-shlibdeps finds them
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
# the Python module's one dependency
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "python3-numpy")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libsplatc-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
# splatc.pc's Requires.private and the CMake package's dependencies (the static library's)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "libvulkan-dev, libpng-dev, libjpeg-dev, libcjson-dev, zlib1g-dev, libwebp-dev, libzstd-dev, libwebsockets-dev")
set(CPACK_COMPONENT_DEVELOPMENT_DEPENDS runtime)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
include(CPack)
