// onnxruntime_training set: BiasSoftmax and SoftmaxGrad, kernels of ONNX Runtime's GPU and training
// builds, and OrtBatchNormalizationTraining. Positive (exact structure after), a negative per condition,
// and the same outputs: the evaluator before and after, and ONNX Runtime's CPU package, which runs only
// the original of the fused kernels, against the evaluator (both models of the written-out
// BatchNormalization). Then the training graphs of the corpus, read from disk as the exporter wrote them,
// and the default set's SoftmaxCrossEntropyLossCast (torch's decomposed nll_loss becomes one loss node).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::input_name;
using test::int_of;
using test::op_types;
using test::OpList;
using test::producer;
using test::run_rules;
using xexp::testing::float_type_name;
using xexp::testing::load_case_model;

namespace {

// ---- BiasSoftmax ------------------------------------------------------------------------------------
// Softmax(Add(X, M)) on scores X (2, 3, 4, 4).
struct Biased {
  std::string mask = "1,1,4,4";
  bool mask_first = false;
  std::string axis = "-1";
  std::string type = "float";
};
std::string biased_text(const Biased& c) {
  return "<ir_version: 8, opset_import: [\"\" : 18]>\ng (" + c.type + "[2,3,4,4] X, " + c.type + "[" +
         c.mask + "] M) => (" + c.type + "[2,3,4,4] Y) {\n  S = Add(" + (c.mask_first ? "M, X" : "X, M") +
         ")\n  Y = Softmax<axis=" + c.axis + ">(S)\n}\n";
}

TEST(PatternBiasSoftmax, RepeatedOverLeadingAxesOrOverTheAxesBeforeTheLast) {
  struct Case {
    Biased biased;
    int64_t inner;
  };
  for (const Case& c : {Case{{}, 0}, Case{{.mask_first = true}, 0}, Case{{.mask = "4,4"}, 0},
                        Case{{.mask = "2,3,4,4"}, 0}, Case{{.mask = "1,3,4,4", .axis = "3"}, 0},
                        Case{{.mask = "2,1,1,4"}, 1}, Case{{.mask = "2,3,1,4", .type = "float16"}, 1}}) {
    Model m = load_case_model(biased_text(c.biased));
    run_rules(m, "BiasSoftmax");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"com.microsoft.BiasSoftmax"})) << biased_text(c.biased);
    const Node& n = g.node(g.first_node());
    EXPECT_EQ(input_name(g, n, 0), "X");
    EXPECT_EQ(input_name(g, n, 1), "M");
    EXPECT_EQ(int_of(n, "axis"), 3);
    EXPECT_EQ(int_of(n, "is_inner_broadcast"), c.inner) << c.biased.mask;
    EXPECT_EQ(g.value(n.outputs[0]).shape, (Shape{2, 3, 4, 4}));
  }
}

// A mask over batches and rows (2, 1, 4, 4) repeats neither way, one of a single column broadcasts along
// the softmax's own axis, a softmax over another axis, bfloat16.
TEST(PatternBiasSoftmax, NotForOtherBroadcastsAxesOrTypes) {
  for (const Biased& c : {Biased{.mask = "2,1,4,4"}, Biased{.mask = "1,1,4,1"}, Biased{.mask = "1,3,1,4"},
                          Biased{.axis = "1"}, Biased{.type = "bfloat16"}}) {
    Model m = load_case_model(biased_text(c));
    run_rules(m, "BiasSoftmax");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Add", "Softmax"})) << biased_text(c);
  }
}

TEST(PatternBiasSoftmax, SameNumbers) {
  for (const char* mask : {"1,1,4,4", "2,1,1,4", "4,4"})
    test::expect_same_outputs_where_onnxruntime_runs(
        [mask] { return load_case_model(biased_text({.mask = mask})); }, "BiasSoftmax", 1e-6,
        test::OrtRefuses::Rewritten);
}

// ---- SoftmaxGrad ------------------------------------------------------------------------------------
// dX = G * P - P * ReduceSum(G * P, axes) for the gradient G of the softmax P (2, 3, 4).
struct Gradient {
  bool product_swapped = false, sum_first = false;
  std::string axis = "-1";
  std::string g_dims = "2,3,4";
};
std::string gradient_text(const Gradient& c) {
  return "<ir_version: 8, opset_import: [\"\" : 18]>\ng (float[" + c.g_dims +
         "] G, float[2,3,4] P) => (float[2,3,4] D) <int64[1] axes = {" + c.axis + "}> {\n  M = Mul(" +
         (c.product_swapped ? "P, G" : "G, P") + ")\n  R = ReduceSum<keepdims=1>(M, axes)\n  N = Mul(" +
         (c.sum_first ? "R, P" : "P, R") + ")\n  D = Sub(M, N)\n}\n";
}

TEST(PatternSoftmaxGrad, OneNodeWhateverTheOrderOfTheProducts) {
  for (const Gradient& c :
       {Gradient{}, Gradient{.product_swapped = true}, Gradient{.sum_first = true}, Gradient{.axis = "2"}}) {
    Model m = load_case_model(gradient_text(c));
    run_rules(m, "SoftmaxGrad");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"com.microsoft.SoftmaxGrad"})) << gradient_text(c);
    const Node& n = g.node(g.first_node());
    EXPECT_EQ(input_name(g, n, 0), "G");
    EXPECT_EQ(input_name(g, n, 1), "P");
    EXPECT_EQ(int_of(n, "axis"), 2);
    EXPECT_EQ(g.value(n.outputs[0]).shape, (Shape{2, 3, 4}));
    EXPECT_EQ(g.value(n.outputs[0]).elem, ElemType::Float);
  }
}

// Another axis (SoftmaxGrad flattens the axes from `axis` on), a gradient broadcast against the softmax.
TEST(PatternSoftmaxGrad, NotForAnotherAxisOrShape) {
  for (const Gradient& c : {Gradient{.axis = "1"}, Gradient{.g_dims = "1,3,4"}}) {
    Model m = load_case_model(gradient_text(c));
    run_rules(m, "SoftmaxGrad");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Mul", "ReduceSum", "Mul", "Sub"})) << gradient_text(c);
  }
}

TEST(PatternSoftmaxGrad, SameNumbers) {
  test::expect_same_outputs_where_onnxruntime_runs([] { return load_case_model(gradient_text({})); },
                                                   "SoftmaxGrad", 1e-5, test::OrtRefuses::Rewritten);
}

// ---- OrtBatchNormalizationTraining ---------------------------------------------------------------
// BatchNormalization(X (2, 3, 4, 5), momentum 0.8) whose running statistics RM and RV are graph outputs,
// as a training step exports them.
struct Training {
  std::string type = "float", stats_type = "float";
  std::vector<std::string> outputs = {"Y", "RM", "RV"};  // the graph's outputs
  bool training_mode = true;
};
std::string training_text(const Training& c) {
  std::string outputs;
  for (const std::string& name : c.outputs)
    outputs +=
        (outputs.empty() ? "" : ", ") + (name == "Y" ? c.type + "[2,3,4,5] " : c.stats_type + "[3] ") + name;
  // Parameters as inputs: ONNX 1.12's parser reads no float16 literals.
  return "<ir_version: 8, opset_import: [\"\" : 15]>\ng (" + c.type + "[2,3,4,5] X, " + c.type + "[3] s, " +
         c.type + "[3] b, " + c.stats_type + "[3] m, " + c.stats_type + "[3] v) => (" + outputs + ") {\n  " +
         (c.training_mode ? "Y, RM, RV = BatchNormalization<training_mode=1, " : "Y = BatchNormalization<") +
         "momentum=0.8, epsilon=0.001>(X, s, b, m, v)\n}\n";
}
double scalar_of(const Graph& g, ValueId v) {
  return eval::as_doubles(*rewrite::constant_tensor(g, v)).at(0);
}

TEST(PatternOrtBatchNormalizationTraining, BatchStatisticsNormalizeInInferenceModeAndUpdateTheRunningOnes) {
  Model m = load_case_model(training_text({}));
  run_rules(m, "OrtBatchNormalizationTraining");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"ReduceMean", "Reshape", "Sub", "Mul", "ReduceMean", "BatchNormalization",
                                 "Mul", "Mul", "Add", "Mul", "Mul", "Add"}));
  const Node& y = producer(g, g.outputs()[0]);
  EXPECT_EQ(y.op_type.str(), "BatchNormalization");
  EXPECT_EQ(y.attribute(Symbol("training_mode")), nullptr);
  EXPECT_FLOAT_EQ(y.attribute(Symbol("epsilon"))->f, 0.001f);
  EXPECT_EQ(y.outputs.size(), 1u);
  EXPECT_EQ(input_name(g, y, 0), "X");
  const Node& mean = producer(g, y.inputs[3]);
  EXPECT_EQ(mean.op_type.str(), "Reshape");
  EXPECT_EQ(producer(g, y.inputs[4]).op_type.str(), "ReduceMean");
  EXPECT_EQ(producer(g, y.inputs[4]).attribute(Symbol("axes"))->ints, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(producer(g, y.inputs[4]).attribute(Symbol("keepdims"))->i, 0);
  // running = input * momentum + batch * (1 - momentum), under the outputs' own names
  for (std::size_t k : {1, 2}) {
    const Node& add = producer(g, g.outputs()[k]);
    EXPECT_EQ(g.value(g.outputs()[k]).name, k == 1 ? "RM" : "RV");
    EXPECT_EQ(g.value(g.outputs()[k]).shape, (Shape{3}));
    const Node &kept = producer(g, add.inputs[0]), &batch = producer(g, add.inputs[1]);
    EXPECT_EQ(input_name(g, kept, 0), k == 1 ? "m" : "v");
    EXPECT_FLOAT_EQ(scalar_of(g, kept.inputs[1]), 0.8f);
    EXPECT_EQ(batch.inputs[0], y.inputs[2 + k]);
    EXPECT_FLOAT_EQ(scalar_of(g, batch.inputs[1]), 0.2f);
  }
}

// Running statistics nobody reads (the default set's BatchNormalizationTraining takes those), inference
// mode, float16 (ONNX computes its statistics in float), statistics of another type than X.
TEST(PatternOrtBatchNormalizationTraining, NotWithoutReadStatisticsNorInInferenceModeNorForOtherTypes) {
  for (const Training& c :
       {Training{.outputs = {"Y"}}, Training{.outputs = {"Y"}, .training_mode = false},
        Training{.type = "float16", .stats_type = "float16"}, Training{.stats_type = "double"}}) {
    Model m = load_case_model(training_text(c));
    run_rules(m, "OrtBatchNormalizationTraining");
    EXPECT_EQ(op_types(*m.graph), (OpList{"BatchNormalization"})) << training_text(c);
  }
}

TEST(PatternOrtBatchNormalizationTraining, SameNumbers) {
  for (const std::vector<std::string>& outputs : {std::vector<std::string>{"Y", "RM", "RV"}, {"RV", "Y"}})
    test::expect_same_outputs([&] { return load_case_model(training_text({.outputs = outputs})); },
                              "OrtBatchNormalizationTraining", 1e-5);
}

// Written to disk as an exporter writes it, read back and optimized as `xexp optimize --patterns
// default+onnxruntime+onnxruntime_training` does: the other rules leave the written-out nodes as the
// rule built them, and Y, RM and RV are what the original gives, in the evaluator and ONNX Runtime.
TEST(PatternOrtBatchNormalizationTraining, ModelReadFromDiskGivesTheSameOutputsOptimized) {
  xexp::testing::TempDir dir;
  const std::string path = (dir.path() / "bn.onnx").string();
  xexp::testing::write_case_model(training_text({}), path);
  Model model = load_model(path);
  xexp::testing::optimize_quietly(model, true, "default+onnxruntime+onnxruntime_training");
  const Graph& g = *model.graph;
  EXPECT_EQ(op_types(g), (OpList{"ReduceMean", "Reshape", "Sub", "Mul", "ReduceMean", "BatchNormalization",
                                 "Mul", "Mul", "Add", "Mul", "Mul", "Add"}));
  EXPECT_EQ(producer(g, g.outputs()[0]).op_type.str(), "BatchNormalization");
  const xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*load_model(path).graph, {.seed = 4});
  test::expect_outputs_of_file(path, model, feeds, 1e-5);
}

// The backward graphs of experimental-experiment's corpus (torch's ONNX Runtime backend training Phi and
// Llama layers), read from disk as it wrote them and optimized as `xexp optimize --patterns
// default+onnxruntime+onnxruntime_training` does: every softmax gradient becomes one SoftmaxGrad, and the
// evaluator gives what it gives on the model optimized without the set (ONNX Runtime's CPU package runs
// only that one; the corpus sweep compares it with the original).
TEST(PatternSoftmaxGrad, BackwardGraphsOfTheCorpusReadFromDisk) {
  const std::filesystem::path dir =
      std::filesystem::path(XEXP_SHARED_DIR) / "corpus" / "experimental-experiment";
  struct Case {
    const char* file;
    int gradients;
  };
  for (const Case& c :
       {Case{"ut_xoptim_data_phi_1_good.onnx", 2}, Case{"ut_xoptim_data_noopt-llama-custom__1.onnx", 1}}) {
    SCOPED_TRACE(c.file);
    const std::string original = (dir / c.file).string();
    Model with = load_model(original), without = load_model(original);
    xexp::testing::optimize_quietly(with, true, "default+onnxruntime+onnxruntime_training");
    xexp::testing::optimize_quietly(without, true, "default+onnxruntime");
    const OpList ops = op_types(*with.graph);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft.SoftmaxGrad"), c.gradients);
    EXPECT_EQ(ops.size() + 3 * static_cast<std::size_t>(c.gradients), op_types(*without.graph).size());
    const xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(
        *load_model(original).graph, {.seed = 3, .float_low = -1, .float_high = 1});
    xexp::testing::expect_all_close(test::evaluated(with, feeds), test::evaluated(without, feeds), 1e-4,
                                    1e-4);
  }
}

}  // namespace

namespace {

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
