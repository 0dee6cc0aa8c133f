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
// The activation of the node producing a value, kept by the rules: their conditions and their
// replacements read it.
inline constexpr auto activation_of = rewrite::fact<"activation_of">(fused_activation);
// The activation is one `fused_op` applies: any but Clip for FusedGemm; Clip with constant bounds.
inline constexpr auto is_fusable_activation = rewrite::fact<"is_fusable_activation">(
    [](const std::optional<FusedActivation>& a, const std::string& fused_op) {
      return a && !(fused_op == "FusedGemm" && a->name == "Clip");
    });

// The attributes of the fused node, as FusedConv (activation_params) and FusedGemm (activation_alpha,
// activation_beta) spell the activation's parameters; absent when it has none.
inline constexpr auto activation_name =
    rewrite::fact<"activation_name">([](const std::optional<FusedActivation>& a) { return a->name; });
inline constexpr auto activation_params = rewrite::fact<"activation_params">(
    [](const std::optional<FusedActivation>& a) -> std::optional<std::vector<float>> {
      if (a->params.empty()) return std::nullopt;
      return a->params;
    });
inline constexpr auto activation_alpha =
    rewrite::fact<"activation_alpha">([](const std::optional<FusedActivation>& a) -> std::optional<float> {
      if (a->params.empty()) return std::nullopt;
      return a->params[0];
    });
inline constexpr auto activation_beta =
    rewrite::fact<"activation_beta">([](const std::optional<FusedActivation>& a) -> std::optional<float> {
      if (a->params.size() < 2) return std::nullopt;
      return a->params[1];
    });

}  // namespace xexp::patterns
