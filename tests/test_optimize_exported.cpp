// optimizer::optimize_model on models read from disk, with nothing typed by the test: the demo LLM written
// and read back optimizes to exactly what it gives in process (types come on load), and
// --no-constant-folding still leaves every constant chain in place, target_opset upgrades a torch
// export before the rules run, and the dimension symbols ONNX's inference names and ours equate are one.
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/shape_inference/implementation.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/builder/demo_llm.hpp"
#include "xexp/onnx.hpp"
#include "xexp/optimizer/optimize_model.hpp"

using namespace xexp;
using xexp::testing::optimize_quietly;

namespace {

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

  const optimizer::OptimizeModelReport a = optimize_quietly(in_process);
  const optimizer::OptimizeModelReport b = optimize_quietly(from_disk);
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
  const optimizer::OptimizeModelReport report = optimize_quietly(model, /*constant_folding=*/false);
  EXPECT_EQ(report.folded, 0u);
  std::size_t chain = 0;
  for (const std::string& op : test::op_types(*model.graph))
    chain += op == "ConstantOfShape" || op == "Where" || op == "Expand";
  EXPECT_GT(chain, 0u);
  // The rules still fire: their types came on load.
  std::size_t fused = 0;
  for (const std::string& op : test::op_types(*model.graph)) fused += op == "SimplifiedLayerNormalization";
  EXPECT_EQ(fused, 3u);
}

// The library's target_opset: the upgrade, then the rules at the new opset; without it, the report says
// which rules the upgrade would let fire; a refused upgrade throws and leaves the model as it was.
TEST(OptimizeExported, TargetOpsetUpgradesBeforeTheRules) {
  const std::string path = std::string(XEXP_SHARED_DIR) + "/models/gpt_erf_L1.op16.onnx";
  std::ostringstream log;
  optimizer::OptimizeModelOptions options{.patterns = "default", .log = &log};
  auto layer_norms_waiting = [](const optimizer::OptimizeModelReport& report) {
    for (const optimizer::RuleWaitingForOpset& w : report.waiting)
      if (w.rule == "LayerNormalization") return std::pair{w.matches, w.opset};
    return std::pair<std::size_t, int64_t>{0, 0};
  };

  ir::Model kept = load_model(path);
  const optimizer::OptimizeModelReport k = optimizer::optimize_model(kept, options);
  EXPECT_EQ(kept.opset(""), 16);
  EXPECT_EQ(k.rules.find("LayerNormalization")->applied, 0u);
  EXPECT_EQ(layer_norms_waiting(k), (std::pair<std::size_t, int64_t>{3, 17}));

  ir::Model upgraded = load_model(path);
  options.target_opset = 17;
  const optimizer::OptimizeModelReport u = optimizer::optimize_model(upgraded, options);
  EXPECT_EQ(upgraded.opset(""), 17);
  EXPECT_EQ(u.rules.find("LayerNormalization")->applied, 3u);
  EXPECT_EQ(layer_norms_waiting(u).first, 0u);
  EXPECT_EQ(u.nodes_before, k.nodes_before);
  EXPECT_LT(u.nodes_after, k.nodes_after);

  ir::Model refused = load_model(path);
  options.target_opset = 15;
  EXPECT_THROW(optimizer::optimize_model(refused, options), Error);
  EXPECT_EQ(refused.opset(""), 16);
  EXPECT_EQ(test::op_types(*refused.graph), test::op_types(*load_model(path).graph));
}

// seed_llm's second attention reads the first one's 256x256 mask table through an Identity: folding it
// stores a second copy, which the optimizer merges back into the first (its readers then merge too).
// The optimized model gives the exported one's outputs.
TEST(OptimizeExported, EqualLargeTablesAreStoredOnce) {
  const std::string path = std::string(XEXP_SHARED_DIR) + "/models/seed_llm.op14dyn.onnx";
  auto mask_tables = [](const ir::Graph& g) {
    std::vector<std::string> names;
    for (ir::ValueId id : g.initializers())
      if (g.value(id).initializer->dims() == std::vector<int64_t>{256, 256}) names.push_back(g.value(id).name);
    return names;
  };
  ir::Model model = load_model(path);
  ASSERT_EQ(mask_tables(*model.graph), (std::vector<std::string>{"decoder.attention.attention.0.mask"}));
  // The default set alone keeps the masks (the onnxruntime set's causal MultiHeadAttention drops them).
  const optimizer::OptimizeModelReport report = optimize_quietly(model, true, "default");
  EXPECT_EQ(mask_tables(*model.graph), (std::vector<std::string>{"decoder.attention.attention.0.mask"}));
  EXPECT_EQ(report.nodes_before, 114u);
  EXPECT_LE(report.nodes_after, 51u);
  const xexp::testing::NamedTensors feeds =
      xexp::testing::random_feeds(*model.graph, {.seed = 5, .default_dim = 2});
  test::expect_outputs_of_file(path, model, feeds, 1e-5);
}

// A stride-2 Conv then a stride-1 Conv on an input of symbolic height and width, the file typed by
// ONNX's inference as exporters type theirs: ONNX names the first output's sizes unk__0 and unk__1 and
// the second's unk__2 and unk__3. Our Conv rule spells the first (h-1)//2+1 and (w-1)//2+1 and finds the
// second the same. The optimized model, and the file it is saved to, name each size once, with our
// spelling.
TEST(OptimizeExported, SymbolsOnnxNamedAndOurRulesEquatedAreOne) {
  xexp::testing::TempDir dir;
  const std::string path = (dir.path() / "convs.onnx").string();
  const std::string optimized = (dir.path() / "convs.opt.onnx").string();
  auto ramp = [](int n, float step) {
    std::string out = "{";
    for (int k = 0; k < n; ++k) out += (k ? ", " : "") + std::to_string(step * static_cast<float>(k % 5 - 2));
    return out + "}";
  };
  const std::string text = "<ir_version: 8, opset_import: [\"\" : 17]>\n"
                           "convs (float[batch,3,h,w] X) => (float Y)\n"
                           "<float[4,3,3,3] W1 = " +
                           ramp(108, 0.1f) + ", float[4,4,3,3] W2 = " + ramp(144, 0.07f) +
                           ">\n"
                           "{\n"
                           "  c1 = Conv <strides = [2, 2], pads = [1, 1, 1, 1]> (X, W1)\n"
                           "  c2 = Conv <strides = [1, 1], pads = [1, 1, 1, 1]> (c1, W2)\n"
                           "  Y = Sigmoid(c2)\n"
                           "}\n";
  ::onnx::ModelProto proto;
  const auto status = ::onnx::OnnxParser::Parse(proto, text.c_str());
  ASSERT_TRUE(status.IsOK()) << status.ErrorMessage();
  proto.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();  // no shape
  ::onnx::shape_inference::InferShapes(proto);
  ASSERT_GE(proto.graph().value_info_size(), 1);  // c1, (batch, 4, unk__0, unk__1)
  std::string bytes;
  proto.SerializeToString(&bytes);
  xexp::testing::write_file(path, bytes);

  ir::Model model = load_model(path);
  optimize_quietly(model);
  save_model(model, optimized);
  const ir::Graph& g = *model.graph;
  EXPECT_EQ(test::op_types(g), (test::OpList{"Conv", "com.microsoft.FusedConv"}));
  const Shape expected{Dim::symbolic("batch"), 4, Dim::symbolic("(h-1)//2+1"), Dim::symbolic("(w-1)//2+1")};
  EXPECT_EQ(g.value(g.at("c1")).shape, expected);
  EXPECT_EQ(g.value(g.at("Y")).shape, expected);
  const ir::Model saved = load_model(optimized);
  EXPECT_EQ(saved.graph->value(saved.graph->at("Y")).shape, expected);

  const xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(
      *load_model(path).graph, {.seed = 9, .symbols = {{"batch", 2}, {"h", 9}, {"w", 6}}});
  const ir::Model original = load_model(path);
  eval::Evaluator before(original), after(saved);
  xexp::testing::expect_all_close({{"Y", after.run(feeds).at(0)}}, {{"Y", before.run(feeds).at(0)}}, 1e-5,
                                  1e-5);
  const std::vector<xexp::testing::OrtResult> ort =
      xexp::testing::run_onnxruntime_batch({{path, feeds}, {optimized, feeds}});
  ASSERT_TRUE(ort[0].ok && ort[1].ok) << ort[0].error << ort[1].error;
  xexp::testing::expect_all_close(ort[1].outputs, ort[0].outputs, 1e-5, 1e-5);
}
