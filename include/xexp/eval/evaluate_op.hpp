#pragma once
// evaluate_op: runs one operator on constant inputs. Used by constant folding, the rewrite DSL's
// fold(...) and the Evaluator. The default registry holds every kernel family.
#include <new>
#include <optional>
#include <stdexcept>
#include <vector>

#include "xexp/core/config.hpp"
#include "xexp/eval/kernel.hpp"
#include "xexp/eval/tensor_util.hpp"
// The kernels are the heaviest code of xexp to compile: in compiled mode (core/config.hpp) only
// src/kernels.cpp sees them.
#if !defined(XEXP_COMPILED_LIB) || defined(XEXP_BUILD_KERNELS)
#include "xexp/eval/kernels/cast.hpp"
#include "xexp/eval/kernels/contrib.hpp"
#include "xexp/eval/kernels/elementwise.hpp"
#include "xexp/eval/kernels/loss.hpp"
#include "xexp/eval/kernels/matmul.hpp"
#include "xexp/eval/kernels/nn.hpp"
#include "xexp/eval/kernels/reduce.hpp"
#include "xexp/eval/kernels/shape_ops.hpp"
#include "xexp/eval/kernels/value_ops.hpp"
#endif

namespace xexp::eval {

// Every kernel family, registered once.
XEXP_INLINE const KernelRegistry& default_registry();

#if !defined(XEXP_COMPILED_LIB) || defined(XEXP_BUILD_KERNELS)
XEXP_INLINE const KernelRegistry& default_registry() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    kernels::register_elementwise(r);
    kernels::register_reduce(r);
    kernels::register_shape_ops(r);
    kernels::register_value_ops(r);
    kernels::register_matmul(r);
    kernels::register_nn(r);
    kernels::register_cast(r);
    kernels::register_contrib(r);
    kernels::register_loss(r);
    return r;
  }();
  return registry;
}
#endif

inline bool is_supported_op(Symbol op_type, Symbol domain, const KernelRegistry& registry = default_registry()) {
  return registry.find(domain, op_type) != nullptr;
}

inline std::vector<Tensor> evaluate_op(Symbol op_type, Symbol domain, const std::vector<std::optional<Tensor>>& inputs,
                                       const std::vector<ir::Attribute>& attributes, int64_t opset, std::size_t n_outputs,
                                       const KernelRegistry& registry = default_registry()) {
  const KernelEntry* entry = registry.find(domain, op_type);
  if (!entry) throw Error("unsupported op " + (domain.empty() ? std::string() : domain.str() + ".") + op_type.str());
  // float16/bfloat16 inputs run as float; float outputs go back to the narrow type when the first
  // floating-point input has it (Pow(float, float16) gives float, Where(bool, float16, ...) float16)
  ElemType narrow = ElemType::Undefined;
  std::vector<std::optional<Tensor>> widened;
  const std::vector<std::optional<Tensor>>* args = &inputs;
  if (entry->widen_half) {
    bool widen = false;
    for (const auto& t : inputs)
      if (t && is_half(t->type())) widen = true;
    for (const auto& t : inputs)
      if (t && is_float(t->type())) {
        if (is_half(t->type())) narrow = t->type();
        break;
      }
    if (widen) {
      widened.reserve(inputs.size());
      for (const auto& t : inputs)
        widened.push_back(t && is_half(t->type()) ? std::optional<Tensor>(cast_tensor(*t, ElemType::Float)) : t);
      args = &widened;
    }
  }
  KernelContext context{op_type, domain, *args, attributes, opset, n_outputs};
  std::vector<Tensor> outputs;
  try {
    outputs = entry->kernel(context);
  } catch (const Error& e) {
    if (e.cause().rfind(op_type.str() + ":", 0) == 0) throw;
    throw Error(op_type.str() + ": " + e.cause());
  } catch (const std::bad_alloc&) {
    throw Error(op_type.str() + ": not enough memory for its result");
  } catch (const std::length_error&) {
    throw Error(op_type.str() + ": its result is larger than a vector may hold");
  }
  if (outputs.size() < n_outputs) throw Error(op_type.str() + ": the kernel computes " + std::to_string(outputs.size()) + " outputs, " + std::to_string(n_outputs) + " requested");
  outputs.resize(n_outputs);
  if (narrow != ElemType::Undefined)
    for (Tensor& t : outputs)
      if (t.type() == ElemType::Float) t = cast_tensor(t, narrow);
  return outputs;
}

}  // namespace xexp::eval
