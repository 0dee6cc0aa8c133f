#pragma once
// validate(): the structural rules a model must follow to be saved and run, checked on the IR (a model
// built or rewritten in memory; load_model already refuses files that break them). The first broken
// rule is thrown as xexp::Error naming the node and the value.
#include <string>
#include <unordered_map>
#include <vector>

#include "xexp/ir/model.hpp"

namespace xexp {

namespace detail {

inline std::string node_label(const ir::Node& n) { return n.name.empty() ? std::string(n.op_type.view()) : n.name; }

inline bool visible_in_enclosing(const ir::Graph& g, std::string_view name) {
  for (const ir::Graph* outer = g.parent; outer; outer = outer->parent)
    if (outer->has_value(name)) return true;
  return false;
}

inline void validate_graph(const ir::Graph& g, const std::string& where) {
  const std::string in = where.empty() ? "" : " (in " + where + ")";
  std::vector<uint8_t> seen_input(g.value_capacity(), 0);
  for (ir::ValueId id : g.inputs()) {
    if (seen_input[id]) throw Error("duplicate graph input" + in, {.node = {}, .value = g.value(id).name});
    seen_input[id] = 1;
  }
  for (ir::ValueId id : g.captured())
    if (g.parent && !visible_in_enclosing(g, g.value(id).name))
      throw Error("captured value is not defined in an enclosing graph" + in, {.node = {}, .value = g.value(id).name});

  // Position of each live node in execution order: a node may read only values made before it.
  std::vector<uint32_t> position(g.node_capacity(), ir::kNone);
  uint32_t next = 0;
  for (ir::NodeId id : g.nodes()) position[id] = next++;
  auto available_before = [&](ir::ValueId v, uint32_t pos) {
    const ir::Value& value = g.value(v);
    if (value.is_input || value.is_initializer() || value.is_captured) return value.alive;
    return value.alive && value.producer != ir::kNone && position[value.producer] != ir::kNone &&
           position[value.producer] < pos;
  };

  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    for (ir::ValueId v : n.inputs) {
      if (v == ir::kNone || available_before(v, position[id])) continue;
      const ir::Value& value = g.value(v);
      const bool later = value.producer != ir::kNone && position[value.producer] != ir::kNone;
      throw Error(later ? "the node reads a value made by a later node (a cycle, or nodes out of order)" + in
                        : "the node reads an undefined value" + in,
                  {.node = node_label(n), .value = value.name});
    }
    for (ir::ValueId v : n.outputs) {
      if (v == ir::kNone) continue;
      const ir::Value& value = g.value(v);
      if (value.producer != id)
        throw Error("two nodes write the same value" + in, {.node = node_label(n), .value = value.name});
    }
    for (const ir::Attribute& a : n.attributes)
      for (const auto& sub : a.graphs)
        if (sub) validate_graph(*sub, node_label(n) + "." + std::string(a.name.view()));
  }
  for (ir::ValueId v : g.outputs())
    if (!available_before(v, next)) throw Error("graph output is not defined" + in, {.node = {}, .value = g.value(v).name});
}

// Local functions never call themselves, directly or through other functions (ONNX forbids it): running,
// typing or inlining such a call would never end. Iterative, so that a long chain of functions calling
// each other does not exhaust the stack.
inline void validate_function_calls(const ir::Model& model) {
  const std::size_t n = model.functions.size();
  auto key = [](std::string_view domain, std::string_view name) {
    std::string k(domain);
    k += '\0';
    k += name;
    return k;
  };
  auto label = [&](std::size_t f) { return model.functions[f].domain + "." + model.functions[f].name; };
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t f = 0; f < n; ++f)  // a call runs the first function of its key, as find_function finds
    index.emplace(key(model.functions[f].domain, model.functions[f].name), f);

  std::vector<std::vector<std::size_t>> callees(n);
  for (std::size_t f = 0; f < n; ++f) {
    std::vector<const ir::Graph*> graphs{model.functions[f].body.get()};
    while (!graphs.empty()) {
      const ir::Graph* g = graphs.back();
      graphs.pop_back();
      for (ir::NodeId id : g->nodes()) {
        const ir::Node& node = g->node(id);
        if (auto it = index.find(key(node.domain.view(), node.op_type.view())); it != index.end())
          callees[f].push_back(it->second);
        for (const ir::Attribute& a : node.attributes)
          for (const auto& sub : a.graphs)
            if (sub) graphs.push_back(sub.get());
      }
    }
  }
  enum : uint8_t { kUnseen, kOnPath, kDone };
  std::vector<uint8_t> state(n, kUnseen);
  for (std::size_t root = 0; root < n; ++root) {
    if (state[root] != kUnseen) continue;
    std::vector<std::pair<std::size_t, std::size_t>> path{{root, 0}};  // function, next callee to visit
    state[root] = kOnPath;
    while (!path.empty()) {
      auto& [f, next] = path.back();
      if (next == callees[f].size()) {
        state[f] = kDone;
        path.pop_back();
        continue;
      }
      const std::size_t callee = callees[f][next++];
      if (state[callee] == kOnPath)
        throw Error(callee == f ? "the local function calls itself"
                                : "the local function calls itself through '" + label(f) + "'",
                    {.node = label(callee), .value = {}});
      if (state[callee] == kUnseen) {
        state[callee] = kOnPath;
        path.emplace_back(callee, 0);
      }
    }
  }
}

}  // namespace detail

inline void validate(const ir::Graph& graph) { detail::validate_graph(graph, ""); }

inline void validate(const ir::Model& model) {
  detail::validate_function_calls(model);
  validate(*model.graph);
  for (const ir::Function& f : model.functions) detail::validate_graph(*f.body, "function " + f.domain + "." + f.name);
}

}  // namespace xexp
