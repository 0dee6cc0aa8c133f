#pragma once
// A read-only memory mapping of a whole file. Model files are parsed straight from the mapping and
// external-data tensors keep pointing into it, so weights are neither read twice nor copied.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "xexp/core/error.hpp"

namespace xexp {

class MappedFile {
 public:
  // Throws xexp::Error naming the file and the system's reason when it cannot be opened.
  static std::shared_ptr<const MappedFile> open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error("cannot open '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw Error("cannot read '" + path + "': not a regular file");
    }
    auto size = static_cast<std::size_t>(st.st_size);
    void* data = nullptr;
    if (size > 0) {
      data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (data == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        throw Error("cannot map '" + path + "': " + std::strerror(err));
      }
    }
    ::close(fd);  // the mapping stays valid after the descriptor is closed
    return std::shared_ptr<const MappedFile>(new MappedFile(path, static_cast<const std::byte*>(data), size));
  }

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
  }

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  std::size_t size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }

 private:
  MappedFile(std::string path, const std::byte* data, std::size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  const std::byte* data_;
  std::size_t size_;
};

}  // namespace xexp
