#pragma once
// The graph xexp rewrites: nodes and values in vectors addressed by 32-bit ids, each value knowing its
// producer and consumers, nodes kept in a doubly linked list that is the execution order. Removal
// leaves a tombstone (ids stay valid while a pass runs); compact() renumbers once at the end.
//
// Fields named `unknown` hold serialized protobuf fields that ONNX 1.12 does not know (for example node
// metadata_props written by newer exporters) and `raw_*` hold serialized messages xexp does not model;
// both are written back untouched so that a load and save loses nothing.
#include <algorithm>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "xexp/core/error.hpp"
#include "xexp/core/shape.hpp"
#include "xexp/core/string_hash.hpp"
#include "xexp/core/symbol.hpp"
#include "xexp/core/tensor.hpp"
#include "xexp/ir/attribute.hpp"
#include "xexp/ir/ids.hpp"

namespace xexp::ir {

// Which proto2 `optional` string fields were present, so that "" set explicitly survives a round trip.
enum Presence : uint8_t {
  kHasName = 1,
  kHasDomain = 2,
  kHasDocString = 4,
  kHasType = 8,  // ValueInfoProto.type present
  kHasVersion = 16,  // OperatorSetIdProto.version present
};

struct Value {
  std::string name;
  NodeId producer = kNone;  // kNone for inputs, initializers and captured outer values
  uint32_t output_index = 0;
  std::vector<Use> uses;
  ElemType elem = ElemType::Undefined;
  std::optional<Shape> shape;  // nullopt: rank unknown
  std::string raw_type;        // serialized TypeProto when the type is not a plain tensor type
  std::optional<Tensor> initializer;
  std::string raw_sparse_initializer;  // serialized SparseTensorProto (sparse initializers)
  std::string doc_string;              // of its ValueInfoProto
  std::string unknown;                 // of its ValueInfoProto
  uint8_t presence = 0;
  bool is_input = false;
  bool is_captured = false;  // read from an enclosing graph (subgraphs only)
  uint32_t output_refs = 0;  // how many times it is listed among the graph outputs
  bool alive = true;

  bool is_graph_output() const noexcept { return output_refs > 0; }
  // Whether anything reads the value: a node (a subgraph reading it from an enclosing graph counts as
  // a use of the node holding that subgraph, see Graph::add_captured_use) or the graph's outputs.
  bool is_read() const noexcept { return !uses.empty() || is_graph_output(); }
  bool is_initializer() const noexcept { return initializer.has_value() || !raw_sparse_initializer.empty(); }
  bool has_type() const noexcept { return elem != ElemType::Undefined || !raw_type.empty(); }
  std::optional<std::size_t> rank() const {
    return shape ? std::optional<std::size_t>(shape->size()) : std::nullopt;
  }
};

struct Node {
  Symbol op_type;
  Symbol domain;  // "" is the default ONNX domain
  std::string name;
  std::string doc_string;
  std::vector<ValueId> inputs;   // kNone for an omitted optional input
  std::vector<ValueId> outputs;  // kNone for an omitted optional output
  std::vector<Attribute> attributes;
  std::vector<ValueId> captured;  // enclosing-scope values read by its subgraphs
  std::string unknown;
  uint8_t presence = 0;
  bool alive = true;
  NodeId prev = kNone, next = kNone;

  const Attribute* attribute(Symbol attr_name) const {
    for (const Attribute& a : attributes)
      if (a.name == attr_name) return &a;
    return nullptr;
  }
  Attribute* attribute(Symbol attr_name) {
    return const_cast<Attribute*>(std::as_const(*this).attribute(attr_name));
  }
  bool has_subgraphs() const {
    return std::any_of(attributes.begin(), attributes.end(),
                       [](const Attribute& a) { return !a.graphs.empty(); });
  }
};

using TransparentHash = StringHash;
using NameMap = std::unordered_map<std::string, ValueId, TransparentHash, std::equal_to<>>;

class Graph {
 public:
  std::string name;
  std::string doc_string;
  std::vector<std::string> raw_quantization_annotations;  // serialized TensorAnnotation
  std::string unknown;
  uint8_t presence = 0;
  const Graph* parent = nullptr;  // the enclosing graph, for subgraphs

  Graph() = default;
  Graph(const Graph&) = delete;  // a deep copy is explicit: clone()
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) noexcept = default;
  Graph& operator=(Graph&&) noexcept = default;

  // ---- values -------------------------------------------------------------------------------------
  Value& value(ValueId id) { return values_[id]; }
  const Value& value(ValueId id) const { return values_[id]; }
  std::size_t value_capacity() const noexcept { return values_.size(); }

  std::optional<ValueId> find(std::string_view value_name) const {
    auto it = by_name_.find(value_name);
    if (it == by_name_.end()) return std::nullopt;
    return it->second;
  }
  bool has_value(std::string_view value_name) const { return by_name_.find(value_name) != by_name_.end(); }
  ValueId at(std::string_view value_name) const {
    auto id = find(value_name);
    if (!id) throw Error("unknown value", {.node = {}, .value = std::string(value_name)});
    return *id;
  }

  // A new value with no producer yet; the name must be free in this graph.
  ValueId add_value(std::string value_name) {
    if (value_name.empty()) throw Error("a value needs a name");
    ValueId id = try_add_value(value_name);
    if (id == kNone) throw Error("the name is already used", {.node = {}, .value = std::move(value_name)});
    return id;
  }
  // add_value for a name that may be taken: kNone when it is (one lookup, nothing thrown). The name
  // must not be empty.
  ValueId try_add_value(std::string_view value_name) {
    auto id = static_cast<ValueId>(values_.size());
    if (!by_name_.try_emplace(std::string(value_name), id).second) return kNone;
    values_.emplace_back().name = value_name;
    return id;
  }
  ValueId add_input(std::string value_name, ElemType elem = ElemType::Undefined,
                    std::optional<Shape> shape = std::nullopt) {
    ValueId id = add_value(std::move(value_name));
    Value& v = values_[id];
    v.is_input = true;
    v.elem = elem;
    v.shape = std::move(shape);
    inputs_.push_back(id);
    return id;
  }
  ValueId add_initializer(std::string value_name, Tensor tensor) {
    ValueId id = add_value(std::move(value_name));
    Value& v = values_[id];
    v.elem = tensor.type();
    v.shape = tensor.shape();
    v.initializer = std::move(tensor);
    initializers_.push_back(id);
    return id;
  }
  void add_output(ValueId id) {
    outputs_.push_back(id);
    ++values_[id].output_refs;
  }
  // A value of an enclosing graph read inside this subgraph.
  ValueId add_captured(std::string value_name) {
    ValueId id = add_value(std::move(value_name));
    values_[id].is_captured = true;
    captured_.push_back(id);
    return id;
  }
  // A fresh name: `base` when free, else base_1, base_2, ... (free in this graph and its parents).
  std::string unique_value_name(std::string_view base) {
    if (!name_taken(base)) return std::string(base);
    std::string candidate;
    uint32_t& counter = suffix_counters_[std::string(base)];
    do {
      candidate = std::string(base) + "_" + std::to_string(++counter);
    } while (name_taken(candidate));
    return candidate;
  }
  // Subgraphs reading the value from an enclosing scope read it under its new name too.
  void rename_value(ValueId id, std::string new_name) {
    Value& v = values_[id];
    if (v.name == new_name) return;
    if (has_value(new_name)) throw Error("the name is already used", {.node = {}, .value = new_name});
    by_name_.erase(v.name);
    by_name_.emplace(new_name, id);
    const std::string old_name = std::exchange(v.name, std::move(new_name));
    for (const Use& u : std::vector<Use>(v.uses))
      if (u.slot == kCapturedSlot) rename_in_subgraphs(u.node, old_name, values_[id].name);
  }
  // The enclosing graph's value this subgraph reads as `old_name` is read as `new_name` from now on.
  // When the subgraph already reads `new_name`, the two captured values become one.
  void rename_captured(std::string_view old_name, const std::string& new_name) {
    const std::optional<ValueId> id = find(old_name);
    if (!id || !values_[*id].is_captured) return;
    std::optional<ValueId> existing = find(new_name);
    if (existing && !values_[*existing].alive) {  // released earlier (drop_unread_captured): the name is free
      by_name_.erase(new_name);
      existing.reset();
    }
    if (!existing) {
      rename_value(*id, new_name);
      return;
    }
    if (!values_[*existing].is_captured)
      throw Error("a subgraph defines a value named as the enclosing graph's value it reads",
                  {.node = {}, .value = new_name});
    replace_all_uses(*id, *existing);
    if (values_[*id].is_read()) return;  // listed among the subgraph's outputs: it stays
    values_[*id].is_captured = false;
    values_[*id].alive = false;
    std::erase(captured_, *id);
  }
  // Drops the captured values nothing in this subgraph reads any more; returns their names (the node
  // holding the subgraph no longer needs them from its own graph).
  std::vector<std::string> drop_unread_captured() {
    std::vector<std::string> dropped;
    std::erase_if(captured_, [&](ValueId id) {
      Value& v = values_[id];
      if (v.is_read()) return false;
      dropped.push_back(v.name);
      v.is_captured = false;
      v.alive = false;
      return true;
    });
    return dropped;
  }

  const std::vector<ValueId>& inputs() const noexcept { return inputs_; }
  const std::vector<ValueId>& outputs() const noexcept { return outputs_; }
  const std::vector<ValueId>& initializers() const noexcept { return initializers_; }
  const std::vector<ValueId>& captured() const noexcept { return captured_; }
  // Values listed in GraphProto.value_info, in file order.
  std::vector<ValueId>& value_info() noexcept { return value_info_; }
  const std::vector<ValueId>& value_info() const noexcept { return value_info_; }
  void set_output(std::size_t index, ValueId id) {
    --values_[outputs_[index]].output_refs;
    outputs_[index] = id;
    ++values_[id].output_refs;
  }
  // The graph's outputs become `ids`, in that order (a graph cut down to some of its values).
  void set_outputs(std::vector<ValueId> ids) {
    for (ValueId id : outputs_) --values_[id].output_refs;
    outputs_ = std::move(ids);
    for (ValueId id : outputs_) ++values_[id].output_refs;
  }
  void set_inputs(std::vector<ValueId> ids) { inputs_ = std::move(ids); }
  void set_initializer_order(std::vector<ValueId> ids) { initializers_ = std::move(ids); }

  // ---- nodes ------------------------------------------------------------------------------------
  Node& node(NodeId id) { return nodes_[id]; }
  const Node& node(NodeId id) const { return nodes_[id]; }
  std::size_t node_capacity() const noexcept { return nodes_.size(); }
  std::size_t node_count() const noexcept { return live_nodes_; }
  NodeId first_node() const noexcept { return first_; }
  NodeId last_node() const noexcept { return last_; }

  // Appends (or inserts before `before`) a node reading `inputs` and producing `outputs`, values
  // created beforehand that have no producer yet. kNone is allowed in both for omitted optionals.
  NodeId add_node(Symbol op_type, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                  std::vector<Attribute> attributes = {}, std::string node_name = {}, Symbol domain = {},
                  NodeId before = kNone) {
    auto id = static_cast<NodeId>(nodes_.size());
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k] == kNone) continue;
      Value& out = values_[outputs[k]];
      if (out.producer != kNone || out.is_input || out.is_initializer())
        throw Error("the value already has a producer", {.node = node_name, .value = out.name});
      out.producer = id;
      out.output_index = static_cast<uint32_t>(k);
    }
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (inputs[k] != kNone) values_[inputs[k]].uses.push_back({id, static_cast<int32_t>(k)});
    Node& n = nodes_.emplace_back();
    n.op_type = op_type;
    n.domain = domain;
    n.name = std::move(node_name);
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.attributes = std::move(attributes);
    link(id, before);
    if (node_names_) node_names_->insert(n.name);
    return id;
  }
  // Whether anything reads one of the outputs of node `id`.
  bool any_output_read(NodeId id) const {
    return std::any_of(nodes_[id].outputs.begin(), nodes_[id].outputs.end(),
                       [&](ValueId out) { return out != kNone && values_[out].is_read(); });
  }
  // Declares that node `id` reads `captured` (a value of this graph) from inside one of its subgraphs.
  void add_captured_use(NodeId id, ValueId captured) {
    nodes_[id].captured.push_back(captured);
    values_[captured].uses.push_back({id, kCapturedSlot});
  }
  // The reverse: no subgraph of node `id` reads `captured` any more.
  void remove_captured_use(NodeId id, ValueId captured) {
    std::erase(nodes_[id].captured, captured);
    erase_use(captured, id, kCapturedSlot);
  }

  // Removes a node: its inputs lose a use, its outputs lose their producer (they stay as values
  // until remove_unused_values or compact drops them).
  void remove_node(NodeId id) {
    Node& n = nodes_[id];
    if (!n.alive) return;
    for (ValueId in : n.inputs)
      if (in != kNone) erase_use(in, id);
    for (ValueId in : n.captured) erase_use(in, id);
    for (ValueId out : n.outputs)
      if (out != kNone) {
        values_[out].producer = kNone;
        if (!values_[out].is_read()) values_[out].alive = false;
      }
    unlink(id);
    n.alive = false;
    if (node_names_) node_names_->erase(n.name);
  }

  // Undo of the latest add_node (a builder rolling back a node its checks rejected): unlike
  // remove_node, no tombstone stays and the node's id is given again by the next add_node.
  void pop_node() {
    if (nodes_.empty()) throw Error("pop_node on a graph without nodes");
    const auto id = static_cast<NodeId>(nodes_.size() - 1);
    Node& n = nodes_.back();
    if (n.alive) {
      for (ValueId in : n.inputs)
        if (in != kNone) erase_use(in, id);
      for (ValueId in : n.captured) erase_use(in, id);
      for (ValueId out : n.outputs)
        if (out != kNone) values_[out].producer = kNone;
      unlink(id);
      if (node_names_)
        if (auto it = node_names_->find(n.name); it != node_names_->end()) node_names_->erase(it);
    }
    nodes_.pop_back();
  }
  // Undo of add_value for every value from id `first` on: they must be the latest values, read by
  // no node and produced by none. Their names become free again.
  void pop_values(ValueId first) {
    while (values_.size() > first) {
      Value& v = values_.back();
      if (v.producer != kNone || v.is_read() || v.is_input || v.is_initializer() || v.is_captured)
        throw Error("pop_values: the value is still referenced", {.node = {}, .value = v.name});
      by_name_.erase(v.name);
      values_.pop_back();
    }
  }

  void set_node_input(NodeId id, std::size_t slot, ValueId new_input) {
    Node& n = nodes_[id];
    if (n.inputs[slot] != kNone) erase_use(n.inputs[slot], id, static_cast<int32_t>(slot));
    n.inputs[slot] = new_input;
    if (new_input != kNone) values_[new_input].uses.push_back({id, static_cast<int32_t>(slot)});
  }

  // Every consumer of `old_value` reads `new_value` instead. When `old_value` is a graph output, the
  // output keeps its name: `new_value` takes it and `old_value` gets a fresh one.
  void replace_all_uses(ValueId old_value, ValueId new_value) {
    if (old_value == new_value) return;
    std::vector<Use> uses = std::move(values_[old_value].uses);
    values_[old_value].uses.clear();
    for (const Use& u : uses) {
      if (u.slot == kCapturedSlot) {
        std::vector<ValueId>& captured = nodes_[u.node].captured;
        const bool already = std::find(captured.begin(), captured.end(), new_value) != captured.end();
        if (already) std::erase(captured, old_value);
        else std::replace(captured.begin(), captured.end(), old_value, new_value);
        rename_in_subgraphs(u.node, values_[old_value].name, values_[new_value].name);
        if (already) continue;
      } else {
        nodes_[u.node].inputs[u.slot] = new_value;
      }
      values_[new_value].uses.push_back(u);
    }
    if (values_[old_value].is_graph_output()) keep_output_name(old_value, new_value);
  }

  // Whether value `id` may be renamed to become a graph output in place of another: only a value a
  // node of this graph produces and that is none of the graph's inputs, initializers, outputs or
  // values of an enclosing graph, whose names are the graph's interface.
  bool can_take_output_name(ValueId id) const {
    const Value& v = values_[id];
    return v.producer != kNone && !v.is_graph_output() && !v.is_input && !v.is_initializer() && !v.is_captured;
  }

 private:
  // `old_value` is a graph output being replaced by `new_value`: the output name must not change.
  void keep_output_name(ValueId old_value, ValueId new_value) {
    if (can_take_output_name(new_value)) {
      for (std::size_t k = 0; k < outputs_.size(); ++k)
        if (outputs_[k] == old_value) set_output(k, new_value);
      std::string kept = values_[old_value].name;
      rename_value(old_value, unique_value_name(kept + "_replaced"));
      rename_value(new_value, std::move(kept));
      return;
    }
    // new_value cannot take the name (an input, an initializer, another output): old_value stays the
    // output and becomes Identity(new_value); its former producer writes a fresh value instead.
    if (NodeId producer = values_[old_value].producer; producer != kNone) {
      ValueId fresh = add_value(unique_value_name(values_[old_value].name + "_replaced"));
      values_[fresh].producer = producer;
      values_[fresh].output_index = values_[old_value].output_index;
      nodes_[producer].outputs[values_[old_value].output_index] = fresh;
      values_[old_value].producer = kNone;
    }
    add_node(Symbol("Identity"), {new_value}, {old_value});
  }

 public:
  // ---- node order ---------------------------------------------------------------------------------
  // Iterates live nodes in execution order. Removing the current node while iterating is fine.
  class NodeRange {
   public:
    struct iterator {
      using iterator_category = std::forward_iterator_tag;
      using value_type = NodeId;
      using difference_type = std::ptrdiff_t;
      using pointer = const NodeId*;
      using reference = NodeId;
      const Graph* g = nullptr;
      NodeId id = kNone;
      NodeId next = kNone;
      NodeId operator*() const { return id; }
      iterator operator++(int) {
        iterator old = *this;
        ++*this;
        return old;
      }
      iterator& operator++() {
        id = next;
        next = id == kNone ? kNone : g->nodes_[id].next;
        return *this;
      }
      bool operator==(const iterator& o) const { return id == o.id; }
    };
    iterator begin() const { return {g_, g_->first_, g_->first_ == kNone ? kNone : g_->nodes_[g_->first_].next}; }
    iterator end() const { return {g_, kNone, kNone}; }
    const Graph* g_;
  };
  NodeRange nodes() const { return NodeRange{this}; }

  void move_before(NodeId id, NodeId before) {
    unlink(id);
    link(id, before);
  }

  // ---- node names -------------------------------------------------------------------------------
  // A node name not used by any live node: `base` when free, else base_1, base_2, ...
  std::string unique_node_name(std::string_view base) {
    if (!node_names_) {
      node_names_.emplace();
      for (NodeId id : nodes()) node_names_->insert(nodes_[id].name);
    }
    std::string candidate(base);
    for (uint32_t k = 1; node_names_->count(candidate); ++k) candidate = std::string(base) + "_" + std::to_string(k);
    return candidate;
  }

  // ---- maintenance -------------------------------------------------------------------------------
  // Drops dead nodes and values and renumbers everything; ids taken before are invalid afterwards.
  void compact() {
    std::vector<ValueId> vmap(values_.size(), kNone);
    std::vector<Value> values;
    values.reserve(values_.size());
    for (ValueId id = 0; id < values_.size(); ++id) {
      Value& v = values_[id];
      bool keep = v.alive && (v.producer != kNone || v.is_input || v.is_initializer() || v.is_captured || v.is_read());
      if (!keep) continue;
      vmap[id] = static_cast<ValueId>(values.size());
      values.push_back(std::move(v));
    }
    std::vector<NodeId> nmap(nodes_.size(), kNone);
    std::vector<Node> nodes;
    nodes.reserve(live_nodes_);
    for (NodeId id = first_; id != kNone; id = nodes_[id].next) {
      nmap[id] = static_cast<NodeId>(nodes.size());
      nodes.push_back(std::move(nodes_[id]));
    }
    auto remap_value = [&](ValueId& id) {
      if (id != kNone) id = vmap[id];
    };
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      Node& n = nodes[k];
      for (ValueId& id : n.inputs) remap_value(id);
      for (ValueId& id : n.outputs) remap_value(id);
      for (ValueId& id : n.captured) remap_value(id);
      n.prev = k == 0 ? kNone : static_cast<NodeId>(k - 1);
      n.next = k + 1 == nodes.size() ? kNone : static_cast<NodeId>(k + 1);
    }
    for (Value& v : values) {
      if (v.producer != kNone) v.producer = nmap[v.producer];
      std::erase_if(v.uses, [&](const Use& u) { return nmap[u.node] == kNone; });
      for (Use& u : v.uses) u.node = nmap[u.node];
    }
    auto remap_list = [&](std::vector<ValueId>& list) {
      for (ValueId& id : list) id = vmap[id];
      std::erase(list, kNone);
    };
    remap_list(inputs_);
    remap_list(outputs_);
    remap_list(initializers_);
    remap_list(captured_);
    remap_list(value_info_);
    nodes_ = std::move(nodes);
    values_ = std::move(values);
    first_ = nodes_.empty() ? kNone : 0;
    last_ = nodes_.empty() ? kNone : static_cast<NodeId>(nodes_.size() - 1);
    live_nodes_ = nodes_.size();
    by_name_.clear();
    by_name_.reserve(values_.size());
    for (ValueId id = 0; id < values_.size(); ++id) by_name_.emplace(values_[id].name, id);
  }

  void reserve(std::size_t nodes, std::size_t values) {
    nodes_.reserve(nodes);
    values_.reserve(values);
    by_name_.reserve(values);
  }

 private:
  void rename_in_subgraphs(NodeId id, std::string_view old_name, const std::string& new_name) {
    for (Attribute& a : nodes_[id].attributes)
      for (const std::shared_ptr<Graph>& sub : a.graphs) sub->rename_captured(old_name, new_name);
  }
  bool name_taken(std::string_view candidate) const {
    for (const Graph* g = this; g; g = g->parent)
      if (g->has_value(candidate)) return true;
    return false;
  }
  void erase_use(ValueId value_id, NodeId node_id, int32_t slot) {
    auto& uses = values_[value_id].uses;
    auto it = std::find(uses.begin(), uses.end(), Use{node_id, slot});
    if (it != uses.end()) uses.erase(it);
  }
  void erase_use(ValueId value_id, NodeId node_id) {
    std::erase_if(values_[value_id].uses, [&](const Use& u) { return u.node == node_id; });
  }
  void link(NodeId id, NodeId before) {
    Node& n = nodes_[id];
    if (before == kNone) {
      n.prev = last_;
      n.next = kNone;
      if (last_ != kNone) nodes_[last_].next = id;
      else first_ = id;
      last_ = id;
    } else {
      Node& b = nodes_[before];
      n.prev = b.prev;
      n.next = before;
      if (b.prev != kNone) nodes_[b.prev].next = id;
      else first_ = id;
      b.prev = id;
    }
    ++live_nodes_;
  }
  void unlink(NodeId id) {
    Node& n = nodes_[id];
    if (n.prev != kNone) nodes_[n.prev].next = n.next;
    else first_ = n.next;
    if (n.next != kNone) nodes_[n.next].prev = n.prev;
    else last_ = n.prev;
    --live_nodes_;
  }

  std::vector<Node> nodes_;
  std::vector<Value> values_;
  NodeId first_ = kNone, last_ = kNone;
  std::size_t live_nodes_ = 0;
  std::vector<ValueId> inputs_, outputs_, initializers_, captured_, value_info_;
  NameMap by_name_;
  std::unordered_map<std::string, uint32_t> suffix_counters_;
  std::optional<std::unordered_multiset<std::string>> node_names_;
};

// Where value `id` of `g` is defined: for a value a subgraph reads from an enclosing scope, the value of
// that name there (through every level of nesting); otherwise the value itself.
inline std::pair<const Graph*, ValueId> definition_of(const Graph& g, ValueId id) {
  const Graph* at = &g;
  while (at->value(id).is_captured && at->parent) {
    const std::optional<ValueId> outer = at->parent->find(at->value(id).name);
    if (!outer) break;
    at = at->parent;
    id = *outer;
  }
  return {at, id};
}

}  // namespace xexp::ir
