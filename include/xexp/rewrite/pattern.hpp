#pragma once
// The left side of a rule, as compile-time matchers (after Halide's IRMatch and LLVM's PatternMatch):
//   Var<'x'>             any value                         Const<'c'>    a constant value (binds its tensor)
//   Pow(x, 2.0)          a number: a one-element constant equal to it
//   Int<'t'> Ints<'p'>   attribute captures (also Float, Str; read through schema defaults and opset
//                        adapters, see attributes.hpp)
//   op<"MatMul">(a, b, attr<"transA"> = 0)                  a node; `ops.hpp` names every ONNX op
//   op<"Add|Sub|Mul|Div">(a, b)                             one op of a family
//   op<"Concat">(x, etc)                                    any further inputs (none, one or many)
//   commutative(Add(x, y))   either order of the inputs      shared(n)   n may have other consumers
//   named<'d'>(Sub(x, m))    a DAG node: later uses of `d` compare identity; it prints as d, and
//                            the rule once as "where d = Sub(x, m)"
//   through<"what", skip>(p) p, or p inside a wrapper `skip` finds in the graph
// The same capture used twice means the same value. Whether a capture is bound is the `Bound` template
// argument of every matcher: the first occurrence binds, the later ones compare, no runtime flags.
// Matching backtracks: every matcher takes the rest of the match as a continuation, so that a
// commutative node tries its second order when anything after it fails (a sibling, the condition).
// Each pattern is also a replacement: a node pattern on the right side builds the node; replacement.hpp
// has what only a right side says (fold, choose, rebuild, let, several outputs).
#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "xexp/eval/tensor_util.hpp"
#include "xexp/rewrite/attributes.hpp"
#include "xexp/rewrite/expr.hpp"
#include "xexp/rewrite/fixed_string.hpp"
#include "xexp/rewrite/rewriter.hpp"

namespace xexp::rewrite {

// How `xexp optimize --explain` names a value: 'name' and where it comes from.
inline std::string value_label(const ir::Graph& g, ir::ValueId v) {
  if (v == ir::kNone) return "an omitted input";
  const ir::Value& value = g.value(v);
  std::string out = "'" + value.name + "'";
  if (value.initializer) return out + " (an initializer)";
  if (value.producer == ir::kNone) return out + " (a graph input)";
  const ir::Node& n = g.node(value.producer);
  out += " (";
  if (value.output_index != 0) out += "output " + std::to_string(value.output_index) + " of ";
  return out + n.op_type.str() + " '" + n.name + "')";
}
// The pattern as a failure reason shows it: named sub-patterns by their names (the catalogue, `xexp
// patterns`, defines them), and the arguments of calls nested more than two deep elided, as in
// "Transpose(MatMul(Softmax(...), v), perm=[0,2,1,3])", so that a big rule's reason stays one short line.
template <class P>
std::string printed(const P& p) {
  constexpr int kShownDepth = 2;
  Printer full;
  p.print(full);
  std::string out;
  int depth = 0;
  for (char c : full.text) {
    if (c == '(') {
      out += depth < kShownDepth ? "(" : depth == kShownDepth ? "(..." : "";
      ++depth;
    } else if (c == ')') {
      if (--depth <= kShownDepth) out += c;
    } else if (depth <= kShownDepth) {
      out += c;
    }
  }
  return out;
}

// ---- value captures ---------------------------------------------------------------------------------
enum class ValueKind { Any, Constant, Optional };

// Why capture `id` failed, e.g. "x: 'a' (a graph input) is not a constant". Kept out of line: g++ 12
// -O3 warns falsely (-Warray-bounds) on string temporaries joined inside the deeply inlined matchers.
[[gnu::noinline]] inline std::string capture_reason(char id, const std::string& label, const char* what) {
  std::string out(1, id);
  out += ": ";
  out += label;
  if (!label.empty()) out += ' ';
  out += what;
  return out;
}

template <char Id, ValueKind Kind>
struct ValueCapture : ExprTag {
  static constexpr CaptureMask binds = capture_bit<Id>, uses = capture_bit<Id>;
  static constexpr int depth = 0, node_count = 0;
  static constexpr int index = capture_index<Id>();
  static constexpr bool optional = Kind == ValueKind::Optional;
  static constexpr bool RequireConstant = Kind == ValueKind::Constant;
  static constexpr CaptureKinds kinds = one_kind < Id, Kind == ValueKind::Any ? CaptureKind::Value
                                                       : Kind == ValueKind::Constant
                                                           ? CaptureKind::Constant
                                                           : CaptureKind::Optional > ();

  template <CaptureMask Bound, class K>
  bool match(ir::ValueId v, Match& m, const K& k) const {
    if constexpr (Bound & binds) {
      if (m.values[index] == v) return k();
      if (m.explaining()) [[unlikely]]
        m.failed(m.mark(), [&] {
          return capture_reason(Id, value_label(m.graph(), v), "is not the same value");
        });
      return false;
    } else {
      if (v == ir::kNone && !optional) {
        if (m.explaining()) [[unlikely]]
          m.failed(m.mark(), [&] { return capture_reason(Id, {}, "the input is omitted"); });
        return false;
      }
      if constexpr (RequireConstant)
        if (!constant_tensor(m.graph(), v)) {
          if (m.explaining()) [[unlikely]]
            m.failed(m.mark(), [&] {
              return capture_reason(Id, value_label(m.graph(), v), "is not a constant");
            });
          return false;
        }
      m.values[index] = v;
      return k();
    }
  }
  // In conditions: a view of the value, or the tensor of a constant.
  decltype(auto) eval(const Match& m) const {
    if constexpr (RequireConstant)
      return (*constant_tensor(m.graph(), m.values[index]));
    else
      return ValueView{&m.graph(), m.values[index]};
  }
  ir::ValueId build(Rewriter& r) const { return r.match().values[index]; }
  void print(Printer& out) const { out += Id; }
};
template <char Id>
using Var = ValueCapture<Id, ValueKind::Any>;
template <char Id>
using Const = ValueCapture<Id, ValueKind::Constant>;
// An optional input: binds ir::kNone when the node omits it (test it with `present(c)`); a replacement
// passes it on as it is.
template <char Id>
using Opt = ValueCapture<Id, ValueKind::Optional>;

// A number among a node's inputs, Pow(x, 2.0): a constant of one element (any shape, any numeric type)
// equal to it, read as ONNX's evaluator reads it (as a double).
struct NumberInput : ExprTag {
  double value;
  static constexpr CaptureMask binds = 0, uses = 0;
  static constexpr int depth = 0, node_count = 0;
  template <CaptureMask Bound, class K>
  bool match(ir::ValueId v, Match& m, const K& k) const {
    const Tensor* t = constant_tensor(m.graph(), v);
    if (t && t->size() == 1 && t->type() != ElemType::String && eval::element_as_double(*t, 0) == value)
      return k();
    if (m.explaining()) [[unlikely]]
      m.failed(m.mark(), [&] {
        std::string number;
        print_value(number, value);
        return value_label(m.graph(), v) + " is not the number " + number;
      });
    return false;
  }
  void print(Printer& out) const { print_value(out.text, value); }
};

// Inputs a node must have: those before the trailing optional ones.
template <class L>
constexpr std::size_t required_inputs() {
  if constexpr (L::size == 0)
    return 0;
  else {
    using Head = decltype(L::head);
    constexpr std::size_t rest = required_inputs<decltype(L::tail)>();
    if constexpr (requires { Head::optional; })
      if constexpr (Head::optional && rest == 0) return 0;
    return 1 + rest;
  }
}

// ---- attribute captures and constraints -------------------------------------------------------------
inline bool same_attribute_value(const ir::Attribute& a, const ir::Attribute& b) {
  return a.type == b.type && a.i == b.i && a.f == b.f && a.s == b.s && a.ints == b.ints &&
         a.floats == b.floats;
}

template <ir::AttrType Type>
constexpr CaptureKind attribute_kind() {
  if constexpr (Type == ir::AttrType::Int)
    return CaptureKind::Int;
  else if constexpr (Type == ir::AttrType::Ints)
    return CaptureKind::Ints;
  else if constexpr (Type == ir::AttrType::Float)
    return CaptureKind::Float;
  else
    return CaptureKind::String;
}

template <char Id, ir::AttrType Type>
struct AttrCapture : ExprTag {
  static constexpr CaptureMask binds = capture_bit<Id>, uses = capture_bit<Id>;
  static constexpr int depth = 0, node_count = 0;
  static constexpr int index = capture_index<Id>();
  static constexpr CaptureKinds kinds = one_kind<Id, attribute_kind<Type>()>();

  template <CaptureMask Bound>
  bool match_attribute(const ir::Attribute* a, Match& m) const {
    if (!a || a->type != Type) return false;
    if constexpr (Bound & binds)
      return same_attribute_value(*m.attributes[index], *a);
    else {
      m.attributes[index] = a;
      return true;
    }
  }
  decltype(auto) eval(const Match& m) const {
    const ir::Attribute& a = *m.attributes[index];
    if constexpr (Type == ir::AttrType::Int)
      return a.i;
    else if constexpr (Type == ir::AttrType::Float)
      return a.f;
    else if constexpr (Type == ir::AttrType::String)
      return (a.s);
    else
      return (a.ints);
  }
  void print(Printer& out) const { out += Id; }
};
template <char Id>
using Int = AttrCapture<Id, ir::AttrType::Int>;
template <char Id>
using Ints = AttrCapture<Id, ir::AttrType::Ints>;
template <char Id>
using Float = AttrCapture<Id, ir::AttrType::Float>;
template <char Id>
using Str = AttrCapture<Id, ir::AttrType::String>;

// An attribute value built by a replacement from whatever an expression evaluates to.
inline ir::Attribute make_attribute(Symbol name, int64_t v) { return ir::Attribute::make_int(name, v); }
inline ir::Attribute make_attribute(Symbol name, float v) { return ir::Attribute::make_float(name, v); }
inline ir::Attribute make_attribute(Symbol name, const std::string& v) {
  return ir::Attribute::make_string(name, v);
}
inline ir::Attribute make_attribute(Symbol name, const std::vector<int64_t>& v) {
  return ir::Attribute::make_ints(name, v);
}
inline ir::Attribute make_attribute(Symbol name, const Tensor& v) {
  return ir::Attribute::make_tensor(name, v);
}
inline ir::Attribute make_attribute(Symbol name, ElemType v) {
  return ir::Attribute::make_int(name, static_cast<int64_t>(v));
}
inline ir::Attribute make_attribute(Symbol name, const std::vector<float>& v) {
  return ir::Attribute::make_floats(name, v);
}
template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;

// A literal in a pattern compares with the attribute of the same kind.
template <class T>
bool literal_matches(const ir::Attribute* a, const T& v) {
  if (!a) return false;
  if constexpr (std::is_same_v<T, int64_t>)
    return a->type == ir::AttrType::Int && a->i == v;
  else if constexpr (std::is_enum_v<T>)  // attr<"to"> = ElemType::Bool
    return a->type == ir::AttrType::Int && a->i == static_cast<int64_t>(v);
  else if constexpr (std::is_same_v<T, float>)
    return a->type == ir::AttrType::Float && a->f == v;
  else if constexpr (std::is_same_v<T, std::string>)
    return a->type == ir::AttrType::String && a->s == v;
  else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
    return a->type == ir::AttrType::Ints && a->ints == v;
  else
    static_assert(sizeof(T) == 0, "xexp rule: unsupported literal type for an attribute");
}

template <FixedString Name, class V>
struct AttrIs {
  V value;
  static constexpr CaptureMask binds = V::binds, uses = V::uses;
  static constexpr int depth = 0, node_count = 0;
  static constexpr CaptureKinds kinds = kinds_of<V>();
  static Symbol name() {
    static const Symbol s(Name.view());
    return s;
  }
  template <CaptureMask Bound>
  bool match(const ir::Node& n, Match& m) const {
    const ir::Attribute* a = read_attribute(m.graph(), n, name(), m.opset(),
                                            [&m](ir::Attribute made) { return m.keep(std::move(made)); });
    bool ok;
    if constexpr (requires { value.template match_attribute<Bound>(a, m); })
      ok = value.template match_attribute<Bound>(a, m);
    else {
      static_assert(V::uses == 0, "xexp rule: an attribute in a pattern is a capture or a literal");
      ok = literal_matches(a, value.eval(m));
    }
    if (!ok && m.explaining()) [[unlikely]]
      m.failed(m.mark(),
               [&] { return printed(*this) + " does not hold on " + n.op_type.str() + " '" + n.name + "'"; });
    return ok;
  }
  // In a replacement: the attribute the value gives; none when it gives an empty std::optional (an
  // attribute written only for some matches, as a fused activation's parameters).
  void build_into(const Match& m, std::vector<ir::Attribute>& out) const {
    decltype(auto) v = value.eval(m);
    if constexpr (is_optional<std::decay_t<decltype(v)>>) {
      if (v) out.push_back(make_attribute(name(), *v));
    } else {
      out.push_back(make_attribute(name(), v));
    }
  }
  void print(Printer& out) const {
    out += Name.view();
    out += "=";
    value.print(out);
  }
};
template <FixedString Name>
struct AttrName {
  template <class V>
  constexpr auto operator=(const V& v) const {  // NOLINT: builds a constraint, does not assign
    return AttrIs<Name, Lifted<V>>{lift(v)};
  }
};
// attr<"perm"> = p: the attribute `perm` is captured by `p` (or equal to a literal, or computed in a
// replacement).
template <FixedString Name>
inline constexpr AttrName<Name> attr{};

template <class T>
inline constexpr bool is_attr_is = false;
template <FixedString Name, class V>
inline constexpr bool is_attr_is<AttrIs<Name, V>> = true;

// `etc` among a node's inputs: any further inputs, not looked at (Concat's parts, Clip's optional bounds).
struct Etc {};
inline constexpr Etc etc{};

// ---- nodes ------------------------------------------------------------------------------------------
enum NodeFlags : unsigned { kCommutative = 1, kShared = 2, kMoreInputs = 4 };

// Pattern input count vs node input count: trailing omitted inputs do not count, and a trailing input
// holding a former attribute (opset adapters) is allowed when the pattern reads that attribute.
template <class NamesSlot>
bool arity_fits(const ir::Node& n, std::size_t required, std::size_t arity, NamesSlot&& pattern_names_slot) {
  std::size_t count = n.inputs.size();
  while (count > 0 && n.inputs[count - 1] == ir::kNone) --count;
  if (count < required) return false;
  for (std::size_t slot = arity; slot < count; ++slot)
    if (n.inputs[slot] != ir::kNone && !pattern_names_slot(slot)) return false;
  return true;
}

// The op types of a family string ("Squeeze|Unsqueeze"), interned once.
template <FixedString Ops>
const std::vector<Symbol>& op_family() {
  static const std::vector<Symbol> types = [] {
    std::vector<Symbol> out;
    std::string_view rest = Ops.view();
    for (std::size_t bar = rest.find('|'); bar != std::string_view::npos; bar = rest.find('|')) {
      out.emplace_back(rest.substr(0, bar));
      rest.remove_prefix(bar + 1);
    }
    out.emplace_back(rest);
    return out;
  }();
  return types;
}

struct OpKey {
  Symbol domain;
  Symbol op_type;
  friend bool operator==(const OpKey&, const OpKey&) = default;
};

// One input of a node a replacement builds; spread(list) (replacement.hpp) gives several.
template <class R>
void build_input(const R& input, Rewriter& r, std::vector<ir::ValueId>& out) {
  if constexpr (requires { input.build_into(r, out); })
    input.build_into(r, out);
  else
    out.push_back(input.build(r));
}

template <FixedString Op, FixedString Domain, unsigned Flags, class Inputs, class Attrs>
struct NodePattern : ExprTag {
  Inputs inputs;
  Attrs attrs;
  static constexpr CaptureMask binds = Inputs::binds | Attrs::binds;
  static constexpr CaptureMask uses = Inputs::uses | Attrs::uses;
  static constexpr int depth = 1 + Inputs::depth;
  static constexpr int node_count = 1 + Inputs::node_count;
  static constexpr CaptureKinds kinds = merge_kinds(kinds_of<Inputs>(), kinds_of<Attrs>());
  static constexpr bool is_family = Op.view().find('|') != std::string_view::npos;
  static_assert(!(Flags & kCommutative) || (Inputs::size == 2 && !(Flags & kMoreInputs)),
                "xexp rule: only a 2-input node is commutative");

  static Symbol domain() {
    static const Symbol s(Domain.view());
    return s;
  }
  static bool has_op_type(Symbol op) {
    const std::vector<Symbol>& types = op_family<Op>();
    if constexpr (!is_family)
      return op == types[0];
    else
      return std::find(types.begin(), types.end(), op) != types.end();
  }
  // As a root: the driver indexes rules by (domain, op type).
  static std::vector<OpKey> roots() {
    std::vector<OpKey> out;
    for (Symbol op : op_family<Op>()) out.push_back({domain(), op});
    return out;
  }

  template <CaptureMask Bound, class K>
  bool match(ir::ValueId v, Match& m, const K& k) const {
    if (v != ir::kNone) {
      const ir::Value& value = m.graph().value(v);
      if (value.producer != ir::kNone && value.output_index == 0)
        return match_node<Bound>(value.producer, m, k);
    }
    if (m.explaining()) [[unlikely]]
      m.failed(m.mark(), [&] { return printed(*this) + " did not match " + value_label(m.graph(), v); });
    return false;
  }
  template <CaptureMask Bound, class K>
  bool match_node(ir::NodeId id, Match& m, const K& k) const {
    const ir::Node& n = m.graph().node(id);
    if (!has_op_type(n.op_type) || n.domain != domain() || !fits_arity(n, m)) {
      if (m.explaining()) [[unlikely]]
        m.failed(m.mark(), [&] {
          return printed(*this) + " did not match " + n.op_type.str() + " '" + n.name + "' (" +
                 std::to_string(n.inputs.size()) + " inputs)";
        });
      return false;
    }
    const int mark = m.mark();
    if (!m.push_node(id, Flags & kShared)) return false;
    constexpr CaptureMask after_attrs = Bound | Attrs::binds;
    bool ok = match_attributes<Bound>(attrs, n, m);
    if constexpr (Flags & kCommutative) {
      const auto& a = inputs.head;
      const auto& b = inputs.tail.head;
      constexpr CaptureMask after_a = after_attrs | std::decay_t<decltype(a)>::binds;
      auto in_order = [&](ir::ValueId first, ir::ValueId second) {
        return a.template match<after_attrs>(first, m,
                                             [&] { return b.template match<after_a>(second, m, k); });
      };
      const ir::ValueId in0 = input_at(n, 0), in1 = input_at(n, 1);
      ok = ok && (in_order(in0, in1) || (m.rewind(mark + 1), in_order(in1, in0)));
    } else {
      ok = ok && match_inputs<after_attrs, 0>(inputs, n, m, k);
    }
    if (!ok) m.rewind(mark);
    return ok;
  }

  // As a replacement: builds the node from its built inputs and evaluated attributes.
  ir::ValueId build(Rewriter& r, std::size_t n_outputs = 1) const {
    static_assert(Flags == 0 && !is_family, "xexp rule: commutative, shared, etc and op families only match");
    std::vector<ir::ValueId> ins;
    build_inputs(inputs, r, ins);
    std::vector<ir::Attribute> as;
    build_attributes(attrs, r.match(), as);
    return r.node(op_family<Op>()[0], std::move(ins), std::move(as), domain(), n_outputs);
  }

  void print(Printer& out) const {
    if constexpr (Flags & kCommutative) out += "commutative(";
    if constexpr (Flags & kShared) out += "shared(";
    if constexpr (Domain.view().size() > 0) {
      out += Domain.view();
      out += ".";
    }
    out += Op.view();
    out += "(";
    print_list(out, inputs);
    if constexpr (Flags & kMoreInputs) out += Inputs::size > 0 ? ", etc" : "etc";
    if constexpr (Attrs::size > 0) {
      if constexpr (Inputs::size > 0 || (Flags & kMoreInputs)) out += ", ";
      print_list(out, attrs);
    }
    out += ")";
    if constexpr (Flags & kCommutative) out += ")";
    if constexpr (Flags & kShared) out += ")";
  }

 private:
  static ir::ValueId input_at(const ir::Node& n, std::size_t slot) {
    return slot < n.inputs.size() ? n.inputs[slot] : ir::kNone;
  }
  bool fits_arity(const ir::Node& n, const Match& m) const {
    if constexpr (Flags & kMoreInputs)
      return n.inputs.size() >= Inputs::size && !n.outputs.empty();
    else
      return arity_fits(n, required_inputs<Inputs>(), Inputs::size,
                        [&](std::size_t slot) { return reads_slot(attrs, n, slot, m.opset()); });
  }
  template <class L>
  static bool reads_slot(const L& list, const ir::Node& n, std::size_t slot, int64_t opset) {
    if constexpr (L::size == 0)
      return false;
    else
      return input_slot_of_attribute(n.op_type, n.domain, decltype(list.head)::name(), opset) ==
                 static_cast<int>(slot) ||
             reads_slot(list.tail, n, slot, opset);
  }
  template <CaptureMask Bound, class L>
  static bool match_attributes(const L& list, const ir::Node& n, Match& m) {
    if constexpr (L::size == 0)
      return true;
    else
      return list.head.template match<Bound>(n, m) &&
             match_attributes<Bound | decltype(list.head)::binds>(list.tail, n, m);
  }
  template <CaptureMask Bound, std::size_t Slot, class L, class K>
  static bool match_inputs(const L& list, const ir::Node& n, Match& m, const K& k) {
    if constexpr (L::size == 0)
      return k();
    else
      return list.head.template match<Bound>(input_at(n, Slot), m, [&] {
        return match_inputs<Bound | decltype(list.head)::binds, Slot + 1>(list.tail, n, m, k);
      });
  }
  template <class L>
  static void build_inputs(const L& list, Rewriter& r, std::vector<ir::ValueId>& out) {
    if constexpr (L::size > 0) {
      build_input(list.head, r, out);
      build_inputs(list.tail, r, out);
    }
  }
  template <class L>
  static void build_attributes(const L& list, const Match& m, std::vector<ir::Attribute>& out) {
    if constexpr (L::size > 0) {
      list.head.build_into(m, out);
      build_attributes(list.tail, m, out);
    }
  }
};

template <FixedString Op, FixedString Domain, unsigned Flags, class Inputs, class Attrs>
constexpr auto add_node_args(const NodePattern<Op, Domain, Flags, Inputs, Attrs>& n) {
  return n;
}
template <FixedString Op, FixedString Domain, unsigned Flags, class Inputs, class Attrs, class First,
          class... Rest>
constexpr auto add_node_args(const NodePattern<Op, Domain, Flags, Inputs, Attrs>& n, const First& first,
                             const Rest&... rest) {
  if constexpr (is_attr_is<First>) {
    auto attrs = append(n.attrs, first);
    return add_node_args(NodePattern<Op, Domain, Flags, Inputs, decltype(attrs)>{{}, n.inputs, attrs},
                         rest...);
  } else if constexpr (std::is_same_v<First, Etc>) {
    return add_node_args(NodePattern<Op, Domain, Flags | kMoreInputs, Inputs, Attrs>{{}, n.inputs, n.attrs},
                         rest...);
  } else if constexpr (std::is_arithmetic_v<First>) {
    static_assert(!(Flags & kMoreInputs), "xexp rule: `etc` comes after the inputs a pattern names");
    auto inputs = append(n.inputs, NumberInput{{}, static_cast<double>(first)});
    return add_node_args(NodePattern<Op, Domain, Flags, decltype(inputs), Attrs>{{}, inputs, n.attrs},
                         rest...);
  } else {
    static_assert(IsExpr<First>,
                  "xexp rule: a node input is a capture, a node pattern, a number or fold(...)");
    static_assert(!(Flags & kMoreInputs), "xexp rule: `etc` comes after the inputs a pattern names");
    auto inputs = append(n.inputs, first);
    return add_node_args(NodePattern<Op, Domain, Flags, decltype(inputs), Attrs>{{}, inputs, n.attrs},
                         rest...);
  }
}

// op<"MatMul">(a, b) or op<"FusedMatMul", "com.microsoft">(a, b, attr<"alpha"> = s): inputs first or mixed
// with attribute constraints, in any order.
template <FixedString Op, FixedString Domain = "">
struct OpMaker {
  template <class... Args>
  constexpr auto operator()(const Args&... args) const {
    return add_node_args(NodePattern<Op, Domain, 0, Nil, Nil>{}, args...);
  }
};
template <FixedString Op, FixedString Domain = "">
inline constexpr OpMaker<Op, Domain> op{};

template <FixedString Op, FixedString Domain, unsigned Flags, class Inputs, class Attrs>
constexpr auto commutative(const NodePattern<Op, Domain, Flags, Inputs, Attrs>& n) {
  return NodePattern<Op, Domain, Flags | kCommutative, Inputs, Attrs>{{}, n.inputs, n.attrs};
}
template <FixedString Op, FixedString Domain, unsigned Flags, class Inputs, class Attrs>
constexpr auto shared(const NodePattern<Op, Domain, Flags, Inputs, Attrs>& n) {
  return NodePattern<Op, Domain, Flags | kShared, Inputs, Attrs>{{}, n.inputs, n.attrs};
}

// ---- named interior nodes (DAG patterns) ------------------------------------------------------------
template <char Id, class P>
struct Named : ExprTag {
  P pattern;
  static constexpr CaptureMask binds = capture_bit<Id> | P::binds, uses = capture_bit<Id>;
  static constexpr int depth = P::depth, node_count = P::node_count;
  static constexpr int index = capture_index<Id>();
  static constexpr CaptureKinds kinds = merge_kinds(one_kind<Id, CaptureKind::Node>(), kinds_of<P>());

  template <CaptureMask Bound, class K>
  bool match(ir::ValueId v, Match& m, const K& k) const {
    if constexpr (Bound & capture_bit<Id>) {
      if (m.values[index] == v) return k();
      if (m.explaining()) [[unlikely]]
        m.failed(m.mark(),
                 [&] { return std::string(1, Id) + ": " + value_label(m.graph(), v) + " is another node"; });
      return false;
    } else {
      return pattern.template match<Bound>(v, m, [&] {
        m.values[index] = v;
        return k();
      });
    }
  }
  // As a root: binds the root's first output.
  static Symbol domain() { return P::domain(); }
  static std::vector<OpKey> roots() { return P::roots(); }
  template <CaptureMask Bound, class K>
  bool match_node(ir::NodeId id, Match& m, const K& k) const {
    return pattern.template match_node<Bound>(id, m, [&] {
      m.values[index] = m.graph().node(id).outputs[0];
      return k();
    });
  }
  ValueView eval(const Match& m) const { return {&m.graph(), m.values[index]}; }
  ir::ValueId build(Rewriter& r) const { return r.match().values[index]; }
  void print(Printer& out) const {
    if (out.in_pattern)
      out.name(Id, [&](Printer& body) { pattern.print(body); });
    else
      out += Id;
  }
};
// named<'d'>(Sub(x, mean)): the first use matches the sub-pattern, later uses of the same object must be
// the very same value (node identity). A condition or a replacement reads the node through it
// (node_of, rebuild).
template <char Id, class P>
constexpr auto named(const P& p) {
  return Named<Id, P>{{}, p};
}

// ---- alternatives -----------------------------------------------------------------------------------
// either(a, b): the value matches a, or else b (onnxscript's OrValue): Pow(x, 2.0) or Mul(x, x). What
// follows may read only the captures both bind (the others are bound by one alternative only).
// either<'e'>(a, b) also records which one matched: `e` evaluates to 0 for a, 1 for b, so that a
// condition or a replacement chooses on it (choose(e == 0, ...)) instead of looking at the graph again.
template <char Id, class A, class B>
struct Either : ExprTag {
  A a;
  B b;
  static constexpr CaptureMask branch_bit = [] {
    if constexpr (Id != 0)
      return capture_bit<Id>;
    else
      return CaptureMask{0};
  }();
  static constexpr CaptureMask binds = (A::binds & B::binds) | branch_bit,
                               uses = A::uses | B::uses | branch_bit;
  static constexpr int depth = A::depth > B::depth ? A::depth : B::depth;
  static constexpr int node_count = A::node_count > B::node_count ? A::node_count : B::node_count;
  static constexpr CaptureKinds kinds = [] {
    if constexpr (Id != 0)
      return merge_kinds(merge_kinds(kinds_of<A>(), kinds_of<B>()), one_kind<Id, CaptureKind::Branch>());
    else
      return merge_kinds(kinds_of<A>(), kinds_of<B>());
  }();

  template <CaptureMask Bound, class K>
  bool match(ir::ValueId v, Match& m, const K& k) const {
    const int mark = m.mark();
    take(m, 0);
    if (a.template match<Bound>(v, m, k)) return true;
    m.rewind(mark);
    take(m, 1);
    return b.template match<Bound>(v, m, k);
  }
  // As a root: either alternative's root op types.
  static std::vector<OpKey> roots() {
    std::vector<OpKey> out = A::roots();
    for (const OpKey& key : B::roots())
      if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(key);
    return out;
  }
  template <CaptureMask Bound, class K>
  bool match_node(ir::NodeId id, Match& m, const K& k) const {
    const int mark = m.mark();
    take(m, 0);
    if (a.template match_node<Bound>(id, m, k)) return true;
    m.rewind(mark);
    take(m, 1);
    return b.template match_node<Bound>(id, m, k);
  }
  // Which alternative matched: 0 or 1.
  int64_t eval(const Match& m) const {
    static_assert(Id != 0, "xexp rule: only either<'e'>(a, b) records which alternative matched");
    return static_cast<int64_t>((m.branches >> capture_index<Id>()) & 1u);
  }
  // The alternatives, an unnamed either first among them flattened: either(either(a, b), c) prints as
  // either(a, b, c).
  void print_flat(Printer& out) const {
    if constexpr (requires { requires A::branch_bit == 0; a.print_flat(out); })
      a.print_flat(out);
    else
      a.print(out);
    out += ", ";
    b.print(out);
  }
  // either<'e'> prints as a name: its letter, defined once ("where e = either(...)"); in a condition or
  // a replacement, the letter alone.
  void print(Printer& out) const {
    if constexpr (Id != 0) {
      if (out.in_pattern)
        out.name(Id, [&](Printer& body) { print_alternatives(body); });
      else
        out += Id;
    } else {
      print_alternatives(out);
    }
  }

 private:
  void print_alternatives(Printer& out) const {
    out += "either(";
    print_flat(out);
    out += ")";
  }

  static void take(Match& m, unsigned branch) {
    if constexpr (Id != 0) {
      const CaptureMask bit = CaptureMask{1} << capture_index<Id>();
      m.branches = branch ? m.branches | bit : m.branches & ~bit;
    }
  }
};
template <class A, class B>
constexpr auto either(const A& a, const B& b) {
  return Either<0, A, B>{{}, a, b};
}
template <char Id, class A, class B>
constexpr auto either(const A& a, const B& b) {
  return Either<Id, A, B>{{}, a, b};
}

// ---- reading past a wrapper -------------------------------------------------------------------------
// What through's `Skip` finds at a value: the value inside a wrapper the rule reads past and the
// wrapper's nodes, or no inner value when there is no such wrapper.
struct Skipped {
  ir::ValueId inner = ir::kNone;
  std::array<ir::NodeId, 4> nodes{};
  int count = 0;
};
// through<"what", skip>(p): the value matches p, or `skip` (a function of the graph and the value) finds
// a wrapper around a value that matches p; the wrapper's nodes join the match, so that they go with it.
// Unlike either(p, Wrapper(p)), p is compiled once: the wrapper binds no capture (a condition reads it
// from the graph), and a large p (an attention's scores) costs its compile time once.
template <FixedString What, auto Skip, class P>
struct Through : ExprTag {
  P pattern;
  static constexpr CaptureMask binds = P::binds, uses = P::uses;
  static constexpr int depth = P::depth, node_count = P::node_count;
  static constexpr CaptureKinds kinds = kinds_of<P>();

  template <CaptureMask Bound, class K>
  bool match(ir::ValueId v, Match& m, const K& k) const {
    const Skipped wrapper = Skip(m.graph(), v);
    if (wrapper.inner == ir::kNone) return pattern.template match<Bound>(v, m, k);
    const int mark = m.mark();
    bool ok = true;
    for (int i = 0; i < wrapper.count && ok; ++i) ok = m.push_node(wrapper.nodes[i], false);
    ok = ok && pattern.template match<Bound>(wrapper.inner, m, k);
    if (!ok) m.rewind(mark);
    return ok;
  }
  void print(Printer& out) const {
    out += "through(";
    out += What.view();
    out += ", ";
    pattern.print(out);
    out += ")";
  }
};
template <FixedString What, auto Skip, class P>
constexpr auto through(const P& p) {
  return Through<What, Skip, P>{{}, p};
}

}  // namespace xexp::rewrite
