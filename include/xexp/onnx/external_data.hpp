#pragma once
// External data (TensorProto.data_location = EXTERNAL): tensors whose bytes live in a side file, at
// `offset`, `length` bytes long, the file named by `location` relative to the model's directory.
// Reading maps each side file once and lets tensors point into it; writing appends bytes to one file,
// copying mapped tensors file to file.
#include <onnx/onnx_pb.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "xexp/core/error.hpp"
#include "xexp/onnx/mapped_file.hpp"
#include "xexp/onnx/temporary_file.hpp"

namespace xexp::detail {

inline std::string directory_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash == 0 ? 1 : slash);
}

// Resolves external references of the tensors of one model; one mapping per side file.
class ExternalFiles {
 public:
  // An empty base_dir leaves every external tensor unavailable (kept as a reference). Unless
  // `allow_outside`, a location that leaves base_dir (an absolute path, "..", a symbolic link pointing
  // elsewhere) is refused: a model must not make us read arbitrary files.
  explicit ExternalFiles(std::string base_dir, bool allow_outside = false)
      : base_dir_(std::move(base_dir)), allow_outside_(allow_outside) {}

  struct Slice {
    std::shared_ptr<const MappedFile> file;  // nullptr when the file does not exist
    std::span<const std::byte> bytes;
  };
  Slice find(const ::onnx::TensorProto& p) {
    std::string location;
    uint64_t offset = 0, length = 0;
    bool has_length = false;
    for (const auto& entry : p.external_data()) {
      if (entry.key() == "location") location = entry.value();
      else if (entry.key() == "offset") offset = parse_number(p, entry.value());
      else if (entry.key() == "length") length = parse_number(p, entry.value()), has_length = true;
    }
    if (location.empty()) throw Error("external data without a location", {.node = {}, .value = p.name()});
    if (location.find('\0') != std::string::npos)
      throw Error("external data location contains a NUL character", {.node = {}, .value = p.name()});
    if (!allow_outside_ && leaves_directory(location)) throw outside(p, location);
    if (base_dir_.empty()) return {};  // model_from_proto without a directory: references only
    auto [it, inserted] = files_.try_emplace(location);
    auto& file = it->second;
    if (inserted) {
      const std::string path = location.front() == '/' ? location : base_dir_ + "/" + location;
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return {};  // a model shipped without its weights
      if (!allow_outside_ && !inside(base_dir_, path)) throw outside(p, location);
      file = MappedFile::open(path);
    }
    if (!file) return {};
    if (!has_length) length = file->size() >= offset ? file->size() - offset : 0;
    if (offset > file->size() || length > file->size() - offset)
      throw Error("external data [" + std::to_string(offset) + ", +" + std::to_string(length) + ") is outside '" +
                      location + "' (" + std::to_string(file->size()) + " bytes)",
                  {.node = {}, .value = p.name()});
    return {file, file->bytes().subspan(offset, length)};
  }

 private:
  static uint64_t parse_number(const ::onnx::TensorProto& p, const std::string& text) {
    uint64_t v = 0;
    if (text.empty() || text.size() > 19) throw Error("bad external data number '" + text + "'", {.node = {}, .value = p.name()});
    for (char c : text) {
      if (c < '0' || c > '9') throw Error("bad external data number '" + text + "'", {.node = {}, .value = p.name()});
      v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    return v;
  }
  static bool leaves_directory(const std::string& location) {
    return location.front() == '/' || location == ".." || location.starts_with("../") ||
           location.find("/../") != std::string::npos || location.ends_with("/..");
  }
  // Whether `path`, symbolic links resolved, is under `dir` (a link inside the folder may point out of it).
  static bool inside(const std::string& dir, const std::string& path) {
    std::error_code ec;
    const std::filesystem::path base = std::filesystem::canonical(dir, ec);
    if (ec) return false;
    const std::filesystem::path target = std::filesystem::canonical(path, ec);
    if (ec) return false;
    auto [b, t] = std::mismatch(base.begin(), base.end(), target.begin(), target.end());
    return b == base.end() && t != target.end();
  }
  static Error outside(const ::onnx::TensorProto& p, const std::string& location) {
    return Error("external data location '" + location +
                     "' leaves the model's directory (refused unless allowed: LoadOptions::"
                     "allow_external_outside, xexp --allow-external-outside)",
                 {.node = {}, .value = p.name()});
  }
  std::string base_dir_;
  bool allow_outside_;
  std::map<std::string, std::shared_ptr<const MappedFile>> files_;
};

// Appends tensor bytes to one side file (open as `fd`, a TemporaryFile's) and points the TensorProto at them.
class ExternalDataWriter {
 public:
  // `location`: what the model will refer to.
  ExternalDataWriter(int fd, std::string location, std::size_t threshold)
      : fd_(fd), location_(std::move(location)), threshold_(threshold) {}
  ExternalDataWriter(const ExternalDataWriter&) = delete;
  ExternalDataWriter& operator=(const ExternalDataWriter&) = delete;

  std::size_t threshold() const noexcept { return threshold_; }
  const std::string& location() const noexcept { return location_; }
  // Whether some tensor went out (a model none of whose tensors does needs no side file).
  bool written() const noexcept { return written_; }
  // `source`: the mapped file `bytes` lie in, if any; they are then copied file to file (MappedFile::copy_to).
  void write(std::span<const std::byte> bytes, const MappedFile* source, ::onnx::TensorProto* p) {
    constexpr uint64_t kAlignment = 64;  // aligned tensors can be used in place by SIMD kernels
    static constexpr std::byte zeros[kAlignment] = {};
    written_ = true;
    const uint64_t padding = (kAlignment - offset_ % kAlignment) % kAlignment;
    write_all(fd_, {zeros, padding}, location_);
    const std::size_t copied = source ? source->copy_to(fd_, bytes) : 0;
    write_all(fd_, bytes.subspan(copied), location_);
    p->set_data_location(::onnx::TensorProto::EXTERNAL);
    add_entry(p, "location", location_);
    add_entry(p, "offset", std::to_string(offset_ + padding));
    add_entry(p, "length", std::to_string(bytes.size()));
    offset_ += padding + bytes.size();
  }

 private:
  static void add_entry(::onnx::TensorProto* p, const char* key, std::string value) {
    auto* entry = p->add_external_data();
    entry->set_key(key);
    entry->set_value(std::move(value));
  }
  int fd_;
  std::string location_;
  std::size_t threshold_;
  bool written_ = false;
  uint64_t offset_ = 0;
};

}  // namespace xexp::detail
