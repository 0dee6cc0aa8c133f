# The three libraries xexp needs, found the same way for this build and for users of the installed
# package (xexpConfig.cmake includes this file). ONNX's CMake config refers to protobuf::libprotobuf
# without finding it, so Protobuf must come first.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)
find_package(range-v3 REQUIRED)
