#pragma once
// xexp patterns [SPEC]: the rules of every registered set (or of SPEC), one line each: the set, the
// priority and the rule's own description (Rule::describe), in the order the optimizer tries them.
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "xexp/patterns/registry.hpp"
#include "xexp/rewrite/rule_set.hpp"

namespace xexp::cli {

inline void print_rules(std::ostream& out, const std::string& set, const rewrite::RuleSet& rules) {
  for (const rewrite::RulePtr& r : rules)
    out << std::left << std::setw(12) << set << " P" << r->priority() << "  " << r->describe() << "\n";
}

inline void add_patterns_command(CLI::App& app) {
  auto spec = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("patterns", "List the rules: set, priority and description");
  cmd->add_option("spec", *spec, "Only the rules of this spec, e.g. default-Cast (default: every set)");
  cmd->callback([spec] {
    const rewrite::Catalog& catalog = rewrite::Catalog::global();
    if (!spec->empty()) {
      print_rules(std::cout, *spec, rewrite::rules_from_string(*spec, catalog));
      return;
    }
    for (const std::string& set : catalog.set_names()) print_rules(std::cout, set, catalog.resolve(set));
  });
}

}  // namespace xexp::cli
