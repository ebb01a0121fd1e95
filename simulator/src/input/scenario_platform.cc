// cluster.platform_file, checked before SimGrid sees it: SimGrid aborts the whole process
// (no exception to catch) on a zero or NaN bandwidth, loads a ".so" as code, and builds
// whatever host count a <cluster radical> asks for. This reads the file and the attributes
// the simulation depends on: link bandwidths and latencies, and host counts. What is left
// (hosts and routes between the ranks' hosts) is checked by check_platform_file, which loads
// the file in SimGrid in a child process before hvdsim's runs.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>

#include "hvd/sim/isolate.h"
#include "hvd/sim/scenario.h"
#include "input/scenario_json.h"
#include "model/topology.h"

namespace hvd::sim {
namespace {

// The most hosts a platform file may describe.
constexpr double kMaxPlatformHosts = 1 << 16;

// "10GBps" -> {10, "GBps"}; false when no finite number leads.
bool split(const std::string& text, double* num, std::string* unit) {
  const char* begin = text.c_str();
  char* end = nullptr;
  *num = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(*num)) return false;
  *unit = std::string(end);
  return true;
}

// SimGrid's bandwidth units (decimal and binary prefixes of bps and Bps; none: Bps), in
// bytes/s; 0 when the unit is not one (SimGrid then reports it cleanly itself).
double bandwidth_unit(std::string_view u) {
  if (u.empty()) return 1;
  double base = 0;
  if (u.ends_with("Bps")) base = 1;
  else if (u.ends_with("bps")) base = 0.125;
  else return 0;
  u.remove_suffix(3);
  const bool binary = u.size() == 2 && u[1] == 'i';
  if (u.size() > (binary ? 2u : 1u)) return 0;
  if (u.empty()) return base;
  const std::string_view prefixes = "kMGTPE";
  size_t p = prefixes.find(u[0] == 'K' ? 'k' : u[0]);
  if (p == std::string_view::npos) return 0;
  return base * std::pow(binary ? 1024.0 : 1000.0, static_cast<double>(p + 1));
}

// SimGrid's time units, in seconds (none: seconds); 0 when not one.
double time_unit(std::string_view u) {
  struct Unit {
    std::string_view name;
    double s;
  };
  static constexpr Unit kUnits[] = {{"", 1},      {"w", 604800}, {"d", 86400}, {"h", 3600},  {"m", 60},
                                    {"s", 1},     {"ms", 1e-3},  {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}};
  for (const Unit& x : kUnits)
    if (x.name == u) return x.s;
  return 0;
}

// Hosts of a radical "0-99,200,300-301" (0 when malformed: SimGrid says why).
double radical_hosts(const std::string& r) {
  double n = 0;
  std::stringstream ss(r);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const size_t dash = part.find('-');
    const double a = std::atof(part.substr(0, dash).c_str());
    const double b = dash == std::string::npos ? a : std::atof(part.substr(dash + 1).c_str());
    if (b >= a) n += b - a + 1;
  }
  return n;
}

// One attribute of one element: "" when fine, else what it is not.
std::string check_attribute(const std::string& name, const std::string& value, double* hosts) {
  static const std::string_view kBandwidths[] = {"bandwidth", "bw", "bw_in", "bw_out", "bb_bw", "loopback_bw", "limiter_link"};
  static const std::string_view kLatencies[] = {"latency", "lat", "bb_lat", "loopback_lat"};
  double num = 0;
  std::string unit;
  for (std::string_view b : kBandwidths) {
    if (name != b) continue;
    if (!split(value, &num, &unit)) return "a bandwidth (e.g. \"10GBps\")";
    const double scale = bandwidth_unit(unit);
    if (!(num > 0)) return "a bandwidth > 0";
    if (scale > 0 && num * scale < 125) return "a bandwidth of at least 1kbps";
    if (scale > 0 && num * scale > 1e15) return "a bandwidth of at most 1000TBps";
    return "";
  }
  for (std::string_view l : kLatencies) {
    if (name != l) continue;
    if (!split(value, &num, &unit)) return "a latency (e.g. \"5us\")";
    const double scale = time_unit(unit);
    if (num < 0) return "a latency >= 0";
    if (scale > 0 && num * scale > 1) return "a latency of at most 1s";
    return "";
  }
  if (name == "radical") *hosts += radical_hosts(value);
  return "";
}

}  // namespace

std::string check_platform_xml(const std::string& path) {
  if (path.ends_with(".so") || path.ends_with(".dylib"))
    return "is not a platform XML file (SimGrid would load a shared library, i.e. run its code)";
  std::string text;
  if (std::string bad = read_input_file(path, &text); !bad.empty()) return bad;
  const size_t first = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (first == std::string::npos || text[first] != '<') return "is not an XML file";
  // Element by element: <name attr="value" ...>; comments, <?...?> and <!...> are skipped.
  double hosts = 0;
  size_t i = first;
  while ((i = text.find('<', i)) != std::string::npos) {
    const size_t start = i;
    if (text.compare(i, 4, "<!--") == 0) {
      i = text.find("-->", i);
      if (i == std::string::npos) break;
      continue;
    }
    if (text[i + 1] == '?' || text[i + 1] == '!' || text[i + 1] == '/') {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
    const std::string element = text.substr(i + 1, j - i - 1);
    if (element == "host") ++hosts;
    // Attributes up to the closing '>'.
    while (j < text.size() && text[j] != '>') {
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      size_t k = j;
      while (k < text.size() && (std::isalnum(static_cast<unsigned char>(text[k])) || text[k] == '_')) ++k;
      if (k == j || k + 1 >= text.size() || text[k] != '=' || (text[k + 1] != '"' && text[k + 1] != '\'')) {
        if (j < text.size() && text[j] != '>') ++j;  // '/', or malformed: SimGrid's parser says
        continue;
      }
      const size_t close = text.find(text[k + 1], k + 2);
      if (close == std::string::npos) return "";  // unterminated: SimGrid's parser says
      const std::string name = text.substr(j, k - j), value = text.substr(k + 2, close - k - 2);
      if (std::string bad = check_attribute(name, value, &hosts); !bad.empty()) {
        const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(start), '\n'));
        return "line " + std::to_string(line) + ": <" + cut(element, 20) + " " + cut(name, 20) + "=" +
               show_json(value) + "> is not " + bad;
      }
      j = close + 1;
    }
    i = j;
  }
  if (hosts > kMaxPlatformHosts)
    return "describes " + std::to_string(static_cast<long long>(hosts)) + " hosts, more than " +
           std::to_string(static_cast<long long>(kMaxPlatformHosts));
  return "";
}

namespace {

// The first line SimGrid printed before it aborted ("[0.000000] file.cpp:322:
// [root/CRITICAL] You're trying to send data ...": the part after the category).
std::string simgrid_complaint(int fd) {
  std::string text;
  char buf[4096];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; text.size() < (1 << 16) && (n = ::read(fd, buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(n));
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line))
    if (const size_t at = line.find("/CRITICAL] "); at != std::string::npos) return line.substr(at + 11);
  return "";
}

// Loads the file in this process's (new) engine and checks hosts and routes.
Status load_and_route(const std::string& file, int np) {
  static int argc = 3;
  static char a0[] = "hvdsim", a1[] = "--log=root.thres:critical", a2[] = "--log=xbt_cfg.thres:critical";
  static char* argv[] = {a0, a1, a2, nullptr};
  sg4::Engine e(&argc, argv);
  ClusterSpec c;
  c.platform_file = file;
  BuiltPlatform plat;
  HVD_RETURN_IF_ERROR(load_platform_file(c, &plat));
  e.seal_platform();  // routes are computed by then
  const std::string shown = "cluster.platform_file: \"" + file.substr(0, 60) + "\"";
  if (static_cast<int>(plat.gpus.size()) < np)
    return Status::InvalidArgument(shown + " has " + std::to_string(plat.gpus.size()) +
                                   " hosts, not the " + std::to_string(np) + " the ranks need");
  // Every ordered pair up to 256 ranks; beyond, what the runtime's traffic needs at least:
  // each rank with rank 0 (negotiation) and with its ring neighbours.
  auto routed = [&](int a, int b) {
    std::vector<sg4::Link*> links;
    double latency = 0;
    plat.gpus[static_cast<size_t>(a)]->route_to(plat.gpus[static_cast<size_t>(b)], links, &latency);
    return !links.empty() || latency > 0;  // as SimGrid's network model requires
  };
  for (int a = 0; a < np; ++a)
    for (int b = 0; b < np; ++b) {
      if (a == b || (np > 256 && a != 0 && b != 0 && (a - b + np) % np != 1 && (b - a + np) % np != 1)) continue;
      if (!routed(a, b))
        return Status::InvalidArgument(shown + " is not a platform with a route between every two ranks' hosts "
                                       "(none from " + plat.gpus[static_cast<size_t>(a)]->get_name() + " to " +
                                       plat.gpus[static_cast<size_t>(b)]->get_name() + ")");
    }
  return Status::OK();
}

}  // namespace

Status check_platform_file(const std::string& file, int np) {
  // SimGrid prints what it cannot use and aborts: into a file, to be told in one line.
  char name[] = "/tmp/hvdsim_platform_XXXXXX";
  const int fd = ::mkstemp(name);
  if (fd < 0) return Status::Internal(std::string("mkstemp: ") + std::strerror(errno));
  ::unlink(name);
  std::string unused;
  Status s = run_isolated(
      [&](std::string*) {
        const int saved = ::dup(2);
        ::dup2(fd, 2);
        Status r = load_and_route(file, np);
        ::dup2(saved, 2);
        ::close(saved);
        return r;
      },
      &unused);
  if (!s.ok() && s.code() != StatusCode::kInvalidArgument) {
    // What SimGrid said before it aborted, or what it threw, or that it crashed.
    std::string why = simgrid_complaint(fd);
    const std::string threw = "simulation threw: ";
    if (why.empty() && s.message().rfind(threw, 0) == 0) why = s.message().substr(threw.size());
    if (why.empty()) why = "SimGrid crashed on it: " + s.message();
    s = Status::InvalidArgument("cluster.platform_file: \"" + file.substr(0, 60) +
                                "\" is not a platform SimGrid can use (" + why.substr(0, 160) + ")");
  }
  ::close(fd);
  return s;
}

}  // namespace hvd::sim
