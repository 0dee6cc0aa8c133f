// GemmTranspose, TransposeMatMul, MatMulSharedInput and (onnxruntime set) FusedMatMul: positive, negatives,
// same numbers.
// Same numbers compared exactly: FusedMatMul with alpha multiplies once instead of twice, which gives
// the same bits on these inputs in both runtimes.
#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::op_types;
using test::OpList;
using test::run_rules;

static Tensor ramp(std::vector<int64_t> dims) {
  std::vector<float> v;
  for (int64_t k = 0; k < dims_element_count(dims); ++k) v.push_back(0.1f * static_cast<float>(k % 7) - 0.3f);
  return Tensor::from<float>(std::move(dims), v);
}
static Attribute perm(std::vector<int64_t> p) { return Attribute::make_ints("perm", std::move(p)); }

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
static std::vector<int64_t> ints_of(const Graph& g, ValueId v) {
  const Tensor* t = rewrite::constant_tensor(g, v);
  if (!t) return {};
  const auto values = t->data<int64_t>();
  return {values.begin(), values.end()};
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
  EXPECT_EQ(ints_of(g, split.inputs[1]), (std::vector<int64_t>{3, 6, 2}));
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
  EXPECT_EQ(ints_of(g, split.inputs[1]), (std::vector<int64_t>{3, 6, 2}));
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
