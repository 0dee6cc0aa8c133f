// A guard over the whole rule catalogue: every rule of the registered sets (default, onnxruntime and the
// opt-in onnxruntime_gpu, onnxruntime_approx, onnxruntime_training) has a positive case in tests/data/rule_positive_cases.txt, a small model in ONNX's
// text syntax with the op sequence `xexp optimize` gives it. Each case is written to disk as an exporter
// writes a model (typed by ONNX's own shape inference, value_info included) and loaded back, then:
// - optimized as the user does (optimizer::optimize_model, default+onnxruntime and constant folding; the
//   user adds the opt-in set of a rule outside the default), the rule fires and the op sequence is the expected one;
// - optimized with the rule left out ("default+onnxruntime-<Rule>"), the graph is another one (op
//   types and attributes compared), so that no rule's case passes without the rule.
// One program, one loop over the catalogue: a new rule without a case fails the test by name.
// The second loop checks what the rules' default containment promises, once for the whole catalogue: a
// value a rewrite removes from its case, once the user also reads it (a graph output), is still given,
// with the same numbers.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/rewrite_helpers.hpp"
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

// The values computed by nodes of `g` that are no graph outputs, in node order.
std::vector<ir::ValueId> computed_values(const ir::Graph& g) {
  std::vector<ir::ValueId> out;
  for (ir::NodeId id : g.nodes())
    for (ir::ValueId v : g.node(id).outputs)
      if (v != ir::kNone && !g.value(v).is_graph_output()) out.push_back(v);
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

TEST(PatternEveryRule, AValueReadOutsideTheMatchIsStillGivenWithItsNumbers) {
  const Catalogue all = catalogue();
  xexp::testing::TempDir dir;
  std::size_t exposed = 0, compared = 0;
  for (const xexp::testing::PositiveCase& c : xexp::testing::read_positive_cases()) {
    const auto spec = all.spec_of.find(c.rule);
    if (spec == all.spec_of.end()) continue;  // the first test reports it
    SCOPED_TRACE(c.rule);
    const std::string path = (dir.path() / (c.rule + ".onnx")).string();
    xexp::testing::write_case_model(c.text, path);
    // The values the rewrites take away from the case as written.
    ir::Model optimized = load_model(path);
    xexp::testing::optimize_quietly(optimized, true, spec->second);
    // A removed node's output name may stay in the graph's index (a tombstone): what counts is that no
    // node computes it any more.
    std::set<std::string> computed;
    for (ir::ValueId v : computed_values(*optimized.graph)) computed.insert(optimized.graph->value(v).name);
    std::vector<std::size_t> removed;
    const ir::Model original = load_model(path);
    const std::vector<ir::ValueId> values = computed_values(*original.graph);
    for (std::size_t k = 0; k < values.size(); ++k)
      if (!computed.count(original.graph->value(values[k]).name)) removed.push_back(k);
    // The case as written, with its k-th computed value read outside (a graph output) too.
    const auto read_outside = [&](std::size_t k) {
      ir::Model m = load_model(path);
      m.graph->add_output(computed_values(*m.graph)[k]);
      return m;
    };
    for (std::size_t k : removed) {
      const ir::Model before = read_outside(k);
      const std::string name = before.graph->value(before.graph->outputs().back()).name;
      SCOPED_TRACE("with " + name + " read outside");
      const xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(
          *before.graph, {.seed = 7, .float_low = -2, .float_high = 2, .int_low = 0, .int_high = 3, .symbols = {}, .default_dim = 2});
      ir::Model after = read_outside(k);
      try {
        xexp::testing::optimize_quietly(after, true, spec->second);
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
        continue;
      }
      ++exposed;
      ASSERT_EQ(after.graph->outputs().size(), before.graph->outputs().size());
      EXPECT_EQ(after.graph->value(after.graph->outputs().back()).name, name);
      xexp::testing::NamedTensors want, got;
      try {  // the evaluator lacks a few contrib kernels and sequence types: those cases only check the name
        want = test::evaluated(before, feeds);
        got = test::evaluated(after, feeds);
      } catch (const Error&) {
        continue;
      }
      ++compared;
      // The exposed value only: an opt-in approximation (FastGelu) may still change the case's own output.
      xexp::testing::expect_close(got.back().second, want.back().second, 1e-4, 1e-4, name);
    }
  }
  std::cout << exposed << " values a rule removes read outside its match, " << compared
            << " compared in the evaluator\n";
  EXPECT_GT(compared, 300u);
}
