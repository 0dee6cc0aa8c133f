"""xexp from Python: a torch exporter, and the C++ optimizer, inliner, evaluator and comparison on ONNX
models.

A model is an onnx.ModelProto, its serialized bytes, or a path (str or os.PathLike) whose external data
is read from the file's folder. Functions returning a model return an onnx.ModelProto with every tensor
inline. Every failure of the library raises xexp.Error with the library's message.

    import onnx, xexp
    onx = xexp.to_onnx(model, (input_ids,))            # a torch module, exported and optimized
    optimized = xexp.optimize("model.onnx")            # default+onnxruntime rules
    onnx.save(optimized, "model.opt.onnx")
"""

import os

import numpy
import onnx
import onnx.numpy_helper
import onnx.version_converter

from . import _xexp
from ._xexp import Comparison, Error

__all__ = ["Comparison", "Error", "compare", "inline", "optimize", "patterns", "run", "to_onnx"]

DEFAULT_PATTERNS = "default+onnxruntime"


def _source(model):
    """What the C++ side reads: ModelProto bytes, or a path as str."""
    if isinstance(model, onnx.ModelProto):
        return model.SerializeToString()
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if isinstance(model, (str, os.PathLike)):
        return os.fsdecode(os.fspath(model))
    raise TypeError(f"expected an onnx.ModelProto, bytes or a path, got {type(model).__name__}")


def _model(data):
    return onnx.ModelProto.FromString(data)


def _default_opset(proto):
    for opset in proto.opset_import:
        if opset.domain in ("", "ai.onnx"):
            return opset.version
    return None


def _feeds(feeds):
    """[(name, TensorProto bytes)] from a dict of numpy arrays (or anything numpy.asarray takes)."""
    return [(name, onnx.numpy_helper.from_array(numpy.asarray(value), name).SerializeToString())
            for name, value in feeds.items()]


def optimize(model, patterns=DEFAULT_PATTERNS, target_opset=None, verbose=0, constant_folding=True,
             stats=False, inline_functions="op-libraries", intermediate_functions=True):
    """Folds constants and applies the rules of `patterns` (as `xexp optimize --patterns`).

    target_opset: when given and different from the model's, the model is first converted to this
    version of the default domain by onnx.version_converter (xexp converts no opsets itself), so that
    the rules see the opset the result will have. verbose: the optimizer's log level (on stderr).
    inline_functions: which local functions are inlined before the rules, "op-libraries" (an exporter's
    single-op functions, such as onnxscript's torch_lib, and the intermediate functions of a previous
    run), "all" or "none" (as `--inline-functions`). intermediate_functions=False leaves the attention,
    rotary and RMSNorm blocks an opset below 23 holds back as plain nodes rather than as calls of local
    functions in domain "intermediate" (as `--no-intermediate-functions`).
    stats=True returns (model, report): node counts, folded nodes, iterations and, per rule and per
    clean-up step, how often it was tried, matched and applied ("table" holds `--stats`'s table).
    """
    source = _source(model)
    if target_opset is not None:
        proto = _model(source) if isinstance(source, bytes) else onnx.load(source)
        if _default_opset(proto) != target_opset:
            source = onnx.version_converter.convert_version(proto, target_opset).SerializeToString()
    data, report = _xexp.optimize(source, patterns, verbose, constant_folding, inline_functions,
                                  intermediate_functions)
    return (_model(data), report) if stats else _model(data)


def inline(model):
    """Replaces every call of a local function by its body and removes the functions."""
    return _model(_xexp.inline(_source(model)))


def patterns():
    """[(name, set, priority, description)] for every rule of every set, in the order they are tried."""
    return _xexp.patterns()


def run(model, feeds):
    """Runs `model` on xexp's evaluator: {input name: array} -> {output name: numpy array}."""
    outputs = _xexp.run(_source(model), _feeds(feeds))
    return {name: onnx.numpy_helper.to_array(onnx.TensorProto.FromString(data)) for name, data in outputs}


def compare(first, second, feeds):
    """Runs both models on the same inputs (`feeds` names the first model's inputs; the second takes
    them by position) and aligns their results as `xexp compare` does: str() of the result is the table."""
    return _xexp.compare(_source(first), _source(second), _feeds(feeds))


def _module_selection(export_modules_as_functions):
    """(module_functions, depth, classes) for the C++ lowering from to_onnx's argument."""
    choice = export_modules_as_functions
    if choice is None or choice is False:
        return False, 0, []
    if choice is True:
        return True, 0, []
    if isinstance(choice, int):
        if choice < 1:
            raise ValueError("export_modules_as_functions: a depth is at least 1")
        return True, choice, []
    classes = list(choice)
    if not classes or not all(isinstance(c, type) for c in classes):
        raise TypeError("export_modules_as_functions takes True, a depth (int) or a set of module classes")
    return True, 0, [f"{c.__module__}.{c.__qualname__}" for c in classes]


def to_onnx(model, args, kwargs=None, *, dynamic_shapes=None, export_modules_as_functions=False, optimize=True,
            patterns=DEFAULT_PATTERNS, target_opset=18, filename=None, verbose=0, stats=False):
    """Exports a torch module to an onnx.ModelProto (experimental-experiment's to_onnx).

    The model is traced in Python into an aten-level graph (torch.export.export on torch >= 2.2, torch.fx's
    make_fx over functionalize on torch 1.13), written as an ONNX graph in domain "aten"; everything else
    is C++: one converter per aten op lowers it to ONNX at `target_opset`, then the optimizer applies
    `patterns` (optimize=False skips it). export_modules_as_functions: True makes every submodule a local function (domain
    aten_local_function; instances with the same class and body share one, weights are passed as
    inputs), an int only the modules that deep, a set of classes only the modules of those classes.
    dynamic_shapes: {argument name: {dimension: name}} (or a sequence by tensor argument; a name may be a
    torch.export.Dim) makes those input dimensions symbolic dimensions of that name, and every size
    computed from them is computed in the graph. Where the capture cannot keep a dimension symbolic
    (torch 1.13's symbolic tracing is partial, see README.md), it raises xexp.Error. An op
    without a converter, an unsupported dtype or a trace torch cannot make raises one xexp.Error
    listing every cause; nothing is written then. filename: where to save the model too (its weights in
    a side file past protobuf's 2 GB, the returned proto then holding them in memory).
    stats=True returns (model, report) as optimize does (report is None when optimize=False).
    """
    from . import _capture  # imports torch: only an export needs it

    aten = _capture.capture(model, args, kwargs, dynamic_shapes)
    module_functions, depth, classes = _module_selection(export_modules_as_functions)
    path = "" if filename is None else os.fsdecode(os.fspath(filename))
    data, report = _xexp.lower_aten(aten.SerializeToString(), target_opset, module_functions, depth, classes,
                                    patterns if optimize else "", verbose, path)
    onx = onnx.load(path) if path else _model(data)
    return (onx, report) if stats else onx
