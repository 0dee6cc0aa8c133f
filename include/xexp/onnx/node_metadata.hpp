#pragma once
// NodeProto.metadata_props (field 9, ONNX >= 1.16): key/value strings exporters attach to a node, such as
// torch's dynamo exporter recording the module a node came from (`pkg.torch.onnx.name_scopes`). ONNX
// 1.12 does not know the field: the loader keeps it among the node's unknown fields (Node::unknown),
// which the writer puts back as they were; this reads it from there.
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xexp/ir/graph.hpp"

namespace xexp {

inline constexpr int kNodeMetadataPropsField = 9;

// The node's metadata_props in file order; empty when it has none.
inline std::vector<std::pair<std::string, std::string>> node_metadata_props(const ir::Node& n) {
  std::vector<std::pair<std::string, std::string>> props;
  if (n.unknown.empty()) return props;
  google::protobuf::UnknownFieldSet fields;
  if (!fields.ParseFromString(n.unknown)) return props;
  for (int k = 0; k < fields.field_count(); ++k) {
    const google::protobuf::UnknownField& field = fields.field(k);
    if (field.number() != kNodeMetadataPropsField ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    ::onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(field.length_delimited())) props.emplace_back(entry.key(), entry.value());
  }
  return props;
}

// The value of the node's metadata entry `key` (the last one when repeated), nullopt when absent.
inline std::optional<std::string> node_metadata(const ir::Node& n, std::string_view key) {
  std::optional<std::string> found;
  for (auto& [k, v] : node_metadata_props(n))
    if (k == key) found = std::move(v);
  return found;
}

}  // namespace xexp
