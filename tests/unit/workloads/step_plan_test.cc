// Step decomposition: linear scaling in batch and GPU speed, backward offsets, ready times.
#include "hvd/workloads/step_plan.h"

#include <gtest/gtest.h>

#include "hvd/workloads/cnn_models.h"

namespace hvd::workloads {
namespace {

TEST(StepPlan, ReferenceBatchOnReferenceGpuReproducesTrace) {
  const ModelTrace t = resnet101_trace();
  Result<StepPlan> plan = make_step_plan(t, "P100", 64);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_DOUBLE_EQ(plan->step_s, t.step_s);
  ASSERT_EQ(plan->tensors.size(), t.tensors.size());
  EXPECT_EQ(plan->tensors[0].bytes, 1001 * 4);
  EXPECT_DOUBLE_EQ(plan->tensors.back().ready_s, t.tensors.back().ready_s);
  // The last layer runs backward first; the first layer ends the backward pass.
  EXPECT_DOUBLE_EQ(plan->layers.back().bwd_start_s, 0.0);
  EXPECT_NEAR(plan->layers.front().bwd_end_s, plan->bwd_s, 1e-12);
}

TEST(StepPlan, ScalesLinearlyWithBatchAndGpu) {
  const ModelTrace t = vgg16_trace();
  const StepPlan half = make_step_plan(t, 1.0, 32).value();
  EXPECT_DOUBLE_EQ(half.time_scale, 0.5);
  EXPECT_DOUBLE_EQ(half.fwd_s, t.fwd_s * 0.5);
  const StepPlan v100 = make_step_plan(t, "V100", 128).value();
  EXPECT_NEAR(v100.step_s, t.step_s * 2 * 119.4 / 202.78, 1e-12);
  for (std::size_t i = 0; i < t.tensors.size(); ++i) {
    EXPECT_NEAR(v100.tensors[i].ready_s, t.tensors[i].ready_s * v100.time_scale, 1e-15);
  }
}

TEST(StepPlan, TensorReadyWhenItsLayerFinishesBackward) {
  const ModelTrace t = inception3_trace();
  const StepPlan plan = make_step_plan(t, 0.7, 64).value();
  for (const TensorReady& r : plan.tensors) {
    const int layer = t.layer_index(t.tensors[r.index].layer);
    ASSERT_GE(layer, 0);
    EXPECT_NEAR(r.ready_s, plan.layers[static_cast<std::size_t>(layer)].bwd_end_s, 1e-12);
  }
}

TEST(StepPlan, RejectsBadScaleAndBatch) {
  const ModelTrace t = resnet50_trace();
  EXPECT_NE(make_step_plan(t, 0.0, 64).error().find("compute scale"), std::string::npos);
  EXPECT_NE(make_step_plan(t, 1.0, 0).error().find("batch size 0"), std::string::npos);
  EXPECT_NE(make_step_plan(t, "Z9", 64).error().find("unknown GPU"), std::string::npos);
}

}  // namespace
}  // namespace hvd::workloads
