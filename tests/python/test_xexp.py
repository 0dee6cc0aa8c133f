"""The Python package `xexp` (python/): optimize, inline, run, compare, patterns and errors, on the models
torch exported into ../shared/models. Optimized models are checked in ONNX Runtime (tests/ort/run_ort.js,
as the C++ tests do) against torch's expected outputs. Run with PYTHONPATH=<build dir>/python (ctest's
Python.Module does)."""

import json
import os
import pathlib
import subprocess

import numpy
import onnx
import onnx.external_data_helper
import onnx.helper
import pytest

import xexp

SOURCE = pathlib.Path(__file__).resolve().parents[2]
MODELS = SOURCE.parent / "shared" / "models"
RUN_ORT = SOURCE / "tests" / "ort" / "run_ort.js"
NUMPY_TO_ONNX = {numpy.dtype(numpy.float32): onnx.TensorProto.FLOAT, numpy.dtype(numpy.int64): onnx.TensorProto.INT64,
                 numpy.dtype(numpy.bool_): onnx.TensorProto.BOOL}  # run_ort.js reads a bool as one byte
ONNX_TO_NUMPY = {v: k for k, v in NUMPY_TO_ONNX.items()}


def exported(name):
    """A model's path, its input feeds and torch's expected outputs (described by NAME.json)."""
    spec = json.loads((MODELS / f"{name}.json").read_text())

    def read(entry):
        return numpy.fromfile(MODELS / entry["file"], dtype=entry["dtype"]).reshape(entry["shape"])

    return (MODELS / f"{name}.onnx", {i["name"]: read(i) for i in spec["inputs"]},
            {o["name"]: read(o) for o in spec["outputs"]})


def run_onnxruntime(model_path, feeds, tmp_path):
    """Outputs of ONNX Runtime (CPU, its graph optimizations disabled) through tests/ort/run_ort.js."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    manifest = []
    for k, (name, value) in enumerate(feeds.items()):
        value.tofile(tmp_path / f"input_{k}.bin")
        manifest.append({"name": name, "type": NUMPY_TO_ONNX[value.dtype], "dims": list(value.shape),
                         "path": f"input_{k}.bin"})
    (tmp_path / "inputs.json").write_text(json.dumps(manifest))
    out = tmp_path / "ort_outputs"
    result = subprocess.run(["node", str(RUN_ORT), "run", str(model_path), str(tmp_path / "inputs.json"), str(out),
                             "--level", "disabled", "--threads", "1"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return {e["name"]: numpy.fromfile(out / e["path"], dtype=ONNX_TO_NUMPY[e["type"]]).reshape(e["dims"])
            for e in json.loads((out / "outputs.json").read_text())}


def op_types(model):
    return [n.op_type for n in model.graph.node]


def test_optimize_llama_fuses_and_keeps_the_outputs_in_onnxruntime(tmp_path):
    path, feeds, expected = exported("llama_L1")
    optimized, report = xexp.optimize(path, stats=True)
    assert isinstance(optimized, onnx.ModelProto)
    assert report["nodes_before"] == 212 and len(optimized.graph.node) == report["nodes_after"] < 60
    applied = {name for name, rule in report["rules"].items() if rule["applied"]}
    assert {"SimplifiedLayerNormalizationPattern", "MultiHeadAttentionPattern"} <= applied
    # The residual norms stay unfused: ONNX Runtime's CPU provider runs them faster (onnxruntime_gpu fuses them).
    assert "SkipSimplifiedLayerNormalizationPattern" not in applied
    assert {"SimplifiedLayerNormalization", "MultiHeadAttention"} <= set(op_types(optimized))
    assert "SimplifiedLayerNormalizationPattern" in report["table"]

    onnx.save(optimized, tmp_path / "llama.opt.onnx")
    before = run_onnxruntime(path, feeds, tmp_path / "before")
    after = run_onnxruntime(tmp_path / "llama.opt.onnx", feeds, tmp_path / "after")
    for name, value in expected.items():
        numpy.testing.assert_allclose(before[name], value, atol=1e-5)
        numpy.testing.assert_allclose(after[name], value, atol=1e-4)


def test_optimize_inlines_torch_lib_functions_unless_told_not_to():
    path = SOURCE.parent / "shared" / "corpus" / "experimental-experiment" / "ut_issues_onnxscript_data_llama_forward.onnx"
    inlined, report = xexp.optimize(str(path), stats=True)
    assert report["inlined"] == 18 and not inlined.functions and len(inlined.graph.node) == 42
    kept, report = xexp.optimize(str(path), stats=True, inline_functions="none")
    assert report["inlined"] == 0 and len(kept.functions) == 18
    with pytest.raises(xexp.Error, match="'some' is none of op-libraries, all, none"):
        xexp.optimize(str(path), inline_functions="some")


def test_optimize_keeps_the_blocks_opset_23_would_fuse_as_intermediate_functions_unless_told_not_to():
    path = MODELS / "llama_L1.onnx"  # opset 17
    staged, report = xexp.optimize(str(path), patterns="default", stats=True)
    assert report["outlined"] == 6
    assert sorted(f.name for f in staged.functions if f.domain == "intermediate") == [
        "Attention", "RMSNormalization", "RotaryEmbedding"]
    plain, report = xexp.optimize(str(path), patterns="default", stats=True, intermediate_functions=False)
    assert report["outlined"] == 0 and not plain.functions
    assert sum(n.op_type == "Softmax" for n in plain.graph.node) == 1


def test_optimize_takes_a_proto_bytes_or_a_path_and_leaves_its_input_alone():
    path, _, _ = exported("gpt_erf_L1")
    proto = onnx.load(path)
    original = proto.SerializeToString()
    from_proto = xexp.optimize(proto)
    assert proto.SerializeToString() == original
    assert xexp.optimize(original) == from_proto
    assert xexp.optimize(pathlib.Path(path)) == from_proto
    assert xexp.optimize(str(path)) == from_proto
    assert path.read_bytes() == original
    assert {"BiasGelu", "MultiHeadAttention"} <= set(op_types(from_proto))
    assert len(from_proto.graph.node) < len(proto.graph.node) // 2


def test_optimize_reads_external_data_next_to_the_file(tmp_path):
    path, feeds, expected = exported("gpt_erf_L1")
    model = onnx.load(path)
    onnx.external_data_helper.convert_model_to_external_data(model, location="model.data", size_threshold=0)
    onnx.save(model, str(tmp_path / "model.onnx"))  # onnx 1.12 writes external data for a str path only
    assert (tmp_path / "model.data").stat().st_size > 0
    optimized = xexp.optimize(tmp_path / "model.onnx")
    assert all(t.data_location != onnx.TensorProto.EXTERNAL for t in optimized.graph.initializer)
    numpy.testing.assert_allclose(xexp.run(optimized, feeds)["logits"], expected["logits"], atol=1e-4)


def test_patterns_choose_the_rules():
    path, _, _ = exported("llama_L1")
    _, report = xexp.optimize(path, patterns="default", stats=True)
    assert "SimplifiedLayerNormalizationPattern" not in report["rules"]
    assert report["rules"]["CastPattern"]["applied"] > 0
    unchanged, report = xexp.optimize(path, patterns="none", constant_folding=False, stats=True)
    assert not report["rules"] and report["folded"] == 0
    assert "SimplifiedLayerNormalization" not in op_types(unchanged)


def test_target_opset_converts_before_optimizing():
    _, feeds, expected = exported("gpt_erf_L1")
    path = MODELS / "gpt_erf_L1.op14dyn.onnx"  # the same model exported at opset 14
    assert [o.version for o in onnx.load(path).opset_import if o.domain == ""] == [14]
    optimized = xexp.optimize(path, target_opset=17)
    assert [o.version for o in optimized.opset_import if o.domain == ""] == [17]
    numpy.testing.assert_allclose(xexp.run(optimized, feeds)["logits"], expected["logits"], atol=1e-4)


def test_run_gives_torchs_outputs():
    path, feeds, expected = exported("llama_L1")
    outputs = xexp.run(path, feeds)
    assert list(outputs) == list(expected)
    assert outputs["logits"].dtype == numpy.float32 and outputs["logits"].shape == expected["logits"].shape
    numpy.testing.assert_allclose(outputs["logits"], expected["logits"], atol=1e-5)


def test_compare_aligns_the_results_of_both_models():
    path, feeds, _ = exported("llama_L1")
    optimized = xexp.optimize(path)
    comparison = xexp.compare(path, optimized, feeds)
    assert len(comparison) == len(comparison.rows) > 0
    assert comparison.count("=") > 0 and comparison.count("-") + comparison.count("~") > 0
    symbol, left, right = comparison.rows[-1]
    assert symbol == "=" and left.startswith("OUTPUT") and left.endswith("logits") and left == right
    assert "logits" in str(comparison)


def test_patterns_lists_every_rule_of_every_set():
    rules = xexp.patterns()
    assert {s for _, s, _, _ in rules} == {"default", "onnxruntime", "onnxruntime_gpu", "onnxruntime_approx",
                                           "onnxruntime_training"}
    assert ("Cast", "default", 0) in {(n, s, p) for n, s, p, _ in rules}
    assert "MultiHeadAttention" in {n for n, s, _, _ in rules if s == "onnxruntime"}
    assert "SkipLayerNormalization" in {n for n, s, _, _ in rules if s == "onnxruntime_gpu"}
    assert "FastGeluApprox" in {n for n, s, _, _ in rules if s == "onnxruntime_approx"}
    for name, _, priority, description in rules:
        assert description.startswith(name + ": ") and description.endswith(f"[P{priority}]")


def model_with_a_local_function():
    """Y = Twice(X) + X, where the local function Twice(a) = a + a."""
    twice = onnx.helper.make_function("local", "Twice", ["a"], ["b"],
                                      [onnx.helper.make_node("Add", ["a", "a"], ["b"])],
                                      [onnx.helper.make_opsetid("", 17)])
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Twice", ["X"], ["T"], domain="local"), onnx.helper.make_node("Add", ["T", "X"], ["Y"])],
        "g", [onnx.helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [3])],
        [onnx.helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [3])])
    return onnx.helper.make_model(graph, functions=[twice], opset_imports=[onnx.helper.make_opsetid("", 17),
                                                                          onnx.helper.make_opsetid("local", 1)])


def test_inline_replaces_calls_by_bodies():
    model = model_with_a_local_function()
    flat = xexp.inline(model)
    assert len(flat.functions) == 0 and op_types(flat) == ["Add", "Add"]
    x = numpy.array([1, 2, -3], dtype=numpy.float32)
    numpy.testing.assert_array_equal(xexp.run(model, {"X": x})["Y"], 3 * x)
    numpy.testing.assert_array_equal(xexp.run(flat, {"X": x})["Y"], 3 * x)


def test_errors_carry_the_librarys_message(tmp_path):
    path, feeds, _ = exported("llama_L1")
    with pytest.raises(xexp.Error, match=r"^unknown pattern or pattern set 'NoSuchRule'$"):
        xexp.optimize(path, patterns="default+NoSuchRule")
    with pytest.raises(xexp.Error, match="not an ONNX model"):
        xexp.optimize(b"not a model")
    with pytest.raises(xexp.Error, match="cannot open"):
        xexp.optimize(tmp_path / "missing.onnx")
    with pytest.raises(xexp.Error, match=r"value 'input_ids': no value was given for this input"):
        xexp.run(path, {})
    with pytest.raises(xexp.Error, match=r"value 'ids': the model has no input with this name"):
        xexp.run(path, {"ids": feeds["input_ids"]})
    with pytest.raises(xexp.Error, match="expected INT64, got FLOAT"):
        xexp.run(path, {"input_ids": feeds["input_ids"].astype(numpy.float32)})
    with pytest.raises(TypeError):
        xexp.optimize(42)
    assert issubclass(xexp.Error, Exception)
