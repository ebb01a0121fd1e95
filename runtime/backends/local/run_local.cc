// run_local: an in-process world, one std::thread per rank, each running its rank's
// runtime over a LocalWorld transport and the host seams.
#include <thread>
#include <vector>

#include "hvd/local.h"
#include "hvd/seams.h"
#include "hvd/timeline.h"

namespace hvd {

Status run_local(int size, const Config& config, const std::function<void(Runtime&)>& body,
                 int ranks_per_node, TimelineWriter* timeline) {
  LocalWorld world(size, ranks_per_node);
  std::vector<Status> results(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  std::unique_ptr<TimelineWriter> own;
  if (!timeline && !config.timeline.empty()) {
    HVD_ASSIGN_OR_RETURN(own, TimelineWriter::open(config.timeline));
    timeline = own.get();
  }
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      const OwnedSeams seams = host_seams(world.transport(r));
      results[static_cast<size_t>(r)] = run_rank(RuntimeOptions{seams.view(), config, timeline}, body);
    });
  }
  for (auto& t : threads) t.join();
  for (auto& s : results)
    if (!s.ok()) return s;
  return Status::OK();
}

}  // namespace hvd
