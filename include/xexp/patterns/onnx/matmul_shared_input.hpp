#pragma once
// MatMulSharedInput: three or more products of one input by constant weights with as many rows (the
// query, key and value projections of one hidden state) are one product by those weights side by side,
// whose columns a Split hands back: two nodes instead of three or more, the layout of ONNX Runtime's
// packed QKV weights. ONNX Runtime 1.30's CPU provider runs both forms in the same time (bench/README.md).
// Two products (an MLP's gate and up) are left: as many nodes, and the Split's copy. The products are
// MatMuls by 2-D weights, or Gemms as exporters write a Linear on 2-D rows (transA=0, alpha=1, the same
// transB, each with a 1-D bias or none), whose biases join too. Each weight and bias must be read by its
// product only, so that no copy of it stays. The rule runs last (priority 4): the fusions that read a
// projection as MatMul then Add, Mul or Transpose have fused first.
#include <optional>
#include <utility>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace matmul {
// A product of the shared input: its constant weight, its bias (Gemm's C, or null), its columns.
struct Product {
  const Tensor* weight = nullptr;
  const Tensor* bias = nullptr;
  int64_t columns = 0;
};
// What products must share to be joined: the op, Gemm's transB, whether they have a bias, the weights'
// rows and type.
struct ProductKind {
  Symbol op;
  int64_t trans_b = 0;
  bool biased = false;
  int64_t rows = 0;
  ElemType type = ElemType::Undefined;
  bool operator==(const ProductKind&) const = default;
};

inline const Tensor* only_read_constant(const ir::Graph& g, ir::ValueId v) {
  return g.value(v).uses.size() == 1 ? rewrite::constant_tensor(g, v) : nullptr;
}

// The product node `id` as a joinable product, and its kind; nullopt for anything else.
inline std::optional<std::pair<Product, ProductKind>> product_of(const ir::Graph& g, ir::NodeId id) {
  const ir::Node& n = g.node(id);
  if (!n.domain.empty() || n.inputs.size() < 2) return std::nullopt;
  const bool gemm = n.op_type == Symbol("Gemm");
  if (!gemm && (n.op_type != Symbol("MatMul") || n.inputs.size() != 2)) return std::nullopt;
  const Tensor* w = only_read_constant(g, n.inputs[1]);
  if (!w || w->dims().size() != 2) return std::nullopt;
  ProductKind kind;
  kind.op = n.op_type;
  kind.type = w->type();
  Product p;
  p.weight = w;
  if (gemm) {
    const ir::Attribute* alpha = n.attribute(Symbol("alpha"));
    const ir::Attribute* beta = n.attribute(Symbol("beta"));
    if (int_attribute(n, "transA", 0) != 0 || (alpha && alpha->f != 1.f) || (beta && beta->f != 1.f))
      return std::nullopt;
    kind.trans_b = int_attribute(n, "transB", 0);
    if (n.inputs.size() > 2 && n.inputs[2] != ir::kNone) {
      p.bias = only_read_constant(g, n.inputs[2]);
      kind.biased = true;
    }
  }
  kind.rows = w->dims()[kind.trans_b ? 1 : 0];
  p.columns = w->dims()[kind.trans_b ? 0 : 1];
  if (kind.biased && (!p.bias || p.bias->dims() != std::vector<int64_t>{p.columns})) return std::nullopt;
  return std::pair{p, kind};
}

// The products of the kind of the root reading its first input, in its readers' order; empty unless
// there are three or more (sibling_readers).
struct SharedInputProducts {
  std::vector<ir::NodeId> readers;
  std::vector<Product> products;
  ProductKind kind;
};
inline SharedInputProducts shared_input_products(const ValueView& root) {
  const ir::Graph& g = *root.graph;
  const ir::NodeId root_id = root.value().producer;
  const auto root_product = product_of(g, root_id);
  if (!root_product) return {};
  SharedInputProducts out;
  out.kind = root_product->second;
  // sibling_readers lists the readers it accepts in the order it asks: products[k] is readers[k]'s.
  out.readers = sibling_readers(g, root_id, [&](ir::NodeId id) {
    const auto p = product_of(g, id);
    if (!p || !(p->second == out.kind)) return false;
    out.products.push_back(p->first);
    return true;
  });
  if (out.readers.size() < 3) return {};
  return out;
}
inline constexpr auto products_reading = rewrite::fact<"products_reading">(shared_input_products);
inline constexpr auto products_share_the_input = rewrite::fact<"products_share_the_input">(
    [](const SharedInputProducts& shared) { return !shared.readers.empty(); });

inline std::optional<ir::ValueId> one_product_split(rewrite::Rewriter& r, const ValueView& root,
                                                    const SharedInputProducts& shared) {
  std::vector<int64_t> columns;
  std::vector<const Tensor*> weights, biases;
  for (const Product& p : shared.products) {
    columns.push_back(p.columns);
    weights.push_back(p.weight);
    biases.push_back(p.bias);
  }
  const ir::NodeId root_id = root.value().producer;
  const ir::ValueId x = r.graph().node(root_id).inputs[0];
  std::vector<ir::Attribute> attributes = r.graph().node(root_id).attributes;  // Gemm's transB
  std::vector<ir::ValueId> inputs{x, r.initializer(concatenated(weights, shared.kind.trans_b ? 0 : 1))};
  if (shared.kind.biased) inputs.push_back(r.initializer(concatenated(biases, 0)));
  const ir::ValueId product = r.node(shared.kind.op, std::move(inputs), std::move(attributes));
  const ir::ValueId first = r.node(
      Symbol("Split"), {product},
      {ir::Attribute::make_int(Symbol("axis"), -1), ir::Attribute::make_ints(Symbol("split"), columns)}, {},
      columns.size());
  return replace_readers(r, root_id, shared.readers, r.graph().node(r.graph().value(first).producer).outputs);
}
}  // namespace matmul

inline rewrite::RulePtr matmul_shared_input_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'w'> w;
  auto root = named<'r'>(either(MatMul(x, w), Gemm(x, w, etc)));
  auto products = keep<'p'>(matmul::products_reading(root));
  // replace_with: the Split's outputs replace the other products too, a list the DSL cannot replace.
  return rule("MatMulSharedInput")
      .priority(4)
      .match(root)
      .when(matmul::products_share_the_input(products))
      .to(replace_with("one_product_split", matmul::one_product_split, root, products));
}

}  // namespace xexp::patterns
