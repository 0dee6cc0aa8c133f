#pragma once
// Running a model as the tools do (`xexp run`, `xexp compare`) and describing its results in one line.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "xexp/eval/evaluator.hpp"
#include "xexp/eval/tensor_util.hpp"
#include "xexp/tools/inputs.hpp"

namespace xexp::tools {

// The evaluator's outputs for `feeds`. An error about a fed input (wrong type or shape) also names the
// first node reading it: the evaluator only knows the value.
inline std::vector<Tensor> run_model(const ir::Model& model, const Feeds& feeds, const eval::RunOptions& options = {}) {
  try {
    return eval::Evaluator(model).run(feeds, options);
  } catch (const Error& e) {
    if (!e.node().empty() || e.value().empty()) throw;
    const auto id = model.graph->find(e.value());
    if (!id || !model.graph->value(*id).is_input) throw;
    throw Error(e.cause(), {.node = first_reader(*model.graph, *id), .value = e.value()});
  }
}

// "3:1x30x16": the rank, then the dimensions ("" for a scalar).
inline std::string rank_and_dims(const std::vector<int64_t>& dims) {
  if (dims.empty()) return {};
  std::string out = std::to_string(dims.size()) + ":";
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (d) out += 'x';
    out += std::to_string(dims[d]);
  }
  return out;
}

inline std::string short_number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

// "float32 3:1x30x16 min=-1.2 max=3.4 mean=0.05 first=[0.1, 0.2, ...]": what a user checks first.
inline std::string summarize_tensor(const Tensor& t, std::size_t first = 5) {
  std::string out = std::string(elem_type_short_name(t.type())) + " " + (t.rank() ? rank_and_dims(t.dims()) : "scalar");
  const auto n = static_cast<std::size_t>(t.size());
  if (n == 0) return out + " empty";
  const std::size_t shown = std::min(first, n);
  std::string values;
  for (std::size_t k = 0; k < shown; ++k) {
    if (k) values += ", ";
    values += t.type() == ElemType::String ? "'" + t.string_data()[k] + "'" : short_number(eval::element_as_double(t, static_cast<int64_t>(k)));
  }
  values = "[" + values + (shown < n ? ", ...]" : "]");
  if (t.type() == ElemType::String) return out + " first=" + values;
  double lo = eval::element_as_double(t, 0), hi = lo, sum = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double v = eval::element_as_double(t, static_cast<int64_t>(k));
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  return out + " min=" + short_number(lo) + " max=" + short_number(hi) + " mean=" + short_number(sum / static_cast<double>(n)) +
         " first=" + values;
}

}  // namespace xexp::tools
