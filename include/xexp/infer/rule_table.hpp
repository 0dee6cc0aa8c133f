#pragma once
// Shape rules are plain functions registered per (domain, op type); dispatch is an array read for
// the default domain, one hash lookup for the others.
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "xexp/core/symbol.hpp"
#include "xexp/infer/context.hpp"

namespace xexp::infer {

using Rule = void (*)(InferContext&);

inline constexpr std::string_view kMsDomain = "com.microsoft";

class RuleTable {
 public:
  void add(std::string_view domain, std::initializer_list<std::string_view> op_types, Rule rule) {
    const Symbol d = canonical_domain(Symbol(domain));
    for (std::string_view op : op_types) {
      const Symbol o(op);
      if (!d.empty()) {
        others_[op_key(d, o)] = rule;
        continue;
      }
      if (o.id() >= onnx_.size()) onnx_.resize(o.id() + 1, nullptr);
      onnx_[o.id()] = rule;
    }
  }
  void add(std::initializer_list<std::string_view> op_types, Rule rule) { add("", op_types, rule); }
  Rule find(Symbol domain, Symbol op_type) const {
    domain = canonical_domain(domain);
    if (domain.empty()) return op_type.id() < onnx_.size() ? onnx_[op_type.id()] : nullptr;
    auto it = others_.find(op_key(domain, op_type));
    return it == others_.end() ? nullptr : it->second;
  }
  bool contains(Symbol domain, Symbol op_type) const { return find(domain, op_type) != nullptr; }

 private:
  static Symbol canonical_domain(Symbol domain) {
    static const Symbol ai_onnx("ai.onnx");
    return domain == ai_onnx ? Symbol() : domain;
  }
  // The default domain, where nearly every node is, is a flat array indexed by the op's symbol id.
  std::vector<Rule> onnx_;
  std::unordered_map<uint64_t, Rule> others_;
};

}  // namespace xexp::infer
