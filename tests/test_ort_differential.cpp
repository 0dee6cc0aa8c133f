// Differential testing against ONNX Runtime (CPU, through tests/ort/run_ort.js, one node process for
// all models):
// - the evaluator: every op it supports runs on generated cases (support/differential_ops.hpp: empty
//   and scalar shapes, broadcasting, negative and out-of-range axes, starts and indices, NaN and
//   infinities, integer extremes, each element type the schema allows), each case a one-node model
//   saved to disk; the evaluator's outputs must equal ONNX Runtime's (bytes for exact op classes,
//   documented tolerances otherwise). A case both refuse agrees; a case only ONNX Runtime refuses is
//   skipped with its reason counted; where ONNX Runtime departs from the ONNX specification (a result,
//   or a case it computes that the specification refuses) the case is counted as a departure
//   (departures() says why) and the evaluator follows the specification.
// - the rules: the positive case of every rule (tests/data/rule_positive_cases.txt) on random inputs,
//   optimized by `xexp optimize`'s pipeline, gives the same outputs as the original in ONNX Runtime.
// The seed is fixed and the counts of cases compared are pinned, so that a regression cannot hide
// behind cases that quietly stop being compared. XEXP_ORT_DIFF_SCALE=N multiplies the cases (the full
// sweep, scripts/ort_differential_sweep.sh); the pinned counts are checked at scale 1 only.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/differential_ops.hpp"
#include "support/ort.hpp"
#include "support/random_inputs.hpp"
#include "support/rule_cases.hpp"
#include "support/temp_dir.hpp"
#include "xexp/eval/evaluate_op.hpp"
#include "xexp/eval/evaluator.hpp"
#include "xexp/onnx/load.hpp"
#include "xexp/onnx/save.hpp"
#include "xexp/tools/inputs.hpp"
#include "xexp/optimizer/optimize_model.hpp"

using namespace xexp;
using namespace xexp::testing;
namespace diff = xexp::testing::differential;

namespace {

int64_t sweep_scale() {
  const char* s = std::getenv("XEXP_ORT_DIFF_SCALE");
  return s ? std::max(1, std::atoi(s)) : 1;
}

// Cases where ONNX Runtime 1.30 departs from the ONNX specification: a case `applies` to is not
// compared, it is counted, and a unit test in test_eval_kernels (EvalOrtDepartures) checks the
// evaluator's result against the specification.
struct Departure {
  Departure(const char* op, const char* why, std::function<bool(const diff::Case&)> applies,
            bool evaluator_refuses = false)
      : op(op), why(why), applies(std::move(applies)), evaluator_refuses(evaluator_refuses) {}
  const char* op;
  const char* why;
  std::function<bool(const diff::Case&)> applies;
  bool evaluator_refuses;  // the cases are ones the evaluator refuses, as the specification says
};

bool input_is(const diff::Case& c, std::size_t k, ElemType t) {
  return c.inputs.size() > k && c.inputs[k] && c.inputs[k]->type() == t;
}
bool input_empty(const diff::Case& c, std::size_t k) {
  return c.inputs.size() > k && c.inputs[k] && c.inputs[k]->size() == 0;
}
bool has_nan(const diff::Case& c) {
  for (const auto& t : c.inputs)
    if (t && is_float(t->type())) {
      const Tensor d = eval::cast_tensor(*t, ElemType::Double);
      for (double v : d.data<double>())
        if (std::isnan(v)) return true;
    }
  return false;
}
bool has_value(const diff::Case& c, double value) {
  for (const auto& t : c.inputs)
    if (t && is_float(t->type())) {
      const Tensor d = eval::cast_tensor(*t, ElemType::Double);
      for (double v : d.data<double>())
        if (v == value) return true;
    }
  return false;
}
std::string string_attr(const diff::Case& c, const char* name) {
  for (const ir::Attribute& a : c.attributes)
    if (a.name == name) return a.s;
  return {};
}
std::vector<int64_t> ints_attr(const diff::Case& c, const char* name) {
  for (const ir::Attribute& a : c.attributes)
    if (a.name == name) return a.ints;
  return {};
}
std::vector<int64_t> int_input(const diff::Case& c, std::size_t k) {
  if (c.inputs.size() <= k || !c.inputs[k]) return {};
  const Tensor t = eval::cast_tensor(*c.inputs[k], ElemType::Int64);
  return {t.data<int64_t>().begin(), t.data<int64_t>().end()};
}
// Slice with a negative step whose end is the largest value of the ends' type.
bool slices_back_from_int_max(const diff::Case& c) {
  const std::vector<int64_t> ends = int_input(c, 2), steps = int_input(c, 4);
  const int64_t int_max = input_is(c, 2, ElemType::Int32) ? int64_t{std::numeric_limits<int32_t>::max()}
                                                            : std::numeric_limits<int64_t>::max();
  for (std::size_t k = 0; k < ends.size() && k < steps.size(); ++k)
    if (steps[k] < 0 && ends[k] == int_max) return true;
  return false;
}
// An (N, C) plane of input 0 whose every value is -inf.
bool plane_of_minus_infinity(const diff::Case& c) {
  const Tensor& x = *c.inputs[0];
  if (!is_float(x.type()) || x.rank() < 2 || x.size() == 0) return false;
  const Tensor d = eval::cast_tensor(x, ElemType::Double);
  const int64_t planes = x.dims()[0] * x.dims()[1], n = x.size() / planes;
  for (int64_t p = 0; p < planes; ++p) {
    bool all = true;
    for (int64_t j = 0; j < n && all; ++j) all = d.data<double>()[p * n + j] == -std::numeric_limits<double>::infinity();
    if (all) return true;
  }
  return false;
}

const std::vector<Departure>& departures() {
  const auto float_precision = [](const diff::Case& c) { return input_is(c, 0, ElemType::Double); };
  const auto empty_reduction = [](const diff::Case& c) { return input_empty(c, 0); };
  const auto reduce_axis_out_of_range = [](const diff::Case& c) {
    const auto r = static_cast<int64_t>(c.inputs[0]->rank());
    const std::vector<int64_t> axes = c.inputs.size() > 1 ? int_input(c, 1) : ints_attr(c, "axes");
    return (r == 0 || input_empty(c, 0)) &&
           std::any_of(axes.begin(), axes.end(), [r](int64_t a) { return a < -r || a >= r; });
  };
  static const std::vector<Departure> table = [&] {
    std::vector<Departure> t = {
      {"HardSwish", "computes float64 in float32 precision (its 1/6 and 1/2 are float constants)",
       float_precision},
      {"Shrink", "computes float64 in float32 precision (x - bias with a float bias rounds x)",
       float_precision},
      {"FastGelu", "computes float64 in float32 precision", float_precision},
      {"RMSNormalization", "computes float64 in float64, ignoring stash_type (1, float32, by default)",
       float_precision},
      {"LayerNormalization", "computes float64 in float64, ignoring stash_type (1, float32, by default)",
       float_precision},
      {"ReduceSum", "keeps a reduced axis of size 0 (the specification reduces it to 1, or drops it)",
       empty_reduction},
      {"ReduceMean", "keeps a reduced axis of size 0", empty_reduction},
      {"ReduceProd", "keeps a reduced axis of size 0", empty_reduction},
      {"ReduceMax", "keeps a reduced axis of size 0", empty_reduction},
      {"ReduceMin", "keeps a reduced axis of size 0", empty_reduction},
      {"ReduceL1", "keeps a reduced axis of size 0", empty_reduction},
      {"ReduceL2", "keeps a reduced axis of size 0", empty_reduction},
      {"ReduceLogSum", "keeps a reduced axis of size 0", empty_reduction},
      {"ReduceLogSumExp", "keeps a reduced axis of size 0", empty_reduction},
      {"ReduceSumSquare", "keeps a reduced axis of size 0", empty_reduction},
      {"ArgMax", "keeps a reduced axis of size 0", empty_reduction},
      {"ArgMin", "keeps a reduced axis of size 0", empty_reduction},
      {"FusedMatMul", "leaves the output uninitialized when an operand is empty (inner dimension 0)",
       [](const diff::Case& c) { return input_empty(c, 0) || input_empty(c, 1); }},
      {"MatMul", "leaves the output uninitialized when an operand is empty (inner dimension 0)",
       [](const diff::Case& c) { return input_empty(c, 0) || input_empty(c, 1); }},
      {"ScatterND",
       "drops a NaN under reduction min/max (std::min/max), the reference propagates it (np.minimum)",
       [](const diff::Case& c) {
         return (string_attr(c, "reduction") == "min" || string_attr(c, "reduction") == "max") && has_nan(c);
       }},
      {"ScatterElements", "drops a NaN under reduction min/max (std::min/max), the reference propagates it",
       [](const diff::Case& c) {
         return (string_attr(c, "reduction") == "min" || string_attr(c, "reduction") == "max") && has_nan(c);
       }},
      {"GlobalMaxPool",
       "keeps or drops a NaN depending on where it is in the plane (float16: returns neither NaN nor the "
       "maximum); the reference (numpy's max) propagates it",
       [](const diff::Case& c) { return has_nan(c); }},
      {"MaxPool",
       "keeps or drops a NaN depending on where it is in the window; the reference (numpy's max) propagates it",
       [](const diff::Case& c) { return has_nan(c); }},
      {"Sign", "gives 0 for a float16 NaN (numpy's sign, the reference, gives NaN; its float and double kernels too)",
       [](const diff::Case& c) { return input_is(c, 0, ElemType::Float16) && has_nan(c); }},
      {"Gelu",
       "computes approximate=tanh in float64 with the float32 constants of the Gelu function body "
       "(sqrt(2/pi), 0.044715); the formula and the reference implementation use the exact ones",
       [](const diff::Case& c) { return input_is(c, 0, ElemType::Double) && string_attr(c, "approximate") == "tanh"; }},
      {"ReduceLogSumExp",
       "gives integers that are not log(sum(exp(x))) truncated: log(exp(4)) comes out 3, [8, 7] gives 7",
       [](const diff::Case& c) { return !is_float(c.inputs[0]->type()); }},
      {"ReduceLogSumExp", "gives +inf for inputs holding +inf and NaN (log(sum(exp(x))) is NaN)",
       [](const diff::Case& c) { return has_nan(c) && has_value(c, std::numeric_limits<double>::infinity()); }},
      {"ReduceMax", "drops NaN; the reference (numpy's maximum.reduce) propagates it",
       [](const diff::Case& c) { return has_nan(c); }},
      {"ReduceMin", "drops NaN; the reference (numpy's minimum.reduce) propagates it",
       [](const diff::Case& c) { return has_nan(c); }},
      {"LogSoftmax", "gives finite values for a float64 row holding NaN (the specification's result is NaN)",
       [](const diff::Case& c) { return input_is(c, 0, ElemType::Double) && has_nan(c); }},
      {"Attention",
       "masks nothing under is_causal when one query follows a past and more than one new key (the "
       "specification hides from it the keys after position past)",
       [](const diff::Case& c) {
         const auto length = [&](std::size_t k) {
           return c.inputs[k]->dims()[c.inputs[k]->rank() == 4 ? 2 : 1];
         };
         const bool causal =
             std::any_of(c.attributes.begin(), c.attributes.end(),
                         [](const ir::Attribute& a) { return a.name == Symbol("is_causal") && a.i != 0; });
         return causal && c.inputs.size() > 4 && c.inputs[4] && length(0) == 1 && length(1) > 1;
       }},
      {"MaxPool",
       "sizes auto_pad SAME outputs with the undilated kernel when dilations > 1 (the specification: "
       "ceil(input / stride))",
       [](const diff::Case& c) {
         const std::vector<int64_t> dilations = ints_attr(c, "dilations");
         return string_attr(c, "auto_pad").starts_with("SAME") &&
                std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d > 1; });
       }},
      {"GlobalMaxPool", "gives the type's lowest finite value for a plane of -inf (the maximum is -inf)",
       plane_of_minus_infinity},
      {"Gemm", "returns C without beta when the inner dimension is 0 (the specification: beta * C)",
       [](const diff::Case& c) { return c.inputs.size() > 2 && c.inputs[2] && (input_empty(c, 0) || input_empty(c, 1)); }},
      {"FusedGemm", "returns C without beta when the inner dimension is 0 (Gemm's specification: beta * C)",
       [](const diff::Case& c) { return c.inputs.size() > 2 && c.inputs[2] && (input_empty(c, 0) || input_empty(c, 1)); }},
      {"Slice",
       "slices a negative step to the beginning when its end is INT_MAX of the ends' type; the specification "
       "clamps that end to dim - 1, which selects nothing",
       slices_back_from_int_max},
      {"NonZero",
       "gives a scalar the shape (1, count), as numpy's nonzero of a 0-d array; the specification's output "
       "is (rank, count)",
       [](const diff::Case& c) { return c.inputs[0]->rank() == 0; }},
    };
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2",
                           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
      t.push_back({op,
                   "reduces an empty or scalar input over axes out of range (the specification's range is "
                   "[-rank, rank - 1])",
                   reduce_axis_out_of_range, true});
    return t;
  }();
  return table;
}

// |a - b| <= tol * (1 + max(|a|, |b|)) by element type; NaN equals NaN, infinities must be equal.
double tolerance(ElemType t) {
  switch (t) {
    case ElemType::Double:
      return 1e-10;
    case ElemType::Float16:
      return 4e-3;
    default:
      return 2e-5;
  }
}

std::string number(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

// Empty when `got` matches `want`, else what differs: floats within `bound` when given, else within
// the element type's tolerance.
std::string difference(const Tensor& got, const Tensor& want, diff::Match match,
                       std::optional<double> bound = std::nullopt) {
  if (got.type() != want.type())
    return "type " + std::string(elem_type_name(got.type())) + " instead of " +
           std::string(elem_type_name(want.type()));
  if (got.dims() != want.dims())
    return "shape " + shape_str(got.shape()) + " instead of " + shape_str(want.shape());
  if (!is_float(got.type())) {
    const auto a = got.bytes(), b = want.bytes();
    if (std::equal(a.begin(), a.end(), b.begin(), b.end())) return {};
    const std::size_t size = elem_size(got.type());
    for (std::size_t k = 0; k < a.size(); k += size)
      if (!std::equal(a.begin() + static_cast<std::ptrdiff_t>(k),
                      a.begin() + static_cast<std::ptrdiff_t>(k + size),
                      b.begin() + static_cast<std::ptrdiff_t>(k)))
        return "element " + std::to_string(k / size) + ": " +
               number(eval::element_as_double(got, static_cast<int64_t>(k / size))) + " instead of " +
               number(eval::element_as_double(want, static_cast<int64_t>(k / size)));
    return "bytes differ";
  }
  const Tensor a = eval::cast_tensor(got, ElemType::Double), b = eval::cast_tensor(want, ElemType::Double);
  const double tol = match == diff::Match::Exact ? 0.0 : tolerance(got.type());
  for (int64_t k = 0; k < a.size(); ++k) {
    const double x = a.data<double>()[k], y = b.data<double>()[k];
    if ((std::isnan(x) && std::isnan(y)) || x == y) continue;
    if (std::isfinite(x) && std::isfinite(y) &&
        std::abs(x - y) <= bound.value_or(tol * (1 + std::max(std::abs(x), std::abs(y)))))
      continue;
    return "element " + std::to_string(k) + ": " + number(x) + " instead of " + number(y);
  }
  return {};
}

std::string describe(const diff::Case& c) {
  std::string out =
      (c.domain.empty() ? "" : c.domain + ".") + c.op + " opset " + std::to_string(c.opset) + " (";
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    if (k) out += ", ";
    if (!c.inputs[k]) {
      out += "-";
      continue;
    }
    const Tensor& t = *c.inputs[k];
    out += std::string(elem_type_short_name(t.type())) + shape_str(t.shape());
    if (t.size() <= 48 && t.type() != ElemType::String) {
      const Tensor d = eval::cast_tensor(t, ElemType::Double);
      out += "=[";
      for (int64_t e = 0; e < d.size(); ++e) out += (e ? " " : "") + number(d.data<double>()[e]);
      out += "]";
    }
  }
  out += ")";
  for (const ir::Attribute& a : c.attributes) {
    out += " " + a.name.str() + "=";
    if (a.type == ir::AttrType::Int)
      out += std::to_string(a.i);
    else if (a.type == ir::AttrType::Float)
      out += number(a.f);
    else if (a.type == ir::AttrType::String)
      out += a.s;
    else if (a.type == ir::AttrType::Ints) {
      out += "[";
      for (std::size_t k = 0; k < a.ints.size(); ++k) out += (k ? "," : "") + std::to_string(a.ints[k]);
      out += "]";
    } else {
      out += "...";
    }
  }
  return out;
}

// A one-node model of the case; its outputs typed as the evaluator computed them (when it did).
ir::Model case_model(const diff::Case& c, const std::vector<Tensor>* outputs) {
  ir::Model m;
  m.ir_version = 10;
  m.opsets = {{"", c.domain.empty() ? c.opset : 18, {}, 0}};
  if (!c.domain.empty()) m.opsets.push_back({c.domain, 1, {}, 0});
  ir::Graph& g = *m.graph;
  std::vector<ir::ValueId> ins, outs;
  for (std::size_t k = 0; k < c.inputs.size(); ++k)
    ins.push_back(c.inputs[k]
                      ? g.add_input("x" + std::to_string(k), c.inputs[k]->type(), c.inputs[k]->shape())
                      : ir::kNone);
  for (std::size_t k = 0; k < c.outputs; ++k) {
    outs.push_back(g.add_value("y" + std::to_string(k)));
    if (outputs && k < outputs->size()) g.value(outs.back()).elem = (*outputs)[k].type();
  }
  g.add_node(Symbol(c.op), std::move(ins), outs, c.attributes, "node", Symbol(c.domain));
  for (ir::ValueId id : outs) g.add_output(id);
  return m;
}

NamedTensors feeds_of(const diff::Case& c) {
  NamedTensors feeds;
  for (std::size_t k = 0; k < c.inputs.size(); ++k)
    if (c.inputs[k]) feeds.emplace_back("x" + std::to_string(k), *c.inputs[k]);
  return feeds;
}

// ONNX Runtime's refusal, reduced to its kind.
std::string refusal_reason(const std::string& error) {
  if (error.find("Could not find an implementation") != std::string::npos)
    return "no ONNX Runtime kernel for these types";
  if (error.find("not a registered function/op") != std::string::npos ||
      error.find("No Op registered") != std::string::npos)
    return "op unknown to ONNX Runtime";
  std::string first = error.substr(0, error.find('\n'));
  for (std::size_t at; (at = first.find("/tmp/")) != std::string::npos;)  // the case's path
    first.erase(at, first.find_first_of(" :", at) - at);
  const std::size_t at = first.find("] ");
  if (at != std::string::npos) first = first.substr(at + 2);
  return first.substr(0, 160);
}

struct ClassCounts {
  int64_t generated = 0, agreed = 0, both_refused = 0, mismatched = 0, ort_refused = 0, eval_refused = 0,
          departures = 0;
};

struct SweepResult {
  std::map<std::string, ClassCounts> classes;
  std::map<std::string, int64_t> refusals;      // ONNX Runtime's reasons, counted
  std::map<std::string, int64_t> departed;      // ONNX Runtime's departures from the specification, counted
  std::vector<std::string> mismatches;          // case and difference
  std::vector<std::string> evaluator_refusals;  // cases ONNX Runtime computes and the evaluator refuses
};

SweepResult run_evaluator_sweep(int64_t scale) {
  struct Pending {
    diff::Case c;
    const diff::OpSpec* spec;
    std::optional<std::vector<Tensor>> ours;
    std::string our_error;
  };
  const std::vector<diff::OpSpec> specs = diff::evaluator_op_specs();
  std::vector<Pending> cases;
  for (const diff::OpSpec& spec : specs)
    for (ElemType t : spec.types)
      for (int64_t n = 0; n < spec.cases_per_type * scale; ++n) {
        diff::Draw draw(diff::case_seed(spec.domain + spec.op, t, n, 20261123));
        Pending p{diff::Case{spec.op, spec.domain, 18, {}, {}, 1}, &spec, std::nullopt, {}};
        try {
          spec.make(draw, t, p.c);
        } catch (const std::exception& e) {
          ADD_FAILURE() << "the generator of " << spec.op << " (" << elem_type_name(t) << ", case " << n
                        << ") failed: " << e.what();
          continue;
        }
        try {
          p.ours = eval::evaluate_op(Symbol(p.c.op), Symbol(p.c.domain), p.c.inputs, p.c.attributes,
                                     p.c.opset, p.c.outputs);
        } catch (const Error& e) {
          p.our_error = e.what();
        } catch (const std::exception& e) {  // the evaluator must throw xexp::Error, nothing else
          ADD_FAILURE() << describe(p.c) << ": the evaluator threw " << e.what();
          continue;
        }
        cases.push_back(std::move(p));
      }
  TempDir dir;
  std::vector<OrtJob> jobs;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const std::string path = (dir.path() / ("case" + std::to_string(k) + ".onnx")).string();
    save_model(case_model(cases[k].c, cases[k].ours ? &*cases[k].ours : nullptr), path);
    jobs.push_back({path, feeds_of(cases[k].c)});
  }
  const std::vector<OrtResult> theirs = run_onnxruntime_batch(jobs);
  SweepResult result;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Pending& p = cases[k];
    ClassCounts& counts = result.classes[p.spec->op_class];
    ++counts.generated;
    if (!theirs[k].ok) {
      if (!p.ours) {
        ++counts.both_refused;
      } else {
        ++counts.ort_refused;
        ++result.refusals[p.spec->op + ": " + refusal_reason(theirs[k].error)];
        if (theirs[k].error.starts_with("onnxruntime crashed"))
          std::cout << "ONNX Runtime crashed on " << describe(p.c) << "\n";
      }
      continue;
    }
    // decided before comparing: some departures read uninitialized memory and match by chance
    const auto departure = std::find_if(departures().begin(), departures().end(), [&](const Departure& dep) {
      return dep.op == p.c.op && dep.evaluator_refuses == !p.ours && dep.applies(p.c);
    });
    if (!p.ours && departure == departures().end()) {
      ++counts.eval_refused;
      result.evaluator_refusals.push_back(describe(p.c) + ": " + p.our_error);
      continue;
    }
    if (departure != departures().end()) {
      ++counts.departures;
      ++result.departed[std::string(departure->op) + ": ONNX Runtime " + departure->why];
      continue;
    }
    std::string problem;
    if (theirs[k].outputs.size() != p.ours->size()) problem = "output count";
    for (std::size_t o = 0; problem.empty() && o < p.ours->size(); ++o) {
      const std::string d = difference((*p.ours)[o], theirs[k].outputs[o].second, p.spec->match);
      if (!d.empty()) problem = "output " + std::to_string(o) + ": " + d;
    }
    if (problem.empty()) {
      ++counts.agreed;
      continue;
    }
    ++counts.mismatched;
    result.mismatches.push_back(describe(p.c) + ": " + problem);
  }
  return result;
}

void print_summary(const SweepResult& r) {
  std::cout << "op class        generated  agreed  both-refused  ORT-refused  evaluator-refused  departures  "
               "mismatched\n";
  ClassCounts total;
  for (const auto& [name, c] : r.classes) {
    std::printf("%-15s %9lld %7lld %13lld %12lld %18lld %11lld %11lld\n", name.c_str(),
                static_cast<long long>(c.generated), static_cast<long long>(c.agreed),
                static_cast<long long>(c.both_refused), static_cast<long long>(c.ort_refused),
                static_cast<long long>(c.eval_refused), static_cast<long long>(c.departures),
                static_cast<long long>(c.mismatched));
    total.generated += c.generated;
    total.agreed += c.agreed;
    total.ort_refused += c.ort_refused;
  }
  std::cout << "total: " << total.generated << " generated, " << total.agreed << " agreed, "
            << total.ort_refused << " refused by ONNX Runtime:\n";
  for (const auto& [reason, n] : r.refusals) std::cout << "  " << n << "  " << reason << "\n";
  std::cout
      << "departures from the ONNX specification (not compared, the evaluator follows the specification):\n";
  for (const auto& [reason, n] : r.departed) std::cout << "  " << n << "  " << reason << "\n";
  std::cout.flush();
}

}  // namespace

TEST(OrtDifferential, EveryEvaluatorOpHasACaseGenerator) {
  std::set<std::pair<std::string, std::string>> generated;
  for (const diff::OpSpec& spec : diff::evaluator_op_specs()) generated.emplace(spec.domain, spec.op);
  for (const auto& [domain, op] : eval::default_registry().ops())
    EXPECT_TRUE(generated.count({domain.str(), op.str()}))
        << domain.str() << "." << op.str() << " has no case generator";
}

TEST(OrtDifferential, EvaluatorAgreesWithOnnxRuntimeOnGeneratedCases) {
  const int64_t scale = sweep_scale();
  const SweepResult r = run_evaluator_sweep(scale);
  print_summary(r);
  for (const std::string& m : r.mismatches) ADD_FAILURE() << "mismatch: " << m;
  for (const std::string& m : r.evaluator_refusals)
    ADD_FAILURE() << "the evaluator refuses what ONNX Runtime computes: " << m;
  if (scale != 1) return;
  // The cases compared per op class at scale 1 (agreed + both refused), pinned.
  const std::map<std::string, int64_t> pinned = {
      {"binary", 500},     {"cast", 304}, {"contrib", 91},  {"conv", 47},   {"gather", 280},
      {"matmul", 32},      {"nn", 125},   {"reduce", 260},  {"shape", 832}, {"unary-exact", 282},
      {"unary-math", 340}, {"value", 54}, {"variadic", 152}};
  std::map<std::string, int64_t> compared;
  for (const auto& [name, c] : r.classes) compared[name] = c.agreed + c.both_refused;
  EXPECT_EQ(compared, pinned);
}

// (b) The rules. A rewrite computes the same function, rounding differently: fused kernels sum in
// another order and evaluate formulas in one pass. Each output element of the optimized model must lie
// within what rounding allows for the computation, not within a fixed tolerance:
//   |after - before| <= kRoundoffs * unit_roundoff(type) * terms * (1 + magnitude)
// where `terms` is the longest sum any node of the original computes (a product's inner dimension, a
// normalization's row, a reduction's extent) and `magnitude` the largest finite value the original
// computes on these inputs (an error made there is scaled by what follows: a softmax reads its scores'
// rounding). A rule that trades the function for another (an erf Gelu as FastGelu's tanh formula, off by
// 4.7e-4 at |x| = 2.7) is far outside that; the opt-in onnxruntime_approx set's rules say what they
// trade, and are checked against that bound instead.
constexpr double kRoundoffs = 8;  // 4 ulps
const std::map<std::string, double> kApproximationBound = {{"FastGeluApprox", 4.8e-4}};

double element_count(const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

// The number of terms node `n` sums into one output element, at most (rounded up where the axis
// depends on attributes or the opset: a bound, not the exact count), from its inputs' dims as run.
double summed_terms(const ir::Graph& g, const ir::Node& n,
                    const std::map<std::string, std::vector<int64_t>, std::less<>>& dims) {
  auto dims_of = [&](std::size_t input) -> std::vector<int64_t> {
    if (input >= n.inputs.size() || n.inputs[input] == ir::kNone) return {};
    const auto it = dims.find(g.value(n.inputs[input]).name);
    return it == dims.end() ? std::vector<int64_t>{} : it->second;
  };
  auto but_first = [](const std::vector<int64_t>& d) {
    return d.empty() ? 1.0 : element_count(d) / static_cast<double>(std::max<int64_t>(d[0], 1));
  };
  const std::string op(n.op_type.view());
  const std::vector<int64_t> a = dims_of(0);
  if (op == "MatMul" || op == "Gemm" || op == "FusedMatMul" || op == "FusedGemm") {  // either layout of A
    const std::size_t r = a.size();
    return r == 0 ? 1.0 : static_cast<double>(std::max(a[r - 1], r > 1 ? a[r - 2] : 1));
  }
  if (op.starts_with("Conv") || op == "FusedConv") return but_first(dims_of(1)) * 2;  // W, either layout
  if (op.find("Attention") != std::string::npos) return but_first(dims_of(1));       // the keys
  if (op.starts_with("Reduce") || op.find("Softmax") != std::string::npos || op == "CumSum" ||
      (op.find("Normalization") != std::string::npos && op != "BatchNormalization"))
    return element_count(a);  // some of its axes, in one sum
  return 1;
}

// The largest finite value of a float tensor (0 for other types).
double largest_magnitude(const Tensor& t) {
  if (!is_float(t.type())) return 0;
  const Tensor d = eval::cast_tensor(t, ElemType::Double);
  double m = 0;
  for (int64_t k = 0; k < d.size(); ++k)
    if (std::isfinite(d.data<double>()[k])) m = std::max(m, std::abs(d.data<double>()[k]));
  return m;
}

// terms * (1 + magnitude) for the original model at `path` on `feeds`, run in xexp's evaluator: its
// longest sum, and the largest finite value it computes anywhere. Where the evaluator lacks a kernel
// (sequences), what the original reads and gives (`outputs`) sets the magnitude, and its sums count one
// term: such cases only move data.
double rounding_scale(const std::string& path, const NamedTensors& feeds, const NamedTensors& outputs) {
  const ir::Model model = load_model(path);
  std::map<std::string, std::vector<int64_t>, std::less<>> dims;
  double magnitude = 0;
  eval::RunOptions options;
  options.on_result = [&](const eval::ResultInfo& r) {
    dims.emplace(std::string(r.name), r.value.dims());
    magnitude = std::max(magnitude, largest_magnitude(r.value));
  };
  try {
    eval::Evaluator(model).run(feeds, options);
  } catch (const Error&) {
    for (const auto* named : {&feeds, &outputs})
      for (const auto& [name, t] : *named) magnitude = std::max(magnitude, largest_magnitude(t));
    return 1 + magnitude;
  }
  double terms = 1;
  for (ir::NodeId id : model.graph->nodes())
    terms = std::max(terms, summed_terms(*model.graph, model.graph->node(id), dims));
  return terms * (1 + magnitude);
}

TEST(OrtDifferential, OptimizedPositiveCasesGiveOnnxRuntimesOutputsOnRandomInputs) {
  const int64_t scale = sweep_scale();
  const int64_t variants = 3 * scale;
  // Every rule whose result ONNX Runtime's CPU package runs, optimized with the spec that takes it:
  // `xexp optimize`'s default, plus the opt-in set of a rule outside it (not onnxruntime_training, whose
  // kernels that package lacks).
  std::set<std::string> optimized_by_default;
  for (const rewrite::RulePtr& r : rewrite::rules_from_string(optimizer::kDefaultPatterns))
    optimized_by_default.insert(r->name());
  std::map<std::string, std::string> spec_of;
  for (const std::string& set : rewrite::Catalog::global().set_names())
    if (set != "onnxruntime_training")
      for (const rewrite::RulePtr& r : rewrite::rules_from_string(set))
        spec_of[r->name()] = optimizer::kDefaultPatterns + (optimized_by_default.count(r->name()) ? "" : "+" + set);
  std::vector<PositiveCase> cases = read_positive_cases();
  std::erase_if(cases, [&](const PositiveCase& c) { return !spec_of.count(c.rule); });
  TempDir dir;
  std::vector<OrtJob> jobs;
  struct Pair {
    std::string label, original, rule;
    NamedTensors feeds;
  };
  std::vector<Pair> pairs;  // one per pair of jobs (original, optimized)
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string original = (dir.path() / (std::to_string(i) + ".onnx")).string();
    const std::string optimized = (dir.path() / (std::to_string(i) + ".opt.onnx")).string();
    write_case_model(cases[i].text, original);
    ir::Model model = load_model(original);
    std::ostringstream log;
    optimizer::optimize_model(model, {.patterns = spec_of.at(cases[i].rule), .log = &log});
    save_model(model, optimized);
    const ir::Model reread = load_model(original);
    for (int64_t v = 0; v < variants; ++v) {
      const double range = std::array<double, 3>{1, 4, 30}[static_cast<std::size_t>(v % 3)];
      RandomFeedOptions options{.seed = static_cast<uint64_t>(1000 + v),
                                .float_low = -range,
                                .float_high = range,
                                .int_low = 0,
                                .int_high = 3,
                                .symbols = {},
                                .default_dim = 1 + v % 3};
      const NamedTensors feeds = random_feeds(*reread.graph, options);
      jobs.push_back({original, feeds});
      jobs.push_back({optimized, feeds});
      pairs.push_back({cases[i].rule + " (inputs in +-" + number(range) + ", seed " + std::to_string(1000 + v) + ")",
                       original, cases[i].rule, feeds});
    }
  }
  const std::vector<OrtResult> results = run_onnxruntime_batch(jobs);
  int64_t compared = 0;
  std::map<std::string, int64_t> refused;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const Pair& p = pairs[k];
    const OrtResult& before = results[2 * k];
    const OrtResult& after = results[2 * k + 1];
    if (!before.ok) {  // a contrib op ONNX Runtime lacks, integer inputs that make no valid shape
      ++refused[p.rule + ": " + refusal_reason(before.error)];
      continue;
    }
    if (!after.ok) {
      ADD_FAILURE() << p.label << ": ONNX Runtime runs the original but not the optimized model: " << after.error;
      continue;
    }
    ++compared;
    if (after.outputs.size() != before.outputs.size()) {
      ADD_FAILURE() << p.label << ": output count";
      continue;
    }
    const auto approximation = kApproximationBound.find(p.rule);
    const double scale =
        approximation == kApproximationBound.end() ? rounding_scale(p.original, p.feeds, before.outputs) : 0;
    for (std::size_t o = 0; o < before.outputs.size(); ++o) {
      const Tensor& want = before.outputs[o].second;
      const double bound = approximation != kApproximationBound.end() ? approximation->second
                                                                      : kRoundoffs * unit_roundoff(want.type()) * scale;
      const std::string d = difference(after.outputs[o].second, want, diff::Match::Close, bound);
      EXPECT_TRUE(d.empty()) << p.label << ", output " << before.outputs[o].first << ": " << d << " (bound "
                             << number(bound) << ")";
    }
  }
  std::cout << cases.size() << " rule cases x " << variants << " input sets: " << compared
            << " compared, original refused by ONNX Runtime:\n";
  for (const auto& [reason, n] : refused) std::cout << "  " << n << "  " << reason << "\n";
  if (scale == 1) {
    // Of 417 pairs: StaticConcatReshape's integer inputs make no valid shape once; MissingCosSin,
    // MissingRange, MissingReduceMax and MissingTopK exist for kernels or types ONNX Runtime lacks: their
    // originals never run.
    EXPECT_EQ(compared, 404);
  }
}
