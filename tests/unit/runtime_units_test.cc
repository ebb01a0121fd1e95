#include <gtest/gtest.h>

#include "core/units.h"
#include "hvd/config.h"

namespace hvd {
namespace {

TEST(Units, ParsesBytes) {
  EXPECT_EQ(parse_bytes("64MiB").value(), 64LL << 20);
  EXPECT_EQ(parse_bytes("1000").value(), 1000);
  EXPECT_EQ(parse_bytes("4K").value(), 4096);
  EXPECT_EQ(parse_bytes("1.5GiB").value(), 3LL << 29);
  EXPECT_FALSE(parse_bytes("-1"));
  EXPECT_FALSE(parse_bytes("12 parsecs"));
  EXPECT_FALSE(parse_bytes(""));
}

TEST(Units, ParsesBandwidthAndTime) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("25Gbps").value(), 25e9 / 8);
  EXPECT_DOUBLE_EQ(parse_bandwidth("12GBps").value(), 12e9);
  EXPECT_DOUBLE_EQ(parse_seconds("5us").value(), 5e-6);
  EXPECT_DOUBLE_EQ(parse_seconds("1.5ms").value(), 1.5e-3);
  EXPECT_FALSE(parse_bandwidth("25"));
  EXPECT_FALSE(parse_seconds("5 fortnights"));
}

TEST(Config, ReadsHvdThenHorovodSpellings) {
  std::map<std::string, std::string> env = {{"HOROVOD_FUSION_THRESHOLD", "67108864"},
                                            {"HVD_CYCLE_TIME", "5"},
                                            {"HOROVOD_CYCLE_TIME", "7"},
                                            {"HOROVOD_HIERARCHICAL_ALLREDUCE", "1"}};
  Config c;
  Status s = Config::from_env(&c, [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(c.fusion_threshold, 64LL << 20);
  EXPECT_DOUBLE_EQ(c.cycle_time_ms, 5.0);  // HVD_ wins over HOROVOD_
  EXPECT_TRUE(c.hierarchical_allreduce);
  EXPECT_EQ(c.cache_capacity, 1024);  // Horovod's default
}

TEST(Config, RejectsBadValuesWithTheVariableName) {
  Config c;
  Status s = Config::from_env(&c, [](const char* n) -> const char* {
    return std::string(n) == "HOROVOD_CACHE_CAPACITY" ? "lots" : nullptr;
  });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("HOROVOD_CACHE_CAPACITY=lots"), std::string::npos) << s.message();
  Config d;
  EXPECT_FALSE(d.set("allreduce_algorithm", "butterfly").ok());
  EXPECT_FALSE(d.set("no_such_knob", "1").ok());
  EXPECT_TRUE(d.set("HVD_FUSION_THRESHOLD", "32MiB").ok());
  EXPECT_EQ(d.fusion_threshold, 32LL << 20);
}

}  // namespace
}  // namespace hvd
