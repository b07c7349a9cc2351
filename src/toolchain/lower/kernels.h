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
  const uint32_t* spirv = nullptr;
  size_t spirv_words = 0;
};

const std::vector<KernelInfo>& Kernels();
// nullptr when unknown.
const KernelInfo* FindKernel(const std::string& name);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_LOWER_KERNELS_H_
