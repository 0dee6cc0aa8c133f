// onnxruntime set: FusedMatMulx2, FusedMatMulDiv, FusedMatMulTranspose, TransposeFusedMatMulB, ReshapeGemm,
// ReshapeGemmReshape, MissingCosSin, MissingRange, MissingReduceMax, MissingTopK. Positive (exact structure
// after), a negative per condition, and the same outputs before and after in xexp's evaluator and ONNX
// Runtime. The Missing* rules exist because ONNX Runtime cannot run the model before: there the rewritten
// model runs in ONNX Runtime and matches the evaluator on the original.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::op_types;
using test::OpList;
using test::producer;
using test::run_rules;

namespace {

Tensor ramp(std::vector<int64_t> dims) {
  std::vector<float> v;
  for (int64_t k = 0; k < dims_element_count(dims); ++k) v.push_back(0.1f * static_cast<float>(k % 7) - 0.3f);
  return Tensor::from<float>(std::move(dims), v);
}
Attribute perm(std::vector<int64_t> p) { return Attribute::make_ints("perm", std::move(p)); }
Attribute int_attr(const char* name, int64_t v) { return Attribute::make_int(name, v); }
Attribute float_attr(const char* name, float v) { return Attribute::make_float(name, v); }
ValueId fused_matmul(Graph& g, ValueId a, ValueId b, std::vector<Attribute> attributes) {
  return node(g, "FusedMatMul", {a, b}, std::move(attributes), "com.microsoft");
}
const Node& only_node(const Graph& g, const std::string& op_type) {
  for (NodeId id : g.nodes())
    if (g.node(id).op_type == Symbol(op_type)) return g.node(id);
  throw Error("no " + op_type + " node");
}
int64_t int_of(const Node& n, const char* name, int64_t fallback = 0) {
  const Attribute* a = n.attribute(Symbol(name));
  return a ? a->i : fallback;
}
float float_of(const Node& n, const char* name) {
  const Attribute* a = n.attribute(Symbol(name));
  return a ? a->f : 1.0f;
}
Model with_ms(Model m) {
  m.opsets.push_back({"com.microsoft", 1, {}});
  return m;
}

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

// ---- MissingCosSin and MissingReduceMax ---------------------------------------------------------
// `boundary`: the graph reads and writes float around the tested type (the test runner feeds no
// bfloat16), as a model computing in bfloat16 inside does.
ValueId typed_input(Graph& g, ElemType type, Shape shape, bool boundary, int64_t opset) {
  if (!boundary) return g.add_input("X", type, std::move(shape));
  ValueId x = g.add_input("X", ElemType::Float, std::move(shape));
  return node(g, "Cast", {x}, {int_attr("to", static_cast<int64_t>(type))}, "", opset);
}
void add_typed_output(Graph& g, ValueId y, bool boundary, int64_t opset) {
  g.add_output(boundary
                   ? node(g, "Cast", {y}, {int_attr("to", static_cast<int64_t>(ElemType::Float))}, "", opset)
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
  add_typed_output(g, node(g, op, {x, test::int64_initializer(g, "axes", {1})}, {int_attr("keepdims", 0)}),
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
                          {int_attr("axis", 1)}, "top");
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
  const Attribute to = int_attr("to", static_cast<int64_t>(type));
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
