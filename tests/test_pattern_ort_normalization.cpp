// onnxruntime set, normalizations: SimplifiedLayerNormalization, SimplifiedLayerNormalizationMul,
// SkipLayerNormalization, SkipLayerNormalizationBias, SkipSimplifiedLayerNormalization,
// SkipSimplifiedLayerNormalizationMul; and
// the default set's RMSNormalization and RMSNormalizationMul (opset 23), the same decompositions.
// Positive (exact op sequence after), one negative per condition, and same outputs in xexp's evaluator
// and ONNX Runtime. The fused kernels compute the same formulas (in float, like the float32
// decompositions): results agree within atol 1e-5.
#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/registry.hpp"
#include "xexp/rewrite/rule_set.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::op_types;
using test::run_rules;
using test::OpList;

static Tensor ramp(std::vector<int64_t> dims, float start = 0.5f) {
  std::vector<float> v;
  for (int64_t k = 0; k < dims_element_count(dims); ++k) v.push_back(start + 0.1f * static_cast<float>(k % 7));
  return Tensor::from<float>(std::move(dims), v);
}
static const std::string kRmsRules = "SimplifiedLayerNormalization,SkipSimplifiedLayerNormalization";

// ---- RMS normalization (Pow or Mul, ReduceMean, Add, Sqrt, Reciprocal or Div(1, .) then Mul, or Div) ----
struct Rms {
  std::vector<int64_t> axes = {-1};
  int64_t keepdims = 1;
  float pow = 2.f;
  bool reciprocal = false;           // Reciprocal(Sqrt) instead of Div(1, Sqrt), as torch writes it
  bool square_by_mul = false;        // Mul(x, x) instead of Pow(x, 2)
  bool divide = false;               // x / Sqrt(...) instead of x * (1 / Sqrt(...))
  bool weight = false;               // then Mul by a constant weight
  bool inv_std_output = false;       // the Reciprocal is also a graph output, kept for a backward graph
  std::vector<int64_t> weight_dims = {8};
  bool residual = false;             // normalizes X + Y, whose sum the next residual Add reads too
  Shape skip_shape = {2, 3, 8};
  Dim last = 8;
  int64_t batch = 2, rows = 3;       // 8, 8: without keepdims, the mean (8, 8) still broadcasts
  // Half precision as HF Llama exports it: X of this type, Cast to float before, Cast to `back` after.
  ElemType half = ElemType::Float;
  ElemType back = ElemType::Float16;
  bool float_reader = false;         // the float X is also a graph output through Neg
  ElemType compute = ElemType::Float;  // X's type and the constants', without the half Casts
  int64_t opset = 18;
};

static Model rms(const Rms& c) {
  Model m = test::model_with_opset(c.opset);
  Graph& g = *m.graph;
  const bool in_half = c.half != ElemType::Float;
  ValueId x = g.add_input("X", in_half ? c.half : c.compute, Shape{c.batch, c.rows, c.last});
  auto scalar = [&](const char* name, float v) {
    return g.add_initializer(name, eval::cast_tensor(Tensor::scalar<float>(v), c.compute));
  };
  if (in_half) x = node(g, "Cast", {x}, {Attribute::make_int("to", static_cast<int64_t>(ElemType::Float))});
  if (c.float_reader) g.add_output(node(g, "Neg", {x}));
  ValueId sum = ir::kNone;
  if (c.residual) x = sum = node(g, "Add", {x, g.add_input("Y", c.compute, c.skip_shape)});
  ValueId square = c.square_by_mul ? node(g, "Mul", {x, x}) : node(g, "Pow", {x, scalar("two", c.pow)});
  ValueId mean = node(g, "ReduceMean", {square, test::int64_initializer(g, "axes", c.axes)},
                      {Attribute::make_int("keepdims", c.keepdims)});
  ValueId root = node(g, "Sqrt", {node(g, "Add", {mean, scalar("eps", 1e-6f)})});
  ValueId y = ir::kNone;
  if (c.divide) {
    y = node(g, "Div", {x, root});
  } else {
    ValueId inv = c.reciprocal ? node(g, "Reciprocal", {root}) : node(g, "Div", {scalar("one", 1.f), root});
    y = node(g, "Mul", {x, inv});
    if (c.inv_std_output) g.add_output(inv);
  }
  if (in_half) y = node(g, "Cast", {y}, {Attribute::make_int("to", static_cast<int64_t>(c.back))});
  const ElemType weight_type = in_half ? c.back : c.compute;
  if (c.weight) y = node(g, "Mul", {g.add_initializer("W", eval::cast_tensor(ramp(c.weight_dims), weight_type)), y});
  g.add_output(y);
  if (c.residual) g.add_output(node(g, "Add", {sum, y}));
  return m;
}

TEST(PatternSimplifiedLayerNormalization, ChainBecomesOneNode) {
  for (bool reciprocal : {false, true}) {
    Model m = rms({.reciprocal = reciprocal});
    run_rules(m, "SimplifiedLayerNormalization");
    ASSERT_EQ(op_types(*m.graph), (OpList{"SimplifiedLayerNormalization"})) << reciprocal;
    const Node& n = m.graph->node(m.graph->first_node());
    EXPECT_EQ(n.attribute(Symbol("axis"))->i, -1);
    EXPECT_EQ(n.attribute(Symbol("epsilon"))->f, 1e-6f);
    EXPECT_EQ(n.attribute(Symbol("stash_type"))->i, 1);
  }
}

TEST(PatternSimplifiedLayerNormalization, EverySpelling) {
  for (bool mul : {false, true})
    for (int division : {0, 1, 2}) {
      Model m = rms({.reciprocal = division == 1, .square_by_mul = mul, .divide = division == 2});
      run_rules(m, "SimplifiedLayerNormalization");
      EXPECT_EQ(op_types(*m.graph), (OpList{"SimplifiedLayerNormalization"})) << mul << division;
    }
}

TEST(PatternSimplifiedLayerNormalization, DynamicLastDimensionGetsOnesFromTheShape) {
  Model m = rms({.last = Dim::symbolic("hidden")});
  run_rules(m, "SimplifiedLayerNormalization");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Shape", "Gather", "ConstantOfShape", "SimplifiedLayerNormalization"}));
}

TEST(PatternSimplifiedLayerNormalization, NotOverAnotherAxisOrWithoutKeepdims) {
  Model axis = rms({.axes = {1}});
  run_rules(axis, "SimplifiedLayerNormalization");
  EXPECT_EQ(op_types(*axis.graph).size(), 6u);
  Model dropped = rms({.keepdims = 0, .batch = 8, .rows = 8});
  run_rules(dropped, "SimplifiedLayerNormalization");
  EXPECT_EQ(op_types(*dropped.graph).size(), 6u);
}

TEST(PatternSimplifiedLayerNormalization, NotForAnotherPower) {
  Model m = rms({.pow = 3.f});
  run_rules(m, "SimplifiedLayerNormalization");
  EXPECT_EQ(op_types(*m.graph).size(), 6u);
}

TEST(PatternSimplifiedLayerNormalization, SameNumbers) {
  test::expect_same_outputs([] { return rms({}); }, "SimplifiedLayerNormalization", 1e-6);
  test::expect_same_outputs([] { return rms({.reciprocal = true}); }, "SimplifiedLayerNormalization", 1e-6);
  test::expect_same_outputs([] { return rms({.square_by_mul = true, .divide = true}); }, "SimplifiedLayerNormalization",
                            1e-6);
}

// A training forward graph keeps 1 / Sqrt(...) as an output for its backward (the original project's
// dort-c-custom__0, llama_forward): SimplifiedLayerNormalization's inv_std_var takes its place, under its
// name and in its position among the outputs.
TEST(PatternSimplifiedLayerNormalization, ReciprocalKeptForTheBackwardBecomesInvStdVar) {
  Model m = rms({.reciprocal = true, .inv_std_output = true});
  const std::string inv_name = m.graph->value(m.graph->outputs()[0]).name;
  run_rules(m, "SimplifiedLayerNormalization");
  ASSERT_EQ(op_types(*m.graph), (OpList{"SimplifiedLayerNormalization"}));
  const Graph& g = *m.graph;
  const Node& n = g.node(g.first_node());
  ASSERT_EQ(n.outputs.size(), 2u);
  EXPECT_EQ(g.outputs(), (std::vector<ValueId>{n.outputs[1], n.outputs[0]}));
  EXPECT_EQ(g.value(n.outputs[1]).name, inv_name);
  EXPECT_EQ(g.value(n.outputs[1]).elem, ElemType::Float);
  EXPECT_EQ(g.value(n.outputs[1]).shape, (Shape{2, 3, 1}));
}

// inv_std_var is float (stash_type 1): a double Reciprocal read elsewhere keeps the decomposition, which
// fuses without that reader.
TEST(PatternSimplifiedLayerNormalization, ReciprocalReadElsewhereStaysInDouble) {
  Model kept = rms({.reciprocal = true, .inv_std_output = true, .compute = ElemType::Double});
  run_rules(kept, "SimplifiedLayerNormalization");
  EXPECT_EQ(op_types(*kept.graph).size(), 6u);
  Model fused = rms({.reciprocal = true, .compute = ElemType::Double});
  run_rules(fused, "SimplifiedLayerNormalization");
  EXPECT_EQ(op_types(*fused.graph), (OpList{"SimplifiedLayerNormalization"}));
}

TEST(PatternSimplifiedLayerNormalization, InvStdVarSameNumbers) {
  test::expect_same_outputs([] { return rms({.reciprocal = true, .inv_std_output = true}); },
                            "SimplifiedLayerNormalization", 1e-6);
}

TEST(PatternSimplifiedLayerNormalization, CastPairAroundTheFloatNormGoes) {
  for (ElemType half : {ElemType::Float16, ElemType::BFloat16}) {
    Model m = rms({.half = half, .back = half});
    run_rules(m, "SimplifiedLayerNormalization");
    ASSERT_EQ(op_types(*m.graph), (OpList{"SimplifiedLayerNormalization"})) << static_cast<int>(half);
    const Graph& g = *m.graph;
    const Node& n = g.node(g.first_node());
    EXPECT_EQ(n.inputs[0], g.inputs()[0]);
    const Tensor* scale = rewrite::constant_tensor(g, n.inputs[1]);
    ASSERT_NE(scale, nullptr);
    EXPECT_EQ(scale->type(), half);
    EXPECT_EQ(scale->dims(), (std::vector<int64_t>{8}));
    EXPECT_TRUE(patterns::equal_everywhere(*scale, 1.0));
    EXPECT_EQ(n.attribute(Symbol("axis"))->i, -1);
    EXPECT_EQ(n.attribute(Symbol("epsilon"))->f, 1e-6f);
    EXPECT_EQ(n.attribute(Symbol("stash_type"))->i, 1);
    EXPECT_EQ(g.value(n.outputs[0]).elem, half);
  }
}

TEST(PatternSimplifiedLayerNormalization, CastPairStaysForAnotherTypeBackOrAFloatReader) {
  Model other = rms({.half = ElemType::Float16, .back = ElemType::Double});
  run_rules(other, "SimplifiedLayerNormalization");
  EXPECT_EQ(op_types(*other.graph), (OpList{"Cast", "SimplifiedLayerNormalization", "Cast"}));
  Model read = rms({.half = ElemType::Float16, .float_reader = true});
  run_rules(read, "SimplifiedLayerNormalization");
  EXPECT_EQ(op_types(*read.graph), (OpList{"Cast", "Neg", "SimplifiedLayerNormalization", "Cast"}));
}

TEST(PatternSimplifiedLayerNormalization, CastPairThenHalfWeightIsOneNode) {
  Model m = rms({.weight = true, .half = ElemType::Float16});
  run_rules(m, "SimplifiedLayerNormalization,SimplifiedLayerNormalizationMul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"SimplifiedLayerNormalization"}));
}

// The fused op reads float16, normalizes in float (stash_type=1) and rounds once to float16, as the
// Cast pair does; the only difference is float's own rounding order inside, far below float16's
// half-ulp (about 5e-4 relative near 1), so one float16 ulp at the outputs' magnitude (~2) is the bound.
TEST(PatternSimplifiedLayerNormalization, CastPairSameNumbers) {
  test::expect_same_outputs([] { return rms({.half = ElemType::Float16}); }, "SimplifiedLayerNormalization", 2e-3);
  test::expect_same_outputs([] { return rms({.weight = true, .half = ElemType::Float16}); },
                            "SimplifiedLayerNormalization,SimplifiedLayerNormalizationMul", 2e-3);
}

TEST(PatternSimplifiedLayerNormalizationMul, WeightGoesIntoTheScale) {
  Model m = rms({.weight = true});
  run_rules(m, "SimplifiedLayerNormalization,SimplifiedLayerNormalizationMul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"SimplifiedLayerNormalization"}));
}

TEST(PatternSimplifiedLayerNormalizationMul, NotForAWeightOfAnotherShape) {
  Model m = rms({.weight = true, .weight_dims = {1}});
  run_rules(m, "SimplifiedLayerNormalization,SimplifiedLayerNormalizationMul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"SimplifiedLayerNormalization", "Mul"}));
}

TEST(PatternSimplifiedLayerNormalizationMul, SameNumbers) {
  test::expect_same_outputs([] { return rms({.weight = true}); },
                            "SimplifiedLayerNormalization,SimplifiedLayerNormalizationMul", 1e-5);
}

// ---- RMSNormalization (default set, opset >= 23) ---------------------------------------------------
TEST(PatternRMSNormalization, EverySpellingBecomesOneNodeAtOpset23) {
  for (bool mul : {false, true})
    for (int division : {0, 1, 2}) {
      Model m =
          rms({.reciprocal = division == 1, .square_by_mul = mul, .divide = division == 2, .opset = 23});
      run_rules(m, "RMSNormalization");
      ASSERT_EQ(op_types(*m.graph), (OpList{"RMSNormalization"})) << mul << division;
      const Graph& g = *m.graph;
      const Node& n = g.node(g.first_node());
      EXPECT_EQ(n.inputs[0], g.inputs()[0]);
      const Tensor* scale = rewrite::constant_tensor(g, n.inputs[1]);
      ASSERT_NE(scale, nullptr);
      EXPECT_EQ(scale->dims(), (std::vector<int64_t>{8}));
      EXPECT_TRUE(patterns::equal_everywhere(*scale, 1.0));
      EXPECT_EQ(n.attribute(Symbol("axis"))->i, -1);
      EXPECT_EQ(n.attribute(Symbol("epsilon"))->f, 1e-6f);
      EXPECT_EQ(n.attribute(Symbol("stash_type"))->i, 1);
    }
}

TEST(PatternRMSNormalization, NotBelowOpset23NorOverAnotherAxis) {
  Model old = rms({.opset = 22});
  run_rules(old, "RMSNormalization");
  EXPECT_EQ(op_types(*old.graph).size(), 6u);
  Model axis = rms({.axes = {1}, .opset = 23});
  run_rules(axis, "RMSNormalization");
  EXPECT_EQ(op_types(*axis.graph).size(), 6u);
}

// With both sets, as `xexp optimize` runs them: ONNX's op from 23 (the default set comes first at the
// same priority), ONNX Runtime's below, and the weight goes into either's scale.
TEST(PatternRMSNormalization, DefaultSetWinsOverSimplifiedLayerNormalizationFrom23) {
  for (int64_t opset : {22, 23}) {
    Model m = rms({.weight = true, .opset = opset});
    run_rules(m, "default+onnxruntime");
    EXPECT_EQ(op_types(*m.graph), (OpList{opset >= 23 ? "RMSNormalization" : "SimplifiedLayerNormalization"}))
        << opset;
  }
}

TEST(PatternRMSNormalization, CastPairAroundTheFloatNormGoes) {
  Model m = rms({.half = ElemType::Float16, .back = ElemType::Float16, .opset = 23});
  run_rules(m, "RMSNormalization");
  ASSERT_EQ(op_types(*m.graph), (OpList{"RMSNormalization"}));
  const Graph& g = *m.graph;
  EXPECT_EQ(g.node(g.first_node()).inputs[0], g.inputs()[0]);
  EXPECT_EQ(g.value(g.node(g.first_node()).outputs[0]).elem, ElemType::Float16);
}

TEST(PatternRMSNormalization, SameNumbers) {
  test::expect_same_outputs([] { return rms({.opset = 23}); }, "RMSNormalization", 1e-6);
  test::expect_same_outputs([] { return rms({.square_by_mul = true, .divide = true, .opset = 23}); },
                            "RMSNormalization", 1e-6);
  test::expect_same_outputs([] { return rms({.half = ElemType::Float16, .opset = 23}); }, "RMSNormalization",
                            2e-3);
}

TEST(PatternRMSNormalizationMul, WeightGoesIntoTheScale) {
  Model m = rms({.weight = true, .opset = 23});
  run_rules(m, "RMSNormalization,RMSNormalizationMul");
  ASSERT_EQ(op_types(*m.graph), (OpList{"RMSNormalization"}));
  const Graph& g = *m.graph;
  const Tensor* scale = rewrite::constant_tensor(g, g.node(g.first_node()).inputs[1]);
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(eval::as_doubles(*scale), eval::as_doubles(ramp({8})));
}

TEST(PatternRMSNormalizationMul, NotForAWeightOfAnotherShape) {
  Model m = rms({.weight = true, .weight_dims = {1}, .opset = 23});
  run_rules(m, "RMSNormalization,RMSNormalizationMul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"RMSNormalization", "Mul"}));
}

TEST(PatternRMSNormalizationMul, SameNumbers) {
  test::expect_same_outputs([] { return rms({.weight = true, .opset = 23}); },
                            "RMSNormalization,RMSNormalizationMul", 1e-5);
}

TEST(PatternSkipSimplifiedLayerNormalization, ResidualAddIsAbsorbed) {
  Model m = rms({.residual = true});
  run_rules(m, kRmsRules);
  ASSERT_EQ(op_types(*m.graph), (OpList{"com.microsoft.SkipSimplifiedLayerNormalization", "Add"}));
  const Graph& g = *m.graph;
  const Node& skip = g.node(g.first_node());
  ASSERT_EQ(skip.outputs.size(), 4u);
  EXPECT_EQ(skip.attribute(Symbol("epsilon"))->f, 1e-6f);
  EXPECT_EQ(skip.attribute(Symbol("stash_type")), nullptr);
  // The residual Add reads the sum output.
  EXPECT_EQ(g.node(g.last_node()).inputs[0], skip.outputs[3]);
}

TEST(PatternSkipSimplifiedLayerNormalization, NotForABroadcastSkip) {
  Model m = rms({.residual = true, .skip_shape = {3, 8}});
  run_rules(m, kRmsRules);
  EXPECT_EQ(op_types(*m.graph), (OpList{"Add", "SimplifiedLayerNormalization", "Add"}));
}

TEST(PatternSkipSimplifiedLayerNormalization, SameNumbers) {
  test::expect_same_outputs([] { return rms({.residual = true}); }, kRmsRules, 1e-5);
}

TEST(PatternSkipSimplifiedLayerNormalizationMul, WeightGoesIntoGamma) {
  Model m = rms({.weight = true, .residual = true});
  run_rules(m, kRmsRules + ",SkipSimplifiedLayerNormalizationMul");
  ASSERT_EQ(op_types(*m.graph), (OpList{"com.microsoft.SkipSimplifiedLayerNormalization", "Add"}));
  const Graph& g = *m.graph;
  EXPECT_EQ(g.node(g.last_node()).inputs[0], g.node(g.first_node()).outputs[3]);
}

TEST(PatternSkipSimplifiedLayerNormalizationMul, SameNumbers) {
  test::expect_same_outputs([] { return rms({.weight = true, .residual = true}); },
                            kRmsRules + ",SkipSimplifiedLayerNormalizationMul", 1e-5);
}

// ---- SkipLayerNormalization -----------------------------------------------------------------------
struct Skip {
  std::optional<int64_t> axis = std::nullopt;  // absent: the ONNX default -1
  bool beta = true;
  Shape x_shape = {2, 3, 8};
  Shape skip_shape = {2, 3, 8};
};

static Model skip_layer_norm(const Skip& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId sum = node(g, "Add", {g.add_input("X", ElemType::Float, c.x_shape), g.add_input("Y", ElemType::Float, c.skip_shape)});
  std::vector<ValueId> inputs = {sum, g.add_initializer("gamma", ramp({8}))};
  if (c.beta) inputs.push_back(g.add_initializer("beta", ramp({8}, -0.3f)));
  std::vector<Attribute> attributes;
  if (c.axis) attributes.push_back(Attribute::make_int("axis", *c.axis));
  ValueId y = node(g, "LayerNormalization", inputs, attributes);
  g.add_output(y);
  g.add_output(node(g, "Add", {sum, y}));
  return m;
}

TEST(PatternSkipLayerNormalization, AddAndLayerNormalizationBecomeOneNode) {
  for (std::optional<int64_t> axis : {std::optional<int64_t>{}, std::optional<int64_t>{-1}, std::optional<int64_t>{2}}) {
    Model m = skip_layer_norm({.axis = axis});
    run_rules(m, "SkipLayerNormalization");
    ASSERT_EQ(op_types(*m.graph), (OpList{"com.microsoft.SkipLayerNormalization", "Add"}));
    const Graph& g = *m.graph;
    const Node& skip = g.node(g.first_node());
    // LayerNormalization's default epsilon, written: SkipLayerNormalization's own default is 1e-12.
    EXPECT_EQ(skip.attribute(Symbol("epsilon"))->f, 1e-5f);
    EXPECT_EQ(g.node(g.last_node()).inputs[0], skip.outputs[3]);
  }
}

TEST(PatternSkipLayerNormalization, NotOverAnotherAxis) {
  Model m = skip_layer_norm({.axis = 1});
  run_rules(m, "SkipLayerNormalization");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Add", "LayerNormalization", "Add"}));
}

TEST(PatternSkipLayerNormalization, NotForABroadcastSkipOrRankFour) {
  Model broadcast = skip_layer_norm({.skip_shape = {1, 3, 8}});
  run_rules(broadcast, "SkipLayerNormalization");
  EXPECT_EQ(op_types(*broadcast.graph), (OpList{"Add", "LayerNormalization", "Add"}));
  Model four = skip_layer_norm({.x_shape = {2, 2, 3, 8}, .skip_shape = {2, 2, 3, 8}});
  run_rules(four, "SkipLayerNormalization");
  EXPECT_EQ(op_types(*four.graph), (OpList{"Add", "LayerNormalization", "Add"}));
}

TEST(PatternSkipLayerNormalization, SameNumbers) {
  test::expect_same_outputs([] { return skip_layer_norm({}); }, "SkipLayerNormalization", 1e-5);
  test::expect_same_outputs([] { return skip_layer_norm({.beta = false}); }, "SkipLayerNormalization", 1e-5);
  test::expect_same_outputs([] { return skip_layer_norm({.x_shape = {6, 8}, .skip_shape = {6, 8}}); },
                            "SkipLayerNormalization", 1e-5);
}

// ---- SkipLayerNormalizationBias -------------------------------------------------------------------
// A linear layer (MatMul, then the Add of its bias) before the residual sum and its normalization; the
// sum is read by the next residual Add too. `bias` declares c (the Add's constant), `normalization` the
// node after the sum, `linear_first` puts the linear layer's output first in the sum.
namespace {
struct Biased {
  std::string bias = "float[8] c = {0.5, -0.5, 0.25, 0.0, 1.0, -1.0, 0.75, 0.1}";
  std::string normalization = "LayerNormalization<axis=-1>(S, s, b)";
  bool linear_first = false;
};
// n comma-separated numbers, `at(k)` each.
template <class F>
std::string numbers(int n, F at) {
  std::string out;
  for (int k = 0; k < n; ++k) out += (k ? ", " : "") + std::to_string(at(k));
  return out;
}
std::string biased_skip(const Biased& c) {
  const std::string w = numbers(64, [](int k) { return 0.05 * ((k * 7) % 11 - 5); });
  return std::string(R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2,4,8] A, float[2,4,8] B) => (float[2,4,8] Y, float[2,4,8] Z) <float[8,8] w = {)") + w + "}, " + c.bias +
         R"(, float[8] s = {1.0, 0.9, 1.1, 1.0, 0.8, 1.2, 1.0, 1.0}, float[8] b = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7}> {
  M = MatMul(A, w)
  L = Add(M, c)
  S = Add()" +
         (c.linear_first ? "L, B" : "B, L") + R"()
  Y = )" +
         c.normalization + R"(
  Z = Add(S, Y)
})";
}
const std::string kBiasRules =
    "SkipLayerNormalization,SkipSimplifiedLayerNormalization,SkipLayerNormalizationBias";
const std::string kSimplified = "SimplifiedLayerNormalization<axis=-1, epsilon=0.00001, stash_type=1>(S, s)";
}  // namespace

TEST(PatternSkipLayerNormalizationBias, TheLinearBiasBecomesTheNodesBias) {
  for (bool linear_first : {false, true}) {
    for (const std::string& normalization : {std::string("LayerNormalization<axis=-1>(S, s, b)"),
                                             std::string("LayerNormalization<axis=-1>(S, s)"), kSimplified}) {
      SCOPED_TRACE(normalization + (linear_first ? ", linear first" : ""));
      Model m = xexp::testing::load_case_model(
          biased_skip({.normalization = normalization, .linear_first = linear_first}));
      run_rules(m, kBiasRules);
      const Graph& g = *m.graph;
      const bool simplified = normalization == kSimplified;
      const std::string fused = simplified ? "com.microsoft.SkipSimplifiedLayerNormalization"
                                           : "com.microsoft.SkipLayerNormalization";
      ASSERT_EQ(op_types(g), (OpList{"MatMul", fused, "Add"}));
      const Node& matmul = g.node(g.first_node());
      const Node& skip = g.node(g.value(g.outputs()[0]).producer);
      const std::size_t linear_slot = linear_first ? 0 : 1, bias_slot = simplified ? 3 : 4;
      EXPECT_EQ(skip.inputs[linear_slot], matmul.outputs[0]);
      EXPECT_EQ(g.value(skip.inputs[1 - linear_slot]).name, "B");
      ASSERT_EQ(skip.inputs.size(), bias_slot + 1);
      EXPECT_EQ(g.value(skip.inputs[bias_slot]).name, "c");
      if (normalization == "LayerNormalization<axis=-1>(S, s)") {
        EXPECT_EQ(skip.inputs[3], kNone);  // no beta
      }
      EXPECT_EQ(g.node(g.last_node()).inputs[0], skip.outputs[3]);  // the sum, bias included, feeds Z
    }
  }
}

TEST(PatternSkipLayerNormalizationBias, NotForATensor) {
  const std::string full = "float[2,4,8] c = {" + numbers(64, [](int k) { return 0.01 * k; }) + "}";
  Model tensor = xexp::testing::load_case_model(biased_skip({.bias = full}));
  run_rules(tensor, kBiasRules);
  EXPECT_EQ(op_types(*tensor.graph),
            (OpList{"MatMul", "Add", "com.microsoft.SkipLayerNormalization", "Add"}));
}

TEST(PatternSkipLayerNormalizationBias, SameNumbers) {
  for (bool linear_first : {false, true})
    for (const std::string& normalization :
         {std::string("LayerNormalization<axis=-1>(S, s, b)"), kSimplified})
      test::expect_same_outputs(
          [&] {
            return xexp::testing::load_case_model(
                biased_skip({.normalization = normalization, .linear_first = linear_first}));
          },
          kBiasRules, 1e-5);
}
