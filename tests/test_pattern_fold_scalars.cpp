// MulMulMulScalar, ExpandSwap, ConcatEmpty, CastCastBinary, SwapRangeAddScalar: the exact op sequence
// after, one negative test per condition, and the same numbers before and after (xexp's evaluator and
// ONNX Runtime). MulMulMulScalar reassociates float32 products (1e-5 holds for inputs in [-1, 1));
// CastCastBinary rounds once to float16 instead of twice (1e-3, one float16 ulp near 1); the others
// compare exactly. Then the rewrites that change the type an op computes in: CastOpCast and
// ReduceSumNormalize (default set, tolerances at each test), and the onnxruntime set's MissingCosSin,
// MissingReduceMax, MissingTopK, MissingRange, which exist because ONNX Runtime cannot run the model
// before: there the rewritten model runs in ONNX Runtime and matches the evaluator on the original.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::constant_ints;
using test::input_name;
using test::int64_initializer;
using test::int_of;
using test::node;
using test::only_node;
using test::op_types;
using test::OpList;
using test::producer;
using test::run_rules;
using xexp::testing::float_type_name;
using xexp::testing::load_case_model;
using OpSeq = std::vector<std::string>;

static const Node& output_producer(const Graph& g) { return g.node(g.value(g.outputs()[0]).producer); }
// The constant the node computing the first output multiplies or divides by.
static const Tensor& output_scale(const Graph& g) {
  return *rewrite::constant_tensor(g, output_producer(g).inputs[1]);
}
static float output_scale_value(const Graph& g) {
  return static_cast<float>(eval::element_as_double(output_scale(g), 0));
}

// ---- MulMulMulScalar ------------------------------------------------------------------------------
struct MmmCase {
  std::string outer = "Mul", left = "Mul", right = "Div";
  bool constant = true;
  bool integers = false;
};
static Model mmm_model(const MmmCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  const ElemType t = c.integers ? ElemType::Int64 : ElemType::Float;
  ValueId x = g.add_input("X", t, Shape{2, 3});
  ValueId y = g.add_input("Y", t, Shape{2, 3});
  ValueId c1 = g.add_initializer("c1", c.integers ? Tensor::scalar<int64_t>(3) : Tensor::scalar<float>(3.0f));
  ValueId c2 = !c.constant  ? g.add_input("c2", t, Shape{1})
               : c.integers ? g.add_initializer("c2", Tensor::from<int64_t>({1}, {4}))
                            : g.add_initializer("c2", Tensor::from<float>({1}, {4.0f}));
  g.add_output(node(g, c.outer, {node(g, c.left, {x, c1}), node(g, c.right, {y, c2})}));
  return m;
}
// The chain ((X inner 3) * Y) outer 4, as RMSNorm backward writes X * -0.5 * rstd^3 / n.
struct ChainCase {
  std::string inner = "Mul", outer = "Div";
};
static Model chain_model(const ChainCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 1});
  ValueId y = g.add_input("Y", ElemType::Float, Shape{2, 3, 1});
  ValueId inner = node(g, c.inner, {x, g.add_initializer("c1", Tensor::scalar<float>(3.0f))});
  g.add_output(
      node(g, c.outer, {node(g, "Mul", {y, inner}), g.add_initializer("c2", Tensor::scalar<float>(4.0f))}));
  return m;
}

TEST(PatternMulMulMulScalar, ScalarsAreMultipliedOnce) {
  Model m = mmm_model({});
  run_rules(m, "MulMulMulScalar");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Mul", "Mul"}));
  EXPECT_EQ(output_scale(*m.graph).dims(), (std::vector<int64_t>{1}));
  EXPECT_FLOAT_EQ(output_scale_value(*m.graph), 0.75f);
  Model div = mmm_model({.outer = "Div", .left = "Div", .right = "Mul"});
  run_rules(div, "MulMulMulScalar");
  ASSERT_EQ(op_types(*div.graph), (OpSeq{"Div", "Mul"}));
  EXPECT_FLOAT_EQ(output_scale_value(*div.graph), 1.0f / 12.0f);
}

TEST(PatternMulMulMulScalar, NotWithANonConstantScalar) {
  Model m = mmm_model({.constant = false});
  run_rules(m, "MulMulMulScalar");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Mul", "Div", "Mul"}));
}

TEST(PatternMulMulMulScalar, IntegerDivisionsStay) {
  // x / 3 * (y * 4) is not x * y * (4 / 3) in integers; products alone reassociate exactly.
  Model div = mmm_model({.left = "Div", .right = "Mul", .integers = true});
  run_rules(div, "MulMulMulScalar");
  EXPECT_EQ(op_types(*div.graph), (OpSeq{"Div", "Mul", "Mul"}));
  Model mul = mmm_model({.right = "Mul", .integers = true});
  run_rules(mul, "MulMulMulScalar");
  ASSERT_EQ(op_types(*mul.graph), (OpSeq{"Mul", "Mul"}));
  EXPECT_EQ(eval::as_int64s(output_scale(*mul.graph)), (std::vector<int64_t>{12}));
}

TEST(PatternMulMulMulScalar, ChainMultipliesOnce) {
  Model m = chain_model({});
  run_rules(m, "MulMulMulScalar");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Mul", "Mul"}));
  const Graph& g = *m.graph;
  const Node& scale = output_producer(g);
  const Node& product = g.node(g.value(scale.inputs[0]).producer);
  EXPECT_EQ(product.inputs, (std::vector<ValueId>{g.at("X"), g.at("Y")}));
  EXPECT_EQ(output_scale(g).rank(), 0u);
  EXPECT_FLOAT_EQ(output_scale_value(g), 0.75f);
  Model div = chain_model({.inner = "Div", .outer = "Mul"});
  run_rules(div, "MulMulMulScalar");
  ASSERT_EQ(op_types(*div.graph), (OpSeq{"Mul", "Mul"}));
  EXPECT_FLOAT_EQ(output_scale_value(*div.graph), 4.0f / 3.0f);
}

TEST(PatternMulMulMulScalar, SameNumbers) {
  // Reassociated products differ in the last bits.
  test::expect_same_outputs([] { return mmm_model({}); }, "MulMulMulScalar", 1e-5);
  test::expect_same_outputs([] { return mmm_model({.outer = "Div", .left = "Div", .right = "Mul"}); },
                            "MulMulMulScalar", 1e-5);
  test::expect_same_outputs([] { return chain_model({}); }, "MulMulMulScalar", 1e-5);
  test::expect_same_outputs([] { return chain_model({.inner = "Div", .outer = "Mul"}); }, "MulMulMulScalar",
                            1e-5);
}

// ---- ExpandSwap -----------------------------------------------------------------------------------
static Model expand_swap_model(const std::string& op) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{1, 4});
  ValueId expanded = node(g, "Expand", {x, int64_initializer(g, "shape", {3, 4})});
  std::vector<ValueId> inputs{expanded};
  if (op == "Pow") inputs.push_back(g.add_initializer("two", Tensor::scalar<float>(2.0f)));
  if (op == "Mul") inputs.push_back(g.add_input("Y", ElemType::Float, Shape{3, 4}));
  g.add_output(node(g, op, inputs));
  return m;
}

TEST(PatternExpandSwap, TheOpRunsOnTheSmallTensor) {
  for (const char* op : {"Exp", "Pow"}) {
    Model m = expand_swap_model(op);
    run_rules(m, "ExpandSwap");
    EXPECT_EQ(op_types(*m.graph), (OpSeq{op, "Expand"}));
    EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).shape, (Shape{3, 4}));
  }
}

TEST(PatternExpandSwap, NotForABinaryOpWithATensor) {
  Model m = expand_swap_model("Mul");
  run_rules(m, "ExpandSwap");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Expand", "Mul"}));
}

TEST(PatternExpandSwap, SameNumbers) {
  test::expect_same_outputs([] { return expand_swap_model("Exp"); }, "ExpandSwap");
  test::expect_same_outputs([] { return expand_swap_model("Pow"); }, "ExpandSwap");
}

// ---- ConcatEmpty ----------------------------------------------------------------------------------
static Model concat_model(std::vector<Shape> shapes, int64_t axis) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  std::vector<ValueId> parts;
  for (std::size_t k = 0; k < shapes.size(); ++k)
    parts.push_back(g.add_input(std::string("X") + std::to_string(k), ElemType::Float, shapes[k]));
  g.add_output(node(g, "Concat", parts, {Attribute::make_int("axis", axis)}));
  return m;
}

TEST(PatternConcatEmpty, EmptyPartsAreDropped) {
  Model m = concat_model({{2, 3}, {2, 0}, {2, 4}}, -1);
  run_rules(m, "ConcatEmpty");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Concat"}));
  EXPECT_EQ(output_producer(*m.graph).inputs.size(), 2u);
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).shape, (Shape{2, 7}));
}

TEST(PatternConcatEmpty, OneRemainingPartReplacesTheConcat) {
  Model m = concat_model({{0, 3}, {2, 3}}, 0);
  run_rules(m, "ConcatEmpty");
  const Graph& g = *m.graph;
  EXPECT_EQ(op_types(g), (OpSeq{"Identity"}));  // keeps the graph output's name
  EXPECT_EQ(g.value(output_producer(g).inputs[0]).name, "X1");
}

TEST(PatternConcatEmpty, NotWhenNothingIsEmptyOnTheAxis) {
  Model m = concat_model({{0, 3}, {0, 4}}, 1);
  run_rules(m, "ConcatEmpty");
  EXPECT_EQ(output_producer(*m.graph).inputs.size(), 2u);
}

TEST(PatternConcatEmpty, SameNumbers) {
  test::expect_same_outputs([] { return concat_model({{2, 3}, {2, 0}, {2, 4}}, -1); }, "ConcatEmpty");
}

// ---- CastCastBinary -------------------------------------------------------------------------------
static Model cast_binary_model(ElemType from, ElemType to, ElemType other_from) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", from, Shape{2, 3});
  ValueId b = g.add_input("B", other_from, Shape{2, 3});
  const Attribute cast = Attribute::make_int("to", static_cast<int64_t>(to));
  g.add_output(node(g, "Mul", {node(g, "Cast", {a}, {cast}), node(g, "Cast", {b}, {cast})}));
  return m;
}

TEST(PatternCastCastBinary, OneCastAfterTheOp) {
  Model m = cast_binary_model(ElemType::Float, ElemType::Float16, ElemType::Float);
  run_rules(m, "CastCastBinary");
  ASSERT_EQ(op_types(*m.graph), (OpSeq{"Mul", "Cast"}));
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).elem, ElemType::Float16);
}

TEST(PatternCastCastBinary, NotWhenTheInputsAreLessPrecise) {
  Model m = cast_binary_model(ElemType::Float16, ElemType::Float, ElemType::Float16);
  run_rules(m, "CastCastBinary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Cast", "Cast", "Mul"}));
}

TEST(PatternCastCastBinary, NotFromIntegers) {
  Model m = cast_binary_model(ElemType::Int64, ElemType::Float, ElemType::Int64);
  run_rules(m, "CastCastBinary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Cast", "Cast", "Mul"}));
}

TEST(PatternCastCastBinary, NotWhenTheInputTypesDiffer) {
  Model m = cast_binary_model(ElemType::Double, ElemType::Float16, ElemType::Float);
  run_rules(m, "CastCastBinary");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Cast", "Cast", "Mul"}));
}

TEST(PatternCastCastBinary, SameNumbersWithinOneFloat16Ulp) {
  test::expect_same_outputs(
      [] { return cast_binary_model(ElemType::Float, ElemType::Float16, ElemType::Float); }, "CastCastBinary",
      1e-3);
}

// ---- SwapRangeAddScalar ---------------------------------------------------------------------------
static Model range_model(ElemType type, Shape plus_shape) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  auto scalar = [&](const std::string& name, double v) {
    return g.add_initializer(name, eval::filled(type, {}, v));
  };
  ValueId n = g.add_input("N", ElemType::Int64, Shape{1});
  ValueId limit =
      node(g, "Cast", {node(g, "Squeeze", {n})}, {Attribute::make_int("to", static_cast<int64_t>(type))});
  ValueId range = node(g, "Range", {scalar("start", 2), limit, scalar("delta", 3)});
  std::vector<int64_t> dims = *static_dims(plus_shape);
  g.add_output(node(g, "Add", {range, g.add_initializer("plus", eval::filled(type, dims, 5))}));
  return m;
}

TEST(PatternSwapRangeAddScalar, ThePlusMovesIntoTheBounds) {
  Model m = range_model(ElemType::Int64, {});
  run_rules(m, "SwapRangeAddScalar");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Squeeze", "Cast", "Add", "Add", "Range"}));
  Model vector_plus = range_model(ElemType::Int64, {1});
  run_rules(vector_plus, "SwapRangeAddScalar");
  EXPECT_EQ(op_types(*vector_plus.graph), (OpSeq{"Squeeze", "Cast", "Squeeze", "Add", "Add", "Range"}));
}

TEST(PatternSwapRangeAddScalar, NotInFloatingPoint) {
  Model m = range_model(ElemType::Float, {});
  run_rules(m, "SwapRangeAddScalar");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Squeeze", "Cast", "Range", "Add"}));
}

TEST(PatternSwapRangeAddScalar, NotWithAVector) {
  Model m = range_model(ElemType::Int64, {2});
  run_rules(m, "SwapRangeAddScalar");
  EXPECT_EQ(op_types(*m.graph), (OpSeq{"Squeeze", "Cast", "Range", "Add"}));
}

TEST(PatternSwapRangeAddScalar, SameNumbers) {
  test::expect_same_outputs([] { return range_model(ElemType::Int64, {}); }, "SwapRangeAddScalar");
  test::expect_same_outputs([] { return range_model(ElemType::Int32, {1}); }, "SwapRangeAddScalar");
}

namespace {

// ---- CastOpCast -----------------------------------------------------------------------------------
// Cast(op(Cast(X, to=wide), other), to=back); `other` is Cast(Z, to=wide) or Z itself.
struct CastAround {
  std::string op = "Add", x = "float16", z = "float16", wide = "1", back = "10";
  bool z_cast = true, z_first = false, unary = false, x_read_twice = false;
};
std::string cast_around_text(const CastAround& c) {
  const std::string back_type = float_type_name(c.back);
  std::string text = "<ir_version: 8, opset_import: [\"\" : 18]>\ng (" + c.x + "[2,3] X, " + c.z +
                     "[2,3] Z) => (" + back_type + "[2,3] Y" + (c.x_read_twice ? ", float[2,3] W" : "") +
                     ") {\n  CX = Cast<to=" + c.wide + ">(X)\n";
  std::string other = "Z";
  if (c.z_cast) {
    text += "  CZ = Cast<to=" + c.wide + ">(Z)\n";
    other = "CZ";
  }
  if (c.unary)
    text += "  S = " + c.op + "(CX)\n";
  else
    text += "  S = " + c.op + "(" + (c.z_first ? other + ", CX" : "CX, " + other) + ")\n";
  if (c.x_read_twice) text += "  W = Relu(CX)\n";
  return text + "  Y = Cast<to=" + c.back + ">(S)\n}\n";
}

TEST(PatternCastOpCast, TheOpWorksInTheOuterType) {
  for (const std::string op : {"Add", "Sub", "Mul", "Div"}) {
    Model m = load_case_model(cast_around_text({.op = op}));
    run_rules(m, "CastOpCast");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{op})) << op;
    const Node& n = g.node(g.first_node());
    EXPECT_EQ(input_name(g, n, 0), "X");
    EXPECT_EQ(input_name(g, n, 1), "Z");
    EXPECT_EQ(g.value(g.outputs()[0]).elem, ElemType::Float16);
  }
}

TEST(PatternCastOpCast, AnInputWithoutCastIsCastToTheOuterType) {
  for (bool z_first : {false, true}) {
    Model m = load_case_model(cast_around_text({.z = "float", .z_cast = false, .z_first = z_first}));
    run_rules(m, "CastOpCast");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Cast", "Add"})) << z_first;
    const Node& cast = g.node(g.first_node());
    EXPECT_EQ(input_name(g, cast, 0), "Z");
    EXPECT_EQ(cast.attribute(Symbol("to"))->i, static_cast<int64_t>(ElemType::Float16));
    EXPECT_EQ(input_name(g, g.node(g.last_node()), z_first ? 1 : 0), "X");
  }
}

TEST(PatternCastOpCast, UnaryOpsKeepTheirAttributes) {
  Model m = load_case_model(cast_around_text({.op = "Softmax<axis=0>", .z_cast = false, .unary = true}));
  run_rules(m, "CastOpCast");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Softmax"}));
  const Node& softmax = g.node(g.last_node());
  EXPECT_EQ(input_name(g, softmax, 0), "X");
  EXPECT_EQ(softmax.attribute(Symbol("axis"))->i, 0);
}

TEST(PatternCastOpCast, NotForAnotherTypeBfloat16IntegersOrAnInputReadTwice) {
  const std::vector<CastAround> refused{
      {.back = "11"},                                          // back to double, not X's type
      {.x = "bfloat16", .z = "bfloat16", .back = "16"},        // no CPU kernel in bfloat16
      {.x = "float", .z = "float", .wide = "7", .back = "1"},  // computed in int64
      {.z = "float", .z_cast = false, .x_read_twice = true},   // the widened X is read again
      {.op = "Pow"},                                           // not an op of the family
  };
  for (const CastAround& c : refused) {
    Model m = load_case_model(cast_around_text(c));
    const OpList before = op_types(*m.graph);
    run_rules(m, "CastOpCast");
    EXPECT_EQ(op_types(*m.graph), before) << cast_around_text(c);
  }
}

TEST(PatternCastOpCast, SameNumbers) {
  // float16 + float16 computed in float and rounded once is float16's own correctly rounded sum: exact.
  test::expect_same_outputs([] { return load_case_model(cast_around_text({})); }, "CastOpCast");
  // Z rounded to float16 first, Sigmoid in float16: an ulp or two of float16.
  test::expect_same_outputs([] { return load_case_model(cast_around_text({.z = "float", .z_cast = false})); },
                            "CastOpCast", 2e-3);
  test::expect_same_outputs(
      [] { return load_case_model(cast_around_text({.op = "Sigmoid", .z_cast = false, .unary = true})); },
      "CastOpCast", 2e-3);
}

}  // namespace

namespace {

// ---- ReduceSumNormalize ---------------------------------------------------------------------------
// Cast(X - ReduceSum(Cast(X)) * Y, to=back) computed in float.
struct Normalized {
  std::string x = "float16", back = "10";
  bool y_first = false, sub_swapped = false;
};
std::string normalized_text(const Normalized& c) {
  const std::string back_type = float_type_name(c.back);
  return "<ir_version: 8, opset_import: [\"\" : 18]>\ng (" + c.x + "[2,4] X, float[2,1] Y) => (" + back_type +
         "[2,4] Z) <int64[1] axes = {1}> {\n  W = Cast<to=1>(X)\n  R = ReduceSum<keepdims=1>(W, axes)\n  M = "
         "Mul(" +
         (c.y_first ? "Y, R" : "R, Y") + ")\n  S = Sub(" + (c.sub_swapped ? "M, W" : "W, M") +
         ")\n  Z = Cast<to=" + c.back + ">(S)\n}\n";
}

TEST(PatternReduceSumNormalize, ComputedInTheInputType) {
  for (bool y_first : {false, true}) {
    Model m = load_case_model(normalized_text({.y_first = y_first}));
    run_rules(m, "ReduceSumNormalize");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"ReduceSum", "Cast", "Mul", "Sub"})) << y_first;
    const Node& sum = g.node(g.first_node());
    EXPECT_EQ(input_name(g, sum, 0), "X");
    EXPECT_EQ(constant_ints(g, sum.inputs[1]), (std::vector<int64_t>{1}));
    EXPECT_EQ(sum.attribute(Symbol("keepdims"))->i, 1);
    const Node& cast = producer(g, producer(g, g.node(g.last_node()).inputs[1]).inputs[1]);
    EXPECT_EQ(input_name(g, cast, 0), "Y");
    EXPECT_EQ(cast.attribute(Symbol("to"))->i, static_cast<int64_t>(ElemType::Float16));
    EXPECT_EQ(input_name(g, g.node(g.last_node()), 0), "X");
    EXPECT_EQ(g.value(g.outputs()[0]).elem, ElemType::Float16);
  }
}

TEST(PatternReduceSumNormalize, NotForAnotherTypeBfloat16OrTheOtherDifference) {
  for (const Normalized& c : {Normalized{.back = "1"}, Normalized{.x = "bfloat16", .back = "16"},
                              Normalized{.sub_swapped = true}}) {
    Model m = load_case_model(normalized_text(c));
    run_rules(m, "ReduceSumNormalize");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Cast", "ReduceSum", "Mul", "Sub", "Cast"})) << normalized_text(c);
  }
}

TEST(PatternReduceSumNormalize, SameNumbers) {
  // Summed and multiplied in float16: a few ulps of float16 on values below 10.
  test::expect_same_outputs([] { return load_case_model(normalized_text({})); }, "ReduceSumNormalize", 1e-2);
}

}  // namespace

namespace {

// ---- MissingCosSin and MissingReduceMax ---------------------------------------------------------
// `boundary`: the graph reads and writes float around the tested type (the test runner feeds no
// bfloat16), as a model computing in bfloat16 inside does.
ValueId typed_input(Graph& g, ElemType type, Shape shape, bool boundary, int64_t opset) {
  if (!boundary) return g.add_input("X", type, std::move(shape));
  ValueId x = g.add_input("X", ElemType::Float, std::move(shape));
  return node(g, "Cast", {x}, {Attribute::make_int("to", static_cast<int64_t>(type))}, "", opset);
}
void add_typed_output(Graph& g, ValueId y, bool boundary, int64_t opset) {
  g.add_output(boundary
                   ? node(g, "Cast", {y}, {Attribute::make_int("to", static_cast<int64_t>(ElemType::Float))}, "", opset)
                   : y);
}
Model unary(const std::string& op, ElemType type, bool boundary = false) {
  const int64_t opset = 22;
  Model m = test::model_with_opset(opset);
  Graph& g = *m.graph;
  add_typed_output(g, node(g, op, {typed_input(g, type, Shape{2, 5}, boundary, opset)}, {}, "", opset),
                   boundary, opset);
  return m;
}
Model reduction(const std::string& op, ElemType type, bool boundary = false) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = typed_input(g, type, Shape{3, 4}, boundary, 18);
  add_typed_output(g, node(g, op, {x, test::int64_initializer(g, "axes", {1})}, {Attribute::make_int("keepdims", 0)}),
                   boundary, 18);
  return m;
}

TEST(PatternMissingCosSin, Bfloat16RunsInFloat) {
  for (const char* op : {"Cos", "Sin", "Log"}) {
    Model m = unary(op, ElemType::BFloat16);
    run_rules(m, "MissingCosSin");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Cast", op, "Cast"})) << op;
    EXPECT_EQ(int_of(g.node(g.first_node()), "to"), static_cast<int64_t>(ElemType::Float));
    EXPECT_EQ(int_of(g.node(g.last_node()), "to"), static_cast<int64_t>(ElemType::BFloat16));
    EXPECT_EQ(g.value(g.outputs()[0]).elem, ElemType::BFloat16);
  }
}

TEST(PatternMissingCosSin, NotForTypesOnnxRuntimeRuns) {
  for (ElemType type : {ElemType::Float16, ElemType::Float, ElemType::Double}) {
    Model m = unary("Sin", type);
    run_rules(m, "MissingCosSin");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Sin"})) << elem_type_name(type);
  }
}

TEST(PatternMissingCosSin, SameNumbersAndOnnxRuntimeRunsIt) {
  for (const char* op : {"Cos", "Sin", "Log"})
    test::expect_same_outputs_where_onnxruntime_runs([op] { return unary(op, ElemType::BFloat16, true); },
                                                     "MissingCosSin", 0);
}

TEST(PatternMissingReduceMax, SelectsInAWiderType) {
  struct Case {
    const char* op;
    ElemType type, wide;
  };
  for (const Case& c : {Case{"ReduceMax", ElemType::BFloat16, ElemType::Float},
                        Case{"ReduceMin", ElemType::UInt32, ElemType::Int64}}) {
    Model m = reduction(c.op, c.type);
    run_rules(m, "MissingReduceMax");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Cast", c.op, "Cast"})) << c.op;
    EXPECT_EQ(int_of(g.node(g.first_node()), "to"), static_cast<int64_t>(c.wide));
    EXPECT_EQ(int_of(only_node(g, c.op), "keepdims", 1), 0);
    EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{3}));
    EXPECT_EQ(g.value(g.outputs()[0]).elem, c.type);
  }
}

TEST(PatternMissingReduceMax, NotForTypesOnnxRuntimeRunsOrWithoutAWiderType) {
  for (ElemType type : {ElemType::Float16, ElemType::Float, ElemType::Int32, ElemType::UInt64}) {
    Model m = reduction("ReduceMax", type);
    run_rules(m, "MissingReduceMax");
    EXPECT_EQ(op_types(*m.graph), (OpList{"ReduceMax"})) << elem_type_name(type);
  }
}

// TopK(X, [2], axis=1) on X (3, 5): values (cast back to float at the boundary) and indices.
Model top_k(ElemType type, bool boundary = false) {
  const int64_t opset = 24;  // bfloat16 TopK is ONNX from opset 24
  Model m = test::model_with_opset(opset);
  Graph& g = *m.graph;
  ValueId x = typed_input(g, type, Shape{3, 5}, boundary, opset);
  ValueId values = g.add_value("values"), indices = g.add_value("indices");
  NodeId top = g.add_node(Symbol("TopK"), {x, test::int64_initializer(g, "k", {2})}, {values, indices},
                          {Attribute::make_int("axis", 1)}, "top");
  infer::infer_node(g, top, opset);
  add_typed_output(g, values, boundary, opset);
  g.add_output(indices);
  return m;
}

TEST(PatternMissingTopK, SelectsInAWiderTypeAndKeepsTheIndices) {
  struct Case {
    ElemType type, wide;
  };
  for (const Case& c : {Case{ElemType::BFloat16, ElemType::Float}, Case{ElemType::UInt16, ElemType::Int32},
                        Case{ElemType::UInt32, ElemType::Int64}}) {
    Model m = top_k(c.type);
    run_rules(m, "MissingTopK");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Cast", "TopK", "Cast"})) << elem_type_name(c.type);
    EXPECT_EQ(int_of(g.node(g.first_node()), "to"), static_cast<int64_t>(c.wide));
    const Node& top = only_node(g, "TopK");
    EXPECT_EQ(int_of(top, "axis"), 1);
    EXPECT_EQ(g.value(g.outputs()[0]).elem, c.type);
    EXPECT_EQ(g.value(g.outputs()[1]).producer, g.value(top.outputs[1]).producer);
    EXPECT_EQ(*g.value(g.outputs()[1]).shape, (Shape{3, 2}));
  }
}

TEST(PatternMissingTopK, NotForTypesOnnxRuntimeRunsOrWithoutAWiderType) {
  for (ElemType type :
       {ElemType::Float16, ElemType::Float, ElemType::UInt8, ElemType::Int16, ElemType::UInt64}) {
    Model m = top_k(type);
    run_rules(m, "MissingTopK");
    EXPECT_EQ(op_types(*m.graph), (OpList{"TopK"})) << elem_type_name(type);
  }
}

TEST(PatternMissingTopK, SameNumbersAndOnnxRuntimeRunsIt) {
  test::expect_same_outputs_where_onnxruntime_runs([] { return top_k(ElemType::BFloat16, true); },
                                                   "MissingTopK", 0);
  test::expect_same_outputs_where_onnxruntime_runs([] { return top_k(ElemType::UInt16); }, "MissingTopK", 0);
  test::expect_same_outputs_where_onnxruntime_runs([] { return top_k(ElemType::UInt32); }, "MissingTopK", 0);
}

TEST(PatternMissingReduceMax, SameNumbersAndOnnxRuntimeRunsIt) {
  test::expect_same_outputs_where_onnxruntime_runs(
      [] { return reduction("ReduceMax", ElemType::BFloat16, true); }, "MissingReduceMax", 0);
  test::expect_same_outputs_where_onnxruntime_runs([] { return reduction("ReduceMin", ElemType::UInt32); },
                                                   "MissingReduceMax", 0);
}

// ---- MissingRange ---------------------------------------------------------------------------------
// Range(start, limit, delta) on `type`, all three inputs; with `boundary`, start is a float input cast to
// the type, limit 9 and delta 1 constants cast to it (the test runner feeds no bfloat16, and a random
// step could make an empty or endless range).
Model range(ElemType type, bool boundary = false) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  const Attribute to = Attribute::make_int("to", static_cast<int64_t>(type));
  auto cast_of = [&](const std::string& name, float value) {
    return node(g, "Cast", {g.add_initializer(name, Tensor::from<float>({}, {value}))}, {to});
  };
  if (!boundary) {
    g.add_output(node(g, "Range",
                      {g.add_input("start", type, Shape{}), g.add_input("limit", type, Shape{}),
                       g.add_input("delta", type, Shape{})}));
    return m;
  }
  ValueId start = node(g, "Cast", {g.add_input("start", ElemType::Float, Shape{})}, {to});
  add_typed_output(g, node(g, "Range", {start, cast_of("limit", 9.0f), cast_of("delta", 1.0f)}), true, 18);
  return m;
}

TEST(PatternMissingRange, RunsInATypeOnnxAllows) {
  for (const auto& [type, wide] : {std::pair{ElemType::Float16, ElemType::Float},
                                   {ElemType::BFloat16, ElemType::Float},
                                   {ElemType::UInt8, ElemType::Int32},
                                   {ElemType::UInt32, ElemType::Int64}}) {
    Model m = range(type);
    run_rules(m, "MissingRange");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Cast", "Cast", "Cast", "Range", "Cast"})) << elem_type_name(type);
    const Node& r = only_node(g, "Range");
    for (ValueId input : r.inputs) EXPECT_EQ(g.value(input).elem, wide) << elem_type_name(type);
    EXPECT_EQ(int_of(g.node(g.last_node()), "to"), static_cast<int64_t>(type));
    EXPECT_EQ(g.value(g.outputs()[0]).elem, type);
  }
}

TEST(PatternMissingRange, NotForTypesOnnxAllowsOrWithoutAWiderType) {
  for (ElemType type : {ElemType::Float, ElemType::Double, ElemType::Int16, ElemType::Int32, ElemType::Int64,
                        ElemType::UInt64}) {
    Model m = range(type);
    run_rules(m, "MissingRange");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Range"})) << elem_type_name(type);
  }
}

TEST(PatternMissingRange, SameNumbersAndOnnxRuntimeRunsIt) {
  for (ElemType type : {ElemType::Float16, ElemType::BFloat16, ElemType::UInt8})
    test::expect_same_outputs_where_onnxruntime_runs([type] { return range(type, true); }, "MissingRange", 0);
}

}  // namespace
