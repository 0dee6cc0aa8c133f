#pragma once
// validate(): the structural rules a model must follow to be saved and run, checked on the IR (a model
// built or rewritten in memory; load_model already refuses files that break them). The first broken
// rule is thrown as xexp::Error naming the node and the value.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "xexp/core/checked_int.hpp"
#include "xexp/ir/model.hpp"

namespace xexp {

// The model's functions by domain and name, for finding which nodes are calls (Model::find_function
// scans the functions: a model of thousands of them would be looked up in quadratic time). A call runs
// the first function of its key, as find_function finds.
class FunctionIndex {
 public:
  explicit FunctionIndex(const ir::Model& model) {
    for (const ir::Function& f : model.functions) by_key_.emplace(op_key(Symbol(f.domain), Symbol(f.name)), &f);
  }
  const ir::Function* called(const ir::Node& n) const {
    auto it = by_key_.find(op_key(n.domain, n.op_type));
    return it == by_key_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<uint64_t, const ir::Function*> by_key_;
};

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

// Calls `visit(node, callee)` for every node of `g` and of its subgraphs (callee: the function it calls,
// or nullptr). Iterative: nesting costs no stack.
template <class Visit>
void for_each_call(const ir::Graph& g, const FunctionIndex& index, Visit&& visit) {
  std::vector<const ir::Graph*> graphs{&g};
  while (!graphs.empty()) {
    const ir::Graph* graph = graphs.back();
    graphs.pop_back();
    for (ir::NodeId id : graph->nodes()) {
      const ir::Node& node = graph->node(id);
      visit(node, index.called(node));
      for (const ir::Attribute& a : node.attributes)
        for (const auto& sub : a.graphs)
          if (sub) graphs.push_back(sub.get());
    }
  }
}

inline int64_t saturating_sum(int64_t a, int64_t b) { return checked_add(a, b).value_or(std::numeric_limits<int64_t>::max()); }

// Local functions never call themselves, directly or through other functions (ONNX forbids it): running,
// typing or inlining such a call would never end. Returns, per function, the nodes its body holds once
// every call in it is replaced by the callee's body, through every level (saturated at int64's maximum:
// a function calling another twice, forty levels deep, is 2^40 nodes). Iterative, so that a long chain
// of functions calling each other does not exhaust the stack.
inline std::vector<int64_t> expanded_function_sizes(const ir::Model& model) {
  const std::size_t n = model.functions.size();
  auto label = [&](std::size_t f) { return model.functions[f].domain + "." + model.functions[f].name; };
  const FunctionIndex index(model);
  std::vector<std::vector<std::size_t>> callees(n);  // one entry per call
  std::vector<int64_t> size(n, 0);                   // nodes calling no function, then the expansion
  for (std::size_t f = 0; f < n; ++f)
    for_each_call(*model.functions[f].body, index, [&](const ir::Node&, const ir::Function* callee) {
      if (callee) callees[f].push_back(static_cast<std::size_t>(callee - model.functions.data()));
      else ++size[f];
    });
  enum : uint8_t { kUnseen, kOnPath, kDone };
  std::vector<uint8_t> state(n, kUnseen);
  for (std::size_t root = 0; root < n; ++root) {
    if (state[root] != kUnseen) continue;
    std::vector<std::pair<std::size_t, std::size_t>> path{{root, 0}};  // function, next callee to visit
    state[root] = kOnPath;
    while (!path.empty()) {
      auto& [f, next] = path.back();
      if (next == callees[f].size()) {  // every callee is done: f's expansion is known
        for (std::size_t callee : callees[f]) size[f] = saturating_sum(size[f], size[callee]);
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
  return size;
}

inline void validate_function_calls(const ir::Model& model) { (void)expanded_function_sizes(model); }

}  // namespace detail

// The default of the options bounding what expanding local functions may produce (InlineOptions,
// RunOptions, xexp --max-nodes): past the largest real models, which hold some 10^5 nodes once inlined.
inline constexpr int64_t kDefaultMaxNodes = 1'000'000;

// Refuses a model whose local functions are recursive, or whose main graph, or one function's body,
// would hold more than `max_nodes` nodes once every call is replaced by the callee's body (what
// inlining produces, and what one run evaluates, Loop iterations aside). The error names the call
// whose expansion is the largest.
inline void check_function_expansion(const ir::Model& model, int64_t max_nodes) {
  const std::vector<int64_t> sizes = detail::expanded_function_sizes(model);
  const FunctionIndex index(model);
  auto check = [&](const ir::Graph& g, const std::string& where) {
    int64_t total = 0, largest = -1;
    std::string largest_call;
    detail::for_each_call(g, index, [&](const ir::Node& node, const ir::Function* callee) {
      const int64_t size = callee ? sizes[static_cast<std::size_t>(callee - model.functions.data())] : 1;
      total = detail::saturating_sum(total, size);
      if (callee && size > largest) {
        largest = size;
        largest_call = node.name.empty() ? node.domain.str() + "." + node.op_type.str() : node.name;
      }
    });
    if (total > max_nodes)
      throw Error(where + " would hold " + (total == std::numeric_limits<int64_t>::max() ? "over 2^63" : std::to_string(total)) +
                      " nodes once its local function calls are expanded, past the limit of " + std::to_string(max_nodes) +
                      " (InlineOptions::max_nodes, RunOptions::max_nodes, xexp --max-nodes)",
                  {.node = largest_call, .value = {}});
  };
  check(*model.graph, "the main graph");
  for (const ir::Function& f : model.functions) check(*f.body, "function " + f.domain + "." + f.name);
}

inline void validate(const ir::Graph& graph) { detail::validate_graph(graph, ""); }

inline void validate(const ir::Model& model) {
  detail::validate_function_calls(model);
  validate(*model.graph);
  for (const ir::Function& f : model.functions) detail::validate_graph(*f.body, "function " + f.domain + "." + f.name);
}

}  // namespace xexp
