#pragma once
// The small vocabulary types of GraphBuilder calls: what a node reads (Arg: a value name, a tensor
// that becomes an initializer, int64 values that become a 1-D initializer), its attributes
// ({"axis", 1}) and what make_node returns (Outputs, usable as a name when there is one output).
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xexp/core/error.hpp"
#include "xexp/core/tensor.hpp"
#include "xexp/ir/attribute.hpp"

namespace xexp {

// The names of the outputs of a created node.
class Outputs {
 public:
  explicit Outputs(std::vector<std::string> names) : names_(std::move(names)) {}
  // The single output (most ops have one); throws when there are several.
  operator const std::string&() const {  // NOLINT: implicit on purpose, `std::string y = g.op.Add(a, b)`
    if (names_.size() != 1)
      throw Error("the node has " + std::to_string(names_.size()) + " outputs, pick one with [k]");
    return names_[0];
  }
  const std::string& name() const { return *this; }
  const std::string& operator[](std::size_t k) const { return names_.at(k); }
  std::size_t size() const noexcept { return names_.size(); }
  auto begin() const { return names_.begin(); }
  auto end() const { return names_.end(); }
  const std::vector<std::string>& names() const noexcept { return names_; }

 private:
  std::vector<std::string> names_;
};

// One input of an op shortcut.
class Arg {
 public:
  enum class Kind { Omitted, Name, Tensor, Ints };
  Arg() = default;  // an omitted optional input
  // Templated so that a braced list ({0, -1}, {{"axis", 1}}) never reads as a string.
  template <class S>
    requires std::convertible_to<const S&, std::string_view>
  Arg(const S& name) : kind_(Kind::Name), name_(std::string_view(name)) {}  // NOLINT
  Arg(const Outputs& o) : kind_(Kind::Name), name_(o.name()) {}              // NOLINT
  Arg(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}              // NOLINT
  Arg(std::vector<int64_t> values) : kind_(Kind::Ints), ints_(std::move(values)) {}  // NOLINT
  Arg(std::initializer_list<int64_t> values) : kind_(Kind::Ints), ints_(values) {}     // NOLINT: {0, -1}

  Kind kind() const noexcept { return kind_; }
  const std::string& name() const noexcept { return name_; }
  const Tensor& tensor() const noexcept { return tensor_; }
  const std::vector<int64_t>& ints() const noexcept { return ints_; }

 private:
  Kind kind_ = Kind::Omitted;
  std::string name_;
  Tensor tensor_;
  std::vector<int64_t> ints_;
};

// One attribute: {"axis", 1}, {"alpha", 0.5f}, {"perm", {1, 0}}, {"value", tensor}, ...
struct AttrArg {
  ir::Attribute attr;
  AttrArg(ir::Attribute a) : attr(std::move(a)) {}  // NOLINT
  AttrArg(std::string_view name, int v) : attr(ir::Attribute::make_int(name, v)) {}
  AttrArg(std::string_view name, int64_t v) : attr(ir::Attribute::make_int(name, v)) {}
  AttrArg(std::string_view name, float v) : attr(ir::Attribute::make_float(name, v)) {}
  AttrArg(std::string_view name, double v) : attr(ir::Attribute::make_float(name, static_cast<float>(v))) {}
  AttrArg(std::string_view name, const char* v) : attr(ir::Attribute::make_string(name, v)) {}
  AttrArg(std::string_view name, std::string v) : attr(ir::Attribute::make_string(name, std::move(v))) {}
  AttrArg(std::string_view name, std::initializer_list<int> v)
      : attr(ir::Attribute::make_ints(name, std::vector<int64_t>(v.begin(), v.end()))) {}
  AttrArg(std::string_view name, std::vector<int64_t> v) : attr(ir::Attribute::make_ints(name, std::move(v))) {}
  AttrArg(std::string_view name, std::initializer_list<double> v)
      : attr(ir::Attribute::make_floats(name, std::vector<float>(v.begin(), v.end()))) {}
  AttrArg(std::string_view name, std::vector<float> v) : attr(ir::Attribute::make_floats(name, std::move(v))) {}
  AttrArg(std::string_view name, std::vector<std::string> v) : attr(ir::Attribute::make_strings(name, std::move(v))) {}
  AttrArg(std::string_view name, Tensor v) : attr(ir::Attribute::make_tensor(name, std::move(v))) {}
};
using Attrs = std::vector<AttrArg>;

// How many outputs a node has, or their names.
struct OutputSpec {
  OutputSpec(int count) : count(count) {}  // NOLINT
  OutputSpec(std::vector<std::string> output_names)  // NOLINT
      : count(static_cast<int>(output_names.size())), names(std::move(output_names)) {}
  OutputSpec(std::initializer_list<const char*> output_names) : OutputSpec(std::vector<std::string>(output_names.begin(), output_names.end())) {}
  int count;
  std::vector<std::string> names;  // empty: generated
};

// The optional tail of an op shortcut: g.op.Add(a, b, {}, {.outputs = {"Y"}}).
struct OpOptions {
  std::vector<std::string> outputs = {};  // names of the outputs (generated when empty)
  int output_count = 0;              // 0: one, or what the op's arguments imply (Split)
  std::string name = {};             // node name
  std::string domain = {};           // overrides the shortcut's domain
};

}  // namespace xexp
