// Drawings of models (xexp/tools/dot.hpp, `xexp dot`): the exact Graphviz source of small built graphs
// (constants inside their consumer, a local function as a cluster), and on seed_llm as torch exported
// it: one box per node, one arrow per data dependency, the nodes the optimizer made named by their rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/cli.hpp"
#include "support/temp_dir.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/dot.hpp"
#include "xexp/optimizer/optimize_model.hpp"

namespace {

using xexp::ElemType;
using xexp::Shape;
using xexp::Symbol;
using xexp::Tensor;
using xexp::testing::joined;
namespace ir = xexp::ir;

// Adds `op_type(inputs)` with one output of the given type.
ir::ValueId typed_node(ir::Graph& g, const char* op_type, std::vector<ir::ValueId> inputs, const std::string& out,
                       ElemType elem, Shape shape, const char* domain = "") {
  const ir::ValueId y = g.add_value(out);
  g.value(y).elem = elem;
  g.value(y).shape = std::move(shape);
  g.add_node(Symbol(op_type), std::move(inputs), {y}, {}, xexp::testing::joined({op_type, "_0"}), Symbol(domain));
  return y;
}

// What a drawing says: each drawn thing's attributes, and the arrows between them.
struct Drawing {
  std::map<std::string, std::string> things;     // id -> attribute list
  std::set<std::pair<std::string, std::string>> arrows;
  std::map<std::string, int> marked_rules;       // "by RULE" lines: rule -> count
};

Drawing parse(const std::string& dot) {
  Drawing d;
  const std::regex thing(R"(^\s*([a-z0-9_]+) \[(.*)\];$)"), arrow(R"(^\s*([a-z0-9_]+) -> ([a-z0-9_]+);$)"),
      rule(R"(\\nby ([A-Za-z0-9]+)\")");
  std::istringstream lines(dot);
  std::smatch m;
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_match(line, m, arrow)) {
      EXPECT_TRUE(d.arrows.emplace(m[1], m[2]).second) << "arrow drawn twice: " << line;
    } else if (std::regex_match(line, m, thing) && m[1] != "graph" && m[1] != "node" && m[1] != "edge") {
      d.things[m[1]] = m[2];
      if (std::smatch r; std::regex_search(line, r, rule)) ++d.marked_rules[r[1]];
    }
  }
  return d;
}

const std::filesystem::path kModels = std::filesystem::path(XEXP_SHARED_DIR) / "models";

}  // namespace

TEST(Dot, SmallGraphWithConstantsInsideTheirConsumers) {
  ir::Model m;
  m.opsets = {{"", 18, {}}, {"com.microsoft", 1, {}}};
  ir::Graph& g = *m.graph;
  const ir::ValueId x = g.add_input("X", ElemType::Float, Shape{Symbol("batch"), 3});
  const ir::ValueId w = g.add_initializer("W", Tensor::from<float>({3, 4}, std::vector<float>(12, 1.f)));
  const ir::ValueId b = g.add_initializer("B", Tensor::from<float>({2}, {0.5f, -1.f}));
  const ir::ValueId mm = typed_node(g, "MatMul", {x, w}, "mm", ElemType::Float, Shape{Symbol("batch"), 4});
  const ir::ValueId y = typed_node(g, "FastGelu", {mm, b}, "Y", ElemType::Float, Shape{Symbol("batch"), 4},
                                   "com.microsoft");
  const ir::ValueId z = typed_node(g, "Mul", {mm, y}, "Z", ElemType::Float, {});
  g.value(z).shape.reset();  // rank unknown
  g.add_output(y);
  g.add_output(z);

  const std::string expected =
      "digraph model {\n"
      "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, labelloc=t, label=\"small\"];\n"
      "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eeeeee\", fontname=\"Helvetica\", fontsize=10];\n"
      "  edge [color=\"#555555\"];\n"
      "  i0 [shape=ellipse, fillcolor=\"#cfe8ff\", label=\"X\\nfloat32(batch,3)\"];\n"
      "  n0 [label=\"MatMul\\nW = float32(3,4)\\n-> float32(batch,4)\"];\n"
      "  i0 -> n0;\n"
      "  n1 [label=\"FastGelu\\n[com.microsoft]\\nB = [0.5, -1]\\n-> float32(batch,4)\"];\n"
      "  n0 -> n1;\n"
      "  n2 [label=\"Mul\\n-> float32\"];\n"
      "  n0 -> n2;\n"
      "  n1 -> n2;\n"
      "  o0 [shape=ellipse, fillcolor=\"#ffe0b3\", label=\"Y\\nfloat32(batch,4)\"];\n"
      "  n1 -> o0;\n"
      "  o1 [shape=ellipse, fillcolor=\"#ffe0b3\", label=\"Z\\nfloat32\"];\n"
      "  n2 -> o1;\n"
      "}\n";
  EXPECT_EQ(xexp::tools::to_dot(m, {.max_constant_values = 8, .functions = true, .before = nullptr, .title = "small"}),
            expected);
}

// A function body keeps its Constant nodes: drawn inside the consumer as initializers are. A call is
// filled yellow; the body is a cluster. Its values have no type here: no output line.
TEST(Dot, LocalFunctionIsACluster) {
  ir::Model m;
  m.opsets = {{"", 18, {}}, {"local", 1, {}}};
  ir::Graph& g = *m.graph;
  const ir::ValueId x = g.add_input("X", ElemType::Float, Shape{2});
  g.add_output(typed_node(g, "Twice", {x}, "Y", ElemType::Float, Shape{2}, "local"));
  ir::Function& f = m.functions.emplace_back();
  f.name = "Twice";
  f.domain = "local";
  f.opsets = {{"", 18, {}}};
  ir::Graph& body = *f.body;
  const ir::ValueId a = body.add_input("a");
  const ir::ValueId two = body.add_value("two");
  body.add_node(Symbol("Constant"), {}, {two}, {ir::Attribute::make_tensor(Symbol("value"), Tensor::scalar<float>(2.f))});
  const ir::ValueId out = body.add_value("b");
  body.add_node(Symbol("Mul"), {a, two}, {out});
  body.add_output(out);

  const std::string expected =
      "digraph model {\n"
      "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, labelloc=t];\n"
      "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eeeeee\", fontname=\"Helvetica\", fontsize=10];\n"
      "  edge [color=\"#555555\"];\n"
      "  i0 [shape=ellipse, fillcolor=\"#cfe8ff\", label=\"X\\nfloat32(2)\"];\n"
      "  n0 [label=\"Twice\\n[local]\\n-> float32(2)\", fillcolor=\"#fff5c2\"];\n"
      "  i0 -> n0;\n"
      "  o0 [shape=ellipse, fillcolor=\"#ffe0b3\", label=\"Y\\nfloat32(2)\"];\n"
      "  n0 -> o0;\n"
      "  subgraph \"cluster_f0_\" {\n"
      "    graph [label=\"function local.Twice\", style=\"rounded\", color=\"#888888\"];\n"
      "    f0_i0 [shape=ellipse, fillcolor=\"#cfe8ff\", label=\"a\"];\n"
      "    f0_n0 [label=\"Mul\\ntwo = 2\"];\n"
      "    f0_i0 -> f0_n0;\n"
      "    f0_o0 [shape=ellipse, fillcolor=\"#ffe0b3\", label=\"b\"];\n"
      "    f0_n0 -> f0_o0;\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(xexp::tools::to_dot(m), expected);
  xexp::tools::DotOptions without;
  without.functions = false;
  EXPECT_EQ(xexp::tools::to_dot(m, without).find("cluster"), std::string::npos);
}

TEST(Dot, RuleOfANodeIsReadFromTheNameTheRewriterGaveIt) {
  using xexp::rewrite::rule_of_node_name;
  EXPECT_EQ(rule_of_node_name("FusedMatMulPattern--/h.0/MatMul"), "FusedMatMul");
  EXPECT_EQ(rule_of_node_name("SkipLayerNormalizationPattern--LayerNormalizationPattern--/ln/Div"),
            "SkipLayerNormalization");
  EXPECT_EQ(rule_of_node_name("/h.0/attn/MatMul"), "");
  EXPECT_EQ(rule_of_node_name("Pattern--x"), "");
  EXPECT_EQ(rule_of_node_name("/a--bPattern--x"), "");
}

// seed_llm as torch exported it, optimized as `xexp optimize` does: every node is one box, every
// initializer sits inside its consumers' boxes, the arrows are the data flow, and the nodes the rules
// made say which rule.
TEST(Dot, OptimizedSeedLlmMarksWhatEachRuleMade) {
  const std::string path = (kModels / "seed_llm.onnx").string();
  const ir::Model before = xexp::load_model(path);
  ir::Model after = xexp::load_model(path);
  // With the opt-in onnxruntime_gpu set, which fuses its single heads and residual norms.
  xexp::optimizer::optimize_model(after, {.patterns = "default+onnxruntime+onnxruntime_gpu"});
  const ir::Graph& g = *after.graph;
  Drawing d = parse(xexp::tools::to_dot(after, {.max_constant_values = 8, .functions = true, .before = &before,
                                                      .title = {}}));

  std::map<ir::NodeId, std::string> id_of;
  std::size_t k = 0;
  for (ir::NodeId n : g.nodes()) id_of[n] = joined({"n", std::to_string(k++)});
  std::set<std::pair<std::string, std::string>> flow;
  for (ir::NodeId n : g.nodes()) {
    const ir::Node& node = g.node(n);
    const auto it = d.things.find(id_of[n]);
    ASSERT_NE(it, d.things.end()) << node.name;
    EXPECT_EQ(it->second.rfind(joined({"label=\"", node.op_type.view(), "\\n"}), 0), 0u) << it->second;
    for (ir::ValueId in : node.inputs) {
      if (in == ir::kNone) continue;
      const ir::Value& v = g.value(in);
      if (v.is_initializer())
        EXPECT_NE(it->second.find(joined({"\\n", xexp::tools::detail::dot_value_name(v.name), " = "})), std::string::npos)
            << v.name;
      else if (v.producer != ir::kNone) flow.emplace(id_of[v.producer], id_of[n]);
      else flow.emplace(joined({"i", std::to_string(std::find(g.inputs().begin(), g.inputs().end(), in) - g.inputs().begin())}),
                        id_of[n]);
    }
  }
  for (std::size_t o = 0; o < g.outputs().size(); ++o)
    flow.emplace(id_of[g.value(g.outputs()[o]).producer], joined({"o", std::to_string(o)}));
  EXPECT_EQ(d.arrows, flow);
  EXPECT_EQ(d.things.size(), g.node_count() + g.inputs().size() + g.outputs().size());

  // Marked: exactly the nodes the model before did not have, each with a rule of the catalog.
  // SkipLayerNormalization is by the rule of that name (or by SkipLayerNormalizationBias, which rebuilds
  // it with the bias of the linear layer before), seed_llm's single-head MultiHeadAttention by
  // MultiHeadAttentionOneHead.
  std::set<std::string> names_before;
  for (ir::NodeId n : before.graph->nodes()) names_before.insert(before.graph->node(n).name);
  int new_nodes = 0;
  for (ir::NodeId n : g.nodes()) {
    const ir::Node& node = g.node(n);
    const std::string& label = d.things.at(id_of[n]);
    const auto by = label.find("\\nby ");
    if (names_before.count(node.name)) {
      EXPECT_EQ(by, std::string::npos) << label;
      continue;
    }
    ++new_nodes;
    ASSERT_NE(by, std::string::npos) << label;
    const std::string rule = label.substr(by + 5, label.find('"', by) - by - 5);
    EXPECT_NO_THROW(xexp::rewrite::rules_from_string(rule)) << rule;
    if (node.op_type.view() == "SkipLayerNormalization") {
      EXPECT_TRUE(rule == "SkipLayerNormalization" || rule == "SkipLayerNormalizationBias") << rule;
    }
    if (node.op_type.view() == "MultiHeadAttention") {
      EXPECT_EQ(rule, "MultiHeadAttentionOneHead");
    }
  }
  EXPECT_GE(new_nodes, 4);
  // Each LayerNormalization reads an Add; the one after the MLP also takes its output layer's bias.
  EXPECT_EQ(d.marked_rules["SkipLayerNormalization"], 1);
  EXPECT_EQ(d.marked_rules["SkipLayerNormalizationBias"], 1);
  EXPECT_EQ(d.marked_rules["MultiHeadAttentionOneHead"], 2);  // one per attention head
}

TEST(CliDot, WritesTheDrawingAndRendersSvg) {
  xexp::testing::TempDir dir;
  const std::string model = (kModels / "seed_llm.onnx").string();
  const std::string optimized = dir / "opt.onnx";
  ASSERT_EQ(xexp::testing::run_xexp(joined({"optimize ", model, " -o ", optimized})).exit_code, 0);

  const xexp::testing::CommandResult text = xexp::testing::run_xexp(joined({"dot ", model, " ", optimized}));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("digraph model {\n", 0), 0u);
  EXPECT_NE(text.out.find("label=\"opt.onnx (from seed_llm.onnx)\\ngreen: made by a rule, named in the box\""), std::string::npos);
  EXPECT_FALSE(parse(text.out).marked_rules.empty());

  const std::string dot_file = dir / "g.dot";
  const xexp::testing::CommandResult to_file = xexp::testing::run_xexp(joined({"dot ", model, " -o ", dot_file}));
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  EXPECT_EQ(xexp::testing::read_file(dot_file).rfind("digraph model {\n", 0), 0u);

  const std::string svg = dir / "g.svg";
  const std::string render = joined({"dot ", model, " ", optimized, " --svg -o ", svg});
  if (std::system("command -v dot >/dev/null 2>&1") == 0) {
    const xexp::testing::CommandResult r = xexp::testing::run_xexp(render);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string picture = xexp::testing::read_file(svg);
    EXPECT_NE(picture.find("<svg"), std::string::npos);
    EXPECT_NE(picture.find(">by "), std::string::npos);
  }
  // Without Graphviz: one error line saying what to install, and no file.
  const std::string empty_path = dir / "empty";
  std::filesystem::create_directory(empty_path);
  const xexp::testing::CommandResult missing = xexp::testing::run_command(
      joined({"PATH=", xexp::testing::shell_quote(empty_path), " ", xexp::testing::shell_quote(XEXP_CLI), " ", render, "2"}));
  xexp::testing::expect_one_error_line(missing, "no Graphviz");
  EXPECT_NE(missing.err.find("apt-get install graphviz"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(joined({svg, "2"})));
}
