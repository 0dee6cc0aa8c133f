// onnxruntime set, activations: GeluErf, BiasGelu, FastGelu, QuickGelu, GeluOrt. Positive (exact op
// sequence after), one negative per condition, and same outputs in xexp's evaluator and ONNX Runtime.
// The Gelu rules read what a region computes (rewrite/computes.hpp): the spellings exporters write each
// become the same op, an erf Gelu never becomes the tanh one, and a constant off by 1e-4 matches nothing.
// The fused kernels compute the decomposed formulas in one pass, rounding differently: float32 agrees
// within 1e-5 (FastGelu on a tanh Gelu exactly), except FastGeluApprox on an erf Gelu, an
// approximation (tolerance justified at that test).
#include <gtest/gtest.h>

#include <optional>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/patterns/registry.hpp"
#include "xexp/rewrite/rule_set.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::op_types;
using test::OpList;
using test::run_rules;

// ---- erf Gelu (GeluErf, BiasGelu) ------------------------------------------------------------------
struct ErfGelu {
  bool half_first = false;      // (x * 0.5) * (1 + erf) instead of (x * (1 + erf)) * 0.5
  float sqrt2 = 1.4142135381698608f;
  float half = 0.5f;
  bool bias = false;            // Gelu of X + B
  std::vector<int64_t> bias_dims = {8};
  ElemType type = ElemType::Float;
  int64_t opset = 18;
};

static Model erf_gelu(const ErfGelu& c) {
  Model m = test::model_with_opset(c.opset);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", c.type, Shape{2, 3, 8});
  if (c.bias) {
    std::vector<float> b;
    for (int64_t k = 0; k < dims_element_count(c.bias_dims); ++k) b.push_back(0.1f * static_cast<float>(k) - 0.3f);
    x = node(g, "Add", {x, g.add_initializer("B", Tensor::from<float>(c.bias_dims, b))});
  }
  auto constant = [&](float v) {
    return g.add_initializer(g.unique_value_name("c"), eval::cast_tensor(Tensor::scalar<float>(v), c.type));
  };
  ValueId erf = node(g, "Erf", {node(g, "Div", {x, constant(c.sqrt2)})});
  ValueId one_plus = node(g, "Add", {erf, constant(1.f)});
  ValueId y = c.half_first ? node(g, "Mul", {node(g, "Mul", {constant(c.half), x}), one_plus})
                           : node(g, "Mul", {node(g, "Mul", {x, one_plus}), constant(c.half)});
  g.add_output(y);
  return m;
}

TEST(PatternGeluErf, DecompositionBecomesGelu) {
  for (bool half_first : {false, true}) {
    Model m = erf_gelu({.half_first = half_first});
    run_rules(m, "GeluErf");
    EXPECT_EQ(op_types(*m.graph), (OpList{"com.microsoft.Gelu"})) << half_first;
    EXPECT_EQ(m.opset("com.microsoft"), 1);
  }
}

// The default set's Gelu writes ONNX's Gelu of the same decomposition, from opset 20 on.
TEST(PatternGeluErf, TheDefaultSetWritesOnnxGeluFromOpset20) {
  for (bool half_first : {false, true}) {
    Model m = erf_gelu({.half_first = half_first, .opset = 20});
    run_rules(m, "Gelu");
    ASSERT_EQ(op_types(*m.graph), (OpList{"Gelu"})) << half_first;
    const Attribute* approximate = m.graph->node(m.graph->first_node()).attribute(Symbol("approximate"));
    ASSERT_NE(approximate, nullptr);
    EXPECT_EQ(approximate->s, "none");
  }
  Model before = erf_gelu({.opset = 18});
  run_rules(before, "Gelu");
  EXPECT_EQ(op_types(*before.graph).size(), 5u);
  test::expect_same_outputs([] { return erf_gelu({.opset = 20}); }, "Gelu", 1e-5);
}

// float16 rounds sqrt(2) to 1.4140625: a Gelu in a float16 model, not in a float32 one, where the
// output moves by up to 2e-5, hundreds of float32 roundings.
TEST(PatternGeluErf, Float16RoundedSqrt2IsAGeluInFloat16Only) {
  Model half = erf_gelu({.sqrt2 = 1.4140625f, .type = ElemType::Float16});
  run_rules(half, "GeluErf");
  EXPECT_EQ(op_types(*half.graph), (OpList{"com.microsoft.Gelu"}));
  Model single = erf_gelu({.sqrt2 = 1.4140625f});
  run_rules(single, "GeluErf");
  EXPECT_EQ(op_types(*single.graph).size(), 5u);
}

TEST(PatternGeluErf, NotForOtherConstants) {
  Model two = erf_gelu({.sqrt2 = 2.f});
  run_rules(two, "GeluErf");
  EXPECT_EQ(op_types(*two.graph).size(), 5u);
  Model quarter = erf_gelu({.half = 0.25f});
  run_rules(quarter, "GeluErf");
  EXPECT_EQ(op_types(*quarter.graph).size(), 5u);
  Model near_miss = erf_gelu({.half = 0.5001f});
  run_rules(near_miss, "GeluErf,GeluOrt,Gelu,QuickGelu");
  EXPECT_EQ(op_types(*near_miss.graph).size(), 5u);
}

// An exact Gelu is never the tanh approximation (they differ by up to 4.7e-4), in float32 or float16.
TEST(PatternGeluErf, NeverFastGelu) {
  for (ElemType type : {ElemType::Float, ElemType::Float16}) {
    Model m = erf_gelu({.type = type});
    run_rules(m, "GeluOrt");
    EXPECT_EQ(op_types(*m.graph).size(), 5u) << elem_type_name(type);
    run_rules(m, "GeluErf");
    EXPECT_EQ(op_types(*m.graph), (OpList{"com.microsoft.Gelu"})) << elem_type_name(type);
  }
}

TEST(PatternGeluErf, NotForDouble) {
  Model m = erf_gelu({.type = ElemType::Double});
  run_rules(m, "GeluErf");
  EXPECT_EQ(op_types(*m.graph).size(), 5u);
}

TEST(PatternGeluErf, SameNumbers) {
  test::expect_same_outputs([] { return erf_gelu({}); }, "GeluErf", 1e-5);
  test::expect_same_outputs([] { return erf_gelu({.half_first = true}); }, "GeluErf", 1e-5);
}

TEST(PatternBiasGelu, DecompositionOnABiasBecomesBiasGelu) {
  Model alone = erf_gelu({.bias = true});
  run_rules(alone, "BiasGelu");
  EXPECT_EQ(op_types(*alone.graph), (OpList{"com.microsoft.BiasGelu"}));
  // With GeluErf (P0) first, BiasGelu (P1) takes the Gelu it made.
  Model both = erf_gelu({.half_first = true, .bias = true});
  run_rules(both, "GeluErf,BiasGelu");
  EXPECT_EQ(op_types(*both.graph), (OpList{"com.microsoft.BiasGelu"}));
}

TEST(PatternBiasGelu, NotForABiasOverAnotherAxis) {
  Model m = erf_gelu({.bias = true, .bias_dims = {3, 1}});
  run_rules(m, "GeluErf,BiasGelu");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Add", "com.microsoft.Gelu"}));
}

TEST(PatternBiasGelu, SameNumbers) {
  test::expect_same_outputs([] { return erf_gelu({.bias = true}); }, "BiasGelu", 1e-5);
  test::expect_same_outputs([] { return erf_gelu({.bias = true}); }, "GeluErf,BiasGelu", 1e-5);
}

// ---- FastGelu ---------------------------------------------------------------------------------------
// A Gelu of X (2, 3, 8); `bias` adds the graph input B of that shape before it (a linear layer's bias,
// a training export's parameter).
static Model gelu_node(const std::string& domain, const std::string& approximate,
                       ElemType type = ElemType::Float, std::optional<Shape> bias = std::nullopt) {
  Model m = test::model_with_opset(20);
  Graph& g = *m.graph;
  if (!domain.empty()) m.opsets.push_back({domain, 1, {}});
  ValueId x = g.add_input("X", type, Shape{2, 3, 8});
  if (bias) x = node(g, "Add", {x, g.add_input("B", type, *bias)});
  std::vector<Attribute> attributes;
  if (!approximate.empty()) attributes.push_back(Attribute::make_string("approximate", approximate));
  g.add_output(node(g, "Gelu", {x}, attributes, domain, 20));
  return m;
}

TEST(PatternFastGelu, TanhGeluBecomesFastGelu) {
  Model m = gelu_node("", "tanh");
  run_rules(m, "FastGelu");
  EXPECT_EQ(op_types(*m.graph), (OpList{"com.microsoft.FastGelu"}));
}

// An exact Gelu is another function: FastGelu leaves it, FastGeluApprox (the opt-in onnxruntime_approx
// set) trades it for the tanh formula.
TEST(PatternFastGelu, ExactGeluOnlyBecomesFastGeluInTheApproximateSet) {
  for (auto [domain, approximate] : {std::pair{"com.microsoft", ""}, {"", "none"}, {"", ""}}) {
    Model exact = gelu_node(domain, approximate);
    run_rules(exact, "default+onnxruntime");
    EXPECT_EQ(op_types(*exact.graph), (OpList{std::string(domain).empty() ? "Gelu" : "com.microsoft.Gelu"}))
        << domain << approximate;
    Model approximated = gelu_node(domain, approximate);
    run_rules(approximated, "onnxruntime_approx");
    EXPECT_EQ(op_types(*approximated.graph), (OpList{"com.microsoft.FastGelu"})) << domain << approximate;
  }
}

TEST(PatternFastGelu, TheBiasBeforeItBecomesItsBias) {
  Model m = gelu_node("", "tanh", ElemType::Float, Shape{8});
  run_rules(m, "FastGelu");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FastGelu"}));
  const Node& fast = g.node(g.first_node());
  ASSERT_EQ(fast.inputs.size(), 2u);
  EXPECT_EQ(g.value(fast.inputs[0]).name, "X");
  EXPECT_EQ(g.value(fast.inputs[1]).name, "B");
  // A bias of X's whole shape is not FastGelu's (a vector over the last axis): the Add stays.
  Model whole = gelu_node("", "tanh", ElemType::Float, Shape{2, 3, 8});
  run_rules(whole, "FastGelu");
  EXPECT_EQ(op_types(*whole.graph), (OpList{"Add", "com.microsoft.FastGelu"}));
}

TEST(PatternFastGelu, NotForDouble) {
  Model m = gelu_node("", "tanh", ElemType::Double);
  run_rules(m, "FastGelu");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Gelu"}));
}

TEST(PatternFastGelu, SameNumbers) {
  // A tanh Gelu is exactly FastGelu's formula.
  test::expect_same_outputs([] { return gelu_node("", "tanh"); }, "FastGelu");
  test::expect_same_outputs([] { return gelu_node("", "tanh", ElemType::Float, Shape{8}); }, "FastGelu");
  // An erf Gelu differs from its tanh approximation by at most 4.73e-4 (at |x| = 2.7); on inputs in
  // [-1, 1) by at most 2.0e-4, so 5e-4 accepts the approximation and rejects any other function.
  test::expect_same_outputs([] { return gelu_node("com.microsoft", ""); }, "FastGeluApprox", 5e-4);
}

// ---- QuickGelu --------------------------------------------------------------------------------------
static Model silu(bool sigmoid_first, bool other_input) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 8});
  ValueId y = g.add_input("Y", ElemType::Float, Shape{2, 3, 8});
  ValueId s = node(g, "Sigmoid", {x});
  ValueId other = other_input ? y : x;
  g.add_output(sigmoid_first ? node(g, "Mul", {s, other}) : node(g, "Mul", {other, s}));
  return m;
}

TEST(PatternQuickGelu, SiluBecomesQuickGelu) {
  for (bool sigmoid_first : {false, true}) {
    Model m = silu(sigmoid_first, false);
    run_rules(m, "QuickGelu");
    ASSERT_EQ(op_types(*m.graph), (OpList{"com.microsoft.QuickGelu"}));
    EXPECT_EQ(m.graph->node(m.graph->first_node()).attribute(Symbol("alpha"))->f, 1.f);
  }
}

TEST(PatternQuickGelu, NotForAnotherInput) {
  Model m = silu(false, true);
  run_rules(m, "QuickGelu");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Sigmoid", "Mul"}));
}

TEST(PatternQuickGelu, SameNumbers) {
  test::expect_same_outputs([] { return silu(true, false); }, "QuickGelu", 1e-5);
}

// ---- GeluOrt (tanh decomposition) -------------------------------------------------------------------
struct TanhGelu {
  bool half_first = true;  // (0.5 * x) * (1 + tanh)
  float cubic = 0.044715f;
  float scale = 0.7978845834732056f;
  ElemType type = ElemType::Float;
};

static Model tanh_gelu(const TanhGelu& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", c.type, Shape{2, 3, 8});
  auto scalar = [&](Graph& graph, float v) {
    return graph.add_initializer(graph.unique_value_name("c"), eval::cast_tensor(Tensor::scalar<float>(v), c.type));
  };
  ValueId cubed = node(g, "Mul", {node(g, "Pow", {x, scalar(g, 3.f)}), scalar(g, c.cubic)});
  ValueId t = node(g, "Tanh", {node(g, "Mul", {node(g, "Add", {x, cubed}), scalar(g, c.scale)})});
  ValueId one_plus = node(g, "Add", {t, scalar(g, 1.f)});
  g.add_output(c.half_first ? node(g, "Mul", {node(g, "Mul", {scalar(g, 0.5f), x}), one_plus})
                            : node(g, "Mul", {scalar(g, 0.5f), node(g, "Mul", {one_plus, x})}));
  return m;
}

TEST(PatternGeluOrt, DecompositionBecomesFastGelu) {
  for (bool half_first : {false, true}) {
    Model m = tanh_gelu({.half_first = half_first});
    run_rules(m, "GeluOrt");
    EXPECT_EQ(op_types(*m.graph), (OpList{"com.microsoft.FastGelu"})) << half_first;
  }
  // float16's roundings of the constants make a tanh Gelu in float16, not in float32.
  Model f16 = tanh_gelu({.type = ElemType::Float16});
  run_rules(f16, "GeluOrt");
  EXPECT_EQ(op_types(*f16.graph), (OpList{"com.microsoft.FastGelu"}));
  Model f16_constants = tanh_gelu({.cubic = 0.044708251953125f, .scale = 0.7978515625f});
  run_rules(f16_constants, "GeluOrt");
  EXPECT_EQ(op_types(*f16_constants.graph).size(), 8u);
}

TEST(PatternGeluOrt, NotForOtherConstants) {
  Model cubic = tanh_gelu({.cubic = 0.05f});
  run_rules(cubic, "GeluOrt");
  EXPECT_EQ(op_types(*cubic.graph).size(), 8u);
  Model scale = tanh_gelu({.scale = 0.8f});
  run_rules(scale, "GeluOrt");
  EXPECT_EQ(op_types(*scale.graph).size(), 8u);
}

TEST(PatternGeluOrt, SameNumbers) {
  test::expect_same_outputs([] { return tanh_gelu({}); }, "GeluOrt", 1e-5);
  test::expect_same_outputs([] { return tanh_gelu({.half_first = false}); }, "GeluOrt", 1e-5);
}

// ---- Gelu spellings, as an exporter writes them (text models read from disk) -----------------------
// Y = body(X) with the constants the spellings use, X float [2, 3, 8].
static Model spelled(const std::string& body, int64_t opset = 18) {
  return xexp::testing::load_case_model(
      "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
      "]>\ng (float[2,3,8] X) => (float[2,3,8] Y) <float half = {0.5}, float one = {1.0}, float three = {3.0}, "
      "float cubic = {0.044715}, float k = {0.7978845608}, float twice_k = {1.5957691216}, "
      "float sqrt2 = {1.4142135623}, float alpha = {1.702}> {\n" + body + "}\n");
}
// x * x * x instead of Pow(x, 3).
static const char* kTanhGeluCubed =
    "xx = Mul(X, X)\n xxx = Mul(xx, X)\n c = Mul(xxx, cubic)\n s = Add(X, c)\n z = Mul(s, k)\n t = Tanh(z)\n"
    " o = Add(t, one)\n h = Mul(X, half)\n Y = Mul(h, o)\n";
// x * 0.5 * (1 + tanh(k * x * (1 + 0.044715 * x * x))), as Megatron's bias_gelu writes it.
static const char* kTanhGeluFactored =
    "a = Mul(X, half)\n xx = Mul(X, X)\n b = Mul(xx, cubic)\n c = Add(b, one)\n d = Mul(X, c)\n e = Mul(k, d)\n"
    " t = Tanh(e)\n o = Add(one, t)\n Y = Mul(a, o)\n";
// 0.5 * (1 + tanh(z)) = sigmoid(2 z).
static const char* kTanhGeluSigmoid =
    "p = Pow(X, three)\n c = Mul(p, cubic)\n s = Add(X, c)\n z = Mul(s, twice_k)\n g = Sigmoid(z)\n Y = Mul(X, g)\n";
static const char* kErfGelu = "d = Div(X, sqrt2)\n e = Erf(d)\n o = Add(e, one)\n m = Mul(X, o)\n Y = Mul(m, half)\n";
// CLIP's QuickGelu.
static const char* kQuickGelu = "a = Mul(alpha, X)\n s = Sigmoid(a)\n Y = Mul(X, s)\n";

TEST(PatternGeluOrt, EverySpellingBecomesFastGelu) {
  for (const char* body : {kTanhGeluCubed, kTanhGeluFactored, kTanhGeluSigmoid}) {
    Model m = spelled(body);
    run_rules(m, "GeluOrt");
    EXPECT_EQ(op_types(*m.graph), (OpList{"com.microsoft.FastGelu"})) << body;
    test::expect_same_outputs([body] { return spelled(body); }, "GeluOrt", 1e-5);
  }
}

TEST(PatternGeluOrt, NotForTheErfGeluNorQuickGelu) {
  for (const char* body : {kErfGelu, kQuickGelu}) {
    Model m = spelled(body);
    const std::size_t nodes = m.graph->node_count();
    run_rules(m, "GeluOrt");
    EXPECT_EQ(m.graph->node_count(), nodes) << body;
  }
}

// The default set writes ONNX's Gelu(approximate="tanh") of each spelling from opset 20.
TEST(PatternGeluOrt, TheDefaultSetWritesOnnxGeluOfEverySpelling) {
  for (const char* body : {kTanhGeluCubed, kTanhGeluFactored, kTanhGeluSigmoid}) {
    Model m = spelled(body, 20);
    run_rules(m, "Gelu");
    ASSERT_EQ(op_types(*m.graph), (OpList{"Gelu"})) << body;
    EXPECT_EQ(m.graph->node(m.graph->first_node()).attribute(Symbol("approximate"))->s, "tanh");
  }
  Model erf = spelled(kErfGelu, 20);
  run_rules(erf, "Gelu");
  ASSERT_EQ(op_types(*erf.graph), (OpList{"Gelu"}));
  EXPECT_EQ(erf.graph->node(erf.graph->first_node()).attribute(Symbol("approximate"))->s, "none");
  test::expect_same_outputs([] { return spelled(kTanhGeluFactored, 20); }, "Gelu", 1e-5);
}

TEST(PatternQuickGelu, AnyAlpha) {
  Model m = spelled(kQuickGelu);
  run_rules(m, "GeluErf,GeluOrt,Gelu");
  EXPECT_EQ(m.graph->node_count(), 3u);  // no Gelu
  run_rules(m, "QuickGelu");
  ASSERT_EQ(op_types(*m.graph), (OpList{"com.microsoft.QuickGelu"}));
  EXPECT_EQ(m.graph->node(m.graph->first_node()).attribute(Symbol("alpha"))->f, 1.702f);
  test::expect_same_outputs([] { return spelled(kQuickGelu); }, "QuickGelu", 1e-5);
}
