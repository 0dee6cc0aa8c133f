// Hostile and malformed models (issue 11): each case is a crash or a hang that structure-aware mutants of
// real models found (scripts/hostile_mutants.py), rebuilt here as a small model written to disk. Each must
// give an xexp::Error naming its cause, and on the command line one "error:" line and exit code 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/cli.hpp"
#include "support/onnx_protos.hpp"
#include "support/temp_dir.hpp"
#include "xexp/eval/evaluator.hpp"
#include "xexp/functions/inliner.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/optimize.hpp"
#include "xexp/tools/printer.hpp"
#include "xexp/tools/run.hpp"

using xexp::testing::make_node;
using xexp::testing::tensor_info;
using xexp::testing::TempDir;
using xexp::testing::write_file;

namespace {

void set_ints(::onnx::NodeProto& n, const std::string& name, std::vector<int64_t> values) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}
void set_int(::onnx::NodeProto& n, const std::string& name, int64_t value) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(value);
}

// X: float[2, 3] -> Relu -> Y, opset 18, plus whatever the case adds.
::onnx::ModelProto base_model() {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(18);
  auto* g = m.mutable_graph();
  g->set_name("g");
  *g->add_input() = tensor_info("X", 1, {2, 3});
  *g->add_node() = make_node("Relu", {"X"}, {"Y"}, "Relu_Y");
  *g->add_output() = tensor_info("Y", 1, {2, 3});
  return m;
}

// Adds local function `name` (domain "local") whose body calls `callee`, and a call of it from the graph.
void add_function_calling(::onnx::ModelProto& m, const std::string& name, const std::string& callee, bool call_it) {
  auto* f = m.add_functions();
  f->set_name(name);
  f->set_domain("local");
  f->add_input("x");
  f->add_output("y");
  *f->add_node() = make_node(callee, {"x"}, {"y"}, callee + "_y", "local");
  auto* o = f->add_opset_import();
  o->set_domain("local");
  o->set_version(1);
  if (!call_it) return;
  auto* mo = m.add_opset_import();
  mo->set_domain("local");
  mo->set_version(1);
  *m.mutable_graph()->add_node() = make_node(name, {"X"}, {"R"}, name + "_R", "local");
  *m.mutable_graph()->add_output() = tensor_info("R", 1, {2, 3});
}

::onnx::TensorProto float_tensor(const std::string& name, std::vector<int64_t> dims, std::size_t bytes) {
  ::onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(1);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(bytes, '\0'));
  return t;
}

std::string saved(const TempDir& dir, const ::onnx::ModelProto& m, const std::string& name = "model.onnx") {
  write_file(dir / name, m.SerializeAsString());
  return dir / name;
}

std::string load_error(const std::string& path, const xexp::LoadOptions& options = {}) {
  try {
    xexp::load_model(path, options);
  } catch (const xexp::Error& e) {
    return e.what();
  }
  return "(loaded)";
}

std::string run_error(const std::string& path, const std::vector<std::pair<std::string, xexp::Tensor>>& feeds) {
  const xexp::ir::Model model = xexp::load_model(path);
  try {
    xexp::tools::run_model(model, feeds);
  } catch (const xexp::Error& e) {
    return e.what();
  }
  return "(ran)";
}

bool cli_built() { return std::string(XEXP_CLI).size() > 0; }

// Every command that reads `path` fails with one error line containing `cause`.
void expect_cli_errors(const std::string& path, const std::string& cause, const TempDir& dir) {
  if (!cli_built()) GTEST_SKIP() << "xexp CLI not built";
  const std::string out = xexp::testing::shell_quote(dir / "out.onnx");
  const std::string in = xexp::testing::shell_quote(path);
  for (const std::string& args : {"print " + in, "run --random " + in, "optimize " + in + " -o " + out,
                                  "inline " + in + " -o " + out, "convert " + in + " -o " + out}) {
    const auto r = xexp::testing::run_xexp(args);
    xexp::testing::expect_one_error_line(r, args);
    EXPECT_NE(r.err.find(cause), std::string::npos) << args << ": " << r.err;
  }
}

xexp::Tensor zeros(std::vector<int64_t> dims) { return xexp::Tensor(xexp::ElemType::Float, std::move(dims)); }

}  // namespace

// ---- local functions: calls that never end ------------------------------------------------------

TEST(HostileFunctions, FunctionCallingItselfIsRefusedOnLoad) {
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  add_function_calling(m, "f", "f", true);
  const std::string path = saved(dir, m);
  const std::string error = load_error(path);
  EXPECT_NE(error.find("node 'local.f': the local function calls itself"), std::string::npos) << error;
  expect_cli_errors(path, "calls itself", dir);
}

TEST(HostileFunctions, TwoFunctionsCallingEachOtherAreRefused) {
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  add_function_calling(m, "f", "g", true);
  add_function_calling(m, "g", "f", false);
  const std::string error = load_error(saved(dir, m));
  EXPECT_NE(error.find("calls itself through"), std::string::npos) << error;
}

TEST(HostileFunctions, RecursionNotCalledFromTheGraphIsRefusedToo) {
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  add_function_calling(m, "f", "f", false);
  EXPECT_NE(load_error(saved(dir, m)).find("calls itself"), std::string::npos);
}

TEST(HostileFunctions, LongChainOfCallsIsCheckedWithoutRecursion) {
  // f0 -> f1 -> ... -> f99999: a recursive walk of the call graph would exhaust the stack.
  xexp::ir::Model model;
  constexpr int kChain = 100000;
  for (int k = 0; k < kChain; ++k) {
    xexp::ir::Function& f = model.functions.emplace_back();
    f.name = "f" + std::to_string(k);
    f.domain = "local";
    auto x = f.body->add_input("x");
    auto y = f.body->add_value("y");
    const std::string callee = k + 1 < kChain ? "f" + std::to_string(k + 1) : "Relu";
    f.body->add_node(xexp::Symbol(callee), {x}, {y}, {}, "", xexp::Symbol(k + 1 < kChain ? "local" : ""));
    f.body->add_output(y);
  }
  EXPECT_NO_THROW(xexp::detail::validate_function_calls(model));
  model.functions.back().body->node(model.functions.back().body->first_node()).op_type = xexp::Symbol("f0");
  model.functions.back().body->node(model.functions.back().body->first_node()).domain = xexp::Symbol("local");
  EXPECT_THROW(xexp::detail::validate_function_calls(model), xexp::Error);
}

TEST(HostileFunctions, EvaluatorRefusesARecursiveModelBuiltInMemory) {
  xexp::ir::Model model;
  xexp::ir::Function& f = model.functions.emplace_back();
  f.name = "f";
  f.domain = "local";
  auto x = f.body->add_input("x");
  auto y = f.body->add_value("y");
  f.body->add_node(xexp::Symbol("f"), {x}, {y}, {}, "", xexp::Symbol("local"));
  f.body->add_output(y);
  EXPECT_THROW(xexp::eval::Evaluator{model}, xexp::Error);
  EXPECT_THROW(xexp::functions::inline_functions(model), xexp::Error);
}

// ---- external data --------------------------------------------------------------------------------

::onnx::ModelProto with_external_weight(const std::string& location) {
  ::onnx::ModelProto m = base_model();
  auto* w = m.mutable_graph()->add_initializer();
  *w = float_tensor("W", {4}, 0);
  w->clear_raw_data();
  w->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* entry = w->add_external_data();
  entry->set_key("location");
  entry->set_value(location);
  return m;
}

TEST(HostileExternalData, LocationsOutsideTheFolderAreRefusedUnlessAllowed) {
  TempDir dir;
  for (const std::string location : {"../../etc/passwd", "/etc/passwd", "/dev/zero", "a/../../b"}) {
    const std::string path = saved(dir, with_external_weight(location));
    const std::string error = load_error(path);
    EXPECT_NE(error.find("leaves the model's directory"), std::string::npos) << location << ": " << error;
  }
  const std::string path = saved(dir, with_external_weight("/etc/passwd"));
  expect_cli_errors(path, "leaves the model's directory", dir);
  // Allowed: /etc/passwd is read, and its size does not match float[4].
  xexp::LoadOptions allow;
  allow.allow_external_outside = true;
  EXPECT_NE(load_error(path, allow).find("needs 16 bytes"), std::string::npos) << load_error(path, allow);
  EXPECT_NE(load_error(saved(dir, with_external_weight("/dev/zero")), allow).find("not a regular file"),
            std::string::npos);
}

TEST(HostileExternalData, LinkInsideTheFolderPointingOutIsRefused) {
  TempDir dir;
  std::filesystem::create_symlink("/etc/passwd", dir / "weights.bin");
  const std::string error = load_error(saved(dir, with_external_weight("weights.bin")));
  EXPECT_NE(error.find("leaves the model's directory"), std::string::npos) << error;
}

TEST(HostileExternalData, WeightsInsideTheFolderStillLoad) {
  TempDir dir;
  write_file(dir / "weights.bin", std::string(16, '\0'));
  EXPECT_EQ(load_error(saved(dir, with_external_weight("weights.bin"))), "(loaded)");
}

// ---- tensors whose dims lie -----------------------------------------------------------------------

TEST(HostileTensors, DimsWhoseProductOverflowsAreRefused) {
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  *m.mutable_graph()->add_initializer() = float_tensor("W", {int64_t{1} << 32, int64_t{1} << 32, 4}, 8);
  const std::string path = saved(dir, m);
  EXPECT_NE(load_error(path).find("too large"), std::string::npos) << load_error(path);
  expect_cli_errors(path, "too large", dir);
}

TEST(HostileTensors, ByteSizeNotMatchingDimsAndTypeIsRefused) {
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  *m.mutable_graph()->add_initializer() = float_tensor("W", {2, 3}, 7);
  const std::string error = load_error(saved(dir, m));
  EXPECT_NE(error.find("value 'W'"), std::string::npos) << error;
  EXPECT_NE(error.find("needs 24 bytes but has 7"), std::string::npos) << error;
}

TEST(HostileTensors, StringTensorWithRawDataIsRefused) {
  // An initializer re-typed STRING kept its raw_data: Cast then read strings that were not there.
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  ::onnx::TensorProto w = float_tensor("W", {2}, 8);
  w.set_data_type(8);
  *m.mutable_graph()->add_initializer() = w;
  const std::string path = saved(dir, m);
  EXPECT_NE(load_error(path).find("value 'W': a STRING tensor cannot hold raw or external data"), std::string::npos)
      << load_error(path);
  expect_cli_errors(path, "STRING", dir);
  w.clear_raw_data();
  w.add_string_data("only one");
  *m.mutable_graph()->mutable_initializer(0) = w;
  EXPECT_NE(load_error(saved(dir, m)).find("needs 2 strings but has 1"), std::string::npos);
}

TEST(HostileTensors, RandomInputWhoseDimsOverflowIsAnError) {
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  *m.mutable_graph()->mutable_input(0) = tensor_info("X", 1, {(int64_t{1} << 32) + 1, int64_t{1} << 32});
  const std::string path = saved(dir, m);
  if (!cli_built()) GTEST_SKIP() << "xexp CLI not built";
  const auto r = xexp::testing::run_xexp("run --random " + xexp::testing::shell_quote(path));
  xexp::testing::expect_one_error_line(r, "run --random");
  EXPECT_NE(r.err.find("overflows int64"), std::string::npos) << r.err;
}

// ---- kernels fed shapes their op does not allow (an op swapped, an opset changed) -----------------

TEST(HostileKernels, ConcatOfMismatchedShapesIsAnError) {
  // llama_L1 declaring opset 1 crashed `run` and `optimize` here (an out-of-bounds copy).
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  *m.mutable_graph()->add_input() = tensor_info("Z", 1, {3, 3});
  ::onnx::NodeProto concat = make_node("Concat", {"X", "Z"}, {"C"}, "Concat_C");
  set_int(concat, "axis", 1);
  *m.mutable_graph()->add_node() = concat;
  *m.mutable_graph()->add_output() = tensor_info("C", 1, {});
  const std::string error = run_error(saved(dir, m), {{"X", zeros({2, 3})}, {"Z", zeros({3, 3})}});
  EXPECT_NE(error.find("node 'Concat_C'"), std::string::npos) << error;
  EXPECT_NE(error.find("differ outside axis 1"), std::string::npos) << error;
}

TEST(HostileKernels, ScanWithoutItsBodyIsTypedWithoutOnnxInference) {
  // libonnx's Scan inference dereferences the missing body: `print` and `optimize` crashed in it.
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  ::onnx::NodeProto scan = make_node("Scan", {"Y"}, {"S"}, "Scan_S");
  set_int(scan, "num_scan_inputs", 1);
  *m.mutable_graph()->add_node() = scan;
  *m.mutable_graph()->add_output() = tensor_info("S", 1, {});
  xexp::ir::Model model = xexp::load_model(saved(dir, m));
  xexp::tools::OptimizeModelOptions options;
  options.patterns = "default+onnxruntime";
  EXPECT_NO_THROW(xexp::tools::optimize_model(model, options));
  EXPECT_NE(xexp::tools::pretty(model).find("Scan(Y, num_scan_inputs=1) -> S"), std::string::npos)
      << xexp::tools::pretty(model);
}

TEST(HostileKernels, AxisOfAScalarIsAnError) {
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  *m.mutable_graph()->add_input() = tensor_info("S", 1, {});
  ::onnx::NodeProto concat = make_node("Concat", {"S", "S"}, {"C"}, "Concat_C");
  set_int(concat, "axis", 0);
  *m.mutable_graph()->add_node() = concat;
  *m.mutable_graph()->add_output() = tensor_info("C", 1, {});
  const std::string error = run_error(saved(dir, m), {{"X", zeros({2, 3})}, {"S", zeros({})}});
  EXPECT_NE(error.find("out of range for rank 0"), std::string::npos) << error;
}

TEST(HostileKernels, TransposeWithAPermThatIsNoPermutationIsAnError) {
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  ::onnx::NodeProto transpose = make_node("Transpose", {"X"}, {"T"}, "Transpose_T");
  set_ints(transpose, "perm", {1, 7});
  *m.mutable_graph()->add_node() = transpose;
  *m.mutable_graph()->add_output() = tensor_info("T", 1, {});
  const std::string error = run_error(saved(dir, m), {{"X", zeros({2, 3})}});
  EXPECT_NE(error.find("not a permutation"), std::string::npos) << error;
}

TEST(HostileKernels, LoopBodyWithTooFewOutputsIsAnError) {
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  ::onnx::NodeProto loop = make_node("Loop", {"", "", "X"}, {"L"}, "Loop_L");
  auto* body = loop.add_attribute();
  body->set_name("body");
  body->set_type(::onnx::AttributeProto::GRAPH);
  auto* g = body->mutable_g();
  g->set_name("body");
  *g->add_input() = tensor_info("i", 7, {});
  *g->add_input() = tensor_info("c", 9, {});
  *g->add_input() = tensor_info("x", 1, {2, 3});
  *g->add_node() = make_node("Identity", {"c"}, {"c_out"}, "Identity_c_out");
  *g->add_output() = tensor_info("c_out", 9, {});  // the loop-carried x is missing
  *m.mutable_graph()->add_node() = loop;
  *m.mutable_graph()->add_output() = tensor_info("L", 1, {2, 3});
  const std::string error = run_error(saved(dir, m), {{"X", zeros({2, 3})}});
  EXPECT_NE(error.find("fewer than the condition and 1 loop-carried"), std::string::npos) << error;
}

// ---- nothing quadratic -----------------------------------------------------------------------------

TEST(HostileSize, PrintingALongChainGivesTextLinearInItsLength) {
  // Indentation by data-flow depth printed 2 * k spaces before the k-th node of a chain: 40 GB of text
  // for 200,000 nodes. Bounded depth keeps the text linear in the node count.
  xexp::ir::Graph g;
  constexpr int kNodes = 20000;
  xexp::ir::ValueId v = g.add_input("v0", xexp::ElemType::Float, xexp::make_shape({2}));
  for (int k = 1; k <= kNodes; ++k) {
    std::string name = "v";  // appended, not "v" + ...: g++ 12 -O3 warns falsely on that temporary
    name += std::to_string(k);
    xexp::ir::ValueId next = g.add_value(name);
    g.add_node(xexp::Symbol("Relu"), {v}, {next}, {}, "");
    v = next;
  }
  g.add_output(v);
  const std::string text = xexp::tools::pretty(g);
  EXPECT_LT(text.size(), std::size_t{kNodes} * 120);
  EXPECT_NE(text.find(std::string(2 * xexp::tools::detail::kMaxIndentDepth, ' ') + "Relu(v19999)"), std::string::npos);
}

// ---- outputs are safe ------------------------------------------------------------------------------

TEST(HostileOutputs, OutputNeverReplacesAnInputFile) {
  if (!cli_built()) GTEST_SKIP() << "xexp CLI not built";
  TempDir dir;
  write_file(dir / "weights.bin", std::string(16, '\0'));
  ::onnx::ModelProto m = with_external_weight("weights.bin");
  const std::string path = saved(dir, m);
  const std::string before = xexp::testing::read_file(path);
  const std::string in = xexp::testing::shell_quote(path);
  for (const std::string& out : {path, dir / "weights.bin"})
    for (const std::string cmd : {"convert", "optimize", "inline"}) {
      const auto r = xexp::testing::run_xexp(cmd + " " + in + " -o " + xexp::testing::shell_quote(out));
      xexp::testing::expect_one_error_line(r, cmd + " -o " + out);
      EXPECT_NE(r.err.find("is an input file"), std::string::npos) << r.err;
    }
  const auto r = xexp::testing::run_xexp("run --random " + in + " --dump-intermediates " + in);
  xexp::testing::expect_one_error_line(r, "run --dump-intermediates");
  EXPECT_EQ(xexp::testing::read_file(path), before);
  EXPECT_EQ(xexp::testing::read_file(dir / "weights.bin"), std::string(16, '\0'));
}

TEST(HostileOutputs, SameInputGivesTheSameBytesAndNoTemporaryFileIsLeft) {
  if (!cli_built()) GTEST_SKIP() << "xexp CLI not built";
  TempDir dir;
  ::onnx::ModelProto m = base_model();
  add_function_calling(m, "f", "Relu", true);
  m.mutable_functions(0)->mutable_node(0)->set_domain("");
  auto* o = m.mutable_functions(0)->add_opset_import();
  o->set_domain("");
  o->set_version(18);
  const std::string path = saved(dir, m);
  for (const std::string cmd : {"optimize", "inline", "convert"}) {
    std::string first;
    for (int k = 0; k < 2; ++k) {
      const std::string out = dir / (cmd + std::to_string(k) + ".onnx");
      const auto r = xexp::testing::run_xexp(cmd + " " + xexp::testing::shell_quote(path) + " -o " +
                                             xexp::testing::shell_quote(out));
      ASSERT_EQ(r.exit_code, 0) << r.err;
      if (k == 0) first = xexp::testing::read_file(out);
      else EXPECT_EQ(xexp::testing::read_file(out), first) << cmd;
    }
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
}
