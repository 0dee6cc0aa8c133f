#pragma once
// Cast, CastLike and the linear (de)quantization ops. These see float16/bfloat16 as they are: the
// conversion is their whole job.
#include <cmath>

#include "xexp/eval/kernel.hpp"
#include "xexp/eval/tensor_util.hpp"

namespace xexp::eval::kernels {

inline std::vector<Tensor> cast_kernel(const KernelContext& c) {
  const ir::Attribute* to = c.attr("to");
  if (!to) c.fail("attribute 'to' is required");
  return {cast_tensor(c.in(0), static_cast<ElemType>(to->i))};
}
inline std::vector<Tensor> cast_like_kernel(const KernelContext& c) { return {cast_tensor(c.in(0), c.in(1).type())}; }

// Scale and zero point for element k of `x`: per tensor, or per `axis` when they are 1-D.
struct QuantParams {
  std::vector<double> scale;
  std::vector<int64_t> zero;
  int64_t axis_stride = 1, axis_size = 1;
  double scale_at(int64_t k) const { return scale.size() == 1 ? scale[0] : scale[(k / axis_stride) % axis_size]; }
  int64_t zero_at(int64_t k) const { return zero.empty() ? 0 : (zero.size() == 1 ? zero[0] : zero[(k / axis_stride) % axis_size]); }
};
inline QuantParams quant_params(const KernelContext& c, const Tensor& x) {
  QuantParams q;
  q.scale = as_doubles(c.in(1));
  if (c.has(2)) q.zero = as_int64s(c.in(2));
  if (q.scale.empty()) c.fail("the scale is empty");
  if (q.scale.size() > 1) {
    const int64_t axis = normalize_axis(c.attr_int("axis", 1), x.rank());
    q.axis_size = x.dims()[axis];
    q.axis_stride = strides_of(x.dims())[axis];
    if (static_cast<int64_t>(q.scale.size()) != q.axis_size)
      c.fail("the scale has " + std::to_string(q.scale.size()) + " elements, axis " + std::to_string(axis) +
             " of the input " + std::to_string(q.axis_size));
  }
  // The zero point has the scale's shape (the specification): read past its end otherwise.
  if (!q.zero.empty() && q.zero.size() != q.scale.size())
    c.fail("the zero point has " + std::to_string(q.zero.size()) + " elements, the scale " +
           std::to_string(q.scale.size()));
  return q;
}

inline std::vector<Tensor> quantize_linear_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const QuantParams q = quant_params(c, x);
  const ElemType to = c.has(2) ? c.in(2).type() : ElemType::UInt8;
  return visit_type(to, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(to, x.dims());
    auto dst = out.mutable_data<T>();
    for (int64_t k = 0; k < x.size(); ++k) {
      // divided in float like the reference implementation: x / scale may land exactly on .5 there
      const float ratio = static_cast<float>(element_as_double(x, k)) / static_cast<float>(q.scale_at(k));
      const double v = std::nearbyint(ratio) + static_cast<double>(q.zero_at(k));
      dst[k] = saturate_cast<T>(std::clamp<double>(v, static_cast<double>(std::numeric_limits<T>::lowest()), static_cast<double>(std::numeric_limits<T>::max())));
    }
    return std::vector<Tensor>{out};
  });
}

inline std::vector<Tensor> dequantize_linear_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const QuantParams q = quant_params(c, x);
  Tensor out(ElemType::Float, x.dims());
  auto dst = out.mutable_data<float>();
  for (int64_t k = 0; k < x.size(); ++k)
    dst[k] = static_cast<float>((element_as_double(x, k) - static_cast<double>(q.zero_at(k))) * q.scale_at(k));
  return {out};
}

inline void register_cast(KernelRegistry& r) {
  r.add("Cast", cast_kernel, false);
  r.add("CastLike", cast_like_kernel, false);
  r.add("QuantizeLinear", quantize_linear_kernel);
  r.add("DequantizeLinear", dequantize_linear_kernel);
}

}  // namespace xexp::eval::kernels
