// ConcatTwiceUnary: the exact op sequence after, one negative test per condition, and the same numbers
// before and after (xexp's evaluator and ONNX Runtime, float32, exactly: the rewrite is exact).
#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::op_types;
using test::run_rules;
using OpSeq = std::vector<std::string>;

// U(Concat(X, second, axis=1)) with U = op (Mul by a (1,) constant when op is "Mul").
static Model concat_twice_model(const std::string& op, bool same_halves = true, int64_t opset = 18) {
  Model m = test::model_with_opset(opset);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId second = same_halves ? x : g.add_input("Y", ElemType::Float, Shape{2, 3});
  ValueId concat = node(g, "Concat", {x, second}, {Attribute::make_int("axis", 1)}, "", opset);
  std::vector<ValueId> inputs{concat};
  if (op == "Mul") inputs.push_back(g.add_initializer("c", Tensor::from<float>({1}, {3.0f})));
  g.add_output(node(g, op, inputs, {}, "", opset));
  return m;
}

TEST(PatternConcatTwiceUnary, TheOpRunsOnOneHalf) {
  for (const char* op : {"Sigmoid", "Mul"}) {
    Model m = concat_twice_model(op);
    run_rules(m, "ConcatTwiceUnary");
    ASSERT_EQ(op_types(*m.graph), (OpSeq{op, "Concat"}));
    const Graph& g = *m.graph;
    const Node& concat = g.node(g.value(g.outputs()[0]).producer);
    EXPECT_EQ(concat.inputs[0], concat.inputs[1]);
    EXPECT_EQ(concat.attribute(Symbol("axis"))->i, 1);
    EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{2, 6}));
  }
}

TEST(PatternConcatTwiceUnary, NotWithTwoDifferentHalves) {
  Model m = concat_twice_model("Sigmoid", false);
  run_rules(m, "ConcatTwiceUnary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Concat", "Sigmoid"}));
}

TEST(PatternConcatTwiceUnary, NotBeforeOpset18) {
  Model m = concat_twice_model("Sigmoid", true, 17);
  run_rules(m, "ConcatTwiceUnary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Concat", "Sigmoid"}));
}

TEST(PatternConcatTwiceUnary, NotForAnOpReadingAnAxis) {
  Model m = concat_twice_model("Softmax");
  run_rules(m, "ConcatTwiceUnary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Concat", "Softmax"}));
}

TEST(PatternConcatTwiceUnary, SameNumbers) {
  test::expect_same_outputs([] { return concat_twice_model("Sigmoid"); }, "ConcatTwiceUnary");
  test::expect_same_outputs([] { return concat_twice_model("Mul"); }, "ConcatTwiceUnary");
}
