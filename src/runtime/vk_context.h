// Vulkan instance + device for the runtime, and the single VkResult→Status helper.
#ifndef OAAXVK_RUNTIME_VK_CONTEXT_H_
#define OAAXVK_RUNTIME_VK_CONTEXT_H_

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "oaax_vulkan/status.h"
#include "runtime/spirv_float_controls.h"

namespace oaaxvk::runtime {

// "VK_ERROR_DEVICE_LOST", "VK_TIMEOUT", … ("VkResult(<n>)" when unknown).
const char* VkResultName(VkResult result);

// The one place a VkResult becomes a Status: OK for VK_SUCCESS, otherwise an
// error naming `call` and the result, e.g. "vkQueueSubmit failed:
// VK_ERROR_DEVICE_LOST". Device loss → kUnavailable, out-of-memory →
// kResourceExhausted, VK_TIMEOUT → kDeadlineExceeded, others → kInternal.
Status VkCheck(VkResult result, const char* call);

// The float-controls execution modes a device lets every kernel declare
// (docs/runtime.md "Float controls"), from its
// VkPhysicalDeviceFloatControlsProperties: SignedZeroInfNanPreserve for each
// width shaderSignedZeroInfNanPreserveFloat<N> allows; DenormPreserve for
// each width shaderDenormPreserveFloat<N> allows, within what
// denormBehaviorIndependence lets differ between widths: all widths
// independently (INDEPENDENCE_ALL); 32 on its own and 16 and 64 only
// together (32_BIT_ONLY: the other widths must be set identically); all
// three together or none (NONE, and any value this runtime does not know).
FloatControls FloatControlsFor(const VkPhysicalDeviceFloatControlsProperties& props);

struct ContextOptions {
  std::string device;        // "" (auto), an index, or a name substring
  bool validation = false;   // enable VK_LAYER_KHRONOS_validation when present
  // Enable VK_KHR_pipeline_executable_properties (and its
  // pipelineExecutableInfo feature) when the device has it, so pipelines
  // created with VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR report the
  // driver's statistics (registers, spills, ...). For the measuring tool
  // oaaxvk-pipeline-stats (bench/pipeline_stats); the runtime leaves it off.
  bool pipeline_statistics = false;
};

class VkContext {
 public:
  static StatusOr<std::unique_ptr<VkContext>> Create(const ContextOptions& options);
  ~VkContext();
  VkContext(const VkContext&) = delete;
  VkContext& operator=(const VkContext&) = delete;

  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  const VkPhysicalDeviceProperties& properties() const { return properties_; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const { return memory_; }
  bool validation_enabled() const { return validation_enabled_; }
  bool robust_buffer_access() const { return robust_buffer_access_; }
  bool storage_buffer_16bit() const { return storage_16bit_; }
  bool shader_float16() const { return shader_float16_; }
  // VkPhysicalDeviceSubgroupProperties (Vulkan 1.1 core), queried at Create.
  const VkPhysicalDeviceSubgroupProperties& subgroup_properties() const { return subgroup_; }
  // The device capabilities kernels may require (bundle feature
  // device_variants, `kernel.<j>.requires`; docs/bundle-format.md
  // "Device-specific variants") that this device has:
  // "storageBuffer16BitAccess" (the feature, enabled at device creation) and
  // "subgroupArithmetic" (supportedStages has COMPUTE, supportedOperations
  // has BASIC and ARITHMETIC), "sharedMemory32KiB"
  // (maxComputeSharedMemorySize >= 32768), "shaderFloat16" (the feature,
  // enabled at device creation), "vulkanMemoryModel"
  // (VK_KHR_vulkan_memory_model and its feature, both enabled at device
  // creation when listed),
  // "cooperativeMatrixNV16x16x16f16f32" (VK_NV_cooperative_matrix and its
  // feature, enabled at device creation only when the device lists them; the
  // 16 x 16 x 16 f16 x f16 + f32 shape at subgroup scope, compute among its
  // stages, subgroups of 32).
  const std::set<std::string>& capabilities() const { return capabilities_; }
  // The float-controls modes every kernel's module declares on this device
  // (VK_KHR_shader_float_controls, enabled at device creation when the
  // device lists it and supports any of the modes); empty without.
  const FloatControls& float_controls() const { return float_controls_; }
  // Why float_controls() is empty ("" when it is not), for the log.
  const std::string& float_controls_missing() const { return float_controls_missing_; }
  // Whether ContextOptions::pipeline_statistics asked for and the device
  // has VK_KHR_pipeline_executable_properties (enabled with its feature).
  bool pipeline_statistics() const { return pipeline_statistics_; }
  // VkPhysicalDeviceMaintenance3Properties::maxMemoryAllocationSize (Vulkan
  // 1.1 core): the largest single allocation.
  uint64_t max_memory_allocation_size() const { return max_allocation_; }
  std::string device_name() const { return properties_.deviceName; }

  // A memory type index allowed by `type_bits` having all of `required`
  // flags, preferring one that also has `preferred`; -1 when none.
  int FindMemoryType(uint32_t type_bits, VkMemoryPropertyFlags required,
                     VkMemoryPropertyFlags preferred = 0) const;

  // Validation-layer messages recorded so far (warnings and errors).
  std::vector<std::string> validation_messages() const;
  void RecordValidationMessage(std::string message);

 private:
  VkContext() = default;
  Status Init(const ContextOptions& options);

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkPhysicalDeviceProperties properties_{};
  VkPhysicalDeviceMemoryProperties memory_{};
  bool validation_enabled_ = false;
  bool robust_buffer_access_ = false;
  bool storage_16bit_ = false;
  bool shader_float16_ = false;
  VkPhysicalDeviceSubgroupProperties subgroup_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  std::set<std::string> capabilities_;
  FloatControls float_controls_;
  std::string float_controls_missing_;
  bool pipeline_statistics_ = false;
  uint64_t max_allocation_ = UINT64_MAX;
  mutable std::mutex messages_mutex_;
  std::vector<std::string> messages_;
};

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_VK_CONTEXT_H_
