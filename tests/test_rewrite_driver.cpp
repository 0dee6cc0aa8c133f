// The optimizer driver: set strings, priority escalation, first-come overlap resolution, statistics,
// the worklist (only what changed is matched again), verbose logs, local functions.
#include <gtest/gtest.h>

#include <sstream>

#include "support/rewrite_helpers.hpp"
#include "xexp/patterns/registry.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::op_types;
using test::OpList;

static std::vector<std::string> names(const rewrite::RuleSet& rules) {
  std::vector<std::string> out;
  for (const auto& r : rules) out.push_back(r->name());
  return out;
}

TEST(RewriteSets, ByString) {
  const std::vector<std::string> all = names(patterns::default_rules());
  EXPECT_EQ(names(rewrite::rules_from_string("default")), all);
  EXPECT_TRUE(rewrite::rules_from_string("none").empty());
  EXPECT_EQ(names(rewrite::rules_from_string("Cast,TransposeTranspose")), (OpList{"Cast", "TransposeTranspose"}));
  EXPECT_EQ(names(rewrite::rules_from_string("CastPattern")), (OpList{"Cast"}));
  std::vector<std::string> without = all;
  std::erase(without, "Cast");
  std::erase(without, "TransposeTranspose");
  EXPECT_EQ(names(rewrite::rules_from_string("default-Cast,TransposeTranspose")), without);
  EXPECT_EQ(names(rewrite::rules_from_string("default+onnxruntime")).size(),
            all.size() + patterns::onnxruntime_rules().size());
}

TEST(RewriteSets, NamedSpecStandsForItsSpec) {
  rewrite::Catalog catalog;
  catalog.add_set("mine", rewrite::rules_from_string("Cast,TransposeTranspose"));
  catalog.add_named_spec("lean", "mine-Cast");
  EXPECT_EQ(names(rewrite::rules_from_string("lean", catalog)), (OpList{"TransposeTranspose"}));
  EXPECT_EQ(catalog.named_specs(), (std::vector<std::pair<std::string, std::string>>{{"lean", "mine-Cast"}}));
}

TEST(RewriteSets, UnknownNameIsAnError) {
  EXPECT_THROW(rewrite::rules_from_string("default+NoSuchRule"), Error);
  EXPECT_THROW(rewrite::rules_from_string("default+"), Error);
}

// X -> Cast(to float) -> MatMul(W) -> Add(B) -> Y: Cast is P0, MatMulAdd P3.
static Model cast_matmul_add() {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{4, 3});
  ValueId w = g.add_initializer("W", Tensor::from<float>({3, 2}, std::vector<float>(6, 1.f)));
  ValueId b = g.add_initializer("B", Tensor::from<float>({2}, {1.f, 2.f}));
  ValueId c = node(g, "Cast", {x}, {Attribute::make_int("to", 1)});
  g.add_output(node(g, "Add", {node(g, "MatMul", {c, w}), b}));
  return m;
}

TEST(RewriteDriver, PriorityRisesOnlyWhenNothingMatched) {
  Model m = cast_matmul_add();
  std::ostringstream log;
  auto stats = test::run_rules(m, "Cast,MatMulAdd", {.verbose = 1, .log = &log});
  EXPECT_EQ(op_types(*m.graph), (OpList{"Gemm"}));
  const std::string text = log.str();
  const std::string prefix = "[GraphBuilderPatternOptimization.optimize] ";
  EXPECT_NE(text.find(prefix + "start with 3 nodes, 2 initializers, "), std::string::npos) << text;
  EXPECT_NE(text.find(prefix + "iteration 0: 3 nodes, priority=0\n" + prefix + "applies 1 matches, 1*CastPattern"),
            std::string::npos) << text;
  EXPECT_NE(text.find(prefix + "iteration 1: 2 nodes, priority=0\n" + prefix + "increase priority to 3\n" + prefix +
                      "iteration 2: 2 nodes, priority=3\n" + prefix + "applies 1 matches, 1*MatMulAddPattern"),
            std::string::npos) << text;
  EXPECT_NE(text.find(prefix + "done after 4 iterations with 1 nodes in "), std::string::npos) << text;
  EXPECT_EQ(stats.iterations, 4u);
  // MatMulAdd was never tried before its level.
  EXPECT_EQ(stats.find("MatMulAdd")->iterations, 2u);
}

// The hook `xexp optimize` shows its progress with: after every iteration, with the level it ran at.
TEST(RewriteDriver, ReportsEachIteration) {
  Model m = cast_matmul_add();
  std::vector<std::vector<std::size_t>> seen;  // iteration, priority, applied, applied in all, nodes
  rewrite::OptimizeOptions options;
  options.on_iteration = [&seen](const rewrite::OptimizeProgress& p) {
    seen.push_back({p.iteration, static_cast<std::size_t>(p.priority), p.applied, p.applied_total, p.nodes});
  };
  test::run_rules(m, "Cast,MatMulAdd", options);
  EXPECT_EQ(op_types(*m.graph), (OpList{"Gemm"}));
  // Cast goes at priority 0; nothing more there, so priority 3, where MatMul and Add become Gemm.
  const std::vector<std::vector<std::size_t>> expected = {
      {0, 0, 1, 1, 2}, {1, 0, 0, 1, 2}, {2, 3, 1, 2, 1}, {3, 3, 0, 2, 1}};
  EXPECT_EQ(seen, expected);
}

TEST(RewriteDriver, FirstComeFirstServedOnOverlap) {
  // Three Transposes (perm [1,0]) in a row: roots T2 and T3 both want T2; T2 comes first.
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId v = g.add_input("X", ElemType::Float, Shape{2, 3});
  for (int k = 0; k < 3; ++k) v = node(g, "Transpose", {v}, {Attribute::make_ints("perm", {1, 0})});
  g.add_output(node(g, "Relu", {v}));
  std::ostringstream log;
  auto stats = test::run_rules(m, "TransposeTranspose", {.verbose = 9, .log = &log});
  EXPECT_EQ(op_types(g), (OpList{"Transpose", "Relu"}));
  EXPECT_NE(log.str().find("OVERLAP TransposeTransposePattern at Transpose(Transpose_2)"), std::string::npos)
      << log.str();
  const rewrite::RuleStats& s = *stats.find("TransposeTranspose");
  EXPECT_EQ(s.matched, 1u);
  EXPECT_EQ(s.applied, 1u);
  EXPECT_EQ(s.removed, 2u);
  EXPECT_EQ(s.added, 0u);
}

TEST(RewriteDriver, StatisticsCountAddedAndRemovedNodes) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, Shape{2, 4, 3});
  ValueId w = g.add_initializer("W", Tensor::from<float>({3, 2}, std::vector<float>(6, 1.f)));
  ValueId b = g.add_initializer("B", Tensor::from<float>({2}, {1.f, 2.f}));
  g.add_output(node(g, "Add", {node(g, "MatMul", {a, w}), b}));
  std::ostringstream log;
  auto stats = test::run_rules(m, "MatMulAdd", {.verbose = 2, .log = &log});
  const rewrite::RuleStats& s = *stats.find("MatMulAddPattern");
  EXPECT_EQ(s.applied, 1u);
  EXPECT_EQ(s.added, 3u);
  EXPECT_EQ(s.removed, 2u);
  EXPECT_NE(log.str().find("    STAT apply_MatMulAddPattern +3 -2 #it=2 maxmatch=1 i=1 - time="), std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("use pattern   1/1 - P3 - MatMulAddPattern()"), std::string::npos) << log.str();
}

TEST(RewriteDriver, OnlyWhatChangedIsMatchedAgain) {
  // 200 Casts to another type (never match) and one Cast to the same type at the end.
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  const int n = 200;
  for (int k = 0; k < n; ++k) {
    std::string name = "X";  // (not "X" + ...: g++ 12 -O3 warns falsely about that concatenation)
    name += std::to_string(k);
    ValueId x = g.add_input(name, ElemType::Float, Shape{2});
    g.add_output(node(g, "Cast", {x}, {Attribute::make_int("to", 10)}));
  }
  ValueId y = g.add_input("Y", ElemType::Float, Shape{2});
  g.add_output(node(g, "Relu", {node(g, "Cast", {y}, {Attribute::make_int("to", 1)})}));
  auto stats = test::run_rules(m, "Cast");
  const rewrite::RuleStats& s = *stats.find("Cast");
  EXPECT_EQ(s.applied, 1u);
  EXPECT_EQ(stats.iterations, 2u);
  EXPECT_EQ(s.tried, static_cast<std::size_t>(n + 1));  // the second iteration had nothing to try
}

TEST(RewriteDriver, CleanupRemovesIdentityAndUnusedNodes) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2});
  ValueId i = node(g, "Identity", {node(g, "Relu", {x})});
  node(g, "Neg", {x});  // unused
  g.add_output(node(g, "Sigmoid", {i}));
  auto stats = test::run_rules(m, "none");
  EXPECT_EQ(op_types(g), (OpList{"Relu", "Sigmoid"}));
  EXPECT_EQ(stats.find("remove_identity_nodes")->removed, 1u);
  EXPECT_EQ(stats.find("remove_unused")->removed, 1u);
}

TEST(RewriteDriver, DuplicatedShapesAreMerged) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 3});
  g.add_output(node(g, "Add", {node(g, "Shape", {x}), node(g, "Shape", {x})}));
  test::run_rules(m, "none");
  EXPECT_EQ(op_types(g), (OpList{"Shape", "Add"}));
}

TEST(RewriteDriver, LocalFunctionsAreOptimizedToo) {
  Model m = cast_matmul_add();
  Function& f = m.functions.emplace_back();
  f.name = "F";
  f.domain = "local";
  f.opsets.push_back({"", 18, {}});
  Graph& body = *f.body;
  ValueId x = body.add_input("x", ElemType::Float, Shape{2});
  body.add_output(node(body, "Relu", {node(body, "Cast", {x}, {Attribute::make_int("to", 1)})}));
  auto stats = test::run_rules(m, "default");
  EXPECT_EQ(op_types(body), (OpList{"Relu"}));
  EXPECT_EQ(stats.find("Cast")->applied, 2u);
}
