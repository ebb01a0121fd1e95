// The rows of the table of operations (op_table.h), each collective's rules in one place.
#include "core/op_table.h"

#include <array>
#include <set>

#include "core/executor.h"
#include "core/process_sets.h"

namespace hvd {

namespace {

// The prefix of a call's error ("ALLTOALL 'x': "), built only when there is one.
std::string what(const OpRequest& q) { return std::string(optype_name(q.op)) + " '" + q.name + "': "; }

std::vector<int64_t> tail_dims(const std::vector<int64_t>& s) {
  return s.empty() ? s : std::vector<int64_t>(s.begin() + 1, s.end());
}

// ---- validation of one call ----

// Adasum (collectives/adasum.h): float types on the CPU, a power-of-two process set.
Status validate_adasum(const OpRequest& q, int set_size) {
  const DataType dt = q.input.dtype;
  if (dt != DataType::kFloat16 && dt != DataType::kFloat32 && dt != DataType::kFloat64)
    return Status::InvalidArgument(what(q) + "Adasum is defined for float16, float32 and float64 tensors, not " +
                                   std::string(dtype_name(dt)));
  if (q.input.device != DeviceKind::kCPU) return Status::InvalidArgument(what(q) + "Adasum runs on CPU tensors only");
  if (set_size <= 0 || (set_size & (set_size - 1)) != 0)
    return Status::InvalidArgument(what(q) + "Adasum needs a power-of-two number of ranks (1, 2, 4, 8, ...), but process set " +
                                   std::to_string(q.process_set) + " has " + std::to_string(set_size) +
                                   " (Horovod: running Adasum with non-power of 2 ranks is not supported)");
  return Status::OK();
}

Status validate_allreduce(const OpRequest& q, const OpCheckEnv& env) {
  if (q.output.shape != q.input.shape || q.output.dtype != q.input.dtype || q.output.device != q.input.device)
    return Status::InvalidArgument(what(q) + "output must have the input's shape " + shape_string(q.input.shape) +
                                   ", dtype and device (got " + shape_string(q.output.shape) + ")");
  if (!q.output.data && q.output.count() > 0 && !env.allows_phantom)
    return Status::InvalidArgument(what(q) + "output tensor has no storage");
  if (q.reduce_op == ReduceOp::kAdasum) return validate_adasum(q, env.set_size);
  return Status::OK();
}

Status validate_broadcast(const OpRequest& q, const OpCheckEnv& env) {
  if (q.root < 0 || q.root >= env.set_size)
    return Status::InvalidArgument(what(q) + "root rank " + std::to_string(q.root) + " is outside [0, " +
                                   std::to_string(env.set_size) + ")");
  return Status::OK();
}

Status validate_rows(const OpRequest& q, const OpCheckEnv&) {
  if (q.input.shape.empty()) return Status::InvalidArgument(what(q) + "needs a tensor with at least one dimension");
  return Status::OK();
}

Status validate_reducescatter(const OpRequest& q, const OpCheckEnv& env) {
  if (q.reduce_op == ReduceOp::kAdasum)
    return Status::InvalidArgument(what(q) + "Adasum is an allreduce only (as in Horovod)");
  return validate_rows(q, env);
}

Status validate_alltoall(const OpRequest& q, const OpCheckEnv& env) {
  if (Status s = validate_rows(q, env); !s.ok()) return s;
  const int size = env.set_size;
  if (q.splits.empty()) {
    if (q.input.shape[0] % size != 0)
      return Status::InvalidArgument(what(q) + "first dimension " + std::to_string(q.input.shape[0]) +
                                     " does not divide evenly among " + std::to_string(size) + " ranks; give splits");
    return Status::OK();
  }
  if (static_cast<int>(q.splits.size()) != size)
    return Status::InvalidArgument(what(q) + "splits has " + std::to_string(q.splits.size()) + " entries, expected " +
                                   std::to_string(size));
  int64_t sum = 0;
  for (int64_t v : q.splits) {
    if (v < 0) return Status::InvalidArgument(what(q) + "negative split");
    sum += v;
  }
  if (sum != q.input.shape[0])
    return Status::InvalidArgument(what(q) + "splits add up to " + std::to_string(sum) + ", but the first dimension is " +
                                   std::to_string(q.input.shape[0]));
  return Status::OK();
}

Status validate_add_set(const OpRequest& q, const OpCheckEnv& env) {
  if (q.process_set != 0) return Status::InvalidArgument("add_process_set runs on the world set only");
  std::set<int> seen;
  for (int r : q.set_ranks) {
    if (r < 0 || r >= env.world_size)
      return Status::InvalidArgument("add_process_set: rank " + std::to_string(r) + " is outside the world");
    if (!seen.insert(r).second) return Status::InvalidArgument("add_process_set: rank " + std::to_string(r) + " listed twice");
  }
  if (seen.empty()) return Status::InvalidArgument("add_process_set: no ranks");
  return Status::OK();
}

Status validate_remove_set(const OpRequest& q, const OpCheckEnv& env) {
  if (q.process_set != 0) return Status::InvalidArgument("remove_process_set runs on the world set only");
  if (q.root == 0) return Status::InvalidArgument("remove_process_set: process set 0 (the world) cannot be removed");
  if (env.sets.size_of(q.root) <= 0)
    return Status::InvalidArgument("remove_process_set: process set " + std::to_string(q.root) + " does not exist");
  return Status::OK();
}

// ---- what two ranks must agree on beyond the spec and the shape ----

std::string ranks_str(const std::vector<int32_t>& ranks) {
  std::string s = "[";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "]";
}

std::string broadcast_mismatch(const TensorRequest& a, const TensorRequest& b, unsigned diff) {
  if (!(diff & kSpecRoot)) return "";
  return "Mismatched broadcast root ranks: one rank specified root rank " + std::to_string(a.root) +
         ", but another rank specified root rank " + std::to_string(b.root);
}

std::string add_set_mismatch(const TensorRequest& a, const TensorRequest& b, unsigned) {
  if (a.ranks == b.ranks) return "";
  return "Mismatched process set: one rank asked for ranks " + ranks_str(a.ranks) + ", but another rank for " +
         ranks_str(b.ranks);
}

std::string remove_set_mismatch(const TensorRequest& a, const TensorRequest& b, unsigned diff) {
  if (!(diff & kSpecRoot)) return "";
  return "Mismatched process set removal: one rank removed process set " + std::to_string(a.root) +
         ", but another rank process set " + std::to_string(b.root);
}

// ---- whether a cached response answers a request ----

int64_t rows_of(const std::vector<int64_t>& shape) { return shape.empty() ? 1 : shape[0]; }
int64_t row_of(const std::vector<int64_t>& shape) {
  const int64_t rows = rows_of(shape);
  return rows ? num_elements(shape) / rows : 0;
}

bool cached_allreduce(const Response& c, unsigned diff, const std::vector<int64_t>& shape) {
  return !(diff & (kSpecReduceOp | kSpecScale)) && c.counts[0] == num_elements(shape);
}
bool cached_broadcast(const Response& c, unsigned diff, const std::vector<int64_t>& shape) {
  return !(diff & kSpecRoot) && c.counts[0] == num_elements(shape);
}
bool cached_reducescatter(const Response& c, unsigned diff, const std::vector<int64_t>& shape) {
  return !(diff & (kSpecReduceOp | kSpecScale)) && c.first_dims[0] == rows_of(shape) && c.row_elems[0] == row_of(shape);
}
bool cached_alltoall(const Response& c, unsigned, const std::vector<int64_t>& shape) {
  return !shape.empty() && c.row_elems[0] == row_of(shape);
}

// ---- the result's shape, as the response states it ----

void whole_count(Response* r, const TensorRequest& a, int, const RequestOf&) { r->counts = {num_elements(a.shape)}; }

void gathered_rows(Response* r, const TensorRequest& a, int size, const RequestOf& of) {
  for (int k = 0; k < size; ++k) {
    const TensorRequest* o = of(k);
    r->first_dims.push_back(o ? o->shape[0] : 0);
  }
  r->row_elems = {num_elements(tail_dims(a.shape))};
}

void exchanged_rows(Response* r, const TensorRequest& a, int, const RequestOf&) {
  r->row_elems = {num_elements(tail_dims(a.shape))};
}

void scattered_rows(Response* r, const TensorRequest& a, int, const RequestOf&) {
  const int64_t rows = rows_of(a.shape);
  r->first_dims = {rows};
  r->row_elems = {rows ? num_elements(a.shape) / rows : num_elements(tail_dims(a.shape))};
}

void set_members(Response* r, const TensorRequest& a, int, const RequestOf&) { r->ranks = a.ranks; }

void nothing(Response*, const TensorRequest&, int, const RequestOf&) {}

// In OpType's order (checked below).
//   op, name, moves_data, reduces, cacheable, fuses, while_joined, shapes,
//   validate, mismatch, cache_matches, result_shape, execute
constexpr std::array<OpRow, 9> kRows = {{
    {OpType::kAllreduce, "ALLREDUCE", true, true, true, true, true, ShapeRule::kSame,
     validate_allreduce, nullptr, cached_allreduce, whole_count, &Executor::allreduce},
    {OpType::kAllgather, "ALLGATHER", true, false, false, false, false, ShapeRule::kTail,
     validate_rows, nullptr, nullptr, gathered_rows, &Executor::allgather},
    {OpType::kBroadcast, "BROADCAST", true, false, true, false, false, ShapeRule::kSame,
     validate_broadcast, broadcast_mismatch, cached_broadcast, whole_count, &Executor::broadcast},
    {OpType::kAlltoall, "ALLTOALL", true, false, true, false, false, ShapeRule::kTail,
     validate_alltoall, nullptr, cached_alltoall, exchanged_rows, &Executor::alltoall},
    {OpType::kReducescatter, "REDUCESCATTER", true, true, true, false, false, ShapeRule::kSame,
     validate_reducescatter, nullptr, cached_reducescatter, scattered_rows, &Executor::reducescatter},
    {OpType::kBarrier, "BARRIER", false, false, false, false, false, ShapeRule::kNone,
     nullptr, nullptr, nullptr, nothing, &Executor::barrier},
    {OpType::kJoin, "JOIN", false, false, false, false, false, ShapeRule::kNone,
     nullptr, nullptr, nullptr, nothing, &Executor::join},
    {OpType::kAddProcessSet, "ADD_PROCESS_SET", false, false, false, false, false, ShapeRule::kNone,
     validate_add_set, add_set_mismatch, nullptr, set_members, &Executor::add_process_set},
    {OpType::kRemoveProcessSet, "REMOVE_PROCESS_SET", false, false, false, false, false, ShapeRule::kNone,
     validate_remove_set, remove_set_mismatch, nullptr, nothing, &Executor::remove_process_set},
}};

constexpr bool rows_in_order() {
  for (size_t i = 0; i < kRows.size(); ++i)
    if (static_cast<size_t>(kRows[i].op) != i) return false;
  return true;
}
static_assert(rows_in_order(), "kRows[i] is the row of OpType i");

}  // namespace

const OpRow& op_row(OpType op) {
  static_assert(static_cast<size_t>(OpType::kRemoveProcessSet) + 1 == std::tuple_size_v<decltype(kRows)>,
                "one row per OpType");
  return kRows[static_cast<size_t>(op)];
}

}  // namespace hvd
