#pragma once
// The small LLM of experimental-experiment's tutorial "LLM from scratch with Pytorch" built with
// GraphBuilder: two embeddings of the same ids added, one decoder layer (LayerNorm, two causal attention heads, a linear
// projection, residual, LayerNorm, ReLU feed-forward, residual). Weights are deterministic
// pseudo-random numbers; every torch module is a module scope (path and class name as torch names
// them) so that the functions layer can export them as local functions. It is a fixture for tests,
// benchmarks and examples: a realistic graph without torch.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "xexp/builder/graph_builder.hpp"

namespace xexp {

struct DemoLlmOptions {
  int64_t vocab_size = 1024;
  int64_t embedding_dim = 16;
  int64_t num_heads = 2;
  int64_t context_size = 256;
  int64_t ff_dim = 128;
  int64_t batch = 1;
  int64_t sequence = 30;
  // LayerNormalization nodes (what that tutorial's exported model shows) or their decomposition
  // ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add, which the LayerNormalization pattern fuses.
  bool decomposed_layer_norm = false;
  uint64_t seed = 0;
  // Decoder layers: the tutorial has one (module "decoder"); more are stacked as a torch ModuleList names
  // them ("decoders.0", "decoders.1", ...), a model of any size for the optimizer's scaling benchmark.
  int64_t layers = 1;
};

namespace detail {

// Deterministic weights on every platform: a 64-bit LCG, top 24 bits as the mantissa.
class DemoRng {
 public:
  explicit DemoRng(uint64_t seed) : state_(seed * 2654435761ULL + 1) {}
  float uniform(float lo, float hi) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * static_cast<float>(state_ >> 40) / static_cast<float>(1 << 24);
  }
  Tensor tensor(std::vector<int64_t> dims, float bound) {
    Tensor t(ElemType::Float, std::move(dims));
    for (float& v : t.mutable_data<float>()) v = uniform(-bound, bound);
    return t;
  }

 private:
  uint64_t state_;
};

class DemoLlmBuilder {
 public:
  DemoLlmBuilder(GraphBuilder& g, const DemoLlmOptions& o) : g_(g), o_(o), rng_(o.seed) {}

  std::string build() {
    g_.make_tensor_input("input_ids", ElemType::Int64, Shape{o_.batch, o_.sequence});
    std::string x = embedding("input_ids");
    for (int64_t k = 0; k < o_.layers; ++k) {
      decoder_ = o_.layers == 1 ? "decoder" : "decoders." + std::to_string(k);
      const bool last = k + 1 == o_.layers;
      x = decoder(x, last ? std::vector<std::string>{"output_0"} : std::vector<std::string>{});
    }
    return g_.make_tensor_output("output_0", ElemType::Float, Shape{o_.batch, o_.sequence, o_.embedding_dim});
  }

 private:
  std::string embedding(const std::string& ids) {
    auto scope = g_.module("embedding", "__main__.Embedding");
    return g_.op.Add(lookup("embedding.embedding", ids), lookup("embedding.pe", ids));
  }
  std::string lookup(const std::string& path, const std::string& ids) {
    auto scope = g_.module(path, "Embedding");
    std::string table = g_.make_initializer(path + ".weight", rng_.tensor({o_.vocab_size, o_.embedding_dim}, 1.f));
    return g_.op.Gather(table, ids);
  }

  std::string decoder(const std::string& x, std::vector<std::string> output) {
    auto scope = g_.module(decoder_, "__main__.DecoderLayer");
    std::string attention = g_.op.Add(multi_attention(layer_norm(decoder_ + ".norm_1", x)), x);
    return g_.op.Add(feed_forward(layer_norm(decoder_ + ".norm_2", attention)), attention, {},
                     {.outputs = std::move(output)});
  }

  std::string layer_norm(const std::string& path, const std::string& x) {
    auto scope = g_.module(path, "LayerNorm");
    const int64_t c = o_.embedding_dim;
    std::string weight = g_.make_initializer(path + ".weight", Tensor::from<float>({c}, std::vector<float>(c, 1.f)));
    std::string bias = g_.make_initializer(path + ".bias", Tensor::from<float>({c}, std::vector<float>(c, 0.f)));
    constexpr float kEpsilon = 1e-5f;
    if (!o_.decomposed_layer_norm)
      return g_.op.LayerNormalization(x, weight, bias, {{"axis", -1}, {"epsilon", kEpsilon}});
    std::string mean = g_.op.ReduceMean(x, std::vector<int64_t>{-1});
    std::string centered = g_.op.Sub(x, mean);
    std::string variance = g_.op.ReduceMean(g_.op.Pow(centered, Tensor::scalar<float>(2.f)), std::vector<int64_t>{-1});
    std::string deviation = g_.op.Sqrt(g_.op.Add(variance, Tensor::scalar<float>(kEpsilon)));
    return g_.op.Add(g_.op.Mul(g_.op.Div(centered, deviation), weight), bias);
  }

  // torch.nn.Linear: x @ weight^T (+ bias), weight stored (out, in).
  std::string linear(const std::string& path, const std::string& x, int64_t in, int64_t out, bool bias) {
    auto scope = g_.module(path, "Linear");
    const float bound = 1.f / std::sqrt(static_cast<float>(in));
    std::string weight = g_.make_initializer(path + ".weight", rng_.tensor({out, in}, bound));
    std::string y = g_.op.MatMul(x, g_.op.Transpose(weight, {{"perm", {1, 0}}}));
    if (!bias) return y;
    return g_.op.Add(y, g_.make_initializer(path + ".bias", rng_.tensor({out}, bound)));
  }

  std::string attention_head(const std::string& path, const std::string& x) {
    auto scope = g_.module(path, "__main__.AttentionBlock");
    const int64_t c = o_.embedding_dim, t = o_.sequence, n = o_.context_size;
    std::string query = linear(path + ".query", x, c, c, false);
    std::string key = linear(path + ".key", x, c, c, false);
    std::string value = linear(path + ".value", x, c, c, false);
    std::string scores = g_.op.MatMul(query, g_.op.Transpose(key, {{"perm", {0, 2, 1}}}));
    std::string scaled = g_.op.Mul(scores, Tensor::scalar<float>(1.f / std::sqrt(static_cast<float>(c))));
    // the registered buffer: tril(ones(context, context)), named as torch.export names buffers
    Tensor tril(ElemType::Float, {n, n});
    auto m = tril.mutable_data<float>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j) m[static_cast<std::size_t>(i * n + j)] = 1.f;
    std::string buffer = path + ".mask";
    for (char& ch : buffer)
      if (ch == '.') ch = '_';
    std::string mask = g_.make_initializer("b_" + buffer, std::move(tril));
    std::string causal = g_.op.Slice(mask, {0, 0}, {t, t}, {0, 1});
    std::string masked = g_.op.Equal(causal, Tensor::scalar<float>(0.f));
    std::string filled = g_.op.Where(masked, Tensor::from<float>({1}, {-std::numeric_limits<float>::infinity()}), scaled);
    return g_.op.MatMul(g_.op.Softmax(filled, {{"axis", -1}}), value);
  }

  std::string multi_attention(const std::string& x) {
    auto scope = g_.module(decoder_ + ".attention", "__main__.MultiAttentionBlock");
    std::vector<Arg> heads;
    for (int64_t h = 0; h < o_.num_heads; ++h)
      heads.emplace_back(attention_head(decoder_ + ".attention.attention." + std::to_string(h), x));
    std::string cat = g_.op.Concat(std::move(heads), {{"axis", -1}});
    return linear(decoder_ + ".attention.linear", cat, o_.embedding_dim * o_.num_heads, o_.embedding_dim, true);
  }

  std::string feed_forward(const std::string& x) {
    auto scope = g_.module(decoder_ + ".feed_forward", "__main__.FeedForward");
    std::string hidden = linear(decoder_ + ".feed_forward.linear_1", x, o_.embedding_dim, o_.ff_dim, true);
    std::string activated;
    {
      auto relu = g_.module(decoder_ + ".feed_forward.relu", "ReLU");
      activated = g_.op.Relu(hidden);
    }
    return linear(decoder_ + ".feed_forward.linear_2", activated, o_.ff_dim, o_.embedding_dim, true);
  }

  GraphBuilder& g_;
  const DemoLlmOptions& o_;
  DemoRng rng_;
  std::string decoder_;  // the module path of the decoder layer being built
};

}  // namespace detail

// Builds the LLM into `g` (input "input_ids", output "output_0"); returns the output name. `g` keeps
// the module scopes of every node.
inline std::string build_demo_llm(GraphBuilder& g, const DemoLlmOptions& options = {}) {
  return detail::DemoLlmBuilder(g, options).build();
}

// The same, as a model (opset 18, ir_version 9).
inline ir::Model build_demo_llm(const DemoLlmOptions& options = {}) {
  GraphBuilder g(18, 9);
  build_demo_llm(g, options);
  return g.to_model();
}

}  // namespace xexp
