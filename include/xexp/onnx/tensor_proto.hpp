#pragma once
// Tensor <-> TensorProto. Reading takes the proto's data over without copying (see
// ProtoTensorStorage); writing an untouched tensor gives back the proto it came from.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "xexp/core/error.hpp"
#include "xexp/core/tensor.hpp"
#include "xexp/onnx/external_data.hpp"
#include "xexp/onnx/proto_storage.hpp"
#include "xexp/onnx/temporary_file.hpp"

namespace xexp {

namespace detail {

// `external` resolves data_location=EXTERNAL; nullptr means such a tensor is an error.
inline Tensor read_tensor(::onnx::TensorProto&& p, ExternalFiles* external) {
  const auto type = static_cast<ElemType>(p.data_type());
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  int64_t elements = 1;
  for (int64_t d : dims) {
    if (d < 0) throw Error("negative dimension " + std::to_string(d), {.node = {}, .value = p.name()});
    if (d != 0 && elements > (int64_t{1} << 60) / d)  // a corrupt file must not overflow the size
      throw Error("tensor of shape " + shape_str(make_shape(dims)) + " is too large", {.node = {}, .value = p.name()});
    elements *= d;
  }
  if (type == ElemType::String) {
    // Kernels index string_data by element: the count must match (raw_data cannot hold strings).
    if (p.has_raw_data() || p.data_location() == ::onnx::TensorProto::EXTERNAL)
      throw Error("a STRING tensor cannot hold raw or external data", {.node = {}, .value = p.name()});
    if (p.string_data_size() != elements)
      throw Error("STRING tensor of shape " + shape_str(make_shape(dims)) + " needs " + std::to_string(elements) +
                      " strings but has " + std::to_string(p.string_data_size()),
                  {.node = {}, .value = p.name()});
  }
  std::shared_ptr<const ProtoTensorStorage> storage;
  if (p.data_location() == ::onnx::TensorProto::EXTERNAL) {
    if (!external) throw Error("external data needs the model's directory", {.node = {}, .value = p.name()});
    auto slice = external->find(p);
    if (slice.file)
      storage = std::make_shared<ProtoTensorStorage>(std::move(p), std::move(slice.file), slice.bytes);
    else
      storage = std::make_shared<ProtoTensorStorage>(std::move(p), ProtoTensorStorage::Unavailable{Tensor::byte_count(type, dims)});
  } else {
    storage = std::make_shared<ProtoTensorStorage>(std::move(p));
  }
  if (type != ElemType::String && elem_size(type) != 0 && storage->byte_size() != Tensor::byte_count(type, dims))
    throw Error("tensor of type " + std::string(elem_type_name(type)) + " and shape " + shape_str(make_shape(dims)) +
                    " needs " + std::to_string(Tensor::byte_count(type, dims)) + " bytes but has " +
                    std::to_string(storage->byte_size()),
                {.node = {}, .value = storage->proto().name()});
  Tensor t(type, std::move(dims), std::move(storage));
  // ONNX stores a bool as a byte, 0 or 1; kernels read those bytes as bool, for which any other value is
  // undefined behaviour. A file holding other bytes gets its tensor copied with them made 1.
  if (type == ElemType::Bool && t.storage()->available()) {
    const std::span<const std::byte> bytes = t.storage()->bytes();
    if (std::any_of(bytes.begin(), bytes.end(),
                    [](std::byte b) { return std::to_integer<unsigned>(b) > 1; })) {
      Tensor normalized(type, t.dims());
      std::span<bool> out = normalized.mutable_data<bool>();
      for (std::size_t k = 0; k < out.size(); ++k) out[k] = bytes[k] != std::byte{0};
      return normalized;
    }
  }
  return t;
}

// Writes `t` into `out`. `name` (when not null) replaces the stored name. `take` moves the stored
// proto out when nobody else shares it (the model is being consumed). `sink` (when not null) receives
// the bytes of tensors of at least sink->threshold() bytes.
inline void write_tensor(const Tensor& t, const std::string* name, ::onnx::TensorProto* out, bool take,
                         ExternalDataWriter* sink) {
  const auto* stored = dynamic_cast<const ProtoTensorStorage*>(t.storage().get());
  const bool unavailable = stored && stored->is_unavailable();
  const bool to_sink = sink && !unavailable && t.type() != ElemType::String && t.storage() &&
                       t.storage()->byte_size() >= sink->threshold();
  if (unavailable && sink && stored->external_location() == sink->location())
    throw Error("its data stays in '" + sink->location() +
                    "', which was not found, and the model's new external data would take that name; save under "
                    "another name",
                {.node = {}, .value = name ? *name : stored->proto().name()});
  if (stored && !to_sink && (!stored->is_external() || unavailable) && stored->describes(t.type(), t.dims())) {
    if (take && t.storage().use_count() == 1) stored->take_proto(out);
    else out->CopyFrom(stored->proto());
    if (name) out->set_name(*name);
    return;
  }
  // A fresh proto: what the tensor is, plus the stored name and doc string when there are some.
  out->Clear();
  out->set_data_type(static_cast<int32_t>(t.type()));
  out->mutable_dims()->Add(t.dims().begin(), t.dims().end());
  if (name) out->set_name(*name);
  else if (stored && stored->proto().has_name()) out->set_name(stored->proto().name());
  if (stored && stored->proto().has_doc_string()) out->set_doc_string(stored->proto().doc_string());
  if (t.type() == ElemType::String) {
    for (const std::string& s : t.string_data()) out->add_string_data(s);
  } else if (to_sink) {
    sink->write(t.bytes(), stored ? stored->mapped_file() : nullptr, out);
  } else {
    auto b = t.bytes();
    out->set_raw_data(reinterpret_cast<const char*>(b.data()), b.size());
  }
}

}  // namespace detail

// A tensor from a TensorProto whose data is taken over (not copied). External data is an error here:
// load_model and load_tensor know the directory it is relative to.
inline Tensor tensor_from_proto(::onnx::TensorProto&& proto) { return detail::read_tensor(std::move(proto), nullptr); }

inline ::onnx::TensorProto tensor_to_proto(const Tensor& tensor, const std::string& name) {
  ::onnx::TensorProto out;
  detail::write_tensor(tensor, &name, &out, false, nullptr);
  return out;
}

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// A serialized TensorProto file (the backend test suite's input_0.pb, output_0.pb, ...).
inline NamedTensor load_tensor(const std::string& pb_path) {
  auto file = MappedFile::open(pb_path);
  ::onnx::TensorProto p;
  if (file->size() > static_cast<std::size_t>(INT32_MAX) ||
      !p.ParseFromArray(file->bytes().data(), static_cast<int>(file->size())))
    throw Error("'" + pb_path + "' is not a serialized TensorProto");
  std::string name = p.name();
  detail::ExternalFiles external(detail::directory_of(pb_path));
  return {std::move(name), detail::read_tensor(std::move(p), &external)};
}

inline void save_tensor(const Tensor& tensor, const std::string& name, const std::string& path) {
  detail::TemporaryFile file(path);
  if (!tensor_to_proto(tensor, name).SerializeToFileDescriptor(file.fd())) throw Error("cannot write '" + path + "'");
  file.commit();
}

}  // namespace xexp
