// The onnxruntime-set rules of this directory on the shared torch models: gpt_erf_L1 (erf Gelu MLP,
// residual LayerNorms) and llama_L1 (RMSNorm decomposed as Pow/ReduceMean/Add/Sqrt/Div, SiLU MLP). With
// these rules only, each fusion fires where the model has its pattern, and the optimized model still
// gives torch's outputs, in xexp's evaluator and in ONNX Runtime. The exporter's float-to-float Casts
// (between a residual Add and its RMSNorm) are bypassed first, which the default set's Cast rule does;
// the default set is not used here so that this test checks these rules alone.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "support/rewrite_helpers.hpp"
#include "xexp/onnx.hpp"
#include "xexp/patterns/ort/bias_gelu.hpp"
#include "xexp/patterns/ort/fast_gelu.hpp"
#include "xexp/patterns/ort/gelu_erf.hpp"
#include "xexp/patterns/ort/gelu_ort.hpp"
#include "xexp/patterns/ort/quick_gelu.hpp"
#include "xexp/patterns/ort/simplified_layer_normalization.hpp"
#include "xexp/patterns/ort/simplified_layer_normalization_mul.hpp"
#include "xexp/patterns/ort/skip_layer_normalization.hpp"
#include "xexp/patterns/ort/skip_simplified_layer_normalization.hpp"
#include "xexp/patterns/ort/skip_simplified_layer_normalization_mul.hpp"
#include "xexp/rewrite/rule_set.hpp"

namespace fs = std::filesystem;
using namespace xexp;

namespace {

const fs::path kModels = fs::path(XEXP_SHARED_DIR) / "models";

template <class T>
std::vector<T> read_raw(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

// This directory's rules in the original's onnxruntime list order.
rewrite::RuleSet rules() {
  rewrite::RuleSet set;
  for (const rewrite::RulePtr& r :
       {patterns::bias_gelu_rule(), patterns::gelu_ort_rule(), patterns::gelu_erf_rule(), patterns::fast_gelu_rule(),
        patterns::quick_gelu_rule(), patterns::simplified_layer_normalization_rule(),
        patterns::simplified_layer_normalization_mul_rule(), patterns::skip_layer_normalization_rule(),
        patterns::skip_simplified_layer_normalization_rule(), patterns::skip_simplified_layer_normalization_mul_rule()})
    set.push_back(r);
  return set;
}

void bypass_noop_casts(ir::Graph& g) {
  std::vector<ir::NodeId> casts;
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    const ir::Attribute* to = n.attribute(Symbol("to"));
    if (n.op_type == Symbol("Cast") && to && static_cast<ElemType>(to->i) == g.value(n.inputs[0]).elem &&
        !g.value(n.outputs[0]).is_graph_output())
      casts.push_back(id);
  }
  for (ir::NodeId id : casts) {
    g.replace_all_uses(g.node(id).outputs[0], g.node(id).inputs[0]);
    g.remove_node(id);
  }
}

std::map<std::string, int> count_ops(const ir::Graph& g) {
  std::map<std::string, int> counts;
  for (const std::string& op : test::op_types(g)) ++counts[op];
  return counts;
}

// Optimizes NAME.fold.onnx, prints the node counts, checks torch's output in both runtimes.
std::map<std::string, int> optimized_ops(const std::string& name) {
  ir::Model model = load_model((kModels / (name + ".fold.onnx")).string());
  const std::size_t before = model.graph->node_count();
  infer::InferState state;  // the exporter wrote no value_info: rules read types and shapes
  infer::infer_graph(*model.graph, model.opset("").value_or(17), state);
  bypass_noop_casts(*model.graph);
  rewrite::optimize(model, rules());
  std::cout << name << ": " << before << " nodes -> " << model.graph->node_count() << "\n";
  const Tensor ids = Tensor::from<int64_t>({2, 16}, read_raw<int64_t>(kModels / (name + ".input_ids.bin")));
  const std::vector<float> expected = read_raw<float>(kModels / (name + ".expected.bin"));
  std::vector<int64_t> dims = {2, 16, static_cast<int64_t>(expected.size()) / 32};
  const xexp::testing::NamedTensors feeds = {{"input_ids", ids}};
  const xexp::testing::NamedTensors want = {{"logits", Tensor::from<float>(dims, expected)}};
  eval::Evaluator evaluator(model);
  xexp::testing::expect_all_close({{"logits", evaluator.run(feeds).at(0)}}, want, 1e-4, 1e-4);
  xexp::testing::TempDir dir;
  const std::string path = (dir.path() / "optimized.onnx").string();
  save_model(model, path);
  xexp::testing::expect_all_close(xexp::testing::run_onnxruntime(path, feeds), want, 1e-4, 1e-4);
  return count_ops(*model.graph);
}

}  // namespace

TEST(PatternOrtModels, GptErfGetsBiasGeluAndSkipLayerNormalizations) {
  auto ops = optimized_ops("gpt_erf_L1");
  EXPECT_EQ(ops["com.microsoft.BiasGelu"], 1);
  // The residual Adds before ln_2 and ln_f; ln_1 reads token + position embeddings of different shapes.
  EXPECT_EQ(ops["com.microsoft.SkipLayerNormalization"], 2);
  EXPECT_EQ(ops["LayerNormalization"], 1);
  EXPECT_EQ(ops["Erf"], 0);
}

TEST(PatternOrtModels, LlamaGetsRmsNormalizationsAndQuickGelu) {
  auto ops = optimized_ops("llama_L1");
  EXPECT_EQ(ops["SimplifiedLayerNormalization"], 1);  // the input norm: no residual before it
  EXPECT_EQ(ops["com.microsoft.SkipSimplifiedLayerNormalization"], 2);
  EXPECT_EQ(ops["com.microsoft.QuickGelu"], 1);
  EXPECT_EQ(ops["Pow"], 0);
  EXPECT_EQ(ops["Sigmoid"], 0);
}
