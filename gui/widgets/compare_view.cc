#include "widgets/compare_view.h"

#include <QHBoxLayout>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include "core/time_format.h"
#include "widgets/legend_bar.h"

namespace hvdview {

CompareView::CompareView(QWidget* parent)
    : QWidget(parent),
      top_(new TimelineView(this)),
      bottom_(new TimelineView(this)),
      top_label_(new QLabel(tr("A: (none) - File > Open for compare A"), this)),
      bottom_label_(new QLabel(tr("B: (none) - File > Open for compare B"), this)),
      name_edit_(new QLineEdit(QStringLiteral("STEP"), this)),
      occurrence_(new QSpinBox(this)),
      offset_(new QDoubleSpinBox(this)),
      status_(new QLabel(this)),
      details_(new QLabel(this)) {
  occurrence_->setRange(1, 1000000);
  offset_->setRange(-1e12, 1e12);
  offset_->setDecimals(3);
  offset_->setSuffix(QStringLiteral(" us"));
  auto* apply = new QPushButton(tr("Align"), this);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Align at event"), this));
  bar->addWidget(name_edit_);
  bar->addWidget(new QLabel(tr("occurrence"), this));
  bar->addWidget(occurrence_);
  bar->addWidget(new QLabel(tr("plus offset"), this));
  bar->addWidget(offset_);
  bar->addWidget(apply);
  bar->addWidget(status_, 1);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  for (auto [label, view] : {std::pair{top_label_, top_}, std::pair{bottom_label_, bottom_}}) {
    auto* box = new QWidget(splitter);
    auto* box_layout = new QVBoxLayout(box);
    box_layout->setContentsMargins(0, 0, 0, 0);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    box_layout->addWidget(label);
    box_layout->addWidget(view, 1);
    splitter->addWidget(box);
  }
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(bar);
  layout->addWidget(new LegendBar(this));
  layout->addWidget(splitter, 1);
  layout->addWidget(details_);

  // One time scale: whichever view moves, the other follows.
  connect(top_, &TimelineView::viewRangeChanged, bottom_, &TimelineView::setViewRange);
  connect(bottom_, &TimelineView::viewRangeChanged, top_, &TimelineView::setViewRange);
  connect(apply, &QPushButton::clicked, this, &CompareView::applyFromControls);
  connect(name_edit_, &QLineEdit::returnPressed, this, &CompareView::applyFromControls);
  connect(top_, &TimelineView::sliceSelected, this,
          [this](const SliceRef& ref) { showDetails(top_, ref); });
  connect(bottom_, &TimelineView::sliceSelected, this,
          [this](const SliceRef& ref) { showDetails(bottom_, ref); });
}

void CompareView::setTraces(std::shared_ptr<Trace> top, const QString& top_label,
                            std::shared_ptr<Trace> bottom, const QString& bottom_label) {
  setTopTrace(std::move(top), top_label);
  setBottomTrace(std::move(bottom), bottom_label);
}

void CompareView::setTopTrace(std::shared_ptr<Trace> trace, const QString& label) {
  top_label_->setText(tr("A: %1").arg(label));
  top_name_ = label;
  top_->setTrace(std::move(trace));
  if (bottom_->trace()) align(QString(), 1, 0);
}

void CompareView::setBottomTrace(std::shared_ptr<Trace> trace, const QString& label) {
  bottom_label_->setText(tr("B: %1").arg(label));
  bottom_name_ = label;
  bottom_->setTrace(std::move(trace));
  if (top_->trace()) align(QString(), 1, 0);
}

bool CompareView::align(const QString& name, int occurrence, double offset_us) {
  if (!top_->trace() || !bottom_->trace()) {
    status_->setText(tr("open two timelines first"));
    return false;
  }
  const Trace& a = *top_->trace();
  const Trace& b = *bottom_->trace();
  double anchor_a = a.min_time;
  double anchor_b = b.min_time;
  if (!name.isEmpty()) {
    const auto at_a = NthOccurrence(a, name.toStdString(), occurrence);
    const auto at_b = NthOccurrence(b, name.toStdString(), occurrence);
    if (!at_a || !at_b) {
      status_->setText(tr("no occurrence %1 of '%2' in %3 (%4)")
                           .arg(occurrence)
                           .arg(name, !at_a ? tr("A") : tr("B"), !at_a ? top_name_ : bottom_name_));
      return false;
    }
    anchor_a = *at_a;
    anchor_b = *at_b;
  }
  name_edit_->setText(name);
  occurrence_->setValue(occurrence);
  offset_->setValue(offset_us);
  const double shift = anchor_a - anchor_b + offset_us;
  top_->setTimeShift(0);
  top_->setTimeOrigin(anchor_a);
  bottom_->setTimeShift(shift);
  bottom_->setTimeOrigin(anchor_a);
  const double start = std::min(a.min_time, b.min_time + shift);
  const double end = std::max(a.max_time, b.max_time + shift);
  top_->setViewRange(start - (end - start) * 0.01, end + (end - start) * 0.01);
  status_->setText(tr("B shifted by %1").arg(QString::fromStdString(FormatDuration(shift, 4))));
  return true;
}

void CompareView::applyFromControls() {
  align(name_edit_->text().trimmed(), occurrence_->value(), offset_->value());
}

void CompareView::showDetails(TimelineView* view, const SliceRef& ref) {
  const Trace& trace = *view->trace();
  const EventView event = ViewOf(trace, ref);
  details_->setText(tr("%1: %2 on %3 pid %4, start %5, duration %6")
                        .arg(view == top_ ? tr("A") : tr("B"),
                             QString::fromStdString(trace.names[event.name]),
                             QString::fromStdString(trace.lanes[ref.lane].name))
                        .arg(trace.lanes[ref.lane].pid)
                        .arg(QString::fromStdString(
                                 FormatDuration(event.start + view->timeShift() - trace.min_time)),
                             QString::fromStdString(FormatDuration(event.dur))));
}

}  // namespace hvdview
