#pragma once
// A model: the main graph, opset imports, metadata and local functions.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xexp/ir/graph.hpp"

namespace xexp::ir {

struct OpsetImport {
  std::string domain;
  int64_t version = 0;
  std::string unknown;
  uint8_t presence = 0;  // kHasDomain, kHasVersion: fields present in the file read
  friend bool operator==(const OpsetImport& a, const OpsetImport& b) {
    return a.domain == b.domain && a.version == b.version;
  }
};

inline std::optional<int64_t> find_opset(const std::vector<OpsetImport>& opsets, std::string_view domain) {
  for (const OpsetImport& o : opsets)
    if (o.domain == domain || (domain == "ai.onnx" && o.domain.empty()) || (domain.empty() && o.domain == "ai.onnx"))
      return o.version;
  return std::nullopt;
}

// A local function (FunctionProto). Its body is a Graph whose inputs and outputs carry no types.
struct Function {
  std::string name;
  std::string domain;
  std::vector<std::string> attributes;  // names of the attributes a call may set
  std::vector<Attribute> attribute_defaults;  // attributes with a default value (attribute_proto, ONNX >= 1.13)
  std::vector<OpsetImport> opsets;
  std::unique_ptr<Graph> body = std::make_unique<Graph>();
  std::string doc_string;
  std::string unknown;  // attribute_proto, overload, value_info, metadata_props of newer ONNX versions
  uint8_t presence = 0;
};

struct Model {
  int64_t ir_version = 8;
  std::vector<OpsetImport> opsets;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  std::vector<std::pair<std::string, std::string>> metadata_props;
  std::vector<std::string> raw_training_info;  // serialized TrainingInfoProto
  std::vector<Function> functions;
  std::string unknown;
  uint32_t presence = 0;  // bit k set: ModelProto field k present (scalar fields only)

  std::optional<int64_t> opset(std::string_view domain_name) const { return find_opset(opsets, domain_name); }
  const Function* find_function(std::string_view fdomain, std::string_view fname) const {
    for (const Function& f : functions)
      if (f.domain == fdomain && f.name == fname) return &f;
    return nullptr;
  }
};

}  // namespace xexp::ir
