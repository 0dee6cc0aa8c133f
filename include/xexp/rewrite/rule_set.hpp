#pragma once
// Rule sets by string. A Catalog knows named sets ("default", "onnxruntime") and single rules by short
// name; the patterns layer fills the global catalog, users add their own rules to it (or to their own
// catalog). Syntax: names separated by '+' or ','; '-' starts the list of rules to remove, which ','
// continues ("default+onnxruntime-Cast,TransposeTranspose"); "none" is the empty set; a single rule is
// named without the "Pattern" suffix (with it is accepted too); a named spec stands for the spec it names
// ("onnxruntime_cpu"). Order is kept: it decides overlaps.
#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "xexp/core/error.hpp"
#include "xexp/rewrite/rule.hpp"

namespace xexp::rewrite {

using RuleSet = std::vector<RulePtr>;

class Catalog;
RuleSet rules_from_string(std::string_view spec, const Catalog& catalog);

class Catalog {
 public:
  static Catalog& global() {
    static Catalog instance;
    return instance;
  }
  // Registers a named set; each of its rules also becomes reachable by its own name.
  void add_set(std::string name, RuleSet rules) {
    std::lock_guard lock(mutex_);
    for (const RulePtr& r : rules) rules_.insert_or_assign(r->name(), r);
    sets_.insert_or_assign(std::move(name), std::move(rules));
  }
  void add_rule(RulePtr r) {
    std::lock_guard lock(mutex_);
    std::string name = r->name();
    rules_.insert_or_assign(std::move(name), std::move(r));
  }
  // Names a spec over this catalog's sets and rules, e.g. a set without the rules a provider runs slower.
  // The spec must not name itself, directly or through another named spec.
  void add_named_spec(std::string name, std::string spec) {
    std::lock_guard lock(mutex_);
    named_specs_.insert_or_assign(std::move(name), std::move(spec));
  }
  std::vector<std::pair<std::string, std::string>> named_specs() const {
    std::lock_guard lock(mutex_);
    return {named_specs_.begin(), named_specs_.end()};
  }
  std::vector<std::string> set_names() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [name, rules] : sets_) out.push_back(name);
    return out;
  }
  // One name: a set, "none", a named spec or a rule. Unknown names throw.
  RuleSet resolve(std::string_view name) const {
    std::unique_lock lock(mutex_);
    if (name == "none") return {};
    if (auto it = sets_.find(name); it != sets_.end()) return it->second;
    if (auto it = named_specs_.find(name); it != named_specs_.end()) {
      const std::string spec = it->second;
      lock.unlock();  // the spec resolves its own names
      return rules_from_string(spec, *this);
    }
    std::string_view short_name = name;
    if (short_name.size() > 7 && short_name.ends_with("Pattern")) short_name.remove_suffix(7);
    if (auto it = rules_.find(short_name); it != rules_.end()) return {it->second};
    throw Error("unknown pattern or pattern set '" + std::string(name) + "'");
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, RuleSet, std::less<>> sets_;
  std::map<std::string, RulePtr, std::less<>> rules_;
  std::map<std::string, std::string, std::less<>> named_specs_;
};

inline RuleSet rules_from_string(std::string_view spec, const Catalog& catalog) {
  RuleSet positive, negative;
  bool removing = false;
  std::size_t start = 0;
  auto take = [&](std::size_t end) {
    std::string_view token = spec.substr(start, end - start);
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    if (token.empty()) {
      if (end < spec.size() || start > 0) throw Error("empty name in pattern set '" + std::string(spec) + "'");
      return;
    }
    RuleSet rules = catalog.resolve(token);
    RuleSet& target = removing ? negative : positive;
    target.insert(target.end(), rules.begin(), rules.end());
  };
  for (std::size_t k = 0; k <= spec.size(); ++k) {
    if (k < spec.size() && spec[k] != '+' && spec[k] != ',' && spec[k] != '-') continue;
    take(k);
    if (k < spec.size() && spec[k] == '-') removing = true;
    if (k < spec.size() && spec[k] == '+') removing = false;
    start = k + 1;
  }
  std::erase_if(positive, [&](const RulePtr& r) {
    return std::any_of(negative.begin(), negative.end(), [&](const RulePtr& n) { return n->name() == r->name(); });
  });
  return positive;
}
inline RuleSet rules_from_string(std::string_view spec) {
  return rules_from_string(spec, Catalog::global());
}

}  // namespace xexp::rewrite
