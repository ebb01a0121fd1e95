#include "app/main_window.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>

#include "core/report_model.h"
#include "widgets/image_export.h"

namespace hvdview {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      tabs_(new QTabWidget(this)),
      timeline_(new TimelinePanel(this)),
      compare_(new CompareView(this)),
      charts_(new ChartsPanel(this)),
      loader_(new TraceLoader(this)) {
  setWindowTitle(tr("hvdview"));
  tabs_->addTab(timeline_, tr("Timeline"));
  tabs_->addTab(compare_, tr("Compare"));
  tabs_->addTab(charts_, tr("Charts"));
  setCentralWidget(tabs_);
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
  if (!problems.isEmpty()) reportProblems(problems, true);
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
                                 .arg(trace->event_count())
                                 .arg(trace->processes.size()));
  }
  if (!errors.isEmpty())
    reportProblems(errors + warnings, true);
  else if (!warnings.isEmpty())
    reportProblems(warnings, false);
}

void MainWindow::reportProblems(const QStringList& lines, bool errors) {
  if (errors) {
    // Window-modal but not blocking (open, not exec): loading goes on, and tests can read it.
    auto* box = new QMessageBox(QMessageBox::Warning, tr("hvdview: problems reading files"),
                                lines.join('\n'), QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("problems"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  } else {
    statusBar()->showMessage(lines.join("; "), 15000);
  }
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
