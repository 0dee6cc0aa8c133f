#pragma once
// Matrix products, convolutions, normalizations, pooling, softmax, embeddings and reductions.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xexp/aten/converter_table.hpp"
#include "xexp/aten/elementwise.hpp"  // the op names kMax, kMin
#include "xexp/aten/shape_ops.hpp"    // identity_permutation

namespace xexp::aten {

namespace detail {

inline void matmul(NodeLowering& c) { c.result(c.g.op.MatMul(c.input(0), c.input(1))); }

// addmm(self, mat1, mat2, beta, alpha) = beta * self + alpha * mat1 @ mat2: Gemm's own definition.
inline void addmm(NodeLowering& c) {
  c.result(c.g.op.Gemm(c.input(1), c.input(2), c.input(0), {{"alpha", c.f("alpha", 1.0)}, {"beta", c.f("beta", 1.0)}}));
}
inline void baddbmm(NodeLowering& c) {
  const ElemType t = c.output_type();
  std::string product = c.g.op.MatMul(c.input(1), c.input(2));
  if (const double alpha = c.f("alpha", 1.0); alpha != 1.0) product = c.g.op.Mul(product, c.constant(alpha, t));
  std::string self = c.input(0);
  if (const double beta = c.f("beta", 1.0); beta != 1.0) self = c.g.op.Mul(self, c.constant(beta, t));
  c.result(c.g.op.Add(self, product));
}
// linear(input, weight, bias): torch.export's form of nn.Linear.
inline void linear(NodeLowering& c) {
  std::string y = c.g.op.MatMul(c.input(0), c.g.op.Transpose(c.input(1), {{"perm", {1, 0}}}));
  c.result(c.has_input(2) ? std::string(c.g.op.Add(y, c.input(2))) : y);
}

// A list argument torch lets the user give as one number for every spatial dimension.
inline std::vector<int64_t> per_dim(const NodeLowering& c, std::string_view name, std::size_t spatial, std::vector<int64_t> otherwise) {
  std::vector<int64_t> v = c.ints(name, otherwise);
  if (v.empty()) v = otherwise;
  if (v.size() == 1) v.assign(spatial, v[0]);
  if (v.size() != spatial) c.fail("'" + std::string(name) + "' has " + std::to_string(v.size()) + " values for " + std::to_string(spatial) + " dimensions");
  return v;
}
inline std::vector<int64_t> both_sides(const std::vector<int64_t>& pads) {
  std::vector<int64_t> out = pads;
  out.insert(out.end(), pads.begin(), pads.end());
  return out;
}

inline void convolution(NodeLowering& c) {
  const std::size_t spatial = c.input_rank(0) - 2;
  const std::vector<int64_t> ones(spatial, 1), zeros(spatial, 0);
  Attrs attrs = {{"strides", per_dim(c, "stride", spatial, ones)},
                 {"pads", both_sides(per_dim(c, "padding", spatial, zeros))},
                 {"dilations", per_dim(c, "dilation", spatial, ones)},
                 {"group", c.i("groups", 1)}};
  std::vector<Arg> inputs = {c.input(0), c.input(1)};
  if (c.has_input(2)) inputs.emplace_back(c.input(2));
  if (c.i("transposed", 0)) {
    attrs.push_back({"output_padding", per_dim(c, "output_padding", spatial, zeros)});
    return c.result(c.g.op.call("ConvTranspose", inputs, attrs));
  }
  c.result(c.g.op.call("Conv", inputs, attrs));
}

// Statistics a normalization also returns for the backward pass: nothing an inference graph reads.
inline void refuse_read_outputs(NodeLowering& c, std::size_t from, const char* what) {
  for (std::size_t k = from; k < c.output_count(); ++k)
    if (c.output_read(k)) c.fail(std::string("output ") + std::to_string(k) + " (" + what + ") is read: not supported");
}
inline std::string tensor_or_filled(NodeLowering& c, std::size_t k, std::vector<int64_t> dims, double value) {
  return c.has_input(k) ? c.input(k) : c.g.make_initializer("", filled(c.input_type(0), std::move(dims), value));
}

// native_layer_norm(input, normalized_shape, weight, bias, eps) and layer_norm.
inline void layer_norm(NodeLowering& c) {
  refuse_read_outputs(c, 1, "mean and reciprocal standard deviation");
  const std::vector<int64_t> normalized = c.ints("normalized_shape");
  Attrs attrs = {{"axis", -static_cast<int64_t>(normalized.size())}, {"epsilon", c.f("eps", 1e-5)}};
  std::vector<Arg> inputs = {c.input(0), tensor_or_filled(c, 1, normalized, 1.0)};
  if (c.has_input(2)) inputs.emplace_back(c.input(2));
  c.result(c.g.op.LayerNormalization(inputs, attrs));
}

// native_batch_norm and _native_batch_norm_legit_no_training in inference: the running statistics.
inline void batch_norm(NodeLowering& c) {
  if (c.i("training", 0)) c.fail("batch normalization in training mode: call model.eval() before exporting");
  refuse_read_outputs(c, 1, "batch statistics");
  if (!c.has_input(3) || !c.has_input(4)) c.fail("batch normalization without running statistics");
  const Dim channel_dim = c.input_shape(0).at(1);
  if (!channel_dim.is_static()) c.fail("the number of channels is not static");
  const std::vector<int64_t> channels = {channel_dim.value()};
  c.result(c.g.op.BatchNormalization(c.input(0), tensor_or_filled(c, 1, channels, 1.0), tensor_or_filled(c, 2, channels, 0.0),
                                     c.input(3), c.input(4), {{"epsilon", c.f("eps", 1e-5)}}));
}

// native_group_norm(input, weight, bias, N, C, HxW, group, eps): each group of channels normalized as
// one instance (InstanceNormalization over (N, group, -1)), then the per-channel affine.
// The batch may be dynamic (N computed): Reshape's 0 keeps it, and the input's Shape restores it.
inline void group_norm(NodeLowering& c) {
  refuse_read_outputs(c, 1, "mean and reciprocal standard deviation");
  const int64_t groups = c.i("group");
  const ElemType t = c.input_type(0);
  const std::string grouped = c.g.op.Reshape(c.input(0), std::vector<int64_t>{0, groups, -1});
  const std::string ones = c.g.make_initializer("", filled(t, {groups}, 1.0)), zeros = c.g.make_initializer("", filled(t, {groups}, 0.0));
  std::string y = c.g.op.InstanceNormalization(grouped, ones, zeros, {{"epsilon", c.f("eps", 1e-5)}});
  const std::optional<std::vector<int64_t>> dims = static_dims(c.input_shape(0));
  y = dims ? c.g.op.Reshape(y, *dims) : c.g.op.Reshape(y, c.g.op.Shape(c.input(0)));
  std::vector<int64_t> per_channel(c.input_rank(0) - 1, 1);
  per_channel[0] = c.i("C");
  if (c.has_input(1)) y = c.g.op.Mul(y, c.g.op.Reshape(c.input(1), per_channel));
  if (c.has_input(2)) y = c.g.op.Add(y, c.g.op.Reshape(c.input(2), per_channel));
  c.result(y);
}

inline Attrs pool_attributes(NodeLowering& c, std::size_t spatial) {
  const std::vector<int64_t> kernel = per_dim(c, "kernel_size", spatial, {});
  return {{"kernel_shape", kernel},
          {"strides", per_dim(c, "stride", spatial, kernel)},
          {"pads", both_sides(per_dim(c, "padding", spatial, std::vector<int64_t>(spatial, 0)))},
          {"ceil_mode", c.i("ceil_mode", 0)}};
}
inline void max_pool(NodeLowering& c) {
  refuse_read_outputs(c, 1, "indices");
  const std::size_t spatial = c.input_rank(0) - 2;
  Attrs attrs = pool_attributes(c, spatial);
  attrs.push_back({"dilations", per_dim(c, "dilation", spatial, std::vector<int64_t>(spatial, 1))});
  c.result(c.g.op.call("MaxPool", {c.input(0)}, attrs)[0]);
}
inline void avg_pool(NodeLowering& c) {
  if (c.has_attribute("divisor_override")) c.fail("divisor_override is not supported");
  Attrs attrs = pool_attributes(c, c.input_rank(0) - 2);
  attrs.push_back({"count_include_pad", c.i("count_include_pad", 1)});
  c.result(c.g.op.call("AveragePool", {c.input(0)}, attrs));
}
// adaptive average pooling to sizes that divide the input's: a plain average pooling.
inline void adaptive_avg_pool(NodeLowering& c) {
  const std::vector<int64_t> in = c.static_input_shape(0), out = c.static_output_shape();
  std::vector<int64_t> kernel;
  bool global = true;
  for (std::size_t k = 2; k < in.size(); ++k) {
    if (in[k] % out[k] != 0) c.fail("output size " + std::to_string(out[k]) + " does not divide input size " + std::to_string(in[k]));
    kernel.push_back(in[k] / out[k]);
    global = global && out[k] == 1;
  }
  if (global) return c.result(c.g.op.call("GlobalAveragePool", {c.input(0)}));
  c.result(c.g.op.call("AveragePool", {c.input(0)}, {{"kernel_shape", kernel}, {"strides", kernel}}));
}

template <const char* OnnxOp>
void softmax(NodeLowering& c) {
  const std::string x = c.cast(c.input(0), c.output_type());
  c.result(c.g.op.call(OnnxOp, {x}, {{"axis", c.axis("dim", c.input_rank(0))}}));
}
inline constexpr char kSoftmax[] = "Softmax", kLogSoftmax[] = "LogSoftmax", kReduceMean[] = "ReduceMean",
                      kReduceSum[] = "ReduceSum", kReduceMax[] = "ReduceMax", kReduceMin[] = "ReduceMin",
                      kArgMax[] = "ArgMax", kArgMin[] = "ArgMin";

inline void embedding(NodeLowering& c) { c.result(c.g.op.Gather(c.input(0), c.input(1), {{"axis", int64_t{0}}})); }

// mean, sum, amax, amin over `dim` (every dimension when absent or empty).
template <const char* OnnxOp>
void reduce(NodeLowering& c) {
  const std::size_t rank = c.input_rank(0);
  std::vector<int64_t> axes = c.ints("dim", std::vector<int64_t>{});
  for (int64_t& a : axes) a = normalize_axis(a, rank, "dim");
  const std::string x = c.cast(c.input(0), c.output_type());
  Attrs attrs = {{"keepdims", c.i("keepdim", 0)}};
  if (axes.empty()) return c.result(c.g.op.call(OnnxOp, {x}, attrs));
  c.result(c.g.op.call(OnnxOp, {x, axes}, attrs));
}
// max and min: of two tensors (max.other), along `dim` with the indices (max.dim), or of everything.
template <const char* ReduceOp, const char* ArgOp, const char* BinaryOp>
void extremum(NodeLowering& c) {
  if (c.has_input(1)) return c.result(c.g.op.call(BinaryOp, {c.input(0), c.input(1)}));
  if (!c.has_attribute("dim")) return c.result(c.g.op.call(ReduceOp, {c.input(0)}, {{"keepdims", int64_t{0}}}));
  const int64_t dim = c.axis("dim", c.input_rank(0)), keepdim = c.i("keepdim", 0);
  c.result(0, c.g.op.call(ReduceOp, {c.input(0), std::vector<int64_t>{dim}}, {{"keepdims", keepdim}}));
  if (c.output_read(1)) c.result(1, c.g.op.call(ArgOp, {c.input(0)}, {{"axis", dim}, {"keepdims", keepdim}}));
}
// var(self, dim, correction or unbiased, keepdim): the mean of the squared deviations, divided by
// n - correction (1 unless told otherwise, as torch's default).
inline void var(NodeLowering& c) {
  const std::vector<int64_t> dims = c.static_input_shape(0);
  std::vector<int64_t> axes = c.ints("dim", std::vector<int64_t>{});
  if (axes.empty())
    for (std::size_t k = 0; k < dims.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  int64_t n = 1;
  for (int64_t& a : axes) {
    a = normalize_axis(a, dims.size(), "dim");
    n *= dims[static_cast<std::size_t>(a)];
  }
  const double correction = c.has_attribute("correction") ? c.f("correction") : static_cast<double>(c.i("unbiased", 1));
  const ElemType t = c.output_type();
  const std::string x = c.cast(c.input(0), t);
  const std::string deviation = c.g.op.Sub(x, c.g.op.ReduceMean(x, axes, {{"keepdims", int64_t{1}}}));
  const std::string squares = c.g.op.ReduceSum(c.g.op.Mul(deviation, deviation), axes, {{"keepdims", c.i("keepdim", 0)}});
  c.result(c.g.op.Div(squares, c.constant(static_cast<double>(n) - correction, t)));
}
// upsample_nearest2d(self, output_size, scales): Resize to the traced size, torch's nearest rule
// (floor of the asymmetric source coordinate).
inline void upsample_nearest(NodeLowering& c) {
  const std::vector<int64_t> sizes = c.static_output_shape();
  c.result(c.g.op.call("Resize", {c.input(0), Arg(), Arg(), sizes},
                       {{"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}}));
}

template <const char* OnnxOp>
void arg_reduce(NodeLowering& c) {
  std::string x = c.input(0);
  int64_t axis = 0;
  if (c.has_attribute("dim")) axis = c.axis("dim", c.input_rank(0));
  else x = c.g.op.Reshape(x, std::vector<int64_t>{-1});
  std::string out = c.g.op.call(OnnxOp, {x}, {{"axis", axis}, {"keepdims", c.i("keepdim", 0)}});
  if (!c.has_attribute("dim") && c.i("keepdim", 0)) out = c.g.op.Reshape(out, c.static_output_shape());
  c.result(out);
}
inline void cumsum(NodeLowering& c) {
  const std::string axis = c.g.make_initializer("", Tensor::scalar<int64_t>(c.axis("dim", c.input_rank(0))));
  c.result(c.g.op.CumSum(c.cast(c.input(0), c.output_type()), axis));
}
inline void trilu(NodeLowering& c) {
  const std::string k = c.g.make_initializer("", Tensor::scalar<int64_t>(c.i("diagonal", 0)));
  c.result(c.g.op.Trilu(c.input(0), k, {{"upper", int64_t{c.op() == "triu"}}}));
}
// topk(self, k, dim, largest, sorted) and sort(self, dim, descending): TopK over the whole dimension.
inline void topk(NodeLowering& c) {
  const std::size_t rank = c.input_rank(0);
  const int64_t axis = normalize_axis(c.i("dim", -1), rank, "dim");
  const bool sort = c.op() == "sort";
  const int64_t k = sort ? c.static_input_shape(0).at(static_cast<std::size_t>(axis)) : c.i("k");
  const int64_t largest = sort ? c.i("descending", 0) : c.i("largest", 1);
  Outputs out = c.g.op.call("TopK", {c.input(0), std::vector<int64_t>{k}}, {{"axis", axis}, {"largest", largest}, {"sorted", int64_t{1}}},
                            {.output_count = 2});
  c.result(0, out[0]);
  c.result(1, out[1]);
}

// scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
// and its CPU kernel _scaled_dot_product_flash_attention_for_cpu (the same inputs; its second output,
// the log-sum-exp, is for backward): softmax(q k^T * scale + mask) v, written out (ONNX's Attention
// needs opset 23; the optimizer's attention rules fuse it). A boolean mask, and is_causal's lower
// triangle, keep the scores where true.
inline void scaled_dot_product_attention(NodeLowering& c) {
  refuse_read_outputs(c, 1, "log-sum-exp");
  if (c.f("dropout_p", 0.0) != 0.0) c.fail("dropout_p is not 0: attention with dropout is not an inference graph");
  const std::size_t rank = c.input_rank(1);
  if (rank < 2 || c.input_rank(0) < 2) c.fail("query and key need a rank of at least 2");
  if (c.i("enable_gqa", 0) && (rank < 3 || c.input_rank(0) < 3 || c.input_shape(0)[c.input_rank(0) - 3] != c.input_shape(1)[rank - 3]))
    c.fail("enable_gqa with fewer key/value heads than query heads is not supported yet");
  const ElemType t = c.output_type();
  double scale = 0;
  if (c.has_attribute("scale")) {
    scale = c.f("scale");
  } else {
    const Dim head = c.input_shape(0).back();
    if (!head.is_static()) c.fail("the head size is not static (give `scale`)");
    scale = 1.0 / std::sqrt(static_cast<double>(head.value()));
  }
  std::vector<int64_t> perm = identity_permutation(rank);
  std::swap(perm[rank - 1], perm[rank - 2]);
  const std::string key_t = c.g.op.Transpose(c.cast(c.input(1), t), {{"perm", perm}});
  std::string scores = c.g.op.MatMul(c.g.op.Mul(c.cast(c.input(0), t), c.constant(scale, t)), key_t);
  const std::string minus_inf = c.constant(-std::numeric_limits<double>::infinity(), t);
  if (c.i("is_causal", 0)) {
    const std::string rows = c.g.op.Shape(c.input(0), {{"start", int64_t{-2}}, {"end", int64_t{-1}}});
    const std::string cols = c.g.op.Shape(c.input(1), {{"start", int64_t{-2}}, {"end", int64_t{-1}}});
    const std::string ones = c.g.op.ConstantOfShape(c.g.op.Concat({rows, cols}, {{"axis", int64_t{0}}}),
                                                    {{"value", filled(ElemType::Bool, {1}, 1.0)}});
    scores = c.g.op.Where(c.g.op.Trilu(ones, Arg(), {{"upper", int64_t{0}}}), scores, minus_inf);
  }
  if (c.has_input(3)) {
    if (c.input_type(3) == ElemType::Bool) scores = c.g.op.Where(c.input(3), scores, minus_inf);
    else scores = c.g.op.Add(scores, c.cast(c.input(3), t));
  }
  c.result(0, c.g.op.MatMul(c.g.op.Softmax(scores, {{"axis", int64_t{-1}}}), c.cast(c.input(2), t)));
}

}  // namespace detail

inline void add_nn_converters(ConverterTable& table) {
  using namespace detail;
  for (const char* op : {"mm", "bmm", "matmul"}) table.add(op, matmul);
  table.add("addmm", addmm);
  table.add("baddbmm", baddbmm);
  table.add("linear", linear);
  table.add("convolution", convolution);
  table.add("native_layer_norm", layer_norm);
  table.add("layer_norm", layer_norm);
  table.add("native_batch_norm", batch_norm);
  table.add("_native_batch_norm_legit_no_training", batch_norm);
  table.add("native_group_norm", group_norm);
  for (const char* op : {"max_pool1d", "max_pool2d", "max_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices"})
    table.add(op, max_pool);
  for (const char* op : {"avg_pool1d", "avg_pool2d", "avg_pool3d"}) table.add(op, avg_pool);
  for (const char* op : {"_adaptive_avg_pool2d", "adaptive_avg_pool2d", "adaptive_avg_pool1d"}) table.add(op, adaptive_avg_pool);
  table.add("_softmax", softmax<kSoftmax>);
  table.add("softmax", softmax<kSoftmax>);
  table.add("_log_softmax", softmax<kLogSoftmax>);
  table.add("log_softmax", softmax<kLogSoftmax>);
  table.add("embedding", embedding);
  table.add("mean", reduce<kReduceMean>);
  table.add("sum", reduce<kReduceSum>);
  table.add("amax", reduce<kReduceMax>);
  table.add("amin", reduce<kReduceMin>);
  table.add("max", extremum<kReduceMax, kArgMax, kMax>);
  table.add("min", extremum<kReduceMin, kArgMin, kMin>);
  table.add("var", var);
  table.add("upsample_nearest2d", upsample_nearest);
  table.add("upsample_nearest1d", upsample_nearest);
  table.add("argmax", arg_reduce<kArgMax>);
  table.add("argmin", arg_reduce<kArgMin>);
  table.add("cumsum", cumsum);
  table.add("triu", trilu);
  table.add("tril", trilu);
  table.add("topk", topk);
  table.add("sort", topk);
  table.add("scaled_dot_product_attention", scaled_dot_product_attention);
  table.add("_scaled_dot_product_flash_attention_for_cpu", scaled_dot_product_attention);
}

}  // namespace xexp::aten
