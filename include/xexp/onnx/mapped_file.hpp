#pragma once
// A read-only memory mapping of a whole file. Model files are parsed straight from the mapping and
// external-data tensors keep pointing into it, so weights are neither read twice nor copied; saving
// copies them file to file in the kernel (copy_to), so they are not read into the process either.
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
  // Throws xexp::Error naming the file and the system's reason when it cannot be opened, or when it is
  // not a regular file. O_NONBLOCK: opening a FIFO no one writes to returns at once (to be refused)
  // instead of waiting forever; it changes nothing for a regular file.
  static std::shared_ptr<const MappedFile> open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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
    ::close(fd);  // the mapping stays valid after the descriptor is closed (no descriptor per side file kept)
    return std::shared_ptr<const MappedFile>(
        new MappedFile(path, static_cast<const std::byte*>(data), size, st.st_dev, st.st_ino));
  }

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
  }

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  std::size_t size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }

  // Appends `range` (a part of bytes()) to the file open as `out_fd` with copy_file_range: the kernel
  // copies between the files (page cache to page cache, or a reflink), the pages are never mapped into
  // this process. Returns how many bytes were copied, from the start of `range`; the caller writes the
  // rest itself (0 when the path now names another file, or across file systems on some kernels).
  std::size_t copy_to(int out_fd, std::span<const std::byte> range) const {
    if (range.empty() || range.data() < data_ || range.data() + range.size() > data_ + size_) return 0;
    const int in = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) return 0;
    struct stat st {};
    std::size_t copied = 0;
    if (::fstat(in, &st) == 0 && st.st_dev == device_ && st.st_ino == inode_) {
      loff_t from = range.data() - data_;
      while (copied < range.size()) {
        const ssize_t n = ::copy_file_range(in, &from, out_fd, nullptr, range.size() - copied, 0);
        if (n <= 0) break;
        copied += static_cast<std::size_t>(n);
      }
    }
    ::close(in);
    return copied;
  }

 private:
  MappedFile(std::string path, const std::byte* data, std::size_t size, dev_t device, ino_t inode)
      : path_(std::move(path)), data_(data), size_(size), device_(device), inode_(inode) {}
  std::string path_;
  const std::byte* data_;
  std::size_t size_;
  dev_t device_;  // which file was mapped: its path may name another one by the time it is copied
  ino_t inode_;
};

}  // namespace xexp
