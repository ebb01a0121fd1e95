// The report written by hvdbench and hvdsim (docs/formats.md): one record per run, as
// JSON and CSV, with bandwidths as nccl-tests defines them. The record and its JSON/CSV
// are hvd/report/record.h (no runtime; hvdview reads reports with it); this adds the
// files, the table and what needs the runtime (the autotuner's state).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hvd/report/record.h"
#include "hvd/runtime.h"
#include "hvd/status.h"
#include "hvd/types.h"

namespace hvd::report {

/// nccl-tests bus-bandwidth factor for `op` at `n` ranks.
double busbw_factor(const std::string& op, int n);
/// Fills algbw/busbw from bytes and time.
void fill_bandwidth(CollectiveRecord* c, int n);
/// Writes `{"tool", "version", "source", "runs": [...]}` to `path`, and `"reference": [...]`
/// when there are published points.
Status write_json(const std::string& path, const std::string& tool, const std::string& source,
                  const std::vector<RunRecord>& runs, const std::vector<Reference>& reference = {});
/// Writes the CSV (one line per run) to `path`; with five more columns (seeds and the
/// lo/hi of images/s and efficiency) when a record has seeds > 1.
Status write_csv(const std::string& path, const std::vector<RunRecord>& runs);
/// The CSV written beside the JSON report `path`: the same name with .csv.
std::string csv_path(const std::string& path);
/// Why the report `path` (and its CSV) could not be written, "" when it can: checked before
/// a run. Empty; a name ending in .csv (the CSV would replace the JSON); a directory, a
/// device or a FIFO; a directory that is missing or takes no new file; or one of `inputs`
/// (the files the run reads, each named by its label: {"scenario", path}).
std::string report_path_problem(const std::string& path,
                                const std::vector<std::pair<std::string, std::string>>& inputs = {});
/// Writes `json` to `path` and `csv` to csv_path(path), both whole or neither: through
/// temporary files, every write and close checked, replacing earlier files only when both
/// are complete.
Status write_report_files(const std::string& path, const std::string& json, const std::string& csv);
/// Writes both: `path` as JSON and, next to it, the same name with .csv.
Status write_report(const std::string& path, const std::string& tool, const std::string& source,
                    const std::vector<RunRecord>& runs, const std::vector<Reference>& reference = {});
/// Renders the human table printed on stdout: with [min-max] beside images/s and efficiency
/// when a record has seeds > 1, and the published efficiency of the rows `reference` names
/// (model and np) with the difference in points.
std::string format_table(const std::vector<RunRecord>& runs, const std::vector<Reference>& reference = {});

/// Adds the autotuner's choice to a record's knobs as "autotune.*" strings (fusion_threshold,
/// cycle_time_ms, cache, hierarchical_allreduce/allgather, samples, done, tuning_steps).
void add_autotune_knobs(const AutotuneState& t, int tuning_steps, std::map<std::string, std::string>* knobs);

}  // namespace hvd::report
