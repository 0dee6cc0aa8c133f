#pragma once
// 32-bit handles into a Graph's node and value arrays.
#include <cstdint>
#include <limits>

namespace xexp::ir {

using NodeId = uint32_t;
using ValueId = uint32_t;
inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// One consumer of a value: the node and the input slot it reads it from. kCapturedSlot marks a node
// whose subgraph reads the value from the enclosing scope (If/Loop/Scan bodies).
struct Use {
  NodeId node;
  int32_t slot;
  friend bool operator==(const Use&, const Use&) = default;
};
inline constexpr int32_t kCapturedSlot = -1;

}  // namespace xexp::ir
