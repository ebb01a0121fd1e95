// The hvdview window: Timeline, Compare and Charts tabs; opens files of either kind.
#pragma once

#include <QLabel>
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
  // The warnings of the last timeline load (skipped or repaired events), one per line; empty
  // when it had none. Shown in a bar above the tabs until the next load or until closed.
  QString warningsShown() const;

 private:
  enum class Target { kMain, kCompareTop, kCompareBottom };

  void createMenus();
  void loadTimelines(const QStringList& paths, Target target);
  void onLoaded(const std::shared_ptr<LoadResult>& result);
  void openDialog(Target target);
  void exportCurrentView();
  void reportProblems(const QStringList& lines);  // errors (and warnings) in a message box
  void showWarnings(const QStringList& lines);

  QTabWidget* tabs_;
  QWidget* warnings_bar_;  // above the tabs; hidden when the last load had no warnings
  QLabel* warnings_text_;
  TimelinePanel* timeline_;
  CompareView* compare_;
  ChartsPanel* charts_;
  TraceLoader* loader_;
  QProgressDialog* progress_ = nullptr;
  Target target_ = Target::kMain;
  QStringList loading_paths_;
};

}  // namespace hvdview
