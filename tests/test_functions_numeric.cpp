// Numbers through local functions: a model with nested calls, attribute references and calls inside
// an If branch gives the same outputs with its functions and inlined, in our evaluator and in ONNX
// Runtime.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/compare.hpp"
#include "support/ort.hpp"
#include "support/temp_dir.hpp"
#include "xexp/eval/evaluator.hpp"
#include "xexp/functions/inliner.hpp"
#include "xexp/onnx/save.hpp"

using namespace xexp;
using namespace xexp::ir;
using namespace xexp::testing;

namespace {

ValueId typed(Graph& g, const std::string& name) {
  ValueId id = g.add_value(name);
  g.value(id).elem = ElemType::Float;
  return id;
}

Attribute ref(const char* name, AttrType type, const char* ref_name) {
  Attribute a = Attribute::blank(name, type);
  a.ref_attr_name = ref_name;
  return a;
}

// F(x, w; alpha) = LeakyRelu(MatMul(x, w), alpha)
// G(x, w; beta)  = F(x, w; alpha=0.5) + F(F(x, w; 0.5), w; alpha=beta)
// main(X, C)     = a + If(C, F(a, W; alpha=0.2), Neg(a)) with a = G(X, W; beta=0.1)
Model nested_model() {
  Model m;
  m.opsets = {{"", 18, {}}, {"local", 1, {}}};
  {
    Function& f = m.functions.emplace_back();
    f.name = "F";
    f.domain = "local";
    f.attributes = {"alpha"};
    f.opsets = {{"", 18, {}}};
    Graph& b = *f.body;
    ValueId x = b.add_input("x"), w = b.add_input("w"), t = b.add_value("t"), y = b.add_value("y");
    b.add_node("MatMul", {x, w}, {t}, {}, "mm");
    b.add_node("LeakyRelu", {t}, {y}, {ref("alpha", AttrType::Float, "alpha")}, "lrelu");
    b.add_output(y);
  }
  {
    Function& g = m.functions.emplace_back();
    g.name = "G";
    g.domain = "local";
    g.attributes = {"beta"};
    g.opsets = {{"", 18, {}}, {"local", 1, {}}};
    Graph& b = *g.body;
    ValueId x = b.add_input("x"), w = b.add_input("w");
    ValueId u = b.add_value("u"), v = b.add_value("v"), y = b.add_value("y");
    b.add_node("F", {x, w}, {u}, {Attribute::make_float("alpha", 0.5f)}, "f1", "local");
    b.add_node("F", {u, w}, {v},
               {ref("alpha", AttrType::Float, "beta")}, "f2",
               "local");
    b.add_node("Add", {u, v}, {y}, {}, "add");
    b.add_output(y);
  }
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId c = g.add_input("C", ElemType::Bool, Shape{});
  ValueId w = g.add_initializer("W", Tensor::from<float>({3, 3}, {0.5f, -1.f, 0.25f, 2.f, -0.5f, 1.f, -1.5f, 0.75f, 0.1f}));
  ValueId a = typed(g, "a");
  g.add_node("G", {x, w}, {a}, {Attribute::make_float("beta", 0.1f)}, "g", "local");

  auto then_branch = std::make_shared<Graph>();
  then_branch->parent = &g;
  then_branch->name = "then";
  ValueId ta = then_branch->add_captured("a"), tw = then_branch->add_captured("W");
  ValueId tr = typed(*then_branch, "then_out");
  then_branch->add_node("F", {ta, tw}, {tr}, {Attribute::make_float("alpha", 0.2f)}, "f_then", "local");
  then_branch->add_output(tr);
  auto else_branch = std::make_shared<Graph>();
  else_branch->parent = &g;
  else_branch->name = "else";
  ValueId ea = else_branch->add_captured("a");
  ValueId er = typed(*else_branch, "else_out");
  else_branch->add_node("Neg", {ea}, {er}, {}, "neg");
  else_branch->add_output(er);
  ValueId b = typed(g, "b");
  NodeId if_node = g.add_node("If", {c}, {b},
                              {Attribute::make_graph("then_branch", then_branch),
                               Attribute::make_graph("else_branch", else_branch)},
                              "if");
  g.add_captured_use(if_node, a);
  g.add_captured_use(if_node, w);
  ValueId y = typed(g, "Y");
  g.value(y).shape = Shape{2, 3};
  g.add_node("Add", {a, b}, {y}, {}, "sum");
  g.add_output(y);
  return m;
}

NamedTensors evaluate(const Model& m, const NamedTensors& feeds) {
  eval::Evaluator evaluator(m);
  std::vector<Tensor> values = evaluator.run(feeds);
  NamedTensors out;
  std::vector<std::string> names = evaluator.output_names();
  for (std::size_t k = 0; k < values.size(); ++k) out.emplace_back(names[k], values[k]);
  return out;
}

NamedTensors feeds_with(bool condition) {
  return {{"X", Tensor::from<float>({2, 3}, {1.f, -2.f, 0.5f, 0.f, 3.f, -1.f})},
          {"C", Tensor::from<bool>({}, {condition})}};
}

}  // namespace

// The nested call forwards an attribute reference: the evaluator must resolve it against the caller.
TEST(FunctionsNumeric, InliningKeepsTheOutputsInOurEvaluator) {
  Model with_functions = nested_model();
  Model inlined = nested_model();
  functions::inline_functions(inlined);
  ASSERT_TRUE(inlined.functions.empty());
  for (bool condition : {true, false}) {
    SCOPED_TRACE(condition);
    expect_all_close(evaluate(inlined, feeds_with(condition)), evaluate(with_functions, feeds_with(condition)), 1e-6, 1e-6);
  }
}

TEST(FunctionsNumeric, InliningKeepsTheOutputsInOnnxRuntime) {
  TempDir dir;
  save_model(nested_model(), dir / "functions.onnx");
  Model inlined = nested_model();
  functions::inline_functions(inlined);
  save_model(inlined, dir / "inlined.onnx");
  for (bool condition : {true, false}) {
    SCOPED_TRACE(condition);
    const NamedTensors expected = run_onnxruntime(dir / "functions.onnx", feeds_with(condition));
    expect_all_close(run_onnxruntime(dir / "inlined.onnx", feeds_with(condition)), expected, 1e-6, 1e-6);
    expect_all_close(evaluate(inlined, feeds_with(condition)), expected, 1e-5, 1e-5);
    expect_all_close(evaluate(nested_model(), feeds_with(condition)), expected, 1e-5, 1e-5);
  }
}
