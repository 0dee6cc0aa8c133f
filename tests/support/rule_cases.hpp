#pragma once
// The positive case of every rule (tests/data/rule_positive_cases.txt): a small model in ONNX's text
// syntax per rule, with the op types `xexp optimize` leaves. Read by the rule catalogue test and by the
// differential test against ONNX Runtime.
// <sys/mman.h> (xexp/onnx/mapped_file.hpp) defines MAP_TYPE, a name ONNX's parser.h declares.
#pragma push_macro("MAP_TYPE")
#undef MAP_TYPE
#include <onnx/defs/parser.h>
#include <onnx/shape_inference/implementation.h>
#pragma pop_macro("MAP_TYPE")
#include <onnx/defs/schema.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"
#include "xexp/core/error.hpp"
#include "xexp/onnx/load.hpp"
#include "xexp/optimizer/optimize_model.hpp"

namespace xexp::testing {

struct PositiveCase {
  std::string rule, text;
  std::vector<std::string> expected;   // op types after default+onnxruntime, "domain.Op" outside ONNX
  std::vector<std::string> subsumers;  // rules that do the same on this case, left out with it
};

inline std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// "== Rule" starts a case, its model text follows, "-> Op Op ..." gives the expected op types and
// "-x Rule ..." the subsumers; '#' lines are comments.
inline std::vector<PositiveCase> read_positive_cases(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + path.string());
  std::vector<PositiveCase> out;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("#")) continue;
    if (line.starts_with("== "))
      out.push_back({line.substr(3), {}, {}, {}});
    else if (line.starts_with("-> ") && !out.empty())
      out.back().expected = split_words(line.substr(3));
    else if (line.starts_with("-x ") && !out.empty())
      out.back().subsumers = split_words(line.substr(3));
    else if (!out.empty())
      out.back().text += line + "\n";
  }
  return out;
}

inline std::vector<PositiveCase> read_positive_cases() {
  return read_positive_cases(std::filesystem::path(XEXP_SOURCE_DIR) / "tests" / "data" /
                             "rule_positive_cases.txt");
}

// The model as an exporter writes it: parsed, typed by ONNX shape inference (with data propagation, as
// exporters know the shapes they compute), saved.
inline void write_case_model(const std::string& text, const std::string& path) {
  ::onnx::ModelProto proto;
  const auto status = ::onnx::OnnxParser::Parse(proto, text.c_str());
  if (!status.IsOK()) throw Error("cannot parse the case: " + status.ErrorMessage());
  ::onnx::ShapeInferenceOptions options;
  options.enable_data_propagation = true;
  ::onnx::shape_inference::InferShapes(proto, ::onnx::OpSchemaRegistry::Instance(), options);
  std::ofstream out(path, std::ios::binary);
  if (!proto.SerializeToOstream(&out)) throw Error("cannot write " + path);
}

// `model` optimized as `xexp optimize` does (default options unless given), its log dropped.
inline optimizer::OptimizeModelReport optimize_quietly(ir::Model& model, bool constant_folding = true,
                                                   const std::string& patterns = optimizer::kDefaultPatterns) {
  std::ostringstream log;
  optimizer::OptimizeModelOptions options;
  options.log = &log;
  options.constant_folding = constant_folding;
  options.patterns = patterns;
  return optimizer::optimize_model(model, options);
}

// The case written at `path` as an exporter writes it (write_case_model), read back and optimized as
// `xexp optimize` does with its default options.
inline ir::Model optimized_case_model(const std::string& text, const std::string& path) {
  write_case_model(text, path);
  ir::Model model = load_model(path);
  optimize_quietly(model);
  return model;
}

// The case model as xexp reads it from disk after write_case_model.
inline ir::Model load_case_model(const std::string& text) {
  TempDir dir;
  const std::string path = (dir.path() / "model.onnx").string();
  write_case_model(text, path);
  return load_model(path);
}

// The ONNX text name of a float element type given as its number ("10": "float16").
inline std::string float_type_name(const std::string& to) {
  return to == "1" ? "float" : to == "10" ? "float16" : to == "11" ? "double" : "bfloat16";
}
// "int64[3]" for the values "6,4,5".
inline std::string int64_type(const std::string& values) {
  return "int64[" + std::to_string(std::count(values.begin(), values.end(), ',') + 1) + "]";
}

}  // namespace xexp::testing
