// `xexp optimize` (optimizer::optimize_model, default+onnxruntime) on the shared torch models exactly as the
// exporter wrote them, with no value_info: gpt_erf_L1 (erf Gelu MLP, residual LayerNorms) and llama_L1
// (RMSNorm decomposed as Pow/ReduceMean/Add/Sqrt/Div, SiLU MLP). Each fusion fires where the model has
// its pattern, the node count reaches what the rules give, and the optimized model gives the original's
// outputs in xexp's evaluator and in ONNX Runtime, and torch's.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/onnx.hpp"
#include "xexp/optimizer/optimize_model.hpp"

namespace fs = std::filesystem;
using namespace xexp;

namespace {

const fs::path kModels = fs::path(XEXP_SHARED_DIR) / "models";

std::map<std::string, int> count_ops(const ir::Graph& g) {
  std::map<std::string, int> counts;
  for (const std::string& op : test::op_types(g)) ++counts[op];
  return counts;
}

struct Optimized {
  std::map<std::string, int> original_ops, ops;
  std::size_t nodes = 0;
  std::map<std::string, std::size_t> applied;  // rule name -> times applied
};

// Optimizes NAME.fold.onnx as `xexp optimize` does (with `patterns`); checks the outputs against the original model's
// (each runtime against itself, 1e-5: the fusions reorder float operations) and against torch's.
Optimized optimize_file(const std::string& name, const std::string& patterns = optimizer::kDefaultPatterns) {
  const std::string original = (kModels / (name + ".fold.onnx")).string();
  ir::Model model = load_model(original);
  const optimizer::OptimizeModelReport report = xexp::testing::optimize_quietly(model, true, patterns);
  std::cout << name << ": " << report.nodes_before << " nodes -> " << report.nodes_after << "\n";

  const Tensor ids = Tensor::from<int64_t>(
      {2, 16}, xexp::testing::read_file<std::vector<int64_t>>(kModels / (name + ".input_ids.bin")));
  const std::vector<float> expected =
      xexp::testing::read_file<std::vector<float>>(kModels / (name + ".expected.bin"));
  std::vector<int64_t> dims = {2, 16, static_cast<int64_t>(expected.size()) / 32};
  const xexp::testing::NamedTensors feeds = {{"input_ids", ids}};
  const xexp::testing::NamedTensors torch = {{"logits", Tensor::from<float>(dims, expected)}};
  const ir::Model loaded = load_model(original);
  const test::OutputsAfter after = test::expect_outputs_of(loaded, original, model, feeds, 1e-5);
  xexp::testing::expect_all_close(after.evaluator, torch, 1e-4, 1e-4);
  if (!after.onnxruntime.empty()) xexp::testing::expect_all_close(after.onnxruntime, torch, 1e-4, 1e-4);
  Optimized out{count_ops(*loaded.graph), count_ops(*model.graph), report.nodes_after, {}};
  for (const rewrite::RuleStats& r : report.rules.rules) out.applied[r.name] += r.applied;
  return out;
}

}  // namespace

TEST(PatternOrtModels, GptErfGetsBiasGeluAndMultiHeadAttention) {
  const Optimized m = optimize_file("gpt_erf_L1");
  EXPECT_EQ(m.applied.at("GeluErfPattern"), 1u);
  EXPECT_EQ(m.applied.at("BiasGeluPattern"), 1u);
  // c_attn's bias goes into the attention; c_proj's (attention and MLP) make Gemms before the residual
  // Adds, which stay with their LayerNormalizations: ONNX Runtime's CPU provider runs those faster than
  // SkipLayerNormalization.
  EXPECT_EQ(m.applied.at("MultiHeadAttentionBiasPattern"), 1u);
  auto ops = m.ops;
  EXPECT_EQ(ops["com.microsoft.BiasGelu"], 1);
  EXPECT_EQ(ops["com.microsoft.MultiHeadAttention"], 1);
  EXPECT_EQ(ops["com.microsoft.SkipLayerNormalization"], 0);
  EXPECT_EQ(ops["LayerNormalization"], 3);
  EXPECT_EQ(ops["Gemm"], 2);
  EXPECT_EQ(ops["Erf"], 0);
  EXPECT_EQ(m.nodes, 19u);  // 53 nodes written by the exporter
}

TEST(PatternOrtModels, GptErfGetsSkipLayerNormalizationsWithTheGpuSet) {
  const Optimized m = optimize_file("gpt_erf_L1", "default+onnxruntime+onnxruntime_gpu");
  EXPECT_EQ(m.applied.at("SkipLayerNormalizationPattern"), 2u);
  // The linear layers' biases go into the nodes after them: c_attn's into the attention, c_proj's
  // (attention and MLP) into the SkipLayerNormalizations, so no Gemm or Add is left for them.
  EXPECT_EQ(m.applied.at("MultiHeadAttentionBiasPattern"), 1u);
  EXPECT_EQ(m.applied.at("SkipLayerNormalizationBiasPattern"), 2u);
  auto ops = m.ops;
  EXPECT_EQ(ops["com.microsoft.BiasGelu"], 1);
  // The residual Adds before ln_2 and ln_f; ln_1 reads token + position embeddings of different shapes.
  EXPECT_EQ(ops["com.microsoft.SkipLayerNormalization"], 2);
  EXPECT_EQ(ops["LayerNormalization"], 1);
  EXPECT_EQ(ops["Gemm"], 0);
  EXPECT_EQ(m.nodes, 13u);  // attention is one MultiHeadAttention
}

TEST(PatternOrtModels, LlamaGetsRmsNormalizationsAndQuickGelu) {
  const Optimized m = optimize_file("llama_L1");
  auto ops = m.ops;
  // The residual sums stay Adds before their norms, which ONNX Runtime's CPU provider runs faster than
  // SkipSimplifiedLayerNormalization.
  EXPECT_EQ(ops["SimplifiedLayerNormalization"], 3);
  EXPECT_EQ(ops["com.microsoft.SkipSimplifiedLayerNormalization"], 0);
  EXPECT_EQ(ops["com.microsoft.QuickGelu"], 1);
  EXPECT_EQ(ops["Pow"], 0);
  EXPECT_EQ(ops["Sigmoid"], 0);
  // The position-ids chain (Constant -> ConstantOfShape -> Mul -> Equal -> Where -> Expand) is folded.
  for (const char* op : {"ConstantOfShape", "Equal", "Where", "Expand"}) {
    EXPECT_GT(m.original_ops.at(op), 0) << op;
    EXPECT_EQ(ops[op], 0) << op;
  }
  EXPECT_EQ(ops["com.microsoft.RotaryEmbedding"], 2);  // q and k
  EXPECT_EQ(ops["Neg"], 0);
  EXPECT_EQ(ops["com.microsoft.MultiHeadAttention"], 1);
  EXPECT_EQ(ops["Split"], 1);  // q, k and v projected by one MatMul (MatMulSharedInput)
  EXPECT_EQ(m.nodes, 18u);     // 124 written by the exporter, Constants included; attention is one node
}
