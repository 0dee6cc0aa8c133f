#pragma once
// A model as a Graphviz drawing (`xexp dot`): one box per node with its op type, its domain when not
// ONNX's, the constants it reads and the type and shape of its outputs; graph inputs and outputs as
// ellipses. Constants (initializers, and the Constant nodes function bodies keep) are not drawn apart:
// a model has as many of them as nodes, and an arrow from each would hide the data flow. Their consumer
// lists them instead, with the values of small ones. Local functions are drawn as clusters.
//
// Given the model before optimization (DotOptions::before), the nodes a rule made are filled green and
// name their rule: the rewriter names every node it creates `<Rule>Pattern--<root>` (rewrite/rewriter.hpp),
// and a node whose name the model before did not have is one the optimization made.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "xexp/eval/tensor_util.hpp"
#include "xexp/ir/constant_node.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/onnx/validate.hpp"
#include "xexp/rewrite/rewriter.hpp"
#include "xexp/tools/printer.hpp"

namespace xexp::tools {

struct DotOptions {
  int64_t max_constant_values = 8;    // constants with at most this many elements show their values
  bool functions = true;              // draw local functions as clusters
  const ir::Model* before = nullptr;  // the model before optimization: mark the nodes a rule made
  std::string title = {};             // the drawing's caption
};

namespace detail {

// A string as a Graphviz double-quoted string; "\n" in `text` becomes a line break.
inline std::string dot_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// The type of a typed value (has_type()): "float32(2,30,16)", "int64(batch,seq)", "float32" (rank
// unknown), "<non-tensor>" (a sequence, a map, ...).
inline std::string dot_type(const ir::Value& v) {
  if (v.elem == ElemType::Undefined) return "<non-tensor>";
  std::string out(elem_type_short_name(v.elem));
  if (v.shape) out += shape_str(*v.shape);
  return out;
}

// "0.5", "[-1, 0]": the values of a small numeric or string constant, empty when it is larger than
// `max_values` or its data cannot be read.
inline std::string dot_constant_values(const Tensor& t, int64_t max_values) {
  if (t.size() > max_values || !t.available()) return {};
  std::vector<std::string> items;
  if (t.type() == ElemType::String) {
    for (const std::string& s : t.string_data()) items.push_back(single_quoted(s));
  } else if (is_numeric(t.type())) {
    for (int64_t k = 0; k < t.size(); ++k)
      items.push_back(is_float(t.type()) ? shortest_float(eval::element_as_double(t, k), single_precision(t.type()))
                                         : eval::integer_element_text(t, k));
  } else {
    return {};
  }
  if (t.rank() == 0 && items.size() == 1) return items[0];
  std::string out = "[";
  for (std::size_t k = 0; k < items.size(); ++k) out += (k ? ", " : "") + items[k];
  return out + "]";
}

// Long value names (exporters write /decoder/attention/attention.0/query/Transpose_output_0) keep their
// end, which tells them apart.
inline std::string dot_value_name(std::string_view name, std::size_t keep = 32) {
  if (name.size() <= keep) return std::string(name);
  return "..." + std::string(name.substr(name.size() - (keep - 3)));
}

inline std::unordered_set<std::string> all_node_names(const ir::Model& model) {
  std::unordered_set<std::string> names;
  auto add = [&](const ir::Graph& g) {
    for (ir::NodeId id : g.nodes()) names.insert(g.node(id).name);
  };
  add(*model.graph);
  for (const ir::Function& f : model.functions) add(*f.body);
  return names;
}

class DotWriter {
 public:
  DotWriter(const ir::Model& model, const DotOptions& options) : model_(model), functions_(model), options_(options) {
    if (options.before) before_names_ = all_node_names(*options.before);
  }

  std::string write() {
    out_ += "digraph model {\n";
    out_ += "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, labelloc=t";
    std::string caption = options_.title;
    if (options_.before) caption += (caption.empty() ? "" : "\n") + std::string("green: made by a rule, named in the box");
    if (!caption.empty()) out_ += ", label=" + dot_quoted(caption);
    out_ += "];\n";
    out_ += "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eeeeee\", fontname=\"Helvetica\", fontsize=10];\n";
    out_ += "  edge [color=\"#555555\"];\n";
    graph(*model_.graph, "", "  ");
    if (options_.functions)
      for (std::size_t k = 0; k < model_.functions.size(); ++k) {
        const ir::Function& f = model_.functions[k];
        const std::string prefix = "f" + std::to_string(k) + "_";
        out_ += "  subgraph " + dot_quoted("cluster_" + prefix) + " {\n";
        out_ += "    graph [label=" + dot_quoted("function " + f.domain + "." + f.name) +
                ", style=\"rounded\", color=\"#888888\"];\n";
        graph(*f.body, prefix, "    ");
        out_ += "  }\n";
      }
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  // A Constant node whose consumers list its value instead of an arrow from it.
  static bool folded_constant_node(const ir::Graph& g, const ir::Node& n) {
    return ir::is_constant_node(n) && n.outputs.size() == 1 && n.outputs[0] != ir::kNone &&
           !g.value(n.outputs[0]).is_graph_output() && ir::constant_attribute_value(n.attributes);
  }

  // The constant behind a node input, when the drawing folds it into its consumer.
  static std::optional<Tensor> folded_constant(const ir::Graph& g, ir::ValueId id) {
    const ir::Value& v = g.value(id);
    if (v.initializer) return v.initializer;
    if (v.producer != ir::kNone && folded_constant_node(g, g.node(v.producer)))
      return ir::constant_attribute_value(g.node(v.producer).attributes);
    return std::nullopt;
  }

  bool is_function_call(const ir::Node& n) const {
    return functions_.called(n) != nullptr;
  }

  void graph(const ir::Graph& g, const std::string& prefix, const std::string& indent) {
    std::vector<std::string> drawn(g.value_capacity());  // the drawing's id of what produces each value
    for (std::size_t k = 0; k < g.inputs().size(); ++k) {
      const ir::ValueId id = g.inputs()[k];
      const ir::Value& v = g.value(id);
      drawn[id] = prefix + "i" + std::to_string(k);
      out_ += indent + drawn[id] + " [shape=ellipse, fillcolor=\"#cfe8ff\", label=" +
              dot_quoted(v.has_type() ? v.name + "\n" + dot_type(v) : v.name) + "];\n";
    }
    std::size_t count = 0;
    for (ir::NodeId nid : g.nodes()) {
      const ir::Node& n = g.node(nid);
      if (folded_constant_node(g, n)) continue;
      const std::string id = prefix + "n" + std::to_string(count++);
      node(g, nid, id, indent, drawn);
      for (ir::ValueId out : n.outputs)
        if (out != ir::kNone) drawn[out] = id;
    }
    for (std::size_t k = 0; k < g.outputs().size(); ++k) {
      const ir::Value& v = g.value(g.outputs()[k]);
      const std::string id = prefix + "o" + std::to_string(k);
      std::string label = v.name;
      if (v.has_type()) label += "\n" + dot_type(v);
      if (v.initializer)
        if (std::string values = dot_constant_values(*v.initializer, options_.max_constant_values); !values.empty())
          label += "\n" + values;
      out_ += indent + id + " [shape=ellipse, fillcolor=\"#ffe0b3\", label=" + dot_quoted(label) + "];\n";
      if (!drawn[g.outputs()[k]].empty()) out_ += indent + drawn[g.outputs()[k]] + " -> " + id + ";\n";
    }
  }

  void node(const ir::Graph& g, ir::NodeId nid, const std::string& id, const std::string& indent,
            const std::vector<std::string>& drawn) {
    const ir::Node& n = g.node(nid);
    std::string label(n.op_type.view());
    if (!n.domain.empty()) label += "\n[" + n.domain.str() + "]";
    std::vector<std::string> sources;  // the drawn producers of its inputs, each once
    for (ir::ValueId in : n.inputs) {
      if (in == ir::kNone) continue;
      if (std::optional<Tensor> constant = folded_constant(g, in)) {
        std::string values = dot_constant_values(*constant, options_.max_constant_values);
        if (values.empty()) values = std::string(elem_type_short_name(constant->type())) + shape_str(constant->shape());
        label += "\n" + dot_value_name(g.value(in).name) + " = " + values;
        continue;
      }
      const std::string& source = drawn[in];
      if (!source.empty() && std::find(sources.begin(), sources.end(), source) == sources.end())
        sources.push_back(source);
    }
    // The typed outputs something reads (a fused normalization's unused statistics would only add
    // lines), or all of them for a node nothing reads.
    const bool any_read = g.any_output_read(nid);
    for (ir::ValueId out : n.outputs)
      if (out != ir::kNone && g.value(out).has_type() && (!any_read || g.value(out).is_read()))
        label += "\n-> " + dot_type(g.value(out));
    std::string style;
    const std::string_view rule = rewrite::rule_of_node_name(n.name);
    if (options_.before && !rule.empty() && !before_names_.count(n.name)) {
      label += "\nby " + std::string(rule);
      style = ", fillcolor=\"#c9f0c9\", color=\"#2e8b2e\", penwidth=2";
    } else if (is_function_call(n)) {
      style = ", fillcolor=\"#fff5c2\"";
    }
    out_ += indent + id + " [label=" + dot_quoted(label) + style + "];\n";
    for (const std::string& source : sources) out_ += indent + source + " -> " + id + ";\n";
  }

  const ir::Model& model_;
  const FunctionIndex functions_;
  const DotOptions& options_;
  std::unordered_set<std::string> before_names_;
  std::string out_;
};

}  // namespace detail

// The Graphviz source drawing `model` (render it with `dot -Tsvg`).
inline std::string to_dot(const ir::Model& model, const DotOptions& options = {}) {
  return detail::DotWriter(model, options).write();
}

}  // namespace xexp::tools
