#pragma once
// The inputs of a run (`xexp run`, `xexp compare`, benchmarks): TensorProto files given in the order of
// the graph's inputs (the ONNX backend test format), and deterministic random tensors for the inputs no
// file gives, sized from their declared shapes, indices within what they index. The same seed gives the
// same bytes on every machine: the generator and the conversions are spelled out here, not left to
// <random>'s distributions.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xexp/core/error.hpp"
#include "xexp/core/float16.hpp"
#include "xexp/core/tensor.hpp"
#include "xexp/ir/graph.hpp"
#include "xexp/onnx/tensor_proto.hpp"

namespace xexp::tools {

using Feeds = std::vector<std::pair<std::string, Tensor>>;

struct RandomInputOptions {
  uint64_t seed = 0;
  double float_low = -1.0, float_high = 1.0;  // floating inputs: uniform in [low, high)
  int64_t int_low = 0, int_high = 10;         // integer inputs (token ids, indices): uniform in [low, high)
  std::map<std::string, int64_t> symbols = {};  // values of symbolic dimensions, e.g. {"batch", 2}
  // The size of a symbolic dimension missing from `symbols` and of an unnamed dynamic one; none: an error.
  std::optional<int64_t> default_dim = std::nullopt;
};

// splitmix64: tiny, well mixed and identical everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  uint64_t state_;
};

inline Tensor random_tensor(ElemType type, std::vector<int64_t> dims, SplitMix64& rng,
                            const RandomInputOptions& options = {}) {
  Tensor t(type, std::move(dims));
  const auto n = static_cast<std::size_t>(t.size());
  auto real = [&] { return options.float_low + (options.float_high - options.float_low) * rng.uniform(); };
  auto integer = [&] {
    if (options.int_high <= options.int_low) throw Error("random inputs: int_high must be greater than int_low");
    const auto span = static_cast<uint64_t>(options.int_high - options.int_low);
    return options.int_low + static_cast<int64_t>(rng.next() % span);
  };
  auto fill = [&]<class T>(auto&& make) {
    auto out = t.mutable_data<T>();
    for (std::size_t k = 0; k < n; ++k) out[k] = static_cast<T>(make());
  };
  switch (type) {
    case ElemType::Float: fill.template operator()<float>(real); break;
    case ElemType::Double: fill.template operator()<double>(real); break;
    case ElemType::Float16: fill.template operator()<uint16_t>([&] { return float_to_half(static_cast<float>(real())); }); break;
    case ElemType::BFloat16:
      fill.template operator()<uint16_t>([&] { return float_to_bfloat16(static_cast<float>(real())); });
      break;
    case ElemType::Int64: fill.template operator()<int64_t>(integer); break;
    case ElemType::Int32: fill.template operator()<int32_t>(integer); break;
    case ElemType::Int16: fill.template operator()<int16_t>(integer); break;
    case ElemType::Int8: fill.template operator()<int8_t>(integer); break;
    case ElemType::UInt64: fill.template operator()<uint64_t>(integer); break;
    case ElemType::UInt32: fill.template operator()<uint32_t>(integer); break;
    case ElemType::UInt16: fill.template operator()<uint16_t>(integer); break;
    case ElemType::UInt8: fill.template operator()<uint8_t>(integer); break;
    case ElemType::Bool: fill.template operator()<uint8_t>([&] { return rng.next() & 1; }); break;
    default: throw Error("no random generator for element type " + std::string(elem_type_name(type)));
  }
  return t;
}

// The graph inputs a caller feeds (those that are not initializers), in order.
inline std::vector<ir::ValueId> fed_inputs(const ir::Graph& g) {
  std::vector<ir::ValueId> out;
  for (ir::ValueId id : g.inputs())
    if (!g.value(id).is_initializer()) out.push_back(id);
  return out;
}

// The first node reading value `id` ("" when none does): errors about an input name it, since that is
// where the value would have been used.
inline std::string first_reader(const ir::Graph& g, ir::ValueId id) {
  for (ir::NodeId nid : g.nodes())
    for (ir::ValueId in : g.node(nid).inputs)
      if (in == id) return g.node(nid).name.empty() ? g.node(nid).op_type.str() : g.node(nid).name;
  return {};
}

// The dimensions a random value of input `v` gets.
inline std::vector<int64_t> random_input_dims(const ir::Value& v, const RandomInputOptions& options) {
  if (!v.shape) throw Error("the input has no declared shape: random values cannot be sized", {.node = {}, .value = v.name});
  std::vector<int64_t> dims;
  for (const Dim& d : *v.shape) {
    if (d.is_static()) {
      dims.push_back(d.value());
      continue;
    }
    auto it = d.is_symbolic() ? options.symbols.find(d.symbol().str()) : options.symbols.end();
    if (it != options.symbols.end()) dims.push_back(it->second);
    else if (options.default_dim) dims.push_back(*options.default_dim);
    else throw Error("no value for dimension '" + d.str() + "'", {.node = {}, .value = v.name});
  }
  return dims;
}

// Ops that pass integer values on without computing new ones (copies, reshapes, broadcasts, slices,
// concatenations): what reads their output still reads the input's values.
inline bool passes_values_on(const ir::Node& n) {
  static const std::set<std::string_view> ops{"Cast",    "Concat", "Expand",  "Flatten",   "Identity",
                                              "Reshape", "Slice",  "Squeeze", "Transpose", "Unsqueeze"};
  return (n.domain.empty() || n.domain == "ai.onnx") && ops.count(n.op_type.view()) > 0;
}

// The size of the axis a Gather reads with integer input `id` as its indices, directly or through ops
// that pass values on (ALBERT's token type ids reach their table through an Expand), the smallest over
// such Gathers where it is known; 0 when none reads it. Token type ids index a table of two rows: drawn
// in the usual [0, 10) they would make the run fail instead of testing the model.
inline int64_t gathered_size(const ir::Graph& g, ir::ValueId id) {
  int64_t size = 0;
  std::vector<ir::ValueId> todo{id};
  std::set<ir::ValueId> seen{id};
  while (!todo.empty()) {
    const ir::ValueId value = todo.back();
    todo.pop_back();
    for (const ir::Use& u : g.value(value).uses) {
      const ir::Node& n = g.node(u.node);
      // The first input of most of them carries the values, any input of a Concat does.
      if (passes_values_on(n) && (u.slot == 0 || n.op_type.view() == "Concat")) {
        for (ir::ValueId out : n.outputs)
          if (out != ir::kNone && seen.insert(out).second) todo.push_back(out);
        continue;
      }
      if (u.slot != 1 || n.op_type != Symbol("Gather") || !(n.domain.empty() || n.domain == "ai.onnx"))
        continue;
      const ir::Value& data = g.value(n.inputs[0]);
      if (!data.shape) continue;
      const auto rank = static_cast<int64_t>(data.shape->size());
      const ir::Attribute* attribute = n.attribute(Symbol("axis"));
      const int64_t axis = !attribute ? 0 : attribute->i < 0 ? attribute->i + rank : attribute->i;
      if (axis < 0 || axis >= rank || !(*data.shape)[axis].is_static()) continue;
      const int64_t rows = (*data.shape)[axis].value();
      size = size == 0 ? rows : std::min(size, rows);
    }
  }
  return size;
}

// A random value for input `id`: sized from its declared shape, integers below the size of what a Gather
// indexes with them (gathered_size). Errors name the input.
inline Tensor random_input(const ir::Graph& g, ir::ValueId id, SplitMix64& rng, RandomInputOptions options) {
  const ir::Value& v = g.value(id);
  try {
    if (v.elem == ElemType::Int64 || v.elem == ElemType::Int32)
      if (const int64_t size = gathered_size(g, id); size > options.int_low && size < options.int_high)
        options.int_high = size;
    return random_tensor(v.elem, random_input_dims(v, options), rng, options);
  } catch (const Error& e) {
    if (!e.value().empty()) throw;
    throw Error(e.cause(), {.node = {}, .value = v.name});  // a declared shape or type we cannot make
  }
}

// One random tensor per fed input, in input order.
inline Feeds random_feeds(const ir::Graph& g, const RandomInputOptions& options = {}) {
  SplitMix64 rng(options.seed);
  Feeds feeds;
  for (ir::ValueId id : fed_inputs(g))
    feeds.emplace_back(g.value(id).name, random_input(g, id, rng, options));
  return feeds;
}

struct InputOptions {
  std::vector<std::string> files;  // serialized TensorProto files, in the order of the fed inputs
  bool random = false;             // random values for the inputs no file gives
  RandomInputOptions random_options = {};
};

// The feeds of a run: files first (by position), then random values when asked for.
inline Feeds make_feeds(const ir::Graph& g, const InputOptions& options) {
  const std::vector<ir::ValueId> inputs = fed_inputs(g);
  if (options.files.size() > inputs.size())
    throw Error(std::to_string(options.files.size()) + " input files were given, the model has " +
                std::to_string(inputs.size()) + " inputs");
  Feeds feeds;
  for (std::size_t k = 0; k < options.files.size(); ++k)
    feeds.emplace_back(g.value(inputs[k]).name, load_tensor(options.files[k]).tensor);
  SplitMix64 rng(options.random_options.seed);
  for (std::size_t k = options.files.size(); k < inputs.size(); ++k) {
    const ir::Value& v = g.value(inputs[k]);
    if (!options.random)
      throw Error("no value was given for this input (give an input file or ask for random inputs)",
                  {.node = first_reader(g, inputs[k]), .value = v.name});
    feeds.emplace_back(v.name, random_input(g, inputs[k], rng, options.random_options));
  }
  return feeds;
}

}  // namespace xexp::tools
