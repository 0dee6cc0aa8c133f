// The custom-rule example: a user rule registered by name works with set strings and gives the same
// numbers as the unfused model (QuickGelu computes x * sigmoid(x) in one kernel; atol 1e-5 holds).
#include <gtest/gtest.h>

#include <map>

#include "../examples/custom_rule/quick_gelu_rule.hpp"
#include "../examples/embedding/toy_compiler.hpp"
#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;

static Model swish_model(bool sigmoid_first) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId s = test::node(g, "Sigmoid", {x});
  g.add_output(test::node(g, "Mul", sigmoid_first ? std::vector<ValueId>{s, x} : std::vector<ValueId>{x, s}));
  return m;
}

class RewriteCustom : public ::testing::Test {
 protected:
  void SetUp() override { rewrite::Catalog::global().add_rule(quick_gelu_rule()); }
};

TEST_F(RewriteCustom, FusesBothOperandOrders) {
  for (bool sigmoid_first : {false, true}) {
    Model m = swish_model(sigmoid_first);
    test::run_rules(m, "default+QuickGeluFusion");
    EXPECT_EQ(test::op_types(*m.graph), (std::vector<std::string>{"com.microsoft.QuickGelu"}));
    EXPECT_EQ(m.opset("com.microsoft"), 1);
  }
}

TEST_F(RewriteCustom, NotWhenTheSigmoidReadsAnotherValue) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  ValueId z = g.add_input("Z", ElemType::Float, Shape{2, 3});
  g.add_output(test::node(g, "Mul", {x, test::node(g, "Sigmoid", {z})}));
  test::run_rules(m, "QuickGeluFusion");
  EXPECT_EQ(test::op_types(*m.graph), (std::vector<std::string>{"Sigmoid", "Mul"}));
}

TEST_F(RewriteCustom, SameNumbers) {
  test::expect_same_outputs([] { return swish_model(true); }, "QuickGeluFusion", 1e-5);
}

TEST_F(RewriteCustom, DescribesItself) {
  EXPECT_EQ(quick_gelu_rule()->describe(),
            "QuickGeluFusion: commutative(Mul(x, Sigmoid(x))) -> com.microsoft.QuickGelu(x, alpha=1)  [P1]");
}

// The embedding example (docs/embedding.md): a host compiler's graph goes in, the rules run, the result
// comes back with the rule that made each op, and computes what the graph did. MatMulAdd makes a Gemm,
// which GemmTranspose rewrites with its weight transposed (a constant, folded).
TEST(Embedding, ToyGraphInFusedOpsOut) {
  toy::Graph graph;
  graph.inputs = {{"X", {4, 3}, {}, false}};
  graph.weights = {{"W", {3, 2}, {1, 2, 3, 4, 5, 6}, false}, {"B", {2}, {0.5, -0.5}, false}};
  graph.ops = {{.type = "MatMul", .domain = "", .inputs = {"X", "W"}, .outputs = {"XW"}},
               {.type = "Add", .domain = "", .inputs = {"XW", "B"}, .outputs = {"Y"}}};
  graph.outputs = {"Y"};
  const toy::Optimized result = toy::optimize(graph, "default");
  ASSERT_EQ(result.graph.ops.size(), 1u);
  const toy::Op& gemm = result.graph.ops[0];
  EXPECT_EQ(gemm.type, "Gemm");
  EXPECT_EQ(gemm.inputs, (std::vector<std::string>{"X", "GemmTransposePattern--Y", "B"}));
  EXPECT_EQ(gemm.outputs, (std::vector<std::string>{"Y"}));
  EXPECT_EQ(gemm.ints, (std::map<std::string, int64_t>{{"transB", 1}}));
  EXPECT_EQ(gemm.made_by, "GemmTranspose");
  std::vector<std::string> weights;
  for (const toy::Tensor& w : result.graph.weights) weights.push_back(w.name);
  EXPECT_EQ(weights, (std::vector<std::string>{"B", "GemmTransposePattern--Y"}));
  EXPECT_EQ(result.report.nodes_before, 2u);
  EXPECT_EQ(result.report.nodes_after, 1u);
  EXPECT_EQ(result.report.rules.find("MatMulAdd")->applied, 1u);
  EXPECT_EQ(result.report.rules.find("GemmTranspose")->applied, 1u);

  const Tensor x = Tensor::from<float>({4, 3}, {1, -2, 3, 0.5f, 4, -1, 2, 2, 2, -3, 0, 1});
  const std::vector<Tensor> before = eval::Evaluator(toy::to_xexp(graph)).run({{"X", x}});
  const std::vector<Tensor> after = eval::Evaluator(toy::to_xexp(result.graph)).run({{"X", x}});
  ASSERT_EQ(before.size(), 1u);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(eval::as_doubles(after[0]), eval::as_doubles(before[0]));
}
