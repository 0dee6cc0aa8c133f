#pragma once
// Intermediate results kept in one ONNX file (seed 002): each tensor is the `value` of a Constant node
// whose output carries the result's name, and every such output is a graph output. Any runtime restores
// them by running the file; load_intermediates reads them back by name without running anything.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "xexp/ir/model.hpp"
#include "xexp/onnx/load.hpp"
#include "xexp/onnx/save.hpp"

namespace xexp::tools {

// The model holding `tensors` (name, value), in this order; a name seen twice keeps its first value.
inline ir::Model intermediates_model(const std::vector<std::pair<std::string, Tensor>>& tensors) {
  ir::Model model;
  model.opsets.push_back({.domain = "", .version = 18, .unknown = {}, .presence = 0});
  model.producer_name = "xexp";
  ir::Graph& g = *model.graph;
  g.name = "intermediates";
  for (const auto& [name, tensor] : tensors) {
    if (g.has_value(name)) continue;
    const ir::ValueId out = g.add_value(name);
    g.value(out).elem = tensor.type();
    g.value(out).shape = tensor.shape();
    g.add_node(Symbol("Constant"), {}, {out}, {ir::Attribute::make_tensor(Symbol("value"), tensor)}, name);
    g.add_output(out);
  }
  return model;
}

inline void save_intermediates(const std::vector<std::pair<std::string, Tensor>>& tensors, const std::string& path) {
  save_model(intermediates_model(tensors), path);
}

// The tensors of a file written by save_intermediates, by name.
inline std::map<std::string, Tensor> load_intermediates(const std::string& path) {
  const ir::Model model = load_model(path);
  const ir::Graph& g = *model.graph;
  std::map<std::string, Tensor> out;
  for (ir::NodeId nid : g.nodes()) {
    const ir::Node& n = g.node(nid);
    const ir::Attribute* value = n.attribute(Symbol("value"));
    if (!n.domain.empty() || n.op_type.view() != "Constant" || !value || value->tensors.empty() || n.outputs.size() != 1)
      throw Error("'" + path + "' is not a file of intermediate results: only Constant nodes with a tensor 'value' are expected",
                  {.node = n.name.empty() ? n.op_type.str() : n.name, .value = {}});
    out.emplace(g.value(n.outputs[0]).name, value->tensors[0]);
  }
  return out;
}

}  // namespace xexp::tools
