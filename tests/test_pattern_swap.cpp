// SwapUnary, Gelu, SwitchReshapeActivation, TransposeGather: the exact op sequence after, one negative
// test per condition, and the same numbers before and after (xexp's evaluator and ONNX Runtime, float32).
// Moving an element-wise op across a layout change and dropping a Transpose before a Gather compare
// exactly; Gelu's fused kernel evaluates the same tanh formula, rounded differently (1e-5).
#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::op_types;
using test::run_rules;
using OpSeq = std::vector<std::string>;

static Attribute perm(std::vector<int64_t> p) { return Attribute::make_ints("perm", std::move(p)); }
static const Node& output_producer(const Graph& g, std::size_t k = 0) {
  return g.node(g.value(g.outputs()[k]).producer);
}

// ---- SwapUnary ------------------------------------------------------------------------------------
struct SwapCase {
  std::string op = "Relu";
  Shape second_shape = {};   // shape of the second operand of a binary op
  bool reshape = false;      // Reshape(X, [3, 8]) instead of Transpose(perm=[1, 0, 2])
};
static Model swap_model(const SwapCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  ValueId layout = c.reshape ? node(g, "Reshape", {x, test::int64_initializer(g, "shape", {3, 8})})
                             : node(g, "Transpose", {x}, {perm({1, 0, 2})});
  std::vector<ValueId> inputs{layout};
  std::vector<Attribute> attributes;
  if (c.op == "Cast") attributes.push_back(Attribute::make_int("to", static_cast<int64_t>(ElemType::Double)));
  if (c.op == "Softmax") attributes.push_back(Attribute::make_int("axis", 0));
  if (c.op == "Mul" || c.op == "Sub") {
    std::vector<int64_t> dims = *static_dims(c.second_shape);
    std::vector<float> values(static_cast<std::size_t>(element_count(c.second_shape)), 1.5f);
    inputs.push_back(g.add_initializer("c", Tensor::from<float>(dims, values)));
  }
  g.add_output(node(g, c.op, inputs, attributes));
  return m;
}

TEST(PatternSwapUnary, UnaryOpMovesBeforeTheTranspose) {
  Model m = swap_model({});
  run_rules(m, "SwapUnary");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Relu", "Transpose"}));
  EXPECT_EQ(output_producer(*m.graph).attribute(Symbol("perm"))->ints, (std::vector<int64_t>{1, 0, 2}));
}

TEST(PatternSwapUnary, CastMovesBeforeTheReshapeAndKeepsItsType) {
  Model m = swap_model({.op = "Cast", .reshape = true});
  run_rules(m, "SwapUnary");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Cast", "Reshape"}));
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).elem, ElemType::Double);
}

TEST(PatternSwapUnary, BinaryOpWithAScalarMoves) {
  for (Shape s : {Shape{}, Shape{1}}) {
    Model m = swap_model({.op = "Sub", .second_shape = s});
    run_rules(m, "SwapUnary");
    EXPECT_EQ(op_types(*m.graph), (OpSeq{"Sub", "Transpose"}));
  }
}

TEST(PatternSwapUnary, NotWithANonScalarOperand) {
  Model m = swap_model({.op = "Mul", .second_shape = Shape{3, 2, 4}});
  run_rules(m, "SwapUnary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Transpose", "Mul"}));
}

TEST(PatternSwapUnary, NotForAnOpReadingAnAxis) {
  Model m = swap_model({.op = "Softmax"});
  run_rules(m, "SwapUnary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Transpose", "Softmax"}));
}

TEST(PatternSwapUnary, NotAfterAReshapeToRankZero) {
  // Add(Reshape(X(1,), []), c(1,)) has shape (1,); Reshape(Add(X, c), []) would have shape ().
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{1});
  ValueId scalar = node(g, "Reshape", {x, g.add_initializer("empty", Tensor::from<int64_t>({0}, {}))});
  g.add_output(node(g, "Mul", {scalar, g.add_initializer("c", Tensor::from<float>({1}, {2.0f}))}));
  run_rules(m, "SwapUnary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Reshape", "Mul"}));
}

TEST(PatternSwapUnary, SameNumbers) {
  test::expect_same_outputs([] { return swap_model({}); }, "SwapUnary");
  test::expect_same_outputs([] { return swap_model({.op = "Sub", .second_shape = Shape{1}}); }, "SwapUnary");
  test::expect_same_outputs([] { return swap_model({.op = "Cast", .reshape = true}); }, "SwapUnary");
}

// ---- Gelu -----------------------------------------------------------------------------------------
struct GeluCase {
  int64_t opset = 20;
  float cubic = 0.044715f;
  float sqrt_2_pi = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
};
static Model gelu_model(const GeluCase& c) {
  Model m = test::model_with_opset(c.opset);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{4, 8});
  auto cst = [&](const std::string& name, float v) { return g.add_initializer(name, Tensor::scalar<float>(v)); };
  auto n = [&](const std::string& op, std::vector<ValueId> in) { return node(g, op, std::move(in), {}, "", c.opset); };
  ValueId cube = n("Pow", {x, cst("three", 3.0f)});
  ValueId inner = n("Add", {x, n("Mul", {cube, cst("cubic", c.cubic)})});
  ValueId tanh = n("Tanh", {n("Mul", {inner, cst("sqrt_2_pi", c.sqrt_2_pi)})});
  ValueId tanh1 = n("Add", {tanh, cst("one", 1.0f)});
  g.add_output(n("Mul", {n("Mul", {x, cst("half", 0.5f)}), tanh1}));
  return m;
}

TEST(PatternGelu, TanhFormulaBecomesGelu) {
  Model m = gelu_model({});
  run_rules(m, "Gelu");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Gelu"}));
  EXPECT_EQ(output_producer(*m.graph).attribute(Symbol("approximate"))->s, "tanh");
}

// Constants rounded to float16 in a float32 model compute another function than Gelu's, by more than
// float32 rounds (2e-5): no default rule approximates, the nodes stay.
TEST(PatternGelu, Float16RoundedConstantsInAFloat32ModelStay) {
  Model m = gelu_model({.cubic = 0.044708251953125f, .sqrt_2_pi = 0.7978515625f});
  run_rules(m, "Gelu");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Pow", "Mul", "Add", "Mul", "Tanh", "Add", "Mul", "Mul"}));
}

TEST(PatternGelu, NotBeforeOpset20) {
  Model m = gelu_model({.opset = 18});
  run_rules(m, "Gelu");
  EXPECT_EQ(m.graph->node_count(), 8u);
}

TEST(PatternGelu, NotWithAnotherConstant) {
  Model m = gelu_model({.cubic = 0.05f});
  run_rules(m, "Gelu");
  EXPECT_EQ(m.graph->node_count(), 8u);
}

TEST(PatternGelu, SameNumbers) { test::expect_same_outputs([] { return gelu_model({}); }, "Gelu", 1e-5); }

// ---- SwitchReshapeActivation ----------------------------------------------------------------------
struct ActivationCase {
  std::string activation = "Relu";
  bool transpose = false;  // Transpose(perm=[1,0]) instead of Reshape(., [4, 6])
};
static Model activation_model(const ActivationCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 3, 4});
  ValueId b = g.add_input("B", ElemType::Float, Shape{4, 4});
  ValueId product = node(g, "MatMul", {a, b});
  ValueId layout = c.transpose ? node(g, "Transpose", {product}, {perm({2, 1, 0})})
                               : node(g, "Reshape", {product, test::int64_initializer(g, "shape", {6, 4})});
  g.add_output(node(g, c.activation, {layout}));
  return m;
}

TEST(PatternSwitchReshapeActivation, ActivationMovesNextToTheMatMul) {
  Model m = activation_model({});
  run_rules(m, "SwitchReshapeActivation");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"MatMul", "Relu", "Reshape"}));
  Model t = activation_model({.activation = "Tanh", .transpose = true});
  run_rules(t, "SwitchReshapeActivation");
  EXPECT_EQ(op_types(*t.graph), (OpSeq{"MatMul", "Tanh", "Transpose"}));
}

TEST(PatternSwitchReshapeActivation, NotForSoftmax) {
  Model m = activation_model({.activation = "Softmax"});
  run_rules(m, "SwitchReshapeActivation");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"MatMul", "Reshape", "Softmax"}));
}

TEST(PatternSwitchReshapeActivation, NotWithoutAProduct) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 3});
  g.add_output(node(g, "Relu", {node(g, "Transpose", {node(g, "Exp", {a})}, {perm({1, 0})})}));
  run_rules(m, "SwitchReshapeActivation");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Exp", "Transpose", "Relu"}));
}

TEST(PatternSwitchReshapeActivation, SameNumbers) {
  test::expect_same_outputs([] { return activation_model({}); }, "SwitchReshapeActivation");
  test::expect_same_outputs([] { return activation_model({.activation = "Tanh", .transpose = true}); },
                            "SwitchReshapeActivation");
}

// ---- TransposeGather ------------------------------------------------------------------------------
static Model transpose_gather_model(std::vector<int64_t> p, int64_t axis, bool scalar_index = true) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  ValueId index = scalar_index ? g.add_initializer("i", Tensor::scalar<int64_t>(1))
                               : test::int64_initializer(g, "i", {1});
  g.add_output(node(g, "Gather", {node(g, "Transpose", {x}, {perm(std::move(p))}), index},
                    {Attribute::make_int("axis", axis)}));
  return m;
}

TEST(PatternTransposeGather, GatherReadsTheUntransposedAxis) {
  Model m = transpose_gather_model({1, 0, 2}, 0);
  run_rules(m, "TransposeGather");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Gather"}));
  EXPECT_EQ(output_producer(*m.graph).attribute(Symbol("axis"))->i, 1);
  Model negative_axis = transpose_gather_model({0, 2, 1}, -1);
  run_rules(negative_axis, "TransposeGather");
  ASSERT_EQ(op_types(*negative_axis.graph), (OpSeq{"Gather"}));
  EXPECT_EQ(output_producer(*negative_axis.graph).attribute(Symbol("axis"))->i, 1);
}

TEST(PatternTransposeGather, NotWhenTheRemainingAxesAreReordered) {
  Model m = transpose_gather_model({0, 2, 1}, 0);
  run_rules(m, "TransposeGather");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Transpose", "Gather"}));
}

TEST(PatternTransposeGather, NotWithAOneDimensionalIndex) {
  Model m = transpose_gather_model({1, 0, 2}, 0, false);
  run_rules(m, "TransposeGather");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Transpose", "Gather"}));
}

TEST(PatternTransposeGather, SameNumbers) {
  test::expect_same_outputs([] { return transpose_gather_model({1, 0, 2}, 0); }, "TransposeGather");
  test::expect_same_outputs([] { return transpose_gather_model({0, 2, 1}, -1); }, "TransposeGather");
}
