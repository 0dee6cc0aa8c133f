// Constant folding: what folds, what does not (op set, size cap, non-constant inputs), names kept.
#include <gtest/gtest.h>

#include "xexp/eval.hpp"

using namespace xexp;
using ir::Attribute;

namespace {

Tensor f32(std::vector<int64_t> dims, std::vector<float> v) { return Tensor::from<float>(std::move(dims), v); }

struct Chain {
  ir::Graph g;
  ir::ValueId x, a, b, sum, out;
  // out = X + Transpose(A) * B, with A and B initializers
  Chain() {
    x = g.add_input("X", ElemType::Float, make_shape({2, 2}));
    a = g.add_initializer("A", f32({2, 2}, {1, 2, 3, 4}));
    b = g.add_initializer("B", f32({2, 2}, {2, 2, 2, 2}));
    ir::ValueId t = g.add_value("t");
    sum = g.add_value("prod");
    out = g.add_value("Y");
    g.add_node("Transpose", {a}, {t}, {}, "tr");
    g.add_node("Mul", {t, b}, {sum}, {}, "mul");
    g.add_node("Add", {x, sum}, {out}, {}, "add");
    g.add_output(out);
  }
};

}  // namespace

TEST(EvalFold, FoldsChainsOfTheDefaultSet) {
  Chain c;
  EXPECT_EQ(eval::fold_constants(c.g), 2u);
  EXPECT_EQ(c.g.node_count(), 1u);  // only the Add reading the input remains
  const ir::Value& prod = c.g.value(c.g.at("prod"));
  ASSERT_TRUE(prod.initializer);
  EXPECT_EQ(std::vector<float>(prod.initializer->data<float>().begin(), prod.initializer->data<float>().end()),
            (std::vector<float>{2, 6, 4, 8}));
  EXPECT_EQ(c.g.node(*c.g.nodes().begin()).inputs[1], c.g.at("prod"));
}

TEST(EvalFold, RespectsTheOpSet) {
  Chain c;
  eval::FoldOptions options;
  options.ops = {"Mul"};  // Transpose is not foldable, so Mul never sees two constants
  EXPECT_EQ(eval::fold_constants(c.g, options), 0u);
  EXPECT_EQ(c.g.node_count(), 3u);
}

TEST(EvalFold, RespectsTheSizeCap) {
  Chain c;
  eval::FoldOptions options;
  options.max_elements = 3;  // every result has 4 elements
  EXPECT_EQ(eval::fold_constants(c.g, options), 0u);
}

TEST(EvalFold, ShapeOfStaticValueBecomesConstantAndOutputsKeepTheirNames) {
  ir::Graph g;
  ir::ValueId x = g.add_input("X", ElemType::Float, make_shape({3, 5}));
  ir::ValueId s = g.add_value("shape");
  ir::ValueId y = g.add_value("last");
  ir::ValueId axes = g.add_initializer("axes", Tensor::from<int64_t>({1}, {0}));
  g.add_node("Shape", {x}, {s}, {Attribute::make_int("start", 1)});
  g.add_node("Unsqueeze", {s, axes}, {y});
  g.add_output(y);
  EXPECT_EQ(eval::fold_constants(g), 2u);
  EXPECT_EQ(g.node_count(), 0u);
  ASSERT_EQ(g.outputs().size(), 1u);
  const ir::Value& out = g.value(g.outputs()[0]);
  EXPECT_EQ(out.name, "last");
  ASSERT_TRUE(out.initializer);
  EXPECT_EQ(out.initializer->dims(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(out.initializer->data<int64_t>()[0], 5);
}

TEST(EvalFold, ShapeOfDynamicValueStays) {
  ir::Graph g;
  ir::ValueId x = g.add_input("X", ElemType::Float, Shape{Dim::symbolic("batch"), Dim(4)});
  ir::ValueId s = g.add_value("shape");
  g.add_node("Shape", {x}, {s});
  g.add_output(s);
  EXPECT_EQ(eval::fold_constants(g), 0u);
  EXPECT_EQ(g.node_count(), 1u);
}

TEST(EvalFold, ConstantNodesFeedFoldingAndDisappearWhenUnused) {
  ir::Graph g;
  ir::ValueId c = g.add_value("c");
  ir::ValueId y = g.add_value("y");
  g.add_node("Constant", {}, {c}, {Attribute::make_tensor("value", f32({2}, {4, 9}))});
  g.add_node("Sqrt", {c}, {y});
  g.add_output(y);
  EXPECT_EQ(eval::fold_constants(g), 1u);
  EXPECT_EQ(g.node_count(), 0u);
  EXPECT_EQ(g.value(g.at("y")).initializer->data<float>()[1], 3.0f);
}
