#pragma once
// StringHash: the hash of the name tables (values by name, symbols by text). Names are short, so they
// are read 8 bytes at a time through a multiply-xorshift mix: a few instructions where the standard
// library's byte-wise hash costs a function call and a loop. Transparent: a std::string_view looks up
// a std::string key without building a string.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace xexp {

inline std::size_t hash_string(std::string_view s) noexcept {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;  // 2^64 / golden ratio, odd: multiplying is a bijection
  auto mix = [](uint64_t h, uint64_t word) {
    h = (h ^ word) * kMul;
    return h ^ (h >> 32);
  };
  uint64_t h = (s.size() + 1) * kMul;
  const char* p = s.data();
  std::size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    h = mix(h, word);
  }
  if (n > 0) {
    uint64_t word = 0;
    for (std::size_t k = 0; k < n; ++k) word |= uint64_t{static_cast<unsigned char>(p[k])} << (8 * k);
    h = mix(h, word);
  }
  return static_cast<std::size_t>(h ^ (h >> 29));
}

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return hash_string(s); }
};

}  // namespace xexp
