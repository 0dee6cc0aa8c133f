"""Export time of xexp.to_onnx against torch.onnx.export on the same 32-layer decoder (gen_decoder.py's
model), as a ratio measured in one run; the issue's goal is at most 0.5. Both export at the same opset;
to_onnx runs with and without its optimizer (torch.onnx.export does not optimize). Node counts are
printed too, torch's export once more after `xexp.optimize`: to_onnx should have no more nodes.

    PYTHONPATH=build/rel/python /usr/bin/python3 bench/to_onnx_vs_torch.py --layers 32
"""
import argparse
import io
import os
import sys
import time

import onnx
import torch

import xexp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_decoder import Decoder  # noqa: E402


def best_of(repeat, export):
    """The fastest of `repeat` runs (seconds) and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = export()
        best = min(best, time.perf_counter() - start)
    return best, result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Decoder(args.layers).eval()
    ids = torch.randint(0, 1024, (1, 30), dtype=torch.int64)

    def torch_export():
        buffer = io.BytesIO()
        torch.onnx.export(model, (ids,), buffer, opset_version=args.opset, input_names=["input_ids"])
        return onnx.load_from_string(buffer.getvalue())

    baseline, torch_model = best_of(args.repeat, torch_export)
    plain, plain_model = best_of(args.repeat, lambda: xexp.to_onnx(model, (ids,), target_opset=args.opset, optimize=False))
    full, full_model = best_of(args.repeat, lambda: xexp.to_onnx(model, (ids,), target_opset=args.opset))
    print(f"decoder, {args.layers} layers, opset {args.opset}, best of {args.repeat}")
    print(f"torch.onnx.export            {baseline:8.3f} s  {len(torch_model.graph.node):6d} nodes  ratio 1")
    print(f"xexp.to_onnx(optimize=False) {plain:8.3f} s  {len(plain_model.graph.node):6d} nodes  ratio {plain / baseline:.2f}")
    print(f"xexp.to_onnx                 {full:8.3f} s  {len(full_model.graph.node):6d} nodes  ratio {full / baseline:.2f}")
    print(f"torch.onnx.export, then xexp.optimize      {len(xexp.optimize(torch_model).graph.node):6d} nodes")


if __name__ == "__main__":
    main()
