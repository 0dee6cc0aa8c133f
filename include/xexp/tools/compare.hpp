#pragma once
// Side-by-side comparison of two models run on the same inputs (`xexp compare`, seeds 000 and 001): every
// initializer, input, intermediate result and output of each run is reduced to a signature (kind, type,
// shape, a four-letter code of its values, op type) and the two sequences are aligned by an edit distance
// over those signatures. Names do not count: two exporters never agree on them. Rows read
//   001 = | INITIA float32  2:16x16              ZAZA                 w  | INITIA float32  2:16x16   ...
// where `=` pairs identical signatures, `~` pairs different ones, `-` is only in the first model and `+`
// only in the second.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "xexp/tools/run.hpp"

namespace xexp::tools {

// One result of a run, without its value.
struct ResultSignature {
  eval::ResultKind kind = eval::ResultKind::Result;
  ElemType elem = ElemType::Undefined;
  std::vector<int64_t> dims;
  std::string code;     // value_code of the value
  std::string op_type;  // of the producing node (results only)
  std::string name;

  // "RESULT float32  3:1x30x16            AAGQ Gather          embedding": fixed-width columns.
  std::string str() const {
    auto pad = [](std::string s, std::size_t width) {
      s.resize(width, ' ');
      return s;
    };
    const std::string rank = dims.empty() ? "  " : std::to_string(dims.size()) + ":";
    const std::string shape = rank_and_dims(dims).substr(dims.empty() ? 0 : rank.size());
    return pad(std::string(eval::result_kind_name(kind)), 6) + " " + pad(std::string(elem_type_short_name(elem)), 8) + " " + rank +
           pad(shape, 18) + " " + code + " " + pad(op_type, 15) + " " + name;
  }
};

// Four letters summarizing the values: the flattened tensor (zero padded to a multiple of 4) is cut into
// four equal parts, each part's sum s gives 'A' + (trunc(s) mod 26), or '?' when s is NaN or |s| >= 1e10.
// Close values give the same letters, so a rewrite that keeps results keeps their codes.
inline std::string value_code(const Tensor& t) {
  constexpr std::size_t kLength = 4;
  constexpr int64_t kModulo = 26;
  if (t.type() == ElemType::String) return std::string(kLength, '?');
  const auto n = static_cast<std::size_t>(t.size());
  double sums[kLength] = {0, 0, 0, 0};
  const std::size_t part = n <= kLength ? 1 : (n + kLength - 1) / kLength;
  auto accumulate = [&](auto&& value) {
    for (std::size_t k = 0; k < n; ++k) sums[k / part] += value(k);
  };
  if (eval::is_half(t.type())) {
    accumulate([&t](std::size_t k) { return eval::element_as_double(t, static_cast<int64_t>(k)); });
  } else {
    eval::visit_type(t.type(), [&](auto tag) {
      const auto data = t.data<typename decltype(tag)::type>();
      accumulate([&data](std::size_t k) { return static_cast<double>(data[k]); });
    });
  }
  std::string out;
  for (double s : sums) {
    if (!(std::abs(s) < 1e10)) {
      out += '?';
      continue;
    }
    const int64_t r = ((static_cast<int64_t>(s) % kModulo) + kModulo) % kModulo;  // Python's modulo: never negative
    out += static_cast<char>('A' + r);
  }
  return out;
}

// Runs `model` on `feeds` and returns the signature of every result in execution order.
inline std::vector<ResultSignature> run_signatures(const ir::Model& model, const Feeds& feeds) {
  std::vector<ResultSignature> out;
  eval::RunOptions options;
  options.on_result = [&out](const eval::ResultInfo& r) {
    out.push_back({r.kind, r.value.type(), r.value.dims(), value_code(r.value),
                   r.kind == eval::ResultKind::Result ? r.op_type.str() : std::string(), std::string(r.name)});
  };
  run_model(model, feeds, options);
  return out;
}

// The costs of the edit distance (those of experimental-experiment's model comparison).
struct AlignmentCosts {
  double kind = 1000;     // pairing results of different kinds
  double type = 10;       // different element types (a fifth of it between two float types)
  double rank = 100;      // different ranks, on top of the difference of element counts
  double op_type = 10;    // different producing op types
  double insert = 1000;   // a result only one model has
  std::size_t max_lag = 50;  // the band: pairs (i, j) with |i - j| <= max(max_lag, |n - m| + 1)
  std::size_t max_cells = std::size_t{1} << 28;  // refuse alignments needing more DP cells than this
};

inline double signature_distance(const ResultSignature& a, const ResultSignature& b, const AlignmentCosts& costs = {}) {
  double d = 0;
  if (a.kind != b.kind) d += costs.kind;
  if (a.elem != b.elem) d += (is_float(a.elem) && is_float(b.elem) ? 0.2 : 1.0) * costs.type;
  if (a.dims != b.dims) {
    auto count = [](const std::vector<int64_t>& dims) {
      double c = 1;
      for (int64_t v : dims) c *= static_cast<double>(v);
      return c;
    };
    d += std::abs(count(a.dims) - count(b.dims));
    if (a.dims.size() != b.dims.size()) d += costs.rank;
    else
      for (std::size_t k = 0; k < a.dims.size(); ++k) d += static_cast<double>(std::abs(a.dims[k] - b.dims[k]));
  }
  if (a.code != b.code) {
    if (a.code.size() != b.code.size()) d += 1e6;
    else
      for (std::size_t k = 0; k < a.code.size(); ++k) d += std::abs(int(a.code[k]) - int(b.code[k]));
  }
  if (a.op_type != b.op_type) d += costs.op_type;
  return d;
}

// One row of the side-by-side table: a result of the first model, of the second, or both.
struct AlignedRow {
  std::optional<std::size_t> left, right;
  char symbol = '=';  // '=' identical signatures, '~' paired but different, '-' left only, '+' right only
};

// Aligns two sequences by the edit distance of their signatures: O(n * band) time and n * band bytes. The
// longest common prefix and suffix of identical signatures are paired first, so that identical or nearly
// identical models align in linear time whatever their length.
inline std::vector<AlignedRow> align_signatures(const std::vector<ResultSignature>& a, const std::vector<ResultSignature>& b,
                                                const AlignmentCosts& costs = {}) {
  const std::size_t n = a.size(), m = b.size();
  std::size_t head = 0, tail = 0;
  while (head < n && head < m && signature_distance(a[head], b[head], costs) == 0) ++head;
  while (tail < n - head && tail < m - head && signature_distance(a[n - 1 - tail], b[m - 1 - tail], costs) == 0) ++tail;
  const std::size_t rows = n - head - tail, cols = m - head - tail;  // the middle part, aligned by DP
  const std::size_t lag = std::max(costs.max_lag, (rows > cols ? rows - cols : cols - rows) + 1);
  const std::size_t width = 2 * lag + 1;
  if ((rows + 1) > costs.max_cells / width)
    throw Error("the two runs are too different to be aligned (" + std::to_string(n) + " and " + std::to_string(m) + " results)");

  // Cell (i, j): best cost of aligning the first i middle results of `a` with the first j of `b`; only
  // cells with |i - j| <= lag exist. `step` keeps how each cell was reached.
  enum Step : uint8_t { kNone, kPair, kLeftOnly, kRightOnly };
  std::vector<uint8_t> step((rows + 1) * width, kNone);
  auto in_band = [&](std::size_t i, std::size_t j) { return j + lag >= i && j <= i + lag; };
  auto slot = [&](std::size_t i, std::size_t j) { return i * width + (j + lag - i); };
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> previous(cols + 1, kInf), current(cols + 1, kInf);
  for (std::size_t i = 0; i <= rows; ++i) {
    const std::size_t lo = i > lag ? i - lag : 0, hi = std::min(cols, i + lag);
    for (std::size_t j = lo; j <= hi; ++j) {
      double best = i == 0 && j == 0 ? 0 : kInf;
      Step how = kNone;
      auto consider = [&](double cost, Step s) {
        if (cost < best) {
          best = cost;
          how = s;
        }
      };
      // same preference as experimental-experiment on ties: pair, then left only, then right only
      if (i > 0 && j > 0) consider(previous[j - 1] + signature_distance(a[head + i - 1], b[head + j - 1], costs), kPair);
      if (i > 0 && in_band(i - 1, j)) consider(previous[j] + costs.insert, kLeftOnly);
      if (j > lo) consider(current[j - 1] + costs.insert, kRightOnly);
      current[j] = best;
      step[slot(i, j)] = how;
    }
    std::swap(previous, current);  // cells outside the band are never read: no reset needed
  }

  std::vector<AlignedRow> middle;
  for (std::size_t i = rows, j = cols; i > 0 || j > 0;) {
    switch (step[slot(i, j)]) {
      case kPair: {
        --i, --j;
        const bool same = signature_distance(a[head + i], b[head + j], costs) == 0;
        middle.push_back({head + i, head + j, same ? '=' : '~'});
        break;
      }
      case kLeftOnly: middle.push_back({head + --i, std::nullopt, '-'}); break;
      case kRightOnly: middle.push_back({std::nullopt, head + --j, '+'}); break;
      default: throw Error("align_signatures: broken back-trace");  // unreachable: the band holds (rows, cols)
    }
  }
  std::vector<AlignedRow> out;
  out.reserve(head + middle.size() + tail);
  for (std::size_t k = 0; k < head; ++k) out.push_back({k, k, '='});
  out.insert(out.end(), middle.rbegin(), middle.rend());
  for (std::size_t k = tail; k > 0; --k) out.push_back({n - k, m - k, '='});
  return out;
}

struct Comparison {
  std::vector<ResultSignature> left, right;
  std::vector<AlignedRow> rows;

  // The table; `column_size` is each side's width (0: wide enough for the longest name, at least 60).
  std::string str(std::size_t column_size = 0) const {
    if (column_size == 0) {
      column_size = 60;
      for (const auto* side : {&left, &right})
        for (const ResultSignature& r : *side) column_size = std::max(column_size, r.str().size());
    }
    auto cell = [column_size](const std::vector<ResultSignature>& side, const std::optional<std::size_t>& k) {
      std::string s = k ? side[*k].str() : std::string();
      s.resize(column_size, ' ');
      return s;
    };
    std::string out;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      std::string line = std::to_string(r + 1);
      if (line.size() < 3) line.insert(0, 3 - line.size(), '0');
      line += std::string(" ") + rows[r].symbol + " | " + cell(left, rows[r].left) + " | " + cell(right, rows[r].right);
      line.erase(line.find_last_not_of(' ') + 1);
      out += line + "\n";
    }
    return out;
  }
  std::size_t count(char symbol) const {
    return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [symbol](const AlignedRow& r) { return r.symbol == symbol; }));
  }
};

// Runs both models on the same inputs, given by position: `feeds` are the first model's, the second gets
// the same tensors under its own input names.
inline Comparison compare_models(const ir::Model& first, const ir::Model& second, const Feeds& feeds, const AlignmentCosts& costs = {}) {
  const std::vector<ir::ValueId> inputs = fed_inputs(*second.graph);
  if (inputs.size() != feeds.size())
    throw Error("the models do not take the same inputs: " + std::to_string(feeds.size()) + " and " + std::to_string(inputs.size()));
  Feeds second_feeds;
  for (std::size_t k = 0; k < feeds.size(); ++k) second_feeds.emplace_back(second.graph->value(inputs[k]).name, feeds[k].second);
  Comparison c;
  c.left = run_signatures(first, feeds);
  c.right = run_signatures(second, second_feeds);
  c.rows = align_signatures(c.left, c.right, costs);
  return c;
}

}  // namespace xexp::tools
