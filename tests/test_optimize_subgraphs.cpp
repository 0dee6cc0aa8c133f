// Optimization inside If and Loop bodies (issue 8 item 3). Models are written in ONNX's text syntax to a
// file and read back as a user's file is (no inference call here), then optimized by
// optimizer::optimize_model: the rules, the folding and the clean-ups run in each body, which reads values of
// the enclosing graph by name; those values stay while a body reads them and keep the name the body reads
// them by. Each body's op sequence is checked, and the outputs before and after in xexp's evaluator and
// in ONNX Runtime (each against itself: the fused Conv rounds differently, hence 1e-5). A body reading a
// value no graph defines is an error naming the node and the value.
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>

#include <filesystem>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/cli.hpp"
#include "support/compare.hpp"
#include "support/ort.hpp"
#include "support/random_inputs.hpp"
#include "support/rewrite_helpers.hpp"
#include "support/temp_dir.hpp"
#include "xexp/eval/evaluator.hpp"
#include "xexp/onnx.hpp"
#include "xexp/optimizer/optimize_model.hpp"

using namespace xexp;
using test::op_types;
using test::OpList;

namespace {

// "{v0, v1, ...}": n values of a ramp, for the initializers of the text syntax.
std::string ramp_text(int n, float start, float step) {
  std::string out = "{";
  for (int k = 0; k < n; ++k)
    out += (k ? ", " : "") + std::to_string(start + step * static_cast<float>(k % 7));
  return out + "}";
}

// Parses `text` and writes it to `path` untouched: no value_info beyond what the text declares. The
// local functions are parsed on their own (ONNX 1.12's model syntax has none).
void write_model(const std::string& text, const std::string& path,
                 const std::vector<std::string>& functions = {}) {
  ::onnx::ModelProto proto;
  const auto status = ::onnx::OnnxParser::Parse(proto, text.c_str());
  if (!status.IsOK()) throw Error("cannot parse the test model: " + status.ErrorMessage());
  for (const std::string& function : functions) {
    const auto parsed = ::onnx::OnnxParser::Parse(*proto.add_functions(), function.c_str());
    if (!parsed.IsOK()) throw Error("cannot parse the test function: " + parsed.ErrorMessage());
  }
  std::string bytes;
  proto.SerializeToString(&bytes);
  xexp::testing::write_file(path, bytes);
}

// The subgraph `attribute` of the only `op` node of `g`.
const ir::Graph& body_of(const ir::Graph& g, std::string_view op, std::string_view attribute) {
  for (ir::NodeId id : g.nodes())
    if (g.node(id).op_type.view() == op)
      if (const ir::Attribute* a = g.node(id).attribute(Symbol(attribute))) return *a->graph();
  throw Error("no " + std::string(op) + " node with a " + std::string(attribute));
}

std::vector<std::string> captured_names(const ir::Graph& body) {
  std::vector<std::string> names;
  for (ir::ValueId id : body.captured()) names.push_back(body.value(id).name);
  return names;
}

// The model at `path`, optimized as `xexp optimize` does, saved to `optimized`.
ir::Model optimize_file(const std::string& path, const std::string& optimized,
                        const optimizer::OptimizeModelOptions& options = {}) {
  ir::Model m = load_model(path);
  optimizer::optimize_model(m, options);
  save_model(m, optimized);
  return m;
}

// The same outputs for the files `before` and `after`, in xexp's evaluator and in ONNX Runtime.
void expect_same_outputs(const std::string& before, const std::string& after,
                         const xexp::testing::NamedTensors& feeds) {
  auto run = [&](const std::string& path) { return xexp::test::evaluated(load_model(path), feeds); };
  xexp::testing::expect_all_close(run(after), run(before), 1e-5, 1e-5);
  const std::vector<xexp::testing::OrtResult> ort =
      xexp::testing::run_onnxruntime_batch({{before, feeds}, {after, feeds}});
  ASSERT_TRUE(ort[0].ok) << "ONNX Runtime, before: " << ort[0].error;
  ASSERT_TRUE(ort[1].ok) << "ONNX Runtime, after: " << ort[1].error;
  xexp::testing::expect_all_close(ort[1].outputs, ort[0].outputs, 1e-5, 1e-5);
}

// Both branches hold a Conv followed by an activation (FusedConv in the onnxruntime set) on weights of
// the main graph. The then branch reads A, an Identity of X the main graph's clean-up removes: the
// branch must read X instead. The else branch reads S, which only it reads, through a Reshape to the
// Conv's own shape (Shape folds once the body is typed, then the Reshape goes).
std::string if_model() {
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n"
         "branches (float[1,2,5,5] X, bool C) => (float[1,3,5,5] Y)\n"
         "<float[3,2,3,3] W = " +
         ramp_text(54, -0.3f, 0.1f) +
         ", float[3] B = {0.1, -0.2, 0.05}>\n"
         "{\n"
         "  A = Identity(X)\n"
         "  S = Sigmoid(X)\n"
         "  Y = If(C) <\n"
         "    then_branch = then_graph () => (float[1,3,5,5] t_out) {\n"
         "      t_conv = Conv <pads = [1, 1, 1, 1]> (A, W, B)\n"
         "      t_out = Relu(t_conv)\n"
         "    },\n"
         "    else_branch = else_graph () => (float[1,3,5,5] e_out) {\n"
         "      e_conv = Conv <pads = [1, 1, 1, 1]> (S, W, B)\n"
         "      e_shape = Shape(e_conv)\n"
         "      e_same = Reshape(e_conv, e_shape)\n"
         "      e_out = Sigmoid(e_same)\n"
         "    }\n"
         "  >\n"
         "}\n";
}

TEST(OptimizeSubgraphs, IfBranchesFuseAndReadTheEnclosingValues) {
  xexp::testing::TempDir dir;
  const std::string path = dir / "if.onnx", optimized = dir / "if.opt.onnx";
  write_model(if_model(), path);
  const ir::Model m = optimize_file(path, optimized);

  const ir::Graph& g = *m.graph;
  EXPECT_EQ(op_types(g), (OpList{"Sigmoid", "If"}));
  const ir::Graph& then_branch = body_of(g, "If", "then_branch");
  const ir::Graph& else_branch = body_of(g, "If", "else_branch");
  EXPECT_EQ(op_types(then_branch), (OpList{"com.microsoft.FusedConv"}));
  EXPECT_EQ(op_types(else_branch), (OpList{"com.microsoft.FusedConv"}));
  EXPECT_EQ(else_branch.node(else_branch.first_node()).attribute(Symbol("activation"))->s, "Sigmoid");
  // A became X in the branch with the main graph's Identity gone; S stays, only the else branch reads it.
  EXPECT_EQ(captured_names(then_branch), (std::vector<std::string>{"X", "W", "B"}));
  EXPECT_EQ(captured_names(else_branch), (std::vector<std::string>{"S", "W", "B"}));
  EXPECT_TRUE(g.has_value("S"));

  for (bool condition : {true, false}) {
    SCOPED_TRACE(condition ? "then branch" : "else branch");
    xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*load_model(path).graph, {.seed = 7});
    feeds[1].second = Tensor::scalar<bool>(condition);
    expect_same_outputs(path, optimized, feeds);
  }
}

// The then branch reads X under two names, X and A = Identity(X): once the main graph's Identity is
// gone, the branch reads X once and the If lists it once.
TEST(OptimizeSubgraphs, TwoNamesOfOneEnclosingValueBecomeOne) {
  xexp::testing::TempDir dir;
  const std::string path = dir / "names.onnx", optimized = dir / "names.opt.onnx";
  write_model(
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "names (float[2,3] X, bool C) => (float[2,3] Y) {\n"
      "  A = Identity(X)\n"
      "  Y = If(C) <\n"
      "    then_branch = then_graph () => (float[2,3] t_out) { t_out = Add(A, X) },\n"
      "    else_branch = else_graph () => (float[2,3] e_out) { e_out = Neg(A) }\n"
      "  >\n"
      "}\n",
      path);
  const ir::Model m = optimize_file(path, optimized);
  const ir::Graph& g = *m.graph;
  EXPECT_EQ(op_types(g), (OpList{"If"}));
  const ir::Node& if_node = g.node(g.first_node());
  EXPECT_EQ(if_node.captured, (std::vector<ir::ValueId>{g.at("X")}));
  const ir::Graph& then_branch = body_of(g, "If", "then_branch");
  EXPECT_EQ(captured_names(then_branch), (std::vector<std::string>{"X"}));
  const ir::Node& add = then_branch.node(then_branch.first_node());
  EXPECT_EQ(add.inputs, (std::vector<ir::ValueId>{then_branch.at("X"), then_branch.at("X")}));
  EXPECT_EQ(captured_names(body_of(g, "If", "else_branch")), (std::vector<std::string>{"X"}));
  for (bool condition : {true, false}) {
    SCOPED_TRACE(condition ? "then branch" : "else branch");
    xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*load_model(path).graph, {.seed = 5});
    feeds[1].second = Tensor::scalar<bool>(condition);
    expect_same_outputs(path, optimized, feeds);
  }
}

// A Loop whose body applies a Conv and a Relu three times, reading its weights from the main graph
// through an Identity (folded in the body) and its bias directly.
std::string loop_model() {
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n"
         "looped (float[1,2,5,5] X) => (float[1,2,5,5] Y)\n"
         "<float[2,2,3,3] W = " +
         ramp_text(36, -0.2f, 0.07f) +
         ", float[2] B = {0.1, -0.1}, int64 M = {3},"
         " bool T = {1}>\n"
         "{\n"
         "  Y = Loop(M, T, X) <\n"
         "    body = loop_body (int64 i, bool c, float[1,2,5,5] v) => (bool c_out, float[1,2,5,5] v_out) {\n"
         "      c_out = Identity(c)\n"
         "      weights = Identity(W)\n"
         "      conv = Conv <pads = [1, 1, 1, 1]> (v, weights, B)\n"
         "      v_out = Relu(conv)\n"
         "    }\n"
         "  >\n"
         "}\n";
}

TEST(OptimizeSubgraphs, LoopBodyFuses) {
  xexp::testing::TempDir dir;
  const std::string path = dir / "loop.onnx", optimized = dir / "loop.opt.onnx";
  write_model(loop_model(), path);
  const ir::Model m = optimize_file(path, optimized);

  EXPECT_EQ(op_types(*m.graph), (OpList{"Loop"}));
  const ir::Graph& body = body_of(*m.graph, "Loop", "body");
  // c_out stays an Identity: the body's input cannot take the name of its output.
  EXPECT_EQ(op_types(body), (OpList{"Identity", "com.microsoft.FusedConv"}));
  // Identity(W) folded into a constant of the body: the body no longer reads W, nor holds the main graph.
  EXPECT_EQ(captured_names(body), (std::vector<std::string>{"B"}));
  ASSERT_EQ(body.initializers().size(), 1u);
  EXPECT_EQ(body.value(body.initializers()[0]).name, "weights");
  for (ir::ValueId id : m.graph->initializers()) EXPECT_NE(m.graph->value(id).name, "W");
  expect_same_outputs(path, optimized, xexp::testing::random_feeds(*load_model(path).graph, {.seed = 3}));
}

// --target-opset 18 on a model at opset 12 whose If branches and local function use what later opsets
// changed: Split's `split` and ReduceSum's `axes` become inputs at 13 (ONNX's converter, node by node,
// inside the branches too), ReduceMax's `axes` at 18 (our adapter, in the function body as a Constant
// node: a function has no initializers). The function's opset_import follows the model's.
std::string upgrade_model() {
  return "<ir_version: 7, opset_import: [\"\" : 12, \"local\" : 1]>\n"
         "upgrade (float[2,6] X, bool C) => (float[2,3] Y, float[2] Z) {\n"
         "  Y = If(C) <\n"
         "    then_branch = then_graph () => (float[2,3] t_out) {\n"
         "      t_a, t_b = Split <axis = 1, split = [3, 3]> (X)\n"
         "      t_out = Add(t_a, t_b)\n"
         "    },\n"
         "    else_branch = else_graph () => (float[2,3] e_out) {\n"
         "      e_a, e_b = Split <axis = 1, split = [3, 3]> (X)\n"
         "      e_m = ReduceSum <axes = [1], keepdims = 1> (e_b)\n"
         "      e_out = Sub(e_a, e_m)\n"
         "    }\n"
         "  >\n"
         "  Z = local.RowMax(X)\n"
         "}\n";
}
const char* const kRowMax =
    "<domain: \"local\", opset_import: [\"\" : 12]>\n"
    "RowMax (x) => (y) {\n"
    "  m = ReduceMax <axes = [1], keepdims = 0> (x)\n"
    "  y = Neg(m)\n"
    "}\n";

// The values of `t`, read as int64.
std::vector<int64_t> int64_values(const Tensor& t) {
  const std::span<const int64_t> v = t.data<int64_t>();
  return {v.begin(), v.end()};
}

// The constant input `slot` of node `n` of `g`: an initializer, or a Constant node's value.
std::vector<int64_t> constant_input(const ir::Graph& g, const ir::Node& n, std::size_t slot) {
  const ir::Value& v = g.value(n.inputs.at(slot));
  if (v.initializer) return int64_values(*v.initializer);
  if (v.producer == ir::kNone) throw Error("not a constant", {.node = n.name, .value = v.name});
  const std::optional<Tensor> t = ir::constant_attribute_value(g.node(v.producer).attributes);
  if (!t) throw Error("not a constant", {.node = n.name, .value = v.name});
  return int64_values(*t);
}

// The only node `op` of `g`.
const ir::Node& only_node(const ir::Graph& g, std::string_view op) {
  const ir::Node* found = nullptr;
  for (ir::NodeId id : g.nodes())
    if (g.node(id).op_type.view() == op) {
      if (found) throw Error("two " + std::string(op) + " nodes");
      found = &g.node(id);
    }
  if (!found) throw Error("no " + std::string(op) + " node");
  return *found;
}

TEST(OptimizeSubgraphs, TargetOpsetUpgradesBranchesAndFunctionBodies) {
  xexp::testing::TempDir dir;
  const std::string path = dir / "up.onnx", optimized = dir / "up.opt.onnx";
  write_model(upgrade_model(), path, {kRowMax});
  std::ostringstream log;
  const ir::Model m =
      optimize_file(path, optimized, {.patterns = "default", .target_opset = 18, .log = &log});

  EXPECT_EQ(m.opset(""), 18);
  EXPECT_GE(m.ir_version, 8);
  const ir::Graph& g = *m.graph;
  EXPECT_EQ(op_types(g), (OpList{"If", "local.RowMax"}));
  const ir::Graph& then_branch = body_of(g, "If", "then_branch");
  const ir::Graph& else_branch = body_of(g, "If", "else_branch");
  EXPECT_EQ(op_types(then_branch), (OpList{"Split", "Add"}));
  EXPECT_EQ(op_types(else_branch), (OpList{"Split", "ReduceSum", "Sub"}));
  for (const ir::Graph* branch : {&then_branch, &else_branch}) {
    const ir::Node& split = only_node(*branch, "Split");
    EXPECT_EQ(split.attribute(Symbol("split")), nullptr);
    EXPECT_EQ(constant_input(*branch, split, 1), (std::vector<int64_t>{3, 3}));
  }
  const ir::Node& reduce_sum = only_node(else_branch, "ReduceSum");
  EXPECT_EQ(reduce_sum.attribute(Symbol("axes")), nullptr);
  EXPECT_EQ(constant_input(else_branch, reduce_sum, 1), (std::vector<int64_t>{1}));

  ASSERT_EQ(m.functions.size(), 1u);
  const ir::Function& f = m.functions[0];
  EXPECT_EQ(ir::find_opset(f.opsets, ""), 18);
  EXPECT_EQ(op_types(*f.body), (OpList{"Constant", "ReduceMax", "Neg"}));
  EXPECT_TRUE(f.body->initializers().empty());
  const ir::Node& reduce_max = only_node(*f.body, "ReduceMax");
  EXPECT_EQ(reduce_max.attribute(Symbol("axes")), nullptr);
  EXPECT_EQ(constant_input(*f.body, reduce_max, 1), (std::vector<int64_t>{1}));

  for (bool condition : {true, false}) {
    SCOPED_TRACE(condition ? "then branch" : "else branch");
    xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*load_model(path).graph, {.seed = 11});
    feeds[1].second = Tensor::scalar<bool>(condition);
    expect_same_outputs(path, optimized, feeds);
  }
}

// What the upgrade cannot convert is one error naming the node, the model left as it was: an op of
// another domain inside a branch, a function importing a newer opset than the target.
TEST(OptimizeSubgraphs, TargetOpsetRefusalsNameTheNode) {
  xexp::testing::TempDir dir;
  const std::string path = dir / "refused.onnx";
  write_model(
      "<ir_version: 7, opset_import: [\"\" : 12, \"com.microsoft\" : 1]>\n"
      "refused (float[2,3] X, bool C) => (float[2,3] Y) {\n"
      "  Y = If(C) <\n"
      "    then_branch = then_graph () => (float[2,3] t_out) { t_out = Relu(X) },\n"
      "    else_branch = else_graph () => (float[2,3] e_out) { e_out = com.microsoft.Gelu(X) }\n"
      "  >\n"
      "}\n",
      path);
  ir::Model m = load_model(path);
  try {
    upgrade_opset(m, 17);
    ADD_FAILURE() << "a com.microsoft node in a branch must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.node(), "Gelu");
    EXPECT_NE(e.cause().find("com.microsoft.Gelu is outside the default domain"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(m.opset(""), 12);

  write_model(upgrade_model(), path,
              {std::string(kRowMax).replace(std::string(kRowMax).find("12"), 2, "18")});
  ir::Model newer = load_model(path);
  try {
    upgrade_opset(newer, 17);
    ADD_FAILURE() << "a function at opset 18 cannot go to 17";
  } catch (const Error& e) {
    EXPECT_NE(e.cause().find("cannot downgrade opset 18 to 17 in function local.RowMax"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(newer.opset(""), 12);
  EXPECT_EQ(op_types(body_of(*newer.graph, "If", "then_branch")), (OpList{"Split", "Add"}));
  EXPECT_NE(only_node(body_of(*newer.graph, "If", "then_branch"), "Split").attribute(Symbol("split")),
            nullptr);
}

// Past opset 18 (libonnx's converter stops at 17): DFT's axis becomes its third input at 20, written
// out when absent (its default went from 1 to -2), GridSample's modes take their new names at 20;
// ONNX Runtime gives the same outputs before and after (our evaluator has neither op). Ops added after
// 17 (Gelu, Mish), which libonnx does not know, go up as they are. GroupNormalization, whose scale and
// bias changed meaning at 21, is refused by name.
TEST(OptimizeSubgraphs, TargetOpset23AdaptsDftAndGridSample) {
  xexp::testing::TempDir dir;
  const std::string path = dir / "op17.onnx", upgraded = dir / "op23.onnx";
  write_model(
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "op17 (float[2,8,6,1] X, float[1,2,3,4] I, float[1,3,2,2] G) => (float[2,8,6,2] A, float[2,8,6,2] B,"
      " float[1,2,3,2] C, float[1,2,3,2] D) {\n"
      "  A = DFT<axis=2>(X)\n"
      "  B = DFT(X)\n"
      "  C = GridSample<mode=\"bilinear\">(I, G)\n"
      "  D = GridSample<mode=\"nearest\", align_corners=1>(I, G)\n"
      "}\n",
      path);
  ir::Model m = load_model(path);
  upgrade_opset(m, 23);
  EXPECT_EQ(m.opset(""), 23);
  EXPECT_EQ(m.ir_version, 11);
  const ir::Graph& g = *m.graph;
  EXPECT_EQ(op_types(g), (OpList{"DFT", "DFT", "GridSample", "GridSample"}));
  std::vector<int64_t> axes;
  std::vector<std::string> modes;
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    if (n.op_type.view() == "GridSample") {
      modes.push_back(n.attribute(Symbol("mode"))->s);
      continue;
    }
    EXPECT_EQ(n.attribute(Symbol("axis")), nullptr);
    ASSERT_EQ(n.inputs.size(), 3u);
    EXPECT_EQ(n.inputs[1], ir::kNone);
    const Tensor* axis = rewrite::constant_tensor(g, n.inputs[2]);
    ASSERT_NE(axis, nullptr);
    EXPECT_EQ(axis->rank(), 0u);
    axes.push_back(eval::as_int64s(*axis).at(0));
  }
  EXPECT_EQ(axes, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(modes, (std::vector<std::string>{"linear", "nearest"}));
  save_model(m, upgraded);
  xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*load_model(path).graph, {.seed = 5});
  const std::vector<xexp::testing::OrtResult> ort =
      xexp::testing::run_onnxruntime_batch({{path, feeds}, {upgraded, feeds}});
  ASSERT_TRUE(ort[0].ok) << "ONNX Runtime, opset 17: " << ort[0].error;
  ASSERT_TRUE(ort[1].ok) << "ONNX Runtime, opset 23: " << ort[1].error;
  xexp::testing::expect_all_close(ort[1].outputs, ort[0].outputs, 1e-5, 1e-5);

  // Ops ONNX added after 17, unknown to libonnx, are upgraded from the opset that has them.
  write_model(
      "<ir_version: 9, opset_import: [\"\" : 20]>\n"
      "op20 (float[2,3] X) => (float[2,3] Y) {\n"
      "  G = Gelu<approximate=\"tanh\">(X)\n"
      "  Y = Mish(G)\n"
      "}\n",
      path);
  ir::Model newer = load_model(path);
  upgrade_opset(newer, 23);
  EXPECT_EQ(newer.opset(""), 23);
  EXPECT_EQ(op_types(*newer.graph), (OpList{"Gelu", "Mish"}));
  save_model(newer, upgraded);
  feeds = xexp::testing::random_feeds(*load_model(path).graph, {.seed = 5});
  const std::vector<xexp::testing::OrtResult> ort20 =
      xexp::testing::run_onnxruntime_batch({{path, feeds}, {upgraded, feeds}});
  ASSERT_TRUE(ort20[0].ok) << "ONNX Runtime, opset 20: " << ort20[0].error;
  ASSERT_TRUE(ort20[1].ok) << "ONNX Runtime, opset 23: " << ort20[1].error;
  xexp::testing::expect_all_close(ort20[1].outputs, ort20[0].outputs, 1e-6, 1e-6);

  write_model(
      "<ir_version: 8, opset_import: [\"\" : 18]>\n"
      "op18 (float[1,4,3] X, float[2] S, float[2] B) => (float[1,4,3] Y) {\n"
      "  Y = GroupNormalization<num_groups=2>(X, S, B)\n"
      "}\n",
      path);
  ir::Model group = load_model(path);
  try {
    upgrade_opset(group, 21);
    ADD_FAILURE() << "GroupNormalization cannot cross opset 21";
  } catch (const Error& e) {
    EXPECT_EQ(e.node(), "GroupNormalization");
    EXPECT_NE(e.cause().find("cannot upgrade opset 18 to 21: GroupNormalization's scale and bias"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(group.opset(""), 18);
}

// An If inside a local function: its branches are optimized as the main graph's are (NotNot in the then
// branch, the Identity clean-up in the else branch), reading the function's input x from the body.
TEST(OptimizeSubgraphs, IfInsideAFunctionBodyIsOptimized) {
  xexp::testing::TempDir dir;
  const std::string path = dir / "fn_if.onnx", optimized = dir / "fn_if.opt.onnx";
  write_model(
      "<ir_version: 8, opset_import: [\"\" : 17, \"local\" : 1]>\n"
      "fn_if (bool[2,3] X, bool C) => (bool[2,3] Y) {\n"
      "  Y = local.Pick(C, X)\n"
      "}\n",
      path,
      {"<domain: \"local\", opset_import: [\"\" : 17]>\n"
       "Pick (c, x) => (y) {\n"
       "  y = If(c) <\n"
       "    then_branch = then_graph () => (bool[2,3] t_out) {\n"
       "      t_a = Not(x)\n"
       "      t_b = Not(t_a)\n"
       "      t_out = Xor(t_b, x)\n"
       "    },\n"
       "    else_branch = else_graph () => (bool[2,3] e_out) {\n"
       "      e_i = Identity(x)\n"
       "      e_out = Not(e_i)\n"
       "    }\n"
       "  >\n"
       "}\n"});
  const ir::Model m = optimize_file(path, optimized);

  EXPECT_EQ(op_types(*m.graph), (OpList{"local.Pick"}));
  ASSERT_EQ(m.functions.size(), 1u);
  const ir::Graph& body = *m.functions[0].body;
  EXPECT_EQ(op_types(body), (OpList{"If"}));
  const ir::Graph& then_branch = body_of(body, "If", "then_branch");
  const ir::Graph& else_branch = body_of(body, "If", "else_branch");
  EXPECT_EQ(op_types(then_branch), (OpList{"Xor"}));
  EXPECT_EQ(then_branch.node(then_branch.first_node()).inputs,
            (std::vector<ir::ValueId>{then_branch.at("x"), then_branch.at("x")}));
  EXPECT_EQ(op_types(else_branch), (OpList{"Not"}));
  EXPECT_EQ(else_branch.node(else_branch.first_node()).inputs,
            (std::vector<ir::ValueId>{else_branch.at("x")}));
  EXPECT_EQ(captured_names(then_branch), (std::vector<std::string>{"x"}));
  EXPECT_EQ(captured_names(else_branch), (std::vector<std::string>{"x"}));

  for (bool condition : {true, false}) {
    SCOPED_TRACE(condition ? "then branch" : "else branch");
    xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*load_model(path).graph, {.seed = 13});
    feeds[1].second = Tensor::scalar<bool>(condition);
    expect_same_outputs(path, optimized, feeds);
  }
}

// Ifs whose condition is a constant: T an initializer, F = Not(T) once folded, C0 a Constant node. Each is
// replaced by its taken branch, the If nested in Y's then branch too once it reaches the main graph: the
// branches' nodes compute the If's outputs directly, read S and X from the main graph, and their values
// take names free there (both Z's and Y's branches name a value tmp). Sigmoid(X), read only by the
// untaken branches besides Y's, stays for Y's Add.
std::string constant_if_model() {
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n"
         "constant_if (float[2,3] X) => (float[2,3] Y, float[2,3] Z)\n"
         "<bool T = {1}>\n"
         "{\n"
         "  F = Not(T)\n"
         "  S = Sigmoid(X)\n"
         "  Y = If(T) <\n"
         "    then_branch = y_then () => (float[2,3] y_t) {\n"
         "      inner = If(F) <\n"
         "        then_branch = in_then () => (float[2,3] i_t) { i_t = Neg(S) },\n"
         "        else_branch = in_else () => (float[2,3] i_e) { i_e = Relu(X) }\n"
         "      >\n"
         "      tmp = Add(inner, S)\n"
         "      y_t = Mul(tmp, tmp)\n"
         "    },\n"
         "    else_branch = y_else () => (float[2,3] y_e) { y_e = Neg(S) }\n"
         "  >\n"
         "  C0 = Constant <value = bool {0}> ()\n"
         "  Z = If(C0) <\n"
         "    then_branch = z_then () => (float[2,3] z_t) { z_t = Neg(X) },\n"
         "    else_branch = z_else () => (float[2,3] z_e) {\n"
         "      tmp = Mul(X, X)\n"
         "      z_e = Sub(tmp, X)\n"
         "    }\n"
         "  >\n"
         "}\n";
}

TEST(OptimizeSubgraphs, IfWithAConstantConditionBecomesItsTakenBranch) {
  xexp::testing::TempDir dir;
  const std::string path = dir / "constant_if.onnx", optimized = dir / "constant_if.opt.onnx";
  write_model(constant_if_model(), path);
  const ir::Model m = optimize_file(path, optimized);

  const ir::Graph& g = *m.graph;
  EXPECT_EQ(op_types(g), (OpList{"Sigmoid", "Relu", "Add", "Mul", "Mul", "Sub"}));
  auto producer_of = [&](const char* name) -> const ir::Node& {
    return g.node(g.value(g.at(name)).producer);
  };
  EXPECT_EQ(producer_of("inner").inputs, (std::vector<ir::ValueId>{g.at("X")}));
  EXPECT_EQ(producer_of("tmp").inputs, (std::vector<ir::ValueId>{g.at("inner"), g.at("S")}));
  EXPECT_EQ(producer_of("Y").inputs, (std::vector<ir::ValueId>{g.at("tmp"), g.at("tmp")}));
  EXPECT_EQ(producer_of("tmp_1").inputs, (std::vector<ir::ValueId>{g.at("X"), g.at("X")}));
  EXPECT_EQ(producer_of("Z").inputs, (std::vector<ir::ValueId>{g.at("tmp_1"), g.at("X")}));
  EXPECT_TRUE(g.initializers().empty());

  expect_same_outputs(path, optimized, xexp::testing::random_feeds(*load_model(path).graph, {.seed = 17}));
}

// A branch reading `nowhere`: loading refuses it, naming the node and the value; the CLI says so in one
// line and writes nothing.
TEST(OptimizeSubgraphs, UnknownOuterValueIsAnError) {
  xexp::testing::TempDir dir;
  const std::string path = dir / "bad.onnx", optimized = dir / "bad.opt.onnx";
  write_model(
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "bad (float[2] X, bool C) => (float[2] Y) {\n"
      "  Y = If(C) <\n"
      "    then_branch = then_graph () => (float[2] t_out) { t_out = Relu(X) },\n"
      "    else_branch = else_graph () => (float[2] e_out) { e_out = Neg(nowhere) }\n"
      "  >\n"
      "}\n",
      path);
  // The parser names nodes nothing: the error names the node by its op.
  try {
    load_model(path);
    ADD_FAILURE() << "a body reading an undefined value must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.node(), "Neg");
    EXPECT_EQ(e.value(), "nowhere");
    EXPECT_NE(std::string(e.what()).find("enclosing graph"), std::string::npos) << e.what();
  }
  const std::string before = xexp::testing::read_file(path);
  const xexp::testing::CommandResult r =
      xexp::testing::run_xexp(xexp::testing::joined({"optimize ", path, " -o ", optimized}));
  xexp::testing::expect_one_error_line(r, "xexp optimize");
  EXPECT_NE(r.err.find("nowhere"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(optimized));
  EXPECT_EQ(xexp::testing::read_file(path), before);
}

}  // namespace
