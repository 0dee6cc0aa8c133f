#pragma once
// Deterministic random feeds for a graph's inputs: the same seed gives the same bytes on every machine
// (the generator and the conversions are spelled out here, not left to <random>'s distributions).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "support/ort.hpp"
#include "xexp/core/float16.hpp"
#include "xexp/ir/graph.hpp"

namespace xexp::testing {

struct RandomFeedOptions {
  uint64_t seed = 0;
  double float_low = -1.0, float_high = 1.0;  // floating inputs: uniform in [low, high)
  int64_t int_low = 0, int_high = 10;         // integer inputs (token ids, indices): uniform in [low, high)
  std::map<std::string, int64_t> symbols = {};  // values for symbolic dimensions, e.g. {"batch", 2}
};

// splitmix64: tiny, well mixed and identical everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  uint64_t state_;
};

inline Tensor random_tensor(ElemType type, std::vector<int64_t> dims, SplitMix64& rng,
                            const RandomFeedOptions& options = {}) {
  Tensor t(type, std::move(dims));
  const auto n = static_cast<std::size_t>(t.size());
  auto real = [&] { return options.float_low + (options.float_high - options.float_low) * rng.uniform(); };
  auto integer = [&] {
    const auto span = static_cast<uint64_t>(options.int_high - options.int_low);
    if (span == 0) throw Error("RandomFeedOptions: int_high must be greater than int_low");
    return options.int_low + static_cast<int64_t>(rng.next() % span);
  };
  auto fill = [&]<class T>(auto&& make) {
    auto out = t.mutable_data<T>();
    for (std::size_t k = 0; k < n; ++k) out[k] = static_cast<T>(make());
  };
  switch (type) {
    case ElemType::Float: fill.template operator()<float>(real); break;
    case ElemType::Double: fill.template operator()<double>(real); break;
    case ElemType::Float16: fill.template operator()<uint16_t>([&] { return float_to_half(static_cast<float>(real())); }); break;
    case ElemType::BFloat16:
      fill.template operator()<uint16_t>([&] { return float_to_bfloat16(static_cast<float>(real())); });
      break;
    case ElemType::Int64: fill.template operator()<int64_t>(integer); break;
    case ElemType::Int32: fill.template operator()<int32_t>(integer); break;
    case ElemType::Int16: fill.template operator()<int16_t>(integer); break;
    case ElemType::Int8: fill.template operator()<int8_t>(integer); break;
    case ElemType::UInt8: fill.template operator()<uint8_t>(integer); break;
    case ElemType::Bool: fill.template operator()<uint8_t>([&] { return rng.next() & 1; }); break;
    default: throw Error("random_tensor: no generator for " + std::string(elem_type_name(type)));
  }
  return t;
}

// One tensor per graph input that is not an initializer, in input order.
inline NamedTensors random_feeds(const ir::Graph& graph, const RandomFeedOptions& options = {}) {
  SplitMix64 rng(options.seed);
  NamedTensors feeds;
  for (ir::ValueId id : graph.inputs()) {
    const ir::Value& v = graph.value(id);
    if (v.is_initializer()) continue;
    if (!v.shape) throw Error("random_feeds: the input has no shape", {.node = {}, .value = v.name});
    std::vector<int64_t> dims;
    for (const Dim& d : *v.shape) {
      if (d.is_static()) {
        dims.push_back(d.value());
        continue;
      }
      auto it = d.is_symbolic() ? options.symbols.find(d.symbol().str()) : options.symbols.end();
      if (it == options.symbols.end())
        throw Error("random_feeds: no value for dimension '" + d.str() + "'", {.node = {}, .value = v.name});
      dims.push_back(it->second);
    }
    feeds.emplace_back(v.name, random_tensor(v.elem, std::move(dims), rng, options));
  }
  return feeds;
}

}  // namespace xexp::testing
