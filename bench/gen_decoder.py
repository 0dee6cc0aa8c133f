"""Exports a stack of L decoder layers (the LLM of experimental-experiment's tutorial "LLM from scratch with
Pytorch", deeper) with torch's TorchScript exporter.

Dev-time fixture generator for the optimizer benchmarks: the generated files are not committed.
    /usr/bin/python3 bench/gen_decoder.py --layers 32 --out /tmp/xexp_bench/decoder_L32.onnx
"""
import argparse
import os
import sys

import torch

# The attention head of the seeds' demo LLM, as the tests write it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from torch_models import AttentionBlock  # noqa: E402


class DecoderLayer(torch.nn.Module):
    def __init__(self, dim, heads, context, ff):
        super().__init__()
        self.heads = torch.nn.ModuleList([AttentionBlock(dim, context) for _ in range(heads)])
        self.proj = torch.nn.Linear(dim * heads, dim)
        self.ff = torch.nn.Sequential(torch.nn.Linear(dim, ff), torch.nn.ReLU(), torch.nn.Linear(ff, dim))
        self.norm_1 = torch.nn.LayerNorm(dim)
        self.norm_2 = torch.nn.LayerNorm(dim)

    def forward(self, x):
        n = self.norm_1(x)
        x = self.proj(torch.cat([h(n) for h in self.heads], dim=-1)) + x
        return self.ff(self.norm_2(x)) + x


class Decoder(torch.nn.Module):
    def __init__(self, layers, vocab=1024, dim=64, heads=2, context=256, ff=256):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab, dim)
        self.pe = torch.nn.Embedding(vocab, dim)
        self.layers = torch.nn.ModuleList([DecoderLayer(dim, heads, context, ff) for _ in range(layers)])

    def forward(self, ids):
        x = self.embedding(ids) + self.pe(ids)
        for layer in self.layers:
            x = layer(x)
        return x


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Decoder(args.layers).eval()
    ids = torch.randint(0, 1024, (1, 30), dtype=torch.int64)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    torch.onnx.export(model, (ids,), args.out, opset_version=args.opset, do_constant_folding=False,
                      input_names=["input_ids"], output_names=["output"])


if __name__ == "__main__":
    main()
