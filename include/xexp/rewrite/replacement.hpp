#pragma once
// The right side of a rule: what only a replacement says. A node pattern builds its node; besides:
//   fold(expr)                     a constant computed from the captures, added as an initializer
//   found(expr)                    a value already in the graph that a fact finds from the captures
//   choose(cond, a, b)             a when cond holds at rewrite time, else b
//   rebuild(n, args...)            the matched node n again (op type, domain, attributes, inputs), with
//                                  the inputs given (all of them, or input<k> = v for one) and the
//                                  attributes given (attr<"alpha"> = v) changed
//   rebuild_as<"Op", "domain">(n, args...)   the same as another op (a fused op keeps the attributes)
//   spread(list)                   among a node's inputs: each value of a computed list (a Concat of
//                                  the parts a fact kept)
//   let<'f'>(r)                    r built once, however many times the replacement names it
//   outputs<4>(node)  output<3>(r) a node with several outputs; output k of what r built
//   omitted                        an optional input the built node leaves out ('' in the model)
// and, after the replacement in .to(...), also(v, r): the consumers of the matched value v read r
// (PDLL's `replace root with (a, b)`: a fused node's second output takes over a residual sum).
// replace_with("name", lambda, captures...) remains for what none of these say.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "xexp/rewrite/pattern.hpp"

namespace xexp::rewrite {

// fold(expr): a constant computed at rewrite time from the captures, added as an initializer.
template <class E>
struct Fold : ExprTag {
  E expr;
  static constexpr CaptureMask binds = 0, uses = E::uses;
  static constexpr int depth = 0, node_count = 0;
  ir::ValueId build(Rewriter& r) const { return r.initializer(Tensor(expr.eval(r.match()))); }
  void print(Printer& out) const {
    out += "fold(";
    expr.print(out);
    out += ")";
  }
};
template <class E>
constexpr auto fold(const E& e) {
  return Fold<Lifted<E>>{{}, lift(e)};
}

// found(expr): a value already in the graph, found by a fact from the captures, where the pattern cannot
// spell the path to it (the keys before a repeat of their heads that only some models write). The fact
// gives a ValueView or a value id (a kept fact that the condition tested for kNone). Also an
// expression: facts read it like a capture.
template <class E>
struct Found : ExprTag {
  E expr;
  static constexpr CaptureMask binds = 0, uses = E::uses;
  static constexpr int depth = 0, node_count = 0;
  ValueView eval(const Match& m) const {
    decltype(auto) v = expr.eval(m);
    if constexpr (std::is_convertible_v<decltype(v), ir::ValueId>)
      return ValueView{&m.graph(), v};
    else
      return v;
  }
  ir::ValueId build(Rewriter& r) const { return eval(r.match()).id; }
  void print(Printer& out) const {
    out += "found(";
    expr.print(out);
    out += ")";
  }
};
template <class E>
constexpr auto found(const E& e) {
  return Found<Lifted<E>>{{}, lift(e)};
}

// omitted: an optional input left out of the node a replacement builds, where a later input is given
// (MultiHeadAttention(q, k, v, omitted, omitted, attention_bias)).
struct Omitted : ExprTag {
  static constexpr CaptureMask binds = 0, uses = 0;
  static constexpr int depth = 0, node_count = 0;
  ir::ValueId build(Rewriter&) const { return ir::kNone; }
  void print(Printer& out) const { out += "''"; }
};
inline constexpr Omitted omitted{};

// choose(condition, a, b): builds `a` when the condition holds at rewrite time, else `b`.
template <class C, class A, class B>
struct Choose : ExprTag {
  C condition;
  A a;
  B b;
  static constexpr CaptureMask binds = 0, uses = C::uses | A::uses | B::uses;
  static constexpr int depth = 0, node_count = 0;
  ir::ValueId build(Rewriter& r) const { return condition.eval(r.match()) ? a.build(r) : b.build(r); }
  void print(Printer& out) const {
    out += "choose(";
    condition.print(out);
    out += ", ";
    a.print(out);
    out += ", ";
    b.print(out);
    out += ")";
  }
};
template <class C, class A, class B>
constexpr auto choose(const C& condition, const A& a, const B& b) {
  return Choose<C, A, B>{{}, condition, a, b};
}

// let<'f'>(r): the first build of `r` is kept under 'f' (a letter of its own, apart from the captures);
// later uses of the same let give the same value instead of a second node.
template <char Id, class R>
struct Let : ExprTag {
  R replacement;
  static constexpr CaptureMask binds = 0, uses = R::uses;
  static constexpr int depth = 0, node_count = 0;
  ir::ValueId build(Rewriter& r) const {
    ir::ValueId& slot = r.let_slot(capture_index<Id>());
    if (slot == ir::kNone) slot = replacement.build(r);
    return slot;
  }
  void print(Printer& out) const {
    out.name(Id, [&](Printer& body) { replacement.print(body); });
  }
};
template <char Id, class R>
constexpr auto let(const R& r) {
  return Let<Id, R>{{}, r};
}

// outputs<N>(node): the node built with N outputs (com.microsoft fused ops return statistics and sums).
template <std::size_t N, class P>
struct Outputs : ExprTag {
  P node;
  static constexpr CaptureMask binds = 0, uses = P::uses;
  static constexpr int depth = 0, node_count = 0;
  ir::ValueId build(Rewriter& r) const { return node.build(r, N); }
  void print(Printer& out) const { node.print(out); }
};
template <std::size_t N, class P>
constexpr auto outputs(const P& node) {
  return Outputs<N, P>{{}, node};
}
// output<K>(r): output K of the node whose first output `r` builds (use a let to name that node once).
template <std::size_t K, class R>
struct Output : ExprTag {
  R replacement;
  static constexpr CaptureMask binds = 0, uses = R::uses;
  static constexpr int depth = 0, node_count = 0;
  ir::ValueId build(Rewriter& r) const {
    const ir::Graph& g = r.graph();
    return g.node(g.value(replacement.build(r)).producer).outputs.at(K);
  }
  void print(Printer& out) const {
    out += "output" + std::to_string(K) + "(";
    replacement.print(out);
    out += ")";
  }
};
template <std::size_t K, class R>
constexpr auto output(const R& r) {
  return Output<K, R>{{}, r};
}

// spread(list) among the inputs of a node a replacement builds: every value of the list (a
// std::vector<ir::ValueId> a fact computes, or inputs_of(n)), in order, one input each. A list of Parts
// may also hold constants, which become initializers: a shape assembled from existing parts and new
// constant ones (a -1, ones), equal constants of one list sharing one initializer.
using Part = std::variant<ir::ValueId, Tensor>;
template <class E>
struct Spread : ExprTag {
  E expr;
  static constexpr CaptureMask binds = 0, uses = E::uses;
  static constexpr int depth = 0, node_count = 0;
  void build_into(Rewriter& r, std::vector<ir::ValueId>& out) const {
    decltype(auto) list = expr.eval(r.match());
    if constexpr (std::is_same_v<std::decay_t<decltype(list)>, std::vector<Part>>) {
      std::vector<std::pair<const Tensor*, ir::ValueId>> added;
      for (const Part& part : list) {
        if (const ir::ValueId* v = std::get_if<ir::ValueId>(&part)) {
          out.push_back(*v);
          continue;
        }
        const Tensor& t = std::get<Tensor>(part);
        auto same = std::find_if(added.begin(), added.end(),
                                 [&](const auto& a) { return a.first->same_content(t); });
        out.push_back(same != added.end() ? same->second : added.emplace_back(&t, r.initializer(t)).second);
      }
    } else {
      out.insert(out.end(), list.begin(), list.end());
    }
  }
  void print(Printer& out) const {
    out += "spread(";
    expr.print(out);
    out += ")";
  }
};
template <class E>
constexpr auto spread(const E& e) {
  return Spread<Lifted<E>>{{}, lift(e)};
}

// ---- rebuilding a matched node ----------------------------------------------------------------------
// input<k> = v in rebuild(...): input k replaced, the others kept.
template <std::size_t Slot, class V>
struct InputIs {
  V value;
  static constexpr CaptureMask binds = 0, uses = V::uses;
  static constexpr int depth = 0, node_count = 0;
  void print(Printer& out) const {
    out += "input" + std::to_string(Slot) + "=";
    value.print(out);
  }
};
template <std::size_t Slot>
struct InputSlot {
  template <class V>
  constexpr auto operator=(const V& v) const {  // NOLINT: builds a replacement piece, does not assign
    return InputIs<Slot, V>{v};
  }
};
template <std::size_t Slot>
inline constexpr InputSlot<Slot> input{};

template <class T>
inline constexpr bool is_input_is = false;
template <std::size_t Slot, class V>
inline constexpr bool is_input_is<InputIs<Slot, V>> = true;

// rebuild(n, ...): the node producing the value n stands for (a named node, a captured value), built
// again with the same op type, domain, attributes and inputs, except what the arguments change. It
// has as many outputs as the old node, and its outputs after the first take over the old ones' consumers
// (what they compute does not change: only the inputs or attributes the first output depends on do).
// rebuild_as<"FusedConv", "com.microsoft">(n, ...) builds another op from the same (Op is empty for
// the same op): a fused op takes over all the attributes of the node it extends, including those a
// node pattern could not capture (a Conv's pads have no default when absent).
template <FixedString Op, FixedString Domain, class N, class Inputs, class Slots, class Attrs>
struct Rebuild : ExprTag {
  N node;
  Inputs inputs;  // all the inputs, when given
  Slots slots;    // input<k> = v
  Attrs attrs;    // attributes added or changed
  static constexpr CaptureMask binds = 0, uses = N::uses | Inputs::uses | Slots::uses | Attrs::uses;
  static constexpr int depth = 0, node_count = 0;

  ir::ValueId build(Rewriter& r) const {
    std::vector<ir::ValueId> given;
    build_list(inputs, r, given);
    std::vector<std::pair<std::size_t, ir::ValueId>> changed;
    build_slots(slots, r, changed);
    std::vector<ir::Attribute> attributes;
    collect_attributes(attrs, r.match(), attributes);
    // Read the old node only now: building the inputs added nodes, which may move it in memory.
    const ir::Graph& g = r.graph();
    const ir::Node& old = g.node(g.value(node.build(r)).producer);
    std::vector<ir::ValueId> ins = Inputs::size > 0 ? given : old.inputs;
    for (const auto& [slot, v] : changed) {
      if (ins.size() <= slot) ins.resize(slot + 1, ir::kNone);
      ins[slot] = v;
    }
    std::vector<ir::Attribute> kept;
    for (const ir::Attribute& a : old.attributes)
      if (std::none_of(attributes.begin(), attributes.end(),
                       [&](const ir::Attribute& b) { return b.name == a.name; }))
        kept.push_back(a);
    kept.insert(kept.end(), attributes.begin(), attributes.end());
    const std::vector<ir::ValueId> old_outputs = old.outputs;
    const bool same_op = Op.view().empty();
    const Symbol op_type = same_op ? old.op_type : Symbol(Op.view()),
                 domain = same_op ? old.domain : Symbol(Domain.view());
    const ir::ValueId first = r.node(op_type, std::move(ins), std::move(kept), domain, old_outputs.size());
    const std::vector<ir::ValueId>& fresh = r.graph().node(r.graph().value(first).producer).outputs;
    for (std::size_t k = 1; k < old_outputs.size(); ++k)
      if (old_outputs[k] != ir::kNone) r.replace_later(old_outputs[k], fresh[k]);
    return first;
  }
  void print(Printer& out) const {
    out += "rebuild(";
    if constexpr (!Op.view().empty()) {
      out += "as ";
      if constexpr (!Domain.view().empty()) out += std::string(Domain.view()) + ".";
      out += std::string(Op.view()) + ", ";
    }
    node.print(out);
    if constexpr (Inputs::size > 0) out += ", ";
    print_list(out, inputs);
    if constexpr (Slots::size > 0) out += ", ";
    print_list(out, slots);
    if constexpr (Attrs::size > 0) out += ", ";
    print_list(out, attrs);
    out += ")";
  }

 private:
  template <class L>
  static void build_list(const L& list, Rewriter& r, std::vector<ir::ValueId>& out) {
    if constexpr (L::size > 0) {
      build_input(list.head, r, out);
      build_list(list.tail, r, out);
    }
  }
  template <class L>
  static void build_slots(const L& list, Rewriter& r, std::vector<std::pair<std::size_t, ir::ValueId>>& out) {
    if constexpr (L::size > 0) {
      out.emplace_back(slot_of(list.head), list.head.value.build(r));
      build_slots(list.tail, r, out);
    }
  }
  template <std::size_t Slot, class V>
  static constexpr std::size_t slot_of(const InputIs<Slot, V>&) {
    return Slot;
  }
  template <class L>
  static void collect_attributes(const L& list, const Match& m, std::vector<ir::Attribute>& out) {
    if constexpr (L::size > 0) {
      list.head.build_into(m, out);
      collect_attributes(list.tail, m, out);
    }
  }
};

template <FixedString Op, FixedString Domain, class N, class Inputs, class Slots, class Attrs>
constexpr auto add_rebuild_args(const Rebuild<Op, Domain, N, Inputs, Slots, Attrs>& r) {
  return r;
}
template <FixedString Op, FixedString Domain, class N, class Inputs, class Slots, class Attrs, class First,
          class... Rest>
constexpr auto add_rebuild_args(const Rebuild<Op, Domain, N, Inputs, Slots, Attrs>& r, const First& first,
                                const Rest&... rest) {
  if constexpr (is_attr_is<First>) {
    auto attrs = append(r.attrs, first);
    return add_rebuild_args(
        Rebuild<Op, Domain, N, Inputs, Slots, decltype(attrs)>{{}, r.node, r.inputs, r.slots, attrs},
        rest...);
  } else if constexpr (is_input_is<First>) {
    auto slots = append(r.slots, first);
    return add_rebuild_args(
        Rebuild<Op, Domain, N, Inputs, decltype(slots), Attrs>{{}, r.node, r.inputs, slots, r.attrs},
        rest...);
  } else {
    static_assert(IsExpr<First>,
                  "xexp rule: rebuild(n, ...) takes inputs, input<k> = v and attr<\"name\"> = v");
    auto inputs = append(r.inputs, first);
    return add_rebuild_args(
        Rebuild<Op, Domain, N, decltype(inputs), Slots, Attrs>{{}, r.node, inputs, r.slots, r.attrs},
        rest...);
  }
}
template <class N, class... Args>
constexpr auto rebuild(const N& node, const Args&... args) {
  return add_rebuild_args(Rebuild<"", "", N, Nil, Nil, Nil>{{}, node, {}, {}, {}}, args...);
}
template <FixedString Op, FixedString Domain = "", class N, class... Args>
constexpr auto rebuild_as(const N& node, const Args&... args) {
  static_assert(!Op.view().empty(), "xexp rule: rebuild_as names the op to build");
  return add_rebuild_args(Rebuild<Op, Domain, N, Nil, Nil, Nil>{{}, node, {}, {}, {}}, args...);
}

// also(v, r) in .to(root, also(...)...): the consumers of the matched value v read what r builds.
template <class V, class R>
struct Also {
  V value;
  R replacement;
  static constexpr CaptureMask binds = 0, uses = V::uses | R::uses;
  static constexpr int depth = 0, node_count = 0;
  void build(Rewriter& r) const { r.replace_later(value.build(r), replacement.build(r)); }
  void print(Printer& out) const {
    out += "also(";
    value.print(out);
    out += " -> ";
    replacement.print(out);
    out += ")";
  }
};
template <class V, class R>
constexpr auto also(const V& v, const R& r) {
  return Also<V, R>{v, r};
}

// The replacement of a case: the root's value, then the values `also` replaces.
template <class R, class Extras>
struct WithAlso : ExprTag {
  R root;
  Extras extras;
  static constexpr CaptureMask binds = 0, uses = R::uses | Extras::uses;
  static constexpr int depth = 0, node_count = 0;
  std::optional<ir::ValueId> build(Rewriter& r) const {
    std::optional<ir::ValueId> out = root.build(r);
    if (out) build_extras(extras, r);
    return out;
  }
  void print(Printer& out) const {
    root.print(out);
    print_extras(extras, out);
  }

 private:
  template <class L>
  static void build_extras(const L& list, Rewriter& r) {
    if constexpr (L::size > 0) {
      list.head.build(r);
      build_extras(list.tail, r);
    }
  }
  template <class L>
  static void print_extras(const L& list, Printer& out) {
    if constexpr (L::size > 0) {
      out += ", ";
      list.head.print(out);
      print_extras(list.tail, out);
    }
  }
};

// replace_with("name", lambda, captures...): the lambda gets the Rewriter and the evaluated captures and
// returns the value replacing the root's output, or std::nullopt to decline (what it built is undone).
template <class F, class Args>
struct LambdaReplacement : ExprTag {
  const char* name;
  F f;
  Args args;
  static constexpr CaptureMask binds = 0, uses = Args::uses;
  static constexpr int depth = 0, node_count = 0;
  std::optional<ir::ValueId> build(Rewriter& r) const {
    return apply_list([&](auto&&... a) -> std::optional<ir::ValueId> { return f(r, a...); }, args, r.match());
  }
  void print(Printer& out) const {
    out += name;
    out += "(";
    print_list(out, args);
    out += ")";
  }
};
template <class F, class... Args>
constexpr auto replace_with(const char* name, F f, const Args&... args) {
  auto list = make_list(args...);
  return LambdaReplacement<F, decltype(list)>{{}, name, f, list};
}

}  // namespace xexp::rewrite
