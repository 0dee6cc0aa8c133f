#pragma once
// The inliner: every call of a local function (a node whose domain and op type name a function of the
// model) is replaced by the function body, recursively, in the main graph, its subgraphs and the bodies
// of the functions that are kept. Names follow onnx.inliner.inline_local_functions so that dumps can be
// compared with onnx's: the k-th call site inlined while a graph is processed suffixes the
// body's value and node names with "__k" (`tmp` -> `tmp__1`), then "_<i>" if that name is taken; the
// call's output names are kept.
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "xexp/core/error.hpp"
#include "xexp/ir/copy.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/onnx/validate.hpp"

namespace xexp::functions {

struct InlineOptions {
  // Calls of the functions this rejects stay calls, and those functions stay in the model. Empty:
  // inline everything.
  std::function<bool(const ir::Function&)> inline_function;
  // Nodes a graph may hold once its calls are expanded (a function calling another twice, forty levels
  // deep, is 2^40 nodes): past it, nothing is inlined and the error names the call (xexp inline --max-nodes).
  int64_t max_nodes = kDefaultMaxNodes;
};

// Calls `visit(node)` for every node of `g` and of its subgraphs, depth first.
template <class Visit>
void for_each_node_deep(const ir::Graph& g, Visit&& visit) {
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    visit(n);
    for (const ir::Attribute& a : n.attributes)
      for (const auto& sub : a.graphs) for_each_node_deep(*sub, visit);
  }
}

namespace detail {

class Inliner {
 public:
  Inliner(ir::Model& model, const InlineOptions& options) : model_(model), index_(model) {
    for (const ir::Function& f : model.functions)
      if (!options.inline_function || options.inline_function(f)) inlined_.insert(&f);
    check_function_expansion(model, options.max_nodes);  // nor can a function calling itself
    collect_used();
    for (const ir::Function& f : model_.functions)  // file order, not the set's: the same error every run
      if (used_.count(&f)) check_opsets(f);
  }

  void run() {
    int counter = 0;
    inline_graph(*model_.graph, counter);
    for (ir::Function& f : model_.functions)
      if (!inlined_.count(&f)) {
        int body_counter = 0;
        inline_graph(*f.body, body_counter);
      }
    for (const ir::Function& f : model_.functions)  // file order: the same bytes every run
      if (used_.count(&f))
        for (const ir::OpsetImport& o : f.opsets)
          if (!model_.opset(o.domain)) model_.opsets.push_back(o);
    std::erase_if(model_.functions, [&](const ir::Function& f) { return inlined_.count(&f) > 0; });
  }

 private:
  const ir::Function* inlinable(const ir::Node& n) const {
    const ir::Function* f = index_.called(n);
    return f && inlined_.count(f) ? f : nullptr;
  }

  // Inlines the calls of `g` and of its subgraphs. Nodes copied from a body are visited next, so
  // nested calls are numbered in depth-first order, as onnx does.
  void inline_graph(ir::Graph& g, int& counter) {
    bool changed = false;
    for (ir::NodeId id = g.first_node(); id != ir::kNone;) {
      if (const ir::Function* f = inlinable(g.node(id))) {
        id = expand(g, id, *f, ++counter);
        changed = true;
        continue;
      }
      for (ir::Attribute& a : g.node(id).attributes)
        for (auto& sub : a.graphs) inline_graph(*sub, counter);
      id = g.node(id).next;
    }
    if (changed) g.compact();
  }

  // Replaces call `call_id` by a copy of the body of `f`; returns the first node that replaced it.
  ir::NodeId expand(ir::Graph& g, ir::NodeId call_id, const ir::Function& f, int k) {
    const ir::Graph& body = *f.body;
    const ir::Node call = copy_call(g.node(call_id));
    const std::string call_name = call.name.empty() ? call.op_type.str() : call.name;
    if (call.inputs.size() > body.inputs().size() || call.outputs.size() > body.outputs().size())
      throw Error("the call has " + std::to_string(call.inputs.size()) + " inputs and " +
                      std::to_string(call.outputs.size()) + " outputs, the function " +
                      std::to_string(body.inputs().size()) + " and " + std::to_string(body.outputs().size()),
                  {.node = call_name, .value = {}});
    const ir::NodeId next = call.next;
    g.remove_node(call_id);

    ir::ValueMap map(body.value_capacity());
    for (std::size_t i = 0; i < body.inputs().size(); ++i)
      map[body.inputs()[i]] = i < call.inputs.size() ? call.inputs[i] : ir::kNone;
    // A formal output the body does not compute itself (an input passed through, an output listed
    // twice) is bound by an Identity after the copy.
    std::vector<std::size_t> pass_through;
    for (std::size_t j = 0; j < call.outputs.size(); ++j) {
      if (call.outputs[j] == ir::kNone) continue;
      g.value(call.outputs[j]).alive = true;  // remove_node dropped it if nothing read it
      ir::ValueId formal = body.outputs()[j];
      if (!map[formal] && body.value(formal).producer != ir::kNone) map[formal] = call.outputs[j];
      else pass_through.push_back(j);
    }

    const std::string suffix = "__" + std::to_string(k);
    ir::CopyPolicy policy;
    policy.value_name = [&](ir::Graph& dst, const std::string& name) { return dst.unique_value_name(name + suffix); };
    policy.node_name = [&](ir::Graph& dst, const std::string& name) {
      return name.empty() ? name : dst.unique_node_name(name + suffix);
    };
    policy.resolve_ref = [&](const ir::Attribute& a) -> std::optional<ir::Attribute> {
      const ir::Attribute* value = call.attribute(Symbol(a.ref_attr_name));
      if (!value) value = find_default(f, a.ref_attr_name);
      if (!value) return std::nullopt;  // neither set nor defaulted: the attribute is omitted
      ir::Attribute bound = *value;
      bound.name = a.name;
      return bound;
    };
    ir::NodeId first = ir::copy_nodes(body, g, map, next, policy);

    for (std::size_t j : pass_through) {
      const std::optional<ir::ValueId>& source = map[body.outputs()[j]];
      if (!source || *source == ir::kNone)
        throw Error("the function output is not computed",
                    {.node = call_name, .value = body.value(body.outputs()[j]).name});
      ir::NodeId identity = g.add_node(Symbol("Identity"), {*source}, {call.outputs[j]}, {},
                                       g.unique_node_name(call_name + suffix), {}, next);
      if (first == ir::kNone) first = identity;
    }
    return first == ir::kNone ? next : first;
  }

  static ir::Node copy_call(const ir::Node& n) {
    ir::Node c;
    c.op_type = n.op_type;
    c.name = n.name;
    c.inputs = n.inputs;
    c.outputs = n.outputs;
    c.attributes = n.attributes;
    c.next = n.next;
    return c;
  }

  static const ir::Attribute* find_default(const ir::Function& f, const std::string& name) {
    for (const ir::Attribute& a : f.attribute_defaults)
      if (a.name == Symbol(name)) return &a;
    return nullptr;
  }

  // The functions whose calls will be inlined: called from the main graph or a kept body, directly
  // or through other inlined bodies (a worklist: call chains can be long).
  void collect_used() {
    std::vector<const ir::Graph*> pending{model_.graph.get()};
    for (const ir::Function& f : model_.functions)
      if (!inlined_.count(&f)) pending.push_back(f.body.get());
    while (!pending.empty()) {
      const ir::Graph* g = pending.back();
      pending.pop_back();
      for_each_node_deep(*g, [&](const ir::Node& n) {
        const ir::Function* f = inlinable(n);
        if (f && used_.insert(f).second) pending.push_back(f->body.get());
      });
    }
  }

  // The inlined nodes need the function's opsets in the model; a version conflict is refused (before
  // anything changes) rather than silently running an op under another version's semantics.
  void check_opsets(const ir::Function& f) const {
    for (const ir::OpsetImport& o : f.opsets) {
      std::optional<int64_t> have = model_.opset(o.domain);
      if (have && *have != o.version)
        throw Error("the function imports opset " + (o.domain.empty() ? std::string("ai.onnx") : o.domain) +
                        " version " + std::to_string(o.version) + ", the model version " + std::to_string(*have),
                    {.node = f.domain + "." + f.name, .value = {}});
    }
  }

  ir::Model& model_;
  FunctionIndex index_;
  std::unordered_set<const ir::Function*> inlined_;
  std::unordered_set<const ir::Function*> used_;
};

}  // namespace detail

// Inlines every call of the model's local functions (see the file comment for the naming) and removes
// the inlined functions. Graphs that changed are compacted: node and value ids taken before are invalid.
inline void inline_functions(ir::Model& model, const InlineOptions& options = {}) {
  detail::Inliner(model, options).run();
}

}  // namespace xexp::functions
