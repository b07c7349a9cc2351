// Static memory plan: liveness-based arena offsets (256-aligned, greedy by
// size), packed weights, I/O offsets, and barriers from real hazards.
#ifndef OAAXVK_TOOLCHAIN_PLAN_PLAN_H_
#define OAAXVK_TOOLCHAIN_PLAN_PLAN_H_

#include <cstdint>
#include <vector>

#include "toolchain/lower/lower.h"

namespace oaaxvk::toolchain {

constexpr uint64_t kAlignment = 256;

struct MemoryPlan {
  uint64_t arena_bytes = 0, weights_bytes = 0, inputs_bytes = 0, outputs_bytes = 0;
  uint64_t arena_unshared_bytes = 0;  // sum of arena values (what no reuse would cost)
  std::vector<uint8_t> weights;       // weights_bytes bytes, zero padding between constants
  std::vector<uint8_t> barrier;       // one per dispatch
};

// [first, last] dispatch indices touching value `v` (first = -1 if none).
struct Lifetime { int first = -1, last = -1; };
std::vector<Lifetime> ComputeLifetimes(const Program& p);

// Barrier before dispatch d when it reads or writes a byte range written by a
// dispatch since the last barrier (RAW, WAW), or writes a range read since
// the last barrier (WAR: arena reuse must not overtake a pending reader).
std::vector<uint8_t> ComputeBarriers(const Program& p);

// Assigns Value::offset for every value and packs the weights.
StatusOr<MemoryPlan> PlanMemory(Program& p);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_PLAN_PLAN_H_
