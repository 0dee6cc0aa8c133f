#include <gtest/gtest.h>

#include "xexp/builder.hpp"

using namespace xexp;

namespace {
Dim S(const char* name) { return Dim::symbolic(name); }
Tensor floats(std::vector<int64_t> dims, std::vector<float> v) { return Tensor::from<float>(std::move(dims), v); }
}  // namespace

// Seed 004's example: X[a, b] @ init(3x1) + init(1x3) -> Y.
TEST(BuilderSeed, MatMulAddNamesAndShapes) {
  GraphBuilder g(18, 9);
  g.make_tensor_input("X", ElemType::Float, Shape{S("a"), S("b")});
  std::string weight = g.make_initializer("", floats({3, 1}, {0.4f, 0.5f, 0.6f}));
  std::string bias = g.make_initializer("", floats({1, 3}, {0.4f, 0.5f, 0.6f}));
  EXPECT_EQ(weight, "init1_s3x1_");
  EXPECT_EQ(bias, "init1_s1x3_");
  std::string mm = g.make_node("MatMul", {"X", weight}, 1, {}, "n");
  EXPECT_EQ(mm, "_onx_matmul0");
  std::string out = g.make_node("Add", {mm, bias}, {"Y"}, {}, "n");
  EXPECT_EQ(out, "Y");
  g.make_tensor_output(out, ElemType::Float);
  EXPECT_EQ(g.get_shape("X"), (Shape{S("a"), S("b")}));
  EXPECT_EQ(g.get_shape(mm), (Shape{S("a"), 1}));
  EXPECT_EQ(g.get_shape("Y"), (Shape{S("a"), 3}));
  EXPECT_EQ(g.get_type("Y"), ElemType::Float);
  EXPECT_TRUE(g.constraints().equal(S("b"), Dim(3)));  // the inner dimension of MatMul
  // node names given twice are made unique
  std::vector<std::string> node_names;
  for (ir::NodeId n : g.graph().nodes()) node_names.push_back(g.graph().node(n).name);
  EXPECT_EQ(node_names, (std::vector<std::string>{"n", "n2"}));
}

TEST(BuilderSeed, UnknownInputRaisesWithDump) {
  GraphBuilder g(18, 9);
  g.make_tensor_input("X", ElemType::Float, Shape{S("a"), S("b")});
  std::string weight = g.make_initializer("", floats({3, 1}, {0.4f, 0.5f, 0.6f}));
  g.make_initializer("", floats({1, 3}, {0.4f, 0.5f, 0.6f}));
  std::string mm = g.make_node("MatMul", {"X", weight}, 1, {}, "N1");
  try {
    g.make_node("Add", {mm, "bias"}, {"Y"}, {}, "N2");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Input 'bias' does not exist for operator 'Add'"), std::string::npos) << msg;
    EXPECT_EQ(e.value(), "bias");
    const std::string& dump = e.dump();
    EXPECT_NE(dump.find("there are 2 initializers, 1 nodes, 1 inputs, 0 outputs"), std::string::npos) << dump;
    EXPECT_NE(dump.find("'X': 1"), std::string::npos) << dump;
    EXPECT_NE(dump.find("'_onx_matmul0': ('a', 1)"), std::string::npos) << dump;
    EXPECT_NE(dump.find("'init1_s3x1_': (3, 1)"), std::string::npos) << dump;
    EXPECT_NE(dump.find("_known_constants=['init1_s1x3_', 'init1_s3x1_']"), std::string::npos) << dump;
    EXPECT_NE(dump.find("[GraphBuilder.make_tensor_input] X[1:axb]"), std::string::npos) << dump;
    EXPECT_NE(dump.find("[GraphBuilder.make_node] N1 [##:# ] MatMul:['X', 'init1_s3x1_']->['_onx_matmul0']"),
              std::string::npos)
        << dump;
  }
}

TEST(BuilderInitializers, NamesUniquenessAndDedup) {
  GraphBuilder g;
  EXPECT_EQ(g.make_initializer("", Tensor::from<int64_t>({2}, {0, 1})), "init7_s2_0_1");
  EXPECT_EQ(g.make_initializer("", Tensor::from<int64_t>({3}, {1, 30, -1})), "init7_s3_1_30_-1");
  EXPECT_EQ(g.make_initializer("", Tensor::from<int64_t>({6}, {1, 2, 3, 4, 5, 6})), "init7_s6_");
  EXPECT_EQ(g.make_initializer("", Tensor::scalar<float>(0.25f)), "init1_s_");
  // same bytes, same shape: deduplicated
  EXPECT_EQ(g.make_initializer("", Tensor::from<int64_t>({2}, {0, 1})), "init7_s2_0_1");
  EXPECT_EQ(g.make_initializer("", Tensor::scalar<float>(0.25f)), "init1_s_");
  // same name base, different values: suffixes 2, 3
  EXPECT_EQ(g.make_initializer("", Tensor::scalar<float>(0.f)), "init1_s_2");
  EXPECT_EQ(g.make_initializer("", Tensor::scalar<float>(-1.f)), "init1_s_3");
  EXPECT_EQ(g.make_initializer("", Tensor::from<int64_t>({6}, {6, 5, 4, 3, 2, 1})), "init7_s6_2");
  // no dedup from 1024 elements on
  Tensor big(ElemType::Float, {1024});
  EXPECT_EQ(g.make_initializer("", big), "init1_s1024_");
  EXPECT_EQ(g.make_initializer("", big), "init1_s1024_2");
  Tensor small(ElemType::Float, {1023});
  EXPECT_EQ(g.make_initializer("", small), "init1_s1023_");
  EXPECT_EQ(g.make_initializer("", small), "init1_s1023_");
  // explicit names are kept and must be new
  EXPECT_EQ(g.make_initializer("W", Tensor::scalar<float>(0.25f)), "W");
  EXPECT_THROW(g.make_initializer("W", Tensor::scalar<float>(1.f)), Error);
  EXPECT_TRUE(g.is_constant("W"));
  EXPECT_EQ(g.get_constant("init7_s2_0_1").data<int64_t>()[1], 1);
}

TEST(BuilderOps, ShortcutsMakeInitializersAndInferShapes) {
  GraphBuilder g;
  g.make_tensor_input("X", ElemType::Float, Shape{S("a"), 3});
  std::string mm = g.op.MatMul("X", floats({3, 1}, {0.4f, 0.5f, 0.6f}));
  std::string y = g.op.Add(mm, floats({3}, {0.4f, 0.5f, 0.6f}), {}, {.outputs = {"Y"}});
  EXPECT_EQ(y, "Y");
  EXPECT_EQ(g.get_shape("Y"), (Shape{S("a"), 3}));
  EXPECT_TRUE(g.has_name("init1_s3_"));
  std::string r = g.op.Reshape("Y", {0, -1, 1});
  EXPECT_EQ(g.get_shape(r), (Shape{S("a"), 3, 1}));
  std::string t = g.op.Transpose(r, {{"perm", {2, 0, 1}}});
  EXPECT_EQ(g.get_shape(t), (Shape{1, S("a"), 3}));
  std::string sm = g.op.Softmax(t, {{"axis", -1}});
  EXPECT_EQ(g.get_shape(sm), (Shape{1, S("a"), 3}));
  std::string cat = g.op.Concat(std::vector<Arg>{"X", "X", "X"}, {{"axis", 1}});
  EXPECT_EQ(g.get_shape(cat), (Shape{S("a"), 9}));
  Outputs parts = g.op.Split(cat, std::vector<int64_t>{4, 5}, {{"axis", 1}});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(g.get_shape(parts[1]), (Shape{S("a"), 5}));
  EXPECT_THROW(static_cast<void>(static_cast<const std::string&>(parts)), Error);
  EXPECT_FALSE(g.is_constant(sm));
  std::string folded = g.op.Add(Tensor::scalar<float>(1.f), Tensor::scalar<float>(2.f));
  EXPECT_TRUE(g.is_constant(folded));
  g.add_domain("com.microsoft", 1);
  std::string fused = g.op.ms.FusedMatMul("X", "X", {{"transB", 1}});
  EXPECT_EQ(g.get_shape(fused), (Shape{S("a"), S("a")}));
  EXPECT_EQ(g.graph().node(g.graph().value(g.value_id(fused)).producer).domain.view(), "com.microsoft");
}

TEST(BuilderOps, AxesAttributeOrInputByOpset) {
  for (int64_t opset : {13, 18}) {
    GraphBuilder g(opset);
    g.make_tensor_input("X", ElemType::Float, Shape{S("a"), 1, 4});
    std::string mean = g.op.ReduceMean("X", std::vector<int64_t>{-1});
    std::string sq = g.op.Squeeze("X", std::vector<int64_t>{1});
    std::string sum = g.op.ReduceSum("X", {}, {{"axes", {2}}, {"keepdims", 0}});
    EXPECT_EQ(g.get_shape(mean), (Shape{S("a"), 1, 1}));
    EXPECT_EQ(g.get_shape(sq), (Shape{S("a"), 4}));
    EXPECT_EQ(g.get_shape(sum), (Shape{S("a"), 1}));
    const ir::Graph& gr = g.graph();
    const ir::Node& mean_node = gr.node(gr.value(g.value_id(mean)).producer);
    const ir::Node& sum_node = gr.node(gr.value(g.value_id(sum)).producer);
    // ReduceMean's axes moved at 18, ReduceSum's (and Squeeze's) at 13
    EXPECT_EQ(mean_node.inputs.size(), opset >= 18 ? 2u : 1u) << opset;
    EXPECT_EQ(mean_node.attribute("axes") != nullptr, opset < 18) << opset;
    EXPECT_EQ(sum_node.inputs.size(), 2u) << opset;
    EXPECT_EQ(sum_node.attribute("axes"), nullptr) << opset;
  }
  EXPECT_THROW(GraphBuilder(12), Error);
}

TEST(BuilderNodes, OutputsMustBeNewAndTypesChecked) {
  GraphBuilder g;
  g.make_tensor_input("X", ElemType::Float, Shape{2, 3});
  g.make_node("Relu", {"X"}, {"R"});
  EXPECT_THROW(g.make_node("Relu", {"X"}, {"R"}), Error);
  EXPECT_THROW(g.make_node("Relu", {"X"}, {"X"}), Error);
  EXPECT_THROW(g.make_tensor_output("R", ElemType::Int64), Error);
  EXPECT_THROW(g.make_tensor_output("R", ElemType::Float, Shape{2, 4}), Error);
  EXPECT_THROW(g.make_tensor_output("nothing"), Error);
  g.make_tensor_output("R", ElemType::Float, Shape{2, 3});
  // a shape conflict found by inference carries the dump too
  g.make_tensor_input("Z", ElemType::Float, Shape{5});
  try {
    g.op.Add("X", "Z");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.dump().find("[GraphBuilder.make_node]"), std::string::npos);
    EXPECT_EQ(e.node(), "Add");
  }
  EXPECT_THROW(g.make_node("Relu", {"X"}, 1, {{"alpha", 0.5f}}), Error);  // Relu has no attribute
  EXPECT_THROW(g.op.Softmax("X", {{"axiss", 1}}), Error);
  g.set_rank("R", 2);
  EXPECT_THROW(g.set_rank("R", 3), Error);
  g.make_tensor_input("U", ElemType::Float, std::nullopt);
  std::string u = g.op.Relu("U");
  EXPECT_FALSE(g.has_rank(u));
  g.set_shape(u, Shape{S("n"), 4});
  EXPECT_TRUE(g.has_shape(u));
  EXPECT_THROW(g.set_shape(u, Shape{S("n"), 5}), Error);
}

TEST(BuilderNodes, RejectedNodeIsRolledBack) {
  GraphBuilder g;
  g.make_tensor_input("X", ElemType::Float, Shape{2, 3});
  g.make_tensor_input("Z", ElemType::Float, Shape{5});
  auto scope = g.module("block", "Block");
  std::string r = g.op.Relu("X");
  const std::size_t nodes = g.graph().node_count(), values = g.graph().value_capacity();
  try {
    g.make_node("Add", {"X", "Z"}, {"Y"}, {}, "bad");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.node(), "bad");
    // the dump shows the rejected node, as it was when inference failed
    EXPECT_NE(e.dump().find("[GraphBuilder.make_node] bad [##:- ] Add:['X', 'Z']->['Y']"), std::string::npos) << e.dump();
  }
  EXPECT_EQ(g.graph().node_count(), nodes);
  EXPECT_EQ(g.graph().node_capacity(), nodes);
  EXPECT_EQ(g.graph().value_capacity(), values);
  EXPECT_FALSE(g.has_name("Y"));
  EXPECT_EQ(g.graph().value(g.value_id("X")).uses.size(), 1u);  // Relu only
  EXPECT_TRUE(g.graph().value(g.value_id("Z")).uses.empty());
  EXPECT_EQ(g.debug_dump().find("make_node] bad"), std::string::npos);
  // names are free again: the same node with a valid input is accepted
  EXPECT_EQ(g.make_node("Add", {"X", r}, {"Y"}, {}, "bad").name(), "Y");
  const ir::NodeId added = g.graph().last_node();
  EXPECT_EQ(g.graph().node(added).name, "bad");
  EXPECT_EQ(g.module_stack(added), (ModuleStack{{"block", "Block"}}));
  EXPECT_EQ(g.get_shape("Y"), (Shape{2, 3}));
  // a taken output name: the outputs added before it are undone too
  EXPECT_THROW(g.make_node("Split", {"X"}, {"S0", "Y"}, {{"axis", 0}}), Error);
  EXPECT_FALSE(g.has_name("S0"));
  EXPECT_EQ(g.graph().value_capacity(), values + 1);
  std::size_t listed = 0;
  for ([[maybe_unused]] ir::NodeId n : g.graph().nodes()) ++listed;
  EXPECT_EQ(listed, g.graph().node_count());
}

TEST(BuilderNodes, GeneratedNamesStayUnique) {
  GraphBuilder g;
  g.make_tensor_input("X", ElemType::Float, Shape{2});
  // user names that look like generated ones are skipped, never reused
  g.make_node("Neg", {"X"}, {"_onx_neg02"}, {}, "Neg2");
  std::vector<std::string> outs;
  std::string y = "X";
  for (int k = 0; k < 4; ++k) outs.push_back(y = g.make_node("Neg", {y}));
  EXPECT_EQ(outs, (std::vector<std::string>{"_onx_neg0", "_onx_neg03", "_onx_neg04", "_onx_neg05"}));
  std::vector<std::string> node_names;
  for (ir::NodeId n : g.graph().nodes()) node_names.push_back(g.graph().node(n).name);
  EXPECT_EQ(node_names, (std::vector<std::string>{"Neg2", "Neg", "Neg3", "Neg4", "Neg5"}));
}

TEST(BuilderCleanups, RemoveUnused) {
  GraphBuilder g;
  g.make_tensor_input("X", ElemType::Float, Shape{2});
  std::string used = g.op.Neg("X");
  std::string dead = g.op.Exp(g.op.Abs("X"));
  std::string dead_init = g.make_initializer("lonely", Tensor::scalar<float>(2.f));
  g.op.Relu(used, {}, {.outputs = {"Y"}});
  g.make_tensor_output("Y");
  EXPECT_EQ(g.remove_unused(), 3u);  // Exp, Abs, lonely
  EXPECT_EQ(g.graph().node_count(), 2u);
  EXPECT_TRUE(g.graph().initializers().empty());
  ir::Model m = g.to_model();
  EXPECT_EQ(m.graph->node_count(), 2u);
  EXPECT_FALSE(m.graph->has_value(dead));
}

TEST(BuilderCleanups, RemoveIdentityNodesKeepsIoNames) {
  GraphBuilder g;
  g.make_tensor_input("X", ElemType::Float, Shape{2});
  std::string a = g.op.Identity("X");
  std::string b = g.op.Neg(a);
  g.op.Identity(b, {}, {.outputs = {"Y"}});
  g.op.Identity("X", {}, {.outputs = {"Z"}});
  g.make_tensor_output("Y");
  g.make_tensor_output("Z");
  EXPECT_EQ(g.remove_identity_nodes(), 2u);
  std::vector<std::string> ops;
  for (ir::NodeId n : g.graph().nodes()) ops.push_back(g.graph().node(n).op_type.str());
  EXPECT_EQ(ops, (std::vector<std::string>{"Neg", "Identity"}));
  const ir::Graph& gr = g.graph();
  EXPECT_EQ(gr.value(gr.outputs()[0]).name, "Y");
  EXPECT_EQ(gr.node(gr.value(gr.outputs()[0]).producer).op_type.view(), "Neg");
  EXPECT_EQ(gr.value(gr.outputs()[1]).name, "Z");
  EXPECT_EQ(gr.value(gr.node(gr.value(gr.outputs()[0]).producer).inputs[0]).name, "X");
}

TEST(BuilderCleanups, RemoveDuplicatedNodes) {
  GraphBuilder g;
  g.make_tensor_input("X", ElemType::Float, Shape{S("a"), 4});
  std::string s1 = g.op.Shape("X");
  std::string s2 = g.op.Shape("X");
  std::string s3 = g.op.Shape("X", {{"start", 1}});
  g.op.Concat(s1, s2, s3, {{"axis", 0}}, {.outputs = {"Y"}});
  g.make_tensor_output("Y");
  EXPECT_EQ(*g.value_shape("Y"), (Shape{S("a"), 4, S("a"), 4, 4}));
  EXPECT_EQ(g.remove_duplicated_nodes(), 1u);
  const ir::Graph& gr = g.graph();
  const ir::Node& concat = gr.node(gr.value(gr.outputs()[0]).producer);
  EXPECT_EQ(concat.inputs[0], concat.inputs[1]);
  EXPECT_NE(concat.inputs[0], concat.inputs[2]);
}

TEST(BuilderModules, ScopesAreRecordedPerNode) {
  GraphBuilder g;
  g.make_tensor_input("X", ElemType::Float, Shape{2});
  std::string outside = g.op.Neg("X");
  std::string inner, middle;
  {
    auto decoder = g.module("decoder", "DecoderLayer");
    {
      auto attention = g.module("decoder.attention", "MultiAttentionBlock");
      inner = g.op.Relu(outside);
    }
    middle = g.op.Abs(inner);
  }
  std::string after = g.op.Exp(middle);
  auto stack_of = [&](const std::string& v) { return g.module_stack(g.graph().value(g.value_id(v)).producer); };
  EXPECT_TRUE(stack_of(outside).empty());
  EXPECT_EQ(stack_of(inner), (ModuleStack{{"decoder", "DecoderLayer"}, {"decoder.attention", "MultiAttentionBlock"}}));
  EXPECT_EQ(stack_of(middle), (ModuleStack{{"decoder", "DecoderLayer"}}));
  EXPECT_TRUE(stack_of(after).empty());
}
