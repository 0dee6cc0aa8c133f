#pragma once
// Module scopes: while a ModuleGuard lives, every node the builder creates is tagged with the stack
// of (path, type) scopes open at that moment, e.g. [("decoder", "DecoderLayer"),
// ("decoder.attention", "MultiAttentionBlock")]. The functions layer turns that record into local
// functions; the builder only keeps it.
#include <string>
#include <utility>
#include <vector>

namespace xexp {

struct ModuleScope {
  std::string path;  // "decoder.attention.attention.0", like a torch module name
  std::string type;  // "AttentionBlock", like a torch module class
  friend bool operator==(const ModuleScope&, const ModuleScope&) = default;
};
using ModuleStack = std::vector<ModuleScope>;  // outermost first

// Closes its scope when destroyed. Move-only.
template <class Builder>
class ModuleGuard {
 public:
  explicit ModuleGuard(Builder* builder) : builder_(builder) {}
  ModuleGuard(ModuleGuard&& other) noexcept : builder_(std::exchange(other.builder_, nullptr)) {}
  ModuleGuard(const ModuleGuard&) = delete;
  ModuleGuard& operator=(const ModuleGuard&) = delete;
  ModuleGuard& operator=(ModuleGuard&&) = delete;
  ~ModuleGuard() {
    if (builder_) builder_->pop_module();
  }

 private:
  Builder* builder_;
};

}  // namespace xexp
