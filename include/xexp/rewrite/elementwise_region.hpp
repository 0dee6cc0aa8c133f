#pragma once
// An elementwise region: the nodes computing a value from one varying input and scalar constants, such as
// the eight nodes of a tanh Gelu from x. `computes` (computes.hpp) evaluates a region on probe points to
// recognize the function it computes, however it is spelled.
//
// From a root node, the region of input x holds every node on the paths from x to the root: elementwise
// math of one output in the main domain (region_ops), whose other inputs are constants of one element,
// no wider than x so that the output keeps x's shape. The nodes inside it must be read only inside it
// (the root's output goes on). Several inputs may fit one root: in y = gelu(0.5 * h), the region of h
// holds the Mul by 0.5 and that of 0.5 * h does not; regions_at lists them largest first.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "xexp/eval/evaluate_op.hpp"
#include "xexp/rewrite/match.hpp"

namespace xexp::rewrite {

// Largest region looked at: a Gelu written out is 8 nodes, Mish 5.
inline constexpr std::size_t kMaxRegionNodes = 16;

// The ops a region may hold: arithmetic, the unary functions activations are written with, the clamps,
// and the comparisons and Where of piecewise ones (LeakyRelu, Elu).
inline bool is_region_op(const ir::Node& n) {
  static const std::vector<Symbol> ops = [] {
    std::vector<Symbol> out;
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Tanh", "Erf", "Sigmoid",
                           "Softplus", "HardSigmoid", "Relu", "Abs", "Neg", "Reciprocal", "Max", "Min", "Clip",
                           "Where", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"})
      out.emplace_back(op);
    return out;
  }();
  return n.domain.empty() && n.outputs.size() == 1 && std::find(ops.begin(), ops.end(), n.op_type) != ops.end();
}

inline bool is_region_float(ElemType t) {
  return t == ElemType::Float || t == ElemType::Float16 || t == ElemType::BFloat16 || t == ElemType::Double;
}

struct ElementwiseRegion {
  ir::ValueId input = ir::kNone;       // the one varying value
  std::vector<ir::NodeId> nodes;       // the root first
  std::vector<ir::ValueId> constants;  // the constants it reads, each once
  ElemType type = ElemType::Undefined;  // x's
};

namespace detail {

// A constant a region may read: one element of a number type, of a rank x's output keeps.
inline bool fits_region_constant(const ir::Graph& g, ir::ValueId v, ir::ValueId x) {
  const Tensor* t = constant_tensor(g, v);
  if (!t || t->size() != 1 || t->type() == ElemType::String) return false;
  const std::optional<Shape>& x_shape = g.value(x).shape;
  return t->dims().empty() || (x_shape && t->dims().size() <= x_shape->size());
}

// The region of input x at root, or a reason why there is none and how many nodes it reached.
inline std::optional<ElementwiseRegion> region_of(const ir::Graph& g, ir::NodeId root, ir::ValueId x,
                                                  std::string* why, std::size_t* reached) {
  ElementwiseRegion r{.input = x, .nodes = {}, .constants = {}, .type = g.value(x).elem};
  auto fail = [&](std::string reason) -> std::optional<ElementwiseRegion> {
    *why = std::move(reason);
    *reached = r.nodes.size();
    return std::nullopt;
  };
  if (!is_region_float(r.type)) return fail("its input is not of a float type");
  std::vector<ir::NodeId> pending{root};
  while (!pending.empty()) {
    const ir::NodeId id = pending.back();
    pending.pop_back();
    if (std::find(r.nodes.begin(), r.nodes.end(), id) != r.nodes.end()) continue;
    const ir::Node& n = g.node(id);
    if (!is_region_op(n)) return fail(n.op_type.str() + " '" + n.name + "' is not elementwise math");
    const ElemType out = g.value(n.outputs[0]).elem;
    if (out != r.type && out != ElemType::Bool) return fail("'" + n.name + "' changes the element type");
    if (r.nodes.size() == kMaxRegionNodes) return fail("more than 16 nodes");
    r.nodes.push_back(id);
    for (ir::ValueId v : n.inputs) {
      if (v == x || v == ir::kNone) continue;
      if (constant_tensor(g, v)) {
        if (!fits_region_constant(g, v, x)) return fail("'" + g.value(v).name + "' is not a scalar constant");
        if (std::find(r.constants.begin(), r.constants.end(), v) == r.constants.end()) r.constants.push_back(v);
        continue;
      }
      const ir::Value& value = g.value(v);
      if (value.producer == ir::kNone) return fail("it reads a second varying value, '" + value.name + "'");
      pending.push_back(value.producer);
    }
  }
  for (std::size_t k = 1; k < r.nodes.size(); ++k) {
    const ir::Value& inner = g.value(g.node(r.nodes[k]).outputs[0]);
    bool inside = !inner.is_graph_output();
    for (const ir::Use& u : inner.uses)
      inside = inside && std::find(r.nodes.begin(), r.nodes.end(), u.node) != r.nodes.end();
    if (!inside) return fail("'" + inner.name + "' is also read outside");
  }
  return r;
}

}  // namespace detail

// The regions at `root` of two nodes or more, largest first: one for each value the root's elementwise
// producers read that could be the one varying input. `why` gets why the candidate that went furthest is none.
inline std::vector<ElementwiseRegion> regions_at(const ir::Graph& g, ir::NodeId root, std::string* why = nullptr) {
  std::vector<ElementwiseRegion> out;
  // A region of one node is an op already: the root must read an elementwise producer (most nodes do
  // not, and cost nothing more).
  const ir::Node& n = g.node(root);
  auto elementwise_producer = [&g](ir::ValueId v) {
    return v != ir::kNone && g.value(v).producer != ir::kNone && is_region_op(g.node(g.value(v).producer));
  };
  if (!is_region_op(n) || std::none_of(n.inputs.begin(), n.inputs.end(), elementwise_producer)) return out;
  // The candidates, in breadth-first order from the root: the values read by the elementwise nodes
  // reachable from it (as many as a region may hold).
  std::vector<ir::NodeId> walked{root};
  std::vector<ir::ValueId> candidates;
  for (std::size_t k = 0; k < walked.size(); ++k)
    for (ir::ValueId v : g.node(walked[k]).inputs) {
      if (v == ir::kNone || constant_tensor(g, v) ||
          std::find(candidates.begin(), candidates.end(), v) != candidates.end())
        continue;
      candidates.push_back(v);
      const ir::NodeId p = g.value(v).producer;
      if (p != ir::kNone && walked.size() < kMaxRegionNodes && is_region_op(g.node(p)) &&
          std::find(walked.begin(), walked.end(), p) == walked.end())
        walked.push_back(p);
    }
  std::size_t furthest = 0;
  for (auto c = candidates.rbegin(); c != candidates.rend(); ++c) {
    std::string reason;
    std::size_t reached = 0;
    if (std::optional<ElementwiseRegion> r = detail::region_of(g, root, *c, &reason, &reached)) {
      if (r->nodes.size() > 1) out.push_back(std::move(*r));
    } else if (why && (why->empty() || reached > furthest)) {
      *why = std::move(reason);
      furthest = reached;
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const ElementwiseRegion& a, const ElementwiseRegion& b) {
    return a.nodes.size() > b.nodes.size();
  });
  return out;
}

// What the function of a region depends on, as bytes: its type, then each node's op, attributes and
// inputs (x, a constant's value, or the index of the region node producing it). Two regions with one key
// compute the same function, in any graph: the key memoizes what computes() finds (the 28 HardSwish of
// an OCR model are evaluated once).
inline std::string region_key(const ir::Graph& g, const ElementwiseRegion& r) {
  std::string key;
  auto put = [&key](const auto& v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(r.type);
  for (ir::NodeId id : r.nodes) {
    const ir::Node& n = g.node(id);
    put(n.op_type.id());
    for (const ir::Attribute& a : n.attributes) {
      put(a.name.id());
      put(a.type);
      put(a.i);
      put(a.f);
      key += a.s;
      for (int64_t v : a.ints) put(v);
      for (float v : a.floats) put(v);
    }
    key += '|';
    for (ir::ValueId v : n.inputs) {
      if (v == r.input) {
        key += 'x';
      } else if (const Tensor* t = v == ir::kNone ? nullptr : constant_tensor(g, v)) {
        key += 'c';
        put(t->type());
        put(eval::scalar_double(*t));
      } else if (v == ir::kNone) {
        key += '-';
      } else {
        key += 'n';
        put(static_cast<uint8_t>(std::find(r.nodes.begin(), r.nodes.end(), g.value(v).producer) - r.nodes.begin()));
      }
    }
    key += ';';
  }
  return key;
}

// The numbers a region holds that an exporter may have rounded to its type: its constants, then the
// float attributes of its nodes (HardSigmoid's alpha), in that order.
inline std::size_t region_numbers(const ir::Graph& g, const ElementwiseRegion& r) {
  std::size_t count = r.constants.size();
  for (ir::NodeId id : r.nodes)
    for (const ir::Attribute& a : g.node(id).attributes) count += a.type == ir::AttrType::Float;
  return count;
}

// What a region computes at each point of `xs` (values of the region's type), evaluated in double with
// its numbers as stored (so that the comparison sees the function, not the type's rounding inside it),
// and the largest magnitude x and the intermediates reach at each point (the scale of double's own
// rounding there). `scaled` (an index of region_numbers) moves one number, a constant by `factor`, a
// float attribute by one ulp: how much its rounding moves the output.
struct RegionValues {
  std::vector<double> y, magnitude;
};
inline RegionValues evaluate_region(const ir::Graph& g, const ElementwiseRegion& r, const std::vector<double>& xs,
                                    int64_t opset, std::size_t scaled = SIZE_MAX, double factor = 1) {
  const auto n = static_cast<int64_t>(xs.size());
  std::vector<std::pair<ir::ValueId, Tensor>> known;
  known.reserve(1 + r.constants.size() + r.nodes.size());  // evaluate returns references into it
  known.emplace_back(r.input, Tensor::from<double>({n}, xs));
  RegionValues out{std::vector<double>(xs.size()), std::vector<double>(xs.size(), 0.0)};
  for (std::size_t k = 0; k < xs.size(); ++k)
    if (std::isfinite(xs[k])) out.magnitude[k] = std::abs(xs[k]);
  auto find = [&](ir::ValueId v) -> const Tensor* {
    for (const auto& [id, t] : known)
      if (id == v) return &t;
    return nullptr;
  };
  std::size_t number = 0;
  for (ir::ValueId c : r.constants) {
    const double v = eval::scalar_double(*constant_tensor(g, c));
    known.emplace_back(c, Tensor::scalar<double>(number++ == scaled ? v * factor : v));
  }
  // The float attributes are numbered in the order of r.nodes.
  std::vector<std::size_t> first_attribute;
  for (ir::NodeId id : r.nodes) {
    first_attribute.push_back(number);
    for (const ir::Attribute& a : g.node(id).attributes) number += a.type == ir::AttrType::Float;
  }
  // Each node after its producers (a node read by two others was collected before one of them).
  auto evaluate = [&](auto& self, ir::ValueId v) -> const Tensor& {
    if (const Tensor* t = find(v)) return *t;
    const ir::Node& node = g.node(g.value(v).producer);
    std::vector<std::optional<Tensor>> inputs;
    for (ir::ValueId in : node.inputs)
      inputs.push_back(in == ir::kNone ? std::nullopt : std::optional<Tensor>(self(self, in)));
    const std::size_t at = std::find(r.nodes.begin(), r.nodes.end(), g.value(v).producer) - r.nodes.begin();
    std::vector<ir::Attribute> attributes = node.attributes;
    for (std::size_t k = 0, number_of = first_attribute[at]; k < attributes.size(); ++k)
      if (attributes[k].type == ir::AttrType::Float && number_of++ == scaled)
        attributes[k].f = std::nextafter(attributes[k].f, std::numeric_limits<float>::infinity());
    Tensor result = eval::evaluate_op(node.op_type, node.domain, inputs, attributes, opset, 1)[0];
    if (result.type() == ElemType::Double) {
      result = eval::expand_to(result, {n});
      auto values = result.data<double>();
      for (std::size_t k = 0; k < xs.size(); ++k) out.magnitude[k] = std::max(out.magnitude[k], std::abs(values[k]));
    }
    known.emplace_back(v, std::move(result));
    return known.back().second;
  };
  const Tensor root = evaluate(evaluate, g.node(r.nodes[0]).outputs[0]);
  eval::copy_as_doubles(eval::expand_to(root, {n}), 0, out.y);
  return out;
}

}  // namespace xexp::rewrite
