#pragma once
// ProtoTensorStorage: the bytes of a tensor that came from a TensorProto, left where the parser put
// them. The whole TensorProto is kept (name, doc_string, segment, unknown fields, the very encoding:
// raw_data or float_data...) so that saving an untouched tensor writes back exactly what was read.
// raw_data is used in place; typed fields (float_data, int32_data, ...) are decoded into bytes only
// when bytes() is first asked; external data points into a mapped file.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "xexp/core/elem_type.hpp"
#include "xexp/core/tensor.hpp"
#include "xexp/onnx/mapped_file.hpp"

namespace xexp {

class ProtoTensorStorage final : public TensorStorage {
 public:
  // `proto` must not be external; its data is taken over by a swap, never copied.
  explicit ProtoTensorStorage(::onnx::TensorProto&& proto) { proto_.Swap(&proto); }
  // An external tensor: `proto` keeps its metadata, the bytes live in `file` at `data`.
  ProtoTensorStorage(::onnx::TensorProto&& proto, std::shared_ptr<const MappedFile> file,
                     std::span<const std::byte> data)
      : file_(std::move(file)), external_(data) {
    proto_.Swap(&proto);
  }

  // An external tensor whose file is missing: it keeps its reference (and is written back as it
  // was) but has no bytes; asking for them is an error naming the file.
  struct Unavailable {
    std::size_t byte_size;
  };
  ProtoTensorStorage(::onnx::TensorProto&& proto, Unavailable missing) : unavailable_(missing.byte_size) {
    proto_.Swap(&proto);
  }

  std::span<const std::byte> bytes() const override {
    if (unavailable_) throw_unavailable();
    if (file_) return external_;
    if (proto_.has_raw_data())
      return {reinterpret_cast<const std::byte*>(proto_.raw_data().data()), proto_.raw_data().size()};
    if (type() == ElemType::String) return {};
    std::call_once(decoded_once_, [this] { decoded_ = decode_typed_fields(proto_); });
    return decoded_;
  }
  std::size_t byte_size() const override {
    if (unavailable_) return *unavailable_;
    if (file_) return external_.size();
    if (proto_.has_raw_data()) return proto_.raw_data().size();
    return typed_byte_size(proto_);
  }
  const std::vector<std::string>* strings() const override {
    if (type() != ElemType::String) return nullptr;
    std::call_once(decoded_once_, [this] {
      strings_.assign(proto_.string_data().begin(), proto_.string_data().end());
    });
    return &strings_;
  }

  const ::onnx::TensorProto& proto() const noexcept { return proto_; }
  // Moves the TensorProto out; only for a storage nobody else reads any more (a model being consumed).
  void take_proto(::onnx::TensorProto* out) const { out->Swap(&proto_); }
  bool is_external() const noexcept { return file_ != nullptr || unavailable_; }
  // The side file the bytes are mapped from (nullptr unless external and found).
  const MappedFile* mapped_file() const noexcept { return file_.get(); }
  bool is_unavailable() const noexcept { return unavailable_.has_value(); }
  // The side file named by the proto's external_data (empty when not external).
  std::string external_location() const {
    for (const auto& entry : proto_.external_data())
      if (entry.key() == "location") return entry.value();
    return {};
  }
  bool available() const override { return !unavailable_; }
  ElemType type() const noexcept { return static_cast<ElemType>(proto_.data_type()); }
  // True when this storage describes a tensor of that type and dims (a reshaped tensor shares the
  // storage but not the proto's dims, so its proto cannot be written back as is).
  bool describes(ElemType t, const std::vector<int64_t>& dims) const {
    return t == type() && std::equal(dims.begin(), dims.end(), proto_.dims().begin(), proto_.dims().end());
  }

  // Bytes held by the typed fields (float_data, int32_data, ...), laid out as raw_data would be.
  static std::size_t typed_byte_size(const ::onnx::TensorProto& p) {
    const auto t = static_cast<ElemType>(p.data_type());
    switch (t) {
      case ElemType::Float: case ElemType::Complex64: return p.float_data_size() * sizeof(float);
      case ElemType::Double: case ElemType::Complex128: return p.double_data_size() * sizeof(double);
      case ElemType::Int64: return p.int64_data_size() * sizeof(int64_t);
      case ElemType::UInt32: return p.uint64_data_size() * sizeof(uint32_t);
      case ElemType::UInt64: return p.uint64_data_size() * sizeof(uint64_t);
      case ElemType::UInt4: case ElemType::Int4: case ElemType::Float4E2M1: return p.int32_data_size();
      default: return p.int32_data_size() * elem_size(t);  // int32_data carries the small types
    }
  }

  static std::vector<std::byte> decode_typed_fields(const ::onnx::TensorProto& p) {
    std::vector<std::byte> out(typed_byte_size(p));
    auto copy_all = [&](const auto& field) {
      if (!field.empty()) std::memcpy(out.data(), field.data(), out.size());
    };
    auto narrow_all = [&](const auto& field, auto narrow_type) {
      using Narrow = decltype(narrow_type);
      for (int k = 0; k < field.size(); ++k) {
        const auto v = static_cast<Narrow>(field.Get(k));
        std::memcpy(out.data() + k * sizeof(Narrow), &v, sizeof(Narrow));
      }
    };
    switch (static_cast<ElemType>(p.data_type())) {
      case ElemType::Float: case ElemType::Complex64: copy_all(p.float_data()); break;
      case ElemType::Double: case ElemType::Complex128: copy_all(p.double_data()); break;
      case ElemType::Int64: copy_all(p.int64_data()); break;
      case ElemType::UInt64: copy_all(p.uint64_data()); break;
      case ElemType::UInt32: narrow_all(p.uint64_data(), uint32_t{}); break;
      case ElemType::Int32: copy_all(p.int32_data()); break;
      case ElemType::Int16: case ElemType::UInt16: case ElemType::Float16: case ElemType::BFloat16:
        narrow_all(p.int32_data(), uint16_t{});
        break;
      default: narrow_all(p.int32_data(), uint8_t{}); break;  // 8-bit and packed 4-bit types
    }
    return out;
  }

 private:
  [[noreturn]] void throw_unavailable() const {
    throw Error("the data of this tensor is in '" + external_location() + "', which was not found (missing next to the model, or the model was not loaded from a file)",
                {.node = {}, .value = proto_.name()});
  }

  mutable ::onnx::TensorProto proto_;  // mutable only for take_proto
  std::shared_ptr<const MappedFile> file_;
  std::span<const std::byte> external_;
  std::optional<std::size_t> unavailable_;
  mutable std::once_flag decoded_once_;
  mutable std::vector<std::byte> decoded_;
  mutable std::vector<std::string> strings_;
};

}  // namespace xexp
