// Types on load (infer/model.hpp) and Constant nodes read as constants (ir/constant_node.hpp): our
// rules first, ONNX's shape inference for ops we have no rule for, ours again after it; symbolic
// dimensions kept; value_info kept when consistent, a declared shape the nodes contradict replaced (as
// ONNX Runtime does), a clear error for any other contradiction; every shorthand of
// Constant (value_int, value_floats, ...) read as a tensor by folding and by the rules.
#include <gtest/gtest.h>

#include "support/rewrite_helpers.hpp"
#include "xexp/functions/infer_call.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/ir/constant_node.hpp"
#include "xexp/optimizer/optimize_model.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::op_types;
using OpSeq = std::vector<std::string>;

namespace {

const Dim kBatch = Dim::symbolic("p2o.DynamicDimension.0");

// X(batch, 3, H, W) -> GlobalLpPool -> Relu -> Flatten -> Y: nothing typed but the input, as an
// exporter writes it. We have no rule for GlobalLpPool; ONNX has.
Model pool_model() {
  Model m = test::model_with_opset(17);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{kBatch, 3, Dim::symbolic("h"), Dim::symbolic("w")});
  ValueId pooled = g.add_value("pooled"), relu = g.add_value("relu"), y = g.add_value("Y");
  g.add_node(Symbol("GlobalLpPool"), {x}, {pooled}, {}, "pool");
  g.add_node(Symbol("Relu"), {pooled}, {relu}, {}, "relu");
  g.add_node(Symbol("Flatten"), {relu}, {y}, {Attribute::make_int(Symbol("axis"), 1)}, "flatten");
  g.add_output(y);
  return m;
}

}  // namespace

TEST(InferModelTypes, OnnxFillsWhatWeHaveNoRuleForAndOurRulesGoOn) {
  Model m = pool_model();
  ASSERT_FALSE(infer::has_rule(Symbol(), Symbol("GlobalLpPool")));
  infer::infer_model_types(m);
  const Graph& g = *m.graph;
  EXPECT_EQ(g.value(g.at("pooled")).shape, (Shape{kBatch, 3, 1, 1}));
  EXPECT_EQ(g.value(g.at("relu")).elem, ElemType::Float);
  EXPECT_EQ(g.value(g.at("relu")).shape, (Shape{kBatch, 3, 1, 1}));
  EXPECT_EQ(g.value(g.at("Y")).shape, (Shape{kBatch, 3}));
}

// A fuzzer's Reshape of (2^40, 2^40) to (-1, 2): our rule leaves the -1 unknown, ONNX's inference then
// runs and wraps the product to 0. No tensor of those sizes exists, and ONNX's (0, 2) is not taken.
TEST(InferModelTypes, OnnxIsNotTakenForANodeReadingSizesPastInt64) {
  Model m = test::model_with_opset(17);
  Graph& g = *m.graph;
  const Dim huge(int64_t{1} << 40);
  ValueId x = g.add_input("X", ElemType::Float, Shape{huge, huge});
  ValueId shape = g.add_initializer("shape", Tensor::from<int64_t>({2}, {-1, 2}));
  ValueId y = g.add_value("Y");
  g.add_node(Symbol("Reshape"), {x, shape}, {y}, {}, "reshape");
  g.add_output(y);
  infer::infer_model_types(m);
  EXPECT_EQ(g.value(y).elem, ElemType::Float);
  ASSERT_TRUE(g.value(y).shape);
  EXPECT_TRUE((*g.value(y).shape)[0].is_unknown()) << shape_str(*g.value(y).shape);
  EXPECT_EQ((*g.value(y).shape)[1], Dim(2));
}

TEST(InferModelTypes, ConsistentValueInfoIsKept) {
  Model m = pool_model();
  Graph& g = *m.graph;
  g.value(g.at("relu")).shape = Shape{kBatch, 3, 1, 1};
  infer::infer_model_types(m);
  EXPECT_EQ(g.value(g.at("relu")).shape, (Shape{kBatch, 3, 1, 1}));
  EXPECT_EQ(g.value(g.at("Y")).shape, (Shape{kBatch, 3}));
}

TEST(InferModelTypes, AContradictingDeclaredShapeGivesWayAndIsReported) {
  // As in ONNX Runtime: the shape the node computes is kept, the file's is named in the report.
  Model m = pool_model();
  Graph& g = *m.graph;
  g.value(g.at("Y")).shape = Shape{kBatch, 4};  // Flatten gives (batch, 3)
  const std::vector<std::string> replaced = infer::infer_model_types(m);
  EXPECT_EQ(g.value(g.at("Y")).shape, (Shape{kBatch, 3}));
  ASSERT_EQ(replaced.size(), 1u);
  EXPECT_NE(replaced[0].find("value 'Y': declared (p2o.DynamicDimension.0,4), node 'flatten' computes"),
            std::string::npos)
      << replaced[0];
}

TEST(InferModelTypes, AContradictingDeclaredElementTypeIsAnErrorNamingNodeAndValue) {
  Model m = pool_model();
  Graph& g = *m.graph;
  g.value(g.at("Y")).elem = ElemType::Int64;  // Flatten of float gives float
  try {
    infer::infer_model_types(m);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.node(), "flatten");
    EXPECT_EQ(e.value(), "Y");
  }
}

TEST(InferModelTypes, OnnxReplacesAContradictingDeclaredShapeForWhatWeHaveNoRuleFor) {
  Model m = pool_model();
  Graph& g = *m.graph;
  g.value(g.at("pooled")).shape = Shape{kBatch, 3, 2, 1};  // a global pool keeps 1 x 1
  const std::vector<std::string> replaced = infer::infer_model_types(m);
  EXPECT_EQ(g.value(g.at("pooled")).shape, (Shape{kBatch, 3, 1, 1}));
  EXPECT_EQ(g.value(g.at("Y")).shape, (Shape{kBatch, 3}));
  EXPECT_EQ(replaced.size(), 1u);
}

TEST(InferModelTypes, ThroughLocalFunctionCallsToo) {
  // The same model with Relu inside a local function: functions::infer_model goes through the call.
  Model m = pool_model();
  Graph& g = *m.graph;
  Function& f = m.functions.emplace_back();
  f.name = "Act";
  f.domain = "local";
  f.opsets.push_back({"", 17, {}});
  ValueId fx = f.body->add_input("fx");
  ValueId fy = f.body->add_value("fy");
  f.body->add_node(Symbol("Relu"), {fx}, {fy});
  f.body->add_output(fy);
  m.opsets.push_back({"local", 1, {}});
  Node& relu = g.node(g.value(g.at("relu")).producer);
  relu.op_type = Symbol("Act");
  relu.domain = Symbol("local");
  functions::infer_model(m);
  EXPECT_EQ(g.value(g.at("relu")).shape, (Shape{kBatch, 3, 1, 1}));
  EXPECT_EQ(g.value(g.at("Y")).shape, (Shape{kBatch, 3}));
}

// ---- Constant nodes --------------------------------------------------------------------------------

TEST(ConstantNodes, EveryShorthandIsATensor) {
  auto value = [](Attribute a) { return constant_attribute_value({std::move(a)}); };
  EXPECT_EQ(value(Attribute::make_float(Symbol("value_float"), 2.5f))->data<float>()[0], 2.5f);
  const auto floats = value(Attribute::make_floats(Symbol("value_floats"), {1, 2}));
  EXPECT_EQ(floats->dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(value(Attribute::make_int(Symbol("value_int"), 7))->rank(), 0u);
  EXPECT_EQ(value(Attribute::make_ints(Symbol("value_ints"), {4, 5, 6}))->data<int64_t>()[2], 6);
  EXPECT_EQ(value(Attribute::make_string(Symbol("value_string"), "a"))->type(), ElemType::String);
  EXPECT_EQ(value(Attribute::make_strings(Symbol("value_strings"), {"a", "b"}))->size(), 2);
  Attribute from_call = Attribute::blank(Symbol("value_int"), AttrType::Int);
  from_call.ref_attr_name = "k";
  EXPECT_FALSE(value(from_call));
}

// Reshape(X, Constant(value_ints)) -> Mul(., Constant(value_float = 1)): the main graph's Constant
// nodes become initializers, and the rules read them (Mul by one goes).
TEST(ConstantNodes, MainGraphConstantsBecomeInitializersTheRulesRead) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 6});
  ValueId shape = g.add_value("shape"), one = g.add_value("one"), r = g.add_value("r"), y = g.add_value("Y");
  g.add_node(Symbol("Constant"), {}, {shape}, {Attribute::make_ints(Symbol("value_ints"), {3, 4})});
  g.add_node(Symbol("Constant"), {}, {one}, {Attribute::make_float(Symbol("value_float"), 1.0f)});
  g.add_node(Symbol("Reshape"), {x, shape}, {r});
  g.add_node(Symbol("Mul"), {r, one}, {y});
  g.add_output(y);
  optimizer::OptimizeModelOptions options;
  options.patterns = "default";
  std::ostringstream log;
  options.log = &log;
  optimizer::optimize_model(m, options);
  EXPECT_EQ(op_types(g), (OpSeq{"Reshape"}));
  EXPECT_EQ(g.value(g.at("Y")).shape, (Shape{3, 4}));
  ASSERT_TRUE(g.value(g.at("shape")).initializer);
  EXPECT_EQ(g.value(g.at("shape")).initializer->data<int64_t>()[1], 4);
}

TEST(ConstantNodes, FunctionBodiesKeepThemAsValueTensors) {
  Model m = test::model_with_opset(18);
  Function& f = m.functions.emplace_back();
  f.name = "F";
  f.domain = "local";
  f.opsets.push_back({"", 18, {}});
  Graph& body = *f.body;
  ValueId fx = body.add_input("fx"), c = body.add_value("c"), fy = body.add_value("fy");
  body.add_node(Symbol("Constant"), {}, {c}, {Attribute::make_floats(Symbol("value_floats"), {1, 2})});
  body.add_node(Symbol("Add"), {fx, c}, {fy});
  body.add_output(fy);
  EXPECT_EQ(constant_shorthands_to_value(body), 1u);
  EXPECT_EQ(op_types(body), (OpSeq{"Constant", "Add"}));
  const Node& constant = body.node(body.value(c).producer);
  ASSERT_EQ(constant.attributes.size(), 1u);
  EXPECT_EQ(constant.attributes[0].name.view(), "value");
  ASSERT_NE(rewrite::constant_tensor(body, c), nullptr);
  EXPECT_EQ(rewrite::constant_tensor(body, c)->data<float>()[1], 2.0f);
}

TEST(ConstantNodes, FoldingReadsShorthandsAndCoversEveryEvaluatorOp) {
  // Where(Equal(ConstantOfShape(Constant(value_ints)), 1), ...) is folded, the whole chain at once.
  Graph g;
  ValueId dims = g.add_value("dims"), filled = g.add_value("filled"), eq = g.add_value("eq"), out = g.add_value("out");
  g.add_node(Symbol("Constant"), {}, {dims}, {Attribute::make_ints(Symbol("value_ints"), {3})});
  g.add_node(Symbol("ConstantOfShape"), {dims}, {filled},
             {Attribute::make_tensor(Symbol("value"), Tensor::from<int64_t>({1}, {1}))});
  ValueId one = g.add_initializer("one", Tensor::scalar<int64_t>(1));
  g.add_node(Symbol("Equal"), {filled, one}, {eq});
  ValueId a = g.add_initializer("a", Tensor::from<float>({3}, {1, 2, 3}));
  ValueId b = g.add_initializer("b", Tensor::from<float>({3}, {4, 5, 6}));
  g.add_node(Symbol("Where"), {eq, a, b}, {out});
  g.add_output(out);
  EXPECT_EQ(eval::fold_constants(g), 3u);
  EXPECT_EQ(g.node_count(), 0u);
  ASSERT_TRUE(g.value(g.at("out")).initializer);
  EXPECT_EQ(g.value(g.at("out")).initializer->data<float>()[2], 3.0f);
}

TEST(ConstantNodes, DequantizeLinearIsLeftToTheRuntime) {
  Graph g;
  ValueId q = g.add_initializer("q", Tensor::from<int8_t>({2}, {1, 2}));
  ValueId scale = g.add_initializer("scale", Tensor::scalar<float>(0.5f));
  ValueId y = g.add_value("Y");
  g.add_node(Symbol("DequantizeLinear"), {q, scale}, {y});
  g.add_output(y);
  EXPECT_EQ(eval::fold_constants(g), 0u);
  EXPECT_EQ(g.node_count(), 1u);
}

TEST(InferModelTypes, ALossDeclaredWithItsScoresShapeGetsTheScalarItComputes) {
  // ALBERT's export declares its SoftmaxCrossEntropyLoss (reduction 'mean', a scalar) with the scores'
  // shape, on the loss and on the Identity after it; ONNX Runtime runs it with the shapes the nodes
  // compute. The loss goes through ONNX's inference (no rule of ours), the Identity through ours.
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId scores = g.add_input("scores", ElemType::Float, Shape{6, 10});
  ValueId labels = g.add_input("labels", ElemType::Int64, Shape{6});
  ValueId loss = g.add_value("loss"), out = g.add_value("out"), relu = g.add_value("relu");
  g.add_node("SoftmaxCrossEntropyLoss", {scores, labels}, {loss},
             {Attribute::make_string("reduction", "mean")}, "sce");
  g.add_node("Identity", {loss}, {out}, {}, "id");
  g.add_node("Relu", {scores}, {relu}, {}, "relu");
  for (ValueId declared : {loss, out}) {
    g.value(declared).elem = ElemType::Float;
    g.value(declared).shape = Shape{6, 10};
  }
  g.value(relu).elem = ElemType::Float;
  g.value(relu).shape = Shape{6, 11};
  g.add_output(out);
  g.add_output(relu);
  EXPECT_EQ(infer::infer_model_types(m).size(), 3u);
  EXPECT_EQ(*g.value(loss).shape, Shape{});
  EXPECT_EQ(*g.value(out).shape, Shape{});
  EXPECT_EQ(*g.value(relu).shape, (Shape{6, 10}));
  // A declared element type the node contradicts is still an error naming the node and the value.
  g.value(relu).elem = ElemType::Double;
  try {
    infer::infer_model_types(m);
    ADD_FAILURE() << "a Relu of float declared double was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.node(), "relu");
    EXPECT_EQ(e.value(), "relu");
  }
}
