#include "widgets/timeline_panel.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include "core/time_format.h"
#include "core/trace_parser.h"
#include "widgets/legend_bar.h"

namespace hvdview {
namespace {

QString Duration(double us) {
  return QString::fromStdString(FormatDuration(us, 3));
}

QTableWidgetItem* NumberItem(const QString& text, double sort_value) {
  auto* item = new QTableWidgetItem(text);
  item->setData(Qt::UserRole, sort_value);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

TimelinePanel::TimelinePanel(QWidget* parent)
    : QWidget(parent),
      view_(new TimelineView(this)),
      search_edit_(new QLineEdit(this)),
      match_label_(new QLabel(this)),
      order_combo_(new QComboBox(this)),
      details_(new QTextEdit(this)),
      range_label_(new QLabel(tr("Shift-drag (or drag on the ruler) to select a range"), this)),
      stats_(new QTableWidget(0, 5, this)) {
  search_edit_->setPlaceholderText(tr("Search name (Enter = next)"));
  auto* previous = new QPushButton(tr("Previous"), this);
  auto* next = new QPushButton(tr("Next"), this);
  auto* fit = new QPushButton(tr("Fit"), this);
  auto* labels = new QCheckBox(tr("Labels"), this);
  labels->setChecked(true);
  order_combo_->addItems(
      {tr("Order: rank / sort index"), tr("Order: name"), tr("Order: time in collectives")});

  auto* bar = new QHBoxLayout;
  bar->addWidget(search_edit_, 2);
  bar->addWidget(previous);
  bar->addWidget(next);
  bar->addWidget(match_label_, 1);
  bar->addWidget(order_combo_);
  bar->addWidget(labels);
  bar->addWidget(fit);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(view_);
  splitter->addWidget(makeSidePanel());
  splitter->setStretchFactor(0, 4);
  splitter->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(bar);
  layout->addWidget(new LegendBar(this));
  layout->addWidget(splitter, 1);

  connect(search_edit_, &QLineEdit::returnPressed, this, &TimelinePanel::searchOrNext);
  connect(next, &QPushButton::clicked, this, &TimelinePanel::searchOrNext);
  connect(previous, &QPushButton::clicked, this, &TimelinePanel::findPrevious);
  connect(fit, &QPushButton::clicked, view_, &TimelineView::fitAll);
  connect(labels, &QCheckBox::toggled, view_, &TimelineView::setShowLabels);
  connect(order_combo_, &QComboBox::currentIndexChanged, this,
          [this](int index) { view_->setProcessOrder(static_cast<ProcessOrder>(index)); });
  connect(view_, &TimelineView::sliceSelected, this, &TimelinePanel::showDetails);
  connect(view_, &TimelineView::sliceCleared, details_, &QTextEdit::clear);
  connect(view_, &TimelineView::rangeSelected, this, &TimelinePanel::showRangeStats);
  connect(view_, &TimelineView::rangeCleared, this, [this] { stats_->setRowCount(0); });
}

QWidget* TimelinePanel::makeSidePanel() {
  details_->setReadOnly(true);
  details_->setPlaceholderText(tr("Click a slice to see its details"));
  stats_->setHorizontalHeaderLabels({tr("Name"), tr("Count"), tr("Total"), tr("Mean"), tr("Max")});
  stats_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  stats_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  stats_->verticalHeader()->hide();
  stats_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  range_label_->setWordWrap(true);

  auto* side = new QWidget(this);
  side->setMinimumWidth(420);
  auto* side_layout = new QVBoxLayout(side);
  side_layout->setContentsMargins(0, 0, 0, 0);
  side_layout->addWidget(details_, 2);
  side_layout->addWidget(range_label_);
  side_layout->addWidget(stats_, 3);
  return side;
}

void TimelinePanel::setTrace(std::shared_ptr<Trace> trace) {
  view_->setTrace(std::move(trace));
  matches_.clear();
  searched_.clear();
  match_label_->clear();
  details_->clear();
  stats_->setRowCount(0);
  order_combo_->setCurrentIndex(0);
}

void TimelinePanel::search(const QString& text) {
  searched_ = text;
  search_edit_->setText(text);
  matches_ =
      view_->trace() ? FindByName(*view_->trace(), text.toStdString()) : std::vector<SliceRef>{};
  match_index_ = -1;
  if (matches_.empty()) {
    match_label_->setText(text.isEmpty() ? QString() : tr("no match"));
    return;
  }
  findNext();
}

void TimelinePanel::searchOrNext() {
  if (search_edit_->text() != searched_) {
    search(search_edit_->text());
  } else {
    findNext();
  }
}

void TimelinePanel::findNext() {
  if (matches_.empty()) return;
  match_index_ = (match_index_ + 1) % static_cast<int>(matches_.size());
  showMatch();
}

void TimelinePanel::findPrevious() {
  if (matches_.empty()) return;
  const int count = static_cast<int>(matches_.size());
  match_index_ = (match_index_ - 1 + count) % count;
  showMatch();
}

void TimelinePanel::showMatch() {
  match_label_->setText(tr("%1 of %2").arg(match_index_ + 1).arg(matches_.size()));
  view_->selectSlice(matches_[static_cast<size_t>(match_index_)], true);
}

void TimelinePanel::showDetails(const SliceRef& ref) {
  const Trace& trace = *view_->trace();
  const EventView event = ViewOf(trace, ref);
  const Lane& lane = trace.lanes[ref.lane];
  QString process;
  for (const Process& p : trace.processes) {
    if (p.pid == lane.pid) process = QString::fromStdString(p.name);
  }
  QString text = tr("Name: %1\nProcess: %2 (pid %3)\nLane: %4\nCategory: %5\nStart: %6 "
                    "(ts %7 us)\n")
                     .arg(QString::fromStdString(trace.names[event.name]), process)
                     .arg(lane.pid)
                     .arg(QString::fromStdString(lane.name),
                          QString::fromLatin1(CategoryLabel(event.category)),
                          Duration(event.start - trace.min_time))
                     .arg(event.start, 0, 'f', 3);
  if (ref.row >= 0) {
    text += tr("Duration: %1%2\n")
                .arg(Duration(event.dur), event.unfinished ? tr(" (unfinished)") : QString());
  }
  const std::string json = ReadEventJson(trace, event.source);
  if (!json.empty()) text += tr("\nEvent:\n") + QString::fromStdString(json);
  details_->setPlainText(text);
}

void TimelinePanel::showRangeStats(double start_us, double end_us) {
  const std::vector<NameStats> stats = RangeStats(*view_->trace(), start_us, end_us);
  range_label_->setText(tr("Selection %1 (from %2 to %3): %4 names")
                            .arg(Duration(end_us - start_us),
                                 Duration(start_us - view_->trace()->min_time),
                                 Duration(end_us - view_->trace()->min_time))
                            .arg(stats.size()));
  stats_->setSortingEnabled(false);
  stats_->setRowCount(static_cast<int>(stats.size()));
  for (int i = 0; i < static_cast<int>(stats.size()); ++i) {
    const NameStats& s = stats[static_cast<size_t>(i)];
    stats_->setItem(i, 0, new QTableWidgetItem(QString::fromStdString(s.name)));
    stats_->setItem(i, 1, NumberItem(QString::number(s.count), static_cast<double>(s.count)));
    stats_->setItem(i, 2, NumberItem(Duration(s.total), s.total));
    stats_->setItem(i, 3, NumberItem(Duration(s.mean()), s.mean()));
    stats_->setItem(i, 4, NumberItem(Duration(s.max), s.max));
  }
}

}  // namespace hvdview
