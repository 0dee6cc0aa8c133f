#pragma once
// Opset upgrade of the default ONNX domain (`xexp optimize --target-opset N`): the model is rewritten
// so that it computes the same at opset N, each version's changes applied in turn (attributes that
// became inputs, Upsample to Resize, Softmax's new axis meaning, ...).
//   - up to opset 17, ONNX's own version converter (libonnx, onnx::version_conversion::ConvertVersion)
//     rewrites the ModelProto;
//   - from 17 to 18, our adapter moves the `axes` attribute of the Reduce* ops that take it as an input
//     from 18 (onnx/schema.hpp's table); every other op of opset 18 accepts its opset 17 form as it is.
// ONNX's converter rewrites only the main graph's default-domain nodes, so a model it would leave half
// converted is refused: a node of another domain, a subgraph, a local function, an op ONNX's registry
// does not know at the model's opset. A refusal, a downgrade or a target beyond kMaxTargetOpset is an
// xexp::Error naming the node, and the model is left as it was.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <onnx/version_converter/convert.h>

#include "xexp/core/error.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/onnx/load.hpp"
#include "xexp/onnx/save.hpp"
#include "xexp/onnx/schema.hpp"
#include "xexp/onnx/validate.hpp"

namespace xexp {

// The newest default-domain opset upgrade_opset reaches.
inline constexpr int64_t kMaxTargetOpset = 18;
// The newest ONNX's converter in libonnx 1.12 reaches.
inline constexpr int64_t kOnnxConverterMaxOpset = 17;

namespace detail {

// The IR version a model at `opset` needs at least (ONNX's versioning table).
inline int64_t min_ir_version(int64_t opset) {
  if (opset >= 15) return 8;
  if (opset >= 12) return 7;
  if (opset >= 11) return 6;
  if (opset >= 10) return 5;
  if (opset >= 9) return 4;
  return 3;
}

// Throws when ONNX's converter could not convert every node of `model` from `from`.
inline void check_convertible(const ir::Model& model, int64_t from, int64_t target) {
  const std::string upgrade = "cannot upgrade opset " + std::to_string(from) + " to " + std::to_string(target);
  if (!model.functions.empty())
    throw Error(upgrade + ": the model has local functions (" + model.functions.front().name +
                ", ...), which the upgrade does not convert");
  const ir::Graph& g = *model.graph;
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    if (!n.domain.empty())
      throw Error(upgrade + ": " + n.domain.str() + "." + n.op_type.str() +
                      " is outside the default domain, which ONNX's version converter does not handle",
                  {.node = node_label(n), .value = {}});
    if (n.has_subgraphs())
      throw Error(upgrade + ": " + n.op_type.str() + " holds a subgraph, which the upgrade does not convert",
                  {.node = node_label(n), .value = {}});
    if (!find_schema(n.op_type.view(), "", from))
      throw Error(upgrade + ": ONNX knows no operator " + n.op_type.str() + " at opset " + std::to_string(from),
                  {.node = node_label(n), .value = {}});
  }
}

// The first node whose op type ends ONNX's converter message ("No Adapter For Upsample").
inline std::string node_named_in(const ir::Graph& g, const std::string& message) {
  for (ir::NodeId id : g.nodes()) {
    const std::string op = g.node(id).op_type.str();
    if (message.size() >= op.size() + 1 && message.ends_with(" " + op)) return node_label(g.node(id));
  }
  return {};
}

// ONNX's converter on `model`, from `from` to `target` (<= 17). The value_info it adds (its own shape
// inference) is dropped: our inference types the model afterwards, from what the file said.
inline void convert_with_onnx(ir::Model& model, int64_t from, int64_t target) {
  ::onnx::ModelProto proto = model_to_proto(std::move(model));
  std::unordered_set<std::string> declared;
  for (const ::onnx::ValueInfoProto& vi : proto.graph().value_info()) declared.insert(vi.name());
  ::onnx::ModelProto converted;
  try {
    converted = ::onnx::version_conversion::ConvertVersion(proto, static_cast<int>(target));
  } catch (const std::exception& e) {
    model = model_from_proto(std::move(proto));
    throw Error("cannot upgrade opset " + std::to_string(from) + " to " + std::to_string(target) +
                    ": ONNX's version converter failed: " + e.what(),
                {.node = node_named_in(*model.graph, e.what()), .value = {}});
  }
  auto* value_info = converted.mutable_graph()->mutable_value_info();
  value_info->erase(std::remove_if(value_info->begin(), value_info->end(),
                                   [&](const ::onnx::ValueInfoProto& vi) { return !declared.contains(vi.name()); }),
                    value_info->end());
  model = model_from_proto(std::move(converted));
}

// Opset 17 to 18: Reduce* `axes` attributes become int64 initializers read as input 1.
inline void reduce_axes_to_inputs(ir::Graph& g) {
  static const Symbol axes_name("axes");
  for (ir::NodeId id : g.nodes()) {
    ir::Node& n = g.node(id);
    if (!n.domain.empty() || axes_became_input_at(n.op_type.view()) != 18) continue;
    const ir::Attribute* axes = n.attribute(axes_name);
    if (!axes) continue;  // no axes: every axis, the same at both opsets
    std::vector<int64_t> values = axes->ints;
    std::erase_if(n.attributes, [](const ir::Attribute& a) { return a.name == axes_name; });
    const auto count = static_cast<int64_t>(values.size());
    const ir::ValueId input = g.add_initializer(g.unique_value_name(node_label(n) + "_axes"),
                                                Tensor::from<int64_t>({count}, values));
    g.node(id).inputs.resize(std::max<std::size_t>(g.node(id).inputs.size(), 2), ir::kNone);
    g.set_node_input(id, 1, input);
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
  if (target == from) return;
  detail::check_convertible(model, from, target);
  if (from < kOnnxConverterMaxOpset) detail::convert_with_onnx(model, from, std::min(target, kOnnxConverterMaxOpset));
  if (target > kOnnxConverterMaxOpset) detail::reduce_axes_to_inputs(*model.graph);
  for (ir::OpsetImport& o : model.opsets)
    if (o.domain.empty() || o.domain == "ai.onnx") o.version = target;
  model.ir_version = std::max(model.ir_version, detail::min_ir_version(target));
}

}  // namespace xexp
