#pragma once
// xexp::aten::lower: a model in domain `aten` (one node per aten call, as python/xexp/_capture.py
// writes it: tensor arguments as inputs, the others as attributes named after the schema's arguments,
// every value typed by the trace, module paths in the nodes' metadata as torch's dynamo exporter writes
// them) to a standard ONNX model, one converter per aten op (converters.hpp) over a GraphBuilder.
// - Linear layers make_fx decomposed into 2-D products between views are put back first
//   (linear_layers.hpp), on a copy.
// - Only the nodes the outputs need are converted: an op without a converter fails only when it counts,
//   and one Error lists every such op with the module that called it, before anything is built.
// - Each converter's results are checked against the trace: a different dtype gets a Cast (torch's
//   promotion rules stay in the trace), a different shape is an error naming the node.
// - Every node is built inside the module scopes its metadata names (functions/torch_modules.hpp), so
//   that modules become local functions by the builder's own mechanism (functions/module_export.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xexp/aten/converters.hpp"
#include "xexp/aten/linear_layers.hpp"
#include "xexp/builder/graph_builder.hpp"
#include "xexp/functions/module_export.hpp"
#include "xexp/functions/torch_modules.hpp"
#include "xexp/ir/copy.hpp"
#include "xexp/ir/model.hpp"

namespace xexp::aten {

inline constexpr std::string_view kAtenDomain = "aten";

struct LowerOptions {
  int64_t opset = 18;
  // Modules as local functions in domain aten_local_function: every module instance of the first
  // `module_depth` levels (0: all levels) whose class is in `module_classes` (qualified as Python
  // writes them, `torch.nn.modules.linear.Linear`; empty: every class).
  bool module_functions = false;
  std::size_t module_depth = 0;
  std::vector<std::string> module_classes = {};
};

inline bool is_aten_model(const ir::Model& model) { return model.opset(kAtenDomain).has_value(); }

namespace detail {

// "module 'h.0.attn' (Gpt2Attention)" for a node traced inside a module, "" at the top level.
inline std::string module_text(const ModuleStack& stack) {
  if (stack.empty()) return {};
  return " in module '" + stack.back().path + "' (" + stack.back().type + ")";
}

class Lowering {
 public:
  Lowering(const ir::Graph& aten, const LowerOptions& options)
      : graph_(aten), options_(options), g_(options.opset), names_(graph_.value_capacity()) {}

  ir::Model run() && {
    mark_live_nodes();
    check_converters();
    for (ir::ValueId id : graph_.inputs()) {
      const ir::Value& v = graph_.value(id);
      if (v.is_initializer()) continue;
      names_[id] = g_.make_tensor_input(v.name, v.elem, v.shape);
    }
    {
      std::vector<ModuleGuard<GraphBuilder>> open;
      ModuleStack open_stack;
      for (ir::NodeId id : graph_.nodes()) {
        if (!live_[id]) continue;
        const ModuleStack stack = functions::torch_module_stack(graph_.node(id), options_.module_depth);
        std::size_t common = 0;
        while (common < open_stack.size() && common < stack.size() && open_stack[common] == stack[common]) ++common;
        while (open.size() > common) {
          open.pop_back();
          open_stack.pop_back();
        }
        for (std::size_t d = common; d < stack.size(); ++d) {
          open.push_back(g_.module(stack[d].path, stack[d].type));
          open_stack.push_back(stack[d]);
        }
        convert(id, stack);
      }
      while (!open.empty()) open.pop_back();  // innermost first
    }
    const std::vector<ir::ValueId>& outputs = graph_.outputs();
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const std::string name = "output_" + std::to_string(k);
      g_.op.Identity(input_name(outputs[k]), {}, {.outputs = {name}});
      g_.make_tensor_output(name);
    }
    if (!options_.module_functions) return g_.to_model();
    functions::FunctionExportOptions export_options;
    export_options.add.merge_any_name = true;
    export_options.is_weight = [this](const ir::Value& v) {
      const std::optional<ir::ValueId> id = graph_.find(v.name);
      return id && graph_.value(*id).is_initializer();  // a parameter or buffer of the model
    };
    if (!options_.module_classes.empty())
      export_options.export_module = [this](const ModuleScope& scope) {
        return std::any_of(options_.module_classes.begin(), options_.module_classes.end(), [&](const std::string& c) {
          return functions::detail::function_name_of_class(c) == scope.type;
        });
      };
    return functions::export_modules_as_functions(g_, export_options);
  }

 private:
  // Nodes whose results reach an output, walking back from the outputs.
  void mark_live_nodes() {
    live_.assign(graph_.node_capacity(), false);
    std::vector<bool> needed(graph_.value_capacity(), false);
    for (ir::ValueId id : graph_.outputs()) needed[id] = true;
    std::vector<ir::NodeId> order;
    for (ir::NodeId id : graph_.nodes()) order.push_back(id);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const ir::Node& n = graph_.node(*it);
      if (std::none_of(n.outputs.begin(), n.outputs.end(), [&](ir::ValueId v) { return v != ir::kNone && needed[v]; }))
        continue;
      live_[*it] = true;
      for (ir::ValueId in : n.inputs)
        if (in != ir::kNone) needed[in] = true;
    }
  }

  void check_converters() const {
    std::vector<std::string> missing;
    for (ir::NodeId id : graph_.nodes()) {
      if (!live_[id]) continue;
      const ir::Node& n = graph_.node(id);
      if (n.domain.view() == kAtenDomain && converter_table().find(n.op_type.view())) continue;
      const std::string op = n.domain.view() == kAtenDomain ? "aten::" + n.op_type.str()
                                                               : n.domain.str() + "::" + n.op_type.str();
      missing.push_back(op + " (node '" + n.name + "'" + module_text(functions::torch_module_stack(n)) + ")");
    }
    if (missing.empty()) return;
    std::string list;
    for (const std::string& m : missing) list += "\n  " + m;
    throw Error(std::to_string(missing.size()) + " aten call" + (missing.size() > 1 ? "s have" : " has") +
                " no converter:" + list);
  }

  const std::string& input_name(ir::ValueId id) {
    if (names_[id].empty()) {
      const ir::Value& v = graph_.value(id);
      if (!v.initializer) throw Error("no value computes it", {.node = {}, .value = v.name});
      names_[id] = g_.make_initializer(v.name, *v.initializer);
    }
    return names_[id];
  }

  void convert(ir::NodeId id, const ModuleStack& stack) {
    const ir::Node& n = graph_.node(id);
    try {
      NodeLowering c(g_, graph_, n, [this](ir::ValueId v) -> const std::string& { return input_name(v); });
      converter_table().find(n.op_type.view())(c);
      for (std::size_t k = 0; k < n.outputs.size(); ++k) {
        if (n.outputs[k] == ir::kNone) continue;
        const ir::Value& expected = graph_.value(n.outputs[k]);
        std::string name = c.results()[k];
        if (name.empty()) {
          if (expected.is_read()) c.fail("the converter gives no result " + std::to_string(k));
          continue;
        }
        if (expected.elem != ElemType::Undefined) name = c.cast(name, expected.elem);
        if (expected.shape) g_.set_shape(name, *expected.shape);
        names_[n.outputs[k]] = name;
      }
    } catch (const Error& e) {
      // The builder's debug dump is the whole graph so far: the node, its module and the cause say more.
      throw Error("aten::" + n.op_type.str() + module_text(stack) + ": " + e.cause(), {.node = n.name, .value = e.value()});
    }
  }

  const ir::Graph& graph_;
  const LowerOptions& options_;
  GraphBuilder g_;
  std::vector<std::string> names_;  // aten value -> builder name ("" until computed)
  std::vector<bool> live_;
};

}  // namespace detail

// The standard ONNX model computing what `aten` (an aten-domain model) computes. `aten` is not modified.
inline ir::Model lower(const ir::Model& aten, const LowerOptions& options = {}) {
  if (!is_aten_model(aten)) throw Error("not an aten-domain model: it imports no opset of domain 'aten'");
  const std::unique_ptr<ir::Graph> graph = ir::clone(*aten.graph);
  restore_linear_layers(*graph);
  restore_batched_matmuls(*graph);
  return detail::Lowering(*graph, options).run();
}

}  // namespace xexp::aten
