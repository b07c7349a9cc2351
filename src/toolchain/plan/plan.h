// Static memory plan: liveness-based arena offsets (256-aligned, greedy by
// size), packed weights (and their binary16 copies), I/O offsets, and
// barriers from real hazards.
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
  // Buffer kind 4 (tensor weights_f16, feature device_variants): the
  // kWeightsF16 values at 256-aligned offsets, in order of first use by a
  // GPU-class row; empty when the program has none.
  uint64_t weights_f16_bytes = 0;
  std::vector<uint8_t> weights_f16;
  std::vector<uint8_t> barrier;       // one per dispatch
  // BarrierLowerBound of the program with this plan's offsets.
  uint32_t barrier_lower_bound = 0;
};

// [first, last] dispatch indices touching value `v` in any dispatch table
// (first = -1 if none). The tables bind the same values except the GPU-class
// rows' kWeightsF16 copies, so arena lifetimes hold for every table. A value
// that the segment program reads back (Program::control) lives to the end of
// the segment run before the read. Dispatch order is the segments' order, so
// a value live from before an If's branches to after them spans both
// branches' rows and never shares bytes with either branch's values.
struct Lifetime { int first = -1, last = -1; };
std::vector<Lifetime> ComputeLifetimes(const Program& p);

// Barrier before dispatch d when it reads or writes a byte range written by a
// dispatch since the last barrier (RAW, WAW), or writes a range read since
// the last barrier (WAR: arena reuse must not overtake a pending reader).
std::vector<uint8_t> ComputeBarriers(const Program& p);

// The fewest barriers any order of the dispatches could need with the same
// byte ranges (the memory plan's offsets): the longest chain of hazards
// (RAW, WAW, WAR between two dispatches, as in ComputeBarriers) minus one,
// since a chain of n dependent dispatches needs n - 1 barriers and a
// level-by-level order needs no more. ComputeBarriers' count minus this is
// the number of barriers a reordering could avoid (0 when the program order
// already runs every independent dispatch between the same two barriers).
uint32_t BarrierLowerBound(const Program& p);

// Assigns Value::offset for every value and packs the weights and their
// binary16 copies. Fails (ResourceExhausted, naming the tensor, the node and
// the limit) when a binding is larger than ConversionLimits::
// max_binding_bytes (ir/limits.h).
StatusOr<MemoryPlan> PlanMemory(Program& p);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_PLAN_PLAN_H_
