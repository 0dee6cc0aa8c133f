"""xexp.torch: the compile backend runs the exported graph (not torch's) and falls back to eager with one
warning; the dumped submodule results are every module's own inputs and outputs under its path, and
compare_with_dump finds the first module an ONNX model computes differently. Skipped without torch."""

import warnings

import numpy
import onnx
import pytest

import xexp

torch = pytest.importorskip("torch", reason="xexp.torch needs torch (Debian's python3-torch)")

import xexp.torch as xtorch  # noqa: E402
import torch_models  # noqa: E402

functorch_compile = pytest.importorskip("functorch.compile")


class ShiftedRuns(list):
    """The calls of xexp.run, which adds 1 to every float result of the calls `shifted` accepts (by call
    number): a backend output equal to eager's plus one was computed by the ONNX model, not by torch."""

    def __init__(self, run):
        super().__init__()
        self.run = run
        self.shifted = lambda k: True

    def __call__(self, model, feeds):
        self.append(model)
        results = self.run(model, feeds)
        if not self.shifted(len(self) - 1):
            return results
        return {k: v + 1 if v.dtype.kind == "f" else v for k, v in results.items()}


@pytest.fixture
def shifted_runs(monkeypatch):
    runs = ShiftedRuns(xexp.run)
    monkeypatch.setattr(xexp, "run", runs)
    return runs


def boxed_aot(model, compiler, **kwargs):
    boxed = functorch_compile.make_boxed_compiler(compiler)
    return functorch_compile.aot_module(model, fw_compiler=boxed, bw_compiler=boxed, **kwargs)


def test_the_backend_returns_what_the_exported_graph_computes(shifted_runs):
    model, (x,) = torch_models.mlp()
    compiler = xtorch.backend()
    compiled = boxed_aot(model, compiler)
    with torch.no_grad():
        expected = model(x)
        got = compiled(x)
    torch.testing.assert_close(got, expected + 1, atol=1e-4, rtol=1e-4)
    assert len(shifted_runs) == 1 and len(compiler.models) == 1
    assert {n.domain for n in compiler.models[0]["onnx"].graph.node} <= {"", "com.microsoft"}


def test_aot_function_of_a_plain_function(shifted_runs):
    boxed = functorch_compile.make_boxed_compiler(xtorch.backend(patterns="default"))
    compiled = functorch_compile.aot_function(lambda a, b: (torch.relu(a @ b) + a.sum(), a), fw_compiler=boxed)
    a, b = torch.randn(3, 3), torch.randn(3, 3)
    got, same = compiled(a, b)
    torch.testing.assert_close(got, torch.relu(a @ b) + a.sum() + 1, atol=1e-4, rtol=1e-4)
    assert torch.equal(same, a) and len(shifted_runs) == 1  # an input returned as it is, not exported


def test_one_export_per_input_shape():
    model, (x,) = torch_models.mlp()
    compiler = xtorch.backend(patterns="default")
    compiled = boxed_aot(model, compiler)
    with torch.no_grad():
        for batch in (x, x + 1, x[:1], x[:1] * 2, x):
            torch.testing.assert_close(compiled(batch), model(batch), atol=1e-4, rtol=1e-4)
    assert [m["inputs"][-1][0] for m in compiler.models] == [tuple(x.shape), tuple(x[:1].shape)]


def test_forward_and_backward_graphs_run_exported(shifted_runs):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    reference = torch.nn.Sequential(*[torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3)])
    reference.load_state_dict(model.state_dict())
    x = torch.randn(4, 6)
    compiler = xtorch.backend(patterns=None)
    compiled = boxed_aot(model, compiler, decompositions=functorch_compile.default_decompositions)
    shifted_runs.shifted = lambda k: k == 1  # the backward graph's results only
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # neither graph falls back to eager
        out = compiled(x)
        out.sum().backward()
    expected = reference(x)
    expected.sum().backward()
    torch.testing.assert_close(out, expected, atol=1e-4, rtol=1e-4)
    assert len(compiler.models) == 2 and len(shifted_runs) == 2  # the forward graph, then the backward one
    for got, want in zip(model.parameters(), reference.parameters()):
        # Each gradient is the backward graph's result, shifted by one.
        torch.testing.assert_close(got.grad, want.grad + 1, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("name", ["demo_llm", "llama"])
def test_the_seeds_models_through_compile_run_their_optimized_export(name, shifted_runs):
    model, args = getattr(torch_models, name)()
    compiled = xtorch.compile(model)
    with torch.no_grad():
        torch.testing.assert_close(compiled(*args), model(*args) + 1, atol=1e-4, rtol=1e-4)
    report = compiled.xexp_backend.models[0]["report"]
    assert report["nodes_after"] < report["nodes_before"] and len(shifted_runs) == 1
    fused = {n.op_type for n in compiled.xexp_backend.models[0]["onnx"].graph.node if n.domain == "com.microsoft"}
    assert fused, "default+onnxruntime fuses nothing"


def test_a_graph_the_evaluator_cannot_run_runs_eager_after_one_warning(monkeypatch):
    def failing(model, feeds):
        raise xexp.Error("no kernel for com.microsoft::Imaginary")

    monkeypatch.setattr(xexp, "run", failing)
    model, (x,) = torch_models.mlp()
    compiled = xtorch.compile(model)
    with pytest.warns(RuntimeWarning, match="cannot run the exported graph: no kernel for") as record:
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x))
            torch.testing.assert_close(compiled(x), model(x))
    assert len(record) == 1


class Unconvertible(torch.nn.Module):
    def forward(self, x):
        return torch.erfinv(torch.nn.functional.hardshrink(x).clamp(-0.5, 0.5))


def test_a_graph_without_converters_runs_eager_after_one_warning(shifted_runs):
    model, x = Unconvertible(), torch.randn(3, 4)
    compiler = xtorch.backend()
    compiled = boxed_aot(model, compiler)
    with pytest.warns(RuntimeWarning) as record:
        with torch.no_grad():
            first, second = compiled(x), compiled(x * 0.5)
    assert len(record) == 1, [str(w.message) for w in record]
    message = str(record[0].message)
    assert "no converter for aten::hardshrink, aten::erfinv" in message
    torch.testing.assert_close(first, model(x))
    torch.testing.assert_close(second, model(x * 0.5))
    assert not shifted_runs and not compiler.models


def test_bad_backend_arguments_raise():
    with pytest.raises(ValueError, match="runtime is one of"):
        xtorch.backend(runtime="tvm")
    with pytest.raises(xexp.Error):
        xtorch.backend(patterns="default+no_such_set")
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="needs the Python package onnxruntime"):
            xtorch.backend(runtime="onnxruntime")


# ---- dumped submodule results ---------------------------------------------------------------------------

def test_the_dump_holds_each_modules_own_inputs_and_outputs_under_its_path(tmp_path):
    model, args = torch_models.demo_llm()
    with torch.no_grad():
        with xtorch.dump_submodules(model, tmp_path / "dump.onnx"):
            model(*args)
        dump = xtorch.load_dump(tmp_path / "dump.onnx")
        called = [path for path, m in model.named_modules() if not isinstance(m, torch.nn.ModuleList)]
        assert sorted(dump) == sorted((p, 0, kind) for p in called for kind in "IO")
        modules = dict(model.named_modules())
        for path in called:  # each module, run again by torch on its dumped inputs, gives its dumped output
            inputs = [torch.from_numpy(a) for a in dump[(path, 0, "I")]]
            numpy.testing.assert_allclose(modules[path](*inputs).numpy(), dump[(path, 0, "O")], atol=1e-6)
        numpy.testing.assert_array_equal(dump[("", 0, "I")][0], args[0].numpy())
    # The file is an ONNX model of constants any runtime restores: xexp's evaluator gives the same values.
    restored = xexp.run(tmp_path / "dump.onnx", {})
    assert restored["decoder.norm_2|0|O"].shape == dump[("decoder.norm_2", 0, "O")].shape
    numpy.testing.assert_array_equal(restored["decoder.norm_2|0|O"], dump[("decoder.norm_2", 0, "O")])


def test_dump_only_the_named_modules_and_every_call():
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
    x = torch.randn(2, 3)
    with torch.no_grad(), xtorch.dump_submodules(model, modules=["1"]) as dumped:
        model(x)
        model(-x)
    dump = xtorch.load_dump(xtorch.dump_model(dumped.values))
    assert sorted(dump) == [("1", 0, "I"), ("1", 0, "O"), ("1", 1, "I"), ("1", 1, "O")]
    with torch.no_grad():
        numpy.testing.assert_allclose(dump[("1", 1, "O")], model(-x).numpy(), atol=1e-6)
    with pytest.raises(xexp.Error, match=r"no submodule named \['2'\]"):
        with xtorch.dump_submodules(model, modules=["2"]):
            pass


def llm_dump_and_export():
    model, args = torch_models.demo_llm()
    with torch.no_grad(), xtorch.dump_submodules(model) as dumped:
        model(*args)
    onx = xexp.to_onnx(model, args, export_modules_as_functions=True)
    return xtorch.load_dump(xtorch.dump_model(dumped.values)), onx


def test_an_exported_model_matches_its_dump_module_by_module():
    dump, onx = llm_dump_and_export()
    comparison = xtorch.compare_with_dump(onx, dump)
    assert comparison.first is None, str(comparison)
    # Every module is a function call, compared with its own dumped output (the model's too).
    assert sorted((path, status) for path, _, status, *_ in comparison.rows) == \
        sorted((path, "=") for path, _, kind in dump if kind == "O"), str(comparison)


def test_modules_sharing_one_function_are_told_apart():
    dump, onx = llm_dump_and_export()
    # The two heads are one function, whose body names its calls after the first head's submodules.
    weight = next(t for t in onx.graph.initializer if t.name == "decoder.attention.attention.1.query.weight")
    value = onnx.numpy_helper.to_array(weight).copy()
    value[2, 3] += 1.0
    weight.CopyFrom(onnx.numpy_helper.from_array(value, weight.name))
    comparison = xtorch.compare_with_dump(onx, dump)
    assert comparison.first[:3] == ("decoder.attention.attention.1.query", 0, "~"), str(comparison)
    statuses = {row[0]: row[2] for row in comparison.rows}
    assert statuses["decoder.attention.attention.0.query"] == "=" and statuses["decoder.attention.attention.0"] == "="


def test_the_first_module_computing_differently_is_named():
    dump, onx = llm_dump_and_export()
    weight = next(t for t in onx.graph.initializer if t.name == "decoder.feed_forward.linear_2.bias")
    value = onnx.numpy_helper.to_array(weight).copy()
    value[0] += 0.5
    weight.CopyFrom(onnx.numpy_helper.from_array(value, weight.name))
    comparison = xtorch.compare_with_dump(onx, dump)
    assert comparison.first is not None, str(comparison)
    path, _, status, diff, *_ = comparison.first
    assert path in ("decoder.feed_forward.linear_2", "decoder.feed_forward"), str(comparison)
    assert status == "~" and diff == pytest.approx(0.5, rel=1e-3)
    statuses = {row[0]: row[2] for row in comparison.rows}
    assert statuses["decoder.attention"] == "=" and statuses[""] == "~"


def test_module_values_are_found_by_scoped_node_names_in_torchs_export():
    dump, _ = llm_dump_and_export()
    model, args = torch_models.demo_llm()
    exported = xtorch._torch_onnx_export(model, args, 17)
    statuses = {row[0]: row[2] for row in xtorch.compare_with_dump(exported, dump).rows}
    # Aligned with the wrong value, a module would differ: the attention heads' projections have one shape.
    for path in ("", "decoder", "decoder.norm_1", "decoder.attention.attention.0", "decoder.attention.attention.1.key",
                 "decoder.feed_forward.linear_2", "embedding.pe"):
        assert statuses[path] == "=", (path, statuses)
    weight = next(t for t in exported.graph.initializer if t.name == "decoder.feed_forward.linear_1.bias")
    value = onnx.numpy_helper.to_array(weight).copy()
    value[3] -= 0.25
    weight.CopyFrom(onnx.numpy_helper.from_array(value, weight.name))
    first = xtorch.compare_with_dump(exported, dump).first
    assert first[0] == "decoder.feed_forward.linear_1" and first[2] == "~" and first[3] == pytest.approx(0.25, rel=1e-3)


@pytest.mark.parametrize("name", ["demo_llm", "llama"])
def test_two_exporters_side_by_side(name):
    model, args = getattr(torch_models, name)()
    comparison = xtorch.compare_exporters(model, args)
    assert comparison.first_difference(0) is None and comparison.first_difference(1) is None, str(comparison)
    rows = {path: (left[2], right[2]) for path, _, left, right in comparison.modules}
    # Every module is found in both exports (by scoped node names, by function calls) and agrees.
    assert set(rows.values()) == {("=", "=")}, str(comparison)
    text = str(comparison)
    assert "torch.onnx.export" in text and f"{next(iter(rows))}#0" in text
    assert comparison.nodes.count("-") + comparison.nodes.count("+") < len(comparison.nodes)


def test_compare_a_model_with_a_dump_from_the_command_line(tmp_path, capsys):
    """`python3 -m xexp.torch compare MODEL DUMP` (its main, run here in-process: torch imports slowly)."""
    model, args = torch_models.demo_llm()
    with torch.no_grad(), xtorch.dump_submodules(model, tmp_path / "dump.onnx"):
        model(*args)
    onx = xexp.to_onnx(model, args, export_modules_as_functions=True)
    onnx.save(onx, tmp_path / "model.onnx")
    command = ["compare", str(tmp_path / "model.onnx"), str(tmp_path / "dump.onnx")]
    assert xtorch.main(command) == 0
    assert "=       decoder.feed_forward.linear_2#0" in capsys.readouterr().out
    weight = next(t for t in onx.graph.initializer if t.name == "decoder.norm_1.weight")
    weight.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(weight) * 2, weight.name))
    onnx.save(onx, tmp_path / "model.onnx")
    assert xtorch.main(command) == 1
    assert "first difference: decoder.norm_1#0 (~)" in capsys.readouterr().out
