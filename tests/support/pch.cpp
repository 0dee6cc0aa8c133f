// Owner of the tests' precompiled header (see tests/CMakeLists.txt); it runs no test.
int main() { return 0; }
