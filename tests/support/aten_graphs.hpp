#pragma once
// Aten-domain models written by hand as xexp.to_onnx's capture writes them (python/xexp/_capture.py):
// one node per aten call in domain `aten`, every value typed as the trace types it, module records in
// the nodes' metadata.
#include <string>
#include <utility>
#include <vector>

#include "support/torch_records.hpp"
#include "xexp/ir/model.hpp"

namespace xexp::testing {

// An aten-domain graph under construction.
struct AtenGraph {
  ir::Model model;
  ir::Graph& g = *model.graph;
  AtenGraph() { model.opsets = {{"aten", 1, {}}}; }

  ir::ValueId input(const std::string& name, ElemType type, Shape shape) { return g.add_input(name, type, shape); }
  ir::ValueId call(const char* op, std::vector<ir::ValueId> inputs, const std::string& out, ElemType type, Shape shape,
                   std::vector<ir::Attribute> attrs = {}) {
    const ir::ValueId v = g.add_value(out);
    g.value(v).elem = type;
    g.value(v).shape = shape;
    g.add_node(Symbol(op), std::move(inputs), {v}, std::move(attrs), out, Symbol("aten"));
    return v;
  }
  ir::Node& last() { return g.node(g.last_node()); }
};

// relu(x * scale) twice, each in a module instance of class __main__.Scale (layers.0, layers.1) whose
// scale is a parameter of 16 bytes (small enough to be a constant by size).
inline ir::Model two_scale_layers() {
  AtenGraph a;
  ir::ValueId h = a.input("x", ElemType::Float, Shape{2, 4});
  for (const std::string layer : {"layers.0", "layers.1"}) {
    const ir::ValueId w = a.g.add_initializer(layer + ".scale", Tensor::from<float>({4}, {1, layer == "layers.0" ? 2.f : 3.f, 4, 5}));
    h = a.call("mul", {h, w}, layer + ".mul", ElemType::Float, Shape{2, 4});
    record_torch_module(a.last(), "['', '" + layer + "', 'mul']", "['__main__.Net', '__main__.Scale', 'aten.mul.Tensor']");
    h = a.call("relu", {h}, layer + ".relu", ElemType::Float, Shape{2, 4});
    record_torch_module(a.last(), "['', '" + layer + "', 'relu']", "['__main__.Net', '__main__.Scale', 'aten.relu.default']");
  }
  a.g.add_output(h);
  return std::move(a.model);
}

}  // namespace xexp::testing
