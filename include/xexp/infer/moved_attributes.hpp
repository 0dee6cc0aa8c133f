#pragma once
// Attributes that became inputs in a later opset (their values are then a constant int64 tensor):
// Squeeze/Unsqueeze/ReduceSum axes and Split's split at 13, the other reductions' axes at 18. Shape
// rules read them from wherever the node's opset puts them; the builder moves them when it emits.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace xexp::infer {

struct MovedAttribute {
  std::string_view name;  // attribute name before `since`
  std::size_t slot;       // input index from `since` on
  int64_t since;          // first default-domain opset reading the input
};

inline std::optional<MovedAttribute> moved_attribute(std::string_view op_type) {
  if (op_type == "Squeeze" || op_type == "Unsqueeze" || op_type == "ReduceSum") return MovedAttribute{"axes", 1, 13};
  if (op_type == "Split") return MovedAttribute{"split", 1, 13};
  if (op_type.starts_with("Reduce")) return MovedAttribute{"axes", 1, 18};
  return std::nullopt;
}

}  // namespace xexp::infer
