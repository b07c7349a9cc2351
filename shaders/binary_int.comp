#version 450
#extension GL_GOOGLE_include_directive : require
// Integer / comparison / logic elementwise ops with numpy broadcasting (rank
// <= 6, dims right-aligned, strides in elements, 0 on broadcast dimensions).
// Operands are 32-bit words: float32 when IN_FLOAT = 1, else int32 (bool as
// 0/1). C[i] = op(A[a_index(i)], B[b_index(i)]); comparisons and logic ops
// write int32 0/1; arithmetic results are wrapped to OUT_DT's width (ONNX
// TensorProto.DataType code: 2 uint8, 3 int8, 4 uint16, 5 int16, else 32 bit).
// Unary ops (Abs, Neg, Not, Relu, BitwiseNot) read only A. Bitwise ops keep
// the operands' integer type.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer A_ { uint a[]; };
layout(set = 0, binding = 1) readonly buffer B_ { uint b[]; };
layout(set = 0, binding = 2) writeonly buffer C_ { uint c[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint IN_FLOAT = 0;
layout(constant_id = 3) const uint OUT_DT = 6;
layout(constant_id = 4) const uint D0 = 1;
layout(constant_id = 5) const uint D1 = 1;
layout(constant_id = 6) const uint D2 = 1;
layout(constant_id = 7) const uint D3 = 1;
layout(constant_id = 8) const uint D4 = 1;
layout(constant_id = 9) const uint D5 = 1;
layout(constant_id = 10) const uint SA0 = 0;
layout(constant_id = 11) const uint SA1 = 0;
layout(constant_id = 12) const uint SA2 = 0;
layout(constant_id = 13) const uint SA3 = 0;
layout(constant_id = 14) const uint SA4 = 0;
layout(constant_id = 15) const uint SA5 = 0;
layout(constant_id = 16) const uint SB0 = 0;
layout(constant_id = 17) const uint SB1 = 0;
layout(constant_id = 18) const uint SB2 = 0;
layout(constant_id = 19) const uint SB3 = 0;
layout(constant_id = 20) const uint SB4 = 0;
layout(constant_id = 21) const uint SB5 = 0;
#include "common.glsl"
// OP codes (must match src/toolchain/lower/lower_int.cpp).
#define OP_ADD 0u
#define OP_SUB 1u
#define OP_MUL 2u
#define OP_DIV 3u
#define OP_MAX 4u
#define OP_MIN 5u
#define OP_MOD 6u
#define OP_FMOD 7u
#define OP_EQ 8u
#define OP_LT 9u
#define OP_LE 10u
#define OP_GT 11u
#define OP_GE 12u
#define OP_AND 13u
#define OP_OR 14u
#define OP_XOR 15u
#define OP_SHL 16u
#define OP_SHR 17u
#define OP_ABS 18u
#define OP_NEG 19u
#define OP_NOT 20u
#define OP_RELU 21u
#define OP_BITAND 22u
#define OP_BITOR 23u
#define OP_BITXOR 24u
#define OP_BITNOT 25u

int wrap(int v) {
  if (OUT_DT == 2u) return v & 0xff;
  if (OUT_DT == 3u) return bitfieldExtract(v, 0, 8);
  if (OUT_DT == 4u) return v & 0xffff;
  if (OUT_DT == 5u) return bitfieldExtract(v, 0, 16);
  return v;
}
bool is_unsigned() { return OUT_DT == 2u || OUT_DT == 4u; }

uint fop(float x, float y) {
  if (OP == OP_EQ) return x == y ? 1u : 0u;
  if (OP == OP_LT) return x < y ? 1u : 0u;
  if (OP == OP_LE) return x <= y ? 1u : 0u;
  if (OP == OP_GT) return x > y ? 1u : 0u;
  if (OP == OP_GE) return x >= y ? 1u : 0u;
  if (OP == OP_FMOD) return floatBitsToUint(fmod_exact(x, y));
  return 0u;
}

uint iop(int x, int y) {
  if (OP == OP_ADD) return uint(wrap(x + y));
  if (OP == OP_SUB) return uint(wrap(x - y));
  if (OP == OP_MUL) return uint(wrap(x * y));
  if (OP == OP_DIV) return y == 0 ? 0u : uint(wrap(x / y));
  if (OP == OP_MAX) return uint(max(x, y));
  if (OP == OP_MIN) return uint(min(x, y));
  if (OP == OP_MOD || OP == OP_FMOD) {
    if (y == 0) return 0u;
    int r = x - y * (x / y);  // sign of the dividend (C fmod)
    if (OP == OP_MOD && r != 0 && ((r < 0) != (y < 0))) r += y;  // sign of the divisor (Python)
    return uint(r);
  }
  if (OP == OP_EQ) return x == y ? 1u : 0u;
  if (OP == OP_LT) return x < y ? 1u : 0u;
  if (OP == OP_LE) return x <= y ? 1u : 0u;
  if (OP == OP_GT) return x > y ? 1u : 0u;
  if (OP == OP_GE) return x >= y ? 1u : 0u;
  if (OP == OP_AND) return (x != 0 && y != 0) ? 1u : 0u;
  if (OP == OP_OR) return (x != 0 || y != 0) ? 1u : 0u;
  if (OP == OP_XOR) return ((x != 0) != (y != 0)) ? 1u : 0u;
  if (OP == OP_SHL) return uint(y) >= 32u ? 0u : uint(wrap(int(uint(x) << uint(y))));
  if (OP == OP_SHR) return uint(y) >= 32u ? 0u : uint(x) >> uint(y);
  if (OP == OP_ABS) return uint(wrap(abs(x)));
  if (OP == OP_NEG) return uint(wrap(-x));
  if (OP == OP_NOT) return x == 0 ? 1u : 0u;
  if (OP == OP_RELU) return uint(max(x, 0));
  // Bitwise: sign- / zero-extended words give the extended narrow result.
  if (OP == OP_BITAND) return uint(wrap(x & y));
  if (OP == OP_BITOR) return uint(wrap(x | y));
  if (OP == OP_BITXOR) return uint(wrap(x ^ y));
  if (OP == OP_BITNOT) return uint(wrap(~x));
  return 0u;
}

void main() {
  uint i = linear_index_256();
  if (i >= N) return;
  uint r = i;
  uint i5 = r % D5; r /= D5;
  uint i4 = r % D4; r /= D4;
  uint i3 = r % D3; r /= D3;
  uint i2 = r % D2; r /= D2;
  uint i1 = r % D1; r /= D1;
  uint i0 = r;
  uint ia = i0 * SA0 + i1 * SA1 + i2 * SA2 + i3 * SA3 + i4 * SA4 + i5 * SA5;
  uint ib = i0 * SB0 + i1 * SB1 + i2 * SB2 + i3 * SB3 + i4 * SB4 + i5 * SB5;
  uint x = a[ia];
  uint y = (OP >= OP_ABS && OP <= OP_RELU) || OP == OP_BITNOT ? 0u : b[ib];
  c[i] = IN_FLOAT == 1u ? fop(uintBitsToFloat(x), uintBitsToFloat(y)) : iop(int(x), int(y));
}
