# `cpack -G DEB` in a build tree: one Debian package holding what `cmake --install` puts (the xexp CLI
# when it is built, the headers, libxexp_compiled.a, the CMake package files and the pkg-config files)
# under /usr. Its dependencies are what a program built against it needs: the headers of protobuf, ONNX
# and range-v3 (and with them the shared libraries the CLI links).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME xexp)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "C++20 ONNX graph optimizer: pattern rewrites, shape inference, evaluator and the xexp tool")
set(CPACK_PACKAGE_CONTACT "xexp developers" CACHE STRING "The Debian package's Maintainer field")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libonnx-dev, libprotobuf-dev, librange-v3-dev")
include(CPack)
