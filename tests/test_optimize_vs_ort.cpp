// The yardstick of the optimizer: on every model of ../shared/models and ../shared/corpus/real, read as
// the exporter wrote it, `xexp optimize` (default+onnxruntime) leaves no more nodes than ONNX Runtime's
// 'extended' level, whose optimized model the runtime writes itself (optimizedModelFilePath). Nodes of
// subgraphs count, Constant nodes do not (ONNX Runtime turns them into initializers). The optimized file
// gives the original's outputs in ONNX Runtime (its own optimizations disabled). The name holds
// "Corpus": the sanitizer pass of scripts/run_tests.sh leaves this sweep out.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/compare.hpp"
#include "support/ort.hpp"
#include "support/random_inputs.hpp"
#include "support/temp_dir.hpp"
#include "xexp/ir/constant_node.hpp"
#include "xexp/onnx.hpp"
#include "xexp/optimizer/optimize_model.hpp"

using namespace xexp;
using namespace xexp::testing;
namespace fs = std::filesystem;

namespace {

// Nodes of the graph and its subgraphs, Constant nodes left out.
std::size_t nodes_without_constants(const ir::Graph& g) {
  std::size_t n = 0;
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& node = g.node(id);
    n += !ir::is_constant_node(node);
    for (const ir::Attribute& a : node.attributes)
      for (const auto& body : a.graphs) n += nodes_without_constants(*body);
  }
  return n;
}

// Inputs of a size the models accept: paddle's OCR models want image sides that survive their
// downsampling, silero's VAD a 16 kHz chunk of 512 samples (its other rate takes the other branch).
NamedTensors feeds_for(const fs::path& model_path, const ir::Graph& g) {
  tools::RandomInputOptions options{.seed = 5, .default_dim = 2};
  const std::string name = model_path.filename().string();
  if (name.starts_with("ch_")) {
    options.symbols = {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 64}, {"p2o.DynamicDimension.2", 64}};
    if (name.starts_with("ch_ppocr_mobile")) options.symbols["p2o.DynamicDimension.2"] = 192;
    if (name.starts_with("ch_PP-OCRv4_rec")) options.symbols["p2o.DynamicDimension.1"] = 320;
    if (name.starts_with("ch_ppocr_mobile")) options.symbols["p2o.DynamicDimension.1"] = 48;
  }
  if (name.starts_with("silero")) options.symbols = {{"batch", 1}, {"sequence", 512}};
  NamedTensors feeds = random_feeds(g, options);
  for (auto& [input, tensor] : feeds)
    if (name.starts_with("silero") && input == "sr") tensor = Tensor::scalar<int64_t>(16000);
  return feeds;
}

}  // namespace

TEST(CorpusVsOnnxRuntime, NoMoreNodesThanItsExtendedLevelAndTheSameOutputs) {
  std::vector<fs::path> models;
  for (const char* dir : {"models", "corpus/real"})
    for (const auto& entry : fs::directory_iterator(fs::path(XEXP_SHARED_DIR) / dir))
      if (entry.path().extension() == ".onnx") models.push_back(entry.path());
  std::sort(models.begin(), models.end());
  ASSERT_EQ(models.size(), 19u);

  TempDir dir;
  std::vector<OrtJob> by_ort, original, optimized;
  std::vector<std::size_t> xexp_nodes, every_fusion_nodes;
  for (std::size_t k = 0; k < models.size(); ++k) {
    ir::Model model = load_model(models[k].string());
    const NamedTensors feeds = feeds_for(models[k], *model.graph);
    std::ostringstream log;
    ir::Model with_gpu_set = load_model(models[k].string());
    optimizer::optimize_model(with_gpu_set, {.patterns = "default+onnxruntime+onnxruntime_gpu", .log = &log});
    every_fusion_nodes.push_back(nodes_without_constants(*with_gpu_set.graph));
    optimizer::optimize_model(model, {.log = &log});
    xexp_nodes.push_back(nodes_without_constants(*model.graph));
    const std::string out = (dir.path() / (std::to_string(k) + ".xexp.onnx")).string();
    save_model(model, out);
    // One run reaches the fixed point: optimizing what it wrote removes nothing more (types the first
    // run learned, an If it decided, are what a second run would start from).
    ir::Model again = load_model(out);
    optimizer::optimize_model(again, {.log = &log});
    EXPECT_EQ(nodes_without_constants(*again.graph), xexp_nodes.back()) << models[k].filename().string();
    by_ort.push_back({models[k].string(), feeds, (dir.path() / (std::to_string(k) + ".ort.onnx")).string()});
    original.push_back({models[k].string(), feeds});
    optimized.push_back({out, feeds});
  }
  const std::vector<OrtResult> extended = run_onnxruntime_batch(by_ort, {.optimization_level = "extended"});
  std::vector<OrtJob> both = original;
  both.insert(both.end(), optimized.begin(), optimized.end());
  const std::vector<OrtResult> outputs = run_onnxruntime_batch(both);

  // The dynamic-axis exports, pinned: their attention (causal mask cut at run time), rotary position ids
  // (a Range from 0) and split/merged heads (Reshapes copying dims with 0) fold as in the static exports.
  const std::map<std::string, std::size_t> pinned = {
      {"gpt_erf_L1.op14dyn.onnx", 23},
      {"gpt_erf_L1.op14dyn.fold.onnx", 23},
      {"llama_L1.op14dyn.onnx", 18},
      {"llama_L1.op14dyn.fold.onnx", 18},
      {"seed_llm.op14dyn.onnx", 25},
      {"seed_llm.op14dyn.fold.onnx", 25},
      // Its two rank tests (of the input, then of the spectrogram) decided by the rules: the Ifs go
      // and what was behind them is typed and optimized in the same run; its eight residual blocks,
      // Relu(Conv + x), are each one FusedConv (FusedConvAdd), the six after a strided Conv too (the
      // inference gives both sides of their Add one symbolic length).
      {"silero_vad_legacy.onnx", 110}};
  std::size_t total_xexp = 0, total_ort = 0, transformers_xexp = 0, transformers_ort = 0;
  std::cout << "model  xexp  ORT-extended\n";
  for (std::size_t k = 0; k < models.size(); ++k) {
    SCOPED_TRACE(models[k].filename().string());
    ASSERT_TRUE(extended[k].ok) << extended[k].error;
    const std::size_t ort_nodes = nodes_without_constants(*load_model(by_ort[k].save_optimized).graph);
    std::cout << models[k].filename().string() << "  " << xexp_nodes[k] << "  " << ort_nodes << "\n";
    EXPECT_LE(xexp_nodes[k], ort_nodes);
    if (const auto it = pinned.find(models[k].filename().string()); it != pinned.end()) {
      EXPECT_EQ(xexp_nodes[k], it->second);
    }
    total_xexp += xexp_nodes[k];
    total_ort += ort_nodes;
    if (models[k].parent_path().filename() == "models") {  // the torch transformers
      // Issue 9's goal, for what the rules can fuse: with the onnxruntime_gpu set too, at most 0.6 times
      // ONNX Runtime's nodes. The default leaves the residual norms and single heads ONNX Runtime's CPU
      // provider runs faster unfused (seed_llm's dynamic exports: 25 nodes against 40).
      EXPECT_LE(every_fusion_nodes[k] * 10, ort_nodes * 6) << "above 0.6 times ONNX Runtime's nodes";
      transformers_xexp += xexp_nodes[k];
      transformers_ort += ort_nodes;
    }
    const OrtResult& before = outputs[k];
    const OrtResult& after = outputs[models.size() + k];
    ASSERT_TRUE(before.ok && after.ok) << before.error << after.error;
    expect_all_close(after.outputs, before.outputs, 1e-4, 1e-4);
  }
  std::cout << "total  " << total_xexp << "  " << total_ort << "\n";
  // Issue 9's goal, all together and with the default: the fused attention, rotary and normalization ops
  // leave at most 0.6 times the nodes ONNX Runtime's own optimizer leaves on the transformers.
  std::cout << "transformers  " << transformers_xexp << "  " << transformers_ort << "\n";
  EXPECT_LE(transformers_xexp * 10, transformers_ort * 6);
}
