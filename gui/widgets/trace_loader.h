// Loads timelines on a worker thread so the window stays responsive; reports progress and
// can be cancelled.
#pragma once

#include <QObject>
#include <QStringList>
#include <QThread>
#include <QTimer>
#include <atomic>
#include <memory>

#include "core/trace_parser.h"

namespace hvdview {

class TraceLoader : public QObject {
  Q_OBJECT

 public:
  explicit TraceLoader(QObject* parent = nullptr);
  ~TraceLoader() override;

  // Starts loading `paths` as one trace; ignored while a load is running.
  void start(const QStringList& paths);
  void cancel() { cancel_ = true; }
  bool busy() const { return thread_ != nullptr; }

 signals:
  void progress(int permille);
  // Always emitted once per start(), also after cancel (result->cancelled).
  void finished(std::shared_ptr<hvdview::LoadResult> result);

 private:
  QThread* thread_ = nullptr;
  QTimer poll_;
  std::atomic<bool> cancel_{false};
  std::atomic<uint64_t> done_{0};
  std::atomic<uint64_t> total_{1};
  std::shared_ptr<LoadResult> result_;
};

}  // namespace hvdview
