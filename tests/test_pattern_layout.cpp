// SqueezeAdd, SqueezeBinaryUnsqueeze, ReduceReshape, TransposeEqualReshape, SwapExpandReshape,
// TransposeReshapeTranspose: the exact op sequence after, one negative test per condition, and the same
// numbers before and after (xexp's evaluator and ONNX Runtime, float32, exactly). None of these rewrites
// changes arithmetic.
#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
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
using xexp::testing::int64_type;
using xexp::testing::load_case_model;
using OpSeq = std::vector<std::string>;

static const Node& output_producer(const Graph& g) { return g.node(g.value(g.outputs()[0]).producer); }
static std::vector<int64_t> constant_input(const Graph& g, const Node& n, std::size_t slot) {
  return eval::as_int64s(*rewrite::constant_tensor(g, n.inputs[slot]));
}

// ---- SqueezeAdd -----------------------------------------------------------------------------------
static Model squeeze_add_model(Shape a_shape, Shape b_shape, std::vector<int64_t> axes) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, a_shape);
  ValueId b = g.add_input("B", ElemType::Float, b_shape);
  ValueId ax = int64_initializer(g, "axes", axes);
  g.add_output(node(g, "Add", {node(g, "Squeeze", {a, ax}), node(g, "Squeeze", {b, ax})}));
  return m;
}

TEST(PatternSqueezeAdd, OneSqueezeAfterTheAdd) {
  Model m = squeeze_add_model({1, 1}, {1, 1}, {0, 1});
  run_rules(m, "SqueezeAdd");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Add", "Squeeze"}));
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).shape, Shape{});
}

TEST(PatternSqueezeAdd, NotWhenTheInputShapesDiffer) {
  Model m = squeeze_add_model({1, 1}, {1, 1, 1}, {0, 1});
  run_rules(m, "SqueezeAdd");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Squeeze", "Squeeze", "Add"}));
}

TEST(PatternSqueezeAdd, NotWithMoreThanOneElement) {
  Model m = squeeze_add_model({2, 1}, {2, 1}, {1});
  run_rules(m, "SqueezeAdd");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Squeeze", "Squeeze", "Add"}));
}

TEST(PatternSqueezeAdd, SameNumbers) {
  test::expect_same_outputs([] { return squeeze_add_model({1, 1}, {1, 1}, {0, 1}); }, "SqueezeAdd");
}

// ---- SqueezeBinaryUnsqueeze -----------------------------------------------------------------------
struct SbuCase {
  std::string op = "Sub";
  bool squeezed_first = true;
  Shape s_shape = {};
};
static Model sbu_model(const SbuCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId d = g.add_input("D", ElemType::Float, Shape{1});
  ValueId s = g.add_input("S", ElemType::Float, c.s_shape);
  ValueId squeezed = node(g, "Squeeze", {d});
  ValueId binary = node(g, c.op, c.squeezed_first ? std::vector<ValueId>{squeezed, s} : std::vector<ValueId>{s, squeezed});
  g.add_output(node(g, "Unsqueeze", {binary, int64_initializer(g, "zero", {0})}));
  return m;
}

TEST(PatternSqueezeBinaryUnsqueeze, TheShapeRoundTripDisappears) {
  Model m = sbu_model({});
  run_rules(m, "SqueezeBinaryUnsqueeze");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Unsqueeze", "Sub"}));
  const Graph& g = *m.graph;
  EXPECT_EQ(g.value(output_producer(g).inputs[0]).name, "D");
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{1}));
}

TEST(PatternSqueezeBinaryUnsqueeze, TheSqueezedOperandMayComeSecond) {
  Model m = sbu_model({.op = "Div", .squeezed_first = false});
  run_rules(m, "SqueezeBinaryUnsqueeze");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Unsqueeze", "Div"}));
  EXPECT_EQ(m.graph->value(output_producer(*m.graph).inputs[1]).name, "D");
}

TEST(PatternSqueezeBinaryUnsqueeze, NotWhenTheOtherOperandIsNotRankZero) {
  Model m = sbu_model({.s_shape = {1}});
  run_rules(m, "SqueezeBinaryUnsqueeze");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Squeeze", "Sub", "Unsqueeze"}));
}

TEST(PatternSqueezeBinaryUnsqueeze, SameNumbers) {
  test::expect_same_outputs([] { return sbu_model({}); }, "SqueezeBinaryUnsqueeze");
  test::expect_same_outputs([] { return sbu_model({.op = "Div", .squeezed_first = false}); }, "SqueezeBinaryUnsqueeze");
}

// ---- ReduceReshape --------------------------------------------------------------------------------
struct ReduceCase {
  int64_t keepdims = 1;
  std::vector<int64_t> target = {2, 4};
  bool squeeze = false;  // Squeeze(reduced, axes=[1]) instead of the Reshape
};
static Model reduce_model(const ReduceCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  ValueId reduced = node(g, "ReduceSum", {x, int64_initializer(g, "axes", {-2})},
                         {Attribute::make_int("keepdims", c.keepdims)});
  g.add_output(c.squeeze ? node(g, "Squeeze", {reduced, int64_initializer(g, "squeezed", {1})})
                         : node(g, "Reshape", {reduced, int64_initializer(g, "shape", c.target)}));
  return m;
}

TEST(PatternReduceReshape, TheReductionDropsTheAxis) {
  Model m = reduce_model({});
  run_rules(m, "ReduceReshape");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"ReduceSum"}));
  EXPECT_EQ(output_producer(*m.graph).attribute(Symbol("keepdims"))->i, 0);
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).shape, (Shape{2, 4}));
}

// As ShapeBasedReshapeIsSqueeze leaves it: the Reshape became a Squeeze first.
TEST(PatternReduceReshape, TheReductionDropsTheAxisASqueezeDrops) {
  Model m = reduce_model({.squeeze = true});
  run_rules(m, "ReduceReshape");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"ReduceSum"}));
  EXPECT_EQ(output_producer(*m.graph).attribute(Symbol("keepdims"))->i, 0);
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).shape, (Shape{2, 4}));
  Model both = reduce_model({});
  run_rules(both, "ShapeBasedReshapeIsSqueeze,ReduceReshape");
  EXPECT_EQ(op_types(*both.graph), (OpSeq{"ReduceSum"}));
}

TEST(PatternReduceReshape, NotWhenTheReshapeMergesAxes) {
  Model m = reduce_model({.target = {8}});
  run_rules(m, "ReduceReshape");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"ReduceSum", "Reshape"}));
}

TEST(PatternReduceReshape, NotWithoutKeepdims) {
  Model m = reduce_model({.keepdims = 0, .target = {4, 2}});
  run_rules(m, "ReduceReshape");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"ReduceSum", "Reshape"}));
}

TEST(PatternReduceReshape, SameNumbers) {
  test::expect_same_outputs([] { return reduce_model({}); }, "ReduceReshape");
  test::expect_same_outputs([] { return reduce_model({.squeeze = true}); }, "ReduceReshape");
}

// ---- TransposeEqualReshape ------------------------------------------------------------------------
static Model transpose_model(Shape shape, std::vector<int64_t> perm) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, shape);
  g.add_output(node(g, "Transpose", {x}, {Attribute::make_ints("perm", std::move(perm))}));
  return m;
}

TEST(PatternTransposeEqualReshape, MovingOnlyOnesIsAReshape) {
  Model m = transpose_model({2, 1, 4}, {1, 0, 2});
  run_rules(m, "TransposeEqualReshape");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Reshape"}));
  EXPECT_EQ(constant_input(*m.graph, output_producer(*m.graph), 1), (std::vector<int64_t>{1, 2, 0}));
  Model symbolic = transpose_model({Dim::symbolic("a"), 1, 4}, {1, 0, 2});
  run_rules(symbolic, "TransposeEqualReshape");
  ASSERT_EQ(op_types(*symbolic.graph), (OpSeq{"Reshape"}));
  EXPECT_EQ(constant_input(*symbolic.graph, output_producer(*symbolic.graph), 1), (std::vector<int64_t>{1, -1, 0}));
}

TEST(PatternTransposeEqualReshape, NotWhenTwoLargerDimensionsSwap) {
  Model m = transpose_model({2, 3, 1}, {1, 0, 2});
  run_rules(m, "TransposeEqualReshape");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Transpose"}));
}

TEST(PatternTransposeEqualReshape, NotWithTwoMovedSymbolicDimensions) {
  Model m = transpose_model({Dim::symbolic("a"), Dim::symbolic("b"), 1}, {2, 0, 1});
  run_rules(m, "TransposeEqualReshape");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Transpose"}));
}

TEST(PatternTransposeEqualReshape, SameNumbers) {
  test::expect_same_outputs([] { return transpose_model({2, 1, 4}, {1, 0, 2}); }, "TransposeEqualReshape");
}

// ---- SwapExpandReshape ----------------------------------------------------------------------------
struct ExpandCase {
  std::vector<int64_t> expand = {3, 1, 1};
  std::vector<int64_t> target = {0, 1, -1};
  bool computed_shape = false;  // Concat(Gather(Shape(X), [0]), [1, 1]) instead of a constant
};
static Model expand_model(const ExpandCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId w = g.add_initializer("W", Tensor::from<float>({1, 4, 1}, {2.0f, 3.0f, 4.0f, 5.0f}));
  ValueId shape = int64_initializer(g, "expand", c.expand);
  if (c.computed_shape) {
    ValueId x = g.add_input("X", ElemType::Float, Shape{3, 5});
    ValueId first = node(g, "Gather", {node(g, "Shape", {x}), int64_initializer(g, "zero", {0})});
    shape = node(g, "Concat", {first, int64_initializer(g, "ones", {1, 1})}, {Attribute::make_int("axis", 0)});
  }
  g.add_output(node(g, "Reshape", {node(g, "Expand", {w, shape}), int64_initializer(g, "target", c.target)}));
  return m;
}

TEST(PatternSwapExpandReshape, TheConstantIsReshapedBeforeTheExpand) {
  Model m = expand_model({});
  run_rules(m, "SwapExpandReshape");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Reshape", "Expand"}));
  Model computed = expand_model({.computed_shape = true});
  run_rules(computed, "SwapExpandReshape");
  EXPECT_EQ(op_types(*computed.graph), (OpSeq{"Shape", "Gather", "Concat", "Reshape", "Expand"}));
}

TEST(PatternSwapExpandReshape, NotWhenTheExpandRepeatsAnotherAxis) {
  Model m = expand_model({.expand = {3, 4, 1}});
  run_rules(m, "SwapExpandReshape");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Expand", "Reshape"}));
}

TEST(PatternSwapExpandReshape, NotWithAnotherTarget) {
  Model m = expand_model({.target = {0, -1, 1}});
  run_rules(m, "SwapExpandReshape");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Expand", "Reshape"}));
}

TEST(PatternSwapExpandReshape, SameNumbers) {
  test::expect_same_outputs([] { return expand_model({}); }, "SwapExpandReshape");
  test::expect_same_outputs([] { return expand_model({.computed_shape = true}); }, "SwapExpandReshape");
}

namespace {

std::vector<int64_t> perm_of(const Node& n) { return n.attribute(Symbol("perm"))->ints; }
// ---- TransposeReshapeTranspose --------------------------------------------------------------------
// Transpose(X, p1) -> Reshape(shape) -> Transpose(p2), Y of dims `y`; `shape` is an initializer unless
// `shape_input`, and the Reshape's result is also a graph output with `middle_output`.
struct Moves {
  std::string x = "2,6,4,5", p1 = "0,2,3,1", shape = "2,4,5,3,2", p2 = "0,2,3,4,1", y = "2,5,3,2,4";
  bool shape_input = false, middle_output = false;
};
std::string moves_text(const Moves& c) {
  const std::string shape_type = int64_type(c.shape);
  std::string inputs = "float[" + c.x + "] X" + (c.shape_input ? ", " + shape_type + " S" : "");
  std::string outputs = "float[" + c.y + "] Y" + (c.middle_output ? ", float[" + c.shape + "] R" : "");
  std::string initializers = c.shape_input ? "" : "<" + shape_type + " S = {" + c.shape + "}>";
  return "<ir_version: 8, opset_import: [\"\" : 18]>\ng (" + inputs + ") => (" + outputs + ") " +
         initializers + " {\n  T = Transpose<perm=[" + c.p1 +
         "]>(X)\n  R = Reshape(T, S)\n  Y = Transpose<perm=[" + c.p2 + "]>(R)\n}\n";
}

TEST(PatternTransposeReshapeTranspose, SplitAxesAreSplitBeforeOneTranspose) {
  Model m = load_case_model(moves_text({}));
  run_rules(m, "TransposeReshapeTranspose");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Reshape", "Transpose"}));
  const Node& reshape = g.node(g.first_node());
  EXPECT_EQ(input_name(g, reshape, 0), "X");
  EXPECT_EQ(constant_ints(g, reshape.inputs[1]), (std::vector<int64_t>{2, 3, 2, 4, 5}));
  EXPECT_EQ(perm_of(g.node(g.last_node())), (std::vector<int64_t>{0, 4, 1, 2, 3}));
  EXPECT_EQ(g.value(g.outputs()[0]).name, "Y");
}

TEST(PatternTransposeReshapeTranspose, MergedAxesAreMergedAfterOneTranspose) {
  Model m = load_case_model(
      moves_text({.x = "2,3,4,5", .p1 = "0,2,1,3", .shape = "2,4,15", .p2 = "0,2,1", .y = "2,15,4"}));
  run_rules(m, "TransposeReshapeTranspose");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Transpose", "Reshape"}));
  const Node& transpose = g.node(g.first_node());
  EXPECT_EQ(input_name(g, transpose, 0), "X");
  EXPECT_EQ(perm_of(transpose), (std::vector<int64_t>{0, 1, 3, 2}));
  EXPECT_EQ(constant_ints(g, g.node(g.last_node()).inputs[1]), (std::vector<int64_t>{2, 15, 4}));
}

TEST(PatternTransposeReshapeTranspose, NotWhenTheReshapeRegroupsMovesNothingKnownOrIsRead) {
  const std::vector<Moves> refused{
      {.x = "2,3,4,5", .p1 = "0,2,1,3", .shape = "2,6,10", .p2 = "0,2,1", .y = "2,10,6"},  // 4x3 -> 6x2 mixes
      {.shape_input = true},                                                               // shape unknown
      {.shape = "2,4,5,3,-1"},                                                             // -1 to resolve
      {.x = "N,6,4,5", .shape = "2,4,5,3,2"},                                              // dynamic dim
      {.middle_output = true},                                                             // Reshape read
  };
  for (const Moves& c : refused) {
    Model m = load_case_model(moves_text(c));
    run_rules(m, "TransposeReshapeTranspose");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Transpose", "Reshape", "Transpose"})) << moves_text(c);
  }
}

TEST(PatternTransposeReshapeTranspose, SameNumbers) {
  test::expect_same_outputs([] { return load_case_model(moves_text({})); }, "TransposeReshapeTranspose");
  test::expect_same_outputs(
      [] {
        return load_case_model(
            moves_text({.x = "2,3,4,5", .p1 = "0,2,1,3", .shape = "2,4,15", .p2 = "0,2,1", .y = "2,15,4"}));
      },
      "TransposeReshapeTranspose");
}

}  // namespace
