#pragma once
// Tensors created from sizes and numbers: arange, full, zeros, ones, empty and their *_like and new_*
// forms. With the trace's static shapes they are constants: a ConstantOfShape (the optimizer folds it
// where that pays) or, for arange, an initializer; a dynamic dimension gives a computed shape. `empty`
// reads as zeros.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "xexp/aten/converter_table.hpp"

namespace xexp::aten {

namespace detail {

// The output's shape: the traced one when static, else a computed `size` or the shape of the tensor
// a *_like op copies.
inline void filled_like(NodeLowering& c, double value) {
  const Tensor one = filled(c.output_type(), {1}, value);
  const Shape& traced = c.output_shape();
  const bool is_static = std::all_of(traced.begin(), traced.end(), [](const Dim& d) { return d.is_static(); });
  std::string shape;
  if (c.is_dynamic("size")) shape = c.shape_input("size");
  else if (!is_static && c.op().ends_with("_like") && c.has_input(0)) shape = c.g.op.Shape(c.input(0));
  else shape = c.ints_constant(c.static_output_shape());
  c.result(c.g.op.ConstantOfShape(shape, {{"value", one}}));
}
inline void zeros(NodeLowering& c) { filled_like(c, 0.0); }
inline void ones(NodeLowering& c) { filled_like(c, 1.0); }
inline void full(NodeLowering& c) { filled_like(c, c.f("fill_value")); }
inline void scalar_tensor(NodeLowering& c) { filled_like(c, c.f("s")); }

// arange(end), arange(start, end), arange(start, end, step), in the traced dtype: a Range when a bound is
// computed from a dynamic dimension.
inline void arange(NodeLowering& c) {
  if (c.is_dynamic("start") || c.is_dynamic("end") || c.is_dynamic("step")) {
    const ElemType t = c.output_type();
    auto bound = [&](std::string_view name, double otherwise) {
      return c.is_dynamic(name) ? c.cast(c.dynamic_input(name), t) : c.constant(c.f(name, otherwise), t);
    };
    return c.result(c.g.op.Range(bound("start", 0.0), bound("end", 0.0), bound("step", 1.0)));
  }
  const double start = c.f("start", 0.0), end = c.f("end"), step = c.f("step", 1.0);
  if (step == 0) c.fail("step is 0");
  const auto n = static_cast<int64_t>(std::max(0.0, std::ceil((end - start) / step)));
  std::vector<double> values(static_cast<std::size_t>(n));
  for (int64_t k = 0; k < n; ++k) values[static_cast<std::size_t>(k)] = start + static_cast<double>(k) * step;
  c.result(c.g.make_initializer("", cast_tensor(Tensor::from<double>({n}, values), c.output_type())));
}

// `constant`: a tensor the forward created, as the capture writes it (attribute `value`).
inline void constant(NodeLowering& c) {
  const ir::Attribute* value = c.node().attribute(Symbol("value"));
  if (!value || value->tensors.size() != 1) c.fail("attribute 'value' is missing");
  c.result(c.g.make_initializer("", value->tensors[0]));
}

}  // namespace detail

inline void add_creation_converters(ConverterTable& table) {
  using namespace detail;
  for (const char* op : {"zeros", "zeros_like", "new_zeros", "empty", "empty_like", "new_empty", "empty_strided"})
    table.add(op, zeros);
  for (const char* op : {"ones", "ones_like", "new_ones"}) table.add(op, ones);
  for (const char* op : {"full", "full_like", "new_full"}) table.add(op, full);
  table.add("scalar_tensor", scalar_tensor);
  table.add("arange", arange);
  table.add("constant", constant);
}

}  // namespace xexp::aten
