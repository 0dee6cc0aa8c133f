#pragma once
// TakenNames: the node names a builder has handed out, kept as 64-bit hashes in one open-addressing
// array: naming a node allocates nothing. Only "is this name free?" is asked, so a hash collision
// could only make a free name look taken (one more suffix is tried), never give a name twice.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "xexp/core/string_hash.hpp"

namespace xexp {

class TakenNames {
 public:
  // False when the name was already taken.
  bool insert(std::string_view name) {
    if (2 * (count_ + 1) > slots_.size()) grow();
    const uint64_t h = key(name);
    std::size_t i = h & mask();
    for (; slots_[i] != kEmpty; i = (i + 1) & mask())
      if (slots_[i] == h) return false;
    slots_[i] = h;
    ++count_;
    return true;
  }
  bool contains(std::string_view name) const {
    if (slots_.empty()) return false;
    const uint64_t h = key(name);
    for (std::size_t i = h & mask(); slots_[i] != kEmpty; i = (i + 1) & mask())
      if (slots_[i] == h) return true;
    return false;
  }
  // Linear probing without tombstones: the entries after the hole move back where a lookup will
  // still find them.
  void erase(std::string_view name) {
    if (slots_.empty()) return;
    const uint64_t h = key(name);
    std::size_t i = h & mask();
    while (slots_[i] != h) {
      if (slots_[i] == kEmpty) return;
      i = (i + 1) & mask();
    }
    for (std::size_t j = (i + 1) & mask(); slots_[j] != kEmpty; j = (j + 1) & mask()) {
      const std::size_t home = slots_[j] & mask();
      // slots_[j] may fill the hole at i when its home is not in the cyclic range (i, j].
      if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = kEmpty;
    --count_;
  }
  std::size_t size() const noexcept { return count_; }

 private:
  static constexpr uint64_t kEmpty = 0;
  static uint64_t key(std::string_view name) {
    const uint64_t h = hash_string(name);
    return h == kEmpty ? 1 : h;
  }
  std::size_t mask() const noexcept { return slots_.size() - 1; }
  void grow() {
    std::vector<uint64_t> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : 2 * old.size(), kEmpty);
    for (uint64_t h : old)
      if (h != kEmpty) {
        std::size_t i = h & mask();
        while (slots_[i] != kEmpty) i = (i + 1) & mask();
        slots_[i] = h;
      }
  }

  std::vector<uint64_t> slots_;  // a power of two long, at most half full
  std::size_t count_ = 0;
};

}  // namespace xexp
