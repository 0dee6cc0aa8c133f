// The optimizer's numbers through a real runtime: models optimized with default+onnxruntime and
// constant folding (tools::optimize_model, what `xexp optimize` runs) give the same outputs as the
// originals in ONNX Runtime (graph optimizations disabled, so that ORT checks xexp's rewrites instead
// of doing its own). Corpora: the torch-exported shared models (their own input_ids), every case of the
// ONNX backend node suite (its test_data_set_0 inputs) and the original project's test models (random
// inputs, where ORT can run them). These sweeps are slow: their names hold "Corpus", which the
// sanitizer pass of scripts/run_tests.sh leaves out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/compare.hpp"
#include "support/json.hpp"
#include "support/ort.hpp"
#include "support/random_inputs.hpp"
#include "support/temp_dir.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/optimize.hpp"

using namespace xexp;
using namespace xexp::testing;
namespace fs = std::filesystem;

namespace {

// float32 results: the rewrites reorder a few float operations (Gemm for MatMul+Add, folded
// constants computed by xexp's evaluator instead of ORT's kernels), nothing more.
constexpr double kAtol = 1e-5, kRtol = 1e-5;
// Graphs computing in float16 or bfloat16: an intermediate holds 3 significant digits, and ORT picks
// its half kernels by shape (blocking, accumulation order), so even a rewrite that only merges
// Reshapes moves results by a few float16 ulps, and by more where the graph cancels (softmax,
// variance). Such outputs must be within kHalfTolerance for all but kHalfOutliers of their elements.
constexpr double kHalfTolerance = 1e-2, kHalfOutliers = 0.01;
// Random inputs of the original project's models: at most this many elements per model (64 MB).
constexpr int64_t kMaxRandomElements = int64_t{16} << 20;

struct Case {
  std::string name, original, optimized;
  NamedTensors feeds;
  std::size_t nodes_before = 0, nodes_after = 0;
  bool shapes_only = false;  // random ops: two runs give different values, only types and shapes compare
  bool half = false;         // computes in float16 or bfloat16 (kHalfTolerance)
};

std::vector<fs::path> sorted_files(const fs::path& dir, const std::string& extension) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == extension) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Random ops, and Dropout in training mode (given a training_mode input): two runs differ.
bool has_random_op(const ir::Graph& g) {
  static const std::set<std::string> random_ops{"Bernoulli",   "Multinomial",   "RandomNormal",
                                                "RandomNormalLike", "RandomUniform", "RandomUniformLike"};
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    if (random_ops.count(n.op_type.str()) || (n.op_type.view() == "Dropout" && n.inputs.size() == 3)) return true;
  }
  return false;
}

bool computes_in_half(const ir::Graph& g) {
  for (ir::ValueId id = 0; id < g.value_capacity(); ++id)
    if (g.value(id).elem == ElemType::Float16 || g.value(id).elem == ElemType::BFloat16) return true;
  return false;
}

// Loads `c.original`, optimizes it as `xexp optimize` does and saves it to `c.optimized`.
void optimize_file(Case& c) {
  ir::Model model = load_model(c.original);
  c.shapes_only = has_random_op(*model.graph);
  c.half = computes_in_half(*model.graph);
  const tools::OptimizeModelReport report = tools::optimize_model(model);
  c.nodes_before = report.nodes_before;
  c.nodes_after = report.nodes_after;
  save_model(std::move(model), c.optimized);
}

std::size_t node_count(const ir::Model& model) {
  std::size_t n = model.graph->node_count();
  for (const ir::Function& f : model.functions) n += f.body->node_count();
  return n;
}

void expect_same_types_and_shapes(const NamedTensors& actual, const NamedTensors& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t k = 0; k < actual.size(); ++k) {
    EXPECT_EQ(actual[k].first, expected[k].first);
    EXPECT_EQ(actual[k].second.type(), expected[k].second.type()) << expected[k].first;
    EXPECT_EQ(actual[k].second.dims(), expected[k].second.dims()) << expected[k].first;
  }
}

void expect_mostly_close(const NamedTensors& actual, const NamedTensors& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t k = 0; k < actual.size(); ++k) {
    const Tensor &a = actual[k].second, &e = expected[k].second;
    ASSERT_EQ(a.type(), e.type()) << expected[k].first;
    ASSERT_EQ(a.dims(), e.dims()) << expected[k].first;
    if (a.type() == ElemType::String) continue;
    int64_t outliers = 0;
    for (int64_t i = 0; i < a.size(); ++i) {
      const double x = element_as_double(a, i), y = element_as_double(e, i);
      outliers += !(x == y || (std::isnan(x) && std::isnan(y)) ||
                    std::abs(x - y) <= kHalfTolerance * (1 + std::abs(y)));
    }
    EXPECT_LE(static_cast<double>(outliers), kHalfOutliers * static_cast<double>(a.size()))
        << expected[k].first << ": " << outliers << " of " << a.size() << " elements beyond " << kHalfTolerance;
  }
}

struct Sweep {
  std::size_t compared = 0;
  std::vector<std::string> not_run;  // "case: why" for the cases ORT cannot run as they are
};

// Runs every original and optimized model in one ONNX Runtime process; a case whose original does
// not run is listed, a case whose original runs must run optimized with the same outputs.
Sweep run_and_compare(const std::vector<Case>& cases) {
  std::vector<OrtJob> jobs;
  for (const Case& c : cases) {
    jobs.push_back({c.original, c.feeds});
    jobs.push_back({c.optimized, c.feeds});
  }
  const std::vector<OrtResult> results = run_onnxruntime_batch(jobs);
  Sweep sweep;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const OrtResult &original = results[2 * k], &optimized = results[2 * k + 1];
    if (!original.ok) {
      std::string why = original.error;
      for (std::size_t at; (at = why.find(c.original)) != std::string::npos;) why.replace(at, c.original.size(), "model");
      sweep.not_run.push_back(c.name + ": " + why.substr(0, 160));
      continue;
    }
    SCOPED_TRACE(c.name + " (" + std::to_string(c.nodes_before) + " -> " + std::to_string(c.nodes_after) + " nodes)");
    ++sweep.compared;
    if (!optimized.ok) {
      ADD_FAILURE() << "the original runs in ONNX Runtime, the optimized model does not: " << optimized.error;
      continue;
    }
    if (c.shapes_only) expect_same_types_and_shapes(optimized.outputs, original.outputs);
    else if (c.half) expect_mostly_close(optimized.outputs, original.outputs);
    else expect_all_close(optimized.outputs, original.outputs, kAtol, kRtol);
  }
  return sweep;
}

void print_not_run(const std::string& corpus, const Sweep& sweep, std::size_t total) {
  std::cout << corpus << ": " << sweep.compared << " of " << total << " cases compared, " << sweep.not_run.size()
            << " that ONNX Runtime cannot run as they are:\n";
  for (const std::string& line : sweep.not_run) std::cout << "  " << line << "\n";
}

Tensor raw_tensor(const std::string& dtype, std::vector<int64_t> dims, const std::string& bytes) {
  if (dtype != "int64") throw Error("the shared models' inputs are int64, not " + dtype);
  Tensor t(ElemType::Int64, std::move(dims));
  if (static_cast<std::size_t>(t.size()) * 8 != bytes.size()) throw Error("input file size does not match its shape");
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(t.mutable_data<int64_t>().data()));
  return t;
}

}  // namespace

TEST(OptimizeCorpus, SharedTorchModelsGiveTheSameOutputsInOnnxRuntime) {
  ASSERT_TRUE(ort_available()) << "ONNX Runtime is missing: run scripts/install_deps.sh";
  const fs::path dir = fs::path(XEXP_SHARED_DIR) / "models";
  TempDir out;
  std::vector<Case> cases;
  for (const fs::path& model : sorted_files(dir, ".onnx")) {
    Case c;
    c.name = model.filename().string();
    c.original = model.string();
    c.optimized = out / ("optimized." + c.name);
    const std::string base = c.name.substr(0, c.name.find('.'));  // NAME of NAME.fold.onnx, NAME.op16.onnx
    const Json spec = parse_json(read_file(dir / (base + ".json")));
    for (const Json& input : spec["inputs"].array()) {
      std::vector<int64_t> dims;
      for (const Json& d : input["shape"].array()) dims.push_back(static_cast<int64_t>(d.number()));
      c.feeds.emplace_back(input["name"].str(), raw_tensor(input["dtype"].str(), dims, read_file(dir / input["file"].str())));
    }
    ASSERT_NO_THROW(optimize_file(c)) << c.name;
    std::cout << c.name << ": " << c.nodes_before << " -> " << c.nodes_after << " nodes\n";
    EXPECT_LE(c.nodes_after, c.nodes_before) << c.name;
    // The raw exports (no .fold.) hold Constant nodes and shape chains that at least folding removes.
    if (c.name.find(".fold.") == std::string::npos) {
      EXPECT_LT(c.nodes_after, c.nodes_before) << c.name;
    }
    cases.push_back(std::move(c));
  }
  ASSERT_GE(cases.size(), 8u);
  const Sweep sweep = run_and_compare(cases);
  print_not_run("shared models", sweep, cases.size());
  EXPECT_TRUE(sweep.not_run.empty());  // ONNX Runtime runs all of them (models/README.md)
}

TEST(OptimizeCorpus, BackendNodeTestsGiveTheSameOutputsInOnnxRuntime) {
  ASSERT_TRUE(ort_available()) << "ONNX Runtime is missing: run scripts/install_deps.sh";
  const fs::path suite = fs::path(XEXP_TESTDATA_DIR) / "node";
  TempDir out;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(suite))
    if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  ASSERT_GE(dirs.size(), 900u);

  std::vector<Case> cases;
  std::vector<std::string> not_fed;
  std::size_t changed = 0;
  for (const fs::path& d : dirs) {
    Case c;
    c.name = d.filename().string();
    c.original = (d / "model.onnx").string();
    c.optimized = out / (c.name + ".onnx");
    ir::Model model = load_model(c.original);
    const ir::Graph& g = *model.graph;
    std::vector<ir::ValueId> fed;
    for (ir::ValueId id : g.inputs())
      if (!g.value(id).is_initializer()) fed.push_back(id);
    bool tensors_only = true;
    for (std::size_t k = 0; fs::exists(d / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")); ++k) {
      if (k >= fed.size() || !g.value(fed[k]).raw_type.empty()) {
        tensors_only = false;  // sequences and optionals: the runner feeds tensors only
        break;
      }
      NamedTensor t = load_tensor((d / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")).string());
      c.feeds.emplace_back(t.name.empty() ? g.value(fed[k]).name : t.name, std::move(t.tensor));
    }
    try {
      optimize_file(c);
    } catch (const Error& e) {
      ADD_FAILURE() << c.name << ": xexp cannot optimize and save it: " << e.what();
      continue;
    }
    changed += c.nodes_after != c.nodes_before;
    if (!tensors_only) not_fed.push_back(c.name);
    else cases.push_back(std::move(c));
  }
  const Sweep sweep = run_and_compare(cases);
  std::cout << "backend node suite: " << changed << " of " << dirs.size() << " models changed by the optimizer, "
            << not_fed.size() << " not run (inputs are sequences or optionals):";
  for (const std::string& name : not_fed) std::cout << " " << name;
  std::cout << "\n";
  print_not_run("backend node suite", sweep, dirs.size());
  // Most of the suite runs: a broken runner would show here, not as a silent pass.
  EXPECT_GE(sweep.compared, 800u);
}

TEST(OptimizeCorpus, OriginalProjectModelsOptimizeSaveAndKeepTheirNumbers) {
  ASSERT_TRUE(ort_available()) << "ONNX Runtime is missing: run scripts/install_deps.sh";
  const fs::path dir = fs::path(XEXP_SHARED_DIR) / "corpus" / "experimental-experiment";
  TempDir out;
  std::vector<Case> cases;
  std::vector<std::string> no_feeds;
  const std::vector<fs::path> models = sorted_files(dir, ".onnx");
  ASSERT_GE(models.size(), 40u);
  for (const fs::path& model : models) {
    Case c;
    c.name = model.filename().string();
    c.original = model.string();
    c.optimized = out / c.name;
    ir::Model saved;
    try {
      optimize_file(c);
      saved = load_model(c.optimized);  // what it wrote loads again
    } catch (const Error& e) {
      ADD_FAILURE() << c.name << ": " << e.what();
      continue;
    }
    std::cout << c.name << ": " << c.nodes_before << " -> " << c.nodes_after << " nodes\n";
    EXPECT_EQ(node_count(saved), c.nodes_after) << c.name;
    // Random feeds: every dynamic dimension (batch, sequence, cache, ...) gets 2.
    const RandomFeedOptions options{.seed = 1, .default_dim = 2};
    try {
      int64_t elements = 0;  // some graphs take all the weights of a full-size llama as inputs
      for (ir::ValueId id : tools::fed_inputs(*saved.graph))
        elements += dims_element_count(tools::random_input_dims(saved.graph->value(id), options));
      if (elements > kMaxRandomElements)
        throw Error("its inputs hold " + std::to_string(elements) + " elements, too many for a quick sweep");
      c.feeds = random_feeds(*saved.graph, options);
    } catch (const Error& e) {
      no_feeds.push_back(c.name + ": " + e.what());
      continue;
    }
    cases.push_back(std::move(c));
  }
  const Sweep sweep = run_and_compare(cases);
  std::cout << "experimental-experiment corpus: " << no_feeds.size() << " without random inputs:\n";
  for (const std::string& line : no_feeds) std::cout << "  " << line << "\n";
  print_not_run("experimental-experiment corpus", sweep, models.size());
  EXPECT_GE(sweep.compared, 10u);
}
