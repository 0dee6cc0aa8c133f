// Cast, TransposeTranspose, MatMulAdd, GemmAdd: the exact op sequence after, one negative test per
// condition, and the same numbers before and after (xexp's evaluator and ONNX Runtime, float32, exactly:
// the Gemm adds the bias to the same products, in both runtimes).
#include <gtest/gtest.h>

#include <string>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::op_types;
using test::OpList;
using test::run_rules;

// ---- Cast -----------------------------------------------------------------------------------------
static Model cast_model(int64_t to) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId c = node(g, "Cast", {x}, {Attribute::make_int("to", to)});
  g.add_output(node(g, "Relu", {c}));
  return m;
}

TEST(PatternCast, CastToItsOwnTypeDisappears) {
  Model m = cast_model(1);
  run_rules(m, "Cast");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Relu"}));
}

TEST(PatternCast, CastToAnotherTypeStays) {
  Model m = cast_model(10);
  run_rules(m, "Cast");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Cast", "Relu"}));
}

TEST(PatternCast, SameNumbers) { test::expect_same_outputs([] { return cast_model(1); }, "Cast"); }

// ---- TransposeTranspose ---------------------------------------------------------------------------
static Model transpose_model(std::vector<int64_t> p, std::vector<int64_t> q, bool inner_used_twice) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3, 4});
  ValueId t1 = node(g, "Transpose", {x}, {Attribute::make_ints("perm", p)});
  ValueId t2 = node(g, "Transpose", {t1}, {Attribute::make_ints("perm", q)});
  g.add_output(node(g, "Relu", {t2}));
  if (inner_used_twice) g.add_output(node(g, "Neg", {t1}));
  return m;
}

TEST(PatternTransposeTranspose, IdentityDisappears) {
  Model m = transpose_model({1, 0, 2}, {1, 0, 2}, false);
  run_rules(m, "TransposeTranspose");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Relu"}));
}

TEST(PatternTransposeTranspose, IdentityDisappearsEvenWhenTheFirstIsShared) {
  Model m = transpose_model({1, 0, 2}, {1, 0, 2}, true);
  run_rules(m, "TransposeTranspose");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Transpose", "Relu", "Neg"}));
}

TEST(PatternTransposeTranspose, ComposedIntoOne) {
  Model m = transpose_model({1, 2, 0}, {0, 2, 1}, false);
  run_rules(m, "TransposeTranspose");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Transpose", "Relu"}));
  const Node& t = m.graph->node(m.graph->first_node());
  EXPECT_EQ(t.attribute(Symbol("perm"))->ints, (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(t.name, "TransposeTransposePattern--Transpose_1");
}

TEST(PatternTransposeTranspose, NotComposedWhenTheFirstIsShared) {
  Model m = transpose_model({1, 2, 0}, {0, 2, 1}, true);
  run_rules(m, "TransposeTranspose");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Transpose", "Transpose", "Relu", "Neg"}));
}

TEST(PatternTransposeTranspose, SameNumbers) {
  test::expect_same_outputs([] { return transpose_model({1, 2, 0}, {0, 2, 1}, false); }, "TransposeTranspose");
  test::expect_same_outputs([] { return transpose_model({1, 0, 2}, {1, 0, 2}, true); }, "TransposeTranspose");
}

// ---- MatMulAdd ------------------------------------------------------------------------------------
struct MatMulAddCase {
  Shape a = {4, 3};
  std::vector<int64_t> bias_dims = {5};
  bool bias_first = false;
};
static Model matmul_add_model(const MatMulAddCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, c.a);
  ValueId b = g.add_initializer("B", Tensor::from<float>({3, 5}, std::vector<float>(15, 0.25f)));
  const int64_t n = dims_element_count(c.bias_dims);
  std::vector<float> bias_values;
  for (int64_t k = 0; k < n; ++k) bias_values.push_back(0.5f * static_cast<float>(k));
  ValueId bias = g.add_initializer("bias", Tensor::from<float>(c.bias_dims, bias_values));
  ValueId mm = node(g, "MatMul", {a, b});
  g.add_output(
      node(g, "Add", c.bias_first ? std::vector<ValueId>{bias, mm} : std::vector<ValueId>{mm, bias}));
  return m;
}

TEST(PatternMatMulAdd, TwoDimensionsBecomeGemm) {
  Model m = matmul_add_model({});
  run_rules(m, "MatMulAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Gemm"}));
  EXPECT_EQ(m.graph->value(m.graph->outputs()[0]).name, "Add");
}

TEST(PatternMatMulAdd, BiasOnTheLeftToo) {
  Model m = matmul_add_model({.bias_first = true});
  run_rules(m, "MatMulAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Gemm"}));
}

TEST(PatternMatMulAdd, ThreeDimensionsGetReshapes) {
  Model m = matmul_add_model({.a = {2, 4, 3}});
  run_rules(m, "MatMulAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Reshape", "Gemm", "Reshape"}));
}

TEST(PatternMatMulAdd, AWholeMatrixOrARowOrAColumnBecomesC) {
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{4, 5}, std::vector<int64_t>{4, 1},
                                           std::vector<int64_t>{1, 5}, std::vector<int64_t>{}}) {
    Model m = matmul_add_model({.bias_dims = dims});
    run_rules(m, "MatMulAdd");
    ASSERT_EQ(op_types(*m.graph), (OpList{"Gemm"}));
    const Node& gemm = m.graph->node(m.graph->first_node());
    EXPECT_EQ(m.graph->value(gemm.inputs.at(2)).name, "bias");
  }
}

TEST(PatternMatMulAdd, NotWhenTheBiasBroadcastsTheProduct) {
  Model m = matmul_add_model({.bias_dims = {2, 4, 5}});
  run_rules(m, "MatMulAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"MatMul", "Add"}));
}

TEST(PatternMatMulAdd, NotAMatrixAfterThreeDimensions) {
  // Gemm's C would need the matrix reshaped too: no fewer nodes than MatMul and Add.
  Model m = matmul_add_model({.a = {2, 4, 3}, .bias_dims = {4, 5}});
  run_rules(m, "MatMulAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"MatMul", "Add"}));
}

TEST(PatternMatMulAdd, NotWhenLeadingDimsAreSymbolic) {
  Model m = matmul_add_model({.a = {Dim::symbolic("batch"), 4, 3}});
  run_rules(m, "MatMulAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"MatMul", "Add"}));
}

TEST(PatternMatMulAdd, SameNumbers) {
  test::expect_same_outputs([] { return matmul_add_model({}); }, "MatMulAdd");
  test::expect_same_outputs([] { return matmul_add_model({.a = {2, 4, 3}, .bias_first = true}); }, "MatMulAdd");
  test::expect_same_outputs(
      [] {
        return matmul_add_model({.bias_dims = {4, 5}, .bias_first = true});
      },
      "MatMulAdd");
  test::expect_same_outputs([] { return matmul_add_model({.bias_dims = {4, 1}}); }, "MatMulAdd");
  test::expect_same_outputs([] { return matmul_add_model({.bias_dims = {}}); }, "MatMulAdd");
}

// ---- GemmAdd --------------------------------------------------------------------------------------
struct GemmAddCase {
  std::vector<int64_t> addend_dims = {4, 5};
  bool addend_first = false;
  bool gemm_has_c = false;
};
// Gemm(A, B^T, alpha 0.5, beta 0.3) + Y: beta has nothing to scale before, and must become 1.
static Model gemm_add_model(const GemmAddCase& c) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{4, 3});
  ValueId b = g.add_input("B", ElemType::Float, Shape{5, 3});
  ValueId y = g.add_input("Y", ElemType::Float, make_shape(c.addend_dims));
  std::vector<ValueId> inputs{a, b};
  if (c.gemm_has_c) inputs.push_back(g.add_input("C", ElemType::Float, Shape{5}));
  ValueId gemm = node(g, "Gemm", inputs,
                      {Attribute::make_int("transB", 1), Attribute::make_float("alpha", 0.5f),
                       Attribute::make_float("beta", 0.3f)});
  g.add_output(
      node(g, "Add", c.addend_first ? std::vector<ValueId>{y, gemm} : std::vector<ValueId>{gemm, y}));
  return m;
}

TEST(PatternGemmAdd, TheAddendBecomesC) {
  for (const GemmAddCase& c : {GemmAddCase{}, GemmAddCase{.addend_first = true},
                               GemmAddCase{.addend_dims = {4, 1}}, GemmAddCase{.addend_dims = {5}}}) {
    Model m = gemm_add_model(c);
    run_rules(m, "GemmAdd");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Gemm"}));
    const Node& gemm = g.node(g.first_node());
    ASSERT_EQ(gemm.inputs.size(), 3u);
    EXPECT_EQ(g.value(gemm.inputs[2]).name, "Y");
    EXPECT_EQ(gemm.attribute(Symbol("transB"))->i, 1);
    EXPECT_EQ(gemm.attribute(Symbol("alpha"))->f, 0.5f);
    EXPECT_EQ(gemm.attribute(Symbol("beta"))->f, 1.0f);
    EXPECT_EQ(g.value(g.outputs()[0]).name, "Add");
  }
}

TEST(PatternGemmAdd, NotWhenTheGemmHasC) {
  Model m = gemm_add_model({.gemm_has_c = true});
  run_rules(m, "GemmAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Gemm", "Add"}));
}

TEST(PatternGemmAdd, NotWhenTheAddendBroadcastsTheProduct) {
  Model m = gemm_add_model({.addend_dims = {2, 4, 5}});
  run_rules(m, "GemmAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Gemm", "Add"}));
}

TEST(PatternGemmAdd, SameNumbers) {
  test::expect_same_outputs([] { return gemm_add_model({}); }, "GemmAdd");
  test::expect_same_outputs(
      [] {
        return gemm_add_model({.addend_dims = {4, 1}, .addend_first = true});
      },
      "GemmAdd");
}

// A backward graph as torch writes it: the gradient of an input read by three Linear layers is the
// sum of three products by the forward's transposed weights. Read from disk and optimized with the
// default sets, the sum is three chained Gemms (transB), each adding the one before as its C.
TEST(PatternGemmAdd, SumsOfProductsOnAModelReadFromDisk) {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 18]>
backward (float[6,4] DQ, float[6,4] DK, float[6,4] DV, float[8,4] TQ, float[8,4] TK, float[8,4] TV) => (float[6,8] DX)
{
  WQ = Transpose<perm = [1, 0]>(TQ)
  WK = Transpose<perm = [1, 0]>(TK)
  WV = Transpose<perm = [1, 0]>(TV)
  Q = MatMul(DQ, WQ)
  K = MatMul(DK, WK)
  V = MatMul(DV, WV)
  S = Add(Q, K)
  DX = Add(S, V)
})";
  xexp::testing::TempDir dir;
  const std::string path = (dir.path() / "backward.onnx").string();
  Model model = xexp::testing::optimized_case_model(text, path);
  const Graph& g = *model.graph;
  ASSERT_EQ(op_types(g), (OpList{"Gemm", "Gemm", "Gemm"}));
  // DX = Gemm(DV, WV, Gemm(DK, WK, Gemm(DQ, WQ))), in some order of the three.
  std::size_t with_c = 0;
  for (NodeId id : g.nodes()) {
    const Node& n = g.node(id);
    if (n.inputs.size() == 3 && n.inputs[2] != kNone) {
      ++with_c;
      EXPECT_EQ(g.node(g.value(n.inputs[2]).producer).op_type, Symbol("Gemm"));
    }
    EXPECT_EQ(n.attribute(Symbol("transB"))->i, 1);
  }
  EXPECT_EQ(with_c, 2u);
  test::expect_outputs_of_file(path, model, xexp::testing::random_feeds(*load_model(path).graph, {.seed = 3}),
                               1e-5);
}

TEST(PatternDescribe, RulesPrintThemselves) {
  // By name from the catalog, as `xexp patterns` finds them (the rule headers need not be included).
  auto rule = [](const char* name) { return rewrite::rules_from_string(name).at(0); };
  EXPECT_EQ(rule("Cast")->describe(), "Cast: Cast(x, to=t) -> x  when (dtype(x) == t)  [P0]");
  EXPECT_EQ(rule("TransposeTranspose")->describe(),
            "TransposeTranspose: Transpose(i, perm=s) -> "
            "choose(is_identity_perm(composed_perm(f, s)), x, Transpose(x, perm=composed_perm(f, s)))  "
            "when (is_identity_perm(composed_perm(f, s)) || single_use(i))  "
            "where i = shared(Transpose(x, perm=f))  [P0]");
}
