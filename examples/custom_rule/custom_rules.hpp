#pragma once
// The program's own rules. custom_rules.cpp is the one file that includes their headers, so that editing
// a rule recompiles that file alone, not main.cpp with the optimizer and the loader.
#include <xexp/rewrite/rule_set.hpp>

// Registers each of the program's rules in `catalog`, under its name.
void add_custom_rules(xexp::rewrite::Catalog& catalog);
