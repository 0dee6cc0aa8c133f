// The FetchContent example's program: loads the ONNX model named on the command line (with its external
// data) and prints it as xexp reads it, then its node count.
#include <xexp/onnx.hpp>
#include <xexp/tools/printer.hpp>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: print_model MODEL.onnx\n";
    return 2;
  }
  try {
    const xexp::ir::Model model = xexp::load_model(argv[1]);
    std::cout << xexp::tools::pretty(model) << model.graph->node_count() << " nodes\n";
  } catch (const xexp::Error& e) {
    std::cerr << "print_model: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
