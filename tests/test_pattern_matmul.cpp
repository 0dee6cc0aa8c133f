// GemmTranspose, TransposeMatMul, MatMulSharedInput, ReshapeMatMulReshape, TransposeReshapeMatMul,
// ShapeBasedMatMulToMul, MatMulReshape2Of3 and (onnxruntime set) FusedMatMul, FusedMatMulx2, FusedMatMulDiv,
// FusedMatMulTranspose, TransposeFusedMatMulB, ReshapeGemm, ReshapeGemmReshape: positive, negatives, same
// numbers.
// Same numbers compared exactly: FusedMatMul with alpha multiplies once instead of twice, which gives
// the same bits on these inputs in both runtimes.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
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
using test::int_of;
using test::node;
using test::only_node;
using test::op_types;
using test::OpList;
using test::producer;
using test::run_rules;
using xexp::testing::int64_type;
using xexp::testing::load_case_model;

static Tensor ramp(std::vector<int64_t> dims) {
  std::vector<float> v;
  for (int64_t k = 0; k < dims_element_count(dims); ++k) v.push_back(0.1f * static_cast<float>(k % 7) - 0.3f);
  return Tensor::from<float>(std::move(dims), v);
}
static Attribute perm(std::vector<int64_t> p) { return Attribute::make_ints("perm", std::move(p)); }
static Attribute int_attr(const char* name, int64_t v) { return Attribute::make_int(name, v); }
static Attribute float_attr(const char* name, float v) { return Attribute::make_float(name, v); }
static ValueId fused_matmul(Graph& g, ValueId a, ValueId b, std::vector<Attribute> attributes) {
  return node(g, "FusedMatMul", {a, b}, std::move(attributes), "com.microsoft");
}
static float float_of(const Node& n, const char* name) {
  const Attribute* a = n.attribute(Symbol(name));
  return a ? a->f : 1.0f;
}
static Model with_ms(Model m) {
  m.opsets.push_back({"com.microsoft", 1, {}});
  return m;
}

// ---- GemmTranspose --------------------------------------------------------------------------------
static Model gemm(bool constant_weight, int64_t trans_b) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{4, 3});
  const std::vector<int64_t> dims = trans_b ? std::vector<int64_t>{5, 3} : std::vector<int64_t>{3, 5};
  ValueId w = constant_weight ? g.add_initializer("W", ramp(dims))
                              : g.add_input("W", ElemType::Float, make_shape(dims));
  ValueId c = g.add_initializer("C", ramp({5}));
  g.add_output(node(g, "Gemm", {a, w, c},
                    {Attribute::make_int("transB", trans_b), Attribute::make_float("alpha", 0.5f)}));
  return m;
}

TEST(PatternGemmTranspose, ConstantWeightIsTransposed) {
  Model m = gemm(true, 0);
  run_rules(m, "GemmTranspose");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Transpose", "Gemm"}));
  const Node& n = m.graph->node(m.graph->last_node());
  EXPECT_EQ(n.attribute(Symbol("transB"))->i, 1);
  EXPECT_EQ(n.attribute(Symbol("alpha"))->f, 0.5f);
}

TEST(PatternGemmTranspose, NotForAVariableWeightOrTransB) {
  Model v = gemm(false, 0);
  run_rules(v, "GemmTranspose");
  EXPECT_EQ(op_types(*v.graph), (OpList{"Gemm"}));
  Model t = gemm(true, 1);
  run_rules(t, "GemmTranspose");
  EXPECT_EQ(op_types(*t.graph), (OpList{"Gemm"}));
}

TEST(PatternGemmTranspose, SameNumbers) {
  test::expect_same_outputs([] { return gemm(true, 0); }, "GemmTranspose");
}

// ---- TransposeMatMul ------------------------------------------------------------------------------
// A (or its transpose when `left`) is (..., M, 3); B (or its transpose when `right`) is (3, 5).
static Model transposed_matmul(bool left, bool right, Shape a_shape = {3, 4}) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, a_shape);
  ValueId b = g.add_input("B", ElemType::Float, right ? Shape{5, 3} : Shape{3, 5});
  std::vector<int64_t> p(a_shape.size());
  for (std::size_t k = 0; k < p.size(); ++k) p[k] = static_cast<int64_t>(k);
  std::swap(p[p.size() - 1], p[p.size() - 2]);
  ValueId ta = left ? node(g, "Transpose", {a}, {perm(p)}) : a;
  ValueId tb = right ? node(g, "Transpose", {b}, {perm({1, 0})}) : b;
  g.add_output(node(g, "MatMul", {ta, tb}));
  return m;
}

TEST(PatternTransposeMatMul, BothTransposesGoIntoGemm) {
  Model m = transposed_matmul(true, true);
  run_rules(m, "TransposeMatMul");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Gemm"}));
  const Node& n = m.graph->node(m.graph->first_node());
  EXPECT_EQ(n.attribute(Symbol("transA"))->i, 1);
  EXPECT_EQ(n.attribute(Symbol("transB"))->i, 1);
}

TEST(PatternTransposeMatMul, NotAboveTwoDimensions) {
  Model m = transposed_matmul(true, false, {2, 3, 4});
  run_rules(m, "TransposeMatMul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Transpose", "MatMul"}));
}

// One transposed gradient times two activations, as backward graphs write it; `kept` also returns the
// Transpose.
static Model shared_transpose(bool kept) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId t = node(g, "Transpose", {g.add_input("G", ElemType::Float, Shape{4, 3})}, {perm({1, 0})});
  g.add_output(node(g, "MatMul", {t, g.add_input("X", ElemType::Float, Shape{4, 5})}));
  g.add_output(node(g, "MatMul", {t, g.add_input("Y", ElemType::Float, Shape{4, 2})}));
  if (kept) g.add_output(t);
  return m;
}

TEST(PatternTransposeMatMul, ATransposeReadTwiceGoesIntoBothGemms) {
  Model m = shared_transpose(false);
  run_rules(m, "TransposeMatMul");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Gemm", "Gemm"}));
  for (ValueId out : m.graph->outputs()) {
    const Node& n = m.graph->node(m.graph->value(out).producer);
    EXPECT_EQ(m.graph->value(n.inputs[0]).name, "G");
    EXPECT_EQ(n.attribute(Symbol("transA"))->i, 1);
  }
  // Read by a graph output, the Transpose would stay: the MatMuls stay too, for other rules.
  Model kept = shared_transpose(true);
  run_rules(kept, "TransposeMatMul");
  EXPECT_EQ(op_types(*kept.graph), (OpList{"Transpose", "MatMul", "MatMul"}));
}

TEST(PatternTransposeMatMul, SameNumbers) {
  test::expect_same_outputs([] { return transposed_matmul(true, true); }, "TransposeMatMul");
  test::expect_same_outputs([] { return shared_transpose(false); }, "TransposeMatMul");
}

// ---- FusedMatMul ----------------------------------------------------------------------------------
static Model attention_scores(const std::string& scale_op, bool scalar_scale) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId q = g.add_input("Q", ElemType::Float, Shape{2, 3, 4});
  ValueId k = g.add_input("K", ElemType::Float, Shape{2, 3, 4});
  ValueId s = g.add_initializer("S", scalar_scale ? Tensor::scalar<float>(2.f) : ramp({3}));
  ValueId scores = node(g, "MatMul", {q, node(g, "Transpose", {k}, {perm({0, 2, 1})})});
  g.add_output(node(g, scale_op, {scores, s}));
  return m;
}

TEST(PatternFusedMatMul, TransposeAndScaleAreAbsorbed) {
  Model m = attention_scores("Div", true);
  run_rules(m, "onnxruntime");
  ASSERT_EQ(op_types(*m.graph), (OpList{"com.microsoft.FusedMatMul"}));
  const Node& n = m.graph->node(m.graph->first_node());
  EXPECT_EQ(n.attribute(Symbol("transB"))->i, 1);
  EXPECT_EQ(n.attribute(Symbol("alpha"))->f, 0.5f);
  EXPECT_EQ(m.opset("com.microsoft"), 1);
}

TEST(PatternFusedMatMul, NotForANonScalarScaleOrTwoDimensions) {
  Model m = attention_scores("Mul", false);
  run_rules(m, "onnxruntime");
  EXPECT_EQ(op_types(*m.graph), (OpList{"com.microsoft.FusedMatMul", "Mul"}));
  Model two = transposed_matmul(false, true, {4, 3});
  run_rules(two, "FusedMatMul");
  EXPECT_EQ(op_types(*two.graph), (OpList{"Transpose", "MatMul"}));
}

TEST(PatternFusedMatMul, NotWhenThePermIsNotTheLastTwoAxes) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId q = g.add_input("Q", ElemType::Float, Shape{3, 2, 4});
  ValueId k = g.add_input("K", ElemType::Float, Shape{2, 3, 4});
  g.add_output(
      node(g, "MatMul",
           {node(g, "Transpose", {q}, {perm({1, 0, 2})}), node(g, "Transpose", {k}, {perm({0, 2, 1})})}));
  run_rules(m, "FusedMatMul");
  EXPECT_EQ(op_types(g), (OpList{"Transpose", "com.microsoft.FusedMatMul"}));
}

// Two layers sharing one transposed weight (the same Transpose once duplicates are merged): each MatMul
// takes it into transB, and the Transpose goes with its last consumer; a Transpose something else reads
// stays for it.
static Model shared_transposed_weight(bool read_elsewhere) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  ValueId w = g.add_input("W", ElemType::Float, Shape{4, 4});
  ValueId t = node(g, "Transpose", {w}, {perm({1, 0})});
  g.add_output(node(g, "MatMul", {node(g, "MatMul", {x, t}), t}));
  if (read_elsewhere) g.add_output(node(g, "Relu", {t}));
  return m;
}

TEST(PatternFusedMatMul, ATransposeSeveralMatMulsShareGoesIntoEach) {
  Model m = shared_transposed_weight(false);
  run_rules(m, "FusedMatMul");
  ASSERT_EQ(op_types(*m.graph), (OpList{"com.microsoft.FusedMatMul", "com.microsoft.FusedMatMul"}));
  for (NodeId id : m.graph->nodes()) {
    EXPECT_EQ(m.graph->value(m.graph->node(id).inputs[1]).name, "W");
    EXPECT_EQ(m.graph->node(id).attribute(Symbol("transB"))->i, 1);
  }
  Model kept = shared_transposed_weight(true);
  run_rules(kept, "FusedMatMul");
  EXPECT_EQ(op_types(*kept.graph),
            (OpList{"Transpose", "com.microsoft.FusedMatMul", "com.microsoft.FusedMatMul", "Relu"}));
}

TEST(PatternFusedMatMul, SameNumbers) {
  test::expect_same_outputs([] { return attention_scores("Div", true); }, "onnxruntime");
  test::expect_same_outputs([] { return attention_scores("Mul", true); }, "onnxruntime");
  test::expect_same_outputs([] { return shared_transposed_weight(false); }, "FusedMatMul");
}

// ---- the whole default+onnxruntime set on a linear layer of rank 3 -------------------------------
TEST(PatternSets, LinearLayerOfRankThree) {
  auto make = [] {
    Model m = test::model_with_opset(18);
    Graph& g = *m.graph;
    ValueId x = g.add_input("X", ElemType::Float, Shape{2, 4, 3});
    ValueId w = g.add_initializer("W", ramp({3, 5}));
    ValueId b = g.add_initializer("B", ramp({5}));
    g.add_output(node(g, "Add", {node(g, "MatMul", {x, w}), b}));
    return m;
  };
  Model m = test::expect_same_outputs(make, "default+onnxruntime");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "Transpose", "Gemm", "Reshape"}));
}

// ---- MatMulSharedInput ----------------------------------------------------------------------------
// X (2, 5, 4) times `count` weights of 4 rows (q, k, v of one hidden state), each product read by a Relu.
// `shared_weight`: the second weight is also read by a Neg; `variable_last`: the last weight is a graph
// input; `gemm`: X is (10, 4) and the products are Gemm(X, W^T, bias, transB=1), as a Linear on 2-D rows.
struct SharedInput {
  std::size_t count = 3;
  bool shared_weight = false;
  bool variable_last = false;
  bool gemm = false;
};
static Model shared_input(const SharedInput& c = {}) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, c.gemm ? Shape{10, 4} : Shape{2, 5, 4});
  const std::vector<int64_t> columns = {3, 6, 2, 5};
  for (std::size_t k = 0; k < c.count; ++k) {
    const std::string name = "W" + std::to_string(k);
    const std::vector<int64_t> dims =
        c.gemm ? std::vector<int64_t>{columns[k], 4} : std::vector<int64_t>{4, columns[k]};
    ValueId w = k + 1 == c.count && c.variable_last ? g.add_input(name, ElemType::Float, make_shape(dims))
                                                    : g.add_initializer(name, ramp(dims));
    ValueId y = c.gemm
                    ? node(g, "Gemm", {x, w, g.add_initializer("B" + std::to_string(k), ramp({columns[k]}))},
                           {Attribute::make_int("transB", 1)})
                    : node(g, "MatMul", {x, w});
    g.add_output(node(g, "Relu", {y}));
    if (k == 1 && c.shared_weight) g.add_output(node(g, "Neg", {w}));
  }
  return m;
}

// The Split after the product that the first output's Relu reads.
static const Node& split_of_first(const Graph& g) {
  return g.node(g.value(g.node(g.value(g.outputs()[0]).producer).inputs[0]).producer);
}

TEST(PatternMatMulSharedInput, ProductsOfOneInputBecomeOneMatMulAndASplit) {
  Model m = shared_input();
  run_rules(m, "MatMulSharedInput");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"MatMul", "Split", "Relu", "Relu", "Relu"}));
  const Node& split = split_of_first(g);
  ASSERT_EQ(split.op_type, Symbol("Split"));
  const Node& product = g.node(g.value(split.inputs[0]).producer);
  EXPECT_EQ(g.value(product.inputs[0]).name, "X");
  const Tensor* joined = rewrite::constant_tensor(g, product.inputs[1]);
  ASSERT_NE(joined, nullptr);
  EXPECT_EQ(joined->dims(), (std::vector<int64_t>{4, 11}));
  EXPECT_EQ(split.attribute(Symbol("axis"))->i, -1);
  EXPECT_EQ(constant_ints(g, split.inputs[1]), (std::vector<int64_t>{3, 6, 2}));
  for (std::size_t k = 0; k < 3; ++k)  // each Relu reads its own piece, in the weights' order
    EXPECT_EQ(g.node(g.value(g.outputs()[k]).producer).inputs[0], split.outputs[k]);
  EXPECT_EQ(g.value(split.outputs[1]).shape, Shape({2, 5, 6}));
}

TEST(PatternMatMulSharedInput, GemmsJoinTheirTransposedWeightsAndTheirBiases) {
  Model m = shared_input({.gemm = true});
  run_rules(m, "MatMulSharedInput");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Gemm", "Split", "Relu", "Relu", "Relu"}));
  const Node& split = split_of_first(g);
  const Node& product = g.node(g.value(split.inputs[0]).producer);
  EXPECT_EQ(product.attribute(Symbol("transB"))->i, 1);
  EXPECT_EQ(rewrite::constant_tensor(g, product.inputs[1])->dims(), (std::vector<int64_t>{11, 4}));
  EXPECT_EQ(rewrite::constant_tensor(g, product.inputs[2])->dims(), (std::vector<int64_t>{11}));
  EXPECT_EQ(constant_ints(g, split.inputs[1]), (std::vector<int64_t>{3, 6, 2}));
}

TEST(PatternMatMulSharedInput, LeavesTwoProductsAWeightReadElsewhereOrNotConstant) {
  const std::pair<SharedInput, OpList> left[] = {
      {{.count = 2}, {"MatMul", "Relu", "MatMul", "Relu"}},
      {{.shared_weight = true}, {"MatMul", "Relu", "MatMul", "Relu", "Neg", "MatMul", "Relu"}},
      {{.variable_last = true}, {"MatMul", "Relu", "MatMul", "Relu", "MatMul", "Relu"}}};
  for (const auto& [c, ops] : left) {
    Model m = shared_input(c);
    run_rules(m, "MatMulSharedInput");
    EXPECT_EQ(op_types(*m.graph), ops);
  }
  Model fourth_variable = shared_input({.count = 4, .variable_last = true});
  run_rules(fourth_variable, "MatMulSharedInput");
  EXPECT_EQ(op_types(*fourth_variable.graph),
            (OpList{"MatMul", "Split", "Relu", "Relu", "Relu", "MatMul", "Relu"}));
}

TEST(PatternMatMulSharedInput, SameNumbers) {
  for (const SharedInput& c :
       {SharedInput{}, SharedInput{.gemm = true}, SharedInput{.count = 4, .variable_last = true}})
    test::expect_same_outputs([&] { return shared_input(c); }, "MatMulSharedInput", 1e-6);
}

namespace {

// ---- ReshapeMatMulReshape -------------------------------------------------------------------------
// Y = Reshape(op(Reshape(A, (6, 4, 5)), Reshape(B, (6, b2, b3))), (2, 3, 4, 7)); op a MatMul or, with the
// attributes given, a com.microsoft FusedMatMul (dynamic exports reach it when the onnxruntime set fused
// the keys' Transpose before the Reshapes went).
Model flattened_product(Shape b_shape = {2, 3, 5, 7}, std::optional<std::vector<Attribute>> fused = std::nullopt) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 3, 4, 5});
  const std::vector<int64_t> rb_shape{6, b_shape[2].value(), b_shape[3].value()};
  ValueId b = g.add_input("B", ElemType::Float, std::move(b_shape));
  ValueId ra = node(g, "Reshape", {a, test::int64_initializer(g, "sa", {6, 4, 5})});
  ValueId rb = node(g, "Reshape", {b, test::int64_initializer(g, "sb", rb_shape)});
  if (fused) m.opsets.push_back({"com.microsoft", 1, {}});
  ValueId product = fused ? node(g, "FusedMatMul", {ra, rb}, *fused, "com.microsoft") : node(g, "MatMul", {ra, rb});
  g.add_output(node(g, "Reshape", {product, test::int64_initializer(g, "sy", {2, 3, 4, 7})}));
  return m;
}

TEST(PatternReshapeMatMulReshape, OneBatchedMatMul) {
  Model m = flattened_product();
  run_rules(m, "ReshapeMatMulReshape");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"MatMul"}));
  const Node& n = g.node(g.first_node());
  EXPECT_EQ(input_name(g, n, 0), "A");
  EXPECT_EQ(input_name(g, n, 1), "B");
  EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 3, 4, 7}));
}

TEST(PatternReshapeMatMulReshape, NotWhenTheLeadingAxesDiffer) {
  Model m = flattened_product({3, 2, 5, 7});
  run_rules(m, "ReshapeMatMulReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "Reshape", "MatMul", "Reshape"}));
}

TEST(PatternReshapeMatMulReshape, SameNumbers) {
  test::expect_same_outputs([] { return flattened_product(); }, "ReshapeMatMulReshape");
}

// FusedMatMul(RA, RB, transB=1, alpha=0.5) with B (2, 3, 7, 5), or transposing a batch too.
Model flattened_fused_product(int64_t trans_batch_b = 0) {
  std::vector<Attribute> attributes{int_attr("transB", 1), Attribute::make_float("alpha", 0.5f)};
  if (trans_batch_b) attributes.push_back(int_attr("transBatchB", trans_batch_b));
  return flattened_product({2, 3, 7, 5}, attributes);
}

TEST(PatternReshapeMatMulReshape, OneBatchedFusedMatMulWithItsAttributes) {
  Model m = flattened_fused_product();
  run_rules(m, "ReshapeMatMulReshape");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FusedMatMul"}));
  const Node& n = g.node(g.first_node());
  EXPECT_EQ(input_name(g, n, 0), "A");
  EXPECT_EQ(input_name(g, n, 1), "B");
  EXPECT_EQ(n.attribute(Symbol("transB"))->i, 1);
  EXPECT_EQ(n.attribute(Symbol("alpha"))->f, 0.5f);
  EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 3, 4, 7}));
}

TEST(PatternReshapeMatMulReshape, NotWhenTheFusedMatMulTransposesABatch) {
  Model m = flattened_fused_product(1);
  run_rules(m, "ReshapeMatMulReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "Reshape", "com.microsoft.FusedMatMul", "Reshape"}));
}

TEST(PatternReshapeMatMulReshape, SameNumbersWithFusedMatMul) {
  test::expect_same_outputs([] { return flattened_fused_product(); }, "ReshapeMatMulReshape");
}

}  // namespace

namespace {

// ---- TransposeReshapeMatMul -----------------------------------------------------------------------
Model transposed_regrouped(std::vector<int64_t> shape = {6, 5, 4}, bool second = true) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId y = g.add_input("Y", ElemType::Float, Shape{2, 3, 4, 5});
  ValueId t = node(g, "Transpose", {y}, {Attribute::make_ints("perm", {0, 1, 3, 2})});
  ValueId r = node(g, "Reshape", {t, test::int64_initializer(g, "s", shape)});
  const bool regroups = shape.size() == 3;
  if (second) {
    ValueId x = g.add_input("X", ElemType::Float, regroups ? Shape{6, 3, 5} : Shape{3, 6});
    g.add_output(node(g, "MatMul", {x, r}));
  } else {
    ValueId x = g.add_input("X", ElemType::Float, Shape{6, 4, 3});
    g.add_output(node(g, "MatMul", {r, x}));
  }
  return m;
}

TEST(PatternTransposeReshapeMatMul, TheTransposeMovesNextToTheMatMul) {
  for (bool second : {true, false}) {
    Model m = transposed_regrouped({6, 5, 4}, second);
    run_rules(m, "TransposeReshapeMatMul");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Reshape", "Transpose", "MatMul"})) << second;
    const Node& reshape = g.node(g.first_node());
    EXPECT_EQ(input_name(g, reshape, 0), "Y");
    EXPECT_EQ(constant_ints(g, reshape.inputs[1]), (std::vector<int64_t>{6, 4, 5}));
    const Node& transpose = producer(g, producer(g, g.outputs()[0]).inputs[second ? 1 : 0]);
    EXPECT_EQ(transpose.attribute(Symbol("perm"))->ints, (std::vector<int64_t>{0, 2, 1}));
  }
}

TEST(PatternTransposeReshapeMatMul, NotWhenTheReshapeMixesTheMatrixAxes) {
  Model m = transposed_regrouped({6, 20});
  run_rules(m, "TransposeReshapeMatMul");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Transpose", "Reshape", "MatMul"}));
}

TEST(PatternTransposeReshapeMatMul, SameNumbers) {
  for (bool second : {true, false})
    test::expect_same_outputs([second] { return transposed_regrouped({6, 5, 4}, second); }, "TransposeReshapeMatMul");
}

}  // namespace

namespace {

// ---- ShapeBasedMatMulToMul ------------------------------------------------------------------------
Model outer_product(Shape x_shape = {2, 4, 1}, Shape y_shape = {2, 1, 5}) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, std::move(x_shape));
  ValueId y = g.add_input("Y", ElemType::Float, std::move(y_shape));
  g.add_output(node(g, "MatMul", {x, y}));
  return m;
}

TEST(PatternShapeBasedMatMulToMul, OuterProductIsAMul) {
  Model m = outer_product();
  run_rules(m, "ShapeBasedMatMulToMul");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Mul"}));
  EXPECT_EQ(input_name(g, g.node(g.first_node()), 0), "X");
  EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 4, 5}));
}

TEST(PatternShapeBasedMatMulToMul, NotWhenTheSumHasSeveralTermsOrTheyAreUnknown) {
  Model two = outer_product({2, 4, 2}, {2, 2, 5});
  run_rules(two, "ShapeBasedMatMulToMul");
  EXPECT_EQ(op_types(*two.graph), (OpList{"MatMul"}));
  Model symbolic = outer_product({2, 4, Dim::symbolic("k")}, {2, Dim::symbolic("k"), 5});
  run_rules(symbolic, "ShapeBasedMatMulToMul");
  EXPECT_EQ(op_types(*symbolic.graph), (OpList{"MatMul"}));
}

TEST(PatternShapeBasedMatMulToMul, SameNumbers) {
  test::expect_same_outputs([] { return outer_product(); }, "ShapeBasedMatMulToMul");
}

}  // namespace

namespace {

// ---- MatMulReshape2Of3 ----------------------------------------------------------------------------
// A (2,3,4,5) viewed as (6,4,5) times `b` (B as it is, or viewed as (6,5,7) from `b_view_from`), the
// product (6,4,7) viewed back as `back` (or left as it is when empty).
struct Regrouped {
  std::string b = "6,5,7", b_view_from = "", back = "2,3,4,7";
};
std::string regrouped_text(const Regrouped& c) {
  const bool b_viewed = !c.b_view_from.empty(), back = !c.back.empty();
  std::string text =
      "<ir_version: 8, opset_import: [\"\" : 18]>\ng (float[2,3,4,5] A, float[" +
      (b_viewed ? c.b_view_from : c.b) + "] B) => (float[" + (back ? c.back : "6,4,7") +
      "] Y) <int64[3] SA = {6,4,5}" + (b_viewed ? ", " + int64_type(c.b) + " SB = {" + c.b + "}" : "") +
      (back ? ", " + int64_type(c.back) + " SY = {" + c.back + "}" : "") + "> {\n  RA = Reshape(A, SA)\n";
  const std::string rb = b_viewed ? "RB" : "B";
  if (b_viewed) text += "  RB = Reshape(B, SB)\n";
  text +=
      back ? "  M = MatMul(RA, " + rb + ")\n  Y = Reshape(M, SY)\n}\n" : "  Y = MatMul(RA, " + rb + ")\n}\n";
  return text;
}

TEST(PatternMatMulReshape2Of3, TheLeftInputAndTheResultKeepTheirLayout) {
  // B of (6,5,7) goes to A's layout; a matrix B broadcasts as it is.
  for (const std::string b : {"6,5,7", "5,7"}) {
    Model m = load_case_model(regrouped_text({.b = b}));
    run_rules(m, "MatMulReshape2Of3");
    const Graph& g = *m.graph;
    const bool matrix = b == "5,7";
    ASSERT_EQ(op_types(g), matrix ? (OpList{"MatMul"}) : (OpList{"Reshape", "MatMul"})) << b;
    const Node& product = producer(g, g.outputs()[0]);
    EXPECT_EQ(input_name(g, product, 0), "A");
    if (!matrix) {
      const Node& reshape = producer(g, product.inputs[1]);
      EXPECT_EQ(input_name(g, reshape, 0), "B");
      EXPECT_EQ(constant_ints(g, reshape.inputs[1]), (std::vector<int64_t>{2, 3, 5, 7}));
    }
    EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 3, 4, 7}));
  }
}

TEST(PatternMatMulReshape2Of3, BothInputsKeepTheirLayoutAndTheResultIsViewed) {
  Model m = load_case_model(regrouped_text({.b_view_from = "2,3,5,7", .back = ""}));
  run_rules(m, "MatMulReshape2Of3");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"MatMul", "Reshape"}));
  const Node& product = g.node(g.first_node());
  EXPECT_EQ(input_name(g, product, 0), "A");
  EXPECT_EQ(input_name(g, product, 1), "B");
  const Node& reshape = g.node(g.last_node());
  EXPECT_EQ(constant_ints(g, reshape.inputs[1]), (std::vector<int64_t>{6, 4, 7}));
  EXPECT_EQ(g.value(g.outputs()[0]).name, "Y");
}

TEST(PatternMatMulReshape2Of3, NotWhenTheMatricesChangeOrTheBatchesDiffer) {
  const std::vector<Regrouped> refused{
      {.back = "6,28"},                                      // the result's matrices regrouped
      {.b = "1,5,7"},                                        // B broadcasts over the batch
      {.b = "6,5,7", .b_view_from = "3,2,5,7", .back = ""},  // the inputs' batches differ
      {.b = "6,5,7", .b_view_from = "2,3,35", .back = ""},   // B's matrices regrouped
  };
  for (const Regrouped& c : refused) {
    Model m = load_case_model(regrouped_text(c));
    const OpList before = op_types(*m.graph);
    run_rules(m, "MatMulReshape2Of3");
    EXPECT_EQ(op_types(*m.graph), before) << regrouped_text(c);
  }
}

TEST(PatternMatMulReshape2Of3, SameNumbers) {
  for (const Regrouped& c :
       {Regrouped{}, Regrouped{.b = "5,7"}, Regrouped{.b_view_from = "2,3,5,7", .back = ""}})
    test::expect_same_outputs([c] { return load_case_model(regrouped_text(c)); }, "MatMulReshape2Of3");
}

// A of `type` and dims `a` flattened into rows by `flat`, times W, the product given the shape `back`;
// `rows_read_twice` makes the rows a second output, as a weight gradient reads them in a training graph.
struct Rows {
  std::string type = "float", a = "2,3,8", flat = "6,8", w = "8,5", back = "2,3,5";
  bool rows_read_twice = false;
};
std::string rows_text(const Rows& c) {
  return "<ir_version: 8, opset_import: [\"\" : 18]>\ng (" + c.type + "[" + c.a + "] A, " + c.type + "[" +
         c.w + "] W) => (" + c.type + "[" + c.back + "] Y" +
         (c.rows_read_twice ? ", " + c.type + "[" + c.flat + "] V" : "") + ") <" + int64_type(c.flat) +
         " SA = {" + c.flat + "}, " + int64_type(c.back) + " SY = {" + c.back +
         "}> {\n  V = Reshape(A, SA)\n  M = MatMul(V, W)\n  Y = Reshape(M, SY)\n}\n";
}

TEST(PatternMatMulReshape2Of3, FlattenedRowsAndTheirProductGivenBackTheirAxes) {
  for (const std::string type : {"float", "float16"}) {
    Model m = load_case_model(rows_text({.type = type}));
    run_rules(m, "MatMulReshape2Of3");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"MatMul"})) << type;
    const Node& product = g.node(g.first_node());
    EXPECT_EQ(input_name(g, product, 0), "A");
    EXPECT_EQ(input_name(g, product, 1), "W");
    EXPECT_EQ(g.value(g.outputs()[0]).name, "Y");
    EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 3, 5}));
  }
  Model shared = load_case_model(rows_text({.rows_read_twice = true}));
  run_rules(shared, "MatMulReshape2Of3");
  const Graph& g = *shared.graph;
  ASSERT_EQ(op_types(g), (OpList{"Reshape", "MatMul"}));
  EXPECT_EQ(input_name(g, g.node(g.last_node()), 0), "A");
  EXPECT_EQ(g.value(g.outputs()[1]).producer, g.first_node());
}

TEST(PatternMatMulReshape2Of3, NotWhenTheRowsMixAxesOrTheProductIsRegrouped) {
  const std::vector<Rows> refused{
      {.a = "2,4,4", .flat = "4,8", .w = "8,4", .back = "2,4,4"},  // each row is two rows of A
      {.back = "3,2,5"},                                           // the product's rows regrouped
      {.w = "1,8,5"},                                              // W is no matrix
  };
  for (const Rows& c : refused) {
    Model m = load_case_model(rows_text(c));
    run_rules(m, "MatMulReshape2Of3");
    EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "MatMul", "Reshape"})) << rows_text(c);
  }
}

TEST(PatternMatMulReshape2Of3, FlattenedRowsKeepTheirNumbers) {
  for (const Rows& c : {Rows{}, Rows{.type = "float16"}, Rows{.rows_read_twice = true}})
    test::expect_same_outputs([c] { return load_case_model(rows_text(c)); }, "MatMulReshape2Of3");
}

}  // namespace

namespace {

// ---- FusedMatMulx2 --------------------------------------------------------------------------------
struct Scaled {
  const char* scale_op = "Mul";   // Mul(Q, s) or Div(Q, s)
  bool fused_consumer = false;    // the second product is already a FusedMatMul(alpha=2, transB=1)
  bool other_reader = false;      // the scaled tensor also feeds a Relu
  std::vector<int64_t> s_dims{};  // the scale's shape: a scalar unless given
};
Model scaled_products(const Scaled& c) {
  Model m = with_ms(test::model_with_opset(18));
  Graph& g = *m.graph;
  ValueId q = g.add_input("Q", ElemType::Float, Shape{2, 3, 4, 8});
  ValueId k1 = g.add_input("K1", ElemType::Float, Shape{2, 3, 8, 4});
  ValueId k2 = g.add_input("K2", ElemType::Float, Shape{2, 3, 4, 8});
  Tensor s = c.s_dims.empty() ? Tensor::scalar<float>(0.25f) : ramp(c.s_dims);
  ValueId scaled = node(g, c.scale_op, {q, g.add_initializer("s", s)});
  g.add_output(node(g, "MatMul", {scaled, k1}));
  if (c.fused_consumer)
    g.add_output(fused_matmul(g, scaled, k2, {float_attr("alpha", 2.0f), int_attr("transB", 1)}));
  else
    g.add_output(node(g, "MatMul", {k1, scaled}));  // (2,3,8,4) @ (2,3,4,8)
  if (c.other_reader) g.add_output(node(g, "Relu", {scaled}));
  return m;
}

TEST(PatternFusedMatMulx2, BothProductsTakeTheScale) {
  Model m = scaled_products({});
  run_rules(m, "FusedMatMulx2");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FusedMatMul", "com.microsoft.FusedMatMul"}));
  const Node& first = producer(g, g.outputs()[0]);
  const Node& second = producer(g, g.outputs()[1]);
  EXPECT_EQ(g.value(first.inputs[0]).name, "Q");
  EXPECT_EQ(g.value(second.inputs[1]).name, "Q");
  EXPECT_EQ(float_of(first, "alpha"), 0.25f);
  EXPECT_EQ(float_of(second, "alpha"), 0.25f);
}

TEST(PatternFusedMatMulx2, DivAndAnExistingFusedMatMul) {
  Model m = scaled_products({.scale_op = "Div", .fused_consumer = true});
  run_rules(m, "FusedMatMulx2");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FusedMatMul", "com.microsoft.FusedMatMul"}));
  const Node& fused = producer(g, g.outputs()[1]);
  EXPECT_EQ(float_of(producer(g, g.outputs()[0]), "alpha"), 4.0f);
  EXPECT_EQ(float_of(fused, "alpha"), 8.0f);  // 2 / 0.25
  EXPECT_EQ(int_of(fused, "transB"), 1);
  EXPECT_EQ(g.value(fused.inputs[0]).name, "Q");
}

TEST(PatternFusedMatMulx2, NotWhenTheScaledTensorHasAnotherReaderOrTheScaleIsATensor) {
  Model other = scaled_products({.other_reader = true});
  run_rules(other, "FusedMatMulx2");
  EXPECT_EQ(op_types(*other.graph), (OpList{"Mul", "MatMul", "MatMul", "Relu"}));
  Model tensor = scaled_products({.s_dims = {8}});
  run_rules(tensor, "FusedMatMulx2");
  EXPECT_EQ(op_types(*tensor.graph), (OpList{"Mul", "MatMul", "MatMul"}));
}

TEST(PatternFusedMatMulx2, SameNumbers) {
  test::expect_same_outputs([] { return scaled_products({}); }, "FusedMatMulx2", 1e-6);
  test::expect_same_outputs([] { return scaled_products({.scale_op = "Div", .fused_consumer = true}); },
                            "FusedMatMulx2", 1e-6);
}

// A softmax gradient scaled, then reshaped for its batched products: Reshape(op(G(2, 3, 4, 4), s)) to
// (6, 4, 4), read by MatMul(., V(6, 4, 8)) and FusedMatMul(., K(6, 4, 8), transA=1), and by a Relu
// when `other_reader`.
Model scaled_then_reshaped(const char* scale_op, float s, bool other_reader = false) {
  Model m = with_ms(test::model_with_opset(18));
  Graph& g = *m.graph;
  ValueId grad = g.add_input("G", ElemType::Float, Shape{2, 3, 4, 4});
  ValueId v = g.add_input("V", ElemType::Float, Shape{6, 4, 8});
  ValueId k = g.add_input("K", ElemType::Float, Shape{6, 4, 8});
  ValueId scaled = node(g, scale_op, {grad, g.add_initializer("s", Tensor::scalar<float>(s))});
  ValueId reshaped = node(g, "Reshape", {scaled, test::int64_initializer(g, "shape", {6, 4, 4})});
  g.add_output(node(g, "MatMul", {reshaped, v}));
  g.add_output(fused_matmul(g, reshaped, k, {int_attr("transA", 1)}));
  if (other_reader) g.add_output(node(g, "Relu", {reshaped}));
  return m;
}

TEST(PatternFusedMatMulx2, ThroughAReshapeBothProductsReadOneReshapeOfTheUnscaledTensor) {
  struct Case {
    const char* op;
    float s, alpha;
  };
  for (const Case& c : {Case{"Div", 4.0f, 0.25f}, Case{"Mul", 0.3f, 0.3f}, Case{"Div", 3.0f, 1.0f / 3.0f}}) {
    Model m = scaled_then_reshaped(c.op, c.s);
    run_rules(m, "FusedMatMulx2");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Reshape", "com.microsoft.FusedMatMul", "com.microsoft.FusedMatMul"}))
        << c.op << " " << c.s;
    const Node& first = producer(g, g.outputs()[0]);
    const Node& second = producer(g, g.outputs()[1]);
    EXPECT_EQ(first.inputs[0], second.inputs[0]);
    EXPECT_EQ(g.value(producer(g, first.inputs[0]).inputs[0]).name, "G");
    EXPECT_EQ(float_of(first, "alpha"), c.alpha);
    EXPECT_EQ(float_of(second, "alpha"), c.alpha);
    EXPECT_EQ(int_of(second, "transA"), 1);
  }
}

TEST(PatternFusedMatMulx2, NotThroughAReshapeWithAnotherReader) {
  Model other = scaled_then_reshaped("Div", 4.0f, true);
  run_rules(other, "FusedMatMulx2");
  EXPECT_EQ(op_types(*other.graph),
            (OpList{"Div", "Reshape", "MatMul", "com.microsoft.FusedMatMul", "Relu"}));
}

TEST(PatternFusedMatMulx2, ThroughAReshapeSameNumbers) {
  test::expect_same_outputs([] { return scaled_then_reshaped("Div", 4.0f); }, "FusedMatMulx2");
  // 1/3 rounds: an ulp at most on each product.
  test::expect_same_outputs([] { return scaled_then_reshaped("Div", 3.0f); }, "FusedMatMulx2", 1e-6);
}

// The Reshape case as an exporter writes a backward attention (a head size of 64: the gradient divided
// by 8, reshaped, then read by the query's product and, transposed, by the key's), read from disk and
// optimized with the default and onnxruntime sets: one Reshape of the unscaled gradient feeds two
// FusedMatMuls that take 1/8 as alpha.
TEST(PatternFusedMatMulx2, ThroughAReshapeOnAModelReadFromDisk) {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 18]>
backward (float[2,3,4,4] G, float[6,4,8] K, float[6,4,8] Q) => (float[6,4,8] DQ, float[6,4,8] DK)
<float s = {8.0}, int64[3] rows = {6, 4, 4}> {
  D = Div(G, s)
  R = Reshape(D, rows)
  DQ = MatMul(R, K)
  T = Transpose<perm = [0, 2, 1]>(R)
  DK = MatMul(T, Q)
})";
  xexp::testing::TempDir dir;
  const std::string path = (dir.path() / "backward.onnx").string();
  Model model = xexp::testing::optimized_case_model(text, path);
  const Graph& g = *model.graph;
  ASSERT_EQ(op_types(g), (OpList{"Reshape", "com.microsoft.FusedMatMul", "com.microsoft.FusedMatMul"}));
  const Node& dq = producer(g, g.outputs()[0]);
  const Node& dk = producer(g, g.outputs()[1]);
  EXPECT_EQ(dq.inputs[0], dk.inputs[0]);
  EXPECT_EQ(g.value(producer(g, dq.inputs[0]).inputs[0]).name, "G");
  EXPECT_EQ(float_of(dq, "alpha"), 0.125f);
  EXPECT_EQ(float_of(dk, "alpha"), 0.125f);
  EXPECT_EQ(int_of(dk, "transA"), 1);
  test::expect_outputs_of_file(path, model, xexp::testing::random_feeds(*load_model(path).graph, {.seed = 4}),
                               1e-6);
}

// ---- FusedMatMulDiv -------------------------------------------------------------------------------
struct ScaledProduct {
  const char* scale_op = "Div";   // Div(MatMul(A, B), s) or Mul
  bool scale_first = false;       // Mul(s, MatMul(A, B))
  std::vector<int64_t> s_dims{};  // the scale's shape: a scalar unless given
  bool product_read = false;      // the product is also a graph output
  float s = 4.0f;
};
Model scaled_product(const ScaledProduct& c) {
  Model m = with_ms(test::model_with_opset(18));
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 3, 4});
  ValueId b = g.add_input("B", ElemType::Float, Shape{2, 4, 5});
  ValueId product = node(g, "MatMul", {a, b});
  ValueId s = g.add_initializer("s", c.s_dims.empty() ? Tensor::scalar<float>(c.s) : ramp(c.s_dims));
  g.add_output(node(g, c.scale_op,
                    c.scale_first ? std::vector<ValueId>{s, product} : std::vector<ValueId>{product, s}));
  if (c.product_read) g.add_output(product);
  return m;
}

TEST(PatternFusedMatMulDiv, TheScaleBecomesAlpha) {
  struct Case {
    ScaledProduct model;
    float alpha;
  };
  for (const Case& c : {Case{{}, 0.25f}, Case{{.s = 3.0f}, 1.0f / 3.0f}, Case{{.scale_op = "Mul"}, 4.0f},
                        Case{{.scale_op = "Mul", .scale_first = true}, 4.0f}}) {
    Model m = scaled_product(c.model);
    run_rules(m, "FusedMatMulDiv");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FusedMatMul"})) << c.model.scale_op << " " << c.model.s;
    const Node& n = g.node(g.first_node());
    EXPECT_EQ(g.value(n.inputs[0]).name, "A");
    EXPECT_EQ(g.value(n.inputs[1]).name, "B");
    EXPECT_EQ(float_of(n, "alpha"), c.alpha);
    EXPECT_EQ(int_of(n, "transA"), 0);
    EXPECT_EQ(int_of(n, "transB"), 0);
  }
}

TEST(PatternFusedMatMulDiv, NotForATensorScaleAZeroDivisorOrAProductReadElsewhere) {
  Model tensor = scaled_product({.s_dims = {5}});
  run_rules(tensor, "FusedMatMulDiv");
  EXPECT_EQ(op_types(*tensor.graph), (OpList{"MatMul", "Div"}));
  Model zero = scaled_product({.s = 0.0f});
  run_rules(zero, "FusedMatMulDiv");
  EXPECT_EQ(op_types(*zero.graph), (OpList{"MatMul", "Div"}));
  Model read = scaled_product({.product_read = true});
  run_rules(read, "FusedMatMulDiv");
  EXPECT_EQ(op_types(*read.graph), (OpList{"MatMul", "Div"}));
}

TEST(PatternFusedMatMulDiv, SameNumbers) {
  // A power of two and a Mul: the same bits, tolerance 0. Another divisor: 1/s rounds, an ulp at most.
  test::expect_same_outputs([] { return scaled_product({}); }, "FusedMatMulDiv");
  test::expect_same_outputs(
      [] { return scaled_product({.scale_op = "Mul", .scale_first = true, .s = 3.0f}); }, "FusedMatMulDiv");
  test::expect_same_outputs([] { return scaled_product({.s = 3.0f}); }, "FusedMatMulDiv", 1e-6);
}

// Attention scores over sqrt(8) as onnxscript's Llama export writes them (the scores are read by a
// Softmax, which no attention rule fuses here: the value product is missing), read from disk and
// optimized with the default and onnxruntime sets: one FusedMatMul, alpha 1/sqrt(8), and the same
// outputs in the evaluator and in ONNX Runtime.
TEST(PatternFusedMatMulDiv, ScoresOverTheSquareRootOfTheHeadSizeOnAModelReadFromDisk) {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 18]>
scores (float[2,4,8] Q, float[2,8,4] K) => (float[2,4,4] P) <float s = {2.8284271}> {
  S = MatMul(Q, K)
  D = Div(S, s)
  P = Softmax<axis = -1>(D)
})";
  xexp::testing::TempDir dir;
  const std::string path = (dir.path() / "scores.onnx").string();
  Model model = xexp::testing::optimized_case_model(text, path);
  const Graph& g = *model.graph;
  ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FusedMatMul", "Softmax"}));
  const Node& fused = g.node(g.first_node());
  EXPECT_EQ(float_of(fused, "alpha"), static_cast<float>(1.0 / static_cast<double>(2.8284271f)));
  test::expect_outputs_of_file(path, model, xexp::testing::random_feeds(*load_model(path).graph, {.seed = 4}),
                               1e-6);
}

// ---- FusedMatMulTranspose -------------------------------------------------------------------------
struct TransposedProduct {
  bool fused = false;
  std::vector<int64_t> perm = {0, 2, 1};
  bool product_read = false;
  // When set, a Reshape of the (6, 3, 5) product to this shape stands before the Transpose.
  std::vector<int64_t> regroup = {};
};
Model transposed_product(const TransposedProduct& c) {
  Model m = with_ms(test::model_with_opset(18));
  Graph& g = *m.graph;
  const int64_t batch = c.regroup.empty() ? 2 : 6;
  ValueId a = g.add_input("A", ElemType::Float, Shape{batch, 3, 4});
  ValueId b = g.add_input("B", ElemType::Float, c.fused ? Shape{batch, 5, 4} : Shape{batch, 4, 5});
  ValueId product = c.fused ? fused_matmul(g, a, b, {float_attr("alpha", 0.5f), int_attr("transB", 1)})
                            : node(g, "MatMul", {a, b});
  ValueId regrouped =
      c.regroup.empty()
          ? product
          : node(g, "Reshape",
                 {product, g.add_initializer("S", Tensor::from<int64_t>(
                                                      {static_cast<int64_t>(c.regroup.size())}, c.regroup))});
  g.add_output(node(g, "Transpose", {regrouped}, {perm(c.perm)}));
  if (c.product_read) g.add_output(product);
  return m;
}

TEST(PatternFusedMatMulTranspose, TheTransposeBecomesFlags) {
  for (bool fused : {false, true}) {
    Model m = transposed_product({.fused = fused});
    run_rules(m, "FusedMatMulTranspose");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FusedMatMul"})) << fused;
    const Node& n = g.node(g.first_node());
    EXPECT_EQ(g.value(n.inputs[0]).name, "B");
    EXPECT_EQ(g.value(n.inputs[1]).name, "A");
    // (A @ B)' = B' @ A'; (A @ B')' = B @ A'.
    EXPECT_EQ(int_of(n, "transA"), fused ? 0 : 1);
    EXPECT_EQ(int_of(n, "transB"), 1);
    EXPECT_EQ(float_of(n, "alpha"), fused ? 0.5f : 1.0f);
  }
}

TEST(PatternFusedMatMulTranspose, ThroughAReshapeOfTheBatchAxes) {
  for (bool fused : {false, true}) {
    Model m = transposed_product({.fused = fused, .perm = {0, 1, 3, 2}, .regroup = {2, 3, 3, 5}});
    run_rules(m, "FusedMatMulTranspose");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FusedMatMul", "Reshape"})) << fused;
    const Node& n = g.node(g.first_node());
    EXPECT_EQ(g.value(n.inputs[0]).name, "B");
    EXPECT_EQ(int_of(n, "transA"), fused ? 0 : 1);
    const Node& reshape = g.node(g.last_node());
    EXPECT_EQ(eval::as_int64s(*rewrite::constant_tensor(g, reshape.inputs[1])),
              (std::vector<int64_t>{2, 3, 5, 3}));
    EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{2, 3, 5, 3}));
  }
}

TEST(PatternFusedMatMulTranspose, NotForAnotherPermutationOrAProductReadElsewhere) {
  Model batch = transposed_product({.perm = {1, 0, 2}});
  run_rules(batch, "FusedMatMulTranspose");
  EXPECT_EQ(op_types(*batch.graph), (OpList{"MatMul", "Transpose"}));
  Model read = transposed_product({.product_read = true});
  run_rules(read, "FusedMatMulTranspose");
  EXPECT_EQ(op_types(*read.graph), (OpList{"MatMul", "Transpose"}));
  // This Reshape moves elements across the last two axes: (6, 3, 5) -> (2, 3, 5, 3).
  Model mixed = transposed_product({.perm = {0, 1, 3, 2}, .regroup = {2, 3, 5, 3}});
  run_rules(mixed, "FusedMatMulTranspose");
  EXPECT_EQ(op_types(*mixed.graph), (OpList{"MatMul", "Reshape", "Transpose"}));
}

TEST(PatternFusedMatMulTranspose, SameNumbers) {
  for (bool fused : {false, true}) {
    test::expect_same_outputs([fused] { return transposed_product({.fused = fused}); },
                              "FusedMatMulTranspose", 1e-6);
    test::expect_same_outputs(
        [fused] {
          return transposed_product({.fused = fused, .perm = {0, 1, 3, 2}, .regroup = {2, 3, 3, 5}});
        },
        "FusedMatMulTranspose", 1e-6);
  }
}

// ---- TransposeFusedMatMulB ------------------------------------------------------------------------
Model keys_transposed(bool fused, std::vector<int64_t> p = {0, 2, 3, 1}, Shape keys = {2, 5, 3, 8}) {
  Model m = with_ms(test::model_with_opset(18));
  Graph& g = *m.graph;
  ValueId q = g.add_input("Q", ElemType::Float, Shape{2, 3, 4, 8});
  ValueId k = g.add_input("K", ElemType::Float, keys);  // (batch, sequence, heads, size)
  ValueId kt = node(g, "Transpose", {k}, {perm(std::move(p))});
  g.add_output(fused ? fused_matmul(g, q, kt, {float_attr("alpha", 0.5f)}) : node(g, "MatMul", {q, kt}));
  return m;
}

TEST(PatternTransposeFusedMatMulB, KeysTransposedByRows) {
  for (bool fused : {false, true}) {
    Model m = keys_transposed(fused);
    run_rules(m, "TransposeFusedMatMulB");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Transpose", "com.microsoft.FusedMatMul"})) << fused;
    EXPECT_EQ(only_node(g, "Transpose").attribute(Symbol("perm"))->ints, (std::vector<int64_t>{0, 2, 1, 3}));
    const Node& n = only_node(g, "FusedMatMul");
    EXPECT_EQ(int_of(n, "transB"), 1);
    EXPECT_EQ(float_of(n, "alpha"), fused ? 0.5f : 1.0f);
  }
}

TEST(PatternTransposeFusedMatMulB, NotForAnotherPermutation) {
  Model m = keys_transposed(false, {0, 1, 3, 2}, {2, 3, 5, 8});
  run_rules(m, "TransposeFusedMatMulB");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Transpose", "MatMul"}));
}

TEST(PatternTransposeFusedMatMulB, SameNumbers) {
  for (bool fused : {false, true})
    test::expect_same_outputs([fused] { return keys_transposed(fused); }, "TransposeFusedMatMulB", 1e-6);
}

// ---- ReshapeGemm and ReshapeGemmReshape ---------------------------------------------------------
struct Linear {
  std::vector<int64_t> flat{-1, 8};  // the first Reshape's shape
  std::vector<int64_t> back{};       // the last Reshape's shape, none when empty
  int64_t trans_b = 0;
  bool bias = false;
  bool flat_read_twice = false;  // the flattened A is a second output (a weight gradient reads it)
};
Model linear(const Linear& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 3, 8});
  const int64_t k = c.flat[1];
  ValueId w =
      g.add_initializer("W", ramp(c.trans_b ? std::vector<int64_t>{5, k} : std::vector<int64_t>{k, 5}));
  std::vector<ValueId> ins{node(g, "Reshape", {a, test::int64_initializer(g, "flat", c.flat)}), w};
  if (c.flat_read_twice) g.add_output(ins[0]);
  if (c.bias) ins.push_back(g.add_initializer("C", ramp({5})));
  ValueId y = node(g, "Gemm", ins, {int_attr("transB", c.trans_b), float_attr("alpha", 0.5f)});
  if (!c.back.empty()) y = node(g, "Reshape", {y, test::int64_initializer(g, "back", c.back)});
  g.add_output(y);
  return m;
}

TEST(PatternReshapeGemm, ProductOnTheUnflattenedTensor) {
  for (int64_t trans_b : {0, 1}) {
    Model m = linear({.trans_b = trans_b});
    run_rules(m, "ReshapeGemm");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FusedMatMul", "Reshape"})) << trans_b;
    const Node& n = g.node(g.first_node());
    EXPECT_EQ(g.value(n.inputs[0]).name, "A");
    EXPECT_EQ(int_of(n, "transB"), trans_b);
    EXPECT_EQ(float_of(n, "alpha"), 0.5f);
    const Node& reshape = g.node(g.last_node());
    EXPECT_EQ(eval::as_int64s(*rewrite::constant_tensor(g, reshape.inputs[1])),
              (std::vector<int64_t>{-1, 5}));
    EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{6, 5}));
  }
}

TEST(PatternReshapeGemm, NotWithABiasOrAFlatteningThatMixesAxes) {
  Model bias = linear({.bias = true});
  run_rules(bias, "ReshapeGemm");
  EXPECT_EQ(op_types(*bias.graph), (OpList{"Reshape", "Gemm"}));
  Model mixed = linear({.flat = {-1, 4}});
  run_rules(mixed, "ReshapeGemm");
  EXPECT_EQ(op_types(*mixed.graph), (OpList{"Reshape", "Gemm"}));
}

TEST(PatternReshapeGemmReshape, ThreeNodesBecomeOne) {
  for (std::vector<int64_t> back : {std::vector<int64_t>{2, 3, 5}, std::vector<int64_t>{2, -1, 5}}) {
    Model m = linear({.back = back, .trans_b = 1});
    run_rules(m, "ReshapeGemmReshape");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"com.microsoft.FusedMatMul"}));
    const Node& n = g.node(g.first_node());
    EXPECT_EQ(g.value(n.inputs[0]).name, "A");
    EXPECT_EQ(int_of(n, "transB"), 1);
    EXPECT_EQ(float_of(n, "alpha"), 0.5f);
  }
}

TEST(PatternReshapeGemmReshape, TheFlattenedInputStaysWhenReadElsewhere) {
  Model m = linear({.back = {2, 3, 5}, .flat_read_twice = true});
  run_rules(m, "ReshapeGemmReshape");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Reshape", "com.microsoft.FusedMatMul"}));
  EXPECT_EQ(g.value(g.node(g.last_node()).inputs[0]).name, "A");
  EXPECT_EQ(g.value(g.outputs()[0]).producer, g.first_node());  // the flattened A, added first
  EXPECT_EQ(g.value(g.outputs()[1]).producer, g.last_node());
}

TEST(PatternReshapeGemmReshape, NotWhenTheLastReshapeRegroupsTheRows) {
  Model m = linear({.back = {3, 2, 5}});
  run_rules(m, "ReshapeGemmReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "Gemm", "Reshape"}));
}

TEST(PatternReshapeGemm, SameNumbers) {
  test::expect_same_outputs([] { return linear({.trans_b = 1}); }, "ReshapeGemm", 1e-6);
  test::expect_same_outputs([] { return linear({.back = {2, 3, 5}}); }, "ReshapeGemmReshape", 1e-6);
  test::expect_same_outputs(
      [] {
        return linear({.back = {2, 3, 5}, .flat_read_twice = true});
      },
      "ReshapeGemmReshape", 1e-6);
}

// ReshapeGemmReshape through a sum: Reshape(Add(Add(Gemm_0, Gemm_1), ...) [+ Y], [2, 3, 5]), each Gemm_i =
// Gemm(Reshape(A_i (2, 3, 8), [6, 8]), W_i, transB=1) with the flattened A_i also an output (a weight's
// gradient reads it). Y, the last addend when given: a graph input (6, 5), or a Gemm of one row (1, 5).
enum class Addend { None, Input, OneRowProduct };
Model gradient_sum(int gemms, Addend extra = Addend::None) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId sum = kNone;
  auto add = [&](ValueId v) { sum = sum == kNone ? v : node(g, "Add", {sum, v}); };
  for (int i = 0; i < gemms; ++i) {
    const std::string k = std::to_string(i);
    ValueId a = g.add_input("A" + k, ElemType::Float, Shape{2, 3, 8});
    ValueId flat = node(g, "Reshape", {a, test::int64_initializer(g, "flat" + k, {6, 8})});
    g.add_output(flat);
    add(node(g, "Gemm", {flat, g.add_initializer("W" + k, ramp({5, 8}))}, {int_attr("transB", 1)}));
  }
  if (extra == Addend::Input) add(g.add_input("Y", ElemType::Float, Shape{6, 5}));
  if (extra == Addend::OneRowProduct)
    add(node(g, "Gemm",
             {g.add_input("R", ElemType::Float, Shape{1, 8}), g.add_initializer("WR", ramp({8, 5}))}));
  g.add_output(node(g, "Reshape", {sum, test::int64_initializer(g, "back", {2, 3, 5})}));
  return m;
}
OpList sorted(OpList ops) {
  std::sort(ops.begin(), ops.end());
  return ops;
}

TEST(PatternReshapeGemmReshape, ASumOfProductsLosesItsReshape) {
  Model m = gradient_sum(3);
  run_rules(m, "ReshapeGemmReshape");
  const Graph& g = *m.graph;
  ASSERT_EQ(sorted(op_types(g)),
            sorted({"Reshape", "Reshape", "Reshape", "com.microsoft.FusedMatMul", "com.microsoft.FusedMatMul",
                    "com.microsoft.FusedMatMul", "Add", "Add"}));
  const ValueId out = g.outputs()[3];
  EXPECT_EQ(g.node(g.value(out).producer).op_type, Symbol("Add"));
  EXPECT_EQ(*g.value(out).shape, (Shape{2, 3, 5}));
  std::vector<std::string> multiplied;
  for (NodeId id = g.first_node(); id != kNone; id = g.node(id).next)
    if (g.node(id).op_type == Symbol("FusedMatMul")) multiplied.push_back(g.value(g.node(id).inputs[0]).name);
  EXPECT_EQ(sorted(multiplied), (std::vector<std::string>{"A0", "A1", "A2"}));
}

TEST(PatternReshapeGemmReshape, NotThroughASumWithAnotherAddend) {
  // A graph input (6, 5) is no product to fuse; a product of one row (1, 5) broadcasts, and its
  // Reshape to (2, 3, 5) would fail.
  Model input = gradient_sum(1, Addend::Input);
  run_rules(input, "ReshapeGemmReshape");
  EXPECT_EQ(op_types(*input.graph), (OpList{"Reshape", "Gemm", "Add", "Reshape"}));
  Model row = gradient_sum(1, Addend::OneRowProduct);
  run_rules(row, "ReshapeGemmReshape");
  EXPECT_EQ(op_types(*row.graph), (OpList{"Reshape", "Gemm", "Gemm", "Add", "Reshape"}));
}

TEST(PatternReshapeGemmReshape, ASumOfProductsSameNumbers) {
  test::expect_same_outputs([] { return gradient_sum(3); }, "ReshapeGemmReshape", 1e-6);
}

}  // namespace
