// The custom-rule example: a user rule registered by name works with set strings and gives the same
// numbers as the unfused model (QuickGelu computes x * sigmoid(x) in one kernel; atol 1e-5 holds).
#include <gtest/gtest.h>

#include "../examples/custom_rule/quick_gelu_rule.hpp"
#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;

static Model swish_model(bool sigmoid_first) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId s = test::node(g, "Sigmoid", {x});
  g.add_output(test::node(g, "Mul", sigmoid_first ? std::vector<ValueId>{s, x} : std::vector<ValueId>{x, s}));
  return m;
}

class RewriteCustom : public ::testing::Test {
 protected:
  void SetUp() override { rewrite::Catalog::global().add_rule(quick_gelu_rule()); }
};

TEST_F(RewriteCustom, FusesBothOperandOrders) {
  for (bool sigmoid_first : {false, true}) {
    Model m = swish_model(sigmoid_first);
    test::run_rules(m, "default+QuickGeluFusion");
    EXPECT_EQ(test::op_types(*m.graph), (std::vector<std::string>{"com.microsoft.QuickGelu"}));
    EXPECT_EQ(m.opset("com.microsoft"), 1);
  }
}

TEST_F(RewriteCustom, NotWhenTheSigmoidReadsAnotherValue) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId z = g.add_input("Z", ElemType::Float, Shape{2, 3});
  g.add_output(test::node(g, "Mul", {x, test::node(g, "Sigmoid", {z})}));
  test::run_rules(m, "QuickGeluFusion");
  EXPECT_EQ(test::op_types(*m.graph), (std::vector<std::string>{"Sigmoid", "Mul"}));
}

TEST_F(RewriteCustom, SameNumbers) {
  test::expect_same_outputs([] { return swish_model(true); }, "QuickGeluFusion", 1e-5);
}

TEST_F(RewriteCustom, DescribesItself) {
  EXPECT_EQ(quick_gelu_rule()->describe(),
            "QuickGeluFusion: commutative(Mul(x, Sigmoid(x))) -> com.microsoft.QuickGelu(x, alpha=1)  [P1]");
}
