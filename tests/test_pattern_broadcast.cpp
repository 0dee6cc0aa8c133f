// ReshapeReshapeBinary, ExpandBroadcast, ShapeBasedExpandBroadcast (binary ops and Where), Reshape2Of3: the
// exact op sequence after, one negative test per condition, and the same numbers before and after (xexp's
// evaluator and ONNX Runtime, float32, exactly). None of these rewrites changes arithmetic.
#include <gtest/gtest.h>

#include <optional>

#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::constant_ints;
using test::input_name;
using test::int64_initializer;
using test::node;
using test::op_types;
using test::OpList;
using test::run_rules;
using OpSeq = std::vector<std::string>;

static const Node& output_producer(const Graph& g) { return g.node(g.value(g.outputs()[0]).producer); }

// ---- ReshapeReshapeBinary -------------------------------------------------------------------------
static Model rrb_model(Shape y_shape, std::vector<int64_t> second_target) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  ValueId y = g.add_input("Y", ElemType::Float, y_shape);
  ValueId left = node(g, "Reshape", {x, int64_initializer(g, "s1", {6, 4})});
  ValueId right = node(g, "Reshape", {y, int64_initializer(g, "s2", second_target)});
  g.add_output(node(g, "Sub", {left, right}));
  return m;
}

TEST(PatternReshapeReshapeBinary, OneReshapeAfterTheOp) {
  Model m = rrb_model({2, 3, 4}, {6, 4});
  run_rules(m, "ReshapeReshapeBinary");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Sub", "Reshape"}));
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).shape, (Shape{6, 4}));
}

TEST(PatternReshapeReshapeBinary, NotWithDifferentTargets) {
  Model m = rrb_model({2, 3, 4}, {6, -1});
  run_rules(m, "ReshapeReshapeBinary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Reshape", "Reshape", "Sub"}));
}

TEST(PatternReshapeReshapeBinary, NotWithDifferentInputShapes) {
  Model m = rrb_model({6, 4}, {6, 4});
  run_rules(m, "ReshapeReshapeBinary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Reshape", "Reshape", "Sub"}));
}

TEST(PatternReshapeReshapeBinary, SameNumbers) {
  test::expect_same_outputs([] { return rrb_model({2, 3, 4}, {6, 4}); }, "ReshapeReshapeBinary");
}

// ---- ExpandBroadcast ------------------------------------------------------------------------------
// Less(Y(3, 4), Expand(X, target)) or the Expand on the left.
static Model expand_broadcast_model(Shape x_shape, std::vector<int64_t> target, bool expand_left) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, x_shape);
  ValueId y = g.add_input("Y", ElemType::Float, Shape{3, 4});
  ValueId e = node(g, "Expand", {x, int64_initializer(g, "target", target)});
  g.add_output(node(g, "Less", expand_left ? std::vector<ValueId>{e, y} : std::vector<ValueId>{y, e}));
  return m;
}

TEST(PatternExpandBroadcast, TheOpBroadcastsItself) {
  for (bool left : {true, false}) {
    Model m = expand_broadcast_model({1, 4}, {3, 4}, left);
    run_rules(m, "ExpandBroadcast");
    ASSERT_EQ(op_types(*m.graph), (OpSeq{"Less"}));
    const Graph& g = *m.graph;
    EXPECT_EQ(g.value(output_producer(g).inputs[left ? 0 : 1]).name, "X");
  }
}

TEST(PatternExpandBroadcast, NotWhenTheExpandGrowsTheOutput) {
  // Y(3, 4) < X(3, 1) expanded to (2, 3, 4): ranks differ, the Expand decides the output shape.
  Model m = expand_broadcast_model({3, 1}, {2, 3, 4}, true);
  run_rules(m, "ExpandBroadcast");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Expand", "Less"}));
}

TEST(PatternExpandBroadcast, NotWithAComputedShape) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{1, 4});
  ValueId y = g.add_input("Y", ElemType::Float, Shape{3, 4});
  g.add_output(node(g, "Add", {node(g, "Expand", {x, node(g, "Shape", {y})}), y}));
  run_rules(m, "ExpandBroadcast");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Shape", "Expand", "Add"}));
}

TEST(PatternExpandBroadcast, SameNumbers) {
  test::expect_same_outputs([] { return expand_broadcast_model({1, 4}, {3, 4}, true); }, "ExpandBroadcast");
  test::expect_same_outputs([] { return expand_broadcast_model({3, 1}, {3, 4}, false); }, "ExpandBroadcast");
}

// Sub(ConstantOfShape(Shape(Y), value), Y) and Add(Y, the same), as torch writes ones_like(y) - y; the
// ConstantOfShape of `fill_dims` when given (a shape that grows the output), else of Shape(Y).
static Model fill_model(std::optional<std::vector<int64_t>> fill_dims = std::nullopt) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId y = g.add_input("Y", ElemType::Float, Shape{3, 4});
  ValueId shape = fill_dims ? int64_initializer(g, "dims", *fill_dims) : node(g, "Shape", {y});
  ValueId fill = test::constant_of_shape(g, shape, 1.5f);
  g.add_output(node(g, "Sub", {fill, y}));
  g.add_output(node(g, "Add", {y, fill}));
  return m;
}

TEST(PatternExpandBroadcast, AConstantOfShapeTheOtherOperandBroadcastsIsItsValue) {
  Model m = fill_model();
  run_rules(m, "ExpandBroadcast");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpSeq{"Sub", "Add"}));
  for (std::size_t k : {0u, 1u}) {
    const Node& n = g.node(g.value(g.outputs()[k]).producer);
    const ValueId filled = n.inputs[k == 0 ? 0 : 1];
    ASSERT_TRUE(g.value(filled).initializer.has_value());
    EXPECT_EQ(g.value(filled).initializer->dims(), std::vector<int64_t>{});
    EXPECT_EQ(g.value(filled).initializer->data<float>()[0], 1.5f);
  }
}

TEST(PatternExpandBroadcast, NotWhenTheConstantOfShapeGrowsTheOutput) {
  Model m = fill_model(std::vector<int64_t>{2, 3, 4});
  run_rules(m, "ExpandBroadcast");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"ConstantOfShape", "Sub", "Add"}));
}

TEST(PatternExpandBroadcast, AConstantOfShapeSameNumbers) {
  test::expect_same_outputs([] { return fill_model(); }, "ExpandBroadcast");
}

// ---- ShapeBasedExpandBroadcast --------------------------------------------------------------------
// Mul(Expand(X(3, 1), s), Expand(Y, t)) (or Y itself) with s = t = [3, 4], two distinct constants.
static Model sbeb_model(Shape y_shape, bool expand_y) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{3, 1});
  ValueId y = g.add_input("Y", ElemType::Float, y_shape);
  ValueId right = expand_y ? node(g, "Expand", {y, int64_initializer(g, "t", {3, 4})}) : y;
  g.add_output(node(g, "Mul", {node(g, "Expand", {x, int64_initializer(g, "s", {3, 4})}), right}));
  return m;
}

TEST(PatternShapeBasedExpandBroadcast, BothExpandsGo) {
  Model m = sbeb_model({1, 4}, true);
  run_rules(m, "ShapeBasedExpandBroadcast");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Mul"}));
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).shape, (Shape{3, 4}));
}

TEST(PatternShapeBasedExpandBroadcast, OneExpandGoes) {
  Model m = sbeb_model({3, 4}, false);
  run_rules(m, "ShapeBasedExpandBroadcast");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Mul"}));
}

TEST(PatternShapeBasedExpandBroadcast, AnExpandGivingTheOnlyFullDimensionStays) {
  // X(3, 1) * Y(1, 1): only Y's Expand gives the 4, X's Expand can still go.
  Model m = sbeb_model({1, 1}, true);
  run_rules(m, "ShapeBasedExpandBroadcast");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Expand", "Mul"}));
  EXPECT_EQ(m.graph->value(output_producer(*m.graph).inputs[0]).name, "X");
}

TEST(PatternShapeBasedExpandBroadcast, SameNumbers) {
  test::expect_same_outputs([] { return sbeb_model({1, 4}, true); }, "ShapeBasedExpandBroadcast");
  test::expect_same_outputs([] { return sbeb_model({1, 1}, true); }, "ShapeBasedExpandBroadcast");
}

// Where(Expand(C, s), fill, Expand(K, s)) with s = [2, 1, 5, 5]: a padding mask C (2, 1, 1, 5) and a
// causal mask K (k_shape), both expanded to (batch, 1, seq, seq) as torch's attention masks are.
static Model where_expand_model(Shape k_shape, bool expand_fill = false) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId c = g.add_input("C", ElemType::Bool, Shape{2, 1, 1, 5});
  ValueId k = g.add_input("K", ElemType::Float, std::move(k_shape));
  ValueId fill = g.add_initializer("fill", Tensor::from<float>({1}, {-3.0f}));
  auto expanded = [&](ValueId v, const char* name) {
    return node(g, "Expand", {v, int64_initializer(g, name, {2, 1, 5, 5})});
  };
  g.add_output(
      node(g, "Where", {expanded(c, "s"), expand_fill ? expanded(fill, "u") : fill, expanded(k, "t")}));
  return m;
}

TEST(PatternShapeBasedExpandBroadcast, WhereBroadcastsItsThreeInputs) {
  for (bool expand_fill : {false, true}) {
    Model m = where_expand_model({1, 1, 5, 5}, expand_fill);
    run_rules(m, "ShapeBasedExpandBroadcast");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpSeq{"Where"})) << expand_fill;
    const Node& where = output_producer(g);
    EXPECT_EQ(g.value(where.inputs[0]).name, "C");
    EXPECT_EQ(g.value(where.inputs[1]).name, "fill");
    EXPECT_EQ(g.value(where.inputs[2]).name, "K");
    EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{2, 1, 5, 5}));
  }
}

TEST(PatternShapeBasedExpandBroadcast, WhereKeepsTheExpandThatGivesTheOnlyFullDimension) {
  // K (5,) and C (2, 1, 1, 5): the second 5 of (2, 1, 5, 5) comes from the Expands only; C's goes
  // first and K's must then stay.
  Model m = where_expand_model({5});
  run_rules(m, "ShapeBasedExpandBroadcast");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpSeq{"Expand", "Where"}));
  EXPECT_EQ(g.value(output_producer(g).inputs[0]).name, "C");
  EXPECT_EQ(g.value(g.node(g.first_node()).inputs[0]).name, "K");
}

TEST(PatternShapeBasedExpandBroadcast, WhereSameNumbers) {
  test::expect_same_outputs(
      [] {
        return where_expand_model({1, 1, 5, 5}, true);
      },
      "ShapeBasedExpandBroadcast");
  test::expect_same_outputs([] { return where_expand_model({5}); }, "ShapeBasedExpandBroadcast");
}

namespace {

// ---- Reshape2Of3 ----------------------------------------------------------------------------------
struct Around {
  bool x_first = true;
  Shape y_shape = {6, 4};
  std::vector<int64_t> back = {2, 3, 4};
};
Model reshaped_around(const Around& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  ValueId y = g.add_input("Y", ElemType::Float, c.y_shape);
  ValueId rx = node(g, "Reshape", {x, test::int64_initializer(g, "s", {6, 4})});
  ValueId sum = c.x_first ? node(g, "Sub", {rx, y}) : node(g, "Sub", {y, rx});
  g.add_output(node(g, "Reshape", {sum, test::int64_initializer(g, "t", c.back)}));
  return m;
}

TEST(PatternReshape2Of3, TheBinaryWorksInTheOriginalShape) {
  for (bool x_first : {true, false}) {
    Model m = reshaped_around({.x_first = x_first});
    run_rules(m, "Reshape2Of3");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Reshape", "Sub"})) << x_first;
    const Node& reshape = g.node(g.first_node());
    EXPECT_EQ(input_name(g, reshape, 0), "Y");
    EXPECT_EQ(constant_ints(g, reshape.inputs[1]), (std::vector<int64_t>{2, 3, 4}));
    const Node& sub = g.node(g.last_node());
    EXPECT_EQ(input_name(g, sub, x_first ? 0 : 1), "X");
    EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 3, 4}));
  }
}

TEST(PatternReshape2Of3, NotWhenTheOtherSideBroadcastsOrTheShapeIsNotGivenBack) {
  for (const Around& c : {Around{.y_shape = {4}}, Around{.back = {3, 2, 4}}}) {
    Model m = reshaped_around(c);
    run_rules(m, "Reshape2Of3");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "Sub", "Reshape"}));
  }
}

TEST(PatternReshape2Of3, SameNumbers) {
  for (bool x_first : {true, false})
    test::expect_same_outputs([x_first] { return reshaped_around({.x_first = x_first}); }, "Reshape2Of3");
}

}  // namespace
