#!/usr/bin/python3
"""Structure-aware mutants of real ONNX models, for robustness checks of the xexp CLI (issue 11).

    /usr/bin/python3 scripts/hostile_mutants.py OUT_DIR [--per-model N] [--seed S] MODEL.onnx ...

Each mutant breaks one rule a well-formed model follows (an op type swapped, an input renamed to nothing,
a node dropped, an initializer whose dims lie about its data, truncated raw data, scrambled attributes,
nonsense opsets, STRING with raw data, a cycle, hostile external data, recursive local functions, deeply
nested subgraphs, overflowing dims...). scripts/hostile_run.sh runs the CLI on every mutant. A dev-time tool:
nothing in the library or the tests needs python.
"""
import argparse
import copy
import os
import random
import sys

import onnx
from onnx import TensorProto, helper

OPS = ["LayerNormalization", "Gemm", "Conv", "If", "Loop", "Scan", "Reshape", "Gather", "Split", "Concat",
       "Transpose", "MatMul", "Softmax", "Slice", "Expand", "Cast", "Constant", "Squeeze", "Unsqueeze",
       "SequenceAt", "Resize", "TopK", "Range", "NoSuchOp", "Attention", "BatchNormalization", "Einsum"]
INT_EXTREMES = [0, -1, 1, 2**31 - 1, -2**31, 2**62, 2**63 - 1, -2**63, 7, -7]


def int_extreme(rng):
    return rng.choice(INT_EXTREMES)


def all_nodes(graph):
    """Nodes of the graph and its subgraphs, with the graph holding them."""
    stack = [graph]
    out = []
    while stack:
        g = stack.pop()
        for n in g.node:
            out.append((g, n))
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    stack.append(a.g)
                for sub in a.graphs:
                    stack.append(sub)
    return out


def all_initializers(graph):
    return [(g, t) for g in {id(g): g for g, _ in all_nodes(graph)}.values() for t in g.initializer] + \
        [(graph, t) for t in graph.initializer]


def pick_node(m, rng):
    nodes = all_nodes(m.graph)
    return rng.choice(nodes) if nodes else (None, None)


def pick_init(m, rng):
    inits = list(m.graph.initializer)
    for g, n in all_nodes(m.graph):
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                inits.append(a.t)
    return rng.choice(inits) if inits else None


# ---- mutations: each changes m in place; returns False when it does not apply ----

def op_swap(m, rng):
    _, n = pick_node(m, rng)
    if n is None:
        return False
    n.op_type = rng.choice(OPS)
    return True


def input_to_nothing(m, rng):
    _, n = pick_node(m, rng)
    if n is None or not n.input:
        return False
    n.input[rng.randrange(len(n.input))] = rng.choice(["", "", "no_such_value"])
    return True


def output_to_nothing(m, rng):
    _, n = pick_node(m, rng)
    if n is None or not n.output:
        return False
    n.output[rng.randrange(len(n.output))] = rng.choice(["", m.graph.input[0].name if m.graph.input else ""])
    return True


def drop_node(m, rng):
    g, n = pick_node(m, rng)
    if n is None:
        return False
    g.node.remove(n)
    return True


def dims_lie(m, rng):
    t = pick_init(m, rng)
    if t is None:
        return False
    choice = rng.randrange(4)
    if choice == 0:
        t.dims.append(rng.choice([2, 3, 1000]))
    elif choice == 1 and t.dims:
        t.dims[rng.randrange(len(t.dims))] = rng.choice([0, -1, -5, 2**31, 2**40])
    elif choice == 2:
        del t.dims[:]
        t.dims.extend([2**32, 2**32, 4])
    else:
        del t.dims[:]
        t.dims.extend([2**62, 4])
    return True


def truncate_raw(m, rng):
    t = pick_init(m, rng)
    if t is None:
        return False
    if t.raw_data:
        t.raw_data = t.raw_data[: rng.randrange(len(t.raw_data))]
    elif t.float_data:
        del t.float_data[len(t.float_data) // 2:]
    elif t.int64_data:
        del t.int64_data[len(t.int64_data) // 2:]
    elif t.int32_data:
        del t.int32_data[len(t.int32_data) // 2:]
    else:
        t.raw_data = b"\x01"
    return True


def scramble_attributes(m, rng):
    _, n = pick_node(m, rng)
    if n is None:
        return False
    if not n.attribute or rng.random() < 0.3:
        for name in ["axis", "axes", "perm", "to", "kernel_shape", "pads", "strides", "group", "epsilon",
                     "keepdims", "mode", "split", "num_outputs", "body", "then_branch", "value"]:
            if rng.random() < 0.3:
                a = n.attribute.add()
                a.name = name
                kind = rng.randrange(4)
                if kind == 0:
                    a.type = onnx.AttributeProto.INT
                    a.i = int_extreme(rng)
                elif kind == 1:
                    a.type = onnx.AttributeProto.INTS
                    a.ints.extend([int_extreme(rng) for _ in range(rng.randrange(6))])
                elif kind == 2:
                    a.type = onnx.AttributeProto.STRING
                    a.s = b"\xff garbage"
                else:
                    a.type = onnx.AttributeProto.FLOAT
                    a.f = float("nan")
        return True
    a = rng.choice(n.attribute)
    kind = rng.randrange(7)
    if kind == 0:
        a.type = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 99])
    elif kind == 1:
        a.i = int_extreme(rng)
        a.ints.extend([int_extreme(rng) for _ in range(rng.randrange(5))])
    elif kind == 2:
        del a.ints[:]
        del a.floats[:]
    elif kind == 3:
        n.attribute.remove(a)
    elif kind == 4:
        a.ref_attr_name = "nowhere"
    elif kind == 5:
        a.type = onnx.AttributeProto.TENSOR
        a.t.Clear()
        a.t.data_type = TensorProto.FLOAT
        a.t.dims.append(2**40)
    else:
        a.type = onnx.AttributeProto.GRAPH
        a.g.CopyFrom(helper.make_graph([], "empty", [], []))
    return True


def nonsense_opset(m, rng):
    choice = rng.randrange(5)
    if choice == 0:
        for o in m.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = 1
    elif choice == 1:
        for o in m.opset_import:
            o.version = rng.choice([0, -3, 999, 2**40])
    elif choice == 2:
        del m.opset_import[:]
    elif choice == 3:
        m.opset_import.add(domain="ai.onnx.ml", version=99)
        _, n = pick_node(m, rng)
        if n is not None:
            n.domain = rng.choice(["ai.onnx.ml", "com.microsoft", "unknown.domain"])
    else:
        for o in m.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = 1
        _, n = pick_node(m, rng)
        if n is not None:
            n.op_type = "LayerNormalization"
    return True


def string_with_raw(m, rng):
    t = pick_init(m, rng)
    if t is None:
        return False
    if not t.raw_data:
        t.raw_data = b"abcdefgh"
    t.data_type = TensorProto.STRING
    return True


def bad_data_type(m, rng):
    t = pick_init(m, rng)
    choice = rng.randrange(3)
    if choice == 0 and t is not None:
        t.data_type = rng.choice([0, 99, -1, 21, 17, TensorProto.COMPLEX128])
        return True
    vis = list(m.graph.input) + list(m.graph.output)
    if not vis:
        return False
    vi = rng.choice(vis)
    if choice == 1:
        vi.type.tensor_type.elem_type = rng.choice([0, 8, 99, 16, 17])
    else:
        shape = vi.type.tensor_type.shape
        del shape.dim[:]
        for d in rng.choice([[2**40, 2**40], [-1, 3], [2**63 - 1], [0, 2**62]]):
            shape.dim.add().dim_value = d
    return True


def byte_size_mismatch(m, rng):
    t = pick_init(m, rng)
    if t is None:
        return False
    if rng.random() < 0.5:
        t.ClearField("raw_data")
        del t.float_data[:]
        t.float_data.extend([1.0] * rng.randrange(1, 7))
        t.data_type = rng.choice([TensorProto.FLOAT, TensorProto.INT64, TensorProto.FLOAT16, 22])
    else:
        t.raw_data = t.raw_data + b"\x00" * rng.randrange(1, 9)
    return True


def cycle(m, rng):
    nodes = [n for n in m.graph.node if n.input and n.output]
    if len(nodes) < 2:
        return False
    k = rng.randrange(len(nodes) - 1)
    j = rng.randrange(k + 1, len(nodes))
    nodes[k].input[0] = nodes[j].output[0]
    if rng.random() < 0.3:
        nodes[k].input[0] = nodes[k].output[0]  # a self loop
    return True


def hostile_external(m, rng):
    t = pick_init(m, rng)
    if t is None:
        return False
    t.ClearField("raw_data")
    del t.float_data[:]
    del t.int64_data[:]
    del t.int32_data[:]
    t.data_location = TensorProto.EXTERNAL
    del t.external_data[:]
    location = rng.choice(["../../etc/passwd", "/dev/zero", "/etc/passwd", "/proc/self/mem", ".", "..",
                           "a/../../b", "sub/../../../etc/hostname", "", "x\x00y", "../" * 12 + "dev/urandom"])
    t.external_data.add(key="location", value=location)
    if rng.random() < 0.5:
        t.external_data.add(key="offset", value=rng.choice(["0", "18446744073709551615", "-1", "12abc"]))
    if rng.random() < 0.5:
        t.external_data.add(key="length", value=rng.choice(["4", "99999999999999", "0"]))
    return True


def recursive_function(m, rng):
    """A local function calling itself (or two calling each other), called from the main graph."""
    x = m.graph.input[0].name if m.graph.input else None
    if x is None:
        return False
    mutual = rng.random() < 0.5
    f = helper.make_function("local", "f", ["x"], ["y"], [helper.make_node("g" if mutual else "f", ["x"], ["y"], domain="local")],
                             [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    m.functions.append(f)
    if mutual:
        m.functions.append(helper.make_function("local", "g", ["x"], ["y"], [helper.make_node("f", ["x"], ["y"], domain="local")],
                                                [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]))
    m.opset_import.add(domain="local", version=1)
    m.graph.node.append(helper.make_node("f", [x], ["recursive_out"], domain="local"))
    m.graph.output.add().name = "recursive_out"
    return True


def nested_subgraphs(m, rng):
    """An If whose then_branch holds an If ... hundreds deep."""
    depth = rng.choice([30, 200, 600])
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    inner = helper.make_graph([helper.make_node("Constant", [], ["v0"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))],
                              "leaf", [], [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])])
    leaf = inner
    for k in range(depth):
        node = helper.make_node("If", ["c"], [f"v{k + 1}"], then_branch=inner, else_branch=leaf)
        inner = helper.make_graph([node], f"level{k}", [], [helper.make_tensor_value_info(f"v{k + 1}", TensorProto.FLOAT, [1])])
    m.graph.input.append(cond)
    m.graph.node.extend(inner.node)
    m.graph.output.append(inner.output[0])
    return True


def function_bad_body(m, rng):
    """A function whose body reads an undefined name, or has no outputs, or calls an unknown function."""
    x = m.graph.input[0].name if m.graph.input else None
    if x is None:
        return False
    kind = rng.randrange(3)
    body = [helper.make_node("Relu", ["nope" if kind == 0 else "x"], ["y"])]
    if kind == 2:
        body = [helper.make_node("missing", ["x"], ["y"], domain="local")]
    f = helper.make_function("local", "h", ["x"], ["y"] if kind != 1 else ["z"], body,
                             [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    m.functions.append(f)
    m.opset_import.add(domain="local", version=1)
    m.graph.node.append(helper.make_node("h", [x], ["h_out"], domain="local"))
    m.graph.output.add().name = "h_out"
    return True


def many_outputs(m, rng):
    _, n = pick_node(m, rng)
    if n is None:
        return False
    choice = rng.randrange(3)
    if choice == 0:
        del n.output[:]
    elif choice == 1:
        n.output.extend([f"extra_{k}" for k in range(5)])
    else:
        del n.input[:]
    return True


MUTATIONS = [op_swap, input_to_nothing, output_to_nothing, drop_node, dims_lie, truncate_raw, scramble_attributes,
             nonsense_opset, string_with_raw, bad_data_type, byte_size_mismatch, cycle, hostile_external,
             recursive_function, nested_subgraphs, function_bad_body, many_outputs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--per-model", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    count = 0
    for path in args.models:
        base = onnx.load(path, load_external_data=False)
        stem = os.path.basename(os.path.dirname(path)) if os.path.basename(path) == "model.onnx" else \
            os.path.splitext(os.path.basename(path))[0]
        for k in range(args.per_model):
            rng = random.Random(f"{args.seed}/{stem}/{k}")
            m = copy.deepcopy(base)
            applied = []
            for _ in range(rng.choice([1, 1, 1, 2, 3])):
                mutation = rng.choice(MUTATIONS)
                if mutation(m, rng):
                    applied.append(mutation.__name__)
            if not applied:
                continue
            name = f"{stem}__{k:03d}__{'+'.join(applied)}.onnx"
            with open(os.path.join(args.out, name), "wb") as f:
                f.write(m.SerializeToString())
            count += 1
    print(f"{count} mutants in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
