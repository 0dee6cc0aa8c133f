// tools::optimize_model on models read from disk, with nothing typed by the test: the demo LLM written
// and read back optimizes to exactly what it gives in process (types come on load), and
// --no-constant-folding still leaves every constant chain in place.
#include <gtest/gtest.h>

#include <sstream>

#include "support/rewrite_helpers.hpp"
#include "xexp/builder/demo_llm.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/optimize.hpp"

using namespace xexp;

namespace {

tools::OptimizeModelReport optimize_quietly(ir::Model& model, bool constant_folding = true) {
  static std::ostringstream log;
  tools::OptimizeModelOptions options;
  options.log = &log;
  options.constant_folding = constant_folding;
  return tools::optimize_model(model, options);
}

std::vector<std::string> value_names(const ir::Graph& g) {
  std::vector<std::string> names;
  for (ir::NodeId id : g.nodes())
    for (ir::ValueId out : g.node(id).outputs) names.push_back(out == ir::kNone ? "" : g.value(out).name);
  return names;
}

}  // namespace

TEST(OptimizeExported, DemoReadFromDiskOptimizesAsInProcess) {
  ir::Model in_process = build_demo_llm();
  xexp::testing::TempDir dir;
  const std::string path = (dir.path() / "xexp_demo.onnx").string();
  save_model(in_process, path);
  ir::Model from_disk = load_model(path);
  // The file holds no value_info: only the graph inputs and outputs are typed.
  EXPECT_TRUE(from_disk.graph->value_info().empty());

  const tools::OptimizeModelReport a = optimize_quietly(in_process);
  const tools::OptimizeModelReport b = optimize_quietly(from_disk);
  EXPECT_EQ(b.nodes_before, a.nodes_before);
  EXPECT_EQ(b.nodes_after, a.nodes_after);
  EXPECT_LT(b.nodes_after, b.nodes_before * 3 / 4);  // 46 -> 30 today
  EXPECT_EQ(test::op_types(*from_disk.graph), test::op_types(*in_process.graph));
  EXPECT_EQ(value_names(*from_disk.graph), value_names(*in_process.graph));

  // Same outputs as the model written to disk, in xexp's evaluator and in ONNX Runtime.
  const ir::Model original = load_model(path);
  const xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*original.graph, {.seed = 3});
  eval::Evaluator before(original), after(from_disk);
  xexp::testing::expect_all_close({{"out", after.run(feeds).at(0)}}, {{"out", before.run(feeds).at(0)}}, 1e-5, 1e-5);
  const std::string optimized = (dir.path() / "optimized.onnx").string();
  save_model(from_disk, optimized);
  const std::vector<xexp::testing::OrtResult> ort = xexp::testing::run_onnxruntime_batch({{path, feeds}, {optimized, feeds}});
  ASSERT_TRUE(ort[0].ok && ort[1].ok) << ort[0].error << ort[1].error;
  xexp::testing::expect_all_close(ort[1].outputs, ort[0].outputs, 1e-5, 1e-5);
}

TEST(OptimizeExported, NoConstantFoldingLeavesTheConstantChains) {
  const std::string path = std::string(XEXP_SHARED_DIR) + "/models/llama_L1.fold.onnx";
  ir::Model model = load_model(path);
  const tools::OptimizeModelReport report = optimize_quietly(model, /*constant_folding=*/false);
  EXPECT_EQ(report.folded, 0u);
  std::size_t chain = 0;
  for (const std::string& op : test::op_types(*model.graph))
    chain += op == "ConstantOfShape" || op == "Where" || op == "Expand";
  EXPECT_GT(chain, 0u);
  // The rules still fire: their types came on load.
  std::size_t fused = 0;
  for (const std::string& op : test::op_types(*model.graph)) fused += op == "com.microsoft.SkipSimplifiedLayerNormalization";
  EXPECT_EQ(fused, 2u);
}
