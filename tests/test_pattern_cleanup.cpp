// NotNot, NotWhere, MaskedFillToBool, Dropout, ConvBiasNull, ClipClip: the exact op sequence after, one
// negative test per condition, and the same numbers before and after (xexp's evaluator and ONNX Runtime,
// float32, exactly: none of these rewrites changes arithmetic).
#include <gtest/gtest.h>

#include <limits>

#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::op_types;
using test::OpList;
using test::run_rules;

// ---- NotNot ---------------------------------------------------------------------------------------
static Model not_not_model(bool inner_used_twice) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId zero = g.add_initializer("zero", Tensor::scalar<float>(0.0f));
  ValueId c = node(g, "Greater", {x, zero});
  ValueId n1 = node(g, "Not", {c});
  ValueId n2 = node(g, "Not", {n1});
  g.add_output(node(g, "Where", {n2, x, zero}));
  if (inner_used_twice) g.add_output(node(g, "Cast", {n1}, {Attribute::make_int("to", 1)}));
  return m;
}

TEST(PatternNotNot, DoubleNegationDisappears) {
  Model m = not_not_model(false);
  run_rules(m, "NotNot");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Greater", "Where"}));
}

TEST(PatternNotNot, TheInnerNotStaysWhenSomethingElseReadsIt) {
  Model m = not_not_model(true);
  run_rules(m, "NotNot");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Greater", "Not", "Where", "Cast"}));
}

TEST(PatternNotNot, SameNumbers) {
  test::expect_same_outputs([] { return not_not_model(false); }, "NotNot");
  test::expect_same_outputs([] { return not_not_model(true); }, "NotNot");
}

// ---- NotWhere -------------------------------------------------------------------------------------
static Model not_where_model() {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId y = g.add_input("Y", ElemType::Float, Shape{2, 3});
  ValueId zero = g.add_initializer("zero", Tensor::scalar<float>(0.0f));
  ValueId n = node(g, "Not", {node(g, "Greater", {x, zero})});
  g.add_output(node(g, "Where", {n, x, y}));
  return m;
}

TEST(PatternNotWhere, BranchesAreSwapped) {
  Model m = not_where_model();
  run_rules(m, "NotWhere");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Greater", "Where"}));
  const Graph& g = *m.graph;
  const Node& where = g.node(g.value(g.outputs()[0]).producer);
  EXPECT_EQ(g.value(where.inputs[1]).name, "Y");
  EXPECT_EQ(g.value(where.inputs[2]).name, "X");
}

TEST(PatternNotWhere, SameNumbers) {
  test::expect_same_outputs([] { return not_where_model(); }, "NotWhere");
}

// ---- MaskedFillToBool -----------------------------------------------------------------------------
// Cast(Where(Cast(X, bool), fill, X), bool) with X = 1 - float(B), B a random boolean (2, 1, 1, 5):
// torch's padding mask, X zero where B is true.
struct MaskedFill {
  Tensor fill = Tensor::from<float>({1}, {std::numeric_limits<float>::lowest()});
  bool else_x = true;       // the Where's else branch is X (false: another value of X's shape)
  int64_t outer_to = 9;     // the last Cast's type (9: bool)
  bool where_read = false;  // the Where is also a graph output
};
static Model masked_fill_model(const MaskedFill& c = {}) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId b = g.add_input("B", ElemType::Bool, Shape{2, 1, 1, 5});
  ValueId one = g.add_initializer("one", Tensor::scalar<float>(1.0f));
  ValueId x = node(g, "Sub", {one, node(g, "Cast", {b}, {Attribute::make_int("to", 1)})});
  ValueId mask = node(g, "Cast", {x}, {Attribute::make_int("to", 9)});
  ValueId other = c.else_x ? x : node(g, "Neg", {x});
  ValueId filled = node(g, "Where", {mask, g.add_initializer("fill", c.fill), other});
  g.add_output(node(g, "Cast", {filled}, {Attribute::make_int("to", c.outer_to)}));
  if (c.where_read) g.add_output(filled);
  return m;
}

TEST(PatternMaskedFillToBool, TheFirstCastIsTheMask) {
  Model m = masked_fill_model();
  run_rules(m, "MaskedFillToBool");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Cast", "Sub", "Cast"}));
  const Node& mask = g.node(g.value(g.outputs()[0]).producer);
  EXPECT_EQ(mask.op_type, Symbol("Cast"));
  EXPECT_EQ(g.node(g.value(mask.inputs[0]).producer).op_type, Symbol("Sub"));
  EXPECT_EQ(g.value(g.outputs()[0]).elem, ElemType::Bool);
}

TEST(PatternMaskedFillToBool, TheWhereStaysWhenSomethingElseReadsIt) {
  Model m = masked_fill_model({.where_read = true});
  run_rules(m, "MaskedFillToBool");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Cast", "Sub", "Cast", "Where"}));
}

TEST(PatternMaskedFillToBool, NotWhenTheFillHasAZero) {
  Model m = masked_fill_model({.fill = Tensor::from<float>({5}, {-1, -1, 0, -1, -1})});
  run_rules(m, "MaskedFillToBool");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Cast", "Sub", "Cast", "Where", "Cast"}));
}

TEST(PatternMaskedFillToBool, NotWhenTheFillWidensTheMask) {
  Model m = masked_fill_model({.fill = Tensor::from<float>({1, 1, 3, 1}, {-1, -2, -3})});
  run_rules(m, "MaskedFillToBool");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Cast", "Sub", "Cast", "Where", "Cast"}));
}

TEST(PatternMaskedFillToBool, NotWhenTheElseBranchIsAnotherValue) {
  Model m = masked_fill_model({.else_x = false});
  run_rules(m, "MaskedFillToBool");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Cast", "Sub", "Cast", "Neg", "Where", "Cast"}));
}

TEST(PatternMaskedFillToBool, NotWhenTheLastCastIsToANumber) {
  Model m = masked_fill_model({.outer_to = 1});
  run_rules(m, "MaskedFillToBool");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Cast", "Sub", "Cast", "Where", "Cast"}));
}

TEST(PatternMaskedFillToBool, SameNumbers) {
  test::expect_same_outputs([] { return masked_fill_model(); }, "MaskedFillToBool");
  test::expect_same_outputs([] { return masked_fill_model({.where_read = true}); }, "MaskedFillToBool");
}

// ---- Dropout --------------------------------------------------------------------------------------
struct DropoutCase {
  std::optional<float> ratio = {};
  std::optional<bool> training = {};
  bool mask_used = false;
};
static Model dropout_model(const DropoutCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  std::vector<ValueId> inputs{x};
  if (c.ratio || c.training)
    inputs.push_back(c.ratio ? g.add_initializer("ratio", Tensor::scalar<float>(*c.ratio)) : kNone);
  if (c.training) inputs.push_back(g.add_initializer("training", Tensor::from<bool>({}, {*c.training})));
  ValueId y = g.add_value("Y"), mask = c.mask_used ? g.add_value("mask") : kNone;
  NodeId id = g.add_node(Symbol("Dropout"), inputs, mask == kNone ? std::vector<ValueId>{y} : std::vector<ValueId>{y, mask},
                         {}, "Dropout");
  infer::infer_node(g, id, 18);
  g.add_output(node(g, "Relu", {y}));
  if (c.mask_used) g.add_output(mask);
  return m;
}

TEST(PatternDropout, InferenceDropoutDisappears) {
  for (const DropoutCase& c : {DropoutCase{}, DropoutCase{.ratio = 0.5f}, DropoutCase{.ratio = 0.5f, .training = false},
                               DropoutCase{.training = false}, DropoutCase{.ratio = 0.0f, .training = true}}) {
    Model m = dropout_model(c);
    run_rules(m, "Dropout");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Relu"}));
  }
}

TEST(PatternDropout, NotInTrainingMode) {
  Model m = dropout_model({.ratio = 0.5f, .training = true});
  run_rules(m, "Dropout");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Dropout", "Relu"}));
}

TEST(PatternDropout, NotWhenTheMaskIsUsed) {
  Model m = dropout_model({.mask_used = true});
  run_rules(m, "Dropout");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Dropout", "Relu"}));
}

TEST(PatternDropout, SameNumbers) {
  test::expect_same_outputs([] { return dropout_model({.ratio = 0.5f, .training = false}); }, "Dropout");
}

// ---- ConvBiasNull ---------------------------------------------------------------------------------
static Model conv_model(float bias_value) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{1, 2, 5, 5});
  std::vector<float> weights(3 * 2 * 3 * 3);
  for (std::size_t k = 0; k < weights.size(); ++k) weights[k] = 0.1f * static_cast<float>(k % 7) - 0.3f;
  ValueId w = g.add_initializer("W", Tensor::from<float>({3, 2, 3, 3}, weights));
  ValueId b = g.add_initializer("B", Tensor::from<float>({3}, {bias_value, 0.0f, 0.0f}));
  g.add_output(node(g, "Conv", {x, w, b},
                    {Attribute::make_ints("pads", {1, 1, 1, 1}), Attribute::make_ints("strides", {2, 2})}));
  return m;
}

TEST(PatternConvBiasNull, ZeroBiasIsDropped) {
  Model m = conv_model(0.0f);
  run_rules(m, "ConvBiasNull");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Conv"}));
  const Node& conv = m.graph->node(m.graph->first_node());
  EXPECT_EQ(conv.inputs.size(), 2u);
  EXPECT_EQ(conv.attribute(Symbol("pads"))->ints, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv.attribute(Symbol("strides"))->ints, (std::vector<int64_t>{2, 2}));
}

TEST(PatternConvBiasNull, NotWhenABiasValueIsNotZero) {
  Model m = conv_model(0.5f);
  run_rules(m, "ConvBiasNull");
  EXPECT_EQ(m.graph->node(m.graph->first_node()).inputs.size(), 3u);
}

TEST(PatternConvBiasNull, NotWhenTheBiasIsNotConstant) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{1, 2, 5, 5});
  ValueId w = g.add_input("W", ElemType::Float, Shape{3, 2, 3, 3});
  ValueId b = g.add_input("B", ElemType::Float, Shape{3});
  g.add_output(node(g, "Conv", {x, w, b}));
  run_rules(m, "ConvBiasNull");
  EXPECT_EQ(m.graph->node(m.graph->first_node()).inputs.size(), 3u);
}

TEST(PatternConvBiasNull, SameNumbers) { test::expect_same_outputs([] { return conv_model(0.0f); }, "ConvBiasNull"); }

// ---- ClipClip -------------------------------------------------------------------------------------
// Clip(Clip(X, first...), second...): each side is {min, max} with an omitted bound as nullopt.
using Bounds = std::pair<std::optional<float>, std::optional<float>>;
static Model clip_model(Bounds first, Bounds second, bool constant_bounds = true) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{4, 5});
  int count = 0;
  auto bound = [&](std::optional<float> v) {
    if (!v) return kNone;
    const std::string name = "bound" + std::to_string(count++);
    if (constant_bounds) return g.add_initializer(name, Tensor::scalar<float>(*v));
    return g.add_input(name, ElemType::Float, Shape{});
  };
  auto clip = [&](ValueId in, Bounds b) {
    std::vector<ValueId> inputs{in, bound(b.first)};
    if (b.second) inputs.push_back(bound(b.second));
    return node(g, "Clip", inputs);
  };
  ValueId inner = clip(x, first);
  g.add_output(clip(inner, second));
  return m;
}

TEST(PatternClipClip, MinThenMaxMerges) {
  Model m = clip_model({-0.5f, {}}, {{}, 0.25f});
  run_rules(m, "ClipClip");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Clip"}));
  EXPECT_EQ(m.graph->node(m.graph->first_node()).inputs.size(), 3u);
}

TEST(PatternClipClip, MinThenMaxMergesEvenWithCrossedOrUnknownBounds) {
  Model crossed = clip_model({0.5f, {}}, {{}, -0.25f});
  run_rules(crossed, "ClipClip");
  EXPECT_EQ(op_types(*crossed.graph), (OpList{"Clip"}));
  Model dynamic = clip_model({-0.5f, {}}, {{}, 0.25f}, false);
  run_rules(dynamic, "ClipClip");
  EXPECT_EQ(op_types(*dynamic.graph), (OpList{"Clip"}));
}

TEST(PatternClipClip, MaxThenMinMergesWhenTheBoundsAreOrdered) {
  Model m = clip_model({{}, 0.25f}, {-0.5f, {}});
  run_rules(m, "ClipClip");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Clip"}));
}

TEST(PatternClipClip, MaxThenMinNotWhenTheBoundsCross) {
  Model m = clip_model({{}, -0.25f}, {0.5f, {}});
  run_rules(m, "ClipClip");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Clip", "Clip"}));
}

TEST(PatternClipClip, MaxThenMinNotWhenABoundIsNotConstant) {
  Model m = clip_model({{}, 0.25f}, {-0.5f, {}}, false);
  run_rules(m, "ClipClip");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Clip", "Clip"}));
}

TEST(PatternClipClip, NotWhenBothSetTheSameBoundOrBoth) {
  for (auto [first, second] : {std::pair<Bounds, Bounds>{{-0.5f, {}}, {-0.25f, {}}}, {{-0.5f, 0.5f}, {{}, 0.25f}},
                               {{-0.5f, {}}, {-0.25f, 0.25f}}}) {
    Model m = clip_model(first, second);
    run_rules(m, "ClipClip");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Clip", "Clip"}));
  }
}

TEST(PatternClipClip, SameNumbers) {
  test::expect_same_outputs([] { return clip_model({-0.5f, {}}, {{}, 0.25f}); }, "ClipClip");
  test::expect_same_outputs([] { return clip_model({{}, 0.25f}, {-0.5f, {}}); }, "ClipClip");
}

// Crossed bounds: ONNX defines Clip as Min(max, Max(input, min)), so min > max gives max everywhere, as
// Clip(Clip(x, min), max) does.
TEST(PatternClipClip, CrossedBoundsGiveTheSameNumbers) {
  test::expect_same_outputs([] { return clip_model({0.5f, {}}, {{}, -0.25f}); }, "ClipClip");
}

TEST(PatternCleanupDescribe, OptionalInputsPrintThemselves) {
  EXPECT_EQ(
      rewrite::rules_from_string("ClipClip").front()->describe(),
      "ClipClip: c -> Clip(x, L, h)  when (present(L) && not(present(H)) && not(present(l)) && present(h))  "
      "where c = Clip(Clip(x, L, H), l, h)  |  c -> Clip(x, l, H)  when (present(H) && not(present(L)) && "
      "present(l) && not(present(h)) && is_scalar_constant(l) && is_scalar_constant(H) && "
      "(scalar_value(l) <= scalar_value(H)))  [P1]");
}
