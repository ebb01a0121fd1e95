// hvd_microbench main: Google Benchmark's usual main, plus a closing summary of the
// float32-sum reduce kernel as a fraction of memcpy at each size (target: >= 80 %).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>

namespace {

// Console output as usual; remembers bytes/s per benchmark name.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      auto it = r.counters.find("bytes_per_second");
      if (it != r.counters.end() && r.run_type == Run::RT_Iteration)
        rate_[r.benchmark_name()] = it->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // Pairs BM_Reduce/float32_sum/<size> with BM_Memcpy/<size>.
  void print_ratios() const {
    const std::string prefix = "BM_Reduce/float32_sum/";
    bool any = false;
    for (const auto& [name, rate] : rate_) {
      if (name.rfind(prefix, 0) != 0) continue;
      const std::string size = name.substr(prefix.size());
      auto m = rate_.find("BM_Memcpy/" + size);
      if (m == rate_.end() || m->second <= 0) continue;
      if (!any) std::printf("\nreduce float32 sum vs memcpy of the same bytes (target >= 80 %%):\n");
      any = true;
      std::printf("  %10s bytes: %8.2f GB/s vs %8.2f GB/s = %5.1f %%\n", size.c_str(), rate / 1e9,
                  m->second / 1e9, 100.0 * rate / m->second);
    }
  }

 private:
  std::map<std::string, double> rate_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios();
  benchmark::Shutdown();
  return 0;
}
