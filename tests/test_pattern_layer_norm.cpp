// LayerNormalization (the decomposed ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div chain, axes as an
// attribute at opset 17 and as an input at 18) and LayerNormalizationScale (Mul and Add after it).
// The fused op computes the same formula in one kernel: float32 results agree within atol 1e-5.
#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::op_types;
using test::run_rules;
using Ops = std::vector<std::string>;

struct Decomposed {
  int64_t opset = 18;
  std::vector<int64_t> axes = {-1};
  bool with_eps = true;
  bool scale_and_bias = false;
  float pow = 2.f;
  bool d_used_outside = false;
};

static ValueId reduce_mean(Graph& g, ValueId x, const std::vector<int64_t>& axes, int64_t opset) {
  if (opset >= 18) {
    std::string name = g.unique_value_name("axes");
    return node(g, "ReduceMean", {x, test::int64_initializer(g, name, axes)}, {}, "", opset);
  }
  return node(g, "ReduceMean", {x}, {Attribute::make_ints("axes", axes)}, "", opset);
}

static Model decomposed(const Decomposed& c) {
  Model m = test::model_with_opset(c.opset);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 8});
  ValueId d = node(g, "Sub", {x, reduce_mean(g, x, c.axes, c.opset)}, {}, "", c.opset);
  ValueId var = reduce_mean(g, node(g, "Pow", {d, g.add_initializer("two", Tensor::scalar<float>(c.pow))}), c.axes, c.opset);
  if (c.with_eps) var = node(g, "Add", {var, g.add_initializer("eps", Tensor::scalar<float>(1e-5f))});
  ValueId y = node(g, "Div", {d, node(g, "Sqrt", {var})});
  if (c.scale_and_bias) {
    std::vector<float> s, b;
    for (int k = 0; k < 8; ++k) {
      s.push_back(0.5f + 0.1f * static_cast<float>(k));
      b.push_back(0.25f * static_cast<float>(k) - 1.f);
    }
    y = node(g, "Mul", {y, g.add_initializer("scale", Tensor::from<float>({8}, s))});
    y = node(g, "Add", {g.add_initializer("bias", Tensor::from<float>({8}, b)), y});
  }
  g.add_output(y);
  if (c.d_used_outside) g.add_output(node(g, "Neg", {d}));
  return m;
}

TEST(PatternLayerNormalization, ChainBecomesOneNode) {
  for (int64_t opset : {17, 18}) {
    Model m = decomposed({.opset = opset});
    run_rules(m, "LayerNormalization");
    ASSERT_EQ(op_types(*m.graph), (Ops{"LayerNormalization"})) << opset;
    const Node& n = m.graph->node(m.graph->first_node());
    EXPECT_EQ(n.attribute(Symbol("axis"))->i, 2);
    EXPECT_EQ(n.attribute(Symbol("epsilon"))->f, 1e-5f);
  }
}

TEST(PatternLayerNormalization, WithoutEpsilon) {
  Model m = decomposed({.with_eps = false});
  run_rules(m, "LayerNormalization");
  ASSERT_EQ(op_types(*m.graph), (Ops{"LayerNormalization"}));
  EXPECT_EQ(m.graph->node(m.graph->first_node()).attribute(Symbol("epsilon"))->f, 0.f);
}

TEST(PatternLayerNormalization, NotBeforeOpset17) {
  Model m = decomposed({.opset = 16});
  run_rules(m, "LayerNormalization");
  EXPECT_EQ(op_types(*m.graph).size(), 7u);
}

TEST(PatternLayerNormalization, NotOverLeadingAxes) {
  Model m = decomposed({.axes = {1}});
  run_rules(m, "LayerNormalization");
  EXPECT_EQ(op_types(*m.graph).size(), 7u);
}

TEST(PatternLayerNormalization, NotForAnotherPower) {
  Model m = decomposed({.pow = 3.f});
  run_rules(m, "LayerNormalization");
  EXPECT_EQ(op_types(*m.graph).size(), 7u);
}

TEST(PatternLayerNormalization, NotWhenTheCenteredValueIsUsedOutside) {
  Model m = decomposed({.d_used_outside = true});
  run_rules(m, "LayerNormalization");
  EXPECT_EQ(op_types(*m.graph).size(), 8u);
}

TEST(PatternLayerNormalization, ScaleAndBiasAreFusedToo) {
  Model m = decomposed({.scale_and_bias = true});
  run_rules(m, "LayerNormalization,LayerNormalizationScale");
  EXPECT_EQ(op_types(*m.graph), (Ops{"LayerNormalization"}));
}

TEST(PatternLayerNormalization, SameNumbers) {
  test::expect_same_outputs([] { return decomposed({.opset = 17, .axes = {2}}); }, "LayerNormalization");
  test::expect_same_outputs([] { return decomposed({.scale_and_bias = true}); }, "default");
}
