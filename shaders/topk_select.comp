#version 450
#extension GL_GOOGLE_include_directive : require
// TopK along one long axis by radix select: X viewed as [OUTER, L, INNER],
// one row per (outer, inner) pair. Every element gets a 64-bit key, unique
// in its row, that orders the row as TopK does: high word the value as an
// order-preserving uint (largest: larger values higher; smallest: smaller
// ones; NaN above every number; -0 equal to +0), low word LO_MASK - index
// (lower index higher). The K-th highest key T is found 8 bits at a time
// from the top (a histogram of the digit among the elements that match the
// digits found so far, then the digit that holds the K-th), the K elements
// with keys >= T are gathered as candidates, each candidate's rank is the
// number of candidates with a higher key, and each writes Values[rank],
// Indices[rank]. The phases run as separate dispatches (PHASE):
//   0 init      one invocation per (row, bin): state {T high, T low, K
//               left, taken}, histogram cleared;
//   1 histogram one invocation per (row, PER positions < LPAD): atomic
//               add to the row's histogram of the digit at SHIFT of word
//               LO_WORD;
//   2 decide    one invocation per row: picks the digit, clears the
//               histogram (512 iterations);
//   3 gather    one invocation per (row, PER positions): keys >= T take a
//               slot;
//   4 rank      one invocation per (row, block, candidate): counts the
//               higher keys among BLOCK candidates (atomic add to its rank);
//   5 write     one invocation per (row, candidate).
// No invocation loops more than max(512, BLOCK) times, whatever L is. No
// shared memory and no barriers: a barrier anywhere in a shader makes
// SwiftShader run every dispatch of it as coroutines, many times slower.
// Values/Indices viewed as [OUTER, K, INNER]; indices int32.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer V_ { uint vals[]; };
layout(set = 0, binding = 2) writeonly buffer I_ { int inds[]; };
layout(set = 0, binding = 3) buffer S_ { uint state[]; };  // [ROWS, 4]
layout(set = 0, binding = 4) buffer H_ { uint hist[]; };   // [ROWS, 256]
layout(set = 0, binding = 5) buffer C_ { uint cand[]; };   // [ROWS, KMAX, 2]: key high word, index
layout(set = 0, binding = 6) buffer R_ { uint rank_[]; };  // [ROWS, KMAX]
layout(constant_id = 0) const uint ROWS_SC = 1;  // OUTER * INNER
layout(constant_id = 1) const uint L_SC = 1;
layout(constant_id = 2) const uint INNER_SC = 1;
layout(constant_id = 3) const uint K_SC = 1;
layout(constant_id = 4) const uint LARGEST = 1;
layout(constant_id = 5) const uint IN_FLOAT = 1;
layout(constant_id = 6) const uint PHASE = 0;
layout(constant_id = 7) const uint SHIFT = 24;    // decide: the digit's lowest bit
layout(constant_id = 8) const uint LO_WORD = 0;   // decide: 1 = the digit lies in the low word
layout(constant_id = 9) const uint LPAD = 4096;   // L at most, rounded up to 256 * PER
layout(constant_id = 10) const uint KMAX = 1;     // K at most
layout(constant_id = 11) const uint LO_MASK = 255u;
layout(constant_id = 12) const uint BLOCK = 1;    // rank: candidates per invocation
layout(constant_id = 13) const uint NBLOCKS = 1;  // rank: ceil(KMAX / BLOCK)
#include "params.glsl"
#include "common.glsl"
#define ROWS PARAM_U(ROWS_SC)
#define L PARAM_U(L_SC)
#define INNER PARAM_U(INNER_SC)
#define KTAKE min(PARAM_U(K_SC), L)
#define PER 16u  // positions per invocation in the histogram and gather phases

#include "float_order.glsl"
uint key_high(uint w) {
  uint k;
  if (IN_FLOAT != 0u) {
    // On the bits (float_order.glsl): subnormals keep their order where a
    // driver flushes them in comparisons; -0 == +0.
    k = f_is_nan(w) ? 0xFFFFFFFFu : f_order_key(w);
  } else {
    k = w ^ 0x80000000u;
  }
  return LARGEST != 0u ? k : ~k;
}
uint x_pos(uint row, uint t) { return (row / INNER) * L * INNER + t * INNER + row % INNER; }
// Whether the bits of `k` above bit `shift + 8` equal those of `p`.
bool above_match(uint k, uint p, uint shift) { return shift >= 24u || (k >> (shift + 8u)) == (p >> (shift + 8u)); }

void main() {
  const uint i = linear_index_256();
  if (PHASE == 0u) {  // one invocation per (row, bin)
    const uint row = i / 256u;
    if (row >= ROWS) return;
    hist[i] = 0u;
    if (i % 256u == 0u) {
      state[row * 4u] = 0u;
      state[row * 4u + 1u] = 0u;
      state[row * 4u + 2u] = KTAKE;
      state[row * 4u + 3u] = 0u;
    }
    return;
  }
  if (PHASE == 2u) {  // one invocation per row
    const uint row = i;
    if (row >= ROWS) return;
    const uint left = state[row * 4u + 2u];
    uint acc = 0u, d = 0u;
    for (uint j = 0u; j < 256u; ++j) {
      d = 255u - j;
      const uint c = hist[row * 256u + d];
      if (acc + c >= left) break;
      acc += c;
    }
    for (uint j = 0u; j < 256u; ++j) hist[row * 256u + j] = 0u;
    state[row * 4u + LO_WORD] |= d << SHIFT;
    state[row * 4u + 2u] = left - acc;
    return;
  }
  if (PHASE == 1u || PHASE == 3u) {  // PER positions per invocation, 256 * PER per workgroup
    const uint row = i / (LPAD / PER), lid = gl_LocalInvocationID.x;
    if (row >= ROWS) return;
    const uint t0 = (i % (LPAD / PER) - lid) * PER + lid;
    const uint ph = state[row * 4u], pl = state[row * 4u + 1u];
    for (uint e = 0u; e < PER; ++e) {
      const uint t = t0 + e * 256u;
      if (t >= L) break;
      const uint hi = key_high(x[x_pos(row, t)]), lo = LO_MASK - t;
      if (PHASE == 3u) {
        if (hi > ph || (hi == ph && lo >= pl)) {
          const uint slot = atomicAdd(state[row * 4u + 3u], 1u);
          if (slot < KMAX) {
            cand[(row * KMAX + slot) * 2u] = hi;
            cand[(row * KMAX + slot) * 2u + 1u] = t;
            rank_[row * KMAX + slot] = 0u;
          }
        }
        continue;
      }
      // The digits found so far decide which elements still count.
      if (LO_WORD == 0u ? above_match(hi, ph, SHIFT) : hi == ph && above_match(lo, pl, SHIFT))
        atomicAdd(hist[row * 256u + (((LO_WORD == 0u ? hi : lo) >> SHIFT) & 255u)], 1u);
    }
    return;
  }
  if (PHASE == 4u) {
    const uint per_row = KMAX * NBLOCKS;
    const uint row = i / per_row, b = (i % per_row) / KMAX, c = i % KMAX;
    const uint n = KTAKE;
    if (row >= ROWS || c >= n) return;
    const uint base = row * KMAX;
    const uint hi = cand[(base + c) * 2u], t = cand[(base + c) * 2u + 1u];
    uint higher = 0u;
    const uint end = min(b * BLOCK + BLOCK, n);
    for (uint j = b * BLOCK; j < end; ++j) {
      const uint oh = cand[(base + j) * 2u], ot = cand[(base + j) * 2u + 1u];
      if (oh > hi || (oh == hi && ot < t)) ++higher;
    }
    if (higher != 0u) atomicAdd(rank_[base + c], higher);
    return;
  }
  // PHASE 5
  const uint row = i / KMAX, c = i % KMAX;
  if (row >= ROWS || c >= KTAKE) return;
  const uint t = cand[(row * KMAX + c) * 2u + 1u];
  const uint r = rank_[row * KMAX + c];
  const uint out_ = ((row / INNER) * PARAM_U(K_SC) + r) * INNER + row % INNER;
  vals[out_] = x[x_pos(row, t)];
  inds[out_] = int(t);
}
