#include "runtime/fault_injection.h"

#include <cstdlib>
#include <cstring>
#include <new>

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
// OAAXVK_INJECT_FAULT = "<call>:<result>" (fault_injection.h).
VkResult Injected(const char* call) {
  const char* e = getenv("OAAXVK_INJECT_FAULT");
  if (!e) return VK_SUCCESS;
  const char* colon = strchr(e, ':');
  if (!colon) return VK_SUCCESS;
  const size_t n = static_cast<size_t>(colon - e);
  if (!((strlen(call) == n && strncmp(e, call, n) == 0) || (n == 3 && strncmp(e, "all", 3) == 0))) return VK_SUCCESS;
  if (strcmp(colon + 1, "lost") == 0) return VK_ERROR_DEVICE_LOST;
  if (strcmp(colon + 1, "oom") == 0) return VK_ERROR_OUT_OF_HOST_MEMORY;
  return VK_SUCCESS;
}
bool ThrowInjected(const char* where) {
  const char* e = getenv("OAAXVK_INJECT_FAULT");
  const size_t n = strlen(where);
  return e && strncmp(e, where, n) == 0 && strcmp(e + n, ":throw") == 0;
}
#else
VkResult Injected(const char*) { return VK_SUCCESS; }
bool ThrowInjected(const char*) { return false; }
#endif

}  // namespace

OAAXVK_FAULT_SEAM VkResult QueueSubmit(VkQueue queue, uint32_t count, const VkSubmitInfo* submits, VkFence fence) {
  if (VkResult r = Injected("submit"); r != VK_SUCCESS) return r;
  return vkQueueSubmit(queue, count, submits, fence);
}

OAAXVK_FAULT_SEAM VkResult WaitForFences(VkDevice device, uint32_t count, const VkFence* fences, VkBool32 wait_all,
                                         uint64_t timeout_ns) {
  if (VkResult r = Injected("wait"); r != VK_SUCCESS) return r;
  return vkWaitForFences(device, count, fences, wait_all, timeout_ns);
}

OAAXVK_FAULT_SEAM void MaybeThrowInjected(const char* where) {
  if (ThrowInjected(where)) throw std::bad_alloc();
}

OAAXVK_FAULT_SEAM uint64_t MaxAllocationBytes(uint64_t device_value) {
#ifdef OAAXVK_FAULT_INJECTION
  // OAAXVK_INJECT_MAX_ALLOCATION = <bytes> (fault_injection.h).
  if (const char* e = getenv("OAAXVK_INJECT_MAX_ALLOCATION")) {
    const unsigned long long v = strtoull(e, nullptr, 10);
    if (v > 0 && v < device_value) return v;
  }
#endif
  return device_value;
}

OAAXVK_FAULT_SEAM MatrixStandIn InjectedMatrixStandIn() {
#ifdef OAAXVK_FAULT_INJECTION
  if (const char* e = getenv("OAAXVK_INJECT_FAULT")) {
    if (strcmp(e, "matrix:standin") == 0) return MatrixStandIn::kStandIn;
    if (strcmp(e, "matrix:wrong") == 0) return MatrixStandIn::kWrong;
  }
#endif
  return MatrixStandIn::kNone;
}

}  // namespace oaaxvk::runtime
