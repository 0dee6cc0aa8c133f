#pragma once
// AttributeProto <-> ir::Attribute. A well-formed attribute (a name, a type, exactly the value field
// of that type, or a ref_attr_name and no value) lives in plain fields; anything else (sparse
// tensors, type protos, malformed or pre-IR-v2 attributes) also keeps its serialized proto in `raw`,
// which the writer prefers, so that every attribute round-trips exactly.
#include <onnx/onnx_pb.h>

#include <memory>
#include <string>

#include "xexp/ir/attribute.hpp"
#include "xexp/onnx/proto_fields.hpp"
#include "xexp/onnx/tensor_proto.hpp"

namespace xexp::detail {

inline int value_field_count(const ::onnx::AttributeProto& a) {
  return a.has_f() + a.has_i() + a.has_s() + a.has_t() + a.has_g() + a.has_sparse_tensor() + a.has_tp() +
         (a.floats_size() > 0) + (a.ints_size() > 0) + (a.strings_size() > 0) + (a.tensors_size() > 0) +
         (a.graphs_size() > 0) + (a.sparse_tensors_size() > 0) + (a.type_protos_size() > 0);
}

// True when the plain fields of ir::Attribute describe `a` completely (see the header comment).
inline bool is_plain_attribute(const ::onnx::AttributeProto& a) {
  using A = ::onnx::AttributeProto;
  if (!a.has_name() || !a.has_type() || (a.has_doc_string() && a.doc_string().empty())) return false;
  const int fields = value_field_count(a);
  if (a.has_ref_attr_name()) return !a.ref_attr_name().empty() && fields == 0;
  switch (a.type()) {
    case A::FLOAT: return a.has_f() && fields == 1;
    case A::INT: return a.has_i() && fields == 1;
    case A::STRING: return a.has_s() && fields == 1;
    case A::TENSOR: return a.has_t() && fields == 1;
    case A::GRAPH: return a.has_g() && fields == 1;
    case A::FLOATS: return fields == (a.floats_size() > 0);
    case A::INTS: return fields == (a.ints_size() > 0);
    case A::STRINGS: return fields == (a.strings_size() > 0);
    case A::TENSORS: return fields == (a.tensors_size() > 0);
    case A::GRAPHS: return fields == (a.graphs_size() > 0);
    default: return false;  // sparse tensors, type protos, undefined
  }
}

// `read_graph(GraphProto&) -> std::shared_ptr<ir::Graph>` builds subgraphs; the proto is consumed.
template <class ReadGraph>
ir::Attribute read_attribute(::onnx::AttributeProto& a, ReadGraph&& read_graph, ExternalFiles* external) {
  ir::Attribute out;
  if (!is_plain_attribute(a)) a.SerializeToString(&out.raw);
  out.name = Symbol(a.name());
  out.type = static_cast<ir::AttrType>(a.type());
  if (a.has_ref_attr_name()) out.ref_attr_name = std::move(*a.mutable_ref_attr_name());
  if (a.has_doc_string()) out.doc_string = std::move(*a.mutable_doc_string());
  out.f = a.f();
  out.i = a.i();
  if (a.has_s()) out.s = std::move(*a.mutable_s());
  out.floats.assign(a.floats().begin(), a.floats().end());
  out.ints.assign(a.ints().begin(), a.ints().end());
  out.strings.reserve(static_cast<std::size_t>(a.strings_size()));
  for (std::string& s : *a.mutable_strings()) out.strings.push_back(std::move(s));
  if (a.has_t()) out.tensors.push_back(read_tensor(std::move(*a.mutable_t()), external));
  for (auto& t : *a.mutable_tensors()) out.tensors.push_back(read_tensor(std::move(t), external));
  if (a.has_g()) out.graphs.push_back(read_graph(*a.mutable_g()));
  for (auto& g : *a.mutable_graphs()) out.graphs.push_back(read_graph(g));
  out.unknown = unknown_of(a);
  return out;
}

// `write_graph(const ir::Graph&, GraphProto*)` writes subgraphs; `write_tensor(const Tensor&,
// TensorProto*)` writes tensors (so that the caller decides about moving and external data).
template <class WriteGraph, class WriteTensor>
void write_attribute(const ir::Attribute& a, ::onnx::AttributeProto* out, WriteGraph&& write_graph,
                     WriteTensor&& write_tensor) {
  if (!a.raw.empty()) {
    out->ParseFromString(a.raw);
    return;
  }
  using A = ::onnx::AttributeProto;
  out->set_name(std::string(a.name.view()));
  out->set_type(static_cast<A::AttributeType>(a.type));
  if (!a.doc_string.empty()) out->set_doc_string(a.doc_string);
  restore_unknown(a.unknown, out);
  if (!a.ref_attr_name.empty()) {
    out->set_ref_attr_name(a.ref_attr_name);
    return;
  }
  switch (a.type) {
    case ir::AttrType::Float: out->set_f(a.f); break;
    case ir::AttrType::Int: out->set_i(a.i); break;
    case ir::AttrType::String: out->set_s(a.s); break;
    case ir::AttrType::Tensor: write_tensor(a.tensors.at(0), out->mutable_t()); break;
    case ir::AttrType::Graph: write_graph(*a.graphs.at(0), out->mutable_g()); break;
    case ir::AttrType::Floats: out->mutable_floats()->Add(a.floats.begin(), a.floats.end()); break;
    case ir::AttrType::Ints: out->mutable_ints()->Add(a.ints.begin(), a.ints.end()); break;
    case ir::AttrType::Strings:
      for (const std::string& s : a.strings) out->add_strings(s);
      break;
    case ir::AttrType::Tensors:
      for (const Tensor& t : a.tensors) write_tensor(t, out->add_tensors());
      break;
    case ir::AttrType::Graphs:
      for (const auto& g : a.graphs) write_graph(*g, out->add_graphs());
      break;
    default: throw Error("attribute of type " + std::to_string(static_cast<int>(a.type)) + " without its proto",
                         {.node = {}, .value = a.name.str()});
  }
}

}  // namespace xexp::detail
