// Negotiation messages: the OpSpec shared by requests and responses, its comparison, and
// the wire format (which must not change: peers of different builds, recorded reports).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/controller.h"
#include "core/message.h"
#include "core/process_sets.h"
#include "hvd/runtime.h"

namespace hvd {
namespace {

OpSpec sample_spec() {
  return OpSpec{OpType::kReducescatter, DataType::kFloat16, ReduceOp::kMax, DeviceKind::kGPU, 3,
                0.5, 2.25};
}

TEST(Message, SpecDiffNamesEveryDifferingField) {
  const OpSpec a = sample_spec();
  EXPECT_EQ(spec_diff(a, a), 0u);
  OpSpec b = a;
  b.op = OpType::kAllreduce;
  EXPECT_EQ(spec_diff(a, b), unsigned{kSpecOp});
  b = a;
  b.dtype = DataType::kFloat32;
  EXPECT_EQ(spec_diff(a, b), unsigned{kSpecDtype});
  b = a;
  b.reduce_op = ReduceOp::kSum;
  EXPECT_EQ(spec_diff(a, b), unsigned{kSpecReduceOp});
  b = a;
  b.device = DeviceKind::kCPU;
  EXPECT_EQ(spec_diff(a, b), unsigned{kSpecDevice});
  b = a;
  b.root = 0;
  EXPECT_EQ(spec_diff(a, b), unsigned{kSpecRoot});
  b = a;
  b.prescale = 1.0;
  EXPECT_EQ(spec_diff(a, b), unsigned{kSpecScale});
  b = a;
  b.postscale = 1.0;
  EXPECT_EQ(spec_diff(a, b), unsigned{kSpecScale});
  b = OpSpec{};
  EXPECT_EQ(spec_diff(a, b), unsigned{kSpecOp | kSpecDtype | kSpecReduceOp | kSpecDevice |
                                      kSpecRoot | kSpecScale});
}

// An average lowered at enqueue travels as a sum with its flag in reduce_op's top bit: the
// request stays the same size, reads back as it was written, and differs from a plain sum.
TEST(Message, LoweredAverageRoundTripsAndDiffersFromSum) {
  OpSpec avg = sample_spec();
  avg.reduce_op = ReduceOp::kSum;
  avg.average = true;
  OpSpec sum = avg;
  sum.average = false;
  Writer wa, ws;
  write_spec(wa, avg);
  write_spec(ws, sum);
  EXPECT_EQ(wa.bytes().size(), ws.bytes().size());
  Reader ra(wa.bytes().data(), wa.bytes().size());
  const OpSpec back = read_spec(ra);
  EXPECT_EQ(spec_diff(back, avg), 0u);
  EXPECT_TRUE(back.average);
  EXPECT_EQ(back.reduce_op, ReduceOp::kSum);
  EXPECT_EQ(back.stated_op(), ReduceOp::kAverage);
  EXPECT_EQ(spec_diff(avg, sum), unsigned{kSpecReduceOp});
}

// The request layout field by field, as it was before the spec had its own encoder.
TEST(Message, RequestWireFormatIsUnchanged) {
  TensorRequest r;
  static_cast<OpSpec&>(r) = sample_spec();
  r.rank = 5;
  r.group_id = 7;
  r.group_size = 2;
  r.name = "grad/w";
  r.shape = {4, 6};
  r.ranks = {0, 2};
  Writer got;
  write_request(got, r);
  Writer want;
  want.i32(5);
  want.u8(static_cast<uint8_t>(OpType::kReducescatter));
  want.u8(static_cast<uint8_t>(DataType::kFloat16));
  want.u8(static_cast<uint8_t>(ReduceOp::kMax));
  want.u8(static_cast<uint8_t>(DeviceKind::kGPU));
  want.i32(3);
  want.f64(0.5);
  want.f64(2.25);
  want.i32(7);
  want.i32(2);
  want.str("grad/w");
  want.i64s({4, 6});
  want.i32s({0, 2});
  EXPECT_EQ(got.bytes(), want.bytes());
  Reader rd(got.bytes().data(), got.bytes().size());
  TensorRequest back = read_request(rd);
  EXPECT_FALSE(rd.failed());
  EXPECT_TRUE(rd.done());
  EXPECT_EQ(spec_diff(back, r), 0u);
  EXPECT_EQ(back.rank, 5);
  EXPECT_EQ(back.name, "grad/w");
  EXPECT_EQ(back.shape, r.shape);
  EXPECT_EQ(back.ranks, r.ranks);
}

// The two shortcuts of the negotiation: a rank writes its request straight from the table
// entry (RequestRef), the coordinator reads it in place (RequestView). Both must agree with
// write_request / read_request byte for byte and field for field.
TEST(Message, RequestRefAndRequestViewMatchTheFullRequest) {
  OpRequest q;
  q.op = OpType::kAddProcessSet;
  q.input = Tensor{nullptr, DataType::kFloat16, {4, 6}, DeviceKind::kGPU};
  q.reduce_op = ReduceOp::kMax;
  q.root = 3;
  q.prescale = 0.5;
  q.postscale = 2.25;
  q.group_id = 7;
  q.group_size = 2;
  q.set_ranks = {0, 2};
  const std::string name = "grad/w";
  const PendingOp kept(std::move(q));  // what the runtime's table holds of it
  const RequestRef ref{&name, &kept, 5};
  EXPECT_EQ(ref.op(), OpType::kAddProcessSet);
  {  // every field the request carries survived the move into PendingOp
    const TensorRequest m = ref.materialize();
    EXPECT_EQ(m.dtype, DataType::kFloat16);
    EXPECT_EQ(m.device, DeviceKind::kGPU);
    EXPECT_EQ(m.reduce_op, ReduceOp::kMax);
    EXPECT_EQ(m.root, 3);
    EXPECT_EQ(m.prescale, 0.5);
    EXPECT_EQ(m.postscale, 2.25);
    EXPECT_EQ(m.group_id, 7);
    EXPECT_EQ(m.group_size, 2);
    EXPECT_EQ(m.shape, (std::vector<int64_t>{4, 6}));
    EXPECT_EQ(m.ranks, (std::vector<int>{0, 2}));
  }
  Writer direct, full;
  ref.write(direct);
  write_request(full, ref.materialize());
  EXPECT_EQ(direct.bytes(), full.bytes());

  Reader rd(direct.bytes().data(), direct.bytes().size());
  const RequestView v = read_request_view(rd);
  EXPECT_FALSE(rd.failed());
  EXPECT_TRUE(rd.done());
  EXPECT_EQ(v.name, "grad/w");
  // In place: rank (4), spec (24), group id and size (8), the name's length (8), the name.
  EXPECT_EQ(v.name.data(), reinterpret_cast<const char*>(direct.bytes().data()) + 4 + 24 + 8 + 8);
  const TensorRequest back = v.materialize();
  const TensorRequest want = ref.materialize();
  EXPECT_EQ(back.rank, 5);
  EXPECT_EQ(spec_diff(back, want), 0u);
  EXPECT_EQ(back.name, want.name);
  EXPECT_EQ(back.shape, want.shape);
  EXPECT_EQ(back.ranks, want.ranks);
  EXPECT_TRUE(v.same_as(want));
  TensorRequest other = want;
  other.shape = {4, 7};
  EXPECT_FALSE(v.same_as(other));
  other = want;
  other.ranks = {0, 3};
  EXPECT_FALSE(v.same_as(other));
  other = want;
  other.group_size = 3;
  EXPECT_FALSE(v.same_as(other));

  // A truncated list fails the read; nothing points past the bytes.
  Reader cut(direct.bytes().data(), direct.bytes().size() - 3);
  (void)read_request_view(cut);
  EXPECT_TRUE(cut.failed());
}

TEST(Message, ResponseWireFormatIsUnchanged) {
  Response r;
  static_cast<OpSpec&>(r) = sample_spec();
  r.last_joined_rank = 1;
  r.error = "e";
  r.error_code = 2;
  r.names = {"a", "b"};
  r.counts = {3};
  r.first_dims = {4};
  r.row_elems = {5};
  r.joined = {6};
  r.ranks = {7};
  Writer got;
  write_response(got, r);
  Writer want;
  want.u8(static_cast<uint8_t>(OpType::kReducescatter));
  want.u8(static_cast<uint8_t>(DataType::kFloat16));
  want.u8(static_cast<uint8_t>(ReduceOp::kMax));
  want.u8(static_cast<uint8_t>(DeviceKind::kGPU));
  want.i32(3);
  want.f64(0.5);
  want.f64(2.25);
  want.i32(1);
  want.str("e");
  want.u8(2);
  want.i64(2);
  want.str("a");
  want.str("b");
  want.i64s({3});
  want.i64s({4});
  want.i64s({5});
  want.i32s({6});
  want.i32s({7});
  EXPECT_EQ(got.bytes(), want.bytes());
  Reader rd(got.bytes().data(), got.bytes().size());
  Response back = read_response(rd);
  EXPECT_FALSE(rd.failed());
  EXPECT_TRUE(rd.done());
  EXPECT_EQ(spec_diff(back, r), 0u);
  EXPECT_EQ(back.names, r.names);
  EXPECT_EQ(back.joined, r.joined);
}

// mismatch_error names the first field that matters, in Horovod's words.
std::string mismatch_of(const TensorRequest& a, const TensorRequest& b) {
  return mismatch_error({&a, &b}, 2);
}

TEST(Message, MismatchMessagesPerSpecField) {
  TensorRequest a;
  a.name = "t";
  a.rank = 0;
  a.shape = {4};
  TensorRequest b = a;
  b.rank = 1;
  EXPECT_EQ(mismatch_of(a, b), "");
  b.op = OpType::kAllgather;
  b.dtype = DataType::kInt32;  // the op is named first
  EXPECT_EQ(mismatch_of(a, b),
            "Mismatched collective operations: one rank requested allreduce, but another rank "
            "requested allgather (tensor 't', rank 0 vs rank 1)");
  b.op = a.op;
  EXPECT_EQ(mismatch_of(a, b),
            "Mismatched data types: one rank sent float32, but another rank sent int32 (tensor "
            "'t', rank 0 vs rank 1)");
  b.dtype = a.dtype;
  b.device = DeviceKind::kGPU;
  EXPECT_EQ(mismatch_of(a, b),
            "Mismatched devices: one rank placed the tensor on cpu, but another rank on gpu "
            "(tensor 't', rank 0 vs rank 1)");
  b.device = a.device;
  b.reduce_op = ReduceOp::kMin;
  EXPECT_EQ(mismatch_of(a, b),
            "Mismatched reduction operations: one rank requested sum, but another rank requested "
            "min (tensor 't', rank 0 vs rank 1)");
  b.reduce_op = a.reduce_op;
  b.postscale = 0.5;
  EXPECT_EQ(mismatch_of(a, b),
            "Mismatched scale factors: one rank gave prescale 1 and postscale 1, but another rank "
            "gave 1 and 0.5 (tensor 't', rank 0 vs rank 1)");
  b.postscale = a.postscale;
  b.root = 1;  // an allreduce has no root
  EXPECT_EQ(mismatch_of(a, b), "");
  a.op = b.op = OpType::kBroadcast;
  EXPECT_EQ(mismatch_of(a, b),
            "Mismatched broadcast root ranks: one rank specified root rank 0, but another rank "
            "specified root rank 1 (tensor 't', rank 0 vs rank 1)");
  a.op = b.op = OpType::kRemoveProcessSet;
  EXPECT_EQ(mismatch_of(a, b),
            "Mismatched process set removal: one rank removed process set 0, but another rank "
            "process set 1 (tensor 't', rank 0 vs rank 1)");
  a.op = b.op = OpType::kAllgather;  // reduce op and root do not matter for allgather
  b.reduce_op = ReduceOp::kMax;
  EXPECT_EQ(mismatch_of(a, b), "");
}

}  // namespace
}  // namespace hvd
