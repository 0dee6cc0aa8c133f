#pragma once
// TemporaryFile: every file xexp writes (models, external data, tensors) is written next to its final
// place under a temporary name, then renamed over it: a reader never sees half a file, a failure leaves
// the previous file as it was, and a file being read (mapped) is never truncated under the reader.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "xexp/core/error.hpp"

namespace xexp::detail {

class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& final_path)
      : final_path_(final_path), path_(final_path + ".tmp" + std::to_string(::getpid())) {}
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (!committed_) std::remove(path_.c_str());
  }
  const std::string& path() const noexcept { return path_; }
  void commit() {
    if (std::rename(path_.c_str(), final_path_.c_str()) != 0)
      throw Error("cannot write '" + final_path_ + "': " + std::strerror(errno));
    committed_ = true;
  }

 private:
  std::string final_path_, path_;
  bool committed_ = false;
};

}  // namespace xexp::detail
