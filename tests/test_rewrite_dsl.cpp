// The rule DSL's vocabulary on small graphs: named facts (printed by their declared name), commutative
// nodes that try their other order when anything after them fails, either(...), through(...), op families
// and `etc`, rebuild(...) with changed inputs or attributes, several outputs with also(...), found(...),
// kept facts (computed once per match), either<'e'> recording its alternative, rebuild_as and spread,
// and the explanation of why a rule did not match (Rule::explain, OptimizeOptions::explain).
#include <gtest/gtest.h>

#include <sstream>

#include "support/rewrite_helpers.hpp"
#include "xexp/rewrite/dsl.hpp"

using namespace xexp;
using namespace xexp::ir;
using namespace xexp::rewrite::dsl;
using test::node;
using test::op_types;
using test::OpList;
using test::producer;

namespace {

inline constexpr auto is_rank_3 =
    fact<"is_rank_3">([](const ValueView& v) { return v.shape() && v.shape()->size() == 3; });

rewrite::OptimizeStats run(Model& m, const RulePtr& rule, rewrite::OptimizeOptions options = {}) {
  return rewrite::optimize(m, {rule}, options);
}
const Node& output_producer(const Graph& g, std::size_t k = 0) { return producer(g, g.outputs()[k]); }

}  // namespace

// ---- named facts ------------------------------------------------------------------------------------
TEST(RewriteDsl, AFactPrintsTheNameItWasDeclaredWith) {
  Var<'x'> x;
  RulePtr r = rule("NegRank3").match(Relu(x)).when(is_rank_3(x)).to(x);
  EXPECT_EQ(r->describe(), "NegRank3: Relu(x) -> x  when is_rank_3(x)  [P0]");
}

TEST(RewriteDsl, AFactDecidesTheMatch) {
  Var<'x'> x;
  RulePtr r = rule("DropRelu").match(Relu(x)).when(is_rank_3(x)).to(x);
  for (const xexp::Shape& shape : {xexp::Shape{2, 3, 4}, xexp::Shape{2, 3}}) {
    Model m = test::model_with_opset(18);
    Graph& g = *m.graph;
    g.add_output(node(g, "Neg", {node(g, "Relu", {g.add_input("X", ElemType::Float, shape)})}));
    run(m, r);
    EXPECT_EQ(op_types(g), shape.size() == 3 ? (OpList{"Neg"}) : (OpList{"Relu", "Neg"}));
  }
}

// ---- commutative nodes backtrack --------------------------------------------------------------------
// Add(Mul(p, q), q): the first order of the Mul binds a=p, and the Add's second input q then differs
// from a; the Mul must try a=q, b=p.
TEST(RewriteDsl, CommutativeTriesItsOtherOrderWhenASiblingFails) {
  Var<'a'> a;
  Var<'b'> b;
  RulePtr r = rule("T").match(Add(commutative(Mul(a, b)), a)).to(Sub(a, b));
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId p = g.add_input("P", ElemType::Float, xexp::Shape{2});
  ValueId q = g.add_input("Q", ElemType::Float, xexp::Shape{2});
  g.add_output(node(g, "Add", {node(g, "Mul", {p, q}), q}));
  run(m, r);
  ASSERT_EQ(op_types(g), (OpList{"Sub"}));
  EXPECT_EQ(output_producer(g).inputs, (std::vector<ValueId>{q, p}));
}

// Mul(C, X) with the constant first: the first order binds x=C, c=X and fails the condition.
TEST(RewriteDsl, CommutativeTriesItsOtherOrderWhenTheConditionFails) {
  Var<'x'> x;
  Var<'c'> c;
  RulePtr r = rule("T").match(commutative(Mul(x, c))).when(is_constant(c) && !is_constant(x)).to(Neg(x));
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId xin = g.add_input("X", ElemType::Float, xexp::Shape{2});
  ValueId cst = g.add_initializer("C", Tensor::from<float>({2}, {1.f, 2.f}));
  g.add_output(node(g, "Mul", {cst, xin}));
  run(m, r);
  ASSERT_EQ(op_types(g), (OpList{"Neg"}));
  EXPECT_EQ(output_producer(g).inputs, (std::vector<ValueId>{xin}));
}

// ---- found(...): a value the pattern does not spell ---------------------------------------------------
// The input of a chain of Identity nodes of any length, which no fixed pattern spells.
inline constexpr auto before_identities = fact<"before_identities">([](const ValueView& v) {
  const Graph& g = *v.graph;
  ValueId id = v.id;
  while (g.value(id).producer != kNone && g.node(g.value(id).producer).op_type == Symbol("Identity"))
    id = g.node(g.value(id).producer).inputs[0];
  return ValueView{v.graph, id};
});

TEST(RewriteDsl, FoundReadsAValueAFactFinds) {
  Var<'x'> x;
  RulePtr r = rule("ReluBeforeIdentities").match(Relu(x)).to(Relu(found(before_identities(x))));
  EXPECT_EQ(r->describe(), "ReluBeforeIdentities: Relu(x) -> Relu(found(before_identities(x)))  [P0]");
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  const ValueId xin = g.add_input("X", ElemType::Float, xexp::Shape{2});
  g.add_output(node(g, "Relu", {node(g, "Identity", {node(g, "Identity", {node(g, "Identity", {xin})})})}));
  run(m, r);
  ASSERT_EQ(op_types(g), (OpList{"Relu"}));
  EXPECT_EQ(output_producer(g).inputs, (std::vector<ValueId>{xin}));
}

// ---- kept facts: computed once per match --------------------------------------------------------------
// A fact that counts its calls: kept, it runs once for a match that reads it in two conditions and in
// the replacement; each attempt of a backtracking match computes it anew for its own bindings.
namespace {
int producer_calls = 0;
inline constexpr auto counted_input = fact<"counted_input">([](const ValueView& v) {
  ++producer_calls;
  return v.value().producer == ir::kNone ? v.id : ir::kNone;
});
// Relu(X) rewritten by `r`, a rule keeping counted_input(x) and reading it three times: Neg(X), with one
// call of the fact (the match found once, rewritten once).
void expect_input_negated_with_one_call(const RulePtr& r) {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  const ValueId xin = g.add_input("X", ElemType::Float, xexp::Shape{2});
  g.add_output(node(g, "Relu", {xin}));
  producer_calls = 0;
  run(m, r);
  ASSERT_EQ(op_types(g), (OpList{"Neg"}));
  EXPECT_EQ(output_producer(g).inputs, (std::vector<ValueId>{xin}));
  EXPECT_EQ(producer_calls, 1);
}
}  // namespace
TEST(RewriteDsl, AKeptFactRunsOncePerMatch) {
  Var<'x'> x;
  auto input = keep<'i'>(counted_input(x));
  RulePtr r =
      rule("NegOfInput").match(Relu(x)).when(input != ir::kNone && input == input).to(Neg(found(input)));
  EXPECT_EQ(r->describe(),
            "NegOfInput: Relu(x) -> Neg(found(counted_input(x)))  when ((counted_input(x) != 4294967295) && "
            "(counted_input(x) == counted_input(x)))  [P0]");
  expect_input_negated_with_one_call(r);
}

// Mul(C, X): the first order binds x=C (an initializer, no producer either) and fails is_constant; the
// second binds x=X. The replacement must read what the fact found for X, not the kept C.
TEST(RewriteDsl, AKeptFactIsComputedAgainForAnotherAttempt) {
  Var<'x'> x;
  Var<'c'> c;
  auto input = keep<'i'>(counted_input(x));
  RulePtr r = rule("NegOfInput")
                  .match(commutative(Mul(x, c)))
                  .when(input != ir::kNone && is_constant(c))
                  .to(Neg(found(input)));
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  const ValueId xin = g.add_input("X", ElemType::Float, xexp::Shape{2});
  const ValueId cst = g.add_initializer("C", Tensor::from<float>({2}, {1.f, 2.f}));
  g.add_output(node(g, "Mul", {cst, xin}));
  producer_calls = 0;
  run(m, r);
  ASSERT_EQ(op_types(g), (OpList{"Neg"}));
  EXPECT_EQ(output_producer(g).inputs, (std::vector<ValueId>{xin}));
  EXPECT_EQ(producer_calls, 2);  // one per attempt
}

// either<'e'>(a, b) records which alternative matched; the replacement chooses on it.
TEST(RewriteDsl, EitherRecordsWhichAlternativeMatched) {
  Var<'x'> x;
  auto e = either<'e'>(Relu(x), Sigmoid(x));
  RulePtr r = rule("T").match(Exp(e)).to(choose(e == 0, Neg(x), Abs(x)));
  EXPECT_EQ(r->describe(),
            "T: Exp(e) -> choose((e == 0), Neg(x), Abs(x))  where e = either(Relu(x), Sigmoid(x))  [P0]");
  for (const char* op : {"Relu", "Sigmoid"}) {
    Model m = test::model_with_opset(18);
    Graph& g = *m.graph;
    g.add_output(node(g, "Exp", {node(g, op, {g.add_input("X", ElemType::Float, xexp::Shape{2})})}));
    run(m, r);
    EXPECT_EQ(op_types(g), std::string(op) == "Relu" ? (OpList{"Neg"}) : (OpList{"Abs"})) << op;
  }
}

// ---- alternatives, op families, any further inputs --------------------------------------------------
TEST(RewriteDsl, EitherMatchesOneAlternativeOrTheOther) {
  Var<'x'> x;
  Var<'p'> two;
  RulePtr r = rule("Square").match(either(Pow(x, two), Mul(x, x))).to(op<"Square", "test">(x));
  for (const char* op : {"Pow", "Mul", "Sub"}) {
    Model m = test::model_with_opset(18);
    Graph& g = *m.graph;
    ValueId xin = g.add_input("X", ElemType::Float, xexp::Shape{2});
    ValueId second =
        std::string(op) == "Pow" ? g.add_initializer("Two", Tensor::from<float>({}, {2.f})) : xin;
    g.add_output(node(g, op, {xin, second}));
    run(m, r);
    EXPECT_EQ(op_types(g), std::string(op) == "Sub" ? (OpList{"Sub"}) : (OpList{"test.Square"})) << op;
  }
}

// through<"what", skip>(p): p, or p inside the wrapper `skip` finds (here a Sign, standing for a wrapper
// of any shape); the wrapper's nodes join the match and go with it. A wrapper whose inside is no p, or
// whose inside has a consumer outside the match, makes no match.
namespace {
rewrite::Skipped skip_sign(const Graph& g, ValueId v) {
  const Node& n = g.node(g.value(v).producer);
  if (n.op_type != Symbol("Sign")) return {};
  return {n.inputs[0], {g.value(v).producer}, 1};
}
}  // namespace
TEST(RewriteDsl, ThroughReadsPastAWrapperItsFunctionFinds) {
  Var<'x'> x;
  RulePtr r = rule("ReluOfNeg").match(Relu(through<"sign", skip_sign>(Neg(x)))).to(Abs(x));
  EXPECT_EQ(r->describe(), "ReluOfNeg: Relu(through(sign, Neg(x))) -> Abs(x)  [P0]");
  for (const char* inside : {"Neg", "Sign of Neg", "Sign of Exp", "Sign of Neg read twice"}) {
    Model m = test::model_with_opset(18);
    Graph& g = *m.graph;
    const ValueId xin = g.add_input("X", ElemType::Float, xexp::Shape{2});
    const std::string what = inside;
    ValueId v = node(g, what == "Sign of Exp" ? "Exp" : "Neg", {xin});
    if (what == "Sign of Neg read twice") g.add_output(v);
    if (what != "Neg") v = node(g, "Sign", {v});
    g.add_output(node(g, "Relu", {v}));
    run(m, r);
    const bool fused = what == "Neg" || what == "Sign of Neg";
    EXPECT_EQ(op_types(g).back(), fused ? "Abs" : "Relu") << inside;
    if (fused) {
      EXPECT_EQ(op_types(g), (OpList{"Abs"})) << inside;
    }
  }
}

TEST(RewriteDsl, AnOpFamilyWithAnyFurtherInputs) {
  Var<'x'> x;
  auto unary = named<'u'>(op<"Relu|Sigmoid">(Concat(x, etc)));
  RulePtr r = rule("FirstPart").match(unary).to(rebuild(unary, input<0> = x));
  EXPECT_EQ(r->roots().size(), 2u);
  EXPECT_EQ(r->describe(),
            "FirstPart: u -> rebuild(u, input0=x)  where u = Relu|Sigmoid(Concat(x, etc))  [P0]");
  for (const char* op : {"Relu", "Sigmoid", "Tanh"}) {
    Model m = test::model_with_opset(18);
    Graph& g = *m.graph;
    ValueId a = g.add_input("A", ElemType::Float, xexp::Shape{2});
    ValueId b = g.add_input("B", ElemType::Float, xexp::Shape{2});
    g.add_output(node(g, op, {node(g, "Concat", {a, b, a}, {Attribute::make_int("axis", 0)})}));
    run(m, r);
    if (std::string(op) == "Tanh") {
      EXPECT_EQ(op_types(g), (OpList{"Concat", "Tanh"}));
    } else {
      ASSERT_EQ(op_types(g), (OpList{op}));
      EXPECT_EQ(output_producer(g).inputs, (std::vector<ValueId>{a}));
    }
  }
}

// ---- rebuild, several outputs -----------------------------------------------------------------------
TEST(RewriteDsl, RebuildChangesOneAttributeAndKeepsTheOthers) {
  Float<'a'> alpha;
  Var<'x'> x;
  auto leaky = named<'l'>(LeakyRelu(x, attr<"alpha"> = alpha));
  RulePtr r =
      rule("Halve").match(leaky).when(alpha == 0.25f).to(rebuild(leaky, attr<"alpha"> = alpha * 2.0f));
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId xin = g.add_input("X", ElemType::Float, xexp::Shape{2});
  g.add_output(node(g, "LeakyRelu", {xin},
                    {Attribute::make_float("alpha", 0.25f), Attribute::make_string("note", "kept")}));
  run(m, r);
  const Node& n = output_producer(g);
  ASSERT_EQ(op_types(g), (OpList{"LeakyRelu"}));
  ASSERT_NE(n.attribute(Symbol("alpha")), nullptr);
  EXPECT_EQ(n.attribute(Symbol("alpha"))->f, 0.5f);
  ASSERT_NE(n.attribute(Symbol("note")), nullptr);
  EXPECT_EQ(n.attribute(Symbol("note"))->s, "kept");
}

// rebuild_as: another op from the matched node, its attributes kept; an attribute whose value is an empty
// std::optional is left out. spread: the inputs of a node, passed on as a list.
inline constexpr auto scale_if_leaky = fact<"scale_if_leaky">([](const ValueView& v) -> std::optional<float> {
  const Attribute* a = rewrite::node_of(v).attribute(Symbol("alpha"));
  return a ? std::optional<float>(a->f) : std::nullopt;
});
TEST(RewriteDsl, RebuildAsBuildsAnotherOpWithTheAttributes) {
  Var<'x'> x;
  auto act = named<'a'>(op<"LeakyRelu|Relu">(x, etc));
  RulePtr r =
      rule("T").match(Neg(act)).to(rebuild_as<"Fused", "test">(act, attr<"scale"> = scale_if_leaky(act)));
  for (const char* op : {"LeakyRelu", "Relu"}) {
    Model m = test::model_with_opset(18);
    Graph& g = *m.graph;
    ValueId xin = g.add_input("X", ElemType::Float, xexp::Shape{2});
    std::vector<Attribute> attributes{Attribute::make_string("note", "kept")};
    if (std::string(op) == "LeakyRelu") attributes.push_back(Attribute::make_float("alpha", 0.25f));
    g.add_output(node(g, "Neg", {node(g, op, {xin}, attributes)}));
    run(m, r);
    const Node& n = output_producer(g);
    ASSERT_EQ(op_types(g), (OpList{"test.Fused"})) << op;
    EXPECT_EQ(n.inputs, (std::vector<ValueId>{xin}));
    ASSERT_NE(n.attribute(Symbol("note")), nullptr);
    EXPECT_EQ(n.attribute(Symbol("scale")) != nullptr, std::string(op) == "LeakyRelu") << op;
  }
}
TEST(RewriteDsl, SpreadPassesAListOfValuesAsInputs) {
  auto parts = named<'s'>(Sum(etc));
  RulePtr r = rule("T").match(Neg(parts)).to(Max(spread(inputs_of(parts))));
  EXPECT_EQ(r->describe(), "T: Neg(s) -> Max(spread(inputs_of(s)))  where s = Sum(etc)  [P0]");
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId a = g.add_input("A", ElemType::Float, xexp::Shape{2}),
          b = g.add_input("B", ElemType::Float, xexp::Shape{2});
  ValueId c = g.add_input("C", ElemType::Float, xexp::Shape{2});
  g.add_output(node(g, "Neg", {node(g, "Sum", {a, b, c})}));
  run(m, r);
  ASSERT_EQ(op_types(g), (OpList{"Max"}));
  EXPECT_EQ(output_producer(g).inputs, (std::vector<ValueId>{a, b, c}));
}

// Neg(S), Relu(S) with S = A + B: a fused node's first output replaces the Neg, its second the sum.
TEST(RewriteDsl, AlsoSendsAMatchedValuesConsumersToAnotherOutput) {
  Var<'a'> a;
  Var<'b'> b;
  auto sum = named<'s'>(shared(Add(a, b)));
  auto fused = let<'f'>(outputs<2>(op<"AddNeg", "test">(a, b)));
  RulePtr r = rule("AddNeg").match(Neg(sum)).to(fused, also(sum, output<1>(fused)));
  EXPECT_EQ(
      r->describe(),
      "AddNeg: Neg(s) -> f, also(s -> output1(f))  where s = shared(Add(a, b)); f = test.AddNeg(a, b)  [P0]");
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId ain = g.add_input("A", ElemType::Float, xexp::Shape{2});
  ValueId bin = g.add_input("B", ElemType::Float, xexp::Shape{2});
  ValueId s = node(g, "Add", {ain, bin});
  g.add_output(node(g, "Neg", {s}));
  g.add_output(node(g, "Relu", {s}));
  run(m, r);
  ASSERT_EQ(op_types(g), (OpList{"test.AddNeg", "Relu"}));
  const Node& fused_node = output_producer(g, 0);
  EXPECT_EQ(fused_node.outputs.size(), 2u);
  EXPECT_EQ(output_producer(g, 1).inputs, (std::vector<ValueId>{fused_node.outputs[1]}));
  EXPECT_EQ(g.value(fused_node.outputs[1]).elem, ElemType::Float);  // the sum's type
}

// ---- why a rule did not match -----------------------------------------------------------------------
static Model div_relu_model() {
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, xexp::Shape{2, 3});
  g.add_output(node(g, "Div", {x, node(g, "Relu", {x})}));
  return m;
}

TEST(RewriteDsl, ExplainNamesTheSubPatternThatFailed) {
  Var<'x'> x;
  Var<'y'> y;
  RulePtr r = rule("DivSqrt").match(Div(x, Sqrt(y))).to(x);
  Model m = div_relu_model();
  const std::string why = r->explain(*m.graph, m.graph->value(m.graph->outputs()[0]).producer, 18);
  EXPECT_NE(why.find("Sqrt(y) did not match"), std::string::npos) << why;
  EXPECT_NE(why.find("Relu"), std::string::npos) << why;
}

TEST(RewriteDsl, ExplainElidesArgumentsNestedMoreThanTwoCallsDeep) {
  Var<'x'> x;
  Var<'y'> y;
  RulePtr r = rule("DivSqrtExp").match(Div(x, Sqrt(Exp(Neg(y))))).to(x);
  Model m = div_relu_model();
  const std::string why = r->explain(*m.graph, m.graph->value(m.graph->outputs()[0]).producer, 18);
  EXPECT_EQ(why.substr(0, why.find(" did not match")), "Sqrt(Exp(Neg(...)))") << why;
}

TEST(RewriteDsl, ExplainNamesTheFirstConditionThatFailed) {
  Var<'x'> x;
  Var<'y'> y;
  RulePtr r =
      rule("DivRelu").match(Div(x, Relu(y))).when(rank(x) == 2 && is_rank_3(y) && is_constant(y)).to(x);
  Model m = div_relu_model();
  EXPECT_EQ(r->explain(*m.graph, m.graph->value(m.graph->outputs()[0]).producer, 18), "is_rank_3(y) failed");
}

// ---- names for pieces of conditions and replacements -----------------------------------------------
// named<"word">(piece) prints the word and defines the piece once, however many branches write it; a
// named condition is looked into by --explain; keep<"word"> is a kept fact printed by its name.
TEST(RewriteDsl, ANamedPiecePrintsOnceAndBuildsAsWritten) {
  Var<'x'> x;
  Var<'y'> y;
  auto sum = named<"sum">(Add(x, y));
  auto fits = named<"fits">(rank(x) == 2 && is_rank_3(y));
  RulePtr r = rule("T").match(Div(x, Relu(y))).when(fits).to(choose(is_constant(x), Neg(sum), Abs(sum)));
  EXPECT_EQ(r->describe(),
            "T: Div(x, Relu(y)) -> choose(is_constant(x), Neg(sum), Abs(sum))  when fits  where sum = Add(x, y); "
            "fits = ((rank(x) == 2) && is_rank_3(y))  [P0]");
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  const ValueId a = g.add_input("A", ElemType::Float, xexp::Shape{2, 3});
  const ValueId b = g.add_input("B", ElemType::Float, xexp::Shape{1, 2, 3});
  g.add_output(node(g, "Div", {a, node(g, "Relu", {b})}));
  run(m, r);
  ASSERT_EQ(op_types(g), (OpList{"Add", "Abs"}));
  EXPECT_EQ(producer(g, output_producer(g).inputs[0]).inputs, (std::vector<ValueId>{a, b}));
}

TEST(RewriteDsl, ExplainLooksIntoANamedCondition) {
  Var<'x'> x;
  Var<'y'> y;
  auto fits = named<"fits">(rank(x) == 2 && is_rank_3(y));
  RulePtr r = rule("DivRelu").match(Div(x, Relu(y))).when(fits).to(x);
  Model m = div_relu_model();
  EXPECT_EQ(r->explain(*m.graph, m.graph->value(m.graph->outputs()[0]).producer, 18), "is_rank_3(y) failed");
}

TEST(RewriteDsl, AKeptFactWithANamePrintsByIt) {
  Var<'x'> x;
  auto input = keep<"input">(counted_input(x));
  RulePtr r =
      rule("NegOfInput").match(Relu(x)).when(input != ir::kNone && input == input).to(Neg(found(input)));
  EXPECT_EQ(r->describe(),
            "NegOfInput: Relu(x) -> Neg(found(input))  when ((input != 4294967295) && (input == input))  "
            "where input = counted_input(x)  [P0]");
  expect_input_negated_with_one_call(r);
}

// piece<"word">(lambda): a piece with parameters prints as a call, defined once on formal parameters.
inline constexpr auto doubled = piece<"doubled">([](const auto& v) { return Add(v, v); });
TEST(RewriteDsl, APieceWithParametersPrintsAsACallDefinedOnce) {
  Var<'x'> x;
  Var<'y'> y;
  RulePtr r = rule("T").match(Div(x, y)).to(Mul(doubled(x), doubled(y)));
  EXPECT_EQ(r->describe(), "T: Div(x, y) -> Mul(doubled(x), doubled(y))  where doubled(x) = Add(x, x)  [P0]");
  Model m = test::model_with_opset(18);
  Graph& g = *m.graph;
  const ValueId a = g.add_input("A", ElemType::Float, xexp::Shape{2});
  const ValueId b = g.add_input("B", ElemType::Float, xexp::Shape{2});
  g.add_output(node(g, "Div", {a, b}));
  run(m, r);
  ASSERT_EQ(op_types(g), (OpList{"Add", "Add", "Mul"}));
  EXPECT_EQ(producer(g, output_producer(g).inputs[1]).inputs, (std::vector<ValueId>{b, b}));
}

TEST(RewriteDsl, TheOptimizerExplainsOneRuleOnRequest) {
  Var<'x'> x;
  Var<'y'> y;
  RulePtr r = rule("DivRelu").match(Div(x, Relu(y))).when(is_rank_3(y)).to(x);
  Model m = div_relu_model();
  const std::string div_name = output_producer(*m.graph).name;
  std::ostringstream log;
  run(m, r, {.log = &log, .explain = "DivRelu"});
  EXPECT_EQ(log.str(), "DivRelu @ " + div_name + ": is_rank_3(y) failed\n");
  std::ostringstream quiet;
  Model again = div_relu_model();
  run(again, r, {.log = &quiet});
  EXPECT_EQ(quiet.str(), "");
}
