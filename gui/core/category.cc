#include "core/category.h"

#include <array>
#include <cctype>
#include <string>

namespace hvdview {
namespace {

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool Contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

Category CategoryFromCat(std::string_view cat, bool* known) {
  static constexpr std::array<std::pair<std::string_view, Category>, 8> kNames = {{
      {"negotiation", Category::kNegotiation},
      {"queue", Category::kQueue},
      {"memcpy", Category::kMemcpy},
      {"communication", Category::kCommunication},
      {"compute", Category::kCompute},
      {"cycle", Category::kCycle},
      {"wait", Category::kQueue},
      {"collective", Category::kCommunication},
  }};
  for (const auto& [text, category] : kNames) {
    if (cat == text) {
      *known = true;
      return category;
    }
  }
  *known = false;
  return Category::kOther;
}

Category CategoryFromName(std::string_view name) {
  const std::string upper = Upper(name);
  if (upper.starts_with("NEGOTIATE")) return Category::kNegotiation;
  if (upper == "QUEUE" || upper.starts_with("WAIT_FOR") || Contains(upper, "QUEUE")) {
    return Category::kQueue;
  }
  if (upper.starts_with("MEMCPY")) return Category::kMemcpy;
  if (upper.starts_with("CYCLE")) return Category::kCycle;
  static constexpr std::array<std::string_view, 10> kCommunication = {
      "ALLREDUCE",      "ALLGATHER", "BROADCAST", "ALLTOALL", "REDUCESCATTER",
      "REDUCE_SCATTER", "BARRIER",   "JOIN",      "NCCL_",    "MPI_"};
  for (std::string_view part : kCommunication) {
    if (Contains(upper, part)) return Category::kCommunication;
  }
  static constexpr std::array<std::string_view, 5> kCompute = {"FORWARD", "BACKWARD", "OPTIMIZER",
                                                               "STEP", "COMPUTE"};
  for (std::string_view part : kCompute) {
    if (Contains(upper, part)) return Category::kCompute;
  }
  return Category::kOther;
}

const char* CategoryLabel(Category category) {
  switch (category) {
    case Category::kNegotiation:
      return "negotiation";
    case Category::kQueue:
      return "queue / wait";
    case Category::kMemcpy:
      return "memcpy";
    case Category::kCommunication:
      return "communication";
    case Category::kCompute:
      return "compute";
    case Category::kCycle:
      return "cycle";
    case Category::kOther:
      return "other";
  }
  return "other";
}

uint32_t CategoryColor(Category category) {
  switch (category) {
    case Category::kNegotiation:
      return 0xF28E2B;
    case Category::kQueue:
      return 0xEDC948;
    case Category::kMemcpy:
      return 0xB07AA1;
    case Category::kCommunication:
      return 0x4E79A7;
    case Category::kCompute:
      return 0x59A14F;
    case Category::kCycle:
      return 0xE15759;
    case Category::kOther:
      return 0x9C9C9C;
  }
  return 0x9C9C9C;
}

}  // namespace hvdview
