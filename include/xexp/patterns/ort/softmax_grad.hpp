#pragma once
// SoftmaxGrad (onnxruntime_training set): the gradient of Softmax as backward graphs decompose it,
//   m = dY * Y;  dX = m - Y * ReduceSum(m, axes=[last], keepdims=1)
// is com.microsoft SoftmaxGrad(dY, Y, axis=last), a kernel of ONNX Runtime's training builds (its CPU
// inference package has none). Over the last axis only: SoftmaxGrad flattens the axes from `axis` on,
// as Softmax did before opset 13, which is the one-axis reduction only there. dY and Y of one shape:
// the kernel does not broadcast.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr softmax_grad_rule() {
  using namespace rewrite::dsl;
  Var<'d'> dy;
  Var<'y'> y;
  Ints<'a'> axes;
  auto product = named<'m'>(commutative(Mul(dy, y)));
  return rule("SoftmaxGrad")
      .priority(1)
      .match(Sub(product, commutative(Mul(y, ReduceSum(product, attr<"axes"> = axes, attr<"keepdims"> = 1)))))
      .when(is_cpu_float(y) && same_shape(dy, y) && is_last_axis_only(axes, y))
      .to(op<"SoftmaxGrad", "com.microsoft">(dy, y, attr<"axis"> = rank(y) - 1));
}

}  // namespace xexp::patterns
