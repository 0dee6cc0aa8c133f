// Activation fusions. HardSwish (default set, opset >= 14): x * HardSigmoid(x) and x * Clip(x + 3, 0, 6) / 6.
// FusedConv and FusedGemm (onnxruntime set): the activation after a Conv or a Gemm goes into
// com.microsoft FusedConv / FusedGemm; FusedConvAdd takes a residual added to a Conv as FusedConv's Z. The
// fused kernels round differently: outputs agree within 1e-5.
#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/onnx.hpp"
#include "xexp/patterns/activation_functions.hpp"
#include "xexp/patterns/ort/gelu_ort.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::op_types;
using test::run_rules;
using test::OpList;

namespace {

std::vector<float> ramp(int64_t n, float start, float step) {
  std::vector<float> out;
  for (int64_t k = 0; k < n; ++k) out.push_back(start + step * static_cast<float>(k % 5) - 0.02f * static_cast<float>(k));
  return out;
}

struct After {
  std::string activation = "Relu";
  int64_t opset = 13;
  bool bound_is_input = false;  // Clip's max a graph input (opset >= 11)
  bool double_type = false;
};

// Clip's bounds: attributes before opset 11, inputs since.
ValueId activation(Graph& g, ValueId y, const After& c) {
  std::vector<Attribute> attributes;
  std::vector<ValueId> inputs{y};
  if (c.activation == "LeakyRelu") attributes.push_back(Attribute::make_float("alpha", 0.3f));
  if (c.activation == "HardSigmoid") attributes = {Attribute::make_float("alpha", 0.25f), Attribute::make_float("beta", 0.4f)};
  if (c.activation == "Clip") {
    if (c.opset < 11) {
      attributes = {Attribute::make_float("min", 0.f), Attribute::make_float("max", 0.75f)};
    } else {
      inputs.push_back(g.add_initializer("lo", Tensor::scalar<float>(0.f)));
      inputs.push_back(c.bound_is_input ? g.add_input("hi", ElemType::Float, Shape{})
                                        : g.add_initializer("hi", Tensor::scalar<float>(0.75f)));
    }
  }
  return node(g, c.activation, inputs, attributes, "", c.opset);
}

Model conv_then(const After& c) {
  Model m = test::model_with_opset(c.opset);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", c.double_type ? ElemType::Double : ElemType::Float, Shape{1, 2, 5, 5});
  ValueId w, b;
  if (c.double_type) {
    std::vector<double> wd, bd;
    for (float v : ramp(3 * 2 * 9, -0.3f, 0.1f)) wd.push_back(v);
    for (float v : ramp(3, -0.1f, 0.2f)) bd.push_back(v);
    w = g.add_initializer("W", Tensor::from<double>({3, 2, 3, 3}, wd));
    b = g.add_initializer("B", Tensor::from<double>({3}, bd));
  } else {
    w = g.add_initializer("W", Tensor::from<float>({3, 2, 3, 3}, ramp(3 * 2 * 9, -0.3f, 0.1f)));
    b = g.add_initializer("B", Tensor::from<float>({3}, ramp(3, -0.1f, 0.2f)));
  }
  ValueId y = node(g, "Conv", {x, w, b}, {Attribute::make_ints("strides", {2, 1}), Attribute::make_ints("pads", {1, 0, 1, 0})},
                   "", c.opset);
  g.add_output(activation(g, y, c));
  return m;
}

Model gemm_then(const After& c) {
  Model m = test::model_with_opset(c.opset);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{3, 4});
  ValueId y = node(g, "Gemm",
                   {a, g.add_initializer("B", Tensor::from<float>({5, 4}, ramp(20, -0.5f, 0.2f))),
                    g.add_initializer("C", Tensor::from<float>({5}, ramp(5, -0.2f, 0.1f)))},
                   {Attribute::make_int("transB", 1), Attribute::make_float("alpha", 0.5f)}, "", c.opset);
  g.add_output(activation(g, y, c));
  return m;
}

const Attribute* attribute(const Graph& g, const char* name) { return g.node(g.first_node()).attribute(Symbol(name)); }

}  // namespace

TEST(PatternFusedConv, EveryActivation) {
  for (const char* act : {"Relu", "LeakyRelu", "Clip", "HardSigmoid", "Sigmoid", "Tanh"}) {
    Model m = conv_then({.activation = act});
    run_rules(m, "FusedConv");
    ASSERT_EQ(op_types(*m.graph), (OpList{"com.microsoft.FusedConv"})) << act;
    EXPECT_EQ(attribute(*m.graph, "activation")->s, act);
    EXPECT_EQ(attribute(*m.graph, "strides")->ints, (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(m.graph->node(m.graph->first_node()).inputs.size(), 3u);
  }
  Model m = conv_then({.activation = "Clip", .opset = 9});
  run_rules(m, "FusedConv");
  ASSERT_EQ(op_types(*m.graph), (OpList{"com.microsoft.FusedConv"}));
  EXPECT_EQ(attribute(*m.graph, "activation_params")->floats, (std::vector<float>{0.f, 0.75f}));
  m = conv_then({.activation = "HardSigmoid"});
  run_rules(m, "FusedConv");
  EXPECT_EQ(attribute(*m.graph, "activation_params")->floats, (std::vector<float>{0.25f, 0.4f}));
}

TEST(PatternFusedConv, NotWithAClipBoundComputedAtRunTime) {
  Model m = conv_then({.activation = "Clip", .bound_is_input = true});
  run_rules(m, "FusedConv");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Conv", "Clip"}));
}

TEST(PatternFusedConv, NotForDouble) {
  Model m = conv_then({.double_type = true});
  run_rules(m, "FusedConv");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Conv", "Relu"}));
}

TEST(PatternFusedConv, SameNumbers) {
  for (const char* act : {"Relu", "LeakyRelu", "Clip", "HardSigmoid", "Sigmoid", "Tanh"})
    test::expect_same_outputs([act] { return conv_then({.activation = act}); }, "FusedConv", 1e-5);
  test::expect_same_outputs([] { return conv_then({.activation = "Clip", .opset = 9}); }, "FusedConv", 1e-5);
}

namespace {
struct Residual {
  std::string activation{};   // after the Add, none when empty
  bool z_first = false;       // Add(Z, Conv)
  bool bias = true;           // the Conv has a bias
  bool z_broadcasts = false;  // Z of shape (1, 3, 1, 1)
};
// Conv(X (1, 2, 5, 5), W (3, 2, 3, 3), B, pads 1) + Z (1, 3, 5, 5), then the activation.
Model conv_plus(const Residual& c) {
  Model m = test::model_with_opset(13);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{1, 2, 5, 5});
  ValueId z = g.add_input("Z", ElemType::Float, c.z_broadcasts ? Shape{1, 3, 1, 1} : Shape{1, 3, 5, 5});
  std::vector<ValueId> inputs{
      x, g.add_initializer("W", Tensor::from<float>({3, 2, 3, 3}, ramp(54, -0.3f, 0.1f)))};
  if (c.bias) inputs.push_back(g.add_initializer("B", Tensor::from<float>({3}, ramp(3, -0.1f, 0.2f))));
  ValueId y = node(g, "Conv", inputs, {Attribute::make_ints("pads", {1, 1, 1, 1})}, "", 13);
  ValueId sum =
      node(g, "Add", c.z_first ? std::vector<ValueId>{z, y} : std::vector<ValueId>{y, z}, {}, "", 13);
  g.add_output(c.activation.empty() ? sum : activation(g, sum, {.activation = c.activation}));
  return m;
}
}  // namespace

TEST(PatternFusedConvAdd, TheAddedTensorBecomesZ) {
  for (const Residual& c : {Residual{}, Residual{.z_first = true}, Residual{.bias = false}}) {
    Model m = conv_plus(c);
    run_rules(m, "FusedConvAdd");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FusedConv"}));
    const Node& fused = g.node(g.first_node());
    ASSERT_EQ(fused.inputs.size(), 4u);
    if (c.bias)
      EXPECT_EQ(g.value(fused.inputs[2]).name, "B");
    else
      EXPECT_EQ(fused.inputs[2], kNone);
    EXPECT_EQ(g.value(fused.inputs[3]).name, "Z");
    EXPECT_EQ(fused.attribute(Symbol("activation")), nullptr);
    EXPECT_EQ(attribute(g, "pads")->ints, (std::vector<int64_t>{1, 1, 1, 1}));
  }
}

TEST(PatternFusedConvAdd, TheActivationAfterTheAddGoesInToo) {
  for (const char* act : {"Relu", "LeakyRelu", "Clip", "HardSigmoid", "Sigmoid", "Tanh"}) {
    Model m = conv_plus({.activation = act});
    run_rules(m, "FusedConvAdd");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FusedConv"})) << act;
    EXPECT_EQ(attribute(g, "activation")->s, act);
    EXPECT_EQ(g.value(g.node(g.first_node()).inputs[3]).name, "Z");
  }
  Model m = conv_plus({.activation = "HardSigmoid"});
  run_rules(m, "FusedConvAdd");
  EXPECT_EQ(attribute(*m.graph, "activation_params")->floats, (std::vector<float>{0.25f, 0.4f}));
}

TEST(PatternFusedConvAdd, NotForAZThatBroadcasts) {
  Model m = conv_plus({.z_broadcasts = true});
  run_rules(m, "FusedConvAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Conv", "Add"}));
}

TEST(PatternFusedConvAdd, SameNumbers) {
  for (const Residual& c : {Residual{}, Residual{.bias = false}, Residual{.activation = "Relu"},
                            Residual{.activation = "HardSigmoid", .z_first = true}})
    test::expect_same_outputs([c] { return conv_plus(c); }, "FusedConvAdd", 1e-5);
}

TEST(PatternFusedGemm, EveryActivationButClip) {
  for (const char* act : {"Relu", "LeakyRelu", "HardSigmoid", "Sigmoid", "Tanh"}) {
    Model m = gemm_then({.activation = act});
    run_rules(m, "FusedGemm");
    ASSERT_EQ(op_types(*m.graph), (OpList{"com.microsoft.FusedGemm"})) << act;
    EXPECT_EQ(attribute(*m.graph, "activation")->s, act);
    EXPECT_EQ(attribute(*m.graph, "alpha")->f, 0.5f);
    EXPECT_EQ(attribute(*m.graph, "transB")->i, 1);
  }
  Model m = gemm_then({.activation = "HardSigmoid"});
  run_rules(m, "FusedGemm");
  EXPECT_EQ(attribute(*m.graph, "activation_alpha")->f, 0.25f);
  EXPECT_EQ(attribute(*m.graph, "activation_beta")->f, 0.4f);
}

// ONNX Runtime 1.30's FusedGemm has no Clip.
TEST(PatternFusedGemm, NotForClip) {
  Model m = gemm_then({.activation = "Clip"});
  run_rules(m, "FusedGemm");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Gemm", "Clip"}));
}

TEST(PatternFusedGemm, SameNumbers) {
  for (const char* act : {"Relu", "LeakyRelu", "HardSigmoid", "Sigmoid", "Tanh"})
    test::expect_same_outputs([act] { return gemm_then({.activation = act}); }, "FusedGemm", 1e-5);
}

namespace {
std::size_t count(const Graph& g, const std::string& op) {
  std::size_t n = 0;
  for (const std::string& o : op_types(g)) n += o == op;
  return n;
}
// The model optimized as `xexp optimize --patterns default+onnxruntime` does, and ONNX Runtime's outputs
// of the file and of the optimized model compared.
Model optimized_and_checked(const std::string& path) {
  Model model = load_model(path);
  xexp::testing::optimize_quietly(model, true, "default+onnxruntime");
  xexp::testing::TempDir dir;
  const std::string optimized = (dir.path() / "optimized.onnx").string();
  save_model(model, optimized);
  const Model original = load_model(path);
  const xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*original.graph, {.seed = 11, .default_dim = 1});
  const std::vector<xexp::testing::OrtResult> ort = xexp::testing::run_onnxruntime_batch({{path, feeds}, {optimized, feeds}});
  EXPECT_TRUE(ort[0].ok && ort[1].ok) << ort[0].error << ort[1].error;
  if (ort[0].ok && ort[1].ok) xexp::testing::expect_all_close(ort[1].outputs, ort[0].outputs, 1e-5, 1e-5);
  return model;
}
}  // namespace

// paddle2onnx's PP-OCR classifier read from disk: every Relu and HardSigmoid after a Conv (once the
// BatchNormalizations went into the Convs) is fused, none is left after a Conv, except the hardswishes'
// x * HardSigmoid(x), whose x the Mul reads too. Its 7 residual Adds, each after a Conv, are FusedConvs'
// Z (FusedConvAdd): no Add is left.
TEST(PatternFusedConv, OnPaddleExport) {
  Model model = optimized_and_checked(std::string(XEXP_SHARED_DIR) + "/corpus/real/ch_ppocr_mobile_v2.0_cls_infer.onnx");
  const Graph& g = *model.graph;
  EXPECT_GT(count(g, "com.microsoft.FusedConv"), 20u);
  EXPECT_EQ(count(g, "Add"), 0u);
  std::size_t with_z = 0;
  for (NodeId id : g.nodes())
    with_z += g.node(id).op_type == Symbol("FusedConv") && g.node(id).inputs.size() == 4;
  EXPECT_EQ(with_z, 7u);
  for (NodeId id : g.nodes()) {
    const Node& n = g.node(id);
    if (n.op_type != Symbol("Relu") && n.op_type != Symbol("HardSigmoid")) continue;
    const NodeId producer = g.value(n.inputs[0]).producer;
    const bool hard_swish = g.value(n.inputs[0]).uses.size() == 2 && n.op_type == Symbol("HardSigmoid");
    EXPECT_TRUE(producer == kNone || g.node(producer).op_type != Symbol("Conv") || hard_swish) << n.name;
  }
}

// A residual block after a strided Conv over a symbolic length, as silero's VAD has three of in each
// branch: both sides of the Add are Convs of the downsampled input, whose length the inference spells
// "(L-1)//2+1" for both, so the Add is known not to broadcast and goes into a FusedConv as its Z.
TEST(PatternFusedConvAdd, AfterAStridedConvOverASymbolicLength) {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
block (float[1,2,L] X) => (float[1,2,M] Y)
<float[2,2,1] WD = {0.5, -0.25, 0.75, 0.125}, float[2,2,1] WA = {0.3, 0.2, -0.4, 0.6},
 float[2,2,1] WP = {-0.5, 0.1, 0.2, 0.9}> {
  D = Conv<strides = [2]>(X, WD)
  A = Conv(D, WA)
  P = Conv(D, WP)
  S = Add(A, P)
  Y = Relu(S)
})";
  xexp::testing::TempDir dir;
  const std::string path = (dir.path() / "block.onnx").string();
  xexp::testing::write_case_model(text, path);
  Model model = optimized_and_checked(path);
  const Graph& g = *model.graph;
  ASSERT_EQ(op_types(g), (OpList{"Conv", "Conv", "com.microsoft.FusedConv"}));
  const Node& fused = g.node(g.value(g.outputs()[0]).producer);
  ASSERT_EQ(fused.inputs.size(), 4u);
  EXPECT_EQ(fused.attribute(Symbol("activation"))->s, "Relu");
  EXPECT_EQ(g.value(fused.inputs[0]).name, "D");
}

// openwakeword (torch 2.8, opset 13) read from disk: its last Gemm + Sigmoid becomes FusedGemm (the
// Relus follow LayerNorms, fused at opset 13 by LayerNormalizationAnyOpset): 25 nodes become 8, as many
// as ONNX Runtime's 'extended' level leaves.
TEST(PatternFusedGemm, OnTorchExport) {
  Model model = optimized_and_checked(std::string(XEXP_SHARED_DIR) + "/corpus/real/openwakeword_hello_deepa.onnx");
  EXPECT_EQ(op_types(*model.graph), (OpList{"Flatten", "Gemm", "LayerNormalization", "Relu", "Gemm", "LayerNormalization",
                                           "Relu", "com.microsoft.FusedGemm"}));
}

namespace {

struct Swish {
  int64_t opset = 14;
  bool clip_form = false;
  bool by_mul = false;         // * (1/6) instead of / 6
  bool clip_attributes = false;  // Clip(x, min=0, max=six), as below opset 11
  float alpha = 1.f / 6.f;     // HardSigmoid's
  float six = 6.f;             // Clip's max and the divisor
  bool other_input = false;    // HardSigmoid(y) * x
};

Model hard_swish(const Swish& c) {
  Model m = test::model_with_opset(c.opset);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 7});
  ValueId other = g.add_input("Y", ElemType::Float, Shape{2, 7});
  ValueId out;
  if (!c.clip_form) {
    ValueId h = node(g, "HardSigmoid", {c.other_input ? other : x}, {Attribute::make_float("alpha", c.alpha)}, "", c.opset);
    out = node(g, "Mul", {h, x}, {}, "", c.opset);
  } else {
    ValueId sum = node(g, "Add", {x, g.add_initializer("three", Tensor::scalar<float>(3.f))}, {}, "", c.opset);
    ValueId clip =
        c.clip_attributes
            ? node(g, "Clip", {sum}, {Attribute::make_float("min", 0.f), Attribute::make_float("max", c.six)},
                   "", c.opset)
            : node(g, "Clip",
                   {sum, g.add_initializer("zero", Tensor::scalar<float>(0.f)),
                    g.add_initializer("six", Tensor::scalar<float>(c.six))},
                   {}, "", c.opset);
    ValueId product = node(g, "Mul", {x, clip}, {}, "", c.opset);
    out = c.by_mul ? node(g, "Mul", {product, g.add_initializer("sixth", Tensor::scalar<float>(1.f / c.six))}, {}, "", c.opset)
                   : node(g, "Div", {product, g.add_initializer("divisor", Tensor::scalar<float>(c.six))}, {}, "", c.opset);
  }
  g.add_output(out);
  g.add_output(node(g, "Neg", {other}, {}, "", c.opset));
  return m;
}

}  // namespace

TEST(PatternHardSwish, EverySpelling) {
  for (const Swish& c : {Swish{}, Swish{.clip_form = true}, Swish{.clip_form = true, .by_mul = true}}) {
    Model m = hard_swish(c);
    run_rules(m, "HardSwish");
    EXPECT_EQ(op_types(*m.graph), (OpList{"HardSwish", "Neg"})) << c.clip_form << c.by_mul;
  }
}

// The default set emits standard ONNX only: HardSwish exists from opset 14. Before it, the Clip form
// becomes x * HardSigmoid(x, 1/6, 0.5), which stays.
TEST(PatternHardSwish, BeforeOpset14TheClipFormBecomesHardSigmoid) {
  Model m = hard_swish({.opset = 13});
  run_rules(m, "HardSwish");
  EXPECT_EQ(op_types(*m.graph), (OpList{"HardSigmoid", "Mul", "Neg"}));
  for (const Swish& c :
       {Swish{.opset = 13, .clip_form = true}, Swish{.opset = 13, .clip_form = true, .by_mul = true},
        Swish{.opset = 9, .clip_form = true, .clip_attributes = true}}) {
    m = hard_swish(c);
    run_rules(m, "HardSwish");
    ASSERT_EQ(op_types(*m.graph), (OpList{"HardSigmoid", "Mul", "Neg"})) << c.opset << c.by_mul;
    const Graph& g = *m.graph;
    const ir::Node& mul = g.node(g.value(g.outputs()[0]).producer);
    ASSERT_EQ(mul.inputs.size(), 2u);
    EXPECT_EQ(mul.inputs[0], g.inputs()[0]);
    const ir::Node& sigmoid = g.node(g.value(mul.inputs[1]).producer);
    EXPECT_EQ(sigmoid.inputs, (std::vector<ValueId>{g.inputs()[0]}));
    EXPECT_FLOAT_EQ(sigmoid.attribute(Symbol("alpha"))->f, 1.f / 6.f);
    EXPECT_FLOAT_EQ(sigmoid.attribute(Symbol("beta"))->f, 0.5f);
  }
  m = hard_swish({.opset = 9, .clip_form = true, .clip_attributes = true, .six = 5.f});
  run_rules(m, "HardSwish");
  EXPECT_EQ(op_types(*m.graph).size(), 5u);
}

TEST(PatternHardSwish, NotForAnotherSlope) {
  Model m = hard_swish({.alpha = 0.2f});
  run_rules(m, "HardSwish");
  EXPECT_EQ(op_types(*m.graph), (OpList{"HardSigmoid", "Mul", "Neg"}));
}

TEST(PatternHardSwish, NotForAnotherBound) {
  Model m = hard_swish({.clip_form = true, .six = 5.f});
  run_rules(m, "HardSwish");
  EXPECT_EQ(op_types(*m.graph).size(), 5u);
}

TEST(PatternHardSwish, NotOnAnotherValue) {
  Model m = hard_swish({.other_input = true});
  run_rules(m, "HardSwish");
  EXPECT_EQ(op_types(*m.graph), (OpList{"HardSigmoid", "Mul", "Neg"}));
}

TEST(PatternHardSwish, SameNumbers) {
  test::expect_same_outputs([] { return hard_swish({}); }, "HardSwish", 1e-6);
  test::expect_same_outputs([] { return hard_swish({.clip_form = true}); }, "HardSwish", 1e-6);
  test::expect_same_outputs([] { return hard_swish({.clip_form = true, .by_mul = true}); }, "HardSwish", 1e-6);
  test::expect_same_outputs([] { return hard_swish({.opset = 13, .clip_form = true}); }, "HardSwish", 1e-6);
  test::expect_same_outputs(
      [] { return hard_swish({.opset = 9, .clip_form = true, .clip_attributes = true}); }, "HardSwish", 1e-6);
}

// paddle2onnx writes hardswish in the Clip form, here at opset 9, where HardSwish does not exist: read
// from disk and optimized, its 18 Clip forms become x * HardSigmoid(x) (the model's own 9 HardSigmoids
// go into FusedConv).
TEST(PatternHardSwish, PaddleExportAtOpset9GetsHardSigmoids) {
  const std::string path = std::string(XEXP_SHARED_DIR) + "/corpus/real/ch_ppocr_mobile_v2.0_cls_infer.onnx";
  Model model = load_model(path);
  xexp::testing::optimize_quietly(model);
  EXPECT_EQ(count(*model.graph, "HardSwish"), 0u);
  EXPECT_EQ(count(*model.graph, "Clip"), 0u);
  EXPECT_EQ(count(*model.graph, "HardSigmoid"), 18u);
}

// ---- activations by what they compute (rewrite/computes.hpp) ---------------------------------------
namespace {

// Y = body(X), X float [2, 7], as an exporter writes it (a text model read from disk).
Model written(const std::string& body, int64_t opset = 18) {
  return xexp::testing::load_case_model(
      "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
      "]>\ng (float[2,7] X) => (float[2,7] Y) <float zero = {0.0}, float half = {0.5}, float one = {1.0}, "
      "float three = {3.0}, float six = {6.0}, float sixth = {0.16666667}, float fifth = {0.2}, "
      "float tenth = {0.1}, float cubic = {0.044715}, float k = {0.7978845608}, float sqrt2 = {1.4142135623}, "
      "float alpha = {1.702}> {\n" + body + "}\n");
}

struct Spelling {
  const char* name;
  const char* body;
  const rewrite::KnownFunction* function;  // what it computes
  std::vector<float> parameters;
};

// Each function of the table (patterns/activation_functions.hpp) written the way an exporter might.
const std::vector<Spelling>& spellings() {
  namespace fn = patterns::fn;
  static const std::vector<Spelling> all = {
      {"erf Gelu", "d = Div(X, sqrt2)\n e = Erf(d)\n o = Add(e, one)\n m = Mul(X, o)\n Y = Mul(m, half)\n", &fn::gelu, {}},
      {"tanh Gelu, x * x * x",
       "xx = Mul(X, X)\n xxx = Mul(xx, X)\n c = Mul(xxx, cubic)\n s = Add(X, c)\n z = Mul(s, k)\n t = Tanh(z)\n"
       " o = Add(t, one)\n h = Mul(X, half)\n Y = Mul(h, o)\n",
       &fn::gelu_tanh, {}},
      {"QuickGelu 1.702", "a = Mul(alpha, X)\n s = Sigmoid(a)\n Y = Mul(X, s)\n", &fn::quick_gelu, {1.702f}},
      {"SiLU as x / (1 + exp(-x))", "n = Neg(X)\n e = Exp(n)\n d = Add(one, e)\n Y = Div(X, d)\n", &fn::quick_gelu, {1.f}},
      {"HardSigmoid as Clip(x / 6 + 0.5, 0, 1)", "d = Div(X, six)\n a = Add(d, half)\n Y = Clip(a, zero, one)\n",
       &fn::hard_sigmoid, {1.f / 6.f, 0.5f}},
      {"HardSigmoid as max(0, min(1, 0.2 x + 0.5))", "m = Mul(X, fifth)\n a = Add(m, half)\n b = Min(a, one)\n Y = Max(b, zero)\n",
       &fn::hard_sigmoid, {0.2f, 0.5f}},
      {"HardSwish as x * Relu6(x + 3) / 6", "a = Add(X, three)\n r = Relu(a)\n c = Min(r, six)\n m = Mul(X, c)\n Y = Div(m, six)\n",
       &fn::hard_swish, {}},
      {"Softplus as log(1 + exp(x))", "e = Exp(X)\n a = Add(e, one)\n Y = Log(a)\n", &fn::softplus, {}},
      {"Mish as x * tanh(softplus(x))", "s = Softplus(X)\n t = Tanh(s)\n Y = Mul(X, t)\n", &fn::mish, {}},
      {"Mish as x * tanh(log(1 + exp(x)))", "e = Exp(X)\n a = Add(one, e)\n l = Log(a)\n t = Tanh(l)\n Y = Mul(t, X)\n",
       &fn::mish, {}},
      {"LeakyRelu as Where(x > 0, x, 0.1 x)", "g = Greater(X, zero)\n m = Mul(X, tenth)\n Y = Where(g, X, m)\n",
       &fn::leaky_relu, {0.1f}},
      {"LeakyRelu as max(x, 0.1 x)", "m = Mul(tenth, X)\n Y = Max(X, m)\n", &fn::leaky_relu, {0.1f}},
      {"Elu as Where(x > 0, x, exp(x) - 1)", "g = Greater(X, zero)\n e = Exp(X)\n s = Sub(e, one)\n Y = Where(g, X, s)\n",
       &fn::elu, {1.f}},
      {"Elu alpha 0.5", "g = Greater(X, zero)\n e = Exp(X)\n s = Sub(e, one)\n h = Mul(s, half)\n Y = Where(g, X, h)\n",
       &fn::elu, {0.5f}},
  };
  return all;
}

const std::vector<const rewrite::KnownFunction*>& table() {
  namespace fn = patterns::fn;
  static const std::vector<const rewrite::KnownFunction*> all = {
      &fn::gelu, &fn::gelu_tanh, &fn::quick_gelu, &fn::hard_sigmoid, &fn::hard_swish,
      &fn::softplus, &fn::mish, &fn::leaky_relu, &fn::elu};
  return all;
}

// The largest region ending at the producer of the graph's output.
rewrite::ElementwiseRegion region_of_output(const Graph& g) {
  std::vector<rewrite::ElementwiseRegion> regions = rewrite::regions_at(g, g.value(g.outputs()[0]).producer);
  if (regions.empty()) throw Error("no region");
  return regions[0];
}

}  // namespace

// Every spelling computes its function, with its parameters, and no other function of the table.
TEST(Computes, EachSpellingIsItsFunctionOnly) {
  for (const Spelling& s : spellings()) {
    Model m = written(s.body);
    const rewrite::ElementwiseRegion r = region_of_output(*m.graph);
    EXPECT_EQ(r.input, m.graph->inputs()[0]) << s.name;
    for (const rewrite::KnownFunction* f : table()) {
      float parameters[2] = {};
      std::string why;
      const bool computes = rewrite::region_computes(*m.graph, r, *f, 18, parameters, &why);
      EXPECT_EQ(computes, f == s.function) << s.name << " as " << f->name << ": " << why;
      if (!computes) continue;
      for (std::size_t k = 0; k < s.parameters.size(); ++k) EXPECT_EQ(parameters[k], s.parameters[k]) << s.name;
    }
  }
}

// The tolerance rejects the near misses: the two Gelus (4.7e-4 apart at most), in float32 and in
// float16, whose constants are rounded; a constant 0.5001 for 0.5.
TEST(Computes, TheToleranceTellsTheGelusApart) {
  namespace fn = patterns::fn;
  for (ElemType type : {ElemType::Float, ElemType::Float16}) {
    auto gelu = [type](bool exact, float half) {
      Model m = test::model_with_opset(18);
      Graph& g = *m.graph;
      const ValueId x = g.add_input("X", type, Shape{4});
      auto c = [&](float v) { return g.add_initializer(g.unique_value_name("c"), eval::cast_tensor(Tensor::scalar<float>(v), type)); };
      ValueId factor;
      if (exact) {
        factor = node(g, "Add", {node(g, "Erf", {node(g, "Div", {x, c(1.4142135f)})}), c(1.f)});
      } else {
        const ValueId cubed = node(g, "Mul", {node(g, "Pow", {x, c(3.f)}), c(0.044715f)});
        factor = node(g, "Add", {node(g, "Tanh", {node(g, "Mul", {node(g, "Add", {x, cubed}), c(0.7978846f)})}), c(1.f)});
      }
      g.add_output(node(g, "Mul", {node(g, "Mul", {x, c(half)}), factor}));
      return m;
    };
    for (bool exact : {true, false}) {
      Model m = gelu(exact, 0.5f);
      const rewrite::ElementwiseRegion r = region_of_output(*m.graph);
      float none[2];
      EXPECT_EQ(rewrite::region_computes(*m.graph, r, fn::gelu, 18, none, nullptr), exact) << elem_type_name(type);
      EXPECT_EQ(rewrite::region_computes(*m.graph, r, fn::gelu_tanh, 18, none, nullptr), !exact) << elem_type_name(type);
    }
    if (type == ElemType::Float) {
      Model off = gelu(true, 0.5001f);
      std::string why;
      float none[2];
      EXPECT_FALSE(rewrite::region_computes(*off.graph, region_of_output(*off.graph), fn::gelu, 18, none, &why));
      EXPECT_NE(why.find("not gelu: "), std::string::npos) << why;
    }
  }
}

// The region of a Gelu of 0.5 * h is that of 0.5 * h, not that of h; a value read outside, a second
// varying input or a wide constant end a region.
TEST(Computes, RegionsAtARoot) {
  Model scaled = written("x = Mul(X, half)\n s = Sigmoid(x)\n Y = Mul(x, s)\n");
  const Graph& g = *scaled.graph;
  std::vector<rewrite::ElementwiseRegion> regions = rewrite::regions_at(g, g.value(g.outputs()[0]).producer);
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[0].nodes.size(), 3u);  // of X: computes x/2 * sigmoid(x/2), no function of the table
  EXPECT_EQ(regions[1].nodes.size(), 2u);  // of X/2: SiLU
  float alpha[2];
  EXPECT_FALSE(rewrite::region_computes(g, regions[0], patterns::fn::quick_gelu, 18, alpha, nullptr));
  EXPECT_TRUE(rewrite::region_computes(g, regions[1], patterns::fn::quick_gelu, 18, alpha, nullptr));
  Model two = xexp::testing::load_case_model(
      "<ir_version: 8, opset_import: [\"\" : 18]>\ng (float[2,7] X, float[2,7] Z) => (float[2,7] Y) {\n"
      " s = Sigmoid(Z)\n Y = Mul(X, s)\n}\n");
  std::string why;
  EXPECT_TRUE(rewrite::regions_at(*two.graph, two.graph->value(two.graph->outputs()[0]).producer, &why).empty());
  EXPECT_NE(why.find("second varying value"), std::string::npos) << why;
  Model outside = xexp::testing::load_case_model(
      "<ir_version: 8, opset_import: [\"\" : 18]>\ng (float[2,7] X) => (float[2,7] Y, float[2,7] S) {\n"
      " S = Sigmoid(X)\n Y = Mul(X, S)\n}\n");
  why.clear();
  EXPECT_TRUE(rewrite::regions_at(*outside.graph, outside.graph->value(outside.graph->outputs()[0]).producer, &why).empty());
  EXPECT_NE(why.find("read outside"), std::string::npos) << why;
}

// The default set's rules on each spelling: the exact op, its attributes, the same outputs in xexp's
// evaluator and ONNX Runtime.
TEST(PatternActivation, EachSpellingBecomesItsOp) {
  struct Expected {
    const char* spelling;
    int64_t opset;
    OpList ops;
  };
  const std::vector<Expected> cases = {
      {"HardSigmoid as Clip(x / 6 + 0.5, 0, 1)", 13, {"HardSigmoid"}},
      {"HardSigmoid as max(0, min(1, 0.2 x + 0.5))", 13, {"HardSigmoid"}},
      {"HardSwish as x * Relu6(x + 3) / 6", 14, {"HardSwish"}},
      {"HardSwish as x * Relu6(x + 3) / 6", 13, {"HardSigmoid", "Mul"}},
      {"Softplus as log(1 + exp(x))", 17, {"Softplus"}},
      {"Mish as x * tanh(softplus(x))", 18, {"Mish"}},
      {"Mish as x * tanh(log(1 + exp(x)))", 18, {"Mish"}},
      {"Mish as x * tanh(log(1 + exp(x)))", 17, {"Softplus", "Tanh", "Mul"}},  // no Mish before opset 18
      {"LeakyRelu as Where(x > 0, x, 0.1 x)", 17, {"LeakyRelu"}},
      {"LeakyRelu as max(x, 0.1 x)", 17, {"LeakyRelu"}},
      {"Elu as Where(x > 0, x, exp(x) - 1)", 17, {"Elu"}},
      {"Elu alpha 0.5", 17, {"Elu"}},
  };
  for (const Expected& c : cases) {
    const Spelling& s = *std::find_if(spellings().begin(), spellings().end(),
                                      [&](const Spelling& x) { return std::string(x.name) == c.spelling; });
    Model m = written(s.body, c.opset);
    run_rules(m, "default");
    ASSERT_EQ(op_types(*m.graph), c.ops) << c.spelling << " at opset " << c.opset;
    const ir::Node& op = m.graph->node(m.graph->first_node());
    if (c.ops.size() == 1 && !s.parameters.empty()) {
      EXPECT_EQ(op.attribute(Symbol("alpha"))->f, s.parameters[0]) << c.spelling;
    }
    if (c.ops.size() == 1 && s.parameters.size() == 2) {
      EXPECT_EQ(op.attribute(Symbol("beta"))->f, s.parameters[1]) << c.spelling;
    }
    test::expect_same_outputs([&] { return written(s.body, c.opset); }, "default", 1e-5);
  }
}

// --explain says why a region is not the function: an erf Gelu is no tanh Gelu.
TEST(PatternActivation, ExplainSaysWhereTheFunctionDiffers) {
  Model m = written(spellings()[0].body);
  const Graph& g = *m.graph;
  const std::string why = patterns::gelu_ort_rule()->explain(g, g.value(g.outputs()[0]).producer, 18);
  EXPECT_NE(why.find("computes(gelu_tanh, x) at Mul"), std::string::npos) << why;
  EXPECT_NE(why.find("not gelu_tanh: "), std::string::npos) << why;
}
