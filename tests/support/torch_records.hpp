#pragma once
// Dynamo's module records on a node, as torch writes them into NodeProto.metadata_props (and as
// xexp.to_onnx's capture writes them on aten nodes): `name_scopes` and `class_hierarchy` are Python list
// reprs, the root module first and the node's own name last.
#include <onnx/onnx_pb.h>

#include <string>
#include <utility>

#include "xexp/functions/torch_modules.hpp"
#include "xexp/onnx/node_metadata.hpp"

namespace xexp::testing {

inline void record_torch_module(ir::Node& n, const std::string& name_scopes, const std::string& class_hierarchy) {
  google::protobuf::UnknownFieldSet fields;
  for (const auto& [key, value] : {std::pair{functions::kTorchNameScopesKey, name_scopes},
                                   std::pair{functions::kTorchClassHierarchyKey, class_hierarchy}}) {
    ::onnx::StringStringEntryProto entry;
    entry.set_key(std::string(key));
    entry.set_value(value);
    fields.AddLengthDelimited(kNodeMetadataPropsField, entry.SerializeAsString());
  }
  fields.SerializeToString(&n.unknown);
}

}  // namespace xexp::testing
