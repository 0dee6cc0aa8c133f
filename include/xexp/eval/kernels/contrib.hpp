#pragma once
// com.microsoft kernels the ORT pattern set produces (FastGelu, BiasGelu, QuickGelu, the Skip*
// normalizations, RotaryEmbedding, MultiHeadAttention, GroupQueryAttention, BiasSoftmax, SoftmaxGrad,
// FusedConv, FusedGemm) and ONNX RotaryEmbedding and Attention.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "xexp/eval/kernel.hpp"
#include "xexp/eval/kernels/elementwise.hpp"
#include "xexp/eval/kernels/matmul.hpp"
#include "xexp/eval/kernels/nn.hpp"
#include "xexp/eval/kernels/shape_ops.hpp"
#include "xexp/eval/tensor_util.hpp"

namespace xexp::eval::kernels {

// a + b (numpy broadcasting) in their float type: the sums the contrib ops compute before their op.
inline Tensor add_floats(const Tensor& a, const Tensor& b) {
  return visit_float_type(a.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return broadcast_binary<T, T, T>(a, b, [](T x, T y) { return x + y; });
  });
}

// x (+ bias broadcast), then f elementwise, in the input's float type.
template <class F>
Tensor bias_then(const Tensor& x, const Tensor* bias, F f) {
  const Tensor sum = bias ? add_floats(x, *bias) : x;
  return visit_float_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(x.type(), sum.dims());
    auto src = sum.data<T>();
    auto dst = out.mutable_data<T>();
    for (int64_t k = 0; k < sum.size(); ++k) dst[k] = static_cast<T>(f(static_cast<double>(src[k])));
    return out;
  });
}

inline std::vector<Tensor> fast_gelu_kernel(const KernelContext& c) {
  return {bias_then(c.in(0), c.has(1) ? &c.in(1) : nullptr, gelu_tanh)};
}
inline std::vector<Tensor> bias_gelu_kernel(const KernelContext& c) { return {bias_then(c.in(0), &c.in(1), gelu_erf)}; }
inline std::vector<Tensor> quick_gelu_kernel(const KernelContext& c) {
  const double alpha = c.attr_float("alpha", 1.702f);
  return {bias_then(c.in(0), nullptr, [alpha](double x) { return x / (1 + std::exp(-alpha * x)); })};
}

// SkipLayerNormalization(input, skip, gamma, beta?, bias?) and SkipSimplifiedLayerNormalization(input,
// skip, gamma, bias?) -> (output, mean, inv_std_var, input_skip_bias_sum).
inline Kernel skip_norm_kernel(bool rms) {
  return [rms](const KernelContext& c) -> std::vector<Tensor> {
    // registered without the float16 widening: mean and inv_std_var stay float (normalize_trailing)
    const ElemType type = c.in(0).type();
    auto wide = [&](std::size_t k) { return is_half(type) ? cast_tensor(c.in(k), ElemType::Float) : c.in(k); };
    const std::size_t bias_slot = rms ? 3 : 4;
    const Tensor x = wide(0);
    Tensor sum = add_floats(x, wide(1));
    if (c.has(bias_slot)) sum = add_floats(sum, wide(bias_slot));
    const Tensor* beta = !rms && c.has(3) ? &c.in(3) : nullptr;
    auto r = normalize_trailing(sum, &c.in(2), beta,
                                {.epsilon = c.attr_float("epsilon", 1e-5f), .rms = rms, .stash = sum.type()});
    return {cast_tensor(r.y, type), cast_tensor(r.mean, ElemType::Float),
            cast_tensor(r.inv_std, ElemType::Float), cast_tensor(sum, type)};
  };
}

inline std::vector<Tensor> bias_softmax_kernel(const KernelContext& c) {
  const Tensor sum = add_floats(c.in(0), c.in(1));
  const int64_t axis = normalize_axis(c.attr_int("axis", -1), sum.rank());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= sum.dims()[d];
  for (std::size_t d = axis + 1; d < sum.rank(); ++d) inner *= sum.dims()[d];
  return {softmax(sum, outer, sum.dims()[axis], inner, SoftmaxKind::Softmax)};
}

// dX = Y * (dY - sum(dY * Y, axis)).
inline std::vector<Tensor> softmax_grad_kernel(const KernelContext& c) {
  const Tensor& dy = c.in(0);
  const Tensor& y = c.in(1);
  const int64_t axis = normalize_axis(c.attr_int("axis", -1), y.rank());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y.dims()[d];
  for (std::size_t d = axis + 1; d < y.rank(); ++d) inner *= y.dims()[d];
  const int64_t n = y.dims()[axis];
  return visit_float_type(y.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(y.type(), y.dims());
    auto g = dy.data<T>();
    auto p = y.data<T>();
    auto dst = out.mutable_data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double dot = 0;
        for (int64_t j = 0; j < n; ++j) dot += double(g[(o * n + j) * inner + i]) * p[(o * n + j) * inner + i];
        for (int64_t j = 0; j < n; ++j) {
          const int64_t at = (o * n + j) * inner + i;
          dst[at] = static_cast<T>(p[at] * (g[at] - dot));
        }
      }
    return std::vector<Tensor>{out};
  });
}

// The activation ONNX Runtime's FusedConv and FusedGemm apply after their Conv or Gemm, computed in
// place in the output's float type. `alpha` and `beta` are LeakyRelu's slope, HardSigmoid's alpha and
// beta, Clip's min and max (the order of FusedConv's activation_params).
inline void apply_fused_activation(const KernelContext& c, Tensor& t, const std::string& activation, float alpha,
                                   float beta) {
  std::function<double(double)> f;
  if (activation == "Relu") f = [](double v) { return v > 0 ? v : 0.0; };
  else if (activation == "LeakyRelu") f = [alpha](double v) { return v >= 0 ? v : alpha * v; };
  else if (activation == "Clip") f = [alpha, beta](double v) { return std::min<double>(std::max<double>(v, alpha), beta); };
  else if (activation == "HardSigmoid") f = [alpha, beta](double v) { return std::max(0.0, std::min(1.0, alpha * v + beta)); };
  else if (activation == "Sigmoid") f = [](double v) { return v >= 0 ? 1 / (1 + std::exp(-v)) : std::exp(v) / (1 + std::exp(v)); };
  else if (activation == "Tanh") f = [](double v) { return std::tanh(v); };
  else c.fail("activation '" + activation + "' is not supported");
  visit_float_type(t.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T& v : t.mutable_data<T>()) v = static_cast<T>(f(static_cast<double>(v)));
  });
}

// com.microsoft FusedConv: Conv, plus its optional fourth input Z (of the output's shape and type), then
// `activation` with its parameters in activation_params.
inline std::vector<Tensor> fused_conv_kernel(const KernelContext& c) {
  const std::string activation = c.attr_string("activation");
  std::vector<Tensor> y = conv_kernel(c);
  if (c.has(3)) {
    const Tensor& z = c.in(3);
    if (z.dims() != y[0].dims() || z.type() != y[0].type())
      c.fail("Z must have the output's shape " + shape_str(make_shape(y[0].dims())) + " and type, not " +
             shape_str(make_shape(z.dims())));
    y[0] = add_floats(y[0], z);
  }
  if (activation.empty()) return y;
  const std::vector<float> params = c.attr_floats("activation_params");
  const bool two = activation == "Clip" || activation == "HardSigmoid", one = activation == "LeakyRelu";
  if (params.size() != (two ? 2u : one ? 1u : 0u))
    c.fail("activation '" + activation + "' takes " + (two ? "2" : one ? "1" : "no") + " activation_params");
  apply_fused_activation(c, y[0], activation, params.empty() ? 0.f : params[0], params.size() < 2 ? 0.f : params[1]);
  return y;
}

// com.microsoft FusedGemm: Gemm, then `activation` with activation_alpha and activation_beta (ONNX
// Runtime's defaults when absent: LeakyRelu 0.01, HardSigmoid 0.2 and 0.5).
inline std::vector<Tensor> fused_gemm_kernel(const KernelContext& c) {
  const std::string activation = c.attr_string("activation");
  std::vector<Tensor> y = gemm_kernel(c);
  if (activation.empty()) return y;
  if (activation == "Clip") c.fail("activation 'Clip' is not supported by FusedGemm");
  const bool hard_sigmoid = activation == "HardSigmoid";
  apply_fused_activation(c, y[0], activation, c.attr_float("activation_alpha", hard_sigmoid ? 0.2f : 0.01f),
                         c.attr_float("activation_beta", hard_sigmoid ? 0.5f : 0.f));
  return y;
}

// Rotary embedding on x viewed as (batch, seq, heads, head_size) or (batch, heads, seq, head_size).
// cos/sin rows are picked by position (batch, seq) and hold rotary_dim / 2 values.
struct RotaryLayout {
  int64_t batch, seq, heads, head_size;
  bool heads_first;  // (batch, heads, seq, head_size)
};
inline Tensor apply_rotary(const KernelContext& c, const Tensor& x, const RotaryLayout& l,
                           const std::function<int64_t(int64_t, int64_t)>& position, const Tensor& cos_cache,
                           const Tensor& sin_cache, int64_t rotary_dim, bool interleaved,
                           bool cache_per_position /* cache indexed by (b, s) directly */) {
  const int64_t half = rotary_dim / 2;
  if (half <= 0 || rotary_dim > l.head_size || cos_cache.size() % half != 0 || sin_cache.dims() != cos_cache.dims())
    c.fail("cos_cache and sin_cache must have the same shape (rows, rotary_embedding_dim / 2)");
  const int64_t rows = cos_cache.size() / half;
  return visit_float_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(x.type(), x.dims());
    auto src = x.data<T>();
    auto dst = out.mutable_data<T>();
    const Tensor cf = cast_tensor(cos_cache, x.type()), sf = cast_tensor(sin_cache, x.type());
    auto cs = cf.data<T>();
    auto sn = sf.data<T>();
    for (int64_t b = 0; b < l.batch; ++b)
      for (int64_t s = 0; s < l.seq; ++s) {
        const int64_t row = cache_per_position ? (b * l.seq + s) : position(b, s);
        if (row < 0 || row >= rows)
          c.fail("position " + std::to_string(row) + " is outside the " + std::to_string(rows) + " rows of cos_cache");
        for (int64_t h = 0; h < l.heads; ++h) {
          const int64_t base = (l.heads_first ? ((b * l.heads + h) * l.seq + s) : ((b * l.seq + s) * l.heads + h)) * l.head_size;
          for (int64_t j = 0; j < l.head_size; ++j) dst[base + j] = src[base + j];
          for (int64_t i = 0; i < half; ++i) {
            const T co = cs[row * half + i], si = sn[row * half + i];
            const int64_t a = interleaved ? 2 * i : i, e = interleaved ? 2 * i + 1 : i + half;
            dst[base + a] = src[base + a] * co - src[base + e] * si;
            dst[base + e] = src[base + e] * co + src[base + a] * si;
          }
        }
      }
    return out;
  });
}

// com.microsoft RotaryEmbedding(input, position_ids, cos_cache, sin_cache).
inline std::vector<Tensor> ort_rotary_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const std::vector<int64_t> pos = as_int64s(c.in(1));
  const Tensor& cos_cache = c.in(2);
  if ((x.rank() != 3 && x.rank() != 4) || cos_cache.rank() != 2)
    c.fail("input must be 3-D or 4-D and cos_cache 2-D");
  int64_t heads = c.attr_int("num_heads", 0);
  RotaryLayout l{};
  if (x.rank() == 4) {
    l = {x.dims()[0], x.dims()[2], x.dims()[1], x.dims()[3], true};
  } else {
    const int64_t rot = c.attr_int("rotary_embedding_dim", 0);
    if (heads == 0 && rot == 0 && cos_cache.dims()[1] > 0) heads = x.dims()[2] / (2 * cos_cache.dims()[1]);
    if (heads <= 0 || x.dims()[2] % heads != 0) c.fail("num_heads must divide the hidden size");
    l = {x.dims()[0], x.dims()[1], heads, x.dims()[2] / heads, false};
  }
  const int64_t rotary_dim = c.attr_int("rotary_embedding_dim", 0) > 0 ? c.attr_int("rotary_embedding_dim", 0) : 2 * cos_cache.dims()[1];
  if (pos.size() != 1 && static_cast<int64_t>(pos.size()) != l.batch * l.seq)
    c.fail("position_ids must have one element (an offset) or shape (batch, sequence)");
  auto position = [&](int64_t b, int64_t s) { return pos.size() == 1 ? pos[0] + s : pos[b * l.seq + s]; };
  return {apply_rotary(c, x, l, position, cos_cache, c.in(3), rotary_dim, c.attr_int("interleaved", 0) != 0, false)};
}

// ONNX RotaryEmbedding (opset 23): (X, cos_cache, sin_cache, position_ids?); 4-D X is (B, N, S, H).
inline std::vector<Tensor> onnx_rotary_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& cos_cache = c.in(1);
  if (x.rank() != 3 && x.rank() != 4) c.fail("input must be 3-D or 4-D");
  RotaryLayout l{};
  if (x.rank() == 4) {
    l = {x.dims()[0], x.dims()[2], x.dims()[1], x.dims()[3], true};
  } else {
    const int64_t heads = c.attr_int("num_heads", 0);
    if (heads <= 0 || x.dims()[2] % heads != 0) c.fail("num_heads is required for 3-D inputs and must divide the hidden size");
    l = {x.dims()[0], x.dims()[1], heads, x.dims()[2] / heads, false};
  }
  const int64_t rotary_dim = c.attr_int("rotary_embedding_dim", 0) > 0 ? c.attr_int("rotary_embedding_dim", 0) : l.head_size;
  if (c.has(3)) {
    const std::vector<int64_t> pos = as_int64s(c.in(3));
    if (static_cast<int64_t>(pos.size()) != l.batch * l.seq) c.fail("position_ids must have shape (batch, sequence)");
    auto position = [&](int64_t b, int64_t s) { return pos[b * l.seq + s]; };
    return {apply_rotary(c, x, l, position, cos_cache, c.in(2), rotary_dim, c.attr_int("interleaved", 0) != 0, false)};
  }
  return {apply_rotary(c, x, l, {}, cos_cache, c.in(2), rotary_dim, c.attr_int("interleaved", 0) != 0, true)};
}

// x as (batch, heads, length, head_size): 4-D with that many heads as it is, 3-D (batch, length, heads *
// head_size) split.
inline Tensor split_heads(const KernelContext& c, const Tensor& x, int64_t heads, const std::string& what) {
  if (x.rank() == 4 && x.dims()[1] == heads) return x;
  if (x.rank() != 3 || x.dims()[2] % heads != 0)
    c.fail(what + " " + shape_str(x.shape()) + " is neither 3-D with a hidden size divisible by " +
           std::to_string(heads) + " heads nor (batch, " + std::to_string(heads) + ", length, head_size)");
  return transpose(x.reshaped({x.dims()[0], x.dims()[1], heads, x.dims()[2] / heads}), {0, 2, 1, 3});
}
// (batch, heads, sequence, head_size) to (batch, sequence, heads * head_size).
inline Tensor merge_heads(const Tensor& y) {
  const Tensor t = transpose(y, {0, 2, 1, 3});
  return t.reshaped({t.dims()[0], t.dims()[1], t.dims()[2] * t.dims()[3]});
}

// What a query row whose keys are all masked (-inf) gets: NaN from the Softmax (com.microsoft's
// attention ops in ONNX Runtime 1.30) or 0 (ONNX's Attention, its opset-23 errata, as torch's SDPA).
enum class MaskedRows { NaN, Zero };

// Softmax(scale * Q K^T + bias) V per head, for q (batch, heads, sequence, head_size), k (batch, heads,
// total, head_size), v (batch, heads, total, v_head_size) and a bias (`what`) broadcast to the scores;
// `scores`, when given, gets scale * Q K^T.
inline Tensor attend(const KernelContext& c, const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                     const Tensor* bias, const char* what, MaskedRows masked_rows, Tensor* scores = nullptr) {
  Tensor s = batched_matmul(q, k, false, true, scale);
  if (scores) *scores = s;
  if (bias) {
    if (bias->type() != s.type()) c.fail(std::string(what) + " is not of the query's type");
    s = add_floats(s, *bias);
    if (s.dims() != std::vector<int64_t>{q.dims()[0], q.dims()[1], q.dims()[2], k.dims()[2]})
      c.fail(std::string(what) + " " + shape_str(bias->shape()) + " does not broadcast to the scores");
  }
  const int64_t total = k.dims()[2], rows = total > 0 ? s.size() / total : 0;
  Tensor weights = softmax(s, rows, total, 1, SoftmaxKind::Softmax);
  if (masked_rows == MaskedRows::Zero)
    visit_float_type(s.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto in = s.data<T>();
      auto out = weights.mutable_data<T>();
      for (int64_t r = 0; r < rows; ++r) {
        auto row = in.subspan(static_cast<std::size_t>(r * total), static_cast<std::size_t>(total));
        if (std::all_of(row.begin(), row.end(), [](T x) { return x == -std::numeric_limits<T>::infinity(); }))
          std::fill_n(out.begin() + r * total, total, T(0));
      }
    });
  return batched_matmul(weights, v, false, false, 1.0);
}

// Softmax(scale * Q K^T + bias) V for q (batch, q_heads, sequence, head_size), k and v (batch, kv_heads,
// total, head_size) whose heads each serve q_heads / kv_heads query heads in a row; a `causal_past` also
// hides key j from query i when j > i + causal_past. bias is additive and broadcasts to the scores, which
// `scores` gets when given.
inline Tensor grouped_attend(const KernelContext& c, const Tensor& q, const Tensor& k, const Tensor& v,
                             std::optional<Tensor> bias, std::optional<int64_t> causal_past, double scale,
                             const char* what, MaskedRows masked_rows, Tensor* scores = nullptr) {
  const int64_t q_heads = q.dims()[1], kv_heads = k.dims()[1], sequence = q.dims()[2], total = k.dims()[2];
  auto repeated = [&](const Tensor& x) {
    if (kv_heads == q_heads) return x;
    const std::vector<int64_t>& d = x.dims();
    return expand_to(x.reshaped({d[0], d[1], 1, d[2], d[3]}), {d[0], d[1], q_heads / kv_heads, d[2], d[3]})
        .reshaped({d[0], q_heads, d[2], d[3]});
  };
  if (causal_past) {
    const int64_t past = *causal_past;
    Tensor mask(q.type(), {sequence, total});
    visit_float_type(q.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto dst = mask.mutable_data<T>();
      for (int64_t i = 0; i < sequence; ++i)
        for (int64_t j = 0; j < total; ++j)
          dst[i * total + j] = j > i + past ? -std::numeric_limits<T>::infinity() : T(0);
    });
    if (bias) mask = add_floats(*bias, mask);
    bias = mask;
  }
  return attend(c, q, repeated(k), repeated(v), scale, bias ? &*bias : nullptr, what, masked_rows, scores);
}

// The attention scale: the attribute `scale`, 1/sqrt(head_size) when absent or 0.
inline double softmax_scale(const KernelContext& c, int64_t head_size) {
  const float given = c.attr_float("scale", 0.f);
  return given != 0.f ? given : 1 / std::sqrt(static_cast<double>(head_size));
}

// The projection bias of MultiHeadAttention: q, k and v (all 3-D) plus their parts of the packed bias
// (q's hidden size, then k's, then v's).
inline std::array<Tensor, 3> add_projection_bias(const KernelContext& c, const Tensor& bias) {
  std::array<Tensor, 3> out{c.in(0), c.in(1), c.in(2)};
  int64_t total = 0;
  for (const Tensor& t : out) {
    if (t.rank() != 3)
      c.fail("the projection bias needs a 3-D query, key and value, not " + shape_str(t.shape()));
    total += t.dims()[2];
  }
  if (bias.rank() != 1 || bias.dims()[0] != total)
    c.fail("bias " + shape_str(bias.shape()) + " does not pack the hidden sizes of the query, key and value");
  int64_t offset = 0;
  for (Tensor& t : out) {
    const int64_t hidden = t.dims()[2];
    const Tensor part = slice_axis(bias, 0, offset, hidden);
    offset += hidden;
    t = add_floats(t, part);
  }
  return out;
}

// com.microsoft MultiHeadAttention(query, key, value, bias?, key_padding_mask?, attention_bias?):
// per head, Softmax(scale * Q K^T + attention_bias) V, scale 1/sqrt(head_size) when absent or 0, key j
// hidden from query i when j > i with unidirectional=1. The query is (batch, sequence, heads *
// head_size); key and value are 3-D like it or (batch, heads, total, head_size); attention_bias is
// (batch|1, heads|1, sequence, total); the projection bias goes with 3-D key and value. Packed QKV, the
// key padding mask and the past state are refused.
inline std::vector<Tensor> multi_head_attention_kernel(const KernelContext& c) {
  const int64_t heads = c.attr_int("num_heads", 0);
  if (heads <= 0) c.fail("num_heads must be positive");
  for (std::size_t k : {4, 6, 7, 8, 9})
    if (c.has(k)) c.fail("input " + std::to_string(k) + " (key_padding_mask or past state) is not supported");
  if (!c.has(1) || !c.has(2)) c.fail("key and value are required (packed QKV is not supported)");
  if (c.in(0).rank() != 3) c.fail("the query is " + shape_str(c.in(0).shape()) + ", expected (batch, sequence, hidden)");
  const std::array<Tensor, 3> qkv =
      c.has(3) ? add_projection_bias(c, c.in(3)) : std::array<Tensor, 3>{c.in(0), c.in(1), c.in(2)};
  const Tensor q = split_heads(c, qkv[0], heads, "the query"), k = split_heads(c, qkv[1], heads, "the key"),
               v = split_heads(c, qkv[2], heads, "the value");
  const int64_t head_size = q.dims()[3];
  if (k.dims()[0] != q.dims()[0] || v.dims()[0] != q.dims()[0] || k.dims()[3] != head_size || v.dims()[2] != k.dims()[2])
    c.fail("query " + shape_str(c.in(0).shape()) + ", key " + shape_str(c.in(1).shape()) + " and value " +
           shape_str(c.in(2).shape()) + " do not match");
  const double scale = softmax_scale(c, head_size);
  if (c.has(5) && c.in(5).rank() != 4) c.fail("attention_bias " + shape_str(c.in(5).shape()) + " is not 4-D");
  std::optional<Tensor> bias;
  if (c.has(5)) bias = c.in(5);
  const std::optional<int64_t> causal_past =
      c.attr_int("unidirectional", 0) != 0 ? std::optional<int64_t>(0) : std::nullopt;
  return {
      merge_heads(grouped_attend(c, q, k, v, bias, causal_past, scale, "attention_bias", MaskedRows::NaN))};
}

// ONNX Attention (opset 23)(Q, K, V, attn_mask?, past_key?, past_value?) -> (Y, present_key?,
// present_value?, qk_matmul_output?): Q, K, V all 4-D (batch, heads, length, head_size), or all 3-D
// (batch, length, hidden) split by q_num_heads and kv_num_heads (ONNX Runtime 1.30 refuses a mix). past_key
// and past_value (batch, kv_num_heads, past, head_size) go before K and V, which gives the present ones.
// attn_mask broadcasts to (batch, q_num_heads, sequence, total), additive or boolean (true attends);
// is_causal hides key j from query i when j > i + past (ONNX Runtime 1.30 too, but for one query after a
// past and more than one new key, which it lets read every key). Each K and V head serves q_num_heads /
// kv_num_heads query heads in a row. A query whose keys are all masked gets 0 (MaskedRows::Zero).
// qk_matmul_output is scale * Q K^T (mode 0); softcap and the other modes are refused.
inline std::vector<Tensor> attention_kernel(const KernelContext& c) {
  if (c.attr_float("softcap", 0.f) != 0.f) c.fail("softcap is not supported");
  if (c.attr_int("qk_matmul_output_mode", 0) != 0)
    c.fail("qk_matmul_output_mode other than 0 is not supported");
  const std::size_t rank = c.in(0).rank();
  if ((rank != 3 && rank != 4) || c.in(1).rank() != rank || c.in(2).rank() != rank)
    c.fail("Q " + shape_str(c.in(0).shape()) + ", K " + shape_str(c.in(1).shape()) + " and V " +
           shape_str(c.in(2).shape()) + " are not all 3-D or all 4-D");
  Tensor q = c.in(0), k = c.in(1), v = c.in(2);
  if (rank == 3) {
    const int64_t q_heads = c.attr_int("q_num_heads", 0), kv_heads = c.attr_int("kv_num_heads", 0);
    if (q_heads <= 0 || kv_heads <= 0) c.fail("3-D inputs need positive q_num_heads and kv_num_heads");
    q = split_heads(c, q, q_heads, "Q");
    k = split_heads(c, k, kv_heads, "K");
    v = split_heads(c, v, kv_heads, "V");
  }
  if (c.has(4) != c.has(5)) c.fail("past_key and past_value go together");
  if (c.has(4)) {
    k = concat({&c.in(4), &k}, 2);
    v = concat({&c.in(5), &v}, 2);
  }
  const int64_t q_heads = q.dims()[1], kv_heads = k.dims()[1], total = k.dims()[2];
  if (k.dims()[0] != q.dims()[0] || v.dims()[0] != q.dims()[0] || k.dims()[3] != q.dims()[3] ||
      v.dims()[1] != kv_heads || v.dims()[2] != total || kv_heads <= 0 || q_heads % kv_heads != 0)
    c.fail("Q " + shape_str(c.in(0).shape()) + ", K " + shape_str(c.in(1).shape()) + " and V " +
           shape_str(c.in(2).shape()) + " (after the past ones) do not match");
  std::optional<Tensor> bias;
  if (c.has(3)) {
    const Tensor& mask = c.in(3);
    bias = mask;
    if (mask.type() == ElemType::Bool) {
      bias = Tensor(q.type(), mask.dims());
      visit_float_type(q.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto dst = bias->mutable_data<T>();
        for (int64_t i = 0; i < mask.size(); ++i)
          dst[i] = element_as_double(mask, i) != 0 ? T(0) : -std::numeric_limits<T>::infinity();
      });
    }
  }
  Tensor scores;
  std::optional<int64_t> causal_past;
  if (c.attr_int("is_causal", 0) != 0) causal_past = c.has(4) ? c.in(4).dims()[2] : 0;
  Tensor y = grouped_attend(c, q, k, v, bias, causal_past, softmax_scale(c, q.dims()[3]), "attn_mask",
                            MaskedRows::Zero, &scores);
  std::vector<Tensor> out{rank == 3 ? merge_heads(y) : y, k, v, scores};
  out.resize(std::min(out.size(), c.n_outputs));
  return out;
}

// com.microsoft GroupQueryAttention(query, key, value, past_key?, past_value?, seqlens_k,
// total_sequence_length, ...) -> (output, present_key, present_value): causal attention of the query
// (batch, sequence, num_heads * head_size) on key and value (batch, sequence, kv_num_heads * head_size),
// each key and value head serving num_heads / kv_num_heads query heads in a row; present_key and
// present_value are key and value as (batch, kv_num_heads, sequence, head_size). Only a first prompt of
// whole sequences, what the onnxruntime set writes: no past, total_sequence_length the sequence and
// seqlens_k the sequence - 1 everywhere. Packed QKV, rotary, local windows, softcap and the later optional
// inputs are refused.
inline std::vector<Tensor> group_query_attention_kernel(const KernelContext& c) {
  const int64_t heads = c.attr_int("num_heads", 0), kv_heads = c.attr_int("kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0)
    c.fail("num_heads must be a positive multiple of a positive kv_num_heads");
  if (!c.has(1) || !c.has(2)) c.fail("key and value are required (packed QKV is not supported)");
  for (std::size_t k : {3, 4, 7, 8, 9, 10, 11})
    if (c.has(k)) c.fail("input " + std::to_string(k) + " (past state, rotary caches, ...) is not supported");
  if (c.attr_int("do_rotary", 0) != 0 || c.attr_int("local_window_size", -1) != -1 ||
      c.attr_float("softcap", 0.f) != 0.f || c.attr_int("smooth_softmax", 0) != 0)
    c.fail("do_rotary, local_window_size, softcap and smooth_softmax are not supported");
  if (c.in(0).rank() != 3 || c.in(1).rank() != 3 || c.in(2).rank() != 3)
    c.fail("query, key and value must be 3-D (batch, sequence, hidden)");
  const Tensor q = split_heads(c, c.in(0), heads, "the query"),
               k = split_heads(c, c.in(1), kv_heads, "the key"),
               v = split_heads(c, c.in(2), kv_heads, "the value");
  const int64_t batch = q.dims()[0], sequence = q.dims()[2];
  if (k.dims()[0] != batch || k.dims()[2] != sequence || k.dims()[3] != q.dims()[3] || v.dims()[0] != batch ||
      v.dims()[2] != sequence)
    c.fail("query " + shape_str(c.in(0).shape()) + ", key " + shape_str(c.in(1).shape()) + " and value " +
           shape_str(c.in(2).shape()) + " do not match");
  const Tensor &seqlens = c.in(5), &total = c.in(6);
  if (seqlens.type() != ElemType::Int32 || seqlens.size() != batch || total.type() != ElemType::Int32 ||
      total.size() != 1)
    c.fail("seqlens_k must be int32 (batch) and total_sequence_length one int32");
  bool whole = element_as_double(total, 0) == static_cast<double>(sequence);
  for (int64_t b = 0; b < batch && whole; ++b)
    whole = element_as_double(seqlens, b) == static_cast<double>(sequence - 1);
  if (!whole)
    c.fail(
        "only whole sequences without a past are supported (seqlens_k = total_sequence_length - 1 = sequence "
        "- 1)");
  const Tensor y =
      grouped_attend(c, q, k, v, std::nullopt, 0, softmax_scale(c, q.dims()[3]), "", MaskedRows::NaN);
  return {merge_heads(y), k, v};
}

inline void register_contrib(KernelRegistry& r) {
  const Symbol ms("com.microsoft");
  r.add(ms, "FastGelu", fast_gelu_kernel);
  r.add(ms, "BiasGelu", bias_gelu_kernel);
  r.add(ms, "QuickGelu", quick_gelu_kernel);
  r.add(ms, "SkipLayerNormalization", skip_norm_kernel(false), false);
  r.add(ms, "SkipSimplifiedLayerNormalization", skip_norm_kernel(true), false);
  r.add(ms, "BiasSoftmax", bias_softmax_kernel);
  r.add(ms, "SoftmaxGrad", softmax_grad_kernel);
  r.add(ms, "SoftmaxGrad_13", softmax_grad_kernel);
  r.add(ms, "FusedConv", fused_conv_kernel);
  r.add(ms, "FusedGemm", fused_gemm_kernel);
  r.add(ms, "RotaryEmbedding", ort_rotary_kernel);
  r.add(ms, "MultiHeadAttention", multi_head_attention_kernel);
  r.add(ms, "GroupQueryAttention", group_query_attention_kernel);
  r.add("RotaryEmbedding", onnx_rotary_kernel);
  r.add("Attention", attention_kernel);
}

}  // namespace xexp::eval::kernels
