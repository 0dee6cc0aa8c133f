#pragma once
// Copying nodes between graphs. Two users: the deep clone of a graph (values keep their names), and the
// inliner, which copies a function body into the caller with its own renaming and with attribute
// references bound from the call site. Subgraphs are always deep copied (never shared): a subgraph's
// captured names follow the renaming of the enclosing values they refer to.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xexp/ir/graph.hpp"

namespace xexp::ir {

// How a copy names what it creates and fills attribute references. Empty members mean: keep the
// source name, keep the attribute as it is.
struct CopyPolicy {
  // Name in `dst` of a source value the copy creates (a body internal, a subgraph local).
  std::function<std::string(Graph& dst, const std::string& name)> value_name;
  // Name in `dst` of a copied node.
  std::function<std::string(Graph& dst, const std::string& name)> node_name;
  // Value of an attribute that refers to a caller's attribute (ref_attr_name); nullopt drops it.
  std::function<std::optional<Attribute>(const Attribute&)> resolve_ref;
};

// Source value id -> destination value id. Unset: not bound yet (the copy creates it); kNone: bound to
// nothing (an omitted optional input or output).
using ValueMap = std::vector<std::optional<ValueId>>;

namespace detail {

inline void copy_value_info(const Value& from, Value& to) {
  to.elem = from.elem;
  to.shape = from.shape;
  to.raw_type = from.raw_type;
  to.doc_string = from.doc_string;
  to.unknown = from.unknown;
  to.presence = from.presence;
}

class Copier {
 public:
  explicit Copier(const CopyPolicy& policy) : policy_(policy) {}

  NodeId copy_nodes(const Graph& src, Graph& dst, ValueMap& map, NodeId before) {
    NodeId first = kNone;
    for (NodeId id : src.nodes()) {
      NodeId copy = copy_node(src, id, dst, map, before);
      if (first == kNone) first = copy;
    }
    return first;
  }

  NodeId copy_node(const Graph& src, NodeId id, Graph& dst, ValueMap& map, NodeId before) {
    frames_.push_back({&src, &dst, &map});
    const Node& n = src.node(id);
    std::vector<ValueId> inputs, outputs;
    inputs.reserve(n.inputs.size());
    for (ValueId in : n.inputs) inputs.push_back(in == kNone ? kNone : target(src, dst, map, in));
    outputs.reserve(n.outputs.size());
    for (ValueId out : n.outputs) outputs.push_back(out == kNone ? kNone : target(src, dst, map, out));
    std::vector<Attribute> attributes;
    attributes.reserve(n.attributes.size());
    for (const Attribute& a : n.attributes)
      if (std::optional<Attribute> copied = copy_attribute(a, dst)) attributes.push_back(std::move(*copied));
    std::string node_name = policy_.node_name ? policy_.node_name(dst, n.name) : n.name;
    NodeId copy = dst.add_node(n.op_type, std::move(inputs), std::move(outputs), std::move(attributes),
                               std::move(node_name), n.domain, before);
    Node& c = dst.node(copy);
    c.doc_string = n.doc_string;
    c.unknown = n.unknown;
    c.presence = n.presence;
    for (ValueId captured : n.captured) {
      ValueId outer = target(src, dst, map, captured);
      if (outer != kNone) dst.add_captured_use(copy, outer);
    }
    frames_.pop_back();
    return copy;
  }

  std::unique_ptr<Graph> copy_graph(const Graph& src, const Graph* parent) {
    auto g = std::make_unique<Graph>();
    g->parent = parent;
    g->name = src.name;
    g->doc_string = src.doc_string;
    g->raw_quantization_annotations = src.raw_quantization_annotations;
    g->unknown = src.unknown;
    g->presence = src.presence;
    ValueMap map(src.value_capacity());
    for (ValueId id : src.captured()) {
      ValueId c = g->add_captured(outer_name(src.value(id).name));
      copy_value_info(src.value(id), g->value(c));
      map[id] = c;
    }
    for (ValueId id : src.inputs()) {
      ValueId in = g->add_input(new_value_name(*g, src.value(id).name));
      copy_value_info(src.value(id), g->value(in));
      map[id] = in;
    }
    std::vector<ValueId> initializers;
    for (ValueId id : src.initializers()) {
      ValueId init = target(src, *g, map, id);  // an initializer also listed as input is bound already
      g->value(init).initializer = src.value(id).initializer;
      g->value(init).raw_sparse_initializer = src.value(id).raw_sparse_initializer;
      initializers.push_back(init);
    }
    g->set_initializer_order(std::move(initializers));
    copy_nodes(src, *g, map, kNone);
    for (ValueId id : src.outputs()) g->add_output(target(src, *g, map, id));
    for (ValueId id : src.value_info())
      if (map[id] && *map[id] != kNone) g->value_info().push_back(*map[id]);
    return g;
  }

 private:
  struct Frame {
    const Graph* src;
    Graph* dst;
    ValueMap* map;
  };

  std::string new_value_name(Graph& dst, const std::string& name) const {
    return policy_.value_name ? policy_.value_name(dst, name) : name;
  }

  // The destination of source value `id`, created (with its type and initializer) when not bound yet.
  ValueId target(const Graph& src, Graph& dst, ValueMap& map, ValueId id) {
    if (map[id]) return *map[id];
    const Value& v = src.value(id);
    ValueId out = dst.add_value(new_value_name(dst, v.name));
    Value& o = dst.value(out);
    copy_value_info(v, o);
    o.initializer = v.initializer;
    o.raw_sparse_initializer = v.raw_sparse_initializer;
    map[id] = out;
    return out;
  }

  // A subgraph reads an enclosing value by name: the name that value has in the copy.
  std::string outer_name(const std::string& name) const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      std::optional<ValueId> id = it->src->find(name);
      if (!id) continue;
      const std::optional<ValueId>& bound = (*it->map)[*id];
      if (bound && *bound != kNone) return it->dst->value(*bound).name;
    }
    return name;
  }

  std::optional<Attribute> copy_attribute(const Attribute& a, Graph& dst) {
    std::optional<Attribute> copied;
    if (!a.ref_attr_name.empty() && policy_.resolve_ref) {
      copied = policy_.resolve_ref(a);
      if (!copied) return std::nullopt;
    } else {
      copied = a;
    }
    for (std::shared_ptr<Graph>& g : copied->graphs) g = copy_graph(*g, &dst);
    return copied;
  }

  const CopyPolicy& policy_;
  std::vector<Frame> frames_;
};

}  // namespace detail

// Copies the live nodes of `src`, in order, into `dst` before node `before` (kNone: at the end).
// Inputs and outputs already bound in `map` are used as they are; the others become new values of
// `dst` named by the policy. Returns the first copied node (kNone when `src` has none).
inline NodeId copy_nodes(const Graph& src, Graph& dst, ValueMap& map, NodeId before = kNone,
                         const CopyPolicy& policy = {}) {
  return detail::Copier(policy).copy_nodes(src, dst, map, before);
}

// Copies node `id` of `src` into `dst` before node `before`, as copy_nodes does for all of them.
inline NodeId copy_node(const Graph& src, NodeId id, Graph& dst, ValueMap& map, NodeId before = kNone,
                        const CopyPolicy& policy = {}) {
  return detail::Copier(policy).copy_node(src, id, dst, map, before);
}

// A deep copy of `src`, subgraphs included, whose enclosing graph is `parent`. Values and nodes keep
// their names; dead nodes and values are left behind.
inline std::unique_ptr<Graph> clone(const Graph& src, const Graph* parent = nullptr, const CopyPolicy& policy = {}) {
  return detail::Copier(policy).copy_graph(src, parent);
}

}  // namespace xexp::ir
