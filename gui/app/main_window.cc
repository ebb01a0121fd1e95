#include "app/main_window.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QMenuBar>
#include <QPalette>
#include <QMessageBox>
#include <QStatusBar>
#include <QToolButton>
#include <QVBoxLayout>

#include "core/report_model.h"
#include "widgets/image_export.h"

namespace hvdview {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      tabs_(new QTabWidget(this)),
      warnings_bar_(new QWidget(this)),
      warnings_text_(new QLabel(warnings_bar_)),
      timeline_(new TimelinePanel(this)),
      compare_(new CompareView(this)),
      charts_(new ChartsPanel(this)),
      loader_(new TraceLoader(this)) {
  setWindowTitle(tr("hvdview"));
  tabs_->addTab(timeline_, tr("Timeline"));
  tabs_->addTab(compare_, tr("Compare"));
  tabs_->addTab(charts_, tr("Charts"));
  // Warnings of a load (skipped or repaired events) stay in a bar above the tabs until the
  // next load or until closed: a status-bar message would vanish unseen.
  warnings_bar_->setObjectName(QStringLiteral("warnings"));
  warnings_bar_->setAutoFillBackground(true);
  QPalette palette = warnings_bar_->palette();
  palette.setColor(QPalette::Window, QColor(255, 243, 205));
  palette.setColor(QPalette::WindowText, QColor(102, 77, 3));
  warnings_bar_->setPalette(palette);
  warnings_text_->setObjectName(QStringLiteral("warningsText"));
  warnings_text_->setWordWrap(true);
  warnings_text_->setTextFormat(Qt::PlainText);
  warnings_text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* close = new QToolButton(warnings_bar_);
  close->setText(QStringLiteral("\u00D7"));
  close->setToolTip(tr("Hide these warnings"));
  close->setAutoRaise(true);
  connect(close, &QToolButton::clicked, warnings_bar_, &QWidget::hide);
  auto* bar_layout = new QHBoxLayout(warnings_bar_);
  bar_layout->setContentsMargins(8, 4, 4, 4);
  bar_layout->addWidget(warnings_text_, 1);
  bar_layout->addWidget(close, 0, Qt::AlignTop);
  warnings_bar_->hide();
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(warnings_bar_);
  layout->addWidget(tabs_, 1);
  setCentralWidget(central);
  createMenus();
  connect(loader_, &TraceLoader::finished, this, &MainWindow::onLoaded);
  statusBar()->showMessage(tr("Open a timeline or a report (File > Open)"));
  resize(1400, 850);
}

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open..."), QKeySequence::Open, this, [this] { openDialog(Target::kMain); });
  file->addAction(tr("Open for compare &A..."), this, [this] { openDialog(Target::kCompareTop); });
  file->addAction(tr("Open for compare &B..."), this,
                  [this] { openDialog(Target::kCompareBottom); });
  file->addSeparator();
  file->addAction(tr("&Export view (PNG/SVG)..."), QKeySequence(tr("Ctrl+E")), this,
                  &MainWindow::exportCurrentView);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Fit timeline"), this, [this] { timeline_->view()->fitAll(); });
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Keys and mouse"), this, [this] {
    QMessageBox::information(
        this, tr("hvdview"),
        tr("Wheel: zoom time toward the cursor\nDrag: pan\nShift-drag or drag on the ruler: "
           "measure and select a range (statistics table)\nClick: slice details; click a "
           "process header: collapse/expand\nW/S zoom, A/D pan, F fit, Esc clear selection"));
  });
}

void MainWindow::openDialog(Target target) {
  const QStringList paths =
      QFileDialog::getOpenFileNames(this, tr("Open timelines or a report"), QString(),
                                    tr("Timelines and reports (*.json *.csv);;All files (*)"));
  if (paths.isEmpty()) return;
  if (target == Target::kMain) return openFiles(paths);
  loadTimelines(paths, target);
}

void MainWindow::openFiles(const QStringList& paths) {
  QStringList timelines;
  QStringList problems;
  QString report_file, sweep_file;  // the one report of each kind opened by this call
  // One report of a kind at a time: a second one given together is named, not dropped unseen.
  auto first_of_kind = [&problems](QString* opened, const QString& path) {
    if (opened->isEmpty()) {
      *opened = path;
      return true;
    }
    problems << path + tr(": a second report (%1 is shown); hvdview shows one report at a time, "
                          "open the others separately")
                           .arg(*opened);
    return false;
  };
  auto add_problems = [&problems](const QString& path, const std::string& error) {
    for (const QString& line : QString::fromStdString(error).split('\n')) problems << path + ": " + line;
  };
  for (const QString& path : paths) {
    const FileKind kind = DetectFileKind(path.toStdString());
    if (kind == FileKind::kTimeline) {
      timelines << path;
    } else if (kind == FileKind::kReport) {
      if (!first_of_kind(&report_file, path)) continue;
      std::string error;
      if (auto report = LoadReport(path.toStdString(), &error)) {
        charts_->setReport(*report);
        tabs_->setCurrentWidget(charts_);
      } else {
        add_problems(path, error);
      }
    } else if (kind == FileKind::kCollectiveReport) {
      if (!first_of_kind(&sweep_file, path)) continue;
      std::string error;
      if (auto sweep = LoadCollectiveReport(path.toStdString(), &error)) {
        charts_->setCollectiveReport(*sweep);
        tabs_->setCurrentWidget(charts_);
      } else {
        add_problems(path, error);
      }
    } else {
      problems << path + ": " + QString::fromStdString(DescribeFileProblem(path.toStdString(), kind));
    }
  }
  if (!problems.isEmpty()) reportProblems(problems);
  if (!timelines.isEmpty()) loadTimelines(timelines, Target::kMain);
}

void MainWindow::loadTimelines(const QStringList& paths, Target target) {
  if (loader_->busy()) return;
  target_ = target;
  loading_paths_ = paths;
  progress_ = new QProgressDialog(tr("Reading %1 file(s)...").arg(paths.size()), tr("Cancel"), 0,
                                  1000, this);
  progress_->setWindowModality(Qt::WindowModal);
  progress_->setMinimumDuration(300);
  connect(loader_, &TraceLoader::progress, progress_, &QProgressDialog::setValue);
  connect(progress_, &QProgressDialog::canceled, loader_, &TraceLoader::cancel);
  loader_->start(paths);
}

void MainWindow::onLoaded(const std::shared_ptr<LoadResult>& result) {
  if (progress_) {
    progress_->disconnect();
    progress_->deleteLater();
    progress_ = nullptr;
  }
  if (result->cancelled) {
    statusBar()->showMessage(tr("Loading cancelled"));
    return;
  }
  QStringList errors;
  for (const LoadError& error : result->errors) errors << QString::fromStdString(error.ToString());
  QStringList warnings;
  for (const std::string& warning : result->warnings) warnings << QString::fromStdString(warning);
  auto trace = std::make_shared<Trace>(std::move(result->trace));
  const QString label =
      QFileInfo(loading_paths_.front()).fileName() +
      (loading_paths_.size() > 1 ? tr(" (+%1)").arg(loading_paths_.size() - 1) : QString());
  if (!trace->empty()) {
    if (target_ == Target::kMain) {
      timeline_->setTrace(trace);
      charts_->setTrace(*trace);
      tabs_->setCurrentWidget(timeline_);
      if (!compare_->topView()->trace()) compare_->setTopTrace(trace, label);
    } else if (target_ == Target::kCompareTop) {
      compare_->setTopTrace(trace, label);
      tabs_->setCurrentWidget(compare_);
    } else {
      compare_->setBottomTrace(trace, label);
      tabs_->setCurrentWidget(compare_);
    }
    statusBar()->showMessage(tr("%1: %2 events, %3 processes")
                                 .arg(label)
                                 .arg(trace->events_kept)
                                 .arg(trace->processes.size()));
  }
  showWarnings(warnings);
  if (!errors.isEmpty()) reportProblems(errors);
}

void MainWindow::reportProblems(const QStringList& lines) {
  // Window-modal but not blocking (open, not exec): loading goes on, and tests can read it.
  auto* box = new QMessageBox(QMessageBox::Warning, tr("hvdview: problems reading files"),
                              lines.join('\n'), QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("problems"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

// Replaces the warnings bar's lines (hides it when there are none): one "FILE: N skipped
// events ... (first at byte B)" line per kind of problem, as on the command line.
void MainWindow::showWarnings(const QStringList& lines) {
  warnings_text_->setText(lines.join('\n'));
  warnings_bar_->setVisible(!lines.isEmpty());
}

QString MainWindow::warningsShown() const {
  return warnings_bar_->isHidden() ? QString() : warnings_text_->text();
}

void MainWindow::exportCurrentView() {
  QWidget* target = tabs_->currentWidget();
  if (target == timeline_) target = timeline_->view();
  const QString path = QFileDialog::getSaveFileName(this, tr("Export view"), tr("hvdview.png"),
                                                    tr("Images (*.png *.svg)"));
  if (path.isEmpty()) return;
  QString error;
  if (!ExportWidget(target, path, &error)) QMessageBox::warning(this, tr("hvdview"), error);
}

}  // namespace hvdview
