// Negotiation messages: what a rank says it is ready for (TensorRequest), and what the
// coordinator decides everyone does next (Response), with a compact binary encoding.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hvd/types.h"

namespace hvd {

/// What a collective does to a tensor, apart from its name and shape: the fields a request,
/// the response to it and a cached response share, and that every rank must agree on.
struct OpSpec {
  OpType op = OpType::kAllreduce;           ///< collective
  DataType dtype = DataType::kFloat32;      ///< element type
  ReduceOp reduce_op = ReduceOp::kSum;      ///< reduction
  DeviceKind device = DeviceKind::kCPU;     ///< where the tensor lives
  int32_t root = 0;                         ///< broadcast root; remove_process_set: the set
  double prescale = 1.0;                    ///< input scale factor
  double postscale = 1.0;                   ///< output scale factor
  /// The caller asked for Average, lowered once at enqueue: reduce_op is then kSum and
  /// postscale includes the 1/size of the process set (travels in reduce_op's top bit).
  bool average = false;
  /// The reduction as the caller stated it.
  ReduceOp stated_op() const { return average ? ReduceOp::kAverage : reduce_op; }
};

/// The OpSpec fields, as bits of what spec_diff() returns.
enum SpecField : unsigned {
  kSpecOp = 1u << 0,
  kSpecDtype = 1u << 1,
  kSpecReduceOp = 1u << 2,
  kSpecDevice = 1u << 3,
  kSpecRoot = 1u << 4,
  kSpecScale = 1u << 5,  ///< prescale or postscale
};

/// The fields in which `a` and `b` differ (0: equal specs). Each caller decides which of
/// them matter for its op, and names the first that does in its own words.
unsigned spec_diff(const OpSpec& a, const OpSpec& b);

/// One rank's readiness for one tensor.
struct TensorRequest : OpSpec {
  int32_t rank = 0;                         ///< submitting rank (in the process set)
  int32_t group_id = -1;                    ///< grouped allreduce id (-1: none)
  int32_t group_size = 0;                   ///< members of the group
  std::string name;                         ///< tensor name
  std::vector<int64_t> shape;               ///< tensor shape
  std::vector<int32_t> ranks;               ///< add_process_set: the member ranks
};

/// What every rank of a process set executes next, in the same order.
struct Response : OpSpec {
  int32_t last_joined_rank = -1;            ///< join: last rank that joined
  std::string error;                        ///< non-empty: every rank fails these tensors
  uint8_t error_code = 0;                   ///< StatusCode of the error
  std::vector<std::string> names;           ///< tensors (several after fusion)
  std::vector<int64_t> counts;              ///< elements per tensor (allreduce/broadcast)
  std::vector<int64_t> first_dims;          ///< allgather: [tensor][rank] first-dim sizes
  std::vector<int64_t> row_elems;           ///< allgather/alltoall: elements per first-dim row
  std::vector<int32_t> joined;              ///< ranks that had joined (contribute identity)
  std::vector<int32_t> ranks;               ///< add_process_set members

  /// Payload bytes of all tensors (allreduce) for fusion accounting.
  int64_t bytes() const;
};

/// Appends primitive values to a byte vector.
class Writer {
 public:
  void u8(uint8_t v) { buf_.push_back(v); }
  void i32(int32_t v) { raw(&v, sizeof v); }
  void i64(int64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void str(const std::string& s);
  void i64s(const std::vector<int64_t>& v);
  void i32s(const std::vector<int32_t>& v);
  void raw(const void* p, size_t n);
  std::vector<uint8_t>& bytes() { return buf_; }

 private:
  std::vector<uint8_t> buf_;
};

/// Reads what a Writer wrote; any overrun sets failed().
class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  uint8_t u8();
  int32_t i32();
  int64_t i64();
  double f64();
  std::string str();
  std::vector<int64_t> i64s();
  std::vector<int32_t> i32s();
  /// A string in place (valid while the bytes are): no allocation.
  std::string_view str_view();
  /// An array of `elem`-byte values in place: its first byte and its length.
  const uint8_t* array_view(size_t elem, int64_t* n);
  bool failed() const { return failed_; }
  bool done() const { return p_ == end_; }

 private:
  bool take(void* out, size_t n);
  const uint8_t* p_;
  const uint8_t* end_;
  bool failed_ = false;
};

/// Encodes the spec part of a request or response (the same bytes in both).
void write_spec(Writer& w, const OpSpec& s);
/// Decodes what write_spec wrote.
OpSpec read_spec(Reader& r);
/// Encodes a request.
void write_request(Writer& w, const TensorRequest& r);
/// Decodes a request.
TensorRequest read_request(Reader& r);

/// A request read in place from its bytes (the coordinator reads every rank's requests
/// each cycle: no allocation per request). Valid while the bytes are.
struct RequestView {
  int32_t rank = 0;
  OpSpec spec;
  int32_t group_id = -1;
  int32_t group_size = 0;
  std::string_view name;
  const uint8_t* shape = nullptr;  ///< shape_n int64 values, as written
  int64_t shape_n = 0;
  const uint8_t* ranks = nullptr;  ///< ranks_n int32 values, as written
  int64_t ranks_n = 0;

  /// True when `r` asks for the same thing (the name aside, and the submitting rank).
  bool same_as(const TensorRequest& r) const;
  /// The request it reads.
  TensorRequest materialize() const;
};
/// Decodes a request in place.
RequestView read_request_view(Reader& r);
/// Encodes a response.
void write_response(Writer& w, const Response& r);
/// Decodes a response.
Response read_response(Reader& r);

}  // namespace hvd
