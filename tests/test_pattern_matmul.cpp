// GemmTranspose, TransposeMatMul and (onnxruntime set) FusedMatMul: positive, negatives, same numbers.
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
  ValueId w = constant_weight ? g.add_initializer("W", ramp(dims)) : g.add_input("W", ElemType::Float, make_shape(dims));
  ValueId c = g.add_initializer("C", ramp({5}));
  g.add_output(node(g, "Gemm", {a, w, c}, {Attribute::make_int("transB", trans_b), Attribute::make_float("alpha", 0.5f)}));
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

TEST(PatternGemmTranspose, SameNumbers) { test::expect_same_outputs([] { return gemm(true, 0); }, "GemmTranspose"); }

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

TEST(PatternTransposeMatMul, SameNumbers) {
  test::expect_same_outputs([] { return transposed_matmul(true, true); }, "TransposeMatMul");
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
  g.add_output(node(g, "MatMul", {node(g, "Transpose", {q}, {perm({1, 0, 2})}), node(g, "Transpose", {k}, {perm({0, 2, 1})})}));
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
