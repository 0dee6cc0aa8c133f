#include <iostream>

#include "xexp/all.hpp"

int main() { std::cout << "xexp\n"; }
