#pragma once
// TemporaryFile: where every file xexp writes (models, external data, tensors, drawings) goes.
// - A regular file, or a path that does not exist yet, is written under a temporary name next to it,
//   then renamed over it: a reader never sees half a file, a failure leaves the previous file as it was,
//   and a file being read (mapped) is never truncated under the reader. The temporary file is created
//   exclusively (O_EXCL) under a random name: no one can guess it and put a link there first.
// - A symbolic link is followed: the file it names is replaced that way, the link stays.
// - A character device or a FIFO is written through, as `cp` does (`-o /dev/null` stays the device);
//   a FIFO nothing reads is refused rather than waited on.
// - Anything else (a directory, a block device, a socket, a link to nothing) is refused.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "xexp/core/error.hpp"

namespace xexp::detail {

// Writes all of `bytes` to `fd`; `what` names the file in the error.
inline void write_all(int fd, std::span<const std::byte> bytes, const std::string& what) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("cannot write '" + what + "': " + std::strerror(errno));
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
}
inline void write_all(int fd, std::string_view text, const std::string& what) {
  write_all(fd, std::as_bytes(std::span<const char>(text.data(), text.size())), what);
}

class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& final_path) : final_path_(final_path) {
    struct stat st {};
    if (::stat(final_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) open_through(st);
    else create_beside(resolved(final_path));
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && !through_) ::unlink(path_.c_str());
  }

  // Where the bytes go now: the temporary file, or the device or FIFO itself.
  const std::string& path() const noexcept { return path_; }
  // Open for writing at path(), until commit().
  int fd() const noexcept { return fd_; }

  // The bytes are all written: the temporary file becomes the final one.
  void commit() {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) throw Error("cannot write '" + final_path_ + "': " + std::strerror(errno));
    if (!through_ && std::rename(path_.c_str(), target_.c_str()) != 0)
      throw Error("cannot write '" + final_path_ + "': " + std::strerror(errno));
    committed_ = true;
  }

 private:
  // The file a path names, through symbolic links; a link to nothing is refused (where the file would
  // go is the link's business, not ours to guess).
  static std::string resolved(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    char* real = ::realpath(path.c_str(), nullptr);
    if (!real) throw Error("cannot write '" + path + "': a symbolic link to nothing (" + std::strerror(errno) + ")");
    std::string out = real;
    std::free(real);
    return out;
  }

  void create_beside(const std::string& target) {
    target_ = target;
    std::random_device random;
    for (int attempt = 0; attempt < 100; ++attempt) {
      char suffix[24];
      std::snprintf(suffix, sizeof suffix, ".tmp%08x%08x", random(), random());
      path_ = target + suffix;
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0) return;
      if (errno != EEXIST) break;
    }
    const int err = errno;
    path_.clear();
    throw Error("cannot write '" + final_path_ + "': " + std::strerror(err));
  }

  void open_through(const struct stat& st) {
    through_ = true;
    path_ = target_ = final_path_;
    if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
      throw Error("cannot write '" + final_path_ + "': not a regular file, a character device or a FIFO");
    // O_NONBLOCK: a FIFO no process reads fails at once (ENXIO) instead of blocking.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0)
      throw Error("cannot write '" + final_path_ + "': " +
                  (errno == ENXIO ? std::string("a FIFO nothing reads") : std::string(std::strerror(errno))));
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  }

  std::string final_path_;  // as given, for messages
  std::string target_;      // the file renamed over (the link's target for a link)
  std::string path_;
  int fd_ = -1;
  bool through_ = false;
  bool committed_ = false;
};

}  // namespace xexp::detail
