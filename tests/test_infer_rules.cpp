#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <unordered_map>

#include "xexp/infer.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/infer/shape_ops.hpp"
#include "xexp/onnx/save.hpp"

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
  Attribute string_attr(const char* name, const char* v) { return Attribute::make_string(name, v); }
};

// ONNX's own shape inference (libonnx) over the fixture's graph, every node output untyped first:
// what it gives each value it types.
std::unordered_map<std::string, Value> onnx_inferred(const Fixture& f) {
  Model m;
  OpsetImport onnx_domain;
  onnx_domain.version = f.opset;
  m.opsets.push_back(onnx_domain);
  OpsetImport contrib;  // ONNX has no schema for com.microsoft ops: it leaves their outputs untyped
  contrib.domain = "com.microsoft";
  contrib.version = 1;
  m.opsets.push_back(contrib);
  m.graph = clone(f.g);
  for (NodeId n : m.graph->nodes())
    for (ValueId out : m.graph->node(n).outputs) {
      m.graph->value(out).elem = ElemType::Undefined;
      m.graph->value(out).shape.reset();
    }
  ::onnx::ModelProto proto = model_to_proto(m);
  ::onnx::shape_inference::InferShapes(proto, ::onnx::OpSchemaRegistry::Instance(), ::onnx::ShapeInferenceOptions(false, 1, false));
  std::unordered_map<std::string, Value> found;
  for (const ::onnx::ValueInfoProto& vi : proto.graph().value_info()) xexp::detail::read_type(vi.type(), found[vi.name()]);
  return found;
}

// Every node output of the default domain is typed as ONNX's inference types it: the same element
// type and rank, and each dimension ONNX knows (a size or an input's symbol) the same. Where ONNX leaves a
// dimension unknown, ours may know it (the tests say which). Returns how many values were compared.
int expect_as_onnx(const Fixture& f) {
  const auto onnx = onnx_inferred(f);
  const infer::ShapeConstraints& constraints = f.state.constraints;
  int compared = 0;
  for (NodeId n : f.g.nodes()) {
    if (!f.g.node(n).domain.empty()) continue;
    for (ValueId out : f.g.node(n).outputs) {
      const Value& ours = f.g.value(out);
      auto it = onnx.find(ours.name);
      if (it == onnx.end()) {
        ADD_FAILURE() << "ONNX types no " << ours.name;
        continue;
      }
      const Value& theirs = it->second;
      ++compared;
      EXPECT_EQ(ours.elem, theirs.elem) << ours.name;
      if (!theirs.shape) continue;
      if (!ours.shape || ours.shape->size() != theirs.shape->size()) {
        ADD_FAILURE() << ours.name << ": ours " << (ours.shape ? shape_str(*ours.shape) : "none") << ", ONNX "
                      << shape_str(*theirs.shape);
        continue;
      }
      for (std::size_t k = 0; k < ours.shape->size(); ++k) {
        const Dim& d = (*theirs.shape)[k];
        if (d.is_unknown() || (d.is_symbolic() && d.symbol().view().starts_with("unk__"))) continue;  // ONNX's name for unknown
        EXPECT_EQ(constraints.canonical((*ours.shape)[k]), constraints.canonical((*theirs.shape)[k]))
            << ours.name << " axis " << k << ": ours " << shape_str(*ours.shape) << ", ONNX " << shape_str(*theirs.shape);
      }
    }
  }
  return compared;
}

// The rule rejects the node: an xexp::Error naming the node (the fixture names it after its op) and
// the value at fault.
template <class Make>
void expect_rejected(Make&& make, const std::string& node, const std::string& value) {
  try {
    make();
    ADD_FAILURE() << node << " was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.node(), node) << e.what();
    EXPECT_EQ(e.value(), value) << e.what();
  }
}

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
  // A shape split in pieces (GathersSplit writes Split(Shape(X))): each piece holds its elements.
  const std::vector<ValueId> pieces = f.node("Split", {shape, f.ints("sizes", {1, 2})}, 2);
  EXPECT_EQ(*f.state.value_shapes.find(pieces[0]), (Shape{S("batch")}));
  EXPECT_EQ(*f.state.value_shapes.find(pieces[1]), (Shape{S("seq"), 16}));
  EXPECT_EQ(*f.shape(f.one("Reshape", {x, f.one("Concat", {pieces[0], pieces[1]}, {Attribute::make_int("axis", 0)})})),
            (Shape{S("batch"), S("seq"), 16}));
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
  // ... and none alone: (a+b, 4) reshaped to (-1, 4) is still a+b, not "(a+b)"
  EXPECT_EQ(*f.shape(f.one("Reshape", {ab, f.ints("r5", {-1, 4})})), (Shape{S("a+b"), 4}));
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

// A fuzzer's Reshape: sizes whose product passes int64 (2^80, 0 once wrapped) leave the -1 unknown
// rather than a wrapped size.
TEST(InferShapeOps, ReshapeMinusOneOfSizesPastInt64IsUnknown) {
  infer::ShapeConstraints c;
  const Dim huge(int64_t{1} << 40);
  EXPECT_TRUE(infer::missing_reshape_dim(Shape{huge, huge}, Shape{Dim(2)}, c).is_unknown());
  EXPECT_TRUE(infer::missing_reshape_dim(Shape{Dim(4)}, Shape{huge, huge}, c).is_unknown());
  EXPECT_EQ(infer::missing_reshape_dim(Shape{huge, Dim(4)}, Shape{Dim(2)}, c), Dim(int64_t{1} << 41));
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

TEST(InferShapeOps, GatherNDRowsPickSlicesPastTheBatchAxes) {
  Fixture f;
  // A cos cache (1024, 128) read by position: rows of one index pick whole lines.
  ValueId cache = f.input("cache", ElemType::Float16, Shape{1024, 128});
  ValueId positions = f.input("positions", ElemType::Int64, Shape{S("b"), S("s"), 1});
  const ValueId lines = f.one("GatherND", {cache, positions});
  EXPECT_EQ(f.type(lines), ElemType::Float16);
  EXPECT_EQ(*f.shape(lines), (Shape{S("b"), S("s"), 128}));
  // Rows of two indices after one batch axis: single elements.
  ValueId data = f.input("data", ElemType::Float, Shape{S("b"), 4, 5});
  ValueId pairs = f.input("pairs", ElemType::Int64, Shape{S("b"), 3, 2});
  EXPECT_EQ(*f.shape(f.one("GatherND", {data, pairs}, {Attribute::make_int("batch_dims", 1)})),
            (Shape{S("b"), 3}));
  // Rows longer than data's rank: an error.
  ValueId triples = f.input("triples", ElemType::Int64, Shape{2, 3});
  EXPECT_THROW(f.one("GatherND", {cache, triples}), Error);
  // Rows of unknown length: the type only.
  ValueId open = f.input("open", ElemType::Int64, Shape{2, S("k")});
  const ValueId unknown = f.one("GatherND", {cache, open});
  EXPECT_EQ(f.type(unknown), ElemType::Float16);
  EXPECT_FALSE(f.shape(unknown).has_value());
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

// Position ids counted to a dimension: Range(0, Shape(X)[1], 1) has that many elements, also when the
// limit is the dimension cast to float (float position ids, as torch exports Llama's rotary angles); not
// for a float value that is no cast of a dimension, nor for another start.
TEST(InferMisc, RangeCountingToADimensionHasItsLength) {
  Fixture f;
  const ValueId x = f.input("X", ElemType::Int64, Shape{S("batch"), S("seq")});
  const ValueId seq = f.one("Gather", {f.one("Shape", {x}), f.init("one", Tensor::scalar<int64_t>(1))},
                            {Attribute::make_int("axis", 0)});
  const ValueId as_float =
      f.one("Cast", {seq}, {Attribute::make_int("to", static_cast<int64_t>(ElemType::Float))});
  const ValueId zero = f.init("zero", Tensor::scalar<float>(0.f)),
                step = f.init("step", Tensor::scalar<float>(1.f));
  EXPECT_EQ(*f.shape(f.one("Range", {f.init("izero", Tensor::scalar<int64_t>(0)), seq,
                                     f.init("istep", Tensor::scalar<int64_t>(1))})),
            (Shape{S("seq")}));
  EXPECT_EQ(*f.shape(f.one("Range", {zero, as_float, step})), (Shape{S("seq")}));
  EXPECT_TRUE(
      (*f.shape(f.one("Range", {zero, f.input("L", ElemType::Float, Shape{}), step})))[0].is_unknown());
  EXPECT_TRUE((*f.shape(f.one("Range", {step, as_float, step})))[0].is_unknown());
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

TEST(InferConv, ConvAsOnnxWithPadsStridesDilationsGroups) {
  Fixture f;
  f.opset = 17;
  const Dim n = S("N");
  ValueId x = f.input("X", ElemType::Float, Shape{n, 3, 32, 33});
  ValueId w = f.input("W", ElemType::Float, Shape{8, 3, 3, 3});
  ValueId b = f.input("B", ElemType::Float, Shape{8});
  EXPECT_EQ(*f.shape(f.one("Conv", {x, w, b})), (Shape{n, 8, 30, 31}));
  const auto pads1 = Attribute::make_ints("pads", {1, 1, 1, 1});
  const auto strides2 = Attribute::make_ints("strides", {2, 2});
  EXPECT_EQ(*f.shape(f.one("Conv", {x, w}, {pads1, strides2})), (Shape{n, 8, 16, 17}));
  EXPECT_EQ(*f.shape(f.one("Conv", {x, w}, {f.string_attr("auto_pad", "SAME_UPPER"), strides2})), (Shape{n, 8, 16, 17}));
  EXPECT_EQ(*f.shape(f.one("Conv", {x, w}, {f.string_attr("auto_pad", "SAME_LOWER")})), (Shape{n, 8, 32, 33}));
  EXPECT_EQ(*f.shape(f.one("Conv", {x, w}, {f.string_attr("auto_pad", "VALID"), strides2})), (Shape{n, 8, 15, 16}));
  EXPECT_EQ(*f.shape(f.one("Conv", {x, w}, {Attribute::make_ints("dilations", {2, 3})})), (Shape{n, 8, 28, 27}));
  EXPECT_EQ(*f.shape(f.one("Conv", {x, w}, {Attribute::make_ints("kernel_shape", {3, 3}), Attribute::make_ints("pads", {0, 1, 2, 3})})),
            (Shape{n, 8, 32, 35}));
  ValueId depthwise = f.input("Wd", ElemType::Float, Shape{6, 1, 5, 5});
  EXPECT_EQ(*f.shape(f.one("Conv", {x, depthwise}, {Attribute::make_int("group", 3), strides2})), (Shape{n, 6, 14, 15}));
  ValueId x1 = f.input("X1", ElemType::Float, Shape{2, 4, 10});
  EXPECT_EQ(*f.shape(f.one("Conv", {x1, f.input("W1", ElemType::Float, Shape{6, 4, 3})}, {Attribute::make_ints("strides", {3})})),
            (Shape{2, 6, 3}));
  ValueId x3 = f.input("X3", ElemType::Float, Shape{1, 2, 5, 6, 7});
  EXPECT_EQ(*f.shape(f.one("Conv", {x3, f.input("W3", ElemType::Float, Shape{4, 2, 1, 2, 3})})), (Shape{1, 4, 5, 5, 5}));
  // Symbolic spatial sizes: kept where the window keeps them (stride 1, padding making up for the
  // kernel), spelled from them otherwise (ONNX leaves them unknown), so that two windows alike over
  // one input have one size.
  const Dim h = S("H"), wd = S("W");
  ValueId xs = f.input("XS", ElemType::Float, Shape{n, 3, h, wd});
  EXPECT_EQ(*f.shape(f.one("Conv", {xs, w}, {pads1})), (Shape{n, 8, h, wd}));
  EXPECT_EQ(*f.shape(f.one("Conv", {xs, w}, {f.string_attr("auto_pad", "SAME_UPPER")})), (Shape{n, 8, h, wd}));
  const Shape halved{n, 8, S("(H-1)//2+1"), S("(W-1)//2+1")};
  EXPECT_EQ(*f.shape(f.one("Conv", {xs, w}, {pads1, strides2})), halved);
  EXPECT_EQ(
      *f.shape(f.one("Conv", {xs, f.input("W2", ElemType::Float, Shape{8, 3, 3, 3})}, {pads1, strides2})),
      halved);
  EXPECT_EQ(*f.shape(f.one("Conv", {xs, w})), (Shape{n, 8, S("(H-3)+1"), S("(W-3)+1")}));
  ValueId xe = f.input("XE", ElemType::Float, Shape{n, 3, S("a+b"), 8});
  EXPECT_EQ(*f.shape(f.one("Conv", {xe, w}, {Attribute::make_ints("pads", {2, 1, 2, 1}), strides2})),
            (Shape{n, 8, S("((a+b)+1)//2+1"), 4}));
  // SAME's padding over a symbolic size depends on that size when there is a stride: unknown.
  EXPECT_EQ(*f.shape(f.one("Conv", {xs, w}, {f.string_attr("auto_pad", "SAME_UPPER"), strides2})),
            (Shape{n, 8, Dim(), Dim()}));
  EXPECT_GE(expect_as_onnx(f), 14);
}

TEST(InferConv, ConvTransposeAsOnnx) {
  Fixture f;
  f.opset = 17;
  const Dim n = S("N");
  ValueId x = f.input("X", ElemType::Float, Shape{n, 8, 10, 11});
  ValueId w = f.input("W", ElemType::Float, Shape{8, 4, 3, 3});
  const auto strides2 = Attribute::make_ints("strides", {2, 2});
  EXPECT_EQ(*f.shape(f.one("ConvTranspose", {x, w})), (Shape{n, 4, 12, 13}));
  EXPECT_EQ(*f.shape(f.one("ConvTranspose", {x, w}, {strides2, Attribute::make_ints("pads", {1, 1, 1, 1}),
                                                      Attribute::make_ints("output_padding", {1, 0})})),
            (Shape{n, 4, 20, 21}));
  EXPECT_EQ(*f.shape(f.one("ConvTranspose", {x, w}, {Attribute::make_int("group", 2), Attribute::make_ints("dilations", {2, 1})})),
            (Shape{n, 8, 14, 13}));
  EXPECT_EQ(*f.shape(f.one("ConvTranspose", {x, w}, {strides2, f.string_attr("auto_pad", "SAME_UPPER")})), (Shape{n, 4, 20, 22}));
  EXPECT_EQ(*f.shape(f.one("ConvTranspose", {x, w}, {strides2, Attribute::make_ints("output_shape", {21, 23})})),
            (Shape{n, 4, 21, 23}));
  ValueId xs = f.input("XS", ElemType::Float, Shape{n, 8, S("H"), 5});
  EXPECT_EQ(*f.shape(f.one("ConvTranspose", {xs, w}, {Attribute::make_ints("pads", {1, 1, 1, 1})})), (Shape{n, 4, S("H"), 5}));
  EXPECT_EQ(*f.shape(f.one("ConvTranspose", {xs, w}, {strides2})), (Shape{n, 4, Dim(), 11}));
  EXPECT_GE(expect_as_onnx(f), 7);
}

TEST(InferConv, PoolsAsOnnx) {
  Fixture f;
  f.opset = 17;
  const Dim n = S("N");
  ValueId x = f.input("X", ElemType::Float, Shape{n, 3, 32, 33});
  const auto k3 = Attribute::make_ints("kernel_shape", {3, 3});
  const auto strides2 = Attribute::make_ints("strides", {2, 2});
  auto max = f.node("MaxPool", {x}, 2, {k3, strides2, Attribute::make_ints("pads", {1, 1, 1, 1})});
  EXPECT_EQ(*f.shape(max[0]), (Shape{n, 3, 16, 17}));
  EXPECT_EQ(f.type(max[1]), ElemType::Int64);
  EXPECT_EQ(*f.shape(max[1]), (Shape{n, 3, 16, 17}));
  EXPECT_EQ(*f.shape(f.one("MaxPool", {x}, {k3, strides2})), (Shape{n, 3, 15, 16}));
  EXPECT_EQ(*f.shape(f.one("MaxPool", {x}, {k3, strides2, Attribute::make_int("ceil_mode", 1)})), (Shape{n, 3, 16, 16}));
  EXPECT_EQ(*f.shape(f.one("MaxPool", {x}, {k3, Attribute::make_ints("dilations", {2, 2})})), (Shape{n, 3, 28, 29}));
  EXPECT_EQ(*f.shape(f.one("AveragePool", {x}, {k3, strides2, f.string_attr("auto_pad", "SAME_UPPER")})), (Shape{n, 3, 16, 17}));
  EXPECT_EQ(*f.shape(f.one("AveragePool", {x}, {k3, strides2, f.string_attr("auto_pad", "SAME_LOWER"), Attribute::make_int("ceil_mode", 1)})),
            (Shape{n, 3, 16, 17}));
  EXPECT_EQ(*f.shape(f.one("AveragePool", {x}, {Attribute::make_ints("kernel_shape", {2, 2}), f.string_attr("auto_pad", "VALID")})),
            (Shape{n, 3, 31, 32}));
  EXPECT_EQ(*f.shape(f.one("LpPool", {x}, {Attribute::make_ints("kernel_shape", {2, 2}), strides2})), (Shape{n, 3, 16, 16}));
  EXPECT_EQ(*f.shape(f.one("GlobalAveragePool", {x})), (Shape{n, 3, 1, 1}));
  EXPECT_EQ(*f.shape(f.one("GlobalMaxPool", {f.input("X1", ElemType::Float, Shape{2, 5, 7})})), (Shape{2, 5, 1}));
  ValueId xs = f.input("XS", ElemType::Float, Shape{n, 3, S("H"), 8});
  EXPECT_EQ(*f.shape(f.one("MaxPool", {xs}, {k3, Attribute::make_ints("pads", {1, 1, 1, 1})})), (Shape{n, 3, S("H"), 8}));
  EXPECT_EQ(*f.shape(f.one("MaxPool", {xs}, {Attribute::make_ints("kernel_shape", {2, 2}), strides2})),
            (Shape{n, 3, S("(H-2)//2+1"), 4}));
  EXPECT_EQ(*f.shape(f.one("MaxPool", {xs},
                           {Attribute::make_ints("kernel_shape", {2, 2}), strides2,
                            Attribute::make_int("ceil_mode", 1)})),
            (Shape{n, 3, Dim(), 4}));
  EXPECT_GE(expect_as_onnx(f), 13);
}

TEST(InferConv, CeilModeDropsWindowsStartingInTheEndPadding) {
  // ONNX Runtime, torch and the current ONNX definition drop a last window that would start in the
  // end padding; libonnx 1.12's inference does not (it says 4 here).
  Fixture f;
  ValueId x = f.input("X", ElemType::Float, Shape{1, 1, 5, 6});
  EXPECT_EQ(*f.shape(f.one("MaxPool", {x}, {Attribute::make_ints("kernel_shape", {2, 2}), Attribute::make_ints("strides", {2, 2}),
                                          Attribute::make_ints("pads", {1, 1, 1, 1}), Attribute::make_int("ceil_mode", 1)})),
            (Shape{1, 1, 3, 4}));
}

TEST(InferConv, FusedConvFusedGemmAndBatchNormalization) {
  Fixture f;
  f.opset = 17;
  const Dim n = S("N");
  ValueId x = f.input("X", ElemType::Float, Shape{n, 3, 16, 16});
  ValueId w = f.input("W", ElemType::Float, Shape{8, 3, 3, 3});
  auto fused = f.node("FusedConv", {x, w, f.input("B", ElemType::Float, Shape{8})}, 1,
                      {Attribute::make_ints("pads", {1, 1, 1, 1}), f.string_attr("activation", "Relu")}, "com.microsoft");
  EXPECT_EQ(f.type(fused[0]), ElemType::Float);
  EXPECT_EQ(*f.shape(fused[0]), (Shape{n, 8, 16, 16}));
  auto gemm = f.node("FusedGemm", {f.input("A", ElemType::Float, Shape{n, 5}), f.input("G", ElemType::Float, Shape{7, 5})}, 1,
                     {Attribute::make_int("transB", 1), f.string_attr("activation", "LeakyRelu")}, "com.microsoft");
  EXPECT_EQ(f.type(gemm[0]), ElemType::Float);
  EXPECT_EQ(*f.shape(gemm[0]), (Shape{n, 7}));
  ValueId y = f.one("Conv", {x, w});
  ValueId c8 = f.input("scale", ElemType::Float, Shape{8});
  ValueId bn = f.one("BatchNormalization", {y, c8, c8, c8, c8});
  EXPECT_EQ(*f.shape(bn), (Shape{n, 8, 14, 14}));
  auto training = f.node("BatchNormalization", {y, c8, c8, c8, c8}, 3, {Attribute::make_int("training_mode", 1)});
  EXPECT_EQ(*f.shape(training[1]), (Shape{8}));
  EXPECT_EQ(*f.shape(training[2]), (Shape{8}));
  // A symbolic channel count meets the statistics' size.
  ValueId xc = f.input("XC", ElemType::Float, Shape{n, S("C"), 4});
  EXPECT_EQ(*f.shape(f.node("BatchNormalization", {xc, c8, c8, c8, c8}, 3, {Attribute::make_int("training_mode", 1)})[1]), (Shape{8}));
  EXPECT_EQ(f.state.constraints.value(Symbol("C")), 8);
  EXPECT_GE(expect_as_onnx(f), 8);
}

TEST(InferConv, RejectsBadRanksAndChannels) {
  Fixture f;
  ValueId x = f.input("X", ElemType::Float, Shape{S("N"), 4, 8, 8});
  ValueId w = f.input("W", ElemType::Float, Shape{8, 3, 3, 3});
  ValueId flat = f.input("flat", ElemType::Float, Shape{2, 4});
  expect_rejected([&] { f.one("Conv", {x, w}); }, "Conv", "W");
  expect_rejected([&] { f.one("Conv", {x, f.input("W2", ElemType::Float, Shape{8, 4, 3})}); }, "Conv", "W2");
  expect_rejected([&] { f.node("FusedConv", {x, w}, 1, {}, "com.microsoft"); }, "FusedConv", "W");
  expect_rejected([&] { f.one("Conv", {x, f.input("W4", ElemType::Float, Shape{8, 4, 3, 3}), f.input("B5", ElemType::Float, Shape{5})}); },
                  "Conv", "B5");
  expect_rejected([&] { f.one("ConvTranspose", {x, w}); }, "ConvTranspose", "W");
  expect_rejected([&] { f.one("MaxPool", {flat}, {Attribute::make_ints("kernel_shape", {2})}); }, "MaxPool", "flat");
  expect_rejected([&] { f.one("AveragePool", {x}, {Attribute::make_ints("kernel_shape", {9, 9})}); }, "AveragePool", "X");
  expect_rejected([&] { f.one("GlobalAveragePool", {flat}); }, "GlobalAveragePool", "flat");
  expect_rejected([&] { f.one("BatchNormalization", {x, w, w, w, w}); }, "BatchNormalization", "W");
  ValueId c5 = f.input("c5", ElemType::Float, Shape{5});
  expect_rejected([&] { f.one("BatchNormalization", {x, c5, c5, c5, c5}); }, "BatchNormalization", "c5");
}

TEST(InferResize, ScalesAndSizesAsOnnx) {
  Fixture f;
  f.opset = 13;
  const Dim n = S("N");
  ValueId x = f.input("X", ElemType::Float, Shape{n, 3, 20, 30});
  ValueId scales = f.init("scales", Tensor::from<float>({4}, {1.f, 1.f, 2.f, 1.5f}));
  EXPECT_EQ(*f.shape(f.one("Resize", {x, kNone, scales})), (Shape{n, 3, 40, 45}));
  ValueId odd = f.init("odd", Tensor::from<float>({4}, {1.f, 1.f, 0.33f, 1.f / 3.f}));
  EXPECT_EQ(*f.shape(f.one("Resize", {x, kNone, odd})), (Shape{n, 3, 6, 10}));
  ValueId sizes = f.ints("sizes", {1, 3, 7, 9});
  EXPECT_EQ(*f.shape(f.one("Resize", {x, kNone, kNone, sizes}, {f.string_attr("mode", "linear")})), (Shape{1, 3, 7, 9}));
  // sizes from another tensor's shape (paddle2onnx's upsampling to a skip connection's size)
  ValueId skip = f.input("skip", ElemType::Float, Shape{n, 3, S("H"), S("W")});
  ValueId target = f.one("Shape", {skip});
  EXPECT_EQ(*f.shape(f.one("Resize", {x, kNone, kNone, target})), (Shape{n, 3, S("H"), S("W")}));
  ValueId dynamic = f.input("dynamic_scales", ElemType::Float, Shape{4});
  EXPECT_EQ(*f.shape(f.one("Resize", {x, kNone, dynamic})), (Shape{Dim(), Dim(), Dim(), Dim()}));
  EXPECT_GE(expect_as_onnx(f), 5);
  Fixture v10;
  v10.opset = 10;
  ValueId x10 = v10.input("X", ElemType::Float, Shape{2, 3, 5, 5});
  EXPECT_EQ(*v10.shape(v10.one("Resize", {x10, v10.init("s", Tensor::from<float>({4}, {1.f, 1.f, 2.5f, 0.5f}))})), (Shape{2, 3, 12, 2}));
  EXPECT_EQ(expect_as_onnx(v10), 1);
}

TEST(InferResize, AxesAndKeepAspectRatioOpset18) {
  Fixture f;
  const Dim n = S("N");
  ValueId x = f.input("X", ElemType::Float, Shape{n, 3, 20, 30});
  const auto axes = Attribute::make_ints("axes", {2, -1});
  ValueId sizes = f.ints("sizes", {40, 40});
  EXPECT_EQ(*f.shape(f.one("Resize", {x, kNone, kNone, sizes}, {axes})), (Shape{n, 3, 40, 40}));
  EXPECT_EQ(*f.shape(f.one("Resize", {x, kNone, kNone, sizes}, {axes, f.string_attr("keep_aspect_ratio_policy", "not_larger")})),
            (Shape{n, 3, 27, 40}));
  EXPECT_EQ(*f.shape(f.one("Resize", {x, kNone, kNone, sizes}, {axes, f.string_attr("keep_aspect_ratio_policy", "not_smaller")})),
            (Shape{n, 3, 40, 60}));
  ValueId scales = f.init("scales", Tensor::from<float>({2}, {2.f, 0.5f}));
  EXPECT_EQ(*f.shape(f.one("Resize", {x, kNone, scales}, {axes})), (Shape{n, 3, 40, 15}));
  expect_rejected([&] { f.one("Resize", {x, kNone, f.init("three", Tensor::from<float>({3}, {1.f, 2.f, 2.f}))}); }, "Resize", "three");
}

TEST(InferPad, PadsAndAxes) {
  Fixture f;
  f.opset = 13;
  const Dim n = S("N");
  ValueId x = f.input("X", ElemType::Float, Shape{n, 3, 10, S("W")});
  EXPECT_EQ(*f.shape(f.one("Pad", {x, f.ints("pads", {0, 0, 1, 0, 0, 0, 3, 0})})), (Shape{n, 3, 14, S("W")}));
  EXPECT_EQ(*f.shape(f.one("Pad", {x, f.ints("pads2", {0, 1, 1, 2, 0, 1, 3, 4})})), (Shape{n, 5, 14, Dim()}));
  EXPECT_EQ(*f.shape(f.one("Pad", {x, f.ints("crop", {0, 0, -2, 0, 0, 0, -3, 0})})), (Shape{n, 3, 5, S("W")}));
  EXPECT_EQ(expect_as_onnx(f), 3);
  expect_rejected([&] { f.one("Pad", {x, f.ints("short", {1, 1})}); }, "Pad", "short");
  f.opset = 18;
  EXPECT_EQ(*f.shape(f.one("Pad", {x, f.ints("pads3", {1, 2, 3, 4}), kNone, f.ints("axes", {2, -1})})), (Shape{n, 3, 14, Dim()}));
  EXPECT_EQ(*f.shape(f.one("Pad", {x, f.ints("pads4", {1, 2}), kNone, f.ints("axes2", {1})})), (Shape{n, 6, 10, S("W")}));
}

TEST(InferTopK, ConstantOrSymbolicK) {
  Fixture f;
  f.opset = 13;
  const Dim n = S("N");
  ValueId x = f.input("X", ElemType::Float, Shape{n, 100});
  auto top = f.node("TopK", {x, f.ints("k", {5})}, 2);
  EXPECT_EQ(*f.shape(top[0]), (Shape{n, 5}));
  EXPECT_EQ(f.type(top[1]), ElemType::Int64);
  EXPECT_EQ(*f.shape(top[1]), (Shape{n, 5}));
  auto first = f.node("TopK", {x, f.ints("k1", {1})}, 2, {Attribute::make_int("axis", 0)});
  EXPECT_EQ(*f.shape(first[0]), (Shape{1, 100}));
  // k read from a shape: the symbol it holds
  ValueId k = f.one("Shape", {f.input("Z", ElemType::Float, Shape{S("k")})});
  EXPECT_EQ(*f.shape(f.node("TopK", {x, k}, 2)[0]), (Shape{n, S("k")}));
  ValueId nonzero = f.one("NonZero", {x});
  EXPECT_EQ(f.type(nonzero), ElemType::Int64);
  EXPECT_EQ(*f.shape(nonzero), (Shape{2, Dim::symbolic("NonZero_" + f.g.value(nonzero).name)}));
  EXPECT_GE(expect_as_onnx(f), 8);
  expect_rejected([&] { f.node("TopK", {x, f.ints("k200", {200})}, 2); }, "TopK", "X");
  Fixture v9;
  v9.opset = 9;
  auto old = v9.node("TopK", {v9.input("X", ElemType::Float, Shape{4, 6})}, 2, {Attribute::make_int("k", 3)});
  EXPECT_EQ(*v9.shape(old[0]), (Shape{4, 3}));
  EXPECT_EQ(expect_as_onnx(v9), 2);
}

// A loss is one value, or one per target with reduction 'none' (symbols kept); SoftmaxCrossEntropyLoss's
// log_prob has the scores' shape.
TEST(InferLoss, ReductionAndLogProb) {
  Fixture f;
  f.opset = 13;
  ValueId scores = f.input("scores", ElemType::Float, Shape{S("n"), 5, S("d")});
  ValueId labels = f.input("labels", ElemType::Int64, Shape{S("n"), S("d")});
  const ValueId mean = f.one("NegativeLogLikelihoodLoss", {scores, labels});
  EXPECT_EQ(f.type(mean), ElemType::Float);
  EXPECT_EQ(*f.shape(mean), Shape{});
  const ValueId none =
      f.one("NegativeLogLikelihoodLoss", {scores, labels}, {Attribute::make_string("reduction", "none")});
  EXPECT_EQ(*f.shape(none), (Shape{S("n"), S("d")}));
  const std::vector<ValueId> sce =
      f.node("SoftmaxCrossEntropyLoss", {scores, labels}, 2, {Attribute::make_string("reduction", "sum")});
  EXPECT_EQ(*f.shape(sce[0]), Shape{});
  EXPECT_EQ(f.type(sce[1]), ElemType::Float);
  EXPECT_EQ(*f.shape(sce[1]), (Shape{S("n"), 5, S("d")}));
}

TEST(InferRnn, LstmGruRnnOutputsAsOnnx) {
  Fixture f;
  f.opset = 14;
  const Dim n = S("N"), seq = S("seq");
  ValueId x = f.input("X", ElemType::Float, Shape{seq, n, 10});
  auto lstm = f.node("LSTM", {x, f.input("Wl", ElemType::Float, Shape{1, 80, 10}), f.input("Rl", ElemType::Float, Shape{1, 80, 20})}, 3,
                     {Attribute::make_int("hidden_size", 20)});
  EXPECT_EQ(*f.shape(lstm[0]), (Shape{seq, 1, n, 20}));
  EXPECT_EQ(*f.shape(lstm[1]), (Shape{1, n, 20}));
  EXPECT_EQ(*f.shape(lstm[2]), (Shape{1, n, 20}));
  ValueId xb = f.input("XB", ElemType::Float, Shape{n, seq, 10});
  auto gru = f.node("GRU", {xb, f.input("Wg", ElemType::Float, Shape{2, 60, 10}), f.input("Rg", ElemType::Float, Shape{2, 60, 20})}, 2,
                    {Attribute::make_int("hidden_size", 20), f.string_attr("direction", "bidirectional"), Attribute::make_int("layout", 1)});
  EXPECT_EQ(*f.shape(gru[0]), (Shape{n, seq, 2, 20}));
  EXPECT_EQ(*f.shape(gru[1]), (Shape{n, 2, 20}));
  // hidden_size absent: R's last axis tells it (ONNX leaves it unknown)
  auto rnn = f.node("RNN", {x, f.input("Wr", ElemType::Float, Shape{1, 16, 10}), f.input("Rr", ElemType::Float, Shape{1, 16, 16})}, 2,
                    {f.string_attr("direction", "reverse")});
  EXPECT_EQ(*f.shape(rnn[0]), (Shape{seq, 1, n, 16}));
  EXPECT_EQ(*f.shape(rnn[1]), (Shape{1, n, 16}));
  EXPECT_EQ(expect_as_onnx(f), 7);
  expect_rejected([&] { f.node("LSTM", {x, f.input("W12", ElemType::Float, Shape{1, 80, 12}), f.input("R", ElemType::Float, Shape{1, 80, 20})}, 3); },
                  "LSTM", "W12");
  expect_rejected([&] { f.node("GRU", {f.input("X2", ElemType::Float, Shape{4, 10}), f.input("W", ElemType::Float, Shape{1, 60, 10})}, 2); },
                  "GRU", "X2");
}

TEST(InferConv, CeilModePoolOnLoadWhereLibonnxDisagrees) {
  // Types on load run ONNX's inference after ours: its older ceil_mode size must not turn into a
  // contradiction for a node our rules type.
  Model m;
  OpsetImport onnx_domain;
  onnx_domain.version = 17;
  m.opsets.push_back(onnx_domain);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{S("N"), 1, 5, 6});
  ValueId pooled = g.add_value("pooled"), y = g.add_value("Y");
  g.add_node("MaxPool", {x}, {pooled},
             {Attribute::make_ints("kernel_shape", {2, 2}), Attribute::make_ints("strides", {2, 2}),
              Attribute::make_ints("pads", {1, 1, 1, 1}), Attribute::make_int("ceil_mode", 1)},
             "pool");
  g.add_node("Relu", {pooled}, {y}, {}, "relu");
  g.add_output(y);
  infer::infer_model_types(m);
  EXPECT_EQ(*g.value(y).shape, (Shape{S("N"), 1, 3, 4}));
}
