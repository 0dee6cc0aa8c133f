#pragma once
// A string usable as a template argument, so that a pattern's op type, domain and attribute names are
// part of its type: the matcher compares interned symbols built once, and a rule prints itself.
// An op family is such a string with '|' between the op types: "Add|Sub|Mul|Div"; `a | b` joins two.
#include <algorithm>
#include <cstddef>
#include <string_view>

namespace xexp::rewrite {

template <std::size_t N>
struct FixedString {
  char data[N]{};
  constexpr FixedString() = default;
  constexpr FixedString(const char (&text)[N]) { std::copy_n(text, N, data); }  // NOLINT: implicit on purpose
  constexpr std::string_view view() const { return {data, N - 1}; }
};

template <std::size_t N, std::size_t M>
constexpr FixedString<N + M> operator|(const FixedString<N>& a, const FixedString<M>& b) {
  FixedString<N + M> out;
  std::copy_n(a.data, N - 1, out.data);
  out.data[N - 1] = '|';
  std::copy_n(b.data, M, out.data + N);
  return out;
}

}  // namespace xexp::rewrite
