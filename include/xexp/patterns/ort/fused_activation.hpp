#pragma once
// The activations ONNX Runtime's FusedConv and FusedGemm apply after their Conv or Gemm, read from the
// activation node a rule fuses, with the parameters each one takes (FusedConv's activation_params order:
// LeakyRelu's alpha; HardSigmoid's alpha, beta; Clip's min, max). ONNX Runtime 1.30's CPU kernels, float
// only, accept Relu, LeakyRelu, Clip, HardSigmoid, Sigmoid and Tanh after a Conv, the same but Clip after
// a Gemm.
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline constexpr rewrite::FixedString kFusedActivations = "Relu|LeakyRelu|Clip|HardSigmoid|Sigmoid|Tanh";

struct FusedActivation {
  std::string name;
  std::vector<float> params;
};

// The activation computed by the node producing `act`, or nullopt when a Clip bound is not a constant.
inline std::optional<FusedActivation> fused_activation(const ValueView& act) {
  const ir::Node& n = rewrite::node_of(act);
  FusedActivation out{n.op_type.str(), {}};
  auto attribute = [&](const char* name, float fallback) {
    const ir::Attribute* a = n.attribute(Symbol(name));
    return a ? a->f : fallback;
  };
  if (out.name == "LeakyRelu") {
    out.params = {attribute("alpha", 0.01f)};
  } else if (out.name == "HardSigmoid") {
    out.params = {attribute("alpha", 0.2f), attribute("beta", 0.5f)};
  } else if (out.name == "Clip") {
    // Bounds are attributes before opset 11, optional inputs since.
    out.params = {attribute("min", std::numeric_limits<float>::lowest()),
                  attribute("max", std::numeric_limits<float>::max())};
    for (std::size_t slot : {1u, 2u}) {
      const ir::ValueId bound = rewrite::input_of(act, slot);
      if (bound == ir::kNone) continue;
      const std::optional<double> value = scalar_constant(*act.graph, bound);
      if (!value) return std::nullopt;
      out.params[slot - 1] = static_cast<float>(*value);
    }
  }
  return out;
}

inline constexpr auto is_float32 =
    rewrite::fact<"is_float32">([](const ValueView& x) { return x.elem() == ElemType::Float; });
// The activation is one `fused_op` applies: any but Clip for FusedGemm; Clip with constant bounds.
inline constexpr auto is_fusable_activation =
    rewrite::fact<"is_fusable_activation">([](const ValueView& act, const std::string& fused_op) {
      const std::optional<FusedActivation> a = fused_activation(act);
      return a && !(fused_op == "FusedGemm" && a->name == "Clip");
    });

// The node `fused_op` (com.microsoft) in place of `base` and the activation `a` after it, if any: the
// attributes of `base` (a Conv's pads, strides, group, ... or a Gemm's alpha, beta, transA, transB, none
// with a default for all) and the activation's, as `fused_op` spells them. `sum`, when given, is
// FusedConv's fourth input Z, added to the Conv before the activation.
inline ir::ValueId fused_node(rewrite::Rewriter& r, const ValueView& base, const std::string& fused_op,
                              const std::optional<FusedActivation>& a, ir::ValueId sum = ir::kNone) {
  const ir::Node& node = rewrite::node_of(base);
  std::vector<ir::Attribute> attributes = node.attributes;
  std::vector<ir::ValueId> inputs = node.inputs;
  if (sum != ir::kNone) {
    inputs.resize(3, ir::kNone);
    inputs.push_back(sum);
  }
  if (a) {
    attributes.push_back(ir::Attribute::make_string(Symbol("activation"), a->name));
    if (fused_op == "FusedConv") {
      if (!a->params.empty())
        attributes.push_back(ir::Attribute::make_floats(Symbol("activation_params"), a->params));
    } else {
      if (!a->params.empty())
        attributes.push_back(ir::Attribute::make_float(Symbol("activation_alpha"), a->params[0]));
      if (a->params.size() > 1)
        attributes.push_back(ir::Attribute::make_float(Symbol("activation_beta"), a->params[1]));
    }
  }
  return r.node(Symbol(fused_op), inputs, std::move(attributes), Symbol("com.microsoft"));
}

// fused_node with the activation computed by the node producing `act`; nullopt when it cannot be read.
inline std::optional<ir::ValueId> fuse_activation(rewrite::Rewriter& r, const ValueView& act,
                                                  const ValueView& base, const std::string& fused_op,
                                                  ir::ValueId sum = ir::kNone) {
  const std::optional<FusedActivation> a = fused_activation(act);
  if (!a) return std::nullopt;
  return fused_node(r, base, fused_op, a, sum);
}

}  // namespace xexp::patterns
