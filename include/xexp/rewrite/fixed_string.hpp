#pragma once
// A string usable as a template argument, so that a pattern's op type, domain and attribute names are
// part of its type: the matcher compares interned symbols built once, and a rule prints itself.
#include <algorithm>
#include <cstddef>
#include <string_view>

namespace xexp::rewrite {

template <std::size_t N>
struct FixedString {
  char data[N]{};
  constexpr FixedString(const char (&text)[N]) { std::copy_n(text, N, data); }  // NOLINT: implicit on purpose
  constexpr std::string_view view() const { return {data, N - 1}; }
};

}  // namespace xexp::rewrite
