#include <gtest/gtest.h>

#include <limits>

#include "xexp/infer.hpp"

using namespace xexp;
using namespace xexp::ir;
using xexp::infer::InferState;

namespace {

Dim S(const char* name) { return Dim::symbolic(name); }

// A tiny harness: a graph, one inference state, nodes appended and inferred at once.
struct Fixture {
  Graph g;
  InferState state;
  int64_t opset = 18;
  ValueId input(const std::string& name, ElemType t, std::optional<Shape> s) { return g.add_input(name, t, std::move(s)); }
  ValueId init(const std::string& name, Tensor t) { return g.add_initializer(name, std::move(t)); }
  ValueId ints(const std::string& name, std::vector<int64_t> v) {
    auto n = static_cast<int64_t>(v.size());
    return init(name, Tensor::from<int64_t>({n}, v));
  }
  std::vector<ValueId> node(const char* op, std::vector<ValueId> inputs, std::size_t n_outputs = 1,
                            std::vector<Attribute> attrs = {}, const char* domain = "") {
    std::vector<ValueId> outs;
    for (std::size_t k = 0; k < n_outputs; ++k) outs.push_back(g.add_value(g.unique_value_name(std::string(op) + "_out")));
    NodeId n = g.add_node(op, std::move(inputs), outs, std::move(attrs), std::string(op), domain);
    infer::infer_node(g, n, opset, state);
    return outs;
  }
  ValueId one(const char* op, std::vector<ValueId> inputs, std::vector<Attribute> attrs = {}) {
    return node(op, std::move(inputs), 1, std::move(attrs))[0];
  }
  const std::optional<Shape>& shape(ValueId v) { return g.value(v).shape; }
  ElemType type(ValueId v) { return g.value(v).elem; }
};

}  // namespace

TEST(InferElementwise, SymbolicBroadcastRecordsEquality) {
  Fixture f;
  ValueId a = f.input("A", ElemType::Float, Shape{S("batch"), 1, 4});
  ValueId b = f.input("B", ElemType::Float, Shape{S("n"), 3, 1});
  ValueId y = f.one("Add", {a, b});
  EXPECT_EQ(f.type(y), ElemType::Float);
  EXPECT_EQ(*f.shape(y), (Shape{S("batch"), 3, 4}));  // "batch" < "n": the representative
  EXPECT_TRUE(f.state.constraints.equal(S("batch"), S("n")));
  ValueId c = f.input("C", ElemType::Float, Shape{4});
  EXPECT_EQ(*f.shape(f.one("Mul", {c, a})), (Shape{S("batch"), 1, 4}));
  ValueId d = f.input("D", ElemType::Float, Shape{5});
  EXPECT_THROW(f.one("Sub", {c, d}), Error);
}

TEST(InferElementwise, UnaryComparisonWhereCast) {
  Fixture f;
  ValueId x = f.input("X", ElemType::Float, Shape{S("a"), 2});
  EXPECT_EQ(*f.shape(f.one("Relu", {x})), (Shape{S("a"), 2}));
  ValueId eq = f.one("Equal", {x, f.init("zero", Tensor::scalar<float>(0.f))});
  EXPECT_EQ(f.type(eq), ElemType::Bool);
  EXPECT_EQ(*f.shape(eq), (Shape{S("a"), 2}));
  EXPECT_EQ(f.type(f.one("IsNaN", {x})), ElemType::Bool);
  ValueId w = f.one("Where", {eq, f.init("minf", Tensor::from<float>({1}, {-1.f})), x});
  EXPECT_EQ(f.type(w), ElemType::Float);
  ValueId cast = f.one("Cast", {x}, {Attribute::make_int("to", 10)});
  EXPECT_EQ(f.type(cast), ElemType::Float16);
  EXPECT_EQ(f.type(f.one("CastLike", {x, cast})), ElemType::Float16);
  auto drop = f.node("Dropout", {x}, 2);
  EXPECT_EQ(f.type(drop[1]), ElemType::Bool);
}

TEST(InferElementwise, KnownShapeIsNotOverwritten) {
  Fixture f;
  ValueId x = f.input("X", ElemType::Float, Shape{3});
  ValueId y = f.g.add_value("Y");
  f.g.value(y).shape = Shape{S("n")};
  NodeId n = f.g.add_node("Neg", {x}, {y}, {}, "neg");
  infer::infer_node(f.g, n, 18, f.state);
  EXPECT_EQ(*f.shape(y), (Shape{S("n")}));
  EXPECT_EQ(f.state.constraints.value(Symbol("n")), 3);
  ValueId z = f.g.add_value("Z");
  f.g.value(z).shape = Shape{4};
  NodeId bad = f.g.add_node("Neg", {x}, {z}, {}, "bad_neg");
  try {
    infer::infer_node(f.g, bad, 18, f.state);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.node(), "bad_neg");
    EXPECT_EQ(e.value(), "Z");
  }
}

TEST(InferMatMul, VectorsBatchesAndGemm) {
  Fixture f;
  ValueId a = f.input("A", ElemType::Float, Shape{S("b"), 1, 5, 3});
  ValueId b = f.input("B", ElemType::Float, Shape{7, 3, 4});
  EXPECT_EQ(*f.shape(f.one("MatMul", {a, b})), (Shape{S("b"), 7, 5, 4}));
  ValueId v = f.input("V", ElemType::Float, Shape{3});
  EXPECT_EQ(*f.shape(f.one("MatMul", {a, v})), (Shape{S("b"), 1, 5}));
  EXPECT_EQ(*f.shape(f.one("MatMul", {v, b})), (Shape{7, 4}));
  EXPECT_EQ(*f.shape(f.one("MatMul", {v, v})), (Shape{}));
  ValueId bad = f.input("Bad", ElemType::Float, Shape{4, 2});
  EXPECT_THROW(f.one("MatMul", {a, bad}), Error);
  ValueId m = f.input("M", ElemType::Float, Shape{3, S("k")});
  ValueId n = f.input("N", ElemType::Float, Shape{6, S("k")});
  ValueId gemm = f.one("Gemm", {m, n}, {Attribute::make_int("transB", 1)});
  EXPECT_EQ(*f.shape(gemm), (Shape{3, 6}));
  ValueId mt = f.input("MT", ElemType::Float, Shape{S("k"), 3});
  EXPECT_EQ(*f.shape(f.one("Gemm", {mt, n}, {Attribute::make_int("transA", 1), Attribute::make_int("transB", 1)})),
            (Shape{3, 6}));
  auto fused = f.node("FusedMatMul", {m, n}, 1, {Attribute::make_int("transB", 1)}, "com.microsoft");
  EXPECT_EQ(*f.shape(fused[0]), (Shape{3, 6}));
}

TEST(InferShapeOps, ReshapeZeroAndMinusOne) {
  Fixture f;
  ValueId x = f.input("X", ElemType::Float, Shape{S("batch"), 4, 6});
  EXPECT_EQ(*f.shape(f.one("Reshape", {x, f.ints("s1", {0, -1})})), (Shape{S("batch"), 24}));
  EXPECT_EQ(*f.shape(f.one("Reshape", {x, f.ints("s2", {-1, 6})})), (Shape{S("batch*4"), 6}));
  EXPECT_EQ(*f.shape(f.one("Reshape", {x, f.ints("s2b", {-1, 4, 6})})), (Shape{S("batch"), 4, 6}));
  EXPECT_EQ(*f.shape(f.one("Reshape", {x, f.ints("s3", {0, 2, 2, 6})})), (Shape{S("batch"), 2, 2, 6}));
  EXPECT_EQ(*f.shape(f.one("Reshape", {x, f.ints("s4", {0, 3, -1})})), (Shape{S("batch"), 3, 8}));
  ValueId st = f.input("ST", ElemType::Float, Shape{2, 3, 4});
  EXPECT_EQ(*f.shape(f.one("Reshape", {st, f.ints("s5", {-1, 4})})), (Shape{6, 4}));
  ValueId z = f.input("Z", ElemType::Float, Shape{0, 3});
  EXPECT_EQ(*f.shape(f.one("Reshape", {z, f.ints("s6", {0, 3})}, {Attribute::make_int("allowzero", 1)})),
            (Shape{0, 3}));
  EXPECT_THROW(f.one("Reshape", {st, f.ints("s7", {-1, -1})}), Error);
  ValueId dyn = f.input("dynshape", ElemType::Int64, Shape{3});
  EXPECT_EQ(f.shape(f.one("Reshape", {x, dyn}))->size(), 3u);
}

TEST(InferShapeOps, ShapeGatherConcatReshapeKeepsSymbols) {
  Fixture f;
  ValueId x = f.input("X", ElemType::Float, Shape{S("batch"), S("seq"), 16});
  ValueId shape = f.one("Shape", {x});
  EXPECT_EQ(*f.shape(shape), (Shape{3}));
  ASSERT_NE(f.state.value_shapes.find(shape), nullptr);
  ValueId first_two = f.one("Slice", {shape, f.ints("zero", {0}), f.ints("two", {2})});
  EXPECT_EQ(*f.state.value_shapes.find(first_two), (Shape{S("batch"), S("seq")}));
  ValueId seq = f.one("Gather", {shape, f.init("one", Tensor::scalar<int64_t>(1))});
  EXPECT_EQ(*f.shape(seq), (Shape{}));
  ValueId seq1 = f.one("Unsqueeze", {seq, f.ints("axes0", {0})});
  EXPECT_EQ(*f.shape(seq1), (Shape{1}));
  ValueId batch = f.one("Gather", {shape, f.ints("idx0", {0})});
  ValueId target = f.one("Concat", {batch, seq1, f.ints("heads", {2, 8})}, {Attribute::make_int("axis", 0)});
  EXPECT_EQ(*f.state.value_shapes.find(target), (Shape{S("batch"), S("seq"), 2, 8}));
  ValueId reshaped = f.one("Reshape", {x, target});
  EXPECT_EQ(*f.shape(reshaped), (Shape{S("batch"), S("seq"), 2, 8}));
  ValueId flat = f.one("Reshape", {x, f.one("Concat", {batch, f.ints("m1", {-1})}, {Attribute::make_int("axis", 0)})});
  EXPECT_EQ(*f.shape(flat), (Shape{S("batch"), S("seq*16")}));
  ValueId expanded = f.one("Expand", {f.input("B", ElemType::Float, Shape{1, 1, 16}), shape});
  EXPECT_EQ(*f.shape(expanded), (Shape{S("batch"), S("seq"), 16}));
  ValueId cos = f.one("ConstantOfShape", {f.one("Cast", {shape}, {Attribute::make_int("to", 7)})});
  EXPECT_EQ(*f.shape(cos), (Shape{S("batch"), S("seq"), 16}));
  EXPECT_EQ(f.type(cos), ElemType::Float);
}

TEST(InferShapeOps, SymbolicSumsAndProducts) {
  Fixture f;
  const Attribute axis0 = Attribute::make_int("axis", 0);
  ValueId a = f.input("A", ElemType::Float, Shape{S("a"), 4});
  ValueId b = f.input("B", ElemType::Float, Shape{S("b"), 4});
  ValueId c = f.input("C", ElemType::Float, Shape{3, 4});
  ValueId ab = f.one("Concat", {a, b}, {axis0});
  EXPECT_EQ(*f.shape(ab), (Shape{S("a+b"), 4}));
  EXPECT_EQ(*f.shape(f.one("Concat", {a, c, b, c}, {axis0})), (Shape{S("a+b+6"), 4}));
  EXPECT_EQ(*f.shape(f.one("Concat", {c, c}, {axis0})), (Shape{6, 4}));
  ValueId x = f.input("X", ElemType::Float, Shape{S("a"), S("b"), 4, 6});
  EXPECT_EQ(*f.shape(f.one("Reshape", {x, f.ints("r1", {-1, 6})})), (Shape{S("a*b*4"), 6}));
  EXPECT_EQ(*f.shape(f.one("Reshape", {x, f.ints("r2", {0, -1})})), (Shape{S("a"), S("b*24")}));
  EXPECT_EQ(*f.shape(f.one("Reshape", {x, f.ints("r3", {0, 0, -1})})), (Shape{S("a"), S("b"), 24}));
  EXPECT_EQ(*f.shape(f.one("Reshape", {x, f.ints("r4", {-1, 5})})), (Shape{Dim(), 5}));  // 5 does not divide 24
  EXPECT_EQ(*f.shape(f.one("Flatten", {x}, {Attribute::make_int("axis", 2)})), (Shape{S("a*b"), 24}));
  // a sum inside a product keeps its parentheses
  EXPECT_EQ(*f.shape(f.one("Flatten", {ab}, {Attribute::make_int("axis", 2)})), (Shape{S("(a+b)*4"), 1}));
  // a symbol bound to a size folds into the constant
  f.state.constraints.bind(Symbol("b"), 2);
  EXPECT_EQ(*f.shape(f.one("Concat", {a, b}, {axis0})), (Shape{S("a+2"), 4}));
}

TEST(InferConstraints, BindingSurvivesEquality) {
  infer::ShapeConstraints c;
  c.bind(Symbol("b"), 3);
  c.add_equal(Symbol("b"), Symbol("a"));  // "a" becomes the representative and keeps b's size
  EXPECT_EQ(c.representative(Symbol("b")), Symbol("a"));
  EXPECT_EQ(c.value(Symbol("a")), 3);
  EXPECT_EQ(c.canonical(S("b")), Dim(3));
  EXPECT_THROW(c.bind(Symbol("a"), 4), Error);
  c.add_equal(Symbol("c"), Symbol("d"));
  c.bind(Symbol("d"), 5);
  EXPECT_THROW(c.add_equal(Symbol("a"), Symbol("c")), Error);  // 3 and 5
  EXPECT_EQ(c.canonical(S("c")), Dim(5));
  EXPECT_EQ(c.canonical(S("e")), S("e"));
}

TEST(InferShapeOps, TransposeConcatSplitSliceGather) {
  Fixture f;
  ValueId x = f.input("X", ElemType::Float, Shape{S("a"), 3, 10});
  EXPECT_EQ(*f.shape(f.one("Transpose", {x})), (Shape{10, 3, S("a")}));
  EXPECT_EQ(*f.shape(f.one("Transpose", {x}, {Attribute::make_ints("perm", {0, 2, 1})})), (Shape{S("a"), 10, 3}));
  ValueId y = f.input("Y", ElemType::Float, Shape{S("b"), 3, 5});
  EXPECT_EQ(*f.shape(f.one("Concat", {x, y}, {Attribute::make_int("axis", -1)})), (Shape{S("a"), 3, 15}));
  EXPECT_TRUE(f.state.constraints.equal(S("a"), S("b")));
  auto parts = f.node("Split", {x, f.ints("sizes", {4, 6})}, 2, {Attribute::make_int("axis", 2)});
  EXPECT_EQ(*f.shape(parts[1]), (Shape{S("a"), 3, 6}));
  auto thirds = f.node("Split", {x}, 3, {Attribute::make_int("axis", 2)});
  EXPECT_EQ(*f.shape(thirds[0]), (Shape{S("a"), 3, 4}));
  EXPECT_EQ(*f.shape(thirds[2]), (Shape{S("a"), 3, 2}));
  ValueId sl = f.one("Slice", {x, f.ints("st", {1, -4}), f.ints("en", {3, 1000}), f.ints("ax", {1, 2})});
  EXPECT_EQ(*f.shape(sl), (Shape{S("a"), 2, 4}));
  ValueId rev = f.one("Slice", {x, f.ints("st2", {-1}), f.ints("en2", {-1000}), f.ints("ax2", {2}), f.ints("sp2", {-2})});
  EXPECT_EQ(*f.shape(rev), (Shape{S("a"), 3, 5}));
  ValueId cut = f.one("Slice", {x, f.ints("st3", {0}), f.ints("en3", {2}), f.ints("ax3", {0})});
  EXPECT_EQ(*f.shape(cut), (Shape{Dim(), 3, 10}));
  // Bounds far outside the dimension and steps of any size (core/slice_range.hpp, as ONNX defines them).
  constexpr int64_t kLowest = std::numeric_limits<int64_t>::min(), kHighest = std::numeric_limits<int64_t>::max();
  ValueId first = f.one("Slice", {x, f.ints("st4", {-10}), f.ints("en4", {kLowest}), f.ints("ax4", {2}), f.ints("sp4", {-1})});
  EXPECT_EQ(*f.shape(first), (Shape{S("a"), 3, 1}));
  ValueId one_step = f.one("Slice", {x, f.ints("st5", {0}), f.ints("en5", {kHighest}), f.ints("ax5", {2}), f.ints("sp5", {kHighest})});
  EXPECT_EQ(*f.shape(one_step), (Shape{S("a"), 3, 1}));
  ValueId none = f.one("Slice", {x, f.ints("st6", {kHighest}), f.ints("en6", {kLowest}), f.ints("ax6", {1}), f.ints("sp6", {1})});
  EXPECT_EQ(*f.shape(none), (Shape{S("a"), 0, 10}));
  ValueId table = f.input("T", ElemType::Float, Shape{1024, 16});
  ValueId ids = f.input("ids", ElemType::Int64, Shape{1, 30});
  EXPECT_EQ(*f.shape(f.one("Gather", {table, ids})), (Shape{1, 30, 16}));
  EXPECT_EQ(*f.shape(f.one("Gather", {x, ids}, {Attribute::make_int("axis", 1)})), (Shape{S("a"), 1, 30, 10}));
}

TEST(InferShapeOps, SqueezeUnsqueezeByOpset) {
  Fixture f;
  f.opset = 11;
  ValueId x = f.input("X", ElemType::Float, Shape{S("a"), 1, 3});
  EXPECT_EQ(*f.shape(f.one("Squeeze", {x}, {Attribute::make_ints("axes", {1})})), (Shape{S("a"), 3}));
  EXPECT_EQ(*f.shape(f.one("Unsqueeze", {x}, {Attribute::make_ints("axes", {0, -1})})), (Shape{1, S("a"), 1, 3, 1}));
  f.opset = 13;
  EXPECT_EQ(*f.shape(f.one("Squeeze", {x, f.ints("ax", {-2})})), (Shape{S("a"), 3}));
  EXPECT_EQ(*f.shape(f.one("Unsqueeze", {x, f.ints("ax2", {1})})), (Shape{S("a"), 1, 1, 3}));
  EXPECT_THROW(f.one("Squeeze", {x, f.ints("ax3", {2})}), Error);
  ValueId st = f.input("ST", ElemType::Float, Shape{1, 4, 1});
  EXPECT_EQ(*f.shape(f.one("Squeeze", {st})), (Shape{4}));
  EXPECT_FALSE(f.shape(f.one("Squeeze", {x})).has_value());
}

TEST(InferReduce, AxesAttributeOrInputByOpset) {
  Fixture f;
  ValueId x = f.input("X", ElemType::Float, Shape{S("a"), 4, 5});
  f.opset = 13;
  EXPECT_EQ(*f.shape(f.one("ReduceMean", {x}, {Attribute::make_ints("axes", {-1})})), (Shape{S("a"), 4, 1}));
  EXPECT_EQ(*f.shape(f.one("ReduceSum", {x, f.ints("ax", {1})}, {Attribute::make_int("keepdims", 0)})),
            (Shape{S("a"), 5}));
  f.opset = 18;
  EXPECT_EQ(*f.shape(f.one("ReduceMean", {x, f.ints("ax2", {0, 2})}, {Attribute::make_int("keepdims", 0)})),
            (Shape{4}));
  EXPECT_EQ(*f.shape(f.one("ReduceMax", {x})), (Shape{1, 1, 1}));
  EXPECT_EQ(*f.shape(f.one("ReduceMax", {x}, {Attribute::make_int("noop_with_empty_axes", 1)})), (Shape{S("a"), 4, 5}));
  ValueId dyn_axes = f.input("axes", ElemType::Int64, Shape{1});
  EXPECT_EQ(f.shape(f.one("ReduceMin", {x, dyn_axes}))->size(), 3u);
  ValueId am = f.one("ArgMax", {x}, {Attribute::make_int("axis", 1), Attribute::make_int("keepdims", 0)});
  EXPECT_EQ(f.type(am), ElemType::Int64);
  EXPECT_EQ(*f.shape(am), (Shape{S("a"), 5}));
}

TEST(InferMisc, ShapeSizeRangeConstantLayerNorm) {
  Fixture f;
  ValueId x = f.input("X", ElemType::Float, Shape{S("a"), 4, 5});
  ValueId tail = f.one("Shape", {x}, {Attribute::make_int("start", -2)});
  EXPECT_EQ(*f.shape(tail), (Shape{2}));
  EXPECT_EQ(*f.state.value_shapes.find(tail), (Shape{4, 5}));
  ValueId size = f.one("Size", {f.input("Y", ElemType::Float, Shape{2, 3})});
  EXPECT_EQ(*f.shape(size), (Shape{}));
  EXPECT_EQ(*f.state.value_shapes.find(size), (Shape{6}));
  ValueId r = f.one("Range", {f.init("r0", Tensor::scalar<int64_t>(2)), f.init("r1", Tensor::scalar<int64_t>(11)),
                              f.init("r2", Tensor::scalar<int64_t>(3))});
  EXPECT_EQ(*f.shape(r), (Shape{3}));
  EXPECT_EQ(f.type(r), ElemType::Int64);
  ValueId c = f.one("Constant", {}, {Attribute::make_tensor("value", Tensor::from<float>({2, 2}, {1, 2, 3, 4}))});
  EXPECT_EQ(*f.shape(c), (Shape{2, 2}));
  ValueId ci = f.one("Constant", {}, {Attribute::make_ints("value_ints", {0, -1})});
  EXPECT_EQ(*f.shape(f.one("Reshape", {x, ci})), (Shape{S("a"), 20}));
  auto ln = f.node("LayerNormalization", {x, f.input("w", ElemType::Float, Shape{5}), f.input("b", ElemType::Float, Shape{5})}, 3);
  EXPECT_EQ(*f.shape(ln[0]), (Shape{S("a"), 4, 5}));
  EXPECT_EQ(*f.shape(ln[1]), (Shape{S("a"), 4, 1}));
  EXPECT_EQ(*f.shape(f.one("Softmax", {x})), (Shape{S("a"), 4, 5}));
  EXPECT_EQ(*f.shape(f.one("Flatten", {x})), (Shape{S("a"), 20}));
  auto skip = f.node("SkipLayerNormalization", {x, x, f.input("g", ElemType::Float, Shape{5})}, 4, {}, "com.microsoft");
  EXPECT_EQ(*f.shape(skip[3]), (Shape{S("a"), 4, 5}));
  ValueId unknown = f.one("MyCustomOp", {x});
  EXPECT_FALSE(f.shape(unknown).has_value());
  EXPECT_EQ(f.type(unknown), ElemType::Undefined);
}
