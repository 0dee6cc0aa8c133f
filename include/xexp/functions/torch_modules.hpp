#pragma once
// Modules of any torch export as local functions. Torch's exporters record which module instance each
// node comes from:
// - the TorchScript exporter in the node name, one segment per module: `/h.0/attn/c_attn/MatMul` is
//   op MatMul in module h.0.attn.c_attn, itself inside h.0.attn and h.0 (no class names);
// - the dynamo exporter in the node's metadata_props: `pkg.torch.onnx.name_scopes` = "['', 'h.0',
//   'h.0.attn', 'matmul']" (the root module first, the node's own name last) and, level by level,
//   `pkg.torch.onnx.class_hierarchy` = "['GPT', 'Block', 'torch.nn.modules.linear.Linear', 'aten.mm']".
// Every module instance, nested ones included, becomes a call of a local function (module_export.hpp),
// named after its class when the export records it (torch.nn classes by their short name, as
// experimental-experiment names them), else after its attribute name without list indices (`h.0` ->
// `h`). Identical bodies are one function whatever their names: without classes, q_proj and k_proj
// would otherwise never share their Linear body. Nodes without a module path stay in the main graph.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xexp/builder/module_scope.hpp"
#include "xexp/functions/module_export.hpp"
#include "xexp/ir/constant_node.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/onnx/node_metadata.hpp"

namespace xexp::functions {

inline constexpr std::string_view kTorchNameScopesKey = "pkg.torch.onnx.name_scopes";
inline constexpr std::string_view kTorchClassHierarchyKey = "pkg.torch.onnx.class_hierarchy";

struct TorchModuleOptions {
  // Only the outermost `max_depth` levels of modules become functions (0: every level); the nodes of
  // deeper modules go to their enclosing function.
  std::size_t max_depth = 0;
  FunctionExportOptions export_options = {};
};

namespace detail {

// A Python list of strings as repr() writes it ("['', 'h.0', \"it's\"]"); nullopt for anything else.
inline std::optional<std::vector<std::string>> parse_python_string_list(std::string_view text) {
  std::vector<std::string> items;
  std::size_t i = 0;
  auto skip_spaces = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  skip_spaces();
  if (i == text.size() || text[i++] != '[') return std::nullopt;
  skip_spaces();
  if (i < text.size() && text[i] == ']') return items;
  while (i < text.size()) {
    const char quote = text[i++];
    if (quote != '\'' && quote != '"') return std::nullopt;
    std::string item;
    while (i < text.size() && text[i] != quote) {
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      item += text[i++];
    }
    if (i++ == text.size()) return std::nullopt;
    items.push_back(std::move(item));
    skip_spaces();
    if (i == text.size()) return std::nullopt;
    if (text[i] == ']') return items;
    if (text[i++] != ',') return std::nullopt;
    skip_spaces();
  }
  return std::nullopt;
}

// The last component of a module path without the list indices after it: `h.0` -> `h`,
// `model.layers.12` -> `layers`, `0` -> `0`.
inline std::string module_attribute_name(std::string_view path) {
  auto is_index = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  std::string_view rest = path;
  while (true) {
    const std::size_t dot = rest.rfind('.');
    if (dot == std::string_view::npos || !is_index(rest.substr(dot + 1))) break;
    rest = rest.substr(0, dot);
  }
  const std::size_t dot = rest.rfind('.');
  return std::string(dot == std::string_view::npos ? rest : rest.substr(dot + 1));
}

// `torch.nn.modules.linear.Linear` -> `Linear`; a user's class keeps its module (`__main__.Block`).
inline std::string function_name_of_class(std::string_view qualified) {
  if (!qualified.starts_with("torch.")) return std::string(qualified);
  const std::size_t dot = qualified.rfind('.');
  return std::string(qualified.substr(dot + 1));
}

// From dynamo's metadata; nullopt when the node has none (or it cannot be read).
inline std::optional<ModuleStack> module_stack_from_metadata(const ir::Node& n) {
  const std::optional<std::string> scopes_text = node_metadata(n, kTorchNameScopesKey);
  if (!scopes_text) return std::nullopt;
  const std::optional<std::vector<std::string>> scopes = parse_python_string_list(*scopes_text);
  if (!scopes) return std::nullopt;
  std::optional<std::vector<std::string>> classes;
  if (const std::optional<std::string> classes_text = node_metadata(n, kTorchClassHierarchyKey))
    classes = parse_python_string_list(*classes_text);
  if (classes && classes->size() != scopes->size()) classes.reset();
  ModuleStack stack;
  // [0] is the root module (the whole model), the last entry the node itself.
  for (std::size_t k = 1; k + 1 < scopes->size(); ++k) {
    const std::string& path = (*scopes)[k];
    stack.push_back({path, classes ? function_name_of_class((*classes)[k]) : module_attribute_name(path)});
  }
  return stack;
}

// From a TorchScript node name `/a/b.0/c/Op_3`; empty for a name that does not start with '/'.
inline ModuleStack module_stack_from_name(std::string_view name) {
  ModuleStack stack;
  if (!name.starts_with('/')) return stack;
  std::string path;
  std::size_t start = 1;
  for (std::size_t slash = name.find('/', start); slash != std::string_view::npos;
       slash = name.find('/', start)) {
    const std::string_view segment = name.substr(start, slash - start);
    start = slash + 1;
    if (segment.empty()) continue;
    if (!path.empty()) path += '.';
    path += segment;
    stack.push_back({path, module_attribute_name(segment)});
  }
  return stack;
}

}  // namespace detail

// The modules node `n` of a torch export was created in, outermost first: from its metadata when the
// dynamo exporter wrote some, else from its TorchScript name. Empty: the model itself.
inline ModuleStack torch_module_stack(const ir::Node& n, std::size_t max_depth = 0) {
  std::optional<ModuleStack> stack = detail::module_stack_from_metadata(n);
  if (!stack) stack = detail::module_stack_from_name(n.name);
  if (max_depth && stack->size() > max_depth) stack->resize(max_depth);
  return std::move(*stack);
}

// `model` (a torch export) with every module instance as a call of a local function in domain
// aten_local_function (module_export.hpp says how boundaries, weights and nesting are handled). The
// main graph's Constant nodes first become initializers: the small ones then come back as Constant
// nodes inside each body that reads them, where the rules see them, and the exporter's constants that
// carry no module path (TorchScript's `Constant_15`) do not cut a module's nodes in two.
inline ir::Model export_torch_modules_as_functions(ir::Model model, const TorchModuleOptions& options = {}) {
  ir::constant_nodes_to_initializers(*model.graph);
  std::vector<ModuleStack> stacks(model.graph->node_capacity());
  for (ir::NodeId id : model.graph->nodes())
    stacks[id] = torch_module_stack(model.graph->node(id), options.max_depth);
  FunctionExportOptions export_options = options.export_options;
  export_options.add.merge_any_name = true;
  return export_modules_as_functions(
      model, [&](ir::NodeId id) -> const ModuleStack& { return stacks[id]; }, export_options);
}

}  // namespace xexp::functions
