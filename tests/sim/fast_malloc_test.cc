// The simulator's allocator settings (simulator/tools/fast_malloc.cc, linked into this test
// the way hvdsim links it): calloc of a stack-sized block must read as zeros, even where
// the memory held other data before, without making its whole pages resident (the 16,384-
// GPU scenario's unguarded actor stacks); small and overflowing callocs and posix_memalign
// behave as the C library's.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Resident pages among the whole pages inside [p, p + n).
size_t resident_whole_pages(const void* p, size_t n, size_t* whole) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const uintptr_t lo = (a + page() - 1) & ~(page() - 1), hi = (a + n) & ~(page() - 1);
  *whole = hi > lo ? (hi - lo) / page() : 0;
  if (*whole == 0) return 0;
  std::vector<unsigned char> v(*whole);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(lo), hi - lo, v.data()), 0) << std::strerror(errno);
  size_t r = 0;
  for (unsigned char c : v) r += c & 1;
  return r;
}

bool all_zero(const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i]) return false;
  return true;
}

// Volatile, so that the compiler cannot fold malloc+memset into calloc or drop the writes.
void scribble(void* p, size_t n) {
  volatile unsigned char* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = 0xAB;
}

TEST(FastMalloc, LargeCallocReadsZeroWithoutMakingItsPagesResident) {
  // Sizes of SimGrid's stacks (128 and 256 KiB), one just over the threshold and one that
  // starts and ends inside a page.
  for (size_t n : {size_t{128} << 10, size_t{256} << 10, (size_t{64} << 10) + 100, size_t{3} << 20}) {
    SCOPED_TRACE(n);
    void* old = std::malloc(n);
    ASSERT_NE(old, nullptr);
    scribble(old, n);  // resident, and not zero: a reuse of it must still read zero
    std::free(old);
    void* p = std::calloc(1, n);
    ASSERT_NE(p, nullptr);
    size_t whole = 0;
    const size_t resident = resident_whole_pages(p, n, &whole);
    EXPECT_GT(whole, 0u);
    EXPECT_EQ(resident, 0u) << "of " << whole << " whole pages";
    EXPECT_TRUE(all_zero(p, n));
    scribble(p, n);  // and the memory is usable
    std::free(p);
  }
}

TEST(FastMalloc, SmallAndOverflowingCallocBehaveAsTheCLibrarys) {
  void* old = std::malloc(4000);
  ASSERT_NE(old, nullptr);
  scribble(old, 4000);
  std::free(old);
  void* p = std::calloc(40, 100);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(all_zero(p, 4000));
  std::free(p);
  errno = 0;
  volatile size_t huge = SIZE_MAX / 2 + 2;  // n * size overflows size_t
  EXPECT_EQ(std::calloc(huge, 2), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* z = std::calloc(0, 8);  // as malloc(0): null or a block that may be freed
  std::free(z);
}

TEST(FastMalloc, PosixMemalignKeepsItsContract) {
  for (size_t align : {size_t{16}, page(), size_t{1} << 16})
    for (size_t n : {size_t{24}, size_t{256} << 10}) {
      void* p = nullptr;
      ASSERT_EQ(posix_memalign(&p, align, n), 0);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u);
      scribble(p, n);
      std::free(p);
    }
  void* p = nullptr;
  EXPECT_EQ(posix_memalign(&p, 3, 64), EINVAL);  // not a power of two
}

}  // namespace
