#pragma once
// Rules of the ops that move data around without computing (Reshape, Transpose, Concat, Split, Slice,
// Gather, Squeeze, Unsqueeze, Expand, Flatten, Tile, Pad) and of the ops that make shapes (Shape, Size,
// ConstantOfShape, Range, Constant). Those that can also propagate the content of shape values do, so
// that Reshape(X, Concat(Shape(X)[0:1], [-1])) keeps the symbolic batch dimension.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xexp/core/checked_int.hpp"
#include "xexp/core/slice_range.hpp"
#include "xexp/infer/elementwise.hpp"
#include "xexp/infer/rule_table.hpp"

namespace xexp::infer {

// ---- symbolic arithmetic ---------------------------------------------------------------------------

// Sums and products of dimensions, spelled as experimental-experiment spells them: "a+b" for Concat of
// symbolic sizes, "a*b" for Reshape(-1) or Flatten merging symbolic axes. Static terms fold into one
// trailing constant ("a+3", "a*b*6"); the text is the symbol, so two results built alike are equal.
// An unknown operand makes the result unknown.
inline Dim sum_dims(const std::vector<Dim>& dims) {
  int64_t total = 0;
  std::string expr;
  for (const Dim& d : dims) {
    if (d.is_unknown()) return {};
    if (d.is_static()) {
      const std::optional<int64_t> sum = checked_add(total, d.value());
      if (!sum) return {};  // no tensor that large: unknown
      total = *sum;
      continue;
    }
    if (!expr.empty()) expr += '+';
    expr += d.symbol().view();
  }
  if (expr.empty()) return Dim(total);
  if (total != 0) expr += "+" + std::to_string(total);
  return Dim::symbolic(expr);
}

inline Dim product_dims(Shape::const_iterator first, Shape::const_iterator last) {
  int64_t p = 1;
  std::string expr;
  const Dim* only = nullptr;  // the symbolic factor when there is one: "a+b" times 1 stays "a+b"
  int symbols = 0;
  for (auto it = first; it != last; ++it) {
    if (it->is_unknown()) return {};
    if (it->is_static()) {
      const std::optional<int64_t> product = checked_mul(p, it->value());
      if (!product) return {};  // no tensor that large: unknown
      p = *product;
      continue;
    }
    only = &*it;
    ++symbols;
    const std::string_view factor = it->symbol().view();
    if (!expr.empty()) expr += '*';
    if (factor.find('+') == std::string_view::npos) {
      expr += factor;
    } else {
      expr += '(';
      expr += factor;
      expr += ')';
    }
  }
  if (expr.empty() || p == 0) return Dim(p);
  if (symbols == 1 && p == 1) return *only;
  if (p != 1) expr += "*" + std::to_string(p);
  return Dim::symbolic(expr);
}

// One element of Add, Sub, Mul or Div of shape values (Shape(X)[1] * 4, seq - past): static elements
// compute as int64 does; a symbol survives the operations that keep it (x + 0, x - 0, x * 1, x / 1),
// sums and products are spelled as above, and x - x is 0, x / x is 1. Anything else is unknown.
inline Dim shape_value_arithmetic(std::string_view op, const Dim& a, const Dim& b) {
  const std::optional<int64_t> x = content_int(a), y = content_int(b);
  if (x && y) {  // as the kernels compute (core/checked_int.hpp); no value where they fail
    if (op == "Add") return content_dim(wrapping_add(*x, *y));
    if (op == "Sub") return content_dim(wrapping_sub(*x, *y));
    if (op == "Mul") return content_dim(wrapping_mul(*x, *y));
    return division_error(*x, *y) ? Dim() : content_dim(int_divide(*x, *y));
  }
  if (a.is_unknown() || b.is_unknown()) return {};
  const bool same_symbol = a.is_symbolic() && a == b;
  const bool sizes = (!x || *x >= 0) && (!y || *y >= 0);  // no -1 of a Reshape target among them
  if (op == "Add") return y == 0 ? a : x == 0 ? b : sizes ? sum_dims({a, b}) : Dim();
  if (op == "Sub") return y == 0 ? a : same_symbol ? Dim(0) : Dim();
  if (op == "Mul") {
    if (y == 1 || x == 1) return y == 1 ? a : b;
    if (x == 0 || y == 0) return Dim(0);
    const Shape factors{a, b};
    return sizes ? product_dims(factors.begin(), factors.end()) : Dim();
  }
  return y == 1 ? a : same_symbol ? Dim(1) : Dim();
}

// ---- Reshape ------------------------------------------------------------------------------------

// The dimension -1 stands for: elements of `in` divided by elements of `known`. Static sizes divide,
// symbols of `known` cancel those of `in`, the symbols left multiply ("a*b"); a symbol of `known` not
// in `in`, or sizes that do not divide, give an unknown dimension.
inline Dim missing_reshape_dim(const Shape& in, const Shape& known, const ShapeConstraints& constraints) {
  int64_t p_in = 1, p_out = 1;
  Shape s_in;
  for (const Dim& d0 : in) {
    const Dim d = constraints.canonical(d0);
    if (d.is_unknown()) return {};
    if (!d.is_static())
      s_in.push_back(d);
    else if (__builtin_mul_overflow(p_in, d.value(), &p_in))
      return {};  // a hostile shape: unknown
  }
  for (const Dim& d0 : known) {
    const Dim d = constraints.canonical(d0);
    if (d.is_unknown()) return {};
    if (d.is_static()) {
      if (__builtin_mul_overflow(p_out, d.value(), &p_out)) return {};
      continue;
    }
    auto it = std::find(s_in.begin(), s_in.end(), d);
    if (it == s_in.end()) return {};
    s_in.erase(it);
  }
  if (p_out == 0 || p_in % p_out != 0) return {};
  s_in.push_back(Dim(p_in / p_out));
  return product_dims(s_in.begin(), s_in.end());
}

inline void infer_reshape(InferContext& c) {
  const auto content = c.value_shape(1);
  if (!content) {
    const auto& target = c.shape(1);
    if (target && target->size() == 1 && target->at(0).is_static())
      c.set_output_rank(0, c.type(0), static_cast<std::size_t>(target->at(0).value()));
    else
      c.set_output(0, c.type(0));
    return;
  }
  const bool allowzero = c.attr_int("allowzero", 0) != 0;
  const auto& in = c.shape(0);
  Shape out(content->size());
  std::optional<std::size_t> minus_one;
  for (std::size_t i = 0; i < content->size(); ++i) {
    const Dim& d = (*content)[i];
    const auto v = content_int(d);
    if (v && *v < -1) c.fail("invalid dimension " + std::to_string(*v) + " in the new shape");
    if (v && *v == -1) {
      if (minus_one) c.fail("the new shape has two -1");
      minus_one = i;
    } else if (v && *v == 0 && !allowzero) {
      out[i] = in && i < in->size() ? (*in)[i] : Dim();
    } else {
      out[i] = d;
    }
  }
  if (minus_one && in) {
    Shape known = out;
    known.erase(known.begin() + static_cast<std::ptrdiff_t>(*minus_one));
    out[*minus_one] = missing_reshape_dim(*in, known, c.constraints());
  }
  c.set_output(0, c.type(0), out);
  if (auto data = c.value_shape(0); data && element_count(out) == static_cast<int64_t>(data->size()))
    c.set_value_shape(0, *data);
}

// ---- Transpose, Concat, Split --------------------------------------------------------------------

inline void infer_transpose(InferContext& c) {
  if (!c.shape(0)) return c.set_output(0, c.type(0));
  const Shape& in = *c.shape(0);
  std::vector<int64_t> perm = c.attr_ints("perm").value_or(std::vector<int64_t>{});
  if (perm.empty()) {
    perm.resize(in.size());
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  if (perm.size() != in.size()) c.fail("perm has " + std::to_string(perm.size()) + " axes, the input " + std::to_string(in.size()));
  Shape out(in.size());
  for (std::size_t i = 0; i < perm.size(); ++i) out[i] = in[c.normalize_axis(perm[i], in.size())];
  c.set_output(0, c.type(0), out);
}

inline void infer_concat(InferContext& c) {
  const ElemType type = c.first_known_type();
  if (!c.shapes_known(0, c.input_count()) || c.input_count() == 0) return c.set_output(0, type);
  Shape out = *c.shape(0);
  const std::size_t axis = c.normalize_axis(c.attr_int("axis", 0), out.size());
  std::vector<Dim> along{c.constraints().canonical(out[axis])};
  for (std::size_t i = 1; i < c.input_count(); ++i) {
    const Shape& s = *c.shape(i);
    if (s.size() != out.size()) c.fail("inputs of ranks " + std::to_string(out.size()) + " and " + std::to_string(s.size()));
    for (std::size_t k = 0; k < s.size(); ++k)
      if (k == axis) along.push_back(c.constraints().canonical(s[k]));
      else out[k] = c.unify(out[k], s[k]);
  }
  out[axis] = sum_dims(along);
  c.set_output(0, type, out);
  if (out.size() != 1) return;
  Shape content;
  for (std::size_t i = 0; i < c.input_count(); ++i) {
    auto part = c.value_shape(i);
    if (!part) return;
    content.insert(content.end(), part->begin(), part->end());
  }
  c.set_value_shape(0, content);
}

inline void infer_split(InferContext& c) {
  const std::size_t n = c.output_count();
  if (!c.shape(0)) {
    for (std::size_t k = 0; k < n; ++k) c.set_output(k, c.type(0));
    return;
  }
  const Shape& in = *c.shape(0);
  const std::size_t axis = c.normalize_axis(c.attr_int("axis", 0), in.size());
  std::optional<std::vector<int64_t>> sizes = c.moved_ints();
  if (sizes && sizes->size() != n) c.fail("split has " + std::to_string(sizes->size()) + " sizes for " + std::to_string(n) + " outputs");
  if (!sizes && !c.moved_given() && in[axis].is_static()) {
    // Equal chunks; from opset 18 the last one may be smaller.
    if (n == 0) c.fail("Split has no output");
    const int64_t d = in[axis].value(), chunks = static_cast<int64_t>(n), chunk = d / chunks + (d % chunks != 0);
    sizes.emplace();
    for (int64_t k = 0; k < chunks; ++k) sizes->push_back(std::max<int64_t>(0, std::min(chunk, d - k * chunk)));
  }
  // A shape value split into pieces (GathersSplit's Split(Shape(X))): each piece holds its elements.
  const std::optional<Shape> content = in.size() == 1 && sizes ? c.value_shape(0) : std::nullopt;
  std::size_t first = 0;
  for (std::size_t k = 0; k < n; ++k) {
    Shape out = in;
    out[axis] = sizes ? Dim((*sizes)[k]) : Dim();
    c.set_output(k, c.type(0), out);
    const int64_t size = sizes ? (*sizes)[k] : -1;
    if (!content || size < 0 || first + static_cast<std::size_t>(size) > content->size()) continue;
    const auto begin = content->begin() + static_cast<std::ptrdiff_t>(first);
    c.set_value_shape(k, Shape(begin, begin + size));
    first += static_cast<std::size_t>(size);
  }
}

// ---- Slice, Gather -------------------------------------------------------------------------------

inline void infer_slice(InferContext& c) {
  const bool from_attributes = c.opset() < 10;
  auto starts = from_attributes ? c.attr_ints("starts") : c.ints(1);
  auto ends = from_attributes ? c.attr_ints("ends") : c.ints(2);
  auto axes = from_attributes ? c.attr_ints("axes") : (c.has_input(3) ? c.ints(3) : std::optional<std::vector<int64_t>>{});
  const bool axes_given = from_attributes ? c.attr("axes") != nullptr : c.has_input(3);
  auto steps = from_attributes ? std::optional<std::vector<int64_t>>{} : c.ints(4);
  if (!c.shape(0)) return c.set_output(0, c.type(0));
  const Shape& in = *c.shape(0);
  if (axes_given && !axes) return c.set_output_rank(0, c.type(0), in.size());
  if (!axes && starts) {
    axes.emplace(starts->size());
    std::iota(axes->begin(), axes->end(), 0);
  }
  Shape out = in;
  if (!starts || !ends) {
    for (int64_t a : axes.value_or(std::vector<int64_t>{})) out[c.normalize_axis(a, in.size())] = Dim();
    if (!axes) out.assign(in.size(), Dim());
    return c.set_output(0, c.type(0), out);
  }
  if (starts->size() != ends->size() || axes->size() != starts->size() || (steps && steps->size() != starts->size()))
    c.fail("starts, ends, axes and steps have different lengths");
  constexpr int64_t kToTheEnd = std::numeric_limits<int32_t>::max();
  std::optional<Shape> content = in.size() == 1 ? c.value_shape(0) : std::nullopt;
  for (std::size_t j = 0; j < axes->size(); ++j) {
    const std::size_t axis = c.normalize_axis((*axes)[j], in.size());
    const int64_t step = steps ? (*steps)[j] : 1, start = (*starts)[j], end = (*ends)[j];
    if (step == 0) c.fail("a step is 0");
    if (in[axis].is_static()) {
      out[axis] = Dim(slice_range(in[axis].value(), start, end, step).count);
    } else {
      // A symbolic dimension survives only a slice that keeps everything.
      const bool everything = step == 1 && start == 0 && end >= kToTheEnd;
      out[axis] = everything ? in[axis] : Dim();
    }
    if (content) {
      Shape picked;
      const SliceRange kept = slice_range(static_cast<int64_t>(content->size()), start, end, step);
      for (int64_t k = 0; k < kept.count; ++k) picked.push_back((*content)[static_cast<std::size_t>(kept[k])]);
      content = std::move(picked);
    }
  }
  c.set_output(0, c.type(0), out);
  if (content) c.set_value_shape(0, *content);
}

inline void infer_gather(InferContext& c) {
  if (!c.shape(0) || !c.shape(1)) return c.set_output(0, c.type(0));
  const Shape& data = *c.shape(0);
  const Shape& indices = *c.shape(1);
  if (data.empty()) c.fail("Gather needs data of rank >= 1");
  const std::size_t axis = c.normalize_axis(c.attr_int("axis", 0), data.size());
  Shape out(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(axis));
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(axis) + 1, data.end());
  c.set_output(0, c.type(0), out);
  if (data.size() != 1 || indices.size() > 1) return;
  auto content = c.value_shape(0);
  auto picked = c.ints(1);
  if (!content || !picked) return;
  Shape result;
  const auto n = static_cast<int64_t>(content->size());
  for (int64_t i : *picked) {
    if (i < -n || i >= n) c.fail("index " + std::to_string(i) + " out of range " + std::to_string(n));
    result.push_back((*content)[static_cast<std::size_t>(i < 0 ? i + n : i)]);
  }
  c.set_value_shape(0, result);
}

inline void infer_gather_elements(InferContext& c) { c.set_output(0, c.type(0), c.shape(1)); }

// GatherND: each index row (indices' last axis, k values) picks a slice of data past its batch_dims
// leading axes: indices.shape[:-1] + data.shape[batch_dims + k:]. torch's cos/sin caches read by position
// are exported this way.
inline void infer_gather_nd(InferContext& c) {
  if (!c.shape(0) || !c.shape(1) || c.shape(1)->empty() || !c.shape(1)->back().is_static())
    return c.set_output(0, c.type(0));
  const Shape &data = *c.shape(0), &indices = *c.shape(1);
  const int64_t batch_dims = c.attr_int("batch_dims", 0), k = indices.back().value();
  if (batch_dims < 0 || batch_dims + k > static_cast<int64_t>(data.size()) ||
      batch_dims >= static_cast<int64_t>(indices.size()))
    c.fail("index rows of " + std::to_string(k) + " values after " + std::to_string(batch_dims) +
           " batch axes do not fit data of rank " + std::to_string(data.size()));
  Shape out(indices.begin(), indices.end() - 1);
  out.insert(out.end(), data.begin() + batch_dims + k, data.end());
  c.set_output(0, c.type(0), out);
}

// ---- Squeeze, Unsqueeze, Expand, Flatten, Tile, Pad ------------------------------------------------

inline void infer_squeeze(InferContext& c) {
  if (auto content = c.value_shape(0)) c.set_value_shape(0, *content);
  if (!c.shape(0)) return c.set_output(0, c.type(0));
  const Shape& in = *c.shape(0);
  auto axes = c.moved_ints();
  if (!axes && c.moved_given()) return c.set_output(0, c.type(0));
  std::vector<bool> removed(in.size(), false);
  if (axes) {
    for (int64_t a : *axes) {
      const std::size_t k = c.normalize_axis(a, in.size());
      if (in[k].is_static() && in[k].value() != 1) c.fail("cannot squeeze axis " + std::to_string(a) + " of size " + in[k].str());
      removed[k] = true;
    }
  } else {
    for (std::size_t k = 0; k < in.size(); ++k) {
      if (!in[k].is_static()) return c.set_output(0, c.type(0));  // is it 1? cannot tell
      removed[k] = in[k].value() == 1;
    }
  }
  Shape out;
  for (std::size_t k = 0; k < in.size(); ++k)
    if (!removed[k]) out.push_back(in[k]);
  c.set_output(0, c.type(0), out);
}

inline void infer_unsqueeze(InferContext& c) {
  if (auto content = c.value_shape(0)) c.set_value_shape(0, *content);
  auto axes = c.moved_ints();
  if (!c.shape(0) || !axes) return c.set_output(0, c.type(0));
  const Shape& in = *c.shape(0);
  const std::size_t rank = in.size() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    const std::size_t k = c.normalize_axis(a, rank);
    if (inserted[k]) c.fail("axis " + std::to_string(a) + " is repeated");
    inserted[k] = true;
  }
  Shape out;
  auto it = in.begin();
  for (std::size_t k = 0; k < rank; ++k) out.push_back(inserted[k] ? Dim(1) : *it++);
  c.set_output(0, c.type(0), out);
}

inline void infer_expand(InferContext& c) {
  const auto content = c.value_shape(1);
  if (c.shape(0) && content) return c.set_output(0, c.type(0), c.broadcast(*c.shape(0), *content));
  const auto& target = c.shape(1);
  if (c.shape(0) && target && target->size() == 1 && target->at(0).is_static())
    return c.set_output_rank(0, c.type(0), std::max<std::size_t>(c.shape(0)->size(), static_cast<std::size_t>(target->at(0).value())));
  c.set_output(0, c.type(0));
}

inline void infer_flatten(InferContext& c) {
  if (!c.shape(0)) return c.set_output_rank(0, c.type(0), 2);
  const Shape& in = *c.shape(0);
  const auto r = static_cast<int64_t>(in.size());
  int64_t axis = c.attr_int("axis", 1);
  if (axis < -r || axis > r) c.fail("axis " + std::to_string(axis) + " is out of range");
  if (axis < 0) axis += r;
  const auto mid = in.begin() + axis;
  c.set_output(0, c.type(0), Shape{product_dims(in.begin(), mid), product_dims(mid, in.end())});
}

inline void infer_tile(InferContext& c) {
  if (!c.shape(0)) return c.set_output(0, c.type(0));
  const Shape& in = *c.shape(0);
  auto repeats = c.ints(1);
  if (!repeats) return c.set_output_rank(0, c.type(0), in.size());
  if (repeats->size() != in.size()) c.fail("repeats has a length different from the rank");
  Shape out = in;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const int64_t r = (*repeats)[k];
    if (r < 0) c.fail("repeats " + std::to_string(r) + " of axis " + std::to_string(k) + " is negative", c.input_name(1));
    if (r == 1 || !in[k].is_static()) {
      if (r != 1) out[k] = Dim();
      continue;
    }
    const std::optional<int64_t> size = checked_mul(in[k].value(), r);
    if (!size) c.fail("repeats " + std::to_string(r) + " of axis " + std::to_string(k) + " overflow int64", c.input_name(1));
    out[k] = Dim(*size);
  }
  c.set_output(0, c.type(0), out);
}

// Pad: pads holds the begin values then the end values of every axis, or from opset 18 of the axes
// the input `axes` lists.
inline void infer_pad(InferContext& c) {
  if (!c.shape(0)) return c.set_output(0, c.type(0));
  const Shape& in = *c.shape(0);
  auto pads = c.opset() < 11 ? c.attr_ints("pads") : c.ints(1);
  std::vector<std::size_t> axes(in.size());
  std::iota(axes.begin(), axes.end(), std::size_t{0});
  if (c.opset() >= 18 && c.has_input(3)) {
    const auto given = c.ints(3);
    if (!given) return c.set_output_rank(0, c.type(0), in.size());
    axes.clear();
    for (int64_t a : *given) axes.push_back(c.normalize_axis(a, in.size()));
  }
  if (!pads) return c.set_output_rank(0, c.type(0), in.size());
  const std::size_t n = axes.size();
  if (pads->size() != 2 * n)
    c.fail("pads has " + std::to_string(pads->size()) + " values for " + std::to_string(n) + " axes",
           c.input_name(c.opset() < 11 ? 0 : 1));
  Shape out = in;
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t k = axes[j];
    const std::optional<int64_t> extra = checked_add((*pads)[j], (*pads)[j + n]);
    const std::optional<int64_t> size = extra && in[k].is_static() ? checked_add(in[k].value(), *extra) : std::nullopt;
    if (!extra || (in[k].is_static() && !size))
      c.fail("pads of axis " + std::to_string(k) + " overflow int64", c.input_name(c.opset() < 11 ? 0 : 1));
    if (*extra == 0) continue;
    if (size && *size < 0)
      c.fail("pads remove more than the " + in[k].str() + " elements of axis " + std::to_string(k), c.input_name(0));
    out[k] = size ? Dim(*size) : Dim();
  }
  c.set_output(0, c.type(0), out);
}

// ---- computations on shape values ----------------------------------------------------------------
// Exporters compute shapes with arithmetic (seq - past, hidden / heads) and torch's expand spells
// Where(Equal(shape, -1), ones, shape). These keep the content of the values they read, element by
// element (a content of one element broadcasts), so that the Reshape or Expand reading them gets
// symbolic dimensions. Booleans are held as 0 and 1.

// The contents of inputs `first`..`last` broadcast to a common length, or nullopt.
inline std::optional<std::vector<Shape>> broadcast_contents(InferContext& c, std::size_t first,
                                                            std::size_t last) {
  std::vector<Shape> contents;
  std::size_t length = 1;
  for (std::size_t i = first; i <= last; ++i) {
    auto content = c.value_shape(i);
    if (!content || content->empty() || static_cast<int64_t>(content->size()) > kMaxShapeContent ||
        (content->size() != 1 && length != 1 && content->size() != length))
      return std::nullopt;
    length = std::max(length, content->size());
    contents.push_back(std::move(*content));
  }
  for (Shape& content : contents)
    if (content.size() == 1) content.assign(length, content[0]);
  return contents;
}

inline void infer_shape_arithmetic(InferContext& c) {
  infer_broadcast(c);
  if (!is_integer(c.type(0)) || c.input_count() != 2) return;
  auto contents = broadcast_contents(c, 0, 1);
  if (!contents) return;
  const std::string_view op = c.node().op_type.view();
  Shape out;
  for (std::size_t k = 0; k < (*contents)[0].size(); ++k)
    out.push_back(shape_value_arithmetic(op, (*contents)[0][k], (*contents)[1][k]));
  c.set_value_shape(0, out);
}

// Equal: 1 for the same static value or the same symbol, 0 for different static values or a size
// (never negative) against a negative constant.
inline void infer_shape_equal(InferContext& c) {
  infer_comparison(c);
  if (!is_integer(c.type(0)) || c.input_count() != 2) return;
  auto contents = broadcast_contents(c, 0, 1);
  if (!contents) return;
  Shape out;
  for (std::size_t k = 0; k < (*contents)[0].size(); ++k) {
    const Dim& a = (*contents)[0][k];
    const Dim& b = (*contents)[1][k];
    const std::optional<int64_t> x = content_int(a), y = content_int(b);
    if (x && y)
      out.push_back(Dim(*x == *y ? 1 : 0));
    else if (a.is_symbolic() && a == b)
      out.push_back(Dim(1));
    else if ((x && *x < 0 && !b.is_unknown()) || (y && *y < 0 && !a.is_unknown()))
      out.push_back(Dim(0));
    else
      out.push_back(Dim());
  }
  c.set_value_shape(0, out);
}

inline void infer_shape_where(InferContext& c) {
  infer_where(c);
  if (!is_integer(c.type(1)) || c.input_count() != 3) return;
  auto contents = broadcast_contents(c, 0, 2);
  if (!contents) return;
  Shape out;
  for (std::size_t k = 0; k < (*contents)[0].size(); ++k) {
    const std::optional<int64_t> condition = content_int((*contents)[0][k]);
    out.push_back(!condition ? Dim() : *condition ? (*contents)[1][k] : (*contents)[2][k]);
  }
  c.set_value_shape(0, out);
}

// ---- ops that make shapes ------------------------------------------------------------------------

inline void infer_shape(InferContext& c) {
  if (!c.shape(0)) return c.set_output_rank(0, ElemType::Int64, 1);
  const Shape& in = *c.shape(0);
  const auto r = static_cast<int64_t>(in.size());
  const auto [start, end] = shape_range(r, c.attr_int("start", 0), c.attr_int("end", r));
  Shape content(in.begin() + start, in.begin() + end);
  c.set_output(0, ElemType::Int64, Shape{static_cast<int64_t>(content.size())});
  c.set_value_shape(0, content);
}

inline void infer_size(InferContext& c) {
  c.set_output(0, ElemType::Int64, Shape{});
  if (c.shape(0)) c.set_value_shape(0, Shape{product_dims(c.shape(0)->begin(), c.shape(0)->end())});
}

inline void infer_constant_of_shape(InferContext& c) {
  const ir::Attribute* value = c.attr("value");
  const ElemType type = value && value->type == ir::AttrType::Tensor ? value->tensor().type() : ElemType::Float;
  if (auto content = c.value_shape(0)) {
    c.set_output(0, type, *content);
    // A short vector of integers (torch's ones for expand) holds its values as content too.
    const std::optional<int64_t> n = content->size() == 1 ? content_int((*content)[0]) : std::nullopt;
    if (n && *n <= kMaxShapeContent && value && value->type == ir::AttrType::Tensor)
      if (auto v = tensor_ints(value->tensor()); v && v->size() == 1)
        c.set_value_shape(0, Shape(*n, content_dim((*v)[0])));
    return;
  }
  const auto& target = c.shape(0);
  if (target && target->size() == 1 && target->at(0).is_static())
    return c.set_output_rank(0, type, static_cast<std::size_t>(target->at(0).value()));
  c.set_output(0, type);
}

// A scalar constant as a double (Range's bounds), when it is one.
inline std::optional<double> scalar_value(const Tensor* t) {
  if (!t || t->size() != 1) return std::nullopt;
  switch (t->type()) {
    case ElemType::Float: return t->data<float>()[0];
    case ElemType::Double: return t->data<double>()[0];
    case ElemType::Int32: return t->data<int32_t>()[0];
    case ElemType::Int64: return static_cast<double>(t->data<int64_t>()[0]);
    case ElemType::Int16: return t->data<int16_t>()[0];
    default: return std::nullopt;
  }
}

inline void infer_range(InferContext& c) {
  const auto start = scalar_value(c.constant(0)), limit = scalar_value(c.constant(1)), delta = scalar_value(c.constant(2));
  Dim n;
  // Past 2^53, a double is no longer the integer the kernel reads: the count is left unknown there.
  const auto exact = [](std::optional<double> v) { return v && std::abs(*v) <= 9007199254740992.0; };
  if (exact(start) && exact(limit) && exact(delta)) {
    if (*delta == 0) c.fail("delta is 0");
    const double count = std::ceil((*limit - *start) / *delta);
    if (!std::isfinite(count)) c.fail("start, limit and delta give no finite element count");
    n = Dim(std::max<int64_t>(0, saturate_cast<int64_t>(count)));
  } else if (start == 0.0 && delta == 1.0) {
    // Range(0, Shape(X)[k], 1), position ids: as many elements as the dimension, also when the limit is
    // that dimension cast to float (float position ids).
    std::optional<Shape> bound = c.value_shape(1);
    if (!bound) bound = c.value_shape_before_cast(1);
    if (bound && bound->size() == 1 && !(*bound)[0].is_unknown() && content_int((*bound)[0]).value_or(0) >= 0)
      n = (*bound)[0];
  }
  c.set_output(0, c.first_known_type(), Shape{n});
}

inline void infer_constant(InferContext& c) {
  for (const ir::Attribute& a : c.node().attributes) {
    const std::string_view name = a.name.view();
    if (name == "value" && a.type == ir::AttrType::Tensor) {
      const Tensor& t = a.tensor();
      c.set_output(0, t.type(), t.shape());
      if (t.size() <= kMaxShapeContent)
        if (auto v = tensor_ints(t)) c.set_value_shape(0, content_of(*v));
    } else if (name == "value_float") {
      c.set_output(0, ElemType::Float, Shape{});
    } else if (name == "value_floats") {
      c.set_output(0, ElemType::Float, Shape{static_cast<int64_t>(a.floats.size())});
    } else if (name == "value_int") {
      c.set_output(0, ElemType::Int64, Shape{});
      c.set_value_shape(0, content_of({a.i}));
    } else if (name == "value_ints") {
      c.set_output(0, ElemType::Int64, Shape{static_cast<int64_t>(a.ints.size())});
      c.set_value_shape(0, content_of(a.ints));
    } else if (name == "value_string") {
      c.set_output(0, ElemType::String, Shape{});
    } else if (name == "value_strings") {
      c.set_output(0, ElemType::String, Shape{static_cast<int64_t>(a.strings.size())});
    }
  }
}

inline void add_shape_op_rules(RuleTable& t) {
  t.add({"Reshape"}, infer_reshape);
  t.add({"Transpose"}, infer_transpose);
  t.add({"Concat"}, infer_concat);
  t.add({"Split"}, infer_split);
  t.add({"Slice"}, infer_slice);
  t.add({"Gather"}, infer_gather);
  t.add({"GatherElements"}, infer_gather_elements);
  t.add({"GatherND"}, infer_gather_nd);
  t.add({"Squeeze"}, infer_squeeze);
  t.add({"Unsqueeze"}, infer_unsqueeze);
  t.add({"Expand"}, infer_expand);
  t.add({"Flatten"}, infer_flatten);
  t.add({"Tile"}, infer_tile);
  t.add({"Pad"}, infer_pad);
  t.add({"Shape"}, infer_shape);
  t.add({"Size"}, infer_size);
  t.add({"ConstantOfShape"}, infer_constant_of_shape);
  t.add({"Range"}, infer_range);
  t.add({"Constant"}, infer_constant);
  t.add({"Add", "Sub", "Mul", "Div"}, infer_shape_arithmetic);
  t.add({"Equal"}, infer_shape_equal);
  t.add({"Where"}, infer_shape_where);
}

}  // namespace xexp::infer
