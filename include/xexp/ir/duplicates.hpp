#pragma once
// Doing the same work once: equal initializers become one, and nodes computing the same thing
// (same op, same inputs, same attributes) become one, the first in execution order serving the
// consumers of the others. Exports repeat both everywhere: a Constant [0] per Unsqueeze, the same
// Shape/Gather chain in every layer, a weight shared by every layer transposed once per layer (folding
// each of those stores a copy of the weight). Merging a node makes its consumers read the same values,
// so whole duplicated chains merge, in one pass over the graph or, for the optimizer's driver, around
// the values a rewrite touched.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "xexp/core/tensor.hpp"
#include "xexp/ir/graph.hpp"

namespace xexp::ir {

// Tensors with fewer elements than this are deduplicated by type, shape and bytes.
inline constexpr int64_t kDedupMaxElements = 1024;

// Element type and dims: tensors with different layouts are never equal, whatever their bytes.
inline std::string tensor_layout(const Tensor& t) {
  std::string key = std::to_string(static_cast<int>(t.type())) + ":";
  for (int64_t d : t.dims()) key += std::to_string(d) + ",";
  return key;
}

// Type, dims and bytes in one string: equal keys mean interchangeable initializers. Empty for tensors
// that are not deduplicated (large ones, strings, values that cannot be read).
inline std::string initializer_dedup_key(const Tensor& t) {
  if (t.size() >= kDedupMaxElements || t.type() == ElemType::String || t.empty() || !t.available()) return {};
  std::string key = tensor_layout(t) + ":";
  auto bytes = t.bytes();
  key.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return key;
}

namespace detail {
inline bool same_tensor(const Tensor& a, const Tensor& b) {
  if (a.type() != b.type() || a.dims() != b.dims() || a.empty() != b.empty()) return false;
  if (a.empty()) return true;
  if (!a.available() || !b.available()) return false;
  if (a.type() == ElemType::String) return a.string_data() == b.string_data();
  const auto x = a.bytes(), y = b.bytes();
  return std::equal(x.begin(), x.end(), y.begin(), y.end());
}
inline std::size_t bytes_hash(const Tensor& t) {
  const auto bytes = t.bytes();
  return std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}
}  // namespace detail

// Consumers of an initializer read the first initializer equal to it (element type, dims and bytes, of
// any size: exporters store the same mask table or weight twice) instead; the others go. Graph inputs (a
// caller may feed them) and graph outputs keep their own. Only tensors sharing their layout with another
// are hashed, and bytes are compared only on equal hashes: time linear in their bytes. Returns how many
// went.
inline std::size_t merge_equal_initializers(Graph& g) {
  auto candidate = [&](ValueId id) -> const Tensor* {
    const Value& v = g.value(id);
    if (v.is_input || v.is_graph_output() || !v.initializer) return nullptr;
    const Tensor& t = *v.initializer;
    return t.empty() || !t.available() || t.type() == ElemType::String ? nullptr : &t;
  };
  const std::vector<ValueId> order = g.initializers();
  std::vector<std::string> layouts(order.size());  // empty for the initializers that are not candidates
  std::unordered_map<std::string, std::size_t> per_layout;
  for (std::size_t k = 0; k < order.size(); ++k)
    if (const Tensor* t = candidate(order[k])) ++per_layout[layouts[k] = tensor_layout(*t)];
  // Per layout, per hash of the bytes: the first initializer of each content met.
  std::unordered_map<std::string, std::unordered_map<std::size_t, std::vector<ValueId>>> first_seen;
  std::vector<ValueId> kept;
  std::size_t merged = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const ValueId id = order[k];
    if (!layouts[k].empty() && per_layout[layouts[k]] > 1) {
      const Tensor& t = *g.value(id).initializer;
      std::vector<ValueId>& same_hash = first_seen[layouts[k]][detail::bytes_hash(t)];
      const auto equal = std::find_if(same_hash.begin(), same_hash.end(), [&](ValueId other) {
        return detail::same_tensor(*g.value(other).initializer, t);
      });
      if (equal != same_hash.end()) {
        g.replace_all_uses(id, *equal);
        g.value(id).alive = false;
        ++merged;
        continue;
      }
      same_hash.push_back(id);
    }
    kept.push_back(id);
  }
  if (merged) g.set_initializer_order(std::move(kept));
  return merged;
}

namespace detail {

// Ops whose two calls on the same inputs may give different values: never merged.
inline bool is_random_op(Symbol op) {
  static const Symbol random[] = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
                                  "Multinomial",  "Bernoulli",        "Dropout"};
  return std::find(std::begin(random), std::end(random), op) != std::end(random);
}

// Nodes that may be merged: ONNX's own deterministic ops (another domain's op may keep state), with
// outputs, without subgraphs.
inline bool mergeable(const Node& n) {
  return n.alive && (n.domain.empty() || n.domain == "ai.onnx") && !n.outputs.empty() && !n.has_subgraphs() &&
         !is_random_op(n.op_type);
}

// Floats compare by their bits: a NaN attribute equals itself, 0.0 and -0.0 differ.
inline bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](float x, float y) { return std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y); });
}

inline bool same_attribute(const Attribute& a, const Attribute& b) {
  return a.name == b.name && a.type == b.type && a.i == b.i &&
         std::bit_cast<uint32_t>(a.f) == std::bit_cast<uint32_t>(b.f) && a.s == b.s && a.ints == b.ints &&
         same_floats(a.floats, b.floats) && a.strings == b.strings && a.graphs.empty() && b.graphs.empty() &&
         std::equal(a.tensors.begin(), a.tensors.end(), b.tensors.begin(), b.tensors.end(), same_tensor) &&
         a.ref_attr_name == b.ref_attr_name && a.raw == b.raw && a.unknown == b.unknown;
}

// Shape's start and end with absent ones at their defaults (0 and "to the end"), so that Shape nodes
// with equal pairs return the same dimensions.
inline std::pair<int64_t, int64_t> shape_bounds(const Node& n) {
  const Attribute* start = n.attribute(Symbol("start"));
  const Attribute* end = n.attribute(Symbol("end"));
  return {start ? start->i : 0, end ? end->i : std::numeric_limits<int64_t>::max()};
}

inline bool same_attributes(const Node& a, const Node& b) {
  if (a.op_type == Symbol("Shape")) return shape_bounds(a) == shape_bounds(b);
  if (a.attributes.size() != b.attributes.size()) return false;
  // Exporters may write the same attributes in another order.
  return std::all_of(a.attributes.begin(), a.attributes.end(), [&](const Attribute& x) {
    const Attribute* y = b.attribute(x.name);
    return y && same_attribute(x, *y);
  });
}

// Whether `b` computes what `a` does: same op, the same inputs in the same slots, the same attributes,
// and the same outputs present.
inline bool same_computation(const Node& a, const Node& b) {
  if (a.op_type != b.op_type || a.domain != b.domain || a.inputs != b.inputs || a.outputs.size() != b.outputs.size())
    return false;
  for (std::size_t k = 0; k < a.outputs.size(); ++k)
    if ((a.outputs[k] == kNone) != (b.outputs[k] == kNone)) return false;
  return same_attributes(a, b);
}

// Equal for nodes same_computation may accept: op, domain and inputs.
inline std::size_t computation_hash(const Node& n) {
  std::size_t h = (std::size_t{n.op_type.id()} << 20) ^ n.domain.id();
  for (ValueId in : n.inputs) h = h * 1000003u ^ (std::size_t{in} + 1);
  return h;
}

// `duplicate`'s consumers read `kept`'s outputs and `duplicate` goes, unless one of its outputs is a
// graph output (merging would need an Identity to keep the name: nothing gained).
inline bool merge_node(Graph& g, NodeId duplicate, NodeId kept, std::vector<ValueId>& touched) {
  const std::vector<ValueId> outputs = g.node(duplicate).outputs;
  if (std::any_of(outputs.begin(), outputs.end(), [&](ValueId v) { return v != kNone && g.value(v).is_graph_output(); }))
    return false;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (outputs[k] == kNone) continue;
    const ValueId into = g.node(kept).outputs[k];
    g.replace_all_uses(outputs[k], into);
    touched.push_back(into);
  }
  g.remove_node(duplicate);
  return true;
}

// The nodes kept so far, visited in execution order, by computation_hash.
class KeptNodes {
 public:
  // Merges `id` into the kept node computing the same thing and returns 1; otherwise keeps it and
  // returns 0 (0 too, keeping nothing, when merge_node refuses: a graph output stays as it is).
  std::size_t merge_or_keep(Graph& g, NodeId id, std::vector<ValueId>& touched) {
    std::vector<NodeId>& bucket = by_hash_[computation_hash(g.node(id))];
    auto same = std::find_if(bucket.begin(), bucket.end(),
                             [&](NodeId k) { return same_computation(g.node(k), g.node(id)); });
    if (same != bucket.end()) return merge_node(g, id, *same, touched);
    bucket.push_back(id);
    return 0;
  }

 private:
  std::unordered_map<std::size_t, std::vector<NodeId>> by_hash_;
};

}  // namespace detail

// The consumers of `input` that compute the same thing: the first in execution order serves the
// consumers of the others, which are removed. The merged nodes' outputs are appended to `touched`
// (their consumers may now be duplicates in turn). Returns how many nodes went.
inline std::size_t remove_duplicated_nodes(Graph& g, ValueId input, std::vector<ValueId>& touched) {
  std::unordered_map<std::size_t, std::vector<NodeId>> by_hash;
  for (const Use& u : g.value(input).uses)
    if (u.slot != kCapturedSlot && detail::mergeable(g.node(u.node))) {
      std::vector<NodeId>& bucket = by_hash[detail::computation_hash(g.node(u.node))];
      if (std::find(bucket.begin(), bucket.end(), u.node) == bucket.end()) bucket.push_back(u.node);
    }
  std::vector<NodeId> candidates;
  for (const auto& [h, bucket] : by_hash)
    if (bucket.size() > 1) candidates.insert(candidates.end(), bucket.begin(), bucket.end());
  if (candidates.empty()) return 0;
  // Uses are not in execution order: walk the nodes after the producer until every candidate is seen.
  std::sort(candidates.begin(), candidates.end());
  std::vector<NodeId> ordered;
  const NodeId producer = g.value(input).producer;
  for (NodeId k = producer == kNone ? g.first_node() : g.node(producer).next;
       k != kNone && ordered.size() < candidates.size(); k = g.node(k).next)
    if (std::binary_search(candidates.begin(), candidates.end(), k)) ordered.push_back(k);
  detail::KeptNodes kept;
  std::size_t removed = 0;
  for (NodeId id : ordered) removed += kept.merge_or_keep(g, id, touched);
  return removed;
}

// The same over the whole graph, in one pass in execution order (a merge makes the next duplicates of a
// chain read the same inputs before they are reached). Returns how many nodes went.
inline std::size_t remove_duplicated_nodes(Graph& g) {
  detail::KeptNodes kept;
  std::vector<ValueId> touched;
  std::size_t removed = 0;
  for (NodeId id : g.nodes())
    if (detail::mergeable(g.node(id))) removed += kept.merge_or_keep(g, id, touched);
  return removed;
}

}  // namespace xexp::ir
