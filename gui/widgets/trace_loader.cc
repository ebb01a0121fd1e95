#include "widgets/trace_loader.h"

namespace hvdview {

TraceLoader::TraceLoader(QObject* parent) : QObject(parent) {
  poll_.setInterval(100);
  connect(&poll_, &QTimer::timeout, this, [this] {
    const uint64_t total = std::max<uint64_t>(1, total_.load());
    emit progress(static_cast<int>(1000 * done_.load() / total));
  });
}

TraceLoader::~TraceLoader() {
  if (thread_) {
    cancel_ = true;
    thread_->wait();
  }
}

void TraceLoader::start(const QStringList& paths) {
  if (thread_) return;
  cancel_ = false;
  done_ = 0;
  total_ = 1;
  std::vector<std::string> files;
  for (const QString& path : paths) files.push_back(path.toStdString());
  thread_ = QThread::create([this, files] {
    LoadOptions options;
    options.cancel = &cancel_;
    options.progress = [this](uint64_t done, uint64_t total) {
      done_ = done;
      total_ = total;
    };
    result_ = std::make_shared<LoadResult>(LoadTimelines(files, options));
  });
  connect(thread_, &QThread::finished, this, [this] {
    poll_.stop();
    thread_->deleteLater();
    thread_ = nullptr;
    std::shared_ptr<LoadResult> result = std::move(result_);
    emit progress(1000);
    emit finished(result);
  });
  poll_.start();
  thread_->start();
}

}  // namespace hvdview
