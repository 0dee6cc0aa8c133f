"""Exports a two-block ViT (timm's attention: one qkv projection reshaped to (batch, tokens, 3, heads,
head_size), permuted to (3, batch, heads, tokens, head_size) and unbound; q scaled by head_size ** -0.5
before q @ k^T) with torch's TorchScript exporter, as users export it: static at opset 17 (constant
folding on) and with a dynamic batch at opset 14. Also writes the image batch and torch's logits, raw
little-endian, and vit_L2.json naming them, as ../shared/models does.

Dev-time fixture generator; its outputs are committed (tests read them, Python is not needed to test):
    /usr/bin/python3 tests/data/models/make_vit.py tests/data/models
"""
import json
import os
import sys

import torch

DIM, HEADS, DEPTH, PATCH, IMAGE, CLASSES, BATCH = 64, 4, 2, 8, 32, 10, 2
TOKENS = (IMAGE // PATCH) ** 2 + 1


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = (DIM // HEADS) ** -0.5
        self.qkv = torch.nn.Linear(DIM, 3 * DIM)
        self.proj = torch.nn.Linear(DIM, DIM)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, HEADS, c // HEADS).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q = q * self.scale
        weights = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((weights @ v).transpose(1, 2).reshape(b, n, c))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm_1, self.norm_2 = torch.nn.LayerNorm(DIM), torch.nn.LayerNorm(DIM)
        self.attention = Attention()
        self.mlp = torch.nn.Sequential(torch.nn.Linear(DIM, 4 * DIM), torch.nn.GELU(), torch.nn.Linear(4 * DIM, DIM))

    def forward(self, x):
        x = x + self.attention(self.norm_1(x))
        return x + self.mlp(self.norm_2(x))


class ViT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.patches = torch.nn.Conv2d(3, DIM, PATCH, PATCH)
        self.cls = torch.nn.Parameter(torch.randn(1, 1, DIM))
        self.position = torch.nn.Parameter(0.02 * torch.randn(1, TOKENS, DIM))
        self.blocks = torch.nn.Sequential(*[Block() for _ in range(DEPTH)])
        self.norm = torch.nn.LayerNorm(DIM)
        self.head = torch.nn.Linear(DIM, CLASSES)

    def forward(self, image):
        x = self.patches(image).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.position
        return self.head(self.norm(self.blocks(x))[:, 0])


def main(out):
    torch.manual_seed(0)
    model = ViT().eval()
    image = torch.randn(BATCH, 3, IMAGE, IMAGE)
    with torch.no_grad():
        logits = model(image)
    name = os.path.join(out, "vit_L2")
    torch.onnx.export(model, (image,), name + ".fold.onnx", opset_version=17, input_names=["image"],
                      output_names=["logits"])
    torch.onnx.export(model, (image,), name + ".op14dyn.onnx", opset_version=14, input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    image.numpy().astype("<f4").tofile(name + ".image.bin")
    logits.numpy().astype("<f4").tofile(name + ".expected.bin")
    spec = {"name": "vit_L2",
            "inputs": [{"name": "image", "dtype": "float32", "shape": [BATCH, 3, IMAGE, IMAGE],
                        "file": "vit_L2.image.bin"}],
            "outputs": [{"name": "logits", "dtype": "float32", "shape": [BATCH, CLASSES],
                         "file": "vit_L2.expected.bin"}]}
    with open(name + ".json", "w") as f:
        json.dump(spec, f)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
