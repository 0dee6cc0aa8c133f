#pragma once
// Symbol: a process-wide interned string for the small vocabularies that are compared constantly (op
// types, domains, attribute names, symbolic dimensions). Comparing two symbols is comparing two
// integers; the table only grows, and its size is bounded by the vocabulary, not by model size.
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "xexp/core/error.hpp"
#include "xexp/core/string_hash.hpp"

namespace xexp {

class Symbol {
 public:
  constexpr Symbol() noexcept = default;  // the empty string
  Symbol(std::string_view text) : id_(text.empty() ? 0 : table().intern(text)) {}  // NOLINT: implicit on purpose
  Symbol(const char* text) : Symbol(std::string_view(text)) {}  // NOLINT
  Symbol(const std::string& text) : Symbol(std::string_view(text)) {}  // NOLINT

  std::string_view view() const { return id_ == 0 ? std::string_view() : table().text(id_); }
  std::string str() const { return std::string(view()); }
  bool empty() const noexcept { return id_ == 0; }
  uint32_t id() const noexcept { return id_; }

  friend bool operator==(Symbol a, Symbol b) noexcept { return a.id_ == b.id_; }
  friend auto operator<=>(Symbol a, Symbol b) noexcept { return a.id_ <=> b.id_; }
  friend bool operator==(Symbol a, std::string_view b) { return a.view() == b; }
  // Exact overloads: without them `symbol == some_std_string` is ambiguous (both sides convert).
  friend bool operator==(Symbol a, const std::string& b) { return a.view() == b; }
  friend bool operator==(Symbol a, const char* b) { return a.view() == b; }

 private:
  // Only a text new to the process takes the lock (rare: the vocabulary is small); reading a symbol's
  // text takes none, since comparing an op type with a literal happens on every node visited. Texts
  // live in fixed chunks that never move, published through atomic chunk pointers before their ids
  // are handed out.
  class Table {
   public:
    Table() { intern(""); }
    // Each thread remembers the texts it has seen (keys view the table's own copies, which never
    // move): after the first time, turning a text into a symbol takes no lock.
    uint32_t intern(std::string_view text) {
      thread_local std::unordered_map<std::string_view, uint32_t, StringHash> seen;
      if (auto it = seen.find(text); it != seen.end()) return it->second;
      const uint32_t id = intern_shared(text);
      seen.emplace(this->text(id), id);
      return id;
    }
    // `id` came from intern(), whose lock ordered the write of its slot before this read.
    std::string_view text(uint32_t id) const {
      return chunks_[id / kChunkSize].load(std::memory_order_acquire)[id % kChunkSize];
    }

   private:
    uint32_t intern_shared(std::string_view text) {
      {
        std::shared_lock lock(mutex_);
        if (auto it = ids_.find(text); it != ids_.end()) return it->second;
      }
      std::unique_lock lock(mutex_);
      if (auto it = ids_.find(text); it != ids_.end()) return it->second;
      const std::string& stored = texts_.emplace_back(text);  // deque: stable addresses
      auto id = static_cast<uint32_t>(texts_.size() - 1);
      if (id >= kChunkSize * kMaxChunks) throw Error("too many distinct symbols");
      std::atomic<std::string_view*>& chunk = chunks_[id / kChunkSize];
      if (!chunk.load(std::memory_order_relaxed))
        chunk.store(owned_.emplace_back(std::make_unique<std::string_view[]>(kChunkSize)).get(),
                    std::memory_order_release);
      chunk.load(std::memory_order_relaxed)[id % kChunkSize] = stored;
      ids_.emplace(std::string_view(stored), id);
      return id;
    }

    static constexpr uint32_t kChunkSize = 4096, kMaxChunks = 4096;
    std::shared_mutex mutex_;
    std::deque<std::string> texts_;
    std::unordered_map<std::string_view, uint32_t, StringHash> ids_;
    std::vector<std::unique_ptr<std::string_view[]>> owned_;
    std::atomic<std::string_view*> chunks_[kMaxChunks] = {};
  };
  static Table& table() {
    static Table instance;
    return instance;
  }
  uint32_t id_ = 0;
};

// An operator, or a local function, by its domain and name as one integer: the key of every table
// that dispatches on them (kernels, inference rules, the optimizer's rule roots, schemas, the inliner's
// functions). A call node's (domain, op_type) and its function's (domain, name) give the same key.
inline uint64_t op_key(Symbol domain, Symbol op_type) noexcept {
  return (uint64_t{domain.id()} << 32) | op_type.id();
}

}  // namespace xexp

template <>
struct std::hash<xexp::Symbol> {
  std::size_t operator()(xexp::Symbol s) const noexcept { return s.id(); }
};
