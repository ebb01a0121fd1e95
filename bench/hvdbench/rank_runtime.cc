#include "rank_runtime.h"

#include <iostream>

#include "gpu_world.h"
#include "hvd/mpi.h"

namespace hvd::bench {

bool knobs_from_env(Config* cfg) {
  Status s = Config::from_process_env(cfg);
  if (!s.ok()) std::cerr << "hvdbench: runtime knobs: " << s.message() << "\n";
  return s.ok();
}

RankRuntime::~RankRuntime() {
  if (runtime_ && runtime_->running()) (void)runtime_->shutdown();
}

Status RankRuntime::start(WorldKind kind, const Config& config, double origin,
                          std::unique_ptr<RankRuntime>* out, MemoryKind memory, bool* agreed) {
  if (agreed) *agreed = false;
  auto r = std::unique_ptr<RankRuntime>(new RankRuntime());
  r->platform_ = make_std_platform();
  r->cpu_ = make_cpu_device();
  if (kind == WorldKind::kMpi) {
#ifdef HVD_HAVE_MPI
    r->transport_ = make_mpi_world_transport(config.ranks_per_node);
#else
    return Status::Precondition("hvdbench was built without MPI");
#endif
  } else {
    r->local_ = std::make_unique<LocalWorld>(1);
    r->transport_ = r->local_->transport(0);
  }
  if (memory == MemoryKind::kGpu) {
    // The host transport carries the NCCL bootstrap and host-memory messages (control
    // plane); it must outlive the NCCL world built over it.
    r->host_ = std::move(r->transport_);
    Status g = make_gpu_world(*r->host_, &r->transport_, &r->gpu_);
    if (!g.ok()) {
      if (agreed) *agreed = true;
      return g;
    }
  }
  // hvdbench owns the timeline so the replay's compute lane lands in the same file.
  Status s;
  if (!config.timeline.empty()) {
    r->timeline_ = TimelineWriter::open(timeline_rank_path(config.timeline, r->transport_->rank()), &s);
    if (!s.ok()) return s;
  }
  r->origin_ = origin > 0 ? origin : r->platform_->now();
  RuntimeOptions o;
  o.platform = r->platform_.get();
  o.transport = r->transport_.get();
  o.cpu = r->cpu_.get();
  o.gpu = r->gpu_.get();
  o.config = config;
  o.timeline = r->timeline_.get();
  o.time_origin = r->origin_;
  r->runtime_ = std::make_unique<Runtime>(o);
  s = r->runtime_->start();
  if (!s.ok()) return s;
  *out = std::move(r);
  return Status::OK();
}

Status RankRuntime::shutdown() {
  Status s = runtime_ ? runtime_->shutdown() : Status::OK();
  if (timeline_) timeline_->flush();
  return s;
}

}  // namespace hvd::bench
