#pragma once
// ir::Model -> ModelProto, and save_model. One pass over the IR; tensors that came from a proto are
// written back as they were read (moved back when the model is given away). The output is
// deterministic: the same model gives the same bytes. With external data (SaveOptions::external_data),
// tensor bytes stream to the side file as the pass reaches them, so the ModelProto stays small whatever
// the weights weigh; model_to_proto always keeps every tensor inside.
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "xexp/ir/model.hpp"
#include "xexp/onnx/attribute_proto.hpp"
#include "xexp/onnx/external_data.hpp"
#include "xexp/onnx/load.hpp"
#include "xexp/onnx/proto_fields.hpp"
#include "xexp/onnx/temporary_file.hpp"
#include "xexp/onnx/tensor_proto.hpp"

namespace xexp {

// Where tensor bytes go when a model is saved to a file.
enum class ExternalData {
  Auto,    // a side file when the model read tensors from external data, or when its tensors would pass
           // protobuf's 2 GB limit inside the model file; inside the model file otherwise
  Always,  // a side file
  Never,   // inside the model file (saving fails past 2 GB)
};

struct SaveOptions {
  ExternalData external_data = ExternalData::Auto;
  // With external data, tensors of at least this many bytes go to the side file, smaller ones stay inside.
  std::size_t external_data_threshold = 1024;
  // File name (next to the model) for external data; empty means "<model file name>.data".
  std::string external_data_file;
  // false: only values listed in Graph::value_info() are written as value_info. true: every value
  // produced by a node, not a graph output, with a known type is written too (after the listed ones).
  bool write_inferred_value_info = false;
};

namespace detail {

class ModelWriter {
 public:
  // `take`: the model is being given away, tensor protos may be moved out of it.
  ModelWriter(bool take, const SaveOptions& options, ExternalDataWriter* sink)
      : take_(take), options_(options), sink_(sink) {}

  void write(const ir::Model& m, ::onnx::ModelProto* p) {
    if (m.ir_version != 0 || (m.presence & (1u << 1))) p->set_ir_version(m.ir_version);
    write_opsets(m.opsets, p->mutable_opset_import());
    if (!m.producer_name.empty() || (m.presence & (1u << 2))) p->set_producer_name(m.producer_name);
    if (!m.producer_version.empty() || (m.presence & (1u << 3))) p->set_producer_version(m.producer_version);
    if (!m.domain.empty() || (m.presence & (1u << 4))) p->set_domain(m.domain);
    if (m.model_version != 0 || (m.presence & (1u << 5))) p->set_model_version(m.model_version);
    if (!m.doc_string.empty() || (m.presence & (1u << 6))) p->set_doc_string(m.doc_string);
    if (m.graph && (m.graph->node_count() || !m.graph->inputs().empty() || !m.graph->outputs().empty() ||
                    (m.presence & (1u << 7)) || m.presence == 0))
      write_graph(*m.graph, p->mutable_graph());
    for (const auto& [key, value] : m.metadata_props) {
      auto* e = p->add_metadata_props();
      e->set_key(key);
      e->set_value(value);
    }
    for (const std::string& t : m.raw_training_info) p->add_training_info()->ParseFromString(t);
    p->mutable_functions()->Reserve(static_cast<int>(m.functions.size()));
    for (const ir::Function& f : m.functions) write_function(f, p->add_functions());
    restore_unknown(m.unknown, p);
  }

  void write_graph(const ir::Graph& g, ::onnx::GraphProto* p) {
    p->mutable_node()->Reserve(static_cast<int>(g.node_count()));
    write_nodes(g, p->mutable_node());
    write_optional(g.name, g.presence, ir::kHasName, [&](const std::string& s) { p->set_name(s); });
    p->mutable_initializer()->Reserve(static_cast<int>(g.initializers().size()));
    for (ir::ValueId id : g.initializers()) {
      const ir::Value& v = g.value(id);
      if (v.alive && v.initializer) write_tensor(*v.initializer, &v.name, p->add_initializer());
    }
    write_optional(g.doc_string, g.presence, ir::kHasDocString, [&](const std::string& s) { p->set_doc_string(s); });
    for (ir::ValueId id : g.inputs()) write_value_info(g.value(id), p->add_input());
    for (ir::ValueId id : g.outputs()) write_value_info(g.value(id), p->add_output());
    for (ir::ValueId id : g.value_info())
      if (g.value(id).alive) write_value_info(g.value(id), p->add_value_info());
    if (options_.write_inferred_value_info) write_inferred_value_info(g, p);
    for (const std::string& q : g.raw_quantization_annotations) p->add_quantization_annotation()->ParseFromString(q);
    for (ir::ValueId id = 0; id < g.value_capacity(); ++id)
      if (g.value(id).alive && !g.value(id).raw_sparse_initializer.empty())
        p->add_sparse_initializer()->ParseFromString(g.value(id).raw_sparse_initializer);
    restore_unknown(g.unknown, p);
  }

 private:
  void write_inferred_value_info(const ir::Graph& g, ::onnx::GraphProto* p) {
    std::vector<bool> listed(g.value_capacity(), false);
    for (ir::ValueId id : g.value_info()) listed[id] = true;
    for (ir::NodeId n : g.nodes())
      for (ir::ValueId id : g.node(n).outputs) {
        if (id == ir::kNone || listed[id]) continue;
        const ir::Value& v = g.value(id);
        if (v.has_type() && !v.is_graph_output()) write_value_info(v, p->add_value_info());
      }
  }

  static void write_opsets(const std::vector<ir::OpsetImport>& opsets,
                           google::protobuf::RepeatedPtrField<::onnx::OperatorSetIdProto>* out) {
    out->Reserve(static_cast<int>(opsets.size()));
    for (const ir::OpsetImport& o : opsets) {
      auto* p = out->Add();
      write_optional(o.domain, o.presence, ir::kHasDomain, [&](const std::string& s) { p->set_domain(s); });
      if (o.version != 0 || (o.presence & ir::kHasVersion)) p->set_version(o.version);
      restore_unknown(o.unknown, p);
    }
  }

  void write_nodes(const ir::Graph& g, google::protobuf::RepeatedPtrField<::onnx::NodeProto>* out) {
    static const std::string kOmitted;
    for (ir::NodeId id : g.nodes()) {
      const ir::Node& n = g.node(id);
      auto* p = out->Add();
      p->mutable_input()->Reserve(static_cast<int>(n.inputs.size()));
      for (ir::ValueId v : n.inputs) p->add_input(v == ir::kNone ? kOmitted : g.value(v).name);
      p->mutable_output()->Reserve(static_cast<int>(n.outputs.size()));
      for (ir::ValueId v : n.outputs) p->add_output(v == ir::kNone ? kOmitted : g.value(v).name);
      write_optional(n.name, n.presence, ir::kHasName, [&](const std::string& s) { p->set_name(s); });
      p->set_op_type(std::string(n.op_type.view()));
      write_optional(std::string(n.domain.view()), n.presence, ir::kHasDomain,
                     [&](const std::string& s) { p->set_domain(s); });
      write_optional(n.doc_string, n.presence, ir::kHasDocString, [&](const std::string& s) { p->set_doc_string(s); });
      p->mutable_attribute()->Reserve(static_cast<int>(n.attributes.size()));
      for (const ir::Attribute& a : n.attributes) write_attribute(a, p->add_attribute());
      restore_unknown(n.unknown, p);
    }
  }

  void write_attribute(const ir::Attribute& a, ::onnx::AttributeProto* p) {
    detail::write_attribute(
        a, p, [&](const ir::Graph& g, ::onnx::GraphProto* gp) { write_graph(g, gp); },
        [&](const Tensor& t, ::onnx::TensorProto* tp) { write_tensor(t, nullptr, tp); });
  }

  void write_tensor(const Tensor& t, const std::string* name, ::onnx::TensorProto* p) {
    detail::write_tensor(t, name, p, take_, sink_);
    // A taken tensor's storage is now empty: drop it so that memory is released as we go.
    if (take_ && t.storage().use_count() == 1) const_cast<Tensor&>(t) = Tensor();
  }

  void write_function(const ir::Function& f, ::onnx::FunctionProto* p) {
    write_optional(f.name, f.presence, ir::kHasName, [&](const std::string& s) { p->set_name(s); });
    const ir::Graph& body = *f.body;
    for (ir::ValueId id : body.inputs()) p->add_input(body.value(id).name);
    for (ir::ValueId id : body.outputs()) p->add_output(body.value(id).name);
    for (const std::string& a : f.attributes) p->add_attribute(a);
    write_nodes(body, p->mutable_node());
    write_optional(f.doc_string, f.presence, ir::kHasDocString, [&](const std::string& s) { p->set_doc_string(s); });
    write_opsets(f.opsets, p->mutable_opset_import());
    write_optional(f.domain, f.presence, ir::kHasDomain, [&](const std::string& s) { p->set_domain(s); });
    // attribute_proto (field 11) is unknown to ONNX 1.12: written as an unknown field.
    for (const ir::Attribute& a : f.attribute_defaults) {
      ::onnx::AttributeProto ap;
      write_attribute(a, &ap);
      p->mutable_unknown_fields()->AddLengthDelimited(kFunctionAttributeProtoField, ap.SerializeAsString());
    }
    if (!f.unknown.empty()) {
      google::protobuf::UnknownFieldSet rest;
      rest.ParseFromString(f.unknown);
      p->mutable_unknown_fields()->MergeFrom(rest);
    }
  }

  bool take_;
  const SaveOptions& options_;
  ExternalDataWriter* sink_;
};

// Writes `m` to `file`, which becomes `path` once everything is written.
inline void serialize_to_file(const google::protobuf::MessageLite& m, const std::string& path, TemporaryFile& file) {
  if (m.ByteSizeLong() > static_cast<std::size_t>(INT32_MAX))
    throw Error("cannot save '" + path +
                "': larger than 2 GB (protobuf's limit); save with external data (SaveOptions::external_data, "
                "xexp --external-data)");
  if (!m.SerializeToFileDescriptor(file.fd())) throw Error("cannot write '" + path + "': " + std::strerror(errno));
  file.commit();
}

// What ExternalData::Auto looks at: the bytes of every tensor of the model (initializers and tensor
// attributes, in subgraphs and local functions too), and whether one was read from external data.
struct TensorTotals {
  uint64_t bytes = 0;
  bool any_external = false;

  void add(const ir::Graph& g) {
    for (ir::ValueId id : g.initializers())
      if (g.value(id).alive && g.value(id).initializer) add(*g.value(id).initializer);
    for (ir::NodeId n : g.nodes())
      for (const ir::Attribute& a : g.node(n).attributes) {
        for (const Tensor& t : a.tensors) add(t);
        for (const std::shared_ptr<ir::Graph>& sub : a.graphs) add(*sub);
      }
  }
  void add(const Tensor& t) {
    if (!t.storage()) return;
    bytes += t.storage()->byte_size();
    const auto* stored = dynamic_cast<const ProtoTensorStorage*>(t.storage().get());
    any_external = any_external || (stored && stored->is_external());
  }
};

inline TensorTotals tensor_totals(const ir::Model& model) {
  TensorTotals totals;
  if (model.graph) totals.add(*model.graph);
  for (const ir::Function& f : model.functions) totals.add(*f.body);
  return totals;
}

// ExternalData::Never on tensors that alone pass protobuf's limit: refused before the ModelProto
// holding a copy of every weight is built (serialize_to_file would refuse it only then).
inline void check_fits_inline(const ir::Model& model, const SaveOptions& options, const std::string& path) {
  if (options.external_data != ExternalData::Never) return;
  const uint64_t bytes = tensor_totals(model).bytes;
  if (bytes > uint64_t{INT32_MAX})
    throw Error("cannot save '" + path + "' without external data: its tensors hold " + std::to_string(bytes) +
                " bytes, more than protobuf's 2 GB limit; save with external data (SaveOptions::external_data, "
                "xexp --external-data)");
}

inline bool writes_external_data(const ir::Model& model, const SaveOptions& options) {
  if (options.external_data != ExternalData::Auto) return options.external_data == ExternalData::Always;
  // The rest of a model (nodes, names, shapes) stays far below this margin under protobuf's limit.
  constexpr uint64_t kInlineTensorLimit = uint64_t{INT32_MAX} - (uint64_t{256} << 20);
  const TensorTotals totals = tensor_totals(model);
  return totals.any_external || totals.bytes > kInlineTensorLimit;
}

}  // namespace detail

// The side file's name (next to `model_path`) that saving with external data writes.
inline std::string external_data_location(const std::string& model_path, const SaveOptions& options = {}) {
  std::string location = options.external_data_file.empty()
                             ? model_path.substr(model_path.find_last_of('/') + 1) + ".data"
                             : options.external_data_file;
  if (location.find('/') != std::string::npos)
    throw Error("external_data_file '" + location + "' must be a file name (it is written next to the model)");
  return location;
}

inline ::onnx::ModelProto model_to_proto(const ir::Model& model, const SaveOptions& options = {}) {
  ::onnx::ModelProto p;
  detail::ModelWriter(false, options, nullptr).write(model, &p);
  return p;
}
// Gives the model away: tensor data is moved back into the proto instead of copied.
inline ::onnx::ModelProto model_to_proto(ir::Model&& model, const SaveOptions& options = {}) {
  ::onnx::ModelProto p;
  detail::ModelWriter(true, options, nullptr).write(model, &p);
  return p;
}

namespace detail {
inline void save_model_impl(const ir::Model& model, bool take, const std::string& path, const SaveOptions& options) {
  check_fits_inline(model, options, path);
  TemporaryFile model_file(path);
  ::onnx::ModelProto p;
  if (writes_external_data(model, options)) {
    const std::string location = external_data_location(path, options);
    TemporaryFile data_file(directory_of(path) + "/" + location);
    ExternalDataWriter sink(data_file.fd(), location, options.external_data_threshold);
    ModelWriter(take, options, &sink).write(model, &p);
    serialize_to_file(p, path, model_file);
    if (sink.written()) data_file.commit();  // else it is removed: no tensor went out
  } else {
    ModelWriter(take, options, nullptr).write(model, &p);
    serialize_to_file(p, path, model_file);
  }
}
}  // namespace detail

inline void save_model(const ir::Model& model, const std::string& path, const SaveOptions& options = {}) {
  detail::save_model_impl(model, false, path, options);
}
// Gives the model away: weights move into the file without a second copy in memory.
inline void save_model(ir::Model&& model, const std::string& path, const SaveOptions& options = {}) {
  detail::save_model_impl(model, true, path, options);
}

}  // namespace xexp
