// Writes realistic timelines in our runtime's format (pid = rank, lanes cycle / negotiation /
// collective / compute), for the benchmark and for tests that need big files.
#pragma once

#include <cstddef>
#include <string>

namespace hvdview {

struct SyntheticTimelineSpec {
  int ranks = 4;
  int first_rank = 0;       // pids first_rank .. first_rank + ranks - 1 (an MPI rank's own file)
  size_t events = 1000;  // approximate total, metadata excluded
  int collectives_per_step = 10;
  double step_us = 100000;  // length of one training step
  double rank_skew = 0.01;  // rank r computes (1 + r * skew) times longer
  bool close_array = true;  // write the final ']'
};

// Returns the number of events written (metadata included); 0 when the file cannot be written.
size_t WriteSyntheticTimeline(const std::string& path, const SyntheticTimelineSpec& spec);

}  // namespace hvdview
