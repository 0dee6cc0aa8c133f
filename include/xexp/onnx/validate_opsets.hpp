#pragma once
// Ops used at an opset older than ONNX's first definition of them (LayerNormalization in a model importing
// opset 1): ONNX has no such op there, so typing, folding or running the node would follow a definition
// the model never asked for. Ops the registry does not know at all (ONNX 1.12's registry stops at opset
// 17) are left to the layers that meet them.
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xexp/ir/model.hpp"
#include "xexp/onnx/schema.hpp"
#include "xexp/onnx/validate.hpp"

namespace xexp::detail {

// Ops ONNX Runtime registers in the default domain from opset 1, before ONNX defines them: the
// onnxruntime rule set writes them at the model's opset, and ONNX Runtime's own optimized models hold them.
inline bool runtime_defines_at_any_opset(std::string_view op_type) { return op_type == "LayerNormalization"; }

// Throws naming the first node of the default domain, in the main graph, a subgraph or a local function
// body, whose op begins at a later opset than the one imported where it sits. Iterative: subgraphs may nest
// deep.
inline void validate_op_opsets(const ir::Model& model) {
  std::vector<std::pair<const ir::Graph*, const std::vector<ir::OpsetImport>*>> graphs{{model.graph.get(), &model.opsets}};
  for (const ir::Function& f : model.functions)
    graphs.emplace_back(f.body.get(), f.opsets.empty() ? &model.opsets : &f.opsets);
  const FunctionIndex functions(model);
  while (!graphs.empty()) {
    const auto [g, opsets] = graphs.back();
    graphs.pop_back();
    if (!g) continue;
    const std::optional<int64_t> opset = ir::find_opset(*opsets, "");
    for (ir::NodeId id : g->nodes()) {
      const ir::Node& node = g->node(id);
      for (const ir::Attribute& a : node.attributes)
        for (const auto& sub : a.graphs) graphs.emplace_back(sub.get(), opsets);
      if (!opset || !(node.domain.empty() || node.domain.view() == "ai.onnx") ||
          functions.called(node) ||
          runtime_defines_at_any_opset(node.op_type.view()))
        continue;
      const ::onnx::OpSchema* first = find_schema(node.op_type.view(), "", std::numeric_limits<int>::max());
      if (!first) continue;
      while (const ::onnx::OpSchema* older = find_schema(node.op_type.view(), "", first->SinceVersion() - 1)) first = older;
      if (*opset >= first->SinceVersion()) continue;
      throw Error(node.op_type.str() + " does not exist at opset " + std::to_string(*opset) +
                      " of the default domain (ONNX defines it from opset " + std::to_string(first->SinceVersion()) + ")",
                  {.node = node.name.empty() ? node.op_type.str() : node.name, .value = {}});
    }
  }
}

}  // namespace xexp::detail
