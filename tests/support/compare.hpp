#pragma once
// GoogleTest assertions comparing tensors element by element: |actual - expected| <= atol + rtol *
// |expected|, NaN matching NaN. On failure they report how many elements differ and the worst one.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <span>
#include <string>
#include <utility>

#include "support/ort.hpp"
#include "xexp/eval/tensor_util.hpp"

namespace xexp::testing {

using eval::element_as_double;

// Calls f(k, t0[k], t1[k], ...) for every element k of numeric tensors of one size, as doubles, converted
// a block at a time: the corpus sweeps compare GBs of outputs.
template <class F, class... Tensors>
void for_each_as_double(F&& f, const Tensors&... tensors) {
  constexpr std::size_t kBlock = 4096;
  const int64_t size = (tensors.size(), ...);
  std::array<std::array<double, kBlock>, sizeof...(Tensors)> blocks;
  [&]<std::size_t... J>(std::index_sequence<J...>) {
    for (int64_t begin = 0; begin < size; begin += kBlock) {
      const auto n = static_cast<std::size_t>(std::min<int64_t>(kBlock, size - begin));
      (eval::copy_as_doubles(tensors, begin, std::span<double>(blocks[J].data(), n)), ...);
      for (std::size_t i = 0; i < n; ++i) f(begin + static_cast<int64_t>(i), blocks[J][i]...);
    }
  }
  (std::index_sequence_for<Tensors...>{});
}

inline void expect_close(const Tensor& actual, const Tensor& expected, double atol = 1e-5, double rtol = 1e-5,
                         const std::string& what = "tensor") {
  SCOPED_TRACE(what);
  ASSERT_EQ(elem_type_name(actual.type()), elem_type_name(expected.type()));
  ASSERT_EQ(actual.dims(), expected.dims());
  if (actual.type() == ElemType::String) {
    EXPECT_EQ(actual.string_data(), expected.string_data());
    return;
  }
  int64_t mismatches = 0, worst = -1;
  double worst_excess = 0;
  for_each_as_double(
      [&](int64_t k, double a, double e) {
        if ((std::isnan(a) && std::isnan(e)) || a == e) return;  // a == e also covers equal infinities
        const double excess = std::abs(a - e) - (atol + rtol * std::abs(e));
        if (excess <= 0) return;
        ++mismatches;
        if (worst < 0 || excess > worst_excess || std::isnan(excess)) {
          worst = k;
          worst_excess = excess;
        }
      },
      actual, expected);
  EXPECT_EQ(mismatches, 0) << mismatches << " of " << actual.size() << " elements differ beyond atol=" << atol
                           << " rtol=" << rtol << "; worst at flat index " << worst << ": actual "
                           << (worst >= 0 ? element_as_double(actual, worst) : 0.0) << ", expected "
                           << (worst >= 0 ? element_as_double(expected, worst) : 0.0);
}

// Same names, same order, each tensor close.
inline void expect_all_close(const NamedTensors& actual, const NamedTensors& expected, double atol = 1e-5,
                             double rtol = 1e-5) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t k = 0; k < actual.size(); ++k) {
    EXPECT_EQ(actual[k].first, expected[k].first);
    expect_close(actual[k].second, expected[k].second, atol, rtol, "output " + expected[k].first);
  }
}

}  // namespace xexp::testing
