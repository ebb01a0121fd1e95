// Timeline tab: the view with a search bar, lane ordering, legend, slice details and the
// statistics table of the selected range.
#pragma once

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QTableWidget>
#include <QTextEdit>
#include <QWidget>

#include "widgets/timeline_view.h"

namespace hvdview {

class TimelinePanel : public QWidget {
  Q_OBJECT

 public:
  explicit TimelinePanel(QWidget* parent = nullptr);

  void setTrace(std::shared_ptr<Trace> trace);
  TimelineView* view() const { return view_; }
  QTableWidget* statsTable() const { return stats_; }
  QString detailsText() const { return details_->toPlainText(); }
  QString searchStatus() const { return match_label_->text(); }

  // Search by name (case-insensitive substring); next/previous select and reveal matches.
  void search(const QString& text);
  void findNext();
  void findPrevious();

 private:
  QWidget* makeSidePanel();  // details, range label and statistics table
  void searchOrNext();       // Enter / Next: a new text starts a search, the same text goes on
  void showDetails(const SliceRef& ref);
  void showRangeStats(double start_us, double end_us);
  void showMatch();

  TimelineView* view_;
  QLineEdit* search_edit_;
  QLabel* match_label_;
  QComboBox* order_combo_;
  QTextEdit* details_;
  QLabel* range_label_;
  QTableWidget* stats_;
  std::vector<SliceRef> matches_;
  int match_index_ = -1;
  QString searched_;
};

}  // namespace hvdview
