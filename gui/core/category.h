// Activity categories of timeline slices and their colours.
#pragma once

#include <cstdint>
#include <string_view>

namespace hvdview {

// What a slice spends its time on; decides its colour.
enum class Category : uint8_t {
  kNegotiation,
  kQueue,
  kMemcpy,
  kCommunication,
  kCompute,
  kCycle,
  kOther,
};
inline constexpr int kCategoryCount = 7;

// Category named by a `cat` field ("negotiation", "queue", ...); kOther when unknown.
Category CategoryFromCat(std::string_view cat, bool* known);
// Category guessed from an activity name (NEGOTIATE_* -> negotiation, ...).
Category CategoryFromName(std::string_view name);
// Human-readable label for the legend.
const char* CategoryLabel(Category category);
// Fill colour as 0xRRGGBB.
uint32_t CategoryColor(Category category);

}  // namespace hvdview
