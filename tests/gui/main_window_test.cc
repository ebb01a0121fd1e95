// The window: files opened by content on a worker thread, and cancellable loading.
#include "app/main_window.h"

#include <gtest/gtest.h>

#include <QSignalSpy>

#include "core/synthetic_trace.h"
#include "test_files.h"

namespace hvdview {
namespace {

TEST(MainWindow, OpensTimelinesAndReportsByContent) {
  MainWindow window;
  window.show();
  auto* loader = window.findChild<TraceLoader*>();
  ASSERT_NE(loader, nullptr);
  QSignalSpy finished(loader, &TraceLoader::finished);
  window.openFiles({QString::fromStdString(testing::DataFile("report_small.csv")),
                    QString::fromStdString(testing::DataFile("runtime_small.json"))});
  EXPECT_TRUE(window.chartsPanel()->hasReport());
  ASSERT_TRUE(finished.wait(10000));
  const Trace* trace = window.timelinePanel()->view()->trace();
  ASSERT_NE(trace, nullptr);
  EXPECT_EQ(trace->processes.size(), 2u);
  EXPECT_TRUE(window.chartsPanel()->hasTrace());
  EXPECT_EQ(window.compareView()->topView()->trace(), trace);
}

TEST(TraceLoader, LoadsOnAWorkerThreadAndCanBeCancelled) {
  SyntheticTimelineSpec spec;
  spec.events = 300000;
  spec.ranks = 8;
  const std::string path = testing::TempPath("loader.json");
  WriteSyntheticTimeline(path, spec);
  TraceLoader loader;
  std::shared_ptr<LoadResult> result;
  QObject::connect(&loader, &TraceLoader::finished,
                   [&result](std::shared_ptr<LoadResult> r) { result = std::move(r); });
  QSignalSpy finished(&loader, &TraceLoader::finished);
  loader.start({QString::fromStdString(path)});
  EXPECT_TRUE(loader.busy());
  ASSERT_TRUE(finished.wait(20000));
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->cancelled);
  EXPECT_GT(result->trace.event_count(), 250000u);
  loader.start({QString::fromStdString(path)});
  loader.cancel();
  ASSERT_TRUE(finished.wait(20000));
  EXPECT_TRUE(result->cancelled);
  EXPECT_FALSE(loader.busy());
}

}  // namespace
}  // namespace hvdview
