// computed_constant: what a value computed from constants alone holds, up to broadcasting, evaluated
// without folding it (patterns/computed_constant.hpp). Exact values through Expand, Slice and Unsqueeze,
// and nothing for an input, an op outside the list, or a cone over the size limit.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "support/rewrite_helpers.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/patterns/computed_constant.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::int64_initializer;
using test::node;

namespace {

ValueId constant_of_shape(Graph& g, const std::string& name, std::vector<int64_t> dims, float value) {
  return test::constant_of_shape(g, int64_initializer(g, name, std::move(dims)), value);
}

std::vector<float> values_of(const Tensor& t) { return {t.data<float>().begin(), t.data<float>().end()}; }

}  // namespace

// The lower triangle of ones (3, 4), made (1, 3, 4), expanded to X's (batch, 3, 4) read at run time, then
// cut on the batch axis (broadcast: kept as it is) and on the columns 1..3 (cut): (1, 3, 2).
TEST(ComputedConstant, ReadsAnExpandAsItsInputAndCutsOnlyTheAxesItHolds) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  const ValueId x = g.add_input("X", ElemType::Float, Shape{Dim::symbolic("batch"), 3, 4});
  const ValueId lower = node(g, "Trilu", {constant_of_shape(g, "dims", {3, 4}, 1.f)}, {Attribute::make_int("upper", 0)});
  const ValueId leading = node(g, "Unsqueeze", {lower, int64_initializer(g, "axes", {0})});
  const ValueId expanded = node(g, "Expand", {leading, node(g, "Shape", {x})});
  const ValueId cut = node(g, "Slice", {expanded, int64_initializer(g, "starts", {0, 1}),
                                        int64_initializer(g, "ends", {1000, 3}), int64_initializer(g, "on", {0, 2})});
  g.add_output(cut);
  infer::infer_model_types(m);
  const std::optional<Tensor> t = patterns::computed_constant(g, cut);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->dims(), (std::vector<int64_t>{1, 3, 2}));
  EXPECT_EQ(values_of(*t), (std::vector<float>{0, 0, 1, 0, 1, 1}));
  EXPECT_FALSE(patterns::computed_constant(g, x).has_value()) << "X is an input";
}

// Ops outside the list (their semantics differ between opsets, or they are not elementwise) and cones over
// the limits give nothing; the size is checked before anything is allocated.
TEST(ComputedConstant, NothingForOtherOpsOrOverTheLimits) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  const ValueId softmax = node(g, "Softmax", {constant_of_shape(g, "small", {2, 2}, 1.f)});
  const ValueId huge = constant_of_shape(g, "large", {4096, 4096}, 1.f);
  const ValueId range = node(g, "Range", {g.add_initializer("start", Tensor::scalar<int64_t>(0)),
                                          g.add_initializer("limit", Tensor::scalar<int64_t>(5000)),
                                          g.add_initializer("delta", Tensor::scalar<int64_t>(1))});
  const ValueId column = node(g, "Unsqueeze", {range, int64_initializer(g, "last", {1})});
  const ValueId pairs = node(g, "Greater", {range, column});  // (5000, 5000)
  for (ValueId v : {softmax, huge, pairs}) g.add_output(v);
  infer::infer_model_types(m);
  EXPECT_FALSE(patterns::computed_constant(g, softmax).has_value());
  EXPECT_FALSE(patterns::computed_constant(g, huge).has_value());
  EXPECT_FALSE(patterns::computed_constant(g, pairs).has_value());
  ASSERT_TRUE(patterns::computed_constant(g, range).has_value());
  EXPECT_EQ(patterns::computed_constant(g, range)->size(), 5000);
}
