// onnxruntime set, attention: MultiHeadAttention and MultiHeadAttentionKeyValue3D; and the default set's
// Attention (opset 23), the same match. Small graphs for each spelling exporters write (additive or Where
// mask, GPT-2's Transpose(0,2,3,1) of the keys, FusedMatMul scores, one head on 3-D values): exact
// structure after the rewrite, one negative per condition, same outputs in xexp's evaluator and ONNX
// Runtime. Then the user's path on the shared torch models, read as exported: the attention blocks become
// MultiHeadAttention and ONNX Runtime gives the original's outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/rewrite_helpers.hpp"
#include "support/rule_cases.hpp"
#include "xexp/onnx.hpp"
#include "xexp/patterns/analysis/attention_masks.hpp"
#include "xexp/patterns/analysis/repeated_heads.hpp"
#include "xexp/patterns/analysis/safe_softmax.hpp"
#include "xexp/patterns/registry.hpp"
#include "xexp/optimizer/optimize_model.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::input_name;
using test::node;
using test::op_types;
using test::OpList;

namespace {

constexpr int64_t kBatch = 2, kSeq = 4, kHeads = 2, kHeadSize = 3, kHidden = kHeads * kHeadSize;
// Every rule of these fusions: the default ones and the single-head MultiHeadAttention of the opt-in
// onnxruntime_gpu set (ONNX Runtime's CPU provider runs one head faster unfused).
const std::string kAll = "default+onnxruntime+onnxruntime_gpu";
const std::string kMha = "com.microsoft.MultiHeadAttention";

enum class Keys { Transposed, Gpt2, FusedMatMul };
// WhereCut*: GPT-2's causal mask in a dynamic export, Slice(Slice(table, 0..seq, axis 2), 0..seq, axis 3) of
// a constant (1, 1, kTable, kTable) table with seq read from Q's shape at run time.
// AddCut: the same cut of an additive (kTable, kTable) table, -inf above the diagonal and 0 elsewhere.
// AddComputed: the additive mask computed from constants as HF's torch exports write it, never folded:
// Trilu(ConstantOfShape(fill), k=1) made 4-D and expanded to the batch read from Q's shape at run time.
enum class Mask {
  None,
  AddConstant,
  AddInput,
  WhereScoresFirst,
  WhereFillFirst,
  WhereCutScoresFirst,
  WhereCutFillFirst,
  AddCut,
  AddComputed,
  AddPadding,   // Add(scores, M) of an input M (batch, 1, 1, sequence): BERT's (1 - attention_mask) * -10000
  WherePadding  // Where(C, fill, scores) of an input C (batch, 1, 1, sequence): masked_fill(mask == 0, fill)
};

struct Attention {
  Keys keys = Keys::Transposed;
  Mask mask = Mask::AddConstant;
  bool multiply = false;        // Mul by 1/sqrt(head_size) instead of Div by sqrt(head_size)
  int64_t scale_rank = 0;       // the scale constant holds one element of this rank
  bool scale_per_head = false;  // (1, heads, 1, 1) scales instead
  int64_t softmax_axis = -1;
  float fill = -std::numeric_limits<float>::infinity();  // the Where mask's value for masked positions
  bool mask_a_whole_row = false;                         // the Where mask hides every position of row 0
  bool window = false;  // the mask also hides the keys more than one position before the query: not causal
  bool query_offset = false;  // Q + P after the heads split: Q is no Transpose(Reshape)
  bool cut_at_batch = false;  // WhereCut*: the cut ends at the batch size, not at seq
  bool cut_unsqueezed = false;  // AddCut: Unsqueeze(cut, [0, 1]) as Llama's causal_mask[None, None] writes it
  bool computed_2d = false;  // AddComputed: the (sequence, total) mask added as it is (torch's decomposed SDPA)
  // AddComputed: the square's size read from Q's shape at run time, a dynamic sequence, without a window:
  // torch.triu(torch.full((s, s), fill), diagonal) of a dynamic export; with `tril_where`,
  // Where(torch.ones(s, s, dtype=bool).tril(), scores, fill) instead.
  bool triangle_at_run_time = false;
  int64_t diagonal = 1;
  bool tril_where = false;
  bool merged_without_transpose = false;  // the heads' result reshaped as it is (right for one position only)
  // torch's safe softmax: the weights are Where(IsNaN(Softmax), safe_fill, Softmax) (onnxscript's SDPA)
  bool safe_softmax = false;
  float safe_fill = 0.f;
  int64_t row_size = 0;  // > 0: the heads merge into 2-D rows of this size (kHidden: as a 2-D Linear reads them)
  int64_t opset = 18;
  // > 0: K and V have this many heads, repeated to kHeads as HF's repeat_kv writes it (Unsqueeze at axis 2,
  // Expand of the new axis, Reshape merging it). Not with GPT-2's keys.
  int64_t kv_heads = 0;
};
constexpr int64_t kTable = 8;
bool cut_at_run_time(const Attention& c) {
  return c.mask == Mask::WhereCutScoresFirst || c.mask == Mask::WhereCutFillFirst || c.mask == Mask::AddCut ||
         c.triangle_at_run_time;
}

Tensor floats(std::vector<int64_t> dims, float start, float step) {
  std::vector<float> v;
  for (int64_t k = 0; k < dims_element_count(dims); ++k)
    v.push_back(start + step * static_cast<float>(k % 11));
  return Tensor::from<float>(std::move(dims), v);
}
// Causal: position (i, j) kept when j <= i (and i - 1 <= j in a window of 2), true where kept (or where
// hidden); (sequence, total) for 3-D scores, else (1, 1, sequence, total).
Tensor causal(bool four_d, bool whole_row, bool true_where_hidden, int64_t size = kSeq, bool window = false) {
  std::vector<bool> flags;
  for (int64_t i = 0; i < size; ++i)
    for (int64_t j = 0; j < size; ++j)
      flags.push_back((j <= i && !(whole_row && i == 0) && !(window && j < i - 1)) != true_where_hidden);
  std::vector<int64_t> dims =
      four_d ? std::vector<int64_t>{1, 1, size, size} : std::vector<int64_t>{size, size};
  return Tensor::from<bool>(dims, flags);
}

Attribute perm(std::vector<int64_t> p) { return Attribute::make_ints("perm", std::move(p)); }

// Q, K, V (batch, sequence, hidden) split into heads, attention, heads merged back. The sequence is the
// symbol "seq" for a mask cut at run time.
Model attention(const Attention& c) {
  Model m = test::model_with_opset(c.opset);
  m.opsets.push_back({"com.microsoft", 1, {}});
  Graph& g = *m.graph;
  const bool dynamic = cut_at_run_time(c);
  const Shape three_d{kBatch, dynamic ? Dim::symbolic("seq") : Dim(kSeq), kHidden};
  ValueId split_shape = test::int64_initializer(
      g, "split", dynamic ? std::vector<int64_t>{0, 0, kHeads, kHeadSize} : std::vector<int64_t>{kBatch, kSeq, kHeads, kHeadSize});
  auto heads = [&](const char* name, std::vector<int64_t> p) {
    const bool grouped = c.kv_heads > 0 && name != std::string("Q");
    if (!grouped)
      return node(g, "Transpose",
                  {node(g, "Reshape", {g.add_input(name, ElemType::Float, three_d), split_shape})},
                  {perm(std::move(p))});
    const int64_t group = kHeads / c.kv_heads;
    const ValueId x = g.add_input(name, ElemType::Float, Shape{kBatch, kSeq, c.kv_heads * kHeadSize});
    ValueId few = node(
        g, "Reshape",
        {x, test::int64_initializer(g, std::string(name) + "_split", {kBatch, kSeq, c.kv_heads, kHeadSize})});
    few = node(g, "Transpose", {few}, {perm({0, 2, 1, 3})});
    const std::string prefix(name);
    const ValueId unsqueezed = node(g, "Unsqueeze", {few, test::int64_initializer(g, prefix + "_axis", {2})});
    const ValueId expanded =
        node(g, "Expand", {unsqueezed, test::int64_initializer(g, prefix + "_to", {kBatch, 1, group, 1, 1})});
    // (batch, heads, sequence, head_size): not for GPT-2's keys
    return node(g, "Reshape",
                {expanded, test::int64_initializer(g, prefix + "_heads", {kBatch, kHeads, -1, kHeadSize})});
  };
  ValueId q = heads("Q", {0, 2, 1, 3});
  if (c.query_offset)
    q = node(g, "Add", {q, g.add_input("P", ElemType::Float, Shape{kBatch, kHeads, kSeq, kHeadSize})});
  ValueId scores;
  if (c.keys == Keys::FusedMatMul) {
    scores = node(g, "FusedMatMul", {q, heads("K", {0, 2, 1, 3})},
                  {Attribute::make_int("transA", 0), Attribute::make_int("transB", 1),
                   Attribute::make_float("alpha", 0.5f)},
                  "com.microsoft");
  } else {
    ValueId keys_t = c.keys == Keys::Gpt2
                         ? heads("K", {0, 2, 3, 1})
                         : node(g, "Transpose", {heads("K", {0, 2, 1, 3})}, {perm({0, 1, 3, 2})});
    ValueId product = node(g, "MatMul", {q, keys_t});
    const float root = std::sqrt(static_cast<float>(kHeadSize));
    ValueId scale =
        g.add_initializer("scale", floats(c.scale_per_head ? std::vector<int64_t>{1, kHeads, 1, 1}
                                                           : std::vector<int64_t>(c.scale_rank, 1),
                                          c.multiply ? 1 / root : root, 0.25f));
    scores = node(g, c.multiply ? "Mul" : "Div", {product, scale});
  }
  ValueId masked = scores;
  switch (c.mask) {
    case Mask::None:
      break;
    case Mask::AddConstant:
      masked =
          node(g, "Add", {scores, g.add_initializer("mask", floats({kBatch, 1, kSeq, kSeq}, -1.f, 0.3f))});
      break;
    case Mask::AddInput:
      masked = node(g, "Add", {g.add_input("M", ElemType::Float, Shape{1, kHeads, kSeq, kSeq}), scores});
      break;
    case Mask::AddPadding:
      masked = node(g, "Add", {scores, g.add_input("M", ElemType::Float, Shape{kBatch, 1, 1, kSeq})});
      break;
    case Mask::WherePadding:
      masked = node(g, "Where", {g.add_input("C", ElemType::Bool, Shape{kBatch, 1, 1, kSeq}),
                                 g.add_initializer("fill", Tensor::scalar<float>(c.fill)), scores});
      break;
    case Mask::WhereScoresFirst:
    case Mask::WhereFillFirst: {
      const bool scores_first = c.mask == Mask::WhereScoresFirst;
      ValueId flags = g.add_initializer("flags", causal(true, c.mask_a_whole_row, !scores_first, kSeq, c.window));
      ValueId fill = g.add_initializer("fill", Tensor::scalar<float>(c.fill));
      masked =
          scores_first ? node(g, "Where", {flags, scores, fill}) : node(g, "Where", {flags, fill, scores});
      break;
    }
    case Mask::WhereCutScoresFirst:
    case Mask::WhereCutFillFirst:
    case Mask::AddCut: {
      const bool scores_first = c.mask != Mask::WhereCutFillFirst, added = c.mask == Mask::AddCut;
      const ValueId zero = test::int64_initializer(g, "zero", {0});
      const ValueId end =
          node(g, "Slice", {node(g, "Shape", {*g.find("Q")}), test::int64_initializer(g, "seq_axis", {c.cut_at_batch ? 0 : 1}),
                            test::int64_initializer(g, "seq_axis_end", {c.cut_at_batch ? 1 : 2})});
      const Tensor table = causal(!added, c.mask_a_whole_row, !scores_first, kTable, c.window);
      std::vector<float> additive;
      for (int64_t k = 0; k < table.size(); ++k)
        additive.push_back(eval::element_as_double(table, k) != 0 ? 0.f : c.fill);
      ValueId flags =
          g.add_initializer("flags", added ? Tensor::from<float>({kTable, kTable}, additive) : table);
      flags = node(g, "Slice", {flags, zero, end, test::int64_initializer(g, "rows", {added ? 0 : 2})});
      flags = node(g, "Slice", {flags, zero, end, test::int64_initializer(g, "columns", {added ? 1 : 3})});
      if (c.cut_unsqueezed) flags = node(g, "Unsqueeze", {flags, test::int64_initializer(g, "leading", {0, 1})});
      ValueId fill = g.add_initializer("fill", Tensor::scalar<float>(c.fill));
      masked = added          ? node(g, "Add", {scores, flags})
               : scores_first ? node(g, "Where", {flags, scores, fill})
                              : node(g, "Where", {flags, fill, scores});
      break;
    }
    case Mask::AddComputed: {
      ValueId square = test::int64_initializer(g, "square", {kSeq, kSeq});
      if (c.triangle_at_run_time) {
        const ValueId seq = node(g, "Slice",
                                 {node(g, "Shape", {*g.find("Q")}), test::int64_initializer(g, "one", {1}),
                                  test::int64_initializer(g, "two", {2})});
        square = node(g, "Concat", {seq, seq}, {Attribute::make_int("axis", 0)});
      }
      const ValueId full = c.tril_where
                               ? node(g, "ConstantOfShape", {square},
                                      {Attribute::make_tensor("value", Tensor::from<bool>({1}, {true}))})
                               : test::constant_of_shape(g, square, c.fill);
      auto triangle = [&](const char* name, int64_t k, int64_t upper) {
        const ValueId diagonal = g.add_initializer(name, Tensor::scalar<int64_t>(k));
        return node(g, "Trilu", {full, diagonal}, {Attribute::make_int("upper", upper)});
      };
      if (c.tril_where) {  // true on and below the diagonal: the keys kept
        masked = node(g, "Where",
                      {triangle("kept", c.diagonal - 1, 0), scores,
                       g.add_initializer("fill", Tensor::scalar<float>(c.fill))});
        break;
      }
      ValueId mask = triangle("above", c.diagonal, 1);                         // the keys after each query
      if (c.window) mask = node(g, "Add", {mask, triangle("before", -2, 0)});  // and those before i - 1
      if (!c.computed_2d) mask = node(g, "Unsqueeze", {mask, test::int64_initializer(g, "leading", {0, 1})});
      if (!c.computed_2d && !c.triangle_at_run_time) {  // expanded to the batch
        const ValueId batch = node(g, "Slice", {node(g, "Shape", {*g.find("Q")}), test::int64_initializer(g, "zero", {0}),
                                                test::int64_initializer(g, "one", {1})});
        const ValueId to = node(g, "Concat", {batch, test::int64_initializer(g, "ones", {1, 1, 1})},
                                {Attribute::make_int("axis", 0)});
        mask = node(g, "Expand", {mask, to});
      }
      masked = node(g, "Add", {scores, mask});
      break;
    }
  }
  ValueId weights = node(g, "Softmax", {masked}, {Attribute::make_int("axis", c.softmax_axis)});
  if (c.safe_softmax)
    weights = node(g, "Where",
                   {node(g, "IsNaN", {weights}),
                    g.add_initializer("safe_fill", Tensor::scalar<float>(c.safe_fill)), weights});
  ValueId y = node(g, "MatMul", {weights, heads("V", {0, 2, 1, 3})});
  if (!c.merged_without_transpose) y = node(g, "Transpose", {y}, {perm({0, 2, 1, 3})});
  const std::vector<int64_t> merged = c.row_size ? std::vector<int64_t>{kBatch * kSeq * kHidden / c.row_size, c.row_size}
                                                    : std::vector<int64_t>{dynamic ? 0 : kBatch, dynamic ? 0 : kSeq, kHidden};
  g.add_output(node(g, "Reshape", {y, test::int64_initializer(g, "merged", merged)}));
  return m;
}

// One head on 3-D values, as a per-head module writes it: FusedMatMul scores, Where(mask, -inf, scores).
// With `hidden_where_cut_equals` (a dynamic export of such a module), the mask is
// Equal(Slice(Slice(tril, 0..seq, 0), 0..seq, 1), hidden_where_cut_equals) of a constant float table of
// ones on and below the diagonal, seq read from Q's shape at run time.
Model single_head(std::optional<float> hidden_where_cut_equals = std::nullopt, int64_t opset = 18,
                  bool window = false) {
  Model m = test::model_with_opset(opset);
  m.opsets.push_back({"com.microsoft", 1, {}});
  Graph& g = *m.graph;
  const Shape three_d{1, hidden_where_cut_equals ? Dim::symbolic("seq") : Dim(kSeq), kHeadSize};
  ValueId q = g.add_input("Q", ElemType::Float, three_d), k = g.add_input("K", ElemType::Float, three_d);
  ValueId scores = node(g, "FusedMatMul", {q, k},
                        {Attribute::make_int("transA", 0), Attribute::make_int("transB", 1),
                         Attribute::make_float("alpha", 0.5f)},
                        "com.microsoft");
  ValueId hidden;
  if (hidden_where_cut_equals) {
    std::vector<float> ones_below;
    for (int64_t i = 0; i < kTable; ++i)
      for (int64_t j = 0; j < kTable; ++j) ones_below.push_back(j <= i && !(window && j < i - 1) ? 1.f : 0.f);
    const ValueId zero = test::int64_initializer(g, "zero", {0});
    const ValueId end = node(g, "Slice", {node(g, "Shape", {q}), test::int64_initializer(g, "seq_axis", {1}),
                                          test::int64_initializer(g, "seq_axis_end", {2})});
    ValueId cut = g.add_initializer("tril", Tensor::from<float>({kTable, kTable}, ones_below));
    cut = node(g, "Slice", {cut, zero, end, test::int64_initializer(g, "rows", {0})});
    cut = node(g, "Slice", {cut, zero, end, test::int64_initializer(g, "columns", {1})});
    hidden = node(g, "Equal", {cut, g.add_initializer("compared", Tensor::scalar<float>(*hidden_where_cut_equals))});
  } else {
    hidden = g.add_initializer("hidden", causal(false, false, true));
  }
  ValueId masked =
      node(g, "Where", {hidden, g.add_initializer("fill", Tensor::scalar<float>(-1e9f)), scores});
  ValueId weights = node(g, "Softmax", {masked}, {Attribute::make_int("axis", -1)});
  g.add_output(node(g, "MatMul", {weights, g.add_input("V", ElemType::Float, three_d)}));
  return m;
}

// Phi-3's spelling, a decoder reading a key-value cache: the rotated Q (here Q + P after the heads split),
// keys and values concatenated after the past ones on the sequence axis (the present cache, graph outputs
// too), FusedMatMul scores, and an additive mask (batch, 1, seq, total) sliced at run time, whose total
// is the file's own symbol, not the "past+seq" inference gives the scores. With `mask_per_row` false the
// mask has one row broadcast over the sequence, which MultiHeadAttention's attention_bias cannot be.
Model with_past(bool mask_per_row = true, int64_t opset = 18) {
  Model m = test::model_with_opset(opset);
  m.opsets.push_back({"com.microsoft", 1, {}});
  Graph& g = *m.graph;
  const Dim seq = Dim::symbolic("seq");
  const Shape three_d{kBatch, seq, kHidden}, past{kBatch, kHeads, Dim::symbolic("past"), kHeadSize};
  const ValueId split_shape = test::int64_initializer(g, "split", {0, 0, kHeads, kHeadSize});
  auto heads = [&](const char* name) {
    return node(g, "Transpose", {node(g, "Reshape", {g.add_input(name, ElemType::Float, three_d), split_shape})},
                {perm({0, 2, 1, 3})});
  };
  auto after_past = [&](const char* past_name, const char* name) {
    const ValueId all = node(g, "Concat", {g.add_input(past_name, ElemType::Float, past), heads(name)},
                             {Attribute::make_int("axis", -2)});
    g.add_output(all);
    return all;
  };
  const ValueId q =
      node(g, "Add", {heads("Q"), g.add_input("P", ElemType::Float, Shape{kBatch, kHeads, seq, kHeadSize})});
  const ValueId keys = after_past("past_K", "K"), values = after_past("past_V", "V");
  const ValueId scores = node(g, "FusedMatMul", {q, keys},
                              {Attribute::make_int("transA", 0), Attribute::make_int("transB", 1),
                               Attribute::make_float("alpha", 0.5f)},
                              "com.microsoft");
  const Shape mask{kBatch, 1, mask_per_row ? seq : Dim(1), Dim::symbolic("total")};
  const ValueId masked = node(g, "Add", {scores, g.add_input("M", ElemType::Float, mask)});
  ValueId y = node(g, "MatMul", {node(g, "Softmax", {masked}, {Attribute::make_int("axis", -1)}), values});
  y = node(g, "Transpose", {y}, {perm({0, 2, 1, 3})});
  g.add_output(node(g, "Reshape", {y, test::int64_initializer(g, "merged", {0, 0, kHidden})}));
  return m;
}

const Node& only_attention(const Graph& g, const char* op_type = "MultiHeadAttention") {
  for (NodeId id : g.nodes())
    if (g.node(id).op_type == Symbol(op_type)) return g.node(id);
  throw Error(std::string("no ") + op_type);
}
int nodes_of_type(const Graph& g, const char* op_type) {
  int n = 0;
  for (NodeId id : g.nodes()) n += g.node(id).op_type == Symbol(op_type);
  return n;
}

// At opset 23 the default set writes one causal Attention (is_causal=1) for a causal `mask`, whose nodes go,
// and the original's outputs.
void expect_causal_attention_at_23(Mask mask) {
  const auto make = [mask] { return attention({.mask = mask, .opset = 23}); };
  Model m = make();
  test::run_rules(m, "default");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Attention"}));
  EXPECT_EQ(only_attention(*m.graph, "Attention").attribute(Symbol("is_causal"))->i, 1);
  test::expect_same_outputs(make, "default", 1e-5, {.seed = 7, .symbols = {{"seq", kSeq}}});
}

}  // namespace

TEST(PatternMultiHeadAttention, AdditiveMaskBecomesOneNodeOnThe3DProjections) {
  Model m = attention({});
  test::run_rules(m, kAll);
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{kMha}));
  const Node& n = only_attention(g);
  ASSERT_EQ(n.inputs.size(), 6u);
  EXPECT_EQ(input_name(g, n, 0), "Q");
  EXPECT_EQ(input_name(g, n, 1), "K");
  EXPECT_EQ(input_name(g, n, 2), "V");
  EXPECT_EQ(n.inputs[3], kNone);
  EXPECT_EQ(n.inputs[4], kNone);
  const Tensor* bias = rewrite::constant_tensor(g, n.inputs[5]);
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->dims(), (std::vector<int64_t>{kBatch, 1, kSeq, kSeq}));
  EXPECT_EQ(n.attribute(Symbol("num_heads"))->i, kHeads);
  EXPECT_FLOAT_EQ(n.attribute(Symbol("scale"))->f, 1 / std::sqrt(3.f));
  EXPECT_EQ(m.opset("com.microsoft"), 1);
}

// Heads merged into (batch * sequence, hidden) rows: the attention's (batch, sequence, hidden) result is
// reshaped to (-1, hidden), for MultiHeadAttention and, at opset 23, for ONNX's Attention.
TEST(PatternMultiHeadAttention, HeadsMergedIntoRowsGetAReshapeAfterTheAttention) {
  for (const auto& [opset, op] : {std::pair<int64_t, std::string>{18, kMha}, {23, "Attention"}}) {
    Model m = attention({.row_size = kHidden, .opset = opset});
    test::run_rules(m, kAll);
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{op, "Reshape"}));
    const Node& reshape = g.node(g.value(g.outputs()[0]).producer);
    EXPECT_EQ(g.node(g.value(reshape.inputs[0]).producer).op_type.str(), op.substr(op.rfind('.') + 1));
    const Tensor* target = rewrite::constant_tensor(g, reshape.inputs[1]);
    ASSERT_NE(target, nullptr);
    EXPECT_EQ(std::vector<int64_t>(target->data<int64_t>().begin(), target->data<int64_t>().end()),
              (std::vector<int64_t>{-1, kHidden}));
    EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{kBatch * kSeq, kHidden}));
  }
}

TEST(PatternMultiHeadAttention, NotWhenTheRowsAreNotWholeHeads) {
  Model m = attention({.row_size = kHeadSize});
  test::run_rules(m, kAll);
  EXPECT_EQ(nodes_of_type(*m.graph, "MultiHeadAttention"), 0);
}

TEST(PatternMultiHeadAttention, EverySpelling) {
  struct Case {
    Attention attention;
    int64_t bias_heads;  // the bias is (1, bias_heads, sequence, total); 0: no bias input
    float scale;
    bool unidirectional = false;  // a causal mask: no bias input either
  };
  const float inv_root = 1 / std::sqrt(3.f);
  for (const Case& c : std::vector<Case>{
           {{.keys = Keys::Gpt2, .mask = Mask::WhereScoresFirst}, 0, inv_root, true},
           {{.keys = Keys::FusedMatMul, .mask = Mask::WhereFillFirst, .fill = -1e4f}, 0, 0.5f, true},
           {{.keys = Keys::Gpt2, .mask = Mask::WhereScoresFirst, .window = true}, 1, inv_root},
           {{.mask = Mask::AddInput, .multiply = true}, kHeads, inv_root},
           {{.mask = Mask::None, .scale_rank = 4}, 0, inv_root},
           {{.keys = Keys::Gpt2, .mask = Mask::None}, 0, inv_root}}) {
    Model m = attention(c.attention);
    test::run_rules(m, kAll);
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{kMha}));
    const Node& n = only_attention(g);
    EXPECT_EQ(input_name(g, n, 1), "K");
    EXPECT_EQ(input_name(g, n, 2), "V");
    EXPECT_NEAR(n.attribute(Symbol("scale"))->f, c.scale, 1e-6);
    EXPECT_EQ(n.attribute(Symbol("unidirectional")) != nullptr, c.unidirectional);
    if (c.bias_heads == 0) {
      EXPECT_EQ(n.inputs.size(), 3u);
    } else {
      ASSERT_EQ(n.inputs.size(), 6u);
      EXPECT_EQ(g.value(n.inputs[5]).shape, Shape({1, c.bias_heads, kSeq, kSeq}));
    }
  }
}

// A Where mask that is not causal (a window of two keys) folds into an additive attention_bias.
TEST(PatternMultiHeadAttention, WhereMaskFoldsIntoZerosAndTheFill) {
  Model m = attention({.keys = Keys::Gpt2, .mask = Mask::WhereScoresFirst, .fill = -1e9f, .window = true});
  test::run_rules(m, kAll);
  const Graph& g = *m.graph;
  const Tensor* bias = rewrite::constant_tensor(g, only_attention(g).inputs.at(5));
  ASSERT_NE(bias, nullptr);
  const auto values = bias->data<float>();
  for (int64_t i = 0; i < kSeq; ++i)
    for (int64_t j = 0; j < kSeq; ++j)
      EXPECT_EQ(values[i * kSeq + j], j <= i && j >= i - 1 ? 0.f : -1e9f) << i << "," << j;
}

// A causal mask, constant or cut at run time, additive or Where, of several heads or one: unidirectional=1
// and no attention_bias (nor the cut), the same outputs.
TEST(PatternMultiHeadAttention, CausalMasksBecomeUnidirectional) {
  const std::vector<std::function<Model()>> models = {
      [] { return attention({.keys = Keys::Gpt2, .mask = Mask::WhereScoresFirst}); },
      [] { return attention({.mask = Mask::AddCut}); },
      [] { return attention({.mask = Mask::AddCut, .cut_unsqueezed = true}); },
      [] { return attention({.mask = Mask::AddComputed}); },
      [] { return attention({.mask = Mask::AddComputed, .computed_2d = true}); },
      [] { return attention({.mask = Mask::AddComputed, .triangle_at_run_time = true}); },
      [] {
        return attention({.mask = Mask::AddComputed, .computed_2d = true, .triangle_at_run_time = true});
      },
      [] { return attention({.mask = Mask::AddComputed, .triangle_at_run_time = true, .tril_where = true}); },
      [] { return attention({.mask = Mask::WhereCutFillFirst, .fill = -1e4f}); },
      [] { return single_head(); },
      [] { return single_head(0.f); }};
  for (const auto& make : models) {
    Model m = make();
    test::run_rules(m, kAll);
    ASSERT_EQ(op_types(*m.graph), (OpList{kMha}));
    const Node& n = only_attention(*m.graph);
    ASSERT_NE(n.attribute(Symbol("unidirectional")), nullptr);
    EXPECT_EQ(n.attribute(Symbol("unidirectional"))->i, 1);
    EXPECT_EQ(n.inputs.size(), 3u);
    test::expect_same_outputs(make, kAll, 1e-5, {.seed = 7, .symbols = {{"seq", kSeq}}});
  }
}

// torch's safe softmax, Where(IsNaN(Softmax), 0, Softmax), gives 0 to the query rows a mask hides
// entirely. MultiHeadAttention leaves those rows NaN, so Where(IsNaN(y), 0, y) follows it; ONNX's Attention
// (opset 23) gives them 0 itself and stands alone. Same outputs for a mask that hides a whole row.
TEST(PatternMultiHeadAttention, SafeSoftmaxZeroesTheRowsAMaskHidesEntirely) {
  for (const int64_t opset : {18, 23}) {
    const std::string spec = opset == 23 ? "default" : kAll;
    const auto make = [opset] {
      return attention({.mask = Mask::AddInput, .safe_softmax = true, .opset = opset});
    };
    Model m = make();
    test::run_rules(m, spec);
    const Graph& g = *m.graph;
    if (opset == 23) {
      ASSERT_EQ(op_types(g), (OpList{"Attention"}));
    } else {
      ASSERT_EQ(op_types(g), (OpList{kMha, "IsNaN", "Where"}));
      const Node& zeroed = g.node(g.value(g.outputs()[0]).producer);
      const ValueId y = only_attention(g).outputs[0];
      EXPECT_EQ(g.node(g.value(zeroed.inputs[0]).producer).inputs[0], y);
      EXPECT_EQ(patterns::scalar_constant(g, zeroed.inputs[1]), 0.0);
      EXPECT_EQ(zeroed.inputs[2], y);
    }
    Model before = make();
    xexp::testing::NamedTensors feeds = xexp::testing::random_feeds(*before.graph, {.seed = 7});
    for (auto& [name, value] : feeds)
      if (name == "M")  // query 1 of head 0 sees no key
        for (int64_t j = 0; j < kSeq; ++j)
          value.mutable_data<float>()[kSeq + j] = -std::numeric_limits<float>::infinity();
    xexp::testing::TempDir dir;
    const std::string before_path = (dir.path() / "before.onnx").string();
    save_model(before, before_path);
    const test::OutputsAfter after = test::expect_outputs_of(before, before_path, m, feeds, 1e-5);
    // The hidden row gives 0 (batch 0, query 1, head 0's columns), not NaN.
    const auto y = after.evaluator.at(0).second.data<float>();
    for (int64_t d = 0; d < kHeadSize; ++d) EXPECT_EQ(y[kHidden + d], 0.f) << d;
  }
}

// A causal mask hides no whole row: the safe softmax adds nothing to a unidirectional MultiHeadAttention.
// A guard that fills anything but 0 is no safe softmax: no fusion.
TEST(PatternMultiHeadAttention, SafeSoftmaxUnderACausalMaskIsTheAttentionAlone) {
  Model m = attention({.keys = Keys::Gpt2, .mask = Mask::WhereScoresFirst, .safe_softmax = true});
  test::run_rules(m, kAll);
  ASSERT_EQ(op_types(*m.graph), (OpList{kMha}));
  EXPECT_EQ(only_attention(*m.graph).attribute(Symbol("unidirectional"))->i, 1);
  Model other = attention({.mask = Mask::AddInput, .safe_softmax = true, .safe_fill = 1.f});
  test::run_rules(other, kAll);
  EXPECT_EQ(nodes_of_type(*other.graph, "MultiHeadAttention"), 0);
  EXPECT_EQ(nodes_of_type(*other.graph, "Softmax"), 1);
}

TEST(PatternMultiHeadAttention, QueryComputedAfterTheSplitGoesBackTo3D) {
  Model m = attention({.query_offset = true});
  test::run_rules(m, kAll);
  const Graph& g = *m.graph;
  EXPECT_EQ(op_types(g), (OpList{"Reshape", "Transpose", "Add", "Transpose", "Reshape", kMha}));
  const Node& n = only_attention(g);
  EXPECT_EQ(input_name(g, n, 1), "K");
  EXPECT_EQ(input_name(g, n, 2), "V");
}

TEST(PatternMultiHeadAttention, OneHeadOn3DValues) {
  Model m = single_head();
  test::run_rules(m, kAll);
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{kMha}));
  const Node& n = only_attention(g);
  EXPECT_EQ(input_name(g, n, 0), "Q");
  EXPECT_EQ(n.attribute(Symbol("num_heads"))->i, 1);
  EXPECT_FLOAT_EQ(n.attribute(Symbol("scale"))->f, 0.5f);
  EXPECT_EQ(n.attribute(Symbol("unidirectional"))->i, 1);  // the causal mask
}

TEST(PatternMultiHeadAttention, NotOverAnotherSoftmaxAxis) {
  Model m = attention({.softmax_axis = 2});
  test::run_rules(m, kAll);
  EXPECT_EQ(nodes_of_type(*m.graph, "MultiHeadAttention"), 0);
  EXPECT_EQ(nodes_of_type(*m.graph, "Softmax"), 1);
}

TEST(PatternMultiHeadAttention, NotForAScalePerHead) {
  Model m = attention({.scale_per_head = true});
  test::run_rules(m, kAll);
  EXPECT_EQ(nodes_of_type(*m.graph, "MultiHeadAttention"), 0);
}

TEST(PatternMultiHeadAttention, NotForAWhereMaskThatIsNotLargeNegativeOrHidesAWholeRow) {
  for (const Attention& c : {Attention{.mask = Mask::WhereScoresFirst, .fill = -10.f},
                             Attention{.mask = Mask::WhereScoresFirst, .mask_a_whole_row = true}}) {
    Model m = attention(c);
    test::run_rules(m, kAll);
    EXPECT_EQ(nodes_of_type(*m.graph, "MultiHeadAttention"), 0);
  }
}

// A mask cut at run time that is not causal (a window of two keys) becomes a Where bias.
TEST(PatternMultiHeadAttention, MaskCutAtRunTimeBecomesAWhereBias) {
  for (Mask mask : {Mask::WhereCutScoresFirst, Mask::WhereCutFillFirst}) {
    const bool scores_first = mask == Mask::WhereCutScoresFirst;
    Model m = attention(
        {.keys = Keys::Gpt2, .mask = mask, .fill = std::numeric_limits<float>::lowest(), .window = true});
    test::run_rules(m, kAll);
    const Graph& g = *m.graph;
    EXPECT_EQ(op_types(g), (OpList{"Shape", "Slice", "Slice", "Slice", "Where", kMha}));
    const Node& n = only_attention(g);
    EXPECT_EQ(input_name(g, n, 0), "Q");
    EXPECT_EQ(input_name(g, n, 1), "K");
    EXPECT_EQ(input_name(g, n, 2), "V");
    // attention_bias = Where(mask, 0, fill), or Where(hidden, fill, 0).
    const Node& bias = g.node(g.value(n.inputs.at(5)).producer);
    ASSERT_EQ(bias.op_type, Symbol("Where"));
    EXPECT_EQ(g.node(g.value(bias.inputs[0]).producer).op_type, Symbol("Slice"));  // the mask cut at run time
    const Tensor* zero = rewrite::constant_tensor(g, bias.inputs[scores_first ? 1 : 2]);
    ASSERT_NE(zero, nullptr);
    EXPECT_EQ(zero->size(), 1);
    EXPECT_EQ(zero->data<float>()[0], 0.f);
    EXPECT_EQ(input_name(g, bias, scores_first ? 2 : 1), "fill");
    test::expect_same_outputs([&] { return attention({.keys = Keys::Gpt2, .mask = mask, .window = true}); },
                              kAll, 1e-5, {.seed = 7, .symbols = {{"seq", kSeq}}});
  }
}

// A key padding mask read from the inputs, one row for all queries: added, or a Where whose fill swallows
// any score (float32's lowest). MultiHeadAttention wants a row per query: the bias is expanded to
// (batch, 1, sequence, total). Random conditions hide whole rows too: uniform weights either way.
TEST(PatternMultiHeadAttention, PaddingMaskOfTheInputsIsExpandedToARowPerQuery) {
  const float lowest = std::numeric_limits<float>::lowest();
  for (Mask mask : {Mask::AddPadding, Mask::WherePadding}) {
    const auto make = [mask, lowest] { return attention({.mask = mask, .fill = lowest}); };
    Model m = make();
    test::run_rules(m, kAll);
    const Graph& g = *m.graph;
    const bool added = mask == Mask::AddPadding;
    ASSERT_EQ(op_types(g), added ? (OpList{"Expand", kMha}) : (OpList{"Where", "Expand", kMha}));
    const Node& expand = g.node(g.value(only_attention(g).inputs.at(5)).producer);
    const Tensor* rows = rewrite::constant_tensor(g, expand.inputs[1]);
    ASSERT_NE(rows, nullptr);
    EXPECT_EQ(std::vector<int64_t>(rows->data<int64_t>().begin(), rows->data<int64_t>().end()),
              (std::vector<int64_t>{1, 1, kSeq, 1}));
    if (added) {
      EXPECT_EQ(input_name(g, expand, 0), "M");
    } else {
      const Node& bias = g.node(g.value(expand.inputs[0]).producer);  // Where(C, fill, 0)
      EXPECT_EQ(input_name(g, bias, 0), "C");
      EXPECT_EQ(input_name(g, bias, 1), "fill");
      EXPECT_EQ(rewrite::constant_tensor(g, bias.inputs[2])->data<float>()[0], 0.f);
    }
    test::expect_same_outputs(make, kAll, 1e-5, {.seed = 7});
    // The rule is MultiHeadAttentionKeyPadding, of the onnxruntime_gpu set: what a CPU user gets (the
    // default, and ONNX's Attention at opset 23) leaves such an attention as it is.
    for (int64_t opset : {18, 23}) {
      Model cpu = attention({.mask = mask, .fill = lowest, .opset = opset});
      test::run_rules(cpu, "default+onnxruntime");
      EXPECT_EQ(nodes_of_type(*cpu.graph, "MultiHeadAttention") + nodes_of_type(*cpu.graph, "Attention"), 0);
    }
  }
}

// A Where padding mask whose fill does not swallow the scores (-1e4: a row hidden whole keeps its scores'
// differences in a sum) or is -inf (such a row: NaN for the original, 0 for ONNX's Attention) stays.
TEST(PatternMultiHeadAttention, NotForAPaddingWhereWhoseFillDoesNotSwallowTheScores) {
  for (float fill : {-1e4f, -std::numeric_limits<float>::infinity()}) {
    Model m = attention({.mask = Mask::WherePadding, .fill = fill});
    test::run_rules(m, kAll);
    EXPECT_EQ(nodes_of_type(*m.graph, "MultiHeadAttention"), 0) << fill;
  }
}

// An additive table (-inf where hidden) cut at run time, as a dynamic export of `scores + table[:s, :s]`
// writes it: MultiHeadAttention's attention_bias is the cut made 4-D (a causal table is unidirectional,
// CausalMasksBecomeUnidirectional); Attention at opset 23 is causal for a causal table and the cut goes.
TEST(PatternMultiHeadAttention, AdditiveMaskCutAtRunTimeIsTheBias) {
  Model m = attention({.mask = Mask::AddCut, .window = true});
  test::run_rules(m, kAll);
  const Graph& g = *m.graph;
  ASSERT_EQ(nodes_of_type(g, "MultiHeadAttention"), 1);
  const Node& n = only_attention(g);
  const Node& bias = g.node(g.value(n.inputs.at(5)).producer);
  EXPECT_EQ(bias.op_type, Symbol("Unsqueeze"));
  EXPECT_EQ(g.node(g.value(bias.inputs[0]).producer).op_type, Symbol("Slice"));
  test::expect_same_outputs([] { return attention({.mask = Mask::AddCut, .window = true}); }, kAll, 1e-5,
                            {.seed = 7, .symbols = {{"seq", kSeq}}});
  expect_causal_attention_at_23(Mask::AddCut);
  // A cut ending at the batch size, not the sequence length, is no bias of the scores' sizes.
  Model batch = attention({.mask = Mask::AddCut, .window = true, .cut_at_batch = true});
  test::run_rules(batch, kAll);
  EXPECT_EQ(nodes_of_type(*batch.graph, "MultiHeadAttention"), 0);
}

// A mask computed from constants and not folded (HF's torch exports), read by evaluating it
// (computed_constant): causal, it goes (CausalMasksBecomeUnidirectional, and Attention's is_causal at opset
// 23); with a window of two keys it is no causal mask and stays the attention_bias, computed as it was.
TEST(PatternMultiHeadAttention, MaskComputedFromConstantsIsReadWithoutFolding) {
  Model m = attention({.mask = Mask::AddComputed, .window = true});
  test::run_rules(m, kAll);
  const Graph& g = *m.graph;
  ASSERT_EQ(nodes_of_type(g, "MultiHeadAttention"), 1);
  const Node& n = only_attention(g);
  ASSERT_EQ(n.inputs.size(), 6u);
  EXPECT_EQ(rewrite::constant_tensor(g, n.inputs[5]), nullptr) << "the mask is not folded";
  EXPECT_EQ(nodes_of_type(g, "Trilu"), 2);
  test::expect_same_outputs([] { return attention({.mask = Mask::AddComputed, .window = true}); }, kAll, 1e-5,
                            {.seed = 7});
  expect_causal_attention_at_23(Mask::AddComputed);
}

// A triangle of the sequence length read at run time (torch.triu(torch.full((s, s), fill), 2), a dynamic
// export) that also shows each query its next key: no causal mask, so the triangle stays as the bias.
TEST(PatternMultiHeadAttention, TriangleOfTheSequenceLengthThatIsNotCausalIsTheBias) {
  const auto make = [] {
    return attention({.mask = Mask::AddComputed, .triangle_at_run_time = true, .diagonal = 2});
  };
  Model m = make();
  test::run_rules(m, kAll);
  const Graph& g = *m.graph;
  ASSERT_EQ(nodes_of_type(g, "MultiHeadAttention"), 1);
  const Node& n = only_attention(g);
  ASSERT_EQ(n.inputs.size(), 6u);
  EXPECT_EQ(n.attribute(Symbol("unidirectional")), nullptr);
  const Node& bias = test::producer(g, n.inputs[5]);
  EXPECT_EQ(bias.op_type, Symbol("Unsqueeze"));
  EXPECT_EQ(test::producer(g, bias.inputs[0]).op_type, Symbol("Trilu"));
  test::expect_same_outputs(make, kAll, 1e-5, {.seed = 7, .symbols = {{"seq", kSeq}}});
}

// Not causal (a window of two keys): a Where bias, 4-D for the 3-D scores. A causal one is unidirectional
// (CausalMasksBecomeUnidirectional).
TEST(PatternMultiHeadAttention, OneHeadWithAMaskComparedAfterItsRunTimeCut) {
  Model m = single_head(0.f, 18, true);
  test::run_rules(m, kAll);
  const Graph& g = *m.graph;
  EXPECT_EQ(op_types(g), (OpList{"Shape", "Slice", "Slice", "Slice", "Equal", "Where", kMha}));
  const Node& n = only_attention(g);
  EXPECT_EQ(n.attribute(Symbol("num_heads"))->i, 1);
  const Node& bias = g.node(g.value(n.inputs.at(5)).producer);
  EXPECT_EQ(input_name(g, bias, 1), "fill");
  const Tensor* zero = rewrite::constant_tensor(g, bias.inputs[2]);
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->dims(), (std::vector<int64_t>{1, 1, 1, 1}));  // the bias is 4-D
  test::expect_same_outputs([] { return single_head(0.f, 18, true); }, kAll, 1e-5,
                            {.seed = 7, .symbols = {{"seq", kSeq}}});
  // Equal(cut, 1) hides the diagonal and what is below: row 0 is fully masked.
  Model hides_row = single_head(1.f);
  test::run_rules(hides_row, kAll);
  EXPECT_EQ(nodes_of_type(*hides_row.graph, "MultiHeadAttention"), 0);
}

TEST(PatternMultiHeadAttention, NotForAMaskCutAtRunTimeThatHidesAWholeRowOrIsNoSquareCutOrFillsAbove1e4) {
  for (const Attention& c : {Attention{.mask = Mask::WhereCutScoresFirst, .mask_a_whole_row = true},
                             Attention{.mask = Mask::WhereCutScoresFirst, .cut_at_batch = true},
                             Attention{.mask = Mask::WhereCutFillFirst, .fill = -10.f}}) {
    Model m = attention(c);
    test::run_rules(m, kAll);
    EXPECT_EQ(nodes_of_type(*m.graph, "MultiHeadAttention"), 0);
    EXPECT_EQ(nodes_of_type(*m.graph, "Softmax"), 1);
  }
}

TEST(PatternMultiHeadAttention, SameNumbers) {
  for (const Attention& c :
       {Attention{}, Attention{.keys = Keys::Gpt2, .mask = Mask::WhereScoresFirst},
        Attention{.keys = Keys::FusedMatMul, .mask = Mask::WhereFillFirst, .fill = -1e9f},
        Attention{.mask = Mask::AddInput, .multiply = true},
        Attention{.mask = Mask::None, .query_offset = true}, Attention{.row_size = kHidden}})
    test::expect_same_outputs([&] { return attention(c); }, kAll, 1e-5);
  test::expect_same_outputs([] { return single_head(); }, kAll, 1e-5);
}

TEST(PatternMultiHeadAttention, KeysAfterAPastCacheWithAMaskSlicedToTheTotalLength) {
  Model m = with_past();
  test::run_rules(m, kAll);
  const Graph& g = *m.graph;
  EXPECT_EQ(op_types(g), (OpList{"Reshape", "Transpose", "Add", "Reshape", "Transpose", "Concat", "Reshape",
                                 "Transpose", "Concat", "Transpose", "Reshape", kMha}));
  const Node& n = only_attention(g);
  // Key and value stay the concatenated (batch, heads, total, head_size) caches; the mask passes as it is.
  EXPECT_EQ(g.node(g.value(n.inputs[1]).producer).op_type, Symbol("Concat"));
  EXPECT_EQ(g.node(g.value(n.inputs[2]).producer).op_type, Symbol("Concat"));
  EXPECT_EQ(input_name(g, n, 5), "M");
  EXPECT_EQ(n.attribute(Symbol("num_heads"))->i, kHeads);
  EXPECT_FLOAT_EQ(n.attribute(Symbol("scale"))->f, 0.5f);
  test::expect_same_outputs([] { return with_past(); }, kAll, 1e-5,
                            {.seed = 7, .symbols = {{"seq", kSeq}, {"past", 3}, {"total", kSeq + 3}}});
  // One mask row for every position: no attention_bias.
  Model one_row = with_past(false);
  test::run_rules(one_row, kAll);
  EXPECT_EQ(nodes_of_type(*one_row.graph, "MultiHeadAttention"), 0);
  EXPECT_EQ(nodes_of_type(*one_row.graph, "Softmax"), 1);
}

TEST(PatternMultiHeadAttention, DescribesItself) {
  const std::string text = rewrite::rules_from_string("MultiHeadAttentionKeyValue3D").front()->describe();
  EXPECT_NE(text.find("-> rebuild(R, input1=k, input2=v)"), std::string::npos) << text;
}

// ---- Attention (default set, opset >= 23) ----------------------------------------------------------
TEST(PatternAttention, AdditiveMaskBecomesOneNodeOnThe3DProjectionsAtOpset23) {
  Model m = attention({.opset = 23});
  test::run_rules(m, "default");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Attention"}));
  const Node& n = only_attention(g, "Attention");
  EXPECT_TRUE(n.domain.empty());
  ASSERT_EQ(n.inputs.size(), 4u);
  EXPECT_EQ(input_name(g, n, 0), "Q");
  EXPECT_EQ(input_name(g, n, 1), "K");
  EXPECT_EQ(input_name(g, n, 2), "V");
  const Tensor* mask = rewrite::constant_tensor(g, n.inputs[3]);
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->dims(), (std::vector<int64_t>{kBatch, 1, kSeq, kSeq}));
  EXPECT_EQ(n.attribute(Symbol("q_num_heads"))->i, kHeads);
  EXPECT_EQ(n.attribute(Symbol("kv_num_heads"))->i, kHeads);
  EXPECT_FLOAT_EQ(n.attribute(Symbol("scale"))->f, 1 / std::sqrt(3.f));
  EXPECT_EQ(g.value(n.outputs[0]).shape, Shape({kBatch, kSeq, kHidden}));
}

// The causal Where masks become is_causal (ONNX Runtime hides with -inf: exp(-1e4) underflows the same).
TEST(PatternAttention, EverySpelling) {
  const float inv_root = 1 / std::sqrt(3.f);
  struct Case {
    Attention attention;
    int64_t mask_heads;  // the mask is (1, mask_heads, sequence, total); 0: no mask input
    float scale;
    bool causal = false;
  };
  for (const Case& c : std::vector<Case>{
           {{.keys = Keys::Gpt2, .mask = Mask::WhereScoresFirst, .opset = 23}, 0, inv_root, true},
           {{.keys = Keys::FusedMatMul, .mask = Mask::WhereFillFirst, .fill = -1e4f, .opset = 23},
            0,
            0.5f,
            true},
           {{.mask = Mask::AddInput, .multiply = true, .opset = 23}, kHeads, inv_root},
           {{.mask = Mask::None, .scale_rank = 4, .opset = 23}, 0, inv_root},
           {{.keys = Keys::Gpt2, .mask = Mask::None, .opset = 24}, 0, inv_root}}) {
    Model m = attention(c.attention);
    test::run_rules(m, "default");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Attention"}));
    const Node& n = only_attention(g, "Attention");
    EXPECT_EQ(input_name(g, n, 0), "Q");
    EXPECT_EQ(input_name(g, n, 1), "K");
    EXPECT_EQ(input_name(g, n, 2), "V");
    EXPECT_NEAR(n.attribute(Symbol("scale"))->f, c.scale, 1e-6);
    EXPECT_EQ(n.attribute(Symbol("is_causal")) != nullptr, c.causal);
    if (c.mask_heads == 0) {
      EXPECT_EQ(n.inputs.size(), 3u);
    } else {
      ASSERT_EQ(n.inputs.size(), 4u);
      EXPECT_EQ(g.value(n.inputs[3]).shape, Shape({1, c.mask_heads, kSeq, kSeq}));
    }
  }
}

TEST(PatternAttention, AWhereMaskOtherThanCausalStaysAMask) {
  Model m = attention({.mask = Mask::WhereScoresFirst, .opset = 23});
  // Every row keeps a key, row 2 not key 0.
  m.graph->value(*m.graph->find("flags")).initializer =
      Tensor::from<bool>({1, 1, kSeq, kSeq}, {true, false, false, false, true, true, false, false, false,
                                              true, true, false, true, false, true, true});
  test::run_rules(m, "default");
  ASSERT_EQ(op_types(*m.graph), (OpList{"Attention"}));
  const Node& n = only_attention(*m.graph, "Attention");
  EXPECT_EQ(n.attribute(Symbol("is_causal")), nullptr);
  EXPECT_EQ(m.graph->value(n.inputs.at(3)).shape, Shape({1, 1, kSeq, kSeq}));
}

TEST(PatternAttention, OneHeadAndRunTimeMasksAndPastKeys) {
  Model one = single_head(std::nullopt, 23);
  test::run_rules(one, "default");
  ASSERT_EQ(op_types(*one.graph), (OpList{"Attention"}));
  const Node& n = only_attention(*one.graph, "Attention");
  EXPECT_EQ(n.attribute(Symbol("q_num_heads"))->i, 1);
  EXPECT_EQ(n.attribute(Symbol("kv_num_heads"))->i, 1);
  EXPECT_EQ(n.attribute(Symbol("is_causal"))->i, 1);
  EXPECT_EQ(n.inputs.size(), 3u);
  // A causal mask cut from its table at run time: the cut goes too.
  for (Mask mask : {Mask::WhereCutScoresFirst, Mask::WhereCutFillFirst}) {
    Model cut = attention({.keys = Keys::Gpt2, .mask = mask, .opset = 23});
    test::run_rules(cut, "default");
    ASSERT_EQ(op_types(*cut.graph), (OpList{"Attention"}));
    EXPECT_EQ(only_attention(*cut.graph, "Attention").attribute(Symbol("is_causal"))->i, 1);
  }
  Model cut_once = single_head(0.f, 23);
  test::run_rules(cut_once, "default");
  EXPECT_EQ(op_types(*cut_once.graph), (OpList{"Attention"}));
  // Key and value concatenated after the past ones are 4-D: they go back to 3-D for the 3-D form.
  Model past = with_past(true, 23);
  test::run_rules(past, "default");
  EXPECT_EQ(op_types(*past.graph), (OpList{"Reshape", "Transpose", "Add", "Reshape", "Transpose", "Concat",
                                           "Reshape", "Transpose", "Concat", "Transpose", "Reshape",
                                           "Transpose", "Reshape", "Transpose", "Reshape", "Attention"}));
  EXPECT_EQ(input_name(*past.graph, only_attention(*past.graph, "Attention"), 3), "M");
}

// Multi-query attention, K and V of one head repeated for the two query heads: the clean-up rules turn
// the repeat into Squeeze(Expand(Unsqueeze(K, [1, 2])), [1]) before the attention fuses. Attention reads
// the 3-D K and V of one head (kv_num_heads = 1) and the repeat goes; MultiHeadAttention, which has no
// kv_num_heads, reads the repeated K and V. Grouped keys of more than one head, read before their
// repeat, are the Llama export's below.
TEST(PatternAttention, MultiQueryAttentionReadsTheKeysAndValuesOfOneHead) {
  Model at23 = attention({.opset = 23, .kv_heads = 1});
  test::run_rules(at23, "default");
  ASSERT_EQ(op_types(*at23.graph), (OpList{"Attention"}));
  const Node& n = only_attention(*at23.graph, "Attention");
  EXPECT_EQ(n.attribute(Symbol("kv_num_heads"))->i, 1);
  EXPECT_EQ(n.attribute(Symbol("q_num_heads"))->i, kHeads);
  EXPECT_EQ(input_name(*at23.graph, n, 1), "K");
  EXPECT_EQ(input_name(*at23.graph, n, 2), "V");
  Model at22 = attention({.opset = 22, .kv_heads = 1});
  test::run_rules(at22, kAll);
  EXPECT_EQ(nodes_of_type(*at22.graph, "MultiHeadAttention"), 1);
  EXPECT_EQ(nodes_of_type(*at22.graph, "Expand"), 2);
}

TEST(PatternAttention, NotBelowOpset23) {
  Model m = attention({.opset = 22});
  test::run_rules(m, "default");
  EXPECT_EQ(nodes_of_type(*m.graph, "Attention"), 0);
  EXPECT_EQ(nodes_of_type(*m.graph, "Softmax"), 1);
}

// With both sets, the default set's Attention comes first from opset 23; MultiHeadAttention below.
TEST(PatternAttention, DefaultAndOnnxruntimeGiveAttentionAt23AndMultiHeadAttentionAt22) {
  Model at23 = attention({.opset = 23});
  test::run_rules(at23, kAll);
  EXPECT_EQ(op_types(*at23.graph), (OpList{"Attention"}));
  Model at22 = attention({.opset = 22});
  test::run_rules(at22, kAll);
  EXPECT_EQ(op_types(*at22.graph), (OpList{kMha}));
}

TEST(PatternAttention, SameNumbers) {
  for (const Attention& c :
       {Attention{.opset = 23}, Attention{.keys = Keys::Gpt2, .mask = Mask::WhereScoresFirst, .opset = 23},
        Attention{.mask = Mask::AddInput, .multiply = true, .opset = 23},
        Attention{.mask = Mask::None, .query_offset = true, .opset = 23},
        Attention{.row_size = kHidden, .opset = 23}, Attention{.opset = 23, .kv_heads = 1},
        Attention{.keys = Keys::FusedMatMul, .mask = Mask::None, .opset = 23, .kv_heads = 1}})
    test::expect_same_outputs([&] { return attention(c); }, "default", 1e-5);
  test::expect_same_outputs([] { return attention({.opset = 22, .kv_heads = 1}); }, kAll, 1e-5);
  test::expect_same_outputs([] { return single_head(std::nullopt, 23); }, "default", 1e-5);
  test::expect_same_outputs([] { return single_head(0.f, 23); }, "default", 1e-5,
                            {.seed = 7, .symbols = {{"seq", kSeq}}});
  test::expect_same_outputs(
      [] { return attention({.keys = Keys::Gpt2, .mask = Mask::WhereCutFillFirst, .opset = 23}); }, "default",
      1e-5, {.seed = 7, .symbols = {{"seq", kSeq}}});
  test::expect_same_outputs([] { return with_past(true, 23); }, kAll, 1e-5,
                            {.seed = 7, .symbols = {{"seq", kSeq}, {"past", 3}, {"total", kSeq + 3}}});
}

// ---- MultiHeadAttentionScaledQuery, MultiHeadAttentionPackedQkv -------------------------------------
// What the attention rule leaves of ViT's attention (the user's path on vit_L2 is below), as text models.
namespace {
// `c`: q's factor, a constant, applied before the heads merge or (`after_merge`) after. `onnx`: ONNX's
// Attention (opset 23) reads the attention, keys and values 3-D as its 3-D form wants them.
std::string scaled_query(const std::string& c, bool after_merge = false, bool onnx = false) {
  const std::string attention = onnx ? "Attention<q_num_heads=2, kv_num_heads=2, scale=0.5>"
                                     : "com.microsoft.MultiHeadAttention<num_heads=2, scale=0.5>";
  const std::string body = after_merge ? R"(
  QT = Transpose<perm=[0, 2, 1, 3]>(Q)
  QR = Reshape(QT, t)
  QS = Mul(QR, c)
  Y = )" + attention + R"((QS, K, V)
})"
                                       : R"(
  QS = Mul(Q, c)
  QT = Transpose<perm=[0, 2, 1, 3]>(QS)
  QR = Reshape(QT, t)
  Y = )" + attention + R"((QR, K, V)
})";
  const std::string kv = onnx ? "float[1,4,6]" : "float[1,2,4,3]";
  return std::string(R"(<ir_version: 8, opset_import: ["" : )") + (onnx ? "23" : "17") +
         R"(, "com.microsoft" : 1]>
g (float[1,2,4,3] Q, )" +
         kv + " K, " + kv + R"( V) => (float[1,4,6] Y) <int64[3] t = {1, 4, 6}, )" + c + "> {" + body;
}
}  // namespace

TEST(PatternMultiHeadAttentionScaledQuery, TheFactorJoinsTheScale) {
  for (bool onnx : {false, true}) {
    for (bool after_merge : {false, true}) {
      SCOPED_TRACE(std::string(onnx ? "Attention" : "MultiHeadAttention") + (after_merge ? ", after" : ""));
      Model m = xexp::testing::load_case_model(scaled_query("float c = {0.25}", after_merge, onnx));
      test::run_rules(m, onnx ? "AttentionScaledQuery" : "MultiHeadAttentionScaledQuery");
      const Graph& g = *m.graph;
      ASSERT_EQ(op_types(g), (OpList{"Transpose", "Reshape", onnx ? "Attention" : kMha}));
      const Node& attention = only_attention(g, onnx ? "Attention" : "MultiHeadAttention");
      EXPECT_EQ(attention.attribute(Symbol("scale"))->f, 0.125f);
      EXPECT_EQ(g.value(g.node(g.first_node()).inputs[0]).name, "Q");
    }
  }
}

TEST(PatternMultiHeadAttentionScaledQuery, NotForAFactorPerElement) {
  for (bool after_merge : {false, true}) {
    const std::string c =
        after_merge ? "float[6] c = {0.25, 0.5, 1.0, 0.25, 0.5, 1.0}" : "float[3] c = {0.25, 0.5, 1.0}";
    Model m = xexp::testing::load_case_model(scaled_query(c, after_merge));
    test::run_rules(m, "MultiHeadAttentionScaledQuery");
    EXPECT_EQ(test::op_types(*m.graph).size(), 4u) << after_merge;
  }
}

TEST(PatternMultiHeadAttentionScaledQuery, SameNumbers) {
  for (bool onnx : {false, true})
    for (bool after_merge : {false, true})
      test::expect_same_outputs(
          [after_merge, onnx] {
            return xexp::testing::load_case_model(scaled_query("float c = {0.25}", after_merge, onnx));
          },
          onnx ? "AttentionScaledQuery" : "MultiHeadAttentionScaledQuery", 1e-6);
}

namespace {
// timm's unbind of a packed projection X, (1, 4, 3 * 2 heads * 3) reshaped to `packed`; `onnx`: ONNX's
// Attention (opset 23) reads keys and values merged to 3-D too.
std::string unbound_qkv(const std::string& x_type, const std::string& packed, bool onnx = false) {
  const std::string kv = onnx ? R"(
  KT = Transpose<perm=[0, 2, 1, 3]>(K)
  KR = Reshape(KT, t)
  VT = Transpose<perm=[0, 2, 1, 3]>(V)
  VR = Reshape(VT, t)
  Y = Attention<q_num_heads=2, kv_num_heads=2, scale=0.5>(QR, KR, VR)
})"
                              : R"(
  Y = com.microsoft.MultiHeadAttention<num_heads=2, scale=0.5>(QR, K, V)
})";
  return std::string(R"(<ir_version: 8, opset_import: ["" : )") + (onnx ? "23" : "17") +
         R"(, "com.microsoft" : 1]>
g ()" + x_type +
         R"( X) => (float[1,4,6] Y) <int64[5] s = )" + packed +
         R"(, int64[3] t = {1, 4, 6}, int64[3] p = {1, 1, 1}, int64[1] z = {0}> {
  R = Reshape(X, s)
  T = Transpose<perm=[2, 0, 3, 1, 4]>(R)
  Q1, K1, V1 = Split<axis=0>(T, p)
  Q = Squeeze(Q1, z)
  K = Squeeze(K1, z)
  V = Squeeze(V1, z)
  QT = Transpose<perm=[0, 2, 1, 3]>(Q)
  QR = Reshape(QT, t))" +
         kv;
}
}  // namespace

TEST(PatternMultiHeadAttentionPackedQkv, ThreeThirdsOfTheProjection) {
  // X as rows (4, 18), as a Gemm leaves it, and as (1, 4, 18); MultiHeadAttention and Attention.
  for (const std::string x : {"float[4,18]", "float[1,4,18]"})
    for (bool onnx : {false, true}) {
      SCOPED_TRACE(x + (onnx ? ", Attention" : ""));
      Model m = xexp::testing::load_case_model(unbound_qkv(x, "{1, 4, 3, 2, 3}", onnx));
      test::run_rules(m, onnx ? "AttentionPackedQkv" : "MultiHeadAttentionPackedQkv");
      const Graph& g = *m.graph;
      ASSERT_EQ(op_types(g), (OpList{"Reshape", "Split", onnx ? "Attention" : kMha}));
      const Node& attention = only_attention(g, onnx ? "Attention" : "MultiHeadAttention");
      const Node& split = g.node(g.value(attention.inputs[0]).producer);
      EXPECT_EQ(split.attribute(Symbol("axis"))->i, -1);
      EXPECT_EQ(eval::as_int64s(*rewrite::constant_tensor(g, split.inputs[1])),
                (std::vector<int64_t>{6, 6, 6}));
      for (uint32_t k = 0; k < 3; ++k) {
        EXPECT_EQ(attention.inputs[k], split.outputs[k]);
        EXPECT_EQ(*g.value(split.outputs[k]).shape, (Shape{1, 4, 6}));
      }
    }
}

TEST(PatternMultiHeadAttentionPackedQkv, NotWhenTheReshapeMixesAxes) {
  for (bool onnx : {false, true}) {
    const char* rules = onnx ? "AttentionPackedQkv" : "MultiHeadAttentionPackedQkv";
    // (1, 12, 6) to (1, 4, 3, 2, 3): the thirds are not slices of the last axis.
    Model mixed = xexp::testing::load_case_model(unbound_qkv("float[1,12,6]", "{1, 4, 3, 2, 3}", onnx));
    test::run_rules(mixed, rules);
    EXPECT_EQ(nodes_of_type(*mixed.graph, "Squeeze"), 3) << rules;
  }
}

TEST(PatternMultiHeadAttentionPackedQkv, SameNumbers) {
  for (const std::string x : {"float[4,18]", "float[1,4,18]"})
    for (bool onnx : {false, true})
      test::expect_same_outputs(
          [x, onnx] { return xexp::testing::load_case_model(unbound_qkv(x, "{1, 4, 3, 2, 3}", onnx)); },
          onnx ? "AttentionPackedQkv" : "MultiHeadAttentionPackedQkv", 1e-6);
}

// ---- MultiHeadAttentionBias -------------------------------------------------------------------------
namespace {
// BERT's separate projections: q, k and v plus one bias each, `biases` declaring bq, bk and bv (as
// initializers or, `as_inputs`, graph inputs); `masked` adds an attention_bias input.
std::string separate_biases(bool as_inputs, bool masked = false) {
  const std::string vectors = "float[6] bq, float[6] bk, float[6] bv";
  const std::string values =
      "float[6] bq = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, float[6] bk = {-0.5, 0.5, -0.25, 0.25, 1.0, -1.0}, "
      "float[6] bv = {1.0, 2.0, 3.0, -1.0, -2.0, -3.0}";
  return R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[1,4,6] Q, float[1,4,6] K, float[1,4,6] V)" +
         (as_inputs ? ", " + vectors : "") + (masked ? ", float[1,1,4,4] M" : "") +
         ") => (float[1,4,6] Y) <" + (as_inputs ? "float unused = {0.0}" : values) + R"(> {
  QB = Add(Q, bq)
  KB = Add(bk, K)
  VB = Add(V, bv)
  Y = com.microsoft.MultiHeadAttention<num_heads=2>(QB, KB, VB)" +
         (masked ? ", , , M" : "") + R"()
})";
}
// ViT's packed projection X plus its bias c, cut in three.
const std::string kPackedBias = R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[1,4,18] X) => (float[1,4,6] Y) <float[18] c = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, -0.1, -0.2, -0.3, -0.4, -0.5, -0.6, 1.0, 0.5, 0.0, -0.5, -1.0, 2.0}, int64[3] t = {6, 6, 6}> {
  XB = Add(X, c)
  Q, K, V = Split<axis=-1>(XB, t)
  Y = com.microsoft.MultiHeadAttention<num_heads=2>(Q, K, V)
})";
}  // namespace

TEST(PatternMultiHeadAttentionBias, SeparateBiasesArePackedInOrder) {
  Model m = xexp::testing::load_case_model(separate_biases(false));
  test::run_rules(m, "MultiHeadAttentionBias");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{kMha}));
  const Node& n = only_attention(g);
  for (uint32_t k = 0; k < 3; ++k) EXPECT_EQ(g.value(n.inputs[k]).name, std::string(1, "QKV"[k]));
  const Tensor* bias = rewrite::constant_tensor(g, n.inputs.at(3));
  ASSERT_NE(bias, nullptr);
  const std::vector<float> expected = {0.1f,  0.2f, 0.3f,  0.4f, 0.5f, 0.6f, -0.5f, 0.5f,  -0.25f,
                                       0.25f, 1.0f, -1.0f, 1.0f, 2.0f, 3.0f, -1.0f, -2.0f, -3.0f};
  EXPECT_EQ(std::vector<float>(bias->data<float>().begin(), bias->data<float>().end()), expected);
}

TEST(PatternMultiHeadAttentionBias, BiasesThatAreInputsAreJoinedByAConcat) {
  Model m = xexp::testing::load_case_model(separate_biases(true, true));
  test::run_rules(m, "MultiHeadAttentionBias");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Concat", kMha}));
  const Node& n = only_attention(g);
  const Node& concat = g.node(g.value(n.inputs.at(3)).producer);
  for (uint32_t k = 0; k < 3; ++k) EXPECT_EQ(g.value(concat.inputs[k]).name, std::string("b") + "qkv"[k]);
  EXPECT_EQ(g.value(n.inputs.at(5)).name, "M");  // the mask stays
}

TEST(PatternMultiHeadAttentionBias, ThePackedBiasGoesBeforeTheSplit) {
  Model m = xexp::testing::load_case_model(kPackedBias);
  test::run_rules(m, "MultiHeadAttentionBias");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Split", kMha}));
  const Node& n = only_attention(g);
  const Node& split = g.node(g.first_node());
  EXPECT_EQ(g.value(split.inputs[0]).name, "X");
  for (uint32_t k = 0; k < 3; ++k) EXPECT_EQ(n.inputs[k], split.outputs[k]);
  EXPECT_EQ(g.value(n.inputs.at(3)).name, "c");
}

TEST(PatternMultiHeadAttentionBias, NotForABiasPerToken) {
  std::string per_token = separate_biases(false);
  per_token.replace(per_token.find("float[6] bq = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}"), 44,
                    "float[4,1] bq = {0.1, 0.2, 0.3, 0.4}");
  Model t = xexp::testing::load_case_model(per_token);
  test::run_rules(t, "MultiHeadAttentionBias");
  EXPECT_EQ(op_types(*t.graph), (OpList{"Add", "Add", "Add", kMha}));
}

TEST(PatternMultiHeadAttentionBias, SameNumbers) {
  test::expect_same_outputs([] { return xexp::testing::load_case_model(separate_biases(false)); },
                            "MultiHeadAttentionBias", 1e-5);
  test::expect_same_outputs([] { return xexp::testing::load_case_model(separate_biases(true, true)); },
                            "MultiHeadAttentionBias", 1e-5);
  test::expect_same_outputs([] { return xexp::testing::load_case_model(kPackedBias); },
                            "MultiHeadAttentionBias", 1e-5);
}

// ---- the user's path: `xexp optimize` on the shared torch models, read as exported -------------------
namespace {

const std::filesystem::path kModels = std::filesystem::path(XEXP_SHARED_DIR) / "models";

// Our own export of a Llama block with grouped-query attention (tests/data/models/make_llama_gqa.py).
const std::filesystem::path kOurModels = std::filesystem::path(XEXP_SOURCE_DIR) / "tests" / "data" / "models";

std::vector<int64_t> read_ids(const std::filesystem::path& dir, const std::string& name) {
  return xexp::testing::read_file<std::vector<int64_t>>(dir / (name + ".input_ids.bin"));
}

// Optimizes FILE of `dir` as `xexp optimize` does (upgraded to `target_opset` first, unless 0), checks
// that ONNX Runtime and xexp's evaluator give the original's outputs, and returns the optimized model.
Model optimized_checked(const std::string& name, const std::string& file, int64_t target_opset = 0,
                        const std::filesystem::path& dir = kModels,
                        const std::string& patterns = optimizer::kDefaultPatterns) {
  const std::string original = (dir / file).string();
  Model model = load_model(original);
  optimizer::optimize_model(model, {.patterns = patterns, .target_opset = target_opset});
  const std::vector<int64_t> ids = read_ids(dir, name);
  // The ids were drawn for the static export, whose input shape says their sequence length.
  const Model static_export = load_model((dir / (name + ".fold.onnx")).string());
  const int64_t sequence = (*static_export.graph->value(static_export.graph->inputs().at(0)).shape)[1].value();
  const int64_t batch = static_cast<int64_t>(ids.size()) / sequence;
  const xexp::testing::NamedTensors feeds = {{"input_ids", Tensor::from<int64_t>({batch, sequence}, ids)}};
  test::expect_outputs_of_file(original, model, feeds, 1e-5);
  return model;
}

// The number of `op_type` nodes in FILE optimized that read no mask and are causal (Attention's is_causal,
// MultiHeadAttention's unidirectional): every attention of these decoders is.
int attention_nodes_after_optimizing(const std::string& name, const std::string& file,
                                     int64_t target_opset = 0, const char* op_type = "MultiHeadAttention",
                                     const std::string& patterns = optimizer::kDefaultPatterns) {
  const Model model = optimized_checked(name, file, target_opset, kModels, patterns);
  int n = 0;
  for (NodeId id : model.graph->nodes()) {
    const Node& found = model.graph->node(id);
    const bool onnx = found.op_type == Symbol("Attention");
    const Attribute* causal = found.attribute(Symbol(onnx ? "is_causal" : "unidirectional"));
    // Attention's masks start at its 4th input; MultiHeadAttention's 4th is the projection bias.
    const std::size_t unmasked = onnx ? 3 : 4;
    n += found.op_type == Symbol(op_type) && causal && causal->i == 1 && found.inputs.size() <= unmasked;
  }
  return n;
}

}  // namespace

TEST(PatternMultiHeadAttentionModels, EveryAttentionBlockOfTheTorchExportsIsFused) {
  EXPECT_EQ(attention_nodes_after_optimizing("llama_L1", "llama_L1.fold.onnx"), 1);
  EXPECT_EQ(attention_nodes_after_optimizing("gpt_erf_L1", "gpt_erf_L1.fold.onnx"), 1);
  // Two modules of one head, which the opt-in onnxruntime_gpu set fuses.
  EXPECT_EQ(attention_nodes_after_optimizing("seed_llm", "seed_llm.fold.onnx", 0, "MultiHeadAttention", kAll), 2);
}

// The dynamic-axis exports: causal masks cut from a constant table at run time.
TEST(PatternMultiHeadAttentionModels, EveryAttentionBlockOfTheDynamicExportsIsFused) {
  EXPECT_EQ(attention_nodes_after_optimizing("llama_L1", "llama_L1.op14dyn.onnx"), 1);
  EXPECT_EQ(attention_nodes_after_optimizing("gpt_erf_L1", "gpt_erf_L1.op14dyn.onnx"), 1);
  EXPECT_EQ(attention_nodes_after_optimizing("seed_llm", "seed_llm.op14dyn.onnx", 0, "MultiHeadAttention", kAll), 2);
}

// At opset 23 ONNX's Attention, whose is_causal replaces the causal masks and their cuts at run time.
TEST(PatternMultiHeadAttentionModels, AtOpset23TheDynamicExportsGetCausalAttention) {
  EXPECT_EQ(attention_nodes_after_optimizing("gpt_erf_L1", "gpt_erf_L1.op14dyn.onnx", 23, "Attention"), 1);
  EXPECT_EQ(attention_nodes_after_optimizing("seed_llm", "seed_llm.op14dyn.onnx", 23, "Attention"), 2);
}

// The experimental-experiment corpus's Llama exports compute their causal mask from constants
// (ConstantOfShape, Trilu, Greater of two aranges; expanded to the batch read at run time in the dynamic
// one): a 1024 x 1025 table, above what folding stores. It is evaluated, found causal, and goes.
TEST(PatternMultiHeadAttentionModels, CausalMaskComputedFromConstantsInTheCorpusLlamaExports) {
  const std::filesystem::path dir = std::filesystem::path(XEXP_SHARED_DIR) / "corpus" / "experimental-experiment";
  for (const char* file : {"ut_xoptim_data_llama_export_static.onnx", "ut_xoptim_data_llama_export_dynamic.onnx"}) {
    SCOPED_TRACE(file);
    const std::string original = (dir / file).string();
    Model model = load_model(original);
    optimizer::optimize_model(model, {});
    const Graph& g = *model.graph;
    ASSERT_EQ(nodes_of_type(g, "MultiHeadAttention"), 1);
    const Node& n = only_attention(g);
    EXPECT_EQ(n.inputs.size(), 3u);
    ASSERT_NE(n.attribute(Symbol("unidirectional")), nullptr);
    EXPECT_EQ(n.attribute(Symbol("unidirectional"))->i, 1);
    for (const char* op : {"ConstantOfShape", "Trilu", "Greater", "Expand"}) EXPECT_EQ(nodes_of_type(g, op), 0) << op;
    std::vector<int64_t> ids(2 * 1024);  // two sequences of 1024 ids, below the vocabulary's 1024
    for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<int64_t>(k * 37 % 1024);
    test::expect_outputs_of_file(original, model, {{"input_ids", Tensor::from<int64_t>({2, 1024}, ids)}}, 1e-5);
  }
}

// Phi-4-mini as experimental-experiment exports it: each attention is a call of the local function
// aten.aten_scaled_dot_product_attention_default (its aten_as_function option), whose body ends in
// torch's safe softmax. `xexp optimize` inlines the call (an ATen op, as onnxscript's torch_lib functions)
// and each attention becomes one MultiHeadAttention and the Where(IsNaN) that zeroes the rows the padding
// mask hides; at opset 23, one ONNX Attention. Its partial rotations become single RotaryEmbedding nodes.
// The corpus sweep (test_optimize_corpus) compares the outputs on random weights and masks.
TEST(PatternMultiHeadAttentionModels, SafeSoftmaxAttentionOfPhi4CalledAsALocalFunction) {
  const std::string original =
      (std::filesystem::path(XEXP_SHARED_DIR) / "corpus" / "experimental-experiment" /
       "ut_xoptim_data_microsoft_Phi-4-mini-reasoning-custom-default-f32-cpu.onnx")
          .string();
  for (const int64_t opset : {0, 23}) {
    SCOPED_TRACE(opset);
    Model model = load_model(original);
    ASSERT_EQ(model.functions.size(), 1u);
    optimizer::OptimizeModelOptions options;
    if (opset) options.target_opset = opset;
    optimizer::optimize_model(model, options);
    const Graph& g = *model.graph;
    EXPECT_TRUE(model.functions.empty());
    EXPECT_EQ(nodes_of_type(g, "Softmax"), 0);
    EXPECT_EQ(nodes_of_type(g, opset ? "Attention" : "MultiHeadAttention"), 2);
    EXPECT_EQ(nodes_of_type(g, "IsNaN"), opset ? 0 : 2);
    // Each rotation of 96 of the 128 dims of a head is one node (RotaryEmbeddingPartial).
    int rotations = 0;
    for (NodeId id : g.nodes()) {
      const Node& n = g.node(id);
      if (n.op_type != Symbol("RotaryEmbedding")) continue;
      ++rotations;
      EXPECT_EQ(n.attribute(Symbol("rotary_embedding_dim"))->i, 96);
      EXPECT_NE(g.value(n.inputs[0]).shape->back(), Dim(96));  // whole heads, not their first 96 dims
    }
    EXPECT_EQ(rotations, 4);
  }
}

// Grouped-query attention as torch exports it: at opset 23 one causal Attention reads the keys and values
// of the two kv heads before their repeat, which goes; below, com.microsoft GroupQueryAttention does, given
// the sequence lengths. In the dynamic export the causal mask is an additive table cut at run time, and so
// are the cos and sin caches.
// A GPT-2 decoding step as torch exports it (tests/data/models/gpt_kv_cache): one new token, keys and
// values after the cache (Concat(past, new), also the model's present outputs). With a sequence of one,
// TransposeEqualReshape makes the Transposes around the heads Reshapes, and the heads' result is reshaped
// without a Transpose: it still becomes one MultiHeadAttention reading the present keys and values, and
// torch's outputs stay (OptimizeCorpus.TorchArchitecturesKeepTorchsOutputs compares them).
TEST(PatternMultiHeadAttentionModels, ADecodingStepReadsTheKeysAndValuesAfterItsCache) {
  const std::string file = (kOurModels / "gpt_kv_cache.fold.onnx").string();
  Model model = load_model(file);
  optimizer::optimize_model(model, {});
  const Graph& g = *model.graph;
  ASSERT_EQ(nodes_of_type(g, "MultiHeadAttention"), 1);
  EXPECT_EQ(nodes_of_type(g, "Softmax"), 0);
  const Node& n = only_attention(g);
  EXPECT_EQ(input_name(g, n, 1), "present_key");
  EXPECT_EQ(input_name(g, n, 2), "present_value");
  EXPECT_EQ(n.attribute(Symbol("num_heads"))->i, 4);
  // Over more than one position, a Reshape without the Transpose mixes heads and positions: no attention.
  Model mixed = attention({.merged_without_transpose = true});
  test::run_rules(mixed, kAll);
  EXPECT_EQ(nodes_of_type(*mixed.graph, "MultiHeadAttention"), 0);
  EXPECT_EQ(nodes_of_type(*mixed.graph, "Softmax"), 1);
}

TEST(PatternMultiHeadAttentionModels, GroupedQueryAttentionOfALlamaExport) {
  // Torch's logits, for the ids both exports read.
  const std::vector<float> expected =
      xexp::testing::read_file<std::vector<float>>(kOurModels / "llama_gqa_L1.expected.bin");
  const Tensor ids = Tensor::from<int64_t>({2, 16}, read_ids(kOurModels, "llama_gqa_L1"));
  for (const char* file : {"llama_gqa_L1.fold.onnx", "llama_gqa_L1.op14dyn.onnx"}) {
    SCOPED_TRACE(file);
    const Model at23 = optimized_checked("llama_gqa_L1", file, 23, kOurModels);
    ASSERT_EQ(nodes_of_type(*at23.graph, "Attention"), 1);
    const Node& n = only_attention(*at23.graph, "Attention");
    EXPECT_EQ(n.attribute(Symbol("q_num_heads"))->i, 4);
    EXPECT_EQ(n.attribute(Symbol("kv_num_heads"))->i, 2);
    EXPECT_EQ(n.attribute(Symbol("is_causal"))->i, 1);
    EXPECT_EQ(n.inputs.size(), 3u);
    EXPECT_EQ(nodes_of_type(*at23.graph, "Expand"), 0);
    EXPECT_EQ(nodes_of_type(*at23.graph, "RotaryEmbedding"), 2);
    // The evaluator's grouped Attention gives torch's logits.
    const std::vector<Tensor> logits = eval::Evaluator(at23).run({{"input_ids", ids}});
    ASSERT_EQ(logits.at(0).size(), static_cast<int64_t>(expected.size()));
    for (std::size_t k = 0; k < expected.size(); ++k)
      ASSERT_NEAR(logits[0].data<float>()[k], expected[k], 1e-5) << k;
    const Model below = optimized_checked("llama_gqa_L1", file, 0, kOurModels);
    EXPECT_EQ(nodes_of_type(*below.graph, "MultiHeadAttention"), 0);
    const Node& gqa = only_attention(*below.graph, "GroupQueryAttention");
    EXPECT_EQ(gqa.attribute(Symbol("num_heads"))->i, 4);
    EXPECT_EQ(gqa.attribute(Symbol("kv_num_heads"))->i, 2);
    EXPECT_EQ(gqa.inputs.size(), 7u);
    // The keys are the rotary's 3-D output and the values the projection's, read before any repeat.
    EXPECT_EQ(below.graph->node(below.graph->value(gqa.inputs[1]).producer).op_type, Symbol("RotaryEmbedding"));
    EXPECT_EQ(below.graph->node(below.graph->value(gqa.inputs[2]).producer).op_type, Symbol("Split"));
    EXPECT_EQ(nodes_of_type(*below.graph, "RotaryEmbedding"), 2);
    for (const char* gone : {"Unsqueeze", "Reshape", "Transpose", "Where", "Slice"})
      EXPECT_EQ(nodes_of_type(*below.graph, gone), 0) << gone;
    // The lengths fold for the static export; the dynamic one computes them from the query's shape.
    const bool dynamic = std::string(file).find("dyn") != std::string::npos;
    EXPECT_EQ(rewrite::constant_tensor(*below.graph, gqa.inputs[5]) != nullptr, !dynamic);
    EXPECT_EQ(nodes_of_type(*below.graph, "Shape"), dynamic ? 1 : 0);
    const std::vector<Tensor> below_logits = eval::Evaluator(below).run({{"input_ids", ids}});
    for (std::size_t k = 0; k < expected.size(); ++k)
      ASSERT_NEAR(below_logits[0].data<float>()[k], expected[k], 1e-5) << k;
    for (const Model* m : {&at23, &below}) {
      EXPECT_EQ(nodes_of_type(*m->graph, "Softmax"), 0);
      EXPECT_EQ(nodes_of_type(*m->graph, "Neg"), 0);
    }
    if (dynamic) {
      // Other batch and sequence sizes: the lengths follow (ONNX Runtime and the evaluator, before and after).
      const std::vector<int64_t> short_ids{5, 17, 3, 99, 250, 8, 1, 42, 7, 600, 11, 2, 90, 64, 31};
      test::expect_outputs_of_file((kOurModels / file).string(), below,
                                   {{"input_ids", Tensor::from<int64_t>({3, 5}, short_ids)}}, 1e-5);
    }
  }
}

namespace {
Tensor vit_image() {
  return Tensor::from<float>({2, 3, 32, 32},
                             xexp::testing::read_file<std::vector<float>>(kOurModels / "vit_L2.image.bin"));
}
// The ViT export `file` optimized with `options`: its two attentions are `op_type` nodes, each reading the
// three outputs of one Split as 3-D values, with q's factor in its scale; no Squeeze, Softmax or 5-D value
// is left.
Model optimized_vit(const char* file, const char* op_type, const optimizer::OptimizeModelOptions& options) {
  Model model = load_model((kOurModels / file).string());
  optimizer::optimize_model(model, options);
  const Graph& g = *model.graph;
  EXPECT_EQ(nodes_of_type(g, op_type), 2);
  for (NodeId id : g.nodes()) {
    const Node& n = g.node(id);
    if (n.op_type != Symbol(op_type)) continue;
    EXPECT_EQ(n.attribute(Symbol("scale"))->f, 0.25f);  // head_size 16 ** -0.5, was q's Mul
    const NodeId split = g.value(n.inputs[0]).producer;
    if (split == kNone || g.node(split).op_type != Symbol("Split")) {
      ADD_FAILURE() << n.name << " does not read a Split";
      continue;
    }
    for (uint32_t k = 0; k < 3; ++k) {
      EXPECT_EQ(n.inputs[k], g.node(split).outputs[k]) << k;
      EXPECT_EQ(g.value(n.inputs[k]).shape->size(), 3u) << k;  // (batch, tokens, hidden)
    }
  }
  for (const char* gone : {"Squeeze", "Softmax"}) EXPECT_EQ(nodes_of_type(g, gone), 0) << gone;
  for (NodeId id : g.nodes()) EXPECT_LT(g.value(g.node(id).outputs[0]).shape->size(), 5u) << g.node(id).name;
  return model;
}
}  // namespace

// ViT as timm writes its attention (tests/data/models/make_vit.py): one projection reshaped to (batch,
// tokens, 3, heads, head_size), permuted and unbound into q, k and v, q scaled before its scores. Each
// attention becomes one MultiHeadAttention reading the three thirds of the projection, split on its last
// axis (MultiHeadAttentionPackedQkv), the scale of q in its `scale` (MultiHeadAttentionScaledQuery), the
// projection's bias as its bias (MultiHeadAttentionBias). The bias of each linear layer before a residual
// sum goes into the SkipLayerNormalization after it (SkipLayerNormalizationBias, in the opt-in
// onnxruntime_gpu set): those layers, and the projection, stay MatMuls.
TEST(PatternMultiHeadAttentionModels, VisionTransformerAttentionReadsThePackedProjection) {
  const std::vector<float> expected =
      xexp::testing::read_file<std::vector<float>>(kOurModels / "vit_L2.expected.bin");
  for (const char* file : {"vit_L2.fold.onnx", "vit_L2.op14dyn.onnx"}) {
    SCOPED_TRACE(file);
    Model model = optimized_vit(file, "MultiHeadAttention", {.patterns = kAll});
    const Graph& g = *model.graph;
    for (NodeId id : g.nodes()) {
      const Node& n = g.node(id);
      if (n.op_type == Symbol("SkipLayerNormalization")) {
        EXPECT_EQ(n.inputs.size(), 5u) << n.name;
      }
      if (n.op_type != Symbol("MultiHeadAttention")) continue;
      EXPECT_EQ(n.attribute(Symbol("num_heads"))->i, 4);
      const ValueId projection = g.node(g.value(n.inputs[0]).producer).inputs[0];
      ASSERT_NE(g.value(projection).producer, kNone);
      EXPECT_EQ(g.node(g.value(projection).producer).op_type, Symbol("MatMul"));
      ASSERT_EQ(n.inputs.size(), 4u);
      EXPECT_EQ(g.value(n.inputs[3]).shape, (Shape{192}));  // the packed bias, 3 x 64
    }
    EXPECT_EQ(nodes_of_type(g, "Gemm"), 1);  // the head, on the class token
    EXPECT_EQ(nodes_of_type(g, "Mul"), 0);
    // ONNX Runtime 1.30 'extended' leaves 63 nodes of the static export and 92 of the dynamic one.
    EXPECT_EQ(op_types(g).size(), std::string(file) == "vit_L2.fold.onnx" ? 26u : 32u);
    const test::OutputsAfter after =
        test::expect_outputs_of_file((kOurModels / file).string(), model, {{"image", vit_image()}}, 1e-5);
    // Torch's logits, through both runtimes.
    for (const xexp::testing::NamedTensors* outputs : {&after.evaluator, &after.onnxruntime}) {
      ASSERT_EQ(outputs->size(), 1u);
      const Tensor& logits = outputs->at(0).second;
      ASSERT_EQ(logits.size(), static_cast<int64_t>(expected.size()));
      for (std::size_t k = 0; k < expected.size(); ++k)
        EXPECT_NEAR(logits.data<float>()[k], expected[k], 1e-4) << k;
    }
  }
}

// The same exports for opset 23 with the default set: ONNX's Attention, in its 3-D form, reads the three
// thirds of the projection (AttentionPackedQkv), the scale of q in its `scale` (AttentionScaledQuery).
// The MLPs' erf Gelus become ONNX's Gelu (opset 20), their linear layers MatMulAdd's Reshape, Gemm,
// Reshape: ONNX's Attention has no bias input to take the projections'.
TEST(PatternMultiHeadAttentionModels, VisionTransformerAtOpset23ReadsThePackedProjection) {
  for (const char* file : {"vit_L2.fold.onnx", "vit_L2.op14dyn.onnx"}) {
    SCOPED_TRACE(file);
    Model model = optimized_vit(file, "Attention", {.patterns = "default", .target_opset = 23});
    EXPECT_EQ(nodes_of_type(*model.graph, "Gelu"), 2);
    EXPECT_EQ(op_types(*model.graph).size(), std::string(file) == "vit_L2.fold.onnx" ? 42u : 44u);
    test::expect_outputs_of_file((kOurModels / file).string(), model, {{"image", vit_image()}}, 1e-5);
  }
}

// ---- the analyses the attention rules read (patterns/analysis/), on the graphs above ----------------------
namespace {
namespace analysis = xexp::patterns::analysis;
using rewrite::ValueView;

// The value the mask node `op` (the first Add or Where) gives, and the scores (Div's output) it reads.
struct Masked {
  ValueView masked, scores;
};
Masked masked_scores(const Graph& g, const char* op) {
  return {{&g, test::only_node(g, op).outputs[0]}, {&g, test::only_node(g, "Div").outputs[0]}};
}
}  // namespace

TEST(AttentionMasksAnalysis, AConstantCausalWhereIsABiasHidingTheLaterKeys) {
  for (Mask mask : {Mask::WhereScoresFirst, Mask::WhereFillFirst}) {
    const Model m = attention({.mask = mask});
    const Masked w = masked_scores(*m.graph, "Where");
    const std::optional<Tensor> bias = analysis::folded_bias(w.masked, w.scores);
    ASSERT_TRUE(bias.has_value());
    EXPECT_EQ(bias->dims(), (std::vector<int64_t>{1, 1, kSeq, kSeq}));
    EXPECT_TRUE(analysis::hides_later_keys(*bias));
  }
  const Model window = attention({.mask = Mask::WhereScoresFirst, .window = true});
  const Masked w = masked_scores(*window.graph, "Where");
  ASSERT_TRUE(analysis::folded_bias(w.masked, w.scores).has_value());
  EXPECT_FALSE(analysis::hides_later_keys(*analysis::folded_bias(w.masked, w.scores)));
}

TEST(AttentionMasksAnalysis, NoBiasForARowHiddenWholeAFillAboveMinus1e4OrAMaskOfTheInputs) {
  for (const Attention& c : {Attention{.mask = Mask::WhereScoresFirst, .mask_a_whole_row = true},
                             Attention{.mask = Mask::WhereScoresFirst, .fill = -100.f}}) {
    const Model m = attention(c);
    const Masked w = masked_scores(*m.graph, "Where");
    EXPECT_FALSE(analysis::folded_bias(w.masked, w.scores).has_value());
  }
  const Model m = attention({.mask = Mask::AddInput});
  const Masked a = masked_scores(*m.graph, "Add");
  EXPECT_FALSE(analysis::folded_bias(a.masked, a.scores).has_value());
}

TEST(AttentionMasksAnalysis, AMaskCutAtRunTimeGivesItsTable) {
  for (Mask mask : {Mask::WhereCutScoresFirst, Mask::WhereCutFillFirst, Mask::AddCut}) {
    const Model m = attention({.mask = mask});
    const bool added = mask == Mask::AddCut;
    const Masked w = masked_scores(*m.graph, added ? "Add" : "Where");
    const std::optional<Tensor> table = analysis::runtime_mask_table(w.masked, w.scores);
    ASSERT_TRUE(table.has_value());
    EXPECT_EQ(table->dims().back(), kTable);
    EXPECT_TRUE(analysis::cut_hides_later_keys(*table, added, mask != Mask::WhereCutFillFirst));
    if (!added) {  // read with the other polarity, the table hides the earlier keys
      EXPECT_FALSE(analysis::cut_hides_later_keys(*table, false, mask == Mask::WhereCutFillFirst));
    }
  }
  // A triangle of the sequence length is read as the same Trilu of |k| + 2 rows.
  for (int64_t diagonal : {1, 2}) {
    const Model m =
        attention({.mask = Mask::AddComputed, .triangle_at_run_time = true, .diagonal = diagonal});
    const Masked a = masked_scores(*m.graph, "Add");
    const std::optional<Tensor> table = analysis::runtime_mask_table(a.masked, a.scores);
    ASSERT_TRUE(table.has_value());
    EXPECT_EQ(table->dims(),
              (std::vector<int64_t>{diagonal + 2, diagonal + 2}));  // the Unsqueeze is read through
    EXPECT_EQ(analysis::cut_hides_later_keys(*table, true, true), diagonal == 1);
  }
  const Model at_batch = attention({.mask = Mask::WhereCutScoresFirst, .cut_at_batch = true});
  const Masked w = masked_scores(*at_batch.graph, "Where");
  EXPECT_FALSE(analysis::runtime_mask_table(w.masked, w.scores).has_value());  // not cut at the sequence
}

TEST(AttentionMasksAnalysis, APaddingMaskHasOneRowForAllQueries) {
  const Model m = attention({.mask = Mask::AddPadding});
  const Masked a = masked_scores(*m.graph, "Add");
  EXPECT_TRUE(analysis::one_row_for_all_queries({m.graph.get(), *m.graph->find("M")}, a.scores));
  EXPECT_FALSE(analysis::one_row_for_all_queries(a.scores, a.scores));
}

TEST(RepeatedHeadsAnalysis, KeysRepeatedAsRepeatKvWritesThemGiveTheirHeadsBeforeTheRepeat) {
  const Model m = attention({.kv_heads = 1});
  const Graph& g = *m.graph;
  const ValueId expanded = test::only_node(g, "Expand").outputs[0];
  for (NodeId id : g.nodes()) {
    const Node& n = g.node(id);
    if (n.op_type != Symbol("Reshape") || n.inputs[0] != expanded) continue;
    const std::optional<analysis::RepeatedHeads> r = analysis::repeated_heads(g, n.outputs[0]);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->kv_heads, 1);
    EXPECT_FALSE(r->three_d);
    EXPECT_EQ(r->source, test::only_node(g, "Unsqueeze").inputs[0]);
  }
  EXPECT_FALSE(analysis::repeated_heads(g, test::only_node(g, "Softmax").outputs[0]).has_value());
}

TEST(SafeSoftmaxAnalysis, ReadsThroughWhereIsNaNOfTheSoftmaxToZero) {
  const Model m = attention({.safe_softmax = true});
  const Graph& g = *m.graph;
  const rewrite::Skipped guard = analysis::safe_softmax_guard(g, test::only_node(g, "Where").outputs[0]);
  EXPECT_EQ(guard.inner, test::only_node(g, "Softmax").outputs[0]);
  const Model other_fill = attention({.safe_softmax = true, .safe_fill = 1.f});
  EXPECT_EQ(analysis::safe_softmax_guard(*other_fill.graph, test::only_node(*other_fill.graph, "Where").outputs[0]).inner,
            kNone);
}
