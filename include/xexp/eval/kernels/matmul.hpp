#pragma once
// MatMul (numpy batch broadcasting), Gemm and com.microsoft FusedMatMul on one blocked GEMM: operands
// are made row-major once, then the i-k-j loop runs over cache-sized blocks so that the innermost loop
// is a contiguous axpy the compiler vectorizes.
#include <algorithm>
#include <vector>

#include "xexp/eval/kernel.hpp"
#include "xexp/eval/tensor_util.hpp"

namespace xexp::eval::kernels {

// C (M x N, row-major) = alpha * op(A) * op(B); op(A) is M x K, stored K x M when trans_a.
template <class T>
void gemm(int64_t M, int64_t N, int64_t K, const T* A, bool trans_a, const T* B, bool trans_b, T* C, T alpha,
          std::vector<T>& scratch) {
  if (trans_a || trans_b) scratch.resize(static_cast<std::size_t>((trans_a ? M * K : 0) + (trans_b ? K * N : 0)));
  T* buffer = scratch.data();
  if (trans_a) {
    for (int64_t k = 0; k < K; ++k)
      for (int64_t i = 0; i < M; ++i) buffer[i * K + k] = A[k * M + i];
    A = buffer;
    buffer += M * K;
  }
  if (trans_b) {
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) buffer[k * N + j] = B[j * K + k];
    B = buffer;
  }
  std::fill(C, C + M * N, T(0));
  constexpr int64_t kBlockK = 128, kBlockN = 256, kBlockM = 64;
  for (int64_t k0 = 0; k0 < K; k0 += kBlockK) {
    const int64_t k1 = std::min(K, k0 + kBlockK);
    for (int64_t j0 = 0; j0 < N; j0 += kBlockN) {
      const int64_t j1 = std::min(N, j0 + kBlockN);
      for (int64_t i0 = 0; i0 < M; i0 += kBlockM) {
        const int64_t i1 = std::min(M, i0 + kBlockM);
        for (int64_t i = i0; i < i1; ++i) {
          T* __restrict c = C + i * N;
          for (int64_t k = k0; k < k1; ++k) {
            const T a = A[i * K + k];
            const T* __restrict b = B + k * N;
            for (int64_t j = j0; j < j1; ++j) c[j] = wrapping_add(c[j], wrapping_mul(a, b[j]));  // integers wrap
          }
        }
      }
    }
  }
  if (alpha != T(1))
    for (int64_t e = 0; e < M * N; ++e) C[e] = wrapping_mul(C[e], alpha);
}

// Batched op(A) @ op(B) with numpy broadcasting over the batch dimensions and 1-D promotion.
inline Tensor batched_matmul(const Tensor& a_in, const Tensor& b_in, bool trans_a, bool trans_b, double alpha) {
  if (a_in.type() != b_in.type()) throw Error("MatMul: inputs have different types");
  if (a_in.rank() == 0 || b_in.rank() == 0) throw Error("MatMul: scalar inputs are not allowed");
  const bool a_vec = a_in.rank() == 1, b_vec = b_in.rank() == 1;
  const Tensor a = a_vec ? a_in.reshaped({1, a_in.dims()[0]}) : a_in;
  const Tensor b = b_vec ? b_in.reshaped({b_in.dims()[0], 1}) : b_in;
  const int64_t ar = static_cast<int64_t>(a.rank()), br = static_cast<int64_t>(b.rank());
  const int64_t M = trans_a ? a.dims()[ar - 1] : a.dims()[ar - 2];
  const int64_t K = trans_a ? a.dims()[ar - 2] : a.dims()[ar - 1];
  const int64_t Kb = trans_b ? b.dims()[br - 1] : b.dims()[br - 2];
  const int64_t N = trans_b ? b.dims()[br - 2] : b.dims()[br - 1];
  if (K != Kb)
    throw Error("MatMul: shapes " + shape_str(a_in.shape()) + " and " + shape_str(b_in.shape()) + " do not match");
  const std::vector<int64_t> a_batch(a.dims().begin(), a.dims().end() - 2), b_batch(b.dims().begin(), b.dims().end() - 2);
  const std::vector<int64_t> batch = broadcast_dims({&a_batch, &b_batch});
  std::vector<int64_t> dims = batch;
  if (!a_vec) dims.push_back(M);
  if (!b_vec) dims.push_back(N);
  std::vector<int64_t> a_strides = broadcast_strides(a_batch, batch), b_strides = broadcast_strides(b_batch, batch);
  std::vector<int64_t> out_strides = strides_of(batch);
  Tensor out(a.type(), dims);
  visit_type(a.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw Error("MatMul: bool is not supported");
    } else {
      const T* pa = a.data<T>().data();
      const T* pb = b.data<T>().data();
      T* pc = out.mutable_data<T>().data();
      std::vector<T> scratch;
      auto run = [&](int64_t k, const std::array<int64_t, 2>& off) {
        gemm<T>(M, N, K, pa + off[0] * M * K, trans_a, pb + off[1] * K * N, trans_b, pc + k * M * N, static_cast<T>(alpha), scratch);
      };
      if (batch.empty()) run(0, {0, 0});
      else for_each_strided<2>(batch, {a_strides, b_strides}, run);
    }
  });
  return out;
}

inline std::vector<Tensor> matmul_kernel(const KernelContext& c) { return {batched_matmul(c.in(0), c.in(1), false, false, 1.0)}; }

inline std::vector<Tensor> fused_matmul_kernel(const KernelContext& c) {
  if (c.attr_int("transBatchA", 0) || c.attr_int("transBatchB", 0)) c.fail("transBatchA/transBatchB are not supported");
  return {batched_matmul(c.in(0), c.in(1), c.attr_int("transA", 0) != 0, c.attr_int("transB", 0) != 0, c.attr_float("alpha", 1.0f))};
}

inline std::vector<Tensor> gemm_kernel(const KernelContext& c) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(1);
  if (a.rank() != 2 || b.rank() != 2) c.fail("A and B must be 2-D");
  Tensor y = batched_matmul(a, b, c.attr_int("transA", 0) != 0, c.attr_int("transB", 0) != 0, c.attr_float("alpha", 1.0f));
  if (!c.has(2)) return {y};
  const double beta = c.attr_float("beta", 1.0f);
  const Tensor bias = expand_to(c.in(2), y.dims());
  if (bias.dims() != y.dims()) c.fail("C cannot be broadcast to the output shape");
  visit_type(y.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto dst = y.mutable_data<T>();
    auto src = bias.data<T>();
    for (int64_t k = 0; k < y.size(); ++k) dst[k] = static_cast<T>(dst[k] + beta * src[k]);
  });
  return {y};
}

inline void register_matmul(KernelRegistry& r) {
  r.add("MatMul", matmul_kernel);
  r.add("Gemm", gemm_kernel);
  r.add("com.microsoft", "FusedMatMul", fused_matmul_kernel);
}

}  // namespace xexp::eval::kernels
