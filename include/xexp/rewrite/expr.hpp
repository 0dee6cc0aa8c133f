#pragma once
// Expressions over captures: the conditions of a rule (`rank(x) == 2 && is_scalar(c)`) and the computed
// parts of its replacement (attribute values, folded constants). Every expression type carries the
// mask of captures it `uses`, so that a rule can refuse at compile time to read a capture its pattern
// never binds. `call(name, lambda, captures...)` is the escape hatch: the lambda receives the evaluated
// captures it names, so the compile-time check still holds.
#include <algorithm>
#include <concepts>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "xexp/rewrite/fixed_string.hpp"
#include "xexp/rewrite/match.hpp"

namespace xexp::rewrite {

struct ExprTag {};
template <class T>
concept IsExpr = std::derived_from<T, ExprTag>;

// ---- printing ---------------------------------------------------------------------------------------
// A rule prints itself (Rule::describe, --explain) into a Printer: the text, where a name (a named
// sub-pattern's or let's letter, a named<"word"> piece of a condition or replacement) prints alone, and
// the definitions of those names ("S = ..."), which the rule prints once as "where S = ...": printed in
// place, a name used in several branches would print its whole body in each (the attention rules'
// patterns ran past 15,000 characters).
// A name ("S", "merge_heads(x)") and what it stands for.
using Definition = std::pair<std::string, std::string>;
struct Printer {
  std::string text;
  std::vector<Definition> definitions;  // in the order the names first print
  // Definitions printed elsewhere, which `where` leaves out (the catalogue defines the pieces several
  // rules share once for all of them).
  const std::vector<Definition>* known = nullptr;
  // A named sub-pattern is defined where the pattern says it; in a condition or a replacement it stands
  // for the node it matched (whose pattern may be another case's, under the same letter).
  bool in_pattern = true;
  Printer& operator+=(std::string_view s) {
    text += s;
    return *this;
  }
  Printer& operator+=(char c) {
    text += c;
    return *this;
  }
  // Prints `id`, and records its definition as `body` prints it (with the definitions nested in it).
  template <class Body>
  void name(std::string_view id, const Body& body) {
    text += id;
    define(std::string(id), body);
  }
  // Records the definition of `id` as `body` prints it, printing nothing in place.
  template <class Body>
  void define(std::string id, const Body& body) {
    const std::size_t slot = definitions.size();
    definitions.emplace_back(std::move(id), std::string());
    std::string outer = std::exchange(text, std::string());
    body(*this);
    definitions[slot].second = std::exchange(text, std::move(outer));
  }
  template <class Body>
  void name(char id, const Body& body) {
    name(std::string_view(&id, 1), body);
  }
  // "  where S = ..., Q = ...": the definitions from `first` on, each only once (a name used twice
  // records its definition twice; a rule's later case repeats the definitions an earlier one printed).
  std::string where(std::size_t first) const {
    std::string out;
    for (std::size_t k = first; k < definitions.size(); ++k) {
      const auto earlier = definitions.begin() + static_cast<std::ptrdiff_t>(k);
      if (std::find(definitions.begin(), earlier, definitions[k]) != earlier ||
          (known && std::find(known->begin(), known->end(), definitions[k]) != known->end()))
        continue;
      out += out.empty() ? "  where " : "; ";
      out += definitions[k].first;
      out += " = " + definitions[k].second;
    }
    return out;
  }
};
inline void print_value(std::string& out, int64_t v) { out += std::to_string(v); }
inline void print_value(std::string& out, int v) { out += std::to_string(v); }
inline void print_value(std::string& out, bool v) { out += v ? "true" : "false"; }
inline void print_value(std::string& out, double v) {
  std::ostringstream s;
  s << v;
  out += s.str();
}
inline void print_value(std::string& out, float v) { print_value(out, static_cast<double>(v)); }
inline void print_value(std::string& out, const std::string& v) { out += "'" + v + "'"; }
inline void print_value(std::string& out, ElemType v) { out += elem_type_name(v); }
inline void print_value(std::string& out, const std::vector<int64_t>& v) {
  out += "[";
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (k) out += ",";
    out += std::to_string(v[k]);
  }
  out += "]";
}
inline void print_value(std::string& out, const Tensor& t) {
  if (t.type() == ElemType::Int64 && t.size() <= 8) {
    auto data = t.data<int64_t>();
    print_value(out, std::vector<int64_t>(data.begin(), data.end()));
  } else {
    out += "tensor";
  }
}

// ---- capture kinds: one letter names one kind of capture in a pattern ------------------------------
// Var<'a'> and Int<'a'> would share the slot index of 'a' (values and attributes live in separate
// arrays, the bound mask has one bit per letter): the second would compare against a slot the first
// never set. Each pattern piece states the kind of the letters it binds; check_pattern rejects a clash.
enum class CaptureKind : uint8_t { None, Value, Constant, Optional, Node, Int, Ints, Float, String, Branch };
struct CaptureKinds {
  CaptureKind kind[kCaptureCount]{};
  bool clash = false;
};
template <class T>
constexpr CaptureKinds kinds_of() {
  if constexpr (requires { T::kinds; }) return T::kinds;
  else return {};
}
constexpr CaptureKinds merge_kinds(CaptureKinds a, const CaptureKinds& b) {
  a.clash = a.clash || b.clash;
  for (int k = 0; k < kCaptureCount; ++k) {
    if (b.kind[k] == CaptureKind::None) continue;
    if (a.kind[k] != CaptureKind::None && a.kind[k] != b.kind[k]) a.clash = true;
    a.kind[k] = b.kind[k];
  }
  return a;
}
template <char Id, CaptureKind Kind>
constexpr CaptureKinds one_kind() {
  CaptureKinds out;
  out.kind[capture_index<Id>()] = Kind;
  return out;
}

// ---- lists (instead of std::tuple: cheap to instantiate, walked by recursion) -----------------------
struct Nil {
  static constexpr CaptureMask binds = 0, uses = 0;
  static constexpr int depth = 0, node_count = 0;
  static constexpr std::size_t size = 0;
};
template <class H, class T>
struct Cons {
  H head;
  T tail;
  static constexpr CaptureMask binds = H::binds | T::binds;
  static constexpr CaptureMask uses = H::uses | T::uses;
  static constexpr int depth = H::depth > T::depth ? H::depth : T::depth;
  static constexpr int node_count = H::node_count + T::node_count;
  static constexpr std::size_t size = 1 + T::size;
  static constexpr CaptureKinds kinds = merge_kinds(kinds_of<H>(), kinds_of<T>());
};
template <class L, class T>
constexpr auto append(const L& list, const T& item) {
  if constexpr (L::size == 0) return Cons<T, Nil>{item, {}};
  else {
    auto tail = append(list.tail, item);
    return Cons<decltype(list.head), decltype(tail)>{list.head, tail};
  }
}
template <class L>
constexpr auto append_all(const L& list) { return list; }
template <class L, class T, class... Ts>
constexpr auto append_all(const L& list, const T& first, const Ts&... rest) {
  return append_all(append(list, first), rest...);
}
template <class... Ts>
constexpr auto make_list(const Ts&... items) {
  Nil empty;
  if constexpr (sizeof...(Ts) == 0) return empty;
  else return append_all(empty, items...);
}
// Prints the items of a list separated by ", ".
template <class L>
void print_list(Printer& out, const L& list, bool first = true) {
  if constexpr (L::size > 0) {
    if (!first) out += ", ";
    list.head.print(out);
    print_list(out, list.tail, false);
  }
}

// ---- literals ---------------------------------------------------------------------------------------
template <class T>
struct Lit : ExprTag {
  T value;
  static constexpr CaptureMask binds = 0, uses = 0;
  static constexpr int depth = 0, node_count = 0;
  const T& eval(const Match&) const { return value; }
  void print(Printer& out) const { print_value(out.text, value); }
};
template <class T>
constexpr auto lift(const T& v) {
  if constexpr (IsExpr<T>) return v;
  else if constexpr (std::is_convertible_v<T, std::string_view> && !std::is_arithmetic_v<T>)
    return Lit<std::string>{{}, std::string(v)};
  else if constexpr (std::is_same_v<T, bool>) return Lit<bool>{{}, v};
  else if constexpr (std::is_integral_v<T>) return Lit<int64_t>{{}, static_cast<int64_t>(v)};
  else if constexpr (std::is_floating_point_v<T>) return Lit<float>{{}, static_cast<float>(v)};
  else return Lit<T>{{}, v};
}
template <class T>
using Lifted = decltype(lift(std::declval<T>()));

// ---- calls: built-in functions and the lambda escape hatch ------------------------------------------
template <class F, class L, class... Done>
decltype(auto) apply_list(const F& f, const L& list, const Match& m, Done&&... done) {
  if constexpr (L::size == 0) return f(std::forward<Done>(done)...);
  else return apply_list(f, list.tail, m, std::forward<Done>(done)..., list.head.eval(m));
}

template <class F, class Args>
struct Call : ExprTag {
  const char* name;
  F f;
  Args args;
  static constexpr CaptureMask binds = 0, uses = Args::uses;
  static constexpr int depth = 0, node_count = 0;
  decltype(auto) eval(const Match& m) const { return apply_list(f, args, m); }
  void print(Printer& out) const {
    out += name;
    out += "(";
    print_list(out, args);
    out += ")";
  }
};
template <class F, class... Args>
constexpr auto call(const char* name, F f, const Args&... args) {
  auto list = make_list(lift(args)...);
  return Call<F, decltype(list)>{{}, name, f, list};
}

// ---- named facts ------------------------------------------------------------------------------------
// A fact is declared once, with its name, and used by that name in any rule:
//   inline constexpr auto is_last_axis = fact<"is_last_axis">([](int64_t axis, const ValueView& x) {...});
//   ... .when(is_last_axis(axis, x))           prints "is_last_axis(axis, x)"
// The printed name comes from the declaration, so it cannot drift from the function that runs. A fact
// may also compute a value (an axis, a folded tensor), used in conditions and replacements alike.
template <FixedString Name, class F>
struct Fact {
  F f;
  template <class... Args>
  constexpr auto operator()(const Args&... args) const {
    auto list = make_list(lift(args)...);
    return Call<F, decltype(list)>{{}, Name.data, f, list};
  }
};
template <FixedString Name, class F>
constexpr Fact<Name, F> fact(F f) {
  return {f};
}

// ---- names for pieces of conditions and replacements ------------------------------------------------
// named<"groups">(e): e itself (evaluated and built as written: nothing is shared, nothing costs more),
// printed as `groups` and defined once in the rule's "where groups = ...", as MLIR DRR's `$name` and
// onnxscript's local variables read. A replacement piece written in several branches of a choose, a
// condition every case of a rule asks, a kept fact many pieces read: each prints once.
//   auto query = named<"query">(Reshape(Transpose(q, attr<"perm"> = swap), fold(merged_shape(q))));
//   auto fits = named<"fits">(is_float(q) && heads_fit(q, k, v));
//   ... .when(fits).to(choose(causal, Attention(query, k, v, attr<"is_causal"> = 1), Attention(query, k, v, m)))
// prints "... -> choose(causal, Attention(query, k, v, is_causal=1), Attention(query, k, v, m))  when fits
// where query = Reshape(...); fits = (is_float(q) && heads_fit(q, k, v))". `--explain` looks inside a
// named condition: the reason names the conjunct that failed, not the name.
// (named<'d'>(pattern), a letter, is the DAG node of a pattern: pattern.hpp.)
template <FixedString Name, class E>
struct NamedPiece : ExprTag {
  E expr;
  static constexpr CaptureMask binds = 0, uses = E::uses;
  static constexpr int depth = 0, node_count = 0;
  decltype(auto) eval(const Match& m) const { return expr.eval(m); }
  template <class Rewriter>
  decltype(auto) build(Rewriter& r) const {
    return expr.build(r);
  }
  // A named node built with more outputs (outputs<N>).
  template <class Rewriter>
  decltype(auto) build(Rewriter& r, std::size_t n_outputs) const {
    return expr.build(r, n_outputs);
  }
  void print(Printer& out) const {
    out.name(Name.view(), [&](Printer& body) { expr.print(body); });
  }
};
template <FixedString Name, class E>
constexpr auto named(const E& e) {
  static_assert(Name.view().size() > 1, "xexp rule: a piece's name is a word (a letter names a pattern node)");
  return NamedPiece<Name, Lifted<E>>{{}, lift(e)};
}
// piece<"merge_heads">([](const auto& x) { return Reshape(Transpose(x, ...), fold(merged_shape(x))); }):
// a named piece with parameters, as an onnxscript function or a DRR helper reads. merge_heads(q) is the
// body written for q (inlined at compile time: it evaluates and builds as the body does), printed as
// "merge_heads(q)" and defined once as "merge_heads(x) = Reshape(Transpose(x, ...), ...)", whatever it is
// applied to: the body prints on formal parameters x, y, z, w.
template <int K>
struct Formal : ExprTag {
  static_assert(K < 4, "xexp rule: a piece has at most four parameters");
  static constexpr CaptureMask binds = 0, uses = 0;
  static constexpr int depth = 0, node_count = 0;
  ValueView eval(const Match&) const;  // only printed, never evaluated nor built
  template <class Rewriter>
  ir::ValueId build(Rewriter&) const;
  void print(Printer& out) const { out += "xyzw"[K]; }
};
template <FixedString Name, class F, class Body, class Args>
struct PieceCall : ExprTag {
  F f;
  Body body;
  Args args;
  static constexpr CaptureMask binds = 0, uses = Body::uses | Args::uses;
  static constexpr int depth = 0, node_count = 0;
  decltype(auto) eval(const Match& m) const { return body.eval(m); }
  template <class Rewriter>
  decltype(auto) build(Rewriter& r) const {
    return body.build(r);
  }
  void print(Printer& out) const {
    out += Name.view();
    out += "(";
    print_list(out, args);
    out += ")";
    print_definition(out, std::make_integer_sequence<int, Args::size>());
  }

 private:
  template <int... K>
  void print_definition(Printer& out, std::integer_sequence<int, K...>) const {
    std::string id(Name.view());
    id += "(";
    ((id += (K ? ", " : ""), id += "xyzw"[K]), ...);
    id += ")";
    out.define(std::move(id), [&](Printer& text) { f(Formal<K>{}...).print(text); });
  }
};
template <FixedString Name, class F>
struct Piece {
  F f;
  template <class... Args>
  constexpr auto operator()(const Args&... args) const {
    auto body = f(lift(args)...);
    auto list = make_list(lift(args)...);
    return PieceCall<Name, F, decltype(body), decltype(list)>{{}, f, body, list};
  }
};
template <FixedString Name, class F>
constexpr Piece<Name, F> piece(F f) {
  return {f};
}

template <class T>
inline constexpr bool is_named_piece = false;
template <FixedString Name, class E>
inline constexpr bool is_named_piece<NamedPiece<Name, E>> = true;

// ---- kept facts: computed once per match -----------------------------------------------------------
// keep<'u'>(fact(args...)): the fact's result, computed the first time a condition or the replacement
// reads it and kept in the Match (match.hpp) for the later readers. A fact that finds a structure (the
// readers of a value, the tables of a rotary cache) is declared once, kept, and read by small facts in
// `when` and by the replacement, instead of being run again by each:
//   auto tiling = keep<'t'>(tiling_of(root));
//   ... .when(tiles_the_axis(tiling)).to(split_into(tiling))
// The letter names the kept value among the rule's kept values (its own letters, apart from the
// captures); it prints as the expression it keeps. keep<"scale">(fact(args...)) is the same kept under
// a name, which it prints as (named<"scale">): a fact read in many places prints once, and two kept
// facts of one letter (one per input a helper reads) print apart.
template <char Id, class E, FixedString Name = "">
struct Keep : ExprTag {
  E expr;
  static constexpr CaptureMask binds = 0, uses = E::uses;
  static constexpr int depth = 0, node_count = 0;
  using Value = std::decay_t<decltype(std::declval<const E&>().eval(std::declval<const Match&>()))>;
  const Value& eval(const Match& m) const {
    static_assert(Id >= kFirstCapture && Id <= kLastCapture, "xexp rule: a kept value is named by a letter");
    return m.kept<Value, Keep>(Id, [&]() -> Value { return expr.eval(m); });
  }
  void print(Printer& out) const { expr.print(out); }
};
template <char Id, class E>
constexpr auto keep(const E& e) {
  return Keep<Id, Lifted<E>>{{}, lift(e)};
}
template <FixedString Name, class E>
constexpr auto keep(const E& e) {
  return named<Name>(Keep<kFirstCapture, Lifted<E>, Name>{{}, lift(e)});
}

// ---- operators --------------------------------------------------------------------------------------
// Enumerations compare with the integers attributes hold (`dtype(x) == to`).
template <class T>
constexpr decltype(auto) normalized(const T& v) {
  if constexpr (std::is_enum_v<T>) return static_cast<int64_t>(v);
  else return (v);
}
template <class Op, class A, class B>
struct Binary : ExprTag {
  A a;
  B b;
  static constexpr CaptureMask binds = 0, uses = A::uses | B::uses;
  static constexpr int depth = 0, node_count = 0;
  auto eval(const Match& m) const { return Op::apply(a, b, m); }
  void print(Printer& out) const {
    out += "(";
    print_operands(out);
    out += ")";
  }
  // A chain of one associative operator prints in one pair of parentheses: (a && b && c).
  void print_operands(Printer& out) const {
    if constexpr (Op::associative && requires { requires std::is_same_v<typename A::Operator, Op>; })
      a.print_operands(out);
    else
      a.print(out);
    out += Op::symbol;
    b.print(out);
  }
  using Operator = Op;
};
#define XEXP_REWRITE_COMPARISON(NAME, OP)                                                        \
  struct NAME {                                                                                  \
    static constexpr const char* symbol = " " #OP " ";                                           \
    static constexpr bool associative = false;                                                   \
    template <class A, class B>                                                                  \
    static bool apply(const A& a, const B& b, const Match& m) {                                  \
      return normalized(a.eval(m)) OP normalized(b.eval(m));                                     \
    }                                                                                            \
  };                                                                                             \
  template <class A, class B>                                                                    \
    requires(IsExpr<A> || IsExpr<B>)                                                             \
  constexpr auto operator OP(const A& a, const B& b) {                                           \
    return Binary<NAME, Lifted<A>, Lifted<B>>{{}, lift(a), lift(b)};                             \
  }
XEXP_REWRITE_COMPARISON(Equal, ==)
XEXP_REWRITE_COMPARISON(NotEqual, !=)
XEXP_REWRITE_COMPARISON(Less, <)
XEXP_REWRITE_COMPARISON(LessEqual, <=)
XEXP_REWRITE_COMPARISON(Greater, >)
XEXP_REWRITE_COMPARISON(GreaterEqual, >=)
#undef XEXP_REWRITE_COMPARISON
// Arithmetic on what captures evaluate to (attribute values): attr<"transA"> = 1 - trans_a; and on
// dimensions, `dim(q, 3) % 8 == 0`.
#define XEXP_REWRITE_ARITHMETIC(NAME, OP)                                                        \
  struct NAME {                                                                                  \
    static constexpr const char* symbol = " " #OP " ";                                           \
    static constexpr bool associative = false;                                                   \
    template <class A, class B>                                                                  \
    static auto apply(const A& a, const B& b, const Match& m) {                                  \
      return normalized(a.eval(m)) OP normalized(b.eval(m));                                     \
    }                                                                                            \
  };                                                                                             \
  template <class A, class B>                                                                    \
    requires(IsExpr<A> || IsExpr<B>)                                                             \
  constexpr auto operator OP(const A& a, const B& b) {                                           \
    return Binary<NAME, Lifted<A>, Lifted<B>>{{}, lift(a), lift(b)};                             \
  }
XEXP_REWRITE_ARITHMETIC(Plus, +)
XEXP_REWRITE_ARITHMETIC(Minus, -)
XEXP_REWRITE_ARITHMETIC(Times, *)
XEXP_REWRITE_ARITHMETIC(Modulo, %)
#undef XEXP_REWRITE_ARITHMETIC

struct And {
  static constexpr const char* symbol = " && ";
  static constexpr bool associative = true;
  template <class A, class B>
  static bool apply(const A& a, const B& b, const Match& m) { return a.eval(m) && b.eval(m); }
};
struct Or {
  static constexpr const char* symbol = " || ";
  static constexpr bool associative = true;
  template <class A, class B>
  static bool apply(const A& a, const B& b, const Match& m) { return a.eval(m) || b.eval(m); }
};
template <IsExpr A, IsExpr B>
constexpr auto operator&&(const A& a, const B& b) { return Binary<And, A, B>{{}, a, b}; }
template <IsExpr A, IsExpr B>
constexpr auto operator||(const A& a, const B& b) { return Binary<Or, A, B>{{}, a, b}; }
template <class T>
inline constexpr bool is_conjunction = false;
template <class A, class B>
inline constexpr bool is_conjunction<Binary<And, A, B>> = true;

// Evaluates a condition; when it fails, `why` gets its first false conjunct ("is_last_axis(axis, x)
// failed"). Only `xexp optimize --explain` comes here: the optimizer calls eval.
// A named condition is looked into; a name inside the false conjunct is defined after it ("has_value(scale)
// failed  where scale = attention_scale(S, Q)").
template <class C>
bool explain_condition(const C& c, const Match& m, std::string& why) {
  if constexpr (is_conjunction<C>)
    return explain_condition(c.a, m, why) && explain_condition(c.b, m, why);
  else if constexpr (is_named_piece<C>)
    return explain_condition(c.expr, m, why);
  else {
    if (c.eval(m)) return true;
    Printer printer;
    printer.in_pattern = false;
    c.print(printer);
    why = printer.text + " failed" + printer.where(0);
    return false;
  }
}

template <IsExpr A>
constexpr auto operator!(const A& a) {
  return call("not", [](bool v) { return !v; }, a);
}

// The condition of a rule without `.when(...)`.
struct Always : ExprTag {
  static constexpr CaptureMask binds = 0, uses = 0;
  static constexpr int depth = 0, node_count = 0;
  bool eval(const Match&) const { return true; }
  void print(Printer&) const {}
};

// The graph's default-domain opset is at least `version` (an op the replacement builds exists).
struct OpsetAtLeast : ExprTag {
  int64_t version;
  static constexpr CaptureMask binds = 0, uses = 0;
  static constexpr int depth = 0, node_count = 0;
  bool eval(const Match& m) const { return m.opset() >= version; }
  void print(Printer& out) const { out += "opset>=" + std::to_string(version); }
};
inline OpsetAtLeast opset_at_least(int64_t version) { return {{}, version}; }

// ---- built-in facts about captured values -----------------------------------------------------------
namespace facts {
inline int64_t rank(const ValueView& v) { return v.shape() ? static_cast<int64_t>(v.shape()->size()) : -1; }
inline int64_t rank(const Tensor& t) { return static_cast<int64_t>(t.rank()); }
inline ElemType dtype(const ValueView& v) { return v.elem(); }
inline ElemType dtype(const Tensor& t) { return t.type(); }
inline Shape shape(const ValueView& v) { return v.shape() ? *v.shape() : Shape{}; }
inline Shape shape(const Tensor& t) { return t.shape(); }
// A dimension in a condition: equal to another only when both are known (same size or same symbol).
struct KnownDim {
  Dim dim;
  friend bool operator==(const KnownDim& a, const KnownDim& b) { return !a.dim.is_unknown() && a.dim == b.dim; }
  friend bool operator==(const KnownDim& a, int64_t b) { return a.dim.is_static() && a.dim.value() == b; }
  // A static size modulo n, unknown otherwise: `dim(q, 3) % 8 == 0` holds for a known multiple of 8.
  friend KnownDim operator%(const KnownDim& a, int64_t n) {
    return {a.dim.is_static() ? Dim(a.dim.value() % n) : Dim()};
  }
};
// Dimension `axis` (negative counts from the end); unknown when the rank is unknown or too small.
inline KnownDim dim(const Shape& s, int64_t axis) {
  if (axis < 0) axis += static_cast<int64_t>(s.size());
  return {axis >= 0 && axis < static_cast<int64_t>(s.size()) ? s[axis] : Dim()};
}
inline bool same_shape(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!(KnownDim{a[k]} == KnownDim{b[k]})) return false;
  return true;
}
inline bool is_scalar(const Shape& s) { return s.empty() || (s.size() == 1 && s[0] == Dim(1)); }
}  // namespace facts

// Rank of a value (-1 when unknown) or of a constant.
template <class E>
constexpr auto rank(const E& e) {
  return call("rank", [](const auto& v) { return facts::rank(v); }, e);
}
// Element type of a value or a constant.
template <class E>
constexpr auto dtype(const E& e) {
  return call("dtype", [](const auto& v) { return facts::dtype(v); }, e);
}
// Dimension `axis` of a value's shape: compares equal to an integer only when static.
template <class E>
constexpr auto dim(const E& e, int64_t axis) {
  return call("dim", [](const auto& v, int64_t a) { return facts::dim(facts::shape(v), a); }, e, axis);
}
// Shape () or (1,), known.
template <class E>
constexpr auto is_scalar(const E& e) {
  return call("is_scalar", [](const auto& v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, ValueView>)
      return v.shape().has_value() && facts::is_scalar(*v.shape());
    else return facts::is_scalar(v.shape());
  }, e);
}
// Both shapes known and equal dimension by dimension (symbols compare by name).
template <class A, class B>
constexpr auto same_shape(const A& a, const B& b) {
  return call("same_shape", [](const ValueView& x, const ValueView& y) {
    return x.shape() && y.shape() && facts::same_shape(*x.shape(), *y.shape());
  }, a, b);
}
// Read by exactly one node input and not a graph output.
template <class E>
constexpr auto single_use(const E& e) {
  return call("single_use", [](const ValueView& v) {
    return v.value().uses.size() == 1 && !v.value().is_graph_output();
  }, e);
}
// An optional input (Opt<'c'>) the node does give.
template <class E>
constexpr auto present(const E& e) {
  return call("present", [](const ValueView& v) { return v.id != ir::kNone; }, e);
}
// The value is an initializer or a Constant output.
template <class E>
constexpr auto is_constant(const E& e) {
  return call("is_constant", [](const ValueView& v) { return v.constant() != nullptr; }, e);
}

// The inputs of the node producing the value (a named node), as a list spread(...) passes on.
template <class E>
constexpr auto inputs_of(const E& e) {
  return call(
      "inputs_of", [](const ValueView& v) -> const std::vector<ir::ValueId>& { return node_of(v).inputs; },
      e);
}
// The outputs of the node producing the value (a named node): `inputs_of(c) == outputs_of(s)`.
template <class E>
constexpr auto outputs_of(const E& e) {
  return call(
      "outputs_of", [](const ValueView& v) -> const std::vector<ir::ValueId>& { return node_of(v).outputs; },
      e);
}

}  // namespace xexp::rewrite
