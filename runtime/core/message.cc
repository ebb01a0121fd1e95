#include "core/message.h"

#include <cstring>

namespace hvd {

int64_t Response::bytes() const {
  int64_t n = 0;
  for (int64_t c : counts) n += c;
  return n * static_cast<int64_t>(dtype_size(dtype));
}

void Writer::raw(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  buf_.insert(buf_.end(), b, b + n);
}
void Writer::str(const std::string& s) {
  i64(static_cast<int64_t>(s.size()));
  raw(s.data(), s.size());
}
void Writer::i64s(const std::vector<int64_t>& v) {
  i64(static_cast<int64_t>(v.size()));
  raw(v.data(), v.size() * sizeof(int64_t));
}
void Writer::i32s(const std::vector<int32_t>& v) {
  i64(static_cast<int64_t>(v.size()));
  raw(v.data(), v.size() * sizeof(int32_t));
}

bool Reader::take(void* out, size_t n) {
  if (failed_ || static_cast<size_t>(end_ - p_) < n) {
    failed_ = true;
    std::memset(out, 0, n);
    return false;
  }
  std::memcpy(out, p_, n);
  p_ += n;
  return true;
}
uint8_t Reader::u8() { uint8_t v; take(&v, 1); return v; }
int32_t Reader::i32() { int32_t v; take(&v, 4); return v; }
int64_t Reader::i64() { int64_t v; take(&v, 8); return v; }
double Reader::f64() { double v; take(&v, 8); return v; }
std::string Reader::str() {
  return std::string(str_view());
}
std::string_view Reader::str_view() {
  int64_t n = i64();
  if (failed_ || n < 0 || n > end_ - p_) { failed_ = true; return {}; }
  std::string_view s(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
  p_ += n;
  return s;
}
const uint8_t* Reader::array_view(size_t elem, int64_t* n) {
  *n = i64();
  if (failed_ || *n < 0 || *n > (end_ - p_) / static_cast<int64_t>(elem)) {
    failed_ = true;
    *n = 0;
    return nullptr;
  }
  const uint8_t* at = p_;
  p_ += static_cast<size_t>(*n) * elem;
  return at;
}
std::vector<int64_t> Reader::i64s() {
  int64_t n = i64();
  if (failed_ || n < 0 || n > (end_ - p_) / 8) { failed_ = true; return {}; }
  std::vector<int64_t> v(static_cast<size_t>(n));
  take(v.data(), v.size() * 8);
  return v;
}
std::vector<int32_t> Reader::i32s() {
  int64_t n = i64();
  if (failed_ || n < 0 || n > (end_ - p_) / 4) { failed_ = true; return {}; }
  std::vector<int32_t> v(static_cast<size_t>(n));
  take(v.data(), v.size() * 4);
  return v;
}

namespace {
constexpr uint8_t kAverageBit = 0x80;  // OpSpec::average, in the reduce_op byte
}  // namespace

unsigned spec_diff(const OpSpec& a, const OpSpec& b) {
  unsigned d = 0;
  if (a.op != b.op) d |= kSpecOp;
  if (a.dtype != b.dtype) d |= kSpecDtype;
  if (a.stated_op() != b.stated_op()) d |= kSpecReduceOp;
  if (a.device != b.device) d |= kSpecDevice;
  if (a.root != b.root) d |= kSpecRoot;
  if (a.prescale != b.prescale || a.postscale != b.postscale) d |= kSpecScale;
  return d;
}

void write_spec(Writer& w, const OpSpec& s) {
  w.u8(static_cast<uint8_t>(s.op));
  w.u8(static_cast<uint8_t>(s.dtype));
  w.u8(static_cast<uint8_t>(static_cast<uint8_t>(s.reduce_op) | (s.average ? kAverageBit : 0)));
  w.u8(static_cast<uint8_t>(s.device));
  w.i32(s.root);
  w.f64(s.prescale);
  w.f64(s.postscale);
}

OpSpec read_spec(Reader& rd) {
  OpSpec s;
  s.op = static_cast<OpType>(rd.u8());
  s.dtype = static_cast<DataType>(rd.u8());
  const uint8_t op = rd.u8();
  s.reduce_op = static_cast<ReduceOp>(op & ~kAverageBit);
  s.average = (op & kAverageBit) != 0;
  s.device = static_cast<DeviceKind>(rd.u8());
  s.root = rd.i32();
  s.prescale = rd.f64();
  s.postscale = rd.f64();
  return s;
}

void write_request(Writer& w, const TensorRequest& r) {
  w.i32(r.rank);
  write_spec(w, r);
  w.i32(r.group_id);
  w.i32(r.group_size);
  w.str(r.name);
  w.i64s(r.shape);
  w.i32s(r.ranks);
}

TensorRequest read_request(Reader& rd) {
  return read_request_view(rd).materialize();
}

RequestView read_request_view(Reader& rd) {
  RequestView r;
  r.rank = rd.i32();
  r.spec = read_spec(rd);
  r.group_id = rd.i32();
  r.group_size = rd.i32();
  r.name = rd.str_view();
  r.shape = rd.array_view(sizeof(int64_t), &r.shape_n);
  r.ranks = rd.array_view(sizeof(int32_t), &r.ranks_n);
  return r;
}

bool RequestView::same_as(const TensorRequest& r) const {
  return spec_diff(spec, r) == 0 && group_id == r.group_id && group_size == r.group_size &&
         static_cast<size_t>(shape_n) == r.shape.size() &&
         (shape_n == 0 || std::memcmp(shape, r.shape.data(), r.shape.size() * sizeof(int64_t)) == 0) &&
         static_cast<size_t>(ranks_n) == r.ranks.size() &&
         (ranks_n == 0 || std::memcmp(ranks, r.ranks.data(), r.ranks.size() * sizeof(int32_t)) == 0);
}

TensorRequest RequestView::materialize() const {
  TensorRequest r;
  r.rank = rank;
  static_cast<OpSpec&>(r) = spec;
  r.group_id = group_id;
  r.group_size = group_size;
  r.name.assign(name.data(), name.size());
  r.shape.resize(static_cast<size_t>(shape_n));
  if (shape_n) std::memcpy(r.shape.data(), shape, r.shape.size() * sizeof(int64_t));
  r.ranks.resize(static_cast<size_t>(ranks_n));
  if (ranks_n) std::memcpy(r.ranks.data(), ranks, r.ranks.size() * sizeof(int32_t));
  return r;
}

void write_response(Writer& w, const Response& r) {
  write_spec(w, r);
  w.i32(r.last_joined_rank);
  w.str(r.error);
  w.u8(r.error_code);
  w.i64(static_cast<int64_t>(r.names.size()));
  for (const auto& n : r.names) w.str(n);
  w.i64s(r.counts);
  w.i64s(r.first_dims);
  w.i64s(r.row_elems);
  w.i32s(r.joined);
  w.i32s(r.ranks);
}

Response read_response(Reader& rd) {
  Response r;
  static_cast<OpSpec&>(r) = read_spec(rd);
  r.last_joined_rank = rd.i32();
  r.error = rd.str();
  r.error_code = rd.u8();
  int64_t n = rd.i64();
  if (n > 0 && n <= 1 << 20) r.names.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n && !rd.failed(); ++i) r.names.push_back(rd.str());
  r.counts = rd.i64s();
  r.first_dims = rd.i64s();
  r.row_elems = rd.i64s();
  r.joined = rd.i32s();
  r.ranks = rd.i32s();
  return r;
}

}  // namespace hvd
