// The hvdview window: Timeline, Compare and Charts tabs; opens files of either kind.
#pragma once

#include <QMainWindow>
#include <QProgressDialog>
#include <QTabWidget>
#include <functional>

#include "widgets/charts_panel.h"
#include "widgets/compare_view.h"
#include "widgets/timeline_panel.h"
#include "widgets/trace_loader.h"

namespace hvdview {

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);

  // Opens reports (charts) and timelines (all timelines as one view), judged by content.
  void openFiles(const QStringList& paths);
  TimelinePanel* timelinePanel() const { return timeline_; }
  CompareView* compareView() const { return compare_; }
  ChartsPanel* chartsPanel() const { return charts_; }

 private:
  enum class Target { kMain, kCompareTop, kCompareBottom };

  void createMenus();
  void loadTimelines(const QStringList& paths, Target target);
  void onLoaded(const std::shared_ptr<LoadResult>& result);
  void openDialog(Target target);
  void exportCurrentView();
  void reportProblems(const QStringList& lines, bool errors);

  QTabWidget* tabs_;
  TimelinePanel* timeline_;
  CompareView* compare_;
  ChartsPanel* charts_;
  TraceLoader* loader_;
  QProgressDialog* progress_ = nullptr;
  Target target_ = Target::kMain;
  QStringList loading_paths_;
};

}  // namespace hvdview
