#pragma once
// Node attributes. The common kinds are held in plain fields; the rare ones (sparse tensors, type
// protos) keep their serialized AttributeProto in `raw` so that a load and save preserves them.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xexp/core/symbol.hpp"
#include "xexp/core/tensor.hpp"

namespace xexp::ir {

class Graph;

// Numbered as ONNX's AttributeProto.AttributeType.
enum class AttrType : uint8_t {
  Undefined = 0,
  Float = 1,
  Int = 2,
  String = 3,
  Tensor = 4,
  Graph = 5,
  Floats = 6,
  Ints = 7,
  Strings = 8,
  Tensors = 9,
  Graphs = 10,
  SparseTensor = 11,
  SparseTensors = 12,
  TypeProto = 13,
  TypeProtos = 14,
};

struct Attribute {
  Symbol name;
  AttrType type = AttrType::Undefined;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;                // Tensor: one element; Tensors: all
  std::vector<std::shared_ptr<Graph>> graphs;  // Graph: one element; Graphs: all
  std::string ref_attr_name;                  // set inside function bodies: the value comes from the call
  std::string doc_string;
  std::string raw;      // serialized AttributeProto for SparseTensor(s) and TypeProto(s)
  std::string unknown;  // serialized fields this ONNX version does not know

  static Attribute make_int(Symbol name, int64_t v) { Attribute a = blank(name, AttrType::Int); a.i = v; return a; }
  static Attribute make_float(Symbol name, float v) { Attribute a = blank(name, AttrType::Float); a.f = v; return a; }
  static Attribute make_string(Symbol name, std::string v) {
    Attribute a = blank(name, AttrType::String);
    a.s = std::move(v);
    return a;
  }
  static Attribute make_ints(Symbol name, std::vector<int64_t> v) {
    Attribute a = blank(name, AttrType::Ints);
    a.ints = std::move(v);
    return a;
  }
  static Attribute make_floats(Symbol name, std::vector<float> v) {
    Attribute a = blank(name, AttrType::Floats);
    a.floats = std::move(v);
    return a;
  }
  static Attribute make_strings(Symbol name, std::vector<std::string> v) {
    Attribute a = blank(name, AttrType::Strings);
    a.strings = std::move(v);
    return a;
  }
  static Attribute make_tensor(Symbol name, Tensor v) {
    Attribute a = blank(name, AttrType::Tensor);
    a.tensors.push_back(std::move(v));
    return a;
  }
  static Attribute make_graph(Symbol name, std::shared_ptr<Graph> g) {
    Attribute a = blank(name, AttrType::Graph);
    a.graphs.push_back(std::move(g));
    return a;
  }
  static Attribute blank(Symbol name, AttrType type) {
    Attribute a;
    a.name = name;
    a.type = type;
    return a;
  }
  const Tensor& tensor() const { return tensors.at(0); }
  const std::shared_ptr<Graph>& graph() const { return graphs.at(0); }
};

}  // namespace xexp::ir
