# `cmake --install` puts the headers and a package config so that `find_package(xexp)` works.
include(CMakePackageConfigHelpers)
install(DIRECTORY include/xexp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS xexp xexp_compiled EXPORT xexpTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT xexpTargets NAMESPACE xexp:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/xexp)
configure_package_config_file(cmake/xexpConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/xexpConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/xexp)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/xexpConfigVersion.cmake
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/xexpConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/xexpConfigVersion.cmake
              cmake/xexpDependencies.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/xexp)
