// MulMulMatMul, Sub1Mul, WhereAdd, LeakyRelu: the exact op sequence after, one negative test per
// condition, and the same numbers before and after (xexp's evaluator and ONNX Runtime). MulMulMatMul and
// Sub1Mul reorder float32 arithmetic (they differ in the last bits): 1e-5 still holds for inputs in
// [-1, 1); the others compare exactly.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::op_types;
using test::OpList;
using test::run_rules;

static ValueId scalar(Graph& g, const std::string& name, float v, bool constant = true) {
  return constant ? g.add_initializer(name, Tensor::scalar<float>(v)) : g.add_input(name, ElemType::Float, Shape{});
}

// ---- MulMulMatMul ---------------------------------------------------------------------------------
static Model mul_mul_matmul_model(bool constant_scales, bool scale_first) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{3, 4});
  ValueId b = g.add_input("B", ElemType::Float, Shape{4, 5});
  ValueId c = scalar(g, "c", 0.5f, constant_scales), d = scalar(g, "d", 3.0f);
  ValueId left = node(g, "Mul", scale_first ? std::vector<ValueId>{c, a} : std::vector<ValueId>{a, c});
  g.add_output(node(g, "MatMul", {left, node(g, "Mul", {b, d})}));
  return m;
}

TEST(PatternMulMulMatMul, ScalesMoveAfterTheMatMul) {
  Model m = mul_mul_matmul_model(true, true);
  run_rules(m, "MulMulMatMul");
  ASSERT_EQ(op_types(*m.graph), (OpList{"MatMul", "Mul"}));
  const Graph& g = *m.graph;
  const Node& mul = g.node(g.value(g.outputs()[0]).producer);
  EXPECT_EQ(eval::as_doubles(*rewrite::constant_tensor(g, mul.inputs[1])), (std::vector<double>{1.5}));
}

TEST(PatternMulMulMatMul, NotWhenAScaleIsNotConstant) {
  Model m = mul_mul_matmul_model(false, false);
  run_rules(m, "MulMulMatMul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Mul", "Mul", "MatMul"}));
}

TEST(PatternMulMulMatMul, SameNumbers) {
  test::expect_same_outputs([] { return mul_mul_matmul_model(true, false); }, "MulMulMatMul", 1e-5);
}

// ---- Sub1Mul --------------------------------------------------------------------------------------
static Model sub1_mul_model(float one) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId y = g.add_input("Y", ElemType::Float, Shape{2, 3});
  g.add_output(node(g, "Mul", {y, node(g, "Sub", {scalar(g, "one", one), x})}));
  return m;
}

TEST(PatternSub1Mul, BecomesYMinusXY) {
  Model m = sub1_mul_model(1.0f);
  run_rules(m, "Sub1Mul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Mul", "Sub"}));
}

TEST(PatternSub1Mul, NotWithAnotherConstant) {
  Model m = sub1_mul_model(2.0f);
  run_rules(m, "Sub1Mul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Sub", "Mul"}));
}

TEST(PatternSub1Mul, SameNumbers) { test::expect_same_outputs([] { return sub1_mul_model(1.0f); }, "Sub1Mul", 1e-5); }

// ---- WhereAdd -------------------------------------------------------------------------------------
static Model where_add_model(float zero, float inf) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId mask = g.add_input("M", ElemType::Bool, Shape{2, 3});
  ValueId where = node(g, "Where", {mask, scalar(g, "zero", zero), scalar(g, "inf", inf)});
  g.add_output(node(g, "Add", {where, x}));
  return m;
}

TEST(PatternWhereAdd, TheMaskSelects) {
  for (float inf : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}) {
    Model m = where_add_model(0.0f, inf);
    run_rules(m, "WhereAdd");
    ASSERT_EQ(op_types(*m.graph), (OpList{"Where"}));
    EXPECT_EQ(m.graph->value(m.graph->node(m.graph->first_node()).inputs[1]).name, "X");
  }
}

TEST(PatternWhereAdd, NotWhenTheFirstBranchIsNotZero) {
  Model m = where_add_model(1.0f, -std::numeric_limits<float>::infinity());
  run_rules(m, "WhereAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Where", "Add"}));
}

TEST(PatternWhereAdd, NotWhenTheSecondBranchIsFinite) {
  Model m = where_add_model(0.0f, -1e9f);
  run_rules(m, "WhereAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Where", "Add"}));
}

TEST(PatternWhereAdd, SameNumbers) {
  test::expect_same_outputs([] { return where_add_model(0.0f, -std::numeric_limits<float>::infinity()); }, "WhereAdd");
}

// ---- LeakyRelu ------------------------------------------------------------------------------------
static Model leaky_relu_model(float zero, bool constant_slope) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{3, 4});
  ValueId greater = node(g, "Greater", {x, scalar(g, "zero", zero)});
  ValueId scaled = node(g, "Mul", {scalar(g, "slope", 0.01f, constant_slope), x});
  g.add_output(node(g, "Where", {greater, x, scaled}));
  return m;
}

TEST(PatternLeakyRelu, BecomesLeakyRelu) {
  Model m = leaky_relu_model(0.0f, true);
  run_rules(m, "LeakyRelu");
  ASSERT_EQ(op_types(*m.graph), (OpList{"LeakyRelu"}));
  EXPECT_EQ(m.graph->node(m.graph->first_node()).attribute(Symbol("alpha"))->f, 0.01f);
}

TEST(PatternLeakyRelu, NotWithAnotherThreshold) {
  Model m = leaky_relu_model(0.5f, true);
  run_rules(m, "LeakyRelu");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Greater", "Mul", "Where"}));
}

TEST(PatternLeakyRelu, NotWithASlopeComputedAtRunTime) {
  Model m = leaky_relu_model(0.0f, false);
  run_rules(m, "LeakyRelu");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Greater", "Mul", "Where"}));
}

TEST(PatternLeakyRelu, SameNumbers) { test::expect_same_outputs([] { return leaky_relu_model(0.0f, true); }, "LeakyRelu"); }
