#pragma once
// Schema facts from ONNX's own registry (libonnx): which schema an (op, domain, opset) resolves to,
// attribute defaults (a rule comparing attributes must treat an absent `keepdims` as 1), and the
// attributes that later opsets turned into inputs (ReduceMean axes at 18, Squeeze axes at 13, ...).
// The registry of ONNX 1.12 stops at opset 17: asked about a newer opset it answers with the last version
// it has (and knows no op added after 17), so the attribute-to-input table below is written out rather
// than derived from it.
#include <onnx/defs/schema.h>

#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>

#include "xexp/ir/attribute.hpp"
#include "xexp/onnx/attribute_proto.hpp"

namespace xexp {

// The schema in force for `op` in `domain` at `opset` (the latest version <= opset), or nullptr for
// an op the registry does not know (custom domains, com.microsoft ops it was not built with).
inline const ::onnx::OpSchema* find_schema(std::string_view op, std::string_view domain, int64_t opset) {
  const std::string d = domain == "ai.onnx" ? std::string() : std::string(domain);
  return ::onnx::OpSchemaRegistry::Schema(std::string(op), static_cast<int>(opset), d);
}

// The default value of an attribute, as the schema in force declares it; nullopt when the op is
// unknown, the attribute is unknown, or it is required/has no default.
inline std::optional<ir::Attribute> attribute_default(std::string_view op, std::string_view domain, int64_t opset,
                                                      std::string_view attr_name) {
  const ::onnx::OpSchema* schema = find_schema(op, domain, opset);
  if (!schema) return std::nullopt;
  // Converted once per (schema, attribute): patterns ask for the same defaults over and over.
  static std::mutex mutex;
  static std::map<std::pair<const ::onnx::OpSchema*, std::string>, std::optional<ir::Attribute>, std::less<>> cache;
  std::lock_guard lock(mutex);
  auto key = std::make_pair(schema, std::string(attr_name));
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  std::optional<ir::Attribute> result;
  const auto& attrs = schema->attributes();
  if (auto it = attrs.find(key.second); it != attrs.end() && it->second.default_value.has_type() &&
                                        it->second.default_value.type() != ::onnx::AttributeProto::UNDEFINED) {
    ::onnx::AttributeProto copy = it->second.default_value;
    copy.set_name(key.second);
    result = detail::read_attribute(
        copy, [](::onnx::GraphProto&) -> std::shared_ptr<ir::Graph> { return nullptr; }, nullptr);
    result->raw.clear();  // defaults are plain values; the schema's proto needs no round trip
  }
  cache.emplace(std::move(key), result);
  return result;
}

// An attribute of an ONNX-domain op that became an input (at `input_index`) from opset `since`.
struct AttributeBecameInput {
  std::string_view op;
  std::string_view attribute;
  int64_t since;
  int input_index;
};

inline std::span<const AttributeBecameInput> attributes_that_became_inputs() {
  static constexpr AttributeBecameInput table[] = {
      {"Reshape", "shape", 5, 1},
      {"Upsample", "scales", 9, 1},  // Resize (opset 10) has had scales as an input from the start
      {"Slice", "starts", 10, 1},
      {"Slice", "ends", 10, 2},
      {"Slice", "axes", 10, 3},
      {"TopK", "k", 10, 1},
      {"Pad", "pads", 11, 1},
      {"Pad", "value", 11, 2},
      {"Clip", "min", 11, 1},
      {"Clip", "max", 11, 2},
      {"Dropout", "ratio", 12, 1},
      {"ReduceSum", "axes", 13, 1},
      {"Squeeze", "axes", 13, 1},
      {"Unsqueeze", "axes", 13, 1},
      {"Split", "split", 13, 1},  // and from 18 the `num_outputs` attribute may replace it
      {"ReduceL1", "axes", 18, 1},
      {"ReduceL2", "axes", 18, 1},
      {"ReduceLogSum", "axes", 18, 1},
      {"ReduceLogSumExp", "axes", 18, 1},
      {"ReduceMax", "axes", 18, 1},
      {"ReduceMean", "axes", 18, 1},
      {"ReduceMin", "axes", 18, 1},
      {"ReduceProd", "axes", 18, 1},
      {"ReduceSumSquare", "axes", 18, 1},
      {"DFT", "axis", 20, 2},  // a scalar input, whose default (-2) is not the attribute's (1)
  };
  return table;
}

inline const AttributeBecameInput* attribute_became_input(std::string_view op, std::string_view attribute) {
  for (const AttributeBecameInput& e : attributes_that_became_inputs())
    if (e.op == op && e.attribute == attribute) return &e;
  return nullptr;
}

// The opset from which `op` takes its axes as an input; 0 when it never did (or has no axes).
inline int64_t axes_became_input_at(std::string_view op) {
  const AttributeBecameInput* e = attribute_became_input(op, "axes");
  return e ? e->since : 0;
}

// True when `op` at `opset` reads `attribute` from an input rather than from an attribute.
inline bool attribute_is_input(std::string_view op, std::string_view attribute, int64_t opset) {
  const AttributeBecameInput* e = attribute_became_input(op, attribute);
  return e && opset >= e->since;
}

}  // namespace xexp
