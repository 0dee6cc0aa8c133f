#pragma once
// Stage 1 of the LLM fusions (PATTERNS.md, "LLM fusions in two stages"). A block whose operator ONNX
// defines only from opset 23 (Attention, RotaryEmbedding, RMSNormalization), in a model of an older
// opset, becomes a call of a local function in domain `intermediate`, named after the rule that will
// fuse it; the function's body is the matched nodes. The model keeps its opset and runs anywhere (ONNX
// Runtime inlines the calls), it reads as its blocks, and every layer's block shares one function.
// Stage 2 is the optimizer's next run with a newer opset or the onnxruntime set: optimize_model inlines
// the calls first, and the rules fuse their bodies into operators as they would the exporter's nodes.
// Fusions into older operators (LayerNormalization at 17, HardSwish at 14) stay plain nodes: one or a
// few nodes each, which runtimes fuse themselves, and not worth a function to a runtime that has none.
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "xexp/functions/outline.hpp"
#include "xexp/functions/registry.hpp"
#include "xexp/optimizer/rules_waiting.hpp"

namespace xexp::optimizer {

inline constexpr std::string_view kIntermediateDomain = "intermediate";
// The opset from which ONNX has the LLM blocks' operators.
inline constexpr int64_t kIntermediateOpset = 23;

namespace detail {

// The nodes of a match (`in` holds them) in an order the body can be built in: producers before their
// readers.
inline std::vector<ir::NodeId> producers_first(const ir::Graph& g, const std::vector<ir::NodeId>& nodes,
                                               const std::unordered_set<ir::NodeId>& in) {
  std::unordered_set<ir::NodeId> placed;
  std::vector<ir::NodeId> order;
  const auto place = [&](const auto& self, ir::NodeId id) -> void {
    if (!placed.insert(id).second) return;
    for (ir::ValueId v : g.node(id).inputs)
      if (v != ir::kNone && in.count(g.value(v).producer)) self(self, g.value(v).producer);
    order.push_back(id);
  };
  for (ir::NodeId id : nodes) place(place, id);
  return order;
}

}  // namespace detail

// Outlines the fusions of `waiting` (fusions_waiting_for_opset) that need kIntermediateOpset, in the
// main graph. They are taken in the order the opsets would fuse them, the lowest opset first, larger
// ones first among them: a LayerNorm, which opset 17 fuses whole, stays plain nodes rather than lose its
// tail to an RMSNormalization call. A fusion is also left as it is when a value inside it is read
// outside (the call replaces the root, and only the root's readers follow it). Returns how many became
// calls.
inline std::size_t outline_intermediate_functions(ir::Model& model,
                                                  std::vector<FusionWaitingForOpset> waiting) {
  std::stable_sort(waiting.begin(), waiting.end(),
                   [](const FusionWaitingForOpset& a, const FusionWaitingForOpset& b) {
                     return a.opset != b.opset ? a.opset < b.opset : a.nodes.size() > b.nodes.size();
                   });
  ir::Graph& g = *model.graph;
  const std::string domain(kIntermediateDomain);
  std::unordered_set<ir::NodeId> taken;
  std::size_t outlined = 0;
  for (const FusionWaitingForOpset& fusion : waiting) {
    if (std::any_of(fusion.nodes.begin(), fusion.nodes.end(), [&](ir::NodeId id) { return taken.count(id); }))
      continue;
    taken.insert(fusion.nodes.begin(), fusion.nodes.end());
    if (fusion.opset < kIntermediateOpset) continue;
    const ir::NodeId root = fusion.nodes.front();
    const std::unordered_set<ir::NodeId> in(fusion.nodes.begin(), fusion.nodes.end());
    const std::vector<ir::NodeId> nodes = detail::producers_first(g, fusion.nodes, in);
    const functions::Boundary io = functions::boundary_of(
        g, nodes, [&](ir::NodeId id) { return in.count(id) > 0; }, functions::kDefaultConstantBytes);
    if (io.outputs.empty() || std::any_of(io.outputs.begin(), io.outputs.end(),
                                          [&](ir::ValueId v) { return g.value(v).producer != root; }))
      continue;
    const std::string name = functions::add_function(
        model, functions::function_of(g, nodes, io, fusion.rule, domain, model.opsets));
    const std::string node_name = g.node(root).name.empty() ? fusion.rule : g.node(root).name;
    functions::replace_by_call(g, nodes, io, name, domain, node_name, g.node(root).next);
    ++outlined;
  }
  return outlined;
}

}  // namespace xexp::optimizer
