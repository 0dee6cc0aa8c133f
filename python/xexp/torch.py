"""xexp's torch workflows: a compile backend that runs the exported, optimized ONNX graph in place of
torch's (backend, compile), the intermediate results of submodules dumped during one torch run and
compared with an ONNX model's (dump_submodules, load_dump, compare_with_dump; from a shell,
`python3 -m xexp.torch compare MODEL DUMP`), and torch.onnx.export against xexp.to_onnx module by module
(compare_exporters). docs/torch-backend.md, docs/torch-dump.md and docs/torch-exporters.md show them.

    import torch, xexp.torch
    compiled = torch.compile(model, backend=xexp.torch.backend())        # torch >= 2
    compiled = xexp.torch.compile(model)                                 # torch 1.13: aot_module

The backend reuses xexp.to_onnx: the FX graph a compiler receives is a torch module like any other,
captured, lowered and optimized as to_onnx does it.
"""

import re
import warnings

import numpy
import onnx
import onnx.helper
import onnx.numpy_helper
import torch

import xexp

RUNTIMES = ("xexp", "onnxruntime")
_IDENTITY = onnx.helper.make_model(onnx.helper.make_graph(
    [onnx.helper.make_node("Identity", ["x"], ["y"])], "identity",
    [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
    [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])]))


# ---- the compile backend -------------------------------------------------------------------------------

def _missing_converters(message):
    """The aten ops a capture or lowering error names as lacking a converter, in order, once each."""
    return list(dict.fromkeys(re.findall(r"(aten::\w+) \(node", message)))


class _Outputs:
    """How a graph's results map to what the ONNX model computes: the FX graph may return a value twice, an
    input as it is, or None (a gradient nobody asked for); the ONNX model computes each other value once."""

    def __init__(self, graph_module):
        placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
        output = next(n for n in graph_module.graph.nodes if n.op == "output")
        result = output.args[0]
        self.sequence = type(result) if isinstance(result, (list, tuple)) else None
        self.computed = []  # the FX nodes the ONNX model returns, in its output order
        self.plan = []      # per result: ("input", k), ("computed", k) or ("constant", value)
        for value in (result if self.sequence else (result,)):
            if isinstance(value, torch.fx.Node) and value.op == "placeholder":
                self.plan.append(("input", placeholders.index(value)))
            elif isinstance(value, torch.fx.Node):
                if value not in self.computed:
                    self.computed.append(value)
                self.plan.append(("computed", self.computed.index(value)))
            else:
                self.plan.append(("constant", value))

    def computing_module(self, graph_module):
        """A GraphModule returning only the computed values, as a tuple: what is exported. Its inputs are
        renamed input_0, input_1, ...: the ONNX graph names its inputs after them and its values after the
        aten ops, which a backward graph's inputs are named after too (`t_1`, a saved transpose)."""
        graph = torch.fx.Graph()
        placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
        copies = {n: graph.placeholder(f"input_{k}") for k, n in enumerate(placeholders)}
        graph.graph_copy(graph_module.graph, copies)
        graph.output(tuple(copies[n] for n in self.computed))
        return torch.fx.GraphModule(graph_module, graph)

    def assemble(self, args, computed):
        results = [args[k] if kind == "input" else computed[k] if kind == "computed" else k
                   for kind, k in self.plan]
        return self.sequence(results) if self.sequence else results[0]


class _XexpSession:
    """xexp's evaluator on one model, serialized once."""

    def __init__(self, onx):
        self.data = onx.SerializeToString()
        self.outputs = [o.name for o in onx.graph.output]

    def run(self, feeds):
        results = xexp.run(self.data, feeds)
        return [results[name] for name in self.outputs]


class _OrtSession:
    def __init__(self, onx):
        import onnxruntime

        self.session = onnxruntime.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])

    def run(self, feeds):
        return self.session.run(None, feeds)


def _key(args):
    return tuple((tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else (type(a), a) for a in args)


class _Compiled:
    """The callable a backend returns for one FX graph: one ONNX model per input signature (shapes,
    dtypes), exported on the first call with it; the graph itself where export fails (one warning)."""

    def __init__(self, compiler, graph_module):
        self.compiler = compiler
        self.graph_module = graph_module
        self.outputs = _Outputs(graph_module)
        self.exported = self.outputs.computing_module(graph_module) if self.outputs.computed else None
        self.sessions = {}  # input signature -> (session, input positions), or None for eager
        self.warned = False

    def compile(self, args):
        module = self.exported
        try:
            onx, report = xexp.to_onnx(module, tuple(args), optimize=bool(self.compiler.patterns),
                                       patterns=self.compiler.patterns or "", target_opset=self.compiler.target_opset,
                                       verbose=self.compiler.verbose, stats=True)
        except xexp.Error as error:
            self.fall_back(str(error))
            return None
        positions = {name: k for k, name in enumerate(
            n.target for n in module.graph.nodes if n.op == "placeholder")}
        inputs = [(i.name, positions[i.name]) for i in onx.graph.input]
        self.compiler.models.append({"onnx": onx, "report": report, "inputs": _key(args)})
        return self.compiler.session_class(onx), inputs

    def fall_back(self, message):
        if self.warned:
            return
        self.warned = True
        missing = _missing_converters(message)
        reason = f"no converter for {', '.join(missing)}" if missing else message
        warnings.warn(f"xexp backend: the graph runs in eager mode, it cannot be exported: {reason}",
                      RuntimeWarning, stacklevel=3)

    def __call__(self, *args):
        if self.exported is None:  # nothing computed: inputs and constants only
            return self.outputs.assemble(args, [])
        key = _key(args)
        first = key not in self.sessions
        if first:
            self.sessions[key] = self.compile(args)
        compiled = self.sessions[key]
        if compiled is None:
            return self.graph_module(*args)
        session, inputs = compiled
        feeds = {name: args[k].detach().cpu().numpy() for name, k in inputs}
        try:
            results = session.run(feeds)
        except xexp.Error as error:  # a fused kernel xexp's evaluator lacks, say: known on the first run
            if not first:
                raise
            self.fall_back(f"xexp's evaluator cannot run the exported graph: {error}")
            self.sessions[key] = None
            return self.graph_module(*args)
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), None)
        computed = [torch.from_numpy(numpy.array(r)).to(device) for r in results]
        return self.outputs.assemble(args, computed)


class Backend:
    """A compiler for FX graphs (see backend): called with (graph module, example inputs), returns the
    callable running the graph's ONNX export. `models` lists what it exported, one dict per graph and
    input signature: the ONNX model ("onnx"), the optimizer's report ("report", None without patterns:
    "nodes_before", "nodes_after", ...) and the inputs' (shape, dtype) ("inputs")."""

    def __init__(self, patterns, runtime, target_opset, verbose):
        if runtime not in RUNTIMES:
            raise ValueError(f"runtime is one of {RUNTIMES}, not {runtime!r}")
        if runtime == "onnxruntime":
            try:
                import onnxruntime  # noqa: F401
            except ImportError:
                raise ImportError("runtime='onnxruntime' needs the Python package onnxruntime; "
                                  "runtime='xexp' runs xexp's evaluator") from None
        if patterns:  # a bad spec fails here, not as a fallback to eager on the first call
            xexp.optimize(_IDENTITY, patterns)
        self.patterns = patterns
        self.runtime = runtime
        self.target_opset = target_opset
        self.verbose = verbose
        self.models = []

    def session_class(self, onx):
        return _XexpSession(onx) if self.runtime == "xexp" else _OrtSession(onx)

    def __call__(self, graph_module, example_inputs):
        return _Compiled(self, graph_module)


def backend(patterns=xexp.DEFAULT_PATTERNS, runtime="xexp", target_opset=18, verbose=0):
    """A compiler for an FX graph of torch or aten calls: torch.compile(model, backend=xexp.torch.backend())
    on torch >= 2, fw_compiler/bw_compiler of functorch.compile.aot_module or aot_function (through
    make_boxed_compiler) on torch 1.13. Each graph is exported with xexp.to_onnx on its first call with
    an input signature (shapes and dtypes; a new one exports again), optimized with `patterns` (None or
    "" for none), and run by `runtime`: "xexp" (xexp's evaluator) or "onnxruntime" (its Python
    package). A graph the exporter cannot convert runs as it is, after one RuntimeWarning naming the aten
    ops without a converter."""
    return Backend(patterns, runtime, target_opset, verbose)


def compile(model, patterns=xexp.DEFAULT_PATTERNS, runtime="xexp", target_opset=18, verbose=0):  # noqa: A001
    """`model` running through xexp.torch.backend: torch.compile(model, backend=...) on torch >= 2,
    functorch.compile.aot_module on torch 1.13 (forward and backward graphs, with functorch's default
    decompositions, which write the backward ops as ops that have converters). Returns the compiled module;
    its `xexp_backend` attribute is the Backend (its `models`)."""
    compiler = backend(patterns, runtime, target_opset, verbose)
    if hasattr(torch, "compile"):
        compiled = torch.compile(model, backend=compiler)
    else:
        from functorch.compile import aot_module, default_decompositions, make_boxed_compiler

        boxed = make_boxed_compiler(compiler)
        compiled = aot_module(model, fw_compiler=boxed, bw_compiler=boxed, decompositions=default_decompositions)
    compiled.xexp_backend = compiler
    return compiled


# ---- intermediate results of submodules ----------------------------------------------------------------

def _dump_name(path, iteration, kind, position=None):
    """The name a dumped tensor has in the file: `decoder.norm_1|0|I|0` is the first positional input of
    module decoder.norm_1 the first time it ran, `...|O` its output, `...|O|1` the second of a tuple."""
    return f"{path}|{iteration}|{kind}" + ("" if position is None else f"|{position}")


def _parse_dump_name(name):
    parts = name.split("|")
    if len(parts) not in (3, 4) or parts[2] not in ("I", "O") or not parts[1].isdigit():
        raise xexp.Error(f"'{name}' is not the name of a dumped value (path|iteration|I or O[|position])")
    return parts[0], int(parts[1]), parts[2], int(parts[3]) if len(parts) == 4 else None


class _Recorder:
    def __init__(self, model, modules):
        named = dict(model.named_modules())
        paths = list(named) if modules is None else list(modules)
        unknown = [p for p in paths if p not in named]
        if unknown:
            raise xexp.Error(f"no submodule named {unknown} (model.named_modules() gives the paths)")
        self.values = {}  # name -> numpy array, in the order the module calls finish
        self.calls = {}   # path -> how many times it started
        self.handles = []
        for path in paths:
            module = named[path]
            self.handles.append(module.register_forward_pre_hook(self.pre_hook(path)))
            self.handles.append(module.register_forward_hook(self.hook(path)))
        self.started = {}  # path -> the stack of iterations running, with their inputs

    def pre_hook(self, path):
        def record(module, args):
            iteration = self.calls.get(path, 0)
            self.calls[path] = iteration + 1
            inputs = {_dump_name(path, iteration, "I", k): _array(a) for k, a in enumerate(args)
                      if isinstance(a, torch.Tensor)}
            self.started.setdefault(path, []).append((iteration, inputs))

        return record

    def hook(self, path):
        def record(module, args, output):
            iteration, inputs = self.started[path].pop()
            self.values.update(inputs)
            if isinstance(output, torch.Tensor):
                self.values[_dump_name(path, iteration, "O")] = _array(output)
            elif isinstance(output, (tuple, list)):
                for k, o in enumerate(output):
                    if isinstance(o, torch.Tensor):
                        self.values[_dump_name(path, iteration, "O", k)] = _array(o)

        return record

    def remove(self):
        for h in self.handles:
            h.remove()


def _array(tensor):
    return tensor.detach().cpu().numpy().copy()


class dump_submodules:  # noqa: N801  (a context manager used as a function)
    """Records the inputs and outputs of every submodule (or of the paths in `modules`, "" being the model
    itself) each time one runs while the context is active, and saves them into `filename`, one ONNX
    model whose Constant nodes hold them, named path|iteration|I|position for the positional tensor inputs,
    path|iteration|O for a tensor output (path|iteration|O|position for a tuple's items):

        with xexp.torch.dump_submodules(model, "dump.onnx"):
            model(*inputs)
        dumped = xexp.torch.load_dump("dump.onnx")   # {(path, iteration, "I" or "O"): arrays}

    Values are in the order the calls finish (innermost modules first). `values` holds them by name."""

    def __init__(self, model, filename=None, modules=None):
        self.model = model
        self.filename = filename
        self.modules = modules
        self.values = {}

    def __enter__(self):
        self.recorder = _Recorder(self.model, self.modules)
        return self

    def __exit__(self, *exc):
        self.recorder.remove()
        self.values = self.recorder.values
        if self.filename is not None and exc[0] is None:
            onnx.save(dump_model(self.values), self.filename)
        return False


def dump_model(values):
    """The ONNX model of constants holding `values` ({name: array}): one Constant node and graph output per
    value, so that any runtime restores them."""
    nodes, outputs = [], []
    for name, value in values.items():
        tensor = onnx.numpy_helper.from_array(numpy.asarray(value), name)
        nodes.append(onnx.helper.make_node("Constant", [], [name], value=tensor))
        outputs.append(onnx.helper.make_tensor_value_info(name, tensor.data_type, list(tensor.dims)))
    graph = onnx.helper.make_graph(nodes, "dumped_submodules", [], outputs)
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)],
                                  producer_name="xexp.torch.dump_submodules")


def load_dump(filename):
    """{(path, iteration, "I"): tuple of the positional inputs (None where one was not a tensor),
    (path, iteration, "O"): the output array (a tuple of them for a tuple)} from a dump_submodules file
    or model, in the file's order."""
    onx = filename if isinstance(filename, onnx.ModelProto) else onnx.load(filename)
    flat = {}
    for node in onx.graph.node:
        if node.op_type != "Constant" or len(node.output) != 1 or len(node.attribute) != 1:
            raise xexp.Error(f"node '{node.name or node.op_type}' is not a Constant of a dump")
        flat[node.output[0]] = numpy.array(onnx.numpy_helper.to_array(node.attribute[0].t))  # writable
    grouped = {}
    for name, value in flat.items():
        path, iteration, kind, position = _parse_dump_name(name)
        grouped.setdefault((path, iteration, kind), {})[position] = value
    result = {}
    for key, items in grouped.items():
        if None in items:
            result[key] = items[None]
        else:
            result[key] = tuple(items.get(k) for k in range(max(items) + 1))
    return result


def _typed(name, value):
    elem_type = onnx.numpy_helper.from_array(numpy.zeros((), value.dtype)).data_type
    return onnx.helper.make_tensor_value_info(name, elem_type, list(value.shape))


class DumpComparison:
    """compare_with_dump's result: one row per dumped module output, in the dump's order (the order the
    calls finished), as (path, iteration, status, max absolute difference or None, expected shape, shape
    got). status: "=" within tolerance, "~" different values, "shape" different shapes, "missing" no
    call of that module in the model (its nodes were inlined or fused), "count" a different number of
    outputs. str() is the table; `first` is the first row that is not "=" nor "missing", or None."""

    def __init__(self, rows):
        self.rows = rows
        self.first = next((r for r in rows if r[2] not in ("=", "missing")), None)

    def __str__(self):
        lines = []
        for path, iteration, status, diff, expected, got in self.rows:
            text = "" if diff is None else f"max|diff|={diff:.3g}"
            lines.append(f"{status:7} {path or '<model>'}#{iteration} {text} expected {expected} got {got}")
        if self.first is not None:
            lines.append(f"first difference: {self.first[0] or '<model>'}#{self.first[1]} ({self.first[2]})")
        return "\n".join(lines)


def _run_level(onx, nodes, inputs, outputs, initializers, feeds):
    """Runs nodes (the main graph or a function body) on xexp's evaluator, returning every value `outputs`
    names."""
    graph = onnx.helper.make_graph(nodes, "level", inputs, [onnx.ValueInfoProto(name=n) for n in outputs],
                                   initializers)
    model = onnx.helper.make_model(graph, opset_imports=onx.opset_import, functions=onx.functions)
    model.ir_version = onx.ir_version
    return xexp.run(model, feeds)


def _scope_results(nodes, graph_outputs):
    """{module path: values computed in it and read outside it (or graph outputs), in node order} from node
    names scoped as torch.onnx.export's TorchScript exporter writes them: `/decoder/norm_1/Add` is an
    Add of module decoder.norm_1, inside decoder."""
    scopes = {}
    for node in nodes:
        parts = node.name.split("/")
        if len(parts) < 3 or parts[0]:
            continue
        scopes[node.name] = [".".join(parts[1:k]) for k in range(2, len(parts))]
    produced = {}  # value -> the scopes of the node computing it
    for node in nodes:
        for v in node.output:
            produced[v] = scopes.get(node.name, [])
    leaving = {}
    for node in nodes:
        reader = set(scopes.get(node.name, []))
        for v in node.input:
            for path in produced.get(v, []):
                if path not in reader:
                    leaving.setdefault(path, []).append(v)
    for v in graph_outputs:
        for path in produced.get(v, []):
            leaving.setdefault(path, []).append(v)
    return {path: list(dict.fromkeys(values)) for path, values in leaving.items()}


def compare_with_dump(onx, dump, atol=1e-4, rtol=1e-4):
    """Checks the intermediate results of `onx` against a dump of the same model's torch run (load_dump's
    dict, or a dump file), module by module. Modules are found as calls of local functions named by
    module path (xexp.to_onnx(..., export_modules_as_functions=True), optimized or not), the calls in
    functions too, or as node names scoped by module (`/decoder/norm_1/Add`, torch.onnx.export): a
    module's results are then the values its nodes compute that others read, the last ones when there are
    more than the dump holds. The model runs on xexp's evaluator with the dumped inputs of the model itself
    (path "", which the dump must hold). Returns a DumpComparison: its `first` row names the first module
    to differ and by how much."""
    if not isinstance(dump, dict):
        dump = load_dump(dump)
    if ("", 0, "I") not in dump:
        raise xexp.Error("the dump holds no inputs of the model itself: dump with modules=None or including ''")
    onx = onx if isinstance(onx, onnx.ModelProto) else onnx.load(onx)
    functions = {(f.domain, f.name): f for f in onx.functions}
    got = {}  # (path, iteration) -> ([arrays], whether they are exactly the module's results)
    seen = {}
    named_by = {}  # function -> the path of its first call: the instance whose names its body's calls have

    def path_of(call, caller):
        """A call's module path: its name, but in the body of a function shared by several modules, the
        calls are named after the first module's submodules (h.0.attn in the body h.1 runs too)."""
        if caller is None:
            return call.name
        first, path = caller
        return path + call.name[len(first):] if call.name.startswith(first + ".") else call.name

    def walk(nodes, input_names, results_of_graph, initializers, feeds, caller=None):
        calls = [n for n in nodes if (n.domain, n.op_type) in functions]
        scoped = _scope_results(nodes, results_of_graph)
        wanted = results_of_graph + [v for c in calls for v in list(c.input) + list(c.output) if v]
        wanted = list(dict.fromkeys(wanted + [v for values in scoped.values() for v in values]))
        inputs = [_typed(name, feeds[name]) for name in input_names if name in feeds]
        values = _run_level(onx, nodes, inputs, wanted, initializers, feeds)
        for path, names in scoped.items():
            got.setdefault((path, 0), ([values[v] for v in names], False))
        for call in calls:
            path = path_of(call, caller)
            iteration = seen.get(path, 0)
            seen[path] = iteration + 1
            got[(path, iteration)] = ([values[o] for o in call.output], True)
            key = (call.domain, call.op_type)
            body = functions[key]
            walk(list(body.node), list(body.input), list(body.output), [],
                 {name: values[v] for name, v in zip(body.input, call.input) if v}, (named_by.setdefault(key, path), path))
        return values

    args = dump[("", 0, "I")]
    names = [i.name for i in onx.graph.input if i.name not in {t.name for t in onx.graph.initializer}]
    feeds = {name: a for name, a in zip(names, args)}
    root_outputs = [o.name for o in onx.graph.output]
    values = walk(list(onx.graph.node), names, root_outputs, list(onx.graph.initializer), feeds)
    got[("", 0)] = ([values[o] for o in root_outputs], True)

    rows = []
    for (path, iteration, kind), expected in dump.items():
        if kind != "O":
            continue
        expected = expected if isinstance(expected, tuple) else (expected,)
        shapes = [None if e is None else e.shape for e in expected]
        if (path, iteration) not in got:
            rows.append((path, iteration, "missing", None, shapes, None))
            continue
        results, exact = got[(path, iteration)]
        if not exact and len(results) > len(expected):
            results = results[-len(expected):]
        got_shapes = [r.shape for r in results]
        if len(results) != len(expected):
            rows.append((path, iteration, "count", None, shapes, got_shapes))
            continue
        status, worst = "=", 0.0
        for e, r in zip(expected, results):
            if e is None:
                continue
            if e.shape != r.shape:
                status, worst = "shape", None
                break
            diff = float(numpy.max(numpy.abs(e.astype(numpy.float64) - r.astype(numpy.float64)))) if e.size else 0.0
            worst = max(worst, diff)
            if not numpy.allclose(r, e, atol=atol, rtol=rtol):
                status = "~"
        rows.append((path, iteration, status, worst, shapes, got_shapes))
    return DumpComparison(rows)


# ---- two exporters side by side ------------------------------------------------------------------------

class ExportersComparison:
    """compare_exporters' result. `modules`: one row per module output the torch run dumped, in the order
    the calls finished, (path, iteration, first's DumpComparison row, second's), each row as
    compare_with_dump gives it (status "=", "~", "shape", "count" or "missing"). `nodes`: the two flat
    models run side by side as `xexp compare` aligns them (an xexp.Comparison). `first`, `second`: the
    two ONNX models. str() prints the modules' table, then the node-by-node one."""

    def __init__(self, names, first, second, first_rows, second_rows, nodes):
        self.names = names
        self.first, self.second = first, second
        by_key = {(r[0], r[1]): r for r in second_rows}
        self.modules = [(r[0], r[1], r, by_key[(r[0], r[1])]) for r in first_rows]
        self.nodes = nodes

    def first_difference(self, side):
        """The first module `side` (0 or 1) computes differently from torch, as (path, iteration, row)."""
        for path, iteration, *rows in self.modules:
            if rows[side][2] not in ("=", "missing"):
                return path, iteration, rows[side]
        return None

    def __str__(self):
        def cell(row):
            status, diff = row[2], row[3]
            return f"{status:7} {'' if diff is None else f'{diff:.3g}':9}"

        width = max([len(p or "<model>") + 2 for p, *_ in self.modules] + [6])
        lines = [f"{'module':{width}} {self.names[0]:17} | {self.names[1]:17}"]
        for path, iteration, left, right in self.modules:
            lines.append(f"{(path or '<model>') + '#' + str(iteration):{width}} {cell(left)} | {cell(right)}")
        return "\n".join(lines) + "\n\n" + str(self.nodes)


def _torch_onnx_export(model, args, opset):
    import io

    buffer = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, tuple(args), buffer, opset_version=opset)
    return onnx.load_from_string(buffer.getvalue())


def compare_exporters(model, args, opset=17, atol=1e-4, rtol=1e-4):
    """torch.onnx.export (its TorchScript exporter on torch 1.13) and xexp.to_onnx (modules as local
    functions, not optimized) of the same module side by side: both are checked against one torch run's
    dumped submodule results, module by module (compare_with_dump: a module's values are found by the
    node names its scope gives in torch's export, by the call named after its path in xexp's), and run
    node by node on xexp's evaluator as `xexp compare` aligns them. Returns an ExportersComparison."""
    with torch.no_grad(), dump_submodules(model) as dumped:
        model(*args)
    dump = load_dump(dump_model(dumped.values))
    first = _torch_onnx_export(model, args, opset)
    second = xexp.to_onnx(model, args, export_modules_as_functions=True, optimize=False, target_opset=opset)
    feeds = {i.name: a for i, a in zip(
        [i for i in first.graph.input if i.name not in {t.name for t in first.graph.initializer}], dump[("", 0, "I")])}
    nodes = xexp.compare(first, xexp.inline(second), feeds)
    return ExportersComparison(("torch.onnx.export", "xexp.to_onnx"), first, second,
                               compare_with_dump(first, dump, atol, rtol).rows,
                               compare_with_dump(second, dump, atol, rtol).rows, nodes)


def main(argv=None):
    """python3 -m xexp.torch compare MODEL.onnx DUMP.onnx: compare_with_dump's table; exit status 1 when a
    module differs."""
    import argparse

    parser = argparse.ArgumentParser(prog="python3 -m xexp.torch", description="xexp's torch workflows")
    commands = parser.add_subparsers(dest="command", required=True)
    compare = commands.add_parser("compare", help="an ONNX model's intermediate values against a dump_submodules "
                                                  "file, module by module")
    compare.add_argument("model")
    compare.add_argument("dump")
    compare.add_argument("--atol", type=float, default=1e-4)
    compare.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args(argv)
    comparison = compare_with_dump(args.model, args.dump, args.atol, args.rtol)
    print(comparison)
    return 0 if comparison.first is None else 1


if __name__ == "__main__":
    raise SystemExit(main())
