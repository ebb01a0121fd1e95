// BERT-Large and GPT-2 XL: exact parameter counts, tensor inventory, order and compute model.
#include "hvd/workloads/transformer_models.h"

#include <gtest/gtest.h>

#include "hvd/workloads/gpu_catalog.h"

namespace hvd::workloads {
namespace {

// BertModel (HF "bert-large-uncased"): embeddings 30522*1024 + 512*1024 + 2*1024 + LN 2*1024
// = 31,782,912; per layer 4*(1024^2+1024) + 2*1024 + (1024*4096+4096) + (4096*1024+1024)
// + 2*1024 = 12,596,224, x24 = 302,309,376; pooler 1024^2+1024 = 1,049,600;
// total 335,141,888. BertForPreTraining adds the MLM transform 1,049,600 + LN 2,048 + decoder
// bias 30,522 (decoder weight tied) + NSP 2*1024+2 = 2,050: 336,226,108 ("340M" in the paper).
constexpr std::int64_t kBertModelParams = 335'141'888;
constexpr std::int64_t kBertPretrainingParams = 336'226'108;
// GPT-2 XL: wte 50257*1600 = 80,411,200; wpe 1024*1600 = 1,638,400; per block
// ln 2*3200 + c_attn 1600*4800+4800 + c_proj 1600^2+1600 + c_fc 1600*6400+6400
// + c_proj 6400*1600+1600 = 30,740,800, x48 = 1,475,558,400; ln_f 3,200;
// total 1,557,611,200 (lm_head tied to wte).
constexpr std::int64_t kGpt2XlParams = 1'557'611'200;

std::int64_t sum_with_prefix(const ModelTrace& t, const std::string& prefix) {
  std::int64_t n = 0;
  for (const auto& tensor : t.tensors) {
    if (tensor.name.rfind(prefix, 0) == 0) n += tensor.elements;
  }
  return n;
}

TEST(BertLarge, ParameterCountsArePublishedOnes) {
  const ModelTrace t = bert_large_trace();
  EXPECT_EQ(t.params, kBertPretrainingParams);
  EXPECT_EQ(t.total_elements(), kBertPretrainingParams);
  EXPECT_EQ(sum_with_prefix(t, "bert."), kBertModelParams);
  EXPECT_EQ(t.tensor_count(), 398u);  // 5 + 24*16 + 2 + 5 + 2
  EXPECT_EQ(t.total_bytes(), kBertPretrainingParams * 4);
  EXPECT_EQ(t.sample_unit, "sequences");
}

TEST(BertLarge, BackpropOrderHeadFirstEmbeddingsLast) {
  const ModelTrace t = bert_large_trace();
  EXPECT_EQ(t.tensors.front().name, "cls.seq_relationship.bias");
  EXPECT_EQ(t.tensors[7].name, "bert.pooler.dense.bias");
  EXPECT_EQ(t.tensors[9].name, "bert.encoder.layer.23.output.LayerNorm.bias");
  EXPECT_EQ(t.tensors.back().name, "bert.embeddings.word_embeddings.weight");
  EXPECT_EQ(t.tensors.back().shape, (std::vector<std::int64_t>{30522, 1024}));
  EXPECT_DOUBLE_EQ(t.tensors.back().ready_s, t.bwd_s);  // tied weight: ready at the very end
  for (std::size_t i = 1; i < t.tensors.size(); ++i) {
    EXPECT_GE(t.tensors[i].ready_s, t.tensors[i - 1].ready_s) << t.tensors[i].name;
  }
}

TEST(Gpt2Xl, ParameterCountIsPublishedOne) {
  const ModelTrace t = gpt2_xl_trace();
  EXPECT_EQ(t.params, kGpt2XlParams);
  EXPECT_EQ(t.tensor_count(), 580u);  // 2 + 48*12 + 2
  EXPECT_EQ(t.tensors.front().name, "transformer.ln_f.bias");
  EXPECT_EQ(t.tensors[2].name, "transformer.h.47.mlp.c_proj.bias");
  EXPECT_EQ(t.tensors.back().name, "transformer.wte.weight");
  for (const auto& tensor : t.tensors) {
    if (tensor.name == "transformer.h.0.attn.c_attn.weight") {
      EXPECT_EQ(tensor.shape, (std::vector<std::int64_t>{1600, 4800}));
    }
  }
}

// 2 * params * tokens + attention per sequence, backward 2x, at 45% of P100 FP32 peak.
TEST(Gpt2Xl, ComputeModelFollowsFlopsRule) {
  const ModelTrace t = gpt2_xl_trace();
  const double seq = 1024, d = 1600, layers = 48, vocab = 50257;
  const double block_weights = 12 * d * d;  // qkv 3d^2 + proj d^2 + mlp 8d^2
  const double fwd = 2 * seq * (layers * block_weights + d * vocab) + layers * 4 * seq * seq * d;
  EXPECT_NEAR(t.fwd_flops() / fwd, 1.0, 1e-12);
  const double peak = find_gpu("P100").value().fp32_tflops * 1e12;
  const double step = 3 * fwd * t.reference_batch / (peak * kTransformerAchievedFraction);
  EXPECT_NEAR(t.step_s, step, step * 1e-12);
  EXPECT_NEAR(t.bwd_s, 2 * t.fwd_s, 1e-9);
  EXPECT_NEAR(t.reference_samples_per_sec, t.reference_batch / t.step_s, 1e-12);
}

TEST(BertLarge, ComputeIsAboutSixTimesParamsTimesTokens) {
  const ModelTrace t = bert_large_trace();
  const double six_n_t = 6.0 * kBertPretrainingParams * 128;
  const double step_flops = 3 * t.fwd_flops();
  // Embedding lookups cost nothing, the tied decoder and attention add: within 10%.
  EXPECT_NEAR(step_flops / six_n_t, 1.0, 0.10);
}

// Llama 3 8B / 70B and GPT-3 175B from their public configurations (docs/models.md): every
// parameter counted, as the published totals state them.
TEST(LanguageModels, ParameterCountsOfThePublicConfigs) {
  struct Case {
    const char* name;
    std::int64_t params;
    std::size_t tensors;
    int seq;
  } cases[] = {{"llama3-8b", 8030261248, 291, 8192}, {"llama3-70b", 70553706496, 723, 8192},
               {"gpt3-175b", 174604259328, 1156, 2048}};
  for (const Case& c : cases) {
    const ModelTrace t = llm_trace(c.name);
    EXPECT_EQ(t.params, c.params) << c.name;
    EXPECT_EQ(t.total_elements(), c.params) << c.name;
    EXPECT_EQ(t.tensor_count(), c.tensors) << c.name;
    EXPECT_EQ(t.seq_len, c.seq) << c.name;
    EXPECT_EQ(t.sample_unit, "sequences");
    EXPECT_EQ(t.reference_batch, 1);
    EXPECT_NE(t.description.find("arXiv"), std::string::npos) << "the source is named: " << t.description;
  }
  // One Llama-3 70B block: q/o 8192^2, k/v 8192x1024 (8 KV heads of 128), SwiGLU 3 x 8192 x 28672, two RMSNorms.
  const ModelTrace t = llm_trace("llama3-70b");
  std::int64_t block0 = 0;
  for (const auto& x : t.tensors)
    if (x.layer == "model.layers.0") block0 += x.elements;
  EXPECT_EQ(block0, 2 * 8192LL * 8192 + 2 * 8192LL * 1024 + 3 * 8192LL * 28672 + 2 * 8192);
  EXPECT_EQ(t.layers.size(), 83u);  // embedding, 80 blocks, final norm, lm_head
}

// Training FLOPs per token: 6 N (N: the matmul weights, lm_head included, the input
// embedding a lookup) + 12 L S d for attention over the full S x S (Kaplan et al. 2020 2.1,
// with the attention written out as the dense kernels compute it).
TEST(LanguageModels, TrainingFlopsAreSixNPlusAttention) {
  for (const char* name : {"llama3-8b", "llama3-70b"}) {
    for (int seq : {2048, 8192}) {
      const ModelTrace t = llm_trace(name, seq);
      std::int64_t embed = 0;
      for (const auto& x : t.tensors)
        if (x.layer == "model.embed_tokens") embed += x.elements;
      const bool big = std::string(name) == "llama3-70b";
      const double layers = big ? 80 : 32, d = big ? 8192 : 4096;
      const double n = static_cast<double>(t.params - embed);  // norms (0.001 %) counted too
      const double per_token = 3 * t.fwd_flops() / seq;
      EXPECT_NEAR(per_token / (6 * n + 12 * layers * seq * d), 1.0, 1e-4) << name << " seq " << seq;
    }
  }
  const ModelTrace g = llm_trace("gpt3-175b");  // tied head: 6 N within 1 % beside attention
  EXPECT_NEAR(3 * g.fwd_flops() / 2048 / (6 * 174604259328.0 + 12 * 96 * 2048 * 12288.0), 1.0, 0.01);
}

}  // namespace
}  // namespace hvd::workloads
