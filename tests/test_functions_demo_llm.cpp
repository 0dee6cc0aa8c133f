// The demo LLM exported with its modules as local functions: one function per module class called by
// its parent (xexp's names and order pinned), and the same numbers as a plain graph, with functions and
// inlined, in ONNX Runtime and in our evaluator.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/compare.hpp"
#include "support/ort.hpp"
#include "support/temp_dir.hpp"
#include "xexp/builder/demo_llm.hpp"
#include "xexp/eval/evaluator.hpp"
#include "xexp/functions/infer_call.hpp"
#include "xexp/functions/inliner.hpp"
#include "xexp/functions/module_export.hpp"
#include "xexp/onnx/save.hpp"

using namespace xexp;
using namespace xexp::testing;

namespace {

struct DemoModels {
  ir::Model plain, with_functions;
};

DemoModels demo_models() {
  GraphBuilder g;
  build_demo_llm(g);
  DemoModels out;
  out.with_functions = functions::export_modules_as_functions(g);
  out.plain = g.to_model();
  return out;
}

std::vector<std::string> ops(const ir::Graph& g) {
  std::vector<std::string> out;
  for (ir::NodeId n : g.nodes()) out.push_back(g.node(n).op_type.str());
  return out;
}

const ir::Function& function(const ir::Model& m, const std::string& name) {
  const ir::Function* f = m.find_function("aten_local_function", name);
  if (!f) throw Error("no function " + name);
  return *f;
}

NamedTensors demo_feeds() {
  std::vector<int64_t> ids(30);
  for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<int64_t>((k * 37 + 11) % 1024);
  return {{"input_ids", Tensor::from<int64_t>({1, 30}, ids)}};
}

NamedTensors evaluate(const ir::Model& m) {
  eval::Evaluator evaluator(m);
  std::vector<Tensor> values = evaluator.run(demo_feeds());
  return {{evaluator.output_names().at(0), values.at(0)}};
}

}  // namespace

// What this pins is xexp's naming, not the experimental-experiment documentation's: that export names
// the three other Linear bodies Linear_2, Linear_3 and Linear_2_2 and lists the functions in another
// order (Embedding, __main__.Embedding, LayerNorm, Linear, ...); the calls, the bodies and the weights
// passed to the decoder are the same.
TEST(FunctionsDemoLlm, ExportHasOneFunctionPerModuleVariantWithXexpNames) {
  const ir::Model m = demo_models().with_functions;
  std::vector<std::string> names;
  for (const ir::Function& f : m.functions) names.push_back(f.name);
  // Children are registered before their callers; user classes are named after their Python module
  // (__main__.Embedding), torch's own classes by class name (Embedding, Linear); a second body under a
  // taken name gets _l2l, _l3l, ... (functions/module_export.hpp).
  EXPECT_EQ(names, (std::vector<std::string>{"Linear", "__main__.AttentionBlock", "Linear_l2l", "Linear_l3l", "ReLU",
                                             "Linear_l4l", "Embedding", "LayerNorm", "__main__.MultiAttentionBlock",
                                             "__main__.FeedForward", "__main__.Embedding", "__main__.DecoderLayer"}));
  EXPECT_EQ(ops(*m.graph), (std::vector<std::string>{"__main__.Embedding", "__main__.DecoderLayer"}));
  // The decoder call passes the weights by decreasing size, in the documented export's order.
  const ir::Node& decoder = m.graph->node(*std::next(m.graph->nodes().begin()));
  std::vector<std::string> inputs;
  for (ir::ValueId v : decoder.inputs) inputs.push_back(m.graph->value(v).name);
  EXPECT_EQ(inputs, (std::vector<std::string>{
                        "_onx_add0", "b_decoder_attention_attention_1_mask", "b_decoder_attention_attention_0_mask",
                        "decoder.feed_forward.linear_2.weight", "decoder.feed_forward.linear_1.weight",
                        "decoder.attention.linear.weight", "decoder.attention.attention.1.value.weight",
                        "decoder.attention.attention.1.query.weight", "decoder.attention.attention.1.key.weight",
                        "decoder.attention.attention.0.value.weight", "decoder.attention.attention.0.query.weight",
                        "decoder.attention.attention.0.key.weight", "decoder.feed_forward.linear_1.bias"}));
  EXPECT_EQ(ops(*function(m, "__main__.DecoderLayer").body),
            (std::vector<std::string>{"LayerNorm", "__main__.MultiAttentionBlock", "Add", "LayerNorm", "__main__.FeedForward", "Add"}));
  // One AttentionBlock function serves both heads.
  EXPECT_EQ(ops(*function(m, "__main__.MultiAttentionBlock").body),
            (std::vector<std::string>{"__main__.AttentionBlock", "__main__.AttentionBlock", "Concat", "Linear_l2l"}));
  EXPECT_EQ(ops(*function(m, "__main__.FeedForward").body), (std::vector<std::string>{"Linear_l3l", "ReLU", "Linear_l4l"}));
  EXPECT_EQ(ops(*function(m, "__main__.Embedding").body), (std::vector<std::string>{"Embedding", "Embedding", "Add"}));
  EXPECT_EQ(ops(*function(m, "Embedding").body), (std::vector<std::string>{"Gather"}));
  EXPECT_EQ(ops(*function(m, "Linear").body), (std::vector<std::string>{"Transpose", "MatMul"}));
  // Small weights (LayerNorm's 16 floats) live in the body as constants.
  EXPECT_EQ(ops(*function(m, "LayerNorm").body),
            (std::vector<std::string>{"Constant", "Constant", "LayerNormalization"}));
  const std::vector<std::string> attention = ops(*function(m, "__main__.AttentionBlock").body);
  EXPECT_EQ(std::count(attention.begin(), attention.end(), "Linear"), 3);
  EXPECT_EQ(std::count(attention.begin(), attention.end(), "Softmax"), 1);
  EXPECT_EQ(m.graph->initializers().size(), 14u);  // the 14 weights of the documented export
}

TEST(FunctionsDemoLlm, ShapesGoThroughTheCalls) {
  ir::Model m = demo_models().with_functions;
  ir::Value& embedded = m.graph->value(m.graph->at("_onx_add0"));
  embedded.elem = ElemType::Undefined;
  embedded.shape.reset();
  functions::infer_model(m);
  EXPECT_EQ(embedded.elem, ElemType::Float);
  ASSERT_TRUE(embedded.shape);
  EXPECT_EQ(*embedded.shape, (Shape{1, 30, 16}));
}

TEST(FunctionsDemoLlm, PlainExportedAndInlinedGiveTheSameOutputs) {
  DemoModels models = demo_models();
  ir::Model reinlined = demo_models().with_functions;
  functions::inline_functions(reinlined);
  EXPECT_TRUE(reinlined.functions.empty());
  // The plain graph again, in the same order, plus the Constant nodes that held the small weights.
  std::vector<std::string> without_constants = ops(*reinlined.graph);
  std::erase(without_constants, "Constant");
  EXPECT_EQ(without_constants, ops(*models.plain.graph));

  const NamedTensors expected = evaluate(models.plain);
  expect_all_close(evaluate(models.with_functions), expected, 1e-6, 1e-6);
  expect_all_close(evaluate(reinlined), expected, 1e-6, 1e-6);

  TempDir dir;
  save_model(models.plain, dir / "plain.onnx");
  save_model(models.with_functions, dir / "functions.onnx");
  save_model(reinlined, dir / "inlined.onnx");
  const NamedTensors ort_plain = run_onnxruntime(dir / "plain.onnx", demo_feeds());
  expect_all_close(ort_plain, expected, 1e-5, 1e-5);
  expect_all_close(run_onnxruntime(dir / "functions.onnx", demo_feeds()), ort_plain, 1e-6, 1e-6);
  expect_all_close(run_onnxruntime(dir / "inlined.onnx", demo_feeds()), ort_plain, 1e-6, 1e-6);
}
