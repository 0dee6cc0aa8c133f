#pragma once
// Deterministic random feeds for a graph's inputs: the same seed gives the same bytes on every machine.
// The generator is the library's (xexp/tools/inputs.hpp, also behind `xexp run --random`); these names
// are the ones the tests have always used.
#include "support/ort.hpp"
#include "xexp/tools/inputs.hpp"

namespace xexp::testing {

// seed, float_low/high, int_low/high, symbols (values of symbolic dimensions), default_dim.
using RandomFeedOptions = tools::RandomInputOptions;
using tools::random_feeds;
using tools::random_tensor;
using tools::SplitMix64;

}  // namespace xexp::testing
