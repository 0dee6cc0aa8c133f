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
using rewrite::dtype;
using rewrite::either;
using rewrite::etc;
using rewrite::fact;
using rewrite::Float;
using rewrite::fold;
using rewrite::found;
using rewrite::input;
using rewrite::inputs_of;
using rewrite::Int;
using rewrite::Ints;
using rewrite::is_constant;
using rewrite::is_scalar;
using rewrite::keep;
using rewrite::let;
using rewrite::match;
using rewrite::named;
using rewrite::omitted;
using rewrite::op;
using rewrite::opset_at_least;
using rewrite::Opt;
using rewrite::output;
using rewrite::outputs;
using rewrite::Part;
using rewrite::present;
using rewrite::rank;
using rewrite::rebuild;
using rewrite::rebuild_as;
using rewrite::replace_with;
using rewrite::Rewriter;
using rewrite::rule;
using rewrite::RulePtr;
using rewrite::same_shape;
using rewrite::shared;
using rewrite::single_use;
using rewrite::Skipped;
using rewrite::spread;
using rewrite::Str;
using rewrite::through;
using rewrite::ValueView;
using rewrite::Var;
}  // namespace xexp::rewrite::dsl
