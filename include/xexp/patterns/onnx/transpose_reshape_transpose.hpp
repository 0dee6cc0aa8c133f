#pragma once
// TransposeReshapeTranspose: Transpose(Reshape(Transpose(X, p1), shape), p2), where the Reshape only
// merges runs of adjacent axes (or only splits axes), is one Transpose and one Reshape: the merged runs
// (or split axes) move with the permutations as blocks. Vision exports write it around patch grids
// (B,C,H,W -> B,H,W,C -> B,h,p,w,p,C -> B,h,w,p,p,C). Static dims, a constant shape without 0 or -1.
// Only data moves: the outputs are the same bits.
#include <cstdint>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace transpose {
// Runs of axes [first, last) of the Reshape's input and of its output holding the same elements.
struct AxisRun {
  std::size_t in_first, in_last, out_first, out_last;
};
// Aligns the dims before and after a Reshape into runs of the same size, each run one axis on at least
// one side (a merge or a split); nullopt when a run regroups several axes into several others.
inline std::optional<std::vector<AxisRun>> align_axis_runs(const std::vector<int64_t>& in,
                                                           const std::vector<int64_t>& out) {
  std::vector<AxisRun> runs;
  std::size_t i = 0, j = 0;
  while (i < in.size() && j < out.size()) {
    AxisRun run{i, i + 1, j, j + 1};
    int64_t a = in[i], b = out[j];
    while (a != b) {
      if (a < b) {
        if (run.in_last == in.size()) return std::nullopt;
        a *= in[run.in_last++];
      } else {
        if (run.out_last == out.size()) return std::nullopt;
        b *= out[run.out_last++];
      }
    }
    if (run.in_last - run.in_first > 1 && run.out_last - run.out_first > 1) return std::nullopt;
    runs.push_back(run);
    i = run.in_last;
    j = run.out_last;
  }
  if (i != in.size() || j != out.size()) return std::nullopt;
  return runs;
}
// The two nodes replacing the three: Reshape(Transpose(X, perm), shape) when the Reshape merges, or
// Transpose(Reshape(X, shape), perm) when it splits.
struct TransposeReshapePlan {
  bool reshape_first;
  std::vector<int64_t> shape, perm;
};
inline std::optional<TransposeReshapePlan> plan_transpose_reshape(const ValueView& moved,
                                                                  const std::vector<int64_t>& p1,
                                                                  const Tensor& shape_tensor,
                                                                  const std::vector<int64_t>& p2) {
  const std::optional<std::vector<int64_t>> dims = static_dims_of(moved), shape = int_values(shape_tensor);
  if (!dims || !shape || !is_permutation_of_rank(p1, dims->size()) ||
      !is_permutation_of_rank(p2, shape->size()))
    return std::nullopt;
  for (const std::vector<int64_t>* d : {&*dims, &*shape})
    for (int64_t v : *d)
      if (v <= 0) return std::nullopt;
  const std::optional<std::vector<AxisRun>> runs = align_axis_runs(*dims, *shape);
  if (!runs) return std::nullopt;
  TransposeReshapePlan plan;
  if (runs->size() == shape->size()) {
    // Merges: output axis k of the result is the merged run p2[k]; take its input axes in that order,
    // through p1 back to X's axes, then merge.
    plan.reshape_first = false;
    for (int64_t k : p2) {
      const AxisRun& r = (*runs)[static_cast<std::size_t>(k)];
      for (std::size_t a = r.in_first; a < r.in_last; ++a) plan.perm.push_back(p1[a]);
      plan.shape.push_back((*shape)[static_cast<std::size_t>(k)]);
    }
    return plan;
  }
  if (runs->size() != dims->size()) return std::nullopt;
  // Splits: split each axis b of X as the Reshape splits the axis it becomes (inverse of p1), then
  // place the pieces where the Reshape and p2 put them.
  plan.reshape_first = true;
  std::vector<int64_t> piece_of;  // which Reshape output axis each axis of the split X holds
  for (int64_t a : inverse_permutation(p1)) {
    const AxisRun& r = (*runs)[static_cast<std::size_t>(a)];
    for (std::size_t o = r.out_first; o < r.out_last; ++o) {
      piece_of.push_back(static_cast<int64_t>(o));
      plan.shape.push_back((*shape)[o]);
    }
  }
  const std::vector<int64_t> where = inverse_permutation(piece_of);
  for (int64_t k : p2) plan.perm.push_back(where[static_cast<std::size_t>(k)]);
  return plan;
}
inline constexpr auto transpose_reshape_plan =
    rewrite::fact<"transpose_reshape_plan">(plan_transpose_reshape);
inline constexpr auto reshapes_first = rewrite::fact<"reshapes_first">(
    [](const std::optional<TransposeReshapePlan>& p) { return p->reshape_first; });
inline constexpr auto plan_shape = rewrite::fact<"plan_shape">(
    [](const std::optional<TransposeReshapePlan>& p) { return int64_tensor(p->shape); });
inline constexpr auto plan_perm =
    rewrite::fact<"plan_perm">([](const std::optional<TransposeReshapePlan>& p) { return p->perm; });
}  // namespace transpose

inline rewrite::RulePtr transpose_reshape_transpose_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Ints<'p'> p1;
  Ints<'P'> p2;
  Const<'s'> shape;
  auto moved = named<'t'>(Transpose(x, attr<"perm"> = p1));
  auto plan = transpose::transpose_reshape_plan(moved, p1, shape, p2);
  auto new_shape = fold(transpose::plan_shape(plan));
  auto perm = attr<"perm"> = transpose::plan_perm(plan);
  return rule("TransposeReshapeTranspose")
      .match(Transpose(Reshape(moved, shape), attr<"perm"> = p2))
      .when(has_value(plan))
      .to(choose(transpose::reshapes_first(plan), Transpose(Reshape(x, new_shape), perm),
                 Reshape(Transpose(x, perm), new_shape)));
}

}  // namespace xexp::patterns
