#pragma once
// The names a GraphBuilder gives, in the scheme experimental-experiment's GraphBuilder uses: a value or
// node name is `base` when free, else base2, base3, ...; an output nobody named is
// _onx_<op type in lowercase><output index>, then with the same suffixes. The next suffix to try is
// remembered per base, so that naming many nodes of one op type stays linear.
#include <cctype>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "xexp/builder/taken_names.hpp"
#include "xexp/core/string_hash.hpp"
#include "xexp/core/symbol.hpp"
#include "xexp/ir/graph.hpp"

namespace xexp {

class BuilderNames {
 public:
  // A name no value of `g` has.
  std::string value_name(const ir::Graph& g, std::string_view base) {
    if (!g.has_value(base)) return std::string(base);
    int& k = value_suffix_.try_emplace(std::string(base), 2).first->second;
    std::string candidate;
    do candidate = std::string(base) + std::to_string(k++);
    while (g.has_value(candidate));
    return candidate;
  }

  // A name no node has (again: release_node_name frees the name of a node rolled back). Asking
  // whether a name is free allocates nothing.
  std::string node_name(std::string_view base) {
    if (node_names_.insert(base)) return std::string(base);
    auto counter = node_suffix_.find(base);
    if (counter == node_suffix_.end()) counter = node_suffix_.emplace(std::string(base), 2).first;
    std::string candidate;
    do {
      candidate = base;
      candidate += std::to_string(counter->second++);
    } while (!node_names_.insert(candidate));
    return candidate;
  }
  void release_node_name(std::string_view name) { node_names_.erase(name); }

  // Adds output k of a node of type `op` to `g` under a generated name, appended to `names`. The base
  // of each (op, k) is spelled once; trying a candidate and taking it is one lookup.
  ir::ValueId add_generated_output(ir::Graph& g, Symbol op, int k, std::vector<std::string>& names) {
    auto [it, fresh] = generated_.try_emplace((uint64_t{op.id()} << 32) | static_cast<uint32_t>(k));
    GeneratedName& gen = it->second;
    if (fresh) {
      gen.base = "_onx_";
      for (char ch : op.view()) gen.base += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      gen.base += std::to_string(k);
      if (ir::ValueId id = g.try_add_value(gen.base); id != ir::kNone) {
        names.push_back(gen.base);
        return id;
      }
    }
    std::string candidate;
    for (;;) {
      candidate = gen.base;
      candidate += std::to_string(gen.next++);
      if (ir::ValueId id = g.try_add_value(candidate); id != ir::kNone) {
        names.push_back(std::move(candidate));
        return id;
      }
    }
  }

 private:
  using SuffixMap = std::unordered_map<std::string, int, StringHash, std::equal_to<>>;
  struct GeneratedName {
    std::string base;  // _onx_add0
    int next = 2;      // the next suffix to try
  };

  TakenNames node_names_;
  SuffixMap value_suffix_, node_suffix_;  // the next suffix to try per base
  std::unordered_map<uint64_t, GeneratedName> generated_;  // (op symbol, output index) -> its names
};

}  // namespace xexp
