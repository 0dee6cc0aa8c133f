#pragma once
// Facts the rules share, declared once with the name rules print (`.when(is_last_axis(axis, x))`), and
// the plain helpers behind them: element types, constants (integer lists such as shapes and axes,
// single numbers), shapes, and small computations on constants done with the evaluator's kernels so
// that every element type is handled as when the model runs. A fact only one rule family needs stays in
// its rule header, in the namespace of the family (patterns::reshape, ...; see docs/ARCHITECTURE.md).
// The facts are split by subject under patterns/facts/; this header includes them all.
#include "xexp/patterns/facts/constants.hpp"
#include "xexp/patterns/facts/nodes.hpp"
#include "xexp/patterns/facts/readers.hpp"
#include "xexp/patterns/facts/shapes.hpp"
#include "xexp/patterns/facts/types.hpp"
