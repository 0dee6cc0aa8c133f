// `xexp run`, `xexp compare` and `--dump-intermediates`, run as a user runs them: outputs of ONNX backend
// tests saved and equal to the expected ones, random inputs, one-line errors naming the node and the
// reason, and intermediate results dumped to one ONNX file and restored by name.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli.hpp"
#include "support/compare.hpp"
#include "support/rewrite_helpers.hpp"
#include "support/temp_dir.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/dump.hpp"
#include "xexp/tools/inputs.hpp"

using namespace xexp;
using namespace xexp::testing;

namespace {

const std::string kNode = std::string(XEXP_TESTDATA_DIR) + "/node/";
const std::string kAdd = kNode + "test_add/";                                              // x + y -> sum
const std::string kBasic = std::string(XEXP_TESTDATA_DIR) + "/pytorch-operator/test_operator_basic/";  // 5 nodes

std::string q(const std::string& s) { return shell_quote(s); }
std::string data(const std::string& test, const std::string& file) { return q(test + "test_data_set_0/" + file); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Y = Relu(X) with X of shape (batch, 3), or Y = Frobnicate(X) from a domain nobody implements.
std::string symbolic_model(const std::string& op = "Relu", const std::string& domain = {}) {
  ::onnx::ModelProto p;
  p.set_ir_version(8);
  p.add_opset_import()->set_version(18);
  if (!domain.empty()) {
    auto* o = p.add_opset_import();
    o->set_domain(domain);
    o->set_version(1);
  }
  auto* g = p.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("X");
  auto* t = x->mutable_type()->mutable_tensor_type();
  t->set_elem_type(::onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param("batch");
  t->mutable_shape()->add_dim()->set_dim_value(3);
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_domain(domain);
  n->set_name("the_node");
  n->add_input("X");
  n->add_output("Y");
  g->add_output()->set_name("Y");
  return p.SerializeAsString();
}

}  // namespace

TEST(CliRun, BackendTestOutputsAreSavedAndExpected) {
  struct Case {
    std::string test, output, type_and_shape;
  };
  for (const Case& c : {Case{kAdd, "sum", "float32 3:3x4x5"}, Case{kBasic, "6", "float32 1:1"}}) {
    SCOPED_TRACE(c.test);
    TempDir dir;
    const CommandResult r = run_xexp("run " + q(c.test + "model.onnx") + " --inputs " + data(c.test, "input_0.pb") + " " +
                                     data(c.test, "input_1.pb") + " --save-outputs " + q(dir / "out"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const NamedTensor got = load_tensor(dir / ("out/" + c.output + ".pb"));
    EXPECT_EQ(got.name, c.output);
    expect_close(got.tensor, load_tensor(c.test + "test_data_set_0/output_0.pb").tensor, 1e-6, 1e-6);
    // one summary line per output: name, type, shape, statistics, first values
    EXPECT_EQ(r.out.rfind(c.output + ": " + c.type_and_shape + " min=", 0), 0u) << r.out;
    EXPECT_NE(r.out.find(" mean="), std::string::npos);
    EXPECT_NE(r.out.find(" first=["), std::string::npos);
  }
}

TEST(CliRun, RandomInputsAreDeterministicAndSizeSymbolicDims) {
  TempDir dir;
  auto run_add = [&](const std::string& seed, const std::string& out) {
    const CommandResult r = run_xexp("run " + q(kAdd + "model.onnx") + " --random --seed " + seed + " --save-outputs " + q(dir / out));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return read_file(dir / (out + "/sum.pb"));
  };
  const std::string first = run_add("3", "a");
  EXPECT_EQ(run_add("3", "b"), first);
  EXPECT_NE(run_add("4", "c"), first);

  // a file for the first input, random values for the second
  const CommandResult mixed = run_xexp("run " + q(kAdd + "model.onnx") + " --inputs " + data(kAdd, "input_0.pb") + " --random");
  EXPECT_EQ(mixed.exit_code, 0) << mixed.err;

  const std::string model = dir / "symbolic.onnx";
  write_file(model, symbolic_model());
  const CommandResult chosen = run_xexp("run " + q(model) + " --random --dim batch=4");
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_EQ(chosen.out.rfind("Y: float32 2:4x3 min=", 0), 0u) << chosen.out;
  const CommandResult by_default = run_xexp("run " + q(model) + " --random");
  ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
  EXPECT_EQ(by_default.out.rfind("Y: float32 2:2x3 min=", 0), 0u) << by_default.out;
  // Relu of values in [-1, 1)
  EXPECT_NE(by_default.out.find("min=0 "), std::string::npos) << by_default.out;
}

// Random indices stay within the axis a Gather reads with them: ids drawn in [0, 10) made these runs fail
// ("index 8 is out of range [-4, 4)") instead of testing the model.
TEST(CliRun, RandomIndicesStayWithinTheAxisTheyGather) {
  for (const std::string test : {"test_gather_0", "test_gather_1"}) {  // data (5, 4, 3, 2), axis 0 and 1
    SCOPED_TRACE(test);
    TempDir dir;
    const CommandResult r = run_xexp("run " + q(kNode + test + "/model.onnx") +
                                     " --random --seed 3 --dump-intermediates " + q(dir / "d.onnx"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::map<std::string, Tensor> dumped = tools::load_intermediates(dir / "d.onnx");
    ASSERT_EQ(dumped.count("indices"), 1u);
    const int64_t size = test == "test_gather_0" ? 5 : 4;
    const auto values = dumped.at("indices").data<int64_t>();
    EXPECT_TRUE(std::all_of(values.begin(), values.end(), [&](int64_t i) { return i >= 0 && i < size; }));
  }
}

// ALBERT's token type ids reach their table of two rows through an Expand: the bound follows them there.
TEST(CliRun, RandomIndicesStayWithinTheTableTheyReachThroughAnExpand) {
  ir::Model m = test::model_with_opset(18);
  ir::Graph& g = *m.graph;
  const ir::ValueId ids = g.add_input("ids", ElemType::Int64, Shape{1, 64});
  const ir::ValueId table = g.add_initializer("table", Tensor::from<float>({2, 3}, {0, 1, 2, 3, 4, 5}));
  const ir::ValueId shape = g.add_initializer("shape", Tensor::from<int64_t>({2}, {4, 64}));
  g.add_output(test::node(g, "Gather", {table, test::node(g, "Expand", {ids, shape})}));
  const tools::Feeds feeds = tools::random_feeds(g, {.seed = 3});
  ASSERT_EQ(feeds.size(), 1u);
  const auto values = feeds[0].second.data<int64_t>();
  EXPECT_TRUE(std::all_of(values.begin(), values.end(), [](int64_t i) { return i == 0 || i == 1; }));
  EXPECT_TRUE(std::any_of(values.begin(), values.end(), [](int64_t i) { return i == 1; }));
}

TEST(CliRun, ErrorsAreOneLineNamingNodeAndReason) {
  const std::string add = q(kAdd + "model.onnx");
  const CommandResult missing = run_xexp("run " + add + " --inputs " + data(kAdd, "input_0.pb"));
  expect_one_error_line(missing, "missing input");
  EXPECT_NE(missing.err.find("node 'Add'"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("value 'y'"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("no value"), std::string::npos) << missing.err;

  const CommandResult shape = run_xexp("run " + add + " --inputs " + data(kAdd, "input_0.pb") + " " +
                                       data(kNode + "test_add_bcast/", "input_1.pb"));
  expect_one_error_line(shape, "wrong shape");
  EXPECT_NE(shape.err.find("node 'Add': value 'y': expected shape"), std::string::npos) << shape.err;

  const CommandResult type = run_xexp("run " + add + " --inputs " + data(kAdd, "input_0.pb") + " " +
                                      data(kNode + "test_add_uint8/", "input_1.pb"));
  expect_one_error_line(type, "wrong type");
  EXPECT_NE(type.err.find("value 'y': expected FLOAT, got UINT8"), std::string::npos) << type.err;

  const CommandResult extra = run_xexp("run " + add + " --inputs " + data(kAdd, "input_0.pb") + " " + data(kAdd, "input_1.pb") +
                                       " " + data(kAdd, "input_1.pb"));
  expect_one_error_line(extra, "too many input files");
  EXPECT_NE(extra.err.find("3 input files"), std::string::npos) << extra.err;

  TempDir dir;
  const std::string unsupported = dir / "unsupported.onnx";
  write_file(unsupported, symbolic_model("Frobnicate", "my.domain"));
  const CommandResult op = run_xexp("run " + q(unsupported) + " --random");
  expect_one_error_line(op, "unsupported op");
  EXPECT_NE(op.err.find("node 'the_node'"), std::string::npos) << op.err;
  EXPECT_NE(op.err.find("unsupported op my.domain.Frobnicate"), std::string::npos) << op.err;

  expect_one_error_line(run_xexp("run " + add + " --random --dim batch"), "malformed --dim");
  const std::string one_input = dir / "one_input.onnx";
  write_file(one_input, symbolic_model());
  const CommandResult inputs = run_xexp("compare " + add + " " + q(one_input) + " --random");
  expect_one_error_line(inputs, "different inputs");
  EXPECT_NE(inputs.err.find("do not take the same inputs"), std::string::npos) << inputs.err;
}

TEST(CliRun, DumpedIntermediatesAreRestoredByName) {
  TempDir dir;
  const std::string dump = dir / "intermediates.onnx";
  const CommandResult r = run_xexp("run " + q(kBasic + "model.onnx") + " --inputs " + data(kBasic, "input_0.pb") + " " +
                                   data(kBasic, "input_1.pb") + " --save-outputs " + q(dir / "out") + " --dump-intermediates " + q(dump));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote 7 intermediate results"), std::string::npos) << r.out;

  // one Constant node per result, each a graph output: any runtime restores them
  const ir::Model file = load_model(dump);
  EXPECT_EQ(file.graph->node_count(), 7u);
  EXPECT_EQ(file.graph->outputs().size(), 7u);
  for (ir::NodeId nid : file.graph->nodes()) EXPECT_EQ(file.graph->node(nid).op_type.view(), "Constant");

  const std::map<std::string, Tensor> restored = tools::load_intermediates(dump);
  const ir::Model model = load_model(kBasic + "model.onnx");
  ASSERT_EQ(restored.size(), 7u);  // the two inputs and the output of each of the five nodes
  for (ir::NodeId nid : model.graph->nodes()) EXPECT_EQ(restored.count(model.graph->value(model.graph->node(nid).outputs[0]).name), 1u);
  for (const std::string name : {"0", "1"}) {
    ASSERT_EQ(restored.count(name), 1u) << name;
    expect_close(restored.at(name), load_tensor(kBasic + "test_data_set_0/input_" + name + ".pb").tensor, 0, 0, "input " + name);
  }
  const NamedTensor output = load_tensor(dir / "out/6.pb");
  expect_close(restored.at("6"), output.tensor, 0, 0, "output 6");

  // a model that is not a dump is refused with one error naming its first node
  EXPECT_THROW(tools::load_intermediates(kBasic + "model.onnx"), Error);
}

TEST(CliCompare, SideBySideTable) {
  const std::string model = q(kBasic + "model.onnx");
  const CommandResult same = run_xexp("compare " + model + " " + model + " --random");
  ASSERT_EQ(same.exit_code, 0) << same.err;
  const std::vector<std::string> rows = lines_of(same.out);
  ASSERT_EQ(rows.size(), 8u) << same.out;  // two inputs, five results, one output
  for (std::size_t k = 0; k < rows.size(); ++k) {
    EXPECT_EQ(rows[k].substr(0, 6), (k < 9 ? "00" : "0") + std::to_string(k + 1) + " = ") << rows[k];
  }
  EXPECT_EQ(rows[0].substr(6, 22), "| INPUT  float32  1:1 ") << rows[0];
  EXPECT_NE(rows[2].find(" Add "), std::string::npos) << rows[2];
  EXPECT_EQ(rows.back().substr(6, 9), "| OUTPUT ") << rows.back();

  const std::string dir = std::string(XEXP_SHARED_DIR) + "/models/";
  const CommandResult folded = run_xexp("compare " + q(dir + "seed_llm.onnx") + " " + q(dir + "seed_llm.fold.onnx") + " --random");
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  const std::vector<std::string> table = lines_of(folded.out);
  ASSERT_GT(table.size(), 74u);
  EXPECT_NE(folded.out.find(" - | RESULT"), std::string::npos) << folded.out;
  EXPECT_EQ(table.back().substr(3, 3), " = ") << table.back();
  EXPECT_EQ(table.back().find("OUTPUT"), 8u) << table.back();
}
