#pragma once
// MissingRange (onnxruntime set): ONNX's Range takes float, double, int16, int32 and int64 only, and
// ONNX Runtime 1.30 refuses a model whose Range an exporter wrote on another type (float16, bfloat16,
// int8, uint8, ...: "Type Error"). The Range runs in a type holding every value of the original one
// between two Casts: float for the 16-bit floats (each element start + k * delta rounds back once),
// int32 or int64 for the small integers. uint64 has no wider type and stays.
#include <optional>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr missing_range_rule() {
  using namespace rewrite::dsl;
  Var<'s'> start;
  Var<'l'> limit;
  Var<'d'> delta;
  auto wide = [&](auto x) { return Cast(x, attr<"to"> = range_type(start)); };
  return rule("MissingRange")
      .priority(1)
      .match(Range(start, limit, delta))
      .when(lacks_range_kernel(start))
      .to(Cast(Range(wide(start), wide(limit), wide(delta)), attr<"to"> = dtype(start)));
}

}  // namespace xexp::patterns
