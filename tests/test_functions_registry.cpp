#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "xexp/functions/registry.hpp"
#include "xexp/functions/same_function.hpp"

using namespace xexp;
using namespace xexp::ir;
using xexp::functions::add_function;
using xexp::functions::same_function;

namespace {

// Linear-like body: Transpose(w, perm) then MatMul(x, t) with the given value names; `swap` reads
// MatMul(t, x) instead.
Function linear(const std::string& prefix, std::vector<int64_t> perm = {1, 0}, bool swap = false) {
  Function f;
  f.name = "Linear";
  f.domain = "aten_local_function";
  f.opsets = {{"", 18, {}}};
  Graph& g = *f.body;
  ValueId x = g.add_input(prefix + "x");
  ValueId w = g.add_input(prefix + "w");
  ValueId t = g.add_value(prefix + "t");
  g.add_node("Transpose", {w}, {t}, {Attribute::make_ints("perm", std::move(perm))}, prefix + "tr");
  ValueId y = g.add_value(prefix + "y");
  g.add_node("MatMul", swap ? std::vector<ValueId>{t, x} : std::vector<ValueId>{x, t}, {y});
  g.add_output(y);
  return f;
}

}  // namespace

TEST(FunctionsSameFunction, EqualUpToValueNames) {
  EXPECT_TRUE(same_function(linear("a_"), linear("b_")));
  EXPECT_FALSE(same_function(linear("a_"), linear("b_", {0, 1})));
  EXPECT_FALSE(same_function(linear("a_"), linear("b_", {1, 0}, true)));
  Function other_opset = linear("b_");
  other_opset.opsets[0].version = 17;
  EXPECT_FALSE(same_function(linear("a_"), other_opset));
}

TEST(FunctionsSameFunction, SubgraphsCompareThroughTheValueMap) {
  auto with_branch = [](const std::string& prefix, bool read_input) {
    Function f = linear(prefix);
    Graph& g = *f.body;
    ValueId c = g.add_input(prefix + "c");
    auto branch = std::make_shared<Graph>();
    branch->parent = &g;
    const std::string read = prefix + (read_input ? "x" : "t");
    ValueId captured = branch->add_captured(read);
    ValueId r = branch->add_value(prefix + "r");
    branch->add_node("Neg", {captured}, {r});
    branch->add_output(r);
    ValueId out = g.add_value(prefix + "out");
    NodeId n = g.add_node("If", {c}, {out}, {Attribute::make_graph("then_branch", branch)});
    g.add_captured_use(n, g.at(read));
    g.add_output(out);
    return f;
  };
  EXPECT_TRUE(same_function(with_branch("a_", true), with_branch("b_", true)));
  EXPECT_FALSE(same_function(with_branch("a_", true), with_branch("b_", false)));
}

TEST(FunctionsRegistry, IdenticalBodiesMergeOthersAreRenamed) {
  Model m;
  m.opsets = {{"", 18, {}}};
  EXPECT_EQ(add_function(m, linear("a_")), "Linear");
  EXPECT_EQ(m.opset("aten_local_function"), 1);
  EXPECT_EQ(add_function(m, linear("b_")), "Linear");
  EXPECT_EQ(add_function(m, linear("c_", {0, 1})), "Linear_l2l");
  EXPECT_EQ(add_function(m, linear("d_", {1, 0}, true)), "Linear_l3l");
  EXPECT_EQ(add_function(m, linear("e_", {0, 1})), "Linear_l2l");
  ASSERT_EQ(m.functions.size(), 3u);
  EXPECT_EQ(m.functions[1].name, "Linear_l2l");
  EXPECT_THROW(add_function(m, linear("f_", {2, 0}), {.merge_allowed = true, .rename_allowed = false}), Error);
  EXPECT_EQ(add_function(m, linear("g_"), {.merge_allowed = false, .rename_allowed = true}), "Linear_l4l");
}
