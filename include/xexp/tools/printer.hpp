#pragma once
// A readable text form of a model, in the look of experimental-experiment's pretty_onnx:
//
//   opset: domain='' version=18
//   input: name='X' type=dtype('float32') shape=['a', 'b']
//   init: name='W' type=float32 shape=(3, 1) -- array([0.4, 0.5, 0.6], dtype=float32)
//   MatMul(X, W) -> mm
//     Relu(mm) -> Y
//   output: name='Y' type=dtype('float32') shape=['a', 1]
//   ----- function name=Linear domain=local
//   ...
//
// A node is indented one step deeper than the shallowest node it reads from (up to kMaxIndentDepth
// steps), so chains of dependent nodes drift right while independent ones start again at the left: the
// data flow shows at a glance.
// Subgraphs (If/Loop/Scan bodies) are printed under their node, indented further.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "xexp/eval/tensor_util.hpp"
#include "xexp/ir/model.hpp"

namespace xexp::tools {

struct PrettyOptions {
  int64_t max_init_values = 10;  // initializers with at most this many elements show their values
  bool indent = true;            // indent nodes by data-flow depth
  bool functions = true;         // print local functions after the main graph
  bool types = false;            // after each node, the type and shape of its outputs
};

namespace detail {

using eval::element_as_double;

inline bool is_numeric(ElemType type) { return is_float(type) || is_integer(type) || type == ElemType::Bool; }

// Shortest text that reads back to the same value at the tensor's precision ("0.4", "1e-05", "inf").
inline std::string shortest_float(double v, bool single_precision) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = single_precision ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v))
                            : std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}
inline bool looks_integral(std::string_view text) {
  return text.find_first_of(".en") == std::string_view::npos;  // no dot, exponent, inf or nan
}
// Python's repr of a float: an integral value keeps a ".0".
inline std::string python_float(double v, bool single_precision) {
  std::string s = shortest_float(v, single_precision);
  return looks_integral(s) ? s + ".0" : s;
}
inline bool single_precision(ElemType t) { return t == ElemType::Float || t == ElemType::Float16 || t == ElemType::BFloat16; }

// Appends rather than `"'" + s + "'"`, which trips g++ 12's -Wrestrict false positive at -O3.
inline std::string single_quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '\'';
  out += s;
  out += '\'';
  return out;
}
inline std::string truncated(std::string_view s, std::size_t keep) {
  return s.size() <= keep ? std::string(s) : std::string(s.substr(0, keep)) + "...";
}

// numpy's repr of the flattened values: array([ 1, 30, -1]), array([1.  , 0.25], dtype=float32).
// Columns are aligned as numpy aligns them: integer parts to the right, fractions to the left.
inline std::string numpy_repr(const Tensor& t) {
  const ElemType type = t.type();
  const std::vector<double> values = eval::as_doubles(t);
  std::vector<std::string> heads, tails;  // text before and from the '.'
  for (std::size_t k = 0; k < values.size(); ++k) {
    const double v = values[k];
    std::string s;
    if (type == ElemType::Bool) s = v != 0 ? "True" : "False";
    else if (is_float(type)) s = shortest_float(v, single_precision(type));
    else s = eval::integer_element_text(t, static_cast<int64_t>(k));
    if (is_float(type) && looks_integral(s) && std::isfinite(v)) s += ".";
    const auto dot = is_float(type) ? s.find('.') : std::string::npos;
    heads.push_back(dot == std::string::npos ? s : s.substr(0, dot));
    tails.push_back(dot == std::string::npos ? "" : s.substr(dot));
  }
  std::size_t head_width = 0, tail_width = 0;
  for (std::size_t k = 0; k < heads.size(); ++k) {
    head_width = std::max(head_width, heads[k].size());
    tail_width = std::max(tail_width, tails[k].size());
  }
  std::string out = "array([";
  for (std::size_t k = 0; k < heads.size(); ++k) {
    if (k) out += ", ";
    out += std::string(head_width - heads[k].size(), ' ') + heads[k] + tails[k];
    if (!tails[k].empty()) out += std::string(tail_width - tails[k].size(), ' ');
  }
  out += "]";
  // numpy omits the dtype of its defaults (int64, float64, bool).
  if (type != ElemType::Int64 && type != ElemType::Double && type != ElemType::Bool)
    out += ", dtype=" + std::string(elem_type_short_name(type));
  return out + ")";
}

// A tensor attribute as Python prints a list of its values, cut after ten characters: [1.0, 1.0,...
inline std::string tensor_attribute(const Tensor& t) {
  if (!is_numeric(t.type())) return "<" + std::string(elem_type_short_name(t.type())) + " tensor>";
  const int64_t shown = std::min<int64_t>(t.size(), 8);  // the first few: enough to fill ten characters
  auto item = [&](int64_t k) {
    return is_float(t.type()) ? python_float(element_as_double(t, k), single_precision(t.type()))
                              : eval::integer_element_text(t, k);
  };
  if (t.rank() == 0 && shown == 1) return item(0);
  std::string list = "[";
  for (int64_t k = 0; k < shown; ++k) list += (k ? ", " : "") + item(k);
  if (shown == t.size()) list += "]";
  return truncated(list, 10);
}

template <class T, class Format>
std::string bracketed(const std::vector<T>& items, Format&& format) {
  std::string out = "[";
  for (std::size_t k = 0; k < items.size(); ++k) out += (k ? "," : "") + format(items[k]);
  return out + "]";
}

inline std::string attribute_value(const ir::Attribute& a) {
  using ir::AttrType;
  if (!a.ref_attr_name.empty()) return "@" + a.ref_attr_name;
  auto graph_name = [](const std::shared_ptr<ir::Graph>& g) { return "<graph " + single_quoted(g ? g->name : "") + ">"; };
  switch (a.type) {
    case AttrType::Int: return std::to_string(a.i);
    case AttrType::Float: return shortest_float(a.f, true);
    case AttrType::String: return single_quoted(a.s);
    case AttrType::Ints: return bracketed(a.ints, [](int64_t v) { return std::to_string(v); });
    case AttrType::Floats: return bracketed(a.floats, [](float v) { return shortest_float(v, true); });
    case AttrType::Strings: return bracketed(a.strings, [](const std::string& s) { return single_quoted(s); });
    case AttrType::Tensor: return tensor_attribute(a.tensor());
    case AttrType::Tensors: return bracketed(a.tensors, [](const Tensor& t) { return tensor_attribute(t); });
    case AttrType::Graph: return graph_name(a.graph());
    case AttrType::Graphs: return bracketed(a.graphs, graph_name);
    case AttrType::SparseTensor: case AttrType::SparseTensors: return "<sparse tensor>";
    case AttrType::TypeProto: case AttrType::TypeProtos: return "<type>";
    case AttrType::Undefined: break;
  }
  return "?";
}

// type=dtype('float32') shape=['a', 3] as experimental-experiment prints graph inputs and outputs.
inline std::string value_type(const ir::Value& v) {
  std::string out = " type=";
  if (v.elem != ElemType::Undefined) out += "dtype(" + single_quoted(elem_type_short_name(v.elem)) + ")";
  else out += v.raw_type.empty() ? "?" : "<non-tensor>";
  out += " shape=";
  if (!v.shape) return out + "?";
  out += "[";
  for (std::size_t k = 0; k < v.shape->size(); ++k) {
    const Dim& d = (*v.shape)[k];
    out += (k ? ", " : "") + (d.is_static() ? d.str() : single_quoted(d.str()));
  }
  return out + "]";
}

// (3, 1), (16,), () like a Python tuple.
inline std::string tuple_shape(const std::vector<int64_t>& dims) {
  std::string out = "(";
  for (std::size_t k = 0; k < dims.size(); ++k) out += (k ? ", " : "") + std::to_string(dims[k]);
  return out + (dims.size() == 1 ? ",)" : ")");
}

// Data-flow depth stops growing here: a long chain would otherwise print a number of spaces quadratic in
// its length (200,000 nodes: 40 GB of text).
inline constexpr std::size_t kMaxIndentDepth = 40;

class Printer {
 public:
  explicit Printer(const PrettyOptions& options) : options_(options) {}

  std::string model(const ir::Model& m) {
    opsets(m.opsets);
    doc_string(m.doc_string, "");
    graph(*m.graph, 0);
    if (options_.functions)
      for (const ir::Function& f : m.functions) function(f);
    return std::move(out_);
  }
  std::string graph_only(const ir::Graph& g) {
    graph(g, 0);
    return std::move(out_);
  }

 private:
  void line(std::size_t indent, const std::string& text) { out_ += std::string(indent, ' ') + text + "\n"; }
  void opsets(const std::vector<ir::OpsetImport>& opsets) {
    for (const ir::OpsetImport& o : opsets) line(0, "opset: domain=" + single_quoted(o.domain) + " version=" + std::to_string(o.version));
  }
  void doc_string(const std::string& doc, const std::string& prefix) {
    if (!doc.empty()) line(0, prefix + "doc_string: " + truncated(doc, 55));
  }

  void function(const ir::Function& f) {
    line(0, "----- function name=" + f.name + " domain=" + f.domain);
    doc_string(f.doc_string, "----- ");
    opsets(f.opsets);
    graph(*f.body, 0, &f.attributes);
  }

  // `function_attributes` is set for a function body: its inputs carry no types, its attributes are
  // listed after them.
  void graph(const ir::Graph& g, std::size_t base, const std::vector<std::string>* function_attributes = nullptr) {
    for (ir::ValueId id : g.inputs())
      line(base, function_attributes ? "input: " + single_quoted(g.value(id).name)
                                     : "input: name=" + single_quoted(g.value(id).name) + value_type(g.value(id)));
    if (function_attributes)
      for (const std::string& a : *function_attributes) line(base, "attribute: " + single_quoted(a));
    for (ir::ValueId id : g.initializers()) initializer(g.value(id), base);
    std::vector<std::size_t> depth(g.value_capacity(), 0);  // of each node output: its node's indent + 1
    for (ir::NodeId id : g.nodes()) {
      const ir::Node& n = g.node(id);
      std::size_t indent = 0;
      bool first = true;
      for (ir::ValueId in : n.inputs) {
        if (in == ir::kNone || g.value(in).producer == ir::kNone) continue;
        indent = first ? depth[in] : std::min(indent, depth[in]);
        first = false;
      }
      if (!options_.indent) indent = 0;
      for (ir::ValueId o : n.outputs)
        if (o != ir::kNone) depth[o] = std::min(indent + 1, kMaxIndentDepth);
      node(g, n, base + 2 * indent);
    }
    for (ir::ValueId id : g.outputs())
      line(base, "output: name=" + single_quoted(g.value(id).name) + value_type(g.value(id)));
  }

  void initializer(const ir::Value& v, std::size_t base) {
    std::string text = "init: name=" + single_quoted(v.name);
    if (!v.initializer) {
      line(base, text + " type=<sparse>");
      return;
    }
    const Tensor& t = *v.initializer;
    text += " type=" + std::string(elem_type_short_name(t.type())) + " shape=" + tuple_shape(t.dims());
    if (t.size() <= options_.max_init_values && is_numeric(t.type())) text += " -- " + numpy_repr(t);
    line(base, text);
  }

  void node(const ir::Graph& g, const ir::Node& n, std::size_t indent) {
    std::string text(n.op_type.view());
    if (!n.domain.empty()) text += "[" + n.domain.str() + "]";
    text += "(";
    bool first = true;
    auto arg = [&](const std::string& s) {
      text += (first ? "" : ", ") + s;
      first = false;
    };
    for (ir::ValueId in : n.inputs) arg(in == ir::kNone ? "" : g.value(in).name);
    for (const ir::Attribute& a : n.attributes) arg(a.name.str() + "=" + attribute_value(a));
    text += ") -> ";
    for (std::size_t k = 0; k < n.outputs.size(); ++k)
      text += (k ? ", " : "") + (n.outputs[k] == ir::kNone ? std::string() : g.value(n.outputs[k]).name);
    if (options_.types) {
      text += "  #";
      for (ir::ValueId out : n.outputs)
        if (out != ir::kNone) text += value_type(g.value(out));
    }
    line(indent, text);
    for (const ir::Attribute& a : n.attributes)
      for (const auto& sub : a.graphs) {
        if (!sub) continue;
        line(indent + 2, "----- " + a.name.str() + ": graph name=" + single_quoted(sub->name));
        graph(*sub, indent + 4);
      }
  }

  const PrettyOptions& options_;
  std::string out_;
};

}  // namespace detail

inline std::string pretty(const ir::Model& model, const PrettyOptions& options = {}) {
  return detail::Printer(options).model(model);
}
inline std::string pretty(const ir::Graph& graph, const PrettyOptions& options = {}) {
  return detail::Printer(options).graph_only(graph);
}

}  // namespace xexp::tools
