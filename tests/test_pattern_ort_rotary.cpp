// onnxruntime set, rotary embeddings: ContribRotaryEmbedding (X * cos + Concat(-X2, X1) * sin becomes
// com.microsoft RotaryEmbedding) and ContribRotaryEmbedding3D (the rotation moved before the Reshape +
// Transpose that split the heads); the default set's RotaryEmbedding (ONNX's op, opset 23), the same
// match. Exact structure after the rewrite for each spelling (Slice or Split
// halves, constant cos/sin, cos/sin gathered from a table by position ids), the near misses that must not
// fire, the same outputs in xexp's evaluator and ONNX Runtime, and `xexp optimize` on the Llama exports.
// At the end the default set's RotaryConcatPart: rotate_half's padded or scattered halves become one Concat.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/rewrite_helpers.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/onnx.hpp"
#include "xexp/optimizer/optimize_model.hpp"
#include "xexp/patterns/analysis/rotary_cache.hpp"

using namespace xexp;
using namespace xexp::ir;
using test::node;
using test::only_node;
using test::op_types;
using test::OpList;
using test::producer;
using test::run_rules;

namespace {

const std::string kRotaryRules = "ContribRotaryEmbedding,ContribRotaryEmbedding3D";

enum class Halves { Slices, Split };
// GatheredForAllBatches: position ids of shape (1, seq), read by every batch. CutToSequence: a dynamic
// export of cos_cached[:seq], Unsqueeze(Slice(table, 0, seq, axes=[0]), [0, 1]) with seq read from X's
// shape at run time (X's seq is then the symbol "seq").
enum class CosSin {
  Constant,
  ConstantPerBatch,
  Gathered,
  GatheredFromSlicedTable,
  GatheredForAllBatches,
  Computed,
  ComputedBroadcast,
  CutToSequence
};

struct RotaryCase {
  Halves halves = Halves::Slices;
  CosSin cos_sin = CosSin::Constant;
  bool from_3d = false;          // X = Transpose(Reshape(x3d, (batch, seq, heads, head)), 0, 2, 1, 3)
  int64_t head = 8;
  bool unequal_cos_halves = false;
  bool swapped_without_neg = false;  // Concat(X2, X1): no Neg
  bool neg_on_first_half = false;    // Concat(-X1, X2): the other rotation
  bool split_sizes_at_run_time = false;  // the Split's sizes are a model input, not a constant
  // Gathered caches in a dynamic export: X's seq is symbolic and the position ids are
  // Expand(Unsqueeze(Range(counted_from, seq, 1), 0), (batch, seq)) computed from X's shape.
  std::optional<int64_t> counted_from = std::nullopt;
  bool dynamic_batch = false;  // x3d and the Computed angles have the symbolic batch "batch" (Phi-3's)
  int64_t opset = 18;
};
constexpr int64_t kBatch = 2, kHeads = 3, kSeq = 5, kTableRows = 12;

// Angles for (rows, head / 2) frequencies, repeated on both halves of the last axis as rotate-half
// models do; `unequal` perturbs the second half.
Tensor angle_table(int64_t rows, int64_t head, bool is_sin, bool unequal) {
  std::vector<float> v;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < head; ++k) {
      const float angle = 0.3f * static_cast<float>(r + 1) / static_cast<float>(1 + k % (head / 2));
      const float extra = unequal && k >= head / 2 ? 0.25f : 0.f;
      v.push_back((is_sin ? std::sin(angle) : std::cos(angle)) + extra);
    }
  return Tensor::from<float>({rows, head}, v);
}

ir::ValueId cos_or_sin(ir::Graph& g, const RotaryCase& c, bool is_sin, ir::ValueId positions) {
  const std::string name = is_sin ? "sin" : "cos";
  const bool unequal = c.unequal_cos_halves && !is_sin;
  switch (c.cos_sin) {
    case CosSin::Constant:
      return g.add_initializer(name, angle_table(kSeq, c.head, is_sin, unequal).reshaped({1, 1, kSeq, c.head}));
    case CosSin::ConstantPerBatch:  // the second batch reads rows kSeq to 2 kSeq - 1
      return g.add_initializer(name, angle_table(kBatch * kSeq, c.head, is_sin, unequal)
                                         .reshaped({kBatch, 1, kSeq, c.head}));
    case CosSin::Gathered:
    case CosSin::GatheredFromSlicedTable:
    case CosSin::GatheredForAllBatches: {
      ir::ValueId table = g.add_initializer(name + "_table", angle_table(kTableRows, c.head, is_sin, unequal));
      if (c.cos_sin == CosSin::GatheredFromSlicedTable)
        table = node(g, "Slice", {table, test::int64_initializer(g, name + "_start", {0}),
                                  test::int64_initializer(g, name + "_end", {10}),
                                  test::int64_initializer(g, name + "_axis", {0})});
      const ir::ValueId rows = node(g, "Gather", {table, positions});
      return node(g, "Unsqueeze", {rows, test::int64_initializer(g, name + "_heads_axis", {1})});
    }
    case CosSin::CutToSequence: {
      const ir::ValueId shape = node(g, "Shape", {*g.find("X")});
      const ir::ValueId seq = node(g, "Slice", {shape, test::int64_initializer(g, name + "_two", {2}),
                                                test::int64_initializer(g, name + "_three", {3})});
      const ir::ValueId zero = test::int64_initializer(g, name + "_zero", {0});
      const ir::ValueId table =
          g.add_initializer(name + "_table", angle_table(kTableRows, c.head, is_sin, unequal));
      const ir::ValueId rows = node(g, "Slice", {table, zero, seq, zero});
      return node(g, "Unsqueeze", {rows, test::int64_initializer(g, name + "_axes", {0, 1})});
    }
    case CosSin::Computed: {  // Unsqueeze(Cos(Concat(angles, angles)) * scale) as newer Llama code writes it
      const std::optional<ir::ValueId> found = g.find("angles");
      const ir::ValueId angles =
          found ? *found
                : g.add_input("angles", ElemType::Float,
                              Shape{c.dynamic_batch ? Dim::symbolic("batch") : Dim(1), kSeq, c.head / 2});
      const ir::ValueId both = node(g, "Concat", {angles, angles}, {ir::Attribute::make_int(Symbol("axis"), -1)});
      const ir::ValueId scaled = node(g, "Mul", {node(g, is_sin ? "Sin" : "Cos", {both}),
                                                 g.add_initializer(name + "_scale", Tensor::from<float>({}, {1.25f}))});
      return node(g, "Unsqueeze", {scaled, test::int64_initializer(g, name + "_heads_axis", {1})});
    }
    // Cos(Concat(angles, angles)) of (seq, head), as emb.cos() in older Llama code.
    case CosSin::ComputedBroadcast: {
      const std::optional<ir::ValueId> found = g.find("angles");
      const ir::ValueId angles =
          found ? *found : g.add_input("angles", ElemType::Float, Shape{kSeq, c.head / 2});
      const ir::ValueId both =
          node(g, "Concat", {angles, angles}, {ir::Attribute::make_int(Symbol("axis"), -1)});
      return node(g, is_sin ? "Sin" : "Cos", {both});
    }
  }
  return ir::kNone;
}

ir::Model rotary_model(const RotaryCase& c) {
  ir::Model m = test::model_with_opset(c.opset);
  ir::Graph& g = *m.graph;
  ir::ValueId x;
  if (c.from_3d) {
    const ir::ValueId x3d = g.add_input(
        "x3d", ElemType::Float, Shape{c.dynamic_batch ? Dim::symbolic("batch") : Dim(kBatch), kSeq, kHeads * c.head});
    const ir::ValueId split = node(g, "Reshape", {x3d, test::int64_initializer(g, "heads", {0, 0, kHeads, c.head})});
    x = node(g, "Transpose", {split}, {ir::Attribute::make_ints(Symbol("perm"), {0, 2, 1, 3})});
  } else {
    const bool dynamic_seq = c.counted_from || c.cos_sin == CosSin::CutToSequence;
    x = g.add_input("X", ElemType::Float,
                    Shape{kBatch, kHeads, dynamic_seq ? Dim::symbolic("seq") : Dim(kSeq), c.head});
  }
  const bool gathered = c.cos_sin == CosSin::Gathered || c.cos_sin == CosSin::GatheredFromSlicedTable ||
                        c.cos_sin == CosSin::GatheredForAllBatches;
  const int64_t positions_batch = c.cos_sin == CosSin::GatheredForAllBatches ? 1 : kBatch;
  ir::ValueId positions =
      gathered && !c.counted_from ? g.add_input("positions", ElemType::Int64, Shape{positions_batch, kSeq}) : ir::kNone;
  if (c.counted_from) {
    const ir::ValueId shape = node(g, "Shape", {x});
    const ir::ValueId axis0 = test::int64_initializer(g, "axis0", {0});
    const ir::ValueId seq = node(g, "Gather", {shape, g.add_initializer("seq_axis", Tensor::scalar<int64_t>(2))});
    const ir::ValueId counted = node(g, "Range", {g.add_initializer("start", Tensor::scalar<int64_t>(*c.counted_from)), seq,
                                                  g.add_initializer("step", Tensor::scalar<int64_t>(1))});
    const ir::ValueId batch_and_seq =
        node(g, "Concat", {node(g, "Slice", {shape, axis0, test::int64_initializer(g, "one", {1})}),
                           node(g, "Unsqueeze", {seq, axis0})},
             {ir::Attribute::make_int(Symbol("axis"), 0)});
    positions = node(g, "Expand", {node(g, "Unsqueeze", {counted, axis0}), batch_and_seq});
  }
  const int64_t half = c.head / 2;
  ir::ValueId first, second;
  if (c.halves == Halves::Slices) {
    const ir::ValueId axis = test::int64_initializer(g, "last", {-1});
    first = node(g, "Slice", {x, test::int64_initializer(g, "zero", {0}), test::int64_initializer(g, "half", {half}), axis});
    second = node(g, "Slice", {x, test::int64_initializer(g, "half_start", {half}),
                               test::int64_initializer(g, "end", {std::numeric_limits<int64_t>::max()}), axis});
  } else {
    first = g.add_value("first");
    second = g.add_value("second");
    const ir::ValueId sizes = c.split_sizes_at_run_time ? g.add_input("sizes", ElemType::Int64, Shape{2})
                                                        : test::int64_initializer(g, "sizes", {half, c.head - half});
    const ir::NodeId split = g.add_node(Symbol("Split"), {x, sizes},
                                        {first, second}, {ir::Attribute::make_int(Symbol("axis"), 3)}, "split");
    infer::infer_node(g, split, 18);
  }
  ir::ValueId rotated;
  const ir::Attribute last_axis = ir::Attribute::make_int(Symbol("axis"), -1);
  if (c.swapped_without_neg)
    rotated = node(g, "Concat", {second, first}, {last_axis});
  else if (c.neg_on_first_half)
    rotated = node(g, "Concat", {node(g, "Neg", {first}), second}, {last_axis});
  else
    rotated = node(g, "Concat", {node(g, "Neg", {second}), first}, {last_axis});
  const ir::ValueId cos = cos_or_sin(g, c, false, positions), sin = cos_or_sin(g, c, true, positions);
  g.add_output(node(g, "Add", {node(g, "Mul", {x, cos}), node(g, "Mul", {rotated, sin})}));
  return m;
}

const Tensor& constant_input(const ir::Graph& g, const ir::Node& n, std::size_t slot) {
  const Tensor* t = rewrite::constant_tensor(g, n.inputs.at(slot));
  if (!t) throw Error("input " + std::to_string(slot) + " of " + n.name + " is not a constant");
  return *t;
}

// Fuses the case, checks the op sequence, the caches (first halves of the table rows) and the outputs.
ir::Model expect_fused(const RotaryCase& c, const OpList& expected) {
  ir::Model m = rotary_model(c);
  run_rules(m, kRotaryRules);
  EXPECT_EQ(op_types(*m.graph), expected);
  EXPECT_EQ(m.opset("com.microsoft"), 1);
  const ir::Node& rotary = only_node(*m.graph, "RotaryEmbedding");
  const Tensor& cos_cache = constant_input(*m.graph, rotary, 2);
  EXPECT_EQ(cos_cache.dims()[1], c.head / 2);
  const Tensor table = angle_table(cos_cache.dims()[0], c.head, false, false);
  for (int64_t r = 0; r < cos_cache.dims()[0]; ++r)
    EXPECT_EQ(cos_cache.data<float>()[r * (c.head / 2)], table.data<float>()[r * c.head]) << "row " << r;
  // RotaryEmbedding rounds as the decomposition does, but its products are not fused the same way.
  test::expect_same_outputs([&] { return rotary_model(c); }, kRotaryRules, 1e-6);
  return m;
}

}  // namespace

TEST(PatternOrtRotary, SliceHalvesConstantCachesBecomeRotaryEmbeddingAtOffsetZero) {
  const ir::Model m = expect_fused({}, {"com.microsoft.RotaryEmbedding"});
  const ir::Node& rotary = only_node(*m.graph, "RotaryEmbedding");
  EXPECT_EQ(rotary.inputs[0], m.graph->inputs()[0]);
  const Tensor& positions = constant_input(*m.graph, rotary, 1);
  EXPECT_EQ(positions.dims(), (std::vector<int64_t>{1}));
  EXPECT_EQ(positions.data<int64_t>()[0], 0);
  EXPECT_EQ(constant_input(*m.graph, rotary, 2).dims(), (std::vector<int64_t>{kSeq, 4}));
  EXPECT_EQ(rotary.attribute(Symbol("interleaved"))->i, 0);
}

TEST(PatternOrtRotary, SplitHalvesOfAThreeDInputRotateBeforeTheHeadsSplit) {
  const ir::Model m = expect_fused({.halves = Halves::Split, .from_3d = true},
                                   {"com.microsoft.RotaryEmbedding", "Reshape", "Transpose"});
  const ir::Node& rotary = only_node(*m.graph, "RotaryEmbedding");
  EXPECT_EQ(rotary.inputs[0], m.graph->inputs()[0]);  // the (batch, seq, hidden) input itself
  EXPECT_EQ(rotary.attribute(Symbol("num_heads"))->i, kHeads);
  EXPECT_EQ(only_node(*m.graph, "Transpose").attribute(Symbol("perm"))->ints, (std::vector<int64_t>{0, 2, 1, 3}));
}

TEST(PatternOrtRotary, CachesGatheredByPositionIdsKeepThePositionIds) {
  for (CosSin cos_sin : {CosSin::Gathered, CosSin::GatheredFromSlicedTable}) {
    const ir::Model m = expect_fused({.cos_sin = cos_sin}, {"com.microsoft.RotaryEmbedding"});
    const ir::Node& rotary = only_node(*m.graph, "RotaryEmbedding");
    EXPECT_EQ(m.graph->value(rotary.inputs[1]).name, "positions");
    // The whole table: slicing rows [0, 10) first changes no gathered row.
    EXPECT_EQ(constant_input(*m.graph, rotary, 2).dims(), (std::vector<int64_t>{kTableRows, 4}));
  }
}

TEST(PatternOrtRotary, PositionIdsSharedByTheBatchAreExpandedToIt) {
  const ir::Model m = expect_fused({.cos_sin = CosSin::GatheredForAllBatches}, {"Expand", "com.microsoft.RotaryEmbedding"});
  const ir::Node& expand = only_node(*m.graph, "Expand");
  EXPECT_EQ(m.graph->value(expand.inputs[0]).name, "positions");
  EXPECT_EQ(m.graph->value(expand.outputs[0]).shape, (Shape{kBatch, kSeq}));
}

TEST(PatternOrtRotary, ConstantCachesDifferingByBatchGetOneRowPerPosition) {
  const ir::Model m = expect_fused({.cos_sin = CosSin::ConstantPerBatch}, {"com.microsoft.RotaryEmbedding"});
  const ir::Node& rotary = only_node(*m.graph, "RotaryEmbedding");
  const Tensor& positions = constant_input(*m.graph, rotary, 1);
  EXPECT_EQ(positions.dims(), (std::vector<int64_t>{kBatch, kSeq}));
  EXPECT_EQ(positions.data<int64_t>()[kSeq + 1], kSeq + 1);
  EXPECT_EQ(constant_input(*m.graph, rotary, 2).dims(), (std::vector<int64_t>{kBatch * kSeq, 4}));
}

TEST(PatternOrtRotary, ComputedCachesBecomeCosAndSinOfTheAnglesAsRows) {
  ir::Model m = rotary_model({.cos_sin = CosSin::Computed, .from_3d = true});
  run_rules(m, kRotaryRules);
  OpList ops = op_types(*m.graph);
  std::sort(ops.begin(), ops.end());
  EXPECT_EQ(ops, (OpList{"Cos", "Mul", "Mul", "Reshape", "Reshape", "Reshape", "Sin", "Transpose",
                         "com.microsoft.RotaryEmbedding"}));
  const ir::Node& rotary = only_node(*m.graph, "RotaryEmbedding");
  EXPECT_EQ(constant_input(*m.graph, rotary, 1).dims(), (std::vector<int64_t>{1}));  // offset 0
  EXPECT_EQ(m.graph->value(rotary.inputs[2]).shape, (Shape{kSeq, 4}));
  test::expect_same_outputs([] { return rotary_model({.cos_sin = CosSin::Computed, .from_3d = true}); }, kRotaryRules,
                            1e-6);
}

// cos = Cos(Concat(angles, angles)) of (seq, head), broadcast over the batch and heads by the Mul: the
// caches are Cos and Sin of the angles as they are, rows read from offset 0.
TEST(PatternOrtRotary, ComputedCachesBroadcastOverBatchAndHeads) {
  ir::Model m = rotary_model({.cos_sin = CosSin::ComputedBroadcast});
  run_rules(m, kRotaryRules);
  OpList ops = op_types(*m.graph);
  std::sort(ops.begin(), ops.end());
  EXPECT_EQ(ops, (OpList{"Cos", "Sin", "com.microsoft.RotaryEmbedding"}));
  const ir::Node& rotary = only_node(*m.graph, "RotaryEmbedding");
  EXPECT_EQ(constant_input(*m.graph, rotary, 1).dims(), (std::vector<int64_t>{1}));  // offset 0
  const ir::Node& cos_cache = m.graph->node(m.graph->value(rotary.inputs[2]).producer);
  EXPECT_EQ(cos_cache.op_type, Symbol("Cos"));
  EXPECT_EQ(cos_cache.inputs[0], *m.graph->find("angles"));
  EXPECT_EQ(m.graph->value(rotary.inputs[3]).shape, (Shape{kSeq, 4}));
  test::expect_same_outputs([] { return rotary_model({.cos_sin = CosSin::ComputedBroadcast}); }, kRotaryRules,
                            1e-6);
}

// Angles of a dynamic batch (Phi-3's, computed from its position ids): one cache row per (batch, position),
// the position ids 0 .. batch * seq - 1 counted when the model runs.
TEST(PatternOrtRotary, ComputedCachesOfADynamicBatchGetRowsCountedAtRunTime) {
  const RotaryCase c{.cos_sin = CosSin::Computed, .from_3d = true, .dynamic_batch = true};
  ir::Model m = rotary_model(c);
  run_rules(m, kRotaryRules);
  OpList ops = op_types(*m.graph);
  std::sort(ops.begin(), ops.end());
  EXPECT_EQ(ops, (OpList{"Cos", "Mul", "Mul", "Range", "ReduceProd", "Reshape", "Reshape", "Reshape", "Reshape",
                         "Shape", "Sin", "Transpose", "com.microsoft.RotaryEmbedding"}));
  const ir::Graph& g = *m.graph;
  const ir::Node& rotary = only_node(g, "RotaryEmbedding");
  const ir::Node& positions = g.node(g.value(rotary.inputs[1]).producer);
  ASSERT_EQ(positions.op_type, Symbol("Reshape"));  // Reshape(Range(0, batch * seq), (batch, seq))
  EXPECT_EQ(g.node(g.value(positions.inputs[0]).producer).op_type, Symbol("Range"));
  test::expect_same_outputs([c] { return rotary_model(c); }, kRotaryRules, 1e-6,
                            {.seed = 7, .symbols = {{"batch", kBatch}}});
}

// What `xexp optimize --patterns <the rotary rules>` does: types inferred first, as on a loaded model.
ir::Model counted_positions_model(int64_t from) {
  ir::Model m = rotary_model({.cos_sin = CosSin::Gathered, .counted_from = from});
  infer::infer_model_types(m);
  return m;
}

TEST(PatternOrtRotary, PositionIdsCountingFromZeroBecomeTheOffsetZero) {
  ir::Model m = counted_positions_model(0);
  run_rules(m, kRotaryRules);
  EXPECT_EQ(op_types(*m.graph), (OpList{"com.microsoft.RotaryEmbedding"}));  // the shape chain went with them
  const Tensor& positions = constant_input(*m.graph, only_node(*m.graph, "RotaryEmbedding"), 1);
  EXPECT_EQ(positions.dims(), (std::vector<int64_t>{1}));
  EXPECT_EQ(positions.data<int64_t>()[0], 0);
  test::expect_same_outputs([] { return counted_positions_model(0); }, kRotaryRules, 1e-6,
                            {.seed = 7, .symbols = {{"seq", kSeq}}});
}

// The table cut at run time to the sequence length: the whole table is the cache, read from offset 0.
// ONNX's RotaryEmbedding (opset 23) has no offset form: with both sets it declines when matching, so that
// com.microsoft's is written.
TEST(PatternOrtRotary, CachesCutToTheSequenceAtRunTimeAreReadFromOffsetZero) {
  auto cut = [](int64_t opset) {
    ir::Model m = rotary_model({.cos_sin = CosSin::CutToSequence, .opset = opset});
    infer::infer_model_types(m);
    return m;
  };
  ir::Model m = cut(18);
  run_rules(m, kRotaryRules);
  EXPECT_EQ(op_types(*m.graph), (OpList{"com.microsoft.RotaryEmbedding"}));  // the cut went with them
  const ir::Node& rotary = only_node(*m.graph, "RotaryEmbedding");
  EXPECT_EQ(constant_input(*m.graph, rotary, 1).dims(), (std::vector<int64_t>{1}));
  EXPECT_EQ(constant_input(*m.graph, rotary, 1).data<int64_t>()[0], 0);
  EXPECT_EQ(constant_input(*m.graph, rotary, 2).dims(), (std::vector<int64_t>{kTableRows, 4}));
  test::expect_same_outputs([&] { return cut(18); }, kRotaryRules, 1e-6, {.seed = 7, .symbols = {{"seq", kSeq}}});
  ir::Model at23 = cut(23);
  run_rules(at23, "default+onnxruntime");
  EXPECT_EQ(op_types(*at23.graph), (OpList{"com.microsoft.RotaryEmbedding"}));
}

TEST(PatternOrtRotary, PositionIdsCountingFromOneStayPositionIds) {
  ir::Model m = counted_positions_model(1);
  run_rules(m, kRotaryRules);
  const ir::Node& rotary = only_node(*m.graph, "RotaryEmbedding");
  EXPECT_EQ(m.graph->node(m.graph->value(rotary.inputs[1]).producer).op_type, Symbol("Expand"));
}

TEST(PatternOrtRotary, NotWhenItIsNoRotateHalf) {
  const std::vector<std::pair<std::string, RotaryCase>> misses = {
      {"halves swapped without Neg", {.swapped_without_neg = true}},
      {"Neg on the first half", {.neg_on_first_half = true}},
      {"cos halves not equal", {.unequal_cos_halves = true}},
      {"odd head size", {.head = 7}},
      {"odd head size, gathered caches", {.cos_sin = CosSin::Gathered, .head = 7}},
      {"Split sizes known only when the model runs", {.halves = Halves::Split, .split_sizes_at_run_time = true}},
  };
  for (const auto& [what, c] : misses) {
    ir::Model m = rotary_model(c);
    const OpList before = op_types(*m.graph);
    run_rules(m, kRotaryRules);
    EXPECT_EQ(op_types(*m.graph), before) << what;
  }
}

// ---- RotaryEmbedding: ONNX's op (default set, opset >= 23) ------------------------------------------
TEST(PatternOnnxRotary, ConstantCachesBecomeRotaryEmbeddingWithPositionIdsFromRowZero) {
  ir::Model m = rotary_model({.opset = 23});
  run_rules(m, "RotaryEmbedding");
  ASSERT_EQ(op_types(*m.graph), (OpList{"RotaryEmbedding"}));
  const ir::Graph& g = *m.graph;
  const ir::Node& rotary = only_node(g, "RotaryEmbedding");
  ASSERT_EQ(rotary.inputs.size(), 4u);
  EXPECT_EQ(rotary.inputs[0], g.inputs()[0]);
  EXPECT_EQ(constant_input(g, rotary, 1).dims(), (std::vector<int64_t>{kSeq, 4}));
  EXPECT_EQ(constant_input(g, rotary, 2).dims(), (std::vector<int64_t>{kSeq, 4}));
  const Tensor& positions = constant_input(g, rotary, 3);
  EXPECT_EQ(positions.dims(), (std::vector<int64_t>{kBatch, kSeq}));
  EXPECT_EQ(eval::as_int64s(positions), (std::vector<int64_t>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4}));
  EXPECT_EQ(rotary.attribute(Symbol("interleaved"))->i, 0);
  EXPECT_EQ(m.opset("com.microsoft"), std::nullopt);
}

TEST(PatternOnnxRotary, GatheredCachesKeepThePositionIds) {
  ir::Model m = rotary_model({.cos_sin = CosSin::Gathered, .opset = 23});
  run_rules(m, "RotaryEmbedding");
  ASSERT_EQ(op_types(*m.graph), (OpList{"RotaryEmbedding"}));
  const ir::Node& rotary = only_node(*m.graph, "RotaryEmbedding");
  EXPECT_EQ(m.graph->value(rotary.inputs[3]).name, "positions");
  EXPECT_EQ(constant_input(*m.graph, rotary, 1).dims(), (std::vector<int64_t>{kTableRows, 4}));
}

TEST(PatternOnnxRotary, NotBelowOpset23NorForAnotherRotation) {
  for (const RotaryCase& c :
       {RotaryCase{.opset = 22}, RotaryCase{.swapped_without_neg = true, .opset = 23}}) {
    ir::Model m = rotary_model(c);
    const OpList before = op_types(*m.graph);
    run_rules(m, "RotaryEmbedding");
    EXPECT_EQ(op_types(*m.graph), before) << c.opset;
  }
}

TEST(PatternOnnxRotary, ThreeDInputRotatesBeforeTheHeadsSplit) {
  ir::Model m = rotary_model({.halves = Halves::Split, .from_3d = true, .opset = 23});
  run_rules(m, "RotaryEmbedding,RotaryEmbedding3D");
  ASSERT_EQ(op_types(*m.graph), (OpList{"RotaryEmbedding", "Reshape", "Transpose"}));
  const ir::Node& rotary = only_node(*m.graph, "RotaryEmbedding");
  EXPECT_EQ(rotary.inputs[0], m.graph->inputs()[0]);  // the (batch, seq, hidden) input itself
  EXPECT_EQ(rotary.attribute(Symbol("num_heads"))->i, kHeads);
  EXPECT_EQ(constant_input(*m.graph, rotary, 3).dims(), (std::vector<int64_t>{kBatch, kSeq}));
  test::expect_same_outputs(
      [] { return rotary_model({.halves = Halves::Split, .from_3d = true, .opset = 23}); },
      "RotaryEmbedding,RotaryEmbedding3D", 1e-6);
  ir::Model four_d = rotary_model({.halves = Halves::Split, .opset = 23});  // no heads split to move before
  run_rules(four_d, "RotaryEmbedding,RotaryEmbedding3D");
  EXPECT_EQ(op_types(*four_d.graph), (OpList{"RotaryEmbedding"}));
}

// With both sets, as `xexp optimize` runs them: ONNX's op from 23, com.microsoft's below.
TEST(PatternOnnxRotary, DefaultSetWinsOverContribRotaryEmbeddingFrom23) {
  for (int64_t opset : {22, 23}) {
    ir::Model m = rotary_model({.cos_sin = CosSin::Gathered, .opset = opset});
    run_rules(m, "default+onnxruntime");
    EXPECT_EQ(op_types(*m.graph), (OpList{opset >= 23 ? "RotaryEmbedding" : "com.microsoft.RotaryEmbedding"}))
        << opset;
  }
}

TEST(PatternOnnxRotary, SameNumbers) {
  for (const RotaryCase& c :
       {RotaryCase{.opset = 23}, RotaryCase{.cos_sin = CosSin::GatheredForAllBatches, .opset = 23},
        RotaryCase{.cos_sin = CosSin::ConstantPerBatch, .opset = 23},
        RotaryCase{.cos_sin = CosSin::Computed, .from_3d = true, .opset = 23}}) {
    SCOPED_TRACE(static_cast<int>(c.cos_sin));
    test::expect_same_outputs([&] { return rotary_model(c); }, "RotaryEmbedding", 1e-6);
  }
  const RotaryCase dynamic{.cos_sin = CosSin::Computed, .from_3d = true, .dynamic_batch = true, .opset = 23};
  test::expect_same_outputs([&] { return rotary_model(dynamic); }, "RotaryEmbedding", 1e-6,
                            {.seed = 7, .symbols = {{"batch", kBatch}}});
}

// ---- the rotary cache analysis (patterns/analysis/rotary_cache.hpp) on the graphs above ------------------
namespace {
// The cos X is multiplied by: the other input of the Mul reading X.
rewrite::ValueView cos_of(const ir::Graph& g) {
  const ir::ValueId x = *g.find("X");
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    if (n.op_type == Symbol("Mul") && (n.inputs[0] == x || n.inputs[1] == x))
      return {&g, n.inputs[0] == x ? n.inputs[1] : n.inputs[0]};
  }
  return {&g, ir::kNone};
}
}  // namespace

TEST(RotaryCacheAnalysis, EverySpellingOfCosIsReadAsACache) {
  for (CosSin kind : {CosSin::Constant, CosSin::ConstantPerBatch, CosSin::Gathered, CosSin::GatheredFromSlicedTable,
                      CosSin::GatheredForAllBatches, CosSin::Computed, CosSin::ComputedBroadcast,
                      CosSin::CutToSequence}) {
    SCOPED_TRACE(static_cast<int>(kind));
    const ir::Model m = rotary_model({.cos_sin = kind});
    const ir::Graph& g = *m.graph;
    const std::optional<patterns::analysis::RotaryCache> cache =
        patterns::analysis::rotary_cache(cos_of(g), {&g, *g.find("X")});
    ASSERT_TRUE(cache.has_value());
    const bool computed = kind == CosSin::Computed || kind == CosSin::ComputedBroadcast;
    EXPECT_EQ(cache->angles != ir::kNone, computed);  // computed caches keep their angles, tables their rows
    if (!computed) {
      EXPECT_EQ(cache->rows.dims().back(), RotaryCase{}.head);
    }
  }
}

TEST(RotaryCacheAnalysis, NoCacheWhoseHalvesDiffer) {
  const ir::Model m = rotary_model({.unequal_cos_halves = true});
  const ir::Graph& g = *m.graph;
  EXPECT_FALSE(patterns::analysis::rotary_cache(cos_of(g), {&g, *g.find("X")}).has_value());
}

// ---- the user's path: `xexp optimize` on the Llama exports as written -------------------------------

namespace {

const std::filesystem::path kModels = std::filesystem::path(XEXP_SHARED_DIR) / "models";

// Optimizes the file, checks its rotary blocks became `rotaries` RotaryEmbedding nodes on 3-D q and k,
// and that the optimized model gives the original's logits in xexp's evaluator and ONNX Runtime.
void expect_rotaries(const std::string& file, int rotaries) {
  SCOPED_TRACE(file);
  const std::string original = (kModels / file).string();
  ir::Model model = load_model(original);
  optimizer::optimize_model(model, {});
  std::map<std::string, int> ops;
  for (const std::string& op : op_types(*model.graph)) ++ops[op];
  EXPECT_EQ(ops["com.microsoft.RotaryEmbedding"], rotaries);
  EXPECT_EQ(ops["Neg"], 0);
  EXPECT_EQ(ops["Range"], 0);  // position ids counting from 0 are the offset 0
  for (ir::NodeId id : model.graph->nodes()) {
    const ir::Node& n = model.graph->node(id);
    if (n.op_type == Symbol("RotaryEmbedding")) {
      EXPECT_EQ(model.graph->value(n.inputs[0]).shape->size(), 3u);
    }
  }
  const Tensor ids = Tensor::from<int64_t>(
      {2, 16}, xexp::testing::read_file<std::vector<int64_t>>(kModels / "llama_L1.input_ids.bin"));
  const xexp::testing::NamedTensors feeds = {{"input_ids", ids}};
  test::expect_outputs_of_file(original, model, feeds, 1e-5);
}

}  // namespace

TEST(PatternOrtRotary, LlamaStaticExportGetsOneRotaryEmbeddingForQAndOneForK) {
  expect_rotaries("llama_L1.fold.onnx", 2);
}

TEST(PatternOrtRotary, LlamaDynamicExportGetsOneRotaryEmbeddingForQAndOneForK) {
  expect_rotaries("llama_L1.op14dyn.onnx", 2);
}

namespace {

// ---- RotaryConcatPart -----------------------------------------------------------------------------
// Add(Concat(Neg(X[:, 4:]), Z), Concat(W, X[:, :right_cut])) on X (2, 8), Z and W ConstantOfShape
// filled with `fill`: rotate_half as exporters pad its halves.
Model padded_halves(float fill = 0.0f, int64_t right_cut = 4) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{2, 8});
  const ValueId one = test::int64_initializer(g, "one", {1});
  auto slice = [&](int64_t start, int64_t end) {
    const std::string at = std::to_string(start);
    return node(g, "Slice",
                {x, test::int64_initializer(g, "start" + at, {start}),
                 test::int64_initializer(g, "end" + at, {end}), one});
  };
  auto zeros = [&](const std::string& side, int64_t width) {
    return test::constant_of_shape(g, test::int64_initializer(g, side + "_shape", {2, width}), fill);
  };
  const Attribute axis = Attribute::make_int("axis", 1);
  ValueId left = node(g, "Concat", {node(g, "Neg", {slice(4, 8)}), zeros("left", 4)}, {axis});
  ValueId right = node(g, "Concat", {zeros("right", 8 - right_cut), slice(0, right_cut)}, {axis});
  g.add_output(node(g, "Add", {left, right}));
  return m;
}

TEST(PatternRotaryConcatPart, TheHalvesWithoutTheirPadding) {
  Model m = padded_halves();
  run_rules(m, "RotaryConcatPart");
  const Graph& g = *m.graph;
  ASSERT_EQ(op_types(g), (OpList{"Slice", "Neg", "Slice", "Concat"}));
  const Node& concat = producer(g, g.outputs()[0]);
  EXPECT_EQ(producer(g, concat.inputs[0]).op_type, Symbol("Neg"));
  EXPECT_EQ(producer(g, concat.inputs[1]).op_type, Symbol("Slice"));
  EXPECT_EQ(concat.attribute(Symbol("axis"))->i, 1);
}

TEST(PatternRotaryConcatPart, NotWithAPaddingOfOnesOrHalvesThatDoNotLineUp) {
  for (const auto& [fill, cut] : {std::pair<float, int64_t>{1.0f, 4}, std::pair<float, int64_t>{0.0f, 3}}) {
    Model m = padded_halves(fill, cut);
    run_rules(m, "RotaryConcatPart");
    EXPECT_EQ(op_types(*m.graph).back(), "Add") << fill << " " << cut;
  }
}

TEST(PatternRotaryConcatPart, SameNumbers) {
  test::expect_same_outputs([] { return padded_halves(); }, "RotaryConcatPart");
}

// The backward of rotate_half as autograd writes it: each half of G (2, 3, 8) written into zeros over the
// last axis, added. `spelling` picks how:
//   "elements"  ScatterElements(Z, I, part, axis=2), I a constant counting along the axis (the second one
//               an Expand of a row [4, 5, 6, 7], as the export leaves it)
//   "nd"        Transpose(ScatterND(Transpose(Z, p), R, Transpose(part, p)), p), p = [2, 1, 0], R = [[0],
//               [1], ...]: onnxscript's slice_scatter
// `second_start` moves the second part (4 lines the parts up), `reduction` is the scatters' own.
Model scattered_halves(const std::string& spelling, int64_t second_start = 4,
                       const std::string& reduction = "none") {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("G", ElemType::Float, Shape{2, 3, 8});
  const ValueId one = test::int64_initializer(g, "one", {1});
  const ValueId last = test::int64_initializer(g, "last", {2});
  auto slice = [&](int64_t start, int64_t end) {
    const std::string at = std::to_string(start);
    return node(g, "Slice",
                {x, test::int64_initializer(g, "start" + at, {start}),
                 test::int64_initializer(g, "end" + at, {end}), last, one});
  };
  const ValueId zeros = node(g, "ConstantOfShape", {test::int64_initializer(g, "shape", {2, 3, 8})});
  const std::vector<Attribute> how{Attribute::make_string("reduction", reduction)};
  auto counting = [](int64_t start, int64_t count) {
    std::vector<int64_t> v;
    for (int64_t k = 0; k < count; ++k) v.push_back(start + k);
    return v;
  };
  auto scatter = [&](ValueId part, int64_t start) -> ValueId {
    const std::string at = std::to_string(start);
    if (spelling == "elements") {
      std::vector<Attribute> attrs = how;
      attrs.push_back(Attribute::make_int("axis", 2));
      std::vector<int64_t> whole;
      for (int k = 0; k < 6; ++k)
        for (int64_t i : counting(start, 4)) whole.push_back(i);
      const ValueId indices = start == 0
                                  ? g.add_initializer("I" + at, Tensor::from<int64_t>({2, 3, 4}, whole))
                                  : node(g, "Expand",
                                         {test::int64_initializer(g, "row" + at, counting(start, 4)),
                                          test::int64_initializer(g, "to" + at, {2, 3, 4})});
      return node(g, "ScatterElements", {zeros, indices, part}, attrs);
    }
    const std::vector<Attribute> perm{Attribute::make_ints("perm", {2, 1, 0})};
    std::vector<int64_t> rows = counting(start, 4);
    const ValueId r = g.add_initializer("R" + at, Tensor::from<int64_t>({4, 1}, rows));
    const ValueId written = node(
        g, "ScatterND", {node(g, "Transpose", {zeros}, perm), r, node(g, "Transpose", {part}, perm)}, how);
    return node(g, "Transpose", {written}, perm);
  };
  g.add_output(
      node(g, "Add", {scatter(slice(0, 4), second_start), scatter(node(g, "Neg", {slice(4, 8)}), 0)}));
  return m;
}

TEST(PatternRotaryConcatPart, TheHalvesOutOfTheirScatters) {
  for (const char* spelling : {"elements", "nd"}) {
    Model m = scattered_halves(spelling);
    run_rules(m, "RotaryConcatPart");
    const Graph& g = *m.graph;
    ASSERT_EQ(op_types(g), (OpList{"Slice", "Slice", "Neg", "Concat"})) << spelling;
    const Node& concat = producer(g, g.outputs()[0]);
    EXPECT_EQ(producer(g, concat.inputs[0]).op_type, Symbol("Neg")) << spelling;
    EXPECT_EQ(producer(g, concat.inputs[1]).op_type, Symbol("Slice")) << spelling;
    EXPECT_EQ(concat.attribute(Symbol("axis"))->i, 2) << spelling;
  }
}

TEST(PatternRotaryConcatPart, NotWhenTheScattersOverlapOrAdd) {
  for (const char* spelling : {"elements", "nd"}) {
    for (const auto& [start, reduction] : {std::pair<int64_t, std::string>{3, "none"}, {4, "add"}}) {
      Model m = scattered_halves(spelling, start, reduction);
      run_rules(m, "RotaryConcatPart");
      const OpList ops = op_types(*m.graph);
      EXPECT_EQ(ops.back(), "Add") << spelling << " " << start << " " << reduction;
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "Concat"), 0)
          << spelling << " " << start << " " << reduction;
    }
  }
}

TEST(PatternRotaryConcatPart, SameNumbersOutOfTheScatters) {
  for (const char* spelling : {"elements", "nd"})
    test::expect_same_outputs([&] { return scattered_halves(spelling); }, "RotaryConcatPart");
}

}  // namespace
