// dtype / reduction mapping onto NCCL and error translation. Needs the NCCL headers and
// library (ncclGetVersion, ncclGetErrorString work without a GPU), not a GPU.
#include "backends/nccl/nccl_types.h"

#include <gtest/gtest.h>

namespace hvd::nccl {
namespace {

TEST(NcclTypes, EveryHvdDtypeHasAnNcclType) {
  const std::pair<DataType, ncclDataType_t> want[] = {
      {DataType::kUInt8, ncclUint8},     {DataType::kInt8, ncclInt8},
      {DataType::kInt32, ncclInt32},     {DataType::kInt64, ncclInt64},
      {DataType::kFloat16, ncclFloat16}, {DataType::kBFloat16, ncclBfloat16},
      {DataType::kFloat32, ncclFloat32}, {DataType::kFloat64, ncclFloat64}};
  for (const auto& [dt, nt] : want) {
    ncclDataType_t got;
    ASSERT_TRUE(to_nccl_type(dt, &got).ok()) << dtype_name(dt);
    EXPECT_EQ(got, nt) << dtype_name(dt);
  }
}

TEST(NcclTypes, ReductionsMapOneToOne) {
  const std::pair<ReduceOp, ncclRedOp_t> want[] = {{ReduceOp::kSum, ncclSum},
                                                   {ReduceOp::kProduct, ncclProd},
                                                   {ReduceOp::kMin, ncclMin},
                                                   {ReduceOp::kMax, ncclMax}};
  for (const auto& [op, nop] : want) {
    NcclReduction r;
    ASSERT_TRUE(to_nccl_reduction(op, DataType::kFloat32, 4, nccl_version(), &r).ok());
    EXPECT_EQ(r.op, nop) << op_name(op);
    EXPECT_EQ(r.postscale, 1.0);
  }
}

TEST(NcclTypes, AverageIsNcclAvgForFloatsOnNewNccl) {
  for (DataType dt :
       {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32, DataType::kFloat64}) {
    NcclReduction r;
    ASSERT_TRUE(to_nccl_reduction(ReduceOp::kAverage, dt, 8, 22809, &r).ok());
    EXPECT_EQ(r.op, ncclAvg) << dtype_name(dt);
    EXPECT_EQ(r.postscale, 1.0);
  }
}

TEST(NcclTypes, AverageIsSumPlusScaleForIntegersAndOldNccl) {
  NcclReduction r;
  ASSERT_TRUE(to_nccl_reduction(ReduceOp::kAverage, DataType::kInt32, 8, 22809, &r).ok());
  EXPECT_EQ(r.op, ncclSum);
  EXPECT_DOUBLE_EQ(r.postscale, 1.0 / 8);
  ASSERT_TRUE(
      to_nccl_reduction(ReduceOp::kAverage, DataType::kFloat32, 4, 2708, &r).ok());  // NCCL 2.7.8
  EXPECT_EQ(r.op, ncclSum);
  EXPECT_DOUBLE_EQ(r.postscale, 0.25);
  EXPECT_FALSE(to_nccl_reduction(ReduceOp::kSum, DataType::kFloat32, 0, 22809, &r).ok());
}

TEST(NcclTypes, VersionIsTheLinkedLibrarys) {
  EXPECT_GE(nccl_version(), 21000);
  EXPECT_TRUE(has_nccl_avg(21000));
  EXPECT_FALSE(has_nccl_avg(20908));
}

TEST(NcclTypes, MemorySpaceRouting) {
  EXPECT_EQ(memory_space_of(cudaMemoryTypeDevice), MemorySpace::kDevice);
  EXPECT_EQ(memory_space_of(cudaMemoryTypeManaged), MemorySpace::kDevice);
  EXPECT_EQ(memory_space_of(cudaMemoryTypeHost), MemorySpace::kHost);
  EXPECT_EQ(memory_space_of(cudaMemoryTypeUnregistered), MemorySpace::kHost);
}

TEST(NcclTypes, ErrorsNameTheCallAndTheReason) {
  EXPECT_TRUE(cuda_status(cudaSuccess, "x").ok());
  EXPECT_TRUE(nccl_status(ncclSuccess, "x").ok());
  Status s = cuda_status(cudaErrorMemoryAllocation, "cudaMalloc");
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("cudaMalloc failed: cudaErrorMemoryAllocation"), std::string::npos)
      << s.message();
  s = nccl_status(ncclInvalidArgument, "ncclAllReduce");
  EXPECT_NE(s.message().find("ncclAllReduce failed: invalid argument"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace hvd::nccl
