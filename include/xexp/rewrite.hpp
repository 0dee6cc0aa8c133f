#pragma once
// The rewrite layer (include/xexp/rewrite/): the rule DSL, rule sets by string and the optimizer driver.
#include "xexp/rewrite/apply.hpp"
#include "xexp/rewrite/driver.hpp"
#include "xexp/rewrite/dsl.hpp"
#include "xexp/rewrite/rule.hpp"
#include "xexp/rewrite/rule_set.hpp"
