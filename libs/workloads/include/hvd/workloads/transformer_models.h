// Transformer workloads: BERT-Large pre-training and GPT-2 XL, with Hugging Face tensor names.
#pragma once

#include "hvd/workloads/model_trace.h"

namespace hvd::workloads {

/// Fraction of the reference GPU's peak FP32 a transformer step is assumed to achieve.
inline constexpr double kTransformerAchievedFraction = 0.45;

/// BERT-Large uncased, BertForPreTraining (MLM + NSP heads, decoder tied to the word
/// embeddings), sequence length 128: 336,226,108 parameters in 398 tensors.
ModelTrace bert_large_trace();
/// GPT-2 XL, GPT2LMHeadModel (lm_head tied to wte), sequence length 1024: 1,557,611,200
/// parameters in 580 tensors.
ModelTrace gpt2_xl_trace();

}  // namespace hvd::workloads
