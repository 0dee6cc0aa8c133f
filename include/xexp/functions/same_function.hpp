#pragma once
// Structural equality of graphs and functions up to a consistent renaming of values
// (experimental-experiment's same_function_proto): two module instances whose bodies differ only by value names become one
// function. Node by node, in order: op type, domain, input and output counts, attributes (subgraphs
// compared the same way), and inputs read through a map grown from the inputs and node outputs.
#include <algorithm>
#include <optional>
#include <vector>

#include "xexp/ir/model.hpp"

namespace xexp::functions {

namespace detail {

class StructuralEquality {
 public:
  bool graphs(const ir::Graph& a, const ir::Graph& b) {
    if (a.inputs().size() != b.inputs().size() || a.outputs().size() != b.outputs().size() ||
        a.initializers().size() != b.initializers().size() || a.captured().size() != b.captured().size() ||
        a.node_count() != b.node_count())
      return false;
    std::vector<std::optional<ir::ValueId>> map(a.value_capacity());
    for (std::size_t i = 0; i < a.captured().size(); ++i) {
      if (!same_outer(a.value(a.captured()[i]).name, b.value(b.captured()[i]).name)) return false;
      map[a.captured()[i]] = b.captured()[i];
    }
    for (std::size_t i = 0; i < a.inputs().size(); ++i) {
      const ir::Value &va = a.value(a.inputs()[i]), &vb = b.value(b.inputs()[i]);
      if (va.elem != vb.elem || va.shape != vb.shape) return false;
      map[a.inputs()[i]] = b.inputs()[i];
    }
    for (std::size_t i = 0; i < a.initializers().size(); ++i) {
      const ir::Value &va = a.value(a.initializers()[i]), &vb = b.value(b.initializers()[i]);
      if (!va.initializer || !vb.initializer || !va.initializer->same_content(*vb.initializer)) return false;
      map[a.initializers()[i]] = b.initializers()[i];
    }
    frames_.push_back({&a, &b, &map});
    bool same = nodes(a, b, map);
    frames_.pop_back();
    if (!same) return false;
    for (std::size_t i = 0; i < a.outputs().size(); ++i)
      if (map[a.outputs()[i]] != b.outputs()[i]) return false;
    return true;
  }

  bool attributes(const ir::Attribute& a, const ir::Attribute& b) {
    if (a.name != b.name || a.type != b.type || a.i != b.i || a.f != b.f || a.s != b.s || a.ints != b.ints ||
        a.floats != b.floats || a.strings != b.strings || a.ref_attr_name != b.ref_attr_name || a.raw != b.raw ||
        a.tensors.size() != b.tensors.size() || a.graphs.size() != b.graphs.size())
      return false;
    for (std::size_t i = 0; i < a.tensors.size(); ++i)
      if (!a.tensors[i].same_content(b.tensors[i])) return false;
    for (std::size_t i = 0; i < a.graphs.size(); ++i)
      if (!graphs(*a.graphs[i], *b.graphs[i])) return false;
    return true;
  }

 private:
  struct Frame {
    const ir::Graph* a;
    const ir::Graph* b;
    const std::vector<std::optional<ir::ValueId>>* map;
  };

  bool nodes(const ir::Graph& a, const ir::Graph& b, std::vector<std::optional<ir::ValueId>>& map) {
    auto ib = b.nodes().begin();
    for (ir::NodeId ida : a.nodes()) {
      const ir::Node &na = a.node(ida), &nb = b.node(*ib);
      ++ib;
      if (na.op_type != nb.op_type || na.domain != nb.domain || na.inputs.size() != nb.inputs.size() ||
          na.outputs.size() != nb.outputs.size() || na.attributes.size() != nb.attributes.size())
        return false;
      for (std::size_t i = 0; i < na.inputs.size(); ++i) {
        if ((na.inputs[i] == ir::kNone) != (nb.inputs[i] == ir::kNone)) return false;
        if (na.inputs[i] != ir::kNone && map[na.inputs[i]] != nb.inputs[i]) return false;
      }
      for (std::size_t i = 0; i < na.attributes.size(); ++i)
        if (!attributes(na.attributes[i], nb.attributes[i])) return false;
      for (std::size_t i = 0; i < na.outputs.size(); ++i) {
        if ((na.outputs[i] == ir::kNone) != (nb.outputs[i] == ir::kNone)) return false;
        if (na.outputs[i] != ir::kNone) map[na.outputs[i]] = nb.outputs[i];
      }
    }
    return true;
  }

  // Subgraphs read enclosing values by name: both names must denote values the map pairs.
  bool same_outer(const std::string& name_a, const std::string& name_b) const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      std::optional<ir::ValueId> ia = it->a->find(name_a);
      if (!ia) continue;
      std::optional<ir::ValueId> ib = it->b->find(name_b);
      return ib && (*it->map)[*ia] == *ib;
    }
    return name_a == name_b;
  }

  std::vector<Frame> frames_;
};

inline std::vector<ir::OpsetImport> sorted_opsets(std::vector<ir::OpsetImport> opsets) {
  std::sort(opsets.begin(), opsets.end(),
            [](const ir::OpsetImport& x, const ir::OpsetImport& y) { return x.domain < y.domain; });
  return opsets;
}

}  // namespace detail

// Same computation up to value names: equal bodies (see the file comment), attribute names, attribute
// defaults and opsets. Function names and domains are not compared.
inline bool same_function(const ir::Function& a, const ir::Function& b) {
  if (a.attributes != b.attributes || a.attribute_defaults.size() != b.attribute_defaults.size() ||
      detail::sorted_opsets(a.opsets) != detail::sorted_opsets(b.opsets))
    return false;
  detail::StructuralEquality eq;
  for (std::size_t i = 0; i < a.attribute_defaults.size(); ++i)
    if (!eq.attributes(a.attribute_defaults[i], b.attribute_defaults[i])) return false;
  return eq.graphs(*a.body, *b.body);
}

}  // namespace xexp::functions
