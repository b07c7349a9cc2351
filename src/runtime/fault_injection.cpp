#include "runtime/fault_injection.h"

#include <cstdlib>
#include <cstring>

// The ordinary library links this file from oaaxvk_rt_core with weak
// definitions; the fault-injection library compiles it again with
// OAAXVK_FAULT_INJECTION, and its strong definitions take precedence.
#ifdef OAAXVK_FAULT_INJECTION
#define OAAXVK_FAULT_SEAM
#else
#define OAAXVK_FAULT_SEAM __attribute__((weak))
#endif

namespace oaaxvk::runtime {

namespace {

#ifdef OAAXVK_FAULT_INJECTION
bool DeviceLossInjected(const char* call) {
  const char* e = getenv("OAAXVK_INJECT_DEVICE_LOST");
  return e && (strcmp(e, call) == 0 || strcmp(e, "all") == 0);
}
#else
bool DeviceLossInjected(const char*) { return false; }
#endif

}  // namespace

OAAXVK_FAULT_SEAM VkResult QueueSubmit(VkQueue queue, uint32_t count, const VkSubmitInfo* submits, VkFence fence) {
  if (DeviceLossInjected("submit")) return VK_ERROR_DEVICE_LOST;
  return vkQueueSubmit(queue, count, submits, fence);
}

OAAXVK_FAULT_SEAM VkResult WaitForFences(VkDevice device, uint32_t count, const VkFence* fences, VkBool32 wait_all,
                                         uint64_t timeout_ns) {
  if (DeviceLossInjected("wait")) return VK_ERROR_DEVICE_LOST;
  return vkWaitForFences(device, count, fences, wait_all, timeout_ns);
}

}  // namespace oaaxvk::runtime
