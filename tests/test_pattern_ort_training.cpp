// onnxruntime_training set: BiasSoftmax and SoftmaxGrad, kernels of ONNX Runtime's GPU and training
// builds. Positive (exact structure after), a negative per condition, and the same outputs: the
// evaluator before and after, and ONNX Runtime's CPU package, which runs only the original, against
// the evaluator. Then the training graphs of the corpus, read from disk as the exporter wrote them.
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
using test::op_types;
using test::OpList;
using test::run_rules;
using xexp::testing::load_case_model;

namespace {

const std::string& input_name(const Graph& g, const Node& n, std::size_t k) {
  return g.value(n.inputs[k]).name;
}
int64_t int_of(const Node& n, const char* name) { return n.attribute(Symbol(name))->i; }

// ---- BiasSoftmax ------------------------------------------------------------------------------------
// Softmax(Add(X, M)) on scores X (2, 3, 4, 4).
struct Biased {
  std::string mask = "1,1,4,4";
  bool mask_first = false;
  std::string axis = "-1";
  std::string type = "float";
  bool sum_read = false;  // the sum is also a graph output
};
std::string biased_text(const Biased& c) {
  return "<ir_version: 8, opset_import: [\"\" : 18]>\ng (" + c.type + "[2,3,4,4] X, " + c.type + "[" +
         c.mask + "] M) => (" + c.type + "[2,3,4,4] Y" + (c.sum_read ? ", " + c.type + "[2,3,4,4] S" : "") +
         ") {\n  S = Add(" + (c.mask_first ? "M, X" : "X, M") + ")\n  Y = Softmax<axis=" + c.axis +
         ">(S)\n}\n";
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
// the softmax's own axis, a softmax over another axis, a sum read elsewhere, bfloat16.
TEST(PatternBiasSoftmax, NotForOtherBroadcastsAxesOrTypes) {
  for (const Biased& c : {Biased{.mask = "2,1,4,4"}, Biased{.mask = "1,1,4,1"}, Biased{.mask = "1,3,1,4"},
                          Biased{.axis = "1"}, Biased{.sum_read = true}, Biased{.type = "bfloat16"}}) {
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
