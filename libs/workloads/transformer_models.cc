// BERT-Large and GPT-2 XL traces: Hugging Face parameter tensors, analytic compute model.
//
// Compute model (per sequence of S tokens, forward): every matmul weight W (in x out) costs
// 2*S*in*out FLOPs; self-attention adds 2*2*S^2*d per layer (Q.K^T and attention.V, full
// S x S as the dense kernels compute it); lookups, layer norms and softmax are not counted.
// Backward = 2 x forward (dX and dW). The step at the reference batch runs at
// kTransformerAchievedFraction of the reference GPU's peak FP32.
#include "hvd/workloads/transformer_models.h"

#include <string>

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

}  // namespace hvd::workloads
