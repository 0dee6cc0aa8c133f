// A guard over the whole rule catalogue: every rule of the registered sets (default, onnxruntime and the
// opt-in onnxruntime_gpu, onnxruntime_approx, onnxruntime_training) has a positive case in tests/data/rule_positive_cases.txt, a small model in ONNX's
// text syntax with the op sequence `xexp optimize` gives it. Each case is written to disk as an exporter
// writes a model (typed by ONNX's own shape inference, value_info included) and loaded back, then:
// - optimized as the user does (optimizer::optimize_model, default+onnxruntime and constant folding; the
//   user adds the opt-in set of a rule outside the default), the rule fires and the op sequence is the expected one;
// - optimized with the rule left out ("default+onnxruntime-<Rule>"), the graph is another one (op
//   types and attributes compared), so that no rule's case passes without the rule.
// One program, one loop over the catalogue: a new rule without a case fails the test by name.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/rule_cases.hpp"
#include "support/temp_dir.hpp"
#include "xexp/onnx.hpp"
#include "xexp/patterns/registry.hpp"
#include "xexp/optimizer/optimize_model.hpp"
#include "xexp/tools/printer.hpp"

using namespace xexp;

namespace {

std::vector<std::string> op_types(const ir::Graph& g) {
  std::vector<std::string> out;
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    out.push_back(n.domain.empty() ? n.op_type.str() : n.domain.str() + "." + n.op_type.str());
  }
  return out;
}

// Op types with their attributes and input counts: what a rule changes, names left out.
std::string structure(const ir::Graph& g) {
  std::string out;
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    out += n.domain.str() + "." + n.op_type.str() + "(" + std::to_string(n.inputs.size()) + ")";
    // Appended piece by piece: g++ 12 -O3 warns falsely (stringop-overflow) on " " + std::string.
    for (const ir::Attribute& a : n.attributes)
      out.append(" ").append(a.name.str()).append("=").append(tools::detail::attribute_value(a));
    out += "\n";
  }
  return out;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

struct Outcome {
  std::vector<std::string> ops;
  std::string structure;
  std::size_t applied = 0;  // times `rule` fired
};

Outcome optimize(const std::string& path, const std::string& patterns, const std::string& rule) {
  ir::Model model = load_model(path);
  const optimizer::OptimizeModelReport report = xexp::testing::optimize_quietly(model, true, patterns);
  const rewrite::RuleStats* stats = report.rules.find(rule);
  return {op_types(*model.graph), structure(*model.graph), stats ? stats->applied : 0};
}

}  // namespace

TEST(PatternEveryRule, EachRuleIsNeededByItsPositiveCase) {
  const std::vector<xexp::testing::PositiveCase> cases = xexp::testing::read_positive_cases();
  std::map<std::string, const xexp::testing::PositiveCase*> by_rule;
  for (const xexp::testing::PositiveCase& c : cases)
    EXPECT_TRUE(by_rule.emplace(c.rule, &c).second) << c.rule << " has two cases";

  // Every rule of every registered set, with the spec that takes it: the default one, plus its opt-in
  // set (onnxruntime_gpu, onnxruntime_approx, onnxruntime_training) when the default leaves it out.
  std::set<std::string> by_default;
  for (const rewrite::RulePtr& r : rewrite::rules_from_string(optimizer::kDefaultPatterns)) by_default.insert(r->name());
  std::vector<std::string> registered, without_case;
  std::map<std::string, std::string> opt_in_set;
  for (const std::string& set : rewrite::Catalog::global().set_names())
    for (const rewrite::RulePtr& r : rewrite::rules_from_string(set)) {
      registered.push_back(r->name());
      if (!by_default.count(r->name())) opt_in_set[r->name()] = set;
    }
  xexp::testing::TempDir dir;
  std::size_t checked = 0;
  for (const std::string& rule : registered) {
    auto it = by_rule.find(rule);
    if (it == by_rule.end()) {
      without_case.push_back(rule);
      continue;
    }
    SCOPED_TRACE(rule);
    const xexp::testing::PositiveCase& c = *it->second;
    const std::string path = (dir.path() / (rule + ".onnx")).string();
    try {
      xexp::testing::write_case_model(c.text, path);
      const auto set = opt_in_set.find(rule);
      const std::string spec =
          std::string(optimizer::kDefaultPatterns) + (set == opt_in_set.end() ? "" : "+" + set->second);
      const Outcome with = optimize(path, spec, rule);
      std::string without_spec = spec + "-" + rule;
      for (const std::string& other : c.subsumers) without_spec += "," + other;
      const Outcome without = optimize(path, without_spec, rule);
      EXPECT_GT(with.applied, 0u) << rule << " did not fire on its positive case";
      EXPECT_EQ(joined(with.ops), joined(c.expected)) << rule << ": not the expected graph";
      EXPECT_NE(without.structure, with.structure)
          << rule << ": the set without the rule gives the same graph, so the case does not need the rule:\n"
          << without.structure;
      ++checked;
    } catch (const Error& e) {
      ADD_FAILURE() << rule << ": " << e.what();
    }
    by_rule.erase(it);
  }
  for (const auto& [rule, c] : by_rule)
    ADD_FAILURE() << "a case for " << rule << ", which no registered set holds";
  std::cout << checked << " of " << registered.size()
            << " registered rules checked against their positive case\n";
  EXPECT_TRUE(without_case.empty()) << without_case.size()
                                    << " registered rules without a positive case: " << joined(without_case);
}
