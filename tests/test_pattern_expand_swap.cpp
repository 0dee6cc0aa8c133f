// ShapeBasedExpandSwap, ShapeBasedExpandBroadcastMatMul, SwapUnsqueezeTranspose: the exact op sequence after, one negative test
// per condition, and the same numbers before and after (xexp's evaluator and ONNX Runtime, float32,
// exactly). None of these rewrites changes arithmetic.
#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::int64_initializer;
using test::node;
using test::op_types;
using test::run_rules;
using OpSeq = std::vector<std::string>;

static const Node& output_producer(const Graph& g) { return g.node(g.value(g.outputs()[0]).producer); }

// ---- ShapeBasedExpandSwap -------------------------------------------------------------------------
static Model expand_swap_model(Shape y_shape, bool expand_left) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{1, 4});
  ValueId y = g.add_input("Y", ElemType::Float, y_shape);
  ValueId e = node(g, "Expand", {x, int64_initializer(g, "shape", {3, 4})});
  g.add_output(node(g, "Sub", expand_left ? std::vector<ValueId>{e, y} : std::vector<ValueId>{y, e}));
  return m;
}

TEST(PatternShapeBasedExpandSwap, TheOpRunsBeforeTheExpand) {
  for (bool left : {true, false}) {
    Model m = expand_swap_model({1, 4}, left);
    run_rules(m, "ShapeBasedExpandSwap");
    ASSERT_EQ(op_types(*m.graph), (OpSeq{"Sub", "Expand"}));
    const Graph& g = *m.graph;
    const Node& sub = g.node(g.value(output_producer(g).inputs[0]).producer);
    EXPECT_EQ(g.value(sub.inputs[left ? 0 : 1]).name, "X");
    EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{3, 4}));
  }
}

TEST(PatternShapeBasedExpandSwap, NotWhenTheOtherOperandHasTheFullShape) {
  Model m = expand_swap_model({3, 4}, true);
  run_rules(m, "ShapeBasedExpandSwap");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Expand", "Sub"}));
}

TEST(PatternShapeBasedExpandSwap, SameNumbers) {
  test::expect_same_outputs([] { return expand_swap_model({1, 4}, true); }, "ShapeBasedExpandSwap");
  test::expect_same_outputs([] { return expand_swap_model({1, 4}, false); }, "ShapeBasedExpandSwap");
}

// ---- ShapeBasedExpandBroadcastMatMul --------------------------------------------------------------
// MatMul(A, B) with the Expand to `target` on A (or on B).
static Model matmul_model(Shape a_shape, Shape b_shape, std::vector<int64_t> target, bool expand_a) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, a_shape);
  ValueId b = g.add_input("B", ElemType::Float, b_shape);
  ValueId shape = int64_initializer(g, "target", target);
  if (expand_a) a = node(g, "Expand", {a, shape});
  else b = node(g, "Expand", {b, shape});
  g.add_output(node(g, "MatMul", {a, b}));
  return m;
}

TEST(PatternShapeBasedExpandBroadcastMatMul, MatMulBroadcastsTheBatch) {
  Model m = matmul_model({1, 3, 4}, {5, 4, 2}, {5, 3, 4}, true);
  run_rules(m, "ShapeBasedExpandBroadcastMatMul");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"MatMul"}));
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).shape, (Shape{5, 3, 2}));
  Model right = matmul_model({5, 3, 4}, {1, 4, 2}, {5, 4, 2}, false);
  run_rules(right, "ShapeBasedExpandBroadcastMatMul");
  EXPECT_EQ(op_types(*right.graph), (OpSeq{"MatMul"}));
}

TEST(PatternShapeBasedExpandBroadcastMatMul, NotWhenOnlyTheExpandGivesABatchDimension) {
  Model m = matmul_model({1, 3, 4}, {1, 4, 2}, {5, 3, 4}, true);
  run_rules(m, "ShapeBasedExpandBroadcastMatMul");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Expand", "MatMul"}));
}

TEST(PatternShapeBasedExpandBroadcastMatMul, NotWhenTheExpandChangesTheMatrix) {
  Model m = matmul_model({5, 1, 4}, {5, 4, 2}, {5, 3, 4}, true);
  run_rules(m, "ShapeBasedExpandBroadcastMatMul");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Expand", "MatMul"}));
}

TEST(PatternShapeBasedExpandBroadcastMatMul, SameNumbers) {
  test::expect_same_outputs([] { return matmul_model({1, 3, 4}, {5, 4, 2}, {5, 3, 4}, true); },
                            "ShapeBasedExpandBroadcastMatMul");
  test::expect_same_outputs([] { return matmul_model({5, 3, 4}, {1, 4, 2}, {5, 4, 2}, false); },
                            "ShapeBasedExpandBroadcastMatMul");
}

// ---- SwapUnsqueezeTranspose -----------------------------------------------------------------------
// Transpose(Unsqueeze(X(2, 3, 4), [1]), perm).
static Model unsqueeze_transpose_model(std::vector<int64_t> perm) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  ValueId u = node(g, "Unsqueeze", {x, int64_initializer(g, "axes", {1})});
  g.add_output(node(g, "Transpose", {u}, {Attribute::make_ints("perm", std::move(perm))}));
  return m;
}

TEST(PatternSwapUnsqueezeTranspose, TheTransposeRunsOnTheSmallerRank) {
  Model m = unsqueeze_transpose_model({3, 1, 0, 2});
  run_rules(m, "SwapUnsqueezeTranspose");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Transpose", "Unsqueeze"}));
  const Graph& g = *m.graph;
  const Node& transpose = g.node(g.value(output_producer(g).inputs[0]).producer);
  EXPECT_EQ(transpose.attribute(Symbol("perm"))->ints, (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{4, 1, 2, 3}));
}

TEST(PatternSwapUnsqueezeTranspose, NotWhenTheInsertedAxisMoves) {
  Model m = unsqueeze_transpose_model({1, 0, 2, 3});
  run_rules(m, "SwapUnsqueezeTranspose");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Unsqueeze", "Transpose"}));
}

TEST(PatternSwapUnsqueezeTranspose, SameNumbers) {
  test::expect_same_outputs([] { return unsqueeze_transpose_model({3, 1, 0, 2}); }, "SwapUnsqueezeTranspose");
}
