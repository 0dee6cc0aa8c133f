// LayerNormalization (the decomposed ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div chain, axes as an
// attribute at opset 17 and as an input at 18, Mul(d, d) for the square, Mul by Reciprocal for the
// division, epsilon in a Constant node), LayerNormalizationAnyOpset (the same below opset 17, onnxruntime
// set) and LayerNormalizationScale (Mul and Add after it).
// The fused op computes the same formula in one kernel: float32 results agree within atol 1e-5.
// At the end CastLayerNormalizationCast (the normalization of a float16 input without its Casts).
#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/onnx.hpp"
#include "xexp/patterns/registry.hpp"
#include "xexp/optimizer/optimize_model.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::input_name;
using test::op_types;
using test::producer;
using test::run_rules;
using test::OpList;

struct Decomposed {
  int64_t opset = 18;
  std::vector<int64_t> axes = {-1};
  bool with_eps = true;
  bool scale_and_bias = false;
  float pow = 2.f;
  bool square_by_mul = false;      // Mul(d, d) instead of Pow(d, 2)
  bool by_reciprocal = false;      // d * Reciprocal(Sqrt(...)) instead of d / Sqrt(...)
  bool eps_in_constant_node = false;
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
  ValueId square = c.square_by_mul ? node(g, "Mul", {d, d})
                                   : node(g, "Pow", {d, g.add_initializer("two", Tensor::scalar<float>(c.pow))});
  ValueId var = reduce_mean(g, square, c.axes, c.opset);
  if (c.with_eps) {
    ValueId eps = c.eps_in_constant_node
                      ? node(g, "Constant", {}, {Attribute::make_tensor("value", Tensor::scalar<float>(1e-5f))}, "", c.opset)
                      : g.add_initializer("eps", Tensor::scalar<float>(1e-5f));
    var = node(g, "Add", {var, eps});
  }
  ValueId root = node(g, "Sqrt", {var});
  ValueId y = c.by_reciprocal ? node(g, "Mul", {node(g, "Reciprocal", {root}), d}) : node(g, "Div", {d, root});
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
  return m;
}

TEST(PatternLayerNormalization, ChainBecomesOneNode) {
  for (int64_t opset : {17, 18}) {
    Model m = decomposed({.opset = opset});
    run_rules(m, "LayerNormalization");
    ASSERT_EQ(op_types(*m.graph), (OpList{"LayerNormalization"})) << opset;
    const Node& n = m.graph->node(m.graph->first_node());
    EXPECT_EQ(n.attribute(Symbol("axis"))->i, 2);
    EXPECT_EQ(n.attribute(Symbol("epsilon"))->f, 1e-5f);
  }
}

TEST(PatternLayerNormalization, WithoutEpsilon) {
  Model m = decomposed({.with_eps = false});
  run_rules(m, "LayerNormalization");
  ASSERT_EQ(op_types(*m.graph), (OpList{"LayerNormalization"}));
  EXPECT_EQ(m.graph->node(m.graph->first_node()).attribute(Symbol("epsilon"))->f, 0.f);
}

TEST(PatternLayerNormalization, EverySpelling) {
  for (bool mul : {false, true})
    for (bool reciprocal : {false, true})
      for (bool constant_node : {false, true}) {
        Model m = decomposed({.square_by_mul = mul, .by_reciprocal = reciprocal, .eps_in_constant_node = constant_node});
        run_rules(m, "LayerNormalization");
        ASSERT_EQ(op_types(*m.graph), (OpList{"LayerNormalization"})) << mul << reciprocal << constant_node;
        EXPECT_EQ(m.graph->node(m.graph->first_node()).attribute(Symbol("epsilon"))->f, 1e-5f);
      }
}

// The default set emits standard ONNX only: LayerNormalization exists from opset 17.
TEST(PatternLayerNormalization, NotBeforeOpset17) {
  for (int64_t opset : {13, 16}) {
    Model m = decomposed({.opset = opset});
    run_rules(m, "default");
    EXPECT_EQ(op_types(*m.graph), (OpList{"ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div"})) << opset;
  }
}

// The onnxruntime set fuses below opset 17: ONNX Runtime registers LayerNormalization from opset 1.
TEST(PatternLayerNormalizationAnyOpset, BelowOpset17) {
  for (int64_t opset : {13, 16})
    for (bool reciprocal : {false, true}) {
      Model m = decomposed({.opset = opset, .square_by_mul = reciprocal, .by_reciprocal = reciprocal});
      run_rules(m, "LayerNormalizationAnyOpset");
      ASSERT_EQ(op_types(*m.graph), (OpList{"LayerNormalization"})) << opset;
      EXPECT_EQ(m.graph->node(m.graph->first_node()).attribute(Symbol("axis"))->i, 2);
    }
}

TEST(PatternLayerNormalizationAnyOpset, NotForAnotherPower) {
  Model m = decomposed({.opset = 16, .pow = 3.f});
  run_rules(m, "LayerNormalizationAnyOpset");
  EXPECT_EQ(op_types(*m.graph).size(), 7u);
}

TEST(PatternLayerNormalizationAnyOpset, NotOverLeadingAxes) {
  Model m = decomposed({.opset = 16, .axes = {1}});
  run_rules(m, "LayerNormalizationAnyOpset");
  EXPECT_EQ(op_types(*m.graph).size(), 7u);
}

TEST(PatternLayerNormalizationAnyOpset, SameNumbers) {
  test::expect_same_outputs([] { return decomposed({.opset = 13, .scale_and_bias = true}); }, "default+onnxruntime",
                            1e-5);
  test::expect_same_outputs(
      [] { return decomposed({.opset = 16, .square_by_mul = true, .by_reciprocal = true, .eps_in_constant_node = true}); },
      "LayerNormalizationAnyOpset", 1e-5);
}

// Torch exports at opsets 14 and 16 read from disk, optimized as `xexp optimize` does: every
// LayerNorm fuses with the onnxruntime set (into LayerNormalization, or SkipLayerNormalization with the
// residual Add before it), none with the default set (the model's opset lacks LayerNormalization).
TEST(PatternLayerNormalizationAnyOpset, OnTorchExports) {
  const std::pair<const char*, std::size_t> models[] = {
      {"gpt_erf_L1.op16", 3}, {"seed_llm.op16", 2}, {"gpt_erf_L1.op14dyn", 3}, {"seed_llm.op14dyn", 2}};
  for (const auto& [name, layer_norms] : models) {
    const std::string path = std::string(XEXP_SHARED_DIR) + "/models/" + name + ".onnx";
    for (const char* patterns : {"default", "default+onnxruntime"}) {
      Model model = load_model(path);
      xexp::testing::optimize_quietly(model, true, patterns);
      // SkipLayerNormalization then takes the LayerNormalizations after a residual Add.
      std::size_t fused = 0, reduce_means = 0;
      for (const std::string& op : op_types(*model.graph)) {
        fused += op == "LayerNormalization" || op == "com.microsoft.SkipLayerNormalization";
        reduce_means += op == "ReduceMean";
      }
      const bool ort = std::string(patterns) != "default";
      EXPECT_EQ(fused, ort ? layer_norms : 0u) << name << " " << patterns;
      EXPECT_EQ(reduce_means, ort ? 0u : 2 * layer_norms) << name << " " << patterns;
    }
  }
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

TEST(PatternLayerNormalization, ScaleAndBiasAreFusedToo) {
  Model m = decomposed({.scale_and_bias = true});
  run_rules(m, "LayerNormalization,LayerNormalizationScale");
  EXPECT_EQ(op_types(*m.graph), (OpList{"LayerNormalization"}));
}

// LayerNormalization of ones and zeros, as LayerNormalization leaves a hand-written normalization, then
// the affine weights W and B, graph inputs (a training export's parameters, or weights whose data is
// not shipped). `scale` and `bias` are the node's.
static std::string affine_inputs(const std::string& scale, const std::string& bias = "z") {
  return R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4] X, float[4] W, float[4] B) => (float[2,4] Y) <float[4] s = )" +
         scale +
         R"(, float[4] z = {0.0, 0.0, 0.0, 0.0}, float[4] h = {0.0, 0.5, 0.0, 0.0}> {
  L = LayerNormalization<axis=-1>(X, s, )" +
         bias + R"()
  M = Mul(L, W)
  Y = Add(M, B)
})";
}

TEST(PatternLayerNormalizationScale, WeightsThatAreNotConstantsReplaceOnesAndZeros) {
  Model m = xexp::testing::load_case_model(affine_inputs("{1.0, 1.0, 1.0, 1.0}"));
  run_rules(m, "LayerNormalizationScale");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"LayerNormalization"}));
  const Node& ln = g.node(g.first_node());
  EXPECT_EQ(g.value(ln.inputs[1]).name, "W");
  EXPECT_EQ(g.value(ln.inputs[2]).name, "B");
}

TEST(PatternLayerNormalizationScale, NotIntoAScaleOtherThanOnesOrANonZeroBias) {
  // Another scale: the Mul stays, and the Add after it.
  Model scaled = xexp::testing::load_case_model(affine_inputs("{1.0, 2.0, 1.0, 1.0}"));
  run_rules(scaled, "LayerNormalizationScale");
  EXPECT_EQ(op_types(*scaled.graph), (OpList{"LayerNormalization", "Mul", "Add"}));
  // A bias that is not zeros: neither goes.
  Model biased = xexp::testing::load_case_model(affine_inputs("{1.0, 1.0, 1.0, 1.0}", "h"));
  run_rules(biased, "LayerNormalizationScale");
  EXPECT_EQ(op_types(*biased.graph), (OpList{"LayerNormalization", "Mul", "Add"}));
}

TEST(PatternLayerNormalization, SameNumbers) {
  test::expect_same_outputs([] { return decomposed({.opset = 17, .axes = {2}}); }, "LayerNormalization", 1e-5);
  test::expect_same_outputs([] { return decomposed({.scale_and_bias = true}); }, "default", 1e-5);
  test::expect_same_outputs(
      [] { return xexp::testing::load_case_model(affine_inputs("{1.0, 1.0, 1.0, 1.0}")); },
      "LayerNormalizationScale", 1e-5);
}

namespace {

Tensor ramp(std::vector<int64_t> dims, float start = 0.5f) {
  std::vector<float> v;
  for (int64_t k = 0; k < dims_element_count(dims); ++k) v.push_back(start + 0.1f * static_cast<float>(k % 7));
  return Tensor::from<float>(std::move(dims), v);
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
  ValueId wide = node(g, "Cast", {x}, {Attribute::make_int("to", static_cast<int64_t>(ElemType::Float))}, "", 17);
  std::vector<ValueId> ins{wide, g.add_initializer("scale", ramp({8}))};
  if (c.bias) ins.push_back(g.add_initializer("bias", ramp({8}, -0.25f)));
  ValueId y = node(g, c.op, ins,
                   {Attribute::make_int("axis", -1), Attribute::make_float("epsilon", 1e-5f), Attribute::make_int("stash_type", 1)}, "", 17);
  g.add_output(node(g, "Cast", {y}, {Attribute::make_int("to", static_cast<int64_t>(c.back))}, "", 17));
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

}  // namespace
