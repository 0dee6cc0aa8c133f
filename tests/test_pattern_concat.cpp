// SplitConcat, ConcatGather, StaticConcatReshape, ConcatReshape: the exact op sequence after, one negative
// test per condition, and the same numbers before and after (xexp's evaluator and ONNX Runtime, exactly:
// none of these rewrites changes arithmetic).
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
