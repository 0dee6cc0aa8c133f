#pragma once
// Every converter, registered once. In compiled mode (core/config.hpp) only src/aten.cpp compiles them.
#include "xexp/aten/converter_table.hpp"
#include "xexp/core/config.hpp"
#if !defined(XEXP_COMPILED_LIB) || defined(XEXP_BUILD_ATEN)
#include "xexp/aten/creation.hpp"
#include "xexp/aten/elementwise.hpp"
#include "xexp/aten/nn.hpp"
#include "xexp/aten/shape_ops.hpp"
#endif

namespace xexp::aten {

XEXP_INLINE const ConverterTable& converter_table();

#if !defined(XEXP_COMPILED_LIB) || defined(XEXP_BUILD_ATEN)
XEXP_INLINE const ConverterTable& converter_table() {
  static const ConverterTable table = [] {
    ConverterTable t;
    add_elementwise_converters(t);
    add_shape_converters(t);
    add_nn_converters(t);
    add_creation_converters(t);
    return t;
  }();
  return table;
}
#endif

}  // namespace xexp::aten
