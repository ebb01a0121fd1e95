// Qt Charts built from a report (throughput, scaling efficiency, step-time split) or from a
// timeline (time in collectives per rank).
#pragma once

#include <QChart>

#include "core/report_model.h"
#include "core/trace_model.h"

namespace hvdview {

// Images/s against np, one series per model/label, dashed ideal-scaling lines.
QChart* MakeThroughputChart(const Report& report);
// Scaling efficiency (%) against np, one series per model/label, ideal = 100 %; a min-max
// band (QAreaSeries "<series> min-max") around the runs of hvdsim --seeds K, and the
// report's published points (QScatterSeries "published <model>", legend entry each).
QChart* MakeEfficiencyChart(const Report& report);
// Stacked horizontal bars, one row per run ("resnet101, np 64"): compute, exposed
// communication (without negotiation), negotiation, other. Wants a tall place: ~18 px a run.
QChart* MakeStepTimeChart(const Report& report);
// A collective sweep (hvdsim --collective): bus bandwidth (GB/s) against message size on a
// log2 axis labelled 1K, 1M, 64M, ...; series "NCCL (raw)" and, unless --raw-only,
// "Horovod (hvd)".
QChart* MakeBusBandwidthChart(const CollectiveReport& report);
// "1", "512", "4K", "64M", "1G": a power of two 2^`log2_bytes` as a size label.
QString SizeLabel(int log2_bytes);
// Bars per process: time inside collectives and in negotiation (imbalance between ranks).
QChart* MakeCollectiveTimeChart(const Trace& trace);

}  // namespace hvdview
