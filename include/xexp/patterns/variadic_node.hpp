#pragma once
// A node matcher for what the DSL's op<...>(...) cannot say: a node with any number of inputs (Concat,
// Clip or Dropout with optional inputs) or one of several op types ("Squeeze|Unsqueeze"). It matches
// its leading inputs against sub-patterns, ignores the others, and binds a capture to the node's output,
// so that a condition or a replacement reads the whole node from its ValueView (see node_of).
//
//   variadic<'c', "Concat">(attr<"axis"> = a)        a Concat, any inputs
//   variadic<'q', "Squeeze|Unsqueeze">(x)            either op, first input x
//   shared_variadic<...>(...)                        may have consumers outside the match
//
// It follows the DSL's matcher protocol (binds/uses masks, match<Bound>, match_node<Bound> for a root),
// so it mixes freely with op<...> patterns. A root must name a single op type.
#include <algorithm>
#include <string_view>
#include <vector>

#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

template <char Id, rewrite::FixedString Ops, rewrite::FixedString Domain, bool Shared, class Inputs, class Attrs>
struct VariadicNode : rewrite::ExprTag {
  Inputs inputs;
  Attrs attrs;
  static constexpr rewrite::CaptureMask binds = rewrite::capture_bit<Id> | Inputs::binds | Attrs::binds;
  static constexpr rewrite::CaptureMask uses = rewrite::capture_bit<Id>;
  static constexpr int depth = 1 + Inputs::depth;
  static constexpr int node_count = 1 + Inputs::node_count;
  static constexpr int index = rewrite::capture_index<Id>();

  static const std::vector<Symbol>& op_types() {
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
  // As a root (the driver indexes rules by one op type).
  static Symbol op_type() {
    static_assert(Ops.view().find('|') == std::string_view::npos, "xexp rule: a root names a single op type");
    return op_types()[0];
  }
  static Symbol domain() {
    static const Symbol s(Domain.view());
    return s;
  }

  template <rewrite::CaptureMask Bound>
  bool match(ir::ValueId v, rewrite::Match& m) const {
    if constexpr (Bound & rewrite::capture_bit<Id>) return m.values[index] == v;
    else {
      if (v == ir::kNone) return false;
      const ir::Value& value = m.graph().value(v);
      return value.producer != ir::kNone && value.output_index == 0 && match_node<Bound>(value.producer, m);
    }
  }
  template <rewrite::CaptureMask Bound>
  bool match_node(ir::NodeId id, rewrite::Match& m) const {
    const ir::Node& n = m.graph().node(id);
    const auto& types = op_types();
    if (n.domain != domain() || std::find(types.begin(), types.end(), n.op_type) == types.end()) return false;
    if (n.inputs.size() < Inputs::size || n.outputs.empty()) return false;
    const int mark = m.mark();
    if (!m.push_node(id, Shared)) return false;
    constexpr rewrite::CaptureMask after_attrs = Bound | Attrs::binds;
    if (!(match_attributes<Bound>(attrs, n, m) && match_inputs<after_attrs, 0>(inputs, n, m))) {
      m.rewind(mark);
      return false;
    }
    m.values[index] = n.outputs[0];
    return true;
  }

  rewrite::ValueView eval(const rewrite::Match& m) const { return {&m.graph(), m.values[index]}; }
  ir::ValueId build(rewrite::Rewriter& r) const { return r.match().values[index]; }
  template <rewrite::CaptureMask Bound>
  void print(std::string& out) const {
    out += Id;
    if constexpr (!(Bound & rewrite::capture_bit<Id>)) {
      out += "=";
      if constexpr (Shared) out += "shared(";
      out += Ops.view();
      out += "(";
      rewrite::print_list<Bound | Attrs::binds>(out, inputs);
      if constexpr (Inputs::size > 0) out += ", ";
      out += "...";
      if constexpr (Attrs::size > 0) {
        out += ", ";
        rewrite::print_list<Bound>(out, attrs);
      }
      out += ")";
      if constexpr (Shared) out += ")";
    }
  }

 private:
  template <rewrite::CaptureMask Bound, class L>
  static bool match_attributes(const L& list, const ir::Node& n, rewrite::Match& m) {
    if constexpr (L::size == 0) return true;
    else
      return list.head.template match<Bound>(n, m) &&
             match_attributes<Bound | decltype(list.head)::binds>(list.tail, n, m);
  }
  template <rewrite::CaptureMask Bound, std::size_t Slot, class L>
  static bool match_inputs(const L& list, const ir::Node& n, rewrite::Match& m) {
    if constexpr (L::size == 0) return true;
    else
      return list.head.template match<Bound>(n.inputs[Slot], m) &&
             match_inputs<Bound | decltype(list.head)::binds, Slot + 1>(list.tail, n, m);
  }
};

namespace detail {
template <char Id, rewrite::FixedString Ops, rewrite::FixedString Domain, bool Shared, class Inputs, class Attrs>
constexpr auto add_variadic_args(const VariadicNode<Id, Ops, Domain, Shared, Inputs, Attrs>& n) {
  return n;
}
template <char Id, rewrite::FixedString Ops, rewrite::FixedString Domain, bool Shared, class Inputs, class Attrs,
          class First, class... Rest>
constexpr auto add_variadic_args(const VariadicNode<Id, Ops, Domain, Shared, Inputs, Attrs>& n, const First& first,
                                 const Rest&... rest) {
  if constexpr (rewrite::is_attr_is<First>) {
    auto attrs = rewrite::append(n.attrs, first);
    return add_variadic_args(VariadicNode<Id, Ops, Domain, Shared, Inputs, decltype(attrs)>{{}, n.inputs, attrs},
                             rest...);
  } else {
    static_assert(rewrite::IsExpr<First>, "xexp rule: a node input is a capture or a node pattern");
    auto inputs = rewrite::append(n.inputs, first);
    return add_variadic_args(VariadicNode<Id, Ops, Domain, Shared, decltype(inputs), Attrs>{{}, inputs, n.attrs},
                             rest...);
  }
}
template <char Id, rewrite::FixedString Ops, rewrite::FixedString Domain, bool Shared>
struct VariadicMaker {
  template <class... Args>
  constexpr auto operator()(const Args&... args) const {
    return add_variadic_args(VariadicNode<Id, Ops, Domain, Shared, rewrite::Nil, rewrite::Nil>{}, args...);
  }
};
}  // namespace detail

template <char Id, rewrite::FixedString Ops, rewrite::FixedString Domain = "">
inline constexpr detail::VariadicMaker<Id, Ops, Domain, false> variadic{};
template <char Id, rewrite::FixedString Ops, rewrite::FixedString Domain = "">
inline constexpr detail::VariadicMaker<Id, Ops, Domain, true> shared_variadic{};

// The node producing a value (a variadic capture, a named node): conditions read its inputs from here.
inline const ir::Node& node_of(const rewrite::ValueView& v) { return v.graph->node(v.value().producer); }

// Input `slot` of that node, or kNone when omitted.
inline ir::ValueId input_of(const rewrite::ValueView& v, std::size_t slot) {
  const ir::Node& n = node_of(v);
  return slot < n.inputs.size() ? n.inputs[slot] : ir::kNone;
}

}  // namespace xexp::patterns
