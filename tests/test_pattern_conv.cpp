// Fusions after a Conv: ConvBatchNormalization (the BatchNormalization of inference folded into the
// weights and bias), ConvAddMul (a per-channel Add, Mul or Div by a constant folded into them),
// GemmBatchNormalization (the same BatchNormalization folded into a Gemm's B and C) and
// MatMulBatchNormalization (into a Gemm replacing a 2-D MatMul); before a Conv: MulAddConv (x * s + t).
// Folding reorders float operations: outputs agree within 1e-5.
// The default set's BatchNormalization (an identity one goes away) and BatchNormalizationTraining (the
// batch statistics written out) at the end.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/onnx.hpp"
#include "xexp/patterns/registry.hpp"
#include "xexp/optimizer/optimize_model.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::constant_ints;
using test::input_name;
using test::op_types;
using test::producer;
using test::run_rules;
using test::OpList;

namespace {

std::vector<float> ramp(int64_t n, float start, float step) {
  std::vector<float> out;
  for (int64_t k = 0; k < n; ++k) out.push_back(start + step * static_cast<float>(k % 7) - 0.01f * static_cast<float>(k));
  return out;
}

struct ConvBn {
  int64_t opset = 13;
  bool conv_bias = false;
  int64_t group = 1;
  bool weights_are_input = false;   // W a graph input, not a constant
  bool mean_is_input = false;       // the running mean a graph input
  bool training_mode = false;       // opset >= 14
};

Model conv_bn(const ConvBn& c) {
  Model m = test::model_with_opset(c.opset);
  Graph& g = *m.graph;
  const int64_t in_channels = 4, out_channels = 4;
  ValueId x = g.add_input("X", ElemType::Float, Shape{1, in_channels, 6, 6});
  const std::vector<int64_t> w_dims{out_channels, in_channels / c.group, 3, 3};
  ValueId w = c.weights_are_input ? g.add_input("W", ElemType::Float, make_shape(w_dims))
                                  : g.add_initializer("W", Tensor::from<float>(w_dims, ramp(out_channels * in_channels / c.group * 9, -0.4f, 0.13f)));
  std::vector<ValueId> conv_inputs{x, w};
  if (c.conv_bias) conv_inputs.push_back(g.add_initializer("B", Tensor::from<float>({out_channels}, ramp(out_channels, -0.2f, 0.15f))));
  ValueId y = node(g, "Conv", conv_inputs,
                   {Attribute::make_ints("pads", {1, 1, 1, 1}), Attribute::make_int("group", c.group)}, "", c.opset);
  ValueId mean = c.mean_is_input ? g.add_input("mean", ElemType::Float, Shape{out_channels})
                                 : g.add_initializer("mean", Tensor::from<float>({out_channels}, ramp(out_channels, -0.3f, 0.2f)));
  std::vector<Attribute> bn_attributes{Attribute::make_float("epsilon", 1e-3f)};
  if (c.training_mode) bn_attributes.push_back(Attribute::make_int("training_mode", 1));
  ValueId z = node(g, "BatchNormalization",
                   {y, g.add_initializer("scale", Tensor::from<float>({out_channels}, ramp(out_channels, 0.5f, 0.3f))),
                    g.add_initializer("bias", Tensor::from<float>({out_channels}, ramp(out_channels, -1.f, 0.4f))), mean,
                    g.add_initializer("var", Tensor::from<float>({out_channels}, ramp(out_channels, 0.2f, 0.35f)))},
                   bn_attributes, "", c.opset);
  g.add_output(z);
  return m;
}

}  // namespace

TEST(PatternConvBatchNormalization, FoldsIntoTheConv) {
  for (bool bias : {false, true}) {
    Model m = conv_bn({.conv_bias = bias});
    run_rules(m, "ConvBatchNormalization");
    ASSERT_EQ(op_types(*m.graph), (OpList{"Conv"})) << bias;
    const Node& conv = m.graph->node(m.graph->first_node());
    ASSERT_EQ(conv.inputs.size(), 3u);
    EXPECT_EQ(conv.attribute(Symbol("group"))->i, 1);
    EXPECT_EQ(conv.attribute(Symbol("pads"))->ints, (std::vector<int64_t>{1, 1, 1, 1}));
  }
}

TEST(PatternConvBatchNormalization, NotWithWeightsComputedAtRunTime) {
  Model m = conv_bn({.weights_are_input = true});
  run_rules(m, "ConvBatchNormalization");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Conv", "BatchNormalization"}));
}

TEST(PatternConvBatchNormalization, NotWithStatisticsComputedAtRunTime) {
  Model m = conv_bn({.mean_is_input = true});
  run_rules(m, "ConvBatchNormalization");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Conv", "BatchNormalization"}));
}

TEST(PatternConvBatchNormalization, NotInTrainingMode) {
  Model m = conv_bn({.opset = 15, .training_mode = true});
  run_rules(m, "ConvBatchNormalization");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Conv", "BatchNormalization"}));
}

TEST(PatternConvBatchNormalization, SameNumbers) {
  test::expect_same_outputs([] { return conv_bn({}); }, "ConvBatchNormalization", 1e-5);
  test::expect_same_outputs([] { return conv_bn({.conv_bias = true}); }, "ConvBatchNormalization", 1e-5);
  test::expect_same_outputs([] { return conv_bn({.opset = 9, .group = 4}); }, "default", 1e-5);
}

namespace {
// The paddle2onnx model `name` of ../shared/corpus/real read from disk and optimized as `xexp optimize`
// does; ONNX Runtime gives the outputs of the file on the optimized one. Returns how often `rule` fired.
std::size_t fired_on_paddle_export(const std::string& name, const std::string& rule, Model& model,
                                   const xexp::testing::RandomFeedOptions& feed_options) {
  const std::string path = std::string(XEXP_SHARED_DIR) + "/corpus/real/" + name;
  model = load_model(path);
  const optimizer::OptimizeModelReport report = xexp::testing::optimize_quietly(model);
  xexp::testing::TempDir dir;
  const std::string optimized = (dir.path() / "optimized.onnx").string();
  save_model(model, optimized);
  const Model original = load_model(path);
  const xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*original.graph, feed_options);
  const std::vector<xexp::testing::OrtResult> ort = xexp::testing::run_onnxruntime_batch({{path, feeds}, {optimized, feeds}});
  EXPECT_TRUE(ort[0].ok && ort[1].ok) << ort[0].error << ort[1].error;
  if (ort[0].ok && ort[1].ok) xexp::testing::expect_all_close(ort[1].outputs, ort[0].outputs, 1e-5, 1e-5);
  const rewrite::RuleStats* fired = report.rules.find(rule);
  return fired ? fired->applied : 0;
}
}  // namespace

// paddle2onnx's PP-OCR classifier (opset 9): a BatchNormalization after each of 35 Convs, statistics in
// Constant nodes. Read from disk and optimized: none is left, and ONNX Runtime gives the outputs of the file.
TEST(PatternConvBatchNormalization, OnPaddleExport) {
  Model model;
  EXPECT_EQ(fired_on_paddle_export("ch_ppocr_mobile_v2.0_cls_infer.onnx", "ConvBatchNormalization", model,
                                   {.seed = 5, .default_dim = 1}),
            35u);
  std::size_t batch_norms = 0;
  for (const std::string& op : op_types(*model.graph)) batch_norms += op == "BatchNormalization";
  EXPECT_EQ(batch_norms, 0u);
}

namespace {

struct ConvThen {
  std::string op = "Add";              // Add, Mul or Div
  std::vector<int64_t> dims = {3, 1, 1};  // the constant's shape
  bool conv_bias = true;
  bool constant_first = false;
  bool constant_is_input = false;
  bool zero_in_divisor = false;
};

Model conv_then(const ConvThen& c) {
  Model m = test::model_with_opset(13);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 2, 5, 5});
  std::vector<ValueId> inputs{x, g.add_initializer("W", Tensor::from<float>({3, 2, 3, 3}, ramp(54, -0.4f, 0.13f)))};
  if (c.conv_bias) inputs.push_back(g.add_initializer("B", Tensor::from<float>({3}, {0.1f, -0.2f, 0.3f})));
  ValueId y = node(g, "Conv", inputs, {Attribute::make_ints("pads", {1, 1, 1, 1})}, "", 13);
  int64_t size = 1;
  for (int64_t d : c.dims) size *= d;
  std::vector<float> values = ramp(size, 0.5f, 0.25f);
  if (c.zero_in_divisor) values[0] = 0.f;
  ValueId k = c.constant_is_input ? g.add_input("K", ElemType::Float, make_shape(c.dims))
                                  : g.add_initializer("K", Tensor::from<float>(c.dims, values));
  g.add_output(c.constant_first ? node(g, c.op, {k, y}, {}, "", 13) : node(g, c.op, {y, k}, {}, "", 13));
  return m;
}

}  // namespace

TEST(PatternConvAddMul, FoldsIntoTheConv) {
  for (const char* op : {"Add", "Mul", "Div"})
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{3, 1, 1}, {1, 3, 1, 1}, {1}, {}})
      for (bool bias : {false, true}) {
        Model m = conv_then({.op = op, .dims = dims, .conv_bias = bias});
        run_rules(m, "ConvAddMul");
        ASSERT_EQ(op_types(*m.graph), (OpList{"Conv"})) << op << " rank " << dims.size() << " bias " << bias;
      }
  Model m = conv_then({.op = "Mul", .constant_first = true});
  run_rules(m, "ConvAddMul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Conv"}));
}

TEST(PatternConvAddMul, NotAlongAnotherAxis) {
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{5}, {3, 5, 1}, {1, 1, 3, 1, 1}}) {
    Model m = conv_then({.dims = dims});
    run_rules(m, "ConvAddMul");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Conv", "Add"})) << dims.size();
  }
}

TEST(PatternConvAddMul, NotForAValueComputedAtRunTime) {
  Model m = conv_then({.op = "Mul", .constant_is_input = true});
  run_rules(m, "ConvAddMul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Conv", "Mul"}));
}

TEST(PatternConvAddMul, NotDividingByZero) {
  Model m = conv_then({.op = "Div", .zero_in_divisor = true});
  run_rules(m, "ConvAddMul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Conv", "Div"}));
}

TEST(PatternConvAddMul, NotAConstantDividedByTheConv) {
  Model m = conv_then({.op = "Div", .constant_first = true});
  run_rules(m, "ConvAddMul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Conv", "Div"}));
}

TEST(PatternConvAddMul, SameNumbers) {
  for (const char* op : {"Add", "Mul", "Div"}) {
    test::expect_same_outputs([op] { return conv_then({.op = op}); }, "ConvAddMul", 1e-5);
    test::expect_same_outputs([op] { return conv_then({.op = op, .dims = {}, .conv_bias = false}); }, "ConvAddMul", 1e-5);
  }
}

namespace {

struct GemmBn {
  int64_t trans_b = 0;
  bool with_c = true;
  bool b_is_input = false;
  bool training_mode = false;  // opset 15
};

Model gemm_bn(const GemmBn& c) {
  const int64_t opset = c.training_mode ? 15 : 13;
  Model m = test::model_with_opset(opset);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 4});
  const std::vector<int64_t> b_dims = c.trans_b ? std::vector<int64_t>{3, 4} : std::vector<int64_t>{4, 3};
  std::vector<ValueId> inputs{a, c.b_is_input ? g.add_input("B", ElemType::Float, make_shape(b_dims))
                                              : g.add_initializer("B", Tensor::from<float>(b_dims, ramp(12, -0.5f, 0.3f)))};
  if (c.with_c) inputs.push_back(g.add_initializer("C", Tensor::from<float>({3}, {0.2f, -0.1f, 0.4f})));
  ValueId y = node(g, "Gemm", inputs,
                   {Attribute::make_int("transB", c.trans_b), Attribute::make_float("alpha", 0.5f), Attribute::make_float("beta", 2.f)},
                   "", opset);
  std::vector<Attribute> bn_attributes{Attribute::make_float("epsilon", 1e-3f)};
  if (c.training_mode) bn_attributes.push_back(Attribute::make_int("training_mode", 1));
  g.add_output(node(g, "BatchNormalization",
                    {y, g.add_initializer("scale", Tensor::from<float>({3}, {0.5f, 1.5f, -0.75f})),
                     g.add_initializer("bias", Tensor::from<float>({3}, {0.1f, 0.2f, -0.3f})),
                     g.add_initializer("mean", Tensor::from<float>({3}, {-0.2f, 0.3f, 0.1f})),
                     g.add_initializer("var", Tensor::from<float>({3}, {0.5f, 2.f, 1.f}))},
                    bn_attributes, "", opset));
  return m;
}

}  // namespace

TEST(PatternGemmBatchNormalization, FoldsIntoTheGemm) {
  for (int64_t trans_b : {0, 1})
    for (bool with_c : {false, true}) {
      Model m = gemm_bn({.trans_b = trans_b, .with_c = with_c});
      run_rules(m, "GemmBatchNormalization");
      ASSERT_EQ(op_types(*m.graph), (OpList{"Gemm"})) << trans_b << with_c;
      const Node& gemm = m.graph->node(m.graph->first_node());
      EXPECT_EQ(gemm.attribute(Symbol("transB"))->i, trans_b);
      EXPECT_EQ(gemm.attribute(Symbol("alpha"))->f, 0.5f);
      EXPECT_EQ(gemm.attribute(Symbol("beta"))->f, 1.f);
    }
}

TEST(PatternGemmBatchNormalization, NotWithWeightsComputedAtRunTime) {
  Model m = gemm_bn({.b_is_input = true});
  run_rules(m, "GemmBatchNormalization");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Gemm", "BatchNormalization"}));
}

TEST(PatternGemmBatchNormalization, NotInTrainingMode) {
  Model m = gemm_bn({.training_mode = true});
  run_rules(m, "GemmBatchNormalization");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Gemm", "BatchNormalization"}));
}

TEST(PatternGemmBatchNormalization, SameNumbers) {
  for (int64_t trans_b : {0, 1})
    for (bool with_c : {false, true})
      test::expect_same_outputs([=] { return gemm_bn({.trans_b = trans_b, .with_c = with_c}); }, "GemmBatchNormalization",
                                1e-5);
}

namespace {

struct MatMulBn {
  std::vector<int64_t> a_dims{2, 4};
  bool b_is_input = false;
  bool training_mode = false;  // opset 15
};

const std::vector<float> kMatMulBnScale{0.5f, 1.5f, -0.75f}, kMatMulBnBias{0.1f, 0.2f, -0.3f},
    kMatMulBnMean{-0.2f, 0.3f, 0.1f}, kMatMulBnVar{0.5f, 2.f, 1.f};
constexpr float kMatMulBnEpsilon = 1e-3f;

// BatchNormalization(MatMul(A, B)), B [4, 3]: its 3 columns are the channels when A is [N, 4].
Model matmul_bn(const MatMulBn& c) {
  const int64_t opset = c.training_mode ? 15 : 13;
  Model m = test::model_with_opset(opset);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, make_shape(c.a_dims));
  ValueId b = c.b_is_input ? g.add_input("B", ElemType::Float, Shape{4, 3})
                           : g.add_initializer("B", Tensor::from<float>({4, 3}, ramp(12, -0.5f, 0.3f)));
  ValueId y = node(g, "MatMul", {a, b}, {}, "", opset);
  std::vector<Attribute> bn_attributes{Attribute::make_float("epsilon", kMatMulBnEpsilon)};
  if (c.training_mode) bn_attributes.push_back(Attribute::make_int("training_mode", 1));
  g.add_output(node(g, "BatchNormalization",
                    {y, g.add_initializer("scale", Tensor::from<float>({3}, kMatMulBnScale)),
                     g.add_initializer("bias", Tensor::from<float>({3}, kMatMulBnBias)),
                     g.add_initializer("mean", Tensor::from<float>({3}, kMatMulBnMean)),
                     g.add_initializer("var", Tensor::from<float>({3}, kMatMulBnVar))},
                    bn_attributes, "", opset));
  return m;
}

}  // namespace

TEST(PatternMatMulBatchNormalization, FoldsIntoAGemm) {
  Model m = matmul_bn({});
  run_rules(m, "MatMulBatchNormalization");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Gemm"}));
  const Graph& g = *m.graph;
  const Node& gemm = g.node(g.first_node());
  ASSERT_EQ(gemm.inputs.size(), 3u);
  EXPECT_EQ(g.value(gemm.inputs[0]).name, "A");
  // Gemm's defaults: alpha = beta = 1, nothing transposed.
  for (const char* name : {"alpha", "beta", "transA", "transB"})
    EXPECT_EQ(gemm.attribute(Symbol(name)), nullptr) << name;
  const Tensor* weight = rewrite::constant_tensor(g, gemm.inputs[1]);
  const Tensor* bias = rewrite::constant_tensor(g, gemm.inputs[2]);
  ASSERT_TRUE(weight && bias);
  ASSERT_EQ(weight->dims(), (std::vector<int64_t>{4, 3}));
  ASSERT_EQ(bias->dims(), (std::vector<int64_t>{3}));
  const std::vector<double> folded_weight = eval::as_doubles(*weight), folded_bias = eval::as_doubles(*bias);
  const std::vector<float> b = ramp(12, -0.5f, 0.3f);
  for (std::size_t col = 0; col < 3; ++col) {
    const double f = kMatMulBnScale[col] / std::sqrt(double{kMatMulBnVar[col]} + kMatMulBnEpsilon);
    EXPECT_NEAR(folded_bias[col], kMatMulBnBias[col] - kMatMulBnMean[col] * f, 1e-6) << col;
    for (std::size_t row = 0; row < 4; ++row)
      EXPECT_NEAR(folded_weight[row * 3 + col], b[row * 3 + col] * f, 1e-6) << row << ',' << col;
  }
}

// A [2, 3, 4]: BatchNormalization's channels (axis 1, 3 of them) are A's rows, not B's 3 columns.
TEST(PatternMatMulBatchNormalization, NotWhenTheProductIsNot2D) {
  Model m = matmul_bn({.a_dims = {2, 3, 4}});
  run_rules(m, "MatMulBatchNormalization");
  EXPECT_EQ(op_types(*m.graph), (OpList{"MatMul", "BatchNormalization"}));
}

TEST(PatternMatMulBatchNormalization, NotWithWeightsComputedAtRunTime) {
  Model m = matmul_bn({.b_is_input = true});
  run_rules(m, "MatMulBatchNormalization");
  EXPECT_EQ(op_types(*m.graph), (OpList{"MatMul", "BatchNormalization"}));
}

TEST(PatternMatMulBatchNormalization, NotInTrainingMode) {
  Model m = matmul_bn({.training_mode = true});
  run_rules(m, "MatMulBatchNormalization");
  EXPECT_EQ(op_types(*m.graph), (OpList{"MatMul", "BatchNormalization"}));
}

TEST(PatternMatMulBatchNormalization, SameNumbers) {
  test::expect_same_outputs([] { return matmul_bn({}); }, "MatMulBatchNormalization", 1e-5);
}

// ---- MulAddConv: x * s + t before a Conv goes into its weights and bias ----------------------------
namespace {

struct AffineConv {
  bool shift = true;  // x * s + t, else x * s
  int64_t kernel = 1;
  int64_t pads = 0;
  bool conv_bias = false;
  int64_t group = 1;
  std::vector<int64_t> scale_dims = {1};  // (1, 4, 1, 1): one scale per channel, left alone
};

Model affine_conv(const AffineConv& c) {
  Model m = test::model_with_opset(11);
  Graph& g = *m.graph;
  const int64_t channels = 4, out_channels = 6;
  ValueId x = g.add_input("X", ElemType::Float, Shape{1, channels, 5, 5});
  const int64_t scales = dims_element_count(c.scale_dims);
  ValueId y = node(g, "Mul",
                   {x, g.add_initializer("s", Tensor::from<float>(c.scale_dims, ramp(scales, 0.75f, 0.1f)))});
  if (c.shift) y = node(g, "Add", {g.add_initializer("t", Tensor::from<float>({1}, {0.3f})), y});
  const std::vector<int64_t> w_dims{out_channels, channels / c.group, c.kernel, c.kernel};
  std::vector<ValueId> inputs{
      y, g.add_initializer("W", Tensor::from<float>(w_dims, ramp(dims_element_count(w_dims), -0.4f, 0.13f)))};
  if (c.conv_bias)
    inputs.push_back(
        g.add_initializer("B", Tensor::from<float>({out_channels}, ramp(out_channels, -0.2f, 0.15f))));
  g.add_output(node(g, "Conv", inputs,
                    {Attribute::make_ints("pads", {c.pads, c.pads, c.pads, c.pads}),
                     Attribute::make_int("group", c.group)}));
  return m;
}

}  // namespace

TEST(PatternMulAddConv, GoesIntoTheWeightsAndBias) {
  for (const AffineConv& c : {AffineConv{}, AffineConv{.kernel = 3, .conv_bias = true, .group = 2},
                              AffineConv{.shift = false, .kernel = 3, .pads = 1}}) {
    Model m = affine_conv(c);
    run_rules(m, "MulAddConv");
    ASSERT_EQ(op_types(*m.graph), (OpList{"Conv"})) << c.kernel;
    const Node& conv = m.graph->node(m.graph->first_node());
    EXPECT_EQ(conv.inputs[0], m.graph->inputs()[0]);
    EXPECT_EQ(conv.inputs.size(), c.shift || c.conv_bias ? 3u : 2u);
    EXPECT_EQ(conv.attribute(Symbol("group"))->i, c.group);
  }
}

// A padded Conv reads zeros around x * s + t: the shift stays. So does a scale per channel, or one of
// rank 4 (it could have broadcast x to that rank).
TEST(PatternMulAddConv, NotTheShiftIntoAPaddedConvNorAScalePerChannel) {
  Model padded = affine_conv({.kernel = 3, .pads = 1});
  run_rules(padded, "MulAddConv");
  EXPECT_EQ(op_types(*padded.graph), (OpList{"Mul", "Add", "Conv"}));
  Model per_channel = affine_conv({.shift = false, .scale_dims = {1, 4, 1, 1}});
  run_rules(per_channel, "MulAddConv");
  EXPECT_EQ(op_types(*per_channel.graph), (OpList{"Mul", "Conv"}));
  Model rank4 = affine_conv({.shift = false, .scale_dims = {1, 1, 1, 1}});
  run_rules(rank4, "MulAddConv");
  EXPECT_EQ(op_types(*rank4.graph), (OpList{"Mul", "Conv"}));
}

TEST(PatternMulAddConv, SameNumbers) {
  test::expect_same_outputs([] { return affine_conv({}); }, "MulAddConv", 1e-5);
  test::expect_same_outputs([] { return affine_conv({.kernel = 3, .conv_bias = true, .group = 2}); },
                            "MulAddConv", 1e-5);
  test::expect_same_outputs([] { return affine_conv({.shift = false, .kernel = 3, .pads = 1}); },
                            "MulAddConv", 1e-5);
}

// PP-OCRv4's detector (paddle2onnx, opset 11) scales and shifts each hardswish's output by a learned
// value before the next Conv: read from disk, those into unpadded Convs go.
TEST(PatternMulAddConv, OnPaddleExport) {
  Model model;
  const std::map<std::string, int64_t> image{{"p2o.DynamicDimension.1", 64}, {"p2o.DynamicDimension.2", 64}};
  EXPECT_EQ(fired_on_paddle_export("ch_PP-OCRv4_det_infer.onnx", "MulAddConv", model,
                                   {.seed = 5, .symbols = image, .default_dim = 1}),
            10u);
}

namespace {

Tensor filled(std::vector<int64_t> dims, float value) {
  return Tensor::from<float>(dims, std::vector<float>(static_cast<std::size_t>(dims_element_count(dims)), value));
}
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
  if (c.training) attributes.push_back(Attribute::make_int("training_mode", 1));
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
  ValueId scale = g.add_initializer("scale", eval::cast_tensor(Tensor::from<float>({3}, ramp(3, 0.5f, 0.1f)), scale_type));
  ValueId bias = g.add_initializer("bias", eval::cast_tensor(Tensor::from<float>({3}, ramp(3, -0.2f, 0.1f)), scale_type));
  ValueId y = g.add_value("Y"), running_mean = g.add_value("running_mean"),
          running_var = g.add_value("running_var");
  NodeId bn = g.add_node(
      Symbol("BatchNormalization"),
      {x, scale, bias, g.add_initializer("mean", filled({3}, 0)), g.add_initializer("var", filled({3}, 1))},
      training_mode ? std::vector<ValueId>{y, running_mean, running_var} : std::vector<ValueId>{y},
      {Attribute::make_int("training_mode", training_mode)}, "bn");
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

}  // namespace
