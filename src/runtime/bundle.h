// Parses and validates a bundle (docs/bundle-format.md, format_version 1)
// into plain structs. No Vulkan here: device limits are checked by
// CheckDeviceLimits against a plain struct of the device's values.
#ifndef OAAXVK_RUNTIME_BUNDLE_H_
#define OAAXVK_RUNTIME_BUNDLE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "oaax_vulkan/oinf.h"
#include "oaax_vulkan/status.h"
#include "runtime/control_program.h"
#include "runtime/shape_program.h"

namespace oaaxvk::runtime {

inline constexpr const char* kBundleFormat = "oaax-vulkan-bundle";
inline constexpr uint32_t kBundleFormatVersion = 1;
// Optional features a bundle may require (`bundle.features`, a space-separated
// list; docs/bundle-format.md "Required features"). A bundle requiring a
// feature not listed here is rejected at load, naming it.
inline const std::set<std::string> kKnownFeatures = {"bound_inputs", "device_variants", "dynamic_shapes",
                                                     "kernel_variants", "parameter_buffer", "texel_bindings",
                                                     "value_symbols", "float_value_symbols",
                                                     "exact_value_symbols", "data_dependent_outputs",
                                                     "segment_program"};
// kKnownFeatures as "a, b" ("none" when empty), for messages.
inline std::string KnownFeatureList() {
  std::string s;
  for (const std::string& f : kKnownFeatures) s += (s.empty() ? "" : ", ") + f;
  return s.empty() ? "none" : s;
}
inline constexpr uint64_t kBindingAlignment = 256;
// Largest buffer a bundle may declare (arena.bytes, io.inputs_bytes,
// io.outputs_bytes): 2^48 bytes, beyond any device's memory, so a larger
// value can only be a corrupt or hostile file. Every size derived from a
// buffer size (rounding, offset + size) then stays far from 2^64.
inline constexpr uint64_t kMaxBufferBytes = uint64_t{1} << 48;
// Largest number of rows of program.dispatch (and of each variant table):
// descriptor and query counts derived from it must fit 32 bits.
inline constexpr uint64_t kMaxDispatches = uint64_t{1} << 20;
// Name of the bundle entry that sizes buffer kind `kind` ("arena.bytes",
// "tensor 'weights'", ...), for messages.
const char* BufferSizeEntry(uint32_t kind);

// `buffer_kind` of program.bindings (docs/bundle-format.md "Buffers").
// kWeightsF16 (tensor `weights_f16`, feature device_variants) holds binary16
// copies of weight tensors and is bound only by program.dispatch.gpu rows.
enum BufferKind : uint32_t { kWeights = 0, kArena = 1, kInputs = 2, kOutputs = 3, kWeightsF16 = 4 };
inline constexpr uint32_t kBufferKinds = 5;

// Device capabilities a kernel may require (`kernel.<j>.requires`, feature
// device_variants; docs/bundle-format.md "Device-specific variants"), as the
// Vulkan feature / property names they stand for (sharedMemory32KiB:
// maxComputeSharedMemorySize >= 32768). A required name not listed here
// counts as missing on every device.
// shaderFloat16 and vulkanMemoryModel are the features of those names;
// cooperativeMatrixNV16x16x16f16f32: VK_NV_cooperative_matrix's feature, a
// subgroup-scope 16 x 16 x 16 shape with binary16 A, B and fp32 C, D, compute
// among its supported stages, and subgroups of 32 (VkContext::capabilities).
inline const std::set<std::string> kKnownCapabilities = {"storageBuffer16BitAccess", "subgroupArithmetic",
                                                         "sharedMemory32KiB", "shaderFloat16", "vulkanMemoryModel",
                                                         "cooperativeMatrixNV16x16x16f16f32"};
// Largest finite binary16 value.
inline constexpr float kMaxFloat16 = 65504.0f;

// Name of an OAAX tensor_data_type ("FLOAT", ...; "unknown" for undefined values).
// Its element size is oaaxvk::TensorElementSize (oaax_vulkan/tensors_util.h).
const char* OaaxDtypeName(uint32_t dtype);

struct IoDesc {
  std::string name;            // original ONNX name (UTF-8)
  uint32_t dtype = 0;          // OAAX tensor_data_type
  std::vector<uint64_t> shape; // static shape (feature dynamic_shapes: the maximum shape)
  uint64_t offset = 0;         // in the inputs/outputs buffer
  uint64_t nbytes = 0;         // numel x element size of `shape`
  // Inputs only (feature `bound_inputs`): the value, nbytes bytes, the input
  // was bound to at conversion (config.json "input_values"); points into the
  // mapped file. NULL when the input is not bound.
  const uint8_t* bound = nullptr;
  // Outputs only (feature `data_dependent_outputs`): this output is an int32
  // [1] holding the extent of output `count_for` along axis `count_axis`,
  // computed by the device; the runtime returns that output at this extent
  // and does not return this one. -1 for an ordinary output.
  int64_t count_for = -1;
  int64_t count_axis = -1;
  // Inputs only (metadata io.input.<j>.value_min / value_max / value_rule):
  // every element must lie in [value_min, value_max] (NaN is outside), or
  // send_input fails naming the element and `value_rule` (what the range
  // guards, e.g. a NonMaxSuppression iou_threshold). has_value_range false:
  // no check.
  bool has_value_range = false;
  double value_min = 0, value_max = 0;
  std::string value_rule;
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
  // Feature device_variants (`kernel.<j>.requires`, names joined by '-'): the
  // device capabilities a row using this kernel needs, in bundle order; empty
  // when the entry is absent. Names outside kKnownCapabilities are kept (they
  // count as missing when a row is selected).
  std::vector<std::string> required_capabilities;
  // Feature device_variants (`kernel.<j>.fp32_kernel`): for a kernel that
  // reads binary16 weights (weights_f16), the index of its fp32 form (same
  // bindings, spec constants and grid, weights read from the weights
  // buffer), run instead when fp16 weights are not allowed; -1 = none.
  int64_t fp32_kernel = -1;
  // Feature device_variants (`kernel.<j>.fp16_kernel`): the fp16 precision
  // form of a GPU-row kernel (same bindings, binding types, spec constants
  // and grid; binary16 operands, fp32 sums), run under the runtime argument
  // precision=fp16; -1 = none.
  int64_t fp16_kernel = -1;
  // Feature device_variants (`kernel.<j>.matrix_kernel`): an fp16 precision
  // form's cooperative-matrix form (same interface), run instead of it when
  // the device has its capabilities and it passed the load-time check
  // (matrix_check.h); -1 = none.
  int64_t matrix_kernel = -1;
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
  // The table the row comes from: 0 program.dispatch, 1 program.dispatch.cpu,
  // 2 program.dispatch.gpu (SelectKernelVariant keeps it with the row), which
  // is how feature dynamic_shapes names its group-count expressions
  // (ShapeProgram::group_expr).
  uint8_t table = 0;
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
  // VkPhysicalDeviceMaintenance3Properties::maxMemoryAllocationSize, and the
  // size of the largest memory heap: no single buffer can be larger.
  uint64_t max_memory_allocation_size = UINT64_MAX;
  uint64_t max_heap_bytes = UINT64_MAX;
  // Feature device_variants: the capabilities of kKnownCapabilities the device
  // has (VkContext::capabilities()).
  std::set<std::string> capabilities;
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
  // Feature device_variants: tensor `weights_f16` (buffer kind 4), pointing
  // into the mapped file; nullptr / 0 without the feature.
  const uint8_t* weights_f16 = nullptr;
  uint64_t weights_f16_bytes = 0;
  uint64_t buffer_bytes[kBufferKinds] = {0, 0, 0, 0, 0};  // by BufferKind
  std::vector<IoDesc> inputs, outputs;
  std::vector<Kernel> kernels;
  std::vector<Dispatch> dispatches;
  // Feature kernel_variants: `program.dispatch.cpu`, one row per dispatch
  // (same bindings, barrier and op as `dispatches`), run instead of
  // `dispatches` on CPU-class devices (SelectKernelVariant). Empty otherwise.
  std::vector<Dispatch> cpu_dispatches;
  // Feature device_variants: `program.dispatch.gpu`, one row per dispatch
  // (same number of bindings, each the same range as in `dispatches` or a
  // weights range moved to kWeightsF16; same barrier and op), run instead of
  // `dispatches` on GPU-class devices when the device has every capability
  // the row's kernel requires (SelectKernelVariant). Empty otherwise.
  std::vector<Dispatch> gpu_dispatches;
  std::vector<Binding> bindings;
  std::vector<uint32_t> spec;
  std::vector<std::string> op_names;
  DeviceRequirements requirements;
  // Feature dynamic_shapes: the symbols, the shape program and the fields it
  // drives (validated: every reference equals its field at the maximum
  // shape). Empty (static bundle) without the feature.
  ShapeProgram shape;
  // Feature segment_program: the device segments and the host control
  // program between them. Empty without the feature.
  ControlProgram control;
};

// Opens `path` with the OINF reader and validates every entry the contract
// defines (identification, I/O, kernels, program, memory plan) before
// returning. Messages name the path and the offending entry.
StatusOr<Bundle> LoadBundle(const std::string& path);
// Same from an already-validated OINF file.
StatusOr<Bundle> ParseBundle(oinf::File file, const std::string& path);

// Kernel variant choice (runtime argument kernel_variant): kAuto picks the
// CPU table (program.dispatch.cpu) on VK_PHYSICAL_DEVICE_TYPE_CPU devices and
// the GPU table (program.dispatch.gpu) on every other device type, kDefault
// always program.dispatch, kGpu / kCpu the GPU / CPU table on any device.
// A table the bundle does not carry means program.dispatch.
enum class KernelVariant { kAuto, kDefault, kGpu, kCpu };
// Parses "auto" | "default" | "gpu" | "cpu" (InvalidArgument naming the value
// and the accepted ones otherwise).
StatusOr<KernelVariant> ParseKernelVariant(const std::string& value);

// What SelectKernelVariant chose, for the load log.
struct VariantSelection {
  // The table in use: "default" (program.dispatch), "gpu" or "cpu".
  const char* table = "default";
  // Whether the bundle carries any variant table (program.dispatch.cpu or
  // program.dispatch.gpu): the executor logs the choice only then.
  bool bundle_has_variants = false;
  // Rows of the chosen table that kept their program.dispatch row, by reason:
  // a texel-buffer binding the device cannot view (TexelBindingsFit), or a
  // capability the row's kernel requires and the device lacks. A row lacking
  // both counts once, under missing capabilities.
  size_t kept_texel = 0;
  size_t kept_capability = 0;
  // Rows that read weights_f16 (buffer kind 4) while fp16 weights are not
  // allowed (runtime argument fp16_weights=0, the default).
  size_t kept_fp16_off = 0;
  // Rows of binary16-weight kernels that run their fp32 form
  // (kernel.<j>.fp32_kernel) because fp16 weights are not allowed or the
  // device lacks 16-bit storage; not kept rows.
  size_t fp32_forms = 0;
  // Each capability that made a row keep its default row -> number of rows.
  std::map<std::string, size_t> missing_capabilities;
  // The capability names of kept rows that are not in kKnownCapabilities.
  std::set<std::string> unknown_capabilities;
  size_t kept_default() const { return kept_texel + kept_capability + kept_fp16_off; }
  // Precision fp16 (PrecisionChoice::fp16): rows that run an fp16 precision
  // form, and rows whose kernel has one but keep the fp32 kernel, because the
  // device lacks a capability of the form (counted by name) or a weight
  // operand of the row does not fit binary16 (fp16_kept_range).
  size_t fp16_forms = 0;
  size_t fp16_kept = 0;
  size_t fp16_kept_range = 0;
  std::map<std::string, size_t> fp16_missing_capabilities;
  // Of the fp16 rows: those that run the cooperative-matrix form, and those
  // whose form has one but keep the fp16 form, because the device lacks a
  // capability of it (counted by name) or the load-time check dropped it
  // (matrix_kept_dropped).
  size_t matrix_forms = 0;
  size_t matrix_kept = 0;
  size_t matrix_kept_dropped = 0;
  std::map<std::string, size_t> matrix_missing_capabilities;
};

// The arithmetic of the GPU rows (runtime argument precision).
struct PrecisionChoice {
  // precision=fp16: rows whose kernel has an fp16 precision form
  // (Kernel::fp16_kernel) run it, or its cooperative-matrix form.
  bool fp16 = false;
  // Cooperative-matrix kernels (indices into Bundle::kernels) the load-time
  // check dropped: their rows run the fp16 form.
  std::set<uint32_t> dropped_matrix;
};
// Whether every float of the weights bindings among row d's first two
// bindings (the GEMM operands) is finite and within +-kMaxFloat16.
bool RowWeightsFitFloat16(const Bundle& bundle, const Dispatch& d);

// Replaces the rows of bundle->dispatches by the rows of the table `choice`
// selects (for kAuto, by `device_is_cpu`), when the bundle carries it. A row
// keeps its program.dispatch row when its kernel requires a capability not in
// limits.capabilities or has a texel-buffer binding the device cannot view
// (TexelBindingsFit), or, unless `allow_fp16_weights` (runtime argument
// fp16_weights=1), when it binds weights_f16 (buffer kind 4: binary16 weight
// copies, which change the results within the fp16 bound of
// docs/bundle-format.md "Device-specific variants"): the rows bind the same
// ranges (or a weights range and its fp16 copy), so they are interchangeable
// one by one. barrier and op stay those of program.dispatch. Clears
// cpu_dispatches and gpu_dispatches.
// Under `precision`.fp16 a row whose kernel (its fp32 form, for a
// binary16-weight row) has an fp16 precision form runs that form, or its
// cooperative-matrix form (PrecisionChoice, the counts of VariantSelection).
VariantSelection SelectKernelVariant(Bundle* bundle, KernelVariant choice, bool device_is_cpu,
                                     const DeviceLimits& limits, bool allow_fp16_weights,
                                     const PrecisionChoice& precision = {});
// The capabilities in `kernel`.required_capabilities that `limits.capabilities`
// lacks, in bundle order (empty: the device can run the kernel).
std::vector<std::string> MissingCapabilities(const Kernel& kernel, const DeviceLimits& limits);
// Whether dispatch row `d` binds buffer kind `kind`.
bool RowBindsKind(const Bundle& bundle, const Dispatch& d, uint32_t kind);
// Whether some row of bundle.dispatches binds buffer kind `kind`.
bool DispatchesBindKind(const Bundle& bundle, uint32_t kind);
// The byte ranges [offset, offset + size) of buffer kind `kind` that the rows
// of bundle.dispatches bind (input to PlanBufferBlocks, buffer_blocks.h).
std::vector<std::pair<uint64_t, uint64_t>> BoundRanges(const Bundle& bundle, uint32_t kind);
// Whether buffer kind `kind` may be placed in several VkBuffers (its
// bindings are all the device reads of it): the weights, their fp16 copies
// and the arena; the inputs and outputs are copied to and from the host as
// one mapped block each.
inline bool SplittableKind(uint32_t kind) { return kind == kWeights || kind == kArena || kind == kWeightsF16; }
// Whether every texel-buffer binding of dispatch `d` can be viewed on a
// device with `limits`: offset a multiple of minTexelBufferOffsetAlignment,
// TexelViewBytes / texel size <= maxTexelBufferElements, the view inside its
// buffer, and no more texel bindings than maxPerStageDescriptorSampledImages.
// Rows without texel bindings always fit.
bool TexelBindingsFit(const Bundle& bundle, const Dispatch& d, const DeviceLimits& limits);

// Fails naming the limit, the bundle's need and the device's value. Covers
// the declared device.* requirements, every buffer's size against the
// largest allocation and heap, and every row of bundle.dispatches (call it
// after SelectKernelVariant): group counts, storage-buffer count, texel
// views, and the capabilities each row's kernel requires.
Status CheckDeviceLimits(const Bundle& bundle, const DeviceLimits& limits);

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_BUNDLE_H_
