// Parses and validates a bundle (docs/bundle-format.md, format_version 1)
// into plain structs. No Vulkan here: device limits are checked by
// CheckDeviceLimits against a plain struct of the device's values.
#ifndef OAAXVK_RUNTIME_BUNDLE_H_
#define OAAXVK_RUNTIME_BUNDLE_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "oaax_vulkan/oinf.h"
#include "oaax_vulkan/status.h"

namespace oaaxvk::runtime {

inline constexpr const char* kBundleFormat = "oaax-vulkan-bundle";
inline constexpr uint32_t kBundleFormatVersion = 1;
// Optional features a bundle may require (`bundle.features`, a space-separated
// list; docs/bundle-format.md "Required features"). A bundle requiring a
// feature not listed here is rejected at load, naming it.
inline const std::set<std::string> kKnownFeatures = {"bound_inputs", "kernel_variants", "texel_bindings"};
// kKnownFeatures as "a, b" ("none" when empty), for messages.
inline std::string KnownFeatureList() {
  std::string s;
  for (const std::string& f : kKnownFeatures) s += (s.empty() ? "" : ", ") + f;
  return s.empty() ? "none" : s;
}
inline constexpr uint64_t kBindingAlignment = 256;

enum BufferKind : uint32_t { kWeights = 0, kArena = 1, kInputs = 2, kOutputs = 3 };
inline constexpr uint32_t kBufferKinds = 4;

// Name of an OAAX tensor_data_type ("FLOAT", ...; "unknown" for undefined values).
// Its element size is oaaxvk::TensorElementSize (oaax_vulkan/tensors_util.h).
const char* OaaxDtypeName(uint32_t dtype);

struct IoDesc {
  std::string name;            // original ONNX name (UTF-8)
  uint32_t dtype = 0;          // OAAX tensor_data_type
  std::vector<uint64_t> shape; // static shape
  uint64_t offset = 0;         // in the inputs/outputs buffer
  uint64_t nbytes = 0;
  // Inputs only (feature `bound_inputs`): the value, nbytes bytes, the input
  // was bound to at conversion (config.json "input_values"); points into the
  // mapped file. NULL when the input is not bound.
  const uint8_t* bound = nullptr;
};

struct Kernel {
  std::string name;
  const uint32_t* spirv = nullptr;  // points into the mapped file
  size_t spirv_words = 0;
  uint32_t bindings = 0;
  uint32_t spec_constants = 0;
  // Feature texel_bindings (`kernel.<j>.binding_types`; docs/bundle-format.md
  // "Texel-buffer bindings"): the descriptor type of each binding, one letter
  // per binding — 's' storage buffer, 'v' uniform texel buffer viewed as
  // R32G32B32A32_SFLOAT, 'f' uniform texel buffer viewed as R32_SFLOAT, 'u'
  // uniform texel buffer viewed as R32_UINT.
  // Always `bindings` letters after parsing (all 's' when the entry is absent).
  std::string binding_types;
};

// Bytes a texel-buffer view of binding type `type` ('v', 'f' or 'u') covers
// for a binding of `size` bytes: `size` rounded up to the texel size (16 or 4).
uint64_t TexelViewBytes(char type, uint64_t size);

struct Binding {
  uint32_t kind = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct Dispatch {
  uint32_t kernel = 0;
  uint32_t groups[3] = {1, 1, 1};
  uint32_t first_binding = 0, n_bindings = 0;
  uint32_t first_spec = 0, n_spec = 0;
  bool barrier = false;
  uint32_t op = 0;
};

struct DeviceRequirements {
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_size[3] = {0, 0, 0};
  uint32_t max_shared_memory_bytes = 0;
  uint32_t max_workgroup_count = 0;
  uint64_t max_storage_buffer_range = 0;
  bool shader_float16 = false;
  bool storage_buffer_16bit = false;
};

// The device's values for the same limits (filled from VkPhysicalDevice*).
struct DeviceLimits {
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_size[3] = {0, 0, 0};
  uint32_t max_shared_memory_bytes = 0;
  uint32_t max_workgroup_count[3] = {0, 0, 0};
  uint64_t max_storage_buffer_range = 0;
  bool shader_float16 = false;
  bool storage_buffer_16bit = false;
  uint32_t max_storage_buffers_per_stage = 0;
  // Texel-buffer bindings (feature texel_bindings).
  uint32_t max_texel_buffer_elements = 0;           // maxTexelBufferElements
  uint64_t min_texel_buffer_offset_alignment = 1;   // minTexelBufferOffsetAlignment (bytes)
  uint32_t max_sampled_images_per_stage = 0;        // maxPerStageDescriptorSampledImages
  std::string device_name;
};

struct Bundle {
  std::unique_ptr<oinf::File> file;  // keeps weights / SPIR-V views alive
  std::string path;
  std::string producer;
  std::string model_name;
  std::set<std::string> features;  // `bundle.features`, each one in kKnownFeatures
  const uint8_t* weights = nullptr;
  uint64_t weights_bytes = 0;
  uint64_t buffer_bytes[kBufferKinds] = {0, 0, 0, 0};  // by BufferKind
  std::vector<IoDesc> inputs, outputs;
  std::vector<Kernel> kernels;
  std::vector<Dispatch> dispatches;
  // Feature kernel_variants: `program.dispatch.cpu`, one row per dispatch
  // (same bindings, barrier and op as `dispatches`), run instead of
  // `dispatches` on CPU-class devices (SelectKernelVariant). Empty otherwise.
  std::vector<Dispatch> cpu_dispatches;
  std::vector<Binding> bindings;
  std::vector<uint32_t> spec;
  std::vector<std::string> op_names;
  DeviceRequirements requirements;
};

// Opens `path` with the OINF reader and validates every entry the contract
// defines (identification, I/O, kernels, program, memory plan) before
// returning. Messages name the path and the offending entry.
StatusOr<Bundle> LoadBundle(const std::string& path);
// Same from an already-validated OINF file.
StatusOr<Bundle> ParseBundle(oinf::File file, const std::string& path);

// Kernel variant choice (runtime argument kernel_variant): kAuto picks the
// CPU table on VK_PHYSICAL_DEVICE_TYPE_CPU devices, kGpu always the default
// table, kCpu the CPU table whenever the bundle has one.
enum class KernelVariant { kAuto, kGpu, kCpu };
// Parses "auto" | "gpu" | "cpu" (InvalidArgument naming the value otherwise).
StatusOr<KernelVariant> ParseKernelVariant(const std::string& value);
// Replaces bundle->dispatches by bundle->cpu_dispatches when `choice` (and,
// for kAuto, `device_is_cpu`) selects the CPU table and the bundle has one.
// A CPU row whose kernel has a texel-buffer binding the device cannot view
// (TexelBindingFits) keeps the default row: both rows bind the same ranges, so
// the rows are interchangeable one by one. *kept_default (may be null)
// receives the number of such rows. Returns the table in use: "gpu"
// (default) or "cpu".
const char* SelectKernelVariant(Bundle* bundle, KernelVariant choice, bool device_is_cpu, const DeviceLimits& limits,
                                size_t* kept_default = nullptr);
// Whether every texel-buffer binding of dispatch `d` can be viewed on a
// device with `limits`: offset a multiple of minTexelBufferOffsetAlignment,
// TexelViewBytes / texel size <= maxTexelBufferElements, the view inside its
// buffer, and no more texel bindings than maxPerStageDescriptorSampledImages.
// Rows without texel bindings always fit.
bool TexelBindingsFit(const Bundle& bundle, const Dispatch& d, const DeviceLimits& limits);

// Fails naming the limit, the bundle's need and the device's value.
Status CheckDeviceLimits(const Bundle& bundle, const DeviceLimits& limits);

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_BUNDLE_H_
