#include "backends/nccl/nccl_plan.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace hvd::nccl {

std::vector<int> split_members(const std::vector<SplitArgs>& args, int rank) {
  std::vector<int> out;
  if (rank < 0 || rank >= static_cast<int>(args.size())) return out;
  const int color = args[static_cast<size_t>(rank)].color;
  if (color < 0) return out;
  for (int r = 0; r < static_cast<int>(args.size()); ++r)
    if (args[static_cast<size_t>(r)].color == color) out.push_back(r);
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
    const int ka = args[static_cast<size_t>(a)].key, kb = args[static_cast<size_t>(b)].key;
    return ka != kb ? ka < kb : a < b;
  });
  return out;
}

HierarchyLayout plan_hierarchy(const std::vector<int>& node_of, int rank) {
  HierarchyLayout h;
  if (rank < 0 || rank >= static_cast<int>(node_of.size())) return h;
  std::map<int, int> per_node;
  for (int n : node_of) ++per_node[n];
  const int me = node_of[static_cast<size_t>(rank)];
  int local_rank = 0;
  for (int r = 0; r < rank; ++r) local_rank += node_of[static_cast<size_t>(r)] == me;
  bool homogeneous = true;
  for (const auto& [node, n] : per_node) homogeneous = homogeneous && n == per_node.begin()->second;
  h.local_rank = local_rank;
  h.local_size = per_node[me];
  h.cross_size = static_cast<int>(per_node.size());
  // The same three global facts on every rank: all ranks split, or none does.
  h.enabled = homogeneous && h.local_size > 1 && h.cross_size > 1;
  h.local = SplitArgs{me, rank};
  h.cross = SplitArgs{local_rank, rank};
  return h;
}

TreeLinks bootstrap_tree(int rank, int size) {
  TreeLinks t;
  if (rank < 0 || rank >= size) return t;
  // Binomial tree: rank r's parent clears r's lowest set bit; its children add the bits
  // below that one (largest subtree first, so the deepest branch starts earliest).
  int low = 1;
  while (low < size && !(rank & low)) low <<= 1;
  // For the root the loop stops at the first power of two >= size.
  if (rank != 0) t.parent = rank & ~low;
  for (int bit = low >> 1; bit > 0; bit >>= 1)
    if (rank + bit < size) t.children.push_back(rank + bit);
  return t;
}

namespace {

constexpr char kMagic[4] = {'H', 'V', 'D', 'N'};
constexpr uint16_t kVersion = 1;
constexpr size_t kHeaderBytes = 4 + 2 + 1 + 1 + 8 + 4;
constexpr size_t kMaxError = kBootstrapFrameBytes - kHeaderBytes - kUniqueIdBytes - 4;

uint32_t fnv1a(const uint8_t* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

template <class T>
void put(std::vector<uint8_t>& b, size_t at, T v) {
  for (size_t i = 0; i < sizeof(T); ++i)
    b[at + i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
}

template <class T>
T get(const std::vector<uint8_t>& b, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return static_cast<T>(v);
}

}  // namespace

std::vector<uint8_t> encode_bootstrap(const BootstrapMessage& m) {
  std::vector<uint8_t> b(kBootstrapFrameBytes, 0);
  std::memcpy(b.data(), kMagic, 4);
  put<uint16_t>(b, 4, kVersion);
  b[6] = m.ok ? 1 : 0;
  put<uint64_t>(b, 8, m.generation);
  const size_t elen = std::min(m.error.size(), kMaxError);
  put<uint32_t>(b, 16, static_cast<uint32_t>(elen));
  std::memcpy(b.data() + kHeaderBytes, m.id.data(), kUniqueIdBytes);
  if (elen) std::memcpy(b.data() + kHeaderBytes + kUniqueIdBytes, m.error.data(), elen);
  put<uint32_t>(b, kBootstrapFrameBytes - 4, fnv1a(b.data(), kBootstrapFrameBytes - 4));
  return b;
}

Status decode_bootstrap(const std::vector<uint8_t>& b, uint64_t expected, BootstrapMessage* out) {
  const std::string what = "NCCL bootstrap: ";
  if (b.size() != kBootstrapFrameBytes)
    return Status::Internal(what + "frame of " + std::to_string(b.size()) + " bytes, expected " +
                            std::to_string(kBootstrapFrameBytes));
  if (std::memcmp(b.data(), kMagic, 4) != 0)
    return Status::Internal(what + "bad magic (not an hvd frame)");
  if (get<uint16_t>(b, 4) != kVersion)
    return Status::Internal(what + "frame version " + std::to_string(get<uint16_t>(b, 4)) +
                            ", this build speaks " + std::to_string(kVersion));
  if (get<uint32_t>(b, kBootstrapFrameBytes - 4) != fnv1a(b.data(), kBootstrapFrameBytes - 4))
    return Status::Internal(what + "checksum mismatch (corrupted frame)");
  const uint32_t elen = get<uint32_t>(b, 16);
  if (elen > kMaxError) return Status::Internal(what + "error text length out of range");
  BootstrapMessage m;
  m.ok = b[6] != 0;
  m.generation = get<uint64_t>(b, 8);
  std::memcpy(m.id.data(), b.data() + kHeaderBytes, kUniqueIdBytes);
  m.error.assign(reinterpret_cast<const char*>(b.data()) + kHeaderBytes + kUniqueIdBytes, elen);
  if (m.generation != expected)
    return Status::Mismatch(what + "the root sent the id of communicator generation " +
                            std::to_string(m.generation) + " but this rank expected " +
                            std::to_string(expected) + " (ranks split in different orders?)");
  *out = std::move(m);
  return Status::OK();
}

uint64_t child_generation(uint64_t parent, uint64_t seq, int color) {
  // splitmix64 over the three inputs: cheap, well mixed, identical on every rank.
  uint64_t x = parent ^ (seq * 0x9E3779B97F4A7C15ull) ^
               (static_cast<uint64_t>(static_cast<uint32_t>(color)) << 32);
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

CopyPlan plan_copies(const std::vector<CopySegment>& in, const CopyLimits& limits) {
  std::vector<CopySegment> merged;
  for (const CopySegment& s : in) {
    if (s.bytes == 0 || s.dst == s.src || !s.dst || !s.src) continue;
    if (!merged.empty()) {
      CopySegment& last = merged.back();
      if (static_cast<char*>(last.dst) + last.bytes == s.dst &&
          static_cast<const char*>(last.src) + last.bytes == s.src) {
        last.bytes += s.bytes;
        continue;
      }
    }
    merged.push_back(s);
  }
  CopyPlan plan;
  const size_t per_batch = std::max<size_t>(1, limits.max_batch);
  for (const CopySegment& s : merged) {
    if (s.bytes > limits.kernel_max_bytes) {
      plan.memcpys.push_back(s);
      continue;
    }
    if (plan.batches.empty() || plan.batches.back().size() >= per_batch)
      plan.batches.emplace_back();
    plan.batches.back().push_back(s);
  }
  return plan;
}

size_t round_device_allocation(size_t bytes) {
  constexpr size_t kGranule = size_t{2} << 20;
  if (bytes == 0) return 0;
  return (bytes + kGranule - 1) / kGranule * kGranule;
}

double poll_backoff(int polls, int spin) {
  if (polls < spin) return 0;
  const int doublings = std::min(polls - spin, 16);
  return std::min(1e-6 * static_cast<double>(1 << doublings), 2e-4);
}

}  // namespace hvd::nccl
