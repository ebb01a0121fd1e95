// Host-side planning of the NCCL backend: communicator layout, bootstrap tree, unique-id
// framing, copy batching. No GPU.
#include "backends/nccl/nccl_plan.h"

#include <gtest/gtest.h>

#include <set>

namespace hvd::nccl {
namespace {

TEST(SplitMembers, OrdersByKeyThenRankAndDropsNegativeColors) {
  // ranks:            0       1       2        3       4
  std::vector<SplitArgs> a = {{0, 5}, {1, 0}, {0, 1}, {-1, 0}, {0, 1}};
  EXPECT_EQ(split_members(a, 0), (std::vector<int>{2, 4, 0}));
  EXPECT_EQ(split_members(a, 4), (std::vector<int>{2, 4, 0}));
  EXPECT_EQ(split_members(a, 1), (std::vector<int>{1}));
  EXPECT_TRUE(split_members(a, 3).empty());
  EXPECT_TRUE(split_members(a, 7).empty());
}

TEST(PlanHierarchy, TwoNodesOfFourGiveLocalAndCrossGroups) {
  const std::vector<int> nodes = {0, 0, 0, 0, 1, 1, 1, 1};
  std::vector<SplitArgs> local, cross;
  for (int r = 0; r < 8; ++r) {
    const HierarchyLayout h = plan_hierarchy(nodes, r);
    ASSERT_TRUE(h.enabled);
    EXPECT_EQ(h.local_size, 4);
    EXPECT_EQ(h.cross_size, 2);
    EXPECT_EQ(h.local_rank, r % 4);
    local.push_back(h.local);
    cross.push_back(h.cross);
  }
  EXPECT_EQ(split_members(local, 5), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(split_members(cross, 5), (std::vector<int>{1, 5}));
  EXPECT_EQ(split_members(cross, 0), (std::vector<int>{0, 4}));
}

TEST(PlanHierarchy, InterleavedNodesUseNodeOrderNotRankBlocks) {
  const std::vector<int> nodes = {0, 1, 0, 1};
  const HierarchyLayout h = plan_hierarchy(nodes, 3);
  ASSERT_TRUE(h.enabled);
  EXPECT_EQ(h.local_rank, 1);
  std::vector<SplitArgs> local, cross;
  for (int r = 0; r < 4; ++r) {
    local.push_back(plan_hierarchy(nodes, r).local);
    cross.push_back(plan_hierarchy(nodes, r).cross);
  }
  EXPECT_EQ(split_members(local, 3), (std::vector<int>{1, 3}));
  EXPECT_EQ(split_members(cross, 3), (std::vector<int>{2, 3}));
}

TEST(PlanHierarchy, DisabledOnEveryRankWhenNotUseful) {
  for (const std::vector<int>& nodes : {std::vector<int>{0, 0, 0}, std::vector<int>{0, 1, 2},
                                        std::vector<int>{0, 0, 1}, std::vector<int>{0}}) {
    for (int r = 0; r < static_cast<int>(nodes.size()); ++r)
      EXPECT_FALSE(plan_hierarchy(nodes, r).enabled) << "rank " << r << " of " << nodes.size();
  }
}

TEST(BootstrapTree, EveryRankReachedOnceFromTheRoot) {
  for (int size : {1, 2, 3, 7, 8, 9, 64, 100}) {
    std::vector<int> seen(static_cast<size_t>(size), 0);
    int depth_max = 0;
    for (int r = 0; r < size; ++r) {
      const TreeLinks t = bootstrap_tree(r, size);
      EXPECT_EQ(t.parent < 0, r == 0);
      for (int c : t.children) {
        ASSERT_GT(c, r);
        ASSERT_LT(c, size);
        EXPECT_EQ(bootstrap_tree(c, size).parent, r);
        ++seen[static_cast<size_t>(c)];
      }
      int d = 0;
      for (int x = r; x != 0; x = bootstrap_tree(x, size).parent) ++d;
      depth_max = std::max(depth_max, d);
    }
    for (int r = 1; r < size; ++r)
      EXPECT_EQ(seen[static_cast<size_t>(r)], 1) << "rank " << r << " of " << size;
    int log2 = 0;
    while ((1 << log2) < size) ++log2;
    EXPECT_LE(depth_max, log2) << "size " << size;
  }
}

TEST(BootstrapFrame, RoundTripsIdAndError) {
  BootstrapMessage m;
  m.generation = 0x0123456789abcdefull;
  for (size_t i = 0; i < m.id.size(); ++i) m.id[i] = static_cast<uint8_t>(i * 7 + 1);
  const std::vector<uint8_t> f = encode_bootstrap(m);
  ASSERT_EQ(f.size(), kBootstrapFrameBytes);
  BootstrapMessage back;
  ASSERT_TRUE(decode_bootstrap(f, m.generation, &back).ok());
  EXPECT_TRUE(back.ok);
  EXPECT_EQ(back.id, m.id);
  EXPECT_TRUE(back.error.empty());

  m.ok = false;
  m.error = "rank 3: no CUDA-capable device";
  ASSERT_TRUE(decode_bootstrap(encode_bootstrap(m), m.generation, &back).ok());
  EXPECT_FALSE(back.ok);
  EXPECT_EQ(back.error, m.error);
}

TEST(BootstrapFrame, LongErrorsAreTruncatedNotOverflowing) {
  BootstrapMessage m;
  m.ok = false;
  m.error = std::string(5000, 'x');
  const std::vector<uint8_t> f = encode_bootstrap(m);
  ASSERT_EQ(f.size(), kBootstrapFrameBytes);
  BootstrapMessage back;
  ASSERT_TRUE(decode_bootstrap(f, 0, &back).ok());
  EXPECT_GT(back.error.size(), 300u);
  EXPECT_LT(back.error.size(), kBootstrapFrameBytes);
}

TEST(BootstrapFrame, RejectsCorruptionWrongSizeAndWrongGeneration) {
  BootstrapMessage m;
  m.generation = 42;
  std::vector<uint8_t> f = encode_bootstrap(m);
  BootstrapMessage back;
  std::vector<uint8_t> bad = f;
  bad[100] ^= 1;
  Status s = decode_bootstrap(bad, 42, &back);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("checksum"), std::string::npos) << s.message();
  bad = f;
  bad[0] = 'X';
  EXPECT_NE(decode_bootstrap(bad, 42, &back).message().find("magic"), std::string::npos);
  bad = f;
  bad.pop_back();
  EXPECT_EQ(decode_bootstrap(bad, 42, &back).code(), StatusCode::kInternal);
  s = decode_bootstrap(f, 43, &back);
  EXPECT_EQ(s.code(), StatusCode::kMismatch);
  EXPECT_NE(s.message().find("generation"), std::string::npos) << s.message();
}

TEST(ChildGeneration, DistinctPerSplitAndColorEqualAcrossRanks) {
  std::set<uint64_t> seen;
  for (uint64_t seq = 0; seq < 20; ++seq)
    for (int color = -1; color < 20; ++color) seen.insert(child_generation(1, seq, color));
  EXPECT_EQ(seen.size(), 20u * 21u);
  EXPECT_EQ(child_generation(7, 3, 2), child_generation(7, 3, 2));
  EXPECT_NE(child_generation(7, 3, 2), child_generation(8, 3, 2));
}

char g_src[1 << 12], g_dst[1 << 12];

TEST(PlanCopies, MergesContiguousDropsEmptyAndSplitsBySize) {
  std::vector<CopySegment> in = {
      {g_dst, g_src, 100},  // merged with the next (both sides contiguous)
      {g_dst + 100, g_src + 100, 28},
      {g_dst + 200, g_src + 300, 0},       // empty: dropped
      {g_dst + 300, g_dst + 300, 10},      // self copy: dropped
      {g_dst + 500, g_src + 900, 64},      // not contiguous with the previous on src
      {g_dst + 1000, g_src + 1000, 3000},  // large: memcpy
  };
  CopyLimits lim;
  lim.kernel_max_bytes = 1024;
  lim.max_batch = 32;
  const CopyPlan p = plan_copies(in, lim);
  ASSERT_EQ(p.memcpys.size(), 1u);
  EXPECT_EQ(p.memcpys[0].bytes, 3000u);
  ASSERT_EQ(p.batches.size(), 1u);
  ASSERT_EQ(p.batches[0].size(), 2u);
  EXPECT_EQ(p.batches[0][0].bytes, 128u);
  EXPECT_EQ(p.batches[0][1].dst, g_dst + 500);
}

TEST(PlanCopies, ManySmallPiecesBecomeFewLaunches) {
  std::vector<CopySegment> in;
  for (int i = 0; i < 100; ++i)
    in.push_back({g_dst + i * 40, g_src + i * 32, 16});  // gaps: no merging
  const CopyPlan p = plan_copies(in, CopyLimits{});
  EXPECT_TRUE(p.memcpys.empty());
  ASSERT_EQ(p.batches.size(), 4u);  // 32 + 32 + 32 + 4
  EXPECT_EQ(p.batches.back().size(), 4u);
  size_t n = 0;
  for (const auto& b : p.batches) n += b.size();
  EXPECT_EQ(n, 100u);
}

TEST(PlanCopies, EmptyInputGivesEmptyPlan) {
  const CopyPlan p = plan_copies({}, CopyLimits{});
  EXPECT_TRUE(p.memcpys.empty());
  EXPECT_TRUE(p.batches.empty());
}

TEST(DeviceAllocation, RoundsToTwoMebibytes) {
  EXPECT_EQ(round_device_allocation(0), 0u);
  EXPECT_EQ(round_device_allocation(1), size_t{2} << 20);
  EXPECT_EQ(round_device_allocation(size_t{2} << 20), size_t{2} << 20);
  EXPECT_EQ(round_device_allocation((size_t{2} << 20) + 1), size_t{4} << 20);
}

TEST(PollBackoff, SpinsThenGrowsToACap) {
  EXPECT_EQ(poll_backoff(0), 0);
  EXPECT_EQ(poll_backoff(199), 0);
  EXPECT_DOUBLE_EQ(poll_backoff(200), 1e-6);
  EXPECT_DOUBLE_EQ(poll_backoff(201), 2e-6);
  EXPECT_DOUBLE_EQ(poll_backoff(100000), 2e-4);
}

}  // namespace
}  // namespace hvd::nccl
