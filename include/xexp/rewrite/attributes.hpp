#pragma once
// How a pattern reads a node attribute: present on the node, moved to an input by a newer opset (the
// opset adapters), or absent and then equal to the ONNX schema default. Forgetting the default is how
// runtimes shipped wrong fusions for a missing `keepdims` or `perm`; reading through here avoids it.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "xexp/ir/graph.hpp"
#include "xexp/onnx/schema.hpp"
#include "xexp/rewrite/match.hpp"

namespace xexp::rewrite {

// The input slot holding `attr` of `op` at `opset` (onnx/schema.hpp's table), or -1 for an attribute.
inline int input_slot_of_attribute(Symbol op, Symbol domain, Symbol attr, int64_t opset) {
  if (!domain.empty()) return -1;
  const AttributeBecameInput* moved = attribute_became_input(op.view(), attr.view());
  return moved && opset >= moved->since ? moved->input_index : -1;
}

// The schema default of an attribute, or nullptr. attribute_default answers by value; matchers ask
// constantly, so each thread keeps one stable copy per (op, domain, attribute, opset).
inline const ir::Attribute* schema_default(Symbol op, Symbol domain, Symbol attr, int64_t opset) {
  using Key = std::tuple<uint32_t, uint32_t, uint32_t, int64_t>;
  thread_local std::map<Key, std::optional<ir::Attribute>> cache;
  auto [it, inserted] = cache.try_emplace(Key{op.id(), domain.id(), attr.id(), opset});
  if (inserted) it->second = attribute_default(op.view(), domain.view(), opset, attr.view());
  return it->second ? &*it->second : nullptr;
}

// Reads `attr` of node `n`; an attribute stored in a constant int64 input is turned into an INTS
// attribute by `keep` (which owns it). nullptr: absent with no default, or held by a non-constant input.
template <class Keep>
const ir::Attribute* read_attribute(const ir::Graph& g, const ir::Node& n, Symbol attr, int64_t opset,
                                    Keep&& keep) {
  if (const ir::Attribute* a = n.attribute(attr)) return a;
  int slot = input_slot_of_attribute(n.op_type, n.domain, attr, opset);
  if (slot >= 0) {
    if (static_cast<std::size_t>(slot) >= n.inputs.size() || n.inputs[slot] == ir::kNone) return nullptr;
    const Tensor* t = constant_tensor(g, n.inputs[slot]);
    if (!t || t->type() != ElemType::Int64) return nullptr;
    auto data = t->data<int64_t>();
    return keep(ir::Attribute::make_ints(attr, {data.begin(), data.end()}));
  }
  return schema_default(n.op_type, n.domain, attr, n.domain.empty() ? opset : 1);
}

}  // namespace xexp::rewrite
