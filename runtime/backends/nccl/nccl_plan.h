// Host-side planning for the NCCL backend: which ranks share a communicator, how the
// NCCL unique id travels during bootstrap, and how fusion-buffer copies are batched on
// the device. Pure functions with no CUDA or NCCL dependency, so CI tests them without
// a GPU.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hvd/status.h"

namespace hvd::nccl {

// ---- communicator layout ---------------------------------------------------------------

/// The members of one split: for each rank of the parent group, its (color, key).
struct SplitArgs {
  int color = 0;  ///< members with equal color form one group; < 0: not a member
  int key = 0;    ///< order inside the new group (ties broken by parent rank)
};

/// Parent ranks of the group `rank` joins in a split, ordered as Transport::split orders
/// them (by key, then parent rank); empty when `rank` passes a negative color.
std::vector<int> split_members(const std::vector<SplitArgs>& args, int rank);

/// The node-local and cross-node communicators of one rank (hierarchical allreduce).
struct HierarchyLayout {
  bool enabled = false;  ///< false: not homogeneous, or a single node / one rank per node
  SplitArgs local;       ///< color = node id, key = rank: ranks sharing a node
  SplitArgs cross;       ///< color = local rank, key = rank: same local rank on each node
  int local_rank = 0;    ///< index among the ranks of this node
  int local_size = 1;    ///< ranks on this node
  int cross_size = 1;    ///< number of nodes
};

/// Layout of `rank` given the node of every rank (node_of[r]); every rank computes the
/// same `enabled`, so the splits are made by all or by none.
HierarchyLayout plan_hierarchy(const std::vector<int>& node_of, int rank);

/// Parent and children of `rank` in the binomial tree rooted at 0 over `size` ranks:
/// the unique id travels root → children in ceil(log2 size) rounds.
struct TreeLinks {
  int parent = -1;            ///< -1 for the root
  std::vector<int> children;  ///< in send order
};
/// Binomial-tree links of `rank`.
TreeLinks bootstrap_tree(int rank, int size);

// ---- unique-id bootstrap framing ------------------------------------------------------

/// Bytes of an NCCL unique id (NCCL_UNIQUE_ID_BYTES).
inline constexpr size_t kUniqueIdBytes = 128;
/// Size of one bootstrap frame on the wire (fixed, so the receiver posts one recv).
inline constexpr size_t kBootstrapFrameBytes = 512;

/// What the root tells the other members: the id, or why it could not make one (so the
/// others fail with the root's reason instead of hanging in ncclCommInitRank).
struct BootstrapMessage {
  uint64_t generation = 0;                   ///< which communicator this id is for
  bool ok = true;                            ///< false: `error` says why there is no id
  std::array<uint8_t, kUniqueIdBytes> id{};  ///< the ncclUniqueId bytes
  std::string error;                         ///< root's failure (truncated to fit)
};

/// Frame layout: "HVDN" | u16 version | u8 ok | u8 pad | u64 generation | u32 error length
/// | id (128) | error bytes | zero padding | u32 FNV-1a of everything before it.
std::vector<uint8_t> encode_bootstrap(const BootstrapMessage& m);
/// Parses a frame; kInternal on a bad magic, version, checksum or length, kMismatch when
/// the generation differs from `expected_generation` (ranks split in different orders).
Status decode_bootstrap(const std::vector<uint8_t>& frame, uint64_t expected_generation,
                        BootstrapMessage* out);
/// Generation of the `seq`-th split (color `color`) of a communicator of generation
/// `parent`: equal on every member of the new group, different across groups and splits.
uint64_t child_generation(uint64_t parent, uint64_t seq, int color);

// ---- fusion-buffer copy batching -------------------------------------------------------

/// One device-to-device copy.
struct CopySegment {
  void* dst = nullptr;        ///< destination
  const void* src = nullptr;  ///< source
  size_t bytes = 0;           ///< length
};

/// How a list of copies is issued: large ones on the copy engine (cudaMemcpyAsync), the
/// many small ones as a few launches of one batched-copy kernel.
struct CopyPlan {
  std::vector<CopySegment> memcpys;               ///< one cudaMemcpyAsync each
  std::vector<std::vector<CopySegment>> batches;  ///< one kernel launch each
};

/// Limits of the batched-copy kernel.
struct CopyLimits {
  size_t kernel_max_bytes = size_t{1} << 20;  ///< larger segments go to cudaMemcpyAsync
  size_t max_batch = 32;                      ///< segments per kernel launch
};

/// Drops empty and self copies, merges copies that continue the previous one on both
/// sides (dst and src contiguous), then splits into memcpys and kernel batches. Order
/// among segments is irrelevant: fusion copies never overlap.
CopyPlan plan_copies(const std::vector<CopySegment>& in, const CopyLimits& limits = {});

/// Device-buffer capacity for `bytes`: rounded up to 2 MiB so a growing fusion buffer is
/// not re-allocated (cudaFree synchronises the device) for every slightly larger response.
size_t round_device_allocation(size_t bytes);

// ---- polling -------------------------------------------------------------------------

/// Sleep before the next poll of an event (seconds): 0 for the first `spin` polls, then
/// doubling from 1 µs up to 200 µs, so waiting ranks leave the cores to their peers.
double poll_backoff(int polls, int spin = 200);

}  // namespace hvd::nccl
