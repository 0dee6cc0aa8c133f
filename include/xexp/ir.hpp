#pragma once
// The IR layer: graphs, nodes, values, attributes, models and local functions.
#include "xexp/ir/attribute.hpp"
#include "xexp/ir/cleanup.hpp"
#include "xexp/ir/duplicates.hpp"
#include "xexp/ir/copy.hpp"
#include "xexp/ir/graph.hpp"
#include "xexp/ir/ids.hpp"
#include "xexp/ir/model.hpp"
