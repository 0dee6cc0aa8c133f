// The printer's text follows the Python original's pretty_onnx look line by line.
#include <gtest/gtest.h>

#include "xexp/tools/printer.hpp"

using namespace xexp;
using namespace xexp::ir;
using xexp::tools::pretty;

namespace {

ValueId node(Graph& g, Symbol op, std::vector<ValueId> inputs, const std::string& output,
             std::vector<Attribute> attributes = {}, Symbol domain = {}) {
  ValueId out = g.add_value(output);
  g.add_node(op, std::move(inputs), {out}, std::move(attributes), {}, domain);
  return out;
}

OpsetImport opset(const std::string& domain, int64_t version) {
  OpsetImport o;
  o.domain = domain;
  o.version = version;
  return o;
}

}  // namespace

TEST(Printer, SmallModelLooksLikeTheOriginal) {
  Model m;
  m.opsets = {opset("", 18)};
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{Dim::symbolic("a"), Dim::symbolic("b")});
  ValueId w = g.add_initializer("init1_s3x1_", Tensor::from<float>({3, 1}, {0.4f, 0.5f, 0.6f}));
  ValueId b = g.add_initializer("init1_s1x3_", Tensor::from<float>({1, 3}, {0.4f, 0.5f, 0.6f}));
  ValueId mm = node(g, "MatMul", {x, w}, "_onx_matmul0");
  g.add_output(node(g, "Add", {mm, b}, "Y"));
  g.value(g.at("Y")).elem = ElemType::Float;
  g.value(g.at("Y")).shape = Shape{Dim::symbolic("a")};
  EXPECT_EQ(pretty(m),
            "opset: domain='' version=18\n"
            "input: name='X' type=dtype('float32') shape=['a', 'b']\n"
            "init: name='init1_s3x1_' type=float32 shape=(3, 1) -- array([0.4, 0.5, 0.6], dtype=float32)\n"
            "init: name='init1_s1x3_' type=float32 shape=(1, 3) -- array([0.4, 0.5, 0.6], dtype=float32)\n"
            "MatMul(X, init1_s3x1_) -> _onx_matmul0\n"
            "  Add(_onx_matmul0, init1_s1x3_) -> Y\n"
            "output: name='Y' type=dtype('float32') shape=['a']\n");
}

TEST(Printer, InitializerValuesAreNumpyLike) {
  Graph g;
  g.add_initializer("i", Tensor::from<int64_t>({3}, {1, 30, -1}));
  g.add_initializer("f", Tensor::from<float>({2}, {1.0f, 0.25f}));
  g.add_initializer("s", Tensor::scalar<float>(0.25f));
  g.add_initializer("d", Tensor::from<double>({1}, {-std::numeric_limits<double>::infinity()}));
  g.add_initializer("big", Tensor(ElemType::Float, {256, 256}));
  EXPECT_EQ(pretty(g),
            "init: name='i' type=int64 shape=(3,) -- array([ 1, 30, -1])\n"
            "init: name='f' type=float32 shape=(2,) -- array([1.  , 0.25], dtype=float32)\n"
            "init: name='s' type=float32 shape=() -- array([0.25], dtype=float32)\n"
            "init: name='d' type=float64 shape=(1,) -- array([-inf])\n"
            "init: name='big' type=float32 shape=(256, 256)\n");
}

// Indentation is one more than the shallowest produced input: the seed's LLM printout.
TEST(Printer, IndentsByDataFlowDepth) {
  Graph g;
  ValueId ids = g.add_input("input_ids", ElemType::Int64, Shape{1, 30});
  ValueId emb = g.add_initializer("emb", Tensor(ElemType::Float, {1024, 16}));
  ValueId e1 = node(g, "Gather", {emb, ids}, "embedding");
  ValueId e2 = node(g, "Gather", {emb, ids}, "embedding_1");
  ValueId add = node(g, "Add", {e1, e2}, "add");
  ValueId norm = node(g, "LayerNormalization", {add}, "norm",
                      {Attribute::make_int("axis", -1), Attribute::make_float("epsilon", 1e-5f)});
  ValueId t = node(g, "Transpose", {emb}, "t", {Attribute::make_ints("perm", {1, 0})});
  ValueId mm = node(g, "MatMul", {norm, t}, "mm");
  node(g, "Relu", {mm}, "relu");
  EXPECT_EQ(pretty(g),
            "input: name='input_ids' type=dtype('int64') shape=[1, 30]\n"
            "init: name='emb' type=float32 shape=(1024, 16)\n"
            "Gather(emb, input_ids) -> embedding\n"
            "Gather(emb, input_ids) -> embedding_1\n"
            "  Add(embedding, embedding_1) -> add\n"
            "    LayerNormalization(add, axis=-1, epsilon=1e-05) -> norm\n"
            "Transpose(emb, perm=[1,0]) -> t\n"
            "  MatMul(norm, t) -> mm\n"
            "    Relu(mm) -> relu\n");
  EXPECT_EQ(pretty(g, {.max_init_values = 10, .indent = false, .functions = true}).find("  "), std::string::npos);
}

TEST(Printer, AttributesOfEveryCommonKind) {
  Graph g;
  ValueId x = g.add_input("x", ElemType::Float16, Shape{Dim::symbolic("n"), Dim()});
  node(g, "Constant", {}, "c1", {Attribute::make_tensor("value", Tensor::from<float>({16}, std::vector<float>(16, 1.0f)))});
  node(g, "Constant", {}, "c2", {Attribute::make_tensor("value", Tensor::scalar<float>(0.25f))});
  node(g, "Constant", {}, "c3", {Attribute::make_tensor("value", Tensor::from<int64_t>({2}, {-1, 32}))});
  node(g, "Pad", {x, ir::kNone}, "p", {Attribute::make_string("mode", "reflect")});
  node(g, "Custom", {x}, "y",
       {Attribute::make_floats("scales", {0.5f, 2.0f}), Attribute::make_strings("names", {"a", "b"})}, "my.domain");
  EXPECT_EQ(pretty(g),
            "input: name='x' type=dtype('float16') shape=['n', '?']\n"
            "Constant(value=[1.0, 1.0,...) -> c1\n"
            "Constant(value=0.25) -> c2\n"
            "Constant(value=[-1, 32]) -> c3\n"
            "Pad(x, , mode='reflect') -> p\n"
            "Custom[my.domain](x, scales=[0.5,2], names=['a','b']) -> y\n");
}

TEST(Printer, SubgraphsAreNestedUnderTheirNode) {
  Graph g;
  ValueId cond = g.add_input("cond", ElemType::Bool, Shape{});
  auto branch = [&](const char* name, float v) {
    auto sub = std::make_shared<Graph>();
    sub->name = name;
    sub->parent = &g;
    ValueId c = sub->add_initializer(std::string(name) + "_c", Tensor::scalar<float>(v));
    ValueId o = sub->add_value(std::string(name) + "_out");
    sub->add_node("Identity", {c}, {o});
    sub->add_output(o);
    return sub;
  };
  ValueId y = node(g, "If", {cond}, "y",
                   {Attribute::make_graph("then_branch", branch("then", 1.0f)),
                    Attribute::make_graph("else_branch", branch("else", 0.0f))});
  node(g, "Neg", {y}, "z");
  EXPECT_EQ(pretty(g),
            "input: name='cond' type=dtype('bool') shape=[]\n"
            "If(cond, then_branch=<graph 'then'>, else_branch=<graph 'else'>) -> y\n"
            "  ----- then_branch: graph name='then'\n"
            "    init: name='then_c' type=float32 shape=() -- array([1.], dtype=float32)\n"
            "    Identity(then_c) -> then_out\n"
            "    output: name='then_out' type=? shape=?\n"
            "  ----- else_branch: graph name='else'\n"
            "    init: name='else_c' type=float32 shape=() -- array([0.], dtype=float32)\n"
            "    Identity(else_c) -> else_out\n"
            "    output: name='else_out' type=? shape=?\n"
            "  Neg(y) -> z\n");
}

TEST(Printer, LocalFunctionsFollowTheMainGraph) {
  Model m;
  m.opsets = {opset("", 18), opset("aten_local_function", 1)};
  m.doc_string = "large_model=False, inline=False, external_threshold=1024, and more";
  Graph& g = *m.graph;
  ValueId x = g.add_input("x", ElemType::Float, Shape{1, 5});
  g.add_output(node(g, "Linear", {x}, "y", {}, "aten_local_function"));
  Function& f = m.functions.emplace_back();
  f.name = "Linear";
  f.domain = "aten_local_function";
  f.attributes = {"alpha"};
  f.opsets = {opset("", 18)};
  ValueId fx = f.body->add_input("x");
  Attribute alpha = Attribute::blank("alpha", AttrType::Float);
  alpha.ref_attr_name = "alpha";
  f.body->add_output(node(*f.body, "LeakyRelu", {fx}, "output", {alpha}));
  EXPECT_EQ(pretty(m),
            "opset: domain='' version=18\n"
            "opset: domain='aten_local_function' version=1\n"
            "doc_string: large_model=False, inline=False, external_threshold=102...\n"
            "input: name='x' type=dtype('float32') shape=[1, 5]\n"
            "Linear[aten_local_function](x) -> y\n"
            "output: name='y' type=? shape=?\n"
            "----- function name=Linear domain=aten_local_function\n"
            "opset: domain='' version=18\n"
            "input: 'x'\n"
            "attribute: 'alpha'\n"
            "LeakyRelu(x, alpha=@alpha) -> output\n"
            "output: name='output' type=? shape=?\n");
  EXPECT_EQ(pretty(m, {.max_init_values = 10, .indent = true, .functions = false}).find("-----"), std::string::npos);
}
