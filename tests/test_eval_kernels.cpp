// Reference kernels, one family at a time, against hand-computed values (normalizations also against
// ONNX Runtime).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

#include "support/compare.hpp"
#include "support/temp_dir.hpp"
#include "xexp/eval.hpp"
#include "xexp/onnx/save.hpp"

using namespace xexp;
using eval::evaluate_op;
using ir::Attribute;

namespace {

std::vector<Tensor> run(const char* op, std::vector<std::optional<Tensor>> inputs, std::vector<Attribute> attrs = {},
                        std::size_t n_outputs = 1, const char* domain = "", int64_t opset = 18) {
  return evaluate_op(Symbol(op), Symbol(domain), inputs, attrs, opset, n_outputs);
}
Tensor run1(const char* op, std::vector<std::optional<Tensor>> inputs, std::vector<Attribute> attrs = {},
            const char* domain = "", int64_t opset = 18) {
  return run(op, std::move(inputs), std::move(attrs), 1, domain, opset)[0];
}
template <class T>
std::vector<T> values(const Tensor& t) {
  auto d = t.data<T>();
  return {d.begin(), d.end()};
}
void expect_near(const Tensor& t, const std::vector<float>& expected, float tol = 1e-5f) {
  auto got = values<float>(t);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], expected[k], tol) << "at " << k;
}
Tensor f32(std::vector<int64_t> dims, std::vector<float> v) { return Tensor::from<float>(std::move(dims), v); }
Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> v) { return Tensor::from<int64_t>(std::move(dims), v); }

}  // namespace

TEST(EvalElementwise, AddBroadcastsRowAndColumn) {
  Tensor y = run1("Add", {f32({2, 1}, {10, 20}), f32({3}, {1, 2, 3})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3}));
  expect_near(y, {11, 12, 13, 21, 22, 23});
}

TEST(EvalElementwise, IncompatibleShapesThrow) {
  EXPECT_THROW(run1("Mul", {f32({2}, {1, 2}), f32({3}, {1, 2, 3})}), Error);
}

TEST(EvalElementwise, IntegerDivisionTruncatesAndModFollowsDivisorSign) {
  EXPECT_EQ(values<int64_t>(run1("Div", {i64({2}, {7, -7}), i64({2}, {2, 2})})), (std::vector<int64_t>{3, -3}));
  EXPECT_EQ(values<int64_t>(run1("Mod", {i64({2}, {7, -7}), i64({2}, {3, 3})})), (std::vector<int64_t>{1, 2}));
  EXPECT_THROW(run1("Div", {i64({1}, {1}), i64({1}, {0})}), Error);
}

TEST(EvalElementwise, ComparisonsAndWhere) {
  Tensor mask = run1("Less", {f32({3}, {1, 5, 3}), f32({}, {3})});
  EXPECT_EQ(mask.type(), ElemType::Bool);
  EXPECT_EQ(values<bool>(mask), (std::vector<bool>{true, false, false}));
  expect_near(run1("Where", {mask, f32({3}, {1, 2, 3}), f32({}, {-1})}), {1, -1, -1});
}

TEST(EvalElementwise, UnaryAndActivations) {
  expect_near(run1("Sqrt", {f32({2}, {4, 9})}), {2, 3});
  expect_near(run1("Relu", {f32({3}, {-1, 0, 2})}), {0, 0, 2});
  expect_near(run1("Sigmoid", {f32({1}, {0})}), {0.5f});
  expect_near(run1("LeakyRelu", {f32({2}, {-2, 2})}, {Attribute::make_float("alpha", 0.5f)}), {-1, 2});
  expect_near(run1("Gelu", {f32({1}, {1})}), {0.8413447f});
  expect_near(run1("Pow", {f32({2}, {2, 3}), f32({}, {2})}), {4, 9});
  expect_near(run1("Clip", {f32({3}, {-5, 0, 5}), f32({}, {-1}), f32({}, {1})}), {-1, 0, 1});
  // Crossed bounds: min(max(x, lo), hi) gives hi everywhere.
  expect_near(run1("Clip", {f32({3}, {-5, 0, 5}), f32({}, {1}), f32({}, {-1})}), {-1, -1, -1});
}

TEST(EvalElementwise, Float16IsComputedInFloatAndStaysFloat16) {
  Tensor h = eval::cast_tensor(f32({2}, {1.5f, 2.25f}), ElemType::Float16);
  Tensor y = run1("Mul", {h, h});
  EXPECT_EQ(y.type(), ElemType::Float16);
  expect_near(eval::cast_tensor(y, ElemType::Float), {2.25f, 5.0625f});
}

TEST(EvalElementwise, VariadicMaxAndMean) {
  expect_near(run1("Max", {f32({2}, {1, 5}), f32({2}, {3, 2}), f32({}, {4})}), {4, 5});
  expect_near(run1("Mean", {f32({2}, {1, 5}), f32({2}, {3, 1})}), {2, 3});
}

TEST(EvalReduce, KeepdimsAndAxesFromInputOrAttribute) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor s = run1("ReduceSum", {x, i64({1}, {1})}, {Attribute::make_int("keepdims", 0)}, "", 13);
  EXPECT_EQ(s.dims(), (std::vector<int64_t>{2}));
  expect_near(s, {6, 15});
  Tensor m = run1("ReduceMean", {x}, {Attribute::make_ints("axes", {0})}, "", 13);
  EXPECT_EQ(m.dims(), (std::vector<int64_t>{1, 3}));
  expect_near(m, {2.5f, 3.5f, 4.5f});
  expect_near(run1("ReduceMax", {x}, {Attribute::make_int("keepdims", 0)}, "", 13), {6});
  expect_near(run1("ReduceL2", {f32({2}, {3, 4})}, {}, "", 13), {5});
  // noop_with_empty_axes leaves the input alone
  expect_near(run1("ReduceSum", {x}, {Attribute::make_int("noop_with_empty_axes", 1)}, "", 13), {1, 2, 3, 4, 5, 6});
}

TEST(EvalReduce, ArgMaxSelectsFirstOrLastIndex) {
  Tensor x = f32({2, 3}, {1, 3, 3, 7, 0, 7});
  EXPECT_EQ(values<int64_t>(run1("ArgMax", {x}, {Attribute::make_int("axis", 1), Attribute::make_int("keepdims", 0)})),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(values<int64_t>(run1("ArgMax", {x}, {Attribute::make_int("axis", 1), Attribute::make_int("keepdims", 0),
                                                  Attribute::make_int("select_last_index", 1)})),
            (std::vector<int64_t>{2, 2}));
}

TEST(EvalMatMul, BatchedWithBroadcast) {
  // (2, 1, 2) @ (2, 1) -> (2, 1, 1)
  Tensor y = run1("MatMul", {f32({2, 1, 2}, {1, 2, 3, 4}), f32({2, 1}, {10, 1})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 1, 1}));
  expect_near(y, {12, 34});
  // vector @ matrix drops the promoted dimension
  Tensor v = run1("MatMul", {f32({2}, {1, 1}), f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(v.dims(), (std::vector<int64_t>{2}));
  expect_near(v, {4, 6});
}

TEST(EvalMatMul, LargeBlockedProductMatchesNaive) {
  const int64_t M = 70, K = 300, N = 290;  // crosses every block boundary
  std::vector<float> a(M * K), b(K * N);
  for (std::size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>((k * 7) % 13) - 6;
  for (std::size_t k = 0; k < b.size(); ++k) b[k] = static_cast<float>((k * 5) % 11) - 5;
  Tensor y = run1("MatMul", {f32({M, K}, a), f32({K, N}, b)});
  auto got = y.data<float>();
  for (int64_t i : {int64_t{0}, int64_t{33}, M - 1})
    for (int64_t j : {int64_t{0}, int64_t{129}, int64_t{257}, N - 1}) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k) ref += a[i * K + k] * b[k * N + j];
      EXPECT_FLOAT_EQ(got[i * N + j], static_cast<float>(ref));
    }
}

TEST(EvalMatMul, GemmTransposesAndBias) {
  Tensor a = f32({2, 2}, {1, 3, 2, 4});  // A^T = [[1,2],[3,4]]
  Tensor b = f32({2, 2}, {1, 0, 0, 1});
  Tensor y = run1("Gemm", {a, b, f32({2}, {10, 20})},
                  {Attribute::make_int("transA", 1), Attribute::make_float("alpha", 2.0f), Attribute::make_float("beta", 0.5f)});
  expect_near(y, {2 + 5, 4 + 10, 6 + 5, 8 + 10});
}

TEST(EvalShapeOps, ReshapeTransposeConcatSlice) {
  Tensor x = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(run1("Reshape", {x, i64({2}, {3, -1})}).dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_THROW(run1("Reshape", {x, i64({2}, {4, -1})}), Error);
  expect_near(run1("Transpose", {x}), {0, 3, 1, 4, 2, 5});
  Tensor cat = run1("Concat", {x, x}, {Attribute::make_int("axis", 1)});
  EXPECT_EQ(cat.dims(), (std::vector<int64_t>{2, 6}));
  expect_near(cat, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  // x[:, ::-2]
  expect_near(run1("Slice", {x, i64({1}, {-1}), i64({1}, {-100}), i64({1}, {1}), i64({1}, {-2})}), {2, 0, 5, 3});
}

// A start below -dim with a negative step is clamped to the first element, not before it (ONNX Slice;
// ONNX Runtime gives the same): [1,2,3,4,5][-10:INT64_MIN:-1] is [1].
TEST(EvalShapeOps, SliceNegativeStepClampsStartToFirstElement) {
  const Tensor x = i64({5}, {1, 2, 3, 4, 5});
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  const Tensor y = run1("Slice", {x, i64({1}, {-10}), i64({1}, {lowest}), i64({1}, {0}), i64({1}, {-1})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{1}));
}

TEST(EvalShapeOps, GatherSplitExpandTilePad) {
  Tensor x = f32({3, 2}, {0, 1, 2, 3, 4, 5});
  Tensor g = run1("Gather", {x, i64({2, 1}, {2, -3})});
  EXPECT_EQ(g.dims(), (std::vector<int64_t>{2, 1, 2}));
  expect_near(g, {4, 5, 0, 1});
  auto parts = run("Split", {x, i64({2}, {1, 2})}, {}, 2);
  expect_near(parts[1], {2, 3, 4, 5});
  expect_near(run1("Expand", {f32({2, 1}, {1, 2}), i64({2}, {2, 3})}), {1, 1, 1, 2, 2, 2});
  expect_near(run1("Tile", {f32({2}, {1, 2}), i64({1}, {2})}), {1, 2, 1, 2});
  expect_near(run1("Pad", {f32({2}, {1, 2}), i64({2}, {1, 2}), f32({}, {9})}), {9, 1, 2, 9, 9});
  Tensor reflect = run1("Pad", {f32({3}, {1, 2, 3}), i64({2}, {2, 1})}, {Attribute::make_string("mode", "reflect")});
  expect_near(reflect, {3, 2, 1, 2, 3, 2});
}

TEST(EvalShapeOps, ShapeSqueezeUnsqueezeRange) {
  Tensor x = f32({1, 3, 1}, {1, 2, 3});
  EXPECT_EQ(values<int64_t>(run1("Shape", {x}, {Attribute::make_int("start", 1)})), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(run1("Squeeze", {x}).dims(), (std::vector<int64_t>{3}));
  EXPECT_THROW(run1("Squeeze", {x, i64({1}, {1})}), Error);
  EXPECT_EQ(run1("Unsqueeze", {x, i64({2}, {0, -1})}).dims(), (std::vector<int64_t>{1, 1, 3, 1, 1}));
  EXPECT_EQ(values<int64_t>(run1("Range", {Tensor::scalar<int64_t>(1), Tensor::scalar<int64_t>(8), Tensor::scalar<int64_t>(3)})),
            (std::vector<int64_t>{1, 4, 7}));
  Tensor filled = run1("ConstantOfShape", {i64({2}, {2, 2})}, {Attribute::make_tensor("value", i64({1}, {7}))});
  EXPECT_EQ(values<int64_t>(filled), (std::vector<int64_t>{7, 7, 7, 7}));
}

TEST(EvalShapeOps, StringsMoveLikeAnyOtherElement) {
  Tensor s = Tensor::strings({2, 2}, {"a", "b", "c", "d"});
  EXPECT_EQ(run1("Transpose", {s}).string_data(), (std::vector<std::string>{"a", "c", "b", "d"}));
}

TEST(EvalNN, SoftmaxAndLogSoftmax) {
  Tensor x = f32({2, 2}, {0, 0, 0, std::log(3.0f)});
  expect_near(run1("Softmax", {x}), {0.5f, 0.5f, 0.25f, 0.75f});
  expect_near(run1("LogSoftmax", {x}), {std::log(0.5f), std::log(0.5f), std::log(0.25f), std::log(0.75f)});
  // before opset 13 the input is flattened at axis 1: here the same as the last axis
  expect_near(run1("Softmax", {x}, {}, "", 11), {0.5f, 0.5f, 0.25f, 0.75f});
}

// The backend suite (test_eval_conformance) and the differential test check the numbers; here, what a
// malformed input gets: an error naming the op and the cause, not a read out of bounds.
TEST(EvalNN, LossesRefuseTargetsOutsideTheClassesAndMismatchedShapes) {
  const Tensor scores = f32({2, 3}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  const std::vector<Attribute> ignore{Attribute::make_int("ignore_index", 7)};
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}) {
    try {
      run1(op, {scores, i64({2}, {1, 7})});
      ADD_FAILURE() << op << " took target 7 of 3 classes";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(op) + ": target 7 is outside [0, 3)"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(run1(op, {scores, i64({2}, {1, 7})}, ignore).dims(), std::vector<int64_t>{});  // 7 ignored
    EXPECT_THROW(run1(op, {scores, i64({3}, {0, 1, 2})}), Error);
    EXPECT_THROW(run1(op, {scores, i64({2}, {0, 1})}, {Attribute::make_string("reduction", "max")}), Error);
  }
}

TEST(EvalNN, LayerNormalizationGivesMeanAndInvStd) {
  Tensor x = f32({1, 4}, {1, 2, 3, 4});
  auto out = run("LayerNormalization", {x, f32({4}, {1, 1, 2, 2}), f32({4}, {0, 0, 0, 1})},
                 {Attribute::make_float("epsilon", 0.0f)}, 3);
  const float inv = 1.0f / std::sqrt(1.25f);
  expect_near(out[0], {-1.5f * inv, -0.5f * inv, 2 * 0.5f * inv, 2 * 1.5f * inv + 1}, 1e-5f);
  expect_near(out[1], {2.5f});
  expect_near(out[2], {inv});
}

TEST(EvalNN, ConvMatchesHandComputedSum) {
  // 1x1x3x3 input, 2x2 kernel of ones, stride 1, no padding: sums of 2x2 windows
  Tensor x = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor y = run1("Conv", {x, w, f32({1}, {1})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 1, 2, 2}));
  expect_near(y, {13, 17, 25, 29});
}

TEST(EvalCast, FloatToIntTruncatesAndStringsRoundTrip) {
  EXPECT_EQ(values<int32_t>(run1("Cast", {f32({3}, {1.7f, -1.7f, 2.0f})}, {Attribute::make_int("to", 6)})),
            (std::vector<int32_t>{1, -1, 2}));
  Tensor s = run1("Cast", {f32({1}, {0.5f})}, {Attribute::make_int("to", 8)});
  EXPECT_EQ(s.string_data()[0], "0.5");
  expect_near(run1("Cast", {s}, {Attribute::make_int("to", 1)}), {0.5f});
}

TEST(EvalContrib, FusedMatMulTransposesAndScales) {
  Tensor a = f32({2, 2}, {1, 2, 3, 4});
  Tensor y = run1("FusedMatMul", {a, a}, {Attribute::make_int("transB", 1), Attribute::make_float("alpha", 0.5f)}, "com.microsoft");
  expect_near(y, {2.5f, 5.5f, 5.5f, 12.5f});
}

TEST(EvalContrib, GeluVariants) {
  const float x = 1.0f;
  const float erf_gelu = 0.5f * x * (1 + std::erf(x / std::sqrt(2.0f)));
  const float tanh_gelu = 0.5f * x * (1 + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
  expect_near(run1("Gelu", {f32({1}, {x})}, {}, "com.microsoft"), {erf_gelu});
  expect_near(run1("FastGelu", {f32({1}, {0.5f}), f32({1}, {0.5f})}, {}, "com.microsoft"), {tanh_gelu});
  expect_near(run1("BiasGelu", {f32({1}, {0.25f}), f32({1}, {0.75f})}, {}, "com.microsoft"), {erf_gelu});
  expect_near(run1("QuickGelu", {f32({1}, {x})}, {Attribute::make_float("alpha", 1.0f)}, "com.microsoft"), {1.0f / (1 + std::exp(-1.0f))});
}

TEST(EvalContrib, SkipLayerNormalizationReturnsTheSum) {
  auto out = run("SkipLayerNormalization", {f32({1, 2}, {1, 2}), f32({1, 2}, {1, 2}), f32({2}, {1, 2}), f32({2}, {0, 1})},
                 {Attribute::make_float("epsilon", 0.0f)}, 4, "com.microsoft");
  expect_near(out[0], {-1, 3});  // sum (2, 4): mean 3, std 1, then scale (1, 2) and bias (0, 1)
  expect_near(out[3], {2, 4});
}

TEST(EvalContrib, SimplifiedLayerNormalizationIsRms) {
  auto out = run("SimplifiedLayerNormalization", {f32({1, 2}, {3, 4}), f32({2}, {1, 2})},
                 {Attribute::make_float("epsilon", 0.0f)}, 2);
  const float rms = std::sqrt(12.5f);
  expect_near(out[0], {3 / rms, 8 / rms});
  expect_near(out[1], {1 / rms});
}

TEST(EvalContrib, RotaryEmbeddingRotatesHalves) {
  // one batch, one position, one head of size 4: pairs (x0, x2) and (x1, x3) rotated by 90 degrees
  Tensor x = f32({1, 1, 4}, {1, 2, 3, 4});
  Tensor cos = f32({1, 2}, {0, 0}), sin = f32({1, 2}, {1, 1});
  Tensor y = run1("RotaryEmbedding", {x, i64({1, 1}, {0}), cos, sin}, {Attribute::make_int("num_heads", 1)}, "com.microsoft");
  expect_near(y, {-3, -4, 1, 2});
}

TEST(EvalRegistry, UnsupportedOpIsAnError) {
  try {
    run1("NoSuchOp", {f32({1}, {1})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported op NoSuchOp"), std::string::npos);
  }
}

// Found by test_ort_differential (generated cases against ONNX Runtime), one test per fix.

TEST(EvalDifferentialFixes, FlattenMultipliesEachSideOnItsOwn) {
  // (2, 0, 2) at axis 3: the left side holds the zero, the right side is the empty product 1
  const Tensor y = run1("Flatten", {f32({2, 0, 2}, {})}, {Attribute::make_int(Symbol("axis"), 3)});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(run1("Flatten", {f32({0, 3}, {})}, {Attribute::make_int(Symbol("axis"), 1)}).dims(), (std::vector<int64_t>{0, 3}));
}

TEST(EvalDifferentialFixes, ReduceLogSumExpOfIntegersIsNotTruncatedEarly) {
  // exp(-1) used to be summed as an int64 (0), giving log(0) = -inf cast to INT32_MIN
  EXPECT_EQ(values<int32_t>(run1("ReduceLogSumExp", {Tensor::from<int32_t>({}, {-1})})), (std::vector<int32_t>{-1}));
  EXPECT_EQ(values<uint32_t>(run1("ReduceLogSumExp", {Tensor::from<uint32_t>({}, {11})})), (std::vector<uint32_t>{11}));
  // and no overflow of exp for large floats: max + log(sum(exp(x - max)))
  expect_near(run1("ReduceLogSumExp", {f32({2}, {1000, 1000})}), {1000 + std::log(2.0f)}, 1e-3f);
}

TEST(EvalDifferentialFixes, NoopWithEmptyAxesStillAppliesTheElementFunction) {
  const std::vector<Attribute> noop{Attribute::make_int(Symbol("noop_with_empty_axes"), 1)};
  const Tensor x = f32({3}, {-2, 0.5f, 3});
  expect_near(run1("ReduceSumSquare", {x}, noop), {4, 0.25f, 9});
  expect_near(run1("ReduceL1", {x}, noop), {2, 0.5f, 3});
  expect_near(run1("ReduceL2", {x}, noop), {2, 0.5f, 3});
  expect_near(run1("ReduceSum", {x, i64({0}, {})}, noop), {-2, 0.5f, 3});
  EXPECT_EQ(run1("ReduceMax", {x}, noop).dims(), (std::vector<int64_t>{3}));
}

TEST(EvalDifferentialFixes, NormalizationStatisticsAreFloatForEveryInputType) {
  const Tensor x = eval::cast_tensor(f32({2, 2}, {1, 3, 2, 6}), ElemType::Float16);
  const Tensor scale = eval::cast_tensor(f32({2}, {1, 1}), ElemType::Float16);
  const auto ln = run("LayerNormalization", {x, scale}, {}, 3);
  EXPECT_EQ(ln[0].type(), ElemType::Float16);
  EXPECT_EQ(ln[1].type(), ElemType::Float);
  EXPECT_EQ(ln[2].type(), ElemType::Float);
  expect_near(ln[1], {2, 4});
  const auto ln64 = run("LayerNormalization", {eval::cast_tensor(x, ElemType::Double), eval::cast_tensor(scale, ElemType::Double)}, {}, 3);
  EXPECT_EQ(ln64[0].type(), ElemType::Double);
  EXPECT_EQ(ln64[1].type(), ElemType::Float);
  const auto skip = run("SkipLayerNormalization", {x, x, scale}, {}, 4, "com.microsoft");
  EXPECT_EQ(skip[0].type(), ElemType::Float16);
  EXPECT_EQ(skip[1].type(), ElemType::Float);
  EXPECT_EQ(skip[2].type(), ElemType::Float);
  EXPECT_EQ(skip[3].type(), ElemType::Float16);
  expect_near(eval::cast_tensor(skip[3], ElemType::Float), {2, 6, 4, 12});
}

TEST(EvalDifferentialFixes, PowKeepsTheBaseTypeWhenOnlyTheExponentIsHalf) {
  const Tensor half_two = eval::cast_tensor(f32({}, {2}), ElemType::Float16);
  const Tensor y = run1("Pow", {f32({2}, {3, 0.5f}), half_two});
  EXPECT_EQ(y.type(), ElemType::Float);
  expect_near(y, {9, 0.25f});
  EXPECT_EQ(run1("Pow", {eval::cast_tensor(f32({1}, {3}), ElemType::Float16), f32({}, {2})}).type(), ElemType::Float16);
  EXPECT_EQ(run1("Where", {Tensor::from<bool>({1}, {true}), half_two, half_two}).type(), ElemType::Float16);
}

// Where ONNX Runtime 1.30 departs from the ONNX specification, the evaluator follows the specification
// (test_ort_differential counts these cases as departures and does not compare them).

TEST(EvalOrtDepartures, ReducingAnEmptyAxisGivesOneOrNoDimension) {
  // ONNX Runtime keeps the empty axis: (3, 0) instead of (3, 1) or (3)
  EXPECT_EQ(run1("ReduceSum", {f32({3, 0}, {}), i64({1}, {-1})}).dims(), (std::vector<int64_t>{3, 1}));
  const Tensor y = run1("ReduceSum", {f32({3, 0}, {}), i64({1}, {-1})}, {Attribute::make_int(Symbol("keepdims"), 0)});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{3}));
  expect_near(y, {0, 0, 0});
  EXPECT_TRUE(std::isnan(values<float>(run1("ReduceMean", {f32({0}, {})}))[0]));
}

TEST(EvalOrtDepartures, DoubleStaysDoubleInShrinkAndHardSwish) {
  // ONNX Runtime rounds these through float32
  const double x = 0.781566312;
  const Tensor shrunk = run1("Shrink", {Tensor::from<double>({1}, {x})});
  EXPECT_EQ(values<double>(shrunk)[0], x);
  const double h = 0.1;
  EXPECT_DOUBLE_EQ(values<double>(run1("HardSwish", {Tensor::from<double>({1}, {h})}))[0], h * (h / 6 + 0.5));
}

TEST(EvalOrtDepartures, MatMulOverAnEmptyInnerDimensionIsZero) {
  // ONNX Runtime's float16 MatMul and com.microsoft FusedMatMul leave such outputs uninitialized
  const Tensor y = run1("MatMul", {eval::cast_tensor(f32({3, 0}, {}), ElemType::Float16), eval::cast_tensor(f32({0}, {}), ElemType::Float16)});
  expect_near(eval::cast_tensor(y, ElemType::Float), {0, 0, 0});
  expect_near(run1("FusedMatMul", {f32({0, 2}, {}), f32({0, 3}, {})}, {Attribute::make_int(Symbol("transA"), 1)}, "com.microsoft"),
              {0, 0, 0, 0, 0, 0});
}

TEST(EvalOrtDepartures, ScatterNDMinPropagatesNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor y = run1("ScatterND", {f32({2}, {nan, 1}), i64({2, 1}, {0, 1}), f32({2}, {0, nan})},
                        {Attribute::make_string(Symbol("reduction"), "min")});
  EXPECT_TRUE(std::isnan(values<float>(y)[0]));
  EXPECT_TRUE(std::isnan(values<float>(y)[1]));
}

TEST(EvalOrtDepartures, NonZeroOfAScalarHasNoRow) {
  // output shape (rank, count): ONNX Runtime gives (1, count), as numpy's nonzero of a 0-d array
  EXPECT_EQ(run1("NonZero", {f32({}, {2})}).dims(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(run1("NonZero", {f32({}, {0})}).dims(), (std::vector<int64_t>{0, 0}));
}

TEST(EvalOrtDepartures, GeluTanhInDoubleUsesTheExactConstants) {
  // ONNX Runtime's float64 result uses sqrt(2/pi) and 0.044715 rounded to float32
  const double x = -1.6858612;
  const double exact = 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
  const Tensor y = run1("Gelu", {Tensor::from<double>({1}, {x})}, {Attribute::make_string(Symbol("approximate"), "tanh")},
                        "", 20);
  EXPECT_NEAR(values<double>(y)[0], exact, 1e-15);
}

TEST(EvalOrtDepartures, ReduceLogSumExpIsLogSumExpTruncatedOrNaN) {
  // ONNX Runtime: 3 for log(exp(4)), 7 for [8, 7], +inf for [+inf, NaN]
  EXPECT_EQ(values<int64_t>(run1("ReduceLogSumExp", {i64({1}, {4})}))[0], 4);
  EXPECT_EQ(values<int64_t>(run1("ReduceLogSumExp", {i64({2}, {8, 7})}))[0], 8);  // log(e^8 + e^7) = 8.31
  EXPECT_EQ(values<int64_t>(run1("ReduceLogSumExp", {i64({2}, {-2, -5})}))[0], -1);  // -1.95, toward zero
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(values<float>(run1("ReduceLogSumExp", {f32({2}, {inf, nan})}))[0]));
}

TEST(EvalOrtDepartures, ReduceMaxAndReduceMinPropagateNaN) {
  // ONNX Runtime drops the NaN of [3.99, NaN, 1.14]
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    EXPECT_TRUE(std::isnan(values<float>(run1(op, {f32({3}, {3.99f, nan, 1.14f})}))[0])) << op;
    EXPECT_TRUE(std::isnan(values<float>(run1(op, {f32({2}, {nan, 1})}))[0])) << op;
  }
}

TEST(EvalOrtDepartures, LogSoftmaxOfARowHoldingNaNIsNaN) {
  // ONNX Runtime's float64 kernel gives 46.05 for the 30.78 of this row
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor y = run1("LogSoftmax", {Tensor::from<double>({1, 4}, {30.78, -1.12, 0.23, nan})});
  for (double v : values<double>(y)) EXPECT_TRUE(std::isnan(v)) << v;
}

TEST(EvalOrtDepartures, MaxPoolWithDilationsAndSamePaddingIsCeilOfInputOverStride) {
  // kernel 3 dilated by 2 spans 5: SAME_UPPER pads 4 and keeps the 4 positions; ONNX Runtime pads 2, gives 2
  const Tensor y = run1("MaxPool", {f32({1, 1, 4}, {1, 5, 2, 3})},
                        {Attribute::make_ints(Symbol("kernel_shape"), {3}), Attribute::make_ints(Symbol("dilations"), {2}),
                         Attribute::make_string(Symbol("auto_pad"), "SAME_UPPER")});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 1, 4}));
  expect_near(y, {2, 5, 2, 5});
}

TEST(EvalOrtDepartures, GlobalMaxPoolOfMinusInfinityIsMinusInfinity) {
  // ONNX Runtime gives float's lowest, -3.4e38
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(values<float>(run1("GlobalMaxPool", {f32({1, 2, 1, 1}, {-1.5f, -inf})})), (std::vector<float>{-1.5f, -inf}));
}

TEST(EvalOrtDepartures, GemmOverAnEmptyInnerDimensionIsBetaTimesC) {
  // A (4, 0) x B (0, 1): alpha * A * B is zero, Y = beta * C; ONNX Runtime returns C
  const Tensor y = run1("Gemm", {f32({4, 0}, {}), f32({0, 1}, {}), f32({1}, {1.25f})},
                        {Attribute::make_float(Symbol("alpha"), 1.5f), Attribute::make_float(Symbol("beta"), 2.0f)});
  expect_near(y, {2.5f, 2.5f, 2.5f, 2.5f});
}

TEST(EvalOrtDepartures, ReducingAnEmptyOrScalarInputOverAnAxisOutOfRangeIsAnError) {
  // axes are in [-rank, rank - 1]; ONNX Runtime computes these
  EXPECT_THROW(run1("ReduceSum", {f32({4, 0, 3}, {}), i64({1}, {3})}), Error);
  EXPECT_THROW(run1("ReduceMin", {f32({}, {2}), i64({1}, {0})}), Error);
}

TEST(EvalDifferentialFixes, NaNPropagatesThroughSignReluCeluAndHardSigmoid) {
  // numpy's sign, maximum and minimum, which the reference implementation uses, give NaN for NaN; the
  // evaluator gave 0 (Sign, Relu, Celu) and 1 (HardSigmoid)
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"Sign", "Relu", "Celu", "HardSigmoid"}) {
    const auto y = values<float>(run1(op, {f32({3}, {nan, -2, 3})}));
    EXPECT_TRUE(std::isnan(y[0])) << op;
    EXPECT_FALSE(std::isnan(y[1]) || std::isnan(y[2])) << op;
  }
  EXPECT_TRUE(std::isnan(values<double>(run1("Relu", {Tensor::from<double>({1}, {std::nan("")})}))[0]));
  // float16 too (ONNX Runtime's float16 Sign departs: 0)
  const Tensor half_nan = eval::cast_tensor(f32({1}, {nan}), ElemType::Float16);
  EXPECT_TRUE(std::isnan(eval::element_as_double(run1("Sign", {half_nan}), 0)));
  EXPECT_EQ(values<float>(run1("Sign", {f32({3}, {-0.0f, 0.0f, -2})})), (std::vector<float>{0, 0, -1}));
}

TEST(EvalDifferentialFixes, MaxPoolAndGlobalMaxPoolPropagateNaN) {
  // as numpy's max over each window; the evaluator skipped NaN (std::max keeps its first operand)
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto pooled = run("MaxPool", {f32({1, 1, 4}, {-3, nan, 1, 2})}, {Attribute::make_ints(Symbol("kernel_shape"), {2})}, 2);
  const auto y = values<float>(pooled[0]);
  ASSERT_EQ(y.size(), 3u);
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
  EXPECT_EQ(y[2], 2);
  EXPECT_EQ(values<int64_t>(pooled[1]), (std::vector<int64_t>{1, 1, 3}));  // where the NaN is
  EXPECT_TRUE(std::isnan(values<float>(run1("GlobalMaxPool", {f32({1, 1, 3}, {2, nan, 1})}))[0]));
}

TEST(EvalDifferentialFixes, ClipOfFloat16WithoutABoundStopsAtFloat16sLimits) {
  // an absent min is the type's lowest value: -65504 for float16 (clipping in float gave -inf)
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = eval::cast_tensor(f32({3}, {-inf, 1, inf}), ElemType::Float16);
  const Tensor hi = eval::cast_tensor(f32({}, {-1.25f}), ElemType::Float16);
  const Tensor y = run1("Clip", {x, std::nullopt, hi});
  EXPECT_EQ(y.type(), ElemType::Float16);
  expect_near(eval::cast_tensor(y, ElemType::Float), {-65504, -1.25f, -1.25f});
  expect_near(eval::cast_tensor(run1("Clip", {x}), ElemType::Float), {-65504, 1, 65504});
}

TEST(EvalDifferentialFixes, PadCroppingMoreThanTheDimensionIsAnError) {
  // pads -1 and -1 on an axis of size 1: a negative size used to reach std::vector (length_error)
  EXPECT_THROW(run1("Pad", {f32({1, 1}, {2}), i64({4}, {-1, -1, 3, -1})}), Error);
  EXPECT_EQ(run1("Pad", {f32({1, 2}, {2, 3}), i64({4}, {0, -1, 0, -1})}).dims(), (std::vector<int64_t>{1, 0}));
}

// ---- normalizations against their definitions and ONNX Runtime 1.30 ----------------------------------

namespace {

using xexp::testing::NamedTensors;

// A model of one normalization node, named "norm", reading graph inputs X, scale (and B when `bias`);
// its outputs have the types `out_types` lists.
ir::Model norm_model(const char* op, const char* domain, int64_t opset, ElemType x_type, ElemType scale_type,
                     std::vector<Attribute> attrs, std::vector<ElemType> out_types, bool bias = false) {
  ir::Model m;
  m.opsets.push_back({"", opset, {}});
  if (*domain) m.opsets.push_back({domain, 1, {}});
  ir::Graph& g = *m.graph;
  std::vector<ir::ValueId> inputs{g.add_input("X", x_type, std::nullopt),
                                  g.add_input("scale", scale_type, std::nullopt)};
  if (bias) inputs.push_back(g.add_input("B", scale_type, std::nullopt));
  std::vector<ir::ValueId> outputs;
  for (std::size_t k = 0; k < out_types.size(); ++k) {
    outputs.push_back(g.add_value("out" + std::to_string(k)));
    g.value(outputs.back()).elem = out_types[k];
  }
  g.add_node(Symbol(op), inputs, outputs, std::move(attrs), "norm", Symbol(domain));
  for (ir::ValueId out : outputs) g.add_output(out);
  return m;
}
// Deterministic values of `type` in about [-2, 2] (scales in about [0.5, 1.5] when `positive`).
Tensor wavy(ElemType type, std::vector<int64_t> dims, bool positive = false) {
  std::vector<float> v(static_cast<std::size_t>(dims_element_count(dims)));
  for (std::size_t k = 0; k < v.size(); ++k)
    v[k] = positive ? 1 + 0.5f * std::cos(1.3f * static_cast<float>(k))
                    : 2 * std::sin(0.7f * static_cast<float>(k) + 0.3f);
  return eval::cast_tensor(f32(std::move(dims), v), type);
}
// The model's outputs from the evaluator and from ONNX Runtime, by name.
std::pair<NamedTensors, NamedTensors> evaluator_and_onnxruntime(const ir::Model& m,
                                                                const NamedTensors& feeds) {
  xexp::testing::TempDir dir;
  const std::string path = (dir.path() / "norm.onnx").string();
  save_model(m, path);
  const eval::Evaluator evaluator(m);
  const std::vector<Tensor> values = evaluator.run(feeds);
  NamedTensors ours;
  for (std::size_t k = 0; k < values.size(); ++k) ours.emplace_back(evaluator.output_names()[k], values[k]);
  return {ours, xexp::testing::run_onnxruntime(path, feeds)};
}

}  // namespace

// float: both compute in float and agree to rounding. float16: the function bodies round the normalized
// value to float16 before scaling (and shifting), ONNX Runtime's kernels scale in float and round once,
// so the two differ by float16 roundings (relative 2^-11 each), no more. ONNX Runtime 1.30 registers
// SimplifiedLayerNormalization in the default domain only, not in com.microsoft.
TEST(EvalNormalizationVsOrt, RMSNormalizationLayerNormalizationAndSimplified) {
  const std::vector<int64_t> dims{2, 3, 8};
  for (ElemType t : {ElemType::Float, ElemType::Float16}) {
    SCOPED_TRACE(elem_type_name(t));
    const double tol = t == ElemType::Float ? 1e-5 : 2e-3;
    const NamedTensors feeds{{"X", wavy(t, dims)}, {"scale", wavy(t, {8}, true)}};
    const NamedTensors ln_feeds{feeds[0], feeds[1], {"B", wavy(t, {8})}};
    const NamedTensors over_two{{"X", feeds[0].second}, {"scale", wavy(t, {3, 8}, true)}};
    const auto axis = [](int64_t a) { return std::vector<Attribute>{Attribute::make_int("axis", a)}; };
    const auto expect_agree = [&](const ir::Model& m, const NamedTensors& f) {
      SCOPED_TRACE(m.graph->node(0).op_type.str() + " in domain '" + m.graph->node(0).domain.str() + "'");
      const auto [ours, ort] = evaluator_and_onnxruntime(m, f);
      xexp::testing::expect_all_close(ours, ort, tol, tol);
    };
    expect_agree(norm_model("RMSNormalization", "", 23, t, t, {}, {t}), feeds);
    expect_agree(norm_model("RMSNormalization", "", 23, t, t, axis(-2), {t}), over_two);
    expect_agree(norm_model("LayerNormalization", "", 17, t, t, {}, {t, ElemType::Float, ElemType::Float}, true),
                 ln_feeds);
    expect_agree(norm_model("SimplifiedLayerNormalization", "", 18, t, t, {}, {t, ElemType::Float}), feeds);
  }
}

// Where the float16 results differ: X = (0.25, 1) normalizes 0.25 to 0.35355 (float16 0.35352), and
// 0.35352 * 1.1406 rounds to 0.39136 where 0.35355 * 1.1406 rounds to 0.39111 (ONNX Runtime).
TEST(EvalOrtDepartures, Float16RMSNormalizationRoundsTheNormalizedValueBeforeScaling) {
  const ElemType h = ElemType::Float16;
  const NamedTensors feeds{{"X", eval::cast_tensor(f32({1, 2}, {0.25f, 1}), h)},
                           {"scale", eval::cast_tensor(f32({2}, {1.140625f, 1}), h)}};
  const auto [ours, ort] =
      evaluator_and_onnxruntime(norm_model("RMSNormalization", "", 23, h, h, {}, {h}), feeds);
  EXPECT_EQ(eval::cast_tensor(ours[0].second, ElemType::Float).data<float>()[0], 0.391357421875f);
  EXPECT_EQ(eval::cast_tensor(ort[0].second, ElemType::Float).data<float>()[0], 0.39111328125f);
}

// stash_type 1 (the default) computes stage one in float whatever X's type: a double X is rounded to
// float, normalized in float, and the result cast back to double. ONNX Runtime ignores stash_type and
// computes a double X in double, which the evaluator gives for stash_type 11 only.
TEST(EvalOrtDepartures, DoubleNormalizationsComputeInTheStashType) {
  const ElemType d = ElemType::Double;
  const NamedTensors feeds{{"X", Tensor::from<double>({1, 2}, {0.1, 0.7})},
                           {"scale", Tensor::from<double>({2}, {1.0, 3.0})}};
  const auto [ours, ort] =
      evaluator_and_onnxruntime(norm_model("RMSNormalization", "", 23, d, d, {}, {d}), feeds);
  const float x0 = 0.1f, x1 = 0.7f;
  const float rms = std::sqrt((x0 * x0 + x1 * x1) / 2 + 1e-5f);
  EXPECT_EQ(values<double>(ours[0].second), (std::vector<double>{double(x0 / rms), double(x1 / rms) * 3}));
  const auto in_double = run1("RMSNormalization", {feeds[0].second, feeds[1].second},
                              {Attribute::make_int("stash_type", static_cast<int64_t>(d))}, "", 23);
  const double rms64 = std::sqrt((0.1 * 0.1 + 0.7 * 0.7) / 2 + double(1e-5f));
  xexp::testing::expect_close(in_double, Tensor::from<double>({1, 2}, {0.1 / rms64, 0.7 / rms64 * 3}), 1e-15,
                        1e-15);
  xexp::testing::expect_close(ort[0].second, in_double, 1e-15, 1e-15);
  EXPECT_NE(values<double>(ours[0].second), values<double>(in_double));
  // LayerNormalization's stage one is in float too: within float's precision of ONNX Runtime's double
  const NamedTensors ln_feeds{feeds[0], feeds[1], {"B", Tensor::from<double>({2}, {0.5, -0.5})}};
  const auto [ln, ln_ort] = evaluator_and_onnxruntime(
      norm_model("LayerNormalization", "", 17, d, d, {}, {d, ElemType::Float, ElemType::Float}, true), ln_feeds);
  xexp::testing::expect_all_close(ln, ln_ort, 1e-6, 1e-6);
  EXPECT_NE(values<double>(ln[0].second), values<double>(ln_ort[0].second));
}

// Y has scale's type (V), which RMSNormalization-23 lets differ from X's (T); ONNX Runtime 1.30 has no
// kernel for different types.
TEST(EvalNormalization, RMSNormalizationOutputHasTheScaleType) {
  const Tensor x = f32({1, 2}, {3, 4});
  const Tensor y = run1("RMSNormalization", {x, eval::cast_tensor(f32({2}, {1, 2}), ElemType::Float16)},
                        {Attribute::make_float("epsilon", 0.0f)}, "", 23);
  EXPECT_EQ(y.type(), ElemType::Float16);
  const float rms = std::sqrt(12.5f);
  expect_near(eval::cast_tensor(y, ElemType::Float), {3 / rms, 8 / rms}, 1e-3f);
  EXPECT_EQ(run1("RMSNormalization", {eval::cast_tensor(x, ElemType::Float16), f32({2}, {1, 2})}, {}, "", 23)
                .type(),
            ElemType::Float);
}

TEST(EvalNormalization, AnAxisOutOfRangeIsAnErrorNamingTheNode) {
  const ElemType f = ElemType::Float;
  for (const char* op : {"RMSNormalization", "LayerNormalization", "SimplifiedLayerNormalization"}) {
    SCOPED_TRACE(op);
    const ir::Model m = norm_model(op, "", 23, f, f, {Attribute::make_int("axis", 3)}, {f});
    try {
      eval::Evaluator(m).run({{"X", f32({2, 2}, {1, 2, 3, 4})}, {"scale", f32({2}, {1, 1})}});
      ADD_FAILURE() << "expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.node(), "norm");
      EXPECT_NE(std::string(e.what()).find("axis 3 is out of range for rank 2"), std::string::npos)
          << e.what();
    }
  }
}

// ---- ONNX Attention (opset 23) against ONNX Runtime 1.30 ---------------------------------------------

namespace {

// One Attention node named "attention" reading the feeds (an empty name omits an input), with
// `outputs` outputs.
ir::Model attention_model(const NamedTensors& feeds, const std::vector<std::string>& inputs,
                          std::vector<Attribute> attrs, std::size_t outputs = 1) {
  ir::Model m;
  m.opsets.push_back({"", 23, {}});
  ir::Graph& g = *m.graph;
  std::vector<ir::ValueId> ins;
  for (const std::string& name : inputs) {
    if (name.empty()) {
      ins.push_back(ir::kNone);
      continue;
    }
    for (const auto& [feed, t] : feeds)
      if (feed == name) ins.push_back(g.add_input(name, t.type(), t.shape()));
  }
  std::vector<ir::ValueId> outs;
  for (std::size_t k = 0; k < outputs; ++k) {
    outs.push_back(g.add_value("out" + std::to_string(k)));
    g.value(outs.back()).elem = feeds.front().second.type();
  }
  g.add_node(Symbol("Attention"), ins, outs, std::move(attrs), "attention");
  for (ir::ValueId out : outs) g.add_output(out);
  return m;
}
Tensor flags(std::vector<int64_t> dims, const std::function<bool(int64_t)>& f) {
  std::vector<bool> v;
  for (int64_t k = 0; k < dims_element_count(dims); ++k) v.push_back(f(k));
  return Tensor::from<bool>(std::move(dims), v);
}

}  // namespace

TEST(EvalAttentionVsOrt, FourDThreeDMasksCausalPastAndGroupedHeads) {
  const ElemType f = ElemType::Float;
  const auto heads = [](int64_t q, int64_t kv) {
    return std::vector<Attribute>{Attribute::make_int("q_num_heads", q),
                                  Attribute::make_int("kv_num_heads", kv)};
  };
  const auto with = [](std::vector<Attribute> a, Attribute more) {
    a.push_back(std::move(more));
    return a;
  };
  const NamedTensors four_d{
      {"Q", wavy(f, {2, 3, 4, 8})}, {"K", wavy(f, {2, 3, 6, 8}, true)}, {"V", wavy(f, {2, 3, 6, 5})}};
  // 3-D: 3 heads of 4 for Q and K, of 2 for V; the mask keeps at least one key of every row.
  NamedTensors three_d{{"Q", wavy(f, {2, 4, 12})},
                       {"K", wavy(f, {2, 6, 12}, true)},
                       {"V", wavy(f, {2, 6, 6})},
                       {"M", wavy(f, {1, 1, 4, 6})}};
  NamedTensors bool_mask = three_d;
  bool_mask[3].second = flags({2, 1, 4, 6}, [](int64_t k) { return k % 6 == 0 || k % 4 != 1; });
  NamedTensors past = four_d;
  past.emplace_back("PK", wavy(f, {2, 3, 2, 8}));
  past.emplace_back("PV", wavy(f, {2, 3, 2, 5}, true));
  const NamedTensors grouped{
      {"Q", wavy(f, {1, 4, 3, 8})}, {"K", wavy(f, {1, 2, 3, 8}, true)}, {"V", wavy(f, {1, 2, 3, 8})}};
  const auto expect_agree = [&](const ir::Model& m, const NamedTensors& feeds) {
    const auto [ours, ort] = evaluator_and_onnxruntime(m, feeds);
    xexp::testing::expect_all_close(ours, ort, 1e-5, 1e-5);
  };
  expect_agree(attention_model(four_d, {"Q", "K", "V"}, {}), four_d);
  expect_agree(attention_model(four_d, {"Q", "K", "V"}, {Attribute::make_float("scale", 0.3f)}), four_d);
  expect_agree(attention_model(three_d, {"Q", "K", "V", "M"}, heads(3, 3)), three_d);
  expect_agree(attention_model(bool_mask, {"Q", "K", "V", "M"}, heads(3, 3)), bool_mask);
  // A causal 4 x 6: query i reads keys 0..i (ONNX Runtime aligns it at the top left without a past).
  expect_agree(attention_model(four_d, {"Q", "K", "V"}, {Attribute::make_int("is_causal", 1)}), four_d);
  expect_agree(
      attention_model(three_d, {"Q", "K", "V", "M"}, with(heads(3, 3), Attribute::make_int("is_causal", 1))),
      three_d);
  // After 2 past positions, query i reads keys 0..i + 2; present_key and present_value, then the scores.
  expect_agree(
      attention_model(past, {"Q", "K", "V", "", "PK", "PV"}, {Attribute::make_int("is_causal", 1)}, 4), past);
  expect_agree(attention_model(grouped, {"Q", "K", "V"}, {}), grouped);
}

// A query whose keys are all masked, by a boolean or an additive -inf mask, gets 0 (the opset-23 errata,
// as torch's SDPA), not the NaN of a Softmax over -inf.
TEST(EvalAttentionVsOrt, AQueryWhoseKeysAreAllMaskedGetsZero) {
  const ElemType f = ElemType::Float;
  const auto hidden = [](int64_t k) { return k / 6 == 1; };  // batch 0, query 1
  NamedTensors by_flags{{"Q", wavy(f, {2, 4, 12})},
                        {"K", wavy(f, {2, 6, 12}, true)},
                        {"V", wavy(f, {2, 6, 6})},
                        {"M", flags({2, 1, 4, 6}, [&](int64_t k) { return !hidden(k); })}};
  NamedTensors additive = by_flags;
  std::vector<float> bias(2 * 4 * 6, 0.f);
  for (int64_t k = 0; k < 2 * 4 * 6; ++k)
    if (hidden(k)) bias[k] = -std::numeric_limits<float>::infinity();
  additive[3].second = Tensor::from<float>({2, 1, 4, 6}, bias);
  for (const NamedTensors& feeds : {by_flags, additive}) {
    const ir::Model m =
        attention_model(feeds, {"Q", "K", "V", "M"},
                        {Attribute::make_int("q_num_heads", 3), Attribute::make_int("kv_num_heads", 3)});
    const auto [ours, ort] = evaluator_and_onnxruntime(m, feeds);
    xexp::testing::expect_all_close(ours, ort, 1e-5, 1e-5);
    const auto y = ours.at(0).second.data<float>();  // (2, 4, 6): query 1 of batch 0 is y[6..11]
    for (int64_t d = 0; d < 6; ++d) EXPECT_EQ(y[6 + d], 0.f) << d;
  }
}

TEST(EvalAttention, RefusesSoftcapAndMixedRanksNamingTheNode) {
  const ElemType f = ElemType::Float;
  const NamedTensors four_d{
      {"Q", wavy(f, {1, 2, 3, 4})}, {"K", wavy(f, {1, 2, 3, 4})}, {"V", wavy(f, {1, 2, 3, 4})}};
  NamedTensors mixed = four_d;
  mixed[0].second = wavy(f, {1, 3, 8});
  for (const auto& [feeds, attrs, cause] :
       std::vector<std::tuple<NamedTensors, std::vector<Attribute>, std::string>>{
           {four_d, {Attribute::make_float("softcap", 2.f)}, "softcap is not supported"},
           {four_d, {Attribute::make_int("qk_matmul_output_mode", 1)}, "qk_matmul_output_mode"},
           {mixed, {}, "are not all 3-D or all 4-D"}}) {
    try {
      eval::Evaluator(attention_model(feeds, {"Q", "K", "V"}, attrs)).run(feeds);
      ADD_FAILURE() << "expected an error: " << cause;
    } catch (const Error& e) {
      EXPECT_EQ(e.node(), "attention");
      EXPECT_NE(std::string(e.what()).find(cause), std::string::npos) << e.what();
    }
  }
}
