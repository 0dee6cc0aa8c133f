// The ONNX Runtime runner used by the other tests: feeds go in, outputs come back with the right
// names, types, shapes and values; failures surface as xexp::Error carrying ORT's message.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "support/compare.hpp"
#include "support/ort.hpp"
#include "support/random_inputs.hpp"
#include "support/temp_dir.hpp"

using namespace xexp;
using namespace xexp::testing;

namespace {

std::string node_model(const std::string& name) { return std::string(XEXP_TESTDATA_DIR) + "/node/" + name + "/model.onnx"; }

ir::Graph graph_with_inputs(std::initializer_list<std::pair<const char*, ElemType>> inputs, const Shape& shape) {
  ir::Graph g;
  for (const auto& [name, type] : inputs) g.add_input(name, type, shape);
  return g;
}

}  // namespace

TEST(OrtRunner, IsInstalled) { EXPECT_TRUE(ort_available()) << "run scripts/install_deps.sh"; }

TEST(OrtRunner, AddsTwoFloatTensors) {
  const NamedTensors feeds = random_feeds(graph_with_inputs({{"x", ElemType::Float}, {"y", ElemType::Float}}, {3, 4, 5}));
  const NamedTensors outputs = run_onnxruntime(node_model("test_add"), feeds);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].first, "sum");
  Tensor expected(ElemType::Float, {3, 4, 5});
  auto out = expected.mutable_data<float>();
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = feeds[0].second.data<float>()[k] + feeds[1].second.data<float>()[k];
  expect_close(outputs[0].second, expected, 0, 0);
}

TEST(OrtRunner, ReturnsInt64AndBoolOutputs) {
  const auto argmax = run_onnxruntime(node_model("test_argmax_default_axis_example"),
                                      {{"data", Tensor::from<float>({2, 2}, {2, 1, 3, 10})}});
  ASSERT_EQ(argmax.size(), 1u);
  expect_close(argmax[0].second, Tensor::from<int64_t>({1, 2}, {1, 1}), 0, 0);

  const auto equal = run_onnxruntime(node_model("test_equal"), {{"x", Tensor::from<int32_t>({3, 4, 5}, std::vector<int32_t>(60, 7))},
                                                               {"y", Tensor::from<int32_t>({3, 4, 5}, std::vector<int32_t>(60, 7))}});
  ASSERT_EQ(equal.size(), 1u);
  EXPECT_EQ(equal[0].second.type(), ElemType::Bool);
  EXPECT_EQ(equal[0].second.dims(), (std::vector<int64_t>{3, 4, 5}));
  for (uint8_t b : equal[0].second.data<uint8_t>()) EXPECT_EQ(b, 1);
}

TEST(OrtRunner, OptimizationLevelAllGivesTheSameResult) {
  const NamedTensors feeds = random_feeds(graph_with_inputs({{"x", ElemType::Float}, {"y", ElemType::Float}}, {3, 4, 5}),
                                          {.seed = 7});
  expect_all_close(run_onnxruntime(node_model("test_add"), feeds, {.optimization_level = "all", .threads = 2}),
                   run_onnxruntime(node_model("test_add"), feeds), 0, 0);
}

// bench/ort_latency.sh's measurement: models side by side in one process. What it prints is checked,
// never how long anything took: the same model twice gives the same outputs (max_abs_diff 0), a model
// computing something else does not.
TEST(OrtRunner, LatencySideBySideComparesTheOutputsToo) {
  TempDir dir;
  const NamedTensors feeds = random_feeds(graph_with_inputs({{"x", ElemType::Float}, {"y", ElemType::Float}}, {3, 4, 5}),
                                          {.seed = 7, .float_low = 1, .float_high = 2});
  const std::string inputs = write_ort_feeds(dir.path(), feeds);
  const CommandResult r = run_command(
      ort_command("latency " + shell_quote(node_model("test_add")) + " " + shell_quote(node_model("test_add")) + " " +
                      shell_quote(node_model("test_sub")) + " " + shell_quote(inputs) + " --repeat 3 --batch 2",
                  {.optimization_level = "all"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"run_ms 0 ", "run_ms 1 ", "run_ms 2 ", "paired 1 ", "paired 2 "})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " in\n" << r.out;
  EXPECT_NE(r.out.find("max_abs_diff 1 0.000e+0\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("max_abs_diff 2 0.000e+0\n"), std::string::npos) << r.out;  // x - y is not x + y
  EXPECT_NE(r.out.find("max_abs_diff 2 "), std::string::npos) << r.out;
}

TEST(OrtRunner, FailuresCarryOrtsMessage) {
  try {
    run_onnxruntime(node_model("test_add"), {{"x", Tensor::from<float>({1}, {1.0f})}});
    FAIL() << "a missing input must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("onnxruntime failed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("y"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_onnxruntime("/nonexistent/model.onnx", {}), Error);
  EXPECT_THROW(run_onnxruntime(node_model("test_add"), {}, {.optimization_level = "fastest"}), Error);
}

TEST(RandomFeeds, AreDeterministicAndRespectRanges) {
  ir::Graph g;
  g.add_input("ids", ElemType::Int64, Shape{Dim::symbolic("batch"), 30});
  g.add_input("x", ElemType::Float, Shape{4});
  const RandomFeedOptions options{.seed = 3, .int_low = 5, .int_high = 9, .symbols = {{"batch", 2}}};
  const NamedTensors a = random_feeds(g, options), b = random_feeds(g, options);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].second.dims(), (std::vector<int64_t>{2, 30}));
  EXPECT_TRUE(a[0].second.same_content(b[0].second));
  EXPECT_TRUE(a[1].second.same_content(b[1].second));
  for (int64_t id : a[0].second.data<int64_t>()) {
    EXPECT_GE(id, 5);
    EXPECT_LT(id, 9);
  }
  for (float x : a[1].second.data<float>()) {
    EXPECT_GE(x, -1.0f);
    EXPECT_LT(x, 1.0f);
  }
  EXPECT_FALSE(random_feeds(g, {.seed = 4, .symbols = {{"batch", 2}}})[1].second.same_content(a[1].second));
  EXPECT_THROW(random_feeds(g), Error);  // no value for 'batch'
}

TEST(CompareTensors, ToleranceIsAbsolutePlusRelative) {
  const Tensor expected = Tensor::from<float>({2}, {1.0f, 100.0f});
  expect_close(Tensor::from<float>({2}, {1.05f, 101.0f}), expected, 0.1, 0.011);
  EXPECT_NONFATAL_FAILURE(expect_close(Tensor::from<float>({2}, {1.2f, 100.0f}), expected, 0.1, 0.0), "1 of 2 elements");
  EXPECT_FATAL_FAILURE(expect_close(Tensor::from<float>({1, 2}, {1.0f, 100.0f}), Tensor::from<float>({2}, {1.0f, 100.0f})), "");
}
