#pragma once
// The builder layer (include/xexp/builder/): GraphBuilder (make_tensor_input, make_initializer,
// make_node, g.op.<Op>(...), module scopes), the names it gives, its debug dump and the demo LLM built
// with it.
#include "xexp/builder/builder_names.hpp"
#include "xexp/builder/debug_dump.hpp"
#include "xexp/builder/graph_builder.hpp"
#include "xexp/builder/initializer_names.hpp"
#include "xexp/builder/module_scope.hpp"
#include "xexp/builder/op_args.hpp"
#include "xexp/builder/op_shortcuts.hpp"
#include "xexp/builder/taken_names.hpp"
#include "xexp/builder/demo_llm.hpp"
