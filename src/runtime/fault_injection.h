// The Vulkan calls through which the runtime learns that the device was lost
// (vkQueueSubmit, vkWaitForFences), behind one seam so that tests can make
// them fail. In the ordinary library they are the Vulkan calls. In the test
// build (CMake target RuntimeLibraryFaultInjection, which defines
// OAAXVK_FAULT_INJECTION for fault_injection.cpp) the environment variable
// OAAXVK_INJECT_DEVICE_LOST makes them report VK_ERROR_DEVICE_LOST without
// calling Vulkan: "submit" for vkQueueSubmit, "wait" for vkWaitForFences,
// "all" for both; read at every call, so a test sets and unsets it between
// calls. No other build reads the variable.
#ifndef OAAXVK_RUNTIME_FAULT_INJECTION_H_
#define OAAXVK_RUNTIME_FAULT_INJECTION_H_

#include <vulkan/vulkan.h>

#include <cstdint>

namespace oaaxvk::runtime {

VkResult QueueSubmit(VkQueue queue, uint32_t count, const VkSubmitInfo* submits, VkFence fence);
VkResult WaitForFences(VkDevice device, uint32_t count, const VkFence* fences, VkBool32 wait_all, uint64_t timeout_ns);

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_FAULT_INJECTION_H_
