// tools/compare.hpp: value codes, the fixed-width layout of the seeds, and the alignment of two runs
// (identical models, a model and its folded form, an op replaced by another, long sequences).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "xexp/eval/fold.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/compare.hpp"
#include "xexp/tools/inputs.hpp"

using namespace xexp;
using tools::AlignedRow;
using tools::ResultSignature;
using eval::ResultKind;

namespace {

// A model written value by value: float tensors of shape {2, 3} unless said otherwise.
struct ModelMaker {
  ir::Model model;
  ModelMaker() { model.opsets.push_back({.domain = "", .version = 18, .unknown = {}, .presence = 0}); }
  ir::Graph& g() { return *model.graph; }
  ir::ValueId input(const std::string& name) { return g().add_input(name, ElemType::Float, make_shape({2, 3})); }
  ir::ValueId initializer(const std::string& name, std::vector<float> values) {
    return g().add_initializer(name, Tensor::from<float>({static_cast<int64_t>(values.size())}, values));
  }
  ir::ValueId node(const std::string& op, std::vector<ir::ValueId> inputs, const std::string& output,
                   std::vector<ir::Attribute> attributes = {}) {
    const ir::ValueId out = g().add_value(output);
    g().add_node(Symbol(op), std::move(inputs), {out}, std::move(attributes), op + "_" + output);
    return out;
  }
  ir::Model done(ir::ValueId output) {
    g().add_output(output);
    return std::move(model);
  }
};

// X * (W + C) where C is a Constant node: folding turns W + C into an initializer and drops C.
ir::Model scaled_model() {
  ModelMaker m;
  const auto w = m.initializer("W", {1, 2, 3});
  const auto x = m.input("X");
  const auto c = m.node("Constant", {}, "C", {ir::Attribute::make_tensor(Symbol("value"), Tensor::from<float>({3}, {4, 5, 6}))});
  const auto t = m.node("Add", {w, c}, "T");
  return m.done(m.node("Mul", {x, t}, "Y"));
}

tools::Feeds feeds_for(const ir::Model& model) { return tools::random_feeds(*model.graph, {.seed = 7}); }

std::string symbols(const tools::Comparison& c) {
  std::string out;
  for (const AlignedRow& r : c.rows) out += r.symbol;
  return out;
}

// Every result of both runs appears exactly once, in execution order.
void expect_complete_alignment(const tools::Comparison& c) {
  std::size_t next_left = 0, next_right = 0;
  for (const AlignedRow& r : c.rows) {
    ASSERT_TRUE(r.left || r.right);
    if (r.left) {
      EXPECT_EQ(*r.left, next_left++);
    }
    if (r.right) {
      EXPECT_EQ(*r.right, next_right++);
    }
    EXPECT_EQ(r.symbol, !r.left ? '+' : !r.right ? '-' : (tools::signature_distance(c.left[*r.left], c.right[*r.right]) == 0 ? '=' : '~'));
  }
  EXPECT_EQ(next_left, c.left.size());
  EXPECT_EQ(next_right, c.right.size());
}

ResultSignature result(const std::string& op, std::string code, std::vector<int64_t> dims = {4}) {
  return {ResultKind::Result, ElemType::Float, std::move(dims), std::move(code), op, op};
}

}  // namespace

TEST(ToolsCompare, ValueCodeSumsFourEqualParts) {
  std::vector<int64_t> values(12);
  for (int64_t k = 0; k < 12; ++k) values[k] = k;
  // parts sum to 3, 12, 21, 30: D, M, V and 30 mod 26 = 4 -> E
  EXPECT_EQ(tools::value_code(Tensor::from<int64_t>({3, 4}, values)), "DMVE");
  // fewer than four values: one letter each, then zeros; negatives wrap around as in Python (-1 -> Z)
  EXPECT_EQ(tools::value_code(Tensor::from<float>({2}, {-1.5f, 27.f})), "ZBAA");
  EXPECT_EQ(tools::value_code(Tensor::scalar<float>(0.5f)), "AAAA");
  // NaN or a huge sum: '?'
  EXPECT_EQ(tools::value_code(Tensor::from<float>({2}, {std::numeric_limits<float>::quiet_NaN(), 1e11f})), "??AA");
  // five values: padded to eight, parts of two
  EXPECT_EQ(tools::value_code(Tensor::from<double>({5}, {1, 1, 2, 2, 3})), "CEDA");
  EXPECT_EQ(tools::value_code(Tensor::from<bool>({3}, {true, false, true})), "BABA");
}

TEST(ToolsCompare, SignatureLayoutMatchesTheSeeds) {
  // lines of seed 000's table, one side each
  const ResultSignature gather{ResultKind::Result, ElemType::Float, {1, 30, 16}, "AAGQ", "Gather", "embedding"};
  EXPECT_EQ(gather.str(), "RESULT float32  3:1x30x16            AAGQ Gather          embedding");
  const ResultSignature scalar{ResultKind::Initializer, ElemType::Float, {}, "AAAA", "", "init1_s_"};
  EXPECT_EQ(scalar.str(), "INITIA float32                       AAAA                 init1_s_");
  const ResultSignature ids{ResultKind::Input, ElemType::Int64, {1, 30}, "COAD", "", "input_ids"};
  EXPECT_EQ(ids.str().substr(0, 58), "INPUT  int64    2:1x30               COAD                 ");
  const ResultSignature norm{ResultKind::Result, ElemType::Float, {1, 30, 16}, "DXBZ", "LayerNormalization", "_onx_div0"};
  EXPECT_EQ(norm.str(), "RESULT float32  3:1x30x16            DXBZ LayerNormalizat _onx_div0");

  tools::Comparison c;
  c.left = {gather, scalar};
  c.right = {gather};
  c.rows = {{0, 0, '='}, {1, std::nullopt, '-'}};
  EXPECT_EQ(c.str(60),
            "001 = | RESULT float32  3:1x30x16            AAGQ Gather          em | RESULT float32  3:1x30x16            AAGQ Gather          em\n"
            "002 - | INITIA float32                       AAAA                 in |\n");
  // by default the columns are wide enough for every name
  EXPECT_NE(c.str().find("| RESULT float32  3:1x30x16            AAGQ Gather          embedding | RESULT"), std::string::npos);
}

TEST(ToolsCompare, IdenticalModelsAlignRowByRow) {
  const ir::Model model = load_model(std::string(XEXP_SHARED_DIR) + "/models/seed_llm.onnx");
  const tools::Comparison c = tools::compare_models(model, model, feeds_for(model));
  ASSERT_GT(c.left.size(), 70u);  // initializers, the input, every node output and the output
  EXPECT_EQ(c.rows.size(), c.left.size());
  EXPECT_EQ(c.count('='), c.rows.size());
  expect_complete_alignment(c);
}

TEST(ToolsCompare, FoldedModelShowsWhatFoldingMoved) {
  const ir::Model model = scaled_model();
  ir::Model folded = scaled_model();
  ASSERT_EQ(eval::fold_constants(folded), 1u);
  const tools::Comparison c = tools::compare_models(model, folded, feeds_for(model));
  expect_complete_alignment(c);
  // W; T folded into an initializer (+); X; the Constant C and the Add computing T are gone (-); Y; output Y
  EXPECT_EQ(symbols(c), "=+=--==") << c.str();
  EXPECT_EQ(c.right[*c.rows[1].right].name, "T");
  EXPECT_EQ(c.right[*c.rows[1].right].kind, ResultKind::Initializer);
  EXPECT_EQ(c.left[*c.rows[3].left].op_type, "Constant");
  EXPECT_EQ(c.left[*c.rows[4].left].op_type, "Add");
  EXPECT_EQ(c.left[*c.rows[4].left].code, c.right[*c.rows[1].right].code);  // same values, other kind
  EXPECT_EQ(c.left.back().kind, ResultKind::Output);
}

TEST(ToolsCompare, SameValueFromAnotherOpIsTilde) {
  ModelMaker a;
  const auto two = a.initializer("two", {2});
  const auto xa = a.input("X");
  const ir::Model doubled = a.done(a.node("Mul", {xa, two}, "Y"));
  ModelMaker b;
  const auto xb = b.input("X");
  const ir::Model added = b.done(b.node("Add", {xb, xb}, "Y"));
  const tools::Comparison c = tools::compare_models(doubled, added, feeds_for(doubled));
  expect_complete_alignment(c);
  EXPECT_EQ(symbols(c), "-=~=") << c.str();
  const std::string table = c.str();
  EXPECT_NE(table.find("003 ~ | RESULT float32  2:2x3"), std::string::npos) << table;
  EXPECT_NE(table.find(" Mul "), std::string::npos);
  EXPECT_NE(table.find(" Add "), std::string::npos);
}

TEST(ToolsCompare, DifferentInputCountIsAnError) {
  ModelMaker b;
  const auto x = b.input("X");
  const auto z = b.input("Z");
  const ir::Model two_inputs = b.done(b.node("Add", {x, z}, "Y"));
  const ir::Model model = scaled_model();
  EXPECT_THROW(tools::compare_models(model, two_inputs, feeds_for(model)), Error);
}

TEST(ToolsCompare, EditDistanceInTheMiddleOfLongSequences) {
  // 3000 results; the second run drops two, inserts one and changes the op of another, all far from
  // both ends, so that the banded dynamic programming aligns the middle.
  std::vector<ResultSignature> a;
  for (int k = 0; k < 3000; ++k) a.push_back(result(k % 3 ? "Relu" : "MatMul", std::string(1, char('A' + k % 26)) + "AAA"));
  std::vector<ResultSignature> b = a;
  b[2000].op_type = "FusedMatMul";                                    // ~
  b.erase(b.begin() + 1500, b.begin() + 1502);                        // - -
  b.insert(b.begin() + 700, result("Transpose", "QQQQ", {2, 2}));     // +
  const std::vector<AlignedRow> rows = tools::align_signatures(a, b);
  tools::Comparison c{a, b, rows};
  expect_complete_alignment(c);
  EXPECT_EQ(c.count('+'), 1u);
  EXPECT_EQ(c.count('-'), 2u);
  EXPECT_EQ(c.count('~'), 1u);
  EXPECT_EQ(c.count('='), 2997u);
  EXPECT_EQ(rows[700].symbol, '+');
  EXPECT_EQ(rows[1501].symbol, '-');
  EXPECT_EQ(rows[1502].symbol, '-');
  EXPECT_EQ(rows[2001].symbol, '~');
}

TEST(ToolsCompare, ExportedModelAgainstItsTorchFoldedForm) {
  const std::string dir = std::string(XEXP_SHARED_DIR) + "/models/";
  const ir::Model raw = load_model(dir + "seed_llm.onnx");
  const ir::Model folded = load_model(dir + "seed_llm.fold.onnx");
  const tools::Comparison c = tools::compare_models(raw, folded, feeds_for(raw));
  expect_complete_alignment(c);
  EXPECT_GT(c.left.size(), c.right.size());
  EXPECT_GT(c.count('-'), 0u);  // the Shape/Concat chains and Constant nodes torch folded away
  EXPECT_GT(c.count('='), 20u);
  // the same model computes the same output
  EXPECT_EQ(c.rows.back().symbol, '=') << c.str();
  EXPECT_EQ(c.left[*c.rows.back().left].kind, ResultKind::Output);
}
