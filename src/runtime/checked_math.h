// Overflow-checked arithmetic on the sizes, counts and offsets a bundle
// declares: every such value comes from an untrusted file, so a sum, product
// or round-up that wraps around would turn a huge size into a tiny one (a
// buffer allocated far smaller than what is later written into it).
#ifndef OAAXVK_RUNTIME_CHECKED_MATH_H_
#define OAAXVK_RUNTIME_CHECKED_MATH_H_

#include <cstdint>

namespace oaaxvk::runtime {

// *out = a + b; false (and *out unspecified) when it does not fit 64 bits.
inline bool CheckedAdd(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_add_overflow(a, b, out); }

// *out = a * b; false when it does not fit 64 bits.
inline bool CheckedMul(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// *out = v rounded up to a multiple of `align` (> 0); false when that does
// not fit 64 bits.
inline bool CheckedRoundUp(uint64_t v, uint64_t align, uint64_t* out) {
  uint64_t sum = 0;
  if (align == 0 || !CheckedAdd(v, align - 1, &sum)) return false;
  *out = sum / align * align;
  return true;
}

// Whether [offset, offset + size) lies within [0, limit), without computing
// a sum that could wrap.
inline bool RangeWithin(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_CHECKED_MATH_H_
