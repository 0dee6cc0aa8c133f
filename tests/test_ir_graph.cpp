#include <gtest/gtest.h>

#include "xexp/ir/graph.hpp"

using namespace xexp;
using namespace xexp::ir;

TEST(IrGraph, ProducersConsumersAndOrder) {
  Graph g;
  ValueId x = g.add_input("X", ElemType::Float, Shape{Dim::symbolic("a"), 3});
  ValueId w = g.add_initializer("W", Tensor::from<float>({3, 1}, {0.4f, 0.5f, 0.6f}));
  ValueId mm = g.add_value("mm");
  NodeId n1 = g.add_node("MatMul", {x, w}, {mm}, {}, "n1");
  ValueId y = g.add_value("Y");
  NodeId n2 = g.add_node("Relu", {mm}, {y}, {}, "n2");
  g.add_output(y);
  EXPECT_EQ(g.value(mm).producer, n1);
  ASSERT_EQ(g.value(mm).uses.size(), 1u);
  EXPECT_EQ(g.value(mm).uses[0], (Use{n2, 0}));
  EXPECT_EQ(g.node_count(), 2u);
  std::vector<NodeId> order(g.nodes().begin(), g.nodes().end());
  EXPECT_EQ(order, (std::vector<NodeId>{n1, n2}));
  EXPECT_THROW(g.add_value("X"), Error);
}

TEST(IrGraph, ReplaceGraphOutputKeepsItsName) {
  Graph g;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2});
  ValueId t = g.add_value("t");
  NodeId n1 = g.add_node("Neg", {x}, {t});
  ValueId y = g.add_value("Y");
  NodeId n2 = g.add_node("Identity", {t}, {y});
  g.add_output(y);
  g.replace_all_uses(y, t);
  g.remove_node(n2);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "Y");
  EXPECT_EQ(g.value(g.outputs()[0]).producer, n1);
  g.compact();
  EXPECT_EQ(g.node_count(), 1u);
  EXPECT_EQ(g.value(g.at("Y")).producer, 0u);
}

TEST(IrGraph, ReplaceOutputByInputInsertsIdentity) {
  Graph g;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2});
  ValueId y = g.add_value("Y");
  NodeId n = g.add_node("Identity", {x}, {y});
  g.add_output(y);
  g.replace_all_uses(y, x);
  g.remove_node(n);
  g.compact();
  ASSERT_EQ(g.node_count(), 1u);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "Y");
  EXPECT_EQ(g.node(g.first_node()).inputs[0], g.at("X"));
}

TEST(IrGraph, InsertBeforeAndRemoveWhileIterating) {
  Graph g;
  ValueId x = g.add_input("X");
  ValueId a = g.add_value("a"), b = g.add_value("b");
  NodeId na = g.add_node("Neg", {x}, {a});
  NodeId nb = g.add_node("Neg", {x}, {b}, {}, "", {}, na);
  EXPECT_EQ(g.first_node(), nb);
  for (NodeId id : g.nodes()) g.remove_node(id);
  EXPECT_EQ(g.node_count(), 0u);
  EXPECT_EQ(g.first_node(), kNone);
}

TEST(IrGraph, UniqueNames) {
  Graph g;
  g.add_input("t");
  EXPECT_EQ(g.unique_value_name("u"), "u");
  EXPECT_EQ(g.unique_value_name("t"), "t_1");
  g.add_value("t_1");
  EXPECT_EQ(g.unique_value_name("t"), "t_2");
}
