#pragma once
// The view family and the ops that pick, join or split tensors. Views become copies (ONNX has no
// aliasing); ops that only change the storage (clone, contiguous, detach) give back their input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "xexp/aten/converter_table.hpp"
#include "xexp/aten/elementwise.hpp"  // the op names kAdd, kSub, kMul

namespace xexp::aten {

namespace detail {

inline void same_values(NodeLowering& c) { c.result(c.input(0)); }
inline void to_dtype(NodeLowering& c) { c.result(c.cast(c.input(0), c.output_type())); }

// Whether `shape` is known to be `dims`.
inline bool shape_is(const Shape& shape, const std::vector<int64_t>& dims) {
  if (shape.size() != dims.size()) return false;
  for (std::size_t k = 0; k < dims.size(); ++k)
    if (shape[k] != Dim(dims[k])) return false;
  return true;
}

// view, reshape, _unsafe_view, _reshape_alias: the `size` argument (-1 allowed, as Reshape reads it),
// computed when it holds a dynamic dimension.
inline void reshape(NodeLowering& c) {
  if (c.is_dynamic("size")) return c.result(c.g.op.Reshape(c.input(0), c.shape_input("size")));
  std::vector<int64_t> size = c.ints("size");
  if (shape_is(c.input_shape(0), size)) return c.result(c.input(0));
  c.result(c.g.op.Reshape(c.input(0), size));
}
inline void flatten(NodeLowering& c) { c.result(c.g.op.Reshape(c.input(0), c.static_output_shape())); }

// expand: -1 keeps the dimension, which Expand's broadcasting does with 1 (a computed size: Where).
inline void expand(NodeLowering& c) {
  if (c.is_dynamic("size")) {
    const std::string size = c.shape_input("size"), minus_one = c.ints_constant({-1}), one = c.ints_constant({1});
    return c.result(c.g.op.Expand(c.input(0), c.g.op.Where(c.g.op.Equal(size, minus_one), one, size)));
  }
  std::vector<int64_t> size = c.ints("size");
  for (int64_t& d : size)
    if (d == -1) d = 1;
  if (c.output_shape() == c.input_shape(0) && shape_is(c.input_shape(0), size)) return c.result(c.input(0));
  c.result(c.g.op.Expand(c.input(0), size));
}

inline void transpose_with(NodeLowering& c, std::vector<int64_t> perm) {
  bool identity = true;
  for (std::size_t k = 0; k < perm.size(); ++k) identity = identity && perm[k] == static_cast<int64_t>(k);
  c.result(identity ? c.input(0) : std::string(c.g.op.Transpose(c.input(0), {{"perm", perm}})));
}
inline std::vector<int64_t> identity_permutation(std::size_t rank) {
  std::vector<int64_t> perm(rank);
  for (std::size_t k = 0; k < rank; ++k) perm[k] = static_cast<int64_t>(k);
  return perm;
}
inline void permute(NodeLowering& c) {
  const std::size_t rank = c.input_rank(0);
  std::vector<int64_t> perm = c.ints("dims");
  for (int64_t& p : perm) p = normalize_axis(p, rank, "dim");
  transpose_with(c, perm);
}
inline void transpose(NodeLowering& c) {
  const std::size_t rank = c.input_rank(0);
  std::vector<int64_t> perm = identity_permutation(rank);
  if (rank > 0) std::swap(perm[c.axis("dim0", rank)], perm[c.axis("dim1", rank)]);
  transpose_with(c, perm);
}
inline void t(NodeLowering& c) {
  const std::size_t rank = c.input_rank(0);
  transpose_with(c, rank == 2 ? std::vector<int64_t>{1, 0} : identity_permutation(rank));
}

// slice(dim, start, end, step), start and end computed or not; the whole dimension is the input itself.
inline void slice(NodeLowering& c) {
  const std::size_t rank = c.input_rank(0);
  const int64_t dim = c.axis("dim", rank), step = c.i("step", 1);
  constexpr int64_t kToTheEnd = std::numeric_limits<int64_t>::max();
  if (!c.is_dynamic("start") && !c.is_dynamic("end")) {
    const int64_t start = c.i("start", 0), end = c.i("end", kToTheEnd);
    const Dim size = c.input_shape(0)[static_cast<std::size_t>(dim)];
    if (start == 0 && step == 1 && size.is_static() && end >= size.value()) return c.result(c.input(0));
  }
  c.result(c.g.op.Slice(c.input(0), c.size_input("start", 0), c.size_input("end", kToTheEnd), std::vector<int64_t>{dim},
                          std::vector<int64_t>{step}));
}
inline void select(NodeLowering& c) {
  const int64_t dim = c.axis("dim", c.input_rank(0));
  c.result(c.g.op.Gather(c.input(0), c.g.make_initializer("", Tensor::scalar<int64_t>(c.i("index"))), {{"axis", dim}}));
}
// index.Tensor(self, indices): one index tensor (the others None) is a Gather on its dimension. Several
// are broadcast together and read by one GatherND over those dimensions moved to the front; torch puts
// the broadcast dimensions where the indexed ones were when those are adjacent, first otherwise.
inline void index(NodeLowering& c) {
  std::vector<int64_t> indexed;
  for (std::size_t k = 1; k < c.input_count(); ++k)
    if (c.has_input(k)) {
      if (c.g.get_type(c.input(k)) == ElemType::Bool) c.fail("boolean masks as index (data-dependent shapes) are not supported");
      indexed.push_back(static_cast<int64_t>(k - 1));
    }
  if (indexed.empty()) c.fail("no index tensor is given");
  if (indexed.size() == 1) {
    const std::string& idx = c.input(static_cast<std::size_t>(indexed[0]) + 1);
    return c.result(c.g.op.Gather(c.input(0), c.cast(idx, ElemType::Int64), {{"axis", indexed[0]}}));
  }
  const std::size_t rank = c.input_rank(0), out_rank = c.output_shape().size();
  if (static_cast<std::size_t>(indexed.back()) >= rank || out_rank + indexed.size() < rank)
    c.fail(std::to_string(indexed.size()) + " index tensors for rank " + std::to_string(rank) + " give no output of rank " +
           std::to_string(out_rank));
  const std::size_t broadcast_rank = out_rank + indexed.size() - rank;
  const bool adjacent = indexed.back() - indexed.front() + 1 == static_cast<int64_t>(indexed.size());
  const std::size_t first = adjacent ? static_cast<std::size_t>(indexed.front()) : 0;
  const std::vector<int64_t> out = c.static_output_shape();
  const std::vector<int64_t> broadcast(out.begin() + static_cast<std::ptrdiff_t>(first),
                                       out.begin() + static_cast<std::ptrdiff_t>(first + broadcast_rank));
  std::vector<Arg> coordinates;
  for (int64_t d : indexed) {
    const std::string idx = c.g.op.Expand(c.cast(c.input(static_cast<std::size_t>(d) + 1), ElemType::Int64), broadcast);
    coordinates.emplace_back(c.g.op.Unsqueeze(idx, std::vector<int64_t>{-1}));
  }
  std::vector<int64_t> perm = indexed;  // the indexed dimensions first, the others in order
  for (std::size_t d = 0; d < rank; ++d)
    if (std::find(indexed.begin(), indexed.end(), static_cast<int64_t>(d)) == indexed.end()) perm.push_back(static_cast<int64_t>(d));
  const std::string moved = c.g.op.Transpose(c.input(0), {{"perm", perm}});
  std::string y = c.g.op.call("GatherND", {moved, c.g.op.Concat(coordinates, {{"axis", int64_t{-1}}})});
  if (first > 0) {  // (broadcast..., before..., after...) -> (before..., broadcast..., after...)
    std::vector<int64_t> back;
    for (std::size_t k = 0; k < first; ++k) back.push_back(static_cast<int64_t>(broadcast_rank + k));
    for (std::size_t k = 0; k < broadcast_rank; ++k) back.push_back(static_cast<int64_t>(k));
    for (std::size_t k = first + broadcast_rank; k < out_rank; ++k) back.push_back(static_cast<int64_t>(k));
    y = c.g.op.Transpose(y, {{"perm", back}});
  }
  c.result(y);
}
inline void gather(NodeLowering& c) {
  c.result(c.g.op.GatherElements(c.input(0), c.input(1), {{"axis", c.axis("dim", c.input_rank(0))}}));
}
inline void cat(NodeLowering& c) {
  std::vector<Arg> parts;
  const ElemType t = c.output_type();
  for (std::size_t k = 0; k < c.input_count(); ++k)
    if (c.input_rank(k) != 1 || c.input_shape(k)[0] != Dim(0)) parts.push_back(c.cast(c.input(k), t));  // torch skips empty 1-D tensors
  const int64_t dim = normalize_axis(c.i("dim", 0), c.output_shape().size(), "dim");
  c.result(parts.size() == 1 ? parts[0].name() : std::string(c.g.op.Concat(parts, {{"axis", dim}})));
}
inline void stack(NodeLowering& c) {
  const int64_t dim = normalize_axis(c.i("dim", 0), c.output_shape().size(), "dim");
  std::vector<Arg> parts;
  for (std::size_t k = 0; k < c.input_count(); ++k) parts.push_back(c.g.op.Unsqueeze(c.input(k), std::vector<int64_t>{dim}));
  c.result(c.g.op.Concat(parts, {{"axis", dim}}));
}
// split(split_size) and split_with_sizes(split_sizes): the sizes of every piece, from the traced shapes.
inline void split(NodeLowering& c) {
  const int64_t dim = c.axis("dim", c.input_rank(0));
  std::vector<int64_t> sizes;
  for (std::size_t k = 0; k < c.output_count(); ++k) sizes.push_back(c.static_output_shape(k)[static_cast<std::size_t>(dim)]);
  Outputs parts = c.g.op.Split(c.input(0), sizes, {{"axis", dim}}, {.output_count = static_cast<int>(sizes.size())});
  for (std::size_t k = 0; k < sizes.size(); ++k) c.result(k, parts[k]);
}
// unbind(dim): every slice along `dim`, without that dimension.
inline void unbind(NodeLowering& c) {
  const int64_t dim = c.axis("dim", c.input_rank(0));
  const auto n = static_cast<int>(c.output_count());
  Outputs parts = c.g.op.Split(c.input(0), std::vector<int64_t>(c.output_count(), 1), {{"axis", dim}}, {.output_count = n});
  for (std::size_t k = 0; k < c.output_count(); ++k)
    if (c.output_read(k)) c.result(k, c.g.op.Squeeze(parts[k], std::vector<int64_t>{dim}));
}
// constant_pad_nd(self, pad, value): `pad` holds (begin, end) pairs from the last dimension backwards;
// negative pads crop, as Pad's do.
inline void constant_pad(NodeLowering& c) {
  const std::size_t rank = c.input_rank(0);
  const std::vector<int64_t> pad = c.ints("pad");
  if (pad.size() % 2 != 0 || pad.size() / 2 > rank) c.fail("'pad' has " + std::to_string(pad.size()) + " values for rank " + std::to_string(rank));
  std::vector<int64_t> pads(2 * rank, 0);
  for (std::size_t k = 0; k < pad.size() / 2; ++k) {
    pads[rank - 1 - k] = pad[2 * k];
    pads[2 * rank - 1 - k] = pad[2 * k + 1];
  }
  c.result(c.g.op.Pad(c.input(0), pads, c.constant(c.f("value", 0.0), c.input_type(0))));
}
// repeat(self, repeats): Tile, the input first given the leading dimensions `repeats` adds.
inline void repeat(NodeLowering& c) {
  const std::vector<int64_t> repeats = c.ints("repeats");
  std::vector<int64_t> dims = c.static_input_shape(0);
  if (repeats.size() < dims.size()) c.fail("fewer repeats than dimensions");
  std::string x = c.input(0);
  if (repeats.size() > dims.size()) {
    dims.insert(dims.begin(), repeats.size() - dims.size(), 1);
    x = c.g.op.Reshape(x, dims);
  }
  c.result(c.g.op.Tile(x, repeats));
}
// flip(self, dims): a Slice walking each dimension backwards.
inline void flip(NodeLowering& c) {
  const std::size_t rank = c.input_rank(0);
  std::vector<int64_t> axes = c.ints("dims");
  for (int64_t& a : axes) a = normalize_axis(a, rank, "dim");
  const std::vector<int64_t> starts(axes.size(), -1), steps(axes.size(), -1),
      ends(axes.size(), std::numeric_limits<int64_t>::min());
  c.result(c.g.op.Slice(c.input(0), starts, ends, axes, steps));
}
inline void unsqueeze(NodeLowering& c) {
  c.result(c.g.op.Unsqueeze(c.input(0), std::vector<int64_t>{normalize_axis(c.i("dim"), c.input_rank(0) + 1, "dim")}));
}
// squeeze(dim or dims or nothing): only the dimensions of size 1 go.
inline void squeeze(NodeLowering& c) {
  const Shape& shape = c.input_shape(0);
  std::vector<int64_t> dims;
  if (c.has_attribute("dim")) dims = c.ints("dim");
  else for (std::size_t k = 0; k < shape.size(); ++k) dims.push_back(static_cast<int64_t>(k));
  std::vector<int64_t> axes;
  for (int64_t d : dims) {
    const int64_t axis = normalize_axis(d, shape.size(), "dim");
    if (shape[static_cast<std::size_t>(axis)] == Dim(1)) axes.push_back(axis);
  }
  c.result(axes.empty() ? c.input(0) : std::string(c.g.op.Squeeze(c.input(0), axes)));
}

// ---- sizes: int64 scalars the capture writes for the sizes a forward computes from dynamic dimensions --
// sym_size(self, dim): one dimension of the input.
inline void sym_size(NodeLowering& c) {
  const int64_t dim = c.axis("dim", c.input_rank(0));
  c.result(c.g.op.Gather(c.g.op.Shape(c.input(0)), c.g.make_initializer("", Tensor::scalar<int64_t>(dim)), {{"axis", int64_t{0}}}));
}
// sym_add, sym_sub, sym_mul, sym_floordiv(self, other): sizes are not negative, so that floor division
// is Div's truncation.
template <const char* OnnxOp>
void size_arithmetic(NodeLowering& c) {
  c.result(c.g.op.call(OnnxOp, {c.operand(0, "self", ElemType::Int64), c.operand(1, "other", ElemType::Int64)}));
}
inline constexpr char kDiv[] = "Div";
// sym_list(sizes..., values): a 1-D shape of numbers (`values`) and sizes (the inputs that are given).
inline void sym_list(NodeLowering& c) {
  const std::vector<int64_t> values = c.ints("values");
  if (values.size() != c.input_count()) c.fail("attribute 'values' has " + std::to_string(values.size()) + " numbers for " + std::to_string(c.input_count()) + " inputs");
  std::vector<Arg> parts;
  std::vector<int64_t> numbers;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (!c.has_input(k)) {
      numbers.push_back(values[k]);
      continue;
    }
    if (!numbers.empty()) parts.emplace_back(c.ints_constant(std::exchange(numbers, {})));
    parts.emplace_back(c.g.op.Unsqueeze(c.cast(c.input(k), ElemType::Int64), std::vector<int64_t>{0}));
  }
  if (!numbers.empty()) parts.emplace_back(c.ints_constant(numbers));
  c.result(parts.size() == 1 ? parts[0].name() : std::string(c.g.op.Concat(parts, {{"axis", int64_t{0}}})));
}

}  // namespace detail

inline void add_shape_converters(ConverterTable& table) {
  using namespace detail;
  for (const char* op : {"clone", "detach", "alias", "lift_fresh_copy", "contiguous", "lift"}) table.add(op, same_values);
  table.add("_to_copy", to_dtype);
  for (const char* op : {"view", "reshape", "_unsafe_view", "_reshape_alias"}) table.add(op, reshape);
  table.add("flatten", flatten);
  table.add("expand", expand);
  table.add("permute", permute);
  table.add("transpose", transpose);
  table.add("t", t);
  table.add("slice", slice);
  table.add("select", select);
  table.add("index", index);
  table.add("gather", gather);
  table.add("cat", cat);
  table.add("stack", stack);
  table.add("split", split);
  table.add("split_with_sizes", split);
  table.add("unsafe_split", split);
  table.add("unsafe_split_with_sizes", split);
  table.add("unbind", unbind);
  table.add("constant_pad_nd", constant_pad);
  table.add("repeat", repeat);
  table.add("flip", flip);
  table.add("unsqueeze", unsqueeze);
  table.add("squeeze", squeeze);
  table.add("sym_size", sym_size);
  table.add("sym_add", size_arithmetic<kAdd>);
  table.add("sym_sub", size_arithmetic<kSub>);
  table.add("sym_mul", size_arithmetic<kMul>);
  table.add("sym_floordiv", size_arithmetic<kDiv>);
  table.add("sym_list", sym_list);
}

}  // namespace xexp::aten
