# `cmake --install` puts the headers, the compiled mode's library, a package config so that
# `find_package(xexp)` works, and pkg-config files (xexp, xexp-compiled).
include(CMakePackageConfigHelpers)
install(DIRECTORY include/xexp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS xexp_header_only xexp_compiled EXPORT xexpTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT xexpTargets NAMESPACE xexp:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/xexp)
configure_package_config_file(cmake/xexpConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/xexpConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/xexp)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/xexpConfigVersion.cmake
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/xexpConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/xexpConfigVersion.cmake
              cmake/xexpDependencies.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/xexp)
# Relocatable pkg-config files: paths are relative to the .pc file's own folder, so that they hold for
# `cmake --install --prefix`, for cpack's /usr and for a package extracted anywhere.
file(RELATIVE_PATH XEXP_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" XEXP_PC_TO_PREFIX "${XEXP_PC_TO_PREFIX}")
foreach(pc xexp xexp-compiled)
  configure_file(cmake/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
