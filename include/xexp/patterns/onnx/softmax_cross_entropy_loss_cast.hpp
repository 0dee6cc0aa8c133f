#pragma once
// SoftmaxCrossEntropyLossCast: the mean cross-entropy loss as torch's decomposition of nll_loss writes it
// (aten graphs exported node by node), 16 nodes for targets T of logits X (N, C, ...):
//   kept = Not(Equal(T, ignore));  picked = GatherElements(LogSoftmax(X, axis=1),
//          Unsqueeze(Where(kept, T, safe), 1), axis=1);  losses = Where(kept, Neg(Squeeze(picked, 1)), 0)
//   loss = ReduceSum(losses) / ReduceSum(Cast(kept))
// becomes SoftmaxCrossEntropyLoss(X, T, ignore_index=ignore, reduction="mean") (opset >= 13, where the
// decomposition's Unsqueeze and Squeeze take their axes as inputs). Half-precision exports sum in float:
// Cast(ReduceSum(Cast(losses, float)), X's type), and the count is cast to X's type before or after its
// sum; the fused op sums as its kernel does, without rounding the log-softmax to float16 first. The
// safe index only stands in for ignored targets, whose terms the second Where zeroes: any scalar.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr softmax_cross_entropy_loss_cast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'t'> target;
  Const<'i'> ignored;
  Const<'s'> safe;
  Const<'z'> zero;
  Const<'u'> unsqueezed;
  Const<'S'> squeezed;
  Int<'b'> back;
  auto kept = named<'k'>(Not(commutative(Equal(target, ignored))));
  auto picked =
      GatherElements(LogSoftmax(x, attr<"axis"> = 1),
                           Unsqueeze(Where(kept, target, safe), unsqueezed), attr<"axis"> = 1);
  auto losses = Where(kept, Neg(Squeeze(picked, squeezed)), zero);
  auto summed = [](const auto& v) {
    return ReduceSum(v, attr<"keepdims"> = 0, attr<"noop_with_empty_axes"> = 0);
  };
  auto count = either(Cast(summed(Cast(kept))), summed(Cast(kept)));
  auto wide = named<'w'>(Cast(losses));
  auto fits = opset_at_least(13) && is_cpu_float(x) && is_integer(target) && is_scalar(ignored) &&
              is_scalar(safe) && is_scalar(zero) && all_zero(zero) && scalar_is(unsqueezed, 1.0) &&
              scalar_is(squeezed, 1.0);
  auto fused = SoftmaxCrossEntropyLoss(x, target, attr<"ignore_index"> = scalar_int(ignored),
                                       attr<"reduction"> = "mean");
  return rule("SoftmaxCrossEntropyLossCast")
      .cases(match(Div(Cast(summed(wide), attr<"to"> = back), count))
                 .when(fits && dtype(x) == back && is_normalization_float(wide))
                 .to(fused),
             match(Div(summed(losses), count)).when(fits).to(fused));
}

}  // namespace xexp::patterns
