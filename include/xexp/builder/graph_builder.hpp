#pragma once
// GraphBuilder: experimental-experiment's GraphBuilder API in C++. It owns an ir::Model, gives unique
// names (builder_names.hpp), creates initializers (deduplicating small ones), checks every node it
// creates and infers its outputs' types and shapes at once, remembers which module scope created each
// node, and explains itself: every error it raises carries debug_dump() (debug_dump.hpp), the state
// needed to understand the failure.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "xexp/builder/builder_names.hpp"
#include "xexp/builder/debug_dump.hpp"
#include "xexp/builder/initializer_names.hpp"
#include "xexp/builder/module_scope.hpp"
#include "xexp/builder/op_args.hpp"
#include "xexp/builder/op_shortcuts.hpp"
#include "xexp/core/error.hpp"
#include "xexp/core/shape.hpp"
#include "xexp/core/tensor.hpp"
#include "xexp/infer/infer.hpp"
#include "xexp/ir/cleanup.hpp"
#include "xexp/ir/duplicates.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/onnx/save.hpp"
#include "xexp/onnx/schema.hpp"

namespace xexp {

class GraphBuilder {
 public:
  static constexpr int64_t kMinOpset = 13, kMaxOpset = 24;

  explicit GraphBuilder(int64_t opset = 18, int64_t ir_version = 9) : op(this) {
    if (opset < kMinOpset || opset > kMaxOpset)
      throw Error("opset " + std::to_string(opset) + " is not supported, use " + std::to_string(kMinOpset) + " to " +
                  std::to_string(kMaxOpset));
    model_.ir_version = ir_version;
    model_.opsets.push_back(opset_import("", opset));
  }
  GraphBuilder(const GraphBuilder&) = delete;  // `op` points back to its builder
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  // ---- opsets ---------------------------------------------------------------------------------
  void add_domain(std::string domain, int64_t version) {
    for (ir::OpsetImport& o : model_.opsets)
      if (o.domain == domain) {
        if (o.version != version)
          fail("domain '" + domain + "' already has opset " + std::to_string(o.version) + ", not " + std::to_string(version));
        return;
      }
    model_.opsets.push_back(opset_import(std::move(domain), version));
  }
  bool has_opset(std::string_view domain) const { return model_.opset(domain).has_value(); }
  int64_t get_opset(std::string_view domain = "") const {
    auto v = model_.opset(domain);
    if (!v) fail("no opset for domain '" + std::string(domain) + "', call add_domain first");
    return *v;
  }
  int64_t main_opset() const { return get_opset(""); }

  // ---- inputs, outputs, initializers -------------------------------------------------------------
  std::string make_tensor_input(std::string name, ElemType type, std::optional<Shape> shape = std::nullopt) {
    if (has_name(name)) fail("input '" + name + "' already exists", name);
    ir::ValueId id = graph().add_input(name, type, shape);
    if (shape)
      for (const Dim& d : *shape)
        if (d.is_symbolic() && std::find(dynamic_dims_.begin(), dynamic_dims_.end(), d.symbol()) == dynamic_dims_.end())
          dynamic_dims_.push_back(d.symbol());
    log_.push_back({BuildEvent::Input, id});
    return name;
  }

  // Declares an existing value as a graph output; the type and shape, when given, are checked against
  // what is known (and complete it).
  std::string make_tensor_output(const std::string& name, ElemType type = ElemType::Undefined,
                                 std::optional<Shape> shape = std::nullopt) {
    ir::ValueId id = value_id(name, "make_tensor_output");
    if (type != ElemType::Undefined) set_type(name, type);
    if (shape) set_shape(name, *shape);
    graph().add_output(id);
    return name;
  }

  // Adds an initializer. An empty name is generated (see initializer_names.hpp) and a tensor of fewer
  // than 1024 elements equal to an unnamed one created before returns that one's name.
  std::string make_initializer(std::string name, Tensor tensor) {
    std::string key;
    if (name.empty()) {
      key = ir::initializer_dedup_key(tensor);
      if (!key.empty())
        if (auto it = dedup_.find(key); it != dedup_.end()) {
          auto id = graph().find(it->second);
          if (id && graph().value(*id).alive && graph().value(*id).initializer) return it->second;
        }
      name = unique_name(initializer_base_name(tensor));
    } else if (has_name(name)) {
      fail("initializer '" + name + "' already exists", name);
    }
    ir::ValueId id = graph().add_initializer(name, std::move(tensor));
    if (!key.empty()) dedup_[key] = name;
    log_.push_back({BuildEvent::Initializer, id});
    return name;
  }

  // Creates a node. Every input must exist ("" for an omitted optional input), outputs are new names or
  // generated (_onx_<op type lowercase><index>, made unique). Types and shapes of the outputs are
  // inferred at once; a node its checks or its inference reject leaves the graph as it was.
  Outputs make_node(std::string_view op_type, const std::vector<std::string>& inputs, OutputSpec outputs = 1,
                    const Attrs& attributes = {}, std::string name = {}, std::string domain = {}) {
    // Built only when an error is raised: the hot path formats no text.
    auto where = [&] {
      std::string s = "inputs=" + dump_detail::names_repr(inputs) + ", outputs=" + dump_detail::names_repr(outputs.names);
      return s + ", name='" + name + "'";
    };
    if (!domain.empty() && !has_opset(domain))
      fail("domain '" + domain + "' of operator '" + std::string(op_type) + "' has no opset, call add_domain first");
    ir::Graph& g = graph();
    const Symbol op(op_type), dom(domain);
    std::vector<ir::ValueId> in_ids;
    in_ids.reserve(inputs.size());
    for (const std::string& i : inputs) {
      if (i.empty()) {
        in_ids.push_back(ir::kNone);
        continue;
      }
      auto id = g.find(i);
      if (!id || !g.value(*id).alive)
        fail("Input '" + i + "' does not exist for operator '" + std::string(op_type) + "', " + where(), i);
      in_ids.push_back(*id);
    }
    std::vector<ir::Attribute> attrs;
    attrs.reserve(attributes.size());
    for (const AttrArg& a : attributes) {
      check_attribute(op, dom, a.attr.name.view(), where);
      attrs.push_back(a.attr);
    }
    const auto first_value = static_cast<ir::ValueId>(g.value_capacity());
    std::vector<std::string> out_names = outputs.names;
    std::vector<ir::ValueId> out_ids;
    if (out_names.empty()) {
      out_names.reserve(static_cast<std::size_t>(outputs.count));
      out_ids.reserve(static_cast<std::size_t>(outputs.count));
      for (int k = 0; k < outputs.count; ++k) out_ids.push_back(names_.add_generated_output(g, op, k, out_names));
    } else {
      out_ids.reserve(out_names.size());
      for (const std::string& o : out_names) {
        const ir::ValueId id = o.empty() ? ir::kNone : g.try_add_value(o);
        if (id == ir::kNone && !o.empty()) {
          g.pop_values(first_value);
          fail("Output '" + o + "' already exists for operator '" + std::string(op_type) + "', " + where(), o);
        }
        out_ids.push_back(id);
      }
    }
    name = names_.node_name(name.empty() ? op_type : std::string_view(name));
    const ir::NodeId n = g.add_node(op, std::move(in_ids), std::move(out_ids), std::move(attrs), name, dom);
    record_module(n);
    log_.push_back({BuildEvent::Node, n});
    try {
      infer::infer_node(g, n, main_opset(), state_);
    } catch (const Error& e) {
      std::string dump = debug_dump();  // with the rejected node, before it is rolled back
      roll_back_node(first_value);
      throw Error(e.cause(), {.node = e.node(), .value = e.value()}, std::move(dump));
    }
    if (!constant_cache_.empty()) constant_cache_.clear();
    return Outputs(std::move(out_names));
  }

  // What the op shortcuts call: turns arguments into names (tensors and int vectors become
  // initializers) and emits attributes that became inputs (axes, split) the way the opset wants.
  Outputs make_op(std::string_view op_type, std::string_view domain, std::vector<Arg> args, const Attrs& attrs,
                  const OpOptions& options) {
    const bool adapt = domain.empty() && std::any_of(attributes_that_became_inputs().begin(),
                                                     attributes_that_became_inputs().end(),
                                                     [&](const AttributeBecameInput& m) { return m.op == op_type; });
    Attrs adapted;
    if (adapt) {
      adapted = attrs;
      adapt_moved_attributes(op_type, args, adapted);
    }
    const Attrs& attributes = adapt ? adapted : attrs;
    std::vector<std::string> inputs;
    inputs.reserve(args.size());
    for (const Arg& a : args) {
      switch (a.kind()) {
        case Arg::Kind::Omitted: inputs.emplace_back(); break;
        case Arg::Kind::Name: inputs.push_back(a.name()); break;
        case Arg::Kind::Tensor: inputs.push_back(make_initializer("", a.tensor())); break;
        case Arg::Kind::Ints:
          inputs.push_back(make_initializer("", Tensor::from<int64_t>({static_cast<int64_t>(a.ints().size())}, a.ints())));
          break;
      }
    }
    while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
    OutputSpec outputs = options.outputs.empty() ? OutputSpec(default_output_count(op_type, args, attributes, options))
                                                 : OutputSpec(options.outputs);
    return make_node(op_type, inputs, std::move(outputs), attributes, options.name, std::string(domain));
  }

  Ops op;  // g.op.MatMul(x, w)

  // ---- names ----------------------------------------------------------------------------------
  bool has_name(std::string_view name) const { return model_.graph->has_value(name); }
  // `base` when free, else base2, base3, ... (builder_names.hpp).
  std::string unique_name(std::string_view base) { return names_.value_name(graph(), base); }
  ir::ValueId value_id(std::string_view name, std::string_view context = "lookup") const {
    auto id = model_.graph->find(name);
    if (!id) fail("unknown result '" + std::string(name) + "' (" + std::string(context) + ")", std::string(name));
    return *id;
  }

  // ---- types and shapes -----------------------------------------------------------------------
  bool has_type(std::string_view name) const { return has_name(name) && value(name).elem != ElemType::Undefined; }
  bool has_rank(std::string_view name) const { return has_name(name) && value(name).shape.has_value(); }
  // A shape without unknown dimensions (static or symbolic).
  bool has_shape(std::string_view name) const {
    if (!has_rank(name)) return false;
    const Shape& s = *value(name).shape;
    return std::none_of(s.begin(), s.end(), [](const Dim& d) { return d.is_unknown(); });
  }
  ElemType get_type(std::string_view name) const {
    if (!has_type(name)) fail("type is unknown for result '" + std::string(name) + "'", std::string(name));
    return value(name).elem;
  }
  std::size_t get_rank(std::string_view name) const {
    if (!has_rank(name)) fail("rank is unknown for result '" + std::string(name) + "'", std::string(name));
    return value(name).shape->size();
  }
  // The dimensions as recorded (constraints() tells which symbols are equal or bound to a size).
  const Shape& get_shape(std::string_view name) const {
    if (!has_rank(name)) fail("shape is unknown for result '" + std::string(name) + "'", std::string(name));
    return *value(name).shape;
  }
  void set_type(std::string_view name, ElemType type) {
    ir::Value& v = mutable_value(name);
    if (v.elem != ElemType::Undefined && v.elem != type)
      fail("type of '" + std::string(name) + "' is " + std::string(elem_type_name(v.elem)) + ", cannot set " +
               std::string(elem_type_name(type)),
           std::string(name));
    v.elem = type;
  }
  // Sets or completes a shape; a different known shape is an error, never overwritten.
  void set_shape(std::string_view name, const Shape& shape) {
    ir::Value& v = mutable_value(name);
    if (!v.shape) {
      v.shape = shape;
      return;
    }
    try {
      state_.constraints.merge(*v.shape, shape);
    } catch (const Error& e) {
      fail("cannot set shape " + shape_str(shape) + " on '" + std::string(name) + "' of shape " + shape_str(*v.shape) +
               ": " + e.cause(),
           std::string(name));
    }
  }
  void set_rank(std::string_view name, std::size_t rank) {
    ir::Value& v = mutable_value(name);
    if (v.shape && v.shape->size() != rank)
      fail("rank of '" + std::string(name) + "' is " + std::to_string(v.shape->size()) + ", cannot set " +
               std::to_string(rank),
           std::string(name));
    if (!v.shape) v.shape = Shape(rank);
  }
  // The dimensions an integer result holds when it was computed from shapes (Shape, Gather, Concat, ...).
  const Shape* value_shape(std::string_view name) const { return state_.value_shapes.find(value_id(name)); }
  const infer::ShapeConstraints& constraints() const noexcept { return state_.constraints; }
  infer::InferState& infer_state() noexcept { return state_; }

  // ---- constants ------------------------------------------------------------------------------
  // An initializer, or computed only from constants (transitively): the evaluator can fold it.
  bool is_constant(std::string_view name) const { return is_constant_id(value_id(name)); }
  // The tensor of an initializer or of a Constant node's output.
  const Tensor& get_constant(std::string_view name) const {
    const Tensor* t = infer::graph_constant(*model_.graph, value_id(name));
    if (!t) fail("'" + std::string(name) + "' is not an initializer (constants computed by nodes need the evaluator)", std::string(name));
    return *t;
  }

  // ---- module scopes --------------------------------------------------------------------------
  // auto scope = g.module("decoder.attention", "MultiAttentionBlock"); nodes created until `scope`
  // dies are tagged with the stack of open scopes.
  [[nodiscard]] ModuleGuard<GraphBuilder> module(std::string path, std::string type) {
    ModuleStack stack = current_stack_ == kNoStack ? ModuleStack{} : stacks_[current_stack_];
    stack.push_back({std::move(path), std::move(type)});
    open_.push_back(current_stack_);
    current_stack_ = static_cast<uint32_t>(stacks_.size());
    stacks_.push_back(std::move(stack));
    return ModuleGuard<GraphBuilder>(this);
  }
  void pop_module() {
    current_stack_ = open_.back();
    open_.pop_back();
  }
  // The scopes open when node `n` was created, outermost first (empty outside any scope).
  const ModuleStack& module_stack(ir::NodeId n) const {
    static const ModuleStack none;
    return n < node_stack_.size() && node_stack_[n] != kNoStack ? stacks_[node_stack_[n]] : none;
  }

  // ---- cleanups (node ids stay valid; removed nodes become tombstones) ---------------------------
  // The optimizer's clean-ups (ir/cleanup.hpp) over the whole graph.
  // Removes nodes whose outputs nobody reads and initializers nobody reads. Returns how many.
  std::size_t remove_unused() {
    const std::size_t removed = ir::remove_unused(graph()) + ir::remove_unused_initializers(graph());
    constant_cache_.clear();
    return removed;
  }
  // Removes Identity nodes; graph input and output names are kept (an Identity from an input or an
  // initializer to an output stays). Returns how many were removed.
  std::size_t remove_identity_nodes() {
    const std::size_t removed = ir::remove_identity_nodes(graph());
    constant_cache_.clear();
    return removed;
  }
  // Nodes computing the same thing (op, inputs, attributes): only the first stays.
  std::size_t remove_duplicated_nodes() { return ir::remove_duplicated_nodes(graph()); }

  // ---- the result -----------------------------------------------------------------------------
  ir::Model& model() noexcept { return model_; }
  const ir::Model& model() const noexcept { return model_; }
  ir::Graph& graph() noexcept { return *model_.graph; }
  const ir::Graph& graph() const noexcept { return *model_.graph; }
  // The ModelProto, with the inferred types and shapes written as value_info.
  ::onnx::ModelProto to_onnx() const {
    SaveOptions options;
    options.write_inferred_value_info = true;
    return model_to_proto(model_, options);
  }
  void save(const std::string& path) const {
    SaveOptions options;
    options.write_inferred_value_info = true;
    save_model(model_, path, options);
  }
  // Moves the model out, compacted (node and value ids change). The builder is empty afterwards.
  ir::Model to_model() {
    ir::Model out = std::move(model_);
    out.graph->compact();
    model_ = ir::Model{};
    return out;
  }

  // ---- debugging --------------------------------------------------------------------------------
  // What the builder knows (debug_dump.hpp says what each part is).
  std::string debug_dump() const {
    return builder_debug_dump(graph(), state_, dynamic_dims_, log_, [this](ir::ValueId id) { return is_constant_id(id); });
  }

 private:
  static constexpr uint32_t kNoStack = ir::kNone;

  static ir::OpsetImport opset_import(std::string domain, int64_t version) {
    ir::OpsetImport o;
    o.domain = std::move(domain);
    o.version = version;
    return o;
  }

  const ir::Value& value(std::string_view name) const { return model_.graph->value(value_id(name)); }
  ir::Value& mutable_value(std::string_view name) { return graph().value(value_id(name)); }

  [[noreturn]] void fail(std::string cause, std::string value_name = {}, std::string node = {}) const {
    throw Error(std::move(cause), {.node = std::move(node), .value = std::move(value_name)}, debug_dump());
  }

  // Undoes the node make_node just added and its output values (from `first_value` on).
  void roll_back_node(ir::ValueId first_value) {
    ir::Graph& g = graph();
    const auto n = static_cast<ir::NodeId>(g.node_capacity() - 1);
    for (ir::ValueId out : g.node(n).outputs)
      if (out != ir::kNone) state_.value_shapes.erase(out);
    names_.release_node_name(g.node(n).name);
    g.pop_node();
    g.pop_values(first_value);
    log_.pop_back();
    if (node_stack_.size() > n) node_stack_.resize(n);
    constant_cache_.clear();
  }

  void record_module(ir::NodeId n) {
    if (current_stack_ == kNoStack && node_stack_.empty()) return;
    if (node_stack_.size() <= n) node_stack_.resize(n + 1, kNoStack);
    node_stack_[n] = current_stack_;
  }

  bool is_constant_id(ir::ValueId id) const {
    if (auto it = constant_cache_.find(id); it != constant_cache_.end()) return it->second;
    const ir::Graph& g = graph();
    const ir::Value& v = g.value(id);
    bool constant = false;
    if (v.is_initializer()) {
      constant = true;
    } else if (v.producer != ir::kNone) {
      const ir::Node& n = g.node(v.producer);
      const std::string_view op = n.op_type.view();
      const bool random = op.starts_with("Random") || op == "Multinomial" || op == "Bernoulli";
      if (op == "Constant" && n.domain.empty()) {
        constant = true;
      } else if ((op == "Shape" || op == "Size") && n.domain.empty() && !n.inputs.empty() &&
                 g.value(n.inputs[0]).shape && is_static(*g.value(n.inputs[0]).shape)) {
        constant = true;  // depends only on a static shape
      } else if (!random && !n.has_subgraphs() && !n.inputs.empty()) {
        constant = std::all_of(n.inputs.begin(), n.inputs.end(),
                               [&](ir::ValueId in) { return in == ir::kNone || is_constant_id(in); });
      }
    }
    constant_cache_[id] = constant;
    return constant;
  }

  // An attribute the op's schema does not declare is an error. libonnx 1.12 knows opsets up to 17 and
  // answers later ones with its last schema: attributes added from 18 on are let through.
  template <class Where>
  void check_attribute(Symbol op, Symbol domain, std::string_view name, const Where& where) const {
    static constexpr std::string_view kAddedAfter17[] = {
        "num_outputs", "noop_with_empty_axes", "antialias", "axes", "keep_aspect_ratio_policy", "ceil_mode",
        "dilations", "saturate", "output_dtype", "block_size", "approximate", "round_mode", "precision"};
    const int64_t opset = domain.empty() ? main_opset() : get_opset(domain.view());
    const ::onnx::OpSchema* schema = schema_of(op, domain, opset);
    if (!schema || schema->attributes().count(std::string(name))) return;
    if (opset > 17 && std::find(std::begin(kAddedAfter17), std::end(kAddedAfter17), name) != std::end(kAddedAfter17)) return;
    fail("'" + std::string(name) + "' is not an attribute of operator '" + op.str() + "' (opset " +
             std::to_string(opset) + "), " + where(),
         {}, op.str());
  }
  // The registry's lookup builds strings and walks nested maps: done once per (domain, op). A
  // domain's opset never changes once declared (add_domain refuses another version).
  const ::onnx::OpSchema* schema_of(Symbol op, Symbol domain, int64_t opset) const {
    auto [it, fresh] = schemas_.try_emplace(op_key(domain, op), nullptr);
    if (fresh) it->second = find_schema(op.view(), domain.view(), opset);
    return it->second;
  }

  // Attributes that became inputs (onnx/schema.hpp: axes, split, pads, ...): an int64 vector given as
  // input becomes the attribute before the opset that moved it, the attribute becomes an input from
  // that opset on.
  void adapt_moved_attributes(std::string_view op_type, std::vector<Arg>& args, Attrs& attrs) {
    const int64_t opset = main_opset();
    for (const AttributeBecameInput& m : attributes_that_became_inputs()) {
      if (m.op != op_type) continue;
      const auto slot = static_cast<std::size_t>(m.input_index);
      auto attr_it = std::find_if(attrs.begin(), attrs.end(), [&](const AttrArg& a) { return a.attr.name.view() == m.attribute; });
      if (opset >= m.since && attr_it != attrs.end() && attr_it->attr.type == ir::AttrType::Ints) {
        if (args.size() <= slot) args.resize(slot + 1);
        args[slot] = Arg(attr_it->attr.ints);
        attrs.erase(attr_it);
      } else if (opset < m.since && args.size() > slot && args[slot].kind() != Arg::Kind::Omitted) {
        if (args[slot].kind() != Arg::Kind::Ints)
          fail(std::string(op_type) + " takes '" + std::string(m.attribute) + "' as an attribute before opset " +
               std::to_string(m.since) + ": give it as a vector of int64");
        attrs.push_back(ir::Attribute::make_ints(m.attribute, args[slot].ints()));
        args[slot] = Arg();
      }
    }
  }

  static int default_output_count(std::string_view op_type, const std::vector<Arg>& args, const Attrs& attrs,
                                  const OpOptions& options) {
    if (options.output_count > 0) return options.output_count;
    if (op_type == "Split") {
      for (const AttrArg& a : attrs)
        if (a.attr.name.view() == "num_outputs") return static_cast<int>(a.attr.i);
        else if (a.attr.name.view() == "split") return static_cast<int>(a.attr.ints.size());
      if (args.size() > 1 && args[1].kind() == Arg::Kind::Ints) return static_cast<int>(args[1].ints().size());
    }
    return 1;
  }

  ir::Model model_;
  infer::InferState state_;
  std::unordered_map<std::string, std::string> dedup_;  // ir::initializer_dedup_key -> name
  BuilderNames names_;
  mutable std::unordered_map<uint64_t, const ::onnx::OpSchema*> schemas_;  // (domain, op) -> schema
  std::vector<Symbol> dynamic_dims_;
  std::vector<BuildEvent> log_;
  mutable std::unordered_map<ir::ValueId, bool> constant_cache_;
  std::vector<ModuleStack> stacks_;       // every stack ever open
  std::vector<uint32_t> open_;            // enclosing stacks of the open scopes
  uint32_t current_stack_ = kNoStack;
  std::vector<uint32_t> node_stack_;      // NodeId -> index in stacks_
};

inline Outputs OpsBase::call(std::string_view op_type, std::vector<Arg> args, const Attrs& attrs, const OpOptions& options) {
  return builder_->make_op(op_type, options.domain.empty() ? domain_ : std::string_view(options.domain), std::move(args),
                           attrs, options);
}

}  // namespace xexp
