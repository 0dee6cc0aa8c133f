#pragma once
// The state of one match: what each capture is bound to and which nodes were matched. Captures are
// identified by a character ('x', 'p', ...) known at compile time; whether a capture is already bound
// is tracked in the matcher's template arguments (a bound mask), so this state holds no flags and a
// failed branch leaves nothing to undo. Besides the bindings, a match holds what its kept facts
// computed (keep<'u'>), which are computed once per match.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xexp/ir/graph.hpp"

namespace xexp::rewrite {

using CaptureMask = uint64_t;
inline constexpr char kFirstCapture = 'A';
inline constexpr char kLastCapture = 'z';
inline constexpr int kCaptureCount = kLastCapture - kFirstCapture + 1;

template <char Id>
inline constexpr int capture_index() {
  static_assert(Id >= kFirstCapture && Id <= kLastCapture, "xexp rule: a capture is named by a letter");
  return Id - kFirstCapture;
}
template <char Id>
inline constexpr CaptureMask capture_bit = CaptureMask{1} << capture_index<Id>();

// The tensor behind a value when it is constant: an initializer or the output of a Constant node
// (its `value`: rewrite::optimize first rewrites the shorthands value_ints, ... as `value`, see
// ir/constant_node.hpp). An initializer whose external data file is missing is not known: no rule
// may read it. A subgraph sees the constants of its enclosing graphs.
inline const Tensor* constant_tensor(const ir::Graph& graph, ir::ValueId id) {
  if (id == ir::kNone) return nullptr;
  const auto [defining, defined] = ir::definition_of(graph, id);
  const ir::Graph& g = *defining;
  const ir::Value& v = g.value(defined);
  if (v.initializer) return v.initializer->available() ? &*v.initializer : nullptr;
  if (v.producer == ir::kNone) return nullptr;
  const ir::Node& n = g.node(v.producer);
  if (n.op_type != Symbol("Constant") || !n.domain.empty()) return nullptr;
  const ir::Attribute* a = n.attribute(Symbol("value"));
  return a && a->type == ir::AttrType::Tensor && !a->tensors.empty() ? &a->tensor() : nullptr;
}

// What a value capture evaluates to in conditions and replacements.
struct ValueView {
  const ir::Graph* graph;
  ir::ValueId id;
  const ir::Value& value() const { return graph->value(id); }
  ElemType elem() const { return value().elem; }
  const std::optional<Shape>& shape() const { return value().shape; }
  const Tensor* constant() const { return constant_tensor(*graph, id); }
  friend bool operator==(const ValueView& a, const ValueView& b) { return a.id == b.id; }
};

// The node producing a value (a named node, a captured value): facts read its inputs from here.
inline const ir::Node& node_of(const ValueView& v) { return v.graph->node(v.value().producer); }
// Input `slot` of that node, or kNone when omitted.
inline ir::ValueId input_of(const ValueView& v, std::size_t slot) {
  const ir::Node& n = node_of(v);
  return slot < n.inputs.size() ? n.inputs[slot] : ir::kNone;
}

class Match {
 public:
  static constexpr int kMaxNodes = 24;

  const ir::Graph& graph() const { return *graph_; }
  int64_t opset() const { return opset_; }
  // Matched nodes: the root first, then its producers in the order the pattern visits them.
  const ir::NodeId* begin() const { return nodes_.data(); }
  const ir::NodeId* end() const { return nodes_.data() + node_count_; }
  std::size_t node_count() const { return node_count_; }
  ir::NodeId root() const { return nodes_[0]; }
  bool contains(ir::NodeId n) const {
    for (int k = 0; k < node_count_; ++k)
      if (nodes_[k] == n) return true;
    return false;
  }

  // ---- used by the matchers ---------------------------------------------------------------------
  void reset(const ir::Graph& g, int64_t opset) {
    graph_ = &g;
    opset_ = opset;
    node_count_ = 0;
    shared_ = 0;
    keep_alive_.clear();
    kept_.clear();
  }
  bool push_node(ir::NodeId n, bool shared) {
    if (node_count_ == kMaxNodes) return false;
    if (shared) shared_ |= uint32_t{1} << node_count_;
    nodes_[node_count_++] = n;
    return true;
  }
  int mark() const { return node_count_; }
  void rewind(int mark) {
    node_count_ = static_cast<uint8_t>(mark);
    shared_ &= (uint32_t{1} << mark) - 1;
  }
  bool is_shared(int k) const { return (shared_ >> k) & 1u; }
  // Keeps an attribute read from a constant input (opset adapters) alive while the match lives.
  const ir::Attribute* keep(ir::Attribute a) {
    keep_alive_.push_back(std::make_shared<const ir::Attribute>(std::move(a)));
    return keep_alive_.back().get();
  }

  // ---- explaining why a rule did not match (rule.hpp's Rule::explain); off while optimizing --------
  bool explaining() const { return why_ != nullptr; }
  // Keeps the reason of the failure that got furthest (most nodes matched; conditions come after every
  // node): with alternatives and commutative nodes, the earlier attempts fail for less telling reasons.
  // Out of line, so that the reason's string building is never inlined into the matchers (g++ 12 -O3
  // warns falsely, -Warray-bounds, on string temporaries there).
  template <class Describe>
  [[gnu::noinline]] void failed(int progress, Describe&& describe) {
    if (!why_ || progress < why_progress_) return;
    why_progress_ = progress + 1;
    *why_ = describe();
  }
  // ---- what keep<'u'>(fact) computed for this match, read again by later conditions and the replacement
  // The value kept under letter `id` for expressions of type `Tag`, computed by `compute` the first time.
  // Conditions run once all captures are bound; each attempt (a commutative order, an alternative) binds
  // them anew, so Case::match forgets the kept values before each (forget_kept). Kept values are shared,
  // like keep_alive_: a copy of the Match (the driver stores matches) reads the same ones.
  template <class T, class Tag, class Compute>
  const T& kept(char id, Compute&& compute) const {
    const void* tag = &kept_tag<Tag>;
    for (const Kept& k : kept_)
      if (k.id == id && k.tag == tag) return *static_cast<const T*>(k.value.get());
    std::shared_ptr<const T> value = std::make_shared<const T>(compute());
    kept_.push_back({id, tag, value});
    return *value;
  }
  void forget_kept() { kept_.clear(); }

  void explain_into(std::string* why) {
    why_ = why;
    why_progress_ = 0;
  }

  int case_index = 0;  // which case of a multi-case rule matched
  CaptureMask branches = 0;                          // bit of letter e: either<'e'>(a, b) matched b
  std::array<ir::ValueId, kCaptureCount> values;     // value captures, named nodes
  std::array<const ir::Attribute*, kCaptureCount> attributes;  // attribute captures

 private:
  const ir::Graph* graph_ = nullptr;
  int64_t opset_ = 0;
  std::array<ir::NodeId, kMaxNodes> nodes_;
  uint8_t node_count_ = 0;
  uint32_t shared_ = 0;  // bit k: node k may keep consumers outside the match
  std::vector<std::shared_ptr<const ir::Attribute>> keep_alive_;  // shared: copies of a Match stay valid
  std::string* why_ = nullptr;
  int why_progress_ = 0;
  template <class Tag>
  static constexpr char kept_tag = 0;  // its address tells kept values of different expressions apart
  struct Kept {
    char id;
    const void* tag;
    std::shared_ptr<const void> value;
  };
  mutable std::vector<Kept> kept_;  // a cache: filled by const evaluation, emptied with the bindings
};

}  // namespace xexp::rewrite
