#pragma once
// The rotate-half form the rotary rules match (onnx/rotary_embedding.hpp for what they read),
//   X * cos + Concat(-X2, X1, axis=-1) * sin
// and the rule that writes it as a RotaryEmbedding, given where it fits and how it builds the node.
#include <optional>
#include <utility>
#include <vector>

#include "xexp/patterns/analysis/rotary_cache.hpp"

namespace xexp::patterns::rotary {

// [first, last) of x's last axis held by `part`: a Slice of x on that axis (slice_piece), or an output of
// a Split of x on that axis. nullopt for anything else.
inline std::optional<std::pair<int64_t, int64_t>> last_axis_part(const ValueView& part, const ValueView& x) {
  const ir::Value& v = part.value();
  if (v.producer == ir::kNone || !x.shape() || x.shape()->empty() || !x.shape()->back().is_static())
    return std::nullopt;
  const ir::Graph& g = *part.graph;
  const ir::Node& n = g.node(v.producer);
  if (!n.domain.empty() || n.inputs.empty() || n.inputs[0] != x.id) return std::nullopt;
  const int64_t size = x.shape()->back().value(), rank = static_cast<int64_t>(x.shape()->size());
  if (n.op_type == Symbol("Slice")) {
    const std::optional<SlicePiece> piece = slice_piece(g, v.producer, rank, size, rank - 1);
    if (!piece) return std::nullopt;
    return std::pair{piece->start, piece->start + piece->count};
  }
  if (n.op_type != Symbol("Split")) return std::nullopt;
  const int64_t axis = int_attribute(n, "axis", 0);
  if (axis != -1 && axis != rank - 1) return std::nullopt;
  std::optional<std::vector<int64_t>> sizes =
      ints_attribute_or_input(g, n, "split", 1, std::vector<int64_t>{});
  if (!sizes) return std::nullopt;  // sizes computed when the model runs
  if (sizes->empty()) {             // equal parts
    const auto parts = static_cast<int64_t>(n.outputs.size());
    if (size % parts != 0) return std::nullopt;
    sizes = std::vector<int64_t>(n.outputs.size(), size / parts);
  }
  if (sizes->size() != n.outputs.size()) return std::nullopt;
  int64_t first = 0;
  for (std::size_t k = 0; k < v.output_index; ++k) first += (*sizes)[k];
  return std::pair{first, first + (*sizes)[v.output_index]};
}

// x is (batch, heads, seq, head_size) with an even head_size, `first` and `second` its two halves.
inline constexpr auto is_rotate_half =
    rewrite::fact<"is_rotate_half">([](const ValueView& x, const ValueView& first, const ValueView& second) {
      if (!x.shape() || x.shape()->size() != 4 || !x.shape()->back().is_static()) return false;
      const int64_t size = x.shape()->back().value();
      if (size == 0 || size % 2 != 0) return false;
      return last_axis_part(first, x) == std::pair<int64_t, int64_t>{0, size / 2} &&
             last_axis_part(second, x) == std::pair<int64_t, int64_t>{size / 2, size};
    });

// cos or sin read as a cache for x (analysis::rotary_cache), kept by the rule: its conditions and its
// replacement read the same analysis.
inline constexpr auto rotary_cache_of = rewrite::fact<"rotary_cache_of">(analysis::rotary_cache);

// cos and sin read as caches (rotary_cache_of) by the same positions.
inline constexpr auto has_rotary_caches = rewrite::fact<"has_rotary_caches">(
    [](const ValueView& x, const std::optional<analysis::RotaryCache>& c, const std::optional<analysis::RotaryCache>& s) {
      const ElemType t = x.elem();
      if (t != ElemType::Float && t != ElemType::Float16) return false;  // ONNX Runtime's CPU kernels
      return c && s && c->positions == s->positions && c->positions_batch == s->positions_batch &&
             c->rows.dims() == s->rows.dims() && c->angles == s->angles &&
             c->counted_at_run_time == s->counted_at_run_time &&
             (c->positions != ir::kNone || c->fixed_positions.dims() == s->fixed_positions.dims());
    });

// The rule `name`: the rotate-half form, where `fits(x, cos cache)` holds, replaced by `build`'s
// RotaryEmbedding. The caches of cos and sin are analysed once per match: kept for the conditions and
// `build`.
template <class Fits, class Build>
rewrite::RulePtr rotate_half_rule(const char* name, Fits fits, Build build) {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'c'> cos;
  Var<'s'> sin;
  Var<'f'> first;
  Var<'S'> second;
  Int<'a'> axis;
  auto rotated = Concat(Neg(second), first, attr<"axis"> = axis);
  auto cos_cache = keep<'C'>(rotary_cache_of(cos, x));
  auto sin_cache = keep<'S'>(rotary_cache_of(sin, x));
  // replace_with: the caches and position ids are built by kind of cache, more than choose can say.
  return rule(name)
      .priority(1)
      .match(commutative(Add(commutative(Mul(x, cos)), commutative(Mul(rotated, sin)))))
      .when(fits(x, cos_cache) && is_rotate_half(x, first, second) && is_last_axis(axis, x) &&
            has_rotary_caches(x, cos_cache, sin_cache))
      .to(replace_with("rotary_embedding", build, x, cos_cache, sin_cache));
}

}  // namespace xexp::patterns::rotary
