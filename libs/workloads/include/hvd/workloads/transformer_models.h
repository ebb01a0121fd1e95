// Transformer workloads: BERT-Large pre-training, GPT-2 XL and the language models Llama-3 8B /
// 70B and GPT-3 175B, with Hugging Face tensor names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hvd/workloads/model_trace.h"

namespace hvd::workloads {

/// Fraction of the reference GPU's peak FP32 a transformer step is assumed to achieve.
inline constexpr double kTransformerAchievedFraction = 0.45;

/// Longest sequence each model's position embeddings allow.
inline constexpr int kBertMaxSeq = 512;
inline constexpr int kGpt2MaxSeq = 1024;
inline constexpr int kLlama3MaxSeq = 8192;
inline constexpr int kGpt3MaxSeq = 2048;

/// BERT-Large uncased, BertForPreTraining (MLM + NSP heads, decoder tied to the word
/// embeddings), sequence length `seq` (1..512; pre-training runs 128, then 512): 336,226,108
/// parameters in 398 tensors whatever the length; the compute grows with it.
ModelTrace bert_large_trace(int seq = 128);
/// GPT-2 XL, GPT2LMHeadModel (lm_head tied to wte), sequence length `seq` (1..1024):
/// 1,557,611,200 parameters in 580 tensors.
ModelTrace gpt2_xl_trace(int seq = 1024);

/// The language models of the configuration table: "llama3-8b", "llama3-70b", "gpt3-175b".
const std::vector<std::string>& llm_names();
/// Longest sequence of `name` (one of llm_names()).
int llm_max_seq(std::string_view name);
/// Language model `name` (one of llm_names()) at sequence length `seq` (0: its pre-training
/// length, 8192 for Llama 3, 2048 for GPT-3), reference batch one sequence: every parameter
/// tensor (Llama 3 8B 8,030,261,248 in 291 tensors; 70B 70,553,706,496 in 723; GPT-3
/// 174,604,259,328 in 1,156), one layer per decoder block plus embedding, final norm and head.
ModelTrace llm_trace(std::string_view name, int seq = 0);

}  // namespace hvd::workloads
