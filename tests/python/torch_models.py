"""Architectures written in plain torch for the tests of xexp.to_onnx: small enough that each exports in
well under a second, built like the models they stand for (the seeds' demo LLM, GPT-2, Llama, BERT, a
CNN). Each factory returns (model in eval mode, example args)."""

import math

import torch


class Embedding(torch.nn.Module):
    def __init__(self, vocab_size, embedding_dim):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.pe = torch.nn.Embedding(vocab_size, embedding_dim)

    def forward(self, x):
        return self.embedding(x) + self.pe(x)


class AttentionBlock(torch.nn.Module):
    def __init__(self, embedding_dim, context_size):
        super().__init__()
        self.query = torch.nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.key = torch.nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.value = torch.nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.register_buffer("mask", torch.tril(torch.ones(context_size, context_size)))

    def forward(self, x):
        _, t, c = x.size()
        qk = self.query(x) @ self.key(x).transpose(-2, -1) * c**-0.5
        attention = qk.masked_fill(self.mask[:t, :t] == 0, float("-inf"))
        return torch.nn.functional.softmax(attention, dim=-1) @ self.value(x)


class MultiAttentionBlock(torch.nn.Module):
    def __init__(self, embedding_dim, num_heads, context_size):
        super().__init__()
        self.attention = torch.nn.ModuleList([AttentionBlock(embedding_dim, context_size) for _ in range(num_heads)])
        self.linear = torch.nn.Linear(embedding_dim * num_heads, embedding_dim)

    def forward(self, x):
        return self.linear(torch.cat([a(x) for a in self.attention], dim=-1))


class FeedForward(torch.nn.Module):
    def __init__(self, embedding_dim, ff_dim):
        super().__init__()
        self.linear_1 = torch.nn.Linear(embedding_dim, ff_dim)
        self.relu = torch.nn.ReLU()
        self.linear_2 = torch.nn.Linear(ff_dim, embedding_dim)

    def forward(self, x):
        return self.linear_2(self.relu(self.linear_1(x)))


class DecoderLayer(torch.nn.Module):
    def __init__(self, embedding_dim, num_heads, context_size, ff_dim):
        super().__init__()
        self.attention = MultiAttentionBlock(embedding_dim, num_heads, context_size)
        self.feed_forward = FeedForward(embedding_dim, ff_dim)
        self.norm_1 = torch.nn.LayerNorm(embedding_dim)
        self.norm_2 = torch.nn.LayerNorm(embedding_dim)

    def forward(self, x):
        attention = self.attention(self.norm_1(x)) + x
        return self.feed_forward(self.norm_2(attention)) + attention


class LLM(torch.nn.Module):
    """The demo LLM of experimental-experiment's documentation (the seeds)."""

    def __init__(self, vocab_size=1024, embedding_dim=16, num_heads=2, context_size=256, ff_dim=128):
        super().__init__()
        self.embedding = Embedding(vocab_size, embedding_dim)
        self.decoder = DecoderLayer(embedding_dim, num_heads, context_size, ff_dim)

    def forward(self, input_ids):
        return self.decoder(self.embedding(input_ids))


def demo_llm():
    torch.manual_seed(0)
    return LLM().eval(), (torch.randint(0, 1024, (1, 30)),)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.GELU(), torch.nn.Linear(32, 32),
                                          torch.nn.Tanh(), torch.nn.Linear(32, 4))

    def forward(self, x):
        return torch.nn.functional.log_softmax(self.layers(x), dim=-1)


def mlp():
    torch.manual_seed(0)
    return Mlp().eval(), (torch.randn(5, 10),)


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(inplace=True),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2),
            torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.AvgPool2d(2))
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.classifier = torch.nn.Linear(16, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


def small_cnn():
    torch.manual_seed(0)
    model = SmallCnn()
    for m in model.modules():  # statistics that are not the identity
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    return model.eval(), (torch.randn(2, 3, 16, 16),)


class Gpt2Attention(torch.nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.heads = heads
        self.c_attn = torch.nn.Linear(dim, 3 * dim)
        self.c_proj = torch.nn.Linear(dim, dim)
        self.register_buffer("bias", torch.tril(torch.ones(context, context, dtype=torch.bool)).view(1, 1, context, context))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(c // self.heads)
        scores = torch.where(self.bias[:, :, :t, :t], scores, torch.tensor(torch.finfo(scores.dtype).min))
        y = torch.matmul(scores.softmax(dim=-1), v).transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


class Gpt2Mlp(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.c_fc = torch.nn.Linear(dim, 4 * dim)
        self.c_proj = torch.nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.c_proj(torch.nn.functional.gelu(self.c_fc(x), approximate="tanh"))


class Gpt2Block(torch.nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.ln_1 = torch.nn.LayerNorm(dim)
        self.attn = Gpt2Attention(dim, heads, context)
        self.ln_2 = torch.nn.LayerNorm(dim)
        self.mlp = Gpt2Mlp(dim)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt2(torch.nn.Module):
    def __init__(self, vocab=100, dim=32, heads=4, context=64, layers=2):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, dim)
        self.wpe = torch.nn.Embedding(context, dim)
        self.h = torch.nn.ModuleList([Gpt2Block(dim, heads, context) for _ in range(layers)])
        self.ln_f = torch.nn.LayerNorm(dim)
        self.lm_head = torch.nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        positions = torch.arange(0, input_ids.shape[1], dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def gpt2():
    torch.manual_seed(0)
    return Gpt2().eval(), (torch.randint(0, 100, (2, 12)),)


class RmsNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaAttention(torch.nn.Module):
    def __init__(self, dim, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.q_proj = torch.nn.Linear(dim, dim, bias=False)
        self.k_proj = torch.nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.v_proj = torch.nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.o_proj = torch.nn.Linear(dim, dim, bias=False)

    def forward(self, x, cos, sin):
        b, t, c = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        repeat = self.heads // self.kv_heads
        k = k[:, :, None].expand(b, self.kv_heads, repeat, t, self.head_dim).reshape(b, self.heads, t, self.head_dim)
        v = v[:, :, None].expand(b, self.kv_heads, repeat, t, self.head_dim).reshape(b, self.heads, t, self.head_dim)
        scores = q @ k.transpose(2, 3) / math.sqrt(self.head_dim)
        causal = torch.full((t, t), float("-inf")).triu(1)
        probs = torch.softmax(scores + causal, dim=-1, dtype=torch.float32).to(q.dtype)
        return self.o_proj((probs @ v).transpose(1, 2).reshape(b, t, c))


class LlamaMlp(torch.nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = torch.nn.Linear(dim, hidden, bias=False)
        self.up_proj = torch.nn.Linear(dim, hidden, bias=False)
        self.down_proj = torch.nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down_proj(torch.nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaLayer(torch.nn.Module):
    def __init__(self, dim, heads, kv_heads, hidden):
        super().__init__()
        self.input_layernorm = RmsNorm(dim)
        self.self_attn = LlamaAttention(dim, heads, kv_heads)
        self.post_attention_layernorm = RmsNorm(dim)
        self.mlp = LlamaMlp(dim, hidden)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(torch.nn.Module):
    """Grouped-query attention (4 heads over 2 key/value heads), rotary embeddings, RMSNorm, SiLU MLP."""

    def __init__(self, vocab=100, dim=32, heads=4, kv_heads=2, hidden=64, layers=2):
        super().__init__()
        self.head_dim = dim // heads
        self.embed_tokens = torch.nn.Embedding(vocab, dim)
        self.layers = torch.nn.ModuleList([LlamaLayer(dim, heads, kv_heads, hidden) for _ in range(layers)])
        self.norm = RmsNorm(dim)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, input_ids):
        t = input_ids.shape[1]
        freqs = torch.arange(t, dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.norm(x)


def llama():
    torch.manual_seed(0)
    return Llama().eval(), (torch.randint(0, 100, (2, 10)),)


class BertLayer(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm_1 = torch.nn.LayerNorm(dim, eps=1e-12)
        self.intermediate = torch.nn.Linear(dim, 2 * dim)
        self.output = torch.nn.Linear(2 * dim, dim)
        self.norm_2 = torch.nn.LayerNorm(dim, eps=1e-12)

    def forward(self, x, additive_mask):
        attended, _ = self.attention(x, x, x, attn_mask=additive_mask, need_weights=False)
        x = self.norm_1(x + attended)
        return self.norm_2(x + self.output(torch.nn.functional.gelu(self.intermediate(x))))


class Bert(torch.nn.Module):
    """Token, position and segment embeddings, a padding mask turned additive, two encoder layers, a pooler."""

    def __init__(self, vocab=100, dim=32, heads=4, layers=2, max_positions=64):
        super().__init__()
        self.heads = heads
        self.word_embeddings = torch.nn.Embedding(vocab, dim, padding_idx=0)
        self.position_embeddings = torch.nn.Embedding(max_positions, dim)
        self.token_type_embeddings = torch.nn.Embedding(2, dim)
        self.norm = torch.nn.LayerNorm(dim, eps=1e-12)
        self.layers = torch.nn.ModuleList([BertLayer(dim, heads) for _ in range(layers)])
        self.pooler = torch.nn.Linear(dim, dim)

    def forward(self, input_ids, attention_mask):
        b, t = input_ids.shape
        positions = torch.arange(t).expand(b, t)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions) + \
            self.token_type_embeddings(torch.zeros_like(input_ids))
        x = self.norm(x)
        additive = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        additive = additive.expand(b, self.heads, t, t).reshape(b * self.heads, t, t)
        for layer in self.layers:
            x = layer(x, additive)
        return x, torch.tanh(self.pooler(x[:, 0]))


def bert():
    torch.manual_seed(0)
    mask = torch.ones(2, 9, dtype=torch.int64)
    mask[1, 6:] = 0
    return Bert().eval(), (torch.randint(1, 100, (2, 9)), mask)


ARCHITECTURES = {"demo_llm": demo_llm, "mlp": mlp, "small_cnn": small_cnn, "gpt2": gpt2, "llama": llama,
                 "bert": bert}


class BasicBlock(torch.nn.Module):
    def __init__(self, inputs, outputs, stride):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(inputs, outputs, 3, stride=stride, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(outputs)
        self.conv2 = torch.nn.Conv2d(outputs, outputs, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(outputs)
        self.downsample = None
        if stride != 1 or inputs != outputs:
            self.downsample = torch.nn.Sequential(torch.nn.Conv2d(inputs, outputs, 1, stride=stride, bias=False),
                                                  torch.nn.BatchNorm2d(outputs))

    def forward(self, x):
        y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        return torch.relu(y + (x if self.downsample is None else self.downsample(x)))


class ResNet(torch.nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 7, stride=2, padding=3, bias=False), torch.nn.BatchNorm2d(8),
                                        torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(3, stride=2, padding=1))
        self.layer1 = torch.nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 8, 1))
        self.layer2 = torch.nn.Sequential(BasicBlock(8, 16, 2), BasicBlock(16, 16, 1))
        self.avgpool = torch.nn.AdaptiveAvgPool2d((1, 1))
        self.fc = torch.nn.Linear(16, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.avgpool(self.layer2(self.layer1(self.stem(x)))), 1))


def with_running_statistics(model):
    """Batch norms whose statistics are not the identity, in eval mode."""
    torch.manual_seed(1)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    return model.eval()


def resnet():
    torch.manual_seed(0)
    return with_running_statistics(ResNet()), (torch.randn(2, 3, 32, 32),)


class SqueezeExcite(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.fc1 = torch.nn.Conv2d(channels, channels // 4, 1)
        self.fc2 = torch.nn.Conv2d(channels // 4, channels, 1)

    def forward(self, x):
        scale = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        return x * torch.nn.functional.hardsigmoid(self.fc2(torch.relu(self.fc1(scale))))


class InvertedResidual(torch.nn.Module):
    def __init__(self, channels, expand):
        super().__init__()
        hidden = channels * expand
        self.expand = torch.nn.Sequential(torch.nn.Conv2d(channels, hidden, 1, bias=False), torch.nn.BatchNorm2d(hidden),
                                          torch.nn.Hardswish())
        self.depthwise = torch.nn.Sequential(torch.nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False),
                                             torch.nn.BatchNorm2d(hidden), torch.nn.ReLU6())
        self.se = SqueezeExcite(hidden)
        self.project = torch.nn.Sequential(torch.nn.Conv2d(hidden, channels, 1, bias=False), torch.nn.BatchNorm2d(channels))

    def forward(self, x):
        return x + self.project(self.se(self.depthwise(self.expand(x))))


class MobileNet(torch.nn.Module):
    """MobileNetV3-like: depthwise convolutions, hardswish, ReLU6, squeeze-and-excite."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), torch.nn.BatchNorm2d(8),
                                        torch.nn.Hardswish())
        self.blocks = torch.nn.Sequential(InvertedResidual(8, 3), InvertedResidual(8, 4))
        self.classifier = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Hardswish(), torch.nn.Dropout(0.2),
                                              torch.nn.Linear(32, classes))

    def forward(self, x):
        return self.classifier(self.blocks(self.stem(x)).mean((2, 3)))


def mobilenet():
    torch.manual_seed(0)
    return with_running_statistics(MobileNet()), (torch.randn(2, 3, 16, 16),)


class VisionTransformer(torch.nn.Module):
    """Patches by a strided convolution, a class token, learned positions, pre-norm encoder layers."""

    def __init__(self, image=16, patch=4, dim=32, heads=4, layers=2, classes=10):
        super().__init__()
        self.patch_embedding = torch.nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = torch.nn.Parameter(torch.randn(1, 1, dim))
        self.positions = torch.nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim) * 0.1)
        self.layers = torch.nn.ModuleList([Gpt2Block(dim, heads, 64) for _ in range(layers)])
        for layer in self.layers:  # bidirectional: no causal mask
            layer.attn.bias.fill_(True)
        self.norm = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, images):
        x = self.patch_embedding(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.positions
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x)[:, 0])


def vit():
    torch.manual_seed(0)
    return VisionTransformer().eval(), (torch.randn(2, 3, 16, 16),)


class CrossAttention(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q = torch.nn.Linear(dim, dim)
        self.kv = torch.nn.Linear(dim, 2 * dim)
        self.out = torch.nn.Linear(dim, dim)

    def forward(self, x, memory, memory_mask):
        b, t, c = x.shape
        s = memory.shape[1]
        q = self.q(x).view(b, t, self.heads, c // self.heads).permute(0, 2, 1, 3)
        k, v = self.kv(memory).view(b, s, 2, self.heads, c // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        scores = (q @ k.transpose(-1, -2)) * (c // self.heads) ** -0.5
        scores = scores.masked_fill(~memory_mask[:, None, None, :], float("-inf"))
        y = (scores.softmax(-1) @ v).permute(0, 2, 1, 3).reshape(b, t, c)
        return self.out(y)


class EncoderDecoder(torch.nn.Module):
    """A transformer encoder over the source, a decoder with causal self-attention and cross-attention
    over the encoder's output masked where the source is padding."""

    def __init__(self, vocab=50, dim=32, heads=4):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.encoder = Gpt2Block(dim, heads, 64)
        self.encoder.attn.bias.fill_(True)
        self.decoder_self = Gpt2Block(dim, heads, 64)
        self.cross = CrossAttention(dim, heads)
        self.norm = torch.nn.LayerNorm(dim)
        self.lm_head = torch.nn.Linear(dim, vocab)

    def forward(self, source, source_mask, target):
        memory = self.encoder(self.embed(source))
        x = self.decoder_self(self.embed(target))
        x = x + self.cross(self.norm(x), memory, source_mask.bool())
        return self.lm_head(x)


def encoder_decoder():
    torch.manual_seed(0)
    mask = torch.ones(2, 7, dtype=torch.int64)
    mask[0, 5:] = 0
    return EncoderDecoder().eval(), (torch.randint(0, 50, (2, 7)), mask, torch.randint(0, 50, (2, 5)))


class UNet(torch.nn.Module):
    """Two levels down by max pooling, up by transposed convolutions, skips concatenated."""

    def __init__(self):
        super().__init__()

        def double_conv(i, o):
            return torch.nn.Sequential(torch.nn.Conv2d(i, o, 3, padding=1), torch.nn.GroupNorm(2, o), torch.nn.SiLU(),
                                       torch.nn.Conv2d(o, o, 3, padding=1), torch.nn.SiLU())

        self.down1, self.down2, self.bottom = double_conv(1, 8), double_conv(8, 16), double_conv(16, 32)
        self.up2, self.up1 = torch.nn.ConvTranspose2d(32, 16, 2, stride=2), torch.nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.dec2, self.dec1 = double_conv(32, 16), double_conv(16, 8)
        self.out = torch.nn.Conv2d(8, 2, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(torch.nn.functional.max_pool2d(d1, 2))
        b = self.bottom(torch.nn.functional.max_pool2d(d2, 2))
        u2 = self.dec2(torch.cat([self.up2(b), d2], dim=1))
        u1 = self.dec1(torch.cat([self.up1(u2), d1], dim=1))
        return torch.sigmoid(self.out(u1))


def unet():
    torch.manual_seed(0)
    return UNet().eval(), (torch.randn(1, 1, 16, 16),)


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(30, 16)
        self.lstm = torch.nn.LSTM(16, 24, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(24, 5)

    def forward(self, ids):
        output, (h, _) = self.lstm(self.embed(ids))
        return self.head(output), h


def lstm():
    torch.manual_seed(0)
    return Lstm().eval(), (torch.randint(0, 30, (2, 6)),)


ARCHITECTURES.update({"resnet": resnet, "mobilenet": mobilenet, "vit": vit, "encoder_decoder": encoder_decoder,
                      "unet": unet, "lstm": lstm})
