// Writes a planned program as a bundle (docs/bundle-format.md, format_version 1).
#ifndef OAAXVK_TOOLCHAIN_BUNDLE_BUNDLE_WRITER_H_
#define OAAXVK_TOOLCHAIN_BUNDLE_BUNDLE_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "oaax_vulkan/oinf.h"
#include "toolchain/plan/plan.h"

namespace oaaxvk::toolchain {

constexpr uint32_t kBundleFormatVersion = 1;
constexpr const char* kBundleFormat = "oaax-vulkan-bundle";

struct BundleInfo {
  std::string model_name;  // ONNX graph name (UTF-8)
  int64_t opset = 0;
  std::string producer;    // e.g. "oaax-vulkan-toolchain-0.1.0"
};

// Summary of what was written (for the conversion log).
struct BundleSummary {
  uint32_t kernels = 0, dispatches = 0, barriers = 0, pipelines = 0;
  uint32_t max_workgroup_invocations = 0, max_shared_memory_bytes = 0, max_workgroup_count = 0;
  uint64_t max_storage_buffer_range = 0;
};

// Fills `w` with every bundle entry. Fails on inconsistent programs
// (binding/spec counts not matching the kernel table, missing SPIR-V).
Status BuildBundle(const Program& p, const MemoryPlan& plan, const BundleInfo& info, oinf::Writer* w,
                   BundleSummary* summary = nullptr);

// BuildBundle + Serialize.
StatusOr<std::vector<uint8_t>> SerializeBundle(const Program& p, const MemoryPlan& plan, const BundleInfo& info,
                                               BundleSummary* summary = nullptr);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_BUNDLE_BUNDLE_WRITER_H_
