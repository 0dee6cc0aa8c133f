// UnsqueezeOrSqueezeReshape, UnsqueezeReshape, UnsqueezeEqual: the exact op sequence after, one negative test
// per condition, and the same numbers before and after (xexp's evaluator and ONNX Runtime, exactly: no
// arithmetic changes).
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

// X -> op(axes) -> Reshape(shape) -> Relu.
struct SqueezeReshapeCase {
  std::string op = "Unsqueeze";
  Shape x = {2, 3};
  std::vector<int64_t> axes = {0};
  std::vector<int64_t> shape = {3, 2};
  bool constant_shape = true;
};
static Model squeeze_reshape_model(const SqueezeReshapeCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, c.x);
  ValueId first = node(g, c.op, {x, int64_initializer(g, "axes", c.axes)});
  ValueId shape = c.constant_shape ? int64_initializer(g, "shape", c.shape)
                                   : g.add_input("S", ElemType::Int64, Shape{static_cast<int64_t>(c.shape.size())});
  g.add_output(node(g, "Relu", {node(g, "Reshape", {first, shape})}));
  return m;
}

// ---- UnsqueezeOrSqueezeReshape --------------------------------------------------------------------
TEST(PatternUnsqueezeOrSqueezeReshape, TheReshapeReadsTheInputDirectly) {
  for (const SqueezeReshapeCase& c :
       {SqueezeReshapeCase{}, SqueezeReshapeCase{.op = "Squeeze", .x = {2, 1, 3}, .axes = {1}, .shape = {6}}}) {
    Model m = squeeze_reshape_model(c);
    run_rules(m, "UnsqueezeOrSqueezeReshape");
    ASSERT_EQ(op_types(*m.graph), (OpList{"Reshape", "Relu"}));
    EXPECT_EQ(m.graph->value(m.graph->node(m.graph->first_node()).inputs[0]).name, "X");
  }
}

TEST(PatternUnsqueezeOrSqueezeReshape, NotWhenTheShapeCopiesADimension) {
  Model m = squeeze_reshape_model({.shape = {0, -1}});
  run_rules(m, "UnsqueezeOrSqueezeReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Unsqueeze", "Reshape", "Relu"}));
}

TEST(PatternUnsqueezeOrSqueezeReshape, NotWithAShapeComputedAtRunTime) {
  Model m = squeeze_reshape_model({.constant_shape = false});
  run_rules(m, "UnsqueezeOrSqueezeReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Unsqueeze", "Reshape", "Relu"}));
}

TEST(PatternUnsqueezeOrSqueezeReshape, SameNumbers) {
  test::expect_same_outputs([] { return squeeze_reshape_model({}); }, "UnsqueezeOrSqueezeReshape");
  test::expect_same_outputs(
      [] { return squeeze_reshape_model({.op = "Squeeze", .x = {2, 1, 3}, .axes = {1}, .shape = {3, -1}}); },
      "UnsqueezeOrSqueezeReshape");
}

// ---- UnsqueezeReshape -----------------------------------------------------------------------------
TEST(PatternUnsqueezeReshape, BecomesOneUnsqueezeAtTheReshapedPlace) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 1, 3}, std::vector<int64_t>{2, -1, 1}}) {
    Model m = squeeze_reshape_model({.shape = shape});
    run_rules(m, "UnsqueezeReshape");
    ASSERT_EQ(op_types(*m.graph), (OpList{"Unsqueeze", "Relu"}));
    const Graph& g = *m.graph;
    const Node& unsqueeze = g.node(g.first_node());
    EXPECT_EQ(g.value(unsqueeze.inputs[0]).name, "X");
    EXPECT_EQ(eval::as_int64s(*rewrite::constant_tensor(g, unsqueeze.inputs[1])),
              (std::vector<int64_t>{shape[2] == 1 ? 2 : 1}));
  }
}

TEST(PatternUnsqueezeReshape, NotWhenTheReshapeMovesDimensions) {
  Model m = squeeze_reshape_model({.shape = {3, 1, 2}});
  run_rules(m, "UnsqueezeReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Unsqueeze", "Reshape", "Relu"}));
}

TEST(PatternUnsqueezeReshape, NotWithAShapeComputedAtRunTime) {
  Model m = squeeze_reshape_model({.shape = {2, 1, 3}, .constant_shape = false});
  run_rules(m, "UnsqueezeReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Unsqueeze", "Reshape", "Relu"}));
}

TEST(PatternUnsqueezeReshape, SameNumbers) {
  test::expect_same_outputs([] { return squeeze_reshape_model({.shape = {2, 1, 3}}); }, "UnsqueezeReshape");
}

namespace {

// ---- UnsqueezeEqual -------------------------------------------------------------------------------
struct Mask {
  std::vector<int64_t> equal_axes{1};
  bool twin_first = true;
  bool third_reader = false;
};
Model mask(const Mask& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Int64, Shape{2, 5});
  auto twin = [&] { return node(g, "Unsqueeze", {x, test::int64_initializer(g, "axes", {1})}); };
  ValueId u = c.twin_first ? twin() : ir::kNone;
  ValueId equal = node(g, "Equal", {x, g.add_initializer("pad", Tensor::scalar<int64_t>(0))});
  g.add_output(node(g, "Unsqueeze", {equal, test::int64_initializer(g, "equal_axes", c.equal_axes)}));
  if (!c.twin_first) u = twin();
  g.add_output(u);
  if (c.third_reader) g.add_output(node(g, "Neg", {x}));
  return m;
}

TEST(PatternUnsqueezeEqual, TheUnsqueezeServesBoth) {
  Model m = mask({});
  run_rules(m, "UnsqueezeEqual");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Unsqueeze", "Equal"}));
  EXPECT_EQ(g.node(g.last_node()).inputs[0], g.node(g.first_node()).outputs[0]);
  EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 1, 5}));
}

TEST(PatternUnsqueezeEqual, NotOnOtherAxesWithAThirdReaderOrAfterTheMask) {
  for (const Mask& c : {Mask{.equal_axes = {0}}, Mask{.third_reader = true}, Mask{.twin_first = false}}) {
    Model m = mask(c);
    run_rules(m, "UnsqueezeEqual");
    EXPECT_EQ(op_types(*m.graph).size(), c.third_reader ? 4u : 3u) << c.twin_first;
  }
}

TEST(PatternUnsqueezeEqual, SameNumbers) {
  test::expect_same_outputs([] { return mask({}); }, "UnsqueezeEqual");
}

}  // namespace
