// Adasum allreduce (Maleki et al., "Scaling Distributed Training with Adaptive Summation",
// MLSys 2021), as Horovod's CPU implementation computes it: vector halving, distance
// doubling (VHDD) over a power-of-two group, then distance-halving allgather.
//
// At level L = 1, 2, 4, ... a rank and its partner rank^L each hold the same range of the
// fused buffer, one from each half of the tree built so far. The lower rank keeps the first
// floor(n/2) elements, the upper one the rest; each sends the other part and receives the
// partner's copy of its own. Then, for every tensor of the fused buffer separately, the
// two copies a (this rank's subtree) and b (the partner's) combine by the pairwise rule
//     a' = (1 - dot(a,b) / (2|a|²)) · a + (1 - dot(a,b) / (2|b|²)) · b
// where dot(a,b), |a|² and |b|² are those of the whole tensor: each rank computes them over
// the part of the tensor it holds and the 2L ranks that hold the pieces (the ranks sharing
// rank / 2L) sum them by recursive doubling. A coefficient whose squared norm is below
// sqrt(DBL_MIN) stays 1 (a zero vector adds nothing, so zeros are Adasum's identity).
// The allgather retraces the levels from the top, swapping ranges back.
//
// Per tensor the result is the tree combination adasum(adasum(x0,x1), adasum(x2,x3)) ...,
// the same whether or not the tensor was fused with others (up to rounding). Orthogonal
// vectors add up; identical ones give the vector itself.
#pragma once

#include <vector>

#include "collectives/collective.h"

namespace hvd {

/// True for 1, 2, 4, 8, ...
inline bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

/// In-place Adasum allreduce of `buf`, the tensors of `counts` (elements each) one after
/// the other. The group's size must be a power of two (kInvalidArgument otherwise); dt is
/// float16, float32 or float64 and c.dev implements dot_norms and scaled_add (the CPU).
/// Scratch: half the buffer.
Status adasum_allreduce(CollectiveContext& c, void* buf, const std::vector<int64_t>& counts,
                        DataType dt);

}  // namespace hvd
