// MulMulMulScalar, ExpandSwap, ConcatEmpty, CastCastBinary, SwapRangeAddScalar: the exact op sequence
// after, one negative test per condition, and the same numbers before and after (xexp's evaluator and
// ONNX Runtime). MulMulMulScalar reassociates float32 products (1e-5 holds for inputs in [-1, 1));
// CastCastBinary rounds once to float16 instead of twice (1e-3, one float16 ulp near 1); the others
// compare exactly.
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
// The constant the node computing the first output multiplies or divides by.
static const Tensor& output_scale(const Graph& g) {
  return *rewrite::constant_tensor(g, output_producer(g).inputs[1]);
}
static float output_scale_value(const Graph& g) {
  return static_cast<float>(eval::element_as_double(output_scale(g), 0));
}

// ---- MulMulMulScalar ------------------------------------------------------------------------------
struct MmmCase {
  std::string outer = "Mul", left = "Mul", right = "Div";
  bool constant = true;
  bool integers = false;
};
static Model mmm_model(const MmmCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  const ElemType t = c.integers ? ElemType::Int64 : ElemType::Float;
  ValueId x = g.add_input("X", t, Shape{2, 3});
  ValueId y = g.add_input("Y", t, Shape{2, 3});
  ValueId c1 = g.add_initializer("c1", c.integers ? Tensor::scalar<int64_t>(3) : Tensor::scalar<float>(3.0f));
  ValueId c2 = !c.constant  ? g.add_input("c2", t, Shape{1})
               : c.integers ? g.add_initializer("c2", Tensor::from<int64_t>({1}, {4}))
                            : g.add_initializer("c2", Tensor::from<float>({1}, {4.0f}));
  g.add_output(node(g, c.outer, {node(g, c.left, {x, c1}), node(g, c.right, {y, c2})}));
  return m;
}
// The chain ((X inner 3) * Y) outer 4, as RMSNorm backward writes X * -0.5 * rstd^3 / n.
struct ChainCase {
  std::string inner = "Mul", outer = "Div";
};
static Model chain_model(const ChainCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 1});
  ValueId y = g.add_input("Y", ElemType::Float, Shape{2, 3, 1});
  ValueId inner = node(g, c.inner, {x, g.add_initializer("c1", Tensor::scalar<float>(3.0f))});
  g.add_output(
      node(g, c.outer, {node(g, "Mul", {y, inner}), g.add_initializer("c2", Tensor::scalar<float>(4.0f))}));
  return m;
}

TEST(PatternMulMulMulScalar, ScalarsAreMultipliedOnce) {
  Model m = mmm_model({});
  run_rules(m, "MulMulMulScalar");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Mul", "Mul"}));
  EXPECT_EQ(output_scale(*m.graph).dims(), (std::vector<int64_t>{1}));
  EXPECT_FLOAT_EQ(output_scale_value(*m.graph), 0.75f);
  Model div = mmm_model({.outer = "Div", .left = "Div", .right = "Mul"});
  run_rules(div, "MulMulMulScalar");
  ASSERT_EQ(op_types(*div.graph), (OpSeq{"Div", "Mul"}));
  EXPECT_FLOAT_EQ(output_scale_value(*div.graph), 1.0f / 12.0f);
}

TEST(PatternMulMulMulScalar, NotWithANonConstantScalar) {
  Model m = mmm_model({.constant = false});
  run_rules(m, "MulMulMulScalar");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Mul", "Div", "Mul"}));
}

TEST(PatternMulMulMulScalar, IntegerDivisionsStay) {
  // x / 3 * (y * 4) is not x * y * (4 / 3) in integers; products alone reassociate exactly.
  Model div = mmm_model({.left = "Div", .right = "Mul", .integers = true});
  run_rules(div, "MulMulMulScalar");
  EXPECT_EQ(op_types(*div.graph), (OpSeq{"Div", "Mul", "Mul"}));
  Model mul = mmm_model({.right = "Mul", .integers = true});
  run_rules(mul, "MulMulMulScalar");
  ASSERT_EQ(op_types(*mul.graph), (OpSeq{"Mul", "Mul"}));
  EXPECT_EQ(eval::as_int64s(output_scale(*mul.graph)), (std::vector<int64_t>{12}));
}

TEST(PatternMulMulMulScalar, ChainMultipliesOnce) {
  Model m = chain_model({});
  run_rules(m, "MulMulMulScalar");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Mul", "Mul"}));
  const Graph& g = *m.graph;
  const Node& scale = output_producer(g);
  const Node& product = g.node(g.value(scale.inputs[0]).producer);
  EXPECT_EQ(product.inputs, (std::vector<ValueId>{g.at("X"), g.at("Y")}));
  EXPECT_EQ(output_scale(g).rank(), 0u);
  EXPECT_FLOAT_EQ(output_scale_value(g), 0.75f);
  Model div = chain_model({.inner = "Div", .outer = "Mul"});
  run_rules(div, "MulMulMulScalar");
  ASSERT_EQ(op_types(*div.graph), (OpSeq{"Mul", "Mul"}));
  EXPECT_FLOAT_EQ(output_scale_value(*div.graph), 4.0f / 3.0f);
}

TEST(PatternMulMulMulScalar, SameNumbers) {
  // Reassociated products differ in the last bits.
  test::expect_same_outputs([] { return mmm_model({}); }, "MulMulMulScalar", 1e-5);
  test::expect_same_outputs([] { return mmm_model({.outer = "Div", .left = "Div", .right = "Mul"}); },
                            "MulMulMulScalar", 1e-5);
  test::expect_same_outputs([] { return chain_model({}); }, "MulMulMulScalar", 1e-5);
  test::expect_same_outputs([] { return chain_model({.inner = "Div", .outer = "Mul"}); }, "MulMulMulScalar",
                            1e-5);
}

// ---- ExpandSwap -----------------------------------------------------------------------------------
static Model expand_swap_model(const std::string& op) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{1, 4});
  ValueId expanded = node(g, "Expand", {x, int64_initializer(g, "shape", {3, 4})});
  std::vector<ValueId> inputs{expanded};
  if (op == "Pow") inputs.push_back(g.add_initializer("two", Tensor::scalar<float>(2.0f)));
  if (op == "Mul") inputs.push_back(g.add_input("Y", ElemType::Float, Shape{3, 4}));
  g.add_output(node(g, op, inputs));
  return m;
}

TEST(PatternExpandSwap, TheOpRunsOnTheSmallTensor) {
  for (const char* op : {"Exp", "Pow"}) {
    Model m = expand_swap_model(op);
    run_rules(m, "ExpandSwap");
    EXPECT_EQ(op_types(*m.graph), (OpSeq{op, "Expand"}));
    EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).shape, (Shape{3, 4}));
  }
}

TEST(PatternExpandSwap, NotForABinaryOpWithATensor) {
  Model m = expand_swap_model("Mul");
  run_rules(m, "ExpandSwap");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Expand", "Mul"}));
}

TEST(PatternExpandSwap, SameNumbers) {
  test::expect_same_outputs([] { return expand_swap_model("Exp"); }, "ExpandSwap");
  test::expect_same_outputs([] { return expand_swap_model("Pow"); }, "ExpandSwap");
}

// ---- ConcatEmpty ----------------------------------------------------------------------------------
static Model concat_model(std::vector<Shape> shapes, int64_t axis) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  std::vector<ValueId> parts;
  for (std::size_t k = 0; k < shapes.size(); ++k)
    parts.push_back(g.add_input(std::string("X") + std::to_string(k), ElemType::Float, shapes[k]));
  g.add_output(node(g, "Concat", parts, {Attribute::make_int("axis", axis)}));
  return m;
}

TEST(PatternConcatEmpty, EmptyPartsAreDropped) {
  Model m = concat_model({{2, 3}, {2, 0}, {2, 4}}, -1);
  run_rules(m, "ConcatEmpty");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Concat"}));
  EXPECT_EQ(output_producer(*m.graph).inputs.size(), 2u);
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).shape, (Shape{2, 7}));
}

TEST(PatternConcatEmpty, OneRemainingPartReplacesTheConcat) {
  Model m = concat_model({{0, 3}, {2, 3}}, 0);
  run_rules(m, "ConcatEmpty");
  const Graph& g = *m.graph;
  EXPECT_EQ(op_types(g), (OpSeq{"Identity"}));  // keeps the graph output's name
  EXPECT_EQ(g.value(output_producer(g).inputs[0]).name, "X1");
}

TEST(PatternConcatEmpty, NotWhenNothingIsEmptyOnTheAxis) {
  Model m = concat_model({{0, 3}, {0, 4}}, 1);
  run_rules(m, "ConcatEmpty");
  EXPECT_EQ(output_producer(*m.graph).inputs.size(), 2u);
}

TEST(PatternConcatEmpty, SameNumbers) {
  test::expect_same_outputs([] { return concat_model({{2, 3}, {2, 0}, {2, 4}}, -1); }, "ConcatEmpty");
}

// ---- CastCastBinary -------------------------------------------------------------------------------
static Model cast_binary_model(ElemType from, ElemType to, ElemType other_from) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", from, Shape{2, 3});
  ValueId b = g.add_input("B", other_from, Shape{2, 3});
  const Attribute cast = Attribute::make_int("to", static_cast<int64_t>(to));
  g.add_output(node(g, "Mul", {node(g, "Cast", {a}, {cast}), node(g, "Cast", {b}, {cast})}));
  return m;
}

TEST(PatternCastCastBinary, OneCastAfterTheOp) {
  Model m = cast_binary_model(ElemType::Float, ElemType::Float16, ElemType::Float);
  run_rules(m, "CastCastBinary");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Mul", "Cast"}));
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).elem, ElemType::Float16);
}

TEST(PatternCastCastBinary, NotWhenTheInputsAreLessPrecise) {
  Model m = cast_binary_model(ElemType::Float16, ElemType::Float, ElemType::Float16);
  run_rules(m, "CastCastBinary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Cast", "Cast", "Mul"}));
}

TEST(PatternCastCastBinary, NotFromIntegers) {
  Model m = cast_binary_model(ElemType::Int64, ElemType::Float, ElemType::Int64);
  run_rules(m, "CastCastBinary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Cast", "Cast", "Mul"}));
}

TEST(PatternCastCastBinary, NotWhenTheInputTypesDiffer) {
  Model m = cast_binary_model(ElemType::Double, ElemType::Float16, ElemType::Float);
  run_rules(m, "CastCastBinary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Cast", "Cast", "Mul"}));
}

TEST(PatternCastCastBinary, SameNumbersWithinOneFloat16Ulp) {
  test::expect_same_outputs(
      [] { return cast_binary_model(ElemType::Float, ElemType::Float16, ElemType::Float); }, "CastCastBinary",
      1e-3);
}

// ---- SwapRangeAddScalar ---------------------------------------------------------------------------
static Model range_model(ElemType type, Shape plus_shape) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  auto scalar = [&](const std::string& name, double v) {
    return g.add_initializer(name, eval::filled(type, {}, v));
  };
  ValueId n = g.add_input("N", ElemType::Int64, Shape{1});
  ValueId limit =
      node(g, "Cast", {node(g, "Squeeze", {n})}, {Attribute::make_int("to", static_cast<int64_t>(type))});
  ValueId range = node(g, "Range", {scalar("start", 2), limit, scalar("delta", 3)});
  std::vector<int64_t> dims = *static_dims(plus_shape);
  g.add_output(node(g, "Add", {range, g.add_initializer("plus", eval::filled(type, dims, 5))}));
  return m;
}

TEST(PatternSwapRangeAddScalar, ThePlusMovesIntoTheBounds) {
  Model m = range_model(ElemType::Int64, {});
  run_rules(m, "SwapRangeAddScalar");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Squeeze", "Cast", "Add", "Add", "Range"}));
  Model vector_plus = range_model(ElemType::Int64, {1});
  run_rules(vector_plus, "SwapRangeAddScalar");
  EXPECT_EQ(op_types(*vector_plus.graph), (OpSeq{"Squeeze", "Cast", "Squeeze", "Add", "Add", "Range"}));
}

TEST(PatternSwapRangeAddScalar, NotInFloatingPoint) {
  Model m = range_model(ElemType::Float, {});
  run_rules(m, "SwapRangeAddScalar");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Squeeze", "Cast", "Range", "Add"}));
}

TEST(PatternSwapRangeAddScalar, NotWithAVector) {
  Model m = range_model(ElemType::Int64, {2});
  run_rules(m, "SwapRangeAddScalar");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Squeeze", "Cast", "Range", "Add"}));
}

TEST(PatternSwapRangeAddScalar, SameNumbers) {
  test::expect_same_outputs([] { return range_model(ElemType::Int64, {}); }, "SwapRangeAddScalar");
  test::expect_same_outputs([] { return range_model(ElemType::Int32, {1}); }, "SwapRangeAddScalar");
}
