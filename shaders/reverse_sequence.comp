#version 450
#extension GL_GOOGLE_include_directive : require
// ONNX ReverseSequence: X viewed as [D0, D1, INNER] where the time axis and
// the batch axis are D0/D1 (TIME_AXIS = 0: [T, B, INNER]; 1: [B, T, INNER]).
// For batch b the first len[b] time steps are reversed, the rest copied.
// 32-bit words of any device data type; lengths are int32 words, clamped
// to [0, T].
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) readonly buffer L_ { int lens[]; };
layout(set = 0, binding = 2) writeonly buffer Y_ { uint y[]; };
layout(constant_id = 0) const uint T = 1;
layout(constant_id = 1) const uint B = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint TIME_AXIS = 0;
#include "common.glsl"

void main() {
  uint i = linear_index_256();
  if (i >= T * B * INNER) return;
  uint k = i % INNER;
  uint outer = i / INNER;
  uint t = TIME_AXIS == 0u ? outer / B : outer % T;
  uint b = TIME_AXIS == 0u ? outer % B : outer / T;
  uint len = uint(clamp(lens[b], 0, int(T)));
  uint ts = t < len ? len - 1u - t : t;
  uint src = TIME_AXIS == 0u ? (ts * B + b) : (b * T + ts);
  y[i] = x[src * INNER + k];
}
