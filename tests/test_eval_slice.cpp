// Slice's edge cases: the bounds shared by inference and the evaluator (core/slice_range.hpp) against
// hand-computed values, then the evaluator and the inferred shapes against ONNX Runtime on one model
// holding every case, saved to disk and read back: negative and out-of-range starts and ends,
// INT64_MIN/INT64_MAX, negative and huge steps, empty results, several axes, omitted axes and steps,
// int32 bounds, an empty dimension, and the attribute form of opset 9.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/ort.hpp"
#include "support/temp_dir.hpp"
#include "xexp/core/slice_range.hpp"
#include "xexp/eval/evaluator.hpp"
#include "xexp/infer/infer.hpp"
#include "xexp/onnx/load.hpp"
#include "xexp/onnx/save.hpp"

using namespace xexp;
using namespace xexp::testing;

namespace {

constexpr int64_t kLowest = std::numeric_limits<int64_t>::min();
constexpr int64_t kHighest = std::numeric_limits<int64_t>::max();

// The indices a range selects, in order.
std::vector<int64_t> indices(const SliceRange& r) {
  std::vector<int64_t> out;
  for (int64_t k = 0; k < r.count; ++k) out.push_back(r[k]);
  return out;
}

using Ints = std::vector<int64_t>;

}  // namespace

TEST(SliceRange, ClampsAsOnnxDefines) {
  EXPECT_EQ(indices(slice_range(5, -10, kLowest, -1)), (Ints{0}));
  EXPECT_EQ(indices(slice_range(5, kHighest, kLowest, -1)), (Ints{4, 3, 2, 1, 0}));
  EXPECT_EQ(indices(slice_range(5, kLowest, kHighest, 1)), (Ints{0, 1, 2, 3, 4}));
  EXPECT_EQ(indices(slice_range(5, -1, -6, -1)), (Ints{4, 3, 2, 1, 0}));
  EXPECT_EQ(indices(slice_range(5, 0, 5, 2)), (Ints{0, 2, 4}));
  EXPECT_EQ(indices(slice_range(5, 4, 0, -3)), (Ints{4, 1}));
  EXPECT_EQ(indices(slice_range(5, 0, kHighest, kHighest)), (Ints{0}));
  EXPECT_EQ(indices(slice_range(5, 4, kLowest, kLowest)), (Ints{4}));
  EXPECT_EQ(slice_range(5, 3, 1, 1).count, 0);
  EXPECT_EQ(slice_range(5, 1, 3, -1).count, 0);
  EXPECT_EQ(slice_range(5, 5, 10, 1).count, 0);
  EXPECT_EQ(slice_range(0, -1, kLowest, -1).count, 0);
  EXPECT_EQ(slice_range(5, 0, 5, 0).count, 0);
}

TEST(SliceRange, EndAtIntMaxWithANegativeStepSelectsNothing) {
  // The specification clamps such an end to dim - 1, at or after any start. ONNX Runtime 1.30 slices back
  // to the beginning instead ([1, 0] for the first): test_ort_differential counts it as a departure.
  EXPECT_EQ(slice_range(4, 1, kHighest, -1).count, 0);
  EXPECT_EQ(slice_range(4, 3, std::numeric_limits<int32_t>::max(), -2).count, 0);
}

TEST(SliceRange, ShapeStartEnd) {
  EXPECT_EQ(shape_range(4, 0, 4), (std::pair<int64_t, int64_t>{0, 4}));
  EXPECT_EQ(shape_range(4, -1, 4), (std::pair<int64_t, int64_t>{3, 4}));
  EXPECT_EQ(shape_range(4, -10, 10), (std::pair<int64_t, int64_t>{0, 4}));
  EXPECT_EQ(shape_range(4, 3, 1), (std::pair<int64_t, int64_t>{3, 3}));
}

namespace {

// One Slice per case on the graph input named `data`, its output a graph output.
struct SliceCases {
  ir::Model model;
  int count = 0;

  explicit SliceCases(int64_t opset = 18) { model.opsets = {{"", opset, {}}}; }

  ir::ValueId constant(const Ints& values, ElemType type) {
    const std::string name = "c" + std::to_string(count) + "_" + std::to_string(model.graph->initializers().size());
    const auto n = static_cast<int64_t>(values.size());
    if (type == ElemType::Int32) {
      std::vector<int32_t> narrow(values.begin(), values.end());
      return model.graph->add_initializer(name, Tensor::from<int32_t>({n}, narrow));
    }
    return model.graph->add_initializer(name, Tensor::from<int64_t>({n}, values));
  }
  // Empty `axes` or `steps` leaves that input out.
  void add(const std::string& data, const Ints& starts, const Ints& ends, const Ints& axes = {}, const Ints& steps = {},
           ElemType type = ElemType::Int64) {
    ir::Graph& g = *model.graph;
    std::vector<ir::ValueId> inputs{g.at(data), constant(starts, type), constant(ends, type)};
    if (!axes.empty() || !steps.empty()) inputs.push_back(axes.empty() ? ir::kNone : constant(axes, type));
    if (!steps.empty()) inputs.push_back(constant(steps, type));
    const ir::ValueId out = g.add_value("case" + std::to_string(count));
    g.value(out).elem = g.value(g.at(data)).elem;
    g.add_node(Symbol("Slice"), std::move(inputs), {out}, {}, "slice" + std::to_string(count));
    g.add_output(out);
    ++count;
  }
  // Opset 1 to 9: starts, ends and axes are attributes, there are no steps.
  void add_attributes(const std::string& data, const Ints& starts, const Ints& ends, const Ints& axes = {}) {
    ir::Graph& g = *model.graph;
    std::vector<ir::Attribute> attributes{ir::Attribute::make_ints("starts", starts), ir::Attribute::make_ints("ends", ends)};
    if (!axes.empty()) attributes.push_back(ir::Attribute::make_ints("axes", axes));
    const ir::ValueId out = g.add_value("case" + std::to_string(count));
    g.value(out).elem = g.value(g.at(data)).elem;
    g.add_node(Symbol("Slice"), {g.at(data)}, {out}, std::move(attributes), "slice" + std::to_string(count));
    g.add_output(out);
    ++count;
  }
};

// The inputs every case reads: v = [1, 2, 3, 4, 5], x = 0..23 in shape (2, 3, 4), e of shape (2, 0).
void add_inputs(ir::Graph& g) {
  g.add_input("v", ElemType::Int64, Shape{5});
  g.add_input("x", ElemType::Float, Shape{2, 3, 4});
  g.add_input("e", ElemType::Float, Shape{2, 0});
}
NamedTensors feeds() {
  std::vector<float> x(24);
  for (int k = 0; k < 24; ++k) x[k] = static_cast<float>(k);
  return {{"v", Tensor::from<int64_t>({5}, {1, 2, 3, 4, 5})},
          {"x", Tensor::from<float>({2, 3, 4}, x)},
          {"e", Tensor::from<float>({2, 0}, std::vector<float>{})}};
}

// Saves the cases, reads them back as a user's model, and checks each output three ways: ONNX
// Runtime's result, the evaluator's (same dims, same bytes) and the shape inference gives (the
// inputs' shapes are static, so every output shape must be known and equal ONNX Runtime's dims).
// Returns the evaluator's outputs.
std::vector<Tensor> expect_same_as_onnxruntime(const SliceCases& cases) {
  TempDir dir;
  save_model(cases.model, dir / "slices.onnx");
  const ir::Model model = load_model(dir / "slices.onnx");
  const NamedTensors expected = run_onnxruntime(dir / "slices.onnx", feeds());
  const std::vector<Tensor> got = eval::Evaluator(model).run(feeds());
  ir::Model inferred = load_model(dir / "slices.onnx");
  infer::InferState state;
  infer::infer_graph(*inferred.graph, inferred.opset("").value(), state);
  EXPECT_EQ(got.size(), expected.size());
  EXPECT_EQ(got.size(), static_cast<std::size_t>(cases.count));
  for (std::size_t k = 0; k < std::min(got.size(), expected.size()); ++k) {
    SCOPED_TRACE(expected[k].first);
    const Tensor& want = expected[k].second;
    EXPECT_EQ(got[k].type(), want.type());
    EXPECT_EQ(got[k].dims(), want.dims());
    const ir::Value& out = inferred.graph->value(inferred.graph->outputs()[k]);
    EXPECT_EQ(out.shape, std::optional<Shape>(want.shape()));
    if (got[k].dims() != want.dims() || got[k].type() != want.type()) continue;
    const auto a = got[k].bytes(), b = want.bytes();
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  }
  return got;
}

}  // namespace

TEST(SliceAgainstOnnxRuntime, EdgeCasesGiveTheSameOutputs) {
  SliceCases cases;
  add_inputs(*cases.model.graph);
  // One axis: out-of-range and extreme bounds, both step signs.
  cases.add("v", {-10}, {kLowest}, {0}, {-1});  // [1]
  cases.add("v", {-10}, {10}, {0}, {1});
  cases.add("v", {10}, {-10}, {0}, {-1});
  cases.add("v", {kHighest}, {kLowest}, {0}, {-1});
  cases.add("v", {kLowest}, {kHighest}, {0}, {1});
  cases.add("v", {-1}, {-6}, {0}, {-1});
  cases.add("v", {0}, {-1}, {0}, {3});
  cases.add("v", {4}, {0}, {0}, {-2});
  cases.add("v", {-2}, {-1});
  // Steps larger than the dimension, up to INT64_MAX and INT64_MIN.
  cases.add("v", {0}, {5}, {0}, {kHighest});
  cases.add("v", {4}, {-10}, {0}, {kLowest});
  cases.add("v", {1}, {5}, {0}, {7});
  // Empty results.
  cases.add("v", {3}, {1}, {0}, {1});
  cases.add("v", {1}, {3}, {0}, {-1});
  cases.add("v", {5}, {10});
  cases.add("v", {-100}, {-50});
  cases.add("v", {2}, {2});
  cases.add("v", {-10}, {-6}, {0}, {-1});
  // int32 bounds.
  cases.add("v", {-1}, {-2147483647 - 1}, {0}, {-2}, ElemType::Int32);
  // Several axes, negative axes, axes in any order, omitted axes, omitted steps, steps without axes.
  cases.add("x", {1, -1}, {kHighest, -4});
  cases.add("x", {-1, 0}, {kLowest, 1}, {-1, 0}, {-2, 1});
  cases.add("x", {1, 5}, {3, -10}, {2, 1}, {1, -1});
  cases.add("x", {0, 0, 0}, {1, 1, 1});
  cases.add("x", {kHighest, -2, 1}, {kLowest, kHighest, 3}, {}, {-1, 1, 1});
  cases.add("x", {2}, {kLowest}, {-2}, {-1});
  // An empty dimension, sliced either way.
  cases.add("e", {-1}, {kLowest}, {1}, {-1});
  cases.add("e", {0, 0}, {kHighest, kHighest}, {0, 1}, {1, 1});

  const std::vector<Tensor> got = expect_same_as_onnxruntime(cases);
  // The case the evaluator used to get wrong.
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got[0].dims(), (Ints{1}));
  EXPECT_EQ(got[0].data<int64_t>()[0], 1);
}

TEST(SliceAgainstOnnxRuntime, Opset9AttributesGiveTheSameOutputs) {
  SliceCases cases(9);
  add_inputs(*cases.model.graph);
  cases.add_attributes("v", {-10}, {10});
  cases.add_attributes("v", {kHighest}, {kLowest});
  cases.add_attributes("v", {-2}, {-1});
  cases.add_attributes("v", {3}, {1});
  cases.add_attributes("x", {1, -1}, {kHighest, -4});
  cases.add_attributes("x", {-1, 0}, {kHighest, 2}, {2, 1});
  cases.add_attributes("e", {0}, {kHighest}, {1});
  expect_same_as_onnxruntime(cases);
}
