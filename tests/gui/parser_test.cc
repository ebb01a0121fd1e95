// Parser cases: every supported phase, both JSON forms, several files, and broken files.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/synthetic_trace.h"
#include "core/trace_builder.h"
#include "core/trace_parser.h"
#include "test_files.h"

namespace hvdview {
namespace {

using testing::WriteTempFile;

LoadResult Load(const std::string& name, const std::string& content, size_t chunk = 4 << 20) {
  LoadOptions options;
  options.chunk_bytes = chunk;
  return LoadTimelines({WriteTempFile(name, content)}, options);
}

const Lane* FindLane(const Trace& trace, int64_t pid, const std::string& name) {
  for (const Lane& lane : trace.lanes) {
    if (lane.pid == pid && lane.name == name) return &lane;
  }
  return nullptr;
}

std::string NameOf(const Trace& trace, const Slice& slice) {
  return trace.names[slice.name];
}

TEST(TraceParser, CompleteEventsNestOnRows) {
  LoadResult r = Load("x.json", R"([
    {"ph":"X","name":"ALLREDUCE","cat":"communication","pid":0,"tid":2,"ts":10,"dur":100},
    {"ph":"X","name":"QUEUE","pid":0,"tid":2,"ts":10,"dur":20},
    {"ph":"X","name":"RING_ALLREDUCE","pid":0,"tid":2,"ts":40,"dur":60}])");
  ASSERT_TRUE(r.errors.empty());
  ASSERT_EQ(r.trace.slice_count, 3u);
  const Lane& lane = r.trace.lanes.at(0);
  ASSERT_EQ(lane.rows.size(), 2u);
  EXPECT_EQ(NameOf(r.trace, lane.rows[0].slices[0]), "ALLREDUCE");
  EXPECT_EQ(lane.rows[1].slices.size(), 2u);
  EXPECT_EQ(lane.rows[1].slices[0].category, Category::kQueue);  // classified by name
  EXPECT_EQ(lane.rows[1].slices[1].category, Category::kCommunication);
  EXPECT_DOUBLE_EQ(r.trace.min_time, 10);
  EXPECT_DOUBLE_EQ(r.trace.max_time, 110);
}

TEST(TraceParser, BeginEndPairsMatchPerThread) {
  LoadResult r = Load("be.json", R"([
    {"ph":"B","name":"STEP","pid":1,"tid":3,"ts":0},
    {"ph":"B","name":"FORWARD","pid":1,"tid":3,"ts":1},
    {"ph":"B","name":"OTHER","pid":1,"tid":4,"ts":2},
    {"ph":"E","pid":1,"tid":3,"ts":5},
    {"ph":"E","pid":1,"tid":4,"ts":6},
    {"ph":"E","pid":1,"tid":3,"ts":9}])");
  ASSERT_TRUE(r.errors.empty()) << r.errors[0].ToString();
  EXPECT_TRUE(r.warnings.empty());
  const Lane* lane = FindLane(r.trace, 1, "tid 3");
  ASSERT_NE(lane, nullptr);
  ASSERT_EQ(lane->rows.size(), 2u);
  EXPECT_EQ(NameOf(r.trace, lane->rows[0].slices[0]), "STEP");
  EXPECT_DOUBLE_EQ(lane->rows[0].slices[0].dur, 9);
  EXPECT_EQ(NameOf(r.trace, lane->rows[1].slices[0]), "FORWARD");
  EXPECT_DOUBLE_EQ(lane->rows[1].slices[0].dur, 4);
  EXPECT_EQ(lane->rows[0].slices[0].category, Category::kCompute);
}

TEST(TraceParser, InstantsAndMetadata) {
  LoadResult r = Load("im.json", R"([
    {"ph":"M","name":"process_name","pid":3,"args":{"name":"rank 3"}},
    {"ph":"M","name":"process_sort_index","pid":3,"args":{"sort_index":-1}},
    {"ph":"M","name":"thread_name","pid":3,"tid":0,"args":{"name":"cycle"}},
    {"ph":"i","s":"t","name":"CYCLE_START","cat":"cycle","pid":3,"tid":0,"ts":5},
    {"ph":"I","name":"MARK","pid":3,"tid":0,"ts":7},
    {"ph":"X","name":"A","pid":1,"tid":0,"ts":0,"dur":1}])");
  ASSERT_TRUE(r.errors.empty());
  EXPECT_EQ(r.trace.instant_count, 2u);
  ASSERT_EQ(r.trace.processes.size(), 2u);
  EXPECT_EQ(r.trace.processes[0].name, "rank 3");  // sort index -1 puts it first
  EXPECT_EQ(r.trace.processes[1].name, "pid 1");
  const Lane* cycle = FindLane(r.trace, 3, "cycle");
  ASSERT_NE(cycle, nullptr);
  ASSERT_EQ(cycle->instants.size(), 2u);
  EXPECT_EQ(cycle->instants[0].category, Category::kCycle);
}

TEST(TraceParser, CountersMakeOneLanePerSeries) {
  LoadResult r = Load("c.json", R"([
    {"ph":"C","name":"queue","pid":0,"ts":0,"args":{"value":3}},
    {"ph":"C","name":"queue","pid":0,"ts":10,"args":{"value":5}},
    {"ph":"C","name":"mem","pid":0,"ts":5,"args":{"host":1,"gpu":2}}])");
  ASSERT_TRUE(r.errors.empty());
  EXPECT_EQ(r.trace.counter_count, 4u);
  const Lane* queue = FindLane(r.trace, 0, "queue");
  ASSERT_NE(queue, nullptr);
  EXPECT_EQ(queue->kind, LaneKind::kCounter);
  EXPECT_EQ(queue->counter.size(), 2u);
  EXPECT_DOUBLE_EQ(queue->counter_max, 5);
  EXPECT_NE(FindLane(r.trace, 0, "mem.gpu"), nullptr);
}

TEST(TraceParser, AsyncEventsMatchById) {
  LoadResult r = Load("async.json", R"([
    {"ph":"b","name":"req","cat":"c","id":"0x1","pid":0,"ts":0},
    {"ph":"b","name":"req","cat":"c","id":"0x2","pid":0,"ts":1},
    {"ph":"e","name":"req","cat":"c","id":"0x1","pid":0,"ts":4},
    {"ph":"e","name":"req","cat":"c","id":"0x2","pid":0,"ts":9}])");
  ASSERT_TRUE(r.errors.empty());
  const Lane* async = FindLane(r.trace, 0, "async");
  ASSERT_NE(async, nullptr);
  ASSERT_EQ(async->rows.size(), 2u);  // overlapping, not nested: two rows
  EXPECT_DOUBLE_EQ(async->rows[0].slices[0].dur, 4);
  EXPECT_DOUBLE_EQ(async->rows[1].slices[0].dur, 8);
}

TEST(TraceParser, UnmatchedAsyncIsReported) {
  LoadResult r = Load("async_bad.json", R"([
    {"ph":"b","name":"open","cat":"c","id":7,"pid":0,"ts":0},
    {"ph":"e","name":"x","cat":"c","id":8,"pid":0,"ts":3},
    {"ph":"X","name":"A","pid":0,"ts":0,"dur":10}])");
  ASSERT_TRUE(r.errors.empty());
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[0].find("async 'e' events without a matching 'b'"), std::string::npos);
  EXPECT_NE(r.warnings[1].find("unfinished"), std::string::npos);
  const Slice& open = FindLane(r.trace, 0, "async")->rows[0].slices[0];
  EXPECT_EQ(open.flags & kSliceUnfinished, kSliceUnfinished);
  EXPECT_DOUBLE_EQ(open.dur, 10);  // drawn to the end of the trace
}

TEST(TraceParser, EndWithoutBeginIsIgnoredWithWarning) {
  LoadResult r = Load("e.json", R"([{"ph":"E","pid":0,"tid":0,"ts":3},
    {"ph":"X","name":"A","pid":0,"tid":0,"ts":0,"dur":1}])");
  ASSERT_TRUE(r.errors.empty());
  EXPECT_EQ(r.trace.slice_count, 1u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("1 ignored 'E' events without a matching 'B' (first at byte 1)"),
            std::string::npos)
      << r.warnings[0];
}

TEST(TraceParser, OverlapsThatDoNotNestGoOnSubRows) {
  LoadResult r = Load("overlap.json", R"([
    {"ph":"X","name":"NEGOTIATE_ALLREDUCE","pid":0,"tid":1,"ts":0,"dur":10},
    {"ph":"X","name":"NEGOTIATE_ALLGATHER","pid":0,"tid":1,"ts":5,"dur":10},
    {"ph":"X","name":"NEGOTIATE_BROADCAST","pid":0,"tid":1,"ts":12,"dur":1}])");
  const Lane& lane = r.trace.lanes.at(0);
  ASSERT_EQ(lane.rows.size(), 2u);
  EXPECT_EQ(lane.rows[0].slices.size(), 2u);  // 0..10 and 12..13
  EXPECT_EQ(lane.rows[1].slices.size(), 1u);  // 5..15
  EXPECT_EQ(r.trace.slice_count, 3u);
}

TEST(TraceParser, ObjectFormatWithOtherKeys) {
  LoadResult r = Load("obj.json", R"({"otherData":{"a":[1,{"b":"}"}]},
    "traceEvents":[{"ph":"X","name":"A","pid":0,"tid":0,"ts":1,"dur":2}],
    "displayTimeUnit":"ns"})");
  ASSERT_TRUE(r.errors.empty()) << r.errors[0].ToString();
  EXPECT_EQ(r.trace.slice_count, 1u);
}

TEST(TraceParser, HorovodRankZeroFileWithoutClosingBracket) {
  LoadResult r =
      Load("horovod.json",
           "[\n"
           R"({"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "grad/conv1"}},)"
           "\n"
           R"({"name": "process_sort_index", "ph": "M", "pid": 0, "args": {"sort_index": 0}},)"
           "\n"
           R"({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "grad/fc"}},)"
           "\n"
           R"({"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 10, "pid": 0},)"
           "\n"
           R"({"ph": "E", "ts": 20, "pid": 0},)"
           "\n"
           R"({"ph": "B", "name": "ALLREDUCE", "ts": 21, "pid": 0},)"
           "\n"
           R"({"ph": "B", "name": "NCCL_ALLREDUCE", "ts": 22, "pid": 0},)"
           "\n"
           R"({"ph": "E", "ts": 30, "pid": 0},)"
           "\n"
           R"({"ph": "E", "ts": 31, "pid": 0, "args": {"shape": [2, 3]}},)"
           "\n"
           R"({"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 12, "pid": 1},)"
           "\n"
           R"({"ph": "E", "ts": 25, "pid": 1},)"
           "\n");
  ASSERT_TRUE(r.errors.empty()) << r.errors[0].ToString();
  EXPECT_TRUE(r.warnings.empty());
  ASSERT_EQ(r.trace.processes.size(), 2u);
  EXPECT_EQ(r.trace.processes[0].name, "grad/conv1");
  EXPECT_EQ(r.trace.processes[1].name, "grad/fc");
  EXPECT_EQ(r.trace.slice_count, 4u);
  const Lane& tensor = r.trace.lanes[r.trace.processes[0].lanes[0]];
  EXPECT_EQ(tensor.rows.size(), 2u);
  EXPECT_EQ(tensor.rows[1].slices[0].category, Category::kCommunication);
}

TEST(TraceParser, SeveralFilesOpenAsOneView) {
  const std::string rank0 =
      WriteTempFile("t.json",
                    R"([{"ph":"M","name":"process_name","pid":0,"args":{"name":"rank 0"}},
          {"ph":"X","name":"ALLREDUCE","pid":0,"tid":2,"ts":0,"dur":5}])");
  const std::string rank1 =
      WriteTempFile("t.rank1.json",
                    R"([{"ph":"M","name":"process_name","pid":1,"args":{"name":"rank 1"}},
          {"ph":"X","name":"ALLREDUCE","pid":1,"tid":2,"ts":1,"dur":5}])");
  LoadResult r = LoadTimelines({rank1, rank0});
  ASSERT_TRUE(r.errors.empty());
  ASSERT_EQ(r.trace.processes.size(), 2u);
  EXPECT_EQ(r.trace.processes[0].name, "rank 0");
  EXPECT_EQ(r.trace.processes[1].name, "rank 1");
  EXPECT_EQ(r.trace.files.size(), 2u);
  EXPECT_EQ(r.trace.names.size(), 1u);  // names are interned across files
}

// Runs of different jobs (a measured rank 0 and a simulated rank 0) would be stacked into
// one rank: an error naming both files, one per file; the events are still drawn.
TEST(TraceParser, APidInTwoFilesIsAnErrorNamingBoth) {
  const std::string first = WriteTempFile("run_a.json", R"([{"ph":"X","name":"STEP","pid":0,"tid":3,"ts":0,"dur":5},
      {"ph":"X","name":"STEP","pid":1,"tid":3,"ts":0,"dur":5}])");
  const std::string second = WriteTempFile("run_b.json", R"([{"ph":"M","name":"process_name","pid":0,"args":{"name":"r"}},
      {"ph":"X","name":"STEP","pid":0,"tid":3,"ts":1,"dur":5},
      {"ph":"X","name":"STEP","pid":1,"tid":3,"ts":1,"dur":5},{"ph":"X","name":"STEP","pid":1,"tid":3,"ts":9,"dur":1}])");
  LoadResult r = LoadTimelines({first, second});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].file, second);
  EXPECT_EQ(r.errors[0].offset, 1u);  // the process_name record of pid 0
  EXPECT_EQ(r.errors[0].message.rfind("pid 0 is also in " + first + " (and 1 more pids): runs of different jobs", 0), 0u)
      << r.errors[0].message;
  EXPECT_EQ(r.trace.slice_count, 5u);  // still drawn
  // String pids too; a third file names the one before it.
  const std::string third = WriteTempFile("run_c.json", R"([{"ph":"X","name":"S","pid":"main","ts":0,"dur":1}])");
  const std::string fourth = WriteTempFile("run_d.json", R"([{"ph":"X","name":"S","pid":"main","ts":0,"dur":1}])");
  r = LoadTimelines({third, fourth});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].ToString().rfind(fourth + ": pid 'main' is also in " + third + ":", 0), 0u)
      << r.errors[0].ToString();
}

// The row layout as it was before the heap (a linear scan of the rows for each slice), to
// compare with: the layout must not change.
std::vector<std::vector<std::pair<double, double>>> ReferenceRows(std::vector<Slice> slices) {
  std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    return a.start != b.start ? a.start < b.start : a.dur > b.dur;
  });
  std::vector<double> row_end;
  std::vector<std::vector<std::pair<double, double>>> rows;
  for (const Slice& slice : slices) {
    size_t row = 0;
    while (row < row_end.size() && row_end[row] > slice.start) ++row;
    if (row == row_end.size()) {
      row_end.push_back(0);
      rows.emplace_back();
    }
    row_end[row] = slice.end();
    rows[row].push_back({slice.start, slice.dur});
  }
  return rows;
}

std::vector<std::vector<std::pair<double, double>>> RowsOf(const Lane& lane) {
  std::vector<std::vector<std::pair<double, double>>> rows;
  for (const Row& row : lane.rows) {
    rows.emplace_back();
    for (const Slice& slice : row.slices) rows.back().push_back({slice.start, slice.dur});
  }
  return rows;
}

TEST(TraceParser, RowLayoutIsUnchangedOnKnownInputs) {
  // Nesting, overlaps that do not nest, ties, zero-length slices and a row freed and reused.
  LoadResult r = Load("layout.json", R"([
    {"ph":"X","name":"A","pid":0,"tid":1,"ts":0,"dur":10},
    {"ph":"X","name":"B","pid":0,"tid":1,"ts":2,"dur":3},
    {"ph":"X","name":"C","pid":0,"tid":1,"ts":3,"dur":9},
    {"ph":"X","name":"D","pid":0,"tid":1,"ts":5,"dur":1},
    {"ph":"X","name":"E","pid":0,"tid":1,"ts":5,"dur":0},
    {"ph":"X","name":"F","pid":0,"tid":1,"ts":10,"dur":4},
    {"ph":"X","name":"G","pid":0,"tid":1,"ts":10,"dur":4},
    {"ph":"X","name":"H","pid":0,"tid":1,"ts":12,"dur":1}])");
  ASSERT_TRUE(r.errors.empty());
  const Lane& lane = r.trace.lanes.at(0);
  using Rows = std::vector<std::vector<std::pair<double, double>>>;
  const Rows expected = {{{0, 10}, {10, 4}}, {{2, 3}, {5, 1}, {10, 4}}, {{3, 9}, {12, 1}}, {{5, 0}}};
  EXPECT_EQ(RowsOf(lane), expected);
  // The fixtures and a generated many-rank timeline: lane by lane as the old layout put them.
  for (const char* name : {"runtime_small.json", "simulated_small.json", "horovod_rank0.json"}) {
    LoadResult fixture = LoadTimelines({testing::DataFile(name)});
    for (const Lane& l : fixture.trace.lanes) {
      std::vector<Slice> all;
      for (const Row& row : l.rows) all.insert(all.end(), row.slices.begin(), row.slices.end());
      EXPECT_EQ(RowsOf(l), ReferenceRows(all)) << name << " lane " << l.name;
    }
  }
  std::string random = "[";
  uint64_t seed = 12345;
  for (int i = 0; i < 3000; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    const int start = static_cast<int>((seed >> 33) % 5000);
    const int dur = static_cast<int>((seed >> 17) % 200);
    random += (i ? "," : "") + std::string(R"({"ph":"X","name":"R","pid":0,"tid":1,"ts":)") +
              std::to_string(start) + ",\"dur\":" + std::to_string(dur) + "}";
  }
  LoadResult shuffled = Load("layout_random.json", random + "]");
  std::vector<Slice> all;
  for (const Row& row : shuffled.trace.lanes.at(0).rows) all.insert(all.end(), row.slices.begin(), row.slices.end());
  EXPECT_EQ(all.size(), 3000u);
  EXPECT_EQ(RowsOf(shuffled.trace.lanes.at(0)), ReferenceRows(all));
}

// Slice i is [i, i + 50): each overlaps the next 49 without nesting. 50 rows, slice i on
// row i % 50 (the row of slice i - 50 is free again exactly at i).
TEST(TraceParser, StaircaseOfOverlapsGetsOneRowPerDepth) {
  std::string json = "[";
  for (int i = 0; i < 20000; ++i) {
    json += (i ? "," : "") + std::string(R"({"ph":"X","name":"S","pid":0,"tid":1,"ts":)") + std::to_string(i) +
            ",\"dur\":50}";
  }
  LoadResult r = Load("staircase.json", json + "]");
  ASSERT_TRUE(r.errors.empty());
  const Lane& lane = r.trace.lanes.at(0);
  ASSERT_EQ(lane.rows.size(), 50u);
  for (size_t row = 0; row < lane.rows.size(); ++row) {
    ASSERT_EQ(lane.rows[row].slices.size(), 400u);
    for (size_t k = 0; k < lane.rows[row].slices.size(); ++k) {
      ASSERT_EQ(lane.rows[row].slices[k].start, static_cast<double>(row + 50 * k));
    }
  }
}

TEST(TraceParser, EscapedStringsAndStringPids) {
  LoadResult r = Load("esc.json", R"([{"ph":"X","name":"a\"b\u00e9\n","pid":"Main","tid":"io",
    "ts":1,"dur":2}])");
  ASSERT_TRUE(r.errors.empty());
  EXPECT_EQ(r.trace.names.at(0), "a\"b\xC3\xA9\n");
  EXPECT_EQ(r.trace.processes.at(0).name, "Main");
}

TEST(TraceParser, SmallChunksGiveTheSameTrace) {
  SyntheticTimelineSpec spec;
  spec.ranks = 3;
  spec.events = 3000;
  const std::string path = testing::TempPath("chunks.json");
  WriteSyntheticTimeline(path, spec);
  LoadOptions tiny;
  tiny.chunk_bytes = 64;
  LoadResult a = LoadTimelines({path});
  LoadResult b = LoadTimelines({path}, tiny);
  ASSERT_TRUE(a.errors.empty());
  ASSERT_TRUE(b.errors.empty());
  EXPECT_EQ(a.trace.slice_count, b.trace.slice_count);
  EXPECT_EQ(a.trace.instant_count, b.trace.instant_count);
  EXPECT_EQ(a.trace.names, b.trace.names);
  EXPECT_DOUBLE_EQ(a.trace.max_time, b.trace.max_time);
}

TEST(TraceParser, ArgsAreReadBackFromTheFile) {
  LoadResult r = Load("args.json", R"([{"ph":"X","name":"ALLREDUCE","pid":0,"tid":2,"ts":1,
    "dur":2,"args":{"bytes":1024,"names":"w,b"}}])");
  const Slice& slice = r.trace.lanes.at(0).rows.at(0).slices.at(0);
  const std::string json = ReadEventJson(r.trace, slice.source);
  EXPECT_NE(json.find("\"bytes\": 1024"), std::string::npos) << json;
  EXPECT_NE(json.find("\"names\": \"w,b\""), std::string::npos);
}

// ---- broken files --------------------------------------------------------------------------

TEST(TraceParserErrors, EmptyFile) {
  LoadResult r = Load("empty.json", "");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].ToString().find("empty.json: empty file"), std::string::npos);
  LoadResult spaces = Load("spaces.json", " \n\t ");
  ASSERT_EQ(spaces.errors.size(), 1u);
  EXPECT_EQ(spaces.errors[0].message, "empty file");
}

TEST(TraceParserErrors, EmptyArrayHasNoEvents) {
  LoadResult r = Load("empty_array.json", "[]");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "contains no trace events");
}

TEST(TraceParserErrors, NotJson) {
  LoadResult r = Load("text.json", "hello, world");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("not a trace: expected '[' or '{' but found 'h'"),
            std::string::npos)
      << r.errors[0].message;
  LoadResult numbers = Load("numbers.json", "[1, 2]");
  ASSERT_EQ(numbers.errors.size(), 1u);
  EXPECT_NE(numbers.errors[0].message.find("at byte 1: expected an event object"),
            std::string::npos)
      << numbers.errors[0].message;
}

TEST(TraceParserErrors, TruncatedFileKeepsCompleteEvents) {
  const std::string text = R"([{"ph":"X","name":"A","pid":0,"tid":0,"ts":0,"dur":1},
{"ph":"X","name":"B","pid":0,"tid":0,"ts":2,"dur":1},
{"ph":"X","name":"C","pid":0,"tid":0,"ts":4,"du)";
  for (size_t chunk : {size_t{16}, size_t{4} << 20}) {
    LoadResult r = Load("trunc.json", text, chunk);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].offset, 109u);
    EXPECT_NE(r.errors[0].message.find("truncated at byte 156: the event at byte 109 is "
                                       "incomplete; kept the 2 complete events"),
              std::string::npos)
        << r.errors[0].message;
    EXPECT_EQ(r.trace.slice_count, 2u);
  }
}

// "kept the N complete events" counts what the header's "N events" counts
// (Trace::events_kept): not metadata records, not skipped or ignored events; 'B' and 'E' are
// two events, a counter event with two series one.
TEST(TraceParserErrors, TruncatedFileCountsEventsLikeTheHeader) {
  const std::string text = R"([{"ph":"M","name":"process_name","pid":0,"args":{"name":"rank 0"}},
{"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"main"}},
{"ph":"B","name":"A","pid":0,"tid":0,"ts":0},
{"ph":"E","pid":0,"tid":0,"ts":5},
{"ph":"E","pid":0,"tid":0,"ts":6},
{"ph":"X","name":"B","pid":0,"tid":0,"ts":"7","dur":1},
{"ph":"C","name":"mem","pid":0,"ts":1,"args":{"a":1,"b":2}},
{"ph":"i","name":"I","pid":0,"tid":0,"ts":2},
{"ph":"X","name":"C","pid":0,"tid":0,"ts":4,"du)";
  for (size_t chunk : {size_t{16}, size_t{4} << 20}) {
    LoadResult r = Load("trunc_meta.json", text, chunk);
    ASSERT_EQ(r.errors.size(), 1u);
    // B, E, the counter event and the instant; not the 2 metadata records, the E without a
    // B, nor the X with a string ts.
    EXPECT_NE(r.errors[0].message.find("; kept the 4 complete events (metadata records and "
                                       "skipped events not counted)"),
              std::string::npos)
        << r.errors[0].message;
    EXPECT_EQ(r.trace.events_kept, 4u);
    EXPECT_EQ(r.trace.slice_count, 1u);
    EXPECT_EQ(r.trace.counter_count, 2u);
    EXPECT_EQ(r.warnings.size(), 2u);  // the lone E, the string ts
  }
  // Several files: each file's message counts its own events; the trace counts them all.
  const std::string x = R"({"ph":"X","name":"A","pid":0,"tid":0,"ts":0,"dur":1})";
  const std::string x1 = R"({"ph":"X","name":"C","pid":1,"tid":0,"ts":0,"dur":1})";
  LoadResult two = LoadTimelines(
      {WriteTempFile("whole.json", "[" + x + "," + x + "]"), WriteTempFile("cut.json", "[" + x1 + ",{")});
  ASSERT_EQ(two.errors.size(), 1u);
  EXPECT_NE(two.errors[0].message.find("kept the 1 complete events"), std::string::npos)
      << two.errors[0].message;
  EXPECT_EQ(two.trace.events_kept, 3u);
}

TEST(TraceParserErrors, TruncatedObjectFormat) {
  LoadResult r =
      Load("trunc_obj.json", R"({"traceEvents":[{"ph":"X","name":"A","pid":0,"ts":0,"dur":1},)");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("the trace is not closed"), std::string::npos);
  EXPECT_EQ(r.trace.slice_count, 1u);
}

TEST(TraceParserErrors, SyntaxErrorNamesTheOffset) {
  LoadResult r = Load("bad.json", R"([{"ph":"X","name":"A","pid":0,"ts":0,"dur":1},
{"ph":"X" "name":"B"}])");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("invalid JSON at byte 57: expected ',' or '}' in an event "
                                     "but found '\"'; kept the 1 events before it"),
            std::string::npos)
      << r.errors[0].message;
  EXPECT_EQ(r.trace.slice_count, 1u);
}

TEST(TraceParserErrors, WrongTypesSkipTheEvent) {
  LoadResult r = Load("types.json", R"([
    {"ph":"X","name":"A","pid":0,"ts":"12","dur":1},
    {"ph":"X","name":"B","pid":{},"ts":1,"dur":1},
    {"ph":5,"name":"C","pid":0,"ts":1,"dur":1},
    {"ph":"X","name":["D"],"pid":0,"ts":1,"dur":1},
    {"ph":"X","name":"E","pid":0,"ts":1,"dur":"x"},
    {"ph":"X","name":"ok","pid":0,"ts":1,"dur":1},
    {"name":"noph","pid":0,"ts":1}])");
  ASSERT_TRUE(r.errors.empty());
  EXPECT_EQ(r.trace.slice_count, 1u);
  EXPECT_EQ(r.warnings.size(), 6u);
  std::string all;
  for (const std::string& w : r.warnings) all += w + "\n";
  EXPECT_NE(all.find("events whose \"ts\" is not a number"), std::string::npos) << all;
  EXPECT_NE(all.find("events whose \"pid\" is not a number"), std::string::npos);
  EXPECT_NE(all.find("events without \"ph\""), std::string::npos);
}

TEST(TraceParserErrors, UnreadableFile) {
  LoadResult r = LoadTimelines({"/nonexistent/timeline.json"});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].ToString().find("/nonexistent/timeline.json: cannot open"),
            std::string::npos);
}

TEST(TraceParserErrors, CancelStopsEarly) {
  SyntheticTimelineSpec spec;
  spec.events = 100000;
  const std::string path = testing::TempPath("cancel.json");
  WriteSyntheticTimeline(path, spec);
  std::atomic<bool> cancel{true};
  LoadOptions options;
  options.cancel = &cancel;
  EXPECT_TRUE(LoadTimelines({path}, options).cancelled);
}


// ---- hostile files: huge strings, numbers and nesting ---------------------------------------

// Concatenation by append (gcc 12 warns falsely on "literal" + std::string&&).
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string out;
  (out.append(parts), ...);
  return out;
}

std::string XEvent(const std::string& name, const std::string& pid = "0",
                   const std::string& tid = "0", const std::string& ts = "0") {
  return R"({"ph":"X","name":")" + name + R"(","pid":)" + pid + R"(,"tid":)" + tid +
         R"(,"ts":)" + ts + R"(,"dur":1})";
}

TEST(TraceParserHostile, LongNamesAreCutAndReportedOnce) {
  const std::string huge(20 << 20, 'a');  // 20 MiB: takes seconds and gigabytes if kept
  LoadResult r = Load("long_name.json", Cat("[", XEvent("ok"), ",\n", XEvent(huge), ",\n",
                                            XEvent(std::string(5000, 'b')), "]"));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].ToString(),
            r.errors[0].file +
                ": event 1 (byte 56): \"name\" is "
                "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' (20971520 "
                "bytes), expected at most 4096 bytes; cut to 4096 (2 strings cut in all)");
  EXPECT_EQ(r.errors[0].offset, 56u);
  EXPECT_EQ(r.trace.slice_count, 3u);  // all events kept, names cut
  ASSERT_EQ(r.trace.names.size(), 3u);
  for (const std::string& name : r.trace.names) EXPECT_LE(name.size(), kMaxNameBytes);
  EXPECT_EQ(r.trace.names[1], std::string(kMaxNameBytes, 'a'));
}

TEST(TraceParserHostile, CutNamesStayValidUtf8) {
  // "é" (2 bytes) straddles byte 4096: the cut backs up to before it.
  const std::string name = std::string(4095, 'n') + "\xc3\xa9" + "tail";
  LoadResult r = Load("utf8.json", Cat("[", XEvent(name), "]"));
  ASSERT_EQ(r.trace.names.size(), 1u);
  EXPECT_EQ(r.trace.names[0], std::string(4095, 'n'));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("(4101 bytes), expected at most 4096"), std::string::npos)
      << r.errors[0].message;
}

TEST(TraceParserHostile, LongPidTidAndCategoryAreCutToo) {
  LoadResult r = Load("long_ids.json", R"([{"ph":"X","name":"A","cat":")" +
                                           std::string(5000, 'c') + R"(","pid":")" +
                                           std::string(6000, 'p') + R"(","tid":")" +
                                           std::string(7000, 't') + R"(","ts":0,"dur":1}])");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("\"cat\" is 'ccc"), std::string::npos) << r.errors[0].message;
  EXPECT_NE(r.errors[0].message.find("(3 strings cut in all)"), std::string::npos);
  ASSERT_EQ(r.trace.processes.size(), 1u);
  EXPECT_EQ(r.trace.processes[0].name.size(), kMaxNameBytes);
}

TEST(TraceParserHostile, AnEventOverTheSizeLimitStopsTheFile) {
  LoadOptions options;
  options.chunk_bytes = 64 << 10;
  options.max_event_bytes = 1 << 20;
  const std::string text =
      Cat("[", XEvent("first"), ",\n", XEvent(std::string(2 << 20, 'x')), ",\n", XEvent("never"), "]");
  LoadResult r = LoadTimelines({WriteTempFile("too_big.json", text)}, options);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message,
            "the event at byte 59 is longer than 1 MiB, the most one event may take; kept the 1 "
            "events before it (metadata records and skipped events not counted)");
  EXPECT_EQ(r.trace.slice_count, 1u);
}

TEST(TraceParserHostile, ADirectoryIsNamedAsSuch) {
  const std::string dir = testing::TempPath("a_directory");
  std::filesystem::create_directories(dir);
  LoadResult r = LoadTimelines({dir});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].ToString(), dir + ": is a directory, expected a timeline file");
}

TEST(TraceParserHostile, IdsBeyondInt64AreKeptAsText) {
  LoadResult r = Load("huge_ids.json",
                      Cat("[", XEvent("A", "99999999999999999999999", "-9223372036854775809"),
                          ",\n", XEvent("B", "9223372036854775807", "-9223372036854775808"),
                          ",\n", XEvent("C", "1.5", "1e3"), "]"));
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.trace.slice_count, 3u);
  std::vector<std::string> processes, lanes;
  for (const Process& p : r.trace.processes) processes.push_back(p.name);
  for (const Lane& lane : r.trace.lanes) lanes.push_back(lane.name);
  EXPECT_NE(std::find(processes.begin(), processes.end(), "99999999999999999999999"),
            processes.end());
  EXPECT_NE(std::find(processes.begin(), processes.end(), "pid 9223372036854775807"),
            processes.end());
  EXPECT_NE(std::find(lanes.begin(), lanes.end(), "tid -9223372036854775809"), lanes.end());
  EXPECT_NE(std::find(lanes.begin(), lanes.end(), "tid -9223372036854775808"), lanes.end());
  EXPECT_NE(std::find(lanes.begin(), lanes.end(), "tid 1e3"), lanes.end());
}

TEST(TraceParserHostile, TimesBeyondTheRangeSkipTheEvent) {
  LoadResult r = Load("huge_times.json",
                      Cat("[", XEvent("ok", "0", "0", "1e-400"), ",\n",
                          XEvent("over", "0", "0", "1e400"), ",\n", XEvent("far", "0", "0", "-2e18"),
                          "]"));
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.trace.slice_count, 1u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("2 skipped events: events whose \"ts\" is beyond +-1e18 us "
                               "(first at byte 61)"),
            std::string::npos)
      << r.warnings[0];
}

TEST(TraceParserHostile, NanAndInfinityAreNamed) {
  LoadResult r = Load("nan.json", Cat("[", XEvent("ok"), R"(,{"ph":"X","ts":NaN}])"));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("at byte 70: expected a value but found 'N' (NaN and "
                                     "Infinity are not JSON numbers); kept the 1 events"),
            std::string::npos)
      << r.errors[0].message;
  r = Load("minus_inf.json", Cat("[", XEvent("ok"), R"(,{"ph":"X","ts":-Infinity}])"));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("expected a number but found '-Infinity'"),
            std::string::npos)
      << r.errors[0].message;
}

TEST(TraceParserHostile, DeepNestingIsBounded) {
  const int depth = 100000;
  const std::string deep = std::string(depth, '[') + std::string(depth, ']');
  LoadResult r = Load("deep.json", Cat("[", XEvent("ok"), R"(,{"ph":"M","name":"process_name",)",
                                       R"("pid":0,"args":)", deep, "}]"));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("arrays and objects nested deeper than 512 levels"),
            std::string::npos)
      << r.errors[0].message;
  EXPECT_EQ(r.trace.slice_count, 1u);
  const std::string ok_depth = std::string(500, '[') + std::string(500, ']');
  r = Load("deep_ok.json", Cat("[", XEvent("ok"), R"(,{"ph":"C","name":"c","pid":0,"ts":0,)",
                               R"("args":{"v":1,"deep":)", ok_depth, "}}]"));
  EXPECT_TRUE(r.errors.empty()) << r.errors[0].message;
  EXPECT_EQ(r.trace.counter_count, 1u);
}

TEST(TraceParserHostile, HugeSortIndexIsClamped) {
  LoadResult r = Load("sort.json", Cat("[", XEvent("A"), ",\n", XEvent("B", "1"), R"(,
{"ph":"M","name":"process_sort_index","pid":1,"args":{"sort_index":-1e30}},
{"ph":"M","name":"thread_sort_index","pid":0,"tid":0,"args":{"sort_index":1e300}}])"));
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.trace.processes.size(), 2u);
  EXPECT_EQ(r.trace.processes[0].pid, 1);  // sorted first: -2^30
  EXPECT_EQ(r.trace.processes[0].sort_index, -(1 << 30));
}

// Not JSON, but drawn: invalid UTF-8 and raw control characters in strings (keys, values,
// args) are replaced by U+FFFD, an event without a pid goes to pid 0, a field given twice
// keeps its last value; each is counted like a skipped event, with the byte of the first.
TEST(TraceParserHostile, BadStringsMissingPidsAndRepeatedKeysAreRepairedAndNoted) {
  const std::string text = Cat(
      "[", XEvent("ok \\u0001 escaped \\u00e9 and raw \xc3\xa9"), ",\n",  // valid: no note
      XEvent("bad\xff\xfeutf8"), ",\n", XEvent(std::string("nul\0in", 6)), ",\n",
      R"({"ph":"X","name":"nopid","tid":0,"ts":0,"dur":1},)", "\n",
      R"({"ph":"X","name":"twice","pid":0,"tid":0,"ts":0,"dur":1,"dur":50},)", "\n",
      R"({"ph":"X","name":"args","pid":0,"tid":0,"ts":0,"dur":1,"args":{"k":")", "\xc0\xaf",
      R"("}},)", "\n", XEvent("over\xed\xa0\x80surrogate"), "]");
  auto byte_of = [&text](const std::string& name) {
    return std::to_string(text.rfind('{', text.find("\"" + name)));
  };
  for (size_t chunk : {size_t{16}, size_t{4} << 20}) {
    LoadResult r = Load("repaired.json", text, chunk);
    EXPECT_TRUE(r.errors.empty()) << r.errors[0].message;
    EXPECT_EQ(r.trace.events_kept, 7u);
    EXPECT_EQ(r.trace.slice_count, 7u);
    std::string all;
    for (const std::string& w : r.warnings) all += w + "\n";
    EXPECT_EQ(r.warnings.size(), 4u) << all;
    const std::string file = testing::TempPath("repaired.json") + ": ";
    EXPECT_NE(all.find(file + "3 repaired events: invalid UTF-8 in a string (replaced by U+FFFD) "
                              "(first at byte " + byte_of("bad") + ")"),
              std::string::npos)
        << all;
    EXPECT_NE(all.find(file + "1 repaired events: a raw control character in a string, which "
                              "JSON allows only escaped (replaced by U+FFFD) (first at byte " +
                       byte_of("nul") + ")"),
              std::string::npos)
        << all;
    EXPECT_NE(all.find(file + "1 repaired events: no \"pid\" (put in pid 0) (first at byte " +
                       byte_of("nopid") + ")"),
              std::string::npos)
        << all;
    EXPECT_NE(all.find(file + "1 repaired events: the key \"dur\" twice (the last value is used) "
                              "(first at byte " + byte_of("twice") + ")"),
              std::string::npos)
        << all;
    std::vector<std::string> names;
    const Slice* twice = nullptr;
    for (const Lane& lane : r.trace.lanes) {
      for (const Row& row : lane.rows) {
        for (const Slice& slice : row.slices) {
          names.push_back(NameOf(r.trace, slice));
          if (names.back() == "twice") twice = &slice;
        }
      }
    }
    for (const std::string& name : names) EXPECT_TRUE(IsValidUtf8(name)) << name;
    auto has = [&names](const std::string& name) {
      return std::find(names.begin(), names.end(), name) != names.end();
    };
    EXPECT_TRUE(has("ok \x01 escaped \xc3\xa9 and raw \xc3\xa9"));
    EXPECT_TRUE(has("bad\xef\xbf\xbd\xef\xbf\xbdutf8"));
    EXPECT_TRUE(has("nul\xef\xbf\xbdin"));
    EXPECT_TRUE(has("nopid"));
    ASSERT_NE(twice, nullptr);
    EXPECT_EQ(twice->dur, 50);
  }
}

TEST(TraceParserHostile, Utf8SequencesAreJudgedStrictly) {
  EXPECT_TRUE(IsValidUtf8("plain, \xc3\xa9, \xe2\x82\xac, \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\x80"));              // a stray continuation byte
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xe0\x80\xaf"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // beyond U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // cut short
  EXPECT_EQ(RepairText("a\tb\xe2\x82"), "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd");
}

TEST(TraceParserHostile, BytesInMemoryParseLikeAFile) {
  const std::string text = Cat("[", XEvent("A"), ",", XEvent("B", "1"), "]");
  LoadResult from_bytes = LoadTimelineBytes(text, "mem.json");
  EXPECT_TRUE(from_bytes.errors.empty());
  EXPECT_EQ(from_bytes.trace.slice_count, 2u);
  LoadResult empty = LoadTimelineBytes("", "mem.json");
  ASSERT_EQ(empty.errors.size(), 1u);
  EXPECT_EQ(empty.errors[0].ToString(), "mem.json: empty file");
}

}  // namespace
}  // namespace hvdview
