#pragma once
// Modules exported as local functions (experimental-experiment's export_modules_as_functions). Every
// node of a plain graph carries the stack of module scopes it was created in; each module instance becomes a
// call of a function in domain `aten_local_function` named after the module type, nested modules
// become calls inside bodies. Weights read inside a module become extra function inputs passed by
// the caller (after the real inputs, by decreasing size) or, under `external_threshold` bytes,
// Constant nodes inside the body. Bodies equal up to value names are one function (same_function);
// a different body under a taken name is renamed <name>_l2l, ... (add_function).
#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "xexp/builder/graph_builder.hpp"
#include "xexp/builder/module_scope.hpp"
#include "xexp/core/error.hpp"
#include "xexp/functions/inliner.hpp"
#include "xexp/functions/outline.hpp"
#include "xexp/functions/registry.hpp"
#include "xexp/ir/copy.hpp"
#include "xexp/ir/model.hpp"

namespace xexp::functions {

inline constexpr std::string_view kLocalFunctionDomain = "aten_local_function";

struct FunctionExportOptions {
  std::string domain = std::string(kLocalFunctionDomain);
  // Initializers smaller than this (bytes) become Constant nodes inside the bodies that read them.
  std::size_t external_threshold = kDefaultConstantBytes;
  // Initializers passed as inputs whatever their size (a torch model's parameters and buffers: layers
  // of one class differ only by them, so their bodies stay equal). Empty: by size only.
  std::function<bool(const ir::Value&)> is_weight;
  AddFunctionOptions add = {};
  // Which modules become functions (empty: all); the nodes of the others go to the enclosing module.
  std::function<bool(const ModuleScope&)> export_module;
};

// The module scopes node `id` of the plain graph was created in, outermost first.
using ModuleStackOf = std::function<const ModuleStack&(ir::NodeId id)>;

namespace detail {

class ModuleExporter {
 public:
  ModuleExporter(const ir::Model& plain, const ModuleStackOf& scopes, const FunctionExportOptions& options)
      : plain_(plain), options_(options) {
    copy_model_fields();
    work_ = ir::clone(*plain.graph);
    build_instances(scopes);
  }

  ir::Model run() && {
    std::vector<std::size_t> order(instances_.size() - 1);
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k + 1;  // instance 0 is the graph itself
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return instances_[a].depth > instances_[b].depth; });
    for (std::size_t k : order) collapse(k);
    drop_unused_initializers();
    work_->compact();
    model_.graph = std::move(work_);
    return std::move(model_);
  }

 private:
  struct Instance {
    ModuleScope scope;
    std::size_t parent = 0;
    std::size_t depth = 0;
    std::vector<ir::NodeId> items;  // nodes of the working graph directly inside, calls of children included
  };

  void copy_model_fields() {
    model_.ir_version = plain_.ir_version;
    model_.opsets = plain_.opsets;
    model_.producer_name = plain_.producer_name;
    model_.producer_version = plain_.producer_version;
    model_.domain = plain_.domain;
    model_.model_version = plain_.model_version;
    model_.doc_string = plain_.doc_string;
    model_.metadata_props = plain_.metadata_props;
    model_.raw_training_info = plain_.raw_training_info;
    model_.unknown = plain_.unknown;
    model_.presence = plain_.presence;
    for (const ir::Function& f : plain_.functions) {
      ir::Function& copy = model_.functions.emplace_back();
      copy.name = f.name;
      copy.domain = f.domain;
      copy.attributes = f.attributes;
      copy.attribute_defaults = f.attribute_defaults;
      copy.opsets = f.opsets;
      copy.body = ir::clone(*f.body);
      copy.doc_string = f.doc_string;
      copy.unknown = f.unknown;
      copy.presence = f.presence;
    }
  }

  // Module instances from the scope stacks: consecutive nodes sharing a scope prefix are inside the
  // same instance (scopes are RAII blocks, so an instance's nodes are contiguous).
  void build_instances(const ModuleStackOf& scopes) {
    instances_.push_back({});  // the graph
    std::vector<std::size_t> open;  // open[d]: the instance at depth d+1
    std::size_t position = 0;
    auto plain_it = plain_.graph->nodes().begin();
    for (ir::NodeId id : work_->nodes()) {
      const ir::NodeId plain_id = *plain_it++;
      ModuleStack stack;
      for (const ModuleScope& s : scopes(plain_id))
        if (!options_.export_module || options_.export_module(s)) stack.push_back(s);
      std::size_t common = 0;
      while (common < open.size() && common < stack.size() && instances_[open[common]].scope == stack[common]) ++common;
      open.resize(common);
      for (std::size_t d = common; d < stack.size(); ++d) {
        instances_.push_back({stack[d], open.empty() ? 0 : open.back(), d + 1, {}});
        open.push_back(instances_.size() - 1);
      }
      const std::size_t owner = open.empty() ? 0 : open.back();
      set_owner(id, owner, position++);
      instances_[owner].items.push_back(id);
    }
  }

  void set_owner(ir::NodeId id, std::size_t owner, std::size_t position) {
    if (owner_.size() <= id) {
      owner_.resize(id + 1, 0);
      position_.resize(id + 1, 0);
    }
    owner_[id] = owner;
    position_[id] = position;
  }

  bool inside(ir::NodeId node, std::size_t instance) const { return owner_[node] == instance; }

  // Turns instance `k` into a function and its nodes into one call.
  void collapse(std::size_t k) {
    Instance& instance = instances_[k];
    std::sort(instance.items.begin(), instance.items.end(),
              [&](ir::NodeId a, ir::NodeId b) { return position_[a] < position_[b]; });
    const Boundary io = boundary_of(
        *work_, instance.items, [&](ir::NodeId id) { return inside(id, k); }, options_.external_threshold,
        options_.is_weight);
    Instance& parent = instances_[instance.parent];
    if (io.outputs.empty()) {  // nothing leaves it: its nodes stay in the parent
      for (ir::NodeId id : instance.items) {
        owner_[id] = instance.parent;
        parent.items.push_back(id);
      }
      return;
    }
    const std::string name = add_function(
        model_, function_of(*work_, instance.items, io, instance.scope.type, options_.domain, model_.opsets),
        options_.add);
    const ir::NodeId last = instance.items.back();
    const std::size_t position = position_[last];
    const ir::NodeId call = replace_by_call(*work_, instance.items, io, name, options_.domain,
                                            instance.scope.path, work_->node(last).next);
    set_owner(call, instance.parent, position);
    instances_[instance.parent].items.push_back(call);
  }

  void drop_unused_initializers() {
    std::vector<ir::ValueId> kept;
    for (ir::ValueId v : work_->initializers()) {
      ir::Value& value = work_->value(v);
      if (!value.is_read() && !value.is_input) value.alive = false;
      else kept.push_back(v);
    }
    work_->set_initializer_order(std::move(kept));
  }

  const ir::Model& plain_;
  const FunctionExportOptions& options_;
  ir::Model model_;
  std::unique_ptr<ir::Graph> work_;
  std::vector<Instance> instances_;
  std::vector<std::size_t> owner_;     // working node -> instance holding it directly
  std::vector<std::size_t> position_;  // working node -> rank in the original order (calls: their last node's)
};

}  // namespace detail

// A copy of `plain` where every module instance is a call of a local function; `scopes(id)` gives the
// module scopes node `id` of plain.graph was created in (empty: top level).
inline ir::Model export_modules_as_functions(const ir::Model& plain, const ModuleStackOf& scopes,
                                             const FunctionExportOptions& options = {}) {
  return detail::ModuleExporter(plain, scopes, options).run();
}

// The model a builder holds, with the modules it recorded (g.module(path, type)) as local functions.
inline ir::Model export_modules_as_functions(const GraphBuilder& builder, const FunctionExportOptions& options = {}) {
  return export_modules_as_functions(
      builder.model(), [&](ir::NodeId id) -> const ModuleStack& { return builder.module_stack(id); }, options);
}

}  // namespace xexp::functions
