// ShapedBasedReshape, ShapeBasedIdentity, ShapeBasedStaticExpand, ShapeBasedReshapeIsSqueeze,
// ShapeBasedConcatExpand, ShapeBasedExpandCastWhereSwap: the exact op
// sequence after, one negative test per condition, and the same numbers before and after (xexp's
// evaluator and ONNX Runtime, float32, atol 1e-5). None of these rewrites changes arithmetic.
#include <gtest/gtest.h>

#include <limits>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/patterns/registry.hpp"
#include "xexp/optimizer/optimize_model.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::int64_initializer;
using test::node;
using test::op_types;
using test::run_rules;
using OpSeq = std::vector<std::string>;

static const Dim kBatch = Dim::symbolic("batch");
static const Node& output_producer(const Graph& g) { return g.node(g.value(g.outputs()[0]).producer); }
static std::vector<int64_t> constant_input(const Graph& g, const Node& n, std::size_t slot) {
  return eval::as_int64s(*rewrite::constant_tensor(g, n.inputs[slot]));
}

// ---- ShapedBasedReshape ---------------------------------------------------------------------------
// The numeric tests use static shapes: random inputs need a value for every symbolic dimension.
static Model zeros_reshape_model(std::vector<int64_t> target, Dim batch = kBatch) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{batch, 3, 4});
  g.add_output(node(g, "Relu", {node(g, "Reshape", {x, int64_initializer(g, "shape", target)})}));
  return m;
}

TEST(PatternShapedBasedReshape, ZerosAndTheLastDimensionDoNothing) {
  for (int64_t last : {4, -1}) {
    Model m = zeros_reshape_model({0, 0, last});
    run_rules(m, "ShapedBasedReshape");
    EXPECT_EQ(op_types(*m.graph), (OpSeq{"Relu"}));
  }
}

TEST(PatternShapedBasedReshape, NotWithAnotherRank) {
  Model m = zeros_reshape_model({0, -1});
  run_rules(m, "ShapedBasedReshape");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Reshape", "Relu"}));
}

TEST(PatternShapedBasedReshape, LeadingValuesMayBeTheStaticDimensionsThemselves) {
  Model m = zeros_reshape_model({0, 3, -1});  // X (batch, 3, 4)
  run_rules(m, "ShapedBasedReshape");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Relu"}));
}

TEST(PatternShapedBasedReshape, NotWhenALeadingValueIsNeitherZeroNorTheDimension) {
  Model m = zeros_reshape_model({0, 2, -1});
  run_rules(m, "ShapedBasedReshape");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Reshape", "Relu"}));
}

TEST(PatternShapedBasedReshape, SameNumbers) {
  test::expect_same_outputs([] { return zeros_reshape_model({0, 0, -1}, 2); }, "ShapedBasedReshape");
  test::expect_same_outputs([] { return zeros_reshape_model({2, 3, -1}, 2); }, "ShapedBasedReshape");
}

// ---- ShapeBasedIdentity ---------------------------------------------------------------------------
// Slice(X, [0], [end], [1], steps) on X(2, batch).
static Model slice_model(std::vector<int64_t> steps, int64_t end = std::numeric_limits<int64_t>::max(),
                         Dim batch = kBatch) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, batch});
  g.add_output(node(g, "Slice", {x, int64_initializer(g, "starts", {0}), int64_initializer(g, "ends", {end}),
                                 int64_initializer(g, "axes", {1}), int64_initializer(g, "steps", steps)}));
  return m;
}

TEST(PatternShapeBasedIdentity, AWholeSliceIsTheIdentity) {
  Model m = slice_model({1});
  ASSERT_EQ(m.graph->value(m.graph->outputs()[0]).shape, (Shape{2, kBatch}));
  run_rules(m, "ShapeBasedIdentity");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Identity"}));  // the graph output keeps its name
}

TEST(PatternShapeBasedIdentity, NotWhenTheOutputShapeIsNotTheInputShape) {
  Model m = slice_model({1}, -1);
  run_rules(m, "ShapeBasedIdentity");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Slice"}));
}

TEST(PatternShapeBasedIdentity, NotWithAnotherStep) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 1});
  g.add_output(node(g, "Slice", {x, int64_initializer(g, "starts", {-1}), int64_initializer(g, "ends", {-3}),
                                 int64_initializer(g, "axes", {0}), int64_initializer(g, "steps", {-1})}));
  ASSERT_EQ(g.value(g.outputs()[0]).shape, (Shape{2, 1}));
  run_rules(m, "ShapeBasedIdentity");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Slice"}));
}

TEST(PatternShapeBasedIdentity, SameNumbers) {
  test::expect_same_outputs([] { return slice_model({1}, std::numeric_limits<int64_t>::max(), 5); }, "ShapeBasedIdentity");
}

// ---- ShapeBasedStaticExpand -----------------------------------------------------------------------
// Expand(X(batch, 1, 4), Concat(Shape(X)[0:1], [3], [1])) with nothing typed but X, as an exporter
// writes it: the rule reads the output shape (batch, 3, 4) that types on load give it (the content of
// Shape followed through Concat), not a shape the test sets.
static Model computed_expand_model(Shape x_shape) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, x_shape);
  ValueId first = g.add_value("first"), shape = g.add_value("shape"), out = g.add_value("out");
  g.add_node(Symbol("Shape"), {x}, {first}, {Attribute::make_int("start", 0), Attribute::make_int("end", 1)});
  g.add_node(Symbol("Concat"), {first, int64_initializer(g, "three", {3}), int64_initializer(g, "one", {1})}, {shape},
             {Attribute::make_int("axis", 0)});
  g.add_node(Symbol("Expand"), {x, shape}, {out});
  g.add_output(out);
  return m;
}

TEST(PatternShapeBasedStaticExpand, TheShapeBecomesAConstant) {
  Model m = computed_expand_model({kBatch, 1, 4});
  xexp::testing::optimize_quietly(m, /*constant_folding=*/false, "ShapeBasedStaticExpand");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Expand"}));
  EXPECT_EQ(constant_input(*m.graph, output_producer(*m.graph), 1), (std::vector<int64_t>{1, 3, 1}));
}

TEST(PatternShapeBasedStaticExpand, NotWhenAChangingDimensionIsSymbolic) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{1, 4});
  ValueId y = g.add_input("Y", ElemType::Float, Shape{kBatch, 4});
  ValueId shape = g.add_value("shape"), out = g.add_value("out");
  g.add_node(Symbol("Shape"), {y}, {shape});
  g.add_node(Symbol("Expand"), {x, shape}, {out});
  g.add_output(out);
  xexp::testing::optimize_quietly(m, /*constant_folding=*/false, "ShapeBasedStaticExpand");
  EXPECT_EQ(g.value(out).shape, (Shape{kBatch, 4}));  // what inference gives: the rule had it to read
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Shape", "Expand"}));
}

TEST(PatternShapeBasedStaticExpand, SameNumbers) {
  // Typed by the call optimize_model makes on a loaded model (the comparison runs the rule alone).
  test::expect_same_outputs(
      [] {
        Model m = computed_expand_model({2, 1, 4});
        infer::infer_model_types(m);
        return m;
      },
      "ShapeBasedStaticExpand");
}

// ---- ShapeBasedReshapeIsSqueeze -------------------------------------------------------------------
static Model reshape_model(Shape x_shape, std::vector<int64_t> target, int64_t opset = 18) {
  Model m = test::model_with_opset(opset);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, x_shape);
  g.add_output(node(g, "Reshape", {x, int64_initializer(g, "shape", target)}, {}, "", opset));
  return m;
}

TEST(PatternShapeBasedReshapeIsSqueeze, InsertedOnesAreAnUnsqueeze) {
  Model m = reshape_model({kBatch, 4}, {0, 1, 4, 1});
  run_rules(m, "ShapeBasedReshapeIsSqueeze");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Unsqueeze"}));
  EXPECT_EQ(constant_input(*m.graph, output_producer(*m.graph), 1), (std::vector<int64_t>{1, 3}));
}

TEST(PatternShapeBasedReshapeIsSqueeze, RemovedOnesAreASqueeze) {
  Model m = reshape_model({1, 3, 1, 4}, {3, 4});
  run_rules(m, "ShapeBasedReshapeIsSqueeze");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Squeeze"}));
  EXPECT_EQ(constant_input(*m.graph, output_producer(*m.graph), 1), (std::vector<int64_t>{0, 2}));
}

TEST(PatternShapeBasedReshapeIsSqueeze, NotWhenDimensionsMerge) {
  Model m = reshape_model({2, 3, 4}, {6, 4});
  run_rules(m, "ShapeBasedReshapeIsSqueeze");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Reshape"}));
}

TEST(PatternShapeBasedReshapeIsSqueeze, NotBeforeOpset18) {
  Model m = reshape_model({2, 4}, {2, 1, 4}, 17);
  run_rules(m, "ShapeBasedReshapeIsSqueeze");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Reshape"}));
}

TEST(PatternShapeBasedReshapeIsSqueeze, SameNumbers) {
  test::expect_same_outputs([] { return reshape_model({2, 4}, {0, 1, 4, 1}); }, "ShapeBasedReshapeIsSqueeze");
  test::expect_same_outputs([] { return reshape_model({1, 3, 1, 4}, {3, 4}); }, "ShapeBasedReshapeIsSqueeze");
}

// ---- ShapeBasedConcatExpand -----------------------------------------------------------------------
// Expand(X, Concat(Shape(A), Shape(B))) with only X, A and B typed, as an exporter writes it: X (rows, 1)
// and A (rows) give the same first dimension, B (n) the second.
static Model concat_expand_model(Shape x_shape, Dim rows, Dim n) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, x_shape);
  ValueId a = g.add_input("A", ElemType::Float, Shape{rows});
  ValueId b = g.add_input("B", ElemType::Float, Shape{n});
  ValueId sa = g.add_value("sa"), sb = g.add_value("sb"), shape = g.add_value("shape"),
          out = g.add_value("out");
  g.add_node(Symbol("Shape"), {a}, {sa});
  g.add_node(Symbol("Shape"), {b}, {sb});
  g.add_node(Symbol("Concat"), {sa, sb}, {shape}, {Attribute::make_int("axis", 0)});
  g.add_node(Symbol("Expand"), {x, shape}, {out});
  g.add_output(out);
  return m;
}

TEST(PatternShapeBasedConcatExpand, OnlyTheChangingPartStays) {
  const Dim n = Dim::symbolic("n");
  Model m = concat_expand_model({kBatch, 1}, kBatch, n);
  xexp::testing::optimize_quietly(m, /*constant_folding=*/false, "ShapeBasedConcatExpand");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpSeq{"Shape", "Concat", "Expand"}));
  const Node& concat = g.node(g.value(output_producer(g).inputs[1]).producer);
  EXPECT_EQ(eval::as_int64s(*rewrite::constant_tensor(g, concat.inputs[0])), (std::vector<int64_t>{1}));
  EXPECT_EQ(g.value(concat.inputs[1]).name, "sb");
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{kBatch, n}));
}

TEST(PatternShapeBasedConcatExpand, NotWhenTwoDimensionsChange) {
  Model m = concat_expand_model({1, 1}, kBatch, Dim::symbolic("n"));
  xexp::testing::optimize_quietly(m, /*constant_folding=*/false, "ShapeBasedConcatExpand");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Shape", "Shape", "Concat", "Expand"}));
}

TEST(PatternShapeBasedConcatExpand, SameNumbers) {
  test::expect_same_outputs(
      [] {
        Model m = concat_expand_model({2, 1}, 2, 3);
        infer::infer_model_types(m);
        return m;
      },
      "ShapeBasedConcatExpand");
}

// ---- ShapeBasedExpandCastWhereSwap ----------------------------------------------------------------
// Where(Cast(E, to=bool), E, C) or Where(Cast(E), C, E), E = Expand(X (1, 4), [3, 4]).
static Model expand_cast_where_model(Shape c_shape, bool x_then = true) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{1, 4});
  ValueId c = g.add_input("C", ElemType::Float, std::move(c_shape));
  ValueId e = node(g, "Expand", {x, int64_initializer(g, "shape", {3, 4})});
  ValueId mask = node(g, "Cast", {e}, {Attribute::make_int("to", static_cast<int64_t>(ElemType::Bool))});
  g.add_output(
      node(g, "Where", x_then ? std::vector<ValueId>{mask, e, c} : std::vector<ValueId>{mask, c, e}));
  return m;
}

TEST(PatternShapeBasedExpandCastWhereSwap, TheWhereRunsBeforeTheExpand) {
  for (bool x_then : {true, false}) {
    Model m = expand_cast_where_model({}, x_then);
    run_rules(m, "ShapeBasedExpandCastWhereSwap");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpSeq{"Cast", "Where", "Expand"})) << x_then;
    const Node& where = g.node(g.value(output_producer(g).inputs[0]).producer);
    EXPECT_EQ(g.value(where.inputs[x_then ? 1 : 2]).name, "X");
    EXPECT_EQ(g.value(where.inputs[x_then ? 2 : 1]).name, "C");
    EXPECT_EQ(g.value(g.node(g.first_node()).inputs[0]).name, "X");
    EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{3, 4}));
  }
}

TEST(PatternShapeBasedExpandCastWhereSwap, NotWhenCIsAsLarge) {
  Model m = expand_cast_where_model({3, 4});
  run_rules(m, "ShapeBasedExpandCastWhereSwap");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Expand", "Cast", "Where"}));
}

TEST(PatternShapeBasedExpandCastWhereSwap, SameNumbers) {
  for (bool x_then : {true, false})
    test::expect_same_outputs([x_then] { return expand_cast_where_model({1}, x_then); },
                              "ShapeBasedExpandCastWhereSwap");
}
