#pragma once
// Integer arithmetic on the values a model holds (kernels, constant folding) and declares (shape rules),
// with no undefined behaviour whatever the values. One answer per case, chosen once:
//   wrapping_add, wrapping_sub, wrapping_mul, wrapping_neg: two's complement wrap-around. That is what
//     ONNX Runtime's CPU kernels give (plain C++ operators the compiler lowers to the CPU's wrapping
//     instructions), and numpy's result: Neg and Abs of INT64_MIN give INT64_MIN, Mul and CumSum wrap.
//   int_divide: x / 0 and MIN / -1 are errors. ONNX Runtime has no result there: its Div kernel traps
//     (SIGFPE on x86), and MIN / -1 has no int64 answer to wrap to but MIN itself.
//   int_remainder: x % -1 is 0, the exact answer (the CPU's division traps on MIN % -1); x % 0 is an error.
//   shift_left, shift_right: a shift by the type's width or more gives 0, every bit shifted out. ONNX
//     Runtime's BitShift shifts with the C++ operator, whose result there depends on the CPU (x86 masks
//     the count: 1 << 70 gives 64), so it has no behaviour to copy.
//   saturate_cast: a float to an integer type truncates toward zero, saturates out of range (inf
//     included) and gives 0 for NaN; ONNX Runtime's static_cast gives there what the CPU gives
//     (x86: the lowest int32 or int64).
//   checked_add, checked_mul: shape arithmetic (dims, element counts) that refuses to wrap.
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

namespace xexp {

// The unsigned type arithmetic wraps in for T (bool and the narrow types promote to int: no overflow).
template <class T>
using wrap_type_t = std::make_unsigned_t<std::conditional_t<(sizeof(T) < sizeof(int)), int, T>>;

template <class T>
T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<wrap_type_t<T>>(a) + static_cast<wrap_type_t<T>>(b));
  else return static_cast<T>(a + b);
}
template <class T>
T wrapping_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<wrap_type_t<T>>(a) - static_cast<wrap_type_t<T>>(b));
  else return static_cast<T>(a - b);
}
template <class T>
T wrapping_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<wrap_type_t<T>>(a) * static_cast<wrap_type_t<T>>(b));
  else return static_cast<T>(a * b);
}
template <class T>
T wrapping_neg(T a) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(wrap_type_t<T>{0} - static_cast<wrap_type_t<T>>(a));
  else return static_cast<T>(-a);
}

// Why an integer division has no answer, or nullptr when it has one.
template <class T>
const char* division_error(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == T(0)) return "integer division by zero";
    if constexpr (std::is_signed_v<T>)
      if (a == std::numeric_limits<T>::min() && b == T(-1)) return "integer division overflows (the lowest value by -1)";
  }
  (void)a;
  (void)b;
  return nullptr;
}

// a / b, truncated toward zero; the caller has checked division_error(a, b) == nullptr.
template <class T>
T int_divide(T a, T b) {
  return static_cast<T>(a / b);
}

// C++'s a % b (the sign of a), 0 when b is -1; b != 0, checked by the caller.
template <class T>
T int_remainder(T a, T b) {
  if constexpr (std::is_signed_v<T>)
    if (b == T(-1)) return T(0);
  return static_cast<T>(a % b);
}

template <class T>
T shift_left(T a, T count) {
  using U = wrap_type_t<T>;
  if (count < T(0) || static_cast<U>(count) >= sizeof(T) * 8) return T(0);
  return static_cast<T>(static_cast<U>(a) << static_cast<U>(count));
}
template <class T>
T shift_right(T a, T count) {
  using U = wrap_type_t<T>;
  if (count < T(0) || static_cast<U>(count) >= sizeof(T) * 8) return T(0);
  return static_cast<T>(static_cast<U>(static_cast<std::make_unsigned_t<T>>(a)) >> static_cast<U>(count));
}

// A value converted to To without undefined behaviour: see the file comment for floats to integers.
template <class To, class From>
To saturate_cast(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v)) return To(0);
    // (From)max rounds up to a power of two for the wide types: >= catches it, and every value below
    // it converts exactly.
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace xexp
