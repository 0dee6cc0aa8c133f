// The xexp command line tool, run as a user runs it: its output, its exit codes, its one-line errors,
// and that it never touches its input files.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>

#include "support/cli.hpp"
#include "support/compare.hpp"
#include "support/ort.hpp"
#include "support/random_inputs.hpp"
#include "support/temp_dir.hpp"
#include "xexp/onnx.hpp"

using namespace xexp;
using namespace xexp::testing;

namespace {

const std::string kAddModel = std::string(XEXP_TESTDATA_DIR) + "/node/test_add/model.onnx";

// A one-node-at-a-time model written with the ONNX protobuf classes directly, so that it can be
// as broken as a test needs.
struct ProtoModel {
  ::onnx::ModelProto proto;
  ProtoModel() {
    proto.set_ir_version(8);
    proto.add_opset_import()->set_version(18);
    proto.mutable_graph()->set_name("g");
    auto* x = proto.mutable_graph()->add_input();
    x->set_name("X");
    x->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
    x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  }
  ProtoModel& node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                   const std::string& domain = {}) {
    auto* n = proto.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(proto.graph().node_size()));
    if (!domain.empty()) n->set_domain(domain);
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    return *this;
  }
  ProtoModel& output(const std::string& name) {
    proto.mutable_graph()->add_output()->set_name(name);
    return *this;
  }
  std::string bytes() const { return proto.SerializeAsString(); }
};

// Runs `args` (with MODEL replaced by the fixture's path) on a file holding `bytes`: must fail with one
// error line and leave the file as it was.
void expect_rejected(const std::string& what, const std::string& bytes,
                     const std::string& command = "print") {
  TempDir dir;
  const std::string model = dir / "model.onnx";
  write_file(model, bytes);
  const CommandResult r = run_xexp(command + " " + shell_quote(model) +
                                   (command == "convert" ? " -o " + shell_quote(dir / "out.onnx") : ""));
  expect_one_error_line(r, what + " (" + command + ")");
  EXPECT_EQ(read_file(model), bytes) << what << ": the input file was modified";
}

}  // namespace

TEST(Cli, HelpAndVersion) {
  const CommandResult help = run_xexp("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("print"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("convert"), std::string::npos) << help.out;
  const CommandResult version = run_xexp("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("xexp ", 0), 0u) << version.out;
}

TEST(Cli, PrintsAModel) {
  const std::string before = read_file(kAddModel);
  const CommandResult r = run_xexp("print " + shell_quote(kAddModel));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("opset: domain='' version=14"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input: name='x' type=dtype('float32') shape=[3, 4, 5]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Add(x, y) -> sum"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_EQ(read_file(kAddModel), before);
}

TEST(Cli, ConvertKeepsWhatTheModelComputes) {
  TempDir dir;
  const std::string out = dir / "converted.onnx";
  const CommandResult r = run_xexp("convert " + shell_quote(kAddModel) + " -o " + shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ir::Model model = load_model(out);
  const NamedTensors feeds = random_feeds(*model.graph);
  expect_all_close(run_onnxruntime(out, feeds), run_onnxruntime(kAddModel, feeds), 0, 0);
}

TEST(Cli, ConvertRefusesToOverwriteItsInput) {
  TempDir dir;
  const std::string model = dir / "model.onnx";
  const std::string bytes = read_file(kAddModel);
  write_file(model, bytes);
  expect_one_error_line(run_xexp("convert " + shell_quote(model) + " -o " + shell_quote(model)), "overwrite");
  expect_one_error_line(
      run_xexp("convert " + shell_quote(model) + " -o " + shell_quote(dir.path().string() + "/./model.onnx")),
      "overwrite through another path");
  EXPECT_EQ(read_file(model), bytes);
}

TEST(Cli, BadInputGivesOneErrorLine) {
  const std::string valid = read_file(kAddModel);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated file", valid.substr(0, valid.size() / 2)},
      {"not an ONNX file", "this is plain text, not a protobuf message\n"},
      {"empty file", ""},
      {"undefined name", ProtoModel().node("Relu", {"missing"}, {"Y"}).output("Y").bytes()},
      {"cycle", ProtoModel().node("Relu", {"b"}, {"a"}).node("Relu", {"a"}, {"b"}).output("a").bytes()},
      {"two producers",
       ProtoModel().node("Relu", {"X"}, {"Y"}).node("Neg", {"X"}, {"Y"}).output("Y").bytes()},
  };
  for (const auto& [what, bytes] : cases) {
    expect_rejected(what, bytes, "print");
    expect_rejected(what, bytes, "convert");
  }
  expect_one_error_line(run_xexp("print /nonexistent/model.onnx"), "missing file");
}

TEST(Cli, BadCommandLineGivesOneErrorLine) {
  expect_one_error_line(run_xexp("frobnicate"), "unknown command");
  expect_one_error_line(run_xexp("print"), "missing model");
  expect_one_error_line(run_xexp("convert " + shell_quote(kAddModel)), "missing -o");
  expect_one_error_line(run_xexp("print --no-such-option " + shell_quote(kAddModel)), "unknown option");
}

TEST(Cli, UnknownOpInUnknownDomainPrintsFine) {
  TempDir dir;
  ProtoModel m;
  m.node("Frobnicate", {"X"}, {"Y"}, "com.example.unknown").output("Y");
  auto* opset = m.proto.add_opset_import();
  opset->set_domain("com.example.unknown");
  opset->set_version(1);
  write_file(dir / "model.onnx", m.bytes());
  const CommandResult r = run_xexp("print " + shell_quote(dir / "model.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Frobnicate[com.example.unknown](X) -> Y"), std::string::npos) << r.out;
}

TEST(Cli, MainJobWritesADemoModelThatOnnxRuntimeRuns) {
  TempDir dir;
  const CommandResult r = run_xexp("", dir.path().string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("output: name="), std::string::npos) << r.out;
  const std::string model_path = dir / "xexp_demo.onnx";
  ASSERT_TRUE(std::filesystem::exists(model_path));
  const ir::Model model = load_model(model_path);
  const NamedTensors outputs = run_onnxruntime(model_path, random_feeds(*model.graph, {.int_high = 100}));
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].second.dims(), (std::vector<int64_t>{1, 30, 16}));
}

namespace {

// Y = X + W, W 4096 floats (16 KB), saved inline.
std::string save_model_with_weight(const TempDir& dir, const std::string& name) {
  ir::Model m;
  m.opsets.push_back({"", 18, {}, 0});
  ir::Graph& g = *m.graph;
  const ir::ValueId x = g.add_input("X", ElemType::Float, make_shape({4096}));
  Tensor w(ElemType::Float, {4096});
  float k = 0;
  for (float& v : w.mutable_data<float>()) v = (k += 0.25f);
  const ir::ValueId wid = g.add_initializer("W", std::move(w));
  const ir::ValueId y = g.add_value("Y");
  g.add_node(Symbol("Add"), {x, wid}, {y}, {}, "add");
  g.value(y).elem = ElemType::Float;
  g.add_output(y);
  save_model(m, dir / name);
  return dir / name;
}

bool tensor_is_external(const std::string& model_path) {
  ::onnx::ModelProto p;
  EXPECT_TRUE(p.ParseFromString(read_file(model_path))) << model_path;
  return p.graph().initializer(0).data_location() == ::onnx::TensorProto::EXTERNAL;
}

}  // namespace

TEST(Cli, ExternalDataOptions) {
  TempDir dir;
  const std::string in = save_model_with_weight(dir, "in.onnx");
  auto convert = [&](const std::string& from, const std::string& to, const std::string& options = {}) {
    const CommandResult r = run_xexp(joined({"convert ", shell_quote(dir / from), " -o ", shell_quote(dir / to), options}));
    EXPECT_EQ(r.exit_code, 0) << to << ": " << r.err;
  };
  convert("in.onnx", "inline.onnx");  // an inline input stays inline
  EXPECT_FALSE(tensor_is_external(dir / "inline.onnx"));
  EXPECT_FALSE(std::filesystem::exists(dir / "inline.onnx.data"));
  convert("in.onnx", "ext.onnx", " --external-data");
  EXPECT_TRUE(tensor_is_external(dir / "ext.onnx"));
  const std::string weights = read_file(dir / "ext.onnx.data");
  EXPECT_EQ(weights.size(), 4096u * 4u);
  convert("ext.onnx", "follows.onnx");  // an input with external data gives external data
  EXPECT_TRUE(tensor_is_external(dir / "follows.onnx"));
  EXPECT_EQ(read_file(dir / "follows.onnx.data"), weights);
  convert("ext.onnx", "back.onnx", " --no-external-data");
  EXPECT_FALSE(tensor_is_external(dir / "back.onnx"));
  EXPECT_FALSE(std::filesystem::exists(dir / "back.onnx.data"));
  convert("ext.onnx", "above.onnx", " --external-data-threshold 1MB");  // W (16 KB) under it
  EXPECT_FALSE(tensor_is_external(dir / "above.onnx"));
  EXPECT_FALSE(std::filesystem::exists(dir / "above.onnx.data"));
  expect_error_mentioning(run_xexp(joined({"convert ", shell_quote(in), " -o ", shell_quote(dir / "x.onnx"),
                                           " --external-data --no-external-data"})),
                          "--no-external-data");
  const CommandResult optimized =
      run_xexp(joined({"optimize ", shell_quote(dir / "ext.onnx"), " -o ", shell_quote(dir / "opt.onnx")}));
  ASSERT_EQ(optimized.exit_code, 0) << optimized.err;
  EXPECT_TRUE(tensor_is_external(dir / "opt.onnx"));
  EXPECT_EQ(read_file(dir / "opt.onnx.data"), weights);

  // ONNX Runtime reads what was written: the same numbers from every file.
  const NamedTensors feeds = random_feeds(*load_model(in).graph);
  const NamedTensors expected = run_onnxruntime(in, feeds);
  for (const char* name : {"ext.onnx", "follows.onnx", "back.onnx", "opt.onnx"})
    expect_all_close(run_onnxruntime(dir / name, feeds), expected, 0, 0);
}

TEST(Cli, OutputsNeverReplaceInputs) {
  TempDir dir;
  // a.onnx keeps its weights in b.onnx.data: saving b.onnx would write b.onnx.data over them.
  ir::Model m = load_model(save_model_with_weight(dir, "in.onnx"));
  SaveOptions options;
  options.external_data = ExternalData::Always;
  options.external_data_file = "b.onnx.data";
  save_model(m, dir / "a.onnx", options);
  const std::string model_bytes = read_file(dir / "a.onnx"), data_bytes = read_file(dir / "b.onnx.data");
  for (const char* command : {"convert", "optimize", "inline"}) {
    const std::string a = shell_quote(dir / "a.onnx");
    for (const char* output : {"a.onnx", "b.onnx", "b.onnx.data"})
      expect_error_mentioning(run_xexp(joined({command, " ", a, " -o ", shell_quote(dir / output)})),
                              "is an input file");
    // Without external data, b.onnx.data is not written: b.onnx may be.
    const CommandResult r = run_xexp(joined({command, " ", a, " -o ", shell_quote(dir / "b.onnx"), " --no-external-data"}));
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_FALSE(tensor_is_external(dir / "b.onnx"));
    std::filesystem::remove(dir / "b.onnx");
  }
  EXPECT_EQ(read_file(dir / "a.onnx"), model_bytes);
  EXPECT_EQ(read_file(dir / "b.onnx.data"), data_bytes);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))  // nothing half-written left
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
}
