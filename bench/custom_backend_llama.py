"""The seed's custom-backend table (shared/seeds/003_*): a small Llama run in eager mode, then through
xexp.torch's compile backend with each pattern set, timed per iteration, with the number of nodes of the
exported graph after each set and how many of them are fused kernels (nodes of a domain other than ONNX's
that are not local functions, com.microsoft's for onnxruntime's sets).
Not run by the tests: timings are not assertions.

    PYTHONPATH=build/rel/python /usr/bin/python3 bench/custom_backend_llama.py
    PYTHONPATH=build/rel/python /usr/bin/python3 bench/custom_backend_llama.py --layers 2 --seq 64 --runtime onnxruntime

On torch >= 2 the backend goes through torch.compile(model, backend=...), on torch 1.13 through
functorch.compile.aot_module (xexp.torch.compile chooses).
"""
import argparse
import os
import sys
import time

import torch

import xexp
import xexp.torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from torch_models import Llama  # noqa: E402

SETS = ["default", "default+onnxruntime", "default+onnxruntime+onnxruntime_approx"]


def per_iteration(function, inputs, warmup, repeat):
    with torch.no_grad():
        for _ in range(warmup):
            function(*inputs)
        begin = time.perf_counter()
        for _ in range(repeat):
            function(*inputs)
    return (time.perf_counter() - begin) / repeat


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--vocab", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--runtime", default="xexp", choices=xexp.torch.RUNTIMES)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = Llama(vocab=args.vocab, dim=args.dim, heads=8, kv_heads=4, hidden=args.hidden, layers=args.layers).eval()
    inputs = (torch.randint(0, args.vocab, (args.batch, args.seq)),)
    with torch.no_grad():
        expected = model(*inputs)

    baseline = per_iteration(model, inputs, args.warmup, args.repeat)
    rows = [("eager", baseline, None, None, None, None)]
    for patterns in SETS:
        compiled = xexp.torch.compile(model, patterns=patterns, runtime=args.runtime)
        try:
            with torch.no_grad():
                got = compiled(*inputs)
            error = float((got - expected).abs().max())
            d = per_iteration(compiled, inputs, args.warmup, args.repeat)
        except Exception as e:  # a set whose fused kernels the runtime lacks
            print(f"{patterns}: {type(e).__name__}: {e}", file=sys.stderr)
            rows.append((patterns, None, None, None, None, None))
            continue
        report = compiled.xexp_backend.models[-1]["report"]
        onx = compiled.xexp_backend.models[-1]["onnx"]
        functions = {(f.domain, f.name) for f in onx.functions}  # intermediate blocks, not kernels
        fused = sum(1 for n in onx.graph.node if n.domain not in ("", "ai.onnx") and (n.domain, n.op_type) not in functions)
        rows.append((patterns, d, report["nodes_after"], fused, error, baseline / d))

    print(f"Llama: {args.layers} layer(s), dim {args.dim}, hidden {args.hidden}, vocab {args.vocab}, "
          f"input {args.batch}x{args.seq}, runtime {args.runtime}, torch {torch.__version__}, "
          f"{args.repeat} iterations after {args.warmup}")
    print(f"{'patterns':42} {'avg_time':>10} {'nodes':>6} {'fused':>6} {'max_err':>9} {'speedup':>8}")
    for name, d, nodes, fused, error, speedup in rows:
        cells = [f"{d:10.5f}" if d is not None else f"{'failed':>10}",
                 f"{nodes:6d}" if nodes is not None else f"{'':6}",
                 f"{fused:6d}" if fused is not None else f"{'':6}",
                 f"{error:9.2g}" if error is not None else f"{'':9}",
                 f"{speedup:8.3f}" if speedup is not None else f"{'':8}"]
        print(f"{name:42} " + " ".join(cells))


if __name__ == "__main__":
    main()
