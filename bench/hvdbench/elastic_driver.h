// hvdrun's elastic mode (horovodrun --host-discovery-script): hvdrun is the driver of a
// TCP job whose set of workers changes. It polls the discovery script (one "host:slots"
// line per host) every second, starts workers on free slots (children here, ssh
// elsewhere), notices workers that exit, and whenever the set of live workers changes
// publishes a new generation in the rendezvous ("elastic/gen", "elastic/<g>/assign"; see
// hvd/tcp.h). Workers join a generation at hvd.init() and at every reset point.
#pragma once

#include <string>
#include <vector>

namespace hvd::bench {

/// --reset-limit's default. horovodrun has none (a job whose workers keep failing resets
/// forever); 100 stops such a job while leaving room for long runs on preemptible hosts.
inline constexpr int kDefaultResetLimit = 100;

struct ElasticOptions {
  int np = 1;                        ///< workers of the first generation (-np)
  int min_np = 0;                    ///< fewer live workers than this: wait, then fail (--min-np; default -np)
  int max_np = 0;                    ///< never more workers than this (--max-np; 0: every offered slot)
  std::string discovery_script;      ///< --host-discovery-script
  int slots_per_host = 1;            ///< slots of a discovered host without ":slots" (--slots-per-host)
  double elastic_timeout_s = 600;    ///< --elastic-timeout: waiting for min-np workers / a generation
  int reset_limit = kDefaultResetLimit;  ///< --reset-limit
  std::vector<double> cooldown;      ///< --blacklist-cooldown-range MIN MAX (empty: none)
};

/// One line saying what is wrong with the flags ("" when they are fine).
std::string check_elastic_options(const ElasticOptions& e);
/// Runs `cmd` elastically; returns hvdrun's exit code (0: the workers finished; 1: the job
/// failed: reset limit, every worker failed, too few workers for --elastic-timeout).
int run_elastic_job(const ElasticOptions& e, const std::vector<std::string>& cmd);

}  // namespace hvd::bench
