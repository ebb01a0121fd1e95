// BERT-Large, GPT-2 XL, Llama-3 8B/70B and GPT-3 175B traces: Hugging Face parameter
// tensors, analytic compute model.
//
// Compute model (per sequence of S tokens, forward): every matmul weight W (in x out) costs
// 2*S*in*out FLOPs; self-attention adds 2*2*S^2*d per layer (Q.K^T and attention.V, full
// S x S as the dense kernels compute it); lookups, layer norms and softmax are not counted.
// Backward = 2 x forward (dX and dW). The step at the reference batch runs at
// kTransformerAchievedFraction of the reference GPU's peak FP32.
#include "hvd/workloads/transformer_models.h"

#include <cstdio>
#include <string>
#include <string_view>

#include "hvd/workloads/gpu_catalog.h"

namespace hvd::workloads {
namespace {

// Appends a layer and collects its tensors in creation order (reversed at the end).
class TransformerBuilder {
 public:
  explicit TransformerBuilder(int seq) : seq_(seq) {}

  /// Starts a layer; subsequent tensors belong to it.
  void layer(const std::string& name, const std::string& type) {
    trace_.layers.push_back(LayerSpec{name, type, 0, 0, 0});
  }
  /// A parameter tensor of the current layer.
  void param(const std::string& name, std::vector<std::int64_t> shape) {
    TensorSpec t;
    t.name = name;
    t.elements = 1;
    for (auto d : shape) t.elements *= d;
    t.shape = std::move(shape);
    t.layer = trace_.layers.back().name;
    created_.push_back(std::move(t));
  }
  /// A matmul of `tokens` rows by an in x out weight, added to the current layer's FLOPs.
  void matmul(double tokens, double in, double out) { add_flops(2 * tokens * in * out); }
  /// Q.K^T and attention.V over the full sequence for hidden size d.
  void attention(double d) { add_flops(2.0 * 2.0 * seq_ * seq_ * d); }
  /// Sequence length.
  double seq() const { return seq_; }

  /// Finishes timing with the FLOPs rule at the assumed fraction of the reference GPU.
  ModelTrace finish(int reference_batch) && {
    trace_.tensors.assign(created_.rbegin(), created_.rend());
    trace_.params = trace_.total_elements();
    trace_.sample_unit = "sequences";
    trace_.reference_gpu = "P100";
    trace_.reference_batch = reference_batch;
    trace_.seq_len = seq_;
    const double peak = find_gpu("P100").value().fp32_tflops * 1e12;
    double bwd = 0;  // first layer (embeddings) has no FLOPs, so backward is exactly 2x
    for (std::size_t i = 0; i < trace_.layers.size(); ++i) {
      bwd += (i == 0 ? 1.0 : 2.0) * trace_.layers[i].fwd_flops;
    }
    const double step_flops = (trace_.fwd_flops() + bwd) * reference_batch;
    const double step_s = step_flops / (peak * kTransformerAchievedFraction);
    trace_.reference_samples_per_sec = reference_batch / step_s;
    trace_.reference_source =
        "computed, not measured: (forward + backward FLOPs) / (45% of P100-SXM2 peak FP32 "
        "10.6 TFLOPS); 45% is what the published P100 ResNet-50/Inception v3 throughputs "
        "achieve (about 48%/46%)";
    trace_.compute_model =
        "fwd FLOPs = 2*S*(matmul weights) + 4*S^2*d per layer; bwd = 2 x fwd; layers split by "
        "FLOPs; S = " +
        std::to_string(seq_);
    split_step_by_flops(trace_, step_s);
    return std::move(trace_);
  }

 private:
  void add_flops(double f) { trace_.layers.back().fwd_flops += f; }
  int seq_;
  ModelTrace trace_;
  std::vector<TensorSpec> created_;
};

// nn.Linear (weight [out, in]) + bias, applied to `tokens` rows.
void linear(TransformerBuilder& b, const std::string& name, std::int64_t in, std::int64_t out,
            double tokens) {
  b.param(name + ".weight", {out, in});
  b.param(name + ".bias", {out});
  b.matmul(tokens, static_cast<double>(in), static_cast<double>(out));
}

void layer_norm(TransformerBuilder& b, const std::string& name, std::int64_t d) {
  b.param(name + ".weight", {d});
  b.param(name + ".bias", {d});
}

// One BertLayer: self-attention q/k/v, output dense + LayerNorm, intermediate, output + LN.
void bert_layer(TransformerBuilder& b, int index, std::int64_t d, std::int64_t ffn) {
  const std::string p = "bert.encoder.layer." + std::to_string(index);
  const double s = b.seq();
  b.layer(p, "transformer_block");
  for (const char* qkv : {"query", "key", "value"}) {
    linear(b, p + ".attention.self." + qkv, d, d, s);
  }
  b.attention(static_cast<double>(d));
  linear(b, p + ".attention.output.dense", d, d, s);
  layer_norm(b, p + ".attention.output.LayerNorm", d);
  linear(b, p + ".intermediate.dense", d, ffn, s);
  linear(b, p + ".output.dense", ffn, d, s);
  layer_norm(b, p + ".output.LayerNorm", d);
}

}  // namespace

ModelTrace bert_large_trace(int seq) {
  constexpr std::int64_t kVocab = 30522, kD = 1024, kFfn = 4096, kPositions = kBertMaxSeq, kTypes = 2;
  constexpr int kLayers = 24;
  TransformerBuilder b(seq);
  b.layer("bert.embeddings", "embedding");
  b.param("bert.embeddings.word_embeddings.weight", {kVocab, kD});
  b.param("bert.embeddings.position_embeddings.weight", {kPositions, kD});
  b.param("bert.embeddings.token_type_embeddings.weight", {kTypes, kD});
  layer_norm(b, "bert.embeddings.LayerNorm", kD);
  for (int i = 0; i < kLayers; ++i) bert_layer(b, i, kD, kFfn);
  b.layer("bert.pooler", "fc");
  linear(b, "bert.pooler.dense", kD, kD, 1);  // [CLS] token only
  b.layer("cls", "head");
  b.param("cls.predictions.bias", {kVocab});  // decoder weight is tied to word_embeddings
  linear(b, "cls.predictions.transform.dense", kD, kD, seq);
  layer_norm(b, "cls.predictions.transform.LayerNorm", kD);
  b.matmul(seq, kD, kVocab);  // MLM decoder over every position (as BertForPreTraining does)
  linear(b, "cls.seq_relationship", kD, 2, 1);
  ModelTrace t = std::move(b).finish(64);
  t.name = "bert-large";
  t.description = "BERT-Large uncased pre-training (BertForPreTraining), seq " + std::to_string(seq) +
                  ", 336M params";
  return t;
}

ModelTrace gpt2_xl_trace(int seq) {
  constexpr std::int64_t kVocab = 50257, kD = 1600, kPositions = kGpt2MaxSeq;
  constexpr int kLayers = 48;
  TransformerBuilder b(seq);
  b.layer("transformer.embeddings", "embedding");
  b.param("transformer.wte.weight", {kVocab, kD});
  b.param("transformer.wpe.weight", {kPositions, kD});
  for (int i = 0; i < kLayers; ++i) {
    const std::string p = "transformer.h." + std::to_string(i);
    b.layer(p, "transformer_block");
    layer_norm(b, p + ".ln_1", kD);
    // GPT-2 Conv1D stores weights [in, out].
    b.param(p + ".attn.c_attn.weight", {kD, 3 * kD});
    b.param(p + ".attn.c_attn.bias", {3 * kD});
    b.matmul(seq, kD, 3 * kD);
    b.attention(kD);
    b.param(p + ".attn.c_proj.weight", {kD, kD});
    b.param(p + ".attn.c_proj.bias", {kD});
    b.matmul(seq, kD, kD);
    layer_norm(b, p + ".ln_2", kD);
    b.param(p + ".mlp.c_fc.weight", {kD, 4 * kD});
    b.param(p + ".mlp.c_fc.bias", {4 * kD});
    b.param(p + ".mlp.c_proj.weight", {4 * kD, kD});
    b.param(p + ".mlp.c_proj.bias", {kD});
    b.matmul(seq, kD, 4 * kD);
    b.matmul(seq, 4 * kD, kD);
  }
  b.layer("transformer.ln_f", "layer_norm");
  layer_norm(b, "transformer.ln_f", kD);
  b.layer("lm_head", "head");  // weight tied to transformer.wte: no tensor of its own
  b.matmul(seq, kD, kVocab);
  ModelTrace t = std::move(b).finish(8);
  t.name = "gpt2-xl";
  t.description = "GPT-2 XL (GPT2LMHeadModel), seq " + std::to_string(seq) + ", 1.56B params";
  return t;
}

// ---- Large language models: one table of public configurations, one builder per family ----

namespace {

// A decoder-only language model's configuration, as its public config file states it.
struct LlmConfig {
  const char* name;         ///< registry name
  const char* family;       ///< "llama" (LlamaForCausalLM) or "gpt" (GPT2LMHeadModel layout)
  std::int64_t vocab;       ///< vocab_size
  std::int64_t d;           ///< hidden_size / d_model
  int layers;               ///< num_hidden_layers / n_layers
  int heads;                ///< num_attention_heads
  int kv_heads;             ///< num_key_value_heads (grouped-query attention; = heads without)
  std::int64_t ffn;         ///< intermediate_size / d_ff
  int max_seq;              ///< max_position_embeddings / n_ctx
  int default_seq;          ///< the pre-training length
  const char* source;       ///< where the numbers come from
};

// Llama 3: Hugging Face meta-llama/Meta-Llama-3-8B and Meta-Llama-3-70B config.json
// (hidden_size, intermediate_size, num_hidden_layers, num_attention_heads,
// num_key_value_heads, vocab_size 128256, max_position_embeddings 8192, untied lm_head) and
// "The Llama 3 Herd of Models" (arXiv:2407.21783, Table 3; pre-trained at 8,192 tokens).
// GPT-3 175B: Brown et al., "Language Models are Few-Shot Learners" (arXiv:2005.14165,
// Table 2.1: 96 layers, d_model 12288, 96 heads of 128, context 2048; GPT-2's vocabulary of
// 50257 and layout, d_ff = 4 d_model).
constexpr LlmConfig kLlms[] = {
    {"llama3-8b", "llama", 128256, 4096, 32, 32, 8, 14336, kLlama3MaxSeq, 8192,
     "Hugging Face meta-llama/Meta-Llama-3-8B config.json; Llama 3 Herd of Models (arXiv:2407.21783) Table 3"},
    {"llama3-70b", "llama", 128256, 8192, 80, 64, 8, 28672, kLlama3MaxSeq, 8192,
     "Hugging Face meta-llama/Meta-Llama-3-70B config.json; Llama 3 Herd of Models (arXiv:2407.21783) Table 3"},
    {"gpt3-175b", "gpt", 50257, 12288, 96, 96, 96, 4 * 12288, kGpt3MaxSeq, 2048,
     "Brown et al. 2020, Language Models are Few-Shot Learners (arXiv:2005.14165) Table 2.1; GPT-2 layout"},
};

const LlmConfig& llm_config(std::string_view name) {
  for (const LlmConfig& c : kLlms)
    if (name == c.name) return c;
  return kLlms[0];
}

// LlamaForCausalLM: RMSNorm (weight only), no biases, grouped-query attention, SwiGLU MLP
// (gate, up, down), rotary positions (no tensor), lm_head untied.
void llama_blocks(TransformerBuilder& b, const LlmConfig& c) {
  const std::int64_t d = c.d, kv = d / c.heads * c.kv_heads;
  const double s = b.seq();
  b.layer("model.embed_tokens", "embedding");
  b.param("model.embed_tokens.weight", {c.vocab, d});
  for (int i = 0; i < c.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i);
    b.layer(p, "transformer_block");
    b.param(p + ".self_attn.q_proj.weight", {d, d});
    b.param(p + ".self_attn.k_proj.weight", {kv, d});
    b.param(p + ".self_attn.v_proj.weight", {kv, d});
    b.param(p + ".self_attn.o_proj.weight", {d, d});
    b.matmul(s, d, d + 2 * kv);
    b.attention(static_cast<double>(d));
    b.matmul(s, d, d);
    b.param(p + ".mlp.gate_proj.weight", {c.ffn, d});
    b.param(p + ".mlp.up_proj.weight", {c.ffn, d});
    b.param(p + ".mlp.down_proj.weight", {d, c.ffn});
    b.matmul(s, d, 2 * c.ffn);
    b.matmul(s, c.ffn, d);
    b.param(p + ".input_layernorm.weight", {d});
    b.param(p + ".post_attention_layernorm.weight", {d});
  }
  b.layer("model.norm", "layer_norm");
  b.param("model.norm.weight", {d});
  b.layer("lm_head", "head");
  b.param("lm_head.weight", {c.vocab, d});
  b.matmul(s, d, c.vocab);
}

// GPT-2's layout (GPT2LMHeadModel: learned positions, LayerNorm and biases, Conv1D weights
// [in, out], lm_head tied to wte) at GPT-3's sizes. GPT-3's alternating locally banded
// attention is counted dense.
void gpt_blocks(TransformerBuilder& b, const LlmConfig& c) {
  const std::int64_t d = c.d;
  const double s = b.seq();
  b.layer("transformer.embeddings", "embedding");
  b.param("transformer.wte.weight", {c.vocab, d});
  b.param("transformer.wpe.weight", {c.max_seq, d});
  for (int i = 0; i < c.layers; ++i) {
    const std::string p = "transformer.h." + std::to_string(i);
    b.layer(p, "transformer_block");
    layer_norm(b, p + ".ln_1", d);
    b.param(p + ".attn.c_attn.weight", {d, 3 * d});
    b.param(p + ".attn.c_attn.bias", {3 * d});
    b.matmul(s, d, 3 * d);
    b.attention(static_cast<double>(d));
    b.param(p + ".attn.c_proj.weight", {d, d});
    b.param(p + ".attn.c_proj.bias", {d});
    b.matmul(s, d, d);
    layer_norm(b, p + ".ln_2", d);
    b.param(p + ".mlp.c_fc.weight", {d, c.ffn});
    b.param(p + ".mlp.c_fc.bias", {c.ffn});
    b.param(p + ".mlp.c_proj.weight", {c.ffn, d});
    b.param(p + ".mlp.c_proj.bias", {d});
    b.matmul(s, d, c.ffn);
    b.matmul(s, c.ffn, d);
  }
  b.layer("transformer.ln_f", "layer_norm");
  layer_norm(b, "transformer.ln_f", d);
  b.layer("lm_head", "head");  // tied to wte
  b.matmul(s, d, c.vocab);
}

}  // namespace

const std::vector<std::string>& llm_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const LlmConfig& c : kLlms) v.emplace_back(c.name);
    return v;
  }();
  return names;
}

int llm_max_seq(std::string_view name) { return llm_config(name).max_seq; }

ModelTrace llm_trace(std::string_view name, int seq) {
  const LlmConfig& c = llm_config(name);
  if (seq <= 0) seq = c.default_seq;
  TransformerBuilder b(seq);
  if (std::string_view(c.family) == "llama") llama_blocks(b, c);
  else gpt_blocks(b, c);
  ModelTrace t = std::move(b).finish(1);
  t.name = c.name;
  char params[32];
  std::snprintf(params, sizeof params, "%.1fB", static_cast<double>(t.params) / 1e9);
  t.description = std::string(c.name) + " (" + c.family + " layout, " + std::to_string(c.layers) + " layers, d " +
                  std::to_string(c.d) + ", " + std::to_string(c.heads) + "/" + std::to_string(c.kv_heads) +
                  " heads, FFN " + std::to_string(c.ffn) + ", vocab " + std::to_string(c.vocab) + "), seq " +
                  std::to_string(seq) + ", " + params + " params; " + c.source;
  return t;
}

}  // namespace hvd::workloads
