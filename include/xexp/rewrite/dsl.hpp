#pragma once
// Everything a rule author needs, in one namespace: `using namespace xexp::rewrite::dsl;`.
#include "xexp/rewrite/computes.hpp"
#include "xexp/rewrite/ops.hpp"
#include "xexp/rewrite/rule.hpp"

namespace xexp::rewrite::dsl {
using namespace xexp::rewrite::ops;
using rewrite::also;
using rewrite::attr;
using rewrite::call;
using rewrite::choose;
using rewrite::commutative;
using rewrite::computes;
using rewrite::Const;
using rewrite::dim;
using rewrite::either;
using rewrite::dtype;
using rewrite::Float;
using rewrite::etc;
using rewrite::fact;
using rewrite::fold;
using rewrite::found;
using rewrite::input;
using rewrite::Int;
using rewrite::let;
using rewrite::match;
using rewrite::Ints;
using rewrite::is_constant;
using rewrite::is_scalar;
using rewrite::named;
using rewrite::omitted;
using rewrite::op;
using rewrite::opset_at_least;
using rewrite::output;
using rewrite::outputs;
using rewrite::Opt;
using rewrite::present;
using rewrite::rank;
using rewrite::rebuild;
using rewrite::replace_with;
using rewrite::Rewriter;
using rewrite::rule;
using rewrite::RulePtr;
using rewrite::same_shape;
using rewrite::shared;
using rewrite::Skipped;
using rewrite::single_use;
using rewrite::Str;
using rewrite::through;
using rewrite::ValueView;
using rewrite::Var;
}  // namespace xexp::rewrite::dsl
