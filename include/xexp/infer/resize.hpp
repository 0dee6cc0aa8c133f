#pragma once
// Resize (and its opset 10 form): the output size of each resized axis is `sizes` when given, else
// floor(size * scale). From opset 18, `axes` names the resized axes and keep_aspect_ratio_policy
// (not_larger, not_smaller) turns `sizes` into one scale for all of them. The coordinate
// transformation and interpolation modes do not change the shape.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "xexp/infer/rule_table.hpp"

namespace xexp::infer {

// The elements of a constant float tensor (Resize's scales); nullopt when not constant.
inline std::optional<std::vector<float>> constant_floats(const Tensor* t) {
  if (!t || t->type() != ElemType::Float) return std::nullopt;
  auto d = t->data<float>();
  return std::vector<float>(d.begin(), d.end());
}

inline void infer_resize(InferContext& c) {
  const ElemType type = c.type(0);
  if (!c.shape(0)) return c.set_output(0, type);
  const Shape& in = *c.shape(0);
  const bool opset10 = c.opset() < 11;
  const std::size_t scales_input = opset10 ? 1 : 2, sizes_input = 3;
  std::vector<std::size_t> axes(in.size());
  std::iota(axes.begin(), axes.end(), std::size_t{0});
  if (auto given = c.opset() >= 18 ? c.attr_ints("axes") : std::nullopt) {
    axes.clear();
    for (int64_t a : *given) axes.push_back(c.normalize_axis(a, in.size()));
  }
  Shape out = in;
  auto unknown_axes = [&] {
    for (std::size_t a : axes) out[a] = Dim();
    c.set_output(0, type, out);
  };
  auto wrong_length = [&](const std::string& what, std::size_t n) {
    c.fail(what + " has " + std::to_string(n) + " values for " + std::to_string(axes.size()) + " axes",
           c.input_name(what == "sizes" ? sizes_input : scales_input));
  };
  // An empty tensor stands for an absent input.
  const bool sizes_given = !opset10 && c.has_input(sizes_input) && !(c.shape(sizes_input) && c.shape(sizes_input)->size() == 1 &&
                                                                      c.shape(sizes_input)->at(0) == Dim(0));
  if (sizes_given) {
    const std::optional<Shape> sizes = c.value_shape(sizes_input);
    if (!sizes) return unknown_axes();
    if (sizes->empty()) return c.set_output(0, type, in);
    if (sizes->size() != axes.size()) wrong_length("sizes", sizes->size());
    const std::string_view policy = c.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch" || c.opset() < 18) {
      for (std::size_t j = 0; j < axes.size(); ++j) {
        if (content_int((*sizes)[j]).value_or(0) < 0) c.fail("negative size " + (*sizes)[j].str(), c.input_name(sizes_input));
        out[axes[j]] = (*sizes)[j];
      }
      return c.set_output(0, type, out);
    }
    if (policy != "not_larger" && policy != "not_smaller") c.fail("unknown keep_aspect_ratio_policy " + std::string(policy));
    // One scale for every axis, the smallest (not_larger) or the largest (not_smaller) ratio.
    double scale = policy == "not_larger" ? HUGE_VAL : 0;
    for (std::size_t j = 0; j < axes.size(); ++j) {
      const std::optional<int64_t> size = content_int((*sizes)[j]);
      if (!size || !in[axes[j]].is_static()) return unknown_axes();
      const double ratio = static_cast<double>(*size) / static_cast<double>(in[axes[j]].value());
      scale = policy == "not_larger" ? std::min(scale, ratio) : std::max(scale, ratio);
    }
    for (std::size_t a : axes)
      out[a] = Dim(static_cast<int64_t>(std::floor(scale * static_cast<double>(in[a].value()) + 0.5)));
    return c.set_output(0, type, out);
  }
  if (!c.has_input(scales_input)) return c.set_output(0, type, in);
  const std::optional<std::vector<float>> scales = constant_floats(c.constant(scales_input));
  if (!scales) return unknown_axes();
  if (scales->empty()) return c.set_output(0, type, in);
  if (scales->size() != axes.size()) wrong_length("scales", scales->size());
  for (std::size_t j = 0; j < axes.size(); ++j) {
    const float scale = (*scales)[j];
    if (!(scale > 0)) c.fail("scale " + std::to_string(scale) + " is not positive", c.input_name(scales_input));
    const Dim& d = in[axes[j]];
    // The product in float, as ONNX computes it.
    out[axes[j]] = d.is_static() ? Dim(static_cast<int64_t>(std::floor(static_cast<float>(d.value()) * scale)))
                   : scale == 1.0f ? d
                                   : Dim();
  }
  c.set_output(0, type, out);
}

inline void add_resize_rules(RuleTable& t) { t.add({"Resize"}, infer_resize); }

}  // namespace xexp::infer
