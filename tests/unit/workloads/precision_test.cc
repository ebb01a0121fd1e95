// Training precision: measured throughputs set a step's compute, relative speeds carry them
// to other GPUs, a transformer at another length converts through its FLOPs, and fp16/bf16
// gradients weigh 2 bytes an element.
#include "hvd/workloads/precision.h"

#include <gtest/gtest.h>

#include "hvd/workloads/cnn_models.h"
#include "hvd/workloads/gpu_catalog.h"
#include "hvd/workloads/model_registry.h"
#include "hvd/workloads/step_plan.h"
#include "hvd/workloads/transformer_models.h"

namespace hvd::workloads {
namespace {

double rate_of(const std::string& gpu, const std::string& model, int seq, Precision p) {
  for (const auto& r : measured_rates())
    if (r.gpu == gpu && r.model == model && r.seq_len == seq && r.precision == p) return r.samples_per_s;
  return 0;
}

double relative(const std::string& gpu, Precision p, bool transformer) {
  for (const auto& r : relative_speeds())
    if (r.gpu == gpu && r.precision == p) return transformer ? r.transformer : r.cnn;
  return 0;
}

TEST(Precision, NamesParseAndRoundTrip) {
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16})
    EXPECT_EQ(parse_precision(precision_name(p)).value(), p);
  Result<Precision> bad = parse_precision("fp8");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("fp8"), std::string::npos);
  EXPECT_NE(bad.error().find("fp32, tf32, fp16, bf16"), std::string::npos);
  EXPECT_EQ(gradient_dtype(Precision::kFp16, "float32"), "float16");
  EXPECT_EQ(gradient_dtype(Precision::kBf16, "float32"), "bfloat16");
  EXPECT_EQ(gradient_dtype(Precision::kTf32, "float32"), "float32");
  EXPECT_EQ(gradient_dtype(Precision::kFp16, "int64"), "int64");  // only float32 gradients shrink
}

// On the measured GPU a step at batch B takes B / (measured rate): the measurement, whatever
// the trace's own reference GPU and batch.
TEST(Precision, MeasuredGpuRunsAtTheMeasuredRate) {
  const ModelTrace t = resnet50_trace();
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16}) {
    const double rate = rate_of("H100-SXM5", "resnet50", 0, p);
    ASSERT_GT(rate, 0) << precision_name(p);
    const StepPlan plan = make_step_plan(t, "H100", 256, p).value();
    EXPECT_NEAR(plan.step_s, 256 / rate, 1e-12 * plan.step_s) << precision_name(p);
    EXPECT_NEAR(compute_speed(t, "H100", p)->samples_per_s, rate, 1e-9 * rate);
  }
  // Mixed precision on Hopper is several times fp32 (tensor cores): 4728 against 885.
  EXPECT_GT(rate_of("H100-SXM5", "resnet50", 0, Precision::kFp16),
            4 * rate_of("H100-SXM5", "resnet50", 0, Precision::kFp32));
}

// Another GPU: the H100's figure times its relative speed in that precision, the CNN ratio for
// a CNN and the transformer ratio for BERT.
TEST(Precision, OtherGpusThroughTheirRelativeSpeed) {
  const double a100_cnn = relative("A100-SXM4-80GB", Precision::kFp16, false);
  const double a100_bert = relative("A100-SXM4-80GB", Precision::kFp16, true);
  EXPECT_NEAR(a100_cnn, 1582.0 / 2616, 1e-12);
  EXPECT_NEAR(a100_bert, 152.0 / 301, 1e-12);
  EXPECT_NEAR(compute_speed(resnet101_trace(), "A100", Precision::kFp16)->samples_per_s,
              rate_of("H100-SXM5", "resnet101", 0, Precision::kFp16) * a100_cnn, 1e-6);
  EXPECT_NEAR(compute_speed(bert_large_trace(), "A100", Precision::kFp16)->samples_per_s,
              rate_of("H100-SXM5", "bert-large", 128, Precision::kFp16) * a100_bert, 1e-6);
  const auto v100 = compute_speed(resnet50_trace(), "V100", Precision::kFp16);
  ASSERT_TRUE(v100) << v100.error();
  EXPECT_NE(v100->source.find("lambdal/deeplearning-benchmark"), std::string::npos) << v100->source;
}

// fp32 where nothing is measured keeps the catalogue's scaling: the 2018 cluster's P100 and
// the V100's measured CNN ratio are what they were.
TEST(Precision, Fp32WithoutMeasurementKeepsTheCatalogueScale) {
  for (const char* gpu : {"P100", "V100", "A100"}) {
    const ModelTrace t = vgg16_trace();
    EXPECT_DOUBLE_EQ(compute_speed(t, gpu, Precision::kFp32)->scale, compute_scale("P100", gpu).value()) << gpu;
    EXPECT_DOUBLE_EQ(make_step_plan(t, gpu, 64).value().step_s,
                     make_step_plan(t, compute_scale("P100", gpu).value(), 64).value().step_s);
  }
}

// BERT-Large at 512 in fp32 (only 128 measured): the 128 figure times the FLOPs ratio, so
// slower per sequence by more than 4x (attention grows with the square of the length).
TEST(Precision, TransformerLengthConvertsThroughFlops) {
  const ModelTrace b128 = bert_large_trace(128), b512 = bert_large_trace(512);
  EXPECT_EQ(b512.params, b128.params);
  EXPECT_EQ(b512.seq_len, 512);
  EXPECT_GT(b512.fwd_flops(), 4 * b128.fwd_flops());
  const double r128 = rate_of("H100-SXM5", "bert-large", 128, Precision::kFp32);
  EXPECT_NEAR(compute_speed(b512, "H100", Precision::kFp32)->samples_per_s,
              r128 * b128.fwd_flops() / b512.fwd_flops(), 1e-9 * r128);
  // 512 in fp16 is measured itself; 384 takes the nearer of 128 and 512 (512).
  EXPECT_NEAR(compute_speed(b512, "H100", Precision::kFp16)->samples_per_s,
              rate_of("H100-SXM5", "bert-large", 512, Precision::kFp16), 1e-9);
  const ModelTrace b384 = bert_large_trace(384);
  EXPECT_NEAR(compute_speed(b384, "H100", Precision::kFp16)->samples_per_s,
              rate_of("H100-SXM5", "bert-large", 512, Precision::kFp16) * b512.fwd_flops() / b384.fwd_flops(), 1e-9);
  // GPT-2 XL has no row: BERT-Large's achieved FLOP rate at the nearest length.
  const auto gpt = compute_speed(gpt2_xl_trace(), "H100", Precision::kBf16);
  ASSERT_TRUE(gpt) << gpt.error();
  EXPECT_NE(gpt->source.find("bert-large seq 512"), std::string::npos) << gpt->source;
}

TEST(Precision, HalfPrecisionHalvesTheGradientBytes) {
  const ModelTrace t = bert_large_trace();
  const StepPlan fp32 = make_step_plan(t, "A100", 32, Precision::kFp32).value();
  const StepPlan fp16 = make_step_plan(t, "A100", 32, Precision::kFp16).value();
  std::int64_t b32 = 0, b16 = 0;
  for (const auto& r : fp32.tensors) b32 += r.bytes;
  for (const auto& r : fp16.tensors) b16 += r.bytes;
  EXPECT_EQ(b32, t.total_bytes());
  EXPECT_EQ(2 * b16, b32);
  EXPECT_EQ(fp16.tensors.front().dtype, "float16");
  EXPECT_LT(fp16.step_s, fp32.step_s / 4);  // tensor cores
}

TEST(Precision, RefusedWhereNothingCoversIt) {
  auto v100_bf16 = compute_speed(resnet50_trace(), "V100", Precision::kBf16);
  ASSERT_FALSE(v100_bf16);
  EXPECT_NE(v100_bf16.error().find("Ampere"), std::string::npos) << v100_bf16.error();
  EXPECT_FALSE(compute_speed(resnet50_trace(), "P100", Precision::kTf32));
  auto p100_fp16 = compute_speed(resnet50_trace(), "P100", Precision::kFp16);
  ASSERT_FALSE(p100_fp16);
  EXPECT_NE(p100_fp16.error().find("no measured fp16"), std::string::npos) << p100_fp16.error();
  // A trace that only shares a built-in name is not the measured model.
  ModelTrace fake = resnet50_trace();
  fake.tensors.pop_back();
  EXPECT_FALSE(compute_speed(fake, "H100", Precision::kFp16));
  EXPECT_TRUE(compute_speed(fake, "H100", Precision::kFp32));  // the catalogue's fp32 scale
}

TEST(Precision, SequenceLengthOnlyForTheTransformers) {
  EXPECT_EQ(find_model("bert-large", 512)->seq_len, 512);
  EXPECT_EQ(find_model("bert-large")->seq_len, 128);
  EXPECT_EQ(find_model("gpt2-xl")->seq_len, 1024);
  auto cnn = find_model("resnet50", 128);
  ASSERT_FALSE(cnn);
  EXPECT_NE(cnn.error().find("bert-large, gpt2-xl"), std::string::npos) << cnn.error();
  auto too_long = find_model("bert-large", 513);
  ASSERT_FALSE(too_long);
  EXPECT_NE(too_long.error().find("512 positions"), std::string::npos) << too_long.error();
}

}  // namespace
}  // namespace hvd::workloads
