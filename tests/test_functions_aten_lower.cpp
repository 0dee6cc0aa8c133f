// aten::lower (include/xexp/aten/) on aten-domain models written here the way xexp.to_onnx's capture
// writes them (python/xexp/_capture.py; tests/python/test_to_onnx.py exports real torch models): the
// ONNX nodes each aten call becomes, the outputs against ONNX Runtime, dtypes settled by the trace,
// modules as shared local functions, and bad input refused with one error naming every cause.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "support/ort.hpp"
#include "support/compare.hpp"
#include "support/rewrite_helpers.hpp"
#include "support/aten_graphs.hpp"
#include "support/temp_dir.hpp"
#include "support/torch_records.hpp"
#include "xexp/aten/lower.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/run.hpp"

using namespace xexp;

namespace {

using xexp::testing::AtenGraph;

ir::Attribute int_attr(const char* name, int64_t v) { return ir::Attribute::make_int(Symbol(name), v); }
ir::Attribute float_attr(const char* name, float v) { return ir::Attribute::make_float(Symbol(name), v); }

// y = softmax(relu(x @ w.T + b), -1) * 2, and a call nothing reads (an op without converter).
ir::Model small_mlp() {
  AtenGraph a;
  const ir::ValueId x = a.input("x", ElemType::Float, Shape{2, 4});
  const ir::ValueId w = a.g.add_initializer("fc.weight", Tensor::from<float>({3, 4}, {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f,
                                                                                        0.7f, -0.8f, 0.9f, 1.0f, -1.1f, 0.2f}));
  const ir::ValueId b = a.g.add_initializer("fc.bias", Tensor::from<float>({3}, {0.5f, -0.5f, 0.25f}));
  const ir::ValueId wt = a.call("t", {w}, "t", ElemType::Float, Shape{4, 3});
  const ir::ValueId mm = a.call("addmm", {b, x, wt}, "addmm", ElemType::Float, Shape{2, 3},
                                {int_attr("beta", 1), int_attr("alpha", 1)});
  const ir::ValueId r = a.call("relu", {mm}, "relu", ElemType::Float, Shape{2, 3});
  a.call("erfinv", {r}, "unused", ElemType::Float, Shape{2, 3});
  const ir::ValueId s = a.call("_softmax", {r}, "softmax", ElemType::Float, Shape{2, 3},
                               {int_attr("dim", -1), int_attr("half_to_float", 0)});
  const ir::ValueId y = a.call("mul", {s, ir::kNone}, "mul", ElemType::Float, Shape{2, 3}, {float_attr("other", 2.0f)});
  a.g.add_output(y);
  return std::move(a.model);
}

}  // namespace

TEST(AtenLower, EachCallBecomesItsOnnxNodesAndRunsAsOnnxRuntimeRunsIt) {
  const ir::Model aten = small_mlp();
  ir::Model lowered = aten::lower(aten);
  // The dead erfinv needs no converter; the output is named as torch's exporters name it.
  EXPECT_EQ(xexp::test::op_types(*lowered.graph),
            (xexp::test::OpList{"Transpose", "Gemm", "Relu", "Softmax", "Mul", "Identity"}));
  EXPECT_EQ(lowered.graph->value(lowered.graph->outputs()[0]).name, "output_0");
  EXPECT_EQ(lowered.opsets.size(), 1u);
  EXPECT_TRUE(aten.graph->has_value("unused"));  // the input is left alone

  const Tensor x = Tensor::from<float>({2, 4}, {1, 2, 3, 4, -1, 0.5f, -2, 0});
  xexp::testing::TempDir dir;
  const std::string path = (dir.path() / "lowered.onnx").string();
  save_model(lowered, path);
  const xexp::testing::NamedTensors ort = xexp::testing::run_onnxruntime(path, {{"x", x}});
  const std::vector<Tensor> ours = tools::run_model(lowered, {{"x", x}});
  xexp::testing::expect_close(ours[0], ort[0].second, 1e-6, 1e-6);
  // Each row of a softmax times two sums to two.
  const auto values = ours[0].data<float>();
  EXPECT_NEAR(values[0] + values[1] + values[2], 2.0, 1e-5);
}

TEST(AtenLower, TheTracedDtypeSettlesTypePromotion) {
  // int64 ids + 0.5 is a float tensor in torch: the lowering computes in float.
  AtenGraph a;
  const ir::ValueId ids = a.input("ids", ElemType::Int64, Shape{3});
  a.g.add_output(a.call("add", {ids, ir::kNone}, "add", ElemType::Float, Shape{3}, {float_attr("other", 0.5f)}));
  const ir::Model lowered = aten::lower(a.model);
  EXPECT_EQ(xexp::test::op_types(*lowered.graph), (xexp::test::OpList{"Cast", "Add", "Identity"}));
  const std::vector<Tensor> out = tools::run_model(lowered, {{"ids", Tensor::from<int64_t>({3}, {1, 2, 3})}});
  xexp::testing::expect_close(out[0], Tensor::from<float>({3}, {1.5f, 2.5f, 3.5f}));
}

TEST(AtenLower, ModulesBecomeLocalFunctionsLayersOfOneClassShareOneAndWeightsAreInputs) {
  const ir::Model captured = xexp::testing::two_scale_layers();
  const ir::Model flat = aten::lower(captured);
  const ir::Model modules = aten::lower(captured, {.module_functions = true});
  EXPECT_EQ(xexp::test::op_types(*modules.graph),
            (xexp::test::OpList{"aten_local_function.__main__.Scale", "aten_local_function.__main__.Scale", "Identity"}));
  ASSERT_EQ(modules.functions.size(), 1u);
  EXPECT_EQ(xexp::test::op_types(*modules.functions[0].body), (xexp::test::OpList{"Mul", "Relu"}));
  EXPECT_EQ(modules.functions[0].body->inputs().size(), 2u);  // the activation and the layer's weights
  const Tensor x = Tensor::from<float>({2, 4}, {1, -2, 3, 4, -1, 0.5f, -2, 0});
  xexp::testing::expect_close(tools::run_model(modules, {{"x", x}})[0], tools::run_model(flat, {{"x", x}})[0]);
  // A class the selection leaves out stays inline.
  const ir::Model none = aten::lower(captured, {.module_functions = true, .module_classes = {"__main__.Other"}});
  EXPECT_TRUE(none.functions.empty());
}

TEST(AtenLower, EveryCallWithoutConverterIsListedWithItsModuleInOneError) {
  AtenGraph a;
  const ir::ValueId x = a.input("x", ElemType::Float, Shape{2});
  const ir::ValueId e = a.call("erfinv", {x}, "erfinv", ElemType::Float, Shape{2});
  xexp::testing::record_torch_module(a.last(), "['', 'inner', 'erfinv']",
                                     "['__main__.Net', '__main__.Inner', 'aten.erfinv.default']");
  const ir::ValueId r = a.call("relu", {e}, "relu", ElemType::Float, Shape{2});
  a.g.add_output(a.call("lgamma", {r}, "lgamma", ElemType::Float, Shape{2}));
  try {
    aten::lower(a.model);
    FAIL() << "lowered a model holding ops without converter";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()),
              "2 aten calls have no converter:\n"
              "  aten::erfinv (node 'erfinv' in module 'inner' (__main__.Inner))\n"
              "  aten::lgamma (node 'lgamma')");
  }
}

TEST(AtenLower, AConverterContradictingTheTraceIsAnErrorNamingTheNode) {
  AtenGraph a;
  const ir::ValueId x = a.input("x", ElemType::Float, Shape{2, 3});
  a.g.add_output(a.call("relu", {x}, "relu", ElemType::Float, Shape{3, 2}));  // a wrong trace
  try {
    aten::lower(a.model);
    FAIL() << "accepted a shape the trace contradicts";
  } catch (const Error& error) {
    EXPECT_EQ(error.node(), "relu");
    EXPECT_NE(std::string(error.what()).find("aten::relu: cannot set shape"), std::string::npos) << error.what();
  }
  EXPECT_THROW(aten::lower(ir::Model{}), Error);  // not an aten model

  AtenGraph untyped;  // a file saved without the trace's value_info
  const ir::ValueId y = untyped.input("y", ElemType::Float, Shape{2});
  untyped.g.add_output(untyped.call("mul", {y, y}, "square", ElemType::Undefined, Shape{2}));
  EXPECT_THROW(
      {
        try {
          aten::lower(untyped.model);
        } catch (const Error& e) {
          EXPECT_EQ(std::string(e.what()), "node 'square': aten::mul: the trace gives no dtype for output 'square'");
          throw;
        }
      },
      Error);
}

TEST(AtenLower, ALinearLayerMakeFxFlattenedTo2DIsOneProductOverTheLeadingAxes) {
  // view(x, [6, 4]) -> addmm(b, ., t(w)) -> view(., [2, 3, 5]): torch 1.13's nn.Linear on a 3-D input.
  AtenGraph a;
  const ir::ValueId x = a.input("x", ElemType::Float, Shape{2, 3, 4});
  std::vector<float> w(20);
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = static_cast<float>(k % 7) * 0.25f - 0.5f;
  const ir::ValueId weight = a.g.add_initializer("fc.weight", Tensor::from<float>({5, 4}, w));
  const ir::ValueId bias = a.g.add_initializer("fc.bias", Tensor::from<float>({5}, {1, 2, 3, 4, 5}));
  const ir::ValueId flat = a.call("view", {x}, "view", ElemType::Float, Shape{6, 4}, {ir::Attribute::make_ints(Symbol("size"), {6, 4})});
  const ir::ValueId wt = a.call("t", {weight}, "t", ElemType::Float, Shape{4, 5});
  const ir::ValueId mm = a.call("addmm", {bias, flat, wt}, "addmm", ElemType::Float, Shape{6, 5});
  a.g.add_output(a.call("view", {mm}, "view_1", ElemType::Float, Shape{2, 3, 5}, {ir::Attribute::make_ints(Symbol("size"), {2, 3, 5})}));
  const ir::Model lowered = aten::lower(a.model);
  EXPECT_EQ(xexp::test::op_types(*lowered.graph), (xexp::test::OpList{"Transpose", "MatMul", "Add", "Identity"}));
  EXPECT_EQ(xexp::test::op_types(*a.model.graph), (xexp::test::OpList{"aten.view", "aten.t", "aten.addmm", "aten.view"}));

  std::vector<float> values(24);
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(k) * 0.1f - 1.0f;
  const Tensor input = Tensor::from<float>({2, 3, 4}, values);
  xexp::testing::TempDir dir;
  const std::string path = (dir.path() / "linear.onnx").string();
  save_model(lowered, path);
  xexp::testing::expect_close(tools::run_model(lowered, {{"x", input}})[0],
                              xexp::testing::run_onnxruntime(path, {{"x", input}})[0].second, 1e-6, 1e-6);
}

// q = nn.Linear(4, 5)(x) on x (batch, 3, 4), then q @ q.transpose(1, 2), as torch 1.13's symbolic make_fx
// traces them: views to 2-D and back around mm, expands and views around bmm, their sizes computed. Both
// products come back as one MatMul each, the shape arithmetic left unread.
TEST(AtenLower, ProductsMakeFxFlattenedAreOneMatMulOverDynamicLeadingAxesToo) {
  AtenGraph a;
  const Dim batch = Dim::symbolic("batch");
  const ir::ValueId x = a.input("x", ElemType::Float, Shape{batch, 3, 4});
  std::vector<float> w(20);
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = static_cast<float>(k % 7) * 0.25f - 0.5f;
  const ir::ValueId weight = a.g.add_initializer("fc.weight", Tensor::from<float>({5, 4}, w));
  const ir::ValueId b = a.call("sym_size", {x}, "sym_size", ElemType::Int64, Shape{}, {int_attr("dim", 0)});
  const ir::ValueId rows = a.call("sym_mul", {b, ir::kNone}, "rows", ElemType::Int64, Shape{}, {int_attr("other", 3)});
  const auto sizes = [&](std::vector<ir::ValueId> given, std::vector<int64_t> values, const std::string& name) {
    const auto n = static_cast<int64_t>(values.size());
    return a.call("sym_list", std::move(given), name, ElemType::Int64, Shape{n},
                  {ir::Attribute::make_ints(Symbol("values"), std::move(values))});
  };
  const auto with_size = [&](const char* op, ir::ValueId v, ir::ValueId size, const std::string& name, Shape shape) {
    return a.call(op, {v, size}, name, ElemType::Float, std::move(shape),
                  {ir::Attribute::make_strings(Symbol("dynamic_args"), {"size"})});
  };
  const ir::ValueId flat = with_size("view", x, sizes({rows, ir::kNone}, {0, 4}, "flat_size"), "flat", Shape{Dim(), 4});
  const ir::ValueId mm = a.call("mm", {flat, a.call("t", {weight}, "t", ElemType::Float, Shape{4, 5})}, "mm",
                                ElemType::Float, Shape{Dim(), 5});
  const ir::ValueId q_size = sizes({b, ir::kNone, ir::kNone}, {0, 3, 5}, "q_size");
  const ir::ValueId q = with_size("view", mm, q_size, "q", Shape{batch, 3, 5});
  const ir::ValueId k = a.call("transpose", {q}, "k", ElemType::Float, Shape{batch, 5, 3}, {int_attr("dim0", 1), int_attr("dim1", 2)});
  const ir::ValueId k_size = sizes({b, ir::kNone, ir::kNone}, {0, 5, 3}, "k_size");
  const ir::ValueId q3 = with_size("view", with_size("expand", q, q_size, "eq", Shape{batch, 3, 5}), q_size, "q3", Shape{batch, 3, 5});
  const ir::ValueId k3 = with_size("view", a.call("clone", {with_size("expand", k, k_size, "ek", Shape{batch, 5, 3})}, "ck",
                                                  ElemType::Float, Shape{batch, 5, 3}),
                                   k_size, "k3", Shape{batch, 5, 3});
  const ir::ValueId scores = a.call("bmm", {q3, k3}, "bmm", ElemType::Float, Shape{batch, 3, 3});
  a.g.add_output(with_size("view", scores, sizes({b, ir::kNone, ir::kNone}, {0, 3, 3}, "s_size"), "s", Shape{batch, 3, 3}));
  const ir::Model lowered = aten::lower(a.model);
  EXPECT_EQ(xexp::test::op_types(*lowered.graph),
            (xexp::test::OpList{"Transpose", "MatMul", "Transpose", "MatMul", "Identity"}));
  xexp::testing::TempDir dir;
  const std::string path = (dir.path() / "products.onnx").string();
  save_model(lowered, path);
  for (const int64_t n : {1, 2}) {
    std::vector<float> values(static_cast<std::size_t>(n * 12));
    for (std::size_t j = 0; j < values.size(); ++j) values[j] = static_cast<float>(j % 5) * 0.3f - 0.6f;
    const Tensor input = Tensor::from<float>({n, 3, 4}, values);
    const Tensor ours = tools::run_model(lowered, {{"x", input}})[0];
    EXPECT_EQ(ours.dims(), (std::vector<int64_t>{n, 3, 3}));
    xexp::testing::expect_close(ours, xexp::testing::run_onnxruntime(path, {{"x", input}})[0].second, 1e-5, 1e-5);
  }
}

// x.view(x.shape[0] * 2, 2) with a dynamic batch, as the capture writes it: the size as int64 scalars
// (sym_size, sym_mul), the shape gathered by sym_list, given to view as an input named in dynamic_args.
TEST(AtenLower, ASizeComputedFromADynamicDimensionIsComputedInTheGraph) {
  AtenGraph a;
  const ir::ValueId x = a.input("x", ElemType::Float, Shape{Dim::symbolic("batch"), 4});
  const ir::ValueId size = a.call("sym_size", {x}, "sym_size", ElemType::Int64, Shape{}, {int_attr("dim", 0)});
  const ir::ValueId twice = a.call("sym_mul", {size, ir::kNone}, "mul", ElemType::Int64, Shape{}, {int_attr("other", 2)});
  const ir::ValueId shape = a.call("sym_list", {twice, ir::kNone}, "view_size", ElemType::Int64, Shape{2},
                                   {ir::Attribute::make_ints(Symbol("values"), {0, 2})});
  a.g.add_output(a.call("view", {x, shape}, "view", ElemType::Float, Shape{Dim(), 2},
                        {ir::Attribute::make_strings(Symbol("dynamic_args"), {"size"})}));
  const ir::Model lowered = aten::lower(a.model);
  EXPECT_EQ(lowered.graph->value(lowered.graph->inputs()[0]).shape, (Shape{Dim::symbolic("batch"), 4}));
  for (const int64_t batch : {1, 3}) {
    std::vector<float> values(static_cast<std::size_t>(batch * 4));
    for (std::size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(k);
    const std::vector<Tensor> out = tools::run_model(lowered, {{"x", Tensor::from<float>({batch, 4}, values)}});
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2 * batch, 2}));
    EXPECT_EQ(std::vector<float>(out[0].data<float>().begin(), out[0].data<float>().end()), values);
  }
}

TEST(AtenLower, AConverterReadingAComputedArgumentAsANumberNamesIt) {
  AtenGraph a;
  const ir::ValueId x = a.input("x", ElemType::Float, Shape{Dim::symbolic("batch"), 4});
  const ir::ValueId size = a.call("sym_size", {x}, "sym_size", ElemType::Int64, Shape{}, {int_attr("dim", 0)});
  a.g.add_output(a.call("unsqueeze", {x, size}, "unsqueeze", ElemType::Float, Shape{Dim(), Dim(), Dim()},
                        {ir::Attribute::make_strings(Symbol("dynamic_args"), {"dim"})}));
  try {
    aten::lower(a.model);
    FAIL() << "lowered an unsqueeze along a computed dimension";
  } catch (const Error& error) {
    EXPECT_EQ(error.cause(), "aten::unsqueeze: argument 'dim' is computed from a dynamic dimension: this converter needs it static");
  }
}
