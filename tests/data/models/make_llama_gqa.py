"""Exports one Llama block with grouped-query attention (4 query heads sharing 2 key/value heads, repeated
with HF's repeat_kv: x[:, :, None].expand(...).reshape(...)) with torch's TorchScript exporter, as users
export it: static at opset 17 (constant folding on) and with dynamic axes at opset 14. Also writes the
input ids and torch's logits, raw little-endian, and NAME.json naming them, as ../shared/models does.

Dev-time fixture generator; its outputs are committed (tests read them, Python is not needed to test):
    /usr/bin/python3 tests/data/models/make_llama_gqa.py tests/data/models
"""
import json
import os
import sys

import torch

VOCAB, HIDDEN, HEADS, KV_HEADS, FF, BATCH, SEQ = 1000, 64, 4, 2, 128, 2, 16
HEAD = HIDDEN // HEADS


class RMSNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(HIDDEN))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


def rotate_half(x):
    return torch.cat((-x[..., HEAD // 2:], x[..., :HEAD // 2]), dim=-1)


def repeat_kv(x, n_rep):
    b, kv, s, d = x.shape
    return x[:, :, None, :, :].expand(b, kv, n_rep, s, d).reshape(b, kv * n_rep, s, d)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, HIDDEN)
        self.norm_1, self.norm_2, self.norm_3 = RMSNorm(), RMSNorm(), RMSNorm()
        self.q = torch.nn.Linear(HIDDEN, HEADS * HEAD, bias=False)
        self.k = torch.nn.Linear(HIDDEN, KV_HEADS * HEAD, bias=False)
        self.v = torch.nn.Linear(HIDDEN, KV_HEADS * HEAD, bias=False)
        self.o = torch.nn.Linear(HEADS * HEAD, HIDDEN, bias=False)
        self.gate = torch.nn.Linear(HIDDEN, FF, bias=False)
        self.up = torch.nn.Linear(HIDDEN, FF, bias=False)
        self.down = torch.nn.Linear(FF, HIDDEN, bias=False)
        self.lm_head = torch.nn.Linear(HIDDEN, VOCAB, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, HEAD, 2).float() / HEAD))
        freqs = torch.outer(torch.arange(256).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())
        self.register_buffer("causal", torch.full((256, 256), float("-inf")).triu(1))

    def forward(self, ids):
        b, s = ids.shape
        x = self.embed(ids)
        h = self.norm_1(x)
        q = self.q(h).view(b, s, HEADS, HEAD).transpose(1, 2)
        k = self.k(h).view(b, s, KV_HEADS, HEAD).transpose(1, 2)
        v = self.v(h).view(b, s, KV_HEADS, HEAD).transpose(1, 2)
        cos, sin = self.cos_cached[:s][None, None], self.sin_cached[:s][None, None]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = repeat_kv(k, HEADS // KV_HEADS), repeat_kv(v, HEADS // KV_HEADS)
        scores = q @ k.transpose(2, 3) / HEAD ** 0.5 + self.causal[:s, :s]
        y = torch.softmax(scores, dim=-1) @ v
        x = x + self.o(y.transpose(1, 2).reshape(b, s, HIDDEN))
        h = self.norm_2(x)
        x = x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))
        return self.lm_head(self.norm_3(x))


def main(out):
    torch.manual_seed(0)
    model = Block().eval()
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    with torch.no_grad():
        logits = model(ids)
    name = os.path.join(out, "llama_gqa_L1")
    torch.onnx.export(model, (ids,), name + ".fold.onnx", opset_version=17, input_names=["input_ids"],
                      output_names=["logits"])
    torch.onnx.export(model, (ids,), name + ".op14dyn.onnx", opset_version=14, input_names=["input_ids"],
                      output_names=["logits"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}})
    ids.numpy().astype("<i8").tofile(name + ".input_ids.bin")
    logits.numpy().astype("<f4").tofile(name + ".expected.bin")
    spec = {"name": "llama_gqa_L1",
            "inputs": [{"name": "input_ids", "dtype": "int64", "shape": [BATCH, SEQ],
                        "file": "llama_gqa_L1.input_ids.bin"}],
            "outputs": [{"name": "logits", "dtype": "float32", "shape": [BATCH, SEQ, VOCAB],
                         "file": "llama_gqa_L1.expected.bin"}]}
    with open(name + ".json", "w") as f:
        json.dump(spec, f)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
