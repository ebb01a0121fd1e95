// hvdview_bench: generates a 1,000,000-event timeline (64 ranks) and prints the time to parse
// it, to draw it the first time offscreen, to redraw after a pan, and the peak RSS.
// Also times nlohmann::json's SAX parser with a do-nothing handler on the same file, the
// lower bound of a nlohmann-based reader, to justify the hand-written scanner.
//   hvdview_bench [EVENTS [RANKS]]
#include <QApplication>
#include <QPixmap>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/synthetic_trace.h"
#include "core/trace_parser.h"
#include "widgets/timeline_view.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::string PeakRss() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 6));
  }
  return "unknown";
}

struct NullSax : nlohmann::json_sax<nlohmann::json> {
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  hvdview::SyntheticTimelineSpec spec;
  spec.events = argc > 1 ? std::stoul(argv[1]) : 1000000;
  spec.ranks = argc > 2 ? std::stoi(argv[2]) : 64;
  const std::string path =
      (std::filesystem::temp_directory_path() / "hvdview_bench_timeline.json").string();

  auto start = std::chrono::steady_clock::now();
  const size_t written = hvdview::WriteSyntheticTimeline(path, spec);
  std::printf("generated   %zu events, %d ranks, %.1f MB in %.2f s (%s)\n", written, spec.ranks,
              std::filesystem::file_size(path) / 1e6, Seconds(start), path.c_str());

  start = std::chrono::steady_clock::now();
  hvdview::LoadResult result = hvdview::LoadTimelines({path});
  const double parse_s = Seconds(start);
  std::printf("parse       %.3f s  (%zu events, %zu names, %zu errors)\n", parse_s,
              result.trace.event_count(), result.trace.names.size(), result.errors.size());
  const std::string rss_after_parse = PeakRss();

  auto trace = std::make_shared<hvdview::Trace>(std::move(result.trace));
  hvdview::TimelineView view;
  view.resize(1600, 900);
  view.show();
  start = std::chrono::steady_clock::now();
  view.setTrace(trace);
  QPixmap first = view.grab();
  std::printf("first draw  %.3f s  (%dx%d, whole trace visible)\n", Seconds(start), first.width(),
              first.height());
  start = std::chrono::steady_clock::now();
  const int frames = 20;
  for (int i = 0; i < frames; ++i) {
    const double shift = (view.viewEnd() - view.viewStart()) * 0.05;
    view.setViewRange(view.viewStart() + shift, view.viewEnd() + shift);
    view.grab();
  }
  std::printf("pan redraw  %.1f ms per frame (%d frames)\n", Seconds(start) * 1000 / frames,
              frames);
  view.zoomAround(0.01, 800);
  start = std::chrono::steady_clock::now();
  view.grab();
  std::printf("zoomed draw %.1f ms\n", Seconds(start) * 1000);
  std::printf("peak RSS    %s after parse, %s after drawing\n", rss_after_parse.c_str(),
              PeakRss().c_str());

  start = std::chrono::steady_clock::now();
  std::ifstream in(path, std::ios::binary);
  NullSax sax;
  nlohmann::json::sax_parse(in, &sax);
  std::printf("reference   nlohmann SAX with an empty handler: %.3f s\n", Seconds(start));
  std::filesystem::remove(path);
  return 0;
}
