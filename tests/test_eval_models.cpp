// The torch-exported models of XEXP_SHARED_DIR/models give torch's outputs through the evaluator, in
// each of their exported forms, and still after constant folding.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <cstring>
#include <regex>
#include <sstream>

#include "xexp/eval.hpp"
#include "xexp/onnx.hpp"

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

// The input's name and shape from NAME.json (first "name" and "shape" of the inputs list).
std::pair<std::string, std::vector<int64_t>> input_spec(const std::string& name) {
  std::ifstream in(kModels / (name + ".json"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(R"re("inputs":\s*\[\{"name":\s*"([^"]+)"[^\]]*"shape":\s*\[([0-9, ]*)\])re")))
    throw std::runtime_error("cannot read " + name + ".json");
  std::vector<int64_t> dims;
  std::stringstream ss(m[2].str());
  for (std::string item; std::getline(ss, item, ',');) dims.push_back(std::stoll(item));
  return {m[1].str(), dims};
}

void expect_torch_outputs(const std::string& name, const ir::Model& model) {
  auto [input, dims] = input_spec(name);
  Tensor ids = Tensor::from<int64_t>(dims, read_raw<int64_t>(kModels / (name + ".input_ids.bin")));
  const std::vector<float> expected = read_raw<float>(kModels / (name + ".expected.bin"));
  eval::Evaluator evaluator(model);
  std::vector<Tensor> out = evaluator.run({{input, ids}});
  ASSERT_FALSE(out.empty());
  ASSERT_EQ(out[0].type(), ElemType::Float);
  auto got = out[0].data<float>();
  ASSERT_EQ(got.size(), expected.size());
  double worst = 0;
  for (std::size_t k = 0; k < got.size(); ++k) worst = std::max(worst, static_cast<double>(std::abs(got[k] - expected[k])));
  EXPECT_LE(worst, 1e-4) << name;
}

class EvalModels : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(EvalModels, ReproduceTorchOutputs) {
  const std::string name = GetParam();
  for (const char* suffix : {".onnx", ".fold.onnx", ".op16.onnx"}) {
    const fs::path path = kModels / (name + suffix);
    if (!fs::exists(path)) continue;
    SCOPED_TRACE(path.filename().string());
    expect_torch_outputs(name, load_model(path.string()));
  }
}

TEST_P(EvalModels, FoldingKeepsOutputsAndRemovesNodes) {
  const std::string name = GetParam();
  ir::Model model = load_model((kModels / (name + ".onnx")).string());
  const std::size_t before = model.graph->node_count();
  const std::size_t folded = eval::fold_constants(model);
  EXPECT_GT(folded, 0u);
  EXPECT_LT(model.graph->node_count(), before);
  expect_torch_outputs(name, model);
}

INSTANTIATE_TEST_SUITE_P(Shared, EvalModels, ::testing::Values("seed_llm", "gpt_erf_L1", "llama_L1"));
