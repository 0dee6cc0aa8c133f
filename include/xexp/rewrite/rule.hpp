#pragma once
// A rule is one declarative value: a name, a priority (0-3), a pattern, a condition and a replacement.
//
//   Var<'x'> x; Int<'t'> t;
//   auto r = rule("Cast").priority(0).match(Cast(x, attr<"to"> = t)).when(dtype(x) == t).to(x);
//
// `when` and `to` check at compile time that they only read captures the pattern binds. Matching is
// contained by default: the outputs of matched interior nodes must be used only inside the match and
// must not be graph outputs (`shared(...)` lifts this for one node, which is then kept if still used),
// and the root's outputs beyond the first must be unused.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xexp/rewrite/pattern.hpp"

namespace xexp::rewrite {

struct OpKey {
  Symbol domain;
  Symbol op_type;
  friend bool operator==(const OpKey&, const OpKey&) = default;
};

class Rule {
 public:
  Rule(std::string name, int priority) : name_(std::move(name)), priority_(priority) {}
  virtual ~Rule() = default;

  // Short name, usable in a set string ("Cast").
  const std::string& name() const { return name_; }
  // Name in logs and statistics, as the original prints it ("CastPattern").
  std::string pattern_name() const { return name_ + "Pattern"; }
  int priority() const { return priority_; }

  // The (domain, op type) the root node must have.
  virtual OpKey root() const = 0;
  // Longest producer chain the pattern walks from the root (the root counts as 1).
  virtual int depth() const = 0;
  // Matches the pattern at `root`, checks containment and the condition. `m` is overwritten.
  virtual bool match(const ir::Graph& g, ir::NodeId root, int64_t opset, Match& m) const = 0;
  // Builds the replacement of the root's first output; std::nullopt when it declines.
  virtual std::optional<ir::ValueId> build(Rewriter& r) const = 0;
  // One line: "Cast: Cast(x, to=t) -> x  when (dtype(x) == t)  [P0]".
  virtual std::string describe() const = 0;

 private:
  std::string name_;
  int priority_;
};
using RulePtr = std::shared_ptr<const Rule>;

// Containment: see the header comment.
inline bool is_contained(const Match& m) {
  const ir::Graph& g = m.graph();
  const ir::Node& root = g.node(m.root());
  for (std::size_t k = 1; k < root.outputs.size(); ++k) {
    ir::ValueId out = root.outputs[k];
    if (out != ir::kNone && (!g.value(out).uses.empty() || g.value(out).is_graph_output())) return false;
  }
  for (std::size_t k = 1; k < m.node_count(); ++k) {
    if (m.is_shared(static_cast<int>(k))) continue;
    for (ir::ValueId out : g.node(m.begin()[k]).outputs) {
      if (out == ir::kNone) continue;
      const ir::Value& v = g.value(out);
      if (v.is_graph_output()) return false;
      for (const ir::Use& u : v.uses)
        if (!m.contains(u.node)) return false;
    }
  }
  return true;
}

template <class P, class C, class R>
class TypedRule final : public Rule {
 public:
  TypedRule(std::string name, int priority, P pattern, C condition, R replacement)
      : Rule(std::move(name), priority), pattern_(pattern), condition_(condition), replacement_(replacement) {}

  OpKey root() const override { return {P::domain(), P::op_type()}; }
  int depth() const override { return P::depth; }
  bool match(const ir::Graph& g, ir::NodeId root, int64_t opset, Match& m) const override {
    m.reset(g, opset);
    return pattern_.template match_node<0>(root, m) && is_contained(m) && condition_.eval(m);
  }
  std::optional<ir::ValueId> build(Rewriter& r) const override { return replacement_.build(r); }
  std::string describe() const override {
    std::string out = name() + ": ";
    pattern_.template print<0>(out);
    out += " -> ";
    replacement_.template print<P::binds>(out);
    std::string cond;
    condition_.template print<P::binds>(cond);
    if (!cond.empty()) out += "  when " + cond;
    return out + "  [P" + std::to_string(priority()) + "]";
  }

 private:
  P pattern_;
  C condition_;
  R replacement_;
};

template <class P, class C>
class RuleDraft {
 public:
  RuleDraft(std::string name, int priority, P pattern, C condition)
      : name_(std::move(name)), priority_(priority), pattern_(pattern), condition_(condition) {}

  template <class C2>
  auto when(const C2& condition) const {
    static_assert((C2::uses & ~P::binds) == 0,
                  "xexp rule: the condition uses a capture that the pattern does not bind");
    auto both = and_conditions(condition_, condition);
    return RuleDraft<P, decltype(both)>(name_, priority_, pattern_, both);
  }
  template <class R>
  RulePtr to(const R& replacement) const {
    static_assert((R::uses & ~P::binds) == 0,
                  "xexp rule: the replacement uses a capture that the pattern does not bind");
    return std::make_shared<TypedRule<P, C, R>>(name_, priority_, pattern_, condition_, replacement);
  }

 private:
  template <class A, class B>
  static auto and_conditions(const A& a, const B& b) {
    if constexpr (std::is_same_v<A, Always>) return b;
    else return a && b;
  }
  std::string name_;
  int priority_;
  P pattern_;
  C condition_;
};

class RuleStart {
 public:
  explicit RuleStart(std::string name) : name_(std::move(name)) {}
  RuleStart& priority(int p) {
    priority_ = p;
    return *this;
  }
  template <class P>
  auto match(const P& pattern) const {
    static_assert(P::node_count >= 1, "xexp rule: the pattern's root must be a node");
    static_assert(P::node_count <= Match::kMaxNodes, "xexp rule: the pattern has too many nodes");
    return RuleDraft<P, Always>(name_, priority_, pattern, Always{});
  }

 private:
  std::string name_;
  int priority_ = 0;
};
inline RuleStart rule(std::string name) { return RuleStart(std::move(name)); }

}  // namespace xexp::rewrite
