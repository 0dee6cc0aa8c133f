#pragma once
// The core layer: element types, shapes, tensors, symbols, errors, checked integer arithmetic.
#include "xexp/core/checked_int.hpp"
#include "xexp/core/elem_type.hpp"
#include "xexp/core/element_cap.hpp"
#include "xexp/core/error.hpp"
#include "xexp/core/float16.hpp"
#include "xexp/core/shape.hpp"
#include "xexp/core/slice_range.hpp"
#include "xexp/core/string_hash.hpp"
#include "xexp/core/symbol.hpp"
#include "xexp/core/tensor.hpp"
