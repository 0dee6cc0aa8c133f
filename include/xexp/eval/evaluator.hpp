#pragma once
// Evaluator: runs a model on the reference kernels, node after node in graph order. It runs local
// functions (inputs, outputs and ref_attr_name attributes bound from the call), If and Loop, and can hand
// back every intermediate result in execution order (the comparison and dump tools are built on it).
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "xexp/eval/evaluate_op.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/onnx/validate.hpp"

namespace xexp::eval {

enum class ResultKind { Initializer, Input, Result, Output };

inline std::string_view result_kind_name(ResultKind k) {
  switch (k) {
    case ResultKind::Initializer: return "INITIA";
    case ResultKind::Input: return "INPUT";
    case ResultKind::Result: return "RESULT";
    case ResultKind::Output: return "OUTPUT";
  }
  return "?";
}

// One result seen during a run: an initializer, a fed input, a node output or a graph output.
struct ResultInfo {
  ResultKind kind;
  std::string_view name;
  const Tensor& value;
  Symbol op_type;              // of the producing node (Result only)
  std::string_view node_name;  // of the producing node (Result only)
};

struct RunOptions {
  // Called for every initializer, input, node output (of the main graph) and graph output, in execution order.
  std::function<void(const ResultInfo&)> on_result;
  // Called after each node of the main graph with the count evaluated so far and the graph's node
  // count: progress for a caller that shows it on a long run.
  std::function<void(std::size_t evaluated, std::size_t total)> on_node;
  // Checks each feed against the declared element type and static dimensions of its input.
  bool check_inputs = true;
  // Iterations one Loop node may run (each run of a nested Loop counts on its own): a Loop whose
  // condition never turns false, or whose trip count is huge, is an error naming it rather than a hang.
  int64_t max_loop_iterations = 1'000'000;
  // Nodes the main graph may hold once every call of a local function is replaced by its body (a
  // function calling another twice, forty levels deep, is 2^40 nodes): past it, the run is refused
  // before it starts, naming the call (xexp run --max-nodes; InlineOptions::max_nodes is the same bound).
  int64_t max_nodes = kDefaultMaxNodes;
};

class Evaluator {
 public:
  // Refuses a model whose local functions call themselves (a run would never end).
  explicit Evaluator(const ir::Model& model, const KernelRegistry& registry = default_registry())
      : model_(model), registry_(registry), functions_(model) {
    xexp::detail::validate_function_calls(model);
  }

  std::vector<std::string> input_names() const {
    std::vector<std::string> out;
    for (ir::ValueId id : model_.graph->inputs())
      if (!model_.graph->value(id).is_initializer()) out.push_back(model_.graph->value(id).name);
    return out;
  }
  std::vector<std::string> output_names() const {
    std::vector<std::string> out;
    for (ir::ValueId id : model_.graph->outputs()) out.push_back(model_.graph->value(id).name);
    return out;
  }

  // Runs the main graph; returns its outputs in declaration order.
  std::vector<Tensor> run(const std::vector<std::pair<std::string, Tensor>>& feeds, const RunOptions& options = {}) const {
    check_function_expansion(model_, options.max_nodes);
    const ir::Graph& g = *model_.graph;
    Frame frame{g, nullptr, {}, model_.opsets, nullptr, &options, options.max_loop_iterations};
    frame.values.resize(g.value_capacity());
    for (ir::ValueId id : g.initializers()) {
      const ir::Value& v = g.value(id);
      if (!v.initializer) throw Error("sparse initializers are not supported", {.node = {}, .value = v.name});
      frame.values[id] = *v.initializer;
      if (options.on_result) options.on_result({ResultKind::Initializer, v.name, *v.initializer, {}, {}});
    }
    for (const auto& [name, tensor] : feeds) {
      auto id = g.find(name);
      if (!id || !g.value(*id).is_input) throw Error("the model has no input with this name", {.node = {}, .value = name});
      if (options.check_inputs) check_feed(g.value(*id), tensor);
      frame.values[*id] = tensor;
    }
    for (ir::ValueId id : g.inputs()) {
      const ir::Value& v = g.value(id);
      if (!frame.values[id]) throw Error("no value was given for this input", {.node = {}, .value = v.name});
      if (options.on_result && !v.is_initializer()) options.on_result({ResultKind::Input, v.name, *frame.values[id], {}, {}});
    }
    execute(frame);
    std::vector<Tensor> out;
    for (ir::ValueId id : g.outputs()) {
      const ir::Value& v = g.value(id);
      if (!frame.values[id]) throw Error("the graph output was not computed", {.node = {}, .value = v.name});
      out.push_back(*frame.values[id]);
      if (options.on_result) options.on_result({ResultKind::Output, v.name, out.back(), {}, {}});
    }
    return out;
  }

 private:
  // The values of one graph being run, and where to look up names it reads from enclosing graphs.
  struct Frame {
    const ir::Graph& graph;
    const Frame* parent;
    std::vector<std::optional<Tensor>> values;
    const std::vector<ir::OpsetImport>& opsets;
    // Set when this frame runs a local function: the call's attributes, already resolved against the
    // caller (a call inside a function body may itself pass a ref_attr_name on) and completed with the
    // function's defaults.
    const std::vector<ir::Attribute>* call_attributes = nullptr;
    const RunOptions* options = nullptr;  // set for the main graph only
    int64_t max_loop_iterations;          // RunOptions', handed down to every subgraph and function body

    const Tensor* lookup(std::string_view name) const {
      for (const Frame* f = this; f; f = f->parent)
        if (auto id = f->graph.find(name); id && f->values[*id]) return &*f->values[*id];
      return nullptr;
    }
  };

  static void check_feed(const ir::Value& v, const Tensor& t) {
    if (v.elem != ElemType::Undefined && v.elem != t.type())
      throw Error("expected " + std::string(elem_type_name(v.elem)) + ", got " + std::string(elem_type_name(t.type())), {.node = {}, .value = v.name});
    if (!v.shape) return;
    bool ok = v.shape->size() == t.rank();
    for (std::size_t d = 0; ok && d < t.rank(); ++d) ok = !(*v.shape)[d].is_static() || (*v.shape)[d].value() == t.dims()[d];
    if (!ok) throw Error("expected shape " + shape_str(*v.shape) + ", got " + shape_str(t.shape()), {.node = {}, .value = v.name});
  }

  static std::string node_label(const ir::Node& n) { return n.name.empty() ? n.op_type.str() : n.name; }

  const Tensor* input_value(const Frame& frame, ir::ValueId id) const {
    if (frame.values[id]) return &*frame.values[id];
    const ir::Value& v = frame.graph.value(id);
    if (v.producer == ir::kNone && frame.parent) return frame.parent->lookup(v.name);  // captured
    return nullptr;
  }

  // One graph being run: its frame, the next node, and the reads left of each value, so that
  // intermediate tensors are released after their last use (not when subgraphs may read values by name
  // from this frame).
  struct Activation {
    std::unique_ptr<Frame> owned;  // a function body's frame (the root's belongs to the caller of execute)
    Frame* frame;
    std::vector<ir::Attribute> call_attributes;  // a function body's, which owned->call_attributes points to
    ir::NodeId next;
    std::vector<uint32_t> reads;
    bool release = true;
    std::size_t evaluated = 0;
  };

  static std::unique_ptr<Activation> start(Frame& frame, std::unique_ptr<Frame> owned = nullptr) {
    auto a = std::make_unique<Activation>();
    a->owned = std::move(owned);
    a->frame = &frame;
    const ir::Graph& g = frame.graph;
    a->next = g.first_node();
    a->reads.assign(g.value_capacity(), 0);
    for (ir::NodeId nid : g.nodes()) {
      a->release = a->release && !g.node(nid).has_subgraphs();
      for (ir::ValueId in : g.node(nid).inputs)
        if (in != ir::kNone) ++a->reads[in];
    }
    return a;
  }

  // Runs the nodes of `root` in order. A call of a local function pushes its body's activation and
  // resumes the caller when the body ends, instead of recursing: a chain of calls thousands deep costs
  // heap, not stack. If and Loop bodies recurse, as deep as the model nests its subgraphs.
  void execute(Frame& root) const {
    std::vector<std::unique_ptr<Activation>> stack;
    stack.push_back(start(root));
    while (true) {
      try {
        Activation& a = *stack.back();
        if (a.next == ir::kNone) {
          if (stack.size() == 1) return;
          const std::unique_ptr<Activation> done = std::move(stack.back());
          stack.pop_back();  // errors below name the call node
          finish_node(*stack.back(), graph_outputs(*done->frame));
          continue;
        }
        const ir::Node& node = a.frame->graph.node(a.next);
        std::vector<std::optional<Tensor>> inputs = node_inputs(*a.frame, node);
        std::vector<ir::Attribute> bound;
        const std::vector<ir::Attribute>& attributes = in_function(*a.frame) ? (bound = bind_attributes(*a.frame, node)) : node.attributes;
        if (const ir::Function* f = functions_.called(node)) {
          stack.push_back(call(*a.frame, *f, attributes, inputs));
          continue;
        }
        finish_node(a, run_node(*a.frame, node, inputs, attributes));
      } catch (const Error& e) {
        if (!e.node().empty()) throw;
        const Activation& a = *stack.back();
        throw Error(e.cause(), {.node = node_label(a.frame->graph.node(a.next)), .value = e.value()});
      }
    }
  }

  std::vector<std::optional<Tensor>> node_inputs(const Frame& frame, const ir::Node& node) const {
    std::vector<std::optional<Tensor>> inputs;
    inputs.reserve(node.inputs.size());
    for (ir::ValueId in : node.inputs) {
      if (in == ir::kNone) {
        inputs.emplace_back();
        continue;
      }
      const Tensor* t = input_value(frame, in);
      if (!t) throw Error("input '" + frame.graph.value(in).name + "' has no value (missing input)", {.node = {}, .value = frame.graph.value(in).name});
      inputs.emplace_back(*t);
    }
    return inputs;
  }

  // Stores the outputs of the node `a` is at, releases what it read last, and moves on.
  void finish_node(Activation& a, std::vector<Tensor> outputs) const {
    Frame& frame = *a.frame;
    const ir::Graph& g = frame.graph;
    const ir::Node& node = g.node(a.next);
    for (std::size_t k = 0; k < node.outputs.size() && k < outputs.size(); ++k) {
      const ir::ValueId out = node.outputs[k];
      if (out == ir::kNone) continue;
      frame.values[out] = std::move(outputs[k]);
      if (frame.options && frame.options->on_result)
        frame.options->on_result({ResultKind::Result, g.value(out).name, *frame.values[out], node.op_type, node.name});
    }
    if (frame.options && frame.options->on_node) frame.options->on_node(++a.evaluated, g.node_count());
    if (a.release)
      for (ir::ValueId in : node.inputs)
        if (in != ir::kNone && --a.reads[in] == 0 && g.value(in).producer != ir::kNone && !g.value(in).is_graph_output())
          frame.values[in].reset();
    a.next = node.next;
  }

  static bool in_function(const Frame& frame) {
    for (const Frame* f = &frame; f; f = f->parent)
      if (f->call_attributes) return true;
    return false;
  }

  int64_t opset_of(const Frame& frame, Symbol domain) const {
    if (auto v = ir::find_opset(frame.opsets, domain.view())) return *v;
    if (auto v = model_.opset(domain.view())) return *v;
    return domain.empty() ? 18 : 1;
  }

  // Attributes of a node inside a function body, with ref_attr_name resolved against the call node.
  static std::vector<ir::Attribute> bind_attributes(const Frame& frame, const ir::Node& node) {
    std::vector<ir::Attribute> out;
    for (const ir::Attribute& a : node.attributes) {
      if (a.ref_attr_name.empty()) {
        out.push_back(a);
        continue;
      }
      for (const Frame* f = &frame; f; f = f->parent)
        if (f->call_attributes) {
          for (const ir::Attribute& given : *f->call_attributes)
            if (given.name.view() == a.ref_attr_name) {
              ir::Attribute bound = given;
              bound.name = a.name;
              out.push_back(std::move(bound));
            }
          break;
        }
    }
    return out;
  }

  // `attributes`: the node's, bound when it sits in a function body.
  std::vector<Tensor> run_node(const Frame& frame, const ir::Node& node, const std::vector<std::optional<Tensor>>& inputs,
                               const std::vector<ir::Attribute>& attributes) const {
    if (node.domain.empty() && node.op_type.view() == "If") return run_if(frame, node, inputs, attributes);
    if (node.domain.empty() && node.op_type.view() == "Loop") return run_loop(frame, node, inputs, attributes);
    return evaluate_op(node.op_type, node.domain, inputs, attributes, opset_of(frame, node.domain), node.outputs.size(), registry_);
  }

  // A frame for `body` with its inputs bound to `inputs` (by position).
  static void bind_inputs(Frame& frame, const ir::Graph& body, const std::vector<std::optional<Tensor>>& inputs) {
    frame.values.resize(body.value_capacity());
    for (ir::ValueId id : body.initializers())
      if (body.value(id).initializer) frame.values[id] = *body.value(id).initializer;
    for (std::size_t k = 0; k < body.inputs().size() && k < inputs.size(); ++k)
      if (inputs[k]) frame.values[body.inputs()[k]] = *inputs[k];
  }

  std::vector<Tensor> graph_outputs(const Frame& frame) const {
    std::vector<Tensor> out;
    for (ir::ValueId id : frame.graph.outputs()) {
      const Tensor* t = frame.values[id] ? &*frame.values[id] : input_value(frame, id);
      if (!t) throw Error("the subgraph output was not computed", {.node = {}, .value = frame.graph.value(id).name});
      out.push_back(*t);
    }
    return out;
  }

  // Runs subgraph `body` (an If branch, a Loop body) and returns its outputs.
  std::vector<Tensor> run_body(const Frame& parent, const ir::Graph& body, const std::vector<std::optional<Tensor>>& inputs) const {
    Frame frame{body, &parent, {}, parent.opsets, nullptr, nullptr, parent.max_loop_iterations};
    bind_inputs(frame, body, inputs);
    execute(frame);
    return graph_outputs(frame);
  }

  // The activation running a call of `f`. `attributes`: the call's, already bound when the call itself
  // sits in a function body.
  std::unique_ptr<Activation> call(const Frame& caller, const ir::Function& f, const std::vector<ir::Attribute>& attributes,
                                   const std::vector<std::optional<Tensor>>& inputs) const {
    auto frame = std::make_unique<Frame>(Frame{*f.body, nullptr, {}, f.opsets.empty() ? caller.opsets : f.opsets, nullptr,
                                               nullptr, caller.max_loop_iterations});
    bind_inputs(*frame, *f.body, inputs);
    Frame& body = *frame;
    std::unique_ptr<Activation> a = start(body, std::move(frame));
    a->call_attributes = attributes;
    for (const ir::Attribute& d : f.attribute_defaults)
      if (std::none_of(a->call_attributes.begin(), a->call_attributes.end(), [&](const ir::Attribute& x) { return x.name == d.name; }))
        a->call_attributes.push_back(d);
    body.call_attributes = &a->call_attributes;
    return a;
  }

  static const ir::Graph& subgraph(const ir::Node& node, const std::vector<ir::Attribute>& attributes, std::string_view name) {
    for (const ir::Attribute& a : attributes)
      if (a.name == name && !a.graphs.empty()) return *a.graphs[0];
    throw Error("attribute '" + std::string(name) + "' (a graph) is missing", {.node = node_label(node), .value = {}});
  }

  std::vector<Tensor> run_if(const Frame& frame, const ir::Node& node, const std::vector<std::optional<Tensor>>& inputs,
                             const std::vector<ir::Attribute>& attributes) const {
    if (inputs.empty() || !inputs[0]) throw Error("If: missing condition");
    const bool cond = scalar_double(*inputs[0]) != 0;
    return run_body(frame, subgraph(node, attributes, cond ? "then_branch" : "else_branch"), {});
  }

  // Loop(M?, cond?, carried...) -> (carried..., scan outputs...); body(iter, cond, carried...) -> (cond, carried..., scans...).
  std::vector<Tensor> run_loop(const Frame& frame, const ir::Node& node, const std::vector<std::optional<Tensor>>& inputs,
                               const std::vector<ir::Attribute>& attributes) const {
    const ir::Graph& body = subgraph(node, attributes, "body");
    const int64_t max_trips = inputs.size() > 0 && inputs[0] ? scalar_int(*inputs[0]) : std::numeric_limits<int64_t>::max();
    bool cond = inputs.size() > 1 && inputs[1] ? scalar_double(*inputs[1]) != 0 : true;
    std::vector<std::optional<Tensor>> carried(inputs.begin() + std::min<std::size_t>(2, inputs.size()), inputs.end());
    if (body.outputs().size() < 1 + carried.size())
      throw Error("Loop: the body has " + std::to_string(body.outputs().size()) +
                      " outputs, fewer than the condition and " + std::to_string(carried.size()) +
                      " loop-carried values",
                  {.node = node_label(node), .value = {}});
    if (std::any_of(carried.begin(), carried.end(), [](const auto& t) { return !t; }))
      throw Error("Loop: a loop-carried input is missing", {.node = node_label(node), .value = {}});
    const std::size_t n_scan = body.outputs().size() - 1 - carried.size();
    std::vector<std::vector<Tensor>> scans(n_scan);
    for (int64_t it = 0; it < max_trips && cond; ++it) {
      if (it == frame.max_loop_iterations)
        throw Error("Loop: stopped at the limit of " + std::to_string(it) +
                        " iterations (RunOptions::max_loop_iterations, xexp run --max-loop-iterations): neither "
                        "its trip count nor its condition ended it",
                    {.node = node_label(node), .value = {}});
      std::vector<std::optional<Tensor>> args{Tensor::scalar<int64_t>(it), Tensor::scalar<bool>(cond)};
      args.insert(args.end(), carried.begin(), carried.end());
      std::vector<Tensor> out = run_body(frame, body, args);
      cond = scalar_double(out[0]) != 0;
      for (std::size_t k = 0; k < carried.size(); ++k) carried[k] = out[1 + k];
      for (std::size_t k = 0; k < n_scan; ++k) scans[k].push_back(out[1 + carried.size() + k]);
    }
    std::vector<Tensor> result;
    for (auto& t : carried) result.push_back(*t);
    for (auto& parts : scans) {
      if (parts.empty()) {
        result.emplace_back(ElemType::Float, std::vector<int64_t>{0});
        continue;
      }
      // Stacked along a new first axis: each part gains a leading 1, then Concat on axis 0.
      std::vector<std::optional<Tensor>> stacked;
      stacked.reserve(parts.size());
      for (const Tensor& p : parts) {
        std::vector<int64_t> dims{1};
        dims.insert(dims.end(), p.dims().begin(), p.dims().end());
        stacked.emplace_back(p.reshaped(dims));
      }
      result.push_back(evaluate_op(Symbol("Concat"), {}, stacked, {ir::Attribute::make_int("axis", 0)}, 13, 1,
                                   registry_)[0]);
    }
    return result;
  }

  const ir::Model& model_;
  const KernelRegistry& registry_;
  FunctionIndex functions_;
};

}  // namespace xexp::eval
