#pragma once
// Everything xexp offers, one include. Each layer has its own umbrella header.
#include "xexp/core.hpp"
#include "xexp/ir.hpp"
#include "xexp/onnx.hpp"
#include "xexp/infer.hpp"
#include "xexp/eval.hpp"
#include "xexp/builder.hpp"
#include "xexp/rewrite.hpp"
#include "xexp/patterns.hpp"
#include "xexp/functions.hpp"
#include "xexp/aten.hpp"
#include "xexp/optimizer.hpp"
#include "xexp/tools.hpp"
