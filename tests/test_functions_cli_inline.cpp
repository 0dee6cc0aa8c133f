// `xexp inline` as registered by add_inline_command, run in process (main.cpp wires it for the binary).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "../tools/xexp/cmd_inline.hpp"
#include "support/temp_dir.hpp"

using namespace xexp;
using namespace xexp::ir;

namespace {

// Y = F(F(X)) with F(x) = Neg(x), plus a function nobody calls.
Model model_with_calls() {
  Model m;
  m.opsets = {{"", 18, {}}, {"local", 1, {}}};
  for (const char* name : {"F", "Unused"}) {
    Function& f = m.functions.emplace_back();
    f.name = name;
    f.domain = "local";
    f.opsets = {{"", 18, {}}};
    ValueId x = f.body->add_input("x"), y = f.body->add_value("y");
    f.body->add_node("Neg", {x}, {y}, {}, "neg");
    f.body->add_output(y);
  }
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2});
  ValueId a = g.add_value("a"), y = g.add_value("Y");
  g.value(y).elem = ElemType::Float;
  g.add_node("F", {x}, {a}, {}, "f1", "local");
  g.add_node("F", {a}, {y}, {}, "f2", "local");
  g.add_output(y);
  return m;
}

void run_cli(std::vector<std::string> args) {
  CLI::App app;
  cli::add_inline_command(app);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments in reverse order
  app.parse(args);
}

}  // namespace

TEST(FunctionsCliInline, WritesTheInlinedModel) {
  xexp::testing::TempDir dir;
  save_model(model_with_calls(), dir / "in.onnx");
  run_cli({"inline", dir / "in.onnx", "-o", dir / "out.onnx"});
  Model out = load_model(dir / "out.onnx");
  EXPECT_TRUE(out.functions.empty());
  std::vector<std::string> names;
  for (NodeId n : out.graph->nodes()) names.push_back(out.graph->node(n).name + ":" + out.graph->node(n).op_type.str());
  EXPECT_EQ(names, (std::vector<std::string>{"neg__1:Neg", "neg__2:Neg"}));
}

TEST(FunctionsCliInline, KeepsTheNamedFunctions) {
  xexp::testing::TempDir dir;
  save_model(model_with_calls(), dir / "in.onnx");
  run_cli({"inline", dir / "in.onnx", "-o", dir / "out.onnx", "--keep", "F"});
  Model out = load_model(dir / "out.onnx");
  ASSERT_EQ(out.functions.size(), 1u);
  EXPECT_EQ(out.functions[0].name, "F");
  EXPECT_EQ(out.graph->node_count(), 2u);
}

TEST(FunctionsCliInline, BadArgumentsAreErrors) {
  xexp::testing::TempDir dir;
  save_model(model_with_calls(), dir / "in.onnx");
  EXPECT_THROW(run_cli({"inline", dir / "in.onnx", "-o", dir / "out.onnx", "--keep", "G"}), Error);
  EXPECT_THROW(run_cli({"inline", dir / "in.onnx", "-o", dir / "in.onnx"}), Error);
  EXPECT_THROW(run_cli({"inline", dir / "missing.onnx", "-o", dir / "out.onnx"}), Error);
}
