// Per-dispatch GPU timing (runtime argument profile=1): whether the device
// can time dispatches, and the log of one completed frame's timestamps (a
// timestamp query before and after every dispatch, two per dispatch in one
// VkQueryPool per frame slot, written by the recorded command buffer).
#ifndef OAAXVK_RUNTIME_PROFILING_H_
#define OAAXVK_RUNTIME_PROFILING_H_

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <vector>

#include "runtime/bundle.h"
#include "runtime/vk_context.h"

namespace oaaxvk::runtime {

class DispatchProfiler {
 public:
  // Decides whether profiling runs: the profile is logged at info level, and
  // the queue family needs timestamps (logs a warning when either is
  // missing, then stays disabled).
  void SetUp(VkContext* ctx);
  // Profiling was requested and is available (SetUp enabled it).
  bool enabled() const { return enabled_; }
  // Reads the 2 * bundle.dispatches.size() timestamps of `queries` (frame
  // #`seq` has completed; `groups`: its group counts per dispatch) and logs
  // the per-dispatch times, the slowest dispatches and the per-kernel totals
  // at info level. A failed read is logged as a warning.
  void LogFrame(VkDevice dev, const Bundle& bundle, VkQueryPool queries,
                const std::vector<std::array<uint32_t, 3>>& groups, uint64_t seq) const;

 private:
  bool enabled_ = false;
  uint64_t timestamp_mask_ = 0;       // timestampValidBits as a mask
  double timestamp_period_ns_ = 1.0;  // VkPhysicalDeviceLimits::timestampPeriod
};

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_PROFILING_H_
