// MulMulMatMul, Sub1Mul, WhereAdd, ScaledWhere, LeakyRelu, ReduceSumToMean, SwitchOrderBinary (reassociates
// float sums and products too: 1e-5), ReduceArgTopK: the exact op sequence after, one negative test per
// condition, and the same numbers before and after (xexp's evaluator and ONNX Runtime). MulMulMatMul and
// Sub1Mul reorder float32 arithmetic, ReduceSumToMean divides where the model multiplies (they differ in the
// last bits): 1e-5 still holds for inputs in [-1, 1); the others compare exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>

#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::constant_ints;
using test::input_name;
using test::node;
using test::op_types;
using test::OpList;
using test::producer;
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

// torch's SiLU backward, y * (1 - Sigmoid(y)): 1 - Sigmoid(y) is exact where Sigmoid(y) is close to 1.
TEST(PatternSub1Mul, NotOnTheComplementOfASigmoid) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId y = g.add_input("Y", ElemType::Float, Shape{2, 3});
  g.add_output(node(g, "Mul", {y, node(g, "Sub", {scalar(g, "one", 1.0f), node(g, "Sigmoid", {y})})}));
  run_rules(m, "Sub1Mul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Sigmoid", "Sub", "Mul"}));
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

// ---- ScaledWhere ---------------------------------------------------------------------------------
// op(Where(M, X, fill), s), or Where(M, fill, X) when `fill_first`, op Div or Mul.
static Model scaled_where_model(const char* op, bool fill_first, bool one_scale = true) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  const ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  const ValueId mask = g.add_input("M", ElemType::Bool, Shape{2, 3});
  const ValueId fill = scalar(g, "fill", -1e30f);
  const ValueId where = node(
      g, "Where", fill_first ? std::vector<ValueId>{mask, fill, x} : std::vector<ValueId>{mask, x, fill});
  const Tensor scale =
      one_scale ? Tensor::scalar<float>(4.f) : Tensor::from<float>({2, 3}, {4.f, 4.f, 4.f, 2.f, 2.f, 2.f});
  g.add_output(node(g, op, {where, g.add_initializer("s", scale)}));
  return m;
}

TEST(PatternScaledWhere, TheScaleMovesOntoBothBranches) {
  for (const char* op : {"Div", "Mul"})
    for (bool fill_first : {false, true}) {
      Model m = scaled_where_model(op, fill_first);
      run_rules(m, "ScaledWhere");
      const Graph& g = *m.graph;
      ASSERT_EQ(op_types(g), (OpList{op, op, "Where"})) << op;
      const Node& where = test::only_node(g, "Where");
      const Node& scaled_x = producer(g, where.inputs[fill_first ? 2 : 1]);
      const Node& scaled_fill = producer(g, where.inputs[fill_first ? 1 : 2]);
      EXPECT_EQ(input_name(g, scaled_x, 0), "X");
      EXPECT_EQ(input_name(g, scaled_fill, 0), "fill");
      EXPECT_EQ(input_name(g, scaled_x, 1), "s");
      EXPECT_EQ(input_name(g, scaled_fill, 1), "s");  // of constants: folded (the rule's positive case)
      test::expect_same_outputs([&] { return scaled_where_model(op, fill_first); }, "ScaledWhere", 0);
    }
}

TEST(PatternScaledWhere, NotForAScaleOfMoreThanOneElement) {
  Model m = scaled_where_model("Div", false, false);
  run_rules(m, "ScaledWhere");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Where", "Div"}));
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

// ---- ReduceSumToMean ------------------------------------------------------------------------------
// S = ReduceSum(Z(2, 3, reduced), axes=[2], keepdims=1) scaled by c. `form`: S * c, (S * P) * c with
// P(2, 3, 1), or A + X * ((S * P) * c) with A, X (2, 3, 4) (an RMSNorm backward).
enum class SumForm { Scaled, ScaledProduct, AddedProduct };
static Model reduce_sum_scaled_model(float c, SumForm form, int64_t opset = 18, Dim reduced = Dim(4)) {
  Model m = test::model_with_opset(opset);
  Graph& g = *m.graph;
  ValueId z = g.add_input("Z", ElemType::Float, Shape{2, 3, reduced});
  std::vector<Attribute> keep{Attribute::make_int("keepdims", 1)};
  ValueId sum = opset >= 13 ? node(g, "ReduceSum", {z, test::int64_initializer(g, "axes", {2})}, keep)
                            : node(g, "ReduceSum", {z}, {keep[0], Attribute::make_ints("axes", {2})});
  if (form == SumForm::Scaled) {
    g.add_output(node(g, "Mul", {sum, scalar(g, "c", c)}));
    return m;
  }
  ValueId p = g.add_input("P", ElemType::Float, Shape{2, 3, 1});
  ValueId scaled = node(g, "Mul", {node(g, "Mul", {sum, p}), scalar(g, "c", c)});
  if (form == SumForm::ScaledProduct) {
    g.add_output(scaled);
    return m;
  }
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 3, 4});
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  g.add_output(node(g, "Add", {a, node(g, "Mul", {x, scaled})}));
  return m;
}

TEST(PatternReduceSumToMean, AScaledSumIsAMean) {
  Model m = reduce_sum_scaled_model(0.25f, SumForm::Scaled);
  run_rules(m, "ReduceSumToMean");
  ASSERT_EQ(op_types(*m.graph), (OpList{"ReduceMean"}));
  const Graph& g = *m.graph;
  const Node& mean = g.node(g.value(g.outputs()[0]).producer);
  const Tensor* axes = rewrite::constant_tensor(g, mean.inputs[1]);  // an input from opset 18
  ASSERT_NE(axes, nullptr);
  EXPECT_EQ(std::vector<int64_t>(axes->data<int64_t>().begin(), axes->data<int64_t>().end()),
            (std::vector<int64_t>{2}));
  EXPECT_EQ(mean.attribute(Symbol("keepdims"))->i, 1);
}

TEST(PatternReduceSumToMean, AFactorRoundedToItsTypeCounts) {
  Model m = reduce_sum_scaled_model(1.f / 3, SumForm::Scaled, 18, Dim(3));  // 1/3 is not a float
  run_rules(m, "ReduceSumToMean");
  EXPECT_EQ(op_types(*m.graph), (OpList{"ReduceMean"}));
}

TEST(PatternReduceSumToMean, AxesStayAnAttributeBeforeOpset18) {
  Model m = reduce_sum_scaled_model(0.25f, SumForm::Scaled, 17);
  run_rules(m, "ReduceSumToMean");
  ASSERT_EQ(op_types(*m.graph), (OpList{"ReduceMean"}));
  const Graph& g = *m.graph;
  const Node& mean = g.node(g.value(g.outputs()[0]).producer);
  EXPECT_EQ(mean.inputs.size(), 1u);
  EXPECT_EQ(mean.attribute(Symbol("axes"))->ints, (std::vector<int64_t>{2}));
}

TEST(PatternReduceSumToMean, InAProduct) {
  Model m = reduce_sum_scaled_model(0.25f, SumForm::ScaledProduct);
  run_rules(m, "ReduceSumToMean");
  EXPECT_EQ(op_types(*m.graph), (OpList{"ReduceMean", "Mul"}));
}

TEST(PatternReduceSumToMean, ANegativeFactorMakesTheAddASub) {
  Model m = reduce_sum_scaled_model(-0.25f, SumForm::AddedProduct);
  run_rules(m, "ReduceSumToMean");
  ASSERT_EQ(op_types(*m.graph), (OpList{"ReduceMean", "Mul", "Mul", "Sub"}));
  const Graph& g = *m.graph;
  EXPECT_EQ(g.value(g.node(g.value(g.outputs()[0]).producer).inputs[0]).name, "A");
}

TEST(PatternReduceSumToMean, NotWithAnotherFactor) {
  for (float c : {1.f / 3, 0.5f, -0.25f}) {  // -1/N needs the Add to take the sign
    Model m = reduce_sum_scaled_model(c, SumForm::ScaledProduct);
    run_rules(m, "ReduceSumToMean");
    EXPECT_EQ(op_types(*m.graph), (OpList{"ReduceSum", "Mul", "Mul"})) << c;
  }
}

TEST(PatternReduceSumToMean, NotOverADynamicAxis) {
  Model m = reduce_sum_scaled_model(0.25f, SumForm::Scaled, 18, Dim::symbolic("n"));
  run_rules(m, "ReduceSumToMean");
  EXPECT_EQ(op_types(*m.graph), (OpList{"ReduceSum", "Mul"}));
}

// LayerNorm's backward: (R / n) * (m * G - ReduceSum(G) - Y * ReduceSum(H)), G, Y, H (2, 3, 4) summed
// over the last axis, R (2, 3, 1).
static Model layer_norm_backward_model(float n, float m_factor) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId grad = g.add_input("G", ElemType::Float, Shape{2, 3, 4});
  ValueId y = g.add_input("Y", ElemType::Float, Shape{2, 3, 4});
  ValueId h = g.add_input("H", ElemType::Float, Shape{2, 3, 4});
  ValueId r = g.add_input("R", ElemType::Float, Shape{2, 3, 1});
  std::vector<Attribute> keep{Attribute::make_int("keepdims", 1)};
  ValueId axes = test::int64_initializer(g, "axes", {-1});
  auto sum = [&](ValueId v) { return node(g, "ReduceSum", {v, axes}, keep); };
  ValueId scaled = node(g, "Sub", {node(g, "Mul", {scalar(g, "m", m_factor), grad}), sum(grad)});
  ValueId centered = node(g, "Sub", {scaled, node(g, "Mul", {y, sum(h)})});
  g.add_output(node(g, "Mul", {node(g, "Div", {r, scalar(g, "n", n)}), centered}));
  return m;
}

TEST(PatternReduceSumToMean, LayerNormBackwardLosesItsCounts) {
  Model m = layer_norm_backward_model(4, 4);
  run_rules(m, "ReduceSumToMean");
  EXPECT_EQ(op_types(*m.graph), (OpList{"ReduceMean", "Sub", "ReduceMean", "Mul", "Sub", "Mul"}));
}

TEST(PatternReduceSumToMean, NotWhenTheCountsDiffer) {
  for (auto [n, factor] : {std::pair{4.f, 3.f}, std::pair{3.f, 4.f}}) {
    Model m = layer_norm_backward_model(n, factor);
    run_rules(m, "ReduceSumToMean");
    EXPECT_EQ(op_types(*m.graph).size(), 8u) << n << " " << factor;
  }
}

TEST(PatternReduceSumToMean, SameNumbers) {
  test::expect_same_outputs([] { return layer_norm_backward_model(4, 4); }, "ReduceSumToMean", 1e-6);
  test::expect_same_outputs([] { return reduce_sum_scaled_model(0.25f, SumForm::Scaled); }, "ReduceSumToMean",
                            1e-6);
  test::expect_same_outputs([] { return reduce_sum_scaled_model(1.f / 3, SumForm::Scaled, 18, Dim(3)); },
                            "ReduceSumToMean", 1e-6);
  test::expect_same_outputs([] { return reduce_sum_scaled_model(0.25f, SumForm::ScaledProduct, 17); },
                            "ReduceSumToMean", 1e-6);
  test::expect_same_outputs([] { return reduce_sum_scaled_model(-0.25f, SumForm::AddedProduct); },
                            "ReduceSumToMean", 1e-6);
}

namespace {

// ---- SwitchOrderBinary ----------------------------------------------------------------------------
Model chain(const char* first, const char* second, Shape c_shape = {16}) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{4, 8, 16});
  ValueId b = g.add_input("B", ElemType::Float, Shape{16});
  ValueId c = g.add_input("C", ElemType::Float, std::move(c_shape));
  g.add_output(node(g, second, {c, node(g, first, {x, b})}));
  return m;
}

TEST(PatternSwitchOrderBinary, TheSmallOperandsFirst) {
  for (const char* op : {"Add", "Mul"}) {
    Model m = chain(op, op);
    run_rules(m, "SwitchOrderBinary");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{op, op})) << op;
    const Node& inner = g.node(g.first_node());
    EXPECT_EQ(input_name(g, inner, 0), "B");
    EXPECT_EQ(input_name(g, inner, 1), "C");
    EXPECT_EQ(*g.value(inner.outputs[0]).shape, (Shape{16}));
    EXPECT_EQ(input_name(g, g.node(g.last_node()), 0), "X");
  }
}

TEST(PatternSwitchOrderBinary, NotWhenNothingShrinksOrTheOpsDiffer) {
  Model same = chain("Add", "Add", {4, 8, 16});
  run_rules(same, "SwitchOrderBinary");
  EXPECT_EQ(input_name(*same.graph, same.graph->node(same.graph->first_node()), 0), "X");
  Model mixed = chain("Add", "Mul");
  run_rules(mixed, "SwitchOrderBinary");
  EXPECT_EQ(op_types(*mixed.graph), (OpList{"Add", "Mul"}));
  EXPECT_EQ(input_name(*mixed.graph, mixed.graph->node(mixed.graph->first_node()), 0), "X");
}

TEST(PatternSwitchOrderBinary, SameNumbers) {
  // Reassociated float sums and products round differently by a few ulps.
  test::expect_same_outputs([] { return chain("Add", "Add"); }, "SwitchOrderBinary", 1e-5);
  test::expect_same_outputs([] { return chain("Mul", "Mul"); }, "SwitchOrderBinary", 1e-5);
}

}  // namespace

namespace {

// ---- ReduceArgTopK --------------------------------------------------------------------------------
struct BestOf {
  bool largest = true;
  bool arg_first = false;       // the ArgMax/ArgMin comes first in execution order
  int64_t keepdims = 1;
  int64_t arg_axis = 1;
  int64_t select_last_index = 0;
};
Model best_of(const BestOf& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{3, 5});
  auto reduce = [&] {
    return node(g, c.largest ? "ReduceMax" : "ReduceMin", {x, test::int64_initializer(g, "axes", {1})},
                {Attribute::make_int("keepdims", c.keepdims)});
  };
  auto arg = [&] {
    return node(g, c.largest ? "ArgMax" : "ArgMin", {x},
                {Attribute::make_int("axis", c.arg_axis), Attribute::make_int("keepdims", c.keepdims),
                 Attribute::make_int("select_last_index", c.select_last_index)});
  };
  ValueId best = ir::kNone, index = ir::kNone;
  if (c.arg_first) {
    index = arg();
    best = reduce();
  } else {
    best = reduce();
    index = arg();
  }
  g.add_output(node(g, "Neg", {best}));
  g.add_output(node(g, "Neg", {index}));
  return m;
}

TEST(PatternReduceArgTopK, BestAndIndexFromOneTopK) {
  for (const BestOf& c : {BestOf{}, BestOf{.largest = false, .arg_first = true}}) {
    Model m = best_of(c);
    run_rules(m, "ReduceArgTopK");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"TopK", "Neg", "Neg"})) << c.largest;
    const Node& top = g.node(g.first_node());
    EXPECT_EQ(top.attribute(Symbol("axis"))->i, 1);
    EXPECT_EQ(top.attribute(Symbol("largest"))->i, c.largest ? 1 : 0);
    EXPECT_EQ(constant_ints(g, top.inputs[1]), (std::vector<int64_t>{1}));
    EXPECT_EQ(producer(g, g.outputs()[0]).inputs[0], top.outputs[0]);
    EXPECT_EQ(producer(g, g.outputs()[1]).inputs[0], top.outputs[1]);
  }
}

TEST(PatternReduceArgTopK, NotWithoutKeepdimsOnAnotherAxisOrWithTheLastIndex) {
  for (const BestOf& c : {BestOf{.keepdims = 0}, BestOf{.arg_axis = 0}, BestOf{.select_last_index = 1}}) {
    Model m = best_of(c);
    run_rules(m, "ReduceArgTopK");
    EXPECT_EQ(op_types(*m.graph), (OpList{"ReduceMax", "ArgMax", "Neg", "Neg"})) << c.keepdims << c.arg_axis;
  }
}

TEST(PatternReduceArgTopK, SameNumbers) {
  test::expect_same_outputs([] { return best_of({}); }, "ReduceArgTopK");
  test::expect_same_outputs([] { return best_of({.largest = false, .arg_first = true}); }, "ReduceArgTopK");
}

}  // namespace
