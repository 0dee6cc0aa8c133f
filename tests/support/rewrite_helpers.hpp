#pragma once
// Small helpers for rule tests: build a graph node by node (typed by shape inference), list the op
// sequence after an optimization, run a set string over a model.
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/compare.hpp"
#include "support/ort.hpp"
#include "support/random_inputs.hpp"
#include "support/temp_dir.hpp"
#include "xexp/eval/evaluator.hpp"
#include "xexp/infer/infer.hpp"
#include "xexp/onnx/save.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/rewrite/driver.hpp"

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

// "Gemm", "com.microsoft.FusedMatMul", ... in execution order.
inline std::vector<std::string> op_types(const ir::Graph& g) {
  std::vector<std::string> out;
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    out.push_back(n.domain.empty() ? n.op_type.str() : n.domain.str() + "." + n.op_type.str());
  }
  return out;
}

inline rewrite::OptimizeStats run_rules(ir::Model& m, const std::string& spec, rewrite::OptimizeOptions options = {}) {
  return rewrite::optimize(m, rewrite::rules_from_string(spec), options);
}

// Builds the model twice, optimizes the second with `spec`, and checks on random inputs that it gives
// the outputs of the first, in xexp's evaluator and in ONNX Runtime. Returns the optimized model.
inline ir::Model expect_same_outputs(const std::function<ir::Model()>& make, const std::string& spec,
                                     double atol = 1e-5) {
  ir::Model before = make();
  ir::Model after = make();
  run_rules(after, spec);
  const testing::NamedTensors feeds = testing::random_feeds(*before.graph, {.seed = 7});
  auto named = [](const eval::Evaluator& e, const std::vector<Tensor>& values) {
    testing::NamedTensors out;
    std::vector<std::string> names = e.output_names();
    for (std::size_t k = 0; k < values.size(); ++k) out.emplace_back(names[k], values[k]);
    return out;
  };
  eval::Evaluator eval_before(before), eval_after(after);
  const testing::NamedTensors expected = named(eval_before, eval_before.run(feeds));
  testing::expect_all_close(named(eval_after, eval_after.run(feeds)), expected, atol);
  testing::TempDir dir;
  const std::string path = (dir.path() / "after.onnx").string();
  save_model(after, path);
  testing::expect_all_close(testing::run_onnxruntime(path, feeds), expected, atol);
  return after;
}

}  // namespace xexp::test
