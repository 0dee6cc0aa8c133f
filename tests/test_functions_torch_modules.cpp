// Modules of torch exports as local functions (functions/torch_modules.hpp, `xexp optimize MODEL
// --modules-as-functions`) on the shared models as torch's TorchScript exporter wrote them, module paths
// read from the node names: one function per distinct module body, calls nested as the modules are,
// the bodies optimized one by one; the result runs in ONNX Runtime with the original's outputs, and
// inlining gives a flat model back with the same outputs. Dynamo's module records
// (pkg.torch.onnx.name_scopes / class_hierarchy in NodeProto.metadata_props) are checked on a small
// model written here in that exact form: no dynamo export is among the shared models.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli.hpp"
#include "support/compare.hpp"
#include "support/ort.hpp"
#include "support/random_inputs.hpp"
#include "support/temp_dir.hpp"
#include "support/torch_records.hpp"
#include "xexp/functions/inliner.hpp"
#include "xexp/functions/torch_modules.hpp"
#include "xexp/onnx.hpp"
#include "xexp/optimizer/modules_as_functions.hpp"

using namespace xexp;

namespace {

const std::filesystem::path kTorchModels = std::filesystem::path(XEXP_SHARED_DIR) / "models";

xexp::testing::NamedTensors input_ids_of(const std::string& name) {
  return {{"input_ids", Tensor::from<int64_t>({2, 16}, xexp::testing::read_file<std::vector<int64_t>>(
                                                           kTorchModels / (name + ".input_ids.bin")))}};
}

// Local function name -> number of calls, in the main graph and in the bodies.
std::map<std::string, int> calls_of(const ir::Model& model) {
  std::map<std::string, int> calls;
  auto count = [&](const ir::Graph& g) {
    functions::for_each_node_deep(g, [&](const ir::Node& n) {
      if (n.domain.view() == functions::kLocalFunctionDomain) ++calls[n.op_type.str()];
    });
  };
  count(*model.graph);
  for (const ir::Function& f : model.functions) count(*f.body);
  return calls;
}

// The names of the nodes calling `function`, sorted (a call is named after its module instance).
std::vector<std::string> callers_of(const ir::Model& model, const std::string& function) {
  std::vector<std::string> names;
  auto collect = [&](const ir::Graph& g) {
    functions::for_each_node_deep(g, [&](const ir::Node& n) {
      if (n.domain.view() == functions::kLocalFunctionDomain && n.op_type.view() == function)
        names.push_back(n.name);
    });
  };
  collect(*model.graph);
  for (const ir::Function& f : model.functions) collect(*f.body);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> ops_of(const ir::Graph& g) {
  std::vector<std::string> ops;
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    ops.push_back(n.domain.empty() ? n.op_type.str() : n.domain.str() + "." + n.op_type.str());
  }
  return ops;
}

const ir::Function& function_named(const ir::Model& model, const std::string& name) {
  const ir::Function* f = model.find_function(std::string(functions::kLocalFunctionDomain), name);
  if (!f) throw Error("no function " + name);
  return *f;
}

// The op types of the model without its Constant nodes, sorted: exporting and inlining move constants
// between nodes and initializers, and nothing else.
std::vector<std::string> sorted_ops_without_constants(const ir::Graph& g) {
  std::vector<std::string> ops = ops_of(g);
  std::erase(ops, "Constant");
  std::sort(ops.begin(), ops.end());
  return ops;
}

std::string save_in(const xexp::testing::TempDir& dir, const ir::Model& model, const std::string& file) {
  const std::string path = (dir.path() / file).string();
  save_model(model, path);
  return path;
}

// Runs each path in ONNX Runtime on `feeds` and compares its outputs with the first one's.
void expect_same_outputs_in_ort(const std::vector<std::string>& paths,
                                const xexp::testing::NamedTensors& feeds, double tolerance) {
  std::vector<xexp::testing::OrtJob> jobs;
  for (const std::string& path : paths) jobs.push_back({path, feeds});
  const std::vector<xexp::testing::OrtResult> results = xexp::testing::run_onnxruntime_batch(jobs);
  for (std::size_t k = 0; k < paths.size(); ++k)
    ASSERT_TRUE(results[k].ok) << paths[k] << ": " << results[k].error;
  for (std::size_t k = 1; k < paths.size(); ++k) {
    SCOPED_TRACE(paths[k]);
    xexp::testing::expect_all_close(results[k].outputs, results[0].outputs, tolerance, tolerance);
  }
}

struct TorchExport {
  std::string model;
  std::map<std::string, int> exported_calls, optimized_calls;
  // function -> a fused op its optimized body holds. Every optimized model fuses an erf Gelu or a SiLU
  // in a body; the gpt models lose BiasGelu to the function boundary (the bias Add is in the Linear's
  // body), and keep the exact Gelu.
  std::map<std::string, std::string> fused;
};

void PrintTo(const TorchExport& e, std::ostream* os) { *os << e.model; }

const std::map<std::string, int> kGptCalls = {{"attn", 1}, {"c_attn", 4}, {"h", 1},   {"lm_head", 1},
                                              {"ln_1", 3}, {"mlp", 1},    {"wpe", 1}, {"wte", 1}};
const std::map<std::string, int> kLlamaCalls = {{"act_fn", 1}, {"embed_tokens", 1}, {"input_layernorm", 2},
                                                {"layers", 1}, {"mlp", 1},          {"norm", 1},
                                                {"q_proj", 8}, {"rotary_emb", 1},   {"self_attn", 1}};

std::map<std::string, int> without(std::map<std::string, int> calls, const std::string& name) {
  calls.erase(name);
  return calls;
}

std::map<std::string, int> gpt_dynamic_calls() {  // wpe reads computed positions, as wte reads ids: one body
  std::map<std::string, int> calls = without(kGptCalls, "wpe");
  calls["wte"] = 2;
  return calls;
}

class TorchExports : public ::testing::TestWithParam<TorchExport> {};

}  // namespace

TEST(TorchModules, ModulePathsFromTorchScriptNames) {
  ir::Node n;
  n.name = "/model/layers.0/self_attn/q_proj/MatMul";
  EXPECT_EQ(functions::torch_module_stack(n), (ModuleStack{{"model", "model"},
                                                           {"model.layers.0", "layers"},
                                                           {"model.layers.0.self_attn", "self_attn"},
                                                           {"model.layers.0.self_attn.q_proj", "q_proj"}}));
  EXPECT_EQ(functions::torch_module_stack(n, 2),
            (ModuleStack{{"model", "model"}, {"model.layers.0", "layers"}}));
  n.name = "/Add_1";  // the model itself
  EXPECT_TRUE(functions::torch_module_stack(n).empty());
  n.name = "Constant_15";  // no module path
  EXPECT_TRUE(functions::torch_module_stack(n).empty());
}

TEST_P(TorchExports, EachModuleInstanceIsACallAndInliningGivesTheFlatModelBack) {
  const TorchExport& e = GetParam();
  const std::string original = (kTorchModels / (e.model + ".onnx")).string();
  const ir::Model flat = load_model(original);
  ir::Model exported = functions::export_torch_modules_as_functions(load_model(original));
  EXPECT_EQ(calls_of(exported), e.exported_calls);
  EXPECT_EQ(exported.functions.size(), e.exported_calls.size());
  if (e.model.starts_with("gpt")) {  // the four Linear layers of the block share one body
    EXPECT_EQ(callers_of(exported, "c_attn"), (std::vector<std::string>{"h.0.attn.c_attn", "h.0.attn.c_proj",
                                                                        "h.0.mlp.c_fc", "h.0.mlp.c_proj"}));
    EXPECT_EQ(callers_of(exported, "ln_1"), (std::vector<std::string>{"h.0.ln_1", "h.0.ln_2", "ln_f"}));
  } else {  // q, k, v, o, gate, up, down and lm_head: Linear without bias
    EXPECT_EQ(callers_of(exported, "q_proj").size(), 8u);
    EXPECT_EQ(ops_of(*function_named(exported, "q_proj").body),
              (std::vector<std::string>{"Transpose", "MatMul"}));
  }
  // Weights stay in the main graph, passed to the calls; no body holds an initializer.
  for (const ir::Function& f : exported.functions) EXPECT_TRUE(f.body->initializers().empty()) << f.name;

  xexp::testing::TempDir dir;
  const std::string with_functions = save_in(dir, exported, "functions.onnx");
  ir::Model inlined = load_model(with_functions);
  functions::inline_functions(inlined);
  EXPECT_TRUE(inlined.functions.empty());
  EXPECT_EQ(sorted_ops_without_constants(*inlined.graph), sorted_ops_without_constants(*flat.graph));
  expect_same_outputs_in_ort({original, with_functions, save_in(dir, inlined, "inlined.onnx")},
                             input_ids_of(e.model.substr(0, e.model.find('.'))), 1e-5);
}

TEST_P(TorchExports, BodiesAreOptimizedOneByOne) {
  const TorchExport& e = GetParam();
  const std::string original = (kTorchModels / (e.model + ".onnx")).string();
  ir::Model model = load_model(original);
  std::ostringstream log;
  optimizer::OptimizeModelOptions options;
  options.log = &log;
  const optimizer::OptimizeModelReport report = optimizer::optimize_modules_as_functions(model, options);
  EXPECT_EQ(report.nodes_before, load_model(original).graph->node_count());
  EXPECT_LT(report.nodes_after, report.nodes_before / 2);
  EXPECT_EQ(calls_of(model), e.optimized_calls);
  for (const auto& [function, op] : e.fused) {
    const std::vector<std::string> ops = ops_of(*function_named(model, function).body);
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << function << " has no " << op;
  }

  xexp::testing::TempDir dir;
  const std::string optimized = save_in(dir, model, "optimized.onnx");
  ir::Model inlined = load_model(optimized);
  functions::inline_functions(inlined);
  EXPECT_TRUE(inlined.functions.empty());
  expect_same_outputs_in_ort({original, optimized, save_in(dir, inlined, "inlined.onnx")},
                             input_ids_of(e.model.substr(0, e.model.find('.'))), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    SharedModels, TorchExports,
    ::testing::Values(TorchExport{"gpt_erf_L1",
                                  kGptCalls,
                                  without(kGptCalls, "wpe"),  // positions fold: wpe is a constant
                                  {{"mlp", "com.microsoft.Gelu"}}},
                      TorchExport{"gpt_erf_L1.op14dyn",
                                  gpt_dynamic_calls(),
                                  gpt_dynamic_calls(),
                                  {{"ln_1", "LayerNormalization"}, {"mlp", "com.microsoft.Gelu"}}},
                      TorchExport{"llama_L1",
                                  kLlamaCalls,
                                  without(kLlamaCalls, "rotary_emb"),  // cos/sin slices fold
                                  {{"act_fn", "com.microsoft.QuickGelu"},
                                   {"input_layernorm", "SimplifiedLayerNormalization"},
                                   {"norm", "SimplifiedLayerNormalization"},
                                   {"self_attn", "com.microsoft.MultiHeadAttention"}}},
                      TorchExport{"llama_L1.op14dyn",
                                  kLlamaCalls,
                                  kLlamaCalls,
                                  {{"act_fn", "com.microsoft.QuickGelu"},
                                   {"input_layernorm", "SimplifiedLayerNormalization"},
                                   {"self_attn", "com.microsoft.MultiHeadAttention"}}}),
    [](const ::testing::TestParamInfo<TorchExport>& info) {
      std::string name = info.param.model;
      std::replace(name.begin(), name.end(), '.', '_');
      return name;
    });

namespace {

// y = Gate(head(blocks.1(blocks.0(x)))) + x, out = Identity(y), with the module records dynamo writes:
// blocks.0 and blocks.1 are __main__.Block (a Linear without bias, 8x8 weights, then Relu), head a
// Linear with a small bias, gate a __main__.Gate holding an If whose branches read the head's output;
// the final Add is the root module's own node, the Identity carries no record.
ir::Model dynamo_like_model() {
  ir::Model m;
  m.opsets = {{"", 18, {}}};
  ir::Graph& g = *m.graph;
  const ir::ValueId x = g.add_input("x", ElemType::Float, Shape{2, 8});
  const ir::ValueId c = g.add_input("c", ElemType::Bool, Shape{});
  std::vector<float> w(64);
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = static_cast<float>(k % 7) * 0.1f - 0.3f;
  const ir::ValueId w0 = g.add_initializer("blocks.0.fc.weight", Tensor::from<float>({8, 8}, w));
  std::reverse(w.begin(), w.end());
  const ir::ValueId w1 = g.add_initializer("blocks.1.fc.weight", Tensor::from<float>({8, 8}, w));
  std::rotate(w.begin(), w.begin() + 5, w.end());
  const ir::ValueId w2 = g.add_initializer("head.weight", Tensor::from<float>({8, 8}, w));
  const ir::ValueId b2 =
      g.add_initializer("head.bias", Tensor::from<float>({8}, {1, -1, 2, -2, 3, -3, 4, -4}));
  auto add = [&](const char* op, std::vector<ir::ValueId> ins, const std::string& out,
                 const std::string& scopes, const std::string& classes,
                 std::vector<ir::Attribute> attrs = {}) {
    const ir::ValueId v = g.add_value(out);
    const ir::NodeId id = g.add_node(Symbol(op), std::move(ins), {v}, std::move(attrs), "node_" + out);
    if (!scopes.empty()) xexp::testing::record_torch_module(g.node(id), scopes, classes);
    return v;
  };
  const std::string net = "'__main__.Net', ", block = "'__main__.Block', ",
                    linear = "'torch.nn.modules.linear.Linear', ";
  ir::ValueId h = x;
  for (const std::string b : {"blocks.0", "blocks.1"}) {
    h = add("MatMul", {h, b == "blocks.0" ? w0 : w1}, b + ".mm", "['', '" + b + "', '" + b + ".fc', 'mm']",
            "[" + net + block + linear + "'aten.mm.default']");
    h = add("Relu", {h}, b + ".relu", "['', '" + b + "', 'relu']",
            "[" + net + block + "'aten.relu.default']");
  }
  h = add("MatMul", {h, w2}, "head.mm", "['', 'head', 'mm_2']", "[" + net + linear + "'aten.mm.default']");
  h = add("Add", {h, b2}, "head.add", "['', 'head', 'add_1']", "[" + net + linear + "'aten.add.Tensor']");
  auto branch = [&](const char* op, const std::string& out) {
    auto sub = std::make_shared<ir::Graph>();
    sub->parent = &g;
    sub->name = out + "_branch";
    const ir::ValueId in = sub->add_captured("head.add");
    const ir::ValueId r = sub->add_value(out);
    sub->value(r).elem = ElemType::Float;
    sub->value(r).shape = Shape{2, 8};
    sub->add_node(Symbol(op), {in}, {r}, {}, out);
    sub->add_output(r);
    return sub;
  };
  const ir::ValueId gated =
      add("If", {c}, "gate.cond", "['', 'gate', 'cond']",
          "[" + net + "'__main__.Gate', 'torch.ops.higher_order.cond']",
          {ir::Attribute::make_graph(Symbol("then_branch"), branch("Neg", "negated")),
           ir::Attribute::make_graph(Symbol("else_branch"), branch("Identity", "kept"))});
  g.add_captured_use(g.value(gated).producer, h);
  const ir::ValueId y = add("Add", {gated, x}, "y", "['', 'add_2']", "[" + net + "'aten.add.Tensor']");
  const ir::ValueId out = g.add_value("out");
  g.value(out).elem = ElemType::Float;
  g.add_node(Symbol("Identity"), {y}, {out}, {}, "final_identity");
  g.add_output(out);
  return m;
}

}  // namespace

TEST(TorchModules, DynamoModuleRecords) {
  xexp::testing::TempDir dir;
  const std::string original = save_in(dir, dynamo_like_model(), "dynamo.onnx");
  const ir::Model flat = load_model(original);
  // The loader keeps the records (ONNX 1.12 does not know the field) and they read back as written.
  const ir::Node& first = flat.graph->node(flat.graph->first_node());
  EXPECT_EQ(node_metadata(first, functions::kTorchNameScopesKey).value_or(""),
            "['', 'blocks.0', 'blocks.0.fc', 'mm']");
  EXPECT_EQ(functions::torch_module_stack(first),
            (ModuleStack{{"blocks.0", "__main__.Block"}, {"blocks.0.fc", "Linear"}}));

  ir::Model exported = functions::export_torch_modules_as_functions(load_model(original));
  // Both Blocks are one function (weights of 256 bytes are inputs); the head's Linear holds its small
  // bias as a Constant, so it differs from the blocks' Linear and is renamed.
  EXPECT_EQ(calls_of(exported),
            (std::map<std::string, int>{
                {"Linear", 1}, {"Linear_l2l", 1}, {"__main__.Block", 2}, {"__main__.Gate", 1}}));
  EXPECT_EQ(ops_of(*exported.graph),
            (std::vector<std::string>{"aten_local_function.__main__.Block",
                                      "aten_local_function.__main__.Block", "aten_local_function.Linear_l2l",
                                      "aten_local_function.__main__.Gate", "Add", "Identity"}));
  EXPECT_EQ(ops_of(*function_named(exported, "__main__.Block").body),
            (std::vector<std::string>{"aten_local_function.Linear", "Relu"}));
  EXPECT_EQ(ops_of(*function_named(exported, "Linear_l2l").body),
            (std::vector<std::string>{"MatMul", "Constant", "Add"}));
  EXPECT_EQ(ops_of(*function_named(exported, "__main__.Gate").body), (std::vector<std::string>{"If"}));

  functions::TorchModuleOptions outer;
  outer.max_depth = 1;
  const ir::Model shallow = functions::export_torch_modules_as_functions(load_model(original), outer);
  EXPECT_EQ(calls_of(shallow),
            (std::map<std::string, int>{{"Linear", 1}, {"__main__.Block", 2}, {"__main__.Gate", 1}}));
  EXPECT_EQ(ops_of(*function_named(shallow, "__main__.Block").body),
            (std::vector<std::string>{"MatMul", "Relu"}));

  const std::string with_functions = save_in(dir, exported, "functions.onnx");
  ir::Model inlined = load_model(with_functions);
  functions::inline_functions(inlined);
  EXPECT_EQ(sorted_ops_without_constants(*inlined.graph), sorted_ops_without_constants(*flat.graph));
  xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*flat.graph, {.seed = 5});
  feeds[1].second = Tensor::scalar<bool>(true);  // the branch that computes something
  expect_same_outputs_in_ort({original, with_functions, save_in(dir, shallow, "shallow.onnx"),
                              save_in(dir, inlined, "inlined.onnx")},
                             feeds, 1e-6);
}

TEST(TorchModules, CliOptimizesAndInlinesBack) {
  xexp::testing::TempDir dir;
  const std::string original = (kTorchModels / "llama_L1.op14dyn.onnx").string();
  const std::string optimized = (dir.path() / "functions.onnx").string();
  const std::string flat = (dir.path() / "flat.onnx").string();
  const xexp::testing::CommandResult opt =
      xexp::testing::run_xexp("optimize " + xexp::testing::shell_quote(original) + " -o " +
                              xexp::testing::shell_quote(optimized) + " --modules-as-functions");
  ASSERT_EQ(opt.exit_code, 0) << opt.err;
  EXPECT_NE(opt.out.find(": 266 -> "), std::string::npos) << opt.out;  // the flat model's count before
  const ir::Model with_functions = load_model(optimized);
  EXPECT_EQ(calls_of(with_functions), kLlamaCalls);
  const xexp::testing::CommandResult inl = xexp::testing::run_xexp(
      "inline " + xexp::testing::shell_quote(optimized) + " -o " + xexp::testing::shell_quote(flat));
  ASSERT_EQ(inl.exit_code, 0) << inl.err;
  EXPECT_TRUE(load_model(flat).functions.empty());
  expect_same_outputs_in_ort({original, optimized, flat}, input_ids_of("llama_L1"), 1e-5);

  // --module-depth 1: the top-level modules only (embed_tokens, layers, norm, lm_head).
  const std::string shallow = (dir.path() / "shallow.onnx").string();
  const xexp::testing::CommandResult depth = xexp::testing::run_xexp(
      "optimize " + xexp::testing::shell_quote(original) + " -o " + xexp::testing::shell_quote(shallow) +
      " --modules-as-functions --module-depth 1");
  ASSERT_EQ(depth.exit_code, 0) << depth.err;
  EXPECT_EQ(calls_of(load_model(shallow)),
            (std::map<std::string, int>{{"embed_tokens", 1}, {"layers", 1}, {"lm_head", 1}, {"norm", 1}}));
}

TEST(TorchModules, AttributeNamesTakenByADifferentBodyAreRenamed) {
  // seed_llm: `decoder.attention` (several heads) holds the heads `decoder.attention.attention.0` and
  // `.1`: all three are named `attention`. As exported, head 1 reads the scale head 0 computed (the
  // exporter shared a Pow), so the heads differ: attention, attention_l2l, and the block attention_l3l.
  // Once constants are folded first (as --modules-as-functions does), both heads are one function.
  const std::string original = (kTorchModels / "seed_llm.onnx").string();
  const ir::Model exported = functions::export_torch_modules_as_functions(load_model(original));
  EXPECT_EQ(callers_of(exported, "attention"), (std::vector<std::string>{"decoder.attention.attention.0"}));
  EXPECT_EQ(callers_of(exported, "attention_l2l"),
            (std::vector<std::string>{"decoder.attention.attention.1"}));
  EXPECT_EQ(callers_of(exported, "attention_l3l"), (std::vector<std::string>{"decoder.attention"}));
  // `embedding` holds two embeddings (embedding and pe): one body, and the outer module is renamed.
  EXPECT_EQ(callers_of(exported, "embedding"),
            (std::vector<std::string>{"embedding.embedding", "embedding.pe"}));
  EXPECT_EQ(callers_of(exported, "embedding_l2l"), (std::vector<std::string>{"embedding"}));

  ir::Model optimized = load_model(original);
  std::ostringstream log;
  optimizer::OptimizeModelOptions options;
  options.log = &log;
  optimizer::optimize_modules_as_functions(optimized, options);
  EXPECT_EQ(callers_of(optimized, "attention"),
            (std::vector<std::string>{"decoder.attention.attention.0", "decoder.attention.attention.1"}));
  EXPECT_EQ(callers_of(optimized, "attention_l2l"), (std::vector<std::string>{"decoder.attention"}));

  xexp::testing::TempDir dir;
  const ir::Model flat = load_model(original);
  expect_same_outputs_in_ort(
      {original, save_in(dir, exported, "functions.onnx"), save_in(dir, optimized, "optimized.onnx")},
      xexp::testing::random_feeds(*flat.graph, {.seed = 3}), 1e-5);
}
