#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "xexp/functions/module_export.hpp"

using namespace xexp;
using namespace xexp::ir;
using xexp::functions::export_modules_as_functions;
using xexp::functions::FunctionExportOptions;

namespace {

std::vector<std::string> listing(const Graph& g) {
  std::vector<std::string> lines;
  for (NodeId id : g.nodes()) {
    const Node& n = g.node(id);
    std::string line = n.op_type.str() + "(";
    for (std::size_t i = 0; i < n.inputs.size(); ++i) line += (i ? "," : "") + g.value(n.inputs[i]).name;
    line += ")->";
    for (std::size_t i = 0; i < n.outputs.size(); ++i) line += (i ? "," : "") + g.value(n.outputs[i]).name;
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> names(const Graph& g, const std::vector<ValueId>& ids) {
  std::vector<std::string> out;
  for (ValueId id : ids) out.push_back(g.value(id).name);
  return out;
}

std::vector<std::string> function_names(const Model& m) {
  std::vector<std::string> out;
  for (const Function& f : m.functions) out.push_back(f.name);
  return out;
}

// A plain model recording scopes: node(op, ins, out, scopes).
struct PlainModel {
  Model model;
  std::vector<ModuleStack> scopes;
  PlainModel() {
    model.opsets = {{"", 18, {}}};
    model.graph->add_input("X", ElemType::Float, Shape{2, 4});
  }
  xexp::functions::ModuleStackOf stack_of() const {
    return [this](NodeId id) -> const ModuleStack& { return scopes.at(id); };
  }
  void weight(const std::string& name, float fill, int64_t rows = 4) {
    model.graph->add_initializer(name, Tensor::from<float>({rows, 4}, std::vector<float>(rows * 4, fill)));
  }
  void node(const char* op, std::vector<std::string> ins, const std::string& out, ModuleStack stack,
            std::vector<Attribute> attrs = {}) {
    Graph& g = *model.graph;
    std::vector<ValueId> in_ids;
    for (auto& s : ins) in_ids.push_back(g.at(s));
    NodeId id = g.add_node(op, in_ids, {g.add_value(out)}, std::move(attrs));
    scopes.resize(id + 1);
    scopes[id] = std::move(stack);
  }
  // Linear in module `path`: Transpose(w) then MatMul(x, .).
  void linear(const std::string& x, const std::string& w, const std::string& y, ModuleStack outer, const std::string& path) {
    outer.push_back({path, "Linear"});
    node("Transpose", {w}, path + ".t", outer, {Attribute::make_ints("perm", {1, 0})});
    node("MatMul", {x, path + ".t"}, y, outer);
  }
};

}  // namespace

TEST(FunctionsModuleExport, SameModulesShareOneFunctionAndWeightsArePassed) {
  PlainModel p;
  p.weight("W1", 1.f);
  p.weight("W2", 2.f);
  p.linear("X", "W1", "y1", {}, "l1");
  p.linear("y1", "W2", "y2", {}, "l2");
  p.node("Relu", {"y2"}, "Y", {});
  p.model.graph->add_output(p.model.graph->at("Y"));
  p.model.graph->value(p.model.graph->at("y1")).shape = Shape{2, 4};
  FunctionExportOptions options;
  options.external_threshold = 0;
  Model m = export_modules_as_functions(p.model, p.stack_of(), options);
  EXPECT_EQ(function_names(m), (std::vector<std::string>{"Linear"}));
  EXPECT_EQ(listing(*m.graph), (std::vector<std::string>{"Linear(X,W1)->y1", "Linear(y1,W2)->y2", "Relu(y2)->Y"}));
  EXPECT_EQ(m.graph->node(0).name, "l1");
  EXPECT_EQ(m.graph->node(0).domain, Symbol("aten_local_function"));
  EXPECT_EQ(m.opset("aten_local_function"), 1);
  EXPECT_EQ(m.graph->value(m.graph->at("y1")).shape, (Shape{2, 4}));  // call outputs keep their types
  const Graph& body = *m.functions[0].body;
  EXPECT_EQ(names(body, body.inputs()), (std::vector<std::string>{"X", "W1"}));
  EXPECT_EQ(listing(body), (std::vector<std::string>{"Transpose(W1)->l1.t", "MatMul(X,l1.t)->output"}));
  EXPECT_EQ(body.value(body.at("l1.t")).elem, ElemType::Undefined);
  EXPECT_EQ(m.functions[0].opsets.size(), 1u);
}

TEST(FunctionsModuleExport, NestedModulesBecomeNestedFunctions) {
  PlainModel p;
  p.weight("W1", 1.f);
  p.weight("W2", 2.f);
  p.weight("Wbig", 3.f, 8);
  const ModuleStack block = {{"b", "Block"}};
  p.linear("X", "W1", "y1", block, "b.l1");
  p.linear("y1", "W2", "y2", block, "b.l2");
  p.node("Add", {"y2", "X"}, "s", block);
  p.node("Shape", {"Wbig"}, "shape", block);
  p.node("Reshape", {"s", "shape"}, "Y", {});
  p.model.graph->add_output(p.model.graph->at("Y"));
  FunctionExportOptions options;
  options.external_threshold = 0;
  Model m = export_modules_as_functions(p.model, p.stack_of(), options);
  EXPECT_EQ(function_names(m), (std::vector<std::string>{"Linear", "Block"}));
  // Weights after the real input, by decreasing size then decreasing name.
  EXPECT_EQ(listing(*m.graph), (std::vector<std::string>{"Block(X,Wbig,W2,W1)->s,shape", "Reshape(s,shape)->Y"}));
  const Function& b = m.functions[1];
  EXPECT_EQ(listing(*b.body), (std::vector<std::string>{"Linear(X,W1)->y1", "Linear(y1,W2)->y2",
                                                         "Add(y2,X)->output_0", "Shape(Wbig)->output_1"}));
  EXPECT_EQ(b.opsets.size(), 2u);
  EXPECT_EQ(ir::find_opset(b.opsets, "aten_local_function"), 1);
}

TEST(FunctionsModuleExport, SmallWeightsBecomeConstantsAndDifferentBodiesAreRenamed) {
  PlainModel p;
  p.weight("W1", 1.f);
  p.weight("W2", 2.f);
  p.weight("Wbig", 3.f, 16);  // 256 bytes: not under the default threshold
  p.linear("X", "W1", "y1", {}, "l1");
  p.linear("y1", "W2", "y2", {}, "l2");
  p.node("Transpose", {"Wbig"}, "l3.t", {{"l3", "Linear"}}, {Attribute::make_ints("perm", {1, 0})});
  p.node("MatMul", {"y2", "l3.t"}, "Y", {{"l3", "Linear"}});
  p.model.graph->add_output(p.model.graph->at("Y"));
  Model m = export_modules_as_functions(p.model, p.stack_of());
  EXPECT_EQ(function_names(m), (std::vector<std::string>{"Linear", "Linear_l2l", "Linear_l3l"}));
  EXPECT_EQ(listing(*m.graph), (std::vector<std::string>{"Linear(X)->y1", "Linear_l2l(y1)->y2", "Linear_l3l(y2,Wbig)->Y"}));
  EXPECT_EQ(listing(*m.functions[0].body), (std::vector<std::string>{"Constant()->W1", "Transpose(W1)->l1.t",
                                                                      "MatMul(X,l1.t)->output"}));
  EXPECT_EQ(names(*m.graph, m.graph->initializers()), (std::vector<std::string>{"Wbig"}));
}

TEST(FunctionsModuleExport, FilteredModulesStayInTheirParent) {
  PlainModel p;
  p.weight("W1", 1.f);
  const ModuleStack block = {{"b", "Block"}};
  p.linear("X", "W1", "y1", block, "b.l1");
  p.node("Relu", {"y1"}, "Y", block);
  p.model.graph->add_output(p.model.graph->at("Y"));
  FunctionExportOptions options;
  options.external_threshold = 0;
  options.export_module = [](const ModuleScope& s) { return s.type != "Linear"; };
  Model m = export_modules_as_functions(p.model, p.stack_of(), options);
  EXPECT_EQ(function_names(m), (std::vector<std::string>{"Block"}));
  EXPECT_EQ(listing(*m.functions[0].body),
            (std::vector<std::string>{"Transpose(W1)->b.l1.t", "MatMul(X,b.l1.t)->y1", "Relu(y1)->output"}));
}
