"""A decoder-like model whose float weights (about 2.4 GB by default) live in external data, as LLM exports
ship, and a check that a model xexp wrote keeps those weights bit-identical.

Dev-time fixture for bench/big_model.sh (never committed, never used by the tests):
    /usr/bin/python3 bench/gen_big_external.py make /tmp/xexp_big            # writes model.onnx + model.onnx.data
    /usr/bin/python3 bench/gen_big_external.py check /tmp/xexp_big/model.onnx OUT.onnx

The graph is a Llama-like stack: embedding Gather, per layer an RMSNorm written out in primitive ops,
q/k/v/o projections with multi-head attention, a SiLU-gated MLP, and an lm_head read through
Transpose(W) so that constant folding creates a new large tensor (it must go to external data too).
Weights are written tensor by tensor, never all in memory.
"""
import argparse
import hashlib
import mmap
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DATA_NAME = "model.onnx.data"


class ExternalWriter:
    def __init__(self, path):
        self.file = open(path, "wb")
        self.offset = 0
        self.rng = np.random.default_rng(0)

    def tensor(self, name, shape):
        values = (self.rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)
        data = values.tobytes()
        self.file.write(data)
        t = TensorProto()
        t.name = name
        t.data_type = TensorProto.FLOAT
        t.dims.extend(shape)
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", DATA_NAME), ("offset", str(self.offset)), ("length", str(len(data)))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        self.offset += len(data)
        return t


def make(folder, layers, dim, ff, vocab, heads):
    os.makedirs(folder, exist_ok=True)
    w = ExternalWriter(os.path.join(folder, DATA_NAME))
    inits, nodes = [], []
    head_dim = dim // heads

    def const(name, values, dtype=np.int64):
        inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def node(op, inputs, outputs, **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0], **attrs))
        return outputs[0]

    const("eps", 1e-6, np.float32)
    const("two", 2.0, np.float32)
    const("scale", 1.0 / np.sqrt(head_dim), np.float32)
    const("heads_shape", [0, 0, heads, head_dim])
    const("merged_shape", [0, 0, dim])

    def rms_norm(x, prefix):
        inits.append(w.tensor(prefix + ".weight", [dim]))
        p = node("Pow", [x, "two"], [prefix + "/pow"])
        m = node("ReduceMean", [p], [prefix + "/mean"], axes=[-1], keepdims=1)
        a = node("Add", [m, "eps"], [prefix + "/add"])
        s = node("Sqrt", [a], [prefix + "/sqrt"])
        d = node("Div", [x, s], [prefix + "/div"])
        return node("Mul", [d, prefix + ".weight"], [prefix + "/out"])

    def linear(x, prefix, n_in, n_out):
        inits.append(w.tensor(prefix + ".weight", [n_in, n_out]))
        return node("MatMul", [x, prefix + ".weight"], [prefix + "/out"])

    inits.append(w.tensor("embed.weight", [vocab, dim]))
    x = node("Gather", ["embed.weight", "input_ids"], ["embed/out"])
    for k in range(layers):
        p = f"layers.{k}"
        n = rms_norm(x, p + ".input_norm")
        q, kk, v = (linear(n, f"{p}.attn.{c}_proj", dim, dim) for c in "qkv")
        qh, kh, vh = (
            node("Transpose", [node("Reshape", [t, "heads_shape"], [t + "/heads"])], [t + "/bhsd"], perm=[0, 2, 1, 3])
            for t in (q, kk, v)
        )
        kt = node("Transpose", [kh], [kh + "T"], perm=[0, 1, 3, 2])
        scores = node("Mul", [node("MatMul", [qh, kt], [p + ".attn/qk"]), "scale"], [p + ".attn/scores"])
        probs = node("Softmax", [scores], [p + ".attn/probs"], axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, vh], [p + ".attn/ctx"])], [p + ".attn/bshd"], perm=[0, 2, 1, 3])
        merged = node("Reshape", [ctx, "merged_shape"], [p + ".attn/merged"])
        x = node("Add", [x, linear(merged, p + ".attn.o_proj", dim, dim)], [p + "/residual1"])
        n = rms_norm(x, p + ".post_norm")
        gate = linear(n, p + ".mlp.gate_proj", dim, ff)
        silu = node("Mul", [gate, node("Sigmoid", [gate], [gate + "/sigmoid"])], [p + ".mlp/silu"])
        up = linear(n, p + ".mlp.up_proj", dim, ff)
        down = linear(node("Mul", [silu, up], [p + ".mlp/gated"]), p + ".mlp.down_proj", ff, dim)
        x = node("Add", [x, down], [p + "/residual2"])
    n = rms_norm(x, "norm")
    inits.append(w.tensor("lm_head.weight", [vocab, dim]))  # stored [vocab, dim] as torch keeps it
    head = node("Transpose", ["lm_head.weight"], ["lm_head.weightT"], perm=[1, 0])
    node("MatMul", [n, head], ["logits"])
    w.file.close()

    graph = helper.make_graph(
        nodes,
        "big_decoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", vocab])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="gen_big_external")
    model.ir_version = 8
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    print(f"{folder}/model.onnx: {len(nodes)} nodes, {w.offset / 1e9:.3f} GB of weights in {DATA_NAME}")


def tensor_digests(path):
    """name -> sha256 of the tensor's bytes (external or inline), read through mmap."""
    model = onnx.load(path, load_external_data=False)
    folder = os.path.dirname(os.path.abspath(path))
    maps, out = {}, {}
    tensors = list(model.graph.initializer)
    tensors += [a.t for n in model.graph.node for a in n.attribute if a.type == onnx.AttributeProto.TENSOR]
    for t in tensors:
        if t.data_location == TensorProto.EXTERNAL:
            info = {e.key: e.value for e in t.external_data}
            location = info["location"]
            if location not in maps:
                with open(os.path.join(folder, location), "rb") as f:
                    maps[location] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            offset = int(info.get("offset", 0))
            length = int(info.get("length", len(maps[location]) - offset))
            data = maps[location][offset : offset + length]
        else:
            data = numpy_helper.to_array(t).tobytes()
        out[t.name] = (hashlib.sha256(data).hexdigest(), len(data), t.data_location == TensorProto.EXTERNAL)
    return out


def check(original, written):
    """Every weight of `original` that `written` still has by name is bit-identical; lists the new ones."""
    before, after = tensor_digests(original), tensor_digests(written)
    same = [n for n in before if n in after and after[n][0] == before[n][0]]
    changed = [n for n in before if n in after and after[n][0] != before[n][0]]
    big_inline = [n for n, (_, size, external) in after.items() if size >= 1 << 20 and not external]
    kept = sum(before[n][1] for n in same)
    print(f"{written}: {len(same)} weights bit-identical ({kept / 1e9:.3f} GB), {len(changed)} changed, "
          f"{len(before) - len(same) - len(changed)} gone, {len(set(after) - set(before))} new, "
          f"{len(big_inline)} tensors >= 1 MB inline")
    return not changed and not big_inline


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("folder")
    m.add_argument("--layers", type=int, default=9)
    m.add_argument("--dim", type=int, default=2048)
    m.add_argument("--ff", type=int, default=5632)
    m.add_argument("--vocab", type=int, default=32000)
    m.add_argument("--heads", type=int, default=16)
    c = sub.add_parser("check")
    c.add_argument("original")
    c.add_argument("written")
    args = parser.parse_args()
    if args.command == "make":
        make(args.folder, args.layers, args.dim, args.ff, args.vocab, args.heads)
    else:
        sys.exit(0 if check(args.original, args.written) else 1)
