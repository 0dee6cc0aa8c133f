// The local clean-ups: CastCast, Identity, Reshape, Expand, ReshapeReshape, UnsqueezeUnsqueeze,
// SqueezeUnsqueeze, SliceSlice. Positive (exact op sequence), negatives, same numbers (exactly: none of
// these changes the arithmetic).
#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::int64_initializer;
using test::node;
using test::op_types;
using test::OpList;
using test::run_rules;

static Attribute to(ElemType t) { return Attribute::make_int("to", static_cast<int64_t>(t)); }
static Attribute axes(std::vector<int64_t> a) { return Attribute::make_ints("axes", std::move(a)); }

// ---- CastCast -------------------------------------------------------------------------------------
static Model cast_cast(ElemType in, ElemType mid, ElemType out) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", in, Shape{2, 3});
  g.add_output(node(g, "Cast", {node(g, "Cast", {x}, {to(mid)})}, {to(out)}));
  return m;
}

TEST(PatternCastCast, RoundTripThroughAWiderFloatDisappears) {
  Model m = cast_cast(ElemType::Float16, ElemType::Float, ElemType::Float16);
  run_rules(m, "CastCast");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Identity"}));  // the graph output keeps its name
}

TEST(PatternCastCast, SameSecondTypeIsOneCast) {
  Model m = cast_cast(ElemType::Float, ElemType::Float16, ElemType::Float16);
  run_rules(m, "CastCast");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Cast"}));
}

TEST(PatternCastCast, NotThroughANarrowerType) {
  Model m = cast_cast(ElemType::Float, ElemType::Float16, ElemType::Float);
  run_rules(m, "CastCast");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Cast", "Cast"}));
}

TEST(PatternCastCast, SameNumbers) {
  // The two cases the rule rewrites: a round trip through a wider float, and a second Cast to the type
  // the first already gave (the float16 rounding is kept, once).
  test::expect_same_outputs([] { return cast_cast(ElemType::Float16, ElemType::Float, ElemType::Float16); }, "CastCast");
  test::expect_same_outputs([] { return cast_cast(ElemType::Float, ElemType::Float16, ElemType::Float16); }, "CastCast");
}

// ---- Identity -------------------------------------------------------------------------------------
static Model binary_with_constant(const std::string& op, Tensor c, bool constant_first = false) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId k = g.add_initializer("C", std::move(c));
  g.add_output(node(g, "Relu", {node(g, op, constant_first ? std::vector<ValueId>{k, x} : std::vector<ValueId>{x, k})}));
  return m;
}

TEST(PatternIdentity, NeutralConstantsDisappear) {
  struct Case { std::string op; Tensor c; bool first; };
  const std::vector<Case> cases = {{"Add", Tensor::scalar<float>(0), true},
                                   {"Sub", Tensor::from<float>({3}, {0, 0, 0}), false},
                                   {"Mul", Tensor::from<float>({1}, {1}), true},
                                   {"Div", Tensor::scalar<float>(1), false},
                                   {"Pow", Tensor::scalar<float>(1), false},
                                   // ALBERT's attention mask: -0 per row, broadcast over the columns
                                   {"Add", Tensor::from<float>({2, 1}, {-0.f, -0.f}), false}};
  for (const Case& c : cases) {
    Model m = binary_with_constant(c.op, c.c, c.first);
    run_rules(m, "Identity");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Relu"})) << c.op;
  }
}

TEST(PatternIdentity, NotWhenTheConstantIsNotNeutral) {
  Model m = binary_with_constant("Mul", Tensor::scalar<float>(2));
  run_rules(m, "Identity");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Mul", "Relu"}));
}

TEST(PatternIdentity, NotForOneRaisedToAPower) {
  Model m = binary_with_constant("Pow", Tensor::scalar<float>(1), true);
  run_rules(m, "Identity");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Pow", "Relu"}));
}

TEST(PatternIdentity, NotWhenBroadcastingChangesTheShape) {
  Model m = binary_with_constant("Add", Tensor::from<float>({4, 1, 1}, std::vector<float>(4, 0.f)));
  run_rules(m, "Identity");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Add", "Relu"}));
}

TEST(PatternIdentity, NotForZeroSubtractedFromAConstant) {
  Model m = binary_with_constant("Sub", Tensor::scalar<float>(0), true);
  run_rules(m, "Identity");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Sub", "Relu"}));
}

TEST(PatternIdentity, IdentityTranspose) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  g.add_output(node(g, "Relu", {node(g, "Transpose", {x}, {Attribute::make_ints("perm", {0, 1})})}));
  run_rules(m, "Identity");
  EXPECT_EQ(op_types(g), (OpList{"Relu"}));
}

// ---- CastLike --------------------------------------------------------------------------------------
// Y = CastLike(X, H): H float16, int64, float8 or of a type nobody knows.
static Model cast_like(ElemType like) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  g.add_output(node(g, "CastLike", {x, g.add_input("H", like, Shape{2, 3})}));
  return m;
}

TEST(PatternCastLike, IsACastToTheTypeOfItsSecondInput) {
  Model m = cast_like(ElemType::Float16);
  run_rules(m, "CastLike");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Cast"}));
  const Node& cast = g.node(g.first_node());
  EXPECT_EQ(g.value(cast.inputs[0]).name, "X");
  ASSERT_EQ(cast.inputs.size(), 1u);
  EXPECT_EQ(cast.attribute(Symbol("to"))->i, static_cast<int64_t>(ElemType::Float16));
}

TEST(PatternCastLike, NotForAnUnknownOrFloat8Type) {
  for (ElemType like : {ElemType::Undefined, ElemType::Float8E4M3FN}) {
    Model m = cast_like(like);
    run_rules(m, "CastLike");
    EXPECT_EQ(op_types(*m.graph), (OpList{"CastLike"}));
  }
}

TEST(PatternCastLike, SameNumbers) {
  test::expect_same_outputs([] { return cast_like(ElemType::Float16); }, "CastLike");
  test::expect_same_outputs([] { return cast_like(ElemType::Int64); }, "CastLike");
}

// ---- Reshape, Expand ------------------------------------------------------------------------------
static Model shaped(const std::string& op, std::vector<int64_t> target) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  g.add_output(node(g, "Relu", {node(g, op, {x, int64_initializer(g, "shape", std::move(target))})}));
  return m;
}

TEST(PatternReshapeExpand, ToTheSameShapeDisappears) {
  for (const char* op : {"Reshape", "Expand"}) {
    Model m = shaped(op, {2, 3});
    run_rules(m, op);
    EXPECT_EQ(op_types(*m.graph), (OpList{"Relu"})) << op;
  }
}

TEST(PatternReshapeExpand, NotToAnotherShape) {
  Model r = shaped("Reshape", {3, 2});
  run_rules(r, "Reshape");
  EXPECT_EQ(op_types(*r.graph), (OpList{"Reshape", "Relu"}));
  Model e = shaped("Expand", {4, 2, 3});
  run_rules(e, "Expand");
  EXPECT_EQ(op_types(*e.graph), (OpList{"Expand", "Relu"}));
}

// Relu(op(X, target)) on X of a symbolic shape.
static Model symbolic(const char* op, Shape x_shape, std::vector<int64_t> target) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, std::move(x_shape));
  g.add_output(node(g, "Relu", {node(g, op, {x, int64_initializer(g, "shape", std::move(target))})}));
  return m;
}

// X (batch, 3) expanded to (1, 3) or to (1, 1) keeps its shape, symbols compared by name: nothing to do,
// whatever batch is at run time; X (batch, 1) expanded to (1, 3) grows.
static Model expand_symbolic(std::vector<int64_t> target, int64_t columns = 3) {
  return symbolic("Expand", Shape{Dim::symbolic("batch"), columns}, std::move(target));
}

TEST(PatternReshapeExpand, AnExpandKeepingASymbolicShapeDisappears) {
  for (std::vector<int64_t> target : {std::vector<int64_t>{1, 3}, std::vector<int64_t>{1, 1}, std::vector<int64_t>{3}}) {
    Model m = expand_symbolic(target);
    run_rules(m, "Expand");
    ASSERT_EQ(op_types(*m.graph), (OpList{"Relu"}));
    EXPECT_EQ(m.graph->value(m.graph->node(m.graph->first_node()).inputs[0]).name, "X");
  }
  Model grows = expand_symbolic({1, 3}, 1);
  run_rules(grows, "Expand");
  EXPECT_EQ(op_types(*grows.graph), (OpList{"Expand", "Relu"}));
}

// X (batch*seq, 16) reshaped to (-1, 16), as dynamic exports flatten rows again after a Gemm: the output
// is X's shape, symbols compared by name, so the Reshape does nothing; to (-1, 8) it does something.
static Model reshape_symbolic(std::vector<int64_t> target) {
  return symbolic("Reshape", Shape{Dim::symbolic("batch*seq"), 16}, std::move(target));
}

TEST(PatternReshapeExpand, AReshapeKeepingASymbolicShapeDisappears) {
  Model m = reshape_symbolic({-1, 16});
  run_rules(m, "Reshape");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Relu"}));
  EXPECT_EQ(m.graph->value(m.graph->node(m.graph->first_node()).inputs[0]).name, "X");
  Model other = reshape_symbolic({-1, 8});
  run_rules(other, "Reshape");
  EXPECT_EQ(op_types(*other.graph), (OpList{"Reshape", "Relu"}));
}

TEST(PatternReshapeExpand, SameNumbersForASymbolicShape) {
  test::expect_same_outputs([] { return expand_symbolic({1, 3}); }, "Expand", 0, {.seed = 3, .symbols = {{"batch", 4}}});
  test::expect_same_outputs([] { return reshape_symbolic({-1, 16}); }, "Reshape", 0,
                            {.seed = 3, .symbols = {{"batch*seq", 6}}});
}

// ---- ReshapeReshape -------------------------------------------------------------------------------
static Model reshape_reshape(std::vector<int64_t> second) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  ValueId r1 = node(g, "Reshape", {x, int64_initializer(g, "s1", {6, 4})});
  g.add_output(node(g, "Reshape", {r1, int64_initializer(g, "s2", std::move(second))}));
  return m;
}

TEST(PatternReshapeReshape, TwoBecomeOne) {
  Model m = reshape_reshape({4, -1});
  run_rules(m, "ReshapeReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape"}));
}

TEST(PatternReshapeReshape, NotWhenTheSecondCopiesADim) {
  Model m = reshape_reshape({0, 2, 2});
  run_rules(m, "ReshapeReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "Reshape"}));
}

TEST(PatternReshapeReshape, SameNumbers) {
  test::expect_same_outputs([] { return reshape_reshape({4, -1}); }, "ReshapeReshape");
}

// A dynamic export splits the heads of X (batch, seq, 4) and merges them back with 0s copying dims.
static Model reshape_reshape_copying(std::vector<int64_t> first, std::vector<int64_t> second) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{Dim::symbolic("batch"), Dim::symbolic("seq"), 4});
  ValueId r1 = node(g, "Reshape", {x, int64_initializer(g, "s1", std::move(first))});
  g.add_output(node(g, "Reshape", {r1, int64_initializer(g, "s2", std::move(second))}));
  return m;
}

TEST(PatternReshapeReshape, ZerosCopyingTheDimsOfTheFirstInputToo) {
  Model m = reshape_reshape_copying({0, 0, 2, 2}, {0, 0, 4});
  run_rules(m, "ReshapeReshape");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Reshape"}));
  const Node& n = m.graph->node(*m.graph->nodes().begin());
  EXPECT_EQ(n.inputs[0], m.graph->inputs()[0]);
  test::expect_same_outputs([] { return reshape_reshape_copying({0, 0, 2, 2}, {0, 0, 4}); }, "ReshapeReshape", 0,
                            {.seed = 7, .symbols = {{"batch", 2}, {"seq", 3}}});
}

TEST(PatternReshapeReshape, NotWhenAZeroCopiesAnIntermediateDimOfAnotherSize) {
  Model m = reshape_reshape_copying({-1, 4}, {0, 2, 2});  // copies batch * seq, not batch
  run_rules(m, "ReshapeReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "Reshape"}));
}

// ---- UnsqueezeUnsqueeze, SqueezeUnsqueeze (axes as attributes at 11, as inputs at 18) -------------
static ValueId axes_node(Graph& g, const std::string& op, ValueId x, std::vector<int64_t> a, int64_t opset) {
  if (opset >= 13) {
    const std::string name = g.unique_value_name("axes");
    return node(g, op, {x, int64_initializer(g, name, std::move(a))}, {}, "", opset);
  }
  return node(g, op, {x}, {axes(std::move(a))}, "", opset);
}

static Model unsqueeze_unsqueeze(int64_t opset, std::vector<int64_t> first, std::vector<int64_t> second) {
  Model m = test::model_with_opset(opset);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  g.add_output(axes_node(g, "Unsqueeze", axes_node(g, "Unsqueeze", x, first, opset), second, opset));
  return m;
}

TEST(PatternUnsqueezeUnsqueeze, MergedAxes) {
  for (int64_t opset : {11, 18}) {
    Model m = unsqueeze_unsqueeze(opset, {0, 2}, {1, -1});
    const Shape expected = *m.graph->value(m.graph->outputs()[0]).shape;
    run_rules(m, "UnsqueezeUnsqueeze");
    ASSERT_EQ(op_types(*m.graph), (OpList{"Unsqueeze"}));
    const Node& n = m.graph->node(m.graph->first_node());
    if (opset < 13) EXPECT_EQ(n.attribute(Symbol("axes"))->ints, (std::vector<int64_t>{0, 1, 3, 5}));
    else EXPECT_EQ(m.graph->value(n.inputs[1]).initializer->data<int64_t>()[3], 5);
    EXPECT_EQ(expected, (Shape{1, 1, 2, 1, 3, 1}));
  }
}

TEST(PatternUnsqueezeUnsqueeze, SameNumbers) {
  test::expect_same_outputs([] { return unsqueeze_unsqueeze(18, {0, 2}, {1, -1}); }, "UnsqueezeUnsqueeze");
  test::expect_same_outputs([] { return unsqueeze_unsqueeze(11, {-1}, {0}); }, "UnsqueezeUnsqueeze");
}

static Model squeeze_unsqueeze(bool squeeze_first, std::vector<int64_t> a, std::vector<int64_t> b) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, squeeze_first ? Shape{2, 1, 3} : Shape{2, 3});
  const char* first = squeeze_first ? "Squeeze" : "Unsqueeze";
  const char* second = squeeze_first ? "Unsqueeze" : "Squeeze";
  g.add_output(node(g, "Relu", {axes_node(g, second, axes_node(g, first, x, a, 18), b, 18)}));
  return m;
}

TEST(PatternSqueezeUnsqueeze, SameAxesGiveTheInputBack) {
  Model a = squeeze_unsqueeze(true, {1}, {-2});
  run_rules(a, "SqueezeUnsqueeze");
  EXPECT_EQ(op_types(*a.graph), (OpList{"Relu"}));
  Model b = squeeze_unsqueeze(false, {0}, {0});
  run_rules(b, "SqueezeUnsqueeze");
  EXPECT_EQ(op_types(*b.graph), (OpList{"Relu"}));
}

TEST(PatternSqueezeUnsqueeze, NotForOtherAxes) {
  Model m = squeeze_unsqueeze(true, {1}, {0});
  run_rules(m, "SqueezeUnsqueeze");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Squeeze", "Unsqueeze", "Relu"}));
}

// ---- SliceSlice -----------------------------------------------------------------------------------
static Model slice_slice(std::vector<int64_t> axes1, std::vector<int64_t> axes2) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{4, 6, 8});
  ValueId s1 = node(g, "Slice", {x, int64_initializer(g, "st1", {1}), int64_initializer(g, "en1", {3}),
                                 int64_initializer(g, "ax1", std::move(axes1))});
  ValueId s2 = node(g, "Slice", {s1, int64_initializer(g, "st2", {0}), int64_initializer(g, "en2", {4}),
                                 int64_initializer(g, "ax2", std::move(axes2)), int64_initializer(g, "sp2", {2})});
  g.add_output(s2);
  return m;
}

TEST(PatternSliceSlice, DisjointAxesMerge) {
  Model m = slice_slice({0}, {-1});
  run_rules(m, "SliceSlice");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Slice"}));
}

TEST(PatternSliceSlice, NotOnTheSameAxis) {
  Model m = slice_slice({2}, {-1});
  run_rules(m, "SliceSlice");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Slice", "Slice"}));
}

TEST(PatternSliceSlice, SameNumbers) { test::expect_same_outputs([] { return slice_slice({1}, {2}); }, "SliceSlice"); }
