#pragma once
// Shape rules are plain functions registered per (domain, op type); dispatch is one hash lookup.
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <unordered_map>

#include "xexp/core/symbol.hpp"
#include "xexp/infer/context.hpp"

namespace xexp::infer {

using Rule = void (*)(InferContext&);

inline constexpr std::string_view kMsDomain = "com.microsoft";

class RuleTable {
 public:
  void add(std::string_view domain, std::initializer_list<std::string_view> op_types, Rule rule) {
    for (std::string_view op : op_types) rules_[key(Symbol(domain), Symbol(op))] = rule;
  }
  void add(std::initializer_list<std::string_view> op_types, Rule rule) { add("", op_types, rule); }
  Rule find(Symbol domain, Symbol op_type) const {
    if (domain.view() == "ai.onnx") domain = Symbol();
    auto it = rules_.find(key(domain, op_type));
    return it == rules_.end() ? nullptr : it->second;
  }
  bool contains(Symbol domain, Symbol op_type) const { return find(domain, op_type) != nullptr; }

 private:
  static uint64_t key(Symbol domain, Symbol op) { return (uint64_t{domain.id()} << 32) | op.id(); }
  std::unordered_map<uint64_t, Rule> rules_;
};

}  // namespace xexp::infer
