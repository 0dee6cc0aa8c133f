// Owner of the tests' precompiled header (see tests/CMakeLists.txt); it holds no code.
