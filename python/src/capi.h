// hvd._core's side of hvd_capi.h: the one table over the process's default runtime.
#pragma once

#include "hvd_capi.h"

#include <cstdint>
#include <string>
#include <vector>

/// The table (static; valid for the life of the process).
const hvd_capi* hvd_capi_table();

/// One allreduce that came through the table while a trace was being recorded: when the op
/// library handed it over (its input was ready) and when the runtime finished it, in seconds
/// of the steady clock.
struct CapiTraceEvent {
  std::string name;
  int dtype = 0;
  std::vector<int64_t> shape;
  double enqueued_s = 0;
  double done_s = -1;  // -1: not finished when the recording was taken
};

/// Starts recording the allreduces of the table (the first max_events of them), dropping
/// what an earlier recording held. What hvd.tensorflow's record_trace reads.
void capi_trace_start(size_t max_events);
/// Ends the recording and returns its events in the order they were enqueued.
std::vector<CapiTraceEvent> capi_trace_stop();
