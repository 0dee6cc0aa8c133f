// The program the packaging examples build: it uses xexp the way a project depending on it would,
// through its public headers and a CMake target. It builds Y = X @ W + B, prints it, saves it, loads it
// back and checks that nothing was lost. It includes only what it uses: <xexp/all.hpp> header-only
// compiles every rule and kernel (minutes; SingleInclude.CompilesAlone checks that it does).
#include <xexp/ir.hpp>
#include <xexp/onnx.hpp>
#include <xexp/tools/printer.hpp>

#include <cstdio>
#include <iostream>
#include <string>

int main() {
  using namespace xexp;
  ir::Model model;
  model.opsets.emplace_back().version = 18;
  ir::Graph& g = *model.graph;
  const auto x = g.add_input("X", ElemType::Float, Shape{Dim::symbolic("batch"), 3});
  const auto w = g.add_initializer("W", Tensor::from<float>({3, 1}, {0.4f, 0.5f, 0.6f}));
  const auto b = g.add_initializer("B", Tensor::from<float>({1}, {0.1f}));
  const auto xw = g.add_value("XW");
  g.add_node("MatMul", {x, w}, {xw});
  const auto y = g.add_value("Y");
  g.add_node("Add", {xw, b}, {y});
  g.add_output(y);
  std::cout << tools::pretty(model);

  const std::string path = "xexp_example.onnx";
  save_model(model, path);
  const ir::Model loaded = load_model(path);
  std::remove(path.c_str());
  if (loaded.graph->node_count() != 2 || tools::pretty(loaded) != tools::pretty(model)) {
    std::cerr << "the model changed through a save and load\n";
    return 1;
  }
  std::cout << "example: ok\n";
  return 0;
}
