// The rules on dynamic shape computations (ShapeBasedStaticReshape, ShapeBasedConstantShapeValue,
// ShapeBasedSameShapeValue) and the shape-value inference they read (infer/shape_ops.hpp): each model
// is written in ONNX's text syntax and typed as an exporter types it (ONNX's shape inference with data
// propagation, symbolic dimensions kept). For each rule: the exact ops and constants after, one negative
// test per condition, and the same numbers before and after (xexp's evaluator and ONNX Runtime, exactly:
// only shape computations change), with batch and seq of different sizes so that mixing them up fails.
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/shape_inference/implementation.h>

#include "support/rewrite_helpers.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/onnx/load.hpp"
#include "xexp/patterns/registry.hpp"
#include "xexp/patterns/shape_values.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::op_types;
using test::OpList;
using test::run_rules;

namespace {

// A graph in ONNX's text syntax (opset 18) as an exporter writes it: typed by ONNX's inference (value_info
// with symbolic dimensions) unless `typed` is false (torch writes no value_info), its Constant nodes
// made initializers as the optimizer's loading step does.
Model exported_model(const std::string& inputs, const std::string& outputs, const std::string& body,
                     bool typed = true) {
  const std::string text = "<ir_version: 8, opset_import: [\"\" : 18]>\ng (" + inputs + ") => (" + outputs +
                           ") {\n" + body + "}\n";
  ::onnx::ModelProto proto;
  const auto status = ::onnx::OnnxParser::Parse(proto, text.c_str());
  if (!status.IsOK()) throw Error("cannot parse the test model: " + status.ErrorMessage());
  if (typed) {
    ::onnx::ShapeInferenceOptions options;
    options.enable_data_propagation = true;
    ::onnx::shape_inference::InferShapes(proto, ::onnx::OpSchemaRegistry::Instance(), options);
  }
  Model m = model_from_proto(std::move(proto));
  constant_nodes_to_initializers(*m.graph);
  return m;
}

// batch and seq differ, so that a dimension taken from the wrong place gives other numbers or fails.
const xexp::testing::RandomFeedOptions kFeeds{.seed = 7, .symbols = {{"batch", 2}, {"seq", 3}}};

std::size_t applied(const rewrite::OptimizeStats& stats, const std::string& rule) {
  const rewrite::RuleStats* s = stats.find(rule);
  return s ? s->applied : 0;
}
const Node& only(const Graph& g, const std::string& op) {
  for (NodeId id : g.nodes())
    if (g.node(id).op_type.str() == op) return g.node(id);
  throw Error("no " + op + " node");
}
std::vector<int64_t> constant_input(const Graph& g, const Node& n, std::size_t slot) {
  const Tensor* t = rewrite::constant_tensor(g, n.inputs.at(slot));
  if (!t) throw Error("input " + std::to_string(slot) + " of " + n.op_type.str() + " is not a constant");
  return eval::as_int64s(*t);
}

// X[batch, seq, 64] reshaped to T, which `target` computes from Shape(X) (S), then Relu.
Model reshape_model(const std::string& target, const std::string& output,
                    const std::string& reshape_attributes = "") {
  return exported_model("float[batch,seq,64] X", "float[" + output + "] Y",
                        "  S = Shape(X)\n"
                        "  zero = Constant<value = int64[1] {0}>()\n"
                        "  one = Constant<value = int64[1] {1}>()\n"
                        "  B = Gather<axis=0>(S, zero)\n"
                        "  L = Gather<axis=0>(S, one)\n"
                        "  heads = Constant<value = int64[2] {4, 16}>()\n"
                        "  width = Constant<value = int64[1] {64}>()\n"
                        "  " +
                            target +
                            "\n"
                            "  R = Reshape" +
                            reshape_attributes +
                            "(X, T)\n"
                            "  Y = Relu(R)\n");
}

}  // namespace

// ---- shape values in inference ---------------------------------------------------------------------
TEST(InferShapeValues, ArithmeticEqualWhereAndRangeKeepSymbols) {
  Model m = exported_model("float[batch,seq] X", "int64[2] W, int64[1] D, int64[1] P, int64 N",
                           "  S = Shape(X)\n"
                           "  minus = Constant<value = int64[2] {-1, -1}>()\n"
                           "  ones = Constant<value = int64[2] {1, 1}>()\n"
                           "  E = Equal(S, minus)\n"
                           "  W = Where(E, ones, S)\n"
                           "  one = Constant<value = int64[1] {1}>()\n"
                           "  L = Gather<axis=0>(S, one)\n"
                           "  D = Sub(L, L)\n"
                           "  four = Constant<value = int64[1] {4}>()\n"
                           "  P = Mul(L, four)\n"
                           "  zero = Constant<value = int64 {0}>()\n"
                           "  step = Constant<value = int64 {1}>()\n"
                           "  N = Squeeze(L)\n"
                           "  R = Range(zero, N, step)\n"
                           "  F = Cast<to=1>(R)\n"
                           "  Z = Reshape(X, W)\n",
                           false);
  infer::infer_model_types(m);
  const Graph& g = *m.graph;
  // Reshape(X, Where(...)) kept both symbols: the Where gives back Shape(X).
  EXPECT_EQ(g.value(g.at("Z")).shape, (Shape{Dim::symbolic("batch"), Dim::symbolic("seq")}));
  EXPECT_EQ(g.value(g.at("F")).shape, (Shape{Dim::symbolic("seq")}));
  EXPECT_EQ(patterns::shape_value(g, g.at("E")), (Shape{0, 0}));
  EXPECT_EQ(patterns::shape_value(g, g.at("D")), (Shape{0}));
  EXPECT_EQ(patterns::shape_value(g, g.at("P")), (Shape{Dim::symbolic("seq*4")}));
  EXPECT_EQ(patterns::shape_value(g, g.at("W")), (Shape{Dim::symbolic("batch"), Dim::symbolic("seq")}));
}

// ---- ShapeBasedStaticReshape ---------------------------------------------------------------------
TEST(PatternShapeBasedStaticReshape, CopiesSymbolsWithZeroAndComputesTheRestWithMinusOne) {
  struct Case {
    std::string target, output;
    std::vector<int64_t> constant;
  };
  for (const Case& c : {Case{"T = Concat<axis=0>(B, L, heads)", "batch,seq,4,16", {0, 0, 4, 16}},
                        Case{"P = Mul(L, width)\n  T = Concat<axis=0>(B, P)", "batch,?", {0, -1}}}) {
    SCOPED_TRACE(c.target);
    Model m = reshape_model(c.target, c.output);
    run_rules(m, "ShapeBasedStaticReshape");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Reshape", "Relu"}));
    EXPECT_EQ(g.value(only(g, "Reshape").inputs[0]).name, "X");
    EXPECT_EQ(constant_input(g, only(g, "Reshape"), 1), c.constant);
  }
}

TEST(PatternShapeBasedStaticReshape, NotWithTwoDimensionsNeitherStaticNorInPlace) {
  Model m = reshape_model("T = Concat<axis=0>(L, B, width)",
                          "seq,batch,64");  // [seq, batch, 64]: two moved symbols
  run_rules(m, "ShapeBasedStaticReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Shape", "Gather", "Gather", "Concat", "Reshape", "Relu"}));
}

TEST(PatternShapeBasedStaticReshape, AllowZeroCannotCopyADimension) {
  Model m = reshape_model("T = Concat<axis=0>(B, L, heads)", "batch,seq,4,16", "<allowzero=1>");
  run_rules(m, "ShapeBasedStaticReshape");
  EXPECT_EQ(op_types(*m.graph), (OpList{"Shape", "Gather", "Gather", "Concat", "Reshape", "Relu"}));
}

TEST(PatternShapeBasedStaticReshape, NotWithAConstantShape) {
  Model m = reshape_model("T = Constant<value = int64[4] {0, 0, 4, 16}>()", "batch,seq,4,16");
  EXPECT_EQ(applied(run_rules(m, "ShapeBasedStaticReshape"), "ShapeBasedStaticReshape"), 0u);
}

TEST(PatternShapeBasedStaticReshape, NotWithAShapeGivenAsAGraphInput) {
  Model m =
      exported_model("float[batch,seq,64] X, int64[4] T", "float[batch,seq,4,16] R", "  R = Reshape(X, T)\n");
  EXPECT_EQ(applied(run_rules(m, "ShapeBasedStaticReshape"), "ShapeBasedStaticReshape"), 0u);
}

TEST(PatternShapeBasedStaticReshape, SameNumbers) {
  test::expect_same_outputs([] { return reshape_model("T = Concat<axis=0>(B, L, heads)", "batch,seq,4,16"); },
                            "ShapeBasedStaticReshape", 0, kFeeds);
  test::expect_same_outputs(
      [] { return reshape_model("P = Mul(L, width)\n  T = Concat<axis=0>(B, P)", "batch,?"); },
      "ShapeBasedStaticReshape", 0, kFeeds);
}

// ---- ShapeBasedConstantShapeValue ----------------------------------------------------------------
// Attention's scale from the head size, the causal mask sliced from seq - seq, and torch's expand.
Model constant_parts_model() {
  return exported_model("float[batch,seq,4,16] Q, float[seq,8] K, float[8,8] M",
                        "float[batch,seq,4,16] Y, float[?,8] Z, float[batch,seq,4,16] V",
                        "  S = Shape(Q)\n"
                        "  last = Constant<value = int64[1] {-1}>()\n"
                        "  end = Constant<value = int64[1] {4}>()\n"
                        "  H = Slice(S, last, end)\n"
                        "  F = Cast<to=1>(H)\n"
                        "  Y = Div(Q, F)\n"
                        "  one = Constant<value = int64[1] {1}>()\n"
                        "  zero = Constant<value = int64[1] {0}>()\n"
                        "  L = Gather<axis=0>(S, one)\n"
                        "  KS = Shape(K)\n"
                        "  LK = Gather<axis=0>(KS, zero)\n"
                        "  start = Sub(L, LK)\n"
                        "  Z = Slice(M, start, LK, zero)\n"
                        "  minus = Constant<value = int64[4] {-1, -1, -1, -1}>()\n"
                        "  E = Equal(S, minus)\n"
                        "  ones = Constant<value = int64[4] {1, 1, 1, 1}>()\n"
                        "  W = Where(E, ones, S)\n"
                        "  QS = Slice(Q, zero, one, zero)\n"
                        "  V = Expand(QS, W)\n");
}

TEST(PatternShapeBasedConstantShapeValue, StaticElementsBecomeConstants) {
  Model m = constant_parts_model();
  run_rules(m, "ShapeBasedConstantShapeValue");
  const Graph& g = *m.graph;
  // The head size, seq - seq and the Equal fold (seq - seq's Gather goes with it); what still needs
  // batch or seq stays.
  EXPECT_EQ(op_types(g),
            (OpList{"Shape", "Cast", "Div", "Shape", "Gather", "Slice", "Where", "Slice", "Expand"}));
  EXPECT_EQ(constant_input(g, only(g, "Cast"), 0), (std::vector<int64_t>{16}));
  EXPECT_EQ(constant_input(g, g.node(g.value(g.at("Z")).producer), 1), (std::vector<int64_t>{0}));
  const Tensor* equal = rewrite::constant_tensor(g, only(g, "Where").inputs[0]);
  ASSERT_NE(equal, nullptr);
  EXPECT_EQ(equal->type(), ElemType::Bool);
  EXPECT_EQ(equal->shape(), (Shape{4}));
}

TEST(PatternShapeBasedConstantShapeValue, NotWhenAnElementIsSymbolic) {
  Model m = reshape_model("T = Concat<axis=0>(B, L, heads)", "batch,seq,4,16");
  EXPECT_EQ(applied(run_rules(m, "ShapeBasedConstantShapeValue"), "ShapeBasedConstantShapeValue"), 0u);
  EXPECT_EQ(op_types(*m.graph), (OpList{"Shape", "Gather", "Gather", "Concat", "Reshape", "Relu"}));
}

TEST(PatternShapeBasedConstantShapeValue, NotForAGraphOutput) {
  // The head size is known, but the graph returns it: its name stays on the node computing it.
  Model m = exported_model("float[batch,seq,4,16] Q", "int64[1] H",
                           "  S = Shape(Q)\n"
                           "  last = Constant<value = int64[1] {-1}>()\n"
                           "  end = Constant<value = int64[1] {4}>()\n"
                           "  H = Slice(S, last, end)\n");
  EXPECT_EQ(applied(run_rules(m, "ShapeBasedConstantShapeValue"), "ShapeBasedConstantShapeValue"), 0u);
  EXPECT_EQ(op_types(*m.graph), (OpList{"Shape", "Slice"}));
}

TEST(PatternShapeBasedConstantShapeValue, SameNumbers) {
  test::expect_same_outputs(constant_parts_model, "ShapeBasedConstantShapeValue", 0, kFeeds);
}

// ---- ShapeBasedSameShapeValue --------------------------------------------------------------------
// Unsqueeze(Squeeze(Shape(X)[1:2])) and Where(Equal(Shape(X), -1), ones, Shape(X)).
Model same_value_model() {
  return exported_model("float[batch,seq] X, float[8,8] M", "float[?,8] Y, float[batch,seq] V",
                        "  S = Shape(X)\n"
                        "  one = Constant<value = int64[1] {1}>()\n"
                        "  two = Constant<value = int64[1] {2}>()\n"
                        "  zero = Constant<value = int64[1] {0}>()\n"
                        "  L = Slice(S, one, two)\n"
                        "  N = Squeeze(L, zero)\n"
                        "  U = Unsqueeze(N, zero)\n"
                        "  Y = Slice(M, zero, U, zero)\n"
                        "  minus = Constant<value = int64[2] {-1, -1}>()\n"
                        "  E = Equal(S, minus)\n"
                        "  ones = Constant<value = int64[2] {1, 1}>()\n"
                        "  W = Where(E, ones, S)\n"
                        "  V = Expand(X, W)\n");
}

TEST(PatternShapeBasedSameShapeValue, AComputationGivingBackWhatItReadsIsThatValue) {
  Model m = same_value_model();
  run_rules(m, "ShapeBasedSameShapeValue");
  const Graph& g = *m.graph;
  EXPECT_EQ(op_types(g), (OpList{"Shape", "Slice", "Slice", "Expand"}));
  EXPECT_EQ(g.node(g.value(g.at("Y")).producer).inputs[2], g.at("L"));
  EXPECT_EQ(g.node(g.value(g.at("V")).producer).inputs[1], g.at("S"));
}

// seq unsqueezed twice, as exporters repeat it: from X with the axes in one constant, from K (whose first
// dimension is seq too) with the axes in another.
Model twins_model() {
  return exported_model("float[batch,seq] X, float[seq,8] K, float[8,8] M", "float[?,8] Y, float[?,8] Z",
                        "  S = Shape(X)\n"
                        "  one = Constant<value = int64 {1}>()\n"
                        "  zero = Constant<value = int64[1] {0}>()\n"
                        "  axis = Constant<value = int64[1] {0}>()\n"
                        "  L = Gather<axis=0>(S, one)\n"
                        "  U = Unsqueeze(L, zero)\n"
                        "  Y = Slice(M, zero, U, zero)\n"
                        "  KS = Shape(K)\n"
                        "  first = Constant<value = int64 {0}>()\n"
                        "  KL = Gather<axis=0>(KS, first)\n"
                        "  V = Unsqueeze(KL, axis)\n"
                        "  Z = Slice(M, zero, V, axis)\n");
}

TEST(PatternShapeBasedSameShapeValue, ALaterTwinReadsTheEarlierOne) {
  Model m = twins_model();
  run_rules(m, "ShapeBasedSameShapeValue");
  const Graph& g = *m.graph;
  EXPECT_EQ(op_types(g), (OpList{"Shape", "Gather", "Unsqueeze", "Slice", "Slice"}));
  EXPECT_EQ(g.node(g.value(g.at("Z")).producer).inputs[2], g.at("U"));
}

TEST(PatternShapeBasedSameShapeValue, NotWhenTheShapeDiffers) {
  // Squeeze(Shape(X)[1:2]) holds seq as Shape(X)[1:2] does, but as a scalar: it stays.
  Model m = exported_model("float[batch,seq] X", "int64 N",
                           "  S = Shape(X)\n"
                           "  one = Constant<value = int64[1] {1}>()\n"
                           "  two = Constant<value = int64[1] {2}>()\n"
                           "  L = Slice(S, one, two)\n"
                           "  N = Squeeze(L)\n");
  EXPECT_EQ(applied(run_rules(m, "ShapeBasedSameShapeValue"), "ShapeBasedSameShapeValue"), 0u);
}

TEST(PatternShapeBasedSameShapeValue, NotWhenAnElementIsUnknown) {
  // Where(Equal(S, 2), ones, S): whether seq is 2 is not known.
  Model m = exported_model("float[batch,seq] X", "float[batch,seq] V",
                           "  S = Shape(X)\n"
                           "  two = Constant<value = int64[2] {2, 2}>()\n"
                           "  E = Equal(S, two)\n"
                           "  ones = Constant<value = int64[2] {1, 1}>()\n"
                           "  W = Where(E, ones, S)\n"
                           "  V = Expand(X, W)\n");
  EXPECT_EQ(applied(run_rules(m, "ShapeBasedSameShapeValue"), "ShapeBasedSameShapeValue"), 0u);
}

TEST(PatternShapeBasedSameShapeValue, SameNumbers) {
  test::expect_same_outputs(same_value_model, "ShapeBasedSameShapeValue", 0, kFeeds);
  test::expect_same_outputs(twins_model, "ShapeBasedSameShapeValue", 0, kFeeds);
}
