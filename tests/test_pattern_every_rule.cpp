// A guard over the whole rule catalogue: every rule of the registered sets (default, onnxruntime and the
// opt-in onnxruntime_gpu, onnxruntime_approx, onnxruntime_training) has a positive case in tests/data/rule_positive_cases.txt, a small model in ONNX's
// text syntax with the op sequence `xexp optimize` gives it. Each case is written to disk as an exporter
// writes a model (typed by ONNX's own shape inference, value_info included) and loaded back, then:
// - optimized as the user does (optimizer::optimize_model, default+onnxruntime and constant folding; the
//   user adds the opt-in set of a rule outside the default), the rule fires and the op sequence is the expected one;
// - optimized with the rule left out ("default+onnxruntime-<Rule>"), the graph is another one (op
//   types and attributes compared), so that no rule's case passes without the rule.
// One program, one loop over the catalogue: a new rule without a case fails the test by name.
// The second loop checks the rules' default containment once for the whole catalogue: in each case as
// written, every node a match takes (but its root, and the nodes the pattern marks shared) stops the rule
// once something outside the match reads it (a graph output): the rule would compute it twice.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/rule_cases.hpp"
#include "support/temp_dir.hpp"
#include "xexp/infer/model.hpp"
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

// Every rule of every registered set, with the spec that takes it: the default one, plus its opt-in set
// (onnxruntime_gpu, onnxruntime_approx, onnxruntime_training) when the default leaves it out.
struct Catalogue {
  std::vector<std::string> registered;
  std::map<std::string, std::string> spec_of;
};
Catalogue catalogue() {
  std::set<std::string> by_default;
  for (const rewrite::RulePtr& r : rewrite::rules_from_string(optimizer::kDefaultPatterns)) by_default.insert(r->name());
  Catalogue out;
  for (const std::string& set : rewrite::Catalog::global().set_names())
    for (const rewrite::RulePtr& r : rewrite::rules_from_string(set)) {
      out.registered.push_back(r->name());
      out.spec_of[r->name()] =
          std::string(optimizer::kDefaultPatterns) + (by_default.count(r->name()) ? "" : "+" + set);
    }
  return out;
}

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

  const Catalogue all = catalogue();
  std::vector<std::string> without_case;
  xexp::testing::TempDir dir;
  std::size_t checked = 0;
  for (const std::string& rule : all.registered) {
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
      const std::string& spec = all.spec_of.at(rule);
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
  std::cout << checked << " of " << all.registered.size()
            << " registered rules checked against their positive case\n";
  EXPECT_TRUE(without_case.empty()) << without_case.size()
                                    << " registered rules without a positive case: " << joined(without_case);
}

TEST(PatternEveryRule, ANodeOfTheMatchReadOutsideItStopsTheRule) {
  const Catalogue all = catalogue();
  xexp::testing::TempDir dir;
  std::size_t matches = 0, checked = 0;
  for (const xexp::testing::PositiveCase& c : xexp::testing::read_positive_cases()) {
    const auto spec = all.spec_of.find(c.rule);
    if (spec == all.spec_of.end()) continue;  // the first test reports it
    SCOPED_TRACE(c.rule);
    const std::string path = (dir.path() / (c.rule + ".onnx")).string();
    xexp::testing::write_case_model(c.text, path);
    ir::Model model = load_model(path);  // as the optimizer sees it: typed, before any rewrite
    infer::infer_model_types(model);
    ir::Graph& g = *model.graph;
    const int64_t opset = model.opset("").value_or(18);
    rewrite::RulePtr rule;
    for (const rewrite::RulePtr& r : rewrite::rules_from_string(spec->second))
      if (r->name() == c.rule) rule = r;
    ASSERT_TRUE(rule);
    const std::vector<ir::ValueId> outputs = g.outputs();
    for (ir::NodeId root : g.nodes()) {
      rewrite::Match m;
      if (!rule->match(g, root, opset, m)) continue;
      ++matches;
      const std::vector<ir::NodeId> matched(m.begin(), m.end());
      for (std::size_t k = 1; k < matched.size(); ++k) {  // the root's output is what the rule replaces
        if (m.is_shared(static_cast<int>(k))) continue;  // the pattern lets this node keep other readers
        for (ir::ValueId v : g.node(matched[k]).outputs) {
          if (v == ir::kNone || g.value(v).is_graph_output()) continue;
          g.add_output(v);  // a reader outside the match
          // The rule may still match otherwise (another case reads v as an input), never with that node taken.
          rewrite::Match again;
          bool taken = false;
          if (rule->match(g, root, opset, again))
            for (std::size_t j = 1; j < again.node_count(); ++j)
              taken = taken || (again.begin()[j] == matched[k] && !again.is_shared(static_cast<int>(j)));
          EXPECT_FALSE(taken) << g.value(v).name << " is read outside the match";
          g.set_outputs(outputs);
          ++checked;
        }
      }
    }
  }
  std::cout << matches << " matches on the rules' cases as written, " << checked
            << " of their nodes read outside the match\n";
  EXPECT_GT(checked, 200u);
}
