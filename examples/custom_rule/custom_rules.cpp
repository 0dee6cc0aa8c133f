#include "custom_rules.hpp"

#include "quick_gelu_rule.hpp"

void add_custom_rules(xexp::rewrite::Catalog& catalog) { catalog.add_rule(quick_gelu_rule()); }
