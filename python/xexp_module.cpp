// The C++ side of the Python package `xexp` (python/xexp/__init__.py): the library's own entry points
// (optimizer::optimize_model, functions::inline_functions, tools::run_model, tools::compare_models, the rule
// catalogue) over models and tensors passed as serialized protobuf bytes. The Python layer converts
// onnx.ModelProto and numpy arrays to and from those bytes with onnx's own helpers, so that no element
// type mapping is written twice. xexp::Error becomes the Python exception xexp.Error with the same message.
#include <Python.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "xexp/aten/lower.hpp"
#include "xexp/functions/inliner.hpp"
#include "xexp/onnx.hpp"
#include "xexp/patterns/registry.hpp"
#include "xexp/tools/compare.hpp"
#include "xexp/optimizer/optimize_model.hpp"
#include "xexp/tools/run.hpp"

namespace py = pybind11;

namespace xexp::python {

std::string_view bytes_view(const py::bytes& b) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(b.ptr(), &data, &size) != 0) throw py::error_already_set();
  return {data, static_cast<std::size_t>(size)};
}

// A model given as serialized ModelProto bytes or as a file path (str; its external data is read from
// the file's folder, as load_model does).
ir::Model load_source(const py::object& source) {
  if (py::isinstance<py::str>(source)) {
    const std::string path = source.cast<std::string>();
    py::gil_scoped_release unlocked;
    return load_model(path);
  }
  const std::string_view bytes = bytes_view(source.cast<py::bytes>());
  py::gil_scoped_release unlocked;
  ::onnx::ModelProto proto;
  if (bytes.size() > static_cast<std::size_t>(INT_MAX) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw Error("not an ONNX model: the bytes do not parse as a ModelProto");
  if (!proto.has_graph() || !proto.has_ir_version())
    throw Error(std::string("not an ONNX model: the bytes hold no ") +
                (proto.has_graph() ? "ir_version" : "graph"));
  return model_from_proto(std::move(proto));
}

// The model as ModelProto bytes, with every tensor inline (external data read from its file included).
py::bytes to_bytes(ir::Model&& model) {
  std::string out;
  {
    py::gil_scoped_release unlocked;
    const ::onnx::ModelProto proto = model_to_proto(std::move(model));
    if (proto.ByteSizeLong() > static_cast<std::size_t>(INT_MAX))
      throw Error("the model is larger than 2 GB (protobuf's limit): save it with external data instead");
    out = proto.SerializeAsString();
  }
  return py::bytes(out);
}

// Feeds given as (name, serialized TensorProto) pairs.
tools::Feeds parse_feeds(const std::vector<std::pair<std::string, py::bytes>>& feeds) {
  tools::Feeds out;
  for (const auto& [name, bytes] : feeds) {
    const std::string_view view = bytes_view(bytes);
    ::onnx::TensorProto proto;
    if (view.size() > static_cast<std::size_t>(INT_MAX) ||
        !proto.ParseFromArray(view.data(), static_cast<int>(view.size())))
      throw Error("the feed does not parse as a TensorProto", {.node = {}, .value = name});
    out.emplace_back(name, tensor_from_proto(std::move(proto)));
  }
  return out;
}

py::dict rule_stats(const rewrite::RuleStats& s) {
  py::dict d;
  d["priority"] = s.priority;
  d["tried"] = s.tried;
  d["matched"] = s.matched;
  d["applied"] = s.applied;
  d["added"] = s.added;
  d["removed"] = s.removed;
  d["seconds"] = s.match_seconds + s.apply_seconds;
  return d;
}

py::dict report_dict(const optimizer::OptimizeModelReport& report) {
  py::dict rules, cleanups;
  for (const rewrite::RuleStats& s : report.rules.rules) rules[py::str(s.name)] = rule_stats(s);
  for (const rewrite::RuleStats& s : report.rules.cleanups) cleanups[py::str(s.name)] = rule_stats(s);
  py::dict d;
  d["nodes_before"] = report.nodes_before;
  d["inlined"] = report.inlined;
  d["outlined"] = report.outlined;
  d["nodes_after"] = report.nodes_after;
  d["folded"] = report.folded;
  d["iterations"] = report.rules.iterations;
  d["seconds"] = report.seconds;
  d["rules"] = rules;
  d["cleanups"] = cleanups;
  d["table"] = optimizer::format_report(report);
  return d;
}

std::pair<py::bytes, py::dict> optimize(const py::object& source, const std::string& patterns, int verbose,
                                        bool constant_folding, const std::string& inline_functions,
                                        bool intermediate_functions) {
  optimizer::OptimizeModelOptions options;
  options.patterns = patterns;
  options.verbose = verbose;
  options.constant_folding = constant_folding;
  options.inline_functions = optimizer::inline_functions_from_string(inline_functions);
  options.intermediate_functions = intermediate_functions;
  rewrite::rules_from_string(patterns);  // a bad spec fails before the (maybe long) load
  ir::Model model = load_source(source);
  optimizer::OptimizeModelReport report;
  {
    py::gil_scoped_release unlocked;
    report = optimizer::optimize_model(model, options);
  }
  return {to_bytes(std::move(model)), report_dict(report)};
}

// xexp.to_onnx's C++ half: the aten-domain model the capture wrote, lowered (modules as functions when
// asked), then optimized when `patterns` is not empty. The model comes back as bytes, or is saved to
// `filename` when one is given (external data past 2 GB, which bytes cannot hold) and None comes back.
// The report is None without optimization.
std::pair<py::object, py::object> lower_aten(const py::object& source, int64_t opset, bool module_functions,
                                             std::size_t module_depth, std::vector<std::string> module_classes,
                                             const std::string& patterns, int verbose, const std::string& filename) {
  aten::LowerOptions lower_options;
  lower_options.opset = opset;
  lower_options.module_functions = module_functions;
  lower_options.module_depth = module_depth;
  lower_options.module_classes = std::move(module_classes);
  if (!patterns.empty()) rewrite::rules_from_string(patterns);  // a bad spec fails before the export
  const ir::Model captured = load_source(source);
  ir::Model model;
  std::optional<optimizer::OptimizeModelReport> report;
  {
    py::gil_scoped_release unlocked;
    model = aten::lower(captured, lower_options);
    if (!patterns.empty()) {
      optimizer::OptimizeModelOptions options;
      options.patterns = patterns;
      options.verbose = verbose;
      report = optimizer::optimize_model(model, options);
    }
    if (!filename.empty()) save_model(std::move(model), filename);
  }
  py::object report_object = report ? py::object(report_dict(*report)) : py::none();
  if (!filename.empty()) return {py::none(), report_object};
  return {to_bytes(std::move(model)), report_object};
}

py::bytes inline_model(const py::object& source) {
  ir::Model model = load_source(source);
  {
    py::gil_scoped_release unlocked;
    functions::inline_functions(model);
  }
  return to_bytes(std::move(model));
}

std::vector<std::pair<std::string, py::bytes>> run(
    const py::object& source, const std::vector<std::pair<std::string, py::bytes>>& feeds) {
  const ir::Model model = load_source(source);
  const tools::Feeds tensors = parse_feeds(feeds);
  std::vector<Tensor> outputs;
  {
    py::gil_scoped_release unlocked;
    outputs = tools::run_model(model, tensors);
  }
  std::vector<std::pair<std::string, py::bytes>> out;
  const std::vector<ir::ValueId>& names = model.graph->outputs();
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const std::string& name = model.graph->value(names[k]).name;
    out.emplace_back(name, py::bytes(tensor_to_proto(outputs[k], name).SerializeAsString()));
  }
  return out;
}

// compare_models pairs feeds with the second model's inputs by position: put them in the order of the
// first model's inputs (names it does not have go last, for the evaluator to report).
tools::Comparison compare(const py::object& first_source, const py::object& second_source,
                          const std::vector<std::pair<std::string, py::bytes>>& feeds) {
  const ir::Model first = load_source(first_source);
  const ir::Model second = load_source(second_source);
  tools::Feeds unordered = parse_feeds(feeds), ordered;
  std::vector<bool> taken(unordered.size(), false);
  for (ir::ValueId id : tools::fed_inputs(*first.graph))
    for (std::size_t k = 0; k < unordered.size(); ++k)
      if (!taken[k] && unordered[k].first == first.graph->value(id).name) {
        ordered.push_back(std::move(unordered[k]));
        taken[k] = true;
      }
  for (std::size_t k = 0; k < unordered.size(); ++k)
    if (!taken[k]) ordered.push_back(std::move(unordered[k]));
  py::gil_scoped_release unlocked;
  return tools::compare_models(first, second, ordered);
}

// Every rule of every registered set: (name, set, priority, description as `xexp patterns` prints it).
std::vector<std::tuple<std::string, std::string, int, std::string>> patterns() {
  std::vector<std::tuple<std::string, std::string, int, std::string>> out;
  const rewrite::Catalog& catalog = rewrite::Catalog::global();
  for (const std::string& set : catalog.set_names())
    for (const rewrite::RulePtr& r : catalog.resolve(set))
      out.emplace_back(r->name(), set, r->priority(), r->describe());
  return out;
}

std::optional<std::string> signature_text(const std::vector<tools::ResultSignature>& side,
                                          const std::optional<std::size_t>& k) {
  if (!k) return std::nullopt;
  return side[*k].str();
}

}  // namespace xexp::python

PYBIND11_MODULE(_xexp, m) {
  namespace xp = xexp::python;
  namespace tools = xexp::tools;
  m.doc() = "xexp's C++ entry points over serialized protobuf; use the package `xexp`, not this module";
  py::register_exception<xexp::Error>(m, "Error");

  m.def("optimize", &xp::optimize, py::arg("model"), py::arg("patterns"), py::arg("verbose"),
        py::arg("constant_folding"), py::arg("inline_functions"), py::arg("intermediate_functions"),
        "(model bytes or path, patterns, verbose, constant_folding, inline_functions, "
        "intermediate_functions) -> "
        "(optimized ModelProto bytes, report dict)");
  m.def("lower_aten", &xp::lower_aten, py::arg("model"), py::arg("opset"), py::arg("module_functions"),
        py::arg("module_depth"), py::arg("module_classes"), py::arg("patterns"), py::arg("verbose"),
        py::arg("filename"),
        "(aten-domain model bytes or path, opset, module_functions, module_depth, module_classes, patterns "
        "('' for none), verbose, filename ('' for none)) -> (ONNX ModelProto bytes or None when saved to "
        "filename, optimization report dict or None)");
  m.def("inline", &xp::inline_model, py::arg("model"),
        "model bytes or path -> ModelProto bytes without local functions");
  m.def("run", &xp::run, py::arg("model"), py::arg("feeds"),
        "(model bytes or path, [(name, TensorProto bytes)]) -> [(output name, TensorProto bytes)]");
  m.def("compare", &xp::compare, py::arg("first"), py::arg("second"), py::arg("feeds"));
  m.def("patterns", &xp::patterns, "[(name, set, priority, description)] of every registered rule set");

  py::class_<tools::Comparison>(
      m, "Comparison", "Both runs' results aligned: str() is the side-by-side table of `xexp compare`")
      .def("__str__", [](const tools::Comparison& c) { return c.str(); })
      .def("__len__", [](const tools::Comparison& c) { return c.rows.size(); })
      .def("count", &tools::Comparison::count, py::arg("symbol"),
           "Rows of one kind: '=' identical, '~' paired but different, '-' first model only, '+' second only")
      .def_property_readonly(
          "rows",
          [](const tools::Comparison& c) {
            std::vector<std::tuple<std::string, std::optional<std::string>, std::optional<std::string>>> out;
            for (const tools::AlignedRow& r : c.rows)
              out.emplace_back(std::string(1, r.symbol), xp::signature_text(c.left, r.left),
                               xp::signature_text(c.right, r.right));
            return out;
          },
          "[(symbol, first model's result or None, second's or None)], each result as its signature line");
}
