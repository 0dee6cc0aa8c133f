#pragma once
// The table from aten op name (`addmm`, `_softmax`: the schema name without `aten::`; overloads of one
// op differ in which arguments they take, and the capture names every argument) to its converter.
#include <string>
#include <string_view>
#include <unordered_map>

#include "xexp/aten/node_lowering.hpp"
#include "xexp/core/string_hash.hpp"

namespace xexp::aten {

class ConverterTable {
 public:
  void add(std::string_view op, Converter converter) { table_.insert_or_assign(std::string(op), converter); }
  Converter find(std::string_view op) const {
    auto it = table_.find(op);
    return it == table_.end() ? nullptr : it->second;
  }
  std::size_t size() const { return table_.size(); }

 private:
  std::unordered_map<std::string, Converter, StringHash, std::equal_to<>> table_;
};

}  // namespace xexp::aten
