// Registers a custom rule next to the built-in sets and optimizes a model with it:
//   custom_rule model.onnx optimized.onnx
// Without arguments it builds a tiny model X -> Mul(X, Sigmoid(X)) -> Y and prints it before and after.
#include <xexp/all.hpp>

#include <iostream>

#include "custom_rules.hpp"

int main(int argc, char** argv) {
  using namespace xexp;
  add_custom_rules(rewrite::Catalog::global());
  ir::Model model;
  if (argc > 1) {
    model = load_model(argv[1]);
  } else {
    model.opsets.push_back({"", 18, {}});
    ir::Graph& g = *model.graph;
    const auto x = g.add_input("X", ElemType::Float, Shape{2, 3});
    const auto s = g.add_value("S");
    g.add_node("Sigmoid", {x}, {s});
    const auto y = g.add_value("Y");
    g.add_node("Mul", {x, s}, {y});
    g.add_output(y);
    std::cout << tools::pretty(model) << "\n";
  }
  const rewrite::RuleSet rules = rewrite::rules_from_string("default+onnxruntime+QuickGeluFusion");
  rewrite::optimize(model, rules, {.verbose = 1, .log = &std::cout});
  if (argc > 2) save_model(model, argv[2]);
  else std::cout << tools::pretty(model);
  return 0;
}
