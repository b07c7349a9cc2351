// The Vulkan calls through which the runtime learns that a frame or the
// device failed (vkQueueSubmit, vkWaitForFences), behind one seam so that
// tests can make them fail. In the ordinary library they are the Vulkan
// calls. In the test build (CMake target RuntimeLibraryFaultInjection, which
// defines OAAXVK_FAULT_INJECTION for fault_injection.cpp) the environment
// variable OAAXVK_INJECT_FAULT = "<call>:<result>" makes them return an error
// without calling Vulkan: <call> is "submit", "wait" or "all", <result>
// "lost" (VK_ERROR_DEVICE_LOST) or "oom" (VK_ERROR_OUT_OF_HOST_MEMORY).
// "send:throw" makes send_input throw std::bad_alloc once it holds a frame
// slot (host memory running out mid-send). The variable is read at every
// call, so a test sets and unsets it between calls. In the same build,
// OAAXVK_INJECT_MAX_ALLOCATION = <bytes> lowers the device's
// maxMemoryAllocationSize as the runtime sees it at model loading, so tests
// place small buffers in several allocations. "matrix:standin" and
// "matrix:wrong" stand in for a cooperative-matrix device at model loading
// (InjectedMatrixStandIn). No other build reads any of these.
#ifndef OAAXVK_RUNTIME_FAULT_INJECTION_H_
#define OAAXVK_RUNTIME_FAULT_INJECTION_H_

#include <vulkan/vulkan.h>

#include <cstdint>

namespace oaaxvk::runtime {

VkResult QueueSubmit(VkQueue queue, uint32_t count, const VkSubmitInfo* submits, VkFence fence);
VkResult WaitForFences(VkDevice device, uint32_t count, const VkFence* fences, VkBool32 wait_all, uint64_t timeout_ns);
// Throws std::bad_alloc when "<where>:throw" is injected; nothing otherwise.
void MaybeThrowInjected(const char* where);
// The device's maxMemoryAllocationSize, or the smaller injected one.
uint64_t MaxAllocationBytes(uint64_t device_value);
// The load-time check of cooperative-matrix kernels (matrix_check.h) on a
// device without matrix units: kStandIn makes the runtime treat the device
// as having the matrix kernels' capabilities and run each matrix kernel's
// fp16 precision form in its place (a correct kernel: the check keeps it);
// kWrong does the same with a deliberate error in the checked run (the bias
// left out: the check drops it). kNone (always, outside the test build).
enum class MatrixStandIn { kNone, kStandIn, kWrong };
MatrixStandIn InjectedMatrixStandIn();

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_FAULT_INJECTION_H_
