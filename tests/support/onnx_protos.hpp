#pragma once
// ONNX protos written by hand, for the tests that build a file the way an exporter (or a broken one)
// would, below xexp's own API.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace xexp::testing {

// A tensor of ONNX element type `elem_type` (1: float) with static dims; no dims: a scalar.
inline ::onnx::ValueInfoProto tensor_info(const std::string& name, int elem_type, std::vector<int64_t> dims) {
  ::onnx::ValueInfoProto vi;
  vi.set_name(name);
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  return vi;
}

inline ::onnx::NodeProto make_node(const std::string& op, std::vector<std::string> inputs,
                                   std::vector<std::string> outputs, const std::string& name,
                                   const std::string& domain = "") {
  ::onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  if (!domain.empty()) n.set_domain(domain);
  for (auto& i : inputs) n.add_input(i);
  for (auto& o : outputs) n.add_output(o);
  return n;
}

}  // namespace xexp::testing
