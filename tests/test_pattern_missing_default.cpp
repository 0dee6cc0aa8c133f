// default set: BatchNormalization, BatchNormalizationTraining, CastLayerNormalizationCast, CastOpCast,
// GathersSplit, MatMulReshape2Of3, ReduceArgTopK, ReduceSumNormalize, Reshape2Of3, ReshapeMatMulReshape,
// RotaryConcatPart, SequenceConstructAt, SequenceConstructConcat, ShapeBasedMatMulToMul, SlicesSplit,
// SoftmaxCrossEntropyLossCast, SwitchOrderBinary, TransposeReshapeMatMul, TransposeReshapeTranspose,
// UnsqueezeEqual. Positive (exact structure after), a negative per condition, and the same outputs before
// and after in xexp's evaluator and ONNX Runtime.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/onnx/load.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::input_name;
using test::node;
using test::op_types;
using test::OpList;
using test::producer;
using test::run_rules;

namespace {

Tensor ramp(std::vector<int64_t> dims, float start = 0.5f) {
  std::vector<float> v;
  for (int64_t k = 0; k < dims_element_count(dims); ++k) v.push_back(start + 0.1f * static_cast<float>(k % 7));
  return Tensor::from<float>(std::move(dims), v);
}
Tensor filled(std::vector<int64_t> dims, float value) {
  return Tensor::from<float>(dims, std::vector<float>(static_cast<std::size_t>(dims_element_count(dims)), value));
}
Attribute int_attr(const char* name, int64_t v) { return Attribute::make_int(name, v); }
std::vector<int64_t> constant_ints(const Graph& g, ValueId v) { return eval::as_int64s(*rewrite::constant_tensor(g, v)); }

// ---- BatchNormalization ---------------------------------------------------------------------------
struct Bn {
  float epsilon = 0.0f;
  float variance = 1.0f;
  bool training = false;
};
Model batch_norm(const Bn& c) {
  Model m = test::model_with_opset(15);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  std::vector<Attribute> attributes{Attribute::make_float("epsilon", c.epsilon)};
  if (c.training) attributes.push_back(int_attr("training_mode", 1));
  ValueId y = node(g, "BatchNormalization",
                   {x, g.add_initializer("scale", filled({3}, 1)), g.add_initializer("bias", filled({3}, 0)),
                    g.add_initializer("mean", filled({3}, 0)), g.add_initializer("var", filled({3}, c.variance))},
                   std::move(attributes), "", 15);
  g.add_output(node(g, "Relu", {y}));
  return m;
}

TEST(PatternBatchNormalization, IdentityParametersGoAway) {
  Model m = batch_norm({});
  run_rules(m, "BatchNormalization");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Relu"}));
  EXPECT_EQ(input_name(g, g.node(g.first_node()), 0), "X");
}

TEST(PatternBatchNormalization, NotWithEpsilonAVarianceOrTrainingMode) {
  for (const Bn& c : {Bn{.epsilon = 1e-5f}, Bn{.variance = 2.0f}, Bn{.training = true}}) {
    Model m = batch_norm(c);
    run_rules(m, "BatchNormalization");
    EXPECT_EQ(op_types(*m.graph), (OpList{"BatchNormalization", "Relu"})) << c.epsilon << " " << c.variance;
  }
}

TEST(PatternBatchNormalization, SameNumbers) {
  test::expect_same_outputs([] { return batch_norm({}); }, "BatchNormalization");
}

// ---- BatchNormalizationTraining -------------------------------------------------------------------
// BatchNormalization(X (2, 3, 4), training_mode) with varied scale and bias, at `opset`: Y is the graph
// output, the running statistics (which ONNX requires in training mode) are unused.
Model training_batch_norm(int64_t training_mode = 1, int64_t opset = 18,
                          ElemType scale_type = ElemType::Float) {
  Model m = test::model_with_opset(opset);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  ValueId scale = g.add_initializer("scale", eval::cast_tensor(ramp({3}), scale_type));
  ValueId bias = g.add_initializer("bias", eval::cast_tensor(ramp({3}, -0.2f), scale_type));
  ValueId y = g.add_value("Y"), running_mean = g.add_value("running_mean"),
          running_var = g.add_value("running_var");
  NodeId bn = g.add_node(
      Symbol("BatchNormalization"),
      {x, scale, bias, g.add_initializer("mean", filled({3}, 0)), g.add_initializer("var", filled({3}, 1))},
      training_mode ? std::vector<ValueId>{y, running_mean, running_var} : std::vector<ValueId>{y},
      {int_attr("training_mode", training_mode)}, "bn");
  infer::infer_node(g, bn, opset);
  g.add_output(y);
  return m;
}

TEST(PatternBatchNormalizationTraining, TheBatchStatisticsWrittenOut) {
  for (int64_t opset : {15, 18}) {
    Model m = training_batch_norm(1, opset);
    run_rules(m, "BatchNormalizationTraining");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"ReduceMean", "Sub", "Mul", "ReduceMean", "Add", "Sqrt", "Div", "Reshape",
                                   "Mul", "Reshape", "Add"}))
        << opset;
    const Node& mean = g.node(g.first_node());
    EXPECT_EQ(input_name(g, mean, 0), "X");
    if (opset >= 18)
      EXPECT_EQ(constant_ints(g, mean.inputs[1]), (std::vector<int64_t>{0, 2}));
    else
      EXPECT_EQ(mean.attribute(Symbol("axes"))->ints, (std::vector<int64_t>{0, 2}));
    const Node& scale = producer(g, producer(g, g.outputs()[0]).inputs[1]);
    EXPECT_EQ(constant_ints(g, scale.inputs[1]), (std::vector<int64_t>{1, -1, 1}));
    EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 3, 4}));
  }
}

TEST(PatternBatchNormalizationTraining, NotInInferenceModeOrWithScalesOfAnotherType) {
  Model inference = training_batch_norm(0);
  run_rules(inference, "BatchNormalizationTraining");
  EXPECT_EQ(op_types(*inference.graph), (OpList{"BatchNormalization"}));
  Model other = training_batch_norm(1, 18, ElemType::Double);
  run_rules(other, "BatchNormalizationTraining");
  EXPECT_EQ(op_types(*other.graph), (OpList{"BatchNormalization"}));
}

TEST(PatternBatchNormalizationTraining, SameNumbers) {
  test::expect_same_outputs([] { return training_batch_norm(); }, "BatchNormalizationTraining", 1e-5);
}

// ---- RotaryConcatPart -----------------------------------------------------------------------------
// Add(Concat(Neg(X[:, 4:]), Z), Concat(W, X[:, :right_cut])) on X (2, 8), Z and W ConstantOfShape
// filled with `fill`: rotate_half as exporters pad its halves.
Model padded_halves(float fill = 0.0f, int64_t right_cut = 4) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 8});
  const ValueId one = test::int64_initializer(g, "one", {1});
  auto slice = [&](int64_t start, int64_t end) {
    const std::string at = std::to_string(start);
    return node(g, "Slice",
                {x, test::int64_initializer(g, "start" + at, {start}),
                 test::int64_initializer(g, "end" + at, {end}), one});
  };
  auto zeros = [&](const std::string& side, int64_t width) {
    return test::constant_of_shape(g, test::int64_initializer(g, side + "_shape", {2, width}), fill);
  };
  const Attribute axis = int_attr("axis", 1);
  ValueId left = node(g, "Concat", {node(g, "Neg", {slice(4, 8)}), zeros("left", 4)}, {axis});
  ValueId right = node(g, "Concat", {zeros("right", 8 - right_cut), slice(0, right_cut)}, {axis});
  g.add_output(node(g, "Add", {left, right}));
  return m;
}

TEST(PatternRotaryConcatPart, TheHalvesWithoutTheirPadding) {
  Model m = padded_halves();
  run_rules(m, "RotaryConcatPart");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Slice", "Neg", "Slice", "Concat"}));
  const Node& concat = producer(g, g.outputs()[0]);
  EXPECT_EQ(producer(g, concat.inputs[0]).op_type, Symbol("Neg"));
  EXPECT_EQ(producer(g, concat.inputs[1]).op_type, Symbol("Slice"));
  EXPECT_EQ(concat.attribute(Symbol("axis"))->i, 1);
}

TEST(PatternRotaryConcatPart, NotWithAPaddingOfOnesOrHalvesThatDoNotLineUp) {
  for (const auto& [fill, cut] : {std::pair<float, int64_t>{1.0f, 4}, std::pair<float, int64_t>{0.0f, 3}}) {
    Model m = padded_halves(fill, cut);
    run_rules(m, "RotaryConcatPart");
    EXPECT_EQ(op_types(*m.graph).back(), "Add") << fill << " " << cut;
  }
}

TEST(PatternRotaryConcatPart, SameNumbers) {
  test::expect_same_outputs([] { return padded_halves(); }, "RotaryConcatPart");
}

// The backward of rotate_half as autograd writes it: each half of G (2, 3, 8) written into zeros over the
// last axis, added. `spelling` picks how:
//   "elements"  ScatterElements(Z, I, part, axis=2), I a constant counting along the axis (the second one
//               an Expand of a row [4, 5, 6, 7], as the export leaves it)
//   "nd"        Transpose(ScatterND(Transpose(Z, p), R, Transpose(part, p)), p), p = [2, 1, 0], R = [[0],
//               [1], ...]: onnxscript's slice_scatter
// `second_start` moves the second part (4 lines the parts up), `reduction` is the scatters' own.
Model scattered_halves(const std::string& spelling, int64_t second_start = 4,
                       const std::string& reduction = "none") {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("G", ElemType::Float, Shape{2, 3, 8});
  const ValueId one = test::int64_initializer(g, "one", {1});
  const ValueId last = test::int64_initializer(g, "last", {2});
  auto slice = [&](int64_t start, int64_t end) {
    const std::string at = std::to_string(start);
    return node(g, "Slice",
                {x, test::int64_initializer(g, "start" + at, {start}),
                 test::int64_initializer(g, "end" + at, {end}), last, one});
  };
  const ValueId zeros = node(g, "ConstantOfShape", {test::int64_initializer(g, "shape", {2, 3, 8})});
  const std::vector<Attribute> how{Attribute::make_string("reduction", reduction)};
  auto counting = [](int64_t start, int64_t count) {
    std::vector<int64_t> v;
    for (int64_t k = 0; k < count; ++k) v.push_back(start + k);
    return v;
  };
  auto scatter = [&](ValueId part, int64_t start) -> ValueId {
    const std::string at = std::to_string(start);
    if (spelling == "elements") {
      std::vector<Attribute> attrs = how;
      attrs.push_back(int_attr("axis", 2));
      std::vector<int64_t> whole;
      for (int k = 0; k < 6; ++k)
        for (int64_t i : counting(start, 4)) whole.push_back(i);
      const ValueId indices = start == 0
                                  ? g.add_initializer("I" + at, Tensor::from<int64_t>({2, 3, 4}, whole))
                                  : node(g, "Expand",
                                         {test::int64_initializer(g, "row" + at, counting(start, 4)),
                                          test::int64_initializer(g, "to" + at, {2, 3, 4})});
      return node(g, "ScatterElements", {zeros, indices, part}, attrs);
    }
    const std::vector<Attribute> perm{Attribute::make_ints("perm", {2, 1, 0})};
    std::vector<int64_t> rows = counting(start, 4);
    const ValueId r = g.add_initializer("R" + at, Tensor::from<int64_t>({4, 1}, rows));
    const ValueId written = node(
        g, "ScatterND", {node(g, "Transpose", {zeros}, perm), r, node(g, "Transpose", {part}, perm)}, how);
    return node(g, "Transpose", {written}, perm);
  };
  g.add_output(
      node(g, "Add", {scatter(slice(0, 4), second_start), scatter(node(g, "Neg", {slice(4, 8)}), 0)}));
  return m;
}

TEST(PatternRotaryConcatPart, TheHalvesOutOfTheirScatters) {
  for (const char* spelling : {"elements", "nd"}) {
    Model m = scattered_halves(spelling);
    run_rules(m, "RotaryConcatPart");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Slice", "Slice", "Neg", "Concat"})) << spelling;
    const Node& concat = producer(g, g.outputs()[0]);
    EXPECT_EQ(producer(g, concat.inputs[0]).op_type, Symbol("Neg")) << spelling;
    EXPECT_EQ(producer(g, concat.inputs[1]).op_type, Symbol("Slice")) << spelling;
    EXPECT_EQ(concat.attribute(Symbol("axis"))->i, 2) << spelling;
  }
}

TEST(PatternRotaryConcatPart, NotWhenTheScattersOverlapOrAdd) {
  for (const char* spelling : {"elements", "nd"}) {
    for (const auto& [start, reduction] : {std::pair<int64_t, std::string>{3, "none"}, {4, "add"}}) {
      Model m = scattered_halves(spelling, start, reduction);
      run_rules(m, "RotaryConcatPart");
      const OpList ops = op_types(*m.graph);
      EXPECT_EQ(ops.back(), "Add") << spelling << " " << start << " " << reduction;
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "Concat"), 0)
          << spelling << " " << start << " " << reduction;
    }
  }
}

TEST(PatternRotaryConcatPart, SameNumbersOutOfTheScatters) {
  for (const char* spelling : {"elements", "nd"})
    test::expect_same_outputs([&] { return scattered_halves(spelling); }, "RotaryConcatPart");
}

// ---- CastLayerNormalizationCast -------------------------------------------------------------------
struct CastNorm {
  ElemType type = ElemType::Float16;
  ElemType back = ElemType::Float16;
  bool bias = true;
  const char* op = "LayerNormalization";
};
Model cast_norm(const CastNorm& c) {
  Model m = test::model_with_opset(17);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", c.type, Shape{2, 4, 8});
  ValueId wide = node(g, "Cast", {x}, {int_attr("to", static_cast<int64_t>(ElemType::Float))}, "", 17);
  std::vector<ValueId> ins{wide, g.add_initializer("scale", ramp({8}))};
  if (c.bias) ins.push_back(g.add_initializer("bias", ramp({8}, -0.25f)));
  ValueId y = node(g, c.op, ins,
                   {int_attr("axis", -1), Attribute::make_float("epsilon", 1e-5f), int_attr("stash_type", 1)}, "", 17);
  g.add_output(node(g, "Cast", {y}, {int_attr("to", static_cast<int64_t>(c.back))}, "", 17));
  return m;
}

TEST(PatternCastLayerNormalizationCast, NormalizesTheHalfInputDirectly) {
  for (const CastNorm& c : {CastNorm{}, CastNorm{.bias = false, .op = "SimplifiedLayerNormalization"}}) {
    Model m = cast_norm(c);
    run_rules(m, "CastLayerNormalizationCast");
    const Graph& g = *m.graph;
    OpList expected(c.bias ? 2 : 1, "Cast");  // the scale and bias, constants folded by `xexp optimize`
    expected.push_back(c.op);
    ASSERT_EQ(op_types(g), expected) << c.op;
    const Node& n = producer(g, g.outputs()[0]);
    EXPECT_EQ(input_name(g, n, 0), "X");
    EXPECT_EQ(g.value(n.inputs[1]).elem, ElemType::Float16);
    EXPECT_EQ(n.attribute(Symbol("stash_type"))->i, 1);
    EXPECT_EQ(g.value(g.outputs()[0]).elem, ElemType::Float16);
  }
}

TEST(PatternCastLayerNormalizationCast, NotToAnotherTypeNorForBfloat16) {
  Model other = cast_norm({.back = ElemType::Double});
  run_rules(other, "CastLayerNormalizationCast");
  EXPECT_EQ(op_types(*other.graph), (OpList{"Cast", "LayerNormalization", "Cast"}));
  Model bf16 = cast_norm({.type = ElemType::BFloat16, .back = ElemType::BFloat16});
  run_rules(bf16, "CastLayerNormalizationCast");
  EXPECT_EQ(op_types(*bf16.graph), (OpList{"Cast", "LayerNormalization", "Cast"}));
}

TEST(PatternCastLayerNormalizationCast, SameNumbers) {
  // The scale and bias are rounded to float16 before they apply: a few float16 ulps.
  test::expect_same_outputs([] { return cast_norm({}); }, "CastLayerNormalizationCast", 1e-2);
}

// ---- ReshapeMatMulReshape -------------------------------------------------------------------------
// Y = Reshape(op(Reshape(A, (6, 4, 5)), Reshape(B, (6, b2, b3))), (2, 3, 4, 7)); op a MatMul or, with the
// attributes given, a com.microsoft FusedMatMul (dynamic exports reach it when the onnxruntime set fused
// the keys' Transpose before the Reshapes went).
Model flattened_product(Shape b_shape = {2, 3, 5, 7}, std::optional<std::vector<Attribute>> fused = std::nullopt) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 3, 4, 5});
  const std::vector<int64_t> rb_shape{6, b_shape[2].value(), b_shape[3].value()};
  ValueId b = g.add_input("B", ElemType::Float, std::move(b_shape));
  ValueId ra = node(g, "Reshape", {a, test::int64_initializer(g, "sa", {6, 4, 5})});
  ValueId rb = node(g, "Reshape", {b, test::int64_initializer(g, "sb", rb_shape)});
  if (fused) m.opsets.push_back({"com.microsoft", 1, {}});
  ValueId product = fused ? node(g, "FusedMatMul", {ra, rb}, *fused, "com.microsoft") : node(g, "MatMul", {ra, rb});
  g.add_output(node(g, "Reshape", {product, test::int64_initializer(g, "sy", {2, 3, 4, 7})}));
  return m;
}

TEST(PatternReshapeMatMulReshape, OneBatchedMatMul) {
  Model m = flattened_product();
  run_rules(m, "ReshapeMatMulReshape");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"MatMul"}));
  const Node& n = g.node(g.first_node());
  EXPECT_EQ(input_name(g, n, 0), "A");
  EXPECT_EQ(input_name(g, n, 1), "B");
  EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 3, 4, 7}));
}

TEST(PatternReshapeMatMulReshape, NotWhenTheLeadingAxesDiffer) {
  Model m = flattened_product({3, 2, 5, 7});
  run_rules(m, "ReshapeMatMulReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "Reshape", "MatMul", "Reshape"}));
}

TEST(PatternReshapeMatMulReshape, SameNumbers) {
  test::expect_same_outputs([] { return flattened_product(); }, "ReshapeMatMulReshape");
}

// FusedMatMul(RA, RB, transB=1, alpha=0.5) with B (2, 3, 7, 5), or transposing a batch too.
Model flattened_fused_product(int64_t trans_batch_b = 0) {
  std::vector<Attribute> attributes{int_attr("transB", 1), Attribute::make_float("alpha", 0.5f)};
  if (trans_batch_b) attributes.push_back(int_attr("transBatchB", trans_batch_b));
  return flattened_product({2, 3, 7, 5}, attributes);
}

TEST(PatternReshapeMatMulReshape, OneBatchedFusedMatMulWithItsAttributes) {
  Model m = flattened_fused_product();
  run_rules(m, "ReshapeMatMulReshape");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FusedMatMul"}));
  const Node& n = g.node(g.first_node());
  EXPECT_EQ(input_name(g, n, 0), "A");
  EXPECT_EQ(input_name(g, n, 1), "B");
  EXPECT_EQ(n.attribute(Symbol("transB"))->i, 1);
  EXPECT_EQ(n.attribute(Symbol("alpha"))->f, 0.5f);
  EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 3, 4, 7}));
}

TEST(PatternReshapeMatMulReshape, NotWhenTheFusedMatMulTransposesABatch) {
  Model m = flattened_fused_product(1);
  run_rules(m, "ReshapeMatMulReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "Reshape", "com.microsoft.FusedMatMul", "Reshape"}));
}

TEST(PatternReshapeMatMulReshape, SameNumbersWithFusedMatMul) {
  test::expect_same_outputs([] { return flattened_fused_product(); }, "ReshapeMatMulReshape");
}

// ---- SequenceConstructAt --------------------------------------------------------------------------
Model sequence(bool constant_index) {
  Model m = test::model_with_opset(17);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 3});
  ValueId b = g.add_input("B", ElemType::Float, Shape{3});
  ValueId s = node(g, "SequenceConstruct", {a, b});
  ValueId first = constant_index ? g.add_initializer("zero", Tensor::scalar<int64_t>(0))
                                 : g.add_input("I", ElemType::Int64, Shape{});
  g.add_output(node(g, "Relu", {node(g, "SequenceAt", {s, first})}));
  g.add_output(node(g, "Neg", {node(g, "SequenceAt", {s, g.add_initializer("last", Tensor::scalar<int64_t>(-1))})}));
  return m;
}

TEST(PatternSequenceConstructAt, EachElementIsReadDirectly) {
  Model m = sequence(true);
  run_rules(m, "SequenceConstructAt");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Relu", "Neg"}));
  EXPECT_EQ(input_name(g, producer(g, g.outputs()[0]), 0), "A");
  EXPECT_EQ(input_name(g, producer(g, g.outputs()[1]), 0), "B");
}

TEST(PatternSequenceConstructAt, NotAtAComputedPosition) {
  Model m = sequence(false);
  run_rules(m, "SequenceConstructAt");
  // The constant position is read directly; the sequence stays for the other one.
  EXPECT_EQ(op_types(*m.graph), (OpList{"SequenceConstruct", "SequenceAt", "Relu", "Neg"}));
}

// The evaluator has no sequence kernels: ONNX Runtime runs both models, the evaluator the rewritten one;
// all three give the same bits (the rewrites move values, they compute nothing).
void expect_same_bits_without_the_sequence(const Model& before, const Model& after) {
  const xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*before.graph, {.seed = 7});
  xexp::testing::TempDir dir;
  const std::string before_path = (dir.path() / "before.onnx").string(), after_path = (dir.path() / "after.onnx").string();
  save_model(before, before_path);
  save_model(after, after_path);
  const std::vector<xexp::testing::OrtResult> ort =
      xexp::testing::run_onnxruntime_batch({{before_path, feeds}, {after_path, feeds}});
  ASSERT_TRUE(ort[0].ok) << ort[0].error;
  ASSERT_TRUE(ort[1].ok) << ort[1].error;
  xexp::testing::expect_all_close(ort[1].outputs, ort[0].outputs, 0, 0);
  xexp::testing::expect_all_close(test::evaluated(after, feeds), ort[0].outputs, 0, 0);
}

TEST(PatternSequenceConstructAt, SameNumbers) {
  Model before = sequence(true);
  Model after = sequence(true);
  run_rules(after, "SequenceConstructAt");
  ASSERT_EQ(op_types(*after.graph), (OpList{"Relu", "Neg"}));
  expect_same_bits_without_the_sequence(before, after);
}

// ---- SequenceConstructConcat ----------------------------------------------------------------------
// Y = ConcatFromSequence(SequenceConstruct(A, B, A), axis, new_axis), as onnxscript writes torch.cat.
Model concat_from_sequence(int64_t axis, int64_t new_axis = 0) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 3});
  ValueId b = g.add_input("B", ElemType::Float, Shape{2, 3});
  ValueId s = node(g, "SequenceConstruct", {a, b, a});
  std::vector<Attribute> attributes{int_attr("axis", axis)};
  if (new_axis) attributes.push_back(int_attr("new_axis", new_axis));
  g.add_output(node(g, "ConcatFromSequence", {s}, std::move(attributes)));
  return m;
}

TEST(PatternSequenceConstructConcat, IsAConcatOfTheElements) {
  Model m = concat_from_sequence(-1);
  run_rules(m, "SequenceConstructConcat");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Concat"}));
  const Node& concat = producer(g, g.outputs()[0]);
  ASSERT_EQ(concat.inputs.size(), 3u);
  EXPECT_EQ(input_name(g, producer(g, g.outputs()[0]), 0), "A");
  EXPECT_EQ(input_name(g, producer(g, g.outputs()[0]), 1), "B");
  EXPECT_EQ(input_name(g, producer(g, g.outputs()[0]), 2), "A");
  EXPECT_EQ(concat.attribute(Symbol("axis"))->i, -1);
  EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 9}));
}

TEST(PatternSequenceConstructConcat, NotForAStack) {
  Model m = concat_from_sequence(0, 1);
  run_rules(m, "SequenceConstructConcat");
  EXPECT_EQ(op_types(*m.graph), (OpList{"SequenceConstruct", "ConcatFromSequence"}));
}

TEST(PatternSequenceConstructConcat, SameNumbers) {
  for (int64_t axis : {0, 1, -2}) {
    SCOPED_TRACE(axis);
    Model after = concat_from_sequence(axis);
    run_rules(after, "SequenceConstructConcat");
    ASSERT_EQ(op_types(*after.graph), (OpList{"Concat"}));
    expect_same_bits_without_the_sequence(concat_from_sequence(axis), after);
  }
}

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

// ---- TransposeReshapeMatMul -----------------------------------------------------------------------
Model transposed_regrouped(std::vector<int64_t> shape = {6, 5, 4}, bool second = true) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId y = g.add_input("Y", ElemType::Float, Shape{2, 3, 4, 5});
  ValueId t = node(g, "Transpose", {y}, {Attribute::make_ints("perm", {0, 1, 3, 2})});
  ValueId r = node(g, "Reshape", {t, test::int64_initializer(g, "s", shape)});
  const bool regroups = shape.size() == 3;
  if (second) {
    ValueId x = g.add_input("X", ElemType::Float, regroups ? Shape{6, 3, 5} : Shape{3, 6});
    g.add_output(node(g, "MatMul", {x, r}));
  } else {
    ValueId x = g.add_input("X", ElemType::Float, Shape{6, 4, 3});
    g.add_output(node(g, "MatMul", {r, x}));
  }
  return m;
}

TEST(PatternTransposeReshapeMatMul, TheTransposeMovesNextToTheMatMul) {
  for (bool second : {true, false}) {
    Model m = transposed_regrouped({6, 5, 4}, second);
    run_rules(m, "TransposeReshapeMatMul");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Reshape", "Transpose", "MatMul"})) << second;
    const Node& reshape = g.node(g.first_node());
    EXPECT_EQ(input_name(g, reshape, 0), "Y");
    EXPECT_EQ(constant_ints(g, reshape.inputs[1]), (std::vector<int64_t>{6, 4, 5}));
    const Node& transpose = producer(g, producer(g, g.outputs()[0]).inputs[second ? 1 : 0]);
    EXPECT_EQ(transpose.attribute(Symbol("perm"))->ints, (std::vector<int64_t>{0, 2, 1}));
  }
}

TEST(PatternTransposeReshapeMatMul, NotWhenTheReshapeMixesTheMatrixAxes) {
  Model m = transposed_regrouped({6, 20});
  run_rules(m, "TransposeReshapeMatMul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Transpose", "Reshape", "MatMul"}));
}

TEST(PatternTransposeReshapeMatMul, SameNumbers) {
  for (bool second : {true, false})
    test::expect_same_outputs([second] { return transposed_regrouped({6, 5, 4}, second); }, "TransposeReshapeMatMul");
}

// ---- ShapeBasedMatMulToMul ------------------------------------------------------------------------
Model outer_product(Shape x_shape = {2, 4, 1}, Shape y_shape = {2, 1, 5}) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, std::move(x_shape));
  ValueId y = g.add_input("Y", ElemType::Float, std::move(y_shape));
  g.add_output(node(g, "MatMul", {x, y}));
  return m;
}

TEST(PatternShapeBasedMatMulToMul, OuterProductIsAMul) {
  Model m = outer_product();
  run_rules(m, "ShapeBasedMatMulToMul");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Mul"}));
  EXPECT_EQ(input_name(g, g.node(g.first_node()), 0), "X");
  EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 4, 5}));
}

TEST(PatternShapeBasedMatMulToMul, NotWhenTheSumHasSeveralTermsOrTheyAreUnknown) {
  Model two = outer_product({2, 4, 2}, {2, 2, 5});
  run_rules(two, "ShapeBasedMatMulToMul");
  EXPECT_EQ(op_types(*two.graph), (OpList{"MatMul"}));
  Model symbolic = outer_product({2, 4, Dim::symbolic("k")}, {2, Dim::symbolic("k"), 5});
  run_rules(symbolic, "ShapeBasedMatMulToMul");
  EXPECT_EQ(op_types(*symbolic.graph), (OpList{"MatMul"}));
}

TEST(PatternShapeBasedMatMulToMul, SameNumbers) {
  test::expect_same_outputs([] { return outer_product(); }, "ShapeBasedMatMulToMul");
}

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
                {int_attr("keepdims", c.keepdims)});
  };
  auto arg = [&] {
    return node(g, c.largest ? "ArgMax" : "ArgMin", {x},
                {int_attr("axis", c.arg_axis), int_attr("keepdims", c.keepdims),
                 int_attr("select_last_index", c.select_last_index)});
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

// ---- SlicesSplit ----------------------------------------------------------------------------------
struct Cut {
  int64_t start, end, step = 1;
};
Model sliced(const std::vector<Cut>& cuts, int64_t axis = 1) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 8});
  int k = 0;
  for (const Cut& c : cuts) {
    const std::string n = std::to_string(k++);
    ValueId piece = node(g, "Slice",
                         {x, test::int64_initializer(g, "start" + n, {c.start}), test::int64_initializer(g, "end" + n, {c.end}),
                          test::int64_initializer(g, "axis" + n, {axis}), test::int64_initializer(g, "step" + n, {c.step})});
    g.add_output(node(g, "Neg", {piece}));
  }
  return m;
}
constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

TEST(PatternSlicesSplit, PiecesCoveringTheAxisAreOneSplit) {
  for (int64_t axis : {1, -1}) {
    // In execution order: the middle piece, the last one (to the end), the first one.
    Model m = sliced({{2, 5}, {5, kEnd}, {0, 2}}, axis);
    run_rules(m, "SlicesSplit");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Split", "Neg", "Neg", "Neg"})) << axis;
    const Node& split = g.node(g.first_node());
    EXPECT_EQ(split.attribute(Symbol("axis"))->i, 1);
    EXPECT_EQ(constant_ints(g, split.inputs[1]), (std::vector<int64_t>{2, 3, 3}));
    EXPECT_EQ(producer(g, g.outputs()[0]).inputs[0], split.outputs[1]);
    EXPECT_EQ(producer(g, g.outputs()[1]).inputs[0], split.outputs[2]);
    EXPECT_EQ(producer(g, g.outputs()[2]).inputs[0], split.outputs[0]);
  }
}

TEST(PatternSlicesSplit, NotWithAGapAnOverlapOrAStep) {
  for (const std::vector<Cut>& cuts : {std::vector<Cut>{{0, 3}, {4, 8}}, std::vector<Cut>{{0, 5}, {3, 8}},
                                       std::vector<Cut>{{0, 4}, {4, 8, 2}}}) {
    Model m = sliced(cuts);
    run_rules(m, "SlicesSplit");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Slice", "Neg", "Slice", "Neg"}));
  }
}

TEST(PatternSlicesSplit, SameNumbers) {
  test::expect_same_outputs([] { return sliced({{2, 5}, {5, kEnd}, {0, 2}}); }, "SlicesSplit");
}

// ---- GathersSplit ---------------------------------------------------------------------------------
struct Picked {
  int64_t index;
  int64_t axis = 1;
  bool computed = false;  // the index is a graph input, not a constant
};
struct Unbind {
  std::vector<Picked> picks{{2}, {0}, {-2}};
  bool dynamic_axis = false;
  int64_t opset = 18;
};
// Gathers of X (3x3x4, or ?x3x4... with a symbolic dim on axis 1) in the order of `picks`, each negated.
Model unbound(const Unbind& c) {
  Model m = test::model_with_opset(c.opset);
  Graph& g = *m.graph;
  const Dim middle = c.dynamic_axis ? Dim::symbolic("n") : Dim(3);
  ValueId x = g.add_input("X", ElemType::Float, Shape{3, middle, 4});
  int k = 0;
  for (const Picked& p : c.picks) {
    const std::string n = std::to_string(k++);
    ValueId index = p.computed ? g.add_input("I" + n, ElemType::Int64, Shape{})
                               : g.add_initializer("i" + n, Tensor::from<int64_t>({}, {p.index}));
    ValueId piece = node(g, "Gather", {x, index}, {int_attr("axis", p.axis)}, "", c.opset);
    g.add_output(node(g, "Neg", {piece}, {}, "", c.opset));
  }
  return m;
}

TEST(PatternGathersSplit, OneGatherPerElementIsASplitAndSqueezes) {
  for (int64_t opset : {18, 13, 11}) {
    Model m = unbound({.opset = opset});
    run_rules(m, "GathersSplit");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Split", "Squeeze", "Squeeze", "Squeeze", "Neg", "Neg", "Neg"})) << opset;
    const Node& split = g.node(g.first_node());
    EXPECT_EQ(input_name(g, split, 0), "X");
    EXPECT_EQ(split.attribute(Symbol("axis"))->i, 1);
    ASSERT_EQ(split.outputs.size(), 3u);
    if (opset >= 18) {
      EXPECT_EQ(split.attribute(Symbol("num_outputs"))->i, 3);
      EXPECT_EQ(split.inputs.size(), 1u);
    } else if (opset >= 13) {
      EXPECT_EQ(constant_ints(g, split.inputs[1]), (std::vector<int64_t>{1, 1, 1}));
    } else {
      EXPECT_EQ(split.attribute(Symbol("split"))->ints, (std::vector<int64_t>{1, 1, 1}));
    }
    // Output k negates gather k: indices 2, 0 and -2 (element 1).
    const std::vector<std::size_t> piece_of_output{2, 0, 1};
    for (std::size_t k = 0; k < 3; ++k) {
      const Node& squeeze = producer(g, producer(g, g.outputs()[k]).inputs[0]);
      ASSERT_EQ(squeeze.op_type, Symbol("Squeeze"));
      EXPECT_EQ(squeeze.inputs[0], split.outputs[piece_of_output[k]]) << k;
      const std::vector<int64_t> axes =
          opset >= 13 ? constant_ints(g, squeeze.inputs[1]) : squeeze.attribute(Symbol("axes"))->ints;
      EXPECT_EQ(axes, (std::vector<int64_t>{1}));
    }
  }
}

// A Gather of a computed index first in order is no piece of the Split: the Split comes before the
// first constant one, and the computed one stays.
TEST(PatternGathersSplit, AComputedGatherBeforeThemStays) {
  Model m = unbound({.picks = {{1, 1, true}, {0}, {1}, {2}}});
  run_rules(m, "GathersSplit");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g),
            (OpList{"Gather", "Neg", "Split", "Squeeze", "Squeeze", "Squeeze", "Neg", "Neg", "Neg"}));
  EXPECT_EQ(input_name(g, g.node(g.first_node()), 1), "I0");
}

TEST(PatternGathersSplit, NotWithAMissingOrComputedIndexADynamicAxisOrAnotherAxis) {
  const Unbind declined[] = {
      {.picks = {{0}, {2}}},                       // element 1 missing
      {.picks = {{0}, {1}, {1}, {2}}},             // element 1 twice
      {.picks = {{0}, {1}, {2, 1, true}}},         // an index computed at run time
      {.dynamic_axis = true},                      // the axis length unknown
      {.picks = {{0}, {1}, {2, 0}}},               // a Gather along another axis
  };
  for (const Unbind& c : declined) {
    Model m = unbound(c);
    run_rules(m, "GathersSplit");
    for (const std::string& op : op_types(*m.graph)) EXPECT_TRUE(op == "Gather" || op == "Neg") << op;
  }
}

TEST(PatternGathersSplit, SameNumbers) {
  for (int64_t opset : {18, 13, 11})
    test::expect_same_outputs([opset] { return unbound({.opset = opset}); }, "GathersSplit");
}

// ---- UnsqueezeEqual -------------------------------------------------------------------------------
struct Mask {
  std::vector<int64_t> equal_axes{1};
  bool twin_first = true;
  bool third_reader = false;
};
Model mask(const Mask& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Int64, Shape{2, 5});
  auto twin = [&] { return node(g, "Unsqueeze", {x, test::int64_initializer(g, "axes", {1})}); };
  ValueId u = c.twin_first ? twin() : ir::kNone;
  ValueId equal = node(g, "Equal", {x, g.add_initializer("pad", Tensor::scalar<int64_t>(0))});
  g.add_output(node(g, "Unsqueeze", {equal, test::int64_initializer(g, "equal_axes", c.equal_axes)}));
  if (!c.twin_first) u = twin();
  g.add_output(u);
  if (c.third_reader) g.add_output(node(g, "Neg", {x}));
  return m;
}

TEST(PatternUnsqueezeEqual, TheUnsqueezeServesBoth) {
  Model m = mask({});
  run_rules(m, "UnsqueezeEqual");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Unsqueeze", "Equal"}));
  EXPECT_EQ(g.node(g.last_node()).inputs[0], g.node(g.first_node()).outputs[0]);
  EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 1, 5}));
}

TEST(PatternUnsqueezeEqual, NotOnOtherAxesWithAThirdReaderOrAfterTheMask) {
  for (const Mask& c : {Mask{.equal_axes = {0}}, Mask{.third_reader = true}, Mask{.twin_first = false}}) {
    Model m = mask(c);
    run_rules(m, "UnsqueezeEqual");
    EXPECT_EQ(op_types(*m.graph).size(), c.third_reader ? 4u : 3u) << c.twin_first;
  }
}

TEST(PatternUnsqueezeEqual, SameNumbers) {
  test::expect_same_outputs([] { return mask({}); }, "UnsqueezeEqual");
}

// ---- Reshape2Of3 ----------------------------------------------------------------------------------
struct Around {
  bool x_first = true;
  Shape y_shape = {6, 4};
  std::vector<int64_t> back = {2, 3, 4};
};
Model reshaped_around(const Around& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  ValueId y = g.add_input("Y", ElemType::Float, c.y_shape);
  ValueId rx = node(g, "Reshape", {x, test::int64_initializer(g, "s", {6, 4})});
  ValueId sum = c.x_first ? node(g, "Sub", {rx, y}) : node(g, "Sub", {y, rx});
  g.add_output(node(g, "Reshape", {sum, test::int64_initializer(g, "t", c.back)}));
  return m;
}

TEST(PatternReshape2Of3, TheBinaryWorksInTheOriginalShape) {
  for (bool x_first : {true, false}) {
    Model m = reshaped_around({.x_first = x_first});
    run_rules(m, "Reshape2Of3");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Reshape", "Sub"})) << x_first;
    const Node& reshape = g.node(g.first_node());
    EXPECT_EQ(input_name(g, reshape, 0), "Y");
    EXPECT_EQ(constant_ints(g, reshape.inputs[1]), (std::vector<int64_t>{2, 3, 4}));
    const Node& sub = g.node(g.last_node());
    EXPECT_EQ(input_name(g, sub, x_first ? 0 : 1), "X");
    EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 3, 4}));
  }
}

TEST(PatternReshape2Of3, NotWhenTheOtherSideBroadcastsOrTheShapeIsNotGivenBack) {
  for (const Around& c : {Around{.y_shape = {4}}, Around{.back = {3, 2, 4}}}) {
    Model m = reshaped_around(c);
    run_rules(m, "Reshape2Of3");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "Sub", "Reshape"}));
  }
}

TEST(PatternReshape2Of3, SameNumbers) {
  for (bool x_first : {true, false})
    test::expect_same_outputs([x_first] { return reshaped_around({.x_first = x_first}); }, "Reshape2Of3");
}

// ---- models as an exporter writes them ------------------------------------------------------------
// The model of an ONNX text, typed by ONNX's shape inference (value_info included), saved and read back.
using xexp::testing::load_case_model;
std::vector<int64_t> perm_of(const Node& n) { return n.attribute(Symbol("perm"))->ints; }
// The ONNX text name of a float element type given as its number ("10": "float16").
std::string float_type_name(const std::string& to) {
  return to == "1" ? "float" : to == "10" ? "float16" : to == "11" ? "double" : "bfloat16";
}
// "int64[3]" for the values "6,4,5".
std::string int64_type(const std::string& values) {
  return "int64[" + std::to_string(std::count(values.begin(), values.end(), ',') + 1) + "]";
}

// ---- TransposeReshapeTranspose --------------------------------------------------------------------
// Transpose(X, p1) -> Reshape(shape) -> Transpose(p2), Y of dims `y`; `shape` is an initializer unless
// `shape_input`, and the Reshape's result is also a graph output with `middle_output`.
struct Moves {
  std::string x = "2,6,4,5", p1 = "0,2,3,1", shape = "2,4,5,3,2", p2 = "0,2,3,4,1", y = "2,5,3,2,4";
  bool shape_input = false, middle_output = false;
};
std::string moves_text(const Moves& c) {
  const std::string shape_type = int64_type(c.shape);
  std::string inputs = "float[" + c.x + "] X" + (c.shape_input ? ", " + shape_type + " S" : "");
  std::string outputs = "float[" + c.y + "] Y" + (c.middle_output ? ", float[" + c.shape + "] R" : "");
  std::string initializers = c.shape_input ? "" : "<" + shape_type + " S = {" + c.shape + "}>";
  return "<ir_version: 8, opset_import: [\"\" : 18]>\ng (" + inputs + ") => (" + outputs + ") " +
         initializers + " {\n  T = Transpose<perm=[" + c.p1 +
         "]>(X)\n  R = Reshape(T, S)\n  Y = Transpose<perm=[" + c.p2 + "]>(R)\n}\n";
}

TEST(PatternTransposeReshapeTranspose, SplitAxesAreSplitBeforeOneTranspose) {
  Model m = load_case_model(moves_text({}));
  run_rules(m, "TransposeReshapeTranspose");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Reshape", "Transpose"}));
  const Node& reshape = g.node(g.first_node());
  EXPECT_EQ(input_name(g, reshape, 0), "X");
  EXPECT_EQ(constant_ints(g, reshape.inputs[1]), (std::vector<int64_t>{2, 3, 2, 4, 5}));
  EXPECT_EQ(perm_of(g.node(g.last_node())), (std::vector<int64_t>{0, 4, 1, 2, 3}));
  EXPECT_EQ(g.value(g.outputs()[0]).name, "Y");
}

TEST(PatternTransposeReshapeTranspose, MergedAxesAreMergedAfterOneTranspose) {
  Model m = load_case_model(
      moves_text({.x = "2,3,4,5", .p1 = "0,2,1,3", .shape = "2,4,15", .p2 = "0,2,1", .y = "2,15,4"}));
  run_rules(m, "TransposeReshapeTranspose");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Transpose", "Reshape"}));
  const Node& transpose = g.node(g.first_node());
  EXPECT_EQ(input_name(g, transpose, 0), "X");
  EXPECT_EQ(perm_of(transpose), (std::vector<int64_t>{0, 1, 3, 2}));
  EXPECT_EQ(constant_ints(g, g.node(g.last_node()).inputs[1]), (std::vector<int64_t>{2, 15, 4}));
}

TEST(PatternTransposeReshapeTranspose, NotWhenTheReshapeRegroupsMovesNothingKnownOrIsRead) {
  const std::vector<Moves> refused{
      {.x = "2,3,4,5", .p1 = "0,2,1,3", .shape = "2,6,10", .p2 = "0,2,1", .y = "2,10,6"},  // 4x3 -> 6x2 mixes
      {.shape_input = true},                                                               // shape unknown
      {.shape = "2,4,5,3,-1"},                                                             // -1 to resolve
      {.x = "N,6,4,5", .shape = "2,4,5,3,2"},                                              // dynamic dim
      {.middle_output = true},                                                             // Reshape read
  };
  for (const Moves& c : refused) {
    Model m = load_case_model(moves_text(c));
    run_rules(m, "TransposeReshapeTranspose");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Transpose", "Reshape", "Transpose"})) << moves_text(c);
  }
}

TEST(PatternTransposeReshapeTranspose, SameNumbers) {
  test::expect_same_outputs([] { return load_case_model(moves_text({})); }, "TransposeReshapeTranspose");
  test::expect_same_outputs(
      [] {
        return load_case_model(
            moves_text({.x = "2,3,4,5", .p1 = "0,2,1,3", .shape = "2,4,15", .p2 = "0,2,1", .y = "2,15,4"}));
      },
      "TransposeReshapeTranspose");
}

// ---- MatMulReshape2Of3 ----------------------------------------------------------------------------
// A (2,3,4,5) viewed as (6,4,5) times `b` (B as it is, or viewed as (6,5,7) from `b_view_from`), the
// product (6,4,7) viewed back as `back` (or left as it is when empty).
struct Regrouped {
  std::string b = "6,5,7", b_view_from = "", back = "2,3,4,7";
};
std::string regrouped_text(const Regrouped& c) {
  const bool b_viewed = !c.b_view_from.empty(), back = !c.back.empty();
  std::string text =
      "<ir_version: 8, opset_import: [\"\" : 18]>\ng (float[2,3,4,5] A, float[" +
      (b_viewed ? c.b_view_from : c.b) + "] B) => (float[" + (back ? c.back : "6,4,7") +
      "] Y) <int64[3] SA = {6,4,5}" + (b_viewed ? ", " + int64_type(c.b) + " SB = {" + c.b + "}" : "") +
      (back ? ", " + int64_type(c.back) + " SY = {" + c.back + "}" : "") + "> {\n  RA = Reshape(A, SA)\n";
  const std::string rb = b_viewed ? "RB" : "B";
  if (b_viewed) text += "  RB = Reshape(B, SB)\n";
  text +=
      back ? "  M = MatMul(RA, " + rb + ")\n  Y = Reshape(M, SY)\n}\n" : "  Y = MatMul(RA, " + rb + ")\n}\n";
  return text;
}

TEST(PatternMatMulReshape2Of3, TheLeftInputAndTheResultKeepTheirLayout) {
  // B of (6,5,7) goes to A's layout; a matrix B broadcasts as it is.
  for (const std::string b : {"6,5,7", "5,7"}) {
    Model m = load_case_model(regrouped_text({.b = b}));
    run_rules(m, "MatMulReshape2Of3");
    const Graph& g = *m.graph;
    const bool matrix = b == "5,7";
    ASSERT_EQ(op_types(g), matrix ? (OpList{"MatMul"}) : (OpList{"Reshape", "MatMul"})) << b;
    const Node& product = producer(g, g.outputs()[0]);
    EXPECT_EQ(input_name(g, product, 0), "A");
    if (!matrix) {
      const Node& reshape = producer(g, product.inputs[1]);
      EXPECT_EQ(input_name(g, reshape, 0), "B");
      EXPECT_EQ(constant_ints(g, reshape.inputs[1]), (std::vector<int64_t>{2, 3, 5, 7}));
    }
    EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 3, 4, 7}));
  }
}

TEST(PatternMatMulReshape2Of3, BothInputsKeepTheirLayoutAndTheResultIsViewed) {
  Model m = load_case_model(regrouped_text({.b_view_from = "2,3,5,7", .back = ""}));
  run_rules(m, "MatMulReshape2Of3");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"MatMul", "Reshape"}));
  const Node& product = g.node(g.first_node());
  EXPECT_EQ(input_name(g, product, 0), "A");
  EXPECT_EQ(input_name(g, product, 1), "B");
  const Node& reshape = g.node(g.last_node());
  EXPECT_EQ(constant_ints(g, reshape.inputs[1]), (std::vector<int64_t>{6, 4, 7}));
  EXPECT_EQ(g.value(g.outputs()[0]).name, "Y");
}

TEST(PatternMatMulReshape2Of3, NotWhenTheMatricesChangeOrTheBatchesDiffer) {
  const std::vector<Regrouped> refused{
      {.back = "6,28"},                                      // the result's matrices regrouped
      {.b = "1,5,7"},                                        // B broadcasts over the batch
      {.b = "6,5,7", .b_view_from = "3,2,5,7", .back = ""},  // the inputs' batches differ
      {.b = "6,5,7", .b_view_from = "2,3,35", .back = ""},   // B's matrices regrouped
  };
  for (const Regrouped& c : refused) {
    Model m = load_case_model(regrouped_text(c));
    const OpList before = op_types(*m.graph);
    run_rules(m, "MatMulReshape2Of3");
    EXPECT_EQ(op_types(*m.graph), before) << regrouped_text(c);
  }
}

TEST(PatternMatMulReshape2Of3, SameNumbers) {
  for (const Regrouped& c :
       {Regrouped{}, Regrouped{.b = "5,7"}, Regrouped{.b_view_from = "2,3,5,7", .back = ""}})
    test::expect_same_outputs([c] { return load_case_model(regrouped_text(c)); }, "MatMulReshape2Of3");
}

// A of `type` and dims `a` flattened into rows by `flat`, times W, the product given the shape `back`;
// `rows_read_twice` makes the rows a second output, as a weight gradient reads them in a training graph.
struct Rows {
  std::string type = "float", a = "2,3,8", flat = "6,8", w = "8,5", back = "2,3,5";
  bool rows_read_twice = false;
};
std::string rows_text(const Rows& c) {
  return "<ir_version: 8, opset_import: [\"\" : 18]>\ng (" + c.type + "[" + c.a + "] A, " + c.type + "[" +
         c.w + "] W) => (" + c.type + "[" + c.back + "] Y" +
         (c.rows_read_twice ? ", " + c.type + "[" + c.flat + "] V" : "") + ") <" + int64_type(c.flat) +
         " SA = {" + c.flat + "}, " + int64_type(c.back) + " SY = {" + c.back +
         "}> {\n  V = Reshape(A, SA)\n  M = MatMul(V, W)\n  Y = Reshape(M, SY)\n}\n";
}

TEST(PatternMatMulReshape2Of3, FlattenedRowsAndTheirProductGivenBackTheirAxes) {
  for (const std::string type : {"float", "float16"}) {
    Model m = load_case_model(rows_text({.type = type}));
    run_rules(m, "MatMulReshape2Of3");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"MatMul"})) << type;
    const Node& product = g.node(g.first_node());
    EXPECT_EQ(input_name(g, product, 0), "A");
    EXPECT_EQ(input_name(g, product, 1), "W");
    EXPECT_EQ(g.value(g.outputs()[0]).name, "Y");
    EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 3, 5}));
  }
  Model shared = load_case_model(rows_text({.rows_read_twice = true}));
  run_rules(shared, "MatMulReshape2Of3");
  const Graph& g = *shared.graph;
  ASSERT_EQ(op_types(g), (OpList{"Reshape", "MatMul"}));
  EXPECT_EQ(input_name(g, g.node(g.last_node()), 0), "A");
  EXPECT_EQ(g.value(g.outputs()[1]).producer, g.first_node());
}

TEST(PatternMatMulReshape2Of3, NotWhenTheRowsMixAxesOrTheProductIsRegrouped) {
  const std::vector<Rows> refused{
      {.a = "2,4,4", .flat = "4,8", .w = "8,4", .back = "2,4,4"},  // each row is two rows of A
      {.back = "3,2,5"},                                           // the product's rows regrouped
      {.w = "1,8,5"},                                              // W is no matrix
  };
  for (const Rows& c : refused) {
    Model m = load_case_model(rows_text(c));
    run_rules(m, "MatMulReshape2Of3");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "MatMul", "Reshape"})) << rows_text(c);
  }
}

TEST(PatternMatMulReshape2Of3, FlattenedRowsKeepTheirNumbers) {
  for (const Rows& c : {Rows{}, Rows{.type = "float16"}, Rows{.rows_read_twice = true}})
    test::expect_same_outputs([c] { return load_case_model(rows_text(c)); }, "MatMulReshape2Of3");
}

// ---- CastOpCast -----------------------------------------------------------------------------------
// Cast(op(Cast(X, to=wide), other), to=back); `other` is Cast(Z, to=wide) or Z itself.
struct CastAround {
  std::string op = "Add", x = "float16", z = "float16", wide = "1", back = "10";
  bool z_cast = true, z_first = false, unary = false, x_read_twice = false;
};
std::string cast_around_text(const CastAround& c) {
  const std::string back_type = float_type_name(c.back);
  std::string text = "<ir_version: 8, opset_import: [\"\" : 18]>\ng (" + c.x + "[2,3] X, " + c.z +
                     "[2,3] Z) => (" + back_type + "[2,3] Y" + (c.x_read_twice ? ", float[2,3] W" : "") +
                     ") {\n  CX = Cast<to=" + c.wide + ">(X)\n";
  std::string other = "Z";
  if (c.z_cast) {
    text += "  CZ = Cast<to=" + c.wide + ">(Z)\n";
    other = "CZ";
  }
  if (c.unary)
    text += "  S = " + c.op + "(CX)\n";
  else
    text += "  S = " + c.op + "(" + (c.z_first ? other + ", CX" : "CX, " + other) + ")\n";
  if (c.x_read_twice) text += "  W = Relu(CX)\n";
  return text + "  Y = Cast<to=" + c.back + ">(S)\n}\n";
}

TEST(PatternCastOpCast, TheOpWorksInTheOuterType) {
  for (const std::string op : {"Add", "Sub", "Mul", "Div"}) {
    Model m = load_case_model(cast_around_text({.op = op}));
    run_rules(m, "CastOpCast");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{op})) << op;
    const Node& n = g.node(g.first_node());
    EXPECT_EQ(input_name(g, n, 0), "X");
    EXPECT_EQ(input_name(g, n, 1), "Z");
    EXPECT_EQ(g.value(g.outputs()[0]).elem, ElemType::Float16);
  }
}

TEST(PatternCastOpCast, AnInputWithoutCastIsCastToTheOuterType) {
  for (bool z_first : {false, true}) {
    Model m = load_case_model(cast_around_text({.z = "float", .z_cast = false, .z_first = z_first}));
    run_rules(m, "CastOpCast");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Cast", "Add"})) << z_first;
    const Node& cast = g.node(g.first_node());
    EXPECT_EQ(input_name(g, cast, 0), "Z");
    EXPECT_EQ(cast.attribute(Symbol("to"))->i, static_cast<int64_t>(ElemType::Float16));
    EXPECT_EQ(input_name(g, g.node(g.last_node()), z_first ? 1 : 0), "X");
  }
}

TEST(PatternCastOpCast, UnaryOpsKeepTheirAttributes) {
  Model m = load_case_model(cast_around_text({.op = "Softmax<axis=0>", .z_cast = false, .unary = true}));
  run_rules(m, "CastOpCast");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Softmax"}));
  const Node& softmax = g.node(g.last_node());
  EXPECT_EQ(input_name(g, softmax, 0), "X");
  EXPECT_EQ(softmax.attribute(Symbol("axis"))->i, 0);
}

TEST(PatternCastOpCast, NotForAnotherTypeBfloat16IntegersOrAnInputReadTwice) {
  const std::vector<CastAround> refused{
      {.back = "11"},                                          // back to double, not X's type
      {.x = "bfloat16", .z = "bfloat16", .back = "16"},        // no CPU kernel in bfloat16
      {.x = "float", .z = "float", .wide = "7", .back = "1"},  // computed in int64
      {.z = "float", .z_cast = false, .x_read_twice = true},   // the widened X is read again
      {.op = "Pow"},                                           // not an op of the family
  };
  for (const CastAround& c : refused) {
    Model m = load_case_model(cast_around_text(c));
    const OpList before = op_types(*m.graph);
    run_rules(m, "CastOpCast");
    EXPECT_EQ(op_types(*m.graph), before) << cast_around_text(c);
  }
}

TEST(PatternCastOpCast, SameNumbers) {
  // float16 + float16 computed in float and rounded once is float16's own correctly rounded sum: exact.
  test::expect_same_outputs([] { return load_case_model(cast_around_text({})); }, "CastOpCast");
  // Z rounded to float16 first, Sigmoid in float16: an ulp or two of float16.
  test::expect_same_outputs([] { return load_case_model(cast_around_text({.z = "float", .z_cast = false})); },
                            "CastOpCast", 2e-3);
  test::expect_same_outputs(
      [] { return load_case_model(cast_around_text({.op = "Sigmoid", .z_cast = false, .unary = true})); },
      "CastOpCast", 2e-3);
}

// ---- ReduceSumNormalize ---------------------------------------------------------------------------
// Cast(X - ReduceSum(Cast(X)) * Y, to=back) computed in float.
struct Normalized {
  std::string x = "float16", back = "10";
  bool y_first = false, sub_swapped = false;
};
std::string normalized_text(const Normalized& c) {
  const std::string back_type = float_type_name(c.back);
  return "<ir_version: 8, opset_import: [\"\" : 18]>\ng (" + c.x + "[2,4] X, float[2,1] Y) => (" + back_type +
         "[2,4] Z) <int64[1] axes = {1}> {\n  W = Cast<to=1>(X)\n  R = ReduceSum<keepdims=1>(W, axes)\n  M = "
         "Mul(" +
         (c.y_first ? "Y, R" : "R, Y") + ")\n  S = Sub(" + (c.sub_swapped ? "M, W" : "W, M") +
         ")\n  Z = Cast<to=" + c.back + ">(S)\n}\n";
}

TEST(PatternReduceSumNormalize, ComputedInTheInputType) {
  for (bool y_first : {false, true}) {
    Model m = load_case_model(normalized_text({.y_first = y_first}));
    run_rules(m, "ReduceSumNormalize");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"ReduceSum", "Cast", "Mul", "Sub"})) << y_first;
    const Node& sum = g.node(g.first_node());
    EXPECT_EQ(input_name(g, sum, 0), "X");
    EXPECT_EQ(constant_ints(g, sum.inputs[1]), (std::vector<int64_t>{1}));
    EXPECT_EQ(sum.attribute(Symbol("keepdims"))->i, 1);
    const Node& cast = producer(g, producer(g, g.node(g.last_node()).inputs[1]).inputs[1]);
    EXPECT_EQ(input_name(g, cast, 0), "Y");
    EXPECT_EQ(cast.attribute(Symbol("to"))->i, static_cast<int64_t>(ElemType::Float16));
    EXPECT_EQ(input_name(g, g.node(g.last_node()), 0), "X");
    EXPECT_EQ(g.value(g.outputs()[0]).elem, ElemType::Float16);
  }
}

TEST(PatternReduceSumNormalize, NotForAnotherTypeBfloat16OrTheOtherDifference) {
  for (const Normalized& c : {Normalized{.back = "1"}, Normalized{.x = "bfloat16", .back = "16"},
                              Normalized{.sub_swapped = true}}) {
    Model m = load_case_model(normalized_text(c));
    run_rules(m, "ReduceSumNormalize");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Cast", "ReduceSum", "Mul", "Sub", "Cast"})) << normalized_text(c);
  }
}

TEST(PatternReduceSumNormalize, SameNumbers) {
  // Summed and multiplied in float16: a few ulps of float16 on values below 10.
  test::expect_same_outputs([] { return load_case_model(normalized_text({})); }, "ReduceSumNormalize", 1e-2);
}

// ---- SoftmaxCrossEntropyLossCast -------------------------------------------------------------------
// The mean cross-entropy of logits X (4, 3) against targets T, decomposed as torch's nll_loss: the
// original's float16 spelling by default (sums in float, cast back). ONNX's text parser (1.12) reads no
// float16 numbers: the fill for ignored terms is a float constant cast to X's type, which folding turns
// into a constant of that type, so the cases are optimized as `xexp optimize` does.
struct Loss {
  std::string x = "10";         // X's element type
  bool summed_in_float = true;  // numerator: Cast(ReduceSum(Cast(losses, wide)), back)
  std::string wide = "1", back = "10";
  std::string count = "float";  // float: Cast(kept, 1) summed, cast to X's type; int64: the same from int64
                                // (torch); plain: Cast(kept, X's type) summed
  std::string zero = "0", ignore = "-100";
  std::string keepdims = "0";
  bool equal_swapped = false;
};
std::string loss_text(const Loss& c) {
  const std::string x_type = float_type_name(c.x);
  const std::string y_type =
      (c.summed_in_float ? float_type_name(c.back) : x_type) + (c.keepdims == "1" ? "[1]" : "");
  std::string text =
      "<ir_version: 8, opset_import: [\"\" : 14]>\nloss (" + x_type + "[4,3] X, int64[4] T) => (" + y_type +
      " Y) <int64 ignore = {" + c.ignore + "}, int64 safe = {0}, float fill = {" + c.zero +
      "}, int64[1] one = {1}> {\n  E = Equal(" + (c.equal_swapped ? "ignore, T" : "T, ignore") +
      ")\n  K = Not(E)\n  W = Where(K, T, safe)\n  U = Unsqueeze(W, one)\n"
      "  L = LogSoftmax<axis=1>(X)\n  G = GatherElements<axis=1>(L, U)\n  S = Squeeze(G, one)\n"
      "  N = Neg(S)\n  F = Cast<to=" +
      c.x + ">(fill)\n  Z = Where(K, N, F)\n";
  const std::string sum = "ReduceSum<keepdims=" + c.keepdims + ">";
  if (c.count == "plain") {
    text += "  CK = Cast<to=" + c.x + ">(K)\n  DK = " + sum + "(CK)\n";
  } else {
    text += "  CK = Cast<to=" + std::string(c.count == "int64" ? "7" : "1") + ">(K)\n  RK = " + sum +
            "(CK)\n  DK = Cast<to=" + (c.summed_in_float ? c.back : c.x) + ">(RK)\n";
  }
  if (c.summed_in_float)
    text += "  CZ = Cast<to=" + c.wide + ">(Z)\n  RZ = " + sum + "(CZ)\n  DZ = Cast<to=" + c.back + ">(RZ)\n";
  else
    text += "  DZ = " + sum + "(Z)\n";
  return text + "  Y = Div(DZ, DK)\n}\n";
}
Model optimized_loss(const Loss& c) {
  Model m = load_case_model(loss_text(c));
  xexp::testing::optimize_quietly(m);
  return m;
}

TEST(PatternSoftmaxCrossEntropyLossCast, OneLossNodeForEachSpelling) {
  for (const Loss& c : {Loss{}, Loss{.equal_swapped = true}, Loss{.count = "int64"}, Loss{.count = "plain"},
                        Loss{.x = "1", .summed_in_float = false, .count = "int64"},
                        Loss{.x = "11", .summed_in_float = false, .count = "plain", .ignore = "7"}}) {
    Model m = optimized_loss(c);
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"SoftmaxCrossEntropyLoss"})) << loss_text(c);
    const Node& loss = g.node(g.first_node());
    ASSERT_EQ(loss.inputs.size(), 2u);
    EXPECT_EQ(input_name(g, loss, 0), "X");
    EXPECT_EQ(input_name(g, loss, 1), "T");
    EXPECT_EQ(loss.attribute(Symbol("ignore_index"))->i, std::stoll(c.ignore));
    EXPECT_EQ(loss.attribute(Symbol("reduction"))->s, "mean");
    EXPECT_EQ(g.value(g.outputs()[0]).elem, g.value(g.inputs()[0]).elem);
  }
}

// A nonzero fill for ignored terms sums them in, a sum keeping its axis is no scalar, a numerator
// summed in integers truncates, one cast back to another type changes the loss's type, bfloat16 has no
// CPU kernel in ONNX Runtime.
TEST(PatternSoftmaxCrossEntropyLossCast, NotWhenTheDecompositionComputesSomethingElse) {
  for (const Loss& c : {Loss{.zero = "0.5"}, Loss{.keepdims = "1"}, Loss{.wide = "6"}, Loss{.back = "1"},
                        Loss{.x = "16", .back = "16"}}) {
    const OpList ops = op_types(*optimized_loss(c).graph);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "SoftmaxCrossEntropyLoss"), 0) << loss_text(c);
    EXPECT_GE(ops.size(), 10u) << loss_text(c);
  }
}

// Read from disk as the exporter wrote it and optimized as `xexp optimize` does: the 16 nodes become the
// loss, and targets of which some are ignored give the same loss, in the evaluator and ONNX Runtime.
TEST(PatternSoftmaxCrossEntropyLossCast, SameLossWithIgnoredTargetsOnAModelReadFromDisk) {
  for (const Loss& c : {Loss{}, Loss{.x = "1", .summed_in_float = false, .count = "int64"}}) {
    xexp::testing::TempDir dir;
    const std::string path = (dir.path() / "loss.onnx").string();
    Model model = xexp::testing::optimized_case_model(loss_text(c), path);
    ASSERT_EQ(op_types(*model.graph), (OpList{"SoftmaxCrossEntropyLoss"})) << loss_text(c);
    xexp::testing::NamedTensors feeds =
        xexp::testing::random_feeds(*load_model(path).graph, {.seed = 5, .float_low = -3, .float_high = 3});
    feeds[1].second = Tensor::from<int64_t>({4}, {2, -100, 0, -100});
    // float16 logits: the decomposition rounds the log-softmax to float16 before summing, the kernel not.
    test::expect_outputs_of_file(path, model, feeds, c.x == "10" ? 2e-3 : 1e-6);
  }
}

}  // namespace
