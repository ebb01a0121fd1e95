// Transformer workloads: BERT-Large pre-training and GPT-2 XL, with Hugging Face tensor names.
#pragma once

#include "hvd/workloads/model_trace.h"

namespace hvd::workloads {

/// Fraction of the reference GPU's peak FP32 a transformer step is assumed to achieve.
inline constexpr double kTransformerAchievedFraction = 0.45;

/// Longest sequence each model's position embeddings allow.
inline constexpr int kBertMaxSeq = 512;
inline constexpr int kGpt2MaxSeq = 1024;

/// BERT-Large uncased, BertForPreTraining (MLM + NSP heads, decoder tied to the word
/// embeddings), sequence length `seq` (1..512; pre-training runs 128, then 512): 336,226,108
/// parameters in 398 tensors whatever the length; the compute grows with it.
ModelTrace bert_large_trace(int seq = 128);
/// GPT-2 XL, GPT2LMHeadModel (lm_head tied to wte), sequence length `seq` (1..1024):
/// 1,557,611,200 parameters in 580 tensors.
ModelTrace gpt2_xl_trace(int seq = 1024);

}  // namespace hvd::workloads
