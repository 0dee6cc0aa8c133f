#pragma once
// What a reference kernel sees (its inputs, attributes with ONNX defaults, opset) and the registry that
// maps (domain, op_type) to kernels. Kernels are plain functions so that a family header only has to
// add entries; the registry itself knows no op.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "xexp/core/error.hpp"
#include "xexp/core/symbol.hpp"
#include "xexp/core/tensor.hpp"
#include "xexp/ir/attribute.hpp"

namespace xexp::eval {

struct KernelContext {
  Symbol op_type;
  Symbol domain;
  const std::vector<std::optional<Tensor>>& inputs;
  const std::vector<ir::Attribute>& attributes;
  int64_t opset;
  std::size_t n_outputs;

  std::size_t input_count() const noexcept { return inputs.size(); }
  // An optional input is absent when omitted ("" in the node) or past the end.
  bool has(std::size_t i) const noexcept { return i < inputs.size() && inputs[i] && !inputs[i]->empty(); }
  const Tensor& in(std::size_t i) const {
    if (!has(i)) throw Error("missing input " + std::to_string(i));
    return *inputs[i];
  }
  const ir::Attribute* attr(std::string_view name) const {
    for (const ir::Attribute& a : attributes)
      if (a.name == name) return &a;
    return nullptr;
  }
  int64_t attr_int(std::string_view name, int64_t fallback) const {
    const ir::Attribute* a = attr(name);
    return a ? a->i : fallback;
  }
  float attr_float(std::string_view name, float fallback) const {
    const ir::Attribute* a = attr(name);
    return a ? a->f : fallback;
  }
  std::string attr_string(std::string_view name, std::string fallback = {}) const {
    const ir::Attribute* a = attr(name);
    return a ? a->s : fallback;
  }
  std::optional<std::vector<int64_t>> attr_ints(std::string_view name) const {
    const ir::Attribute* a = attr(name);
    if (!a) return std::nullopt;
    return a->ints;
  }
  std::vector<float> attr_floats(std::string_view name) const {
    const ir::Attribute* a = attr(name);
    return a ? a->floats : std::vector<float>{};
  }
  [[noreturn]] void fail(const std::string& cause) const { throw Error(op_type.str() + ": " + cause); }
};

using Kernel = std::function<std::vector<Tensor>(const KernelContext&)>;

struct KernelEntry {
  Kernel kernel;
  // float16/bfloat16 inputs are given to the kernel as float and float results are converted back:
  // kernels then compute in float once instead of handling two more types each.
  bool widen_half = true;
};

class KernelRegistry {
 public:
  void add(Symbol domain, Symbol op_type, Kernel kernel, bool widen_half = true) {
    table_[op_key(domain, op_type)] = {domain, op_type, KernelEntry{std::move(kernel), widen_half}};
  }
  void add(Symbol op_type, Kernel kernel, bool widen_half = true) { add(Symbol(), op_type, std::move(kernel), widen_half); }
  const KernelEntry* find(Symbol domain, Symbol op_type) const {
    if (domain.view() == "ai.onnx") domain = Symbol();
    auto it = table_.find(op_key(domain, op_type));
    return it == table_.end() ? nullptr : &it->second.entry;
  }
  // Every registered (domain, op_type).
  std::vector<std::pair<Symbol, Symbol>> ops() const {
    std::vector<std::pair<Symbol, Symbol>> out;
    for (const auto& [k, row] : table_) out.emplace_back(row.domain, row.op_type);
    return out;
  }

 private:
  struct Row {
    Symbol domain, op_type;
    KernelEntry entry;
  };
  std::unordered_map<uint64_t, Row> table_;
};

}  // namespace xexp::eval
