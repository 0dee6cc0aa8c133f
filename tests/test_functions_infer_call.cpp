#include <gtest/gtest.h>

#include "xexp/functions/infer_call.hpp"

using namespace xexp;
using namespace xexp::ir;
using xexp::functions::infer_model;

namespace {

// F(x, w, shape) -> y: Reshape(Relu(MatMul(x, w)), shape).
void add_f(Model& m) {
  Function& f = m.functions.emplace_back();
  f.name = "F";
  f.domain = "local";
  f.opsets = {{"", 18, {}}};
  Graph& b = *f.body;
  ValueId x = b.add_input("x"), w = b.add_input("w"), shape = b.add_input("shape");
  ValueId t = b.add_value("t"), r = b.add_value("r"), y = b.add_value("y");
  b.add_node("MatMul", {x, w}, {t});
  b.add_node("Relu", {t}, {r});
  b.add_node("Reshape", {r, shape}, {y});
  b.add_output(y);
}

// G(x, w, shape) -> y: Neg(F(x, w, shape)), a call inside a body.
void add_g(Model& m) {
  Function& f = m.functions.emplace_back();
  f.name = "G";
  f.domain = "local";
  f.opsets = {{"", 18, {}}, {"local", 1, {}}};
  Graph& b = *f.body;
  ValueId x = b.add_input("x"), w = b.add_input("w"), shape = b.add_input("shape");
  ValueId u = b.add_value("u"), y = b.add_value("y");
  b.add_node("F", {x, w, shape}, {u}, {}, "inner", "local");
  b.add_node("Neg", {u}, {y});
  b.add_output(y);
}

}  // namespace

TEST(FunctionsInferCall, OutputsFollowEachCallSite) {
  Model m;
  m.opsets = {{"", 18, {}}, {"local", 1, {}}};
  add_f(m);
  add_g(m);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{Dim::symbolic("batch"), 3});
  ValueId w = g.add_initializer("W", Tensor::from<float>({3, 4}, std::vector<float>(12, 1.f)));
  ValueId w2 = g.add_initializer("W2", Tensor::from<float>({4, 2}, std::vector<float>(8, 1.f)));
  ValueId flat = g.add_initializer("flat", Tensor::from<int64_t>({1}, {-1}));
  ValueId keep = g.add_initializer("keep", Tensor::from<int64_t>({2}, {0, 0}));
  ValueId a = g.add_value("a"), b = g.add_value("b");
  g.add_node("F", {x, w, keep}, {a}, {}, "f1", "local");
  g.add_node("G", {a, w2, flat}, {b}, {}, "g1", "local");
  g.add_output(b);
  infer_model(m);
  EXPECT_EQ(g.value(a).elem, ElemType::Float);
  ASSERT_TRUE(g.value(a).shape);
  EXPECT_EQ(*g.value(a).shape, (Shape{Dim::symbolic("batch"), 4}));
  ASSERT_TRUE(g.value(b).shape);
  EXPECT_EQ(g.value(b).shape->size(), 1u);
  EXPECT_EQ(g.value(b).elem, ElemType::Float);
  // The bodies stay free of call-site types.
  EXPECT_EQ(m.functions[0].body->value(m.functions[0].body->at("t")).elem, ElemType::Undefined);
}

TEST(FunctionsInferCall, ConflictWithADeclaredTypeNamesTheCall) {
  Model m;
  m.opsets = {{"", 18, {}}, {"local", 1, {}}};
  add_f(m);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId w = g.add_initializer("W", Tensor::from<float>({3, 4}, std::vector<float>(12, 1.f)));
  ValueId keep = g.add_initializer("keep", Tensor::from<int64_t>({2}, {0, 0}));
  ValueId a = g.add_value("a");
  g.value(a).elem = ElemType::Int64;  // F computes float (a declared shape would give way, not a type)
  g.add_node("F", {x, w, keep}, {a}, {}, "f1", "local");
  g.add_output(a);
  try {
    infer_model(m);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.node(), "f1");
    EXPECT_EQ(e.value(), "a");
  }
}

TEST(FunctionsInferCall, RecursionIsRefused) {
  Model m;
  m.opsets = {{"", 18, {}}, {"local", 1, {}}};
  Function& f = m.functions.emplace_back();
  f.name = "R";
  f.domain = "local";
  ValueId fx = f.body->add_input("x");
  ValueId fy = f.body->add_value("y");
  f.body->add_node("R", {fx}, {fy}, {}, "self", "local");
  f.body->add_output(fy);
  ValueId x = m.graph->add_input("X", ElemType::Float, Shape{2});
  ValueId y = m.graph->add_value("Y");
  m.graph->add_node("R", {x}, {y}, {}, "r", "local");
  m.graph->add_output(y);
  EXPECT_THROW(infer_model(m), Error);
}
