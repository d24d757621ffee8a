#include "tests/standin/nccl/reduction.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace autotune::standin {

namespace {

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) mant <<= 1, --exp;
      bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const int exp = static_cast<int>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000u;
    const int shift = 14 - exp;
    uint32_t half = mant >> shift;
    if ((mant >> (shift - 1)) & 1u) ++half;  // round half up
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  if (mant & 0x1000u) ++half;  // round half up (carries into the exponent correctly)
  return static_cast<uint16_t>(sign | half);
}

float bf16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(x >> 16);
}

// Signed integers wrap as the GPU's do (computed unsigned: signed overflow is undefined in C++).
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return static_cast<T>(a + b);
  }
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return static_cast<T>(a * b);
  }
}

struct Sum {
  template <typename A>
  A operator()(A a, A b) const {
    return wrap_add(a, b);
  }
};
struct Prod {
  template <typename A>
  A operator()(A a, A b) const {
    return wrap_mul(a, b);
  }
};
struct Max {
  template <typename A>
  A operator()(A a, A b) const {
    return std::max(a, b);
  }
};
struct Min {
  template <typename A>
  A operator()(A a, A b) const {
    return std::min(a, b);
  }
};

// T: how elements are stored; A: what they are computed in. Source by source over a block, so the inner loop
// runs over contiguous memory with the op known at compile time (it vectorises where T is A). `out` is
// written after every source of a block was read: it may be one of the sources.
template <typename T, typename A, A (*load)(T), T (*store)(A), typename Op>
void reduce_with(Op op, bool average, const char* const* src, int n, char* out, size_t count) {
  constexpr size_t kBlock = 1024;
  A acc[kBlock];
  for (size_t base = 0; base < count; base += kBlock) {
    const size_t m = std::min(kBlock, count - base);
    for (size_t i = 0; i < m; ++i) {
      T v;
      std::memcpy(&v, src[0] + (base + i) * sizeof(T), sizeof v);
      acc[i] = load(v);
    }
    for (int k = 1; k < n; ++k) {
      const char* p = src[k] + base * sizeof(T);
      for (size_t i = 0; i < m; ++i) {
        T v;
        std::memcpy(&v, p + i * sizeof(T), sizeof v);
        acc[i] = op(acc[i], load(v));
      }
    }
    for (size_t i = 0; i < m; ++i) {
      const T v = store(average ? static_cast<A>(acc[i] / static_cast<A>(n)) : acc[i]);
      std::memcpy(out + (base + i) * sizeof(T), &v, sizeof v);
    }
  }
}

template <typename T, typename A, A (*load)(T), T (*store)(A)>
void reduce_as(ncclRedOp_t op, const char* const* src, int n, char* out, size_t count) {
  switch (op) {
    case ncclProd:
      return reduce_with<T, A, load, store>(Prod{}, false, src, n, out, count);
    case ncclMax:
      return reduce_with<T, A, load, store>(Max{}, false, src, n, out, count);
    case ncclMin:
      return reduce_with<T, A, load, store>(Min{}, false, src, n, out, count);
    default:  // sum, and avg (sum, then divided)
      return reduce_with<T, A, load, store>(Sum{}, op == ncclAvg, src, n, out, count);
  }
}

template <typename T>
T same(T v) {
  return v;
}

}  // namespace

size_t element_size(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    default:
      return 0;
  }
}

bool valid_op(ncclRedOp_t op) {
  return op == ncclSum || op == ncclProd || op == ncclMax || op == ncclMin || op == ncclAvg;
}

void reduce(ncclDataType_t type, ncclRedOp_t op, const char* const* src, int n, char* out, size_t count) {
  switch (type) {
    case ncclInt8:
      return reduce_as<int8_t, int8_t, same<int8_t>, same<int8_t>>(op, src, n, out, count);
    case ncclUint8:
      return reduce_as<uint8_t, uint8_t, same<uint8_t>, same<uint8_t>>(op, src, n, out, count);
    case ncclInt32:
      return reduce_as<int32_t, int32_t, same<int32_t>, same<int32_t>>(op, src, n, out, count);
    case ncclUint32:
      return reduce_as<uint32_t, uint32_t, same<uint32_t>, same<uint32_t>>(op, src, n, out, count);
    case ncclInt64:
      return reduce_as<int64_t, int64_t, same<int64_t>, same<int64_t>>(op, src, n, out, count);
    case ncclUint64:
      return reduce_as<uint64_t, uint64_t, same<uint64_t>, same<uint64_t>>(op, src, n, out, count);
    case ncclFloat16:
      return reduce_as<uint16_t, float, half_to_float, float_to_half>(op, src, n, out, count);
    case ncclBfloat16:
      return reduce_as<uint16_t, float, bf16_to_float, float_to_bf16>(op, src, n, out, count);
    case ncclFloat32:
      return reduce_as<float, float, same<float>, same<float>>(op, src, n, out, count);
    case ncclFloat64:
      return reduce_as<double, double, same<double>, same<double>>(op, src, n, out, count);
    default:
      return;
  }
}

const char* type_name(ncclDataType_t type) {
  static const char* const kNames[] = {"int8",    "uint8",    "int32",      "uint32",
                                       "int64",   "uint64",   "float16",    "float32",
                                       "float64", "bfloat16", "float8e4m3", "float8e5m2"};
  const int t = static_cast<int>(type);
  return t >= 0 && t < static_cast<int>(sizeof kNames / sizeof *kNames) ? kNames[t] : "unknown";
}

const char* op_name(ncclRedOp_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg"};
  const int o = static_cast<int>(op);
  return o >= 0 && o < 5 ? kNames[o] : "unknown";
}

}  // namespace autotune::standin
