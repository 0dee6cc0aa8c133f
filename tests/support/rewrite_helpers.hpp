#pragma once
// Small helpers for rule tests: build a graph node by node (typed by shape inference), list the op
// sequence after an optimization, run a set string over a model.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "support/compare.hpp"
#include "support/ort.hpp"
#include "support/random_inputs.hpp"
#include "support/temp_dir.hpp"
#include "xexp/eval/evaluator.hpp"
#include "xexp/eval/tensor_util.hpp"
#include "xexp/infer/infer.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/onnx/load.hpp"
#include "xexp/onnx/save.hpp"
#include "xexp/rewrite/driver.hpp"
#include "xexp/rewrite/match.hpp"

namespace xexp::test {

inline ir::Model model_with_opset(int64_t opset) {
  ir::Model m;
  m.opsets.push_back({"", opset, {}});
  return m;
}

// Adds `op_type(inputs)` with one output, named after the op, typed by inference at `opset`.
inline ir::ValueId node(ir::Graph& g, const std::string& op_type, std::vector<ir::ValueId> inputs,
                        std::vector<ir::Attribute> attributes = {}, const std::string& domain = "",
                        int64_t opset = 18) {
  ir::ValueId out = g.add_value(g.unique_value_name(op_type));
  ir::NodeId id = g.add_node(Symbol(op_type), std::move(inputs), {out}, std::move(attributes),
                             g.unique_node_name(op_type), Symbol(domain));
  infer::infer_node(g, id, opset);
  return out;
}

inline ir::ValueId int64_initializer(ir::Graph& g, const std::string& name, std::vector<int64_t> values) {
  const auto n = static_cast<int64_t>(values.size());
  return g.add_initializer(name, Tensor::from<int64_t>({n}, values));
}

// ConstantOfShape(shape) filled with the float `value`.
inline ir::ValueId constant_of_shape(ir::Graph& g, ir::ValueId shape, float value) {
  return node(g, "ConstantOfShape", {shape},
              {ir::Attribute::make_tensor("value", Tensor::from<float>({1}, {value}))});
}

// The node computing `v`, and the name of input `k` of a node ("" when it has none there): what structure
// checks walk.
inline const ir::Node& producer(const ir::Graph& g, ir::ValueId v) { return g.node(g.value(v).producer); }
inline std::string input_name(const ir::Graph& g, const ir::Node& n, std::size_t k) {
  return k < n.inputs.size() && n.inputs[k] != ir::kNone ? g.value(n.inputs[k]).name : "";
}
// The first node of type `op_type` (throws when there is none).
inline const ir::Node& only_node(const ir::Graph& g, const std::string& op_type) {
  for (ir::NodeId id : g.nodes())
    if (g.node(id).op_type == Symbol(op_type)) return g.node(id);
  throw Error("no " + op_type + " node");
}
// An integer attribute of a node, `fallback` when the node has none.
inline int64_t int_of(const ir::Node& n, const char* name, int64_t fallback = 0) {
  const ir::Attribute* a = n.attribute(Symbol(name));
  return a ? a->i : fallback;
}
// The integers of the constant `v` (an initializer or a Constant node's value).
inline std::vector<int64_t> constant_ints(const ir::Graph& g, ir::ValueId v) {
  return eval::as_int64s(*rewrite::constant_tensor(g, v));
}

// Op types as op_types() lists them, for the expected side of a comparison. Not "Ops": xexp::Ops is the
// builder's shortcut class, which the tests' `using namespace xexp` brings in.
using OpList = std::vector<std::string>;

// "Gemm", "com.microsoft.FusedMatMul", ... in execution order.
inline OpList op_types(const ir::Graph& g) {
  std::vector<std::string> out;
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    out.push_back(n.domain.empty() ? n.op_type.str() : n.domain.str() + "." + n.op_type.str());
  }
  return out;
}

inline rewrite::OptimizeStats run_rules(ir::Model& m, const std::string& spec,
                                        rewrite::OptimizeOptions options = {}) {
  return rewrite::optimize(m, rewrite::rules_from_string(spec), options);
}

// How many rewrites a run made, all rules together.
inline std::size_t rewrites(const rewrite::OptimizeStats& stats) {
  std::size_t applied = 0;
  for (const rewrite::RuleStats& r : stats.rules) applied += r.applied;
  return applied;
}

// The model's outputs on `feeds` in xexp's evaluator, by name.
inline testing::NamedTensors evaluated(const ir::Model& m, const testing::NamedTensors& feeds) {
  const eval::Evaluator evaluator(m);
  const std::vector<Tensor> values = evaluator.run(feeds);
  testing::NamedTensors out;
  for (std::size_t k = 0; k < values.size(); ++k) out.emplace_back(evaluator.output_names()[k], values[k]);
  return out;
}

// What a model after a rewrite gave: in xexp's evaluator, and in ONNX Runtime (empty when it failed).
struct OutputsAfter {
  testing::NamedTensors evaluator, onnxruntime;
};

// Checks that `after` gives on `feeds` the outputs of `before` (saved at `before_path`), each runtime
// against itself: xexp's evaluator before and after, ONNX Runtime before and after (the two runtimes
// round some functions differently, which says nothing about the rewrite), within `tolerance` (absolute
// and relative). Returns what `after` gave, for further checks (against torch's outputs).
inline OutputsAfter expect_outputs_of(const ir::Model& before, const std::string& before_path,
                                      const ir::Model& after, const testing::NamedTensors& feeds,
                                      double tolerance) {
  OutputsAfter result{evaluated(after, feeds), {}};
  testing::expect_all_close(result.evaluator, evaluated(before, feeds), tolerance, tolerance);
  testing::TempDir dir;
  const std::string after_path = (dir.path() / "after.onnx").string();
  save_model(after, after_path);
  const std::vector<testing::OrtResult> ort =
      testing::run_onnxruntime_batch({{before_path, feeds}, {after_path, feeds}});
  EXPECT_TRUE(ort[0].ok) << "ONNX Runtime, before: " << ort[0].error;
  EXPECT_TRUE(ort[1].ok) << "ONNX Runtime, after: " << ort[1].error;
  if (ort[0].ok && ort[1].ok) {
    testing::expect_all_close(ort[1].outputs, ort[0].outputs, tolerance, tolerance);
    result.onnxruntime = ort[1].outputs;
  }
  return result;
}
// The same for a model file as an exporter wrote it, read from disk for the evaluator.
inline OutputsAfter expect_outputs_of_file(const std::string& original, const ir::Model& after,
                                           const testing::NamedTensors& feeds, double tolerance) {
  return expect_outputs_of(load_model(original), original, after, feeds, tolerance);
}

// Which model ONNX Runtime's CPU package refuses: the original, for a rule that makes it runnable (a
// kernel or a type the package lacks, the Missing* rules), or the rewritten one, for a rule emitting a
// kernel of its training or GPU builds (SoftmaxGrad, BiasSoftmax).
enum class OrtRefuses { Original, Rewritten };

// For a rule whose original or result ONNX Runtime refuses (`refused`): the evaluator gives the same
// outputs before and after, ONNX Runtime refuses that model (else the rule may be unneeded, or its
// result should be checked in ONNX Runtime) and runs the other one, with the evaluator's outputs on the
// original.
inline void expect_same_outputs_where_onnxruntime_runs(const std::function<ir::Model()>& make,
                                                       const std::string& spec, double tolerance,
                                                       OrtRefuses refused = OrtRefuses::Original) {
  ir::Model before = make();
  ir::Model after = make();
  EXPECT_GT(rewrites(run_rules(after, spec)), 0u) << "'" << spec << "' did not rewrite the model";
  const testing::NamedTensors feeds = testing::random_feeds(
      *before.graph, {.seed = 7, .float_low = 0.5, .float_high = 3.0, .int_low = 0, .int_high = 1000});
  const testing::NamedTensors expected = evaluated(before, feeds);
  testing::expect_all_close(evaluated(after, feeds), expected, tolerance, tolerance);
  testing::TempDir dir;
  const std::string before_path = (dir.path() / "before.onnx").string();
  const std::string after_path = (dir.path() / "after.onnx").string();
  save_model(before, before_path);
  save_model(after, after_path);
  const std::vector<testing::OrtResult> ort =
      testing::run_onnxruntime_batch({{before_path, feeds}, {after_path, feeds}});
  const std::size_t refusing = refused == OrtRefuses::Original ? 0 : 1;
  EXPECT_FALSE(ort[refusing].ok) << "ONNX Runtime now runs the " << (refusing ? "rewritten" : "original")
                                 << " model of " << spec;
  ASSERT_TRUE(ort[1 - refusing].ok) << ort[1 - refusing].error;
  testing::expect_all_close(ort[1 - refusing].outputs, expected, tolerance, tolerance);
}

// Builds the model twice, optimizes the second with `spec`, and checks that the rules changed it and
// that on random inputs it gives the outputs of the first (expect_outputs_of). `tolerance` (absolute and
// relative) is 0 by default: a rewrite that only moves, reshapes or drops values gives the same bits; a
// fusion that reorders float operations passes the tolerance its arithmetic needs. `feed_options` gives the
// seed and the sizes of symbolic dimensions. Returns the optimized model.
inline ir::Model expect_same_outputs(const std::function<ir::Model()>& make, const std::string& spec,
                                     double tolerance = 0,
                                     const testing::RandomFeedOptions& feed_options = {.seed = 7}) {
  ir::Model before = make();
  ir::Model after = make();
  // Without a rewrite the comparison below compares a model with itself and proves nothing.
  EXPECT_GT(rewrites(run_rules(after, spec)), 0u) << "'" << spec << "' did not rewrite the model";
  const testing::NamedTensors feeds = testing::random_feeds(*before.graph, feed_options);
  testing::TempDir dir;
  const std::string before_path = (dir.path() / "before.onnx").string();
  save_model(before, before_path);
  expect_outputs_of(before, before_path, after, feeds, tolerance);
  return after;
}

}  // namespace xexp::test
