#pragma once
// Tensor: an element type, static dims, and shared immutable storage. Storage is polymorphic so that
// bytes parsed from a model (onnx/), mapped from an external-data file, or computed by a kernel
// (eval/) all live where they already are: copying a tensor copies a pointer, never the weights.
#include <algorithm>
#include <complex>
#include <cstring>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "xexp/core/elem_type.hpp"
#include "xexp/core/element_cap.hpp"
#include "xexp/core/error.hpp"
#include "xexp/core/shape.hpp"

namespace xexp {

class TensorStorage {
 public:
  virtual ~TensorStorage() = default;
  virtual std::span<const std::byte> bytes() const = 0;
  // The size of bytes() without materializing it (storages that decode lazily override this).
  virtual std::size_t byte_size() const { return bytes().size(); }
  // For STRING tensors; nullptr for every other type.
  virtual const std::vector<std::string>* strings() const { return nullptr; }
  // False when the bytes cannot be had (external data whose file is missing): bytes() throws then.
  virtual bool available() const { return true; }
};

// Bytes owned by the tensor itself (builder constants, kernel results).
class OwnedStorage final : public TensorStorage {
 public:
  explicit OwnedStorage(std::size_t nbytes) : data_(nbytes) {}
  explicit OwnedStorage(std::vector<std::byte> data) : data_(std::move(data)) {}
  std::span<const std::byte> bytes() const override { return data_; }
  std::span<std::byte> mutable_bytes() { return data_; }

 private:
  std::vector<std::byte> data_;
};

class StringStorage final : public TensorStorage {
 public:
  explicit StringStorage(std::vector<std::string> values) : values_(std::move(values)) {}
  std::span<const std::byte> bytes() const override { return {}; }
  const std::vector<std::string>* strings() const override { return &values_; }

 private:
  std::vector<std::string> values_;
};

// The number of elements of `dims`. A negative dimension, or a count past int64, is an error: a hostile
// shape must not wrap around into a small allocation that kernels then index past.
inline int64_t dims_element_count(std::span<const int64_t> dims) {
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) return 0;
  int64_t n = 1;
  for (int64_t d : dims)
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      throw Error(d < 0 ? "negative dimension " + std::to_string(d)
                        : std::string("the element count of a shape overflows int64"));
  return n;
}

class Tensor {
 public:
  Tensor() = default;
  // A zero-filled tensor owning its bytes.
  Tensor(ElemType type, std::vector<int64_t> dims)
      : type_(type), dims_(std::move(dims)), size_(dims_element_count(dims_)),
        storage_(std::make_shared<OwnedStorage>((ElementCap::check(size_), byte_count(type_, dims_)))) {}
  Tensor(ElemType type, std::vector<int64_t> dims, std::shared_ptr<const TensorStorage> storage)
      : type_(type), dims_(std::move(dims)), size_(dims_element_count(dims_)), storage_(std::move(storage)) {
    if (type_ != ElemType::String && elem_size(type_) != 0 && storage_ &&
        storage_->byte_size() != byte_count(type_, dims_))
      throw Error("tensor of type " + std::string(elem_type_name(type_)) + " and shape " +
                  shape_str(make_shape(dims_)) + " needs " + std::to_string(byte_count(type_, dims_)) +
                  " bytes but has " + std::to_string(storage_->byte_size()));
  }

  // From typed values: Tensor::from<float>({3, 1}, {0.4f, 0.5f, 0.6f}).
  template <class T>
  static Tensor from(std::vector<int64_t> dims, const std::vector<T>& values) {
    Tensor t(elem_type_v<T>, std::move(dims));
    if (static_cast<int64_t>(values.size()) != t.size())
      throw Error("tensor of shape " + shape_str(make_shape(t.dims_)) + " needs " + std::to_string(t.size()) +
                  " values, got " + std::to_string(values.size()));
    auto out = t.mutable_data<T>();
    std::copy(values.begin(), values.end(), out.begin());
    return t;
  }
  template <class T>
  static Tensor scalar(T value) {
    return from<T>({}, {value});
  }
  static Tensor strings(std::vector<int64_t> dims, std::vector<std::string> values) {
    return Tensor(ElemType::String, std::move(dims), std::make_shared<StringStorage>(std::move(values)));
  }

  ElemType type() const noexcept { return type_; }
  const std::vector<int64_t>& dims() const noexcept { return dims_; }
  Shape shape() const { return make_shape(dims_); }
  std::size_t rank() const noexcept { return dims_.size(); }
  int64_t size() const noexcept { return size_; }
  bool empty() const noexcept { return storage_ == nullptr; }
  std::span<const std::byte> bytes() const { return storage_ ? storage_->bytes() : std::span<const std::byte>(); }
  const std::shared_ptr<const TensorStorage>& storage() const noexcept { return storage_; }
  // Whether the values can be read (see TensorStorage::available): rewrites treat others as unknown.
  bool available() const { return !storage_ || storage_->available(); }

  template <class T>
  std::span<const T> data() const {
    check_type<T>();
    auto b = bytes();
    return {reinterpret_cast<const T*>(b.data()), b.size() / sizeof(T)};
  }
  const std::vector<std::string>& string_data() const {
    if (type_ != ElemType::String || !storage_ || !storage_->strings())
      throw Error("tensor is not a STRING tensor");
    return *storage_->strings();
  }
  // Writable bytes: copies the storage first unless this tensor is its only owner and owns the bytes.
  std::span<std::byte> mutable_bytes() {
    auto* owned = dynamic_cast<const OwnedStorage*>(storage_.get());
    if (!owned || storage_.use_count() != 1) {
      auto b = bytes();
      storage_ = std::make_shared<OwnedStorage>(std::vector<std::byte>(b.begin(), b.end()));
      owned = static_cast<const OwnedStorage*>(storage_.get());
    }
    return const_cast<OwnedStorage*>(owned)->mutable_bytes();
  }
  template <class T>
  std::span<T> mutable_data() {
    check_type<T>();
    auto b = mutable_bytes();
    return {reinterpret_cast<T*>(b.data()), b.size() / sizeof(T)};
  }
  // Same type, dims and bytes (strings compared by value).
  bool same_content(const Tensor& other) const {
    if (type_ != other.type_ || dims_ != other.dims_) return false;
    if (type_ == ElemType::String) return string_data() == other.string_data();
    auto a = bytes(), b = other.bytes();
    return a.size() == b.size() && (a.data() == b.data() || std::memcmp(a.data(), b.data(), a.size()) == 0);
  }
  Tensor reshaped(std::vector<int64_t> dims) const {
    if (dims_element_count(dims) != size()) throw Error("reshape changes the element count");
    return Tensor(type_, std::move(dims), storage_);
  }

  static constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;
  static std::size_t byte_count(ElemType type, std::span<const int64_t> dims) {
    const uint64_t n = static_cast<uint64_t>(dims_element_count(dims));
    const bool packed = type == ElemType::UInt4 || type == ElemType::Int4 || type == ElemType::Float4E2M1;
    // 1 TiB: past any real tensor, and a hostile shape gets an error rather than an allocator's abort.
    if ((packed ? (n + 1) / 2 : n) >
        kMaxTensorBytes / (packed ? 1 : std::max<std::size_t>(elem_size(type), 1)))
      throw Error("a tensor of " + std::to_string(n) + " elements of " + std::string(elem_type_name(type)) +
                  " is past the 1 TiB a tensor may hold");
    return static_cast<std::size_t>(packed ? (n + 1) / 2 : n * elem_size(type));
  }

 private:
  template <class T>
  void check_type() const {
    constexpr bool is_half = std::is_same_v<T, uint16_t>;  // float16/bfloat16 are read as raw uint16
    if (elem_type_v<T> != type_ && !(is_half && elem_size(type_) == 2) &&
        !(std::is_same_v<T, uint8_t> && elem_size(type_) == 1))
      throw Error("tensor holds " + std::string(elem_type_name(type_)) + ", read as " +
                  std::string(elem_type_name(elem_type_v<T>)));
  }
  ElemType type_ = ElemType::Undefined;
  std::vector<int64_t> dims_;
  int64_t size_ = 1;  // the element count of dims_, kept: kernels read it in their loop conditions
  std::shared_ptr<const TensorStorage> storage_;
};

}  // namespace xexp
