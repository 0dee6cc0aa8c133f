// SplitConcat, ConcatGather, StaticConcatReshape, ConcatReshape, SequenceConstructAt,
// SequenceConstructConcat, SlicesSplit, GathersSplit: the exact op sequence after, one negative test per
// condition, and the same numbers before and after (xexp's evaluator and ONNX Runtime, exactly: none of these
// rewrites changes arithmetic).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

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
using test::producer;
using test::run_rules;

// ---- SplitConcat ----------------------------------------------------------------------------------
struct SplitConcatCase {
  int64_t split_axis = 1, concat_axis = -1;
  bool reversed = false;
};
static Model split_concat_model(const SplitConcatCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{6, 6});
  ValueId a = g.add_value("a"), b = g.add_value("b");
  NodeId split = g.add_node(Symbol("Split"), {x, int64_initializer(g, "sizes", {3, 3})}, {a, b},
                            {Attribute::make_int("axis", c.split_axis)}, "Split");
  infer::infer_node(g, split, 18);
  std::vector<ValueId> parts = c.reversed ? std::vector<ValueId>{b, a} : std::vector<ValueId>{a, b};
  g.add_output(node(g, "Relu", {node(g, "Concat", parts, {Attribute::make_int("axis", c.concat_axis)})}));
  return m;
}

TEST(PatternSplitConcat, ConcatOfTheSplitIsItsInput) {
  Model m = split_concat_model({});
  run_rules(m, "SplitConcat");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Relu"}));
}

TEST(PatternSplitConcat, NotOnAnotherAxis) {
  Model m = split_concat_model({.split_axis = 0, .concat_axis = 1});
  run_rules(m, "SplitConcat");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Split", "Concat", "Relu"}));
}

TEST(PatternSplitConcat, NotInAnotherOrder) {
  Model m = split_concat_model({.reversed = true});
  run_rules(m, "SplitConcat");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Split", "Concat", "Relu"}));
}

TEST(PatternSplitConcat, SameNumbers) { test::expect_same_outputs([] { return split_concat_model({}); }, "SplitConcat"); }

// ---- ConcatGather ---------------------------------------------------------------------------------
struct ConcatGatherCase {
  std::vector<int64_t> index_dims = {1};
  int64_t index = 1;
  Shape second_part = {1};
  bool concat_used_twice = false;
};
static Model concat_gather_model(const ConcatGatherCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Int64, Shape{1});
  ValueId b = g.add_input("B", ElemType::Int64, c.second_part);
  ValueId d = g.add_input("D", ElemType::Int64, Shape{1});
  ValueId concat = node(g, "Concat", {a, b, d}, {Attribute::make_int("axis", 0)});
  ValueId index = g.add_initializer("index", Tensor::from<int64_t>(c.index_dims, {c.index}));
  g.add_output(node(g, "Neg", {node(g, "Gather", {concat, index})}));
  if (c.concat_used_twice) g.add_output(node(g, "Abs", {concat}));
  return m;
}

TEST(PatternConcatGather, GatherPicksThePart) {
  for (int64_t index : {1, -2}) {
    Model m = concat_gather_model({.index = index});
    run_rules(m, "ConcatGather");
    ASSERT_EQ(op_types(*m.graph), (OpList{"Neg"}));
    EXPECT_EQ(m.graph->value(m.graph->node(m.graph->first_node()).inputs[0]).name, "B");
  }
}

TEST(PatternConcatGather, TheConcatStaysForItsOtherConsumers) {
  Model m = concat_gather_model({.concat_used_twice = true});
  run_rules(m, "ConcatGather");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Concat", "Neg", "Abs"}));
}

TEST(PatternConcatGather, NotWithAScalarIndex) {
  Model m = concat_gather_model({.index_dims = {}});
  run_rules(m, "ConcatGather");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Concat", "Gather", "Neg"}));
}

TEST(PatternConcatGather, NotWhenAPartHasMoreThanOneElement) {
  Model m = concat_gather_model({.second_part = {2}});
  run_rules(m, "ConcatGather");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Concat", "Gather", "Neg"}));
}

TEST(PatternConcatGather, NotOutOfRange) {
  Model m = concat_gather_model({.index = 3});
  run_rules(m, "ConcatGather");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Concat", "Gather", "Neg"}));
}

TEST(PatternConcatGather, SameNumbers) {
  test::expect_same_outputs([] { return concat_gather_model({.concat_used_twice = true}); }, "ConcatGather");
}

// ---- StaticConcatReshape and ConcatReshape --------------------------------------------------------
// Reshape(X[2,3,4], Concat(parts)); a part is a constant, "dimK" (Gather(Shape(X), [K])) or "input"
// (an int64 graph input of shape (1,)).
struct ConcatReshapeCase {
  std::vector<std::string> parts;
  bool allowzero = false;
};
static Model concat_reshape_model(const ConcatReshapeCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  ValueId shape = node(g, "Shape", {x});
  std::vector<ValueId> parts;
  for (const std::string& p : c.parts) {
    if (p.starts_with("dim"))
      parts.push_back(node(g, "Gather", {shape, int64_initializer(g, "i" + p, {std::stoll(p.substr(3))})}));
    else if (p == "input")
      parts.push_back(g.add_input("D", ElemType::Int64, Shape{1}));
    else
      parts.push_back(int64_initializer(g, "c" + std::to_string(parts.size()), {std::stoll(p)}));
  }
  ValueId concat = node(g, "Concat", parts, {Attribute::make_int("axis", 0)});
  std::vector<Attribute> attributes;
  if (c.allowzero) attributes.push_back(Attribute::make_int("allowzero", 1));
  g.add_output(node(g, "Reshape", {x, concat}, attributes));
  return m;
}
static std::vector<int64_t> constant_shape_of_reshape(const Model& m) {
  const Graph& g = *m.graph;
  const Node& reshape = g.node(g.value(g.outputs()[0]).producer);
  return eval::as_int64s(*rewrite::constant_tensor(g, reshape.inputs[1]));
}

TEST(PatternStaticConcatReshape, TheUnknownPartBecomesMinusOne) {
  for (const char* unknown : {"dim1", "input"}) {
    Model m = concat_reshape_model({.parts = {"2", unknown, "4"}});
    run_rules(m, "StaticConcatReshape");
    ASSERT_EQ(op_types(*m.graph), (OpList{"Reshape"}));
    EXPECT_EQ(constant_shape_of_reshape(m), (std::vector<int64_t>{2, -1, 4}));
  }
}

TEST(PatternStaticConcatReshape, NotWithTwoUnknownParts) {
  Model m = concat_reshape_model({.parts = {"dim0", "dim1", "4"}});
  run_rules(m, "StaticConcatReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Shape", "Gather", "Gather", "Concat", "Reshape"}));
}

TEST(PatternStaticConcatReshape, NotWhenAConstantIsMinusOne) {
  Model m = concat_reshape_model({.parts = {"-1", "dim1", "4"}});
  run_rules(m, "StaticConcatReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Shape", "Gather", "Concat", "Reshape"}));
}

TEST(PatternStaticConcatReshape, NotWithAllowZero) {
  Model m = concat_reshape_model({.parts = {"2", "dim1", "4"}, .allowzero = true});
  run_rules(m, "StaticConcatReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Shape", "Gather", "Concat", "Reshape"}));
}

TEST(PatternStaticConcatReshape, SameNumbers) {
  test::expect_same_outputs([] { return concat_reshape_model({.parts = {"2", "dim1", "4"}}); }, "StaticConcatReshape");
}

TEST(PatternConcatReshape, TheLastShapePartBecomesMinusOne) {
  Model m = concat_reshape_model({.parts = {"dim0", "dim1", "4"}});
  run_rules(m, "ConcatReshape");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Shape", "Gather", "Concat", "Reshape"}));
  const Graph& g = *m.graph;
  const Node& concat = g.node(g.value(g.node(g.value(g.outputs()[0]).producer).inputs[1]).producer);
  ASSERT_EQ(concat.inputs.size(), 3u);
  EXPECT_EQ(eval::as_int64s(*rewrite::constant_tensor(g, concat.inputs[1])), (std::vector<int64_t>{-1}));
}

TEST(PatternConcatReshape, ASingleShapePartGivesAConstantShape) {
  Model m = concat_reshape_model({.parts = {"2", "dim1", "4"}});
  run_rules(m, "ConcatReshape");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Reshape"}));
  EXPECT_EQ(constant_shape_of_reshape(m), (std::vector<int64_t>{2, -1, 4}));
}

TEST(PatternConcatReshape, NotWhenAPartDoesNotComeFromAShape) {
  Model m = concat_reshape_model({.parts = {"dim0", "input", "4"}});
  run_rules(m, "ConcatReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Shape", "Gather", "Concat", "Reshape"}));
}

TEST(PatternConcatReshape, NotWhenAConstantIsMinusOne) {
  Model m = concat_reshape_model({.parts = {"dim0", "dim1", "-1"}});
  run_rules(m, "ConcatReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Shape", "Gather", "Gather", "Concat", "Reshape"}));
}

TEST(PatternConcatReshape, NotWithAllowZero) {
  Model m = concat_reshape_model({.parts = {"dim0", "dim1", "4"}, .allowzero = true});
  run_rules(m, "ConcatReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Shape", "Gather", "Gather", "Concat", "Reshape"}));
}

TEST(PatternConcatReshape, SameNumbers) {
  test::expect_same_outputs([] { return concat_reshape_model({.parts = {"dim0", "dim1", "4"}}); }, "ConcatReshape");
}

namespace {

// ---- SequenceConstructAt --------------------------------------------------------------------------
Model sequence(bool constant_index) {
  Model m = test::model_with_opset(17);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 3});
  ValueId b = g.add_input("B", ElemType::Float, Shape{3});
  ValueId s = node(g, "SequenceConstruct", {a, b});
  ValueId first = constant_index ? g.add_initializer("zero", Tensor::scalar<int64_t>(0))
                                 : g.add_input("I", ElemType::Int64, Shape{});
  g.add_output(node(g, "Relu", {node(g, "SequenceAt", {s, first})}));
  g.add_output(node(g, "Neg", {node(g, "SequenceAt", {s, g.add_initializer("last", Tensor::scalar<int64_t>(-1))})}));
  return m;
}

TEST(PatternSequenceConstructAt, EachElementIsReadDirectly) {
  Model m = sequence(true);
  run_rules(m, "SequenceConstructAt");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Relu", "Neg"}));
  EXPECT_EQ(input_name(g, producer(g, g.outputs()[0]), 0), "A");
  EXPECT_EQ(input_name(g, producer(g, g.outputs()[1]), 0), "B");
}

TEST(PatternSequenceConstructAt, NotAtAComputedPosition) {
  Model m = sequence(false);
  run_rules(m, "SequenceConstructAt");
  // The constant position is read directly; the sequence stays for the other one.
  EXPECT_EQ(op_types(*m.graph), (OpList{"SequenceConstruct", "SequenceAt", "Relu", "Neg"}));
}

// The evaluator has no sequence kernels: ONNX Runtime runs both models, the evaluator the rewritten one;
// all three give the same bits (the rewrites move values, they compute nothing).
void expect_same_bits_without_the_sequence(const Model& before, const Model& after) {
  const xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*before.graph, {.seed = 7});
  xexp::testing::TempDir dir;
  const std::string before_path = (dir.path() / "before.onnx").string(), after_path = (dir.path() / "after.onnx").string();
  save_model(before, before_path);
  save_model(after, after_path);
  const std::vector<xexp::testing::OrtResult> ort =
      xexp::testing::run_onnxruntime_batch({{before_path, feeds}, {after_path, feeds}});
  ASSERT_TRUE(ort[0].ok) << ort[0].error;
  ASSERT_TRUE(ort[1].ok) << ort[1].error;
  xexp::testing::expect_all_close(ort[1].outputs, ort[0].outputs, 0, 0);
  xexp::testing::expect_all_close(test::evaluated(after, feeds), ort[0].outputs, 0, 0);
}

TEST(PatternSequenceConstructAt, SameNumbers) {
  Model before = sequence(true);
  Model after = sequence(true);
  run_rules(after, "SequenceConstructAt");
  ASSERT_EQ(op_types(*after.graph), (OpList{"Relu", "Neg"}));
  expect_same_bits_without_the_sequence(before, after);
}

// ---- SequenceConstructConcat ----------------------------------------------------------------------
// Y = ConcatFromSequence(SequenceConstruct(A, B, A), axis, new_axis), as onnxscript writes torch.cat.
Model concat_from_sequence(int64_t axis, int64_t new_axis = 0) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 3});
  ValueId b = g.add_input("B", ElemType::Float, Shape{2, 3});
  ValueId s = node(g, "SequenceConstruct", {a, b, a});
  std::vector<Attribute> attributes{Attribute::make_int("axis", axis)};
  if (new_axis) attributes.push_back(Attribute::make_int("new_axis", new_axis));
  g.add_output(node(g, "ConcatFromSequence", {s}, std::move(attributes)));
  return m;
}

TEST(PatternSequenceConstructConcat, IsAConcatOfTheElements) {
  Model m = concat_from_sequence(-1);
  run_rules(m, "SequenceConstructConcat");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Concat"}));
  const Node& concat = producer(g, g.outputs()[0]);
  ASSERT_EQ(concat.inputs.size(), 3u);
  EXPECT_EQ(input_name(g, producer(g, g.outputs()[0]), 0), "A");
  EXPECT_EQ(input_name(g, producer(g, g.outputs()[0]), 1), "B");
  EXPECT_EQ(input_name(g, producer(g, g.outputs()[0]), 2), "A");
  EXPECT_EQ(concat.attribute(Symbol("axis"))->i, -1);
  EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 9}));
}

TEST(PatternSequenceConstructConcat, NotForAStack) {
  Model m = concat_from_sequence(0, 1);
  run_rules(m, "SequenceConstructConcat");
  EXPECT_EQ(op_types(*m.graph), (OpList{"SequenceConstruct", "ConcatFromSequence"}));
}

TEST(PatternSequenceConstructConcat, SameNumbers) {
  for (int64_t axis : {0, 1, -2}) {
    SCOPED_TRACE(axis);
    Model after = concat_from_sequence(axis);
    run_rules(after, "SequenceConstructConcat");
    ASSERT_EQ(op_types(*after.graph), (OpList{"Concat"}));
    expect_same_bits_without_the_sequence(concat_from_sequence(axis), after);
  }
}

}  // namespace

namespace {

// ---- SlicesSplit ----------------------------------------------------------------------------------
struct Cut {
  int64_t start, end, step = 1;
};
Model sliced(const std::vector<Cut>& cuts, int64_t axis = 1) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 8});
  int k = 0;
  for (const Cut& c : cuts) {
    const std::string n = std::to_string(k++);
    ValueId piece = node(g, "Slice",
                         {x, test::int64_initializer(g, "start" + n, {c.start}), test::int64_initializer(g, "end" + n, {c.end}),
                          test::int64_initializer(g, "axis" + n, {axis}), test::int64_initializer(g, "step" + n, {c.step})});
    g.add_output(node(g, "Neg", {piece}));
  }
  return m;
}
constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

TEST(PatternSlicesSplit, PiecesCoveringTheAxisAreOneSplit) {
  for (int64_t axis : {1, -1}) {
    // In execution order: the middle piece, the last one (to the end), the first one.
    Model m = sliced({{2, 5}, {5, kEnd}, {0, 2}}, axis);
    run_rules(m, "SlicesSplit");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Split", "Neg", "Neg", "Neg"})) << axis;
    const Node& split = g.node(g.first_node());
    EXPECT_EQ(split.attribute(Symbol("axis"))->i, 1);
    EXPECT_EQ(constant_ints(g, split.inputs[1]), (std::vector<int64_t>{2, 3, 3}));
    EXPECT_EQ(producer(g, g.outputs()[0]).inputs[0], split.outputs[1]);
    EXPECT_EQ(producer(g, g.outputs()[1]).inputs[0], split.outputs[2]);
    EXPECT_EQ(producer(g, g.outputs()[2]).inputs[0], split.outputs[0]);
  }
}

TEST(PatternSlicesSplit, NotWithAGapAnOverlapOrAStep) {
  for (const std::vector<Cut>& cuts : {std::vector<Cut>{{0, 3}, {4, 8}}, std::vector<Cut>{{0, 5}, {3, 8}},
                                       std::vector<Cut>{{0, 4}, {4, 8, 2}}}) {
    Model m = sliced(cuts);
    run_rules(m, "SlicesSplit");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Slice", "Neg", "Slice", "Neg"}));
  }
}

TEST(PatternSlicesSplit, SameNumbers) {
  test::expect_same_outputs([] { return sliced({{2, 5}, {5, kEnd}, {0, 2}}); }, "SlicesSplit");
}

}  // namespace

namespace {

// ---- GathersSplit ---------------------------------------------------------------------------------
struct Picked {
  int64_t index;
  int64_t axis = 1;
  bool computed = false;  // the index is a graph input, not a constant
};
struct Unbind {
  std::vector<Picked> picks{{2}, {0}, {-2}};
  bool dynamic_axis = false;
  int64_t opset = 18;
};
// Gathers of X (3x3x4, or ?x3x4... with a symbolic dim on axis 1) in the order of `picks`, each negated.
Model unbound(const Unbind& c) {
  Model m = test::model_with_opset(c.opset);
  Graph& g = *m.graph;
  const Dim middle = c.dynamic_axis ? Dim::symbolic("n") : Dim(3);
  ValueId x = g.add_input("X", ElemType::Float, Shape{3, middle, 4});
  int k = 0;
  for (const Picked& p : c.picks) {
    const std::string n = std::to_string(k++);
    ValueId index = p.computed ? g.add_input("I" + n, ElemType::Int64, Shape{})
                               : g.add_initializer("i" + n, Tensor::from<int64_t>({}, {p.index}));
    ValueId piece = node(g, "Gather", {x, index}, {Attribute::make_int("axis", p.axis)}, "", c.opset);
    g.add_output(node(g, "Neg", {piece}, {}, "", c.opset));
  }
  return m;
}

TEST(PatternGathersSplit, OneGatherPerElementIsASplitAndSqueezes) {
  for (int64_t opset : {18, 13, 11}) {
    Model m = unbound({.opset = opset});
    run_rules(m, "GathersSplit");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Split", "Squeeze", "Squeeze", "Squeeze", "Neg", "Neg", "Neg"})) << opset;
    const Node& split = g.node(g.first_node());
    EXPECT_EQ(input_name(g, split, 0), "X");
    EXPECT_EQ(split.attribute(Symbol("axis"))->i, 1);
    ASSERT_EQ(split.outputs.size(), 3u);
    if (opset >= 18) {
      EXPECT_EQ(split.attribute(Symbol("num_outputs"))->i, 3);
      EXPECT_EQ(split.inputs.size(), 1u);
    } else if (opset >= 13) {
      EXPECT_EQ(constant_ints(g, split.inputs[1]), (std::vector<int64_t>{1, 1, 1}));
    } else {
      EXPECT_EQ(split.attribute(Symbol("split"))->ints, (std::vector<int64_t>{1, 1, 1}));
    }
    // Output k negates gather k: indices 2, 0 and -2 (element 1).
    const std::vector<std::size_t> piece_of_output{2, 0, 1};
    for (std::size_t k = 0; k < 3; ++k) {
      const Node& squeeze = producer(g, producer(g, g.outputs()[k]).inputs[0]);
      ASSERT_EQ(squeeze.op_type, Symbol("Squeeze"));
      EXPECT_EQ(squeeze.inputs[0], split.outputs[piece_of_output[k]]) << k;
      const std::vector<int64_t> axes =
          opset >= 13 ? constant_ints(g, squeeze.inputs[1]) : squeeze.attribute(Symbol("axes"))->ints;
      EXPECT_EQ(axes, (std::vector<int64_t>{1}));
    }
  }
}

// A Gather of a computed index first in order is no piece of the Split: the Split comes before the
// first constant one, and the computed one stays.
TEST(PatternGathersSplit, AComputedGatherBeforeThemStays) {
  Model m = unbound({.picks = {{1, 1, true}, {0}, {1}, {2}}});
  run_rules(m, "GathersSplit");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g),
            (OpList{"Gather", "Neg", "Split", "Squeeze", "Squeeze", "Squeeze", "Neg", "Neg", "Neg"}));
  EXPECT_EQ(input_name(g, g.node(g.first_node()), 1), "I0");
}

TEST(PatternGathersSplit, NotWithAMissingOrComputedIndexADynamicAxisOrAnotherAxis) {
  const Unbind declined[] = {
      {.picks = {{0}, {2}}},                       // element 1 missing
      {.picks = {{0}, {1}, {1}, {2}}},             // element 1 twice
      {.picks = {{0}, {1}, {2, 1, true}}},         // an index computed at run time
      {.dynamic_axis = true},                      // the axis length unknown
      {.picks = {{0}, {1}, {2, 0}}},               // a Gather along another axis
  };
  for (const Unbind& c : declined) {
    Model m = unbound(c);
    run_rules(m, "GathersSplit");
    for (const std::string& op : op_types(*m.graph)) EXPECT_TRUE(op == "Gather" || op == "Neg") << op;
  }
}

TEST(PatternGathersSplit, SameNumbers) {
  for (int64_t opset : {18, 13, 11})
    test::expect_same_outputs([opset] { return unbound({.opset = opset}); }, "GathersSplit");
}

}  // namespace
