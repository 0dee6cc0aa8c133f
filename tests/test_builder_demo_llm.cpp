#include <gtest/gtest.h>

#include <map>

#include "support/temp_dir.hpp"
#include "xexp/builder.hpp"
#include "xexp/eval/evaluator.hpp"
#include "xexp/onnx/load.hpp"

using namespace xexp;

namespace {

std::map<std::string, int> op_counts(const ir::Graph& g) {
  std::map<std::string, int> counts;
  for (ir::NodeId n : g.nodes()) ++counts[g.node(n).op_type.str()];
  return counts;
}

Tensor demo_ids() {
  std::vector<int64_t> ids(30);
  for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<int64_t>((k * 37 + 11) % 1024);
  return Tensor::from<int64_t>({1, 30}, ids);
}

}  // namespace

TEST(DemoLlm, BuildsWithInferredOutputShape) {
  GraphBuilder g;
  std::string out = build_demo_llm(g);
  EXPECT_EQ(out, "output_0");
  EXPECT_EQ(g.get_type(out), ElemType::Float);
  EXPECT_EQ(g.get_shape(out), (Shape{1, 30, 16}));
  // every intermediate result has a type and a fully known shape
  for (ir::NodeId n : g.graph().nodes())
    for (ir::ValueId v : g.graph().node(n).outputs) EXPECT_TRUE(g.has_shape(g.graph().value(v).name)) << g.graph().value(v).name;
  auto counts = op_counts(g.graph());
  EXPECT_EQ(counts["LayerNormalization"], 2);
  EXPECT_EQ(counts["Gather"], 2);
  EXPECT_EQ(counts["Softmax"], 2);
  EXPECT_EQ(counts["Relu"], 1);
  EXPECT_EQ(counts["ReduceMean"], 0);
  EXPECT_TRUE(g.has_name("decoder.attention.attention.1.value.weight"));
  EXPECT_EQ(g.get_shape("b_decoder_attention_attention_0_mask"), (Shape{256, 256}));
  EXPECT_EQ(g.get_shape("decoder.feed_forward.linear_1.weight"), (Shape{128, 16}));
}

TEST(DemoLlm, EveryNodeKnowsItsModules) {
  GraphBuilder g;
  build_demo_llm(g);
  const ir::Graph& gr = g.graph();
  int softmax_seen = 0;
  for (ir::NodeId n : gr.nodes()) {
    const ModuleStack& stack = g.module_stack(n);
    ASSERT_FALSE(stack.empty()) << gr.node(n).name;
    EXPECT_TRUE(stack[0].path == "embedding" || stack[0].path == "decoder") << stack[0].path;
    if (gr.node(n).op_type.view() == "Softmax") {
      const std::string head = "decoder.attention.attention." + std::to_string(softmax_seen++);
      EXPECT_EQ(stack, (ModuleStack{{"decoder", "__main__.DecoderLayer"},
                                    {"decoder.attention", "__main__.MultiAttentionBlock"},
                                    {head, "__main__.AttentionBlock"}}));
    }
    if (gr.node(n).op_type.view() == "Relu") {
      EXPECT_EQ(stack.back(), (ModuleScope{"decoder.feed_forward.relu", "ReLU"}));
    }
  }
  EXPECT_EQ(softmax_seen, 2);
}

TEST(DemoLlm, DecomposedLayerNormComputesTheSame) {
  DemoLlmOptions decomposed;
  decomposed.decomposed_layer_norm = true;
  ir::Model fused = build_demo_llm();
  ir::Model plain = build_demo_llm(decomposed);
  auto counts = op_counts(*plain.graph);
  EXPECT_EQ(counts["LayerNormalization"], 0);
  EXPECT_EQ(counts["ReduceMean"], 4);
  EXPECT_EQ(counts["Sqrt"], 2);
  const auto a = eval::Evaluator(fused).run({{"input_ids", demo_ids()}});
  const auto b = eval::Evaluator(plain).run({{"input_ids", demo_ids()}});
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(a[0].dims(), (std::vector<int64_t>{1, 30, 16}));
  auto x = a[0].data<float>(), y = b[0].data<float>();
  float spread = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    EXPECT_NEAR(x[k], y[k], 1e-4f) << k;
    spread = std::max(spread, std::abs(x[k]));
  }
  EXPECT_GT(spread, 0.1f);  // the weights do something
}

TEST(DemoLlm, DeterministicWeights) {
  ir::Model a = build_demo_llm(), b = build_demo_llm();
  const ir::Graph& ga = *a.graph;
  const ir::Graph& gb = *b.graph;
  ASSERT_EQ(ga.initializers().size(), gb.initializers().size());
  for (std::size_t k = 0; k < ga.initializers().size(); ++k)
    EXPECT_TRUE(ga.value(ga.initializers()[k]).initializer->same_content(*gb.value(gb.initializers()[k]).initializer));
}

TEST(DemoLlm, SavesAndLoadsBack) {
  xexp::testing::TempDir dir;
  GraphBuilder g;
  build_demo_llm(g);
  const std::string path = dir / "llm.onnx";
  g.save(path);
  ::onnx::ModelProto proto = g.to_onnx();
  EXPECT_EQ(proto.graph().node_size(), static_cast<int>(g.graph().node_count()));
  EXPECT_GT(proto.graph().value_info_size(), 30);  // inferred shapes are written
  ir::Model loaded = load_model(path);
  EXPECT_EQ(loaded.graph->node_count(), g.graph().node_count());
  EXPECT_EQ(loaded.opset(""), 18);
  const ir::Value& out = loaded.graph->value(loaded.graph->outputs()[0]);
  EXPECT_EQ(out.name, "output_0");
  EXPECT_EQ(out.elem, ElemType::Float);
  EXPECT_EQ(*out.shape, (Shape{1, 30, 16}));
  const ir::Value& mm = loaded.graph->value(loaded.graph->at("_onx_matmul0"));
  EXPECT_EQ(*mm.shape, (Shape{1, 30, 16}));
}
