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
  std::unique_ptr<Transport> world;
  if (kind == WorldKind::kMpi) {
#ifdef HVD_HAVE_MPI
    world = make_mpi_world_transport(config.ranks_per_node);
#else
    return Status::Precondition("hvdbench was built without MPI");
#endif
  } else {
    world = make_single_rank_transport();
  }
  OwnedSeams& seams = r->seams_;
  seams = host_seams(std::move(world));
  if (memory == MemoryKind::kGpu) {
    // The host transport carries the NCCL bootstrap and host-memory messages (control
    // plane); it must outlive the NCCL world built over it.
    seams.host = std::move(seams.transport);
    Status g = make_gpu_world(*seams.host, &seams.transport, &seams.gpu);
    if (!g.ok()) {
      if (agreed) *agreed = true;
      return g;
    }
  }
  // hvdbench owns the timeline so the replay's compute lane lands in the same file.
  if (!config.timeline.empty()) {
    HVD_ASSIGN_OR_RETURN(r->timeline_,
                         TimelineWriter::open(timeline_rank_path(config.timeline, seams.transport->rank())));
  }
  r->origin_ = origin > 0 ? origin : seams.platform->now();
  HVD_RETURN_IF_ERROR(start_runtime(
      RuntimeOptions{seams.view(), config, r->timeline_.get(), nullptr, r->origin_}, &r->runtime_));
  *out = std::move(r);
  return Status::OK();
}

Status RankRuntime::shutdown() {
  Status s = runtime_ ? runtime_->shutdown() : Status::OK();
  if (timeline_) timeline_->flush();
  return s;
}

}  // namespace hvd::bench
