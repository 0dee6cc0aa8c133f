#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "xexp/ir/cleanup.hpp"
#include "xexp/ir/duplicates.hpp"
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

// A graph cut down to one of its values: the outputs it had are no longer outputs, and what only they
// needed goes with remove_unused.
TEST(IrGraph, SetOutputsCutsTheGraphDownToTheValuesGiven) {
  Graph g;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2});
  ValueId t = g.add_value("t");
  g.add_node("Neg", {x}, {t});
  ValueId y = g.add_value("Y");
  g.add_node("Relu", {t}, {y});
  g.add_output(y);
  g.set_outputs({t});
  EXPECT_EQ(g.outputs(), (std::vector<ValueId>{t}));
  EXPECT_TRUE(g.value(t).is_graph_output());
  EXPECT_FALSE(g.value(y).is_graph_output());
  EXPECT_EQ(remove_unused(g), 1u);
  ASSERT_EQ(g.node_count(), 1u);
  EXPECT_EQ(g.node(*g.nodes().begin()).op_type.view(), "Neg");
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

TEST(IrGraph, IsReadCountsNodesSubgraphsAndOutputs) {
  Graph g;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2});
  ValueId a = g.add_value("a"), b = g.add_value("b"), c = g.add_value("c");
  NodeId neg = g.add_node("Neg", {x}, {a});
  g.add_node("Abs", {x}, {b});
  NodeId loop = g.add_node("If", {x}, {c});
  EXPECT_FALSE(g.value(a).is_read());
  EXPECT_FALSE(g.any_output_read(neg));
  g.add_captured_use(loop, a);  // a subgraph of the If reads `a`
  EXPECT_TRUE(g.value(a).is_read());
  EXPECT_TRUE(g.any_output_read(neg));
  g.add_output(b);
  EXPECT_TRUE(g.value(b).is_read());
  EXPECT_TRUE(g.value(x).is_read());
  EXPECT_FALSE(g.value(c).is_read());
}

TEST(IrCleanup, DuplicatedShapesMergeIntoTheFirstInExecutionOrder) {
  Graph g;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId s1 = g.add_value("s1"), s2 = g.add_value("s2"), s3 = g.add_value("s3"), s4 = g.add_value("s4");
  ValueId out = g.add_value("out"), kept = g.add_value("kept");
  NodeId concat = g.add_node("Concat", {s1, s2, s3, s4}, {out}, {Attribute::make_int("axis", 0)});
  // Created after the Concat but inserted before it: use order is not execution order.
  g.add_node("Shape", {x}, {s2}, {Attribute::make_int("start", 0)}, "second", {}, concat);
  g.add_node("Shape", {x}, {s3}, {Attribute::make_int("start", 1)}, "other_bounds", {}, concat);
  g.add_node("Shape", {x}, {s4}, {}, "third", {}, concat);
  NodeId first = g.add_node("Shape", {x}, {s1}, {}, "first", {}, g.first_node());
  g.add_node("Shape", {x}, {kept}, {}, "an_output");
  g.add_output(out);
  g.add_output(kept);
  std::vector<ValueId> touched;
  // An absent start is start=0: three Shape nodes select the same dimensions; the graph output stays.
  EXPECT_EQ(remove_duplicated_nodes(g, x, touched), 2u);
  const Node& c = g.node(concat);
  EXPECT_EQ(c.inputs, (std::vector<ValueId>{s1, s1, s3, s1}));
  EXPECT_EQ(g.value(s1).producer, first);
  EXPECT_EQ(g.node_count(), 4u);
  EXPECT_EQ(remove_duplicated_nodes(g), 0u);
}

// Two layers sharing a weight, each transposing it and casting the result, then one differing only by
// an attribute, one random op and one of another domain: one pass keeps one Transpose and one Cast.
TEST(IrCleanup, DuplicatedChainsMergeWholeInOnePass) {
  Graph g;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 2});
  ValueId w = g.add_initializer("W", Tensor::from<float>({2, 2}, {1, 2, 3, 4}));
  std::vector<ValueId> y;
  for (const char* layer : {"a", "b"}) {
    const std::string l = layer;
    ValueId t = g.add_value("t" + l), c = g.add_value("c" + l), m = g.add_value("m" + l);
    g.add_node("Transpose", {w}, {t}, {Attribute::make_ints("perm", {1, 0})});
    g.add_node("Cast", {t}, {c}, {Attribute::make_int("to", 10)});
    g.add_node("MatMul", {x, c}, {m});
    y.push_back(m);
  }
  ValueId other = g.add_value("other"), r1 = g.add_value("r1"), r2 = g.add_value("r2");
  ValueId d1 = g.add_value("d1"), d2 = g.add_value("d2");
  g.add_node("Cast", {g.at("ta")}, {other}, {Attribute::make_int("to", 1)});
  g.add_node("RandomUniformLike", {x}, {r1});
  g.add_node("RandomUniformLike", {x}, {r2});
  g.add_node("Relu", {x}, {d1}, {}, "", Symbol("custom"));
  g.add_node("Relu", {x}, {d2}, {}, "", Symbol("custom"));
  for (ValueId v : {y[0], y[1], other, r1, r2, d1, d2}) g.add_output(v);
  // The second MatMul computes the first's product too, but it is a graph output: it stays.
  EXPECT_EQ(remove_duplicated_nodes(g), 2u);
  const Node& second = g.node(g.value(y[1]).producer);
  EXPECT_EQ(second.inputs[1], g.node(g.value(y[0]).producer).inputs[1]);
  EXPECT_EQ(g.node_count(), 9u);
}

TEST(IrCleanup, EqualSmallInitializersMergeButNotInputsOrOutputs) {
  Graph g;
  ValueId x = g.add_input("X", ElemType::Int64, Shape{2});
  const Tensor axes = Tensor::from<int64_t>({1}, {0});
  ValueId a = g.add_initializer("a", axes), b = g.add_initializer("b", axes);
  ValueId other_type = g.add_initializer("c", Tensor::from<int32_t>({1}, {0}));
  ValueId fed = g.add_initializer("fed", axes);
  g.value(fed).is_input = true;
  g.set_inputs({x, fed});
  ValueId shown = g.add_initializer("shown", axes);
  std::vector<ValueId> outs;
  for (ValueId v : {a, b, other_type, fed}) {
    outs.push_back(g.add_value("u" + g.value(v).name));
    g.add_node("Unsqueeze", {x, v}, {outs.back()});
    g.add_output(outs.back());
  }
  g.add_output(shown);
  EXPECT_EQ(merge_equal_initializers(g), 1u);
  EXPECT_EQ(g.node(g.value(outs[1]).producer).inputs[1], a);
  EXPECT_EQ(g.initializers(), (std::vector<ValueId>{a, other_type, fed, shown}));
  EXPECT_FALSE(g.value(b).alive);
}

// Equal tables merge whatever their size; a table differing in its last element, or holding the same
// bytes with other dims, stays.
TEST(IrCleanup, EqualLargeInitializersMergeOnTheirBytes) {
  Graph g;
  std::vector<float> values(256 * 256, 0.0f);
  for (std::size_t k = 0; k < values.size(); k += 257) values[k] = 1.0f;
  std::vector<float> last_differs = values;
  last_differs.back() = 2.0f;
  ValueId a = g.add_initializer("a", Tensor::from<float>({256, 256}, values));
  ValueId b = g.add_initializer("b", Tensor::from<float>({256, 256}, values));
  ValueId c = g.add_initializer("c", Tensor::from<float>({256, 256}, last_differs));
  ValueId d = g.add_initializer("d", Tensor::from<float>({65536}, values));
  std::vector<ValueId> outs;
  for (ValueId v : {a, b, c, d}) {
    outs.push_back(g.add_value("n" + g.value(v).name));
    g.add_node("Neg", {v}, {outs.back()});
    g.add_output(outs.back());
  }
  EXPECT_EQ(merge_equal_initializers(g), 1u);
  EXPECT_EQ(g.node(g.value(outs[1]).producer).inputs[0], a);
  EXPECT_EQ(g.initializers(), (std::vector<ValueId>{a, c, d}));
}

TEST(IrCleanup, IdentityAndUnusedNodesKeepTheGraphInterface) {
  Graph g;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2});
  ValueId a = g.add_value("a"), b = g.add_value("b"), y = g.add_value("Y"), z = g.add_value("Z");
  ValueId dead1 = g.add_value("dead1"), dead2 = g.add_value("dead2");
  g.add_node("Identity", {x}, {a});
  g.add_node("Neg", {a}, {b});
  g.add_node("Identity", {b}, {y});
  g.add_node("Identity", {x}, {z});  // X cannot be renamed Z: this one stays
  g.add_node("Exp", {b}, {dead1});
  g.add_node("Abs", {dead1}, {dead2});
  g.add_output(y);
  g.add_output(z);
  EXPECT_EQ(remove_identity_nodes(g), 2u);
  EXPECT_EQ(remove_unused(g), 2u);
  std::vector<std::string> ops;
  for (NodeId n : g.nodes()) ops.push_back(g.node(n).op_type.str());
  EXPECT_EQ(ops, (std::vector<std::string>{"Neg", "Identity"}));
  EXPECT_EQ(g.value(g.outputs()[0]).name, "Y");
  EXPECT_EQ(g.node(g.value(g.outputs()[0]).producer).op_type.view(), "Neg");
  EXPECT_EQ(g.value(g.outputs()[1]).name, "Z");
}
