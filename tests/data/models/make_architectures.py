"""Exports seventeen small models of architectures the other fixtures do not cover, written by hand as the
reference implementations write them (HF transformers, timm, torchvision, openai/whisper: read for the
shapes of the computation, no code taken), with torch's TorchScript exporter, as users export them:

  NAME.fold.onnx      opset 17, constant folding on (the exporter's default), static shapes;
  NAME.op14dyn.onnx   the decoders only: opset 14 with dynamic axes (batch, seq, past);
  NAME.INPUT.bin      each input, raw little-endian;
  NAME.expected.bin   torch's output, raw little-endian float32 (NAME.expected.OUTPUT.bin, one per output,
                      when there are several);
  NAME.json           the inputs and outputs (name, dtype, shape, file), as ../shared/models does.

| NAME | what it holds |
|---|---|
| bert_padding | BERT encoder, 2 post-LN layers, mask input (batch, seq) of 0/1 made (1 - m) * -10000, erf Gelu |
| bert_masked_fill | the same with scores.masked_fill(m == 0, torch.finfo(float32).min) |
| clip_text | CLIP text encoder, 2 pre-LN layers, torch.full(-inf).triu(1) causal mask, x * sigmoid(1.702 x) |
| mha_module | 2 post-LN encoder layers around torch.nn.MultiheadAttention (batch_first) |
| gpt_kv_cache | GPT-2 block, one decoding step: keys/values = cat(past, new), where mask, NewGELU; presents out |
| gqa_sliding | Llama-like block, 4 query heads on 2 key/value heads (repeat_kv), sliding-window causal mask |
| phi_partial_rotary | Phi block: rotary (rotate_half) on the first half of each head, parallel MLP, NewGELU |
| gptj_interleaved_rotary | GPT-J block: rotary on interleaved pairs (rotate_every_two, repeat_interleave) |
| bloom_alibi | Bloom block: ALiBi bias added to the scores, where mask then division by sqrt(head) |
| t5_relative_bias | T5 encoder-decoder (1 + 1 layers): relative position buckets, RMS LayerNorm, no scaling |
| whisper_audio | Whisper encoder: 2 Conv1d + exact Gelu front end, sinusoidal positions, 2 pre-LN layers |
| swin_window | 2 Swin blocks on a 4x4 window grid, shifted-window mask added in 5-D, relative position bias |
| convnext | ConvNeXt: channels-first LayerNorm written out on NCHW, 7x7 depthwise conv, layer scale |
| efficientnet | MBConv blocks: BatchNorm (eval), SiLU, depthwise conv, squeeze-excitation |
| unet | UNet, 2 down and 2 up levels: ConvTranspose and bilinear Upsample, skip concatenations |
| lstm | Embedding, 2-layer nn.LSTM, Linear head |
| gelu_spellings | MLP whose activations are tanh Gelu with x * x * x, the factored tanh Gelu, x * sigmoid(1.702 x) |

Dev-time fixture generator; its outputs are committed (tests read them, Python is not needed to test):
    /usr/bin/python3 tests/data/models/make_architectures.py tests/data/models [NAME ...]
"""
import json
import math
import os
import sys

import torch
from torch import nn

VOCAB, BATCH, SEQ = 128, 2, 16
FLOAT_MIN = torch.finfo(torch.float32).min


def randomize_norms(model):
    """Gives every norm a non-trivial scale, shift and running statistics, so no rewrite can drop them."""
    for m in model.modules():
        if isinstance(m, (nn.LayerNorm, nn.BatchNorm1d, nn.BatchNorm2d)):
            with torch.no_grad():
                m.weight.copy_(1 + 0.1 * torch.randn_like(m.weight))
                m.bias.copy_(0.1 * torch.randn_like(m.bias))
                if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                    m.running_mean.copy_(0.1 * torch.randn_like(m.running_mean))
                    m.running_var.copy_(1 + 0.2 * torch.rand_like(m.running_var))
    return model.eval()


def split_heads(x, heads):
    b, s, c = x.shape
    return x.view(b, s, heads, c // heads).transpose(1, 2)


def merge_heads(x):
    b, h, s, d = x.shape
    return x.transpose(1, 2).reshape(b, s, h * d)


def new_gelu(x):  # HF's NewGELUActivation (GPT-2, GPT-J, Phi)
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def bloom_gelu(x):  # Bloom's bloom_gelu_forward: the factored spelling
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


def quick_gelu(x):  # CLIP
    return x * torch.sigmoid(1.702 * x)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotary_cache(dim, positions=64):
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    freqs = torch.outer(torch.arange(positions).float(), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


# ---------------------------------------------------------------------------------------------------- BERT
class BertLayer(nn.Module):
    def __init__(self, hidden, heads, masked_fill):
        super().__init__()
        self.heads, self.masked_fill = heads, masked_fill
        self.query, self.key, self.value = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.dense, self.norm_1 = nn.Linear(hidden, hidden), nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate, self.output = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)
        self.norm_2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask):
        q, k, v = (split_heads(f(x), self.heads) for f in (self.query, self.key, self.value))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if self.masked_fill:
            scores = scores.masked_fill(mask, FLOAT_MIN)
        else:
            scores = scores + mask
        x = self.norm_1(x + self.dense(merge_heads(torch.softmax(scores, dim=-1) @ v)))
        return self.norm_2(x + self.output(nn.functional.gelu(self.intermediate(x))))


class Bert(nn.Module):
    HIDDEN, HEADS, LAYERS = 32, 4, 2

    def __init__(self, masked_fill):
        super().__init__()
        self.masked_fill = masked_fill
        self.words, self.positions = nn.Embedding(VOCAB, self.HIDDEN), nn.Embedding(64, self.HIDDEN)
        self.types = nn.Embedding(2, self.HIDDEN)
        self.norm = nn.LayerNorm(self.HIDDEN, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(self.HIDDEN, self.HEADS, masked_fill) for _ in range(self.LAYERS))
        self.register_buffer("position_ids", torch.arange(64)[None])

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        x = self.words(input_ids) + self.positions(self.position_ids[:, :s]) + self.types(torch.zeros_like(input_ids))
        x = self.norm(x)
        if self.masked_fill:
            mask = attention_mask[:, None, None, :] == 0
        else:
            mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x


def padded_mask():
    mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
    mask[1, 11:] = 0
    return mask


# ---------------------------------------------------------------------------------------------------- CLIP
class ClipLayer(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.scale = heads, (hidden // heads) ** -0.5
        self.norm_1, self.norm_2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.q, self.k, self.v, self.out = (nn.Linear(hidden, hidden) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

    def forward(self, x, causal):
        h = self.norm_1(x)
        q = split_heads(self.q(h) * self.scale, self.heads)
        k, v = split_heads(self.k(h), self.heads), split_heads(self.v(h), self.heads)
        x = x + self.out(merge_heads(torch.softmax(q @ k.transpose(-1, -2) + causal, dim=-1) @ v))
        return x + self.fc2(quick_gelu(self.fc1(self.norm_2(x))))


class ClipText(nn.Module):
    HIDDEN, HEADS = 32, 4

    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, self.HIDDEN)
        self.positions = nn.Parameter(0.02 * torch.randn(64, self.HIDDEN))
        self.layers = nn.ModuleList(ClipLayer(self.HIDDEN, self.HEADS) for _ in range(2))
        self.norm = nn.LayerNorm(self.HIDDEN)

    def forward(self, input_ids):
        s = input_ids.shape[1]
        x = self.tokens(input_ids) + self.positions[:s]
        causal = torch.full((s, s), float("-inf")).triu(1)
        for layer in self.layers:
            x = layer(x, causal)
        return self.norm(x)


# ------------------------------------------------------------------------------------ nn.MultiheadAttention
class MhaLayer(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.attention = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.norm_1, self.norm_2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.ff = nn.Sequential(nn.Linear(hidden, 2 * hidden), nn.ReLU(), nn.Linear(2 * hidden, hidden))

    def forward(self, x):
        x = self.norm_1(x + self.attention(x, x, x, need_weights=False)[0])
        return self.norm_2(x + self.ff(x))


class MhaModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(MhaLayer(32, 4), MhaLayer(32, 4))

    def forward(self, x):
        return self.layers(x)


# ------------------------------------------------------------------------------------- GPT-2 with KV cache
class GptKvCache(nn.Module):
    HIDDEN, HEADS, PAST, POSITIONS = 32, 4, 7, 64

    def __init__(self):
        super().__init__()
        h = self.HIDDEN
        self.wte, self.wpe = nn.Embedding(VOCAB, h), nn.Embedding(self.POSITIONS, h)
        self.ln_1, self.ln_2, self.ln_f = nn.LayerNorm(h), nn.LayerNorm(h), nn.LayerNorm(h)
        self.c_attn, self.c_proj = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.c_fc, self.mlp_proj = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)
        self.register_buffer("bias", torch.tril(torch.ones(self.POSITIONS, self.POSITIONS, dtype=torch.bool))[None, None])

    def forward(self, input_ids, past_key, past_value):
        past, s = past_key.shape[-2], input_ids.shape[1]
        positions = torch.arange(past, past + s, dtype=torch.int64)[None]
        x = self.wte(input_ids) + self.wpe(positions)
        q, k, v = self.c_attn(self.ln_1(x)).split(self.HIDDEN, dim=2)
        q, k, v = (split_heads(t, self.HEADS) for t in (q, k, v))
        k, v = torch.cat((past_key, k), dim=-2), torch.cat((past_value, v), dim=-2)
        w = q @ k.transpose(-1, -2) / torch.full([], v.shape[-1] ** 0.5, dtype=q.dtype)
        key_length = k.shape[-2]
        causal = self.bias[:, :, key_length - s:key_length, :key_length]
        w = torch.where(causal, w, torch.full([], FLOAT_MIN, dtype=w.dtype))
        x = x + self.c_proj(merge_heads(torch.softmax(w, dim=-1) @ v))
        x = x + self.mlp_proj(new_gelu(self.c_fc(self.ln_2(x))))
        return self.ln_f(x) @ self.wte.weight.t(), k, v


# ------------------------------------------------------------------------- Llama + GQA + sliding window
class RMSNorm(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(hidden))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


def repeat_kv(x, n_rep):
    b, kv, s, d = x.shape
    return x[:, :, None, :, :].expand(b, kv, n_rep, s, d).reshape(b, kv * n_rep, s, d)


class GqaSliding(nn.Module):
    HIDDEN, HEADS, KV_HEADS, FF, WINDOW = 64, 4, 2, 128, 4
    HEAD = HIDDEN // HEADS

    def __init__(self):
        super().__init__()
        h, d = self.HIDDEN, self.HEAD
        self.embed = nn.Embedding(VOCAB, h)
        self.norm_1, self.norm_2, self.norm_3 = RMSNorm(h), RMSNorm(h), RMSNorm(h)
        self.q, self.o = nn.Linear(h, h, bias=False), nn.Linear(h, h, bias=False)
        self.k, self.v = nn.Linear(h, self.KV_HEADS * d, bias=False), nn.Linear(h, self.KV_HEADS * d, bias=False)
        self.gate, self.up = nn.Linear(h, self.FF, bias=False), nn.Linear(h, self.FF, bias=False)
        self.down, self.lm_head = nn.Linear(self.FF, h, bias=False), nn.Linear(h, VOCAB, bias=False)
        cos, sin = rotary_cache(d)
        self.register_buffer("cos_cached", cos)
        self.register_buffer("sin_cached", sin)

    def forward(self, input_ids):
        b, s = input_ids.shape
        x = self.embed(input_ids)
        h = self.norm_1(x)
        q = self.q(h).view(b, s, self.HEADS, self.HEAD).transpose(1, 2)
        k = self.k(h).view(b, s, self.KV_HEADS, self.HEAD).transpose(1, 2)
        v = self.v(h).view(b, s, self.KV_HEADS, self.HEAD).transpose(1, 2)
        cos, sin = self.cos_cached[:s][None, None], self.sin_cached[:s][None, None]
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        n_rep = self.HEADS // self.KV_HEADS
        k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
        i, j = torch.arange(s)[:, None], torch.arange(s)[None, :]
        allowed = (j <= i) & (j > i - self.WINDOW)
        mask = torch.zeros(s, s).masked_fill(~allowed, FLOAT_MIN)[None, None]
        scores = q @ k.transpose(2, 3) / math.sqrt(self.HEAD) + mask
        x = x + self.o(merge_heads(torch.softmax(scores, dim=-1) @ v))
        h = self.norm_2(x)
        x = x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))
        return self.lm_head(self.norm_3(x))


# ----------------------------------------------------------------------------------- Phi, partial rotary
class PhiPartialRotary(nn.Module):
    HIDDEN, HEADS = 32, 4
    HEAD = HIDDEN // HEADS
    ROTARY = HEAD // 2

    def __init__(self):
        super().__init__()
        h = self.HIDDEN
        self.embed = nn.Embedding(VOCAB, h)
        self.norm, self.final_norm = nn.LayerNorm(h), nn.LayerNorm(h)
        self.q, self.k, self.v, self.dense = (nn.Linear(h, h) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)
        self.lm_head = nn.Linear(h, VOCAB)
        cos, sin = rotary_cache(self.ROTARY)
        self.register_buffer("cos_cached", cos)
        self.register_buffer("sin_cached", sin)
        self.register_buffer("causal", torch.full((64, 64), float("-inf")).triu(1))

    def rotate(self, x, cos, sin):
        rot, passed = x[..., :self.ROTARY], x[..., self.ROTARY:]
        return torch.cat((rot * cos + rotate_half(rot) * sin, passed), dim=-1)

    def forward(self, input_ids):
        s = input_ids.shape[1]
        x = self.embed(input_ids)
        h = self.norm(x)
        q, k, v = (split_heads(f(h), self.HEADS) for f in (self.q, self.k, self.v))
        cos, sin = self.cos_cached[:s][None, None], self.sin_cached[:s][None, None]
        q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
        scores = q @ k.transpose(2, 3) / math.sqrt(self.HEAD) + self.causal[:s, :s]
        attention = self.dense(merge_heads(torch.softmax(scores, dim=-1) @ v))
        x = x + attention + self.fc2(new_gelu(self.fc1(h)))
        return self.lm_head(self.final_norm(x))


# ------------------------------------------------------------------------------- GPT-J, interleaved rotary
def rotate_every_two(x):
    x1, x2 = x[:, :, :, ::2], x[:, :, :, 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


class GptjInterleavedRotary(nn.Module):
    HIDDEN, HEADS, POSITIONS = 32, 4, 64
    HEAD = HIDDEN // HEADS

    def __init__(self):
        super().__init__()
        h = self.HIDDEN
        self.wte = nn.Embedding(VOCAB, h)
        self.ln_1, self.ln_f = nn.LayerNorm(h), nn.LayerNorm(h)
        self.q, self.k, self.v, self.out = (nn.Linear(h, h, bias=False) for _ in range(4))
        self.fc_in, self.fc_out = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)
        self.lm_head = nn.Linear(h, VOCAB)
        inv = 1.0 / (10000 ** (torch.arange(0, self.HEAD, 2).float() / self.HEAD))
        angles = torch.einsum("i,j->ij", torch.arange(self.POSITIONS).float(), inv)
        self.register_buffer("embed_positions", torch.cat((torch.sin(angles), torch.cos(angles)), dim=1))
        self.register_buffer("bias", torch.tril(torch.ones(self.POSITIONS, self.POSITIONS, dtype=torch.bool))[None, None])
        self.scale_attn = math.sqrt(self.HEAD)

    def forward(self, input_ids):
        b, s = input_ids.shape
        x = self.wte(input_ids)
        h = self.ln_1(x)
        q, k = (f(h).view(b, s, self.HEADS, self.HEAD) for f in (self.q, self.k))
        v = split_heads(self.v(h), self.HEADS)
        position_ids = torch.arange(s)[None]
        sin, cos = torch.split(self.embed_positions[position_ids], self.HEAD // 2, dim=-1)
        sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
        cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
        q = (q * cos + rotate_every_two(q) * sin).permute(0, 2, 1, 3)
        k = (k * cos + rotate_every_two(k) * sin).permute(0, 2, 1, 3)
        w = q @ k.transpose(-1, -2)
        w = torch.where(self.bias[:, :, :s, :s], w, torch.tensor(FLOAT_MIN, dtype=w.dtype)) / self.scale_attn
        attention = self.out(merge_heads(torch.softmax(w, dim=-1) @ v))
        x = x + attention + self.fc_out(new_gelu(self.fc_in(h)))
        return self.lm_head(self.ln_f(x))


# ---------------------------------------------------------------------------------------- Bloom, ALiBi
class BloomAlibi(nn.Module):
    HIDDEN, HEADS, POSITIONS = 32, 4, 64
    HEAD = HIDDEN // HEADS

    def __init__(self):
        super().__init__()
        h = self.HIDDEN
        self.word_embeddings = nn.Embedding(VOCAB, h)
        self.embeddings_norm, self.input_norm = nn.LayerNorm(h), nn.LayerNorm(h)
        self.post_attention_norm, self.ln_f = nn.LayerNorm(h), nn.LayerNorm(h)
        self.query_key_value, self.dense = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.h_to_4h, self.h4_to_h = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)
        base = 2 ** (-(2 ** -(math.log2(self.HEADS) - 3)))
        self.register_buffer("slopes", base ** torch.arange(1, self.HEADS + 1).float())
        self.register_buffer("bias", torch.tril(torch.ones(self.POSITIONS, self.POSITIONS, dtype=torch.bool))[None, None])

    def forward(self, input_ids):
        b, s = input_ids.shape
        x = self.embeddings_norm(self.word_embeddings(input_ids))
        h = self.input_norm(x)
        qkv = self.query_key_value(h).view(b, s, self.HEADS, 3, self.HEAD)
        q, k, v = (qkv[..., i, :].transpose(1, 2) for i in range(3))
        alibi = (self.slopes[:, None] * torch.arange(s).float()[None, :])[None, :, None, :]
        scores = q @ k.transpose(-1, -2) + alibi
        scores = torch.where(self.bias[:, :, :s, :s], scores, torch.tensor(FLOAT_MIN)) / math.sqrt(self.HEAD)
        x = x + self.dense(merge_heads(torch.softmax(scores, dim=-1) @ v))
        x = x + self.h4_to_h(bloom_gelu(self.h_to_4h(self.post_attention_norm(x))))
        return self.ln_f(x) @ self.word_embeddings.weight.t()


# ------------------------------------------------------------------------------------- T5, relative bias
class T5LayerNorm(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(hidden))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + 1e-6))


def relative_bucket(relative, bidirectional, buckets=32, max_distance=128):
    result = torch.zeros_like(relative)
    if bidirectional:
        buckets //= 2
        result = result + (relative > 0).to(torch.int64) * buckets
        n = torch.abs(relative)
    else:
        n = -torch.min(relative, torch.zeros_like(relative))
    exact = buckets // 2
    large = exact + (torch.log(n.float() / exact) / math.log(max_distance / exact) * (buckets - exact)).to(torch.int64)
    large = torch.min(large, torch.full_like(large, buckets - 1))
    return result + torch.where(n < exact, n, large)


class T5Attention(nn.Module):
    def __init__(self, hidden, heads, relative_bias, bidirectional):
        super().__init__()
        self.heads, self.bidirectional = heads, bidirectional
        self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden, bias=False) for _ in range(4))
        self.relative_bias = nn.Embedding(32, heads) if relative_bias else None

    def position_bias(self, q_len, k_len):
        relative = torch.arange(k_len)[None, :] - torch.arange(q_len)[:, None]
        return self.relative_bias(relative_bucket(relative, self.bidirectional)).permute(2, 0, 1)[None]

    def forward(self, x, memory, bias):
        q = split_heads(self.q(x), self.heads)
        k, v = split_heads(self.k(memory), self.heads), split_heads(self.v(memory), self.heads)
        scores = q @ k.transpose(3, 2)
        if bias is not None:
            scores = scores + bias
        return self.o(merge_heads(torch.softmax(scores.float(), dim=-1).type_as(scores) @ v))


class T5FF(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm, self.wi, self.wo = T5LayerNorm(hidden), nn.Linear(hidden, 2 * hidden, bias=False), nn.Linear(2 * hidden, hidden, bias=False)

    def forward(self, x):
        return x + self.wo(torch.relu(self.wi(self.norm(x))))


class T5RelativeBias(nn.Module):
    HIDDEN, HEADS, TARGET = 32, 4, 8

    def __init__(self):
        super().__init__()
        h = self.HIDDEN
        self.shared = nn.Embedding(VOCAB, h)
        self.enc_norm, self.enc_final = T5LayerNorm(h), T5LayerNorm(h)
        self.enc_attention, self.enc_ff = T5Attention(h, self.HEADS, True, True), T5FF(h)
        self.dec_norm_1, self.dec_norm_2, self.dec_final = T5LayerNorm(h), T5LayerNorm(h), T5LayerNorm(h)
        self.dec_attention = T5Attention(h, self.HEADS, True, False)
        self.cross_attention, self.dec_ff = T5Attention(h, self.HEADS, False, False), T5FF(h)

    def forward(self, input_ids, decoder_input_ids):
        x = self.shared(input_ids)
        s = x.shape[1]
        h = self.enc_norm(x)
        x = x + self.enc_attention(h, h, self.enc_attention.position_bias(s, s))
        memory = self.enc_final(self.enc_ff(x))
        y = self.shared(decoder_input_ids)
        t = y.shape[1]
        causal = torch.tril(torch.ones(t, t))
        bias = self.dec_attention.position_bias(t, t) + (1.0 - causal)[None, None] * FLOAT_MIN
        h = self.dec_norm_1(y)
        y = y + self.dec_attention(h, h, bias)
        y = y + self.cross_attention(self.dec_norm_2(y), memory, None)
        y = self.dec_final(self.dec_ff(y)) * self.HIDDEN ** -0.5
        return y @ self.shared.weight.t()


# ---------------------------------------------------------------------------------------- Whisper encoder
class WhisperLayer(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.scaling = heads, (hidden // heads) ** -0.5
        self.norm_1, self.norm_2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.q, self.k, self.v = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden, bias=False), nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)
        self.fc1, self.fc2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        h = self.norm_1(x)
        q = split_heads(self.q(h) * self.scaling, self.heads)
        k, v = split_heads(self.k(h), self.heads), split_heads(self.v(h), self.heads)
        x = x + self.out(merge_heads(torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v))
        return x + self.fc2(nn.functional.gelu(self.fc1(self.norm_2(x))))


def sinusoids(length, channels):
    increment = math.log(10000) / (channels // 2 - 1)
    inv = torch.exp(-increment * torch.arange(channels // 2))
    scaled = torch.arange(length)[:, None] * inv[None, :]
    return torch.cat([torch.sin(scaled), torch.cos(scaled)], dim=1)


class WhisperAudio(nn.Module):
    MELS, FRAMES, HIDDEN, HEADS = 16, 32, 32, 4

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(self.MELS, self.HIDDEN, 3, padding=1)
        self.conv2 = nn.Conv1d(self.HIDDEN, self.HIDDEN, 3, stride=2, padding=1)
        self.register_buffer("positions", sinusoids(self.FRAMES // 2, self.HIDDEN))
        self.layers = nn.Sequential(WhisperLayer(self.HIDDEN, self.HEADS), WhisperLayer(self.HIDDEN, self.HEADS))
        self.norm = nn.LayerNorm(self.HIDDEN)

    def forward(self, input_features):
        x = nn.functional.gelu(self.conv1(input_features))
        x = nn.functional.gelu(self.conv2(x)).permute(0, 2, 1)
        return self.norm(self.layers(x + self.positions))


# ------------------------------------------------------------------------------------------------- Swin
def window_partition(x, ws):
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws * ws, c)


def window_reverse(windows, ws, h, w):
    c = windows.shape[-1]
    x = windows.view(-1, h // ws, w // ws, ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, h, w, c)


class WindowAttention(nn.Module):
    def __init__(self, dim, heads, ws):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.table = nn.Parameter(0.02 * torch.randn((2 * ws - 1) ** 2, heads))
        coords = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij")).flatten(1)
        relative = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (ws - 1)
        self.register_buffer("relative_index", relative[..., 0] * (2 * ws - 1) + relative[..., 1])
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)

    def forward(self, x, mask):
        b_, n, c = x.shape
        qkv = self.qkv(x).reshape(b_, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q * self.scale) @ k.transpose(-2, -1)
        bias = self.table[self.relative_index.view(-1)].view(n, n, -1).permute(2, 0, 1).contiguous()
        attn = attn + bias.unsqueeze(0)
        if mask is not None:
            windows = mask.shape[0]
            attn = attn.view(b_ // windows, windows, self.heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.heads, n, n)
        x = (torch.softmax(attn, dim=-1) @ v).transpose(1, 2).reshape(b_, n, c)
        return self.proj(x)


class SwinBlock(nn.Module):
    def __init__(self, dim, heads, size, ws, shift):
        super().__init__()
        self.size, self.ws, self.shift = size, ws, shift
        self.norm_1, self.norm_2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attention = WindowAttention(dim, heads, ws)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        mask = None
        if shift:
            regions = torch.zeros(1, size, size, 1)
            count = 0
            for hs in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                for wsl in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                    regions[:, hs, wsl, :] = count
                    count += 1
            windows = window_partition(regions, ws).squeeze(-1)
            mask = windows.unsqueeze(1) - windows.unsqueeze(2)
            mask = mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0)
        self.register_buffer("attn_mask", mask)

    def forward(self, x):
        b, l, c = x.shape
        h = self.norm_1(x).view(b, self.size, self.size, c)
        if self.shift:
            h = torch.roll(h, shifts=(-self.shift, -self.shift), dims=(1, 2))
        h = window_reverse(self.attention(window_partition(h, self.ws), self.attn_mask), self.ws, self.size, self.size)
        if self.shift:
            h = torch.roll(h, shifts=(self.shift, self.shift), dims=(1, 2))
        x = x + h.view(b, l, c)
        return x + self.mlp(self.norm_2(x))


class SwinWindow(nn.Module):
    DIM, HEADS, SIZE, WINDOW = 32, 2, 16, 4

    def __init__(self):
        super().__init__()
        self.patches = nn.Conv2d(3, self.DIM, 2, 2)
        self.patch_norm, self.norm = nn.LayerNorm(self.DIM), nn.LayerNorm(self.DIM)
        self.blocks = nn.Sequential(SwinBlock(self.DIM, self.HEADS, self.SIZE, self.WINDOW, 0),
                                    SwinBlock(self.DIM, self.HEADS, self.SIZE, self.WINDOW, self.WINDOW // 2))
        self.head = nn.Linear(self.DIM, 10)

    def forward(self, image):
        x = self.patch_norm(self.patches(image).flatten(2).transpose(1, 2))
        return self.head(self.norm(self.blocks(x)).mean(1))


# --------------------------------------------------------------------------------------------- ConvNeXt
class LayerNorm2d(nn.Module):  # ConvNeXt's LayerNorm, data_format="channels_first"
    def __init__(self, channels, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(channels))
        self.bias = nn.Parameter(0.1 * torch.randn(channels))
        self.eps = eps

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class ConvNextBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1, self.pwconv2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(0.5 + 0.1 * torch.randn(dim))

    def forward(self, x):
        h = self.norm(self.dwconv(x).permute(0, 2, 3, 1))
        h = self.gamma * self.pwconv2(nn.functional.gelu(self.pwconv1(h)))
        return x + h.permute(0, 3, 1, 2)


class ConvNext(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 4, 4), LayerNorm2d(32))
        self.stage_1 = nn.Sequential(ConvNextBlock(32), ConvNextBlock(32))
        self.down = nn.Sequential(LayerNorm2d(32), nn.Conv2d(32, 64, 2, 2))
        self.stage_2 = ConvNextBlock(64)
        self.norm, self.head = nn.LayerNorm(64, eps=1e-6), nn.Linear(64, 10)

    def forward(self, image):
        x = self.stage_2(self.down(self.stage_1(self.stem(image))))
        return self.head(self.norm(x.mean([-2, -1])))


# ----------------------------------------------------------------------------------------- EfficientNet
def conv_bn(cin, cout, k, stride=1, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.SiLU()) if act else nn.Sequential(*layers)


class SqueezeExcitation(nn.Module):
    def __init__(self, channels, squeezed):
        super().__init__()
        self.reduce, self.expand = nn.Conv2d(channels, squeezed, 1), nn.Conv2d(squeezed, channels, 1)

    def forward(self, x):
        scale = nn.functional.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(self.expand(nn.functional.silu(self.reduce(scale))))


class MBConv(nn.Module):
    def __init__(self, cin, cout, expand, stride):
        super().__init__()
        mid = cin * expand
        self.residual = stride == 1 and cin == cout
        self.block = nn.Sequential(*([conv_bn(cin, mid, 1)] if expand != 1 else []),
                                   conv_bn(mid, mid, 3, stride, groups=mid),
                                   SqueezeExcitation(mid, max(1, cin // 4)),
                                   conv_bn(mid, cout, 1, act=False))

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class EfficientNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(conv_bn(3, 16, 3, 2), MBConv(16, 16, 1, 1), MBConv(16, 24, 6, 2),
                                      MBConv(24, 24, 6, 1), conv_bn(24, 64, 1))
        self.classifier = nn.Linear(64, 10)

    def forward(self, image):
        return self.classifier(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(image), 1), 1))


# ------------------------------------------------------------------------------------------------ UNet
def double_conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc_1, self.enc_2, self.bottom = double_conv(3, 8), double_conv(8, 16), double_conv(16, 32)
        self.up_1 = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.dec_1 = double_conv(32, 16)
        self.up_2 = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False), nn.Conv2d(16, 8, 1))
        self.dec_2 = double_conv(16, 8)
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, image):
        e1 = self.enc_1(image)
        e2 = self.enc_2(nn.functional.max_pool2d(e1, 2))
        x = self.bottom(nn.functional.max_pool2d(e2, 2))
        x = self.dec_1(torch.cat([self.up_1(x), e2], dim=1))
        x = self.dec_2(torch.cat([self.up_2(x), e1], dim=1))
        return self.out(x)


# ------------------------------------------------------------------------------------------------ LSTM
class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32)
        self.lstm = nn.LSTM(32, 32, num_layers=2, batch_first=True)
        self.head = nn.Linear(32, VOCAB)

    def forward(self, input_ids):
        return self.head(self.lstm(self.embed(input_ids))[0])


# -------------------------------------------------------------------------------------- Gelu spellings
class GeluSpellings(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3, self.fc4 = nn.Linear(32, 64), nn.Linear(64, 64), nn.Linear(64, 64), nn.Linear(64, 32)

    def forward(self, x):
        h = self.fc1(x)
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
        h = self.fc2(h)
        h = h * 0.5 * (1.0 + torch.tanh(0.7978845608 * h * (1.0 + 0.044715 * h * h)))
        h = self.fc3(h)
        return self.fc4(h * torch.sigmoid(1.702 * h))


# --------------------------------------------------------------------------------------------- export
def ids(*shape):
    return torch.randint(0, VOCAB, shape)


def image():
    return torch.randn(BATCH, 3, 32, 32)


TEXT_AXES = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
KV_AXES = {"input_ids": {0: "batch", 1: "seq"}, "past_key": {0: "batch", 2: "past"},
           "past_value": {0: "batch", 2: "past"}, "logits": {0: "batch", 1: "seq"},
           "present_key": {0: "batch", 2: "total"}, "present_value": {0: "batch", 2: "total"}}


def kv_inputs():
    m = GptKvCache
    shape = (BATCH, m.HEADS, m.PAST, m.HIDDEN // m.HEADS)
    return {"input_ids": ids(BATCH, 1), "past_key": torch.randn(shape), "past_value": torch.randn(shape)}


# NAME -> (model class and arguments, inputs, output names, dynamic axes of the opset-14 export or None)
FAMILIES = {
    "bert_padding": (lambda: Bert(False), lambda: {"input_ids": ids(BATCH, SEQ), "attention_mask": padded_mask()},
                     ["last_hidden_state"], None),
    "bert_masked_fill": (lambda: Bert(True), lambda: {"input_ids": ids(BATCH, SEQ), "attention_mask": padded_mask()},
                         ["last_hidden_state"], None),
    "clip_text": (ClipText, lambda: {"input_ids": ids(BATCH, SEQ)}, ["last_hidden_state"],
                  {"input_ids": {0: "batch", 1: "seq"}, "last_hidden_state": {0: "batch", 1: "seq"}}),
    "mha_module": (MhaModule, lambda: {"x": torch.randn(BATCH, SEQ, 32)}, ["y"], None),
    "gpt_kv_cache": (GptKvCache, kv_inputs, ["logits", "present_key", "present_value"], KV_AXES),
    "gqa_sliding": (GqaSliding, lambda: {"input_ids": ids(BATCH, SEQ)}, ["logits"], TEXT_AXES),
    "phi_partial_rotary": (PhiPartialRotary, lambda: {"input_ids": ids(BATCH, SEQ)}, ["logits"], TEXT_AXES),
    "gptj_interleaved_rotary": (GptjInterleavedRotary, lambda: {"input_ids": ids(BATCH, SEQ)}, ["logits"], TEXT_AXES),
    "bloom_alibi": (BloomAlibi, lambda: {"input_ids": ids(BATCH, SEQ)}, ["logits"], TEXT_AXES),
    "t5_relative_bias": (T5RelativeBias, lambda: {"input_ids": ids(BATCH, SEQ), "decoder_input_ids": ids(BATCH, T5RelativeBias.TARGET)},
                         ["logits"], None),
    "whisper_audio": (WhisperAudio, lambda: {"input_features": torch.randn(BATCH, 16, 32)}, ["last_hidden_state"], None),
    "swin_window": (SwinWindow, lambda: {"image": image()}, ["logits"], None),
    "convnext": (ConvNext, lambda: {"image": image()}, ["logits"], None),
    "efficientnet": (EfficientNet, lambda: {"image": image()}, ["logits"], None),
    "unet": (UNet, lambda: {"image": image()}, ["mask"], None),
    "lstm": (Lstm, lambda: {"input_ids": ids(BATCH, SEQ)}, ["logits"], None),
    "gelu_spellings": (GeluSpellings, lambda: {"x": torch.randn(BATCH, SEQ, 32)}, ["y"], None),
}

DTYPES = {torch.float32: ("float32", "<f4"), torch.int64: ("int64", "<i8"), torch.bool: ("bool", "u1")}


def export(out, name):
    make_model, make_inputs, output_names, dynamic_axes = FAMILIES[name]
    torch.manual_seed(0)
    model = randomize_norms(make_model())
    inputs = make_inputs()
    args = tuple(inputs.values())
    with torch.no_grad():
        outputs = model(*args)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    base = os.path.join(out, name)
    torch.onnx.export(model, args, base + ".fold.onnx", opset_version=17, input_names=list(inputs),
                      output_names=output_names)
    if dynamic_axes:
        torch.onnx.export(model, args, base + ".op14dyn.onnx", opset_version=14, input_names=list(inputs),
                          output_names=output_names, dynamic_axes=dynamic_axes)
    spec = {"name": name, "inputs": [], "outputs": []}
    for key, tensors, files in (("inputs", inputs.items(), [f"{name}.{i}.bin" for i in inputs]),
                                ("outputs", zip(output_names, outputs),
                                 [f"{name}.expected.bin"] if len(outputs) == 1 else
                                 [f"{name}.expected.{o}.bin" for o in output_names])):
        for (tensor_name, tensor), file in zip(tensors, files):
            dtype, numpy_type = DTYPES[tensor.dtype]
            tensor.numpy().astype(numpy_type).tofile(os.path.join(out, file))
            spec[key].append({"name": tensor_name, "dtype": dtype, "shape": list(tensor.shape), "file": file})
    with open(base + ".json", "w") as f:
        json.dump(spec, f)


def main(out, names):
    for name in names or FAMILIES:
        export(out, name)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)), sys.argv[2:])
