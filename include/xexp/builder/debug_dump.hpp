#pragma once
// The text a GraphBuilder attaches to every error it raises, laid out as experimental-experiment's
// GraphBuilder.get_debug_msg: counts, dynamic dimensions, equalities, shape values, types, shapes,
// ranks, constants, then one line per input, initializer and node created in order, a node line
// reading [<inputs>:<outputs>] with # (type and shape known), U (type and rank), T (type only) or -
// (nothing) for each.
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "xexp/core/shape.hpp"
#include "xexp/core/symbol.hpp"
#include "xexp/core/tensor.hpp"
#include "xexp/infer/state.hpp"
#include "xexp/ir/graph.hpp"

namespace xexp {

// One thing a builder created, in creation order.
struct BuildEvent {
  enum class Kind : uint8_t { Input, Initializer, Node };
  using enum Kind;
  Kind kind;
  uint32_t id;  // a ValueId for an input or an initializer, a NodeId for a node
};

namespace dump_detail {

// Python list style: ['a', 'b'].
inline std::string names_repr(const std::vector<std::string>& names) {
  std::string s = "[";
  for (std::size_t k = 0; k < names.size(); ++k) {
    s += k ? ", '" : "'";
    s += names[k];
    s += '\'';
  }
  return s + "]";
}

// Python tuple style: ('a', 3), (3,), ().
inline std::string tuple_repr(const Shape& s) {
  std::string out = "(";
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (k) out += ", ";
    if (s[k].is_symbolic()) out += '\'';
    out += s[k].str();
    if (s[k].is_symbolic()) out += '\'';
  }
  return out + (s.size() == 1 ? ",)" : ")");
}

// The first values of a tensor.
inline std::string values_preview(const Tensor& t) {
  constexpr int64_t kShown = 8;
  std::ostringstream s;
  s << "[";
  const int64_t n = std::min<int64_t>(t.size(), kShown);
  for (int64_t k = 0; k < n; ++k) {
    if (k) s << ", ";
    switch (t.type()) {
      case ElemType::Float: s << t.data<float>()[k]; break;
      case ElemType::Double: s << t.data<double>()[k]; break;
      case ElemType::Int64: s << t.data<int64_t>()[k]; break;
      case ElemType::Int32: s << t.data<int32_t>()[k]; break;
      case ElemType::Bool: s << (t.data<bool>()[k] ? "True" : "False"); break;
      default: s << "?"; break;
    }
  }
  if (t.size() > kShown) s << ", ...";
  s << "]";
  return s.str();
}

inline bool has_unknown_dim(const Shape& s) {
  return std::any_of(s.begin(), s.end(), [](const Dim& d) { return d.is_unknown(); });
}

inline char knowledge(const ir::Graph& g, ir::ValueId id) {
  if (id == ir::kNone) return ' ';
  const ir::Value& v = g.value(id);
  if (v.elem == ElemType::Undefined) return '-';
  if (!v.shape) return 'T';
  return has_unknown_dim(*v.shape) ? 'U' : '#';
}

inline std::string event_line(const ir::Graph& g, const BuildEvent& e) {
  if (e.kind == BuildEvent::Input) {
    const ir::Value& v = g.value(e.id);
    std::string dims;
    if (v.shape)
      for (std::size_t k = 0; k < v.shape->size(); ++k) {
        if (k) dims += 'x';
        dims += (*v.shape)[k].str();
      }
    return "[GraphBuilder.make_tensor_input] " + v.name + "[" + std::to_string(static_cast<int>(v.elem)) + ":" + dims + "]";
  }
  if (e.kind == BuildEvent::Initializer) {
    const ir::Value& v = g.value(e.id);
    std::string s = "[GraphBuilder.make_initializer] " + v.name + "[" + std::string(elem_type_short_name(v.elem)) + ":" +
                    shape_str(v.shape.value_or(Shape{}));
    if (v.initializer) s += ":" + values_preview(*v.initializer);
    return s + "]";
  }
  const ir::Node& n = g.node(e.id);
  std::string flags;
  for (ir::ValueId i : n.inputs) flags += knowledge(g, i);
  flags += ':';
  for (ir::ValueId o : n.outputs) flags += knowledge(g, o);
  std::vector<std::string> ins, outs;
  for (ir::ValueId i : n.inputs) ins.push_back(i == ir::kNone ? "" : g.value(i).name);
  for (ir::ValueId o : n.outputs) outs.push_back(o == ir::kNone ? "" : g.value(o).name);
  std::string domain = n.domain.empty() ? "" : n.domain.str() + ".";
  return "[GraphBuilder.make_node] " + n.name + " [" + flags + " ] " + domain + n.op_type.str() + ":" + names_repr(ins) +
         "->" + names_repr(outs) + (n.alive ? "" : " (removed)");
}

}  // namespace dump_detail

// What a builder knows about graph `g`: `state` holds its shape values and constraints, `dynamic_dims`
// the symbols its inputs declared, `log` what it created, `is_constant(id)` whether a value is known
// to be constant.
template <class IsConstant>
std::string builder_debug_dump(const ir::Graph& g, const infer::InferState& state, const std::vector<Symbol>& dynamic_dims,
                               const std::vector<BuildEvent>& log, IsConstant&& is_constant) {
  using namespace dump_detail;
  std::ostringstream out;
  std::vector<std::pair<std::string, ir::ValueId>> live;
  for (ir::ValueId id = 0; id < g.value_capacity(); ++id)
    if (g.value(id).alive) live.emplace_back(g.value(id).name, id);
  std::sort(live.begin(), live.end());
  auto counts = [&](const char* what) {
    out << "[GraphBuilder] Message " << what << ", there are " << g.initializers().size() << " initializers, "
        << g.node_count() << " nodes, " << g.inputs().size() << " inputs, " << g.outputs().size() << " outputs.\n";
  };
  counts("starts");
  out << "--SHAPE--\ndynamic_objects=\n";
  for (Symbol s : dynamic_dims) out << s.str() << " = '" << s.str() << "'\n";
  out << "constraints=" << state.constraints.str() << "\n";
  auto dict = [&](const char* title, auto&& entry) {
    out << title << "={";
    bool first = true;
    for (auto& [name, id] : live) {
      std::string e = entry(id);
      if (e.empty()) continue;
      out << (first ? "" : ",\n ") << "'" << name << "': " << e;
      first = false;
    }
    out << "}\n";
  };
  dict("_known_value_shape", [&](ir::ValueId id) {
    const Shape* s = state.value_shapes.find(id);
    return s ? tuple_repr(*s) : std::string();
  });
  dict("_known_types", [&](ir::ValueId id) {
    ElemType t = g.value(id).elem;
    return t == ElemType::Undefined ? std::string() : std::to_string(static_cast<int>(t));
  });
  dict("_known_shapes", [&](ir::ValueId id) {
    const auto& s = g.value(id).shape;
    return s && !has_unknown_dim(*s) ? tuple_repr(*s) : std::string();
  });
  dict("_known_ranks", [&](ir::ValueId id) {
    const auto& s = g.value(id).shape;
    return s && has_unknown_dim(*s) ? std::to_string(s->size()) : std::string();
  });
  out << "_known_constants=[";
  bool first = true;
  for (auto& [name, id] : live)
    if (is_constant(id)) {
      out << (first ? "" : ", ") << "'" << name << "'";
      first = false;
    }
  out << "]\n--ONNX--\n";
  for (const BuildEvent& e : log) out << event_line(g, e) << "\n";
  counts("completed");
  return out.str();
}

}  // namespace xexp
