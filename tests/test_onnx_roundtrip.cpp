// Load -> save gives back the very same ModelProto (MessageDifferencer::Equals) for every model of the
// ONNX backend test suite, the experimental-experiment corpus and the torch-exported models; saving
// twice gives the same bytes.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"
#include "xexp/onnx.hpp"

namespace fs = std::filesystem;

namespace {

// Returns an empty string when the round trip is exact, else what differs.
std::string round_trip_difference(const fs::path& path) {
  ::onnx::ModelProto p0;
  if (!p0.ParseFromString(xexp::testing::read_file(path))) return "protobuf cannot parse the file";
  ::onnx::ModelProto p1;
  if (!p1.ParseFromString(xexp::model_to_proto(xexp::load_model(path.string())).SerializeAsString()))
    return "cannot parse what xexp wrote";
  google::protobuf::util::MessageDifferencer differencer;
  std::string report;
  differencer.ReportDifferencesToString(&report);
  if (!differencer.Compare(p0, p1)) return report.substr(0, 2000);
  // Determinism: the saved model loads and saves to the same bytes.
  ::onnx::ModelProto copy = p1;
  std::string first = p1.SerializeAsString();
  std::string second = xexp::model_to_proto(xexp::model_from_proto(std::move(copy))).SerializeAsString();
  if (first != second) return "saving twice gives different bytes";
  return {};
}

std::vector<fs::path> models_in(const fs::path& dir, bool backend_suite_layout) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    fs::path candidate = backend_suite_layout ? entry.path() / "model.onnx" : entry.path();
    if (fs::is_regular_file(candidate) && candidate.extension() == ".onnx") out.push_back(candidate);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t check_all(const std::vector<fs::path>& models) {
  std::size_t checked = 0;
  for (const fs::path& model : models) {
    std::string difference;
    try {
      difference = round_trip_difference(model);
    } catch (const xexp::Error& e) {
      difference = std::string("xexp::Error: ") + e.what();
    }
    EXPECT_EQ(difference, "") << model;
    ++checked;
  }
  return checked;
}

}  // namespace

TEST(OnnxRoundTrip, BackendTestSuite) {
  std::vector<fs::path> models;
  for (const char* suite : {"node", "simple", "pytorch-converted", "pytorch-operator"}) {
    auto found = models_in(fs::path(XEXP_TESTDATA_DIR) / suite, true);
    models.insert(models.end(), found.begin(), found.end());
  }
  const std::size_t checked = check_all(models);
  std::cout << "round trip checked on " << checked << " backend test models\n";
  EXPECT_EQ(checked, 1072u);
}

TEST(OnnxRoundTrip, ExperimentalExperimentCorpus) {
  const std::size_t checked = check_all(models_in(fs::path(XEXP_SHARED_DIR) / "corpus/experimental-experiment", false));
  std::cout << "round trip checked on " << checked << " corpus models\n";
  EXPECT_EQ(checked, 41u);  // the corpus directory holds 41 models and a README
}

TEST(OnnxRoundTrip, TorchExportedModels) {
  const std::size_t checked = check_all(models_in(fs::path(XEXP_SHARED_DIR) / "models", false));
  std::cout << "round trip checked on " << checked << " torch-exported models\n";
  EXPECT_EQ(checked, 14u);  // 3 models: .onnx, .fold, .op14dyn(.fold); seed_llm and gpt_erf_L1 also .op16
}

// Loop and If bodies read outer names: they become captured values, linked to the owning node.
TEST(OnnxRoundTrip, SubgraphsCaptureOuterValues) {
  const fs::path path = fs::path(XEXP_TESTDATA_DIR) / "node/test_range_float_type_positive_delta_expanded/model.onnx";
  ASSERT_TRUE(fs::exists(path));
  xexp::ir::Model m = xexp::load_model(path.string());
  const xexp::ir::Graph& g = *m.graph;
  bool found_loop = false;
  for (xexp::ir::NodeId id : g.nodes()) {
    const auto& node = g.node(id);
    if (node.op_type.view() != "Loop") continue;
    found_loop = true;
    const auto& body = *node.attribute("body")->graph();
    EXPECT_EQ(body.parent, &g);
    ASSERT_FALSE(body.captured().empty());
    ASSERT_EQ(node.captured.size(), body.captured().size());
    for (std::size_t k = 0; k < body.captured().size(); ++k) {
      EXPECT_EQ(g.value(node.captured[k]).name, body.value(body.captured()[k]).name);
      const auto& uses = g.value(node.captured[k]).uses;
      EXPECT_NE(std::find(uses.begin(), uses.end(), xexp::ir::Use{id, xexp::ir::kCapturedSlot}), uses.end());
    }
  }
  EXPECT_TRUE(found_loop);
  EXPECT_EQ(round_trip_difference(path), "");
}
