#pragma once
// Symbol: a process-wide interned string for the small vocabularies that are compared constantly (op
// types, domains, attribute names, symbolic dimensions). Comparing two symbols is comparing two
// integers; the table only grows, and its size is bounded by the vocabulary, not by model size.
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace xexp {

class Symbol {
 public:
  constexpr Symbol() noexcept = default;  // the empty string
  Symbol(std::string_view text) : id_(table().intern(text)) {}  // NOLINT: implicit on purpose
  Symbol(const char* text) : Symbol(std::string_view(text)) {}  // NOLINT
  Symbol(const std::string& text) : Symbol(std::string_view(text)) {}  // NOLINT

  std::string_view view() const { return table().text(id_); }
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
  class Table {
   public:
    Table() { intern(""); }
    uint32_t intern(std::string_view text) {
      {
        std::shared_lock lock(mutex_);
        if (auto it = ids_.find(text); it != ids_.end()) return it->second;
      }
      std::unique_lock lock(mutex_);
      if (auto it = ids_.find(text); it != ids_.end()) return it->second;
      const std::string& stored = texts_.emplace_back(text);  // deque: stable addresses
      auto id = static_cast<uint32_t>(texts_.size() - 1);
      ids_.emplace(std::string_view(stored), id);
      return id;
    }
    std::string_view text(uint32_t id) {
      std::shared_lock lock(mutex_);
      return texts_[id];
    }

   private:
    std::shared_mutex mutex_;
    std::deque<std::string> texts_;
    std::unordered_map<std::string_view, uint32_t> ids_;
  };
  static Table& table() {
    static Table instance;
    return instance;
  }
  uint32_t id_ = 0;
};

}  // namespace xexp

template <>
struct std::hash<xexp::Symbol> {
  std::size_t operator()(xexp::Symbol s) const noexcept { return s.id(); }
};
