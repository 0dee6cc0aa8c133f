#pragma once
// How a pattern reads a node attribute: present on the node, moved to an input by a newer opset (the
// opset adapters), or absent and then equal to the ONNX schema default. Forgetting the default is how
// runtimes shipped wrong fusions for a missing `keepdims` or `perm`; reading through here avoids it.
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include <onnx/defs/schema.h>

#include "xexp/infer/moved_attributes.hpp"
#include "xexp/ir/graph.hpp"
#include "xexp/rewrite/match.hpp"

namespace xexp::rewrite {

// The input slot holding `attr` of a default-domain `op` at `opset`, or -1 when it is an attribute.
// infer::moved_attribute knows axes and split; Slice moved four attributes at opset 10.
inline int input_slot_of_attribute(Symbol op, Symbol domain, Symbol attr, int64_t opset) {
  if (!domain.empty()) return -1;
  if (op.view() == "Slice") {
    constexpr std::string_view slice_inputs[] = {"starts", "ends", "axes", "steps"};
    for (int k = 0; k < 4; ++k)
      if (opset >= 10 && attr == slice_inputs[k]) return k + 1;
    return -1;
  }
  auto moved = infer::moved_attribute(op.view());
  return moved && opset >= moved->since && attr == moved->name ? static_cast<int>(moved->slot) : -1;
}
// Whether input `slot` of `op` carries a former attribute at this opset.
inline bool is_attribute_slot(Symbol op, Symbol domain, std::size_t slot, int64_t opset) {
  if (!domain.empty()) return false;
  if (op.view() == "Slice") return opset >= 10 && slot >= 1 && slot <= 4;
  auto moved = infer::moved_attribute(op.view());
  return moved && opset >= moved->since && slot == moved->slot;
}

// The schema default of an attribute (nullptr when it has none), cached: schemas never change.
inline const ir::Attribute* schema_default(Symbol op, Symbol domain, Symbol attr, int64_t opset) {
  using Key = std::tuple<uint32_t, uint32_t, uint32_t, int64_t>;
  static std::mutex mutex;
  static std::map<Key, std::optional<ir::Attribute>> cache;
  std::lock_guard lock(mutex);
  auto [it, inserted] = cache.try_emplace(Key{op.id(), domain.id(), attr.id(), opset});
  if (!inserted) return it->second ? &*it->second : nullptr;
  const auto* schema = ::onnx::OpSchemaRegistry::Schema(op.str(), static_cast<int>(opset), domain.str());
  if (!schema) return nullptr;
  auto found = schema->attributes().find(attr.str());
  if (found == schema->attributes().end()) return nullptr;
  const ::onnx::AttributeProto& d = found->second.default_value;
  switch (d.type()) {
    case ::onnx::AttributeProto::INT: it->second = ir::Attribute::make_int(attr, d.i()); break;
    case ::onnx::AttributeProto::FLOAT: it->second = ir::Attribute::make_float(attr, d.f()); break;
    case ::onnx::AttributeProto::STRING: it->second = ir::Attribute::make_string(attr, d.s()); break;
    case ::onnx::AttributeProto::INTS:
      it->second = ir::Attribute::make_ints(attr, {d.ints().begin(), d.ints().end()});
      break;
    case ::onnx::AttributeProto::FLOATS:
      it->second = ir::Attribute::make_floats(attr, {d.floats().begin(), d.floats().end()});
      break;
    default: return nullptr;
  }
  return &*it->second;
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
