#pragma once
// FusedConvAdd (onnxruntime set): a tensor of the Conv's output shape added to it, a residual, becomes
// FusedConv's fourth input Z: com.microsoft FusedConv(x, W, B, Z) computes Conv + Z, then its activation.
// An activation after the Add goes into the same node, as FusedConv does after a Conv. Z must not
// broadcast (ONNX Runtime's kernel adds it element by element), float only. ONNX Runtime's 'extended'
// level leaves these Adds (the residuals of paddle's MobileNet classifier).
#include <algorithm>
#include <string>

#include "xexp/patterns/ort/fused_activation.hpp"

namespace xexp::patterns {

namespace conv {
// The value's only reader is an activation FusedConv can take, at its first input: the condition of
// the rule's first case, so that the one-node form wins.
inline constexpr auto feeds_fusable_activation =
    rewrite::fact<"feeds_fusable_activation">([](const ValueView& v) {
      const std::vector<ir::Use>& uses = v.value().uses;
      if (uses.size() != 1 || uses[0].slot != 0 || v.value().is_graph_output()) return false;
      const ir::Node& reader = v.graph->node(uses[0].node);
      const std::vector<Symbol>& activations = rewrite::op_family<kFusedActivations>();
      return reader.domain.empty() && !reader.outputs.empty() &&
             std::find(activations.begin(), activations.end(), reader.op_type) != activations.end() &&
             is_fusable_activation.f(fused_activation(ValueView{v.graph, reader.outputs[0]}), "FusedConv");
    });
}  // namespace conv

inline rewrite::RulePtr fused_conv_add_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'w'> w;
  Opt<'b'> b;
  Var<'z'> z;
  auto conv = named<'c'>(Conv(x, w, b));
  auto sum = named<'s'>(commutative(Add(conv, z)));
  auto act = named<'a'>(op<kFusedActivations>(sum, etc));  // Clip's optional bounds
  auto fits = is_float32(x) && same_shape(conv, z);
  auto activation = keep<'A'>(activation_of(act));
  // rebuild_as: the fused node takes every attribute of the Conv (see FusedConv); z is its input Z.
  return rule("FusedConvAdd")
      .priority(3)
      .cases(match(act)
                 .when(fits && is_fusable_activation(activation, std::string("FusedConv")))
                 .to(rebuild_as<"FusedConv", "com.microsoft">(
                     conv, input<3> = z, attr<"activation"> = activation_name(activation),
                     attr<"activation_params"> = activation_params(activation))),
             match(sum)
                 .when(fits && !conv::feeds_fusable_activation(sum))
                 .to(rebuild_as<"FusedConv", "com.microsoft">(conv, input<3> = z)));
}

}  // namespace xexp::patterns
