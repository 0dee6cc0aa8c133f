#pragma once
// Rewriter: what a replacement builds with. New nodes are inserted before the matched root (every value
// a pattern reads is available there), named `<Rule>Pattern--<root name>`, and their outputs get fresh
// names from the graph's uniquifier. Attributes that a newer opset moved to inputs are written as
// constant inputs. New outputs are typed by shape inference. A replacement that declines after building
// something is rolled back.
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xexp/infer/infer.hpp"
#include "xexp/ir/graph.hpp"
#include "xexp/rewrite/attributes.hpp"
#include "xexp/rewrite/match.hpp"

namespace xexp::rewrite {

// The rule that created a node, read back from the name Rewriter gives it ("FusedMatMul" for
// "FusedMatMulPattern--/h.0/MatMul"); empty for a node no rule named. When a rule rewrote a node another
// rule had made, the name starts with the latest rule.
inline std::string_view rule_of_node_name(std::string_view node_name) {
  const auto end = node_name.find("Pattern--");
  if (end == std::string_view::npos || end == 0) return {};
  const std::string_view rule = node_name.substr(0, end);
  return rule.find("--") == std::string_view::npos ? rule : std::string_view{};
}

class Rewriter {
 public:
  Rewriter(ir::Graph& g, const Match& m, std::string_view pattern_name)
      : graph_(g), match_(m), root_(m.root()) {
    const ir::Node& root = g.node(root_);
    const std::string& root_name =
        root.name.empty() && !root.outputs.empty() ? g.value(root.outputs[0]).name : root.name;
    node_base_ = std::string(pattern_name) + "--" + root_name;
    value_base_ = std::string(pattern_name) + "--" +
                  (root.outputs.empty() ? root_name : g.value(root.outputs[0]).name);
  }

  ir::Graph& graph() { return graph_; }
  const Match& match() const { return match_; }
  int64_t opset() const { return match_.opset(); }
  // The evaluated capture, for lambdas: r[x] is a ValueView, r[p] the attribute's value.
  template <class Capture>
  decltype(auto) operator[](const Capture& c) const { return c.eval(match_); }

  // Adds a node with `n_outputs` fresh outputs; returns the first output.
  ir::ValueId node(Symbol op_type, std::vector<ir::ValueId> inputs, std::vector<ir::Attribute> attributes = {},
                   Symbol domain = {}, std::size_t n_outputs = 1) {
    std::vector<ir::Attribute> kept;
    for (ir::Attribute& a : attributes) {
      int slot = input_slot_of_attribute(op_type, domain, a.name, opset());
      if (slot < 0) {
        kept.push_back(std::move(a));
        continue;
      }
      if (inputs.size() <= static_cast<std::size_t>(slot)) inputs.resize(slot + 1, ir::kNone);
      inputs[slot] = initializer(Tensor::from<int64_t>({static_cast<int64_t>(a.ints.size())}, a.ints));
    }
    std::vector<ir::ValueId> outputs;
    for (std::size_t k = 0; k < n_outputs; ++k) outputs.push_back(graph_.add_value(graph_.unique_value_name(value_base_)));
    ir::NodeId id = graph_.add_node(op_type, std::move(inputs), outputs, std::move(kept),
                                    graph_.unique_node_name(node_base_), domain, root_);
    added_.push_back(id);
    infer::infer_node(graph_, id, opset());
    return outputs[0];
  }
  // A new initializer (named after the rule and the root).
  ir::ValueId initializer(Tensor t) {
    ir::ValueId id = graph_.add_initializer(graph_.unique_value_name(value_base_), std::move(t));
    initializers_.push_back(id);
    return id;
  }

  // A value built once and reused (rewrite::let): the slot of letter `index`, kNone until built.
  ir::ValueId& let_slot(int index) { return lets_[index]; }
  // After the root's replacement, the consumers of `old` read `fresh` (another output of a new node
  // taking over a matched node's outputs); `fresh` gets `old`'s type, as it computes the same thing.
  void replace_later(ir::ValueId old, ir::ValueId fresh) { later_.emplace_back(old, fresh); }
  const std::vector<std::pair<ir::ValueId, ir::ValueId>>& later_replacements() const { return later_; }

  const std::vector<ir::NodeId>& added() const { return added_; }
  // Undoes everything built so far (a replacement declined).
  void rollback() {
    for (auto it = added_.rbegin(); it != added_.rend(); ++it) graph_.remove_node(*it);
    added_.clear();
    for (ir::ValueId id : initializers_) graph_.value(id).alive = false;
    std::vector<ir::ValueId> order = graph_.initializers();
    std::erase_if(order, [&](ir::ValueId id) { return !graph_.value(id).alive; });
    graph_.set_initializer_order(std::move(order));
    initializers_.clear();
    later_.clear();
    lets_.fill(ir::kNone);
  }

 private:
  ir::Graph& graph_;
  const Match& match_;
  ir::NodeId root_;
  std::string node_base_, value_base_;
  std::vector<ir::NodeId> added_;
  std::vector<ir::ValueId> initializers_;
  std::vector<std::pair<ir::ValueId, ir::ValueId>> later_;
  std::array<ir::ValueId, kCaptureCount> lets_ = filled_with_none();
  static std::array<ir::ValueId, kCaptureCount> filled_with_none() {
    std::array<ir::ValueId, kCaptureCount> out;
    out.fill(ir::kNone);
    return out;
  }
};

}  // namespace xexp::rewrite
