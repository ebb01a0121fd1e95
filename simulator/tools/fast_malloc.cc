// Linked into the simulator's programs when they use tcmalloc (simulator/CMakeLists.txt,
// hvd_fast_malloc). A simulation runs every rank in one thread, so tcmalloc's per-thread
// cache is its whole front end; with the default 32 MiB limit, a phase in which thousands
// of ranks allocate (every rank enqueues its gradients) followed by one in which they free
// (the cycle takes them) overflows it, and each object then travels through the central
// free lists and back (about a tenth of the wall time at 4,096 ranks). A 1 GiB limit keeps
// them in the thread cache; the memory is the same either way, as tcmalloc does not give
// freed small objects back to the system.
#include <gperftools/malloc_extension.h>

namespace {

const bool kThreadCacheRaised = [] {
  return MallocExtension::instance()->SetNumericProperty("tcmalloc.max_total_thread_cache_bytes",
                                                         size_t{1} << 30);
}();

}  // namespace
