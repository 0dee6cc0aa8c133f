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

Torch 1.13 (Debian 12's python3-torch) has no torch.export: the graph comes from make_fx over
functionalize (which removes in-place ops), module paths from forward hooks."""

import contextlib
import inspect
import operator

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


def _onnx_type(dtype, where):
    if dtype not in DTYPES:
        raise Error(f"{where}: dtype {dtype} has no ONNX counterpart xexp.to_onnx handles")
    return DTYPES[dtype]


def _qualified_class(module):
    cls = type(module)
    return f"{cls.__module__}.{cls.__qualname__}"


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


def _trace(model, args, kwargs):
    from functorch import functionalize
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.nn.utils import stateless

    named_inputs, bound = _flat_inputs(model, args, kwargs)
    weights = dict(model.named_parameters())
    weights.update(model.named_buffers())
    weight_names = list(weights)
    input_names = [name for name, _ in named_inputs]

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
        return stateless.functional_call(model, values, bound_call.args, bound_call.kwargs)

    flat = [weights[n] for n in weight_names] + [t for _, t in named_inputs]
    with torch.no_grad(), _module_stacks(model):
        try:
            graph_module = make_fx(functionalize(forward, remove="mutations"))(*flat)
        except Exception as e:  # data-dependent control flow, an op the tracer cannot run
            raise Error(f"torch could not trace the model: {type(e).__name__}: {e}") from None
    return graph_module, weight_names, weights, input_names


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


def _value_info(name, meta, where):
    if meta is None:
        return None
    return onnx.helper.make_tensor_value_info(name, _onnx_type(meta.dtype, where), list(meta.shape))


def _tensor_meta(node):
    meta = node.meta.get("tensor_meta")
    return meta if meta is not None and hasattr(meta, "dtype") else None


class _Writer:
    def __init__(self, root_class):
        self.root_class = root_class
        self.nodes = []
        self.initializers = []
        self.value_info = []
        self.names = {}  # FX node -> ONNX value name
        self.unsupported = []

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

    def call(self, node):
        target = node.target
        where = f"aten::{target._schema.name.split('::')[-1]} (node '{node.name}')"
        schema = target._schema
        values = {}
        for k, arg in enumerate(schema.arguments):
            if k < len(node.args):
                values[arg.name] = node.args[k]
            elif arg.name in node.kwargs:
                values[arg.name] = node.kwargs[arg.name]
            elif arg.has_default_value():
                values[arg.name] = arg.default_value
        inputs, attributes = [], []
        for arg in schema.arguments:
            value = values.get(arg.name)
            type_text = str(arg.type)
            if type_text.startswith("Tensor") or type_text.startswith("Optional[Tensor]") or \
                    type_text.startswith("List[Tensor") or type_text.startswith("List[Optional[Tensor"):
                if isinstance(value, torch.fx.Node):
                    inputs.append(self.names[value])
                elif isinstance(value, (list, tuple)):
                    inputs.extend(self.names[v] if isinstance(v, torch.fx.Node) else "" for v in value)
                else:
                    inputs.append("")
                    if value is not None:
                        attribute = self.attribute(arg.name, value, where)
                        if attribute is not None:
                            attributes.append(attribute)
                continue
            if value is None:
                continue
            if isinstance(value, torch.fx.Node) or (isinstance(value, (list, tuple)) and
                                                    any(isinstance(v, torch.fx.Node) for v in value)):
                self.unsupported.append(f"{where}: argument '{arg.name}' is computed at run time (a symbolic size)")
                continue
            attribute = self.attribute(arg.name, value, where)
            if attribute is not None:
                attributes.append(attribute)
        outputs = self.outputs_of(node)
        onnx_node = onnx.helper.make_node(schema.name.split("::")[-1], inputs, outputs, name=node.name,
                                          domain=ATEN_DOMAIN)
        onnx_node.attribute.extend(attributes)
        stack = node.meta.get("xexp_module_stack", ())
        if stack:
            _add_metadata(onnx_node, NAME_SCOPES_KEY, _python_list([""] + [p for p, _ in stack] + [node.name]))
            _add_metadata(onnx_node, CLASS_HIERARCHY_KEY, _python_list(
                [self.root_class] + [c for _, c in stack] + [str(target)]))
        self.nodes.append(onnx_node)

    def outputs_of(self, node):
        """One output for a tensor result, else one per getitem reading it (unread ones get a name too)."""
        if len(node.target._schema.returns) == 1 and str(node.target._schema.returns[0].type) == "Tensor":
            self.names[node] = node.name
            self.add_value_info(node.name, _tensor_meta(node), node)
            return [node.name]
        readers = {u.args[1]: u for u in node.users if u.op == "call_function" and u.target is operator.getitem}
        if len(readers) != len(node.users):
            self.unsupported.append(f"aten::{node.target._schema.name} (node '{node.name}'): its tuple result "
                                    "is used whole")
        count = max([len(node.target._schema.returns)] + [k + 1 for k in readers])
        outputs = []
        for k in range(count):
            name = readers[k].name if k in readers else f"{node.name}__{k}"
            if k in readers:
                self.names[readers[k]] = name
                self.add_value_info(name, _tensor_meta(readers[k]), readers[k])
            outputs.append(name)
        return outputs

    def add_value_info(self, name, meta, node):
        info = _value_info(name, meta, f"node '{node.name}'")
        if info is not None:
            self.value_info.append(info)


def capture(model, args, kwargs=None, dynamic_shapes=None):
    """The model as an ONNX ModelProto in domain `aten` (see the module's docstring)."""
    if dynamic_shapes:
        # make_fx(tracing_mode="symbolic") traces on 1.13 but makes every dimension symbolic, and the
        # converters read static shapes: refused rather than exported for the traced size only.
        raise Error("dynamic_shapes is not supported yet by xexp.to_onnx (torch " + torch.__version__ + "): the "
                    "exported graph would only work at the traced size")
    graph_module, weight_names, weights, input_names = _trace(model, tuple(args), dict(kwargs or {}))
    writer = _Writer(_qualified_class(model))
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    inputs = []
    for k, (node, name) in enumerate(zip(placeholders, weight_names + input_names)):
        writer.names[node] = name
        if k < len(weight_names):
            writer.initializers.append(_tensor_proto(weights[name], name, f"weight '{name}'"))
        else:
            inputs.append(_value_info(name, _tensor_meta(node), f"input '{name}'"))
    outputs = []
    for node in graph_module.graph.nodes:
        if node.op == "get_attr":  # a tensor the forward created (torch.tensor(...))
            writer.names[node] = node.name
            value = _tensor_proto(getattr(graph_module, node.target), "", f"constant '{node.name}'")
            writer.nodes.append(onnx.helper.make_node("constant", [], [node.name], name=node.name, domain=ATEN_DOMAIN,
                                                      value=value))
            writer.add_value_info(node.name, _tensor_meta(node), node)
        elif node.op == "call_function" and node.target is operator.getitem:
            continue  # named by outputs_of
        elif node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            writer.call(node)
        elif node.op == "call_function":
            writer.unsupported.append(f"node '{node.name}': {node.target} is not an aten operator")
        elif node.op == "output":
            results = torch.utils._pytree.tree_flatten(node.args[0])[0]
            for k, result in enumerate(results):
                if not isinstance(result, torch.fx.Node):
                    raise Error(f"output {k} is a Python constant ({result!r}), not a tensor")
                outputs.append((writer.names[result], _tensor_meta(result)))
    if writer.unsupported:
        raise Error("xexp.to_onnx cannot capture the model:\n  " + "\n  ".join(writer.unsupported))
    # Output k is read by name: the lowering names the ONNX model's outputs output_0, output_1, ...
    graph_outputs = [_value_info(name, meta, f"output {k}") for k, (name, meta) in enumerate(outputs)]
    graph = onnx.helper.make_graph(writer.nodes, type(model).__name__, inputs, graph_outputs,
                                   writer.initializers, value_info=writer.value_info)
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid(ATEN_DOMAIN, 1)],
                                  producer_name="xexp.to_onnx", producer_version=torch.__version__)


def _tensor_proto(tensor, name, where):
    """A TensorProto of `tensor` (bfloat16, which numpy lacks, as its raw bits)."""
    tensor = tensor.detach().cpu().contiguous()
    data_type = _onnx_type(tensor.dtype, where)
    if tensor.dtype == torch.bfloat16:
        proto = onnx.TensorProto(name=name, data_type=data_type, dims=list(tensor.shape))
        proto.raw_data = tensor.view(torch.int16).numpy().tobytes()
        return proto
    return onnx.numpy_helper.from_array(tensor.numpy(), name)
