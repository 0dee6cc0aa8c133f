// Cast, TransposeTranspose, MatMulAdd: the exact op sequence after, one negative test per condition,
// and the same numbers before and after (xexp's evaluator and ONNX Runtime, float32, exactly: MatMulAdd's
// Gemm adds the bias to the same products, in both runtimes).
#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
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
  bool matmul_used_twice = false;
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
  g.add_output(node(g, "Add", c.bias_first ? std::vector<ValueId>{bias, mm} : std::vector<ValueId>{mm, bias}));
  if (c.matmul_used_twice) g.add_output(node(g, "Neg", {mm}));
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

TEST(PatternMatMulAdd, NotWhenTheBiasDoesNotBroadcastAsGemmNeeds) {
  Model m = matmul_add_model({.bias_dims = {4, 5}});
  run_rules(m, "MatMulAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"MatMul", "Add"}));
}

TEST(PatternMatMulAdd, NotWhenTheMatMulHasOtherConsumers) {
  Model m = matmul_add_model({.matmul_used_twice = true});
  run_rules(m, "MatMulAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"MatMul", "Add", "Neg"}));
}

TEST(PatternMatMulAdd, NotWhenLeadingDimsAreSymbolic) {
  Model m = matmul_add_model({.a = {Dim::symbolic("batch"), 4, 3}});
  run_rules(m, "MatMulAdd");
  EXPECT_EQ(op_types(*m.graph), (OpList{"MatMul", "Add"}));
}

TEST(PatternMatMulAdd, SameNumbers) {
  test::expect_same_outputs([] { return matmul_add_model({}); }, "MatMulAdd");
  test::expect_same_outputs([] { return matmul_add_model({.a = {2, 4, 3}, .bias_first = true}); }, "MatMulAdd");
}

TEST(PatternDescribe, RulesPrintThemselves) {
  // By name from the catalog, as `xexp patterns` finds them (the rule headers need not be included).
  auto rule = [](const char* name) { return rewrite::rules_from_string(name).at(0); };
  EXPECT_EQ(rule("Cast")->describe(), "Cast: Cast(x, to=t) -> x  when (dtype(x) == t)  [P0]");
  EXPECT_EQ(rule("TransposeTranspose")->describe(),
            "TransposeTranspose: Transpose(i=shared(Transpose(x, perm=p)), perm=q) -> "
            "choose(is_identity_perm(compose(p, q)), x, Transpose(x, perm=compose(p, q)))  "
            "when (is_identity_perm(compose(p, q)) || single_use(i))  [P0]");
}
