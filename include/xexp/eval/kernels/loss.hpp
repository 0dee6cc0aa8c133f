#pragma once
// Losses: NegativeLogLikelihoodLoss, and SoftmaxCrossEntropyLoss as the same loss of LogSoftmax(scores)
// over the class axis 1 (its optional second output). Each element's loss and the sums are computed in
// double and rounded once to the input's type; 'mean' divides by the summed weights of the targets not
// ignored (their count without weights), as ONNX's reference does.
#include <optional>
#include <string>
#include <vector>

#include "xexp/eval/kernel.hpp"
#include "xexp/eval/kernels/nn.hpp"
#include "xexp/eval/tensor_util.hpp"

namespace xexp::eval::kernels {

// -log_prob[n, target[n, d...], d...] * weight[target], reduced as the node's `reduction` says.
// log_prob is (N, C, d...), target (N, d...) of int32 or int64, weight (C) when given.
inline Tensor negative_log_likelihood(const KernelContext& c, const Tensor& log_prob, const Tensor& target,
                                      const Tensor* weight) {
  const std::string reduction = c.attr_string("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    c.fail("reduction '" + reduction + "' is none of mean, sum, none");
  const std::vector<int64_t>& dims = log_prob.dims();
  if (dims.size() < 2)
    c.fail("the input must be at least 2-D (N, C), not " + std::to_string(dims.size()) + "-D");
  std::vector<int64_t> target_dims{dims[0]};
  target_dims.insert(target_dims.end(), dims.begin() + 2, dims.end());
  if (target.dims() != target_dims) c.fail("the target's shape is not the input's without axis 1");
  const int64_t classes = dims[1];
  if (weight && weight->dims() != std::vector<int64_t>{classes})
    c.fail("the weight is not one value per class");
  const std::optional<int64_t> ignored =
      c.attr("ignore_index") ? std::optional<int64_t>(c.attr_int("ignore_index", 0)) : std::nullopt;
  const int64_t inner = target.size() / std::max<int64_t>(dims[0], 1);
  const Tensor labels = cast_tensor(target, ElemType::Int64);
  return visit_float_type(log_prob.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto lp = log_prob.data<T>();
    auto label = labels.data<int64_t>();
    std::vector<double> losses(static_cast<std::size_t>(labels.size()), 0.0);
    double total = 0, weights = 0;
    for (int64_t k = 0; k < labels.size(); ++k) {
      const int64_t t = label[k];
      if (ignored && t == *ignored) continue;
      if (t < 0 || t >= classes)
        c.fail("target " + std::to_string(t) + " is outside [0, " + std::to_string(classes) + ")");
      const double w = weight ? static_cast<double>(weight->data<T>()[t]) : 1.0;
      const int64_t n = k / inner, d = k % inner;
      losses[k] = -static_cast<double>(lp[(n * classes + t) * inner + d]) * w;
      total += losses[k];
      weights += w;
    }
    if (reduction == "none") {
      std::vector<T> out(losses.begin(), losses.end());
      return Tensor::from<T>(target_dims, out);
    }
    return Tensor::scalar<T>(static_cast<T>(reduction == "sum" ? total : total / weights));
  });
}

inline std::vector<Tensor> negative_log_likelihood_loss_kernel(const KernelContext& c) {
  return {negative_log_likelihood(c, c.in(0), c.in(1), c.has(2) ? &c.in(2) : nullptr)};
}

inline std::vector<Tensor> softmax_cross_entropy_loss_kernel(const KernelContext& c) {
  const Tensor& scores = c.in(0);
  if (scores.rank() < 2)
    c.fail("the scores must be at least 2-D (N, C), not " + std::to_string(scores.rank()) + "-D");
  const int64_t inner = scores.size() / std::max<int64_t>(scores.dims()[0] * scores.dims()[1], 1);
  const Tensor log_prob = softmax(scores, scores.dims()[0], scores.dims()[1], inner, SoftmaxKind::LogSoftmax);
  Tensor loss = negative_log_likelihood(c, log_prob, c.in(1), c.has(2) ? &c.in(2) : nullptr);
  if (c.n_outputs < 2) return {std::move(loss)};
  return {std::move(loss), log_prob};
}

inline void register_loss(KernelRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", negative_log_likelihood_loss_kernel);
  r.add("SoftmaxCrossEntropyLoss", softmax_cross_entropy_loss_kernel);
}

}  // namespace xexp::eval::kernels
