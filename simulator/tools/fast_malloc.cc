// Linked into the simulator's programs when they use tcmalloc (simulator/CMakeLists.txt,
// hvd_fast_malloc). Two settings for a heap of a gigabyte that one thread walks rank by rank:
//
// 1. Thread cache. A simulation runs every rank in one thread, so tcmalloc's per-thread
//    cache is its whole front end; with the default 32 MiB limit, a phase in which thousands
//    of ranks allocate (every rank enqueues its gradients) followed by one in which they free
//    (the cycle takes them) overflows it, and each object then travels through the central
//    free lists and back (about a tenth of the wall time at 4,096 ranks). A 1 GiB limit keeps
//    them in the thread cache; the memory is the same either way, as tcmalloc does not give
//    freed small objects back to the system.
//
// 2. Huge pages. Each simulated rank's objects (runtime, negotiation state, pending tensors,
//    SimGrid activities) sit somewhere in that heap, and the simulation visits thousands of
//    ranks per simulated millisecond: with 4 KiB pages nearly every such visit also misses
//    the TLB (a few thousand entries: ~10 MiB of 4 KiB pages). tcmalloc takes its memory from
//    the system through a SysAllocator; the one below hands it out of 64 MiB chunks aligned
//    to 2 MiB and marked MADV_HUGEPAGE, so that the kernel backs them with transparent huge
//    pages where it has them (THP "always" or "madvise"; where THP is off this changes
//    nothing). HVD_SIM_HUGE_PAGES=0 turns it off. Only where and how the heap is placed
//    changes: simulated results are the same.
//
//    The actors' stacks stay on 4 KiB pages: SimGrid takes each guarded stack (256 KiB by
//    default) from posix_memalign, and a rank touches a few KiB of it; on huge pages every
//    stack would be resident whole (3.3 GiB instead of 1.3 at 4,096 ranks). posix_memalign
//    below marks page-aligned blocks of 64 KiB and more MADV_NOHUGEPAGE.
//
// 3. Zeroed blocks without writing them. Without guard pages (when two mappings per actor
//    would not fit vm.max_map_count: the 16,384-GPU scenario's 32,768 actors) SimGrid takes
//    each stack from calloc(), and tcmalloc's calloc writes every byte of it: the whole
//    stack becomes resident (4 GiB at 16,384 GPUs with 128 KiB stacks). calloc below hands
//    the whole pages inside a block of 64 KiB or more back to the kernel instead
//    (MADV_DONTNEED on private anonymous memory: they read as zeros and become resident
//    only when touched) and writes zeros only to the partial pages at its ends.
#include <gperftools/malloc_extension.h>
#include <gperftools/tcmalloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
constexpr size_t kStackSized = size_t{64} << 10;  // blocks from this size on are treated as stacks
constexpr size_t kChunk = size_t{64} << 20;       // what HugePageAllocator maps at a time

size_t page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// The whole pages inside [b, b + size): {lo, hi}, lo == hi when there are none.
std::pair<uintptr_t, uintptr_t> whole_pages(const void* b, size_t size) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(b), page = page_size();
  const uintptr_t lo = (a + page - 1) & ~(page - 1), hi = (a + size) & ~(page - 1);
  return hi > lo ? std::pair{lo, hi} : std::pair{lo, lo};
}

class HugePageAllocator : public SysAllocator {
 public:
  explicit HugePageAllocator(SysAllocator* fallback) : fallback_(fallback) {}

  void* Alloc(size_t size, size_t* actual_size, size_t alignment) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (alignment < 1) alignment = 1;
    if (size > kChunk / 4 || alignment > kHugePage)  // rare: large blocks as before
      return fallback_ ? fallback_->Alloc(size, actual_size, alignment) : nullptr;
    uintptr_t at = (next_ + alignment - 1) & ~(uintptr_t{alignment} - 1);
    if (next_ == 0 || at + size > end_) {
      if (!grow()) return fallback_ ? fallback_->Alloc(size, actual_size, alignment) : nullptr;
      at = (next_ + alignment - 1) & ~(uintptr_t{alignment} - 1);
    }
    next_ = at + size;
    if (actual_size) *actual_size = size;
    return reinterpret_cast<void*>(at);
  }

 private:
  // A fresh 2 MiB-aligned chunk (the unaligned head and tail of the mapping are unmapped).
  bool grow() {
    const size_t map = kChunk + kHugePage;
    void* p = mmap(nullptr, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    const uintptr_t base = reinterpret_cast<uintptr_t>(p);
    const uintptr_t aligned = (base + kHugePage - 1) & ~(kHugePage - 1);
    if (aligned > base) munmap(p, aligned - base);
    const uintptr_t tail = aligned + kChunk, map_end = base + map;
    if (map_end > tail) munmap(reinterpret_cast<void*>(tail), map_end - tail);
    (void)madvise(reinterpret_cast<void*>(aligned), kChunk, MADV_HUGEPAGE);
    next_ = aligned;
    end_ = tail;
    return true;
  }

  SysAllocator* fallback_;
  std::mutex mu_;
  uintptr_t next_ = 0, end_ = 0;
};

bool huge_pages_on() {
  static const bool on = [] {
    const char* v = std::getenv("HVD_SIM_HUGE_PAGES");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}

const bool kThreadCacheRaised = [] {
  return MallocExtension::instance()->SetNumericProperty("tcmalloc.max_total_thread_cache_bytes",
                                                         size_t{1} << 30);
}();

const bool kHugePages = [] {
  if (!huge_pages_on()) return false;
  MallocExtension* m = MallocExtension::instance();
  static HugePageAllocator a(m->GetSystemAllocator());  // lives as long as the heap
  m->SetSystemAllocator(&a);
  return true;
}();

}  // namespace

// Replaces tcmalloc's posix_memalign for this program (the executable's definition comes
// first in symbol lookup, libsimgrid's calls included): the same allocation, and stack-sized
// page-aligned blocks kept off huge pages.
extern "C" int posix_memalign(void** out, size_t alignment, size_t size) {
  const int r = tc_posix_memalign(out, alignment, size);
  if (r == 0 && huge_pages_on() && size >= kStackSized && alignment >= page_size()) {
    const auto [lo, hi] = whole_pages(*out, size);
    if (hi > lo) (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_NOHUGEPAGE);
  }
  return r;
}

// Replaces tcmalloc's calloc the same way: small blocks as before; a large one's whole pages
// are discarded (zero on first touch) rather than written, and kept off huge pages.
extern "C" void* calloc(size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size) {
    errno = ENOMEM;
    return nullptr;
  }
  const size_t bytes = n * size;
  if (bytes < kStackSized) return tc_calloc(n, size);
  void* p = tc_malloc(bytes);
  if (!p) return nullptr;
  const auto [lo, hi] = whole_pages(p, bytes);
  const uintptr_t b = reinterpret_cast<uintptr_t>(p), e = b + bytes;
  if (hi == lo || (huge_pages_on() && madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_NOHUGEPAGE) != 0) ||
      madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED) != 0) {
    std::memset(p, 0, bytes);  // not discardable (no whole page, or the kernel refused)
    return p;
  }
  std::memset(p, 0, lo - b);
  std::memset(reinterpret_cast<void*>(hi), 0, e - hi);
  return p;
}
