"""xexp.to_onnx on architectures written in plain torch (torch_models.py): ONNX Runtime and xexp's
evaluator give torch's outputs, the optimizer fuses what it knows, modules become shared local functions,
bad input raises one xexp.Error. Skipped when torch is not installed (Debian's python3-torch)."""

import collections
import io
import warnings

import numpy
import onnx
import pytest

import xexp

torch = pytest.importorskip("torch", reason="xexp.to_onnx needs torch (Debian's python3-torch)")

import torch_models  # noqa: E402  (imports torch)
from test_xexp import run_onnxruntime  # noqa: E402

TOLERANCE = 1e-4
# Operators xexp's evaluator has no kernel for yet: ONNX Runtime alone checks those models.
NOT_IN_THE_EVALUATOR = {"ConvTranspose", "Resize"}


def torch_outputs(model, args):
    with torch.no_grad():
        out = model(*args)
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [o.numpy() for o in out]


def feeds_of(onx, args):
    return {i.name: a.numpy() for i, a in zip(onx.graph.input, args)}


def histogram(onx):
    return collections.Counter(n.op_type for n in onx.graph.node)


def assert_outputs_match(onx, args, expected, tmp_path):
    """ONNX Runtime and xexp's evaluator both give torch's outputs."""
    feeds = feeds_of(onx, args)
    names = [o.name for o in onx.graph.output]
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "model.onnx"
    onnx.save(onx, path)
    ort = run_onnxruntime(path, feeds, tmp_path / "ort")
    ours = xexp.run(onx, feeds) if not NOT_IN_THE_EVALUATOR & set(histogram(onx)) else ort
    assert len(names) == len(expected)
    for name, value in zip(names, expected):
        numpy.testing.assert_allclose(ort[name], value, atol=TOLERANCE, rtol=TOLERANCE)
        numpy.testing.assert_allclose(ours[name], value, atol=TOLERANCE, rtol=TOLERANCE)


@pytest.mark.parametrize("name", sorted(torch_models.ARCHITECTURES))
def test_to_onnx_gives_torchs_outputs_before_and_after_optimization(name, tmp_path):
    model, args = torch_models.ARCHITECTURES[name]()
    expected = torch_outputs(model, args)
    plain = xexp.to_onnx(model, args, optimize=False)
    optimized, report = xexp.to_onnx(model, args, stats=True)
    assert [o.name for o in optimized.graph.output] == [f"output_{k}" for k in range(len(expected))]
    assert not any(n.domain == "aten" for n in plain.graph.node)
    # nodes_after counts the bodies of the functions stage 1 of the LLM fusions writes (intermediate).
    nodes = len(optimized.graph.node) + sum(len(f.node) for f in optimized.functions)
    assert nodes == report["nodes_after"] < len(plain.graph.node)
    assert_outputs_match(plain, args, expected, tmp_path / "plain")
    assert_outputs_match(optimized, args, expected, tmp_path / "optimized")


@pytest.mark.parametrize("name", ["demo_llm", "gpt2", "llama", "bert", "resnet", "vit"])
def test_no_more_nodes_than_torchs_exporter_followed_by_xexp_optimize(name):
    model, args = torch_models.ARCHITECTURES[name]()
    exported = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, exported, opset_version=17)
    theirs = xexp.optimize(exported.getvalue())
    ours = xexp.to_onnx(model, args, target_opset=17)
    assert len(ours.graph.node) <= len(theirs.graph.node)


def test_each_architecture_lowers_to_the_operators_it_should():
    ops = {name: histogram(xexp.to_onnx(*factory(), optimize=False))
           for name, factory in torch_models.ARCHITECTURES.items()}
    assert ops["demo_llm"]["LayerNormalization"] == 2 and ops["demo_llm"]["Gather"] == 2
    assert ops["small_cnn"]["Conv"] == 2 and ops["small_cnn"]["BatchNormalization"] == 2
    assert ops["small_cnn"]["MaxPool"] == 1 and ops["small_cnn"]["AveragePool"] == 1
    assert ops["mlp"]["Gemm"] == 3 and ops["mlp"]["LogSoftmax"] == 1 and ops["mlp"]["Erf"] == 1
    assert ops["gpt2"]["Split"] == 2 and ops["gpt2"]["Where"] == 2 and ops["gpt2"]["Tanh"] == 2
    assert ops["llama"]["Trilu"] == 2 and ops["llama"]["Sigmoid"] == 2
    assert ops["bert"]["Cast"] >= 1 and ops["bert"]["LayerNormalization"] == 5
    assert ops["unet"]["ConvTranspose"] == 2 and ops["unet"]["InstanceNormalization"] == 5
    assert ops["mobilenet"]["HardSwish"] == 4 and ops["mobilenet"]["HardSigmoid"] == 2
    assert ops["mobilenet"]["Clip"] == 2  # ReLU6
    # make_fx unrolls nn.LSTM into its cells (no LSTM node yet): 2 layers x 6 steps.
    assert ops["lstm"]["Sigmoid"] == 36 and "LSTM" not in ops["lstm"]


def test_optimize_fuses_the_exported_blocks():
    llama = histogram(xexp.to_onnx(*torch_models.llama()))
    assert llama["SimplifiedLayerNormalization"] + llama["SkipSimplifiedLayerNormalization"] == 5
    cnn = histogram(xexp.to_onnx(*torch_models.small_cnn()))
    assert "BatchNormalization" not in cnn  # folded into the convolutions


def test_modules_as_functions_share_one_function_per_class_and_inline_back(tmp_path):
    model, args = torch_models.demo_llm()
    expected = torch_outputs(model, args)
    onx = xexp.to_onnx(model, args, export_modules_as_functions=True, optimize=False)
    names = collections.Counter(f.name for f in onx.functions)
    # Both heads call one AttentionBlock, the four Linear layers without bias one Linear, ...
    assert {f.domain for f in onx.functions} == {"aten_local_function"}
    assert [n.op_type for n in onx.graph.node if n.domain == "aten_local_function"] == ["torch_models.LLM"] or \
        {n.op_type for n in onx.graph.node if n.domain == "aten_local_function"} == {"torch_models.Embedding",
                                                                                   "torch_models.DecoderLayer"}
    assert names["torch_models.AttentionBlock"] == 1 and names["torch_models.DecoderLayer"] == 1
    calls = collections.Counter(n.op_type for f in onx.functions for n in f.node if n.domain == "aten_local_function")
    assert calls["torch_models.AttentionBlock"] == 2
    assert_outputs_match(onx, args, expected, tmp_path / "functions")
    assert_outputs_match(xexp.inline(onx), args, expected, tmp_path / "inlined")


def test_modules_as_functions_by_class_and_by_depth(tmp_path):
    model, args = torch_models.llama()
    expected = torch_outputs(model, args)
    by_class = xexp.to_onnx(model, args, export_modules_as_functions={torch_models.LlamaLayer})
    assert [f.name for f in by_class.functions] == ["torch_models.LlamaLayer"]
    assert [n.op_type for n in by_class.graph.node if n.domain == "aten_local_function"] == \
        ["torch_models.LlamaLayer"] * 2
    assert_outputs_match(by_class, args, expected, tmp_path / "class")
    by_depth = xexp.to_onnx(model, args, export_modules_as_functions=1, optimize=False)
    top = {n.op_type for n in by_depth.graph.node if n.domain == "aten_local_function"}
    assert top == {"Embedding", "torch_models.LlamaLayer", "torch_models.RmsNorm"}
    assert {f.name for f in by_depth.functions} == top


def test_optimize_works_inside_the_module_functions(tmp_path):
    model, args = torch_models.gpt2()
    expected = torch_outputs(model, args)
    plain = xexp.to_onnx(model, args, export_modules_as_functions=1, optimize=False)
    optimized = xexp.to_onnx(model, args, export_modules_as_functions=1)
    block = [f for f in optimized.functions if f.name == "torch_models.Gpt2Block"]
    assert len(block) == 1  # both layers call it
    assert [n.op_type for n in optimized.graph.node].count("torch_models.Gpt2Block") == 2
    assert sum(len(f.node) for f in optimized.functions) < sum(len(f.node) for f in plain.functions)
    assert_outputs_match(optimized, args, expected, tmp_path)


class Unconvertible(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Hardshrink())

    def forward(self, x):
        return torch.erfinv(self.inner(x).clamp(-0.5, 0.5))


def test_ops_without_converter_are_listed_with_their_module_and_nothing_is_written(tmp_path):
    target = tmp_path / "never.onnx"
    with pytest.raises(xexp.Error) as error:
        xexp.to_onnx(Unconvertible(), (torch.randn(2, 4),), filename=target)
    message = str(error.value)
    assert "2 aten calls have no converter" in message
    assert "aten::hardshrink" in message and "module 'inner.1' (Hardshrink)" in message
    assert "aten::erfinv" in message
    assert not target.exists()


def test_bad_input_raises_xexp_error():
    cnn, args = torch_models.small_cnn()
    with pytest.raises(xexp.Error, match="training mode"):
        xexp.to_onnx(cnn.train(), args)
    with pytest.raises(xexp.Error, match=r"dynamic_shapes names \['y'\], which are not arguments"):
        xexp.to_onnx(*torch_models.mlp(), dynamic_shapes={"y": {0: "batch"}})
    with pytest.raises(xexp.Error, match="is not a dimension of a rank-2 tensor"):
        xexp.to_onnx(*torch_models.mlp(), dynamic_shapes={"x": {2: "batch"}})

    class DataDependent(torch.nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x

    with pytest.raises(xexp.Error, match="could not trace"):
        xexp.to_onnx(DataDependent(), (torch.randn(3),))


class Bfloat16Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(20, 8)
        self.fc1 = torch.nn.Linear(8, 16)
        self.norm = torch.nn.LayerNorm(16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, ids):
        return self.fc2(torch.nn.functional.gelu(self.norm(self.fc1(self.embed(ids))))).float()


def test_bfloat16_weights_stay_bfloat16_and_compute_as_torch_does():
    torch.manual_seed(0)
    model, ids = Bfloat16Head().to(torch.bfloat16).eval(), torch.randint(0, 20, (2, 5))
    expected = torch_outputs(model, (ids,))[0]
    onx = xexp.to_onnx(model, (ids,), optimize=False)
    assert {i.data_type for i in onx.graph.initializer if i.name.startswith("fc")} == {onnx.TensorProto.BFLOAT16}
    assert histogram(onx)["Cast"] == 1  # the final .float()
    # bfloat16 keeps 8 bits of mantissa: torch and the evaluator round at different places.
    numpy.testing.assert_allclose(xexp.run(onx, {"ids": ids.numpy()})["output_0"], expected, atol=2e-2)


def test_filename_gets_the_model_the_call_returns(tmp_path):
    model, args = torch_models.mlp()
    target = tmp_path / "mlp.onnx"
    onx = xexp.to_onnx(model, args, filename=target)
    assert onnx.load(target) == onx
    assert histogram(onx) == histogram(xexp.to_onnx(model, args))


class OpZoo(torch.nn.Module):
    """One call of each op that has a converter but no architecture above using it."""

    def __init__(self):
        super().__init__()
        self.prelu = torch.nn.PReLU(4)

    def forward(self, x):
        values, indices = x.max(dim=1)
        return (torch.nn.functional.pad(x, (1, 2, 0, 1), value=0.5), x.repeat(1, 2, 1, 1).flip(-1), values, indices,
                x.var(dim=-1, keepdim=True), torch.selu(x) + self.prelu(x), torch.nn.functional.glu(x, dim=1),
                torch.addcmul(x, x, x, value=0.5) + torch.nn.functional.logsigmoid(x), x.amin(), torch.cumsum(x, 2),
                x.argmax(-1), torch.topk(x, 2)[0], x.sort(-1)[0], torch.tril(x[0, 0]), torch.minimum(x, -x))


class NearestUpsample(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest")


def test_each_converter_of_the_op_zoo_gives_torchs_outputs(tmp_path):
    torch.manual_seed(0)
    args = (torch.randn(2, 4, 3, 6),)
    zoo, upsample = OpZoo().eval(), NearestUpsample()
    zoo_onnx, upsample_onnx = xexp.to_onnx(zoo, args, optimize=False), xexp.to_onnx(upsample, args, optimize=False)
    assert {"Pad", "Tile", "Selu", "PRelu", "TopK", "Trilu", "CumSum", "ReduceMax", "ArgMax"} <= set(histogram(zoo_onnx))
    assert histogram(upsample_onnx)["Resize"] == 1
    assert_outputs_match(zoo_onnx, args, torch_outputs(zoo, args), tmp_path / "zoo")
    assert_outputs_match(upsample_onnx, args, torch_outputs(upsample, args), tmp_path / "upsample")


class DynamicAttention(torch.nn.Module):
    """Self-attention whose views and expands take the batch and sequence sizes from the input."""

    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.norm = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm(x)).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) * (c // self.heads) ** -0.5
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, c)
        return x + self.proj(y), torch.zeros_like(y).sum(-1)


def dynamic_attention():
    torch.manual_seed(0)
    return DynamicAttention().eval(), (torch.randn(3, 7, 16),)


class Indexing(torch.nn.Module):
    """Tensor indexing, which torch 1.13 runs in C++ on concrete sizes (the capture in aten calls)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("idx", torch.tensor([2, 0]))

    def forward(self, x):
        return x[..., 1:, None, -1] * x[:, :1, None, 0], x[-1], x[:, self.idx], x[1:, :, ::2]


def indexing():
    torch.manual_seed(0)
    return Indexing(), (torch.randn(3, 4, 5),)


def dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def traced_at_batch_2(factory):
    """A factory of the tests' models tracing at batch 2: torch 1.13 makes a dimension traced at 1 static."""
    def traced():
        model, args = factory()
        return model, tuple(a.expand(2, *a.shape[1:]).clone() for a in args)

    return traced


def inputs_like(args, shape):
    """Random inputs of `shape` for the model's arguments: ids and masks in the range of the traced ones."""
    torch.manual_seed(1)
    return tuple(torch.randint(0, int(a.max()) + 1, shape) if a.dtype == torch.int64 else torch.randn(*shape)
                 for a in args)


# (factory, dynamic_shapes, the input shapes to run at besides the traced one, the graph's input dims)
DYNAMIC = {"mlp": (torch_models.mlp, {"x": {0: "batch"}}, [(1, 10), (9, 10)], ["batch", 10]),
           "small_cnn": (torch_models.small_cnn, [{0: "batch"}], [(1, 3, 16, 16), (5, 3, 16, 16)],
                         ["batch", 3, 16, 16]),
           "attention": (dynamic_attention, {"x": {0: "batch", 1: "seq"}}, [(2, 5, 16), (4, 11, 16)],
                         ["batch", "seq", 16]),
           "gpt2": (torch_models.gpt2, {"input_ids": {0: "batch", 1: "seq"}}, [(1, 5), (3, 17)], ["batch", "seq"]),
           "demo_llm": (traced_at_batch_2(torch_models.demo_llm), [{0: "batch", 1: "seq"}], [(1, 7), (3, 41)],
                        ["batch", "seq"]),
           "llama": (torch_models.llama, {"input_ids": {0: "batch", 1: "seq"}}, [(1, 4), (3, 13)],
                     ["batch", "seq"]),
           "bert": (torch_models.bert, [{0: "batch", 1: "seq"}] * 2, [(1, 5), (3, 14)], ["batch", "seq"]),
           "lstm": (torch_models.lstm, {"ids": {0: "batch"}}, [(1, 6), (5, 6)], ["batch", 6]),
           "unet": (traced_at_batch_2(torch_models.unet), [{0: "batch"}], [(1, 1, 16, 16), (3, 1, 16, 16)],
                    ["batch", 1, 16, 16]),
           "vit": (torch_models.vit, [{0: "batch"}], [(1, 3, 16, 16), (3, 3, 16, 16)], ["batch", 3, 16, 16]),
           "indexing": (indexing, [{0: "batch"}], [(2, 4, 5), (6, 4, 5)], ["batch", 4, 5])}


@pytest.mark.parametrize("name", sorted(DYNAMIC))
@pytest.mark.parametrize("optimize", [False, True])
def test_dynamic_shapes_export_once_and_run_at_other_sizes(name, optimize, tmp_path):
    factory, dynamic_shapes, shapes, input_dims = DYNAMIC[name]
    model, args = factory()
    onx = xexp.to_onnx(model, args, dynamic_shapes=dynamic_shapes, optimize=optimize)
    assert all(dims(i) == input_dims for i in onx.graph.input)
    assert dims(onx.graph.output[0])[0] == "batch"
    if name == "attention":
        assert dims(onx.graph.output[0]) == ["batch", "seq", 16] and dims(onx.graph.output[1]) == ["batch", "seq"]
    for k, shape in enumerate(shapes):
        inputs = inputs_like(args, shape)
        assert_outputs_match(onx, inputs, torch_outputs(model, inputs), tmp_path / str(k))


def test_a_dynamic_batch_leaves_the_optimized_llama_fused_as_the_static_one():
    """Each size is computed once and the flattened products come back whole: the attention and rotary
    rules still fuse, the shape arithmetic for GroupQueryAttention's lengths is all that is added."""
    model, args = torch_models.llama()
    static = xexp.to_onnx(model, args)
    dynamic = xexp.to_onnx(model, args, dynamic_shapes={"input_ids": {0: "batch"}})
    assert histogram(dynamic)["GroupQueryAttention"] == histogram(static)["GroupQueryAttention"] == 2
    assert histogram(dynamic)["RotaryEmbedding"] == histogram(static)["RotaryEmbedding"] == 4
    assert len(dynamic.graph.node) <= len(static.graph.node) + 3


def test_a_dynamic_sequence_leaves_the_optimized_llama_fused_as_the_static_one(tmp_path):
    """With the sequence dynamic too, the causal mask is Trilu(ConstantOfShape((seq, seq), -inf)) and cos
    and sin are computed from Range(0, float(seq)): the attention reads the triangle as causal and the
    rotations read the computed angles, so the same fused nodes come out, with torch's outputs."""
    model, args = torch_models.llama()
    static = xexp.to_onnx(model, args)
    dynamic = xexp.to_onnx(model, args, dynamic_shapes={"input_ids": {0: "batch", 1: "seq"}})
    assert histogram(dynamic)["GroupQueryAttention"] == histogram(static)["GroupQueryAttention"] == 2
    assert histogram(dynamic)["RotaryEmbedding"] == histogram(static)["RotaryEmbedding"] == 4
    for op in ("Trilu", "ConstantOfShape", "Softmax", "Neg"):
        assert histogram(dynamic)[op] == 0, op
    for k, shape in enumerate([(3, 7), (1, 12)]):
        inputs = inputs_like(args, shape)
        assert_outputs_match(dynamic, inputs, torch_outputs(model, inputs), tmp_path / str(k))


class BranchOnBatch(torch.nn.Module):
    def forward(self, x):
        return x * 2 if x.shape[0] == 4 else x


class InPlaceOnInput(torch.nn.Module):
    def forward(self, x):
        return x.add_(1) * 2


class Variance(torch.nn.Module):
    def forward(self, x):
        return x.var(dim=-1)


def test_dynamic_shapes_that_would_bind_the_graph_to_the_traced_size_are_refused():
    mlp, _ = torch_models.mlp()
    batch = {"x": {0: "batch"}}
    with pytest.raises(xexp.Error, match="'batch' .dimension 0 of 'x'. was traced at size 1"):
        xexp.to_onnx(mlp, (torch.randn(1, 10),), dynamic_shapes=batch)
    with pytest.raises(xexp.Error, match="fixed dynamic dimension 'batch' .dimension 0 of 'x'. at 4"):
        xexp.to_onnx(BranchOnBatch(), (torch.randn(4, 3),), dynamic_shapes=batch)
    with pytest.raises(xexp.Error, match="compared dynamic sizes, Eq.batch, 4. being False"):
        xexp.to_onnx(BranchOnBatch(), (torch.randn(3, 3),), dynamic_shapes=batch)
    with pytest.raises(xexp.Error, match="aten::var in module .*: the input shape .batch,3. is not static"):
        xexp.to_onnx(torch.nn.Sequential(Variance()), (torch.randn(4, 3),), dynamic_shapes=[{0: "batch"}])
    with pytest.raises(xexp.Error, match="aten::add_ .node 'add_'.: updates its input in place"):
        xexp.to_onnx(InPlaceOnInput(), (torch.randn(4, 3),), dynamic_shapes=batch)
    with pytest.raises(xexp.Error, match="the LSTM's sequence dimension cannot be dynamic with torch 1"):
        xexp.to_onnx(*torch_models.lstm(), dynamic_shapes=[{0: "batch", 1: "seq"}])
    # 1.13's symbolic shapes give up on the sizes two poolings compute (sympy recurses without end).
    with pytest.raises(xexp.Error, match="could not trace the model with symbolic sizes .* RecursionError"):
        xexp.to_onnx(*traced_at_batch_2(torch_models.unet)(), dynamic_shapes=[{2: "height", 3: "width"}])


def test_torch_exports_module_stacks_read_as_the_hooks_record_them():
    """torch.export's nn_module_stack (torch >= 2.2, not installed here) in both spellings of its paths,
    read by the function the torch.export capture uses."""
    from xexp import _capture

    graph = torch.fx.Graph()
    node = graph.call_function(torch.ops.aten.relu.default, (graph.placeholder("x"),))
    for root, path in (("L['self']", "L['self'].layers[0].mlp"), ("", "layers.0.mlp")):
        node.meta["nn_module_stack"] = {"L__self__": (root, torch_models.LLM),
                                        "L__self___layers_0_mlp": (path, "torch_models.FeedForward")}
        assert _capture._export_module_stack(node) == (("layers.0.mlp", "torch_models.FeedForward"),)
    del node.meta["nn_module_stack"]
    assert _capture._export_module_stack(node) == ()


class MultiIndex(torch.nn.Module):
    def forward(self, x, i, j):
        return x[i, j], x[:, i, j], x[i, :, j], x[:, :, j]


def test_several_index_tensors_broadcast_and_land_where_torch_puts_them(tmp_path):
    torch.manual_seed(0)
    args = (torch.randn(4, 5, 6), torch.tensor([[0], [3]]), torch.tensor([1, -1, 2]))
    model = MultiIndex()
    onx = xexp.to_onnx(model, args, optimize=False)
    assert histogram(onx)["GatherND"] == 3 and histogram(onx)["Gather"] == 1
    expected = torch_outputs(model, args)
    assert [e.shape for e in expected] == [(2, 3, 6), (4, 2, 3), (2, 3, 5), (4, 5, 3)]
    assert_outputs_match(onx, args, expected, tmp_path)


def sdpa_model(q_shape, k_shape, mask=None, **attributes):
    """An aten-domain model of one scaled_dot_product_attention call (torch 1.13 lacks the op)."""
    f = onnx.TensorProto.FLOAT
    inputs = [onnx.helper.make_tensor_value_info(n, f, s) for n, s in (("q", q_shape), ("k", k_shape), ("v", k_shape))]
    if mask is not None:
        inputs.append(onnx.helper.make_tensor_value_info("mask", mask, [q_shape[-2], k_shape[-2]]))
    out = onnx.helper.make_tensor_value_info("attn", f, q_shape)
    node = onnx.helper.make_node("scaled_dot_product_attention", [i.name for i in inputs], ["attn"], domain="aten",
                                 **attributes)
    graph = onnx.helper.make_graph([node], "sdpa", inputs, [out], value_info=[out])
    aten = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("aten", 1)])
    data, _ = xexp._xexp.lower_aten(aten.SerializeToString(), 18, False, 0, [], "", 0, "")
    return onnx.ModelProto.FromString(data)


@pytest.mark.parametrize("case", ["float_mask", "bool_mask", "causal_with_scale"])
def test_scaled_dot_product_attention_computes_torchs_formula(case, tmp_path):
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 6 if case != "causal_with_scale" else 5, 8), None
    v = torch.randn(k.shape)
    scale, args = 8 ** -0.5, (q, k, v)
    if case == "float_mask":
        mask = torch.randn(5, 6)
        onx, additive = sdpa_model(list(q.shape), list(k.shape), onnx.TensorProto.FLOAT), mask
        args += (mask,)
    elif case == "bool_mask":
        mask = torch.rand(5, 6) > 0.3
        mask[:, 0] = True  # no row fully masked
        onx, additive = sdpa_model(list(q.shape), list(k.shape), onnx.TensorProto.BOOL), \
            torch.zeros(5, 6).masked_fill(~mask, float("-inf"))
        args += (mask,)
    else:
        scale = 0.3
        onx = sdpa_model(list(q.shape), list(k.shape), is_causal=1, scale=scale)
        additive = torch.zeros(5, 5).masked_fill(~torch.ones(5, 5, dtype=torch.bool).tril(), float("-inf"))
    expected = torch.softmax(q @ k.transpose(-1, -2) * scale + additive, dim=-1) @ v
    assert {"MatMul", "Softmax"} <= set(histogram(onx))
    assert_outputs_match(onx, args, [expected.numpy()], tmp_path)


def test_scaled_dot_product_attention_with_dropout_is_refused():
    with pytest.raises(xexp.Error, match="aten::scaled_dot_product_attention: dropout_p is not 0"):
        sdpa_model([1, 2, 3, 4], [1, 2, 3, 4], dropout_p=0.1)
