// `xexp optimize` and `xexp patterns`, run as a user runs them (the built binary, XEXP_CLI): names of
// graph inputs and outputs kept, statistics printed, one-line errors, and the optimized demo model gives
// the same numbers as the demo model in ONNX Runtime.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "support/aten_graphs.hpp"
#include "support/cli.hpp"
#include "support/compare.hpp"
#include "support/ort.hpp"
#include "support/random_inputs.hpp"
#include "support/rewrite_helpers.hpp"
#include "support/temp_dir.hpp"
#include "xexp/eval/evaluator.hpp"
#include "xexp/onnx.hpp"
#include "xexp/onnx/schema.hpp"
#include "xexp/patterns.hpp"
#include "xexp/tools.hpp"

using namespace xexp;
using namespace xexp::testing;

namespace {

const std::string kSeedLlm = std::string(XEXP_SHARED_DIR) + "/models/seed_llm.onnx";

std::vector<std::string> names(const ir::Graph& g, const std::vector<ir::ValueId>& ids) {
  std::vector<std::string> out;
  for (ir::ValueId id : ids) out.push_back(g.value(id).name);
  return out;
}

std::size_t count_op(const ir::Model& model, std::string_view op) {
  std::size_t n = 0;
  for (ir::NodeId id : model.graph->nodes()) n += model.graph->node(id).op_type.view() == op;
  return n;
}

// How many nodes of each op_types() name ("Softmax", "com.microsoft.FusedMatMul",
// "intermediate.Attention"), over the main graph and the function bodies.
std::map<std::string, std::size_t> op_histogram(const ir::Model& model) {
  std::map<std::string, std::size_t> counts;
  for (const std::string& op : test::op_types(*model.graph)) ++counts[op];
  for (const ir::Function& f : model.functions)
    for (const std::string& op : test::op_types(*f.body)) ++counts[op];
  return counts;
}

}  // namespace

TEST(CliOptimize, KeepsInputAndOutputNamesAndPrintsStatistics) {
  TempDir dir;
  const std::string out = dir / "optimized.onnx";
  const CommandResult r =
      run_xexp("optimize " + shell_quote(kSeedLlm) + " -o " + shell_quote(out) + " --stats");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ir::Model before = load_model(kSeedLlm), after = load_model(out);
  EXPECT_EQ(names(*after.graph, after.graph->inputs()), names(*before.graph, before.graph->inputs()));
  EXPECT_EQ(names(*after.graph, after.graph->outputs()), names(*before.graph, before.graph->outputs()));
  EXPECT_LT(after.graph->node_count(), before.graph->node_count());
  // The summary line gives the node counts the saved file has; the table follows it.
  const std::string counts = std::to_string(before.graph->node_count()) + " -> " +
                             std::to_string(optimizer::count_nodes(after)) + " nodes";
  EXPECT_NE(r.out.find("optimized: " + counts), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("matched"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote " + out), std::string::npos) << r.out;
}

TEST(CliOptimize, WithoutStatsPrintsOnlyTheSummary) {
  TempDir dir;
  const CommandResult r =
      run_xexp("optimize " + shell_quote(kSeedLlm) + " -o " + shell_quote(dir / "o.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("matched"), std::string::npos) << r.out;
  // The summary, then only the hints: what a newer opset or an opt-in set would fuse, what stage 1 kept.
  std::istringstream lines(r.out);
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  EXPECT_NE(line.find(" nodes, wrote "), std::string::npos) << r.out;
  while (std::getline(lines, line))
    EXPECT_TRUE(line.find(" would fuse with ") != std::string::npos || line.starts_with("kept ")) << line;
}

TEST(CliOptimize, ConstantFoldingCanBeTurnedOff) {
  TempDir dir;
  const std::string folded = dir / "folded.onnx", kept = dir / "kept.onnx";
  ASSERT_EQ(run_xexp("optimize " + shell_quote(kSeedLlm) + " -o " + shell_quote(folded) + " --patterns none")
                .exit_code,
            0);
  const CommandResult r = run_xexp("optimize " + shell_quote(kSeedLlm) + " -o " + shell_quote(kept) +
                                   " --patterns none --no-constant-folding");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // seed_llm.onnx is the exporter's raw graph: the Linear weights go through Transpose nodes that fold
  // away (the driver's clean-ups, Identity removal, run either way).
  const std::size_t transposes = count_op(load_model(kSeedLlm), "Transpose");
  ASSERT_GT(transposes, 0u);
  EXPECT_EQ(count_op(load_model(kept), "Transpose"), transposes);
  EXPECT_LT(count_op(load_model(folded), "Transpose"), transposes);
  EXPECT_LT(load_model(folded).graph->node_count(), load_model(kept).graph->node_count());
}

TEST(CliOptimize, VerboseLogsTheIterations) {
  TempDir dir;
  const CommandResult r =
      run_xexp("optimize " + shell_quote(kSeedLlm) + " -o " + shell_quote(dir / "o.onnx") + " --verbose 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("[GraphBuilderPatternOptimization.optimize] iteration 0"), std::string::npos) << r.out;
}

// seed_llm's two attentions have one head each, and its LayerNorms follow residual Adds. ONNX Runtime's
// CPU provider runs both faster unfused (bench/README.md): the default rules leave them, the opt-in
// onnxruntime_gpu set fuses them, and `xexp optimize` says so; the outputs stay the same either way.
TEST(CliOptimize, DefaultLeavesTheFusionsTheCpuRunsSlowerToTheGpuSet) {
  TempDir dir;
  const std::string cpu = dir / "cpu.onnx", gpu = dir / "gpu.onnx";
  const CommandResult r = run_xexp("optimize " + shell_quote(kSeedLlm) + " -o " + shell_quote(cpu));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 MultiHeadAttentionOneHead, 2 SkipLayerNormalization matches would fuse with "
                       "--patterns default+onnxruntime+onnxruntime_gpu\n"),
            std::string::npos)
      << r.out;
  ASSERT_EQ(run_xexp("optimize " + shell_quote(kSeedLlm) + " -o " + shell_quote(gpu) +
                     " --patterns default+onnxruntime+onnxruntime_gpu")
                .exit_code,
            0);
  const ir::Model for_cpu = load_model(cpu), for_gpu = load_model(gpu);
  EXPECT_EQ(count_op(for_gpu, "MultiHeadAttention"), 2u);
  EXPECT_EQ(count_op(for_gpu, "SkipLayerNormalization"), 2u);
  // Each declares the outputs that are read: the normalized sum, and the sum itself, which the next
  // residual Add reads (in both); never the mean and deviation nothing reads.
  std::vector<std::size_t> declared;
  for (ir::NodeId id : for_gpu.graph->nodes()) {
    const ir::Node& n = for_gpu.graph->node(id);
    if (n.op_type.view() != "SkipLayerNormalization") continue;
    declared.push_back(n.outputs.size());
    for (std::size_t k = 1; k < n.outputs.size(); ++k)
      EXPECT_EQ(n.outputs[k] != ir::kNone, k == 3) << "output " << k << " of " << n.name;
  }
  EXPECT_EQ(declared, (std::vector<std::size_t>{4, 4}));
  EXPECT_EQ(count_op(for_cpu, "MultiHeadAttention"), 0u);
  EXPECT_EQ(count_op(for_cpu, "SkipLayerNormalization"), 0u);
  // Their nodes stay, as the calls of one intermediate function ONNX Runtime inlines (stage 1 of the LLM
  // fusions: ONNX's Attention needs opset 23).
  EXPECT_EQ(op_histogram(for_cpu)["intermediate.AttentionOneHead"], 2u);
  EXPECT_EQ(op_histogram(for_cpu)["Softmax"], 1u);
  EXPECT_EQ(count_op(for_cpu, "LayerNormalization"), 2u);
  // The scores keep the onnxruntime set's other fusions (in the function's body).
  EXPECT_EQ(op_histogram(for_cpu)["com.microsoft.FusedMatMul"], 1u);
  const NamedTensors feeds = random_feeds(*load_model(kSeedLlm).graph, {.seed = 3, .int_high = 100});
  const NamedTensors expected = run_onnxruntime(kSeedLlm, feeds);
  expect_all_close(run_onnxruntime(cpu, feeds), expected, 1e-5, 1e-5);
  expect_all_close(run_onnxruntime(gpu, feeds), expected, 1e-5, 1e-5);
}

// A backward graph of the corpus (torch's ONNX Runtime backend training a Phi layer), as it was written:
// one line names the opt-in set whose rules would fuse it, with the spec that takes them; with that
// spec they do, and the line is gone. A spec taking nothing of the onnxruntime set hears of it too.
TEST(CliOptimize, SaysWhichRulesOfTheSetsLeftOutWouldFuse) {
  TempDir dir;
  const std::string phi =
      std::string(XEXP_SHARED_DIR) + "/corpus/experimental-experiment/ut_xoptim_data_phi_1_good.onnx";
  const std::string out = dir / "out.onnx", training = dir / "training.onnx";
  const CommandResult r = run_xexp("optimize " + shell_quote(phi) + " -o " + shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find(
          "\n2 SoftmaxGrad matches would fuse with --patterns default+onnxruntime+onnxruntime_training\n"),
      std::string::npos)
      << r.out;
  const CommandResult t = run_xexp("optimize " + shell_quote(phi) + " -o " + shell_quote(training) +
                                   " --patterns default+onnxruntime+onnxruntime_training");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out.find("would fuse"), std::string::npos) << t.out;
  EXPECT_EQ(count_op(load_model(training), "SoftmaxGrad"), 2u);
  const CommandResult d =
      run_xexp("optimize " + shell_quote(kSeedLlm) + " -o " + shell_quote(out) + " --patterns default");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  // Each set the spec leaves out, with the spec that adds it.
  EXPECT_NE(d.out.find("\n1 FusedGemm, 2 FusedMatMul, 2 FusedMatMulDiv matches would fuse with --patterns "
                       "default+onnxruntime, 2 MultiHeadAttentionOneHead, 2 SkipLayerNormalization with "
                       "--patterns default+onnxruntime_gpu\n"),
            std::string::npos)
      << d.out;
}

TEST(CliOptimize, BadPatternSpecIsOneErrorLineAndWritesNothing) {
  TempDir dir;
  const std::string out = dir / "o.onnx";
  const CommandResult r = run_xexp("optimize " + shell_quote(kSeedLlm) + " -o " + shell_quote(out) +
                                   " --patterns default+NoSuchRule");
  expect_error_mentioning(r, "NoSuchRule");
  EXPECT_FALSE(std::filesystem::exists(out));
  expect_error_mentioning(
      run_xexp("optimize " + shell_quote(kSeedLlm) + " -o " + shell_quote(out) + " --patterns default++"),
      "empty name");
  expect_error_mentioning(run_xexp("patterns default-NoSuchRule"), "NoSuchRule");
}

TEST(CliOptimize, MissingOrWrongArgumentsAreOneErrorLine) {
  TempDir dir;
  expect_error_mentioning(run_xexp("optimize " + shell_quote(kSeedLlm)), "-o");
  expect_error_mentioning(
      run_xexp("optimize " + shell_quote(dir / "absent.onnx") + " -o " + shell_quote(dir / "o.onnx")),
      "absent.onnx");
  expect_error_mentioning(run_xexp("optimize -o " + shell_quote(dir / "o.onnx"), dir.path().string()),
                          "--output");
  expect_error_mentioning(run_xexp("optimize " + shell_quote(kSeedLlm) + " -o " + shell_quote(kSeedLlm)),
                          "is an input file");
  expect_error_mentioning(run_xexp("optimize " + shell_quote(kSeedLlm) + " -o x --verbose many"),
                          "--verbose");
}

TEST(CliOptimize, PatternsListsEveryRuleWithItsSetAndDescription) {
  const CommandResult r = run_xexp("patterns");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::size_t lines = 0;
  for (const std::string& set : rewrite::Catalog::global().set_names()) {
    for (const rewrite::RulePtr& rule : rewrite::rules_from_string(set)) {
      ++lines;
      const std::string expected = "P" + std::to_string(rule->priority()) + "  " + rule->describe() + "\n";
      const std::size_t at = r.out.find(expected);
      ASSERT_NE(at, std::string::npos) << rule->name() << "\n" << r.out;
      const std::size_t line_start = r.out.rfind('\n', at) + 1;  // npos + 1 == 0 on the first line
      EXPECT_EQ(r.out.compare(line_start, set.size(), set), 0)
          << r.out.substr(line_start, at - line_start);
    }
  }
  EXPECT_GE(std::count(r.out.begin(), r.out.end(), '\n'), static_cast<std::ptrdiff_t>(lines));
  const CommandResult one = run_xexp("patterns Cast");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out.rfind("Cast ", 0), 0u) << one.out;
  EXPECT_TRUE(one.out.ends_with(" P0  " + rewrite::rules_from_string("Cast")[0]->describe() + "\n"))
      << one.out;
  EXPECT_EQ(std::count(one.out.begin(), one.out.end(), '\n'), 1) << one.out;
}

// The main job, as `xexp optimize` without a model and as `xexp` alone.
TEST(CliOptimize, MainJobOptimizedDemoGivesTheSameOutputsInOnnxRuntime) {
  for (const char* args : {"optimize", ""}) {
    SCOPED_TRACE(std::string("xexp ") + args);
    TempDir dir;
    const CommandResult r = run_xexp(args, dir.path().string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("----- demo LLM optimized with default+onnxruntime"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("optimized: "), std::string::npos) << r.out;
    const std::string original = dir / "xexp_demo.onnx", optimized = dir / "xexp_demo.optimized.onnx";
    ASSERT_TRUE(std::filesystem::exists(original));
    ASSERT_TRUE(std::filesystem::exists(optimized));
    const ir::Model a = load_model(original), b = load_model(optimized);
    EXPECT_LT(b.graph->node_count(), a.graph->node_count());
    EXPECT_EQ(names(*b.graph, b.graph->outputs()), names(*a.graph, a.graph->outputs()));
    const NamedTensors feeds = random_feeds(*a.graph, {.seed = 3, .int_high = 100});
    expect_all_close(run_onnxruntime(optimized, feeds), run_onnxruntime(original, feeds), 1e-5, 1e-5);
  }
}

// Seed 000's "ONNX with submodules": the demo exported with its modules as local functions, written
// unoptimized (--patterns none) and optimized function by function; both, and the inlined model, give
// the outputs of the plain demo in ONNX Runtime.
TEST(CliOptimize, ModulesAsFunctionsKeepsTheFunctionsAndTheNumbers) {
  TempDir plain_dir, none_dir, opt_dir;
  ASSERT_EQ(run_xexp("optimize --patterns none --no-constant-folding", plain_dir.path().string()).exit_code,
            0);
  const CommandResult none = run_xexp("optimize --modules-as-functions --patterns none --no-constant-folding",
                                      none_dir.path().string());
  ASSERT_EQ(none.exit_code, 0) << none.err;
  const CommandResult opt = run_xexp("optimize --modules-as-functions", opt_dir.path().string());
  ASSERT_EQ(opt.exit_code, 0) << opt.err;
  EXPECT_NE(opt.out.find("with modules as local functions"), std::string::npos) << opt.out;

  const std::string plain = plain_dir / "xexp_demo.onnx";
  const std::string with_functions = none_dir / "xexp_demo.optimized.onnx";
  const std::string optimized = opt_dir / "xexp_demo.optimized.onnx";
  const std::string inlined = opt_dir / "inlined.onnx";
  ASSERT_EQ(run_xexp("inline " + shell_quote(optimized) + " -o " + shell_quote(inlined)).exit_code, 0);

  const ir::Model f = load_model(with_functions), o = load_model(optimized), i = load_model(inlined);
  std::vector<std::string> function_names;
  for (const ir::Function& fn : f.functions) function_names.push_back(fn.name);
  EXPECT_NE(std::find(function_names.begin(), function_names.end(), "__main__.AttentionBlock"),
            function_names.end());
  EXPECT_EQ(o.functions.size(), f.functions.size());
  EXPECT_TRUE(i.functions.empty());
  std::size_t nodes_before = 0, nodes_after = 0;
  for (const ir::Function& fn : f.functions) nodes_before += fn.body->node_count();
  for (const ir::Function& fn : o.functions) nodes_after += fn.body->node_count();
  EXPECT_LT(nodes_after, nodes_before) << "the optimizer works inside the functions";

  const ir::Model reference = load_model(plain);
  const NamedTensors feeds = random_feeds(*reference.graph, {.seed = 5, .int_high = 100});
  const NamedTensors expected = run_onnxruntime(plain, feeds);
  for (const std::string& path : {with_functions, optimized, inlined}) {
    SCOPED_TRACE(path);
    expect_all_close(run_onnxruntime(path, feeds), expected, 1e-5, 1e-5);
  }
}

// --target-opset on torch exports read from disk as the exporter wrote them (opset 14 with dynamic axes,
// opset 16): LayerNorm decompositions the `default` set leaves alone below 17 (saying so in one line)
// become LayerNormalization at 17 and 18, with the same outputs as the file in ONNX Runtime and in our
// evaluator.
namespace {

struct OpsetCase {
  const char* file;
  std::size_t layer_norms;
};
const OpsetCase kOpsetCases[] = {{"gpt_erf_L1.op14dyn.onnx", 3}, {"seed_llm.op16.onnx", 2}};

std::string shared_model(const char* file) { return std::string(XEXP_SHARED_DIR) + "/models/" + file; }

// Whether every default-domain node, of the main graph and of the function bodies, exists in ONNX at
// the model's own opset.
void expect_ops_exist_at_model_opset(const ir::Model& model) {
  const int64_t opset = model.opset("").value_or(0);
  auto check = [&](const ir::Graph& g) {
    for (ir::NodeId id : g.nodes()) {
      const ir::Node& n = g.node(id);
      if (n.domain.empty()) {
        EXPECT_NE(find_schema(n.op_type.view(), "", opset), nullptr)
            << n.op_type.view() << " at opset " << opset;
      }
    }
  };
  check(*model.graph);
  for (const ir::Function& f : model.functions) check(*f.body);
}

}  // namespace

TEST(CliOptimize, TargetOpsetUpgradesAndFusesLayerNormalization) {
  for (const OpsetCase& c : kOpsetCases) {
    SCOPED_TRACE(c.file);
    TempDir dir;
    const std::string original = shared_model(c.file);
    const int64_t opset = load_model(original).opset("").value();
    const std::string kept = dir / "kept.onnx", up17 = dir / "up17.onnx", up18 = dir / "up18.onnx";

    // Without the option: the opset stays, no op the opset lacks appears (in the intermediate functions
    // of the attention neither), one line says what 17 gives, and the LayerNorms stay plain nodes.
    const CommandResult k =
        run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(kept) + " --patterns default");
    ASSERT_EQ(k.exit_code, 0) << k.err;
    const ir::Model kept_model = load_model(kept);
    EXPECT_EQ(kept_model.opset(""), opset);
    EXPECT_EQ(op_histogram(kept_model).count("LayerNormalization"), 0u);
    EXPECT_EQ(count_op(kept_model, "ReduceMean"), 2 * c.layer_norms);
    expect_ops_exist_at_model_opset(kept_model);
    // The attention is a call (ONNX's Attention needs 23), in a model of the first IR version with
    // functions (gpt_erf_L1.op14dyn.onnx's is 7).
    ASSERT_EQ(kept_model.functions.size(), 1u);
    EXPECT_EQ(kept_model.functions[0].domain, optimizer::kIntermediateDomain);
    EXPECT_EQ(kept_model.ir_version, 8);
    EXPECT_NE(k.out.find(std::to_string(c.layer_norms) +
                         " LayerNormalization matches would fuse with --target-opset 17"),
              std::string::npos)
        << k.out;

    const CommandResult r17 = run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(up17) +
                                       " --patterns default --target-opset 17");
    ASSERT_EQ(r17.exit_code, 0) << r17.err;
    EXPECT_EQ(r17.out.find("with --target-opset 17"), std::string::npos) << r17.out;
    const CommandResult r18 = run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(up18) +
                                       " --patterns default --target-opset 18");
    ASSERT_EQ(r18.exit_code, 0) << r18.err;
    const ir::Model m17 = load_model(up17), m18 = load_model(up18);
    EXPECT_EQ(m17.opset(""), 17);
    EXPECT_EQ(m18.opset(""), 18);
    EXPECT_EQ(count_op(m17, "LayerNormalization"), c.layer_norms);
    EXPECT_EQ(count_op(m18, "LayerNormalization"), c.layer_norms);
    EXPECT_LT(optimizer::count_nodes(m17), optimizer::count_nodes(kept_model));
    expect_ops_exist_at_model_opset(m17);
    EXPECT_EQ(count_op(m18, "ReduceMean"), 0u);

    const ir::Model reference = load_model(original);
    const NamedTensors feeds =
        random_feeds(*reference.graph, {.seed = 7, .int_high = 100, .symbols = {{"batch", 2}, {"seq", 5}}});
    const std::vector<OrtResult> ort =
        run_onnxruntime_batch({{original, feeds}, {kept, feeds}, {up17, feeds}, {up18, feeds}});
    ASSERT_TRUE(ort[0].ok) << ort[0].error;
    const NamedTensors& expected = ort[0].outputs;
    const std::string optimized[] = {kept, up17, up18};
    for (std::size_t k = 0; k < 3; ++k) {
      const std::string& path = optimized[k];
      SCOPED_TRACE(path);
      ASSERT_TRUE(ort[k + 1].ok) << ort[k + 1].error;
      expect_all_close(ort[k + 1].outputs, expected, 1e-4, 1e-4);
      const ir::Model model = load_model(path);  // the evaluator reads it while it runs
      eval::Evaluator ours(model);
      const std::vector<Tensor> got = ours.run(feeds);
      expect_all_close({{"out", got.at(0)}}, {{"out", expected.begin()->second}}, 1e-4, 1e-4);
    }
  }
}

// --target-opset 23 on the Llama export read from disk (opset 17): its three RMSNorms become ONNX's
// RMSNormalization (the default set, ahead of the onnxruntime set's SimplifiedLayerNormalization, which
// they are without the option), its rotations ONNX's RotaryEmbedding and its attention ONNX's Attention
// (MultiHeadAttention without the option), with the same outputs as the file in ONNX Runtime and in our
// evaluator.
TEST(CliOptimize, TargetOpset23WritesOnnxRmsNormalization) {
  TempDir dir;
  const std::string original = shared_model("llama_L1.onnx"), kept = dir / "kept.onnx",
                    up23 = dir / "up23.onnx";
  const CommandResult k = run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(kept));
  ASSERT_EQ(k.exit_code, 0) << k.err;
  const CommandResult r =
      run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(up23) + " --target-opset 23");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ir::Model kept_model = load_model(kept), m23 = load_model(up23);
  EXPECT_EQ(kept_model.opset(""), 17);
  EXPECT_EQ(m23.opset(""), 23);
  EXPECT_EQ(m23.ir_version, 11);
  // Below 23 two of the norms also absorb their residual Add (com.microsoft SkipSimplifiedLayerNormalization,
  // which reads no RMSNormalization): at 23 those Adds stay.
  const std::size_t norms = count_op(kept_model, "SimplifiedLayerNormalization") +
                            count_op(kept_model, "SkipSimplifiedLayerNormalization");
  EXPECT_EQ(norms, 3u);
  EXPECT_EQ(count_op(kept_model, "RMSNormalization"), 0u);
  EXPECT_EQ(count_op(m23, "RMSNormalization"), norms);
  EXPECT_EQ(count_op(m23, "SimplifiedLayerNormalization"), 0u);
  EXPECT_EQ(count_op(m23, "ReduceMean"), 0u);
  EXPECT_EQ(count_op(m23, "RotaryEmbedding"), 2u);
  EXPECT_EQ(count_op(m23, "Neg"), 0u);
  EXPECT_EQ(count_op(kept_model, "MultiHeadAttention"), 1u);
  EXPECT_EQ(count_op(m23, "MultiHeadAttention"), 0u);
  EXPECT_EQ(count_op(m23, "Attention"), 1u);
  for (ir::NodeId id : m23.graph->nodes()) {  // its causal mask is is_causal
    const ir::Node& n = m23.graph->node(id);
    if (n.op_type.view() != "Attention") continue;
    EXPECT_EQ(n.inputs.size(), 3u);
    ASSERT_NE(n.attribute(Symbol("is_causal")), nullptr);
    EXPECT_EQ(n.attribute(Symbol("is_causal"))->i, 1);
  }
  // One node reads the rotated 3-D Q and K and the 3-D V: the heads' splits and merge are gone.
  EXPECT_EQ(count_op(m23, "Softmax") + count_op(m23, "Transpose") + count_op(m23, "Reshape"), 0u);
  EXPECT_EQ(m23.graph->node_count(), 18u);  // q, k and v projected by one MatMul and a Split
  for (ir::NodeId id : m23.graph->nodes()) {
    const ir::Node& n = m23.graph->node(id);
    if (n.op_type.view() == "RMSNormalization" || n.op_type.view() == "RotaryEmbedding" ||
        n.op_type.view() == "Attention") {
      EXPECT_TRUE(n.domain.empty()) << n.domain.view() << "." << n.op_type.view();
    }
  }

  const ir::Model reference = load_model(original);
  const NamedTensors feeds = random_feeds(*reference.graph, {.seed = 7, .int_high = 100});
  const std::vector<OrtResult> ort = run_onnxruntime_batch({{original, feeds}, {up23, feeds}});
  ASSERT_TRUE(ort[0].ok) << ort[0].error;
  ASSERT_TRUE(ort[1].ok) << ort[1].error;
  expect_all_close(ort[1].outputs, ort[0].outputs, 1e-4, 1e-4);
  eval::Evaluator ours(m23);
  const std::vector<Tensor> got = ours.run(feeds);
  expect_all_close({{"out", got.at(0)}}, {{"out", ort[0].outputs.begin()->second}}, 1e-4, 1e-4);
}

// The LLM fusions in two stages, on the Llama export read from disk (opset 17). Stage 1, `--patterns
// default`: the attention, the two rotations and the three RMSNorms, which need opset 23, become calls of
// three local functions in domain intermediate (one per block kind, the layers sharing it), and the
// model still runs at opset 17 with the file's outputs. Stage 2, the next run on that file: with
// --target-opset 23 or with the onnxruntime set, the same operators as from the export itself.
TEST(CliOptimize, FusionsTheOpsetHoldsBackBecomeIntermediateFunctionsTheNextRunFuses) {
  TempDir dir;
  const std::string original = shared_model("llama_L1.onnx");
  const std::string stage1 = dir / "stage1.onnx", plain = dir / "plain.onnx";
  const CommandResult s1 =
      run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(stage1) + " --patterns default");
  ASSERT_EQ(s1.exit_code, 0) << s1.err;
  EXPECT_NE(s1.out.find("1 Attention, 3 RMSNormalization, 2 RotaryEmbedding matches would fuse with "
                        "--target-opset 23\n"),
            std::string::npos)
      << s1.out;
  EXPECT_NE(
      s1.out.find("kept 6 fusions the opset holds back as calls of local functions in domain intermediate\n"),
      std::string::npos)
      << s1.out;
  const ir::Model m1 = load_model(stage1);
  EXPECT_EQ(m1.opset(""), 17);
  EXPECT_EQ(m1.opset(std::string(optimizer::kIntermediateDomain)), 1);
  EXPECT_EQ(op_histogram(m1)["intermediate.Attention"], 1u);
  EXPECT_EQ(op_histogram(m1)["intermediate.RotaryEmbedding"], 2u);
  EXPECT_EQ(op_histogram(m1)["intermediate.RMSNormalization"], 3u);
  std::vector<std::string> functions;
  for (const ir::Function& f : m1.functions) functions.push_back(f.domain + "." + f.name);
  std::sort(functions.begin(), functions.end());
  EXPECT_EQ(functions, (std::vector<std::string>{"intermediate.Attention", "intermediate.RMSNormalization",
                                                 "intermediate.RotaryEmbedding"}));
  // The blocks' nodes are in the bodies only.
  for (const char* op : {"Softmax", "ReduceMean", "Pow", "Neg"}) EXPECT_EQ(count_op(m1, op), 0u) << op;
  EXPECT_EQ(op_histogram(m1)["Softmax"], 1u);
  EXPECT_EQ(op_histogram(m1)["ReduceMean"], 1u);
  expect_ops_exist_at_model_opset(m1);

  // --no-intermediate-functions leaves the blocks as they are.
  const CommandResult p = run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(plain) +
                                   " --patterns default --no-intermediate-functions");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.out.find("kept"), std::string::npos) << p.out;
  const ir::Model mp = load_model(plain);
  EXPECT_TRUE(mp.functions.empty());
  EXPECT_EQ(count_op(mp, "ReduceMean"), 3u);
  EXPECT_EQ(count_op(mp, "Softmax"), 1u);

  // Stage 2 gives what one run on the export gives.
  struct Stage2 {
    const char* options;
    const char* fused;  // an operator it makes, as op_types() names it
  };
  const Stage2 cases[] = {{"--patterns default --target-opset 23", "Attention"},
                          {"", "com.microsoft.MultiHeadAttention"}};
  std::vector<std::string> written = {stage1, plain};
  for (std::size_t k = 0; k < std::size(cases); ++k) {
    SCOPED_TRACE(cases[k].options);
    const std::string direct = dir / ("direct" + std::to_string(k) + ".onnx"),
                      second = dir / ("second" + std::to_string(k) + ".onnx");
    ASSERT_EQ(
        run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(direct) + " " + cases[k].options)
            .exit_code,
        0);
    const CommandResult s2 =
        run_xexp("optimize " + shell_quote(stage1) + " -o " + shell_quote(second) + " " + cases[k].options);
    ASSERT_EQ(s2.exit_code, 0) << s2.err;
    const ir::Model md = load_model(direct), m2 = load_model(second);
    EXPECT_TRUE(m2.functions.empty());
    EXPECT_EQ(op_histogram(m2), op_histogram(md));
    EXPECT_EQ(op_histogram(m2)[cases[k].fused], 1u);
    written.push_back(second);
  }

  const ir::Model reference = load_model(original);
  const NamedTensors feeds = random_feeds(*reference.graph, {.seed = 11, .int_high = 100});
  std::vector<OrtJob> runs = {{original, feeds}};
  for (const std::string& path : written) runs.push_back({path, feeds});
  const std::vector<OrtResult> ort = run_onnxruntime_batch(runs);
  ASSERT_TRUE(ort[0].ok) << ort[0].error;
  for (std::size_t k = 0; k < written.size(); ++k) {
    SCOPED_TRACE(written[k]);
    ASSERT_TRUE(ort[k + 1].ok) << ort[k + 1].error;
    expect_all_close(ort[k + 1].outputs, ort[0].outputs, 1e-4, 1e-4);
  }
  eval::Evaluator ours(m1);  // the calls, run through their bodies
  expect_all_close({{"out", ours.run(feeds).at(0)}}, {{"out", ort[0].outputs.begin()->second}}, 1e-4, 1e-4);
}

TEST(CliOptimize, UnsupportedOpsetUpgradeIsOneErrorLineAndWritesNothing) {
  TempDir dir;
  const std::string original = shared_model("gpt_erf_L1.op14dyn.onnx"), out = dir / "o.onnx";
  const std::string bytes = read_file(original);
  expect_error_mentioning(
      run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(out) + " --target-opset 13"),
      "cannot downgrade opset 14 to 13");
  expect_error_mentioning(
      run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(out) + " --target-opset 24"),
      "the newest opset supported is 23");
  EXPECT_FALSE(std::filesystem::exists(out));
  // The onnxruntime set's fusions, com.microsoft ops and LayerNormalization below opset 17 (ONNX
  // Runtime's own extension), are nothing ONNX's converter can adapt: the first of them is named.
  const std::string fused = dir / "fused.onnx";
  ASSERT_EQ(run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(fused)).exit_code, 0);
  const ir::Model fused_model = load_model(fused);
  ASSERT_EQ(fused_model.opset(""), 14);
  std::string first, cause;
  for (ir::NodeId id : fused_model.graph->nodes()) {
    const ir::Node& n = fused_model.graph->node(id);
    if (!first.empty()) break;
    if (!n.domain.empty())
      cause = n.domain.str() + "." + n.op_type.str() + " is outside the default domain";
    else if (!find_schema(n.op_type.view(), "", 14))
      cause = "ONNX knows no operator " + n.op_type.str() + " at opset 14";
    if (!cause.empty()) first = n.name;
  }
  ASSERT_FALSE(first.empty());
  const std::string fused_bytes = read_file(fused);
  const CommandResult r =
      run_xexp("optimize " + shell_quote(fused) + " -o " + shell_quote(out) + " --target-opset 17");
  expect_error_mentioning(r, "node '" + first + "': cannot upgrade opset 14 to 17: " + cause);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(read_file(fused), fused_bytes);
  EXPECT_EQ(read_file(original), bytes);
}

// The onnxscript export of a Llama forward pass read from disk (torch 2.x dynamo, opset 18): each ATen op
// is a call of one of 18 torch_lib functions (aten_view = Cast + Reshape, aten_t = If on the rank, ...),
// which no rule can see through. `xexp optimize` inlines them first: their Ifs on a known rank fold, the
// Reshapes and Transposes merge, the MatMul + Add become Gemm, the sequences built for torch.cat become
// Concat, aten_add's CastLike a Cast that folds (which lets the rotary embeddings fuse), the scores'
// Div by sqrt(8) goes into a FusedMatMul's alpha, and 42 nodes remain where ONNX Runtime's 'extended'
// level leaves 65, with the file's outputs in ONNX Runtime and in our evaluator.
// --inline-functions none keeps the calls, as before.
TEST(CliOptimize, OnnxscriptTorchLibFunctionsAreInlinedBeforeTheRules) {
  const std::string original =
      std::string(XEXP_SHARED_DIR) + "/corpus/experimental-experiment/ut_issues_onnxscript_data_llama_forward.onnx";
  TempDir dir;
  const std::string inlined = dir / "inlined.onnx", kept = dir / "kept.onnx";
  const CommandResult r = run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(inlined) + " --stats");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("316 -> 42 nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("18 functions inlined"), std::string::npos) << r.out;
  for (const char* rule : {"TransposeMatMulPattern", "SlicesSplitPattern", "ReshapeReshapePattern",
                           "SequenceConstructConcatPattern", "CastLikePattern",
                           "ContribRotaryEmbeddingPattern", "FusedMatMulDivPattern"})
    EXPECT_NE(r.out.find(rule), std::string::npos) << rule << " fired\n" << r.out;
  const ir::Model m = load_model(inlined);
  EXPECT_TRUE(m.functions.empty());
  EXPECT_EQ(m.graph->node_count(), 42u);
  for (ir::NodeId id : m.graph->nodes()) {
    const ir::Node& n = m.graph->node(id);
    const bool contrib = n.op_type.view() == "RotaryEmbedding" || n.op_type.view() == "FusedMatMul";
    EXPECT_EQ(n.domain.view(), contrib ? "com.microsoft" : "") << n.op_type.view();
  }
  EXPECT_EQ(count_op(m, "RotaryEmbedding"), 2u);  // com.microsoft's, once the CastLike of aten_add went
  EXPECT_EQ(count_op(m, "CastLike"), 0u);
  EXPECT_EQ(count_op(m, "Gemm"), 4u);
  EXPECT_EQ(count_op(m, "FusedMatMul"), 1u);
  EXPECT_EQ(count_op(m, "If"), 0u);
  EXPECT_EQ(count_op(m, "ConcatFromSequence"), 0u);  // torch.cat as aten_cat wrote it

  const CommandResult none =
      run_xexp("optimize " + shell_quote(original) + " -o " + shell_quote(kept) + " --inline-functions none");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out.find("inlined"), std::string::npos) << none.out;
  EXPECT_EQ(load_model(kept).functions.size(), 18u);

  const ir::Model reference = load_model(original);
  const NamedTensors feeds = random_feeds(*reference.graph, {.seed = 3});
  const std::vector<OrtResult> ort = run_onnxruntime_batch({{original, feeds}, {inlined, feeds}, {kept, feeds}});
  ASSERT_TRUE(ort[0].ok) << ort[0].error;
  for (std::size_t k = 1; k < ort.size(); ++k) {
    ASSERT_TRUE(ort[k].ok) << ort[k].error;
    expect_all_close(ort[k].outputs, ort[0].outputs, 1e-5, 1e-5);
  }
  eval::Evaluator ours(m);
  const std::vector<Tensor> got = ours.run(feeds);
  ASSERT_EQ(got.size(), m.graph->outputs().size());
  NamedTensors named;
  for (std::size_t k = 0; k < got.size(); ++k) named.emplace_back(m.graph->value(m.graph->outputs()[k]).name, got[k]);
  expect_all_close(named, ort[0].outputs, 1e-5, 1e-5);
}

TEST(CliOptimize, InlineFunctionsTakesOnlyItsThreeModes) {
  TempDir dir;
  const CommandResult r =
      run_xexp("optimize " + shell_quote(kSeedLlm) + " -o " + shell_quote(dir / "o.onnx") + " --inline-functions some");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("error: --inline-functions: some not in {op-libraries,all,none}"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "o.onnx"));
}

// A model in domain aten (xexp.to_onnx's capture, written here by hand) is lowered before the rules; with
// --modules-as-functions the lowering makes the module functions, both layers sharing one.
TEST(CliOptimize, AnAtenCaptureIsLoweredFirst) {
  TempDir dir;
  const std::string captured = dir / "captured.onnx", flat = dir / "flat.onnx", modules = dir / "modules.onnx";
  SaveOptions with_types;  // the trace's types, as the capture writes them
  with_types.write_inferred_value_info = true;
  save_model(two_scale_layers(), captured, with_types);
  const CommandResult plain = run_xexp("optimize " + shell_quote(captured) + " -o " + shell_quote(flat));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const CommandResult with_functions =
      run_xexp("optimize " + shell_quote(captured) + " -o " + shell_quote(modules) + " --modules-as-functions");
  ASSERT_EQ(with_functions.exit_code, 0) << with_functions.err;

  const ir::Model f = load_model(flat), m = load_model(modules);
  EXPECT_EQ(xexp::test::op_types(*f.graph), (xexp::test::OpList{"Mul", "Relu", "Mul", "Relu"}));
  EXPECT_EQ(xexp::test::op_types(*m.graph),
            (xexp::test::OpList{"aten_local_function.__main__.Scale", "aten_local_function.__main__.Scale"}));
  ASSERT_EQ(m.functions.size(), 1u);
  const NamedTensors feeds = {{"x", Tensor::from<float>({2, 4}, {1, -2, 3, 4, -1, 0.5f, -2, 0})}};
  expect_all_close(run_onnxruntime(modules, feeds), run_onnxruntime(flat, feeds), 1e-6, 1e-6);
}
