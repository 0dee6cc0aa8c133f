#pragma once
// A fresh directory under the system temp dir, removed with everything in it when the object dies.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "xexp/core/error.hpp"

namespace xexp::testing {

class TempDir {
 public:
  TempDir() {
    static std::atomic<unsigned> counter{0};
    const auto base = std::filesystem::temp_directory_path();
    for (int attempt = 0; attempt < 100; ++attempt) {
      auto candidate = base / ("xexp_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
                               std::to_string(std::random_device{}()));
      if (std::filesystem::create_directory(candidate)) {
        path_ = candidate;
        return;
      }
    }
    throw Error("cannot create a temporary directory under " + base.string());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;  // a destructor must not throw; a leftover temp dir is harmless
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// A whole file, as text or as an array of T (the raw little-endian tensors the shared models ship), in one
// read: an istreambuf_iterator goes a character at a time, and the corpus sweeps read GBs.
template <class Buffer = std::string>
Buffer read_file(const std::filesystem::path& file) {
  using T = typename Buffer::value_type;
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) throw Error("cannot read " + file.string());
  const auto bytes = static_cast<std::size_t>(in.tellg());
  if (bytes % sizeof(T) != 0)
    throw Error(file.string() + ": " + std::to_string(bytes) + " bytes, not whole elements of " +
                std::to_string(sizeof(T)) + " bytes");
  Buffer out(bytes / sizeof(T), T{});
  in.seekg(0);
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(bytes));
  if (!in) throw Error("cannot read " + file.string());
  return out;
}

inline void write_file(const std::filesystem::path& file, std::string_view bytes) {
  std::ofstream out(file, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error("cannot write " + file.string());
}

}  // namespace xexp::testing
