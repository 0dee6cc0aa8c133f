#pragma once
// Small pieces shared by the reader and the writer: fields ONNX 1.12 does not know (kept serialized),
// proto2 presence of optional fields, and ValueInfoProto <-> Value.
#include <onnx/onnx_pb.h>

#include <string>

#include "xexp/ir/graph.hpp"

namespace xexp::detail {

template <class Message>
std::string unknown_of(const Message& m) {
  std::string out;
  if (!m.unknown_fields().empty()) m.unknown_fields().SerializeToString(&out);
  return out;
}
template <class Message>
void restore_unknown(const std::string& unknown, Message* m) {
  if (!unknown.empty()) m->mutable_unknown_fields()->ParseFromString(unknown);
}

// Write an optional string when it has a value or was present (even empty) in the file read.
template <class Setter>
void write_optional(const std::string& text, uint8_t presence, uint8_t bit, Setter&& set) {
  if (!text.empty() || (presence & bit)) set(text);
}

// A TypeProto xexp models in Value::elem and Value::shape: a tensor type and nothing else, whose
// dims are sizes >= 0, non-empty symbols or nothing. Anything else is kept serialized in raw_type.
inline bool is_plain_tensor_type(const ::onnx::TypeProto& t) {
  if (!t.unknown_fields().empty() || t.has_denotation() || t.value_case() != ::onnx::TypeProto::kTensorType)
    return false;
  const auto& tt = t.tensor_type();
  if (!tt.unknown_fields().empty() || !tt.has_elem_type() || tt.elem_type() == 0) return false;
  if (!tt.has_shape()) return true;
  if (!tt.shape().unknown_fields().empty()) return false;
  for (const auto& d : tt.shape().dim()) {
    if (!d.unknown_fields().empty() || d.has_denotation()) return false;
    if (d.has_dim_value() && d.dim_value() < 0) return false;
    if (d.has_dim_param() && d.dim_param().empty()) return false;
  }
  return true;
}

// Fills elem/shape from a tensor type (best effort for the non-plain ones, which also keep raw_type:
// the writer prefers raw_type, so they round-trip exactly).
inline void read_type(const ::onnx::TypeProto& t, ir::Value& v) {
  if (!is_plain_tensor_type(t)) t.SerializeToString(&v.raw_type);
  if (t.value_case() != ::onnx::TypeProto::kTensorType) return;
  const auto& tt = t.tensor_type();
  v.elem = static_cast<ElemType>(tt.elem_type());
  if (!tt.has_shape()) return;
  Shape shape;
  shape.reserve(static_cast<std::size_t>(tt.shape().dim_size()));
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) shape.emplace_back(d.dim_value());
    else if (d.has_dim_param() && !d.dim_param().empty()) shape.emplace_back(Symbol(d.dim_param()));
    else shape.emplace_back();
  }
  v.shape = std::move(shape);
}

inline void read_value_info(::onnx::ValueInfoProto& vi, ir::Value& v) {
  if (vi.has_name()) v.presence |= ir::kHasName;
  if (vi.has_type()) {
    v.presence |= ir::kHasType;
    v.raw_type.clear();
    read_type(vi.type(), v);
  }
  if (vi.has_doc_string()) {
    v.presence |= ir::kHasDocString;
    v.doc_string = std::move(*vi.mutable_doc_string());
  }
  v.unknown = unknown_of(vi);
}

inline void write_type(const ir::Value& v, ::onnx::TypeProto* t) {
  if (!v.raw_type.empty()) {
    t->ParseFromString(v.raw_type);
    return;
  }
  auto* tt = t->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(v.elem));
  if (!v.shape) return;
  auto* shape = tt->mutable_shape();
  shape->mutable_dim()->Reserve(static_cast<int>(v.shape->size()));
  for (const Dim& d : *v.shape) {
    auto* dim = shape->add_dim();
    if (d.is_static()) dim->set_dim_value(d.value());
    else if (d.is_symbolic()) dim->set_dim_param(d.symbol().str());
  }
}

inline void write_value_info(const ir::Value& v, ::onnx::ValueInfoProto* vi) {
  vi->set_name(v.name);
  if (!v.raw_type.empty() || v.elem != ElemType::Undefined) write_type(v, vi->mutable_type());
  else if (v.presence & ir::kHasType) vi->mutable_type();
  write_optional(v.doc_string, v.presence, ir::kHasDocString, [&](const std::string& s) { vi->set_doc_string(s); });
  restore_unknown(v.unknown, vi);
}

}  // namespace xexp::detail
