// Offscreen rendering for the command line: --screenshot and --export-chart.
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>
#include <optional>
#include <utility>

namespace hvdview {

struct HeadlessOptions {
  QStringList files;          // positional FILE arguments
  QStringList compare_files;  // --compare: the timeline shown below (compare mode)
  QString align_name;         // --align NAME[:N]
  int align_occurrence = 1;
  double align_offset_us = 0;                         // --offset
  QSize size{1600, 900};                              // --size
  std::optional<std::pair<double, double>> range_ms;  // --range START:END from trace start
  QString chart = QStringLiteral("all");              // --chart
};

// Exit codes: 0 done, 2 bad input (a message per problem on stderr), 1 cannot write.
int RunScreenshot(const QString& out_path, const HeadlessOptions& options);
int RunExportChart(const QString& out_path, const HeadlessOptions& options);

}  // namespace hvdview
