#pragma once
// Clean-ups on the IR that the builder and the optimizer share: removal of Identity nodes, of nodes
// nobody reads and of unused initializers (merging duplicated nodes is ir/duplicates.hpp). Each
// step exists around given values (the optimizer's driver cleans only what an iteration touched and
// collects in `touched` the values whose producer or consumers changed, to match them again) and over
// the whole graph (the builder). Last, the release of the enclosing values If, Loop and Scan bodies no
// longer read.
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "xexp/ir/graph.hpp"

namespace xexp::ir {

// Drops the initializers nothing reads (and that are not graph outputs); returns how many.
inline std::size_t remove_unused_initializers(Graph& g) {
  std::vector<ValueId> kept;
  std::size_t removed = 0;
  for (ValueId id : g.initializers()) {
    Value& v = g.value(id);
    if (!v.is_read()) {
      v.alive = false;
      ++removed;
    } else {
      kept.push_back(id);
    }
  }
  g.set_initializer_order(std::move(kept));
  return removed;
}

// Removes Identity `id`, its consumers reading its input instead, unless its output is a graph output
// whose name the input cannot take (Graph::can_take_output_name): that Identity is what keeps the
// graph's interface.
inline bool remove_identity(Graph& g, NodeId id, std::vector<ValueId>& touched) {
  const Node& n = g.node(id);
  if (!n.alive || n.op_type != Symbol("Identity") || !n.domain.empty() || n.inputs.size() != 1 ||
      n.outputs.size() != 1 || n.inputs[0] == kNone || n.outputs[0] == kNone)
    return false;
  const ValueId in = n.inputs[0], out = n.outputs[0];
  if (g.value(out).is_graph_output() && !g.can_take_output_name(in)) return false;
  g.replace_all_uses(out, in);
  g.remove_node(id);
  touched.push_back(in);
  return true;
}
inline std::size_t remove_identity_nodes(Graph& g) {
  std::vector<ValueId> touched;
  std::size_t removed = 0;
  for (NodeId id : g.nodes()) removed += remove_identity(g, id, touched);
  return removed;
}

// Removes the nodes none of whose outputs is read, starting from the producers of `values`, then
// their producers in turn. Nodes without outputs are kept.
inline std::size_t remove_unused(Graph& g, const std::vector<ValueId>& values, std::vector<ValueId>& touched) {
  std::vector<NodeId> work;
  for (ValueId v : values)
    if (g.value(v).producer != kNone) work.push_back(g.value(v).producer);
  std::size_t removed = 0;
  while (!work.empty()) {
    NodeId id = work.back();
    work.pop_back();
    const Node& n = g.node(id);
    if (!n.alive || n.outputs.empty() || g.any_output_read(id)) continue;
    std::vector<ValueId> inputs = n.inputs;
    g.remove_node(id);
    ++removed;
    for (ValueId in : inputs)
      if (in != kNone) {
        touched.push_back(in);
        if (g.value(in).producer != kNone) work.push_back(g.value(in).producer);
      }
  }
  return removed;
}
inline std::size_t remove_unused(Graph& g) {
  std::vector<ValueId> outputs, touched;
  for (NodeId id : g.nodes())
    for (ValueId out : g.node(id).outputs)
      if (out != kNone) outputs.push_back(out);
  return remove_unused(g, outputs, touched);
}

// The ops whose outputs after the first are computed only when declared: the statistics and the sum
// that normalizations return besides their result. Unread, they cost the kernel time and memory for
// nothing (ONNX Runtime's SkipLayerNormalization writes its sum when the output is declared). Not
// BatchNormalization, whose output count chose the training mode before opset 14.
inline bool has_optional_statistics_outputs(const Node& n) {
  static const Symbol ms("com.microsoft"), layer_norm("LayerNormalization"),
      skip_layer_norm("SkipLayerNormalization"), skip_simplified("SkipSimplifiedLayerNormalization"),
      simplified("SimplifiedLayerNormalization");
  if (n.domain.empty()) return n.op_type == layer_norm;
  return n.domain == ms && (n.op_type == skip_layer_norm || n.op_type == skip_simplified ||
                            n.op_type == simplified || n.op_type == layer_norm);
}

// Omits the outputs nothing reads of the ops above (kNone, trailing ones dropped); returns how many.
inline std::size_t omit_unread_optional_outputs(Graph& g) {
  std::size_t omitted = 0;
  for (NodeId id : g.nodes()) {
    Node& n = g.node(id);
    if (n.outputs.size() < 2 || !has_optional_statistics_outputs(n)) continue;
    for (std::size_t k = 1; k < n.outputs.size(); ++k) {
      const ValueId out = n.outputs[k];
      if (out == kNone || g.value(out).is_read()) continue;
      g.value(out).producer = kNone;
      g.value(out).alive = false;
      n.outputs[k] = kNone;
      ++omitted;
    }
    while (n.outputs.back() == kNone) n.outputs.pop_back();
  }
  return omitted;
}

// Calls f(subgraph) for every If, Loop and Scan body under `g` (a Graph, const or not), nested ones
// included, each before the subgraphs it holds.
template <class G, class F>
  requires std::same_as<std::remove_const_t<G>, Graph>
void for_each_subgraph(G& g, F&& f) {
  for (NodeId id : g.nodes())
    for (const Attribute& a : g.node(id).attributes)
      for (const std::shared_ptr<Graph>& sub : a.graphs) {
        f(*sub);
        for_each_subgraph(*sub, f);
      }
}

// What the subgraphs of `g`'s nodes no longer read from their enclosing graphs (a rewrite or folding
// inside a body dropped the last reader) stops being captured, innermost first, and the nodes of `g`
// only those reads kept alive are removed. Returns how many captured values went.
inline std::size_t release_unread_captured(Graph& g) {
  std::size_t released = 0, released_here = 0;
  for (NodeId id : g.nodes()) {
    if (!g.node(id).has_subgraphs()) continue;
    std::vector<std::string> dropped;
    for (const Attribute& a : g.node(id).attributes)
      for (const std::shared_ptr<Graph>& sub : a.graphs) {
        released += release_unread_captured(*sub);
        std::vector<std::string> names = sub->drop_unread_captured();
        dropped.insert(dropped.end(), names.begin(), names.end());
      }
    for (const std::string& name : dropped) {
      const std::optional<ValueId> outer = g.find(name);
      const Node& n = g.node(id);
      if (!outer || std::find(n.captured.begin(), n.captured.end(), *outer) == n.captured.end()) continue;
      // An If reads a value in both branches: it stays while either still does.
      const bool still_read = std::any_of(n.attributes.begin(), n.attributes.end(), [&](const Attribute& a) {
        return std::any_of(a.graphs.begin(), a.graphs.end(), [&](const std::shared_ptr<Graph>& sub) {
          const std::optional<ValueId> c = sub->find(name);
          return c && sub->value(*c).is_captured;
        });
      });
      if (still_read) continue;
      g.remove_captured_use(id, *outer);
      ++released_here;
    }
  }
  if (released_here) {
    remove_unused(g);
    remove_unused_initializers(g);
  }
  return released + released_here;
}

}  // namespace xexp::ir
