#pragma once
// A rule is one declarative value: a name, a priority (0-3), a pattern, a condition and a replacement.
//
//   Var<'x'> x; Int<'t'> t;
//   auto r = rule("Cast").priority(0).match(Cast(x, attr<"to"> = t)).when(dtype(x) == t).to(x);
//
// Several cases share a name: rule("X").cases(match(p1).to(r1), match(p2).when(c).to(r2)).
// `when` and `to` check at compile time that they only read captures the pattern binds. Matching is
// contained by default: the outputs of matched interior nodes must be used only inside the match and
// must not be graph outputs (`shared(...)` lifts this for one node, which is then kept if still used),
// and the root's outputs beyond the first must be unused (a `shared` root lifts this: a rebuild of it
// takes those readers over, or else it stays).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xexp/rewrite/pattern.hpp"
#include "xexp/rewrite/replacement.hpp"

namespace xexp::rewrite {

class Rule {
 public:
  Rule(std::string name, int priority) : name_(std::move(name)), priority_(priority) {}
  virtual ~Rule() = default;

  // Short name, usable in a set string ("Cast").
  const std::string& name() const { return name_; }
  // Name in logs and statistics ("CastPattern"), as experimental-experiment's optimizer prints it.
  std::string pattern_name() const { return name_ + "Pattern"; }
  int priority() const { return priority_; }

  // The (domain, op type) the root node may have.
  virtual std::vector<OpKey> roots() const = 0;
  // Longest producer chain the pattern walks from the root (the root counts as 1).
  virtual int depth() const = 0;
  // Matches the pattern at `root`, checks containment and the condition. `m` is overwritten.
  virtual bool match(const ir::Graph& g, ir::NodeId root, int64_t opset, Match& m) const = 0;
  // Why the rule does not match at `root` (the failure that got furthest: a sub-pattern, containment or
  // the first false condition), or "" when it matches. Slower than match: for --explain only.
  virtual std::string explain(const ir::Graph& g, ir::NodeId root, int64_t opset) const = 0;
  // Builds the replacement of the root's first output; std::nullopt when it declines.
  virtual std::optional<ir::ValueId> build(Rewriter& r) const = 0;
  // One line: "Cast: Cast(x, to=t) -> x  when (dtype(x) == t)  [P0]".
  std::string describe() const { return describe({}); }
  // The same, leaving out of its "where ..." the definitions in `known` (printed once for many rules).
  virtual std::string describe(const std::vector<Definition>& known) const = 0;
  // The definitions describe() prints, each once.
  virtual std::vector<Definition> definitions() const = 0;

 private:
  std::string name_;
  int priority_;
};
using RulePtr = std::shared_ptr<const Rule>;

// Containment: see the header comment.
inline bool is_contained(const Match& m) {
  const ir::Graph& g = m.graph();
  const ir::Node& root = g.node(m.root());
  for (std::size_t k = 1; k < root.outputs.size() && !m.is_shared(0); ++k) {
    ir::ValueId out = root.outputs[k];
    if (out != ir::kNone && g.value(out).is_read()) return false;
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

// One case of a rule: a pattern, its condition and its replacement.
template <class P, class C, class R>
struct Case {
  P pattern;
  C condition;
  R replacement;
  static constexpr int depth = P::depth;
  static std::vector<OpKey> roots() { return P::roots(); }
  static bool has_root(const OpKey& key) {
    static const std::vector<OpKey> keys = roots();
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  }
  // Containment and the condition run as the match's last step, so that a failure there makes the
  // matchers try their other choices (commutative orders, alternatives). The kept values of the last
  // attempt, the one that matched, stay in the Match for the replacement.
  bool match(ir::NodeId root, Match& m) const {
    return pattern.template match_node<0>(root, m, [&] {
      m.forget_kept();  // the captures may be bound otherwise than at the last attempt
      return is_contained(m) && condition.eval(m);
    });
  }
  bool explain(ir::NodeId root, Match& m) const {
    return pattern.template match_node<0>(root, m, [&] {
      m.forget_kept();
      if (!is_contained(m)) {
        m.failed(Match::kMaxNodes, [] { return std::string("a matched node has consumers outside the match"); });
        return false;
      }
      std::string failed;
      if (explain_condition(condition, m, failed)) return true;
      m.failed(Match::kMaxNodes + 1, [&] { return failed; });
      return false;
    });
  }
  // "pattern -> replacement  when condition  where S = ...": the definitions of the names this case uses
  // that the rule's earlier cases did not print (`out` holds theirs).
  void print(Printer& out) const {
    const std::size_t known = out.definitions.size();
    out.in_pattern = true;
    pattern.print(out);
    out.in_pattern = false;
    out += " -> ";
    replacement.print(out);
    if constexpr (!std::is_same_v<C, Always>) {
      out += "  when ";
      condition.print(out);
    }
    out += out.where(known);
  }
};

// A rule made of one or more cases (a Cons list), tried in order; the first that matches is applied.
template <class Cases>
class TypedRule final : public Rule {
 public:
  TypedRule(std::string name, int priority, Cases cases)
      : Rule(std::move(name), priority), cases_(std::move(cases)) {}

  std::vector<OpKey> roots() const override {
    std::vector<OpKey> out;
    collect_roots(cases_, out);
    return out;
  }
  std::string explain(const ir::Graph& g, ir::NodeId root, int64_t opset) const override {
    const ir::Node& n = g.node(root);
    std::string why;
    Match m;
    m.explain_into(&why);
    if (explain_cases(cases_, OpKey{n.domain, n.op_type}, g, root, opset, m)) return "";
    return why.empty() ? "the root's op type is not one of the rule's" : why;
  }
  int depth() const override { return max_depth(cases_); }
  bool match(const ir::Graph& g, ir::NodeId root, int64_t opset, Match& m) const override {
    const ir::Node& n = g.node(root);
    return match_cases(cases_, OpKey{n.domain, n.op_type}, g, root, opset, m, 0);
  }
  std::optional<ir::ValueId> build(Rewriter& r) const override { return build_case(cases_, r, r.match().case_index); }
  using Rule::describe;
  std::string describe(const std::vector<Definition>& known) const override {
    Printer out;
    out.known = &known;
    out += name() + ": ";
    describe_cases(cases_, out, true);
    return out.text + "  [P" + std::to_string(priority()) + "]";
  }
  std::vector<Definition> definitions() const override {
    Printer out;
    describe_cases(cases_, out, true);
    std::vector<Definition> once;
    for (Definition& d : out.definitions)
      if (std::find(once.begin(), once.end(), d) == once.end()) once.push_back(std::move(d));
    return once;
  }

 private:
  template <class L>
  static void collect_roots(const L& list, std::vector<OpKey>& out) {
    if constexpr (L::size > 0) {
      for (const OpKey& key : decltype(list.head)::roots())
        if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(key);
      collect_roots(list.tail, out);
    }
  }
  template <class L>
  static int max_depth(const L& list) {
    if constexpr (L::size == 0) return 0;
    else return std::max(decltype(list.head)::depth, max_depth(list.tail));
  }
  template <class L>
  static bool match_cases(const L& list, OpKey key, const ir::Graph& g, ir::NodeId root, int64_t opset, Match& m,
                          int index) {
    if constexpr (L::size == 0) return false;
    else {
      if (decltype(list.head)::has_root(key)) {
        m.reset(g, opset);
        m.case_index = index;
        if (list.head.match(root, m)) return true;
      }
      return match_cases(list.tail, key, g, root, opset, m, index + 1);
    }
  }
  template <class L>
  static bool explain_cases(const L& list, OpKey key, const ir::Graph& g, ir::NodeId root, int64_t opset, Match& m) {
    if constexpr (L::size == 0) return false;
    else {
      if (decltype(list.head)::has_root(key)) {
        m.reset(g, opset);
        if (list.head.explain(root, m)) return true;
      }
      return explain_cases(list.tail, key, g, root, opset, m);
    }
  }
  template <class L>
  static std::optional<ir::ValueId> build_case(const L& list, Rewriter& r, int index) {
    if constexpr (L::size == 0) return std::nullopt;
    else if (index == 0) return list.head.replacement.build(r);
    else return build_case(list.tail, r, index - 1);
  }
  template <class L>
  static void describe_cases(const L& list, Printer& out, bool first) {
    if constexpr (L::size > 0) {
      if (!first) out += "  |  ";
      list.head.print(out);
      describe_cases(list.tail, out, false);
    }
  }
  Cases cases_;
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
  // The replacement: gives a rule (converted to RulePtr) or, inside cases(...), one of its cases.
  // .to(root, also(v, r)...): besides the root, the consumers of matched values v read what r builds.
  template <class R, class... Extras>
  auto to(const R& replacement, const Extras&... extras) const {
    if constexpr (sizeof...(Extras) == 0) {
      static_assert((R::uses & ~P::binds) == 0,
                    "xexp rule: the replacement uses a capture that the pattern does not bind");
      return Finished<R>{name_, priority_, Case<P, C, R>{pattern_, condition_, replacement}};
    } else {
      auto list = make_list(extras...);
      return to(WithAlso<R, decltype(list)>{{}, replacement, list});
    }
  }

 private:
  template <class R>
  struct Finished {
    std::string name;
    int priority;
    Case<P, C, R> only;
    operator RulePtr() const {  // NOLINT: a finished one-case rule is a rule
      using List = Cons<Case<P, C, R>, Nil>;
      return std::make_shared<TypedRule<List>>(name, priority, List{only, {}});
    }
  };
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

template <class P>
auto check_pattern(const P& pattern) {
  static_assert(P::node_count >= 1, "xexp rule: the pattern's root must be a node");
  static_assert(!kinds_of<P>().clash,
                "xexp rule: one letter names two kinds of capture (say Var<'a'> and Int<'a'>); use another letter");
  static_assert(P::node_count <= Match::kMaxNodes, "xexp rule: the pattern has too many nodes");
  return pattern;
}

class RuleStart {
 public:
  explicit RuleStart(std::string name) : name_(std::move(name)) {}
  RuleStart& priority(int p) {
    priority_ = p;
    return *this;
  }
  template <class P>
  auto match(const P& pattern) const {
    return RuleDraft<P, Always>(name_, priority_, check_pattern(pattern), Always{});
  }
  // Several cases under one name: rule("X").cases(match(p1).to(r1), match(p2).when(c).to(r2)).
  template <class... Finished>
  RulePtr cases(const Finished&... cases) const {
    auto list = make_list(cases.only...);
    return std::make_shared<TypedRule<decltype(list)>>(name_, priority_, list);
  }

 private:
  std::string name_;
  int priority_ = 0;
};
inline RuleStart rule(std::string name) { return RuleStart(std::move(name)); }
// A case of a multi-case rule (see RuleStart::cases).
template <class P>
auto match(const P& pattern) {
  return RuleDraft<P, Always>("", 0, check_pattern(pattern), Always{});
}

}  // namespace xexp::rewrite
