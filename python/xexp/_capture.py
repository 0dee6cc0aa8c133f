"""The Python half of xexp.to_onnx: captures a torch module as an aten-level FX graph and writes that graph
as an ONNX model in domain `aten`, which the C++ side lowers (include/xexp/aten/). Nothing here converts
an operator: every aten call becomes one node named after the aten op (`addmm`, `view`, ...), its
tensor arguments are the node's inputs, every other argument an attribute named as in the op's schema
(`dim`, `keepdim`, `alpha`; a Python number given for a tensor argument too, with that input left
empty), parameters and buffers are initializers under their state_dict names, and every value's dtype
and shape come from the trace. The module each call was traced in is written in the node's
metadata_props as torch's dynamo exporter writes it (`pkg.torch.onnx.name_scopes`,
`pkg.torch.onnx.class_hierarchy`), which the C++ side reads to make local functions. A tensor the forward
creates (torch.tensor(...)) is a node `constant` (no aten op has that name) holding it as attribute
`value`: initializers are the model's parameters and buffers only, which local functions take as inputs.

Symbolic sizes (dynamic_shapes): a dimension named dynamic is a dim_param of that name on the graph
inputs and wherever the trace gives a value exactly that size. A size the forward computes from it
(`x.shape[0]`, `b * t`) is a node too, in int64 scalars: `sym_size` (attribute `dim`) reads a
dimension of its input, `sym_add`, `sym_sub`, `sym_mul`, `sym_floordiv` compute from sizes (a Python
number as attribute `self` or `other`, as for the aten ops), `sym_list` gathers sizes and numbers into
a 1-D shape (attribute `values`, its inputs the sizes, empty where the number stands). An aten call
given such a size for a non-tensor argument takes it as an extra input after its tensors, named in its
attribute `dynamic_args` (`view` with `size` computed: inputs `self`, then the shape). A size that does
not depend on a dynamic dimension is written as the number it is.

The graph comes from `torch.export.export` (torch >= 2.2: `torch.export.Dim` and the graph signature's
input_specs), then run_decompositions(), module paths from its nn_module_stack. Without it, as on torch
1.13 (Debian 12's python3-torch), from make_fx over functionalize (which removes in-place ops), module
paths from forward hooks; with dynamic_shapes, make_fx(tracing_mode="symbolic"), within what 1.13's
symbolic tracing can do (see _make_fx)."""

import contextlib
import inspect
import operator
import re

import onnx
import onnx.numpy_helper
import torch
import torch.fx

from ._xexp import Error

ATEN_DOMAIN = "aten"
NAME_SCOPES_KEY = "pkg.torch.onnx.name_scopes"
CLASS_HIERARCHY_KEY = "pkg.torch.onnx.class_hierarchy"

DTYPES = {torch.float32: onnx.TensorProto.FLOAT, torch.float64: onnx.TensorProto.DOUBLE,
          torch.float16: onnx.TensorProto.FLOAT16, torch.bfloat16: onnx.TensorProto.BFLOAT16,
          torch.int64: onnx.TensorProto.INT64, torch.int32: onnx.TensorProto.INT32,
          torch.int16: onnx.TensorProto.INT16, torch.int8: onnx.TensorProto.INT8,
          torch.uint8: onnx.TensorProto.UINT8, torch.bool: onnx.TensorProto.BOOL}

# Python's operators on symbolic sizes, as the graph holds them, and the node each becomes.
SIZE_OPERATORS = {operator.add: "sym_add", operator.sub: "sym_sub", operator.mul: "sym_mul",
                  operator.floordiv: "sym_floordiv"}


def _onnx_type(dtype, where):
    if dtype not in DTYPES:
        raise Error(f"{where}: dtype {dtype} has no ONNX counterpart xexp.to_onnx handles")
    return DTYPES[dtype]


def _qualified_class(module):
    cls = module if isinstance(module, type) else type(module)
    return f"{cls.__module__}.{cls.__qualname__}"


def _has_torch_export():
    """torch.export as torch >= 2.2 has it: dynamic shapes by Dim, the graph signature's input_specs."""
    export = getattr(torch, "export", None)
    return export is not None and hasattr(export, "export") and hasattr(export, "Dim")


class _Traced:
    """What a capture hands to the writer: an FX graph of aten calls and how to read it."""

    def __init__(self, graph, owner, placeholders, outputs, module_stack, sizes):
        self.graph = graph                # torch.fx.Graph
        self.owner = owner                # the module get_attr nodes read
        self.placeholders = placeholders  # {placeholder node: (name, weight tensor or None for an input)}
        self.outputs = outputs            # the model's outputs: FX nodes (or Python constants)
        self.module_stack = module_stack  # node -> ((path, qualified class), ...), outermost first
        self.sizes = sizes                # _Sizes


def _sym_expr(size):
    """The sympy expression of a symbolic size (torch 2's SymInt, 1.13's SymIntNode or PySymInt)."""
    node = getattr(size, "node", None)
    if node is not None and hasattr(node, "expr"):
        return node.expr
    if hasattr(size, "get_pyobj"):
        return size.get_pyobj().expr
    return size.expr


class _Sizes:
    """Reads the trace's sizes: a number, or an expression over the symbols of the dynamic dimensions."""

    def __init__(self, names, sources=None, replacements=None):
        self.names = names                      # sympy symbol -> dimension name (the dynamic ones)
        self.sources = sources or {}            # sympy symbol -> (input name, dimension) that gives it
        self.replacements = replacements or {}  # sympy symbol -> the expression the trace found it equal to

    def resolve(self, size):
        """An int, or the sympy expression of `size` over the dynamic symbols."""
        return int(size) if isinstance(size, (int, bool)) else self.resolve_expr(_sym_expr(size))

    def resolve_expr(self, expr):
        for _ in range(len(self.replacements) + 1):  # replacements may refer to replaced symbols
            replaced = expr.xreplace(self.replacements)
            if replaced == expr:
                break
            expr = replaced
        return int(expr) if expr.is_number else expr

    def dim(self, size):
        """What value_info holds for a dimension: its size, a dynamic dimension's name, or None (a size
        computed from them, which the lowering infers)."""
        resolved = self.resolve(size)
        return resolved if isinstance(resolved, int) else self.names.get(resolved)


def _dynamic_dims(dynamic_shapes, bound, named_inputs):
    """{flat input name: {dimension: name}} from to_onnx's dynamic_shapes: a dict by the forward's
    argument names or a sequence by position, each entry None, {dim: name} for a tensor (a name is a str
    or a torch.export.Dim) or a sequence of those for a list of tensors."""
    if not dynamic_shapes:
        return {}
    tensor_args = [name for name, value in bound.arguments.items() if isinstance(value, torch.Tensor) or (
        isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value))]
    if isinstance(dynamic_shapes, dict):
        unknown = set(dynamic_shapes) - set(bound.arguments)
        if unknown:
            raise Error(f"dynamic_shapes names {sorted(unknown)}, which are not arguments given to the forward")
        by_arg = dynamic_shapes
    elif isinstance(dynamic_shapes, (list, tuple)):
        if len(dynamic_shapes) > len(tensor_args):
            raise Error(f"dynamic_shapes has {len(dynamic_shapes)} entries for {len(tensor_args)} tensor arguments")
        by_arg = dict(zip(tensor_args, dynamic_shapes))
    else:
        raise Error(f"dynamic_shapes is a dict by argument name or a sequence, not {type(dynamic_shapes).__name__}")
    shapes = {name: tensor for name, tensor in named_inputs}
    dynamic = {}

    def add(flat_name, spec):
        if spec is None:
            return
        if not isinstance(spec, dict) or flat_name not in shapes:
            raise Error(f"dynamic_shapes['{flat_name}'] must be {{dimension: name}} for a tensor argument")
        rank = shapes[flat_name].dim()
        dims = {}
        for dim, name in spec.items():
            if not isinstance(dim, int) or not -rank <= dim < rank:
                raise Error(f"dynamic_shapes['{flat_name}']: {dim!r} is not a dimension of a rank-{rank} tensor")
            name = getattr(name, "__name__", name)  # a torch.export.Dim
            if not isinstance(name, str) or not name.isidentifier():
                raise Error(f"dynamic_shapes['{flat_name}'][{dim}]: the name {name!r} is not an identifier")
            dims[dim % rank] = name
        dynamic[flat_name] = dims

    for arg, spec in by_arg.items():
        value = bound.arguments[arg]
        if isinstance(value, (list, tuple)) and spec is not None:
            if not isinstance(spec, (list, tuple)) or len(spec) != len(value):
                raise Error(f"dynamic_shapes['{arg}'] must hold one entry per tensor of the list")
            for k, item in enumerate(spec):
                add(f"{arg}_{k}", item)
        else:
            add(arg, spec)
    return dynamic


def _pop_hook(stack):
    def hook(module, args, output):
        stack.pop()  # returns None: the hook must not replace the module's output

    return hook


@contextlib.contextmanager
def _module_stacks(model):
    """While active, every FX node created gets meta['xexp_module_stack']: the (path, class) of the
    submodules whose forward is running, outermost first (the root module excluded)."""
    stack = []
    handles = []
    for path, module in model.named_modules():
        if not path:
            continue
        entry = (path, _qualified_class(module))
        handles.append(module.register_forward_pre_hook(lambda m, a, entry=entry: stack.append(entry)))
        handles.append(module.register_forward_hook(_pop_hook(stack)))
    create_node = torch.fx.Graph.create_node

    def create_node_with_stack(self, *args, **kwargs):
        node = create_node(self, *args, **kwargs)
        node.meta["xexp_module_stack"] = tuple(stack)
        return node

    torch.fx.Graph.create_node = create_node_with_stack
    try:
        yield
    finally:
        torch.fx.Graph.create_node = create_node
        for h in handles:
            h.remove()


def _flat_inputs(model, args, kwargs):
    """[(name, tensor)] of the forward's tensor arguments, named after its parameters."""
    bound = inspect.signature(model.forward).bind(*args, **kwargs)
    named = []
    for name, value in bound.arguments.items():
        if isinstance(value, torch.Tensor):
            named.append((name, value))
        elif isinstance(value, (list, tuple)) and all(isinstance(v, torch.Tensor) for v in value):
            named.extend((f"{name}_{k}", v) for k, v in enumerate(value))
        elif value is not None and not isinstance(value, (bool, int, float, str)):
            raise Error(f"argument '{name}' of type {type(value).__name__} is not supported by xexp.to_onnx "
                        "(tensors, lists of tensors and Python constants are)")
    return named, bound


# ---- torch >= 2.2: torch.export ------------------------------------------------------------------------

def _export_module_stack(node):
    """torch.export's nn_module_stack ({key: (path, class or its name)}, the root first on some versions;
    paths as `layers.0` or as dynamo's `L['self'].layers[0]`) as the capture's module stack."""
    stack = []
    for path, cls in (node.meta.get("nn_module_stack") or {}).values():
        path = re.sub(r"\[(\d+)\]", r".\1", re.sub(r"^L\['self'\]\.?", "", path)).strip(".")
        if path:
            stack.append((path, cls if isinstance(cls, str) else _qualified_class(cls)))
    return tuple(stack)


def _export(model, bound, named_inputs, dynamic):
    """The aten graph of torch.export.export(...).run_decompositions(), its dynamic dimensions named."""
    from torch.export import Dim, export
    from torch.export.graph_signature import InputKind, OutputKind, TensorArgument

    dims = {}

    def spec_of(flat_name):
        declared = dynamic.get(flat_name)
        return {d: dims.setdefault(n, Dim(n)) for d, n in declared.items()} if declared else None

    spec = {}
    for arg, value in bound.arguments.items():
        if isinstance(value, torch.Tensor):
            spec[arg] = spec_of(arg)
        elif isinstance(value, (list, tuple)) and all(isinstance(v, torch.Tensor) for v in value):
            spec[arg] = type(value)(spec_of(f"{arg}_{k}") for k in range(len(value)))
        else:
            spec[arg] = None
    try:
        # Arguments passed as the signature binds them, so that the user inputs come in named_inputs' order.
        program = export(model, tuple(bound.args), dict(bound.kwargs), dynamic_shapes=spec if dims else None)
        program = program.run_decompositions()
    except Exception as e:  # data-dependent control flow, a dynamic dimension the model makes static, ...
        raise Error(f"torch.export could not export the model: {type(e).__name__}: {e}") from None

    nodes = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    # Lifted tensor constants and non-persistent buffers: `constants` (torch >= 2.3), `tensor_constants` (2.2).
    constants = getattr(program, "constants", None) or getattr(program, "tensor_constants", None) or {}
    placeholders = {}
    user_inputs = iter(named_inputs)
    for input_spec in program.graph_signature.input_specs:
        node = nodes.get(getattr(input_spec.arg, "name", None))
        if not isinstance(input_spec.arg, TensorArgument):
            if node is not None and node.users:  # an int argument torch.export kept symbolic
                raise Error(f"input '{node.name}' is not a tensor and the exported graph reads it")
        elif input_spec.kind == InputKind.USER_INPUT:
            placeholders[node] = (next(user_inputs)[0], None)
        elif input_spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            tensor = program.state_dict.get(input_spec.target)
            placeholders[node] = (input_spec.target, tensor if tensor is not None else constants[input_spec.target])
        else:
            raise Error(f"input '{node.name}' of kind {input_spec.kind.name} is not supported by xexp.to_onnx")

    output_node = next(n for n in program.graph.nodes if n.op == "output")
    results = torch.utils._pytree.tree_flatten(output_node.args[0])[0]
    outputs = []
    for output_spec, result in zip(program.graph_signature.output_specs, results):
        if output_spec.kind != OutputKind.USER_OUTPUT:
            raise Error(f"the exported program has an output of kind {output_spec.kind.name} "
                        f"({output_spec.target}): the forward updates a buffer or input in place")
        outputs.append(result)

    names, sources = {}, {}
    for node, (name, weight) in placeholders.items():
        for d, dim_name in dynamic.get(name, {}).items() if weight is None else ():
            size = node.meta["val"].shape[d]
            if isinstance(size, int):
                raise Error(f"torch.export made dynamic dimension '{dim_name}' (dimension {d} of '{name}') static: "
                            f"{size}")
            names[_sym_expr(size)] = dim_name
            sources.setdefault(_sym_expr(size), (name, d))
    return _Traced(program.graph, program.graph_module, placeholders, outputs, _export_module_stack,
                   _Sizes(names, sources))


# ---- torch 1.13: make_fx -------------------------------------------------------------------------------

def _lift_weights(model, bound, named_inputs):
    """(forward(*weights, *inputs) calling the model, weight names, weights by name)."""
    from torch.nn.utils import stateless

    weights = dict(model.named_parameters())
    weights.update(model.named_buffers())
    weight_names = list(weights)
    input_names = [name for name, _ in named_inputs]
    rnns = [m for m in model.modules() if isinstance(m, torch.nn.RNNBase)]

    def forward(*flat):
        values = dict(zip(weight_names, flat[:len(weight_names)]))
        inputs = dict(zip(input_names, flat[len(weight_names):]))
        call_args = {}
        for name, value in bound.arguments.items():
            if isinstance(value, torch.Tensor):
                value = inputs[name]
            elif isinstance(value, (list, tuple)) and all(isinstance(v, torch.Tensor) for v in value):
                value = type(value)(inputs[f"{name}_{k}"] for k in range(len(value)))
            call_args[name] = value
        bound_call = inspect.BoundArguments(bound.signature, call_args)
        # An RNN reads its weights from a list (_flat_weights) functional_call does not swap.
        handles = [m.register_forward_pre_hook(_read_flat_weights) for m in rnns]
        saved = [m._flat_weights for m in rnns]
        try:
            return stateless.functional_call(model, values, bound_call.args, bound_call.kwargs)
        finally:
            for m, flat_weights, handle in zip(rnns, saved, handles):
                handle.remove()
                m._flat_weights = flat_weights

    return forward, weight_names, weights


def _read_flat_weights(rnn, args):
    rnn._flat_weights = [getattr(rnn, name) for name in rnn._flat_weights_names]


def _linear(x, weight, bias=None):
    y = torch.matmul(x, weight.t())
    return y if bias is None else y + bias


def _constant_size(size):
    """A size as an int, or None when it depends on a dynamic dimension. torch 1.13 gives the tensors
    its symbolic tracing computes symbolic sizes throughout, the static ones as constant expressions."""
    if isinstance(size, int):
        return size
    expr = _sym_expr(size)
    return int(expr) if expr.is_number else None


def _static_size(x, dim, what):
    size = _constant_size(x.shape[dim])
    if size is None:
        raise RuntimeError(f"{what} of a symbolic dimension ({x.shape[dim]})")
    return size


def _split(x, split_size, dim=0):
    size = _static_size(x, dim, "split")
    return [torch.ops.aten.slice(x, dim, s, min(s + split_size, size)) for s in range(0, size, split_size)]


def _chunk(x, chunks, dim=0):
    return _split(x, -(-_static_size(x, dim, "chunk") // chunks), dim)


def _unbind(x, dim=0):
    aten = torch.ops.aten  # select has no symbolic kernel in torch 1.13: slices of one, squeezed
    return [aten.squeeze(aten.slice(x, dim, k, k + 1), dim) for k in range(_static_size(x, dim, "unbind"))]


def _getitem(tensor, index):
    """Tensor.__getitem__ as aten calls (unsqueeze for None, select for a number, slice, one index call
    for the tensors), as torch's C++ indexing applies them."""
    index = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in index):
        raise RuntimeError("indexing by a boolean mask (a data-dependent shape)")
    ellipsis = [k for k, i in enumerate(index) if i is Ellipsis]
    if ellipsis:
        fill = tensor.dim() - sum(1 for i in index if i is not None and i is not Ellipsis)
        index = index[:ellipsis[0]] + (slice(None),) * fill + index[ellipsis[0] + 1:]
    aten, dim, tensors = torch.ops.aten, 0, {}
    for i in index:
        if i is None:
            tensor = aten.unsqueeze(tensor, dim)
            dim += 1
        elif isinstance(i, slice):
            if any(b is not None for b in (i.start, i.stop, i.step)):  # not ==: a bound may be a symbolic size
                # To the end is the size, which the slice's clamping compares with the size (not torch's
                # sentinel 2**63-1, a comparison no size decides).
                stop = tensor.shape[dim] if i.stop is None else i.stop
                tensor = aten.slice(tensor, dim, 0 if i.start is None else i.start, stop, 1 if i.step is None else i.step)
            dim += 1
        elif isinstance(i, torch.Tensor):
            tensors[dim] = i
            dim += 1
        elif isinstance(i, int):  # as _unbind does
            tensor = aten.squeeze(aten.slice(tensor, dim, i, i + 1 if i != -1 else tensor.shape[dim]), dim)
        else:
            tensor = aten.select(tensor, dim, i)
    return aten.index(tensor, [tensors.get(d) for d in range(max(tensors) + 1)]) if tensors else tensor


def _group_norm(x, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    aten = torch.ops.aten  # native_group_norm has a symbolic decomposition, group_norm's C++ reads sizes
    spatial = 1
    for size in x.shape[2:]:
        spatial = spatial * size
    return aten.native_group_norm(x, weight, bias, x.shape[0], x.shape[1], spatial, num_groups, eps)[0]


def _lstm(x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """aten::lstm unrolled over its steps into the cells' arithmetic, as its C++ kernel runs it."""
    per_layer = 4 if has_biases else 2
    if bidirectional or (train and dropout) or len(params) != num_layers * per_layer:
        raise RuntimeError("a bidirectional LSTM, one with projections or with dropout in training")
    steps = x.shape[1 if batch_first else 0]
    if _constant_size(steps) is None:
        raise Error(f"the LSTM's sequence dimension cannot be dynamic with torch {torch.__version__}: its symbolic "
                    "tracing unrolls the LSTM over the traced steps (torch >= 2.2's torch.export keeps one op)")
    x = _unbind(x, 1 if batch_first else 0)
    hs, cs = [], []
    for layer, (h, c) in enumerate(zip(_unbind(hx[0]), _unbind(hx[1]))):
        w_ih, w_hh, *biases = params[layer * per_layer:(layer + 1) * per_layer]
        outputs = []
        for step in x:
            gates = torch.matmul(step, w_ih.t()) + torch.matmul(h, w_hh.t())
            for b in biases:
                gates = gates + b
            i, f, g, o = _chunk(gates, 4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(h)
        x = outputs
        hs.append(h)
        cs.append(c)
    return torch.stack(x, 1 if batch_first else 0), torch.stack(hs), torch.stack(cs)


def _baddbmm_meta(self, batch1, batch2, *, beta=1, alpha=1):
    return batch1.new_empty((batch1.shape[0], batch1.shape[1], batch2.shape[2]))


def _float_of_size(size):
    """float() of a symbolic size (math.sqrt of a head size, say): its number when it is constant."""
    number = _constant_size(size)
    if number is None:
        raise TypeError(f"float() of a size computed from a dynamic dimension ({size})")
    return float(number)


def _integer_arange(arange):
    """torch.arange for torch 1.13's symbolic tracing, which types an arange to a symbolic size float32:
    int64, as for ints, when no dtype is given and every bound is an int or a size."""
    def arange_of_sizes(*args, **kwargs):
        if kwargs.get("dtype") is None and all(isinstance(a, int) or type(a).__name__ in ("SymIntNode", "SymInt")
                                               for a in args):
            kwargs["dtype"] = torch.int64
        return arange(*args, **kwargs)

    return arange_of_sizes


@contextlib.contextmanager
def _symbolic_kernels():
    """Python kernels for what torch 1.13 runs in C++ reading concrete sizes, which its symbolic tracing
    then runs instead: linear, split, chunk, unbind, group_norm and lstm (which make_fx decomposes first;
    torch's own Python kernels stay), and Tensor.__getitem__; baddbmm's missing symbolic meta function
    (nn.MultiheadAttention's masked scores); float() of a constant symbolic size; torch.arange's dtype."""
    from torch._meta_registrations import meta_table

    aten, key = torch.ops.aten, torch._C.DispatchKey.CompositeImplicitAutograd
    added = []
    for op, kernel in ((aten.linear.default, _linear), (aten.split.Tensor, _split), (aten.chunk.default, _chunk),
                       (aten.unbind.int, _unbind), (aten.group_norm.default, _group_norm),
                       (aten.lstm.input, _lstm)):
        if key not in op.py_kernels:
            op.py_kernels[key] = kernel
            added.append(op)
    added_meta = aten.baddbmm.default not in meta_table
    if added_meta:
        meta_table[aten.baddbmm.default] = _baddbmm_meta
    size_class = getattr(torch, "SymIntNode", None)  # torch 1.13's symbolic size, which lacks __float__
    added_float = size_class is not None and not hasattr(size_class, "__float__")
    if added_float:
        size_class.__float__ = _float_of_size
    getitem, arange = torch.Tensor.__getitem__, torch.arange
    torch.Tensor.__getitem__, torch.arange = _getitem, _integer_arange(arange)
    try:
        yield
    finally:
        torch.Tensor.__getitem__, torch.arange = getitem, arange
        if added_float:
            del size_class.__float__
        for op in added:
            del op.py_kernels[key]
        if added_meta:
            del meta_table[aten.baddbmm.default]


@contextlib.contextmanager
def _symbolic_dims(declared):
    """torch 1.13's make_fx(tracing_mode="symbolic") gives every size of every input but the parameters a
    symbol, the same one to equal sizes (duck sizing): a static size would then be computed in the graph,
    or tied to a dynamic one of the same traced size. While active, only the dimensions `declared`
    ({id(tensor): dimensions}) of the tensors make_fx converts get one."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental import proxy_tensor

    converting = [()]  # the declared dimensions of the tensor being converted, innermost last
    from_tensor, base = FakeTensorMode.from_tensor, proxy_tensor.ShapeEnv

    def from_declared_tensor(self, tensor, *args, **kwargs):
        converting.append(declared.get(id(tensor), ()))
        try:
            return from_tensor(self, tensor, *args, **kwargs)
        finally:
            converting.pop()

    class ShapeEnv(base):
        def create_symint(self, name, val):
            match = re.fullmatch(r"t\d+\.size\((\d+)\)", name)  # MetaConverter's names
            if match:
                return super().create_symint(name, val) if int(match[1]) in converting[-1] else val
            # A stride or offset: a symbol of its own, which the trace's contiguity guards relate to the
            # sizes (one shared with a size of the same value would fix that size).
            shared = self.val_to_symint.pop(val, None)
            try:
                return super().create_symint(name, val)
            finally:
                if shared is None:
                    self.val_to_symint.pop(val, None)
                else:
                    self.val_to_symint[val] = shared

    FakeTensorMode.from_tensor, proxy_tensor.ShapeEnv = from_declared_tensor, ShapeEnv
    try:
        yield
    finally:
        FakeTensorMode.from_tensor, proxy_tensor.ShapeEnv = from_tensor, base


def _symbolic_sizes(graph_module, placeholders, dynamic):
    """The _Sizes of a make_fx(tracing_mode="symbolic") trace. torch 1.13 gives sizes 0 and 1 no symbol,
    and a guard the trace records (x.shape[0] == 8) may fix a symbol: a dynamic dimension so traced would
    export a graph bound to the traced size, and is refused."""
    import sympy  # torch 1.13's symbolic shapes need it

    env = graph_module.shape_env
    names, places, sources = {}, {}, {}
    for node, (name, weight) in placeholders.items():
        for d, dim_name in (dynamic.get(name, {}).items() if weight is None else ()):
            size, where = node.meta["val"].shape[d], f"dimension {d} of '{name}'"
            if isinstance(size, int):
                raise Error(f"dynamic dimension '{dim_name}' ({where}) was traced at size {size}, which torch "
                            f"{torch.__version__} makes static: trace with a size of at least 2 there")
            symbol = _sym_expr(size)
            if names.get(symbol, dim_name) != dim_name:
                raise Error(f"dynamic dimensions '{names[symbol]}' and '{dim_name}' were traced at the same size, which "
                            f"torch {torch.__version__} gives one symbol: trace them with different sizes")
            names[symbol], places[symbol] = dim_name, where
            sources.setdefault(symbol, (name, d))
    sizes = _Sizes(names, sources, dict(env.replacements))
    for symbol, dim_name in names.items():
        fixed = sizes.resolve_expr(symbol)
        if isinstance(fixed, int):
            raise Error(f"the trace fixed dynamic dimension '{dim_name}' ({places[symbol]}) at {fixed}: the model only "
                        "works at that size there")
    # A comparison the trace made on dynamic sizes (x.shape[0] == 4 being False) holds the graph to one
    # side of it. A guard on a size alone is its test for zero (torch's own checks), which sizes pass, one
    # that a size is not 0 or 1 (broadcasting, contiguity) is what torch.export assumes of a dynamic
    # dimension too, and one made computing a view's strides (as_strided's meta kernel, on the stack the
    # guard records) decides nothing an ONNX graph, without strides, holds. Nor does one made clamping a
    # slice's bounds to the size (slice_forward, x[:t] of a fixed-size buffer): ONNX's Slice clamps them
    # the same way at any size.
    for guard, value, stack in env.guards:
        if "as_strided" in stack or "slice_forward" in stack:
            continue
        condition = sizes.resolve_expr(guard)
        compares = getattr(condition, "is_Relational", False) or isinstance(condition, sympy.logic.boolalg.BooleanFunction)
        not_0_or_1 = isinstance(condition, (sympy.Eq, sympy.Ne)) and bool(value) == isinstance(condition, sympy.Ne) \
            and {condition.lhs, condition.rhs} & {0, 1}
        if compares and not not_0_or_1 and condition.free_symbols & set(names):
            readable = condition.xreplace({s: sympy.Symbol(n) for s, n in names.items()})
            raise Error(f"the trace compared dynamic sizes, {readable} being {value} at the traced size: the exported "
                        "graph would only hold where it still is")
    return sizes


def _make_fx(model, bound, named_inputs, dynamic):
    """The aten graph of make_fx: over functionalize, or with dynamic dimensions, symbolic (torch 1.13's
    functionalize runs composite ops in C++, which symbolic sizes fail; in-place ops stay, see _Writer)."""
    from functorch import functionalize
    from torch.fx.experimental.proxy_tensor import make_fx

    forward, weight_names, weights = _lift_weights(model, bound, named_inputs)
    flat = [weights[n] for n in weight_names] + [t for _, t in named_inputs]
    symbolic = bool(dynamic)
    declared = {id(tensor): set(dynamic[name]) for name, tensor in named_inputs if name in dynamic}
    with contextlib.ExitStack() as context:
        context.enter_context(torch.no_grad())
        context.enter_context(_module_stacks(model))
        if symbolic:
            context.enter_context(_symbolic_dims(declared))
            context.enter_context(_symbolic_kernels())
        try:
            if symbolic:
                graph_module = make_fx(forward, tracing_mode="symbolic")(*flat)
            else:
                graph_module = make_fx(functionalize(forward, remove="mutations"))(*flat)
        except Error:
            raise
        except Exception as e:  # data-dependent control flow, an op the tracer cannot run
            cause = f"{type(e).__name__}: {e}"
            if symbolic:
                raise Error(f"torch {torch.__version__} could not trace the model with symbolic sizes (dynamic_shapes): "
                            f"{cause}. Its symbolic tracing is partial (the height and width through a stack of "
                            "convolutions and poolings fail, say): export without dynamic_shapes, or with torch >= "
                            "2.2 (torch.export)") from None
            raise Error(f"torch could not trace the model: {cause}") from None
    names = weight_names + [name for name, _ in named_inputs]
    placeholders = {node: (name, weights.get(name) if k < len(weight_names) else None) for k, (node, name) in
                    enumerate(zip((n for n in graph_module.graph.nodes if n.op == "placeholder"), names))}
    output = next(n for n in graph_module.graph.nodes if n.op == "output")
    outputs = torch.utils._pytree.tree_flatten(output.args[0])[0]
    sizes = _symbolic_sizes(graph_module, placeholders, dynamic) if symbolic else _Sizes({})
    return _Traced(graph_module.graph, graph_module, placeholders, outputs,
                   lambda node: node.meta.get("xexp_module_stack", ()), sizes)


# ---- the aten-domain ONNX graph ------------------------------------------------------------------------

def _varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _add_metadata(node, key, value):
    """NodeProto.metadata_props (field 9, ONNX >= 1.16) written as raw bytes: Debian's onnx 1.12 does not
    know the field, its protobuf keeps it as an unknown field."""
    entry = onnx.StringStringEntryProto(key=key, value=value).SerializeToString()
    node.MergeFromString(b"\x4a" + _varint(len(entry)) + entry)


def _python_list(items):
    return "[" + ", ".join(repr(i) for i in items) + "]"


def _tensor_meta(node):
    """The traced tensor of an FX node (dtype and shape), or None."""
    value = node.meta.get("val")
    if isinstance(value, torch.Tensor):
        return value
    meta = node.meta.get("tensor_meta")
    return meta if meta is not None and hasattr(meta, "dtype") else None


def _op_name(target):
    """`addmm` for aten.addmm.default, `sym_size` for 1.13's packet aten.sym_size."""
    schema = getattr(target, "_schema", None)
    name = schema.name if schema is not None else getattr(target, "_qualified_op_name", str(target))
    return name.split("::")[-1]


def _is_size_node(node):
    return node.op == "call_function" and (node.target in SIZE_OPERATORS or (
        isinstance(node.target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)) and
        _op_name(node.target) == "sym_size"))


def _is_symbolic_number(value):
    """A SymInt, SymFloat or SymBool the trace computed (not a tensor, not a Python number)."""
    return value is not None and not isinstance(value, (torch.Tensor, int, float, bool, list, tuple))


def _holds_node(value):
    return isinstance(value, torch.fx.Node) or (isinstance(value, (list, tuple)) and
                                                any(isinstance(v, torch.fx.Node) for v in value))


class _Writer:
    def __init__(self, root_class, traced):
        self.root_class = root_class
        self.traced = traced
        self.sizes = traced.sizes
        self.nodes = []
        self.initializers = []
        self.value_info = []
        self.names = {}  # FX node -> ONNX value name
        self.size_values = {}  # FX node of a size that does not depend on a dynamic dimension -> the size
        self.size_names = {}  # a size's expression or a shape's (names, numbers) -> its value's name
        self.order = {node: k for k, node in enumerate(traced.graph.nodes)}
        self.unsupported = []

    def value_info_of(self, name, meta, where):
        if meta is None:
            return None
        return onnx.helper.make_tensor_value_info(name, _onnx_type(meta.dtype, where),
                                                  [self.sizes.dim(d) for d in meta.shape])

    def add_value_info(self, name, meta, node):
        info = self.value_info_of(name, meta, f"node '{node.name}'")
        if info is not None:
            self.value_info.append(info)

    def attribute(self, name, value, where):
        if isinstance(value, bool):
            return onnx.helper.make_attribute(name, int(value))
        if isinstance(value, (int, float, str)):
            return onnx.helper.make_attribute(name, value)
        if isinstance(value, torch.dtype):
            return onnx.helper.make_attribute(name, _onnx_type(value, where))
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, bool)) for v in value):
            return onnx.helper.make_attribute(name, [int(v) for v in value])
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, float)) for v in value):
            return onnx.helper.make_attribute(name, [float(v) for v in value])
        if isinstance(value, (list, tuple)) and not value:
            return onnx.AttributeProto(name=name, type=onnx.AttributeProto.INTS)
        if isinstance(value, (torch.device, torch.layout, torch.memory_format)):
            return None  # nothing an ONNX graph keeps
        self.unsupported.append(f"{where}: argument '{name}' = {value!r} ({type(value).__name__})")
        return None

    def emit(self, op, inputs, outputs, name, node, attributes=()):
        onnx_node = onnx.helper.make_node(op, inputs, outputs, name=name, domain=ATEN_DOMAIN)
        onnx_node.attribute.extend(a for a in attributes if a is not None)
        stack = self.traced.module_stack(node)
        if stack:
            _add_metadata(onnx_node, NAME_SCOPES_KEY, _python_list([""] + [p for p, _ in stack] + [node.name]))
            _add_metadata(onnx_node, CLASS_HIERARCHY_KEY, _python_list(
                [self.root_class] + [c for _, c in stack] + [str(node.target)]))
        self.nodes.append(onnx_node)

    def add_int64(self, name, dims):
        self.value_info.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.INT64, dims))

    # ---- sizes -----------------------------------------------------------------------------------------
    def size(self, node):
        """A size node: recorded as its number when no dynamic dimension enters it, else a node computing
        it as an int64 scalar."""
        resolved = self.sizes.resolve(node.meta["val"])
        if isinstance(resolved, int):
            self.size_values[node] = resolved
            return
        # One node per size: the trace reads a size again from every tensor that has it, which would
        # leave a Shape of each of those tensors in the graph (no optimizer can tell they are equal).
        if resolved in self.size_names:
            self.names[node] = self.size_names[resolved]
            return
        where = f"node '{node.name}'"
        if resolved in self.sizes.sources:  # a dynamic dimension: read from the input that declared it
            source, dim = self.sizes.sources[resolved]
            op, inputs, attributes = "sym_size", [source], [self.attribute("dim", dim, where)]
        elif node.target in SIZE_OPERATORS:
            op, inputs, attributes = SIZE_OPERATORS[node.target], [], []
            for arg_name, value in zip(("self", "other"), node.args):
                value = self.size_values.get(value, value)
                if isinstance(value, torch.fx.Node):
                    inputs.append(self.names[value])
                else:
                    inputs.append("")
                    attributes.append(self.attribute(arg_name, value, where))
        else:
            op, inputs = "sym_size", [self.names[node.args[0]]]
            attributes = [self.attribute("dim", node.args[1], where)]
        self.emit(op, inputs, [node.name], node.name, node, attributes)
        self.names[node] = self.size_names[resolved] = node.name
        self.add_int64(node.name, [])

    def dynamic_argument(self, value, node, arg_name):
        """(name of the int64 value holding `value`, None), or (None, the numbers) when no dynamic
        dimension enters it."""
        if isinstance(value, torch.fx.Node):
            return (None, self.size_values[value]) if value in self.size_values else (self.names[value], None)
        items = [self.size_values.get(v, v) for v in value]
        if not any(isinstance(v, torch.fx.Node) for v in items):
            return None, list(items)
        inputs = [self.names[v] if isinstance(v, torch.fx.Node) else "" for v in items]
        values = [0 if isinstance(v, torch.fx.Node) else v for v in items]
        key = (tuple(inputs), tuple(values))
        if key not in self.size_names:  # a shape given to several calls is computed once
            name = self.size_names[key] = f"{node.name}_{arg_name}"
            self.emit("sym_list", inputs, [name], name, node, [onnx.helper.make_attribute("values", values)])
            self.add_int64(name, [len(items)])
        return self.size_names[key], None

    # ---- aten calls ------------------------------------------------------------------------------------
    def functional_name(self, node, where):
        """The op an aten call is written as: itself, or for an in-place op the trace kept (symbolic
        tracing runs without functionalize), its functional form when nothing reads the tensor it
        updates afterwards, nor a view of that tensor."""
        schema = node.target._schema
        name = _op_name(node.target)
        written = [k for k, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write]
        if not written:
            return name
        targets = [node.args[k] if k < len(node.args) else None for k in written]
        read_after = any(self.read_after(t, node) for t in targets)
        if not node.users and not read_after:
            return name  # an update of the model's state no output reads: the lowering leaves it out
        functional = name[:-1] if name.endswith("_") else None
        target = targets[0]
        if written == [0] and functional and hasattr(torch.ops.aten, functional) and not read_after and \
                target.op != "placeholder" and not _is_view(target):
            return functional
        self.unsupported.append(f"{where}: updates its input in place, which the capture cannot remove")
        return name

    def read_after(self, tensor, node):
        """Whether a node after `node` reads `tensor` or a view of it."""
        aliases = [tensor]
        while aliases:
            tensor = aliases.pop()
            if not isinstance(tensor, torch.fx.Node):
                return True  # not a traced tensor: nothing tells
            for user in tensor.users:
                if user is not node and self.order[user] > self.order[node]:
                    return True
                if user is not node and _is_view(user):
                    aliases.append(user)
        return False

    def call(self, node):
        target = node.target
        where = f"aten::{_op_name(target)} (node '{node.name}')"
        schema = target._schema
        op = self.functional_name(node, where)
        values = {}
        for k, arg in enumerate(schema.arguments):
            if k < len(node.args):
                values[arg.name] = node.args[k]
            elif arg.name in node.kwargs:
                values[arg.name] = node.kwargs[arg.name]
            elif arg.has_default_value():
                values[arg.name] = arg.default_value
        inputs, attributes, dynamic_inputs, dynamic_args = [], [], [], []
        for arg in schema.arguments:
            value = values.get(arg.name)
            type_text = str(arg.type)
            if isinstance(value, torch.fx.Node) and value in self.size_values:
                value = self.size_values[value]
            if type_text.startswith("Tensor") or type_text.startswith("Optional[Tensor]") or \
                    type_text.startswith("List[Tensor") or type_text.startswith("List[Optional[Tensor"):
                if isinstance(value, torch.fx.Node):
                    inputs.append(self.names[value])
                elif isinstance(value, (list, tuple)):
                    inputs.extend(self.names[v] if isinstance(v, torch.fx.Node) else "" for v in value)
                else:
                    inputs.append("")
                    if value is not None:
                        attributes.append(self.attribute(arg.name, value, where))
                continue
            if value is None:
                continue
            if _holds_node(value):
                dynamic, value = self.dynamic_argument(value, node, arg.name)
                if dynamic is not None:
                    dynamic_inputs.append(dynamic)
                    dynamic_args.append(arg.name)
                    continue
            attributes.append(self.attribute(arg.name, value, where))
        if dynamic_args:
            attributes.append(onnx.helper.make_attribute("dynamic_args", dynamic_args))
        self.emit(op, inputs + dynamic_inputs, self.outputs_of(node), node.name, node, attributes)

    def outputs_of(self, node):
        """One output for a tensor result, else one per getitem reading it (unread ones get a name too)."""
        returns = node.target._schema.returns
        if len(returns) == 1 and str(returns[0].type) == "Tensor":
            self.names[node] = node.name
            self.add_value_info(node.name, _tensor_meta(node), node)
            return [node.name]
        readers = {u.args[1]: u for u in node.users if u.op == "call_function" and u.target is operator.getitem}
        if len(readers) != len(node.users):
            self.unsupported.append(f"aten::{_op_name(node.target)} (node '{node.name}'): its tuple result is used "
                                    "whole")
        count = max([len(returns)] + [k + 1 for k in readers])
        outputs = []
        for k in range(count):
            name = readers[k].name if k in readers else f"{node.name}__{k}"
            if k in readers:
                self.names[readers[k]] = name
                self.add_value_info(name, _tensor_meta(readers[k]), readers[k])
            outputs.append(name)
        return outputs


def _is_view(node):
    """Whether an FX node's result aliases its input (an aten view)."""
    schema = getattr(node.target, "_schema", None) if node.op == "call_function" else None
    return schema is not None and bool(schema.returns) and schema.returns[0].alias_info is not None


def _write(model, traced):
    """The aten-domain ModelProto of a capture (see the module's docstring)."""
    writer = _Writer(_qualified_class(model), traced)
    inputs = []
    for node, (name, weight) in traced.placeholders.items():
        writer.names[node] = name
        if weight is not None:
            writer.initializers.append(_tensor_proto(weight, name, f"weight '{name}'"))
        else:
            inputs.append(writer.value_info_of(name, _tensor_meta(node), f"input '{name}'"))
    for node in traced.graph.nodes:
        if node.op == "get_attr":  # a tensor the forward created (torch.tensor(...))
            tensor = getattr(traced.owner, node.target)
            if not isinstance(tensor, torch.Tensor):  # the branches of torch.cond, say
                writer.unsupported.append(f"node '{node.name}': reads {type(tensor).__name__} '{node.target}', not a tensor")
                continue
            writer.names[node] = node.name
            value = _tensor_proto(tensor, "", f"constant '{node.name}'")
            writer.emit("constant", [], [node.name], node.name, node, [onnx.helper.make_attribute("value", value)])
            writer.add_value_info(node.name, _tensor_meta(node), node)
        elif node.op != "call_function" or node.target is operator.getitem:
            continue  # placeholders and the output above, getitem named by outputs_of
        elif _is_size_node(node):
            writer.size(node)
        elif _is_symbolic_number(node.meta.get("val")):
            writer.unsupported.append(f"node '{node.name}': {node.target} computes a size xexp.to_onnx does not "
                                      "compute yet (sym_size and +, -, *, // of sizes it does)")
        elif isinstance(node.target, torch._ops.OpOverload):
            if not node.users and not node.target._schema.returns:
                continue  # an assertion torch.export leaves (_assert_scalar): nothing to compute
            writer.call(node)
        else:
            writer.unsupported.append(f"node '{node.name}': {node.target} is not an aten operator")
    outputs = []
    for k, result in enumerate(traced.outputs):
        if not isinstance(result, torch.fx.Node) or result not in writer.names:
            raise Error(f"output {k} is not a tensor ({result!r})")
        outputs.append((writer.names[result], _tensor_meta(result)))
    if writer.unsupported:
        raise Error("xexp.to_onnx cannot capture the model:\n  " + "\n  ".join(writer.unsupported))
    # Output k is read by name: the lowering names the ONNX model's outputs output_0, output_1, ...
    graph_outputs = [writer.value_info_of(name, meta, f"output {k}") for k, (name, meta) in enumerate(outputs)]
    graph = onnx.helper.make_graph(writer.nodes, type(model).__name__, inputs, graph_outputs,
                                   writer.initializers, value_info=writer.value_info)
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid(ATEN_DOMAIN, 1)],
                                  producer_name="xexp.to_onnx", producer_version=torch.__version__)


def capture(model, args, kwargs=None, dynamic_shapes=None):
    """The model as an ONNX ModelProto in domain `aten` (see the module's docstring)."""
    named_inputs, bound = _flat_inputs(model, tuple(args), dict(kwargs or {}))
    dynamic = _dynamic_dims(dynamic_shapes, bound, named_inputs)
    if _has_torch_export():
        traced = _export(model, bound, named_inputs, dynamic)
    else:
        traced = _make_fx(model, bound, named_inputs, dynamic)
    return _write(model, traced)


def _tensor_proto(tensor, name, where):
    """A TensorProto of `tensor` (bfloat16, which numpy lacks, as its raw bits)."""
    tensor = tensor.detach().cpu().contiguous()
    data_type = _onnx_type(tensor.dtype, where)
    if tensor.dtype == torch.bfloat16:
        proto = onnx.TensorProto(name=name, data_type=data_type, dims=list(tensor.shape))
        proto.raw_data = tensor.view(torch.int16).numpy().tobytes()
        return proto
    return onnx.numpy_helper.from_array(tensor.numpy(), name)
