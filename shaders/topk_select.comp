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
//   0 init      one invocation per (row, bin): the header, each row's
//               state {T high, T low, K left, taken, digit}, histogram
//               cleared;
//   1 histogram one invocation per (row, PER positions < LPAD): atomic
//               add to the row's histogram of the row's current digit;
//   2 decide    one invocation per row: picks the digit, clears the
//               histogram (512 iterations), moves to the next digit;
//   3 gather    one invocation per (row, PER positions): keys >= T take a
//               slot;
//   4 rank      one invocation per (row, block, candidate): counts the
//               higher keys among BLOCK candidates (atomic add to its rank);
//   5 write     one invocation per (row, candidate).
// Only init reads ROWS, L and K from the specialization constants; it
// copies them into the state's header, where the other phases read them.
// Those sizes are often extents only the device knows (parameter-buffer
// slots, a different slot per TopK), and the digit each histogram and
// decide works on is the row's state too, so the other phases' constants
// are the same for every digit and for every TopK of the same planned
// sizes: one pipeline each (the toolchain writes 0 into their ROWS, L and
// K), where slot numbers and digits as constants made a pipeline per
// dispatch. INNER stays a constant: x_pos divides by it, and a static
// INNER folds that division away.
// No invocation loops more than max(512, BLOCK) times, whatever L is. No
// shared memory and no barriers: a barrier anywhere in a shader makes
// SwiftShader run every dispatch of it as coroutines, many times slower.
// Values/Indices viewed as [OUTER, K, INNER]; indices int32.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer V_ { uint vals[]; };
layout(set = 0, binding = 2) writeonly buffer I_ { int inds[]; };
layout(set = 0, binding = 3) buffer S_ { uint state[]; };  // header [4], then [ROWS, 8]
layout(set = 0, binding = 4) buffer H_ { uint hist[]; };   // [ROWS, 256]
layout(set = 0, binding = 5) buffer C_ { uint cand[]; };   // [ROWS, KMAX, 2]: key high word, index
layout(set = 0, binding = 6) buffer R_ { uint rank_[]; };  // [ROWS, KMAX]
layout(constant_id = 0) const uint ROWS_SC = 1;  // OUTER * INNER (init only)
layout(constant_id = 1) const uint L_SC = 1;     // init only
layout(constant_id = 2) const uint INNER_SC = 1;
layout(constant_id = 3) const uint K_SC = 1;  // init only
layout(constant_id = 4) const uint LARGEST = 1;
layout(constant_id = 5) const uint IN_FLOAT = 1;
layout(constant_id = 6) const uint PHASE = 0;
layout(constant_id = 7) const uint LPAD = 4096;   // L at most, rounded up to 256 * PER
layout(constant_id = 8) const uint KMAX = 1;      // K at most
layout(constant_id = 9) const uint LO_DIGITS = 1; // 8-bit digits of the largest index (1 to 4)
layout(constant_id = 10) const uint BLOCK = 1;    // rank: candidates per invocation
layout(constant_id = 11) const uint NBLOCKS = 1;  // rank: ceil(KMAX / BLOCK)
const uint LO_MASK = 0xFFFFFFFFu >> (32u - 8u * LO_DIGITS);  // the largest index fits
#include "params.glsl"
#include "common.glsl"
#define INNER PARAM_U(INNER_SC)
#define PER 16u  // positions per invocation in the histogram and gather phases
// State header: the sizes init copied from its constants.
#define H_ROWS 0u
#define H_L 1u
#define H_K 2u
#define HDR 4u
// Row state: HDR + row * 8 + {0 T high, 1 T low, 2 K left, 3 taken, 4 digit}.
uint row_state(uint row) { return HDR + row * 8u; }

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
// Where the row's element t lies in X: row_base(row) + t * INNER.
uint row_base(uint row, uint l) { return (row / INNER) * l * INNER + row % INNER; }
// Whether the bits of `k` above bit `shift + 8` equal those of `p`.
bool above_match(uint k, uint p, uint shift) { return shift >= 24u || (k >> (shift + 8u)) == (p >> (shift + 8u)); }
// Digit `digit` of the key, from the top: 4 of the high word, then
// LO_DIGITS of the low word. Its lowest bit and whether it lies in the low word.
uint digit_shift(uint digit) { return digit < 4u ? 24u - 8u * digit : 8u * (LO_DIGITS - 1u - (digit - 4u)); }

void main() {
  const uint i = linear_index_256();
  if (PHASE == 0u) {  // one invocation per (row, bin)
    const uint rows = PARAM_U(ROWS_SC), l = PARAM_U(L_SC), k = PARAM_U(K_SC);
    // Before the row test: with no rows the later phases still read the
    // header (and find no rows).
    if (i == 0u) {
      state[H_ROWS] = rows;
      state[H_L] = l;
      state[H_K] = k;
    }
    const uint row = i / 256u;
    if (row >= rows) return;
    hist[i] = 0u;
    if (i % 256u == 0u) {
      const uint s = row_state(row);
      state[s] = 0u;
      state[s + 1u] = 0u;
      state[s + 2u] = min(k, l);
      state[s + 3u] = 0u;
      state[s + 4u] = 0u;
    }
    return;
  }
  const uint rows = state[H_ROWS], l = state[H_L], k = state[H_K], ktake = min(k, l);
  if (PHASE == 2u) {  // one invocation per row
    const uint row = i;
    if (row >= rows) return;
    const uint s = row_state(row);
    const uint left = state[s + 2u], digit = state[s + 4u];
    uint acc = 0u, d = 0u;
    for (uint j = 0u; j < 256u; ++j) {
      d = 255u - j;
      const uint c = hist[row * 256u + d];
      if (acc + c >= left) break;
      acc += c;
    }
    for (uint j = 0u; j < 256u; ++j) hist[row * 256u + j] = 0u;
    state[s + (digit < 4u ? 0u : 1u)] |= d << digit_shift(digit);
    state[s + 2u] = left - acc;
    state[s + 4u] = digit + 1u;
    return;
  }
  if (PHASE == 1u || PHASE == 3u) {  // PER positions per invocation, 256 * PER per workgroup
    const uint row = i / (LPAD / PER), lid = gl_LocalInvocationID.x;
    if (row >= rows) return;
    const uint t0 = (i % (LPAD / PER) - lid) * PER + lid;
    const uint s = row_state(row);
    const uint ph = state[s], pl = state[s + 1u], base = row_base(row, l);
    const uint digit = state[s + 4u], shift = digit_shift(digit);
    const bool lo_word = digit >= 4u;
    for (uint e = 0u; e < PER; ++e) {
      const uint t = t0 + e * 256u;
      if (t >= l) break;
      const uint hi = key_high(x[base + t * INNER]), lo = LO_MASK - t;
      if (PHASE == 3u) {
        if (hi > ph || (hi == ph && lo >= pl)) {
          const uint slot = atomicAdd(state[s + 3u], 1u);
          if (slot < KMAX) {
            cand[(row * KMAX + slot) * 2u] = hi;
            cand[(row * KMAX + slot) * 2u + 1u] = t;
            rank_[row * KMAX + slot] = 0u;
          }
        }
        continue;
      }
      // The digits found so far decide which elements still count.
      if (!lo_word ? above_match(hi, ph, shift) : hi == ph && above_match(lo, pl, shift))
        atomicAdd(hist[row * 256u + (((!lo_word ? hi : lo) >> shift) & 255u)], 1u);
    }
    return;
  }
  if (PHASE == 4u) {
    const uint per_row = KMAX * NBLOCKS;
    const uint row = i / per_row, b = (i % per_row) / KMAX, c = i % KMAX;
    const uint n = ktake;
    if (row >= rows || c >= n) return;
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
  if (row >= rows || c >= ktake) return;
  const uint t = cand[(row * KMAX + c) * 2u + 1u];
  const uint r = rank_[row * KMAX + c];
  const uint out_ = ((row / INNER) * k + r) * INNER + row % INNER;
  vals[out_] = x[row_base(row, l) + t * INNER];
  inds[out_] = int(t);
}
