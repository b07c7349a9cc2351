// The kernel table: for every shader, its binding count, specialization
// constant count, local size and shared-memory use. Must match shaders/*.comp.
#ifndef OAAXVK_TOOLCHAIN_LOWER_KERNELS_H_
#define OAAXVK_TOOLCHAIN_LOWER_KERNELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "oaax_vulkan/status.h"

namespace oaaxvk::toolchain {

struct KernelInfo {
  std::string name;
  uint32_t bindings = 0;        // set 0, bindings 0..B-1
  uint32_t spec_constants = 0;  // constant_id 0..S-1
  uint32_t local_size[3] = {1, 1, 1};
  uint32_t shared_bytes = 0;
  std::vector<uint32_t> written_bindings;  // bindings the kernel writes
  // Descriptor type of each binding (bundle metadata kernel.<j>.binding_types,
  // feature texel_bindings; docs/bundle-format.md "Texel-buffer bindings"):
  // one letter per binding, empty = all 's'.
  //   's' storage buffer (GLSL `buffer`)
  //   'v' uniform texel buffer viewed as R32G32B32A32_SFLOAT (GLSL
  //       `uniform samplerBuffer`; texelFetch(t, i) = elements 4i..4i+3 of the
  //       binding; the view covers the binding rounded up to 16 bytes)
  //   'f' uniform texel buffer viewed as R32_SFLOAT (texelFetch(t, i).x =
  //       element i of the binding)
  //   'u' uniform texel buffer viewed as R32_UINT (GLSL `uniform
  //       usamplerBuffer`; texelFetch(t, i).x = 32-bit word i, bits unchanged)
  std::string binding_types{};
  // Device capabilities a dispatch row using this kernel needs (bundle
  // metadata kernel.<j>.requires, joined by '-'; feature device_variants,
  // docs/bundle-format.md "Device-specific variants"): empty = none. Only
  // kernels of program.dispatch.gpu rows have any; names are those of the
  // contract's capability table (kCapability* below). (Not called `requires`:
  // that is a C++20 keyword.)
  std::vector<std::string> required_capabilities{};
  // A GPU-row kernel that reads weights_f16 (buffer kind 4): the kernel with
  // the same bindings, spec constants and grid that reads those bindings as
  // fp32 from the weights buffer (bundle metadata kernel.<j>.fp32_kernel). The
  // runtime runs the row with it when the host has not opted in to binary16
  // weights (runtime argument fp16_weights); empty = none.
  std::string fp32_kernel{};
  // A GPU-row fp32 kernel's fp16 precision form (bundle metadata
  // kernel.<j>.fp16_kernel): same bindings, spec constants and grid, binary16
  // operands in shared memory, fp32 sums; the runtime runs it under the
  // runtime argument precision=fp16. Empty = none.
  std::string fp16_kernel{};
  // An fp16 precision form's cooperative-matrix form (bundle metadata
  // kernel.<j>.matrix_kernel): same bindings, spec constants and grid, run
  // instead under precision=fp16 on a device with its capabilities once it
  // passes the runtime's load-time check. Empty = none.
  std::string matrix_kernel{};
  const uint32_t* spirv = nullptr;
  size_t spirv_words = 0;
  // Derived from the SPIR-V when the table is built (bundle feature
  // parameter_buffer, docs/bundle-format.md "Parameter buffer"):
  // bit k set = specialization constant k is a size the kernel reads through
  // PARAM_U (shaders/params.glsl: its OpName ends in "_SC"), so a shape-
  // dependent value may be given as the marker kParamMarker | slot instead of
  // specializing the pipeline per shape.
  uint64_t param_constants = 0;
  // The module declares the parameter buffer (set 1, binding 0).
  bool parameter_buffer = false;
};

// Marker of a parameter-buffer slot in a specialization value
// (shaders/params.glsl): (value & 0xFFFF0000) == kParamMarker, slot = value &
// 0xFFFF (< kMaxParamSlots).
inline constexpr uint32_t kParamMarker = 0x7FFF0000u;
inline constexpr uint32_t kMaxParamSlots = 4096;  // uvec4 params_v4[1024]

// Capability names of kernel.<j>.requires (docs/bundle-format.md,
// "Device-specific variants"): VkPhysicalDevice16BitStorageFeatures::
// storageBuffer16BitAccess, subgroup BASIC + ARITHMETIC operations in the
// compute stage, and maxComputeSharedMemorySize >= 32768 (a kernel requiring
// it may use up to 32 KiB of shared memory; it is left out of
// device.max_shared_memory_bytes, which covers the rows every device runs).
inline constexpr const char* kCapabilityStorage16 = "storageBuffer16BitAccess";
inline constexpr const char* kCapabilitySubgroupArithmetic = "subgroupArithmetic";
inline constexpr const char* kCapabilitySharedMemory32KiB = "sharedMemory32KiB";
// VkPhysicalDeviceShaderFloat16Int8Features::shaderFloat16 (binary16 values
// in shared memory and registers).
inline constexpr const char* kCapabilityFloat16 = "shaderFloat16";
// VkPhysicalDeviceVulkanMemoryModelFeatures::vulkanMemoryModel (a
// cooperative-matrix module uses the Vulkan memory model).
inline constexpr const char* kCapabilityVulkanMemoryModel = "vulkanMemoryModel";
// VK_NV_cooperative_matrix with its cooperativeMatrix feature, a 16 x 16 x 16
// subgroup-scope shape of binary16 A and B and fp32 C and D, compute among
// cooperativeMatrixSupportedStages, and subgroups of 32 invocations.
inline constexpr const char* kCapabilityCoopMatNV = "cooperativeMatrixNV16x16x16f16f32";

const std::vector<KernelInfo>& Kernels();
// nullptr when unknown.
const KernelInfo* FindKernel(const std::string& name);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_LOWER_KERNELS_H_
