// Model queries: range statistics, search, alignment anchors, per-rank busy time, ordering,
// categories and time formatting.
#include <gtest/gtest.h>

#include "core/category.h"
#include "core/time_format.h"
#include "core/trace_parser.h"
#include "test_files.h"

namespace hvdview {
namespace {

Trace LoadFixture(const std::string& name) {
  LoadResult result = LoadTimelines({testing::DataFile(name)});
  EXPECT_TRUE(result.errors.empty());
  return std::move(result.trace);
}

const NameStats* Find(const std::vector<NameStats>& stats, const std::string& name) {
  for (const NameStats& s : stats) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST(Categories, CatWinsOverName) {
  bool known = false;
  EXPECT_EQ(CategoryFromCat("memcpy", &known), Category::kMemcpy);
  EXPECT_TRUE(known);
  CategoryFromCat("gpu", &known);
  EXPECT_FALSE(known);
}

TEST(Categories, ClassifiedByName) {
  EXPECT_EQ(CategoryFromName("NEGOTIATE_ALLGATHER"), Category::kNegotiation);
  EXPECT_EQ(CategoryFromName("QUEUE"), Category::kQueue);
  EXPECT_EQ(CategoryFromName("WAIT_FOR_DATA"), Category::kQueue);
  EXPECT_EQ(CategoryFromName("MEMCPY_OUT_FUSION_BUFFER"), Category::kMemcpy);
  EXPECT_EQ(CategoryFromName("NCCL_ALLREDUCE"), Category::kCommunication);
  EXPECT_EQ(CategoryFromName("RING_REDUCESCATTER"), Category::kCommunication);
  EXPECT_EQ(CategoryFromName("TREE_BROADCAST"), Category::kCommunication);
  EXPECT_EQ(CategoryFromName("PAIRWISE_ALLTOALL"), Category::kCommunication);
  EXPECT_EQ(CategoryFromName("BARRIER"), Category::kCommunication);
  EXPECT_EQ(CategoryFromName("backward"), Category::kCompute);
  EXPECT_EQ(CategoryFromName("CYCLE_START"), Category::kCycle);
  EXPECT_EQ(CategoryFromName("INIT_FUSION_BUFFER"), Category::kOther);
}

TEST(TimeFormat, Units) {
  EXPECT_EQ(FormatDuration(0.5), "500 ns");
  EXPECT_EQ(FormatDuration(12.5), "12.5 us");
  EXPECT_EQ(FormatDuration(2500), "2.5 ms");
  EXPECT_EQ(FormatDuration(3e6), "3 s");
  EXPECT_DOUBLE_EQ(NiceTickStep(1.0, 90), 100);
  EXPECT_DOUBLE_EQ(NiceTickStep(30.0, 90), 5000);
}

TEST(TraceModel, RangeStatsCountSlicesIntersectingTheRange) {
  const Trace trace = LoadFixture("runtime_small.json");
  // First step of both ranks: 0 .. 9500 us; the collectives of step 0 end before 10000.
  const std::vector<NameStats> stats = RangeStats(trace, 0, 9999);
  const NameStats* allreduce = Find(stats, "ALLREDUCE");
  ASSERT_NE(allreduce, nullptr);
  EXPECT_EQ(allreduce->count, 2u);
  EXPECT_DOUBLE_EQ(allreduce->total, 4000);
  EXPECT_DOUBLE_EQ(allreduce->mean(), 2000);
  const NameStats* backward = Find(stats, "BACKWARD");
  ASSERT_NE(backward, nullptr);
  EXPECT_DOUBLE_EQ(backward->max, 6600 * 0.6);                 // rank 1 computes 10 % longer
  EXPECT_EQ(Find(stats, "CYCLE_START"), nullptr);              // instants have no duration
  EXPECT_EQ(stats.front().name, "STEP");                       // sorted by total time
  EXPECT_EQ(RangeStats(trace, 9999, 0).size(), stats.size());  // reversed range
  EXPECT_TRUE(RangeStats(trace, 1e9, 2e9).empty());
}

TEST(TraceModel, FindByNameIsSortedByStart) {
  const Trace trace = LoadFixture("runtime_small.json");
  const std::vector<SliceRef> found = FindByName(trace, "ring_all");
  ASSERT_EQ(found.size(), 4u);
  for (size_t i = 1; i < found.size(); ++i) {
    EXPECT_LE(ViewOf(trace, found[i - 1]).start, ViewOf(trace, found[i]).start);
  }
  EXPECT_EQ(FindByName(trace, "cycle_start").size(), 4u);  // instants too
  EXPECT_EQ(FindByName(trace, "").size(), 0u);
  EXPECT_EQ(FindByName(trace, "nothing like this").size(), 0u);
}

TEST(TraceModel, NthOccurrenceUsesTheFirstProcess) {
  const Trace trace = LoadFixture("simulated_small.json");
  EXPECT_EQ(NthOccurrence(trace, "STEP", 1), 1000);
  EXPECT_EQ(NthOccurrence(trace, "STEP", 2), 11000);
  EXPECT_FALSE(NthOccurrence(trace, "STEP", 3).has_value());
  EXPECT_FALSE(NthOccurrence(trace, "NOPE", 1).has_value());
  EXPECT_EQ(NthOccurrence(trace, "CYCLE_START", 1), 7000);
}

TEST(TraceModel, CollectiveTimePerProcessIsAUnion) {
  const Trace trace = LoadFixture("runtime_small.json");
  const std::vector<ProcessBusyTime> busy = CollectiveTimePerProcess(trace);
  ASSERT_EQ(busy.size(), 2u);
  EXPECT_EQ(busy[0].process, "rank 0");
  // ALLREDUCE contains RING_ALLREDUCE: the union counts 2000 us per step, two steps.
  EXPECT_DOUBLE_EQ(busy[0].communication_us, 4000);
  EXPECT_DOUBLE_EQ(busy[0].negotiation_us, 1000);
}

TEST(TraceModel, ProcessOrders) {
  Trace trace = LoadFixture("horovod_rank0.json");
  SortProcesses(trace, ProcessOrder::kByName);
  EXPECT_EQ(trace.processes[0].name, "DistributedAdam_Allreduce/conv1_weights");
  trace.processes[0].sort_index = 5;
  SortProcesses(trace, ProcessOrder::kBySortIndex);
  EXPECT_EQ(trace.processes[0].name, "DistributedAdam_Allreduce/fc_bias");
  SortProcesses(trace, ProcessOrder::kByCollectiveTime);
  EXPECT_EQ(trace.processes.size(), 2u);
}

}  // namespace
}  // namespace hvdview
