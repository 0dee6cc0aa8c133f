#pragma once
// Opset upgrade of the default ONNX domain (`xexp optimize --target-opset N`): the model is rewritten
// so that it computes the same at opset N, each version's changes applied in turn (attributes that
// became inputs, Upsample to Resize, Softmax's new axis meaning, ...). Converted are the main graph,
// the If/Loop/Scan bodies at any depth, and the body of each local function importing the default
// domain (from its own opset; its opset_import follows).
//   - up to opset 17, ONNX's own version converter (libonnx, onnx::version_conversion::ConvertVersion)
//     adapts each node whose operator changed, one node at a time: it knows nothing of local functions,
//     their calls nor of attribute references, which it would mistake or drop in a whole graph. If, Loop
//     and Scan themselves only widened their types from opset 9 on: they stay, their bodies converted;
//   - from 17 on, our adapters (libonnx 1.12 knows no newer opset): the attributes that became inputs
//     (onnx/schema.hpp's table: the Reduce* `axes` at 18, DFT's `axis` at 20, written out with the old
//     default when absent, as DFT's 1 differs from the new -2) and GridSample's modes, renamed at 20
//     (bilinear to linear, bicubic to cubic). Every other op of opsets 19 to 23 accepts its older form
//     as it is: they only gained types, attributes or modes whose defaults keep the old meaning.
// Refused, with an xexp::Error naming the node and the model left as it was: a downgrade, a target
// beyond kMaxTargetOpset, a node of another domain than ONNX's that is no call of a local function, an
// op ONNX does not define at the opset it is at (its registry in libonnx, a table of the ops added from
// 18 to 23 that it lacks), GroupNormalization across opset 21 (its scale
// and bias go from one value per group to one per channel), a changed op inside a function reading one
// of the function's attributes, and whatever ONNX's converter fails on.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <onnx/version_converter/convert.h>

#include "xexp/core/error.hpp"
#include "xexp/ir/cleanup.hpp"
#include "xexp/ir/constant_node.hpp"
#include "xexp/ir/copy.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/onnx/load.hpp"
#include "xexp/onnx/save.hpp"
#include "xexp/onnx/schema.hpp"
#include "xexp/onnx/validate.hpp"

namespace xexp {

// The newest default-domain opset upgrade_opset reaches.
inline constexpr int64_t kMaxTargetOpset = 23;
// The newest ONNX's converter in libonnx 1.12 reaches.
inline constexpr int64_t kOnnxConverterMaxOpset = 17;

namespace detail {

// The IR version a model at `opset` needs at least (ONNX's versioning table).
inline int64_t min_ir_version(int64_t opset) {
  if (opset >= 23) return 11;
  if (opset >= 21) return 10;
  if (opset >= 19) return 9;
  if (opset >= 15) return 8;
  if (opset >= 12) return 7;
  if (opset >= 11) return 6;
  if (opset >= 10) return 5;
  if (opset >= 9) return 4;
  return 3;
}

// A graph the upgrade converts: the main graph, a function body or a subgraph of either, with the
// default-domain opset its nodes are at.
struct UpgradeScope {
  ir::Graph* graph;
  int64_t from;
  ir::Function* function;  // the function the graph belongs to; nullptr in the main graph
};

inline std::string upgrade_failure(const UpgradeScope& s, int64_t target) {
  std::string text = "cannot upgrade opset " + std::to_string(s.from) + " to " + std::to_string(target);
  if (s.function) text += " in function " + s.function->domain + "." + s.function->name;
  return text;
}

// Every graph whose nodes move from an older opset to `target`; throws for a function importing a newer
// default-domain opset than `target` (a downgrade).
inline std::vector<UpgradeScope> upgrade_scopes(ir::Model& model, int64_t from, int64_t target) {
  std::vector<UpgradeScope> scopes;
  auto add = [&](ir::Graph& g, int64_t at, ir::Function* f) {
    scopes.push_back({&g, at, f});
    ir::for_each_subgraph(g, [&](ir::Graph& body) { scopes.push_back({&body, at, f}); });
  };
  if (from < target) add(*model.graph, from, nullptr);
  for (ir::Function& f : model.functions) {
    const std::optional<int64_t> at = ir::find_opset(f.opsets, "");
    if (!at || *at == target) continue;  // no default-domain node inside, or nothing to change
    if (*at > target)
      throw Error("cannot downgrade opset " + std::to_string(*at) + " to " + std::to_string(target) +
                  " in function " + f.domain + "." + f.name + " (--target-opset only upgrades)");
    add(*f.body, *at, &f);
  }
  return scopes;
}

// Whether ONNX's converter has something to change in node `n` from `from` to `target`: its operator
// has a newer version in between. If, Loop and Scan are kept (their bodies are scopes of their own).
inline bool changes_before(const ir::Node& n, int64_t from, int64_t target) {
  const int64_t onnx_target = std::min(target, kOnnxConverterMaxOpset);
  if (!n.domain.empty() || n.has_subgraphs() || from >= onnx_target) return false;
  const ::onnx::OpSchema* schema = find_schema(n.op_type.view(), "", onnx_target);
  return schema && schema->since_version() > from;
}

// The attribute of `n` that becomes an input between `from` and `target` at an opset after
// kOnnxConverterMaxOpset, our adapters' part; nullptr when none does.
inline const AttributeBecameInput* attribute_moving(const ir::Node& n, int64_t from, int64_t target) {
  if (!n.domain.empty()) return nullptr;
  for (const AttributeBecameInput& e : attributes_that_became_inputs())
    if (e.op == n.op_type.view() && e.since > std::max(from, kOnnxConverterMaxOpset) && e.since <= target)
      return &e;
  return nullptr;
}

// The value attribute_moving's attribute had in `n`: its own, else the default of the version before
// the move; nullopt when it has neither (an absent `axes` reduces every axis, before and after).
inline std::optional<ir::Attribute> moving_value(const ir::Node& n, const AttributeBecameInput& e) {
  if (const ir::Attribute* a = n.attribute(Symbol(e.attribute))) return *a;
  return attribute_default(e.op, "", e.since - 1, e.attribute);
}

inline bool grid_sample_modes_renamed(const ir::Node& n, int64_t from, int64_t target) {
  return n.domain.empty() && n.op_type.view() == "GridSample" && from < 20 && target >= 20;
}

// Whether our adapters rewrite `n` (from 17 on).
inline bool adapted_after_converter(const ir::Node& n, int64_t from, int64_t target) {
  const AttributeBecameInput* e = attribute_moving(n, from, target);
  return (e && moving_value(n, *e)) || grid_sample_modes_renamed(n, from, target);
}

// The opset that added `op` to the default domain when it is one of those added from 18 to 23, which
// libonnx 1.12 does not know; 0 for any other op. Each kept its form up to 23, but GroupNormalization.
inline int64_t added_after_converter(std::string_view op) {
  static constexpr std::pair<std::string_view, int64_t> added[] = {
      {"BitwiseAnd", 18},
      {"BitwiseNot", 18},
      {"BitwiseOr", 18},
      {"BitwiseXor", 18},
      {"CenterCropPad", 18},
      {"Col2Im", 18},
      {"GroupNormalization", 18},
      {"Mish", 18},
      {"DeformConv", 19},
      {"AffineGrid", 20},
      {"Gelu", 20},
      {"ImageDecoder", 20},
      {"RegexFullMatch", 20},
      {"StringConcat", 20},
      {"StringSplit", 20},
      {"Attention", 23},
      {"RMSNormalization", 23},
      {"RotaryEmbedding", 23},
  };
  for (const auto& [name, since] : added)
    if (name == op) return since;
  return 0;
}

// Throws when node `n` of scope `s` cannot be upgraded to `target`.
inline void check_upgradable(const ir::Model& model, const UpgradeScope& s, const ir::Node& n,
                             int64_t target) {
  const Error::Where at{.node = node_label(n), .value = {}};
  if (!n.domain.empty()) {
    if (model.find_function(n.domain.view(), n.op_type.view())) return;  // a call: the body is a scope
    throw Error(upgrade_failure(s, target) + ": " + n.domain.str() + "." + n.op_type.str() +
                    " is outside the default domain, which ONNX's version converter does not handle",
                at);
  }
  if (n.op_type.view() == "GroupNormalization" && s.from < 21 && target >= 21)
    throw Error(upgrade_failure(s, target) +
                    ": GroupNormalization's scale and bias hold one value per group before opset 21 and one "
                    "per channel from it, which the upgrade does not adapt",
                at);
  const int64_t added = added_after_converter(n.op_type.view());
  if (added ? added > s.from : !find_schema(n.op_type.view(), "", s.from))
    throw Error(upgrade_failure(s, target) + ": ONNX knows no operator " + n.op_type.str() + " at opset " +
                    std::to_string(s.from),
                at);
  if (n.has_subgraphs() && s.from < 9)
    throw Error(upgrade_failure(s, target) + ": " + n.op_type.str() +
                    " holds a subgraph, which the upgrade converts from opset 9 only",
                at);
  if (changes_before(n, s.from, target) || adapted_after_converter(n, s.from, target))
    for (const ir::Attribute& a : n.attributes)
      if (!a.ref_attr_name.empty())
        throw Error(upgrade_failure(s, target) + ": " + n.op_type.str() + " changes and its attribute " +
                        a.name.str() + " refers to the function's attribute " + a.ref_attr_name,
                    at);
}

// ONNX's converter on node `id` of `g` alone: a model at `from` holding only that node, whose inputs
// are typed as `g` types them, converted to `target` (<= 17).
inline ir::Model convert_node_with_onnx(const ir::Graph& g, ir::NodeId id, int64_t from, int64_t target) {
  ir::Model single;
  single.ir_version = min_ir_version(from);
  single.opsets.emplace_back().version = from;
  ir::Graph& s = *single.graph;
  s.name = "upgraded_node";
  const ir::Node& n = g.node(id);
  ir::ValueMap map(g.value_capacity());
  for (ir::ValueId in : n.inputs)
    if (in != ir::kNone && !map[in])
      map[in] = s.add_input(g.value(in).name, g.value(in).elem, g.value(in).shape);
  ir::copy_node(g, id, s, map);
  for (ir::ValueId out : n.outputs)
    if (out != ir::kNone) s.add_output(*map[out]);
  ::onnx::ModelProto converted;
  try {
    converted = ::onnx::version_conversion::ConvertVersion(model_to_proto(std::move(single)),
                                                           static_cast<int>(target));
  } catch (const std::exception& e) {
    throw Error("cannot upgrade opset " + std::to_string(from) + " to " + std::to_string(target) +
                    ": ONNX's version converter failed: " + e.what(),
                {.node = node_label(n), .value = {}});
  }
  return model_from_proto(std::move(converted));
}

// Node `id` of `g` becomes the nodes of `converted` (convert_node_with_onnx's model): its inputs and
// outputs are the node's values; what the adapters created gets a fresh name after the node, without
// a type (inference gives it), and their constants become initializers of `g`.
inline void replace_by_converted(ir::Graph& g, ir::NodeId id, const ir::Model& converted) {
  const ir::Graph& s = *converted.graph;
  const std::string label = node_label(g.node(id));
  ir::ValueMap map(s.value_capacity());
  for (ir::ValueId init : s.initializers())
    if (s.value(init).initializer)
      map[init] = g.add_initializer(g.unique_value_name(label + "_" + s.value(init).name),
                                    *s.value(init).initializer);
  for (ir::ValueId in : s.inputs())
    if (!map[in]) map[in] = g.at(s.value(in).name);
  const std::vector<ir::ValueId> outputs = g.node(id).outputs;
  std::size_t k = 0;
  for (ir::ValueId out : outputs)
    if (out != ir::kNone) map[s.outputs().at(k++)] = out;
  const ir::NodeId before = g.node(id).next;
  g.remove_node(id);
  const ir::ValueId first_created = static_cast<ir::ValueId>(g.value_capacity());
  ir::CopyPolicy policy;
  policy.value_name = [&](ir::Graph& dst, const std::string& name) {
    return dst.unique_value_name(label + "_" + name);
  };
  policy.node_name = [&](ir::Graph& dst, const std::string& name) {
    return dst.unique_node_name(name.empty() ? label : name);
  };
  ir::copy_nodes(s, g, map, before, policy);
  for (auto v = first_created; v < static_cast<ir::ValueId>(g.value_capacity()); ++v) {
    g.value(v).elem = ElemType::Undefined;
    g.value(v).shape.reset();
  }
}

// Our adapters on graph `g` of a scope upgraded from `from` to `target` (> kOnnxConverterMaxOpset), once
// ONNX's converter has brought its nodes to that opset: moved attributes become int64 initializers (a
// list for a list attribute, a scalar for an int) read as their input, GridSample's modes get their new
// names.
inline void adapt_after_converter(ir::Graph& g, int64_t from, int64_t target) {
  static const Symbol mode_name("mode");
  for (ir::NodeId id : g.nodes()) {
    ir::Node& n = g.node(id);
    if (grid_sample_modes_renamed(n, from, target))
      if (ir::Attribute* mode = n.attribute(mode_name))
        mode->s = mode->s == "bilinear" ? "linear" : mode->s == "bicubic" ? "cubic" : mode->s;
    const AttributeBecameInput* e = attribute_moving(n, from, target);
    const std::optional<ir::Attribute> value = e ? moving_value(n, *e) : std::nullopt;
    if (!value) continue;
    const Symbol name(e->attribute);
    std::erase_if(n.attributes, [&](const ir::Attribute& a) { return a.name == name; });
    const auto count = static_cast<int64_t>(value->ints.size());
    const ir::ValueId input =
        g.add_initializer(g.unique_value_name(node_label(n) + "_" + std::string(e->attribute)),
                          value->type == ir::AttrType::Ints ? Tensor::from<int64_t>({count}, value->ints)
                                                            : Tensor::scalar<int64_t>(value->i));
    const auto index = static_cast<std::size_t>(e->input_index);
    g.node(id).inputs.resize(std::max(g.node(id).inputs.size(), index + 1), ir::kNone);
    g.set_node_input(id, e->input_index, input);
  }
}

}  // namespace detail

// Upgrades the default domain of `model` to `target` (see the top of this file). Nothing changes when
// the model is already at `target`.
inline void upgrade_opset(ir::Model& model, int64_t target) {
  const int64_t from = model.opset("").value_or(0);
  if (from == 0) throw Error("cannot upgrade the opset: the model imports no default-domain opset");
  if (target < from)
    throw Error("cannot downgrade opset " + std::to_string(from) + " to " + std::to_string(target) +
                " (--target-opset only upgrades)");
  if (target > kMaxTargetOpset)
    throw Error("cannot upgrade opset " + std::to_string(from) + " to " + std::to_string(target) +
                ": the newest opset supported is " + std::to_string(kMaxTargetOpset));
  const std::vector<detail::UpgradeScope> scopes = detail::upgrade_scopes(model, from, target);
  // Everything is checked and converted aside before the model changes, so that a refusal leaves it whole.
  struct Replacement {
    ir::Graph* graph;
    ir::NodeId node;
    ir::Model converted;
  };
  std::vector<Replacement> replacements;
  for (const detail::UpgradeScope& s : scopes)
    for (ir::NodeId id : s.graph->nodes()) {
      detail::check_upgradable(model, s, s.graph->node(id), target);
      if (detail::changes_before(s.graph->node(id), s.from, target))
        replacements.push_back(
            {s.graph, id,
             detail::convert_node_with_onnx(*s.graph, id, s.from, std::min(target, kOnnxConverterMaxOpset))});
    }
  for (const Replacement& r : replacements) detail::replace_by_converted(*r.graph, r.node, r.converted);
  if (target > kOnnxConverterMaxOpset)
    for (const detail::UpgradeScope& s : scopes) detail::adapt_after_converter(*s.graph, s.from, target);
  for (ir::Function& f : model.functions) {
    // A function body holds no initializers: the adapters' constants become Constant nodes there.
    ir::initializers_to_constant_nodes(*f.body);
    for (ir::OpsetImport& o : f.opsets)
      if ((o.domain.empty() || o.domain == "ai.onnx") && o.version < target) o.version = target;
  }
  for (ir::OpsetImport& o : model.opsets)
    if (o.domain.empty() || o.domain == "ai.onnx") o.version = target;
  model.ir_version = std::max(model.ir_version, detail::min_ir_version(target));
}

}  // namespace xexp
