// Lowering: IR nodes -> kernel dispatches with specialization constants.
// Produces storage "values" (one per non-view tensor) that the planner
// places in the buffers of docs/bundle-format.md.
#ifndef OAAXVK_TOOLCHAIN_LOWER_LOWER_H_
#define OAAXVK_TOOLCHAIN_LOWER_LOWER_H_

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "toolchain/ir/graph.h"
#include "toolchain/lower/control_program.h"

namespace oaaxvk::toolchain {

// Buffer kind ids of program.bindings (docs/bundle-format.md, "Buffers").
// kWeightsF16 (tensor weights_f16, feature device_variants) holds binary16
// copies of weights values, bound only by GPU-class rows (Dispatch::gpu_*).
enum class BufferKind : uint32_t { kWeights = 0, kArena = 1, kInputs = 2, kOutputs = 3, kWeightsF16 = 4 };

// One storage region. Views (Reshape/Flatten/Squeeze/Unsqueeze) share their
// source's value.
struct Value {
  std::string tensor;           // tensor that owns the region
  BufferKind kind = BufferKind::kArena;
  Dim bytes = 0;                // dense float32 bytes (kWeightsF16: 2 per element); symbolic in dynamic programs
  uint64_t offset = 0;          // byte offset in its buffer (set by the planner)
  std::vector<uint8_t> data;    // kWeights: the constant bytes; kWeightsF16: their binary16 (RNE) copy
  // kWeights compiled without bytes (LowerOptions::weight_bytes false, `data`
  // empty): WeightsDigest of the bytes it would hold. Otherwise 0 unless a
  // caller sets it.
  uint64_t digest = 0;
  int io_index = -1;            // kInputs/kOutputs: index in Program::inputs/outputs
  // Bytes the memory plan reserves when a dynamic size can exceed its value
  // at the maximum shape (a size that falls as a run-time value grows, e.g.
  // a Range with a negative delta): its maximum over the symbols' domain
  // (driver/dynamic.h BoundBufferSizes); 0 = bytes at the maximum.
  uint64_t capacity = 0;
};

// The bytes the memory plan and the binding ranges reserve for `v`.
inline uint64_t PlannedBytes(const Value& v) {
  const uint64_t b = static_cast<uint64_t>(v.bytes.value());
  return v.capacity > b ? v.capacity : b;
}

struct Binding {
  int value = -1;
  bool written = false;
};

// Group counts and specialization values are Dims: in a dynamic-shape
// conversion they carry the expression of the symbols the runtime evaluates
// (dim.h; docs/bundle-format.md "Dynamic shapes"). Specialization values are
// 32-bit patterns (int, uint or float bits) held in the Dim's int64 value.
struct Dispatch {
  std::string kernel;
  Dim groups[3] = {1, 1, 1};
  std::vector<Binding> bindings;  // binding 0..B-1
  std::vector<Dim> spec;          // constant_id 0..S-1
  std::string node;               // ONNX node name (for program.op)
  std::string op_type;
  // Kernel variant for CPU-class devices (VK_PHYSICAL_DEVICE_TYPE_CPU), the
  // bundle feature `kernel_variants` (docs/bundle-format.md): empty = none,
  // the dispatch above runs everywhere. Same bindings (so the memory plan and
  // barriers hold for both); own kernel, group counts and spec values.
  std::string cpu_kernel;
  Dim cpu_groups[3] = {1, 1, 1};
  std::vector<Dim> cpu_spec;
  // Device-specific variant for GPU-class devices (program.dispatch.gpu,
  // bundle feature `device_variants`): empty = none. Own kernel (one with
  // KernelInfo::required_capabilities; the runtime falls back to the row
  // above on a device without them), group counts and spec values, and
  // gpu_bindings: empty = `bindings`, else the same bindings except that
  // weights values (kWeights) may be replaced by their binary16 copies
  // (kWeightsF16), which the kernel reads as float16_t.
  std::string gpu_kernel;
  Dim gpu_groups[3] = {1, 1, 1};
  std::vector<Dim> gpu_spec;
  std::vector<Binding> gpu_bindings;
  // Feature value_symbols: true when the lowering computed sizes from
  // run-time input values on purpose (every such size an expression, no
  // kernel choice made on the conversion's placeholder values); the bundle
  // writer refuses value-dependent sizes in any other dispatch.
  bool value_sizes = false;

  // The bindings of the GPU-class row.
  const std::vector<Binding>& GpuBindings() const { return gpu_bindings.empty() ? bindings : gpu_bindings; }
};

struct IoDesc {
  std::string name;  // original ONNX name
  DType dtype = DType::kFloat;
  Shape shape;
  int value = -1;
  Dim nbytes = 0;
  // Inputs only: non-empty when the input was bound at conversion
  // (config.json "input_values"): its nbytes host-dtype bytes. The compiled
  // program assumes this value; the runtime rejects any other
  // (bundle feature `bound_inputs`).
  std::vector<uint8_t> bound{};
  // Outputs only: GraphIO::count_for / count_axis (feature
  // data_dependent_outputs).
  int count_for = -1;
  int64_t count_axis = -1;
  // Inputs only: GraphIO::value_min / value_max / value_rule (NaN: no range).
  double value_min = std::numeric_limits<double>::quiet_NaN();
  double value_max = std::numeric_limits<double>::quiet_NaN();
  std::string value_rule{};
};

// The host-dtype bytes the memory plan reserves for graph input / output
// `io` whose buffer is `v`: nbytes at the maximum shape, or the element
// count of Value::capacity (an output shaped by run-time values whose size
// can exceed its value at the maximum) in io's dtype.
inline uint64_t IoPlannedBytes(const IoDesc& io, const Value& v) {
  const uint64_t host = static_cast<uint64_t>(io.nbytes.value()), dev = static_cast<uint64_t>(v.bytes.value());
  if (v.capacity <= dev || host == 0 || dev == 0) return host;
  const uint64_t n = NumElements(io.shape).value();
  if (n == 0) return host;
  return v.capacity / (dev / n) * (host / n);
}

struct Program {
  std::vector<Value> values;
  std::vector<Dispatch> dispatches;
  std::vector<IoDesc> inputs, outputs;
  // Optional bundle features this program relies on (docs/bundle-format.md,
  // "Required features"); written as `bundle.features`.
  std::set<std::string> features;
  // node name -> "kernel (details)" for the conversion log, in node order;
  // dispatches with variants end in " [gpu: <kernel>, cpu: <kernel>]".
  std::vector<std::pair<std::string, std::string>> node_kernels;
  // Feature segment_program: the dispatches as segments and the host program
  // that runs them (control_program.h); empty = every dispatch in one run.
  ControlProgram control;
};

// Splits n invocations of 256-wide (or `local`-wide) workgroups into
// groups_x <= 65535 and groups_y.
// Symbolic groups give groups_x = min(groups, 65535), groups_y =
// ceildiv(groups, groups_x) as expressions.
void Grid1D(const Dim& groups, Dim out[3]);

// Largest finite IEEE binary16 value: weights within +-kMaxFloat16 (and
// finite) get a binary16 copy for the _f16w kernels.
constexpr float kMaxFloat16 = 65504.f;

// The binary16 copy (round to nearest, ties to even; little-endian) of the
// float32 words `f32` (4 bytes per element), or false when an element is not
// finite or beyond +-kMaxFloat16.
bool WeightsToFloat16(const std::vector<uint8_t>& f32, std::vector<uint8_t>* f16);
// Whether WeightsToFloat16 accepts `f32` (every element finite and within
// +-kMaxFloat16), without making the copy.
bool WeightsFitFloat16(const std::vector<uint8_t>& f32);

// A 64-bit digest of constant bytes (not cryptographic: it tells apart the
// constants of two compiles of one model, where a difference is a bug, not
// an adversary; two byte strings share it with probability about 2^-64).
uint64_t WeightsDigest(const std::vector<uint8_t>& bytes);

// Conversion choices that change what the bundle carries.
struct LowerOptions {
  // Emit binary16 weight copies (weights_f16) and the conv2d_gemm_gpu_f16w /
  // gemm_gpu_f16w GPU rows reading them (config.json "fp16_weights"; feature
  // device_variants). false: smaller bundles, those rows run the fp32
  // conv2d_gemm_gpu / gemm_gpu; the subgroup rows are emitted either way.
  bool fp16_weights = true;
  // Every Conv gets its GPU-class tile row (conv2d_gemm_gpu), also where
  // conv2d_gemm's own grid already fills a GPU and the GPU table would keep
  // conv2d_gemm (config.json "gpu_conv_tiles": "all"; docs/kernels.md
  // "GPU-class GEMM tiles"). For measuring the tile against the default
  // kernel and for tests; false ("auto") is what users get.
  bool all_conv_gpu_tiles = false;
  // false: every weights value carries the digest of its bytes instead of
  // the bytes (Value::digest), and each weights_f16 value is chosen as with
  // true (its float32 source fits binary16) but carries no bytes. For a
  // compile whose program is only compared, never written (driver/dynamic.h
  // CheckSample): copying and converting every weight again at each check
  // point dominates the time of a dynamic-shape conversion of a large model,
  // and a binary16 copy is a function of its source's bytes.
  bool weight_bytes = true;
};

// Fails (naming the node) for nodes that cannot run on the device:
// remaining fold-only ops, non-float tensors, ranks above 6, sizes that do
// not fit 32-bit indexing, unsupported MatMul batch broadcasting.
StatusOr<Program> Lower(const Graph& g, const LowerOptions& options = {});

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_LOWER_LOWER_H_
