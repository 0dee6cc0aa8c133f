#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "xexp/eval/evaluator.hpp"
#include "xexp/functions/inliner.hpp"
#include "xexp/ir/copy.hpp"
#include "xexp/optimizer/optimize_model.hpp"

using namespace xexp;
using namespace xexp::ir;
using xexp::functions::inline_functions;
using xexp::functions::InlineOptions;

namespace {

// One line per node: "name: Op(in1,in2)->out1" (omitted optionals printed as "").
std::vector<std::string> listing(const Graph& g) {
  std::vector<std::string> lines;
  for (NodeId id : g.nodes()) {
    const Node& n = g.node(id);
    std::string line = n.name + ": " + n.op_type.str() + "(";
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      line += (i ? "," : "") + (n.inputs[i] == kNone ? std::string() : g.value(n.inputs[i]).name);
    line += ")->";
    for (std::size_t i = 0; i < n.outputs.size(); ++i)
      line += (i ? "," : "") + (n.outputs[i] == kNone ? std::string() : g.value(n.outputs[i]).name);
    lines.push_back(line);
  }
  return lines;
}

Function& add_function(Model& m, std::string name, std::vector<std::string> inputs) {
  Function& f = m.functions.emplace_back();
  f.name = std::move(name);
  f.domain = "local";
  f.opsets = {{"", 18, {}}};
  for (auto& in : inputs) f.body->add_input(in);
  return f;
}

// Adds node `op` reading values by name and producing new values `outs` (created here).
NodeId node(Graph& g, const char* op, std::vector<std::string> ins, std::vector<std::string> outs,
            std::string name = {}, Symbol domain = {}, std::vector<Attribute> attrs = {}) {
  std::vector<ValueId> in_ids, out_ids;
  for (auto& s : ins) in_ids.push_back(s.empty() ? kNone : g.at(s));
  for (auto& s : outs) out_ids.push_back(s.empty() ? kNone : g.add_value(s));
  return g.add_node(op, in_ids, out_ids, std::move(attrs), std::move(name), domain);
}

void outputs(Graph& g, std::vector<std::string> names) {
  for (auto& s : names) g.add_output(g.at(s));
}

// F(x, w) -> y: MatMul then Relu, with named nodes.
void add_matmul_relu(Model& m) {
  Function& f = add_function(m, "F", {"x", "w"});
  node(*f.body, "MatMul", {"x", "w"}, {"t"}, "mm");
  node(*f.body, "Relu", {"t"}, {"y"}, "relu");
  outputs(*f.body, {"y"});
}

Model base_model() {
  Model m;
  m.opsets = {{"", 18, {}}, {"local", 1, {}}};
  m.graph->add_input("X", ElemType::Float, Shape{2, 2});
  m.graph->add_initializer("W", Tensor::from<float>({2, 2}, {1, 2, 3, 4}));
  return m;
}

}  // namespace

TEST(FunctionsInliner, TwoCallsGetSuffixesOneAndTwo) {
  Model m = base_model();
  add_matmul_relu(m);
  node(*m.graph, "F", {"X", "W"}, {"a"}, "call1", "local");
  node(*m.graph, "F", {"a", "W"}, {"Y"}, "call2", "local");
  outputs(*m.graph, {"Y"});
  inline_functions(m);
  EXPECT_EQ(listing(*m.graph), (std::vector<std::string>{
                                   "mm__1: MatMul(X,W)->t__1",
                                   "relu__1: Relu(t__1)->a",
                                   "mm__2: MatMul(a,W)->t__2",
                                   "relu__2: Relu(t__2)->Y",
                               }));
  EXPECT_TRUE(m.functions.empty());
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).name, "Y");
  EXPECT_EQ(m.graph->value(m.graph->at("Y")).producer, 3u);
}

TEST(FunctionsInliner, NestedCallsAreNumberedDepthFirst) {
  Model m = base_model();
  add_matmul_relu(m);
  Function& g = add_function(m, "G", {"x"});
  node(*g.body, "F", {"x", "x"}, {"u"}, "inner", "local");
  node(*g.body, "Neg", {"u"}, {"y"}, "neg");
  outputs(*g.body, {"y"});
  node(*m.graph, "G", {"X"}, {"a"}, "g1", "local");
  node(*m.graph, "G", {"a"}, {"Y"}, "g2", "local");
  outputs(*m.graph, {"Y"});
  inline_functions(m);
  // g1 is call 1, its inner F call 2, g2 call 3, its inner F call 4.
  EXPECT_EQ(listing(*m.graph), (std::vector<std::string>{
                                   "mm__2: MatMul(X,X)->t__2",
                                   "relu__2: Relu(t__2)->u__1",
                                   "neg__1: Neg(u__1)->a",
                                   "mm__4: MatMul(a,a)->t__4",
                                   "relu__4: Relu(t__4)->u__3",
                                   "neg__3: Neg(u__3)->Y",
                               }));
  EXPECT_TRUE(m.functions.empty());
}

TEST(FunctionsInliner, TakenSuffixedNamesGetAnIndex) {
  Model m = base_model();
  add_matmul_relu(m);
  node(*m.graph, "Neg", {"X"}, {"t__1"}, "mm__1");
  node(*m.graph, "F", {"t__1", "W"}, {"Y"}, "call", "local");
  outputs(*m.graph, {"Y"});
  inline_functions(m);
  EXPECT_EQ(listing(*m.graph), (std::vector<std::string>{
                                   "mm__1: Neg(X)->t__1",
                                   "mm__1_1: MatMul(t__1,W)->t__1_1",
                                   "relu__1: Relu(t__1_1)->Y",
                               }));
}

TEST(FunctionsInliner, AttributeReferencesBindFromCallThenDefaults) {
  Model m = base_model();
  Function& f = add_function(m, "H", {"x"});
  f.attributes = {"alpha", "perm", "unset"};
  f.attribute_defaults.push_back(Attribute::make_ints("perm", {1, 0}));
  Attribute alpha = Attribute::make_float("alpha", 0);
  alpha.ref_attr_name = "alpha";
  Attribute perm = Attribute::blank("perm", AttrType::Ints);
  perm.ref_attr_name = "perm";
  Attribute unset = Attribute::blank("axis", AttrType::Int);
  unset.ref_attr_name = "unset";
  node(*f.body, "LeakyRelu", {"x"}, {"l"}, "lr", {}, {alpha});
  node(*f.body, "Transpose", {"l"}, {"y"}, "tr", {}, {perm, unset});
  outputs(*f.body, {"y"});
  node(*m.graph, "H", {"X"}, {"Y"}, "call", "local", {Attribute::make_float("alpha", 0.25f)});
  outputs(*m.graph, {"Y"});
  inline_functions(m);
  ASSERT_EQ(m.graph->node_count(), 2u);
  const Node& lr = m.graph->node(0);
  ASSERT_EQ(lr.attributes.size(), 1u);
  EXPECT_EQ(lr.attributes[0].name, Symbol("alpha"));
  EXPECT_EQ(lr.attributes[0].f, 0.25f);
  EXPECT_TRUE(lr.attributes[0].ref_attr_name.empty());
  const Node& tr = m.graph->node(1);
  ASSERT_EQ(tr.attributes.size(), 1u);  // "unset" has no value and no default: omitted
  EXPECT_EQ(tr.attributes[0].name, Symbol("perm"));
  EXPECT_EQ(tr.attributes[0].ints, (std::vector<int64_t>{1, 0}));
}

TEST(FunctionsInliner, CallInsideAnIfBranch) {
  Model m = base_model();
  add_matmul_relu(m);
  m.graph->add_input("C", ElemType::Bool, Shape{});
  auto then_branch = std::make_shared<Graph>();
  then_branch->parent = m.graph.get();
  then_branch->add_captured("X");
  then_branch->add_captured("W");
  node(*then_branch, "F", {"X", "W"}, {"r"}, "branch_call", "local");
  outputs(*then_branch, {"r"});
  auto else_branch = std::make_shared<Graph>();
  else_branch->parent = m.graph.get();
  else_branch->add_captured("X");
  node(*else_branch, "Identity", {"X"}, {"r2"}, "id");
  outputs(*else_branch, {"r2"});
  NodeId if_node = node(*m.graph, "If", {"C"}, {"Y"}, "if", {},
                        {Attribute::make_graph("then_branch", then_branch),
                         Attribute::make_graph("else_branch", else_branch)});
  m.graph->add_captured_use(if_node, m.graph->at("X"));
  m.graph->add_captured_use(if_node, m.graph->at("W"));
  outputs(*m.graph, {"Y"});
  inline_functions(m);
  EXPECT_TRUE(m.functions.empty());
  EXPECT_EQ(listing(*then_branch), (std::vector<std::string>{
                                       "mm__1: MatMul(X,W)->t__1",
                                       "relu__1: Relu(t__1)->r",
                                   }));
  EXPECT_EQ(then_branch->value(then_branch->outputs()[0]).name, "r");
}

TEST(FunctionsInliner, SubgraphsInsideBodiesFollowTheRenaming) {
  Model m = base_model();
  m.graph->add_input("C", ElemType::Bool, Shape{});
  Function& f = add_function(m, "K", {"c", "x"});
  node(*f.body, "Neg", {"x"}, {"t"}, "neg");
  auto branch = std::make_shared<Graph>();
  branch->parent = f.body.get();
  branch->add_captured("t");
  branch->add_captured("x");
  node(*branch, "Add", {"t", "x"}, {"r"}, "add");
  outputs(*branch, {"r"});
  auto other = std::make_shared<Graph>();
  other->parent = f.body.get();
  other->add_captured("x");
  node(*other, "Abs", {"x"}, {"r"}, "abs");
  outputs(*other, {"r"});
  NodeId if_node = node(*f.body, "If", {"c"}, {"y"}, "if", {},
                        {Attribute::make_graph("then_branch", branch), Attribute::make_graph("else_branch", other)});
  f.body->add_captured_use(if_node, f.body->at("t"));
  f.body->add_captured_use(if_node, f.body->at("x"));
  outputs(*f.body, {"y"});
  node(*m.graph, "K", {"C", "X"}, {"a"}, "k1", "local");
  node(*m.graph, "K", {"C", "a"}, {"Y"}, "k2", "local");
  outputs(*m.graph, {"Y"});
  inline_functions(m);
  ASSERT_EQ(listing(*m.graph), (std::vector<std::string>{
                                   "neg__1: Neg(X)->t__1",
                                   "if__1: If(C)->a",
                                   "neg__2: Neg(a)->t__2",
                                   "if__2: If(C)->Y",
                               }));
  const Node& if2 = m.graph->node(3);
  const Graph& then2 = *if2.attribute("then_branch")->graph();
  EXPECT_EQ(then2.parent, m.graph.get());
  EXPECT_EQ(listing(then2), (std::vector<std::string>{"add__2: Add(t__2,a)->r__2"}));
  EXPECT_EQ(listing(*if2.attribute("else_branch")->graph()), (std::vector<std::string>{"abs__2: Abs(a)->r__2"}));
  ASSERT_EQ(if2.captured.size(), 2u);
  EXPECT_EQ(m.graph->value(if2.captured[0]).name, "t__2");
  EXPECT_EQ(m.graph->value(if2.captured[1]).name, "a");
  // The function's own subgraph is untouched by the copies (it was deep copied, not shared).
  EXPECT_NE(if2.attribute("then_branch")->graph().get(), branch.get());
}

TEST(FunctionsInliner, MissingOutputsGetDummyNamesAndPassThroughGetsIdentity) {
  Model m = base_model();
  Function& f = add_function(m, "S", {"x"});
  node(*f.body, "Neg", {"x"}, {"y"}, "neg");
  node(*f.body, "Abs", {"x"}, {"z"}, "abs");
  outputs(*f.body, {"y", "z", "x"});
  node(*m.graph, "S", {"X"}, {"", "B", "P"}, "s", "local");
  outputs(*m.graph, {"B", "P"});
  inline_functions(m);
  EXPECT_EQ(listing(*m.graph), (std::vector<std::string>{
                                   "neg__1: Neg(X)->y__1",
                                   "abs__1: Abs(X)->B",
                                   "s__1: Identity(X)->P",
                               }));
}

TEST(FunctionsInliner, KeptFunctionsStayAndTheirBodiesAreInlined) {
  Model m = base_model();
  add_matmul_relu(m);
  Function& g = add_function(m, "G", {"x"});
  node(*g.body, "F", {"x", "x"}, {"y"}, "inner", "local");
  outputs(*g.body, {"y"});
  node(*m.graph, "G", {"X"}, {"Y"}, "g", "local");
  outputs(*m.graph, {"Y"});
  InlineOptions options;
  options.inline_function = [](const Function& f) { return f.name != "G"; };
  inline_functions(m, options);
  ASSERT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].name, "G");
  EXPECT_EQ(listing(*m.graph), (std::vector<std::string>{"g: G(X)->Y"}));
  EXPECT_EQ(listing(*m.functions[0].body), (std::vector<std::string>{
                                                "mm__1: MatMul(x,x)->t__1",
                                                "relu__1: Relu(t__1)->y",
                                            }));
}

TEST(FunctionsInliner, OpsetsOfFunctionsAreImported) {
  Model m = base_model();
  Function& f = add_function(m, "F", {"x"});
  f.opsets.push_back({"com.microsoft", 1, {}});
  node(*f.body, "Gelu", {"x"}, {"y"}, "gelu", "com.microsoft");
  outputs(*f.body, {"y"});
  node(*m.graph, "F", {"X"}, {"Y"}, "f", "local");
  outputs(*m.graph, {"Y"});
  inline_functions(m);
  EXPECT_EQ(m.opset("com.microsoft"), 1);
}

TEST(FunctionsInliner, BadInputsThrow) {
  {
    Model m = base_model();
    Function& f = add_function(m, "R", {"x"});
    node(*f.body, "R", {"x"}, {"y"}, "self", "local");
    outputs(*f.body, {"y"});
    node(*m.graph, "R", {"X"}, {"Y"}, "r", "local");
    outputs(*m.graph, {"Y"});
    EXPECT_THROW(inline_functions(m), Error);
  }
  {
    Model m = base_model();
    add_matmul_relu(m);
    node(*m.graph, "F", {"X", "W", "X"}, {"Y"}, "too_many", "local");
    outputs(*m.graph, {"Y"});
    try {
      inline_functions(m);
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.node(), "too_many");
    }
  }
  {
    Model m = base_model();
    Function& f = add_function(m, "F", {"x"});
    f.opsets = {{"", 13, {}}};
    node(*f.body, "Neg", {"x"}, {"y"});
    outputs(*f.body, {"y"});
    node(*m.graph, "F", {"X"}, {"Y"}, "f", "local");
    outputs(*m.graph, {"Y"});
    EXPECT_THROW(inline_functions(m), Error);
    EXPECT_EQ(m.graph->node_count(), 1u);  // refused before anything changed
  }
}

// What optimize_model inlines: Y = Block(aten_neg(X)), aten_neg a torch_lib function (Neg), Block a
// module's function (Relu). By default only the op library's call goes; `All` inlines both, `None`
// neither; the numbers stay. A torch_lib function whose opset clashes with the model's stays a function
// by default, and is the user's error when all are asked for.
namespace {

Model torch_lib_and_module(int64_t torch_lib_opset = 18) {
  Model m;
  m.opsets = {{"", 18, {}}, {"pkg.onnxscript.torch_lib", 1, {}}, {"aten_local_function", 1, {}}};
  m.graph->add_input("X", ElemType::Float, Shape{2, 3});
  Function& neg = add_function(m, "aten_neg", {"self"});
  neg.domain = "pkg.onnxscript.torch_lib";
  neg.opsets = {{"", torch_lib_opset, {}}};
  node(*neg.body, "Neg", {"self"}, {"result"}, "n0");
  outputs(*neg.body, {"result"});
  Function& block = add_function(m, "Block", {"x"});
  block.domain = "aten_local_function";
  node(*block.body, "Relu", {"x"}, {"y"}, "relu");
  outputs(*block.body, {"y"});
  node(*m.graph, "aten_neg", {"X"}, {"neg"}, "neg_call", "pkg.onnxscript.torch_lib");
  node(*m.graph, "Block", {"neg"}, {"Y"}, "block_call", "aten_local_function");
  outputs(*m.graph, {"Y"});
  return m;
}

std::vector<std::string> function_names(const Model& m) {
  std::vector<std::string> names;
  for (const Function& f : m.functions) names.push_back(f.name);
  return names;
}

}  // namespace

TEST(FunctionsInliner, OptimizeInlinesOpLibraryFunctionsAndKeepsModules) {
  const Tensor x = Tensor::from<float>({2, 3}, {-1, 2, -3, 4, -5, 6});
  const std::vector<float> expected{1, 0, 3, 0, 5, 0};
  struct Mode {
    optimizer::InlineFunctions mode;
    std::vector<std::string> functions_left, graph;
  };
  const Mode modes[] = {
      {optimizer::InlineFunctions::OpLibraries, {"Block"}, {"n0__1: Neg(X)->neg", "block_call: Block(neg)->Y"}},
      {optimizer::InlineFunctions::All, {}, {"n0__1: Neg(X)->neg", "relu__2: Relu(neg)->Y"}},
      {optimizer::InlineFunctions::None,
       {"aten_neg", "Block"},
       {"neg_call: aten_neg(X)->neg", "block_call: Block(neg)->Y"}},
  };
  for (const Mode& mode : modes) {
    Model m = torch_lib_and_module();
    std::ostringstream log;
    const optimizer::OptimizeModelReport report =
        optimizer::optimize_model(m, {.patterns = "none", .inline_functions = mode.mode, .log = &log});
    EXPECT_EQ(function_names(m), mode.functions_left);
    EXPECT_EQ(listing(*m.graph), mode.graph);
    EXPECT_EQ(report.inlined, 2 - mode.functions_left.size());
    eval::Evaluator ours(m);
    const std::vector<Tensor> got = ours.run({{"X", x}});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(std::vector<float>(got[0].data<float>().begin(), got[0].data<float>().end()), expected);
  }
}

TEST(FunctionsInliner, OptimizeKeepsOpLibraryFunctionsWhoseOpsetClashes) {
  Model m = torch_lib_and_module(17);
  std::ostringstream log;
  optimizer::optimize_model(m, {.patterns = "none", .verbose = 1, .log = &log});
  EXPECT_EQ(function_names(m), (std::vector<std::string>{"aten_neg", "Block"}));
  EXPECT_NE(log.str().find("op-library functions kept: node 'pkg.onnxscript.torch_lib.aten_neg': the function "
                           "imports opset ai.onnx version 17, the model version 18"),
            std::string::npos)
      << log.str();
  Model all = torch_lib_and_module(17);
  EXPECT_THROW(optimizer::optimize_model(all, {.patterns = "none", .inline_functions = optimizer::InlineFunctions::All,
                                           .log = &log}),
               Error);
}

TEST(IrCopy, CloneIsDeepAndKeepsNames) {
  Model m = base_model();
  Graph& g = *m.graph;
  auto branch = std::make_shared<Graph>();
  branch->parent = &g;
  branch->add_captured("X");
  node(*branch, "Neg", {"X"}, {"r"}, "neg");
  outputs(*branch, {"r"});
  m.graph->add_input("C", ElemType::Bool, Shape{});
  NodeId if_node = node(g, "If", {"C"}, {"Y"}, "if", {},
                        {Attribute::make_graph("then_branch", branch), Attribute::make_graph("else_branch", branch)});
  g.add_captured_use(if_node, g.at("X"));
  node(g, "MatMul", {"Y", "W"}, {"Z"}, "mm");
  outputs(g, {"Z"});
  std::unique_ptr<Graph> c = clone(g);
  EXPECT_EQ(listing(*c), listing(g));
  EXPECT_EQ(c->inputs().size(), 2u);
  ASSERT_EQ(c->initializers().size(), 1u);
  EXPECT_TRUE(c->value(c->initializers()[0]).initializer->same_content(*g.value(g.at("W")).initializer));
  EXPECT_EQ(c->value(c->at("X")).shape, (Shape{2, 2}));
  const Node& cif = c->node(c->first_node());
  ASSERT_EQ(cif.captured.size(), 1u);
  EXPECT_EQ(c->value(cif.captured[0]).name, "X");
  const auto& then_copy = cif.attribute("then_branch")->graph();
  EXPECT_NE(then_copy.get(), branch.get());
  EXPECT_EQ(then_copy->parent, c.get());
  EXPECT_EQ(listing(*then_copy), listing(*branch));
}
