#include "tilewave/tensor_values.h"

#include <cmath>
#include <cstring>

#include "tilewave_onnx.pb.h"

namespace tilewave {

bool elem::is_real(int32_t t) { return t == kFloat || t == kFloat16 || t == kDouble || t == kBfloat16; }

namespace {

double half_to_double(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  double v = exp == 0 ? std::ldexp(frac, -24) : exp == 31 ? INFINITY : std::ldexp(frac + 1024, exp - 25);
  return sign ? -v : v;
}

double bf16_to_double(uint16_t b) {
  const uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
T read_raw(const std::string& raw, size_t i) {
  T v;
  std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

std::optional<TensorValue> tensor_value(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxValueElems) return std::nullopt;
    n *= d;
    if (n > kMaxValueElems) return std::nullopt;
  }
  TensorValue v;
  v.dims.assign(t.dims().begin(), t.dims().end());
  const int32_t type = t.data_type();
  v.real = elem::is_real(type);
  const bool raw = t.has_raw_data();
  const std::string& bytes = t.raw_data();
  auto put = [&](double x) {
    if (v.real) v.reals.push_back(x);
    else v.ints.push_back(saturating_int64(x));
  };
  auto take = [&](size_t width, auto&& from_raw, auto&& from_field, int field_size) -> bool {
    if (raw) {
      if (bytes.size() != size_t(n) * width) return false;
      for (int64_t i = 0; i < n; ++i) from_raw(size_t(i));
    } else {
      if (field_size != n) return false;
      for (int64_t i = 0; i < n; ++i) from_field(int(i));
    }
    return true;
  };
  bool ok = false;
  switch (type) {
    case elem::kInt64:
      ok = take(8, [&](size_t i) { v.ints.push_back(read_raw<int64_t>(bytes, i)); },
                [&](int i) { v.ints.push_back(t.int64_data(i)); }, t.int64_data_size());
      break;
    case elem::kUint64:
      ok = take(8, [&](size_t i) { v.ints.push_back(int64_t(read_raw<uint64_t>(bytes, i))); },
                [&](int i) { v.ints.push_back(int64_t(t.uint64_data(i))); }, t.uint64_data_size());
      break;
    case elem::kInt32:
      ok = take(4, [&](size_t i) { v.ints.push_back(read_raw<int32_t>(bytes, i)); },
                [&](int i) { v.ints.push_back(t.int32_data(i)); }, t.int32_data_size());
      break;
    case elem::kUint32:
      ok = take(4, [&](size_t i) { v.ints.push_back(read_raw<uint32_t>(bytes, i)); },
                [&](int i) { v.ints.push_back(uint32_t(t.uint64_data(i))); }, t.uint64_data_size());
      break;
    case elem::kInt16:
      ok = take(2, [&](size_t i) { v.ints.push_back(read_raw<int16_t>(bytes, i)); },
                [&](int i) { v.ints.push_back(int16_t(t.int32_data(i))); }, t.int32_data_size());
      break;
    case elem::kUint16:
      ok = take(2, [&](size_t i) { v.ints.push_back(read_raw<uint16_t>(bytes, i)); },
                [&](int i) { v.ints.push_back(uint16_t(t.int32_data(i))); }, t.int32_data_size());
      break;
    case elem::kInt8:
      ok = take(1, [&](size_t i) { v.ints.push_back(read_raw<int8_t>(bytes, i)); },
                [&](int i) { v.ints.push_back(int8_t(t.int32_data(i))); }, t.int32_data_size());
      break;
    case elem::kUint8:
    case elem::kBool:
      ok = take(1, [&](size_t i) { v.ints.push_back(read_raw<uint8_t>(bytes, i)); },
                [&](int i) { v.ints.push_back(uint8_t(t.int32_data(i))); }, t.int32_data_size());
      break;
    case elem::kFloat:
      ok = take(4, [&](size_t i) { put(read_raw<float>(bytes, i)); }, [&](int i) { put(t.float_data(i)); },
                t.float_data_size());
      break;
    case elem::kDouble:
      ok = take(8, [&](size_t i) { put(read_raw<double>(bytes, i)); }, [&](int i) { put(t.double_data(i)); },
                t.double_data_size());
      break;
    case elem::kFloat16:
      ok = take(2, [&](size_t i) { put(half_to_double(read_raw<uint16_t>(bytes, i))); },
                [&](int i) { put(half_to_double(uint16_t(t.int32_data(i)))); }, t.int32_data_size());
      break;
    case elem::kBfloat16:
      ok = take(2, [&](size_t i) { put(bf16_to_double(read_raw<uint16_t>(bytes, i))); },
                [&](int i) { put(bf16_to_double(uint16_t(t.int32_data(i)))); }, t.int32_data_size());
      break;
    default:
      return std::nullopt;
  }
  if (!ok) return std::nullopt;
  return v;
}

}  // namespace tilewave
