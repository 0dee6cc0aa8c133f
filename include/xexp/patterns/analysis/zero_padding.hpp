#pragma once
// Values written into zeros along one axis, as RotaryConcatPart (onnx/rotary_concat_part.hpp) reads them:
// Concat(A, zeros), a ScatterElements of A into zeros by counting indices, or onnxscript's Transpose /
// ScatterND / Transpose spelling of that scatter (zero_padded); and two such values that pad each other
// (pads_each_other), whose sum is the Concat of their parts.
#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns::analysis {

// All zeros: a constant, ConstantOfShape of zero (its default value), or a Transpose of zeros.
inline bool is_zero_value(const ir::Graph& g, ir::ValueId v) {
  if (const Tensor* t = rewrite::constant_tensor(g, v)) return equal_everywhere(*t, 0.0);
  if (const ir::Node* transpose = producer_of(g, v, "Transpose"))
    return is_zero_value(g, transpose->inputs[0]);
  const ir::Node* fill = producer_of(g, v, "ConstantOfShape");
  if (!fill) return false;
  const ir::Attribute* value = fill->attribute(Symbol("value"));
  return !value || (!value->tensors.empty() && equal_everywhere(value->tensors[0], 0.0));
}

// Indices that count start, start + 1, ... along axis `axis` of their tensor, `count` values, and repeat
// that everywhere else; an axis the tensor does not have (broadcast) holds one value. Read in two steps:
// where they start (their first value), and, once everything else lines up, whether they count (every
// value: an index tensor expanded to a whole activation is large).
struct Counting {
  const Tensor* indices = nullptr;
  int64_t axis = 0, count = 0;
};
inline std::optional<int64_t> first_index(const Counting& c) {
  const Tensor& t = *c.indices;
  const auto rank = static_cast<int64_t>(t.dims().size());
  if (!is_integer_type(t.type()) || t.size() == 0 || c.axis >= rank ||
      (c.axis < 0 ? c.count != 1 : t.dims()[c.axis] != c.count))
    return std::nullopt;
  return eval::element_as_int64(t, 0);
}
inline bool counts(const Counting& c) {
  const Tensor& t = *c.indices;
  int64_t inner = 1;
  for (auto k = static_cast<std::size_t>(std::max<int64_t>(c.axis + 1, 0)); k < t.dims().size(); ++k)
    inner *= t.dims()[k];
  const int64_t start = eval::element_as_int64(t, 0), size = t.size();
  // Blocks of `inner` equal values, start to start + count - 1, repeated: no division per element.
  auto check = [&](auto value_at) {
    for (int64_t k = 0; k < size;)
      for (int64_t j = 0; j < c.count; ++j)
        for (int64_t i = 0; i < inner; ++i, ++k)
          if (value_at(k) != start + j) return false;
    return true;
  };
  if (t.type() == ElemType::Int64) {
    const std::span<const int64_t> values = t.data<int64_t>();
    return check([&](int64_t k) { return values[static_cast<std::size_t>(k)]; });
  }
  return check([&](int64_t k) { return eval::element_as_int64(t, k); });
}

// The indices of a ScatterElements over axis `axis` of rank `rank` with `count` updates along it, as a
// constant or an Expand of one.
inline std::optional<Counting> scatter_indices(const ir::Graph& g, ir::ValueId indices, int64_t axis,
                                               int64_t rank, int64_t count) {
  ir::ValueId source = indices;
  if (const ir::Node* expand = producer_of(g, indices, "Expand")) source = expand->inputs[0];
  const Tensor* t = rewrite::constant_tensor(g, source);
  if (!t) return std::nullopt;
  return Counting{t, axis - (rank - static_cast<int64_t>(t->dims().size())), count};
}

// `part` written into zeros over `axis`, `before` zeros ahead of it and `after` behind it on that axis;
// for a scatter, the indices to check.
struct ZeroPadded {
  ir::ValueId part = ir::kNone;
  int64_t axis = 0;
  Dim before, after;
  std::optional<Counting> indices;
};

inline std::optional<ZeroPadded> concat_padding(const ir::Graph& g, const ir::Node& concat) {
  const std::optional<Shape>& shape = g.value(concat.outputs[0]).shape;
  const ir::Attribute* axis = concat.attribute(Symbol("axis"));
  if (concat.inputs.size() != 2 || !shape || !axis || concat.inputs[1] == ir::kNone) return std::nullopt;
  const auto rank = static_cast<int64_t>(shape->size());
  const int64_t a = axis->i < 0 ? axis->i + rank : axis->i;
  auto width = [&](ir::ValueId v) {
    const std::optional<Shape>& s = g.value(v).shape;
    return s && static_cast<int64_t>(s->size()) == rank ? (*s)[a] : Dim();
  };
  const ir::ValueId x = concat.inputs[0], y = concat.inputs[1];
  if (is_zero_value(g, y)) return ZeroPadded{x, a, Dim(0), width(y), std::nullopt};
  if (is_zero_value(g, x)) return ZeroPadded{y, a, width(x), Dim(0), std::nullopt};
  return std::nullopt;
}

// A scatter of `part` by `indices` on axis `axis` of zeros shaped `shape` (static on that axis).
inline std::optional<ZeroPadded> scattered(ir::ValueId part, int64_t axis, const Shape& shape,
                                           const std::optional<Counting>& indices) {
  const std::optional<int64_t> start = indices ? first_index(*indices) : std::nullopt;
  if (!start || !shape[axis].is_static() || *start < 0 || *start + indices->count > shape[axis].value())
    return std::nullopt;
  return ZeroPadded{part, axis, Dim(*start), Dim(shape[axis].value() - *start - indices->count), indices};
}

inline bool replaces_each_element(const ir::Node& scatter) {
  const ir::Attribute* reduction = scatter.attribute(Symbol("reduction"));
  return !reduction || reduction->s == "none";
}

inline std::optional<ZeroPadded> scatter_elements_padding(const ir::Graph& g, const ir::Node& scatter) {
  if (scatter.inputs.size() != 3 || !replaces_each_element(scatter) || !is_zero_value(g, scatter.inputs[0]))
    return std::nullopt;
  const std::optional<Shape>&zeros = g.value(scatter.inputs[0]).shape,
        &part = g.value(scatter.inputs[2]).shape;
  if (!zeros || !part || zeros->size() != part->size()) return std::nullopt;
  const auto rank = static_cast<int64_t>(zeros->size());
  const int64_t given = int_attribute(scatter, "axis", 0), axis = given < 0 ? given + rank : given;
  if (axis < 0 || axis >= rank || !(*part)[axis].is_static()) return std::nullopt;
  return scattered(scatter.inputs[2], axis, *zeros,
                   scatter_indices(g, scatter.inputs[1], axis, rank, (*part)[axis].value()));
}

// ScatterND(D, R, U) on D's first axis, read in the layout of `zeros` where D = Transpose(zeros, perm)
// and U = Transpose(part, perm) (perm empty: D and U as they are).
inline std::optional<ZeroPadded> scatter_nd_padding(const ir::Graph& g, const ir::Node& scatter,
                                                    const std::vector<int64_t>& perm) {
  if (scatter.inputs.size() != 3 || !replaces_each_element(scatter)) return std::nullopt;
  ir::ValueId zeros = scatter.inputs[0], part = scatter.inputs[2];
  if (!perm.empty()) {
    const ir::Node *data = producer_of(g, zeros, "Transpose"), *updates = producer_of(g, part, "Transpose");
    const ir::Attribute *p = data ? data->attribute(Symbol("perm")) : nullptr,
                        *q = updates ? updates->attribute(Symbol("perm")) : nullptr;
    if (!p || !q || p->ints != perm || q->ints != perm) return std::nullopt;
    zeros = data->inputs[0];
    part = updates->inputs[0];
  }
  const Tensor* rows = rewrite::constant_tensor(g, scatter.inputs[1]);
  const std::optional<Shape>& shape = g.value(zeros).shape;
  if (!rows || rows->dims().size() != 2 || rows->dims()[1] != 1 || !shape || !is_zero_value(g, zeros))
    return std::nullopt;
  return scattered(part, perm.empty() ? 0 : perm[0], *shape, Counting{rows, 0, rows->dims()[0]});
}

inline std::optional<ZeroPadded> zero_padded(const ir::Graph& g, ir::ValueId v) {
  const ir::Value& value = g.value(v);
  if (value.producer == ir::kNone || value.output_index != 0) return std::nullopt;
  const ir::Node& n = g.node(value.producer);
  if (!n.domain.empty() || n.inputs.empty() || n.inputs[0] == ir::kNone) return std::nullopt;
  if (n.op_type == Symbol("Concat")) return concat_padding(g, n);
  if (n.op_type == Symbol("ScatterElements")) return scatter_elements_padding(g, n);
  if (n.op_type == Symbol("ScatterND")) return scatter_nd_padding(g, n, {});
  const ir::Node* scatter =
      n.op_type == Symbol("Transpose") ? producer_of(g, n.inputs[0], "ScatterND") : nullptr;
  const ir::Attribute* perm = n.attribute(Symbol("perm"));
  if (!scatter || !perm || !is_permutation_of_rank(perm->ints, perm->ints.size())) return std::nullopt;
  return scatter_nd_padding(g, *scatter, inverse_permutation(perm->ints));
}

// s pads its part with zeros behind it, t ahead of its own, each run of zeros as wide as the other
// part; s and t have one shape, which both parts have off the axis.
inline bool pads_each_other(const ValueView& s, const ValueView& t) {
  const ir::Graph& g = *s.graph;
  const std::optional<ZeroPadded> a = zero_padded(g, s.id), b = zero_padded(g, t.id);
  if (!a || !b || a->axis != b->axis || !s.shape() || !t.shape() ||
      !rewrite::facts::same_shape(*s.shape(), *t.shape()))
    return false;
  const Shape& shape = *s.shape();
  const std::optional<Shape>&first = g.value(a->part).shape, &second = g.value(b->part).shape;
  if (!first || !second || first->size() != shape.size() || second->size() != shape.size()) return false;
  for (std::size_t k = 0; k < shape.size(); ++k)
    if (static_cast<int64_t>(k) != a->axis &&
        (!same_dim((*first)[k], shape[k]) || !same_dim((*second)[k], shape[k])))
      return false;
  return same_dim(a->before, Dim(0)) && same_dim(b->after, Dim(0)) &&
         same_dim(a->after, (*second)[a->axis]) && same_dim(b->before, (*first)[a->axis]) &&
         (!a->indices || counts(*a->indices)) && (!b->indices || counts(*b->indices));
}

}  // namespace xexp::patterns::analysis
