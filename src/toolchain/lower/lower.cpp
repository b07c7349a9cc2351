#include "toolchain/lower/lower.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <limits>

#include "toolchain/ir/extent.h"
#include "toolchain/ir/limits.h"
#include "toolchain/ir/loop_nodes.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/ir/shape_infer_float.h"
#include "toolchain/ir/shape_infer_int.h"
#include "toolchain/lower/lower_int.h"
#include "toolchain/lower/lower_index.h"
#include "toolchain/lower/kernels.h"
#include "toolchain/lower/loop_budget.h"
#include "toolchain/passes/passes.h"
#include "toolchain/passes/activations_float.h"
#include "toolchain/lower/split_plan.h"

namespace oaaxvk::toolchain {

bool WeightsToFloat16(const std::vector<uint8_t>& f32, std::vector<uint8_t>* f16) {
  const size_t n = f32.size() / 4;
  f16->assign(n * 2, 0);
  for (size_t i = 0; i < n; ++i) {
    float f;
    std::memcpy(&f, f32.data() + 4 * i, 4);
    if (!(std::fabs(f) <= kMaxFloat16)) return false;  // also NaN
    const uint16_t h = FloatToHalf(f);  // round to nearest, ties to even (graph.h)
    (*f16)[2 * i] = static_cast<uint8_t>(h & 0xffu);
    (*f16)[2 * i + 1] = static_cast<uint8_t>(h >> 8);
  }
  return true;
}

bool WeightsFitFloat16(const std::vector<uint8_t>& f32) {
  const size_t n = f32.size() / 4;
  for (size_t i = 0; i < n; ++i) {
    float f;
    std::memcpy(&f, f32.data() + 4 * i, 4);
    if (!(std::fabs(f) <= kMaxFloat16)) return false;  // also NaN
  }
  return true;
}

uint64_t WeightsDigest(const std::vector<uint8_t>& bytes) {
  // One lane of multiply-rotate mixing over 8-byte words (about memory speed),
  // the length and the tail folded in, then a splitmix64 finish.
  constexpr uint64_t kMul1 = 0x9E3779B185EBCA87ull, kMul2 = 0xC2B2AE3D27D4EB4Full;
  uint64_t h = 0x27D4EB2F165667C5ull ^ (static_cast<uint64_t>(bytes.size()) * kMul1);
  const size_t words = bytes.size() / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + 8 * i, 8);
    h ^= w * kMul2;
    h = ((h << 31) | (h >> 33)) * kMul1;
  }
  uint64_t tail = 0;
  for (size_t i = 8 * words; i < bytes.size(); ++i) tail = (tail << 8) | bytes[i];
  h ^= tail * kMul2;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

void Grid1D(const Dim& groups, Dim out[3]) {
  const Dim g = Max(groups, 1);
  out[0] = Min(g, 65535);
  // = ceildiv(g, groups_x) at every g >= 1, written with a constant divisor
  // so that a symbolic count stays provably monotone (dim.h UpperBound).
  out[1] = CeilDiv(g, 65535);
  out[2] = 1;
}

namespace {

uint32_t FBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();

// CPU-class kernel variants (bundle feature kernel_variants): register block
// per invocation (rows x columns) and local size. Must match
// shaders/conv2d_cpu*.comp (8 x 8), shaders/gemm_cpu.glsl (8 x 8) and
// kernels.cpp.
constexpr int64_t kConvCpuBlock = 8, kGemmCpuBlock = 8, kCpuLocalSize = 64;

// Sets `d`'s CPU variant: `kernel` with d's spec values on the grid
// (gx, gy, gz). Leaves d without a variant when a group count exceeds 65535
// (the default kernel then runs on CPU-class devices too).
bool SetCpuVariant(Dispatch* d, const char* kernel, const Dim& gx, const Dim& gy, const Dim& gz) {
  if (UpperBound(gx) > 65535 || UpperBound(gy) > 65535 || UpperBound(gz) > 65535) return false;
  d->cpu_kernel = kernel;
  d->cpu_groups[0] = gx;
  d->cpu_groups[1] = gy;
  d->cpu_groups[2] = gz;
  d->cpu_spec = d->spec;
  return true;
}

// Kernels with a CPU-class texel-read twin named <kernel>_cpu (kernels.cpp):
// same bindings, spec constants and grid, so the CPU row is the default row
// with the twin kernel.
// Row reductions (reduce_mean, softmax) with at least this many rows run one
// invocation per row on CPU-class devices (<kernel>_rows_cpu): two or more
// 64-wide workgroups, so every core of a CPU device gets work; fewer, longer
// rows keep one workgroup per row.
constexpr uint64_t kMinRowsPerInvocation = 128;

constexpr const char* kTexelTwinKernels[] = {"eltwise",          "unary",    "pool2d",     "strided_copy",
                                             "conv_transpose2d", "resize2d", "resize2d_scales", "resize2d_roi", "reduce_mean"};

// GPU-class variants (bundle feature device_variants, docs/bundle-format.md
// "Device-specific variants"; kernels.cpp): default kernel -> its variant,
// and the variant reading binding 1 (W / B) as a binary16 copy (only when
// that binding is a weights value that fits binary16; nullptr: none). The
// tiled GEMM variants (`tiled`) get their own tile, grid and spec constants
// (ChooseGpuTile); the others keep the default row's.
struct GpuVariant {
  const char* kernel;
  const char* variant;
  const char* f16_variant;
  bool tiled;
};
constexpr GpuVariant kGpuVariants[] = {{"conv2d_gemm", "conv2d_gemm_gpu", "conv2d_gemm_gpu_f16w", true},
                                       {"gemm", "gemm_gpu", "gemm_gpu_f16w", true},
                                       {"softmax", "softmax_sg", nullptr, false},
                                       {"reduce_mean", "reduce_mean_sg", nullptr, false}};

// Output tiles of the GPU-class GEMM kernels (shaders/gpu_tile.glsl: 256
// invocations, (TILE_M / 16) x (TILE_N / 16) outputs each).
struct GpuTile {
  int64_t m, n;
};
constexpr GpuTile kGpuTiles[] = {{128, 128}, {128, 64}, {64, 128}, {64, 64}, {64, 32},
                                 {32, 64},   {32, 32},  {32, 16},  {16, 32}, {16, 16}};
// Workgroups that keep a large GPU busy: two 256-invocation workgroups per
// multiprocessor of an NVIDIA H100 / H200 (132 SMs), enough to hide the
// loads' latency behind the other workgroup's FMAs.
constexpr int64_t kGpuTargetWorkgroups = 2 * 132;

// The tile for an M x N (x `batch`) output: the largest estimated throughput
//   min(1, workgroups / kGpuTargetWorkgroups)   (how much of the GPU is busy)
//   * RM RN / (RM + RN) / 4                     (FMAs per shared-memory load, 1 at 8 x 8)
//   * M N / (tiles' padded M x N)               (outputs not wasted on padding)
// (ties: the larger tile, which comes first). A big output keeps 128 x 128;
// a small one (batch 1) trades register blocking for more workgroups.
GpuTile ChooseGpuTile(int64_t m, int64_t n, int64_t batch) {
  GpuTile best = kGpuTiles[0];
  double best_score = -1;
  for (const GpuTile& t : kGpuTiles) {
    const int64_t tm = CeilDivI(m, t.m), tn = CeilDivI(n, t.n);
    const double groups = static_cast<double>(tm) * static_cast<double>(tn) * static_cast<double>(batch);
    const double rm = static_cast<double>(t.m / 16), rn = static_cast<double>(t.n / 16);
    const double score = std::min(1.0, groups / kGpuTargetWorkgroups) * (rm * rn / (rm + rn) / 4.0) *
                         (static_cast<double>(m) * static_cast<double>(n) /
                          (static_cast<double>(tm * t.m) * static_cast<double>(tn * t.n)));
    if (score > best_score) {
      best = t;
      best_score = score;
    }
  }
  return best;
}

// Whether a Conv's default row (conv2d_gemm: 64 x 64 tiles) already has
// kGpuTargetWorkgroups workgroups at its largest shape; such a Conv keeps
// conv2d_gemm in the GPU table. Measured on an NVIDIA H200 (bench/GPU-NOTES.md,
// "The GPU-class convolution tile"): conv2d_gemm_gpu ran at 2.4-6 TFLOP/s
// whatever its tile (and no faster on cooperative matrices), conv2d_gemm at
// up to 17 TFLOP/s once its grid filled the GPU: the GPU tile won only where
// it made a small grid larger (ResNet-50 batch 1: 2.4 vs 6.4 ms) and lost
// 1.2-6x at batches 8 and 32. GEMMs keep gemm_gpu (BERT batch 32: 24 TFLOP/s).
bool DefaultGridFillsGpu(const Dispatch& d) {
  if (d.kernel != "conv2d_gemm") return false;
  double groups = 1;  // in double: an unbounded extent must not overflow the product
  for (const Dim& g : d.groups) groups *= static_cast<double>(UpperBound(g));
  return groups >= static_cast<double>(kGpuTargetWorkgroups);
}

// " tile <TILE_M>x<TILE_N>[ vec4 A][ vec4 B]" for a dispatch whose GPU row is a tiled GEMM
// kernel (its last four spec values: TILE_M, TILE_N, VEC_A, VEC_B), else "":
// the conversion log names the tile each row got.
std::string GpuTileNote(const Dispatch& d) {
  for (const GpuVariant& gv : kGpuVariants)
    if (gv.tiled && d.kernel == gv.kernel && !d.gpu_kernel.empty() && d.gpu_spec.size() == d.spec.size() + 4) {
      const size_t t = d.spec.size();
      return StrFormat(" tile %lldx%lld%s%s", static_cast<long long>(d.gpu_spec[t].value()),
                       static_cast<long long>(d.gpu_spec[t + 1].value()),
                       d.gpu_spec[t + 2].value() != 0 ? " vec4 A" : "", d.gpu_spec[t + 3].value() != 0 ? " vec4 B" : "");
    }
  return "";
}

class Lowerer {
 public:
  Lowerer(const Graph& g, const LowerOptions& options) : g_(g), options_(options) {}

  StatusOr<Program> Run() {
    const auto consumers = g_.Consumers();
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      const GraphIO& io = g_.inputs[i];
      const Tensor& t = *g_.FindTensor(io.tensor);
      OAAXVK_ASSIGN_OR_RETURN(int v, NewValue(t, BufferKind::kInputs));
      p_.values[v].io_index = static_cast<int>(i);
      p_.inputs.push_back({io.name, t.dtype, t.shape, v, StorageBytes(t.dtype, t.numel())});
      p_.inputs.back().value_min = io.value_min;
      p_.inputs.back().value_max = io.value_max;
      p_.inputs.back().value_rule = io.value_rule;
      alias_[io.tensor] = v;
      // An input no kernel reads (one bound at conversion, or read only as
      // run-time values by the host) needs no conversion dispatch.
      const bool read = consumers.count(io.tensor) != 0 || g_.IsGraphOutput(io.tensor);
      if (read && t.dtype != ComputeDType(t.dtype)) {  // issue 5: convert to the compute format
        OAAXVK_ASSIGN_OR_RETURN(int c, NewValue(t, BufferKind::kArena));
        EmitConvert(io.name, v, c, t.numel(), t.dtype, ComputeDType(t.dtype), t.dtype);
        alias_[io.tensor] = c;
      }
    }
    // A Loop decided on the device (ir/loop_nodes.h): its body's nodes are
    // lowered together at its _LoopEnd (lower_loop.inc).
    std::vector<std::vector<size_t>> bodies;
    std::vector<int64_t> ends;
    OAAXVK_RETURN_IF_ERROR(FindLoopBodies(g_, &bodies, &ends));
    std::vector<bool> in_body(g_.nodes.size(), false);
    std::map<int64_t, size_t> begin_of_end;
    for (size_t b = 0; b < bodies.size(); ++b) {
      for (size_t i : bodies[b]) in_body[i] = true;
      if (ends[b] >= 0) begin_of_end[ends[b]] = b;
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (in_body[i]) continue;
      if (n.op_type == "_LoopBegin") {
        OAAXVK_RETURN_IF_ERROR(LoopBegin(n));
      } else if (n.op_type == "_LoopEnd") {
        auto b = begin_of_end.find(static_cast<int64_t>(i));
        if (b == begin_of_end.end()) return NodeError(n, "internal: no _LoopBegin reaches this _LoopEnd");
        OAAXVK_RETURN_IF_ERROR(DeviceLoop(g_.nodes[b->second], bodies[b->second], n));
      } else {
        OAAXVK_RETURN_IF_ERROR(LowerNode(n));
      }
      OAAXVK_RETURN_IF_ERROR(empty_read_error_);
    }
    // Graph outputs: claim the producing value (placed in the outputs buffer)
    // when possible, else copy into a fresh output value.
    std::vector<bool> claimed(p_.values.size(), false);
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      const GraphIO& io = g_.outputs[i];
      Tensor t = *g_.FindTensor(io.tensor);
      const bool static_empty = t.has_shape && std::any_of(t.shape.begin(), t.shape.end(), [](const Dim& d) {
                                  return !d.is_symbolic() && d.value() == 0;
                                });
      // An output with no elements: a slot of the outputs buffer (4 bytes)
      // that nothing writes; the host gets its shape and no data.
      auto empty_output = [&](const Tensor& slot) -> Status {
        OAAXVK_ASSIGN_OR_RETURN(int v, NewValue(slot, BufferKind::kOutputs));
        claimed.resize(p_.values.size(), false);
        p_.values[v].io_index = static_cast<int>(i);
        claimed[v] = true;
        p_.outputs.push_back({io.name, t.dtype, t.shape, v, Dim(0)});
        p_.outputs.back().count_for = io.count_for;
        p_.outputs.back().count_axis = io.count_axis;
        return Status::Ok();
      };
      if (static_empty) {
        OAAXVK_RETURN_IF_ERROR(empty_output(t));
        continue;
      }
      OAAXVK_ASSIGN_OR_RETURN(int src, ValueOf(io.tensor, "graph output '" + io.name + "'"));
      if (empty_values_.count(src) != 0) {
        // A view of an empty constant whose shape is computed at run time
        // (a Reshape to run-time values): it has no elements at any shape
        // (the runtime's guards keep the element count), so it is an empty
        // output too, its shape evaluated per inference.
        Tensor slot = t;
        slot.shape = {Dim(0)};
        OAAXVK_RETURN_IF_ERROR(empty_output(slot));
        continue;
      }
      // Feature value_symbols: an output whose shape is computed from input
      // values is a view (a Reshape / Squeeze / Unsqueeze chain); its
      // elements are those of the value it views (the runtime's guards
      // check that), or a dense prefix of an output sized at the values'
      // maxima (TopK), so it is converted / copied as that flat value.
      const Shape out_shape = t.shape;
      const Dim out_nbytes = StorageBytes(t.dtype, t.numel());
      const bool by_value = AnyDependsOnUnsampledValue(t.shape);
      if (by_value) {
        // The whole region at its largest (a value-dependent size is copied at its maximum).
        const Dim& b = p_.values[src].bytes;
        t.shape = {DependsOnUnsampledValue(b) ? Dim(b.value() / 4) : FloorDiv(b, Dim(4))};
      }
      int v = src;
      if (t.dtype != ComputeDType(t.dtype)) {  // issue 5: convert from the compute format
        // A Cast from float to a 64-bit integer output converts from the
        // float itself: int32 compute would wrap values beyond int32.
        DType sfmt = ComputeDType(t.dtype);
        const int p = g_.Producer(io.tensor);
        if (p >= 0 && !by_value && (t.dtype == DType::kInt64 || t.dtype == DType::kUint64) &&
            (g_.nodes[p].op_type == "Cast" || g_.nodes[p].op_type == "CastLike")) {
          const Tensor* cx = g_.FindTensor(g_.nodes[p].inputs[0]);
          if (cx && IsFloatLike(cx->dtype)) {
            OAAXVK_ASSIGN_OR_RETURN(src, ValueOf(cx->name, "graph output '" + io.name + "'"));
            sfmt = DType::kFloat;
          }
        }
        OAAXVK_ASSIGN_OR_RETURN(v, NewValue(t, BufferKind::kOutputs));
        claimed.resize(p_.values.size(), false);
        EmitConvert(io.name, src, v, t.numel(), sfmt, t.dtype, t.dtype);
      } else if (p_.values[src].kind != BufferKind::kArena || claimed[src]) {
        OAAXVK_ASSIGN_OR_RETURN(v, NewValue(t, BufferKind::kOutputs));
        claimed.resize(p_.values.size(), false);
        Dispatch d;
        d.kernel = "strided_copy";
        d.node = io.name;
        d.op_type = "Copy";
        d.bindings = {{src, false}, {v, true}};
        Dim n = t.numel();
        d.spec = {n, 0, 0, 1, 1, 1, 1, 1, n, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};
        Grid1D(CeilDiv(n, 256), d.groups);
        PushDispatch(std::move(d), io.name, "strided_copy (graph output copy)");
      }
      p_.values[v].kind = BufferKind::kOutputs;
      p_.values[v].io_index = static_cast<int>(i);
      claimed[v] = true;
      p_.outputs.push_back({io.name, t.dtype, out_shape, v,
                            by_value ? StorageBytes(t.dtype, t.numel()) : out_nbytes});
      p_.outputs.back().count_for = io.count_for;
      p_.outputs.back().count_axis = io.count_axis;
    }
    OAAXVK_RETURN_IF_ERROR(empty_read_error_);
    OAAXVK_RETURN_IF_ERROR(BuildControlProgram());
    AddTexelTwins();
    AddGpuVariants();
    DescribeVariants();
    return std::move(p_);
  }

 private:
  Status NodeError(const Node& n, const std::string& m) const {
    return Unimplemented("node '" + n.name + "' (" + n.op_type + "): " + m);
  }
  // A reduction length `what` = `len` that a kernel walks `step` at a time
  // in one invocation, past the per-invocation loop budget.
  Status LoopBudgetError(const Node& n, const char* what, int64_t len, int64_t step) const {
    return NodeError(n, StrFormat("%s = %lld needs %lld loop iterations per invocation, above the per-invocation "
                                  "budget of %lld (docs/toolchain.md, \"Loop budget\"; software drivers cut longer "
                                  "loops); split the reduction in the model (e.g. sum partial products over "
                                  "chunks of at most %lld)",
                                  what, static_cast<long long>(len), static_cast<long long>((len + step - 1) / step),
                                  static_cast<long long>(kLoopBudget), static_cast<long long>(kLoopBudget * step)));
  }

  // Every dispatch of a kernel in kTexelTwinKernels without a CPU variant
  // gets one: its texel-read twin (feature kernel_variants; the twin's
  // binding types add texel_bindings when the bundle is written).
  void AddTexelTwins() {
    for (Dispatch& d : p_.dispatches) {
      if (!d.cpu_kernel.empty()) continue;
      // Row reductions over many rows: one invocation per row (the rows count
      // is spec constant 0 of reduce_mean, OUTER * INNER of softmax).
      if (d.kernel == "reduce_mean" || d.kernel == "softmax") {
        const Dim rows = d.kernel == "softmax" ? d.spec[0] * d.spec[2] : d.spec[0];
        // A dynamic size: reduce_mean keeps its texel twin unless every shape
        // has enough rows; softmax has no other CPU-class kernel, so the
        // per-row one (merely less parallel with few rows) serves whenever
        // the largest shape has enough.
        const int64_t bound = d.kernel == "softmax" ? UpperBound(rows) : LowerBound(rows);
        if (bound >= static_cast<int64_t>(kMinRowsPerInvocation) && RowsCpuFits(d)) {
          Dim g[3];
          Grid1D(CeilDiv(rows, 64), g);
          if (SetCpuVariant(&d, (d.kernel + "_rows_cpu").c_str(), g[0], g[1], g[2])) {
            p_.features.insert("kernel_variants");
            continue;
          }
        }
      }
      for (const char* k : kTexelTwinKernels) {
        if (d.kernel != k) continue;
        if (SetCpuVariant(&d, (d.kernel + "_cpu").c_str(), d.groups[0], d.groups[1], d.groups[2]))
          p_.features.insert("kernel_variants");
        break;
      }
    }
  }

  // Every dispatch with a GPU-class kernel in kGpuVariants gets its GPU row
  // (feature device_variants); the _f16w variant when binding 1 is a float
  // weights value whose elements are finite and within +-kMaxFloat16 (the
  // binary16 copy is shared by every dispatch reading the same value).
  void AddGpuVariants() {
    for (Dispatch& d : p_.dispatches) {
      for (const GpuVariant& gv : kGpuVariants) {
        if (d.kernel != gv.kernel) continue;
        if (gv.tiled && !SetGpuTile(&d)) break;
        if (!gv.tiled) {
          std::copy(d.groups, d.groups + 3, d.gpu_groups);
          d.gpu_spec = d.spec;
        }
        d.gpu_kernel = gv.variant;
        const int f16 = gv.f16_variant && options_.fp16_weights ? Float16Copy(d.bindings.at(1).value) : -1;
        if (f16 >= 0) {
          d.gpu_kernel = gv.f16_variant;
          d.gpu_bindings = d.bindings;
          d.gpu_bindings[1].value = f16;
        }
        p_.features.insert("device_variants");
        break;
      }
    }
  }

  // Whether Conv dispatch d keeps conv2d_gemm in the GPU table because its
  // grid fills a GPU (DefaultGridFillsGpu), unless the options ask for every
  // Conv's GPU tile.
  bool KeepsDefaultConvRow(const Dispatch& d) const {
    return !options_.all_conv_gpu_tiles && DefaultGridFillsGpu(d);
  }

  // The tile (ChooseGpuTile), grid and vec4 flags of conv2d_gemm_gpu /
  // gemm_gpu for default dispatch d (its spec values plus TILE_M, TILE_N,
  // VEC_A, VEC_B: shaders/gpu_tile.glsl). The tile is chosen for the largest
  // shape; the vec4 flags only where every shape allows them. False (no GPU
  // row) when a group count would exceed 65535.
  bool SetGpuTile(Dispatch* d) {
    if (KeepsDefaultConvRow(*d)) return false;
    const std::vector<Dim>& sp = d->spec;
    Dim rows, cols, batch = d->groups[2];
    bool vec_a = false, vec_b = false;
    if (d->kernel == "conv2d_gemm") {
      // N, C, H, W, K_OUT, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, GROUPS (conv2d_gemm.glsl)
      const int64_t groups = sp[15], kd = sp[1] / groups * sp[7] * sp[8];
      rows = sp[4] / groups;
      cols = sp[0] * sp[5] * sp[6];
      vec_a = kd % 4 == 0;
      // 1x1, stride 1, no padding: column = pixel; four aligned columns stay in one image.
      vec_b = sp[7] == 1 && sp[8] == 1 && sp[9] == 1 && sp[10] == 1 && sp[11] == 0 && sp[12] == 0 &&
              SameDim(sp[5], sp[2]) && SameDim(sp[6], sp[3]) && Divisible(sp[2] * sp[3], 4);
    } else {
      // M, N, K, SAB, SAM, SAK, SBB, SBK, SBN (gemm_constants.glsl)
      rows = sp[0];
      cols = sp[1];
      vec_a = sp[5] == 1 && !sp[5].is_symbolic() && Divisible(sp[3], 4) && Divisible(sp[4], 4) &&
              Divisible(sp[2], 4);
      vec_b = sp[8] == 1 && !sp[8].is_symbolic() && Divisible(sp[6], 4) && Divisible(sp[7], 4) &&
              Divisible(sp[1], 4);
    }
    // Sizes beyond 32-bit indexing (or unbounded) never reach a kernel; stop before the arithmetic.
    if (UpperBound(rows) > INT32_MAX || UpperBound(cols) > INT32_MAX || UpperBound(batch) > 65535) return false;
    const GpuTile t = ChooseGpuTile(UpperBound(rows), UpperBound(cols), UpperBound(batch));
    const Dim gx = CeilDiv(cols, Dim(t.n)), gy = CeilDiv(rows, Dim(t.m));
    if (UpperBound(gx) > 65535 || UpperBound(gy) > 65535 || UpperBound(batch) > 65535) return false;
    d->gpu_groups[0] = gx;
    d->gpu_groups[1] = gy;
    d->gpu_groups[2] = batch;
    d->gpu_spec = sp;
    d->gpu_spec.insert(d->gpu_spec.end(), {Dim(t.m), Dim(t.n), Dim(vec_a ? 1 : 0), Dim(vec_b ? 1 : 0)});
    return true;
  }

  // The kWeightsF16 copy of weights value v (created on first use), or -1
  // when v is not a float constant or does not fit binary16.
  int Float16Copy(int v) {
    auto it = f16_copy_.find(v);
    if (it != f16_copy_.end()) return it->second;
    int copy = -1;
    const Value& src = p_.values[v];
    const Tensor* t = g_.FindTensor(src.tensor);
    std::vector<uint8_t> half;
    const bool fits = src.kind == BufferKind::kWeights && t && IsFloatLike(t->dtype) &&
                      (options_.weight_bytes ? WeightsToFloat16(src.data, &half) : fits_f16_.count(v) != 0);
    if (fits) {
      Value c;
      c.tensor = src.tensor;
      c.kind = BufferKind::kWeightsF16;
      c.bytes = src.bytes.value() / 4 * 2;
      c.data = std::move(half);  // empty without options_.weight_bytes
      p_.values.push_back(std::move(c));
      copy = static_cast<int>(p_.values.size() - 1);
    }
    f16_copy_[v] = copy;
    return copy;
  }

  // Appends the variants of every dispatch to its conversion-log entry:
  // " [gpu: <kernel>, cpu: <kernel>]" (either part only when present).
  void DescribeVariants() {
    for (size_t i = 0; i < p_.dispatches.size(); ++i) {
      const Dispatch& d = p_.dispatches[i];
      std::string v;
      if (!d.gpu_kernel.empty()) v = "gpu: " + d.gpu_kernel + GpuTileNote(d);
      if (d.gpu_kernel.empty() && KeepsDefaultConvRow(d)) v = "gpu: " + d.kernel + " (its grid fills a GPU)";
      if (!d.cpu_kernel.empty()) v += (v.empty() ? "" : ", ") + std::string("cpu: ") + d.cpu_kernel;
      if (!v.empty()) p_.node_kernels[dispatch_log_[i]].second += " [" + v + "]";
    }
  }

  // Appends dispatch d and its conversion-log entry (who, text).
  void PushDispatch(Dispatch d, const std::string& who, const std::string& text) {
    // A group count that is 0 at every shape: the dispatch's output and work
    // are empty, so it is not recorded at all (the log keeps the line).
    for (const Dim& g : d.groups)
      if (!g.is_symbolic() && g.value() == 0) {
        p_.node_kernels.push_back({who, text + " (skipped: no elements)"});
        return;
      }
    // An empty constant's 4-byte slot (NewValue) holds nothing to read: only
    // kernels that read no element of an empty input (EmptyReadsValueOf) may
    // bind it while they have work to do.
    for (const Binding& b : d.bindings)
      if (!b.written && empty_values_.count(b.value) != 0 && empty_reads_nodes_.count(d.node) == 0 &&
          empty_read_error_.ok()) {
        const Value& v = p_.values[static_cast<size_t>(b.value)];
        const Tensor* t = g_.FindTensor(v.tensor);
        empty_read_error_ = Unimplemented(
            "node '" + d.node + "' (" + d.op_type + ", kernel " + d.kernel + "): input '" + v.tensor +
            "' has zero elements " + (t != nullptr ? ShapeToString(t->shape) : std::string("[]")) +
            " while its output may have some, and this kernel reads its input's elements (only the reductions "
            "write a result from an empty input); give the tensor at least one element (check the input shapes in "
            "config.json \"input_shapes\")");
      }
    p_.node_kernels.push_back({who, text});
    dispatch_log_.push_back(p_.node_kernels.size() - 1);
    p_.dispatches.push_back(std::move(d));
  }

  // Graph-boundary / Cast conversion with the `convert` kernel (lower_int.h).
  void EmitConvert(const std::string& who, int src, int dst, const Dim& n, DType sfmt, DType dfmt, DType sem) {
    Dispatch d;
    d.kernel = "convert";
    d.node = who;
    d.op_type = "Convert";
    d.bindings = {{src, false}, {dst, true}};
    d.spec = ConvertSpec(n, sfmt, dfmt, sem);
    Grid1D(CeilDiv(ConvertUnits(n, dfmt), 256), d.groups);
    PushDispatch(std::move(d), who, std::string("convert (") + DTypeName(sfmt) + " -> " + DTypeName(dfmt) + ")");
  }

  // A dispatch planned by LowerIntNode: bindings by tensor name, output last.
  Status EmitPlanned(const Node& n, const IntLowering& il) {
    if (il.view) {
      OAAXVK_ASSIGN_OR_RETURN(int v, ValueOf(n.inputs[0], "node '" + n.name + "'"));
      alias_[n.outputs[0]] = v;
      p_.node_kernels.push_back({n.name, il.view_detail});
      return Status::Ok();
    }
    Dispatch d;
    d.kernel = il.d.kernel;
    d.spec = il.d.spec;
    for (const std::string& in : il.d.inputs) {
      // A Cast of a low-bit constant reads its packed bytes directly.
      const Tensor* t = g_.FindTensor(in);
      if (d.kernel == "convert" && t != nullptr && t->is_const && IsLowBitDType(t->dtype) && !alias_.count(in)) {
        OAAXVK_ASSIGN_OR_RETURN(int v, PackedWeightsOf(*t));
        d.bindings.push_back({v, false});
        d.spec.at(1) = static_cast<uint32_t>(t->dtype);
        continue;
      }
      OAAXVK_ASSIGN_OR_RETURN(int v, ValueOf(in, n.name));
      d.bindings.push_back({v, false});
    }
    int y = -1;
    if (d.kernel == "convert" && d.bindings.size() == 1 && empty_values_.count(d.bindings[0].value) != 0) {
      // A Cast of an empty constant viewed at a shape computed at run time:
      // as empty as its input, so the input's slot serves (nothing runs).
      alias_[n.outputs[0]] = d.bindings[0].value;
      p_.node_kernels.push_back({n.name, "no dispatch (an empty input: an empty output)"});
      return Status::Ok();
    }
    if (d.kernel == "convert" && DependsOnUnsampledValue(T(n.outputs[0]).numel()) && !d.bindings.empty()) {
      // A Cast of an element count computed from run-time values (feature
      // value_symbols; the bool result of ReduceMax-20 over axes read at run
      // time): flat over the elements like the activations (Unary), its count
      // the exact expression, its output the input's region (both in 4-byte
      // compute words).
      Tensor region = T(n.outputs[0]);
      const Dim& b = p_.values[static_cast<size_t>(d.bindings[0].value)].bytes;
      region.shape = {DependsOnUnsampledValue(b) ? Dim(b.value() / 4) : FloorDiv(b, Dim(4))};
      OAAXVK_ASSIGN_OR_RETURN(y, NewValue(region, BufferKind::kArena));
      alias_[n.outputs[0]] = y;
      d.value_sizes = true;
    } else {
      OAAXVK_ASSIGN_OR_RETURN(y, Out(n));
    }
    d.bindings.push_back({y, true});
    Grid1D(CeilDiv(il.d.units, 256), d.groups);
    Emit(n, d, il.d.detail);
    return Status::Ok();
  }

  // Dispatches planned by LowerIndexNode: inputs by tensor name (read), then
  // the listed node outputs (written; allocated on first use).
  Status EmitIndex(const Node& n, const IndexLowering& xl) {
    std::vector<int> scratch;
    for (size_t k = 0; k < xl.scratch_words.size(); ++k) {
      Tensor t;
      t.name = n.name + "#scratch" + std::to_string(k);
      t.dtype = DType::kInt32;
      t.shape = {xl.scratch_words[k]};
      t.has_shape = true;
      OAAXVK_ASSIGN_OR_RETURN(int v, NewValue(t, BufferKind::kArena));
      scratch.push_back(v);
    }
    for (const IndexDispatch& p : xl.dispatches) {
      Dispatch d;
      d.kernel = p.kernel;
      for (const std::string& in : p.inputs) {
        OAAXVK_ASSIGN_OR_RETURN(int v, ValueOf(in, n.name));
        d.bindings.push_back({v, false});
      }
      for (size_t k : p.outputs) {
        auto it = alias_.find(n.outputs.at(k));
        int v = it != alias_.end() ? it->second : -1;
        if (v < 0) { OAAXVK_ASSIGN_OR_RETURN(v, Out(n, k)); }
        d.bindings.push_back({v, true});
      }
      for (size_t k : p.scratch) d.bindings.push_back({scratch.at(k), true});
      d.spec = p.spec;
      d.value_sizes = p.value_sizes;
      Grid1D(CeilDiv(p.units, 256), d.groups);
      if (!p.cpu_kernel.empty()) {
        Dim g[3];
        Grid1D(p.cpu_groups, g);
        if (SetCpuVariant(&d, p.cpu_kernel.c_str(), g[0], g[1], g[2])) p_.features.insert("kernel_variants");
      }
      Emit(n, d, p.detail);
    }
    return Status::Ok();
  }

  StatusOr<int> NewValue(const Tensor& t, BufferKind kind) {
    if (!IsDeviceDType(t.dtype))
      return Unimplemented("tensor '" + t.name + "' has data type " + DTypeName(t.dtype) +
                           ", which is not supported on the device (float32/float64, int64/int32/int16/int8, "
                           "uint16/uint8, bool)");
    if (!t.has_shape) return InvalidArgument("tensor '" + t.name + "' has no static shape");
    Dim n = t.numel();
    // A zero-size graph input is bound at conversion (import), and a
    // zero-size graph output is an empty constant: each keeps a 4-byte slot
    // of its I/O buffer that no kernel reads or writes.
    // An input or output sized by an extent read back (a decided symbol), or
    // by input dimensions whose range holds 0, keeps that slot at every
    // extent, 0 included, with its expression.
    const bool io = kind == BufferKind::kInputs || kind == BufferKind::kOutputs;
    if (io && n.is_symbolic() && (ReadsDecidedSymbol(n) || LowerBound(n) <= 0)) n = Max(n, Dim(1));
    else if (n == 0 && io) n = 1;
    // A size that is 0 at this point of a dynamic conversion (an If's empty
    // branch result, feature segment_program; a dimension whose range holds
    // 0) has no bytes here; its expression sizes the plan, and a dispatch
    // whose group count is 0 there does not run.
    // A constant with no elements (every static empty tensor is one) keeps a
    // 4-byte slot too, as the I/O values do: a view of it or a reduction
    // over it binds the slot, and PushDispatch refuses any other kernel that
    // would read it while it has work to do.
    const bool empty_constant = n == 0 && !n.is_symbolic() && kind == BufferKind::kWeights;
    if (empty_constant) n = 1;
    if (n < 0 || (n == 0 && !n.is_symbolic()))
      return Unimplemented("tensor '" + t.name + "' has zero elements " + ShapeToString(t.shape) +
                           " and a kernel writes it (an operator whose outputs are all empty is folded away; this "
                           "one is not); give the tensor at least one element (check the input shapes in "
                           "config.json \"input_shapes\")");
    if (n > kMaxIndex / 4) return ResourceExhausted("tensor '" + t.name + "' is too large for 32-bit indexing");
    Value v;
    v.tensor = t.name;
    v.kind = kind;
    v.bytes = n * 4;
    if (kind == BufferKind::kInputs || kind == BufferKind::kOutputs)  // raw host bytes, 4-byte aligned
      v.bytes = CeilDiv(StorageBytes(t.dtype, n), 4) * 4;
    if (kind == BufferKind::kWeights && IsLowBitDType(t.dtype)) {  // kept in its storage format (LowBitWeights)
      v.data = StorageWords(t);
      if (v.data.empty()) v.data.assign(4, 0);  // an empty constant's slot (above)
      v.bytes = static_cast<int64_t>(v.data.size());
    } else if (kind == BufferKind::kWeights && options_.weight_bytes) {
      OAAXVK_ASSIGN_OR_RETURN(v.data, DeviceWords(t));
      if (v.data.empty()) v.data.assign(4, 0);  // an empty constant's slot (above)
    } else if (kind == BufferKind::kWeights) {
      // The digest of the bytes above, and whether they fit binary16
      // (Float16Copy), read from the tensor itself when it is in the device
      // format already.
      std::vector<uint8_t> converted;
      const bool device_format = t.dtype == DType::kFloat || t.dtype == DType::kInt32;
      if (!device_format) {
        OAAXVK_ASSIGN_OR_RETURN(converted, DeviceWords(t));
      }
      const std::vector<uint8_t>& words = device_format ? t.data : converted;
      const std::vector<uint8_t> slot(4, 0);  // an empty constant's slot (above)
      v.digest = WeightsDigest(words.empty() ? slot : words);
      if (IsFloatLike(t.dtype) && WeightsFitFloat16(words.empty() ? slot : words))
        fits_f16_.insert(static_cast<int>(p_.values.size()));
    }
    p_.values.push_back(std::move(v));
    if (empty_constant) empty_values_.insert(static_cast<int>(p_.values.size() - 1));
    return static_cast<int>(p_.values.size() - 1);
  }

  // Value holding tensor `name` (creating weights values for constants).
  StatusOr<int> ValueOf(const std::string& name, const std::string& who) {
    auto it = alias_.find(name);
    if (it != alias_.end()) return it->second;
    const Tensor* t = g_.FindTensor(name);
    if (!t) return Internal(who + ": unknown tensor '" + name + "'");
    if (!t->is_const) return Internal(who + ": tensor '" + name + "' is used before it is produced");
    if (AnyDependsOnValue(t->sym)) return RunTimeValueOf(*t, who);
    if (IsLowBitDType(t->dtype)) {
      // A low-bit constant (an int4 / float8 weight) stays packed in the
      // bundle and in device memory; a convert dispatch unpacks it into the
      // compute format where an operator other than Cast first reads it (a
      // Cast reads the packed bytes itself: EmitPlanned).
      OAAXVK_ASSIGN_OR_RETURN(int w, PackedWeightsOf(*t));
      OAAXVK_ASSIGN_OR_RETURN(int c, NewValue(*t, BufferKind::kArena));
      EmitConvert(name, w, c, t->numel(), t->dtype, ComputeDType(t->dtype), t->dtype);
      alias_[name] = c;
      return c;
    }
    OAAXVK_ASSIGN_OR_RETURN(int v, NewValue(*t, BufferKind::kWeights));
    alias_[name] = v;
    return v;
  }

  // The weights value holding low-bit constant `t` in its storage format
  // (StorageWords), created once.
  StatusOr<int> PackedWeightsOf(const Tensor& t) {
    auto it = packed_.find(t.name);
    if (it != packed_.end()) return it->second;
    OAAXVK_ASSIGN_OR_RETURN(int v, NewValue(t, BufferKind::kWeights));
    packed_[t.name] = v;
    return v;
  }

  // ValueOf for the input of a kernel that reads none of its elements when
  // it has none (a reduction over an empty set writes the empty set's value
  // from its loop bounds alone), so an empty constant may be bound to it.
  StatusOr<int> EmptyReadsValueOf(const std::string& name, const std::string& who) {
    empty_reads_nodes_.insert(who);
    return ValueOf(name, who);
  }

  // ValueOf for a constant computed from run-time values (feature
  // value_symbols) that a kernel reads as data: the graph input itself when
  // the constant is one (Resize scales), else for up to 8 integers a
  // dims_to_data dispatch that writes them from their expressions at every
  // inference (a Range start, a OneHot depth); never the conversion's values.
  StatusOr<int> RunTimeValueOf(const Tensor& t, const std::string& who) {
    for (const GraphIO& io : g_.inputs) {
      auto in = io.name == t.name && io.tensor != t.name ? alias_.find(io.tensor) : alias_.end();
      if (in != alias_.end() && t.dtype == ComputeDType(t.dtype)) return alias_[t.name] = in->second;
    }
    if (IsFloatLike(t.dtype) || t.sym.size() > 8 || static_cast<int64_t>(t.sym.size()) != t.numel().value())
      return Unimplemented(who + ": tensor '" + t.name + "' (" + DTypeName(t.dtype) + " " + ShapeToString(t.shape) +
                           ") is computed from run-time input values and read as data; kernels read such values "
                           "only as an input itself or as up to 8 integers (docs/toolchain.md \"Run-time values "
                           "with ranges\"); bind the input at conversion (config.json \"input_values\")");
    OAAXVK_ASSIGN_OR_RETURN(int v, NewValue(t, BufferKind::kArena));
    Dispatch d;
    d.kernel = "dims_to_data";
    d.node = who;
    d.op_type = "DimsToData";
    d.bindings = {{v, true}};
    d.spec = {static_cast<uint32_t>(t.sym.size())};
    for (size_t k = 0; k < 8; ++k) d.spec.push_back(k < t.sym.size() ? t.sym[k] : Dim(0));
    d.value_sizes = true;  // exact expressions of the values
    PushDispatch(std::move(d), who, "dims_to_data (" + t.name + ")");
    alias_[t.name] = v;
    return v;
  }

  StatusOr<int> Out(const Node& n, size_t k = 0) {
    const Tensor* t = g_.FindTensor(n.outputs[k]);
    OAAXVK_ASSIGN_OR_RETURN(int v, NewValue(*t, BufferKind::kArena));
    alias_[n.outputs[k]] = v;
    return v;
  }

  const Tensor& T(const std::string& name) const { return *g_.FindTensor(name); }

  void Emit(const Node& n, Dispatch d, const std::string& detail) {
    d.node = n.name;
    d.op_type = n.op_type;
    std::string text = d.kernel + (detail.empty() ? "" : " (" + detail + ")");
    PushDispatch(std::move(d), n.name, text);
  }

  static void ActSpec(const Node& n, std::vector<Dim>* s) {
    s->push_back(static_cast<uint32_t>(n.act()));
    s->push_back(FBits(n.GetFloat("_act_alpha", 0.f)));
    s->push_back(FBits(n.GetFloat("_act_beta", 0.f)));
  }
  static std::string ActName(const Node& n) {
    return n.act() != Activation::kNone ? std::string(" + ") + ActivationName(n.act()) : "";
  }

  // One entry per device operator: add a line here and a member function
  // below (plus its shader in shaders/ and its row in kernels.cpp).
  using LowerFn = Status (Lowerer::*)(const Node&);
  static const std::map<std::string, LowerFn>& Lowerings() {
    static const std::map<std::string, LowerFn> k = {
        {"Add", &Lowerer::Eltwise}, {"Sub", &Lowerer::Eltwise}, {"Mul", &Lowerer::Eltwise},
        {"Div", &Lowerer::Eltwise}, {"Pow", &Lowerer::Eltwise}, {"Max", &Lowerer::Eltwise},
        {"Min", &Lowerer::Eltwise}, {"Conv", &Lowerer::Conv}, {"ConvTranspose", &Lowerer::ConvTranspose},
        {"Gemm", &Lowerer::Gemm}, {"MatMul", &Lowerer::Gemm}, {"MaxPool", &Lowerer::Pool},
        {"AveragePool", &Lowerer::Pool}, {"GlobalAveragePool", &Lowerer::GlobalAvg},
        {"ReduceMean", &Lowerer::ReduceMean}, {"ReduceSum", &Lowerer::Reduce}, {"ReduceMax", &Lowerer::Reduce},
        {"ReduceMin", &Lowerer::Reduce}, {"ReduceProd", &Lowerer::Reduce}, {"ReduceL1", &Lowerer::Reduce},
        {"ReduceL2", &Lowerer::Reduce}, {"ReduceLogSum", &Lowerer::Reduce}, {"ReduceLogSumExp", &Lowerer::Reduce},
        {"ReduceSumSquare", &Lowerer::Reduce}, {"Softmax", &Lowerer::Softmax}, {"LogSoftmax", &Lowerer::Softmax}, {"Hardmax", &Lowerer::Softmax},
        {"Transpose", &Lowerer::Transpose}, {"Concat", &Lowerer::Concat}, {"Slice", &Lowerer::Slice},
        {"Resize", &Lowerer::Resize}, {"GridSample", &Lowerer::GridSample},
        {"ReverseSequence", &Lowerer::ReverseSequence}, {"Det", &Lowerer::Det}, {"RoiAlign", &Lowerer::RoiAlign},
        {"DeformConv", &Lowerer::DeformConv},
    };
    return k;
  }

  Status LowerNode(const Node& n) {
    const std::string& op = n.op_type;
    bool fold_only = false;
    if (op == "_LoopRead") return LoopRead(n);  // lower_loop.inc
    if (!IsSupportedOp(n.domain, op, &fold_only)) return NodeError(n, "unsupported operator");
    if (op == "Where" && IfSelectionWithKnownCondition(g_, n)) return IfSelectKnown(n);
    if (op == "Where" && n.HasAttr("_if_larger")) return IfSelect(n);
    if (IsLeadingOnesSelection(g_, n)) OAAXVK_RETURN_IF_ERROR(CheckLeadingOnesSelection(g_, n));
    if (n.HasAttr("_decided_extent")) return DecidedExtent(n);
    if (fold_only)
      return NodeError(n, "its inputs are not compile-time constants; " + op +
                              " is computed only at conversion: export the model with a fixed input size, or bind "
                              "the graph inputs it reads with config.json \"input_values\"");
    // Indexing / scanning operators, MaxPool with Indices (lower_index.cpp).
    OAAXVK_ASSIGN_OR_RETURN(IndexLowering xl, LowerIndexNode(g_, n));
    if (xl.handled) return EmitIndex(n, xl);
    if (op == "ArgMax" || op == "ArgMin") return ArgReduce(n);  // any device data type (lower_split.inc)
    // Integer / logic / indexing operators, Cast, integer arithmetic (lower_int.cpp).
    OAAXVK_ASSIGN_OR_RETURN(IntLowering il, LowerIntNode(g_, n));
    if (il.handled) return EmitPlanned(n, il);
    // Data movement copies 32-bit words of any device data type; every other
    // operator computes in float32 (float64 values are carried as float32).
    bool data_movement = op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
                         op == "Identity" || op == "Dropout" || op == "Transpose" || op == "Concat" || op == "Slice" ||
                         op == "ReverseSequence" || op == "RoiAlign";  // RoiAlign checks its float inputs itself
    for (size_t k = 0; k < n.inputs.size() + n.outputs.size(); ++k) {
      bool is_out = k >= n.inputs.size();
      const std::string& name = is_out ? n.outputs[k - n.inputs.size()] : n.inputs[k];
      const Tensor* t = name.empty() ? nullptr : g_.FindTensor(name);
      if (!t || t->dtype == DType::kUndefined || (!is_out && t->is_const && k > 0)) continue;
      if (data_movement ? !IsDeviceDType(t->dtype) : !IsFloatLike(t->dtype))
        return NodeError(n, std::string(is_out ? "output '" : "input '") + name + "' has data type " +
                                DTypeName(t->dtype) + "; " + op +
                                (data_movement ? " supports float32/float64, int64/int32/int16/int8, uint16/uint8 and bool"
                                               : " is supported on float32/float64 values only"));
    }
    // Feature value_symbols: a shape computed from a run-time input value
    // reaches only views and graph outputs (every kernel's sizes are
    // functions of the input shapes).
    const bool view = op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity";
    // Feature data_dependent_outputs: a node reading a tensor whose extent
    // only the device knows keeps that extent in its outputs (shape
    // inference, ir/extent.h, refuses every other reader).
    for (const std::string& in : n.inputs)
      if (!in.empty() && g_.FindTensor(in) && T(in).data_dependent_axis >= 0 &&
          (n.outputs.empty() || n.outputs[0].empty() || T(n.outputs[0]).data_dependent_axis < 0))
        return NodeError(n, "internal: input '" + in + "' has an extent that only the device knows, which the "
                                "output does not carry");
    // The activations (Unary) run flat over the elements: their only sizes
    // are the element count's expression, exact at every value (0 included:
    // the dispatch then does not run), and the output takes the input's
    // planned region.
    const bool flat = IsActivationOp(op) && !n.outputs.empty() && g_.FindTensor(n.outputs[0]);
    for (const std::string& in : n.inputs)
      if (!view && !flat && !in.empty() && g_.FindTensor(in) && AnyDependsOnUnsampledValue(T(in).shape))
        return NodeError(n, "input '" + in + "' has a shape " + ShapeToString(T(in).shape) +
                                " computed from a run-time input value; only Reshape, Flatten, Squeeze, Unsqueeze, "
                                "Identity and the elementwise activations may follow such a value (bind the input at "
                                "conversion, config.json \"input_values\")");
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity" ||
        op == "Dropout" || op == "Cast") {
      OAAXVK_ASSIGN_OR_RETURN(int v, ValueOf(n.inputs[0], "node '" + n.name + "'"));
      alias_[n.outputs[0]] = v;
      p_.node_kernels.push_back({n.name, "view (no dispatch)"});
      return Status::Ok();
    }
    if (IsActivationOp(op)) return Unary(n);  // flat over the elements: any rank
    for (const std::string& o : n.outputs)
      if (!o.empty() && T(o).shape.size() > 6) return NodeError(n, "rank above 6 is not supported");
    auto it = Lowerings().find(op);
    if (it == Lowerings().end()) return NodeError(n, "no lowering");
    return (this->*(it->second))(n);
  }

  // The selection of an If whose condition only the device knows and whose
  // branches give different shapes (ir/shape_infer_int.cpp): the rows so far
  // end a segment, the host reads the condition back and sets the decided
  // symbol `larger`, and the next segment copies the taken branch's
  // elements into the output (sized by `larger`: the other copy moves 0
  // elements). Both branches ran before the cut, as for Where.
  Status IfSelect(const Node& n) {
    SymContext* c = SymContext::Current();
    const int64_t larger = n.GetInt("_if_larger", -1), cond = n.GetInt("_if_cond", -1);
    if (c == nullptr || larger < 0 || cond < 0 || static_cast<size_t>(larger) >= c->symbols().size())
      return NodeError(n, "internal: the If selection has no decided symbols");
    const Tensor& then_t = T(n.inputs[1]);
    const Tensor& else_t = T(n.inputs[2]);
    bool then_ge = true;
    for (size_t a = 0; a < then_t.shape.size(); ++a) then_ge = then_ge && then_t.shape[a] >= else_t.shape[a];
    OAAXVK_ASSIGN_OR_RETURN(int cv, ValueOf(n.inputs[0], n.name));
    if (p_.values[static_cast<size_t>(cv)].kind != BufferKind::kArena) {
      // A graph input or constant condition: one word copied into the arena,
      // where the host reads it back.
      Tensor ct = T(n.inputs[0]);
      ct.name = n.name + "#cond";
      ct.shape = {1};
      OAAXVK_ASSIGN_OR_RETURN(int copy, NewValue(ct, BufferKind::kArena));
      Dispatch d;
      d.kernel = "strided_copy";
      d.bindings = {{cv, false}, {copy, true}};
      d.spec = {1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};
      Grid1D(Dim(1), d.groups);
      Emit(n, std::move(d), "the If condition, for the host");
      cv = copy;
    }
    std::string if_name = n.name;
    const std::string suffix = "/select";
    if (if_name.size() > suffix.size() && if_name.compare(if_name.size() - suffix.size(), suffix.size(), suffix) == 0)
      if_name.resize(if_name.size() - suffix.size());
    cuts_.push_back({static_cast<uint32_t>(p_.dispatches.size()), cv, cond, larger, then_ge,
                     "the condition of If '" + if_name + "'"});
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    const Dim taken(n.GetInt("_if_larger_value", 1), c->SymbolNode(static_cast<size_t>(larger)));
    return CopyTakenBranch(n, y, then_ge ? taken : Dim(1) - taken, then_ge ? Dim(1) - taken : taken);
  }

  // The selection of an If whose condition the shape program computes
  // (ir/shape_infer_int.h IfSelectionWithKnownCondition): no cut and no
  // readback; the copies are sized by the condition's expression.
  Status IfSelectKnown(const Node& n) {
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    const Dim cond = IfConditionDim(T(n.inputs[0]));
    return CopyTakenBranch(n, y, cond, Dim(1) - cond);
  }

  // Copies the If branch outputs n.inputs[1] (then) and n.inputs[2] (else)
  // into value `y`, each copy moving `then_taken` (`else_taken`, 0 or 1)
  // times its branch's elements, so only the taken branch's elements land.
  Status CopyTakenBranch(const Node& n, int y, const Dim& then_taken, const Dim& else_taken) {
    for (int branch = 0; branch < 2; ++branch) {
      const bool is_then = branch == 0;
      const Tensor& src = T(n.inputs[is_then ? 1 : 2]);
      if (!src.numel().is_symbolic() && src.numel().value() == 0) continue;  // an empty branch result: nothing to copy
      OAAXVK_ASSIGN_OR_RETURN(int sv, ValueOf(src.name, n.name));
      const Dim count = (is_then ? then_taken : else_taken) * src.numel();
      Dispatch d;
      d.kernel = "strided_copy";
      d.bindings = {{sv, false}, {y, true}};
      d.spec = {count, 0, 0, 1, 1, 1, 1, 1, count, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};
      Grid1D(CeilDiv(count, 256), d.groups);
      Emit(n, std::move(d), std::string(is_then ? "then" : "else") + " branch, when the device takes it");
    }
    return Status::Ok();
  }

  // A NonZero / Compress / NonMaxSuppression whose extent the driver turned
  // into a decided symbol (ir/extent.h DecidedExtentDim, docs/toolchain.md
  // "Data-dependent extents"): the operator writes its planned largest
  // result into a scratch value, the rows so far end a segment, the host
  // reads the extent back into the symbol (clamped to [0, the planned
  // extent]), and the next segment copies the result into the output,
  // dense at that extent (the rows of a NonZero [rank, n] or of a Compress
  // along an inner axis lie at the planned stride in the scratch).
  Status DecidedExtent(const Node& n) {
    SymContext* c = SymContext::Current();
    const int64_t k = n.GetInt("_decided_extent", -1);
    const int64_t axis = n.op_type == "NonMaxSuppression" ? 0 : n.GetInt("_extent_axis", -1);
    if (n.outputs.size() < 2 || n.outputs[1].empty() || axis < 0)
      return NodeError(n, "internal: the data-dependent extent has no extent output or axis");
    const Tensor& y = T(n.outputs[0]);
    if (c == nullptr || k < 0 || static_cast<size_t>(k) >= c->symbols().size() ||
        static_cast<size_t>(axis) >= y.shape.size() || !ReadsDecidedSymbol(y.shape[static_cast<size_t>(axis)]))
      return NodeError(n, "internal: the extent of output '" + n.outputs[0] +
                              "' was marked for a read-back, but it is not a decided symbol here (only the "
                              "conversion driver compiles such a node)");
    // The planned extent at this point (the kernels' layout): NonZero's
    // element count, Compress's axis (or element count), NonMaxSuppression's
    // pairs x slots (its per-pair selections output).
    const Tensor& x = T(n.inputs.at(0));
    Dim planned_extent = x.numel();
    if (n.op_type == "Compress" && n.HasAttr("axis")) planned_extent = x.shape.at(static_cast<size_t>(axis));
    if (n.op_type == "NonMaxSuppression") {
      if (n.outputs.size() < 3) return NodeError(n, "internal: the selections output is missing");
      const Shape& sel = T(n.outputs[2]).shape;
      planned_extent = sel.at(0) * sel.at(1);
    }
    Tensor planned = y;
    planned.name = n.outputs[0] + "#planned";
    planned.shape[static_cast<size_t>(axis)] = planned_extent;
    OAAXVK_ASSIGN_OR_RETURN(int pv, NewValue(planned, BufferKind::kArena));
    alias_[n.outputs[0]] = pv;
    OAAXVK_ASSIGN_OR_RETURN(IndexLowering xl, LowerIndexNode(g_, n));
    if (!xl.handled) return NodeError(n, "internal: no device lowering for a data-dependent extent");
    OAAXVK_RETURN_IF_ERROR(EmitIndex(n, xl));
    alias_.erase(n.outputs[0]);
    OAAXVK_ASSIGN_OR_RETURN(int ev, ValueOf(n.outputs[1], n.name));
    DecidedCut cut;
    cut.dispatch = static_cast<uint32_t>(p_.dispatches.size());
    cut.cond_value = ev;
    cut.cond_symbol = k;
    cut.clamp = true;
    cut.text = "the extent '" + n.outputs[1] + "' of " + n.op_type + " '" + n.name + "'";
    cuts_.push_back(std::move(cut));
    OAAXVK_ASSIGN_OR_RETURN(int yv, Out(n));
    Dispatch d;
    d.kernel = "strided_copy";
    d.bindings = {{pv, false}, {yv, true}};
    d.spec = CopySpec(y.shape, DenseStrides(planned.shape), DenseStrides(y.shape), 0, 0);
    Grid1D(CeilDiv(NumElements(y.shape), 256), d.groups);  // at least one group (a zero extent)
    Emit(n, std::move(d), "the result at the extent read back");
    return Status::Ok();
  }

  // Feature segment_program: the segments between the cuts of IfSelect and
  // DecidedExtent and around the bodies of device loops, and the host steps
  // that run them (docs/bundle-format.md "Segment program").
  Status BuildControlProgram() {
    if (cuts_.empty() && loops_.empty()) return Status::Ok();
    SymContext* c = SymContext::Current();
    ControlProgram& cp = p_.control;
    uint32_t begin = 0;
    size_t next_loop = 0;
    auto loops_before = [&](uint32_t d) {
      for (; next_loop < loops_.size() && loops_[next_loop].begin < d; ++next_loop) {
        const LoopCut& L = loops_[next_loop];
        if (d < L.end)
          return Unimplemented("node '" + L.name + "' (Loop): the body holds an If or a data-dependent extent "
                               "decided on the device (a read-back inside the loop); a Loop run on the device "
                               "supports neither yet (bind the values they depend on in config.json)");
        LoopSteps(L, &begin);
      }
      return Status::Ok();
    };
    for (size_t i = 0; i < cuts_.size(); ++i) {
      const DecidedCut& k = cuts_[i];
      OAAXVK_RETURN_IF_ERROR(loops_before(k.dispatch));
      cp.steps.push_back({ControlOp::kRun, static_cast<int64_t>(cp.segments.size())});
      cp.segments.push_back({begin, k.dispatch});
      begin = k.dispatch;
      cp.texts.push_back(k.text);
      cp.reads.push_back({k.cond_value, 0, DType::kInt32, k.clamp ? ControlReadMode::kClamp : ControlReadMode::kRefuse,
                          static_cast<uint32_t>(cp.texts.size() - 1)});
      cp.steps.push_back({ControlOp::kRead, k.cond_symbol, static_cast<int64_t>(cp.reads.size() - 1)});
      if (k.larger_symbol < 0) continue;  // an extent: the read sets the symbol itself
      const int32_t cond = c->SymbolNode(static_cast<size_t>(k.cond_symbol));
      const int32_t larger = k.then_larger ? cond : c->Make(SymOp::kSub, c->ConstNode(1), cond);
      cp.steps.push_back({ControlOp::kSet, k.larger_symbol, larger});
    }
    OAAXVK_RETURN_IF_ERROR(loops_before(std::numeric_limits<uint32_t>::max()));
    cp.steps.push_back({ControlOp::kRun, static_cast<int64_t>(cp.segments.size())});
    cp.segments.push_back({begin, static_cast<uint32_t>(p_.dispatches.size())});
    return Status::Ok();
  }

#include "toolchain/lower/lower_loop.inc"

  Status ConvTranspose(const Node& n) {
    const Shape& xs = T(n.inputs[0]).shape;
    const Shape& ws = T(n.inputs[1]).shape;
    const Shape& ys = T(n.outputs[0]).shape;
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int w, ValueOf(n.inputs[1], n.name));
    bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();
    int b = w;
    if (has_bias) { OAAXVK_ASSIGN_OR_RETURN(b, ValueOf(n.inputs[2], n.name)); }
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    std::vector<int64_t> st = n.GetInts("strides", {1, 1}), dl = n.GetInts("dilations", {1, 1}),
                         pd = n.GetInts("_pads", {0, 0, 0, 0});
    // shaders/conv_transpose2d.glsl: per output, KH x KW tap checks and C /
    // group channels for each tap that lands on it (per axis at most
    // ceil(K / (S / gcd(S, D))) of them).
    {
      auto landing = [](int64_t k, int64_t s, int64_t d) {
        const int64_t period = s / std::gcd(s, std::max<int64_t>(d, 1));
        return (k + period - 1) / period;
      };
      const int64_t kh = UpperBound(ws[2]), kw = UpperBound(ws[3]);
      const int64_t cg = UpperBound(xs[1]) / std::max<int64_t>(n.GetInt("group", 1), 1);
      const int64_t per_output = kh * kw + landing(kh, st[0], dl[0]) * landing(kw, st[1], dl[1]) * cg;
      if (per_output > kLoopBudget)
        return NodeError(n, StrFormat("each output needs %lld loop iterations (C/group = %lld channels for each "
                                      "of its filter taps), above the per-invocation budget of %lld "
                                      "(docs/toolchain.md, \"Loop budget\"); split the input channels into "
                                      "groups of ConvTransposes whose outputs are added",
                                      static_cast<long long>(per_output), static_cast<long long>(cg),
                                      static_cast<long long>(kLoopBudget)));
    }
    auto u = [](const Dim& v) { return v; };
    Dispatch d;
    d.kernel = "conv_transpose2d";
    d.bindings = {{x, false}, {w, false}, {b, false}, {y, true}};
    d.spec = {u(xs[0]), u(xs[1]), u(xs[2]), u(xs[3]), u(ys[1]), u(ys[2]), u(ys[3]), u(ws[2]), u(ws[3]),
              u(st[0]), u(st[1]), u(pd[0]), u(pd[1]), u(dl[0]), u(dl[1]), u(n.GetInt("group", 1)),
              has_bias ? 1u : 0u};
    ActSpec(n, &d.spec);
    Grid1D(CeilDiv(NumElements(ys), 256), d.groups);
    // Non-overlapping upsampling (kernel == stride, 4 taps, no padding,
    // dilation 1, group 1, no output_padding): every output takes one input
    // pixel and one tap, a register-blocked CPU-class kernel
    // (shaders/conv_transpose2d_tap4_cpu.comp). Other shapes get the direct
    // kernel's texel twin (AddTexelTwins).
    const bool tap4 = ws[2] == st[0] && ws[3] == st[1] && ws[2] * ws[3] == 4 && dl[0] == 1 && dl[1] == 1 &&
                      pd[0] == 0 && pd[1] == 0 && n.GetInt("group", 1) == 1 && SameDim(ys[2], xs[2] * ws[2]) &&
                      SameDim(ys[3], xs[3] * ws[3]);
    // Grid: x over input positions (4 per invocation, 64 lanes), y over blocks of 4 output channels.
    if (tap4 && SetCpuVariant(&d, "conv_transpose2d_tap4_cpu", CeilDiv(xs[0] * xs[2] * xs[3], 256),
                              CeilDiv(ys[1], 4), 1))
      p_.features.insert("kernel_variants");
    Emit(n, d, StrFormat("%lldx%lld s%lld", static_cast<long long>(ws[2]), static_cast<long long>(ws[3]),
                         static_cast<long long>(st[0])) + ActName(n));
    return Status::Ok();
  }

#include "toolchain/lower/lower_float.inc"
#include "toolchain/lower/lower_split.inc"
#include "toolchain/lower/lower_sampling.inc"

  Status ReduceMean(const Node& n) {
    // Axes read at run time have no static `_axes`: the general kernel.
    if (n.GetInt("_axes_by_value", 0) != 0) return Reduce(n);
    const Shape& xs = T(n.inputs[0]).shape;
    std::vector<int64_t> axes = n.GetInts("_axes", {});
    int64_t rank = static_cast<int64_t>(xs.size());
    // Trailing axes: contiguous rows (reduce_mean); any other set: the reduce kernel.
    for (size_t i = 0; i < axes.size(); ++i)
      if (axes[i] != rank - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i)) return Reduce(n);
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    Dim cols = 1, rows = 1;
    for (int64_t i = 0; i < rank; ++i) {
      if (std::find(axes.begin(), axes.end(), i) != axes.end()) cols *= xs[i];
      else rows *= xs[i];
    }
    return EmitRowMean(n, x, y, rows, cols,
                       StrFormat("rows=%lld cols=%lld", static_cast<long long>(rows), static_cast<long long>(cols)));
  }

  Status Slice(const Node& n) {
    const Shape& xs = T(n.inputs[0]).shape;
    const Shape& ys = T(n.outputs[0]).shape;
    std::vector<Dim> first, step, len;
    const bool by_value = n.GetInt("_slice_by_value", 0) != 0;
    if (by_value) {
      // Bounds read at run time (feature value_symbols): first index and step
      // per dimension are expressions; the output region is planned at the
      // input's size (the largest any slice can be).
      OAAXVK_ASSIGN_OR_RETURN(bool still, SliceByValue(g_, n, xs, &first, &step, &len));
      if (!still) return Internal("node '" + n.name + "': Slice bounds no longer depend on run-time values");
    } else {
      first = ToDims(n.GetInts("_starts", {}));
      step = ToDims(n.GetInts("_steps", {}));
    }
    if (first.size() != xs.size() || step.size() != xs.size())
      return Internal("node '" + n.name + "': Slice bounds missing");
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    int y = -1;
    if (by_value) {
      Tensor region = T(n.outputs[0]);
      region.shape = xs;
      OAAXVK_ASSIGN_OR_RETURN(y, NewValue(region, BufferKind::kArena));
      alias_[n.outputs[0]] = y;
    } else {
      OAAXVK_ASSIGN_OR_RETURN(y, Out(n));
    }
    std::vector<Dim> xd = DenseStrides(xs), si(xs.size());
    Dim base = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      base += first[i] * xd[i];
      si[i] = step[i] * xd[i];  // negative steps wrap in uint32 arithmetic and still index correctly
    }
    Dispatch d;
    d.kernel = "strided_copy";
    d.bindings = {{x, false}, {y, true}};
    d.spec = CopySpec(ys, si, DenseStrides(ys), base, 0);
    d.value_sizes = by_value;
    Grid1D(CeilDiv(NumElements(ys), 256), d.groups);  // Grid1D keeps at least one group (an empty slice)
    Emit(n, d, by_value ? "slice, bounds at run time" : "slice");
    return Status::Ok();
  }

  Status ReverseSequence(const Node& n) {
    const Shape& xs = T(n.inputs[0]).shape;
    const int64_t time_axis = n.GetInt("time_axis", 0);
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int lens, ValueOf(n.inputs[1], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    const int64_t inner = NumElements(Shape(xs.begin() + 2, xs.end()));
    const int64_t t = xs[time_axis], b = xs[1 - time_axis];
    Dispatch d;
    d.kernel = "reverse_sequence";
    d.bindings = {{x, false}, {lens, false}, {y, true}};
    d.spec = {static_cast<uint32_t>(t), static_cast<uint32_t>(b), static_cast<uint32_t>(inner),
              static_cast<uint32_t>(time_axis)};
    Grid1D((NumElements(xs) + 255) / 256, d.groups);
    Emit(n, d, StrFormat("time_axis=%lld", static_cast<long long>(time_axis)));
    return Status::Ok();
  }

  Status Det(const Node& n) {
    const Shape& xs = T(n.inputs[0]).shape;
    const int64_t dim = xs.back();
    if (dim > 16) return NodeError(n, "matrices larger than 16x16 are not supported, got " + ShapeToString(xs));
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    const int64_t batch = NumElements(xs) / (dim * dim);
    Dispatch d;
    d.kernel = "det";
    d.bindings = {{x, false}, {y, true}};
    d.spec = {static_cast<uint32_t>(batch), static_cast<uint32_t>(dim)};
    Grid1D((batch + 63) / 64, d.groups);
    Emit(n, d, StrFormat("%lld matrices %lldx%lld", static_cast<long long>(batch), static_cast<long long>(dim),
                         static_cast<long long>(dim)));
    return Status::Ok();
  }

  Status RoiAlign(const Node& n) {
    for (size_t k = 0; k < 2; ++k)
      if (!IsFloatLike(T(n.inputs[k]).dtype))
        return NodeError(n, "input '" + n.inputs[k] + "' must be float32/float64, got " + DTypeName(T(n.inputs[k]).dtype));
    const Shape& xs = T(n.inputs[0]).shape;
    const Shape& ys = T(n.outputs[0]).shape;
    // RoiAlign-10 has no coordinate_transformation_mode: its sample grid is
    // the one RoiAlign-16 calls output_half_pixel (no half-pixel shift, ROI
    // sizes at least 1), which torchvision's aligned=False exports rely on.
    // The half_pixel default applies from opset 16 on.
    std::string mode = n.GetString("mode", "avg"),
                ctm = n.GetString("coordinate_transformation_mode", g_.opset < 16 ? "output_half_pixel" : "half_pixel");
    if (mode != "avg" && mode != "max") return NodeError(n, "mode '" + mode + "' is not supported (avg, max)");
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
      return NodeError(n, "coordinate_transformation_mode '" + ctm + "' is not supported");
    const int64_t sr = n.GetInt("sampling_ratio", 0);
    if (sr < 0) return NodeError(n, "sampling_ratio must be >= 0");
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int rois, ValueOf(n.inputs[1], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int bi, ValueOf(n.inputs[2], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    auto u = [](const Dim& v) { return v; };
    Dispatch d;
    d.kernel = "roi_align";
    d.bindings = {{x, false}, {rois, false}, {bi, false}, {y, true}};
    d.spec = {u(xs[0]), u(xs[1]), u(xs[2]), u(xs[3]), u(ys[0]), u(ys[2]), u(ys[3]), u(sr),
              FBits(n.GetFloat("spatial_scale", 1.f)), ctm == "half_pixel" ? 1u : 0u, mode == "avg" ? 0u : 1u};
    Grid1D(CeilDiv(NumElements(ys), 256), d.groups);
    Emit(n, d, mode + " " + ctm);
    return Status::Ok();
  }

  Status GridSample(const Node& n) {
    const Shape& xs = T(n.inputs[0]).shape;
    const Shape& ys = T(n.outputs[0]).shape;
    static const std::map<std::string, uint32_t> kMode = {{"bilinear", 0}, {"nearest", 1}, {"bicubic", 2}};
    static const std::map<std::string, uint32_t> kPad = {{"zeros", 0}, {"border", 1}, {"reflection", 2}};
    std::string mode = n.GetString("mode", "bilinear"), pad = n.GetString("padding_mode", "zeros");
    if (!kMode.count(mode)) return NodeError(n, "mode '" + mode + "' is not supported (bilinear, nearest, bicubic)");
    if (!kPad.count(pad)) return NodeError(n, "padding_mode '" + pad + "' is not supported (zeros, border, reflection)");
    if (xs.size() == 5) return GridSample3D(n, kMode.at(mode), kPad.at(pad));  // lower_sampling.inc
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int grid, ValueOf(n.inputs[1], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    auto u = [](const Dim& v) { return v; };
    Dispatch d;
    d.kernel = "grid_sample";
    d.bindings = {{x, false}, {grid, false}, {y, true}};
    d.spec = {u(xs[0]), u(xs[1]), u(xs[2]), u(xs[3]), u(ys[2]), u(ys[3]), kMode.at(mode), kPad.at(pad),
              n.GetInt("align_corners", 0) != 0 ? 1u : 0u};
    Grid1D(CeilDiv(NumElements(ys), 256), d.groups);
    Emit(n, d, mode + " " + pad + (n.GetInt("align_corners", 0) != 0 ? " align_corners" : ""));
    return Status::Ok();
  }

  Status Resize(const Node& n) {
    const Shape& xs = T(n.inputs[0]).shape;
    const Shape& ys = T(n.outputs[0]).shape;
    std::string mode = n.GetString("mode", "nearest");
    std::string ctm = n.GetString("coordinate_transformation_mode", g_.opset < 11 ? "asymmetric" : "half_pixel");
    std::string nm = n.GetString("nearest_mode", "round_prefer_floor");
    std::vector<float> sc;
    auto it = n.attrs.find("_scales");
    if (it != n.attrs.end()) sc = it->second.floats;
    // Scales read at run time (feature float_value_symbols): the kernel reads
    // them from their input (resize2d_scales); 0 marks them unknown here.
    // keep_aspect_ratio_policy with sizes read at run time (decompose_nn.cpp
    // ResizeNd): the scales computed on the device are input 4.
    const bool policy_input = n.GetInt("_policy_scales_input", 0) != 0 && n.inputs.size() > 4;
    const bool scales_by_value = n.GetInt("_scales_by_value", 0) != 0 || policy_input;
    if (scales_by_value) sc.assign(xs.size(), 0.f);
    if (xs.size() < 2 || sc.size() != xs.size()) return NodeError(n, "needs an input of rank >= 2 with static scales");
    for (size_t i = 0; i + 2 < xs.size(); ++i)
      if (ys[i] != xs[i]) return NodeError(n, "resizing dimensions other than the last two is not supported");
    // An outer scale other than 1 that leaves the length unchanged (1.1 on a
    // length of 5) still moves every sample point, which this kernel (it
    // copies outer indices) would silently ignore; a length of 1 maps every
    // coordinate to its only element, so any scale is exact there.
    for (size_t i = 0; i + 2 < xs.size(); ++i)
      if (sc[i] != 0.f && sc[i] != 1.f && xs[i] != Dim(1))
        return NodeError(n, "scale " + std::to_string(sc[i]) + " of dimension " + std::to_string(i) +
                                " keeps its length but moves its sample points; only the last two dimensions of a "
                                "rank-4 Resize may have a scale other than 1 (give sizes, or scale 1 there)");
    static const std::map<std::string, uint32_t> kCoord = {{"half_pixel", 0}, {"asymmetric", 1}, {"align_corners", 2},
                                                          {"pytorch_half_pixel", 3}, {"tf_half_pixel_for_nearest", 4},
                                                          {"tf_crop_and_resize", 5}, {"half_pixel_symmetric", 6}};
    static const std::map<std::string, uint32_t> kNearest = {{"round_prefer_floor", 0}, {"round_prefer_ceil", 1},
                                                            {"floor", 2}, {"ceil", 3}};
    if (mode != "nearest" && mode != "linear" && mode != "cubic")
      return NodeError(n, "mode '" + mode + "' is not supported (nearest, linear, cubic)");
    if (!kCoord.count(ctm))
      return NodeError(n, "coordinate_transformation_mode '" + ctm + "' is not supported");
    if (mode != "nearest" && ctm == "tf_half_pixel_for_nearest")
      return NodeError(n, "coordinate_transformation_mode tf_half_pixel_for_nearest with " + mode + " mode is not supported");
    if (!kNearest.count(nm)) return NodeError(n, "nearest_mode '" + nm + "' is not supported");
    // antialias (Resize-18) filters linear and cubic modes (resize2d_aa);
    // nearest ignores it, as the ONNX definition says.
    const bool antialias = n.GetInt("antialias", 0) != 0 && mode != "nearest";
    uint32_t nearest = kNearest.at(nm);
    if (g_.opset < 11 && mode == "nearest" && scales_by_value) {
      nearest = 2u;  // floor: upsampling (a guard checks that)
    } else if (g_.opset < 11 && mode == "nearest") {
      // Resize-10 has no nearest_mode; ONNX Runtime floors when upsampling
      // and ceils when downsampling.
      bool down_h = sc[xs.size() - 2] < 1.f, down_w = sc[xs.size() - 1] < 1.f;
      if (down_h != down_w) return NodeError(n, "opset-10 nearest resize that upsamples one axis and downsamples the other is not supported");
      nearest = down_h ? 3u : 2u;
    }
    std::vector<float> len, roi;
    if (auto l = n.attrs.find("_lengths"); l != n.attrs.end()) len = l->second.floats;
    if (scales_by_value) len.assign(xs.size(), 0.f);
    if (len.size() != xs.size()) return NodeError(n, "needs static resized lengths");
    const bool roi_by_input = ctm == "tf_crop_and_resize" && n.GetInt("_roi_by_input", 0) != 0;
    if (roi_by_input) {
      roi.assign(2 * xs.size(), 0.f);  // read by the kernel (resize2d_roi); outer extents are 1
    } else if (ctm == "tf_crop_and_resize") {
      if (auto rt = n.attrs.find("_roi"); rt != n.attrs.end()) roi = rt->second.floats;
      if (roi.size() != 2 * xs.size()) return NodeError(n, "tf_crop_and_resize needs a constant roi");
      for (size_t i = 0; i + 2 < xs.size(); ++i)
        if (xs[i] != 1 && (roi[i] != 0.f || roi[i + xs.size()] != 1.f))
          return NodeError(n, "tf_crop_and_resize with a crop of the outer dimension " + std::to_string(i) +
                                  " is not supported (only the last two dimensions are resized)");
    } else {
      roi.assign(2 * xs.size(), 0.f);
      for (size_t i = 0; i < xs.size(); ++i) roi[i + xs.size()] = 1.f;
    }
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    size_t r = xs.size();
    Dim planes = NumElements(Shape(xs.begin(), xs.end() - 2));
    auto u = [](const Dim& v) { return v; };
    Dispatch d;
    d.kernel = "resize2d";
    d.bindings = {{x, false}, {y, true}};
    int scales_v = -1;
    if (scales_by_value && roi_by_input) return NodeError(n, "a run-time roi with run-time scales is not supported");
    if (antialias && roi_by_input)
      return NodeError(n, "antialias 1 with a roi read at run time is not supported; bind the roi at conversion "
                          "(config.json \"input_values\")");
    if (scales_by_value) {
      OAAXVK_ASSIGN_OR_RETURN(scales_v, ValueOf(n.inputs[policy_input ? 4 : g_.opset < 11 ? 1 : 2], n.name));
      d.kernel = "resize2d_scales";
      d.bindings.push_back({scales_v, false});
    } else if (roi_by_input) {
      OAAXVK_ASSIGN_OR_RETURN(int roi_v, ValueOf(n.inputs[1], n.name));
      d.kernel = "resize2d_roi";
      d.bindings.push_back({roi_v, false});
    }
    if (antialias) {
      d.kernel = scales_by_value ? "resize2d_aa_scales" : "resize2d_aa";
      OAAXVK_RETURN_IF_ERROR(AntialiasLoopBudget(n, mode == "cubic", xs, ys, sc));  // lower_sampling.inc
    }
    d.spec = {u(planes), u(xs[r - 2]), u(xs[r - 1]), u(ys[r - 2]), u(ys[r - 1]), FBits(sc[r - 2]), FBits(sc[r - 1]),
              kCoord.at(ctm), mode == "nearest" ? 0u : mode == "linear" ? 1u : 2u, nearest,
              FBits(n.GetFloat("cubic_coeff_a", -0.75f)), n.GetInt("exclude_outside", 0) != 0 ? 1u : 0u,
              FBits(roi[r - 2]), FBits(roi[2 * r - 2]), FBits(roi[r - 1]), FBits(roi[2 * r - 1]),
              FBits(n.GetFloat("extrapolation_value", 0.f)), FBits(len[r - 2]), FBits(len[r - 1])};
    // The unrounded lengths matter only to tf_crop_and_resize
    // (shaders/resize2d.glsl src_coord); elsewhere a fixed value keeps the
    // specialization the same at every input size.
    if (ctm != "tf_crop_and_resize") d.spec[17] = d.spec[18] = FBits(1.f);
    if (scales_by_value)  // SCALE_H_INDEX: 0 where the scales input holds only H and W (shape_infer.cpp _scales_hw)
      d.spec.push_back(n.GetInt("_scales_hw", 0) != 0 ? 0u : static_cast<uint32_t>(r - 2));
    if (roi_by_input) d.spec.push_back(static_cast<uint32_t>(r));         // ROI_RANK
    Grid1D(CeilDiv(NumElements(ys), 256), d.groups);
    Emit(n, d, mode + " " + ctm + (mode == "nearest" ? " " + nm : "") + (antialias ? " antialias" : ""));
    return Status::Ok();
  }

  Status Eltwise(const Node& n) {
    OAAXVK_ASSIGN_OR_RETURN(int a, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int b, ValueOf(n.inputs[1], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int c, Out(n));
    const Shape& os = T(n.outputs[0]).shape;
    Shape o6(6 - os.size(), 1);
    o6.insert(o6.end(), os.begin(), os.end());
    std::vector<Dim> sa = BroadcastStrides(T(n.inputs[0]).shape, o6), sb = BroadcastStrides(T(n.inputs[1]).shape, o6);
    Dispatch d;
    d.kernel = "eltwise";
    d.bindings = {{a, false}, {b, false}, {c, true}};
    static const std::map<std::string, uint32_t> kOp = {{"Add", 0}, {"Sub", 1}, {"Mul", 2}, {"Div", 3},
                                                       {"Pow", 4}, {"Max", 5}, {"Min", 6}};
    uint32_t opc = kOp.at(n.op_type);
    Dim N = NumElements(os);
    d.spec = {N, opc};
    ActSpec(n, &d.spec);
    for (const Dim& x : o6) d.spec.push_back(x);
    for (const Dim& x : sa) d.spec.push_back(x);
    for (const Dim& x : sb) d.spec.push_back(x);
    Grid1D(CeilDiv(N, 256), d.groups);
    Emit(n, d, n.op_type + ActName(n));
    return Status::Ok();
  }

  Status Unary(const Node& n) {
    OAAXVK_ASSIGN_OR_RETURN(ActivationParams ap, GetActivationParams(g_, n));
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    if (empty_values_.count(x) != 0) {
      // An empty constant viewed at a shape computed at run time (a Reshape
      // to run-time values): the result is as empty as the input, so the
      // input's slot serves (nothing runs).
      alias_[n.outputs[0]] = x;
      p_.node_kernels.push_back({n.name, "no dispatch (an empty input: an empty output)"});
      return Status::Ok();
    }
    Dim N = T(n.outputs[0]).numel();
    int y = -1;
    if (DependsOnUnsampledValue(N)) {
      // An element count computed from run-time values (feature
      // value_symbols) has no bound the plan can use (its value at the plan's
      // point may be below others, even 0): the output takes the input's
      // region, planned at its largest, as a graph output of such a shape
      // does.
      Tensor region = T(n.outputs[0]);
      const Dim& b = p_.values[static_cast<size_t>(x)].bytes;
      region.shape = {DependsOnUnsampledValue(b) ? Dim(b.value() / 4) : FloorDiv(b, Dim(4))};
      OAAXVK_ASSIGN_OR_RETURN(y, NewValue(region, BufferKind::kArena));
      alias_[n.outputs[0]] = y;
    } else {
      OAAXVK_ASSIGN_OR_RETURN(y, Out(n));
    }
    Dispatch d;
    d.kernel = "unary";
    d.bindings = {{x, false}, {y, true}};
    d.spec = {N, static_cast<uint32_t>(ap.act), FBits(ap.alpha), FBits(ap.beta)};
    d.value_sizes = DependsOnUnsampledValue(N);  // the element count's expression, exact at every value
    Grid1D(CeilDiv(N, 256), d.groups);
    // CPU-class variant: four elements per invocation (vec4 texel fetch and
    // vec4 store), same spec constants.
    Dim g[3];
    Grid1D(CeilDiv(N, 1024), g);
    const bool cpu = SetCpuVariant(&d, "unary_vec4_cpu", g[0], g[1], g[2]);
    if (cpu) p_.features.insert("kernel_variants");
    Emit(n, d, n.op_type);
    return Status::Ok();
  }

  Status Conv(const Node& n) {
    const Shape& xs = T(n.inputs[0]).shape;
    const Shape& ws = T(n.inputs[1]).shape;
    const Shape& ys = T(n.outputs[0]).shape;
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int w, ValueOf(n.inputs[1], n.name));
    bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();
    int b = w;  // unused binding when there is no bias (HAS_BIAS = 0)
    if (has_bias) { OAAXVK_ASSIGN_OR_RETURN(b, ValueOf(n.inputs[2], n.name)); }
    bool has_res = n.GetInt("_residual", 0) != 0;
    int res = w;  // unused binding without a fused residual (HAS_RES = 0)
    if (has_res) { OAAXVK_ASSIGN_OR_RETURN(res, ValueOf(n.inputs.at(3), n.name)); }
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    std::vector<int64_t> st = n.GetInts("strides", {1, 1}), dl = n.GetInts("dilations", {1, 1}),
                         pd = n.GetInts("_pads", {0, 0, 0, 0});
    int64_t group = n.GetInt("group", 1);
    auto u = [](const Dim& v) { return v; };
    Dispatch d;
    d.bindings = {{x, false}, {w, false}, {b, false}, {y, true}, {res, false}};
    bool depthwise = group == xs[1] && ws[0] == xs[1] && ws[1] == 1 && group > 1;
    std::string detail = StrFormat("%lldx%lld s%lld g%lld", static_cast<long long>(ws[2]), static_cast<long long>(ws[3]),
                                   static_cast<long long>(st[0]), static_cast<long long>(group)) +
                         (has_res ? " + residual Add" : "") + ActName(n);
    if (depthwise) {
      d.kernel = "depthwise_conv2d";
      d.spec = {u(xs[0]), u(xs[1]), u(xs[2]), u(xs[3]), u(ys[2]), u(ys[3]), u(ws[2]), u(ws[3]), u(st[0]), u(st[1]),
                u(pd[0]), u(pd[1]), u(dl[0]), u(dl[1]), has_bias ? 1u : 0u};
      ActSpec(n, &d.spec);
      d.spec.push_back(has_res ? 1u : 0u);
      Grid1D(CeilDiv(NumElements(ys), 256), d.groups);
      // CPU-class variant (shaders/depthwise_cpu.glsl): one invocation per bw
      // consecutive outputs along ow of one (n, c, oh) row (bw = 16 at stride
      // 1 when OW > 8, else 8); depthwise_cpu_xv reads X as vec4 texels when
      // rows come in fours at stride 1 and a kernel row's input segment
      // (from ow0 - PW rounded up to 4) fits in six texels.
      int64_t bw = st[1] == 1 && LowerBound(ys[3]) > 8 ? 16 : 8;
      int64_t skip = (pd[1] + 3) / 4 * 4 - pd[1];
      bool xv = st[1] == 1 && Divisible(xs[3], 4) && skip + bw + (ws[3] - 1) * dl[1] <= 24;
      std::string cpu = xv ? "depthwise_cpu_xv" : "depthwise_cpu";
      if (SetLinearCpuVariant(&d, cpu, xs[0] * xs[1] * ys[2] * CeilDiv(ys[3], bw), 1))
        p_.features.insert("kernel_variants");
    } else {
      // shaders/conv2d_gemm.glsl loops over C/group * KH * KW in tiles of 16
      // per invocation; conv2d_cpu*.comp over C/group * KH filter rows (times
      // KW for the wide kernel; C/group / 4 for the pointwise one).
      const int64_t kd = UpperBound(xs[1]) / group * UpperBound(ws[2]) * UpperBound(ws[3]);
      if ((kd + 15) / 16 > kLoopBudget) return LoopBudgetError(n, "C/group * KH * KW", kd, 16);
      d.kernel = "conv2d_gemm";
      d.spec = {u(xs[0]), u(xs[1]), u(xs[2]), u(xs[3]), u(ws[0]), u(ys[2]), u(ys[3]), u(ws[2]), u(ws[3]),
                u(st[0]), u(st[1]), u(pd[0]), u(pd[1]), u(dl[0]), u(dl[1]), u(group), has_bias ? 1u : 0u};
      ActSpec(n, &d.spec);
      d.spec.push_back(has_res ? 1u : 0u);
      Dim ncol = xs[0] * ys[2] * ys[3];
      int64_t m = ws[0] / group;
      d.groups[0] = CeilDiv(ncol, 64);
      d.groups[1] = (m + 63) / 64;
      d.groups[2] = group;
      if (d.groups[0] > 65535 || d.groups[1] > 65535 || d.groups[2] > 65535)
        return NodeError(n, "workgroup count above 65535");
      // CPU-class variant (shaders/conv2d_cpu*.comp): conv2d_cpu_pw for
      // pointwise Convs whose pixels and input channels come in fours (vec4
      // texel reads of X and W); else conv2d_cpu (filter width 1, 2, 3, 4 or
      // 6) or conv2d_cpu_wide (other widths), whose 8-position blocks stay
      // inside one output row (each row padded to a multiple of 8 columns),
      // with suffix _xv when input rows come in fours (X read as vec4 texels).
      int64_t cg = xs[1] / group;
      bool pointwise = ws[2] == 1 && ws[3] == 1 && st[0] == 1 && st[1] == 1 && pd[0] == 0 && pd[1] == 0 &&
                       SameDim(ys[2], xs[2]) && SameDim(ys[3], xs[3]) && Divisible(xs[2] * xs[3], 4) && cg % 4 == 0;
      bool wide = ws[3] == 5 || ws[3] >= 7;
      std::string cpu = pointwise ? "conv2d_cpu_pw" : wide ? "conv2d_cpu_wide" : "conv2d_cpu";
      if (!pointwise && Divisible(xs[3], 4)) cpu += "_xv";
      // One invocation per (block of 8 channels, block of 8 positions) pair,
      // 64 to a workgroup; groups along z.
      Dim row_blocks = CeilDiv(ys[3], kConvCpuBlock);
      Dim pos_blocks = pointwise ? CeilDiv(ncol, kConvCpuBlock) : xs[0] * ys[2] * row_blocks;
      Dim pairs = (m + kConvCpuBlock - 1) / kConvCpuBlock * pos_blocks;
      const int64_t kh = UpperBound(ws[2]), kw = UpperBound(ws[3]);
      const int64_t cpu_iterations = pointwise ? cg / 4 : wide ? cg * kh * kw : cg * kh;
      if (cpu_iterations <= kLoopBudget && SetLinearCpuVariant(&d, cpu, pairs, group))
        p_.features.insert("kernel_variants");
    }
    Emit(n, d, detail);
    return Status::Ok();
  }

  Status Gemm(const Node& n) {
    const Shape& as = T(n.inputs[0]).shape;
    const Shape& bs = T(n.inputs[1]).shape;
    const Shape& ys = T(n.outputs[0]).shape;
    OAAXVK_ASSIGN_OR_RETURN(int a, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int b, ValueOf(n.inputs[1], n.name));
    Dim M, N, K, batch = 1, sab = 0, sam, sak, sbb = 0, sbk, sbn, scm = 0, scn = 0;
    bool has_bias = false;
    int c = b;
    float alpha = 1.f, beta = 1.f;
    if (n.op_type == "Gemm") {
      bool ta = n.GetInt("transA", 0), tb = n.GetInt("transB", 0);
      M = ys[0]; N = ys[1]; K = ta ? as[0] : as[1];
      sam = ta ? Dim(1) : K; sak = ta ? M : Dim(1);
      sbk = tb ? Dim(1) : N; sbn = tb ? K : Dim(1);
      alpha = n.GetFloat("alpha", 1.f);
      beta = n.GetFloat("beta", 1.f);
      if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
        has_bias = true;
        OAAXVK_ASSIGN_OR_RETURN(c, ValueOf(n.inputs[2], n.name));
        std::vector<Dim> cs = BroadcastStrides(T(n.inputs[2]).shape, {M, N});
        scm = cs[0]; scn = cs[1];
      }
    } else {
      Shape a2 = as, b2 = bs;
      if (a2.size() == 1) a2.insert(a2.begin(), 1);
      bool bvec = b2.size() == 1;
      if (bvec) b2.push_back(1);
      M = a2[a2.size() - 2]; K = a2.back(); N = b2.back();
      sam = K; sak = 1; sbk = N; sbn = 1;
      Shape ob(ys.begin(), ys.end() - (as.size() == 1 ? 0 : 1) - (bvec ? 0 : 1));
      batch = NumElements(ob);
      Dim ab = NumElements(Shape(a2.begin(), a2.end() - 2)), bb = NumElements(Shape(b2.begin(), b2.end() - 2));
      auto bstride = [&](const Dim& nb, const Shape& full, const Dim& mat) -> StatusOr<Dim> {
        if (nb == 1 && !nb.is_symbolic()) return Dim(0);
        Shape mine(full.begin(), full.end() - 2);
        Shape pad(ob.size() - std::min(ob.size(), mine.size()), 1);
        pad.insert(pad.end(), mine.begin(), mine.end());
        if (nb == batch && pad == ob) return mat;
        return NodeError(n, "partial batch broadcasting " + ShapeToString(as) + " x " + ShapeToString(bs) + " is not supported");
      };
      OAAXVK_ASSIGN_OR_RETURN(sab, bstride(ab, a2, M * K));
      OAAXVK_ASSIGN_OR_RETURN(sbb, bstride(bb, b2, K * N));
    }
    // shaders/gemm.glsl loops over K in tiles of 16 per invocation,
    // gemm_cpu.glsl in steps of 4: within kLoopBudget or refused / left out.
    const int64_t k_max = UpperBound(K);
    if ((k_max + 15) / 16 > kLoopBudget) return LoopBudgetError(n, "K", k_max, 16);
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    auto u = [](const Dim& v) { return v; };
    Dispatch d;
    d.kernel = "gemm";
    d.bindings = {{a, false}, {b, false}, {c, false}, {y, true}};
    d.spec = {u(M), u(N), u(K), u(sab), u(sam), u(sak), u(sbb), u(sbk), u(sbn), has_bias ? 1u : 0u, u(scm), u(scn),
              FBits(alpha), FBits(beta)};
    ActSpec(n, &d.spec);
    d.groups[0] = CeilDiv(N, 64);
    d.groups[1] = CeilDiv(M, 64);
    d.groups[2] = batch;
    if (d.groups[0] > 65535 || d.groups[1] > 65535 || d.groups[2] > 65535)
      return NodeError(n, "workgroup count above 65535");
    // CPU-class variant (shaders/gemm_cpu.glsl): 8 x 8 blocks of Y, one per
    // invocation. A and B are read through RGBA32 texel views (vec4 fetches)
    // when their rows are vec4-aligned (A along k or, transposed, along m; B
    // along n or, transposed, along k; the shader re-derives which), else
    // through R32 views: kernel gemm_cpu, or gemm_cpu_<A><B> naming the views.
    auto al4 = [](const Dim& v) { return Divisible(v, 4); };
    bool a_v = (sak == 1 && al4(sam) && al4(sab) && al4(K)) || (sam == 1 && al4(sak) && al4(sab) && al4(M));
    bool b_v = (sbn == 1 && al4(sbk) && al4(sbb) && al4(N)) || (sbk == 1 && al4(sbn) && al4(sbb) && al4(K));
    std::string cpu_kernel =
        a_v && b_v ? "gemm_cpu" : std::string("gemm_cpu_") + (a_v ? "v" : "f") + (b_v ? "v" : "f");
    bool cpu = (k_max + 3) / 4 <= kLoopBudget &&
               SetLinearCpuVariant(&d, cpu_kernel, CeilDiv(M, kGemmCpuBlock) * CeilDiv(N, kGemmCpuBlock), batch);
    if (cpu) p_.features.insert("kernel_variants");
    Emit(n, d, StrFormat("M=%lld N=%lld K=%lld batch=%lld", static_cast<long long>(M), static_cast<long long>(N),
                         static_cast<long long>(K), static_cast<long long>(batch)) + ActName(n));
    return Status::Ok();
  }

  // Sets `d`'s CPU variant to `kernel` (d's spec values) for a kernel whose
  // invocations each take one of `items` work items numbered 0..items-1 across
  // 64-wide workgroups (item = (group_y * groups_x + group_x) * 64 + lane;
  // shaders/gemm_cpu.glsl, depthwise_cpu.comp), times `z` along group z.
  // Leaves d without a variant when a group count would exceed 65535.
  static bool SetLinearCpuVariant(Dispatch* d, const std::string& kernel, const Dim& items, const Dim& z) {
    Dim g[3];
    Grid1D(CeilDiv(items, kCpuLocalSize), g);
    return SetCpuVariant(d, kernel.c_str(), g[0], g[1], z);
  }

  Status Pool(const Node& n) {
    const Shape& xs = T(n.inputs[0]).shape;
    const Shape& ys = T(n.outputs[0]).shape;
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    std::vector<int64_t> k = n.GetInts("kernel_shape", {}), st = n.GetInts("strides", {1, 1}),
                         dl = n.GetInts("dilations", {1, 1}), pd = n.GetInts("_pads", {0, 0, 0, 0});
    if (n.op_type == "MaxPool" && n.GetInt("storage_order", 0) != 0) return NodeError(n, "storage_order=1 is not supported");
    auto u = [](const Dim& v) { return v; };
    Dispatch d;
    d.kernel = "pool2d";
    d.bindings = {{x, false}, {y, true}};
    d.spec = {u(xs[0] * xs[1]), u(xs[2]), u(xs[3]), u(ys[2]), u(ys[3]), u(k[0]), u(k[1]), u(st[0]), u(st[1]),
              u(pd[0]), u(pd[1]), u(pd[2]), u(pd[3]), u(dl[0]), u(dl[1]), n.op_type == "MaxPool" ? 0u : 1u,
              u(n.GetInt("count_include_pad", 0))};
    Grid1D(CeilDiv(NumElements(ys), 256), d.groups);
    Emit(n, d, StrFormat("%s %lldx%lld", n.op_type == "MaxPool" ? "max" : "avg", static_cast<long long>(k[0]),
                         static_cast<long long>(k[1])));
    return Status::Ok();
  }

  Status GlobalAvg(const Node& n) {
    const Shape& xs = T(n.inputs[0]).shape;
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    Dim rows = xs[0] * xs[1], cols = NumElements(Shape(xs.begin() + 2, xs.end()));
    return EmitRowMean(n, x, y, rows, cols, "");
  }

  Status Softmax(const Node& n) {
    const Shape& xs = T(n.inputs[0]).shape;
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    int64_t rank = static_cast<int64_t>(xs.size());
    int64_t axis = n.GetInt("axis", g_.opset >= 13 ? -1 : 1);
    if (axis < 0) axis += rank;
    Dim outer = 1, len = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) {
      if (i < axis) outer *= xs[i];
      else if (i == axis || g_.opset < 13) len *= xs[i];
      else inner *= xs[i];
    }
    const uint32_t mode = n.op_type == "LogSoftmax" ? 1u : n.op_type == "Hardmax" ? 2u : 0u;
    if (!FitsLoopBudget(SoftmaxIterations(len, mode))) return SoftmaxSplit(n, x, y, outer, len, inner, mode);
    Dispatch d;
    d.kernel = "softmax";
    d.bindings = {{x, false}, {y, true}};
    d.spec = {outer, len, inner, mode};
    Grid1D(outer * inner, d.groups);
    Emit(n, d, StrFormat("rows=%lld len=%lld", static_cast<long long>(outer * inner), static_cast<long long>(len)));
    return Status::Ok();
  }

  // strided_copy spec: N, IN_BASE, OUT_BASE, D[6], SI[6], SO[6] (right-aligned).
  static std::vector<Dim> CopySpec(const Shape& dims, const std::vector<Dim>& si, const std::vector<Dim>& so,
                                   const Dim& in_base, const Dim& out_base) {
    size_t pad = 6 - dims.size();
    std::vector<Dim> s = {NumElements(dims), in_base, out_base};
    for (size_t i = 0; i < 6; ++i) s.push_back(i < pad ? Dim(1) : dims[i - pad]);
    for (size_t i = 0; i < 6; ++i) s.push_back(i < pad ? Dim(0) : si[i - pad]);
    for (size_t i = 0; i < 6; ++i) s.push_back(i < pad ? Dim(0) : so[i - pad]);
    return s;
  }

  Status Transpose(const Node& n) {
    const Shape& xs = T(n.inputs[0]).shape;
    const Shape& ys = T(n.outputs[0]).shape;
    OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(n.inputs[0], n.name));
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    std::vector<int64_t> perm = n.GetInts("perm", {});
    std::vector<Dim> xd = DenseStrides(xs), si(ys.size());
    for (size_t i = 0; i < ys.size(); ++i) si[i] = xd[perm[i]];
    Dispatch d;
    d.kernel = "strided_copy";
    d.bindings = {{x, false}, {y, true}};
    d.spec = CopySpec(ys, si, DenseStrides(ys), 0, 0);
    Grid1D(CeilDiv(NumElements(ys), 256), d.groups);
    Emit(n, d, "transpose");
    return Status::Ok();
  }

  Status Concat(const Node& n) {
    const Shape& ys = T(n.outputs[0]).shape;
    OAAXVK_ASSIGN_OR_RETURN(int y, Out(n));
    int64_t axis = n.GetInt("axis", 0);
    std::vector<Dim> yd = DenseStrides(ys);
    Dim off = 0;
    for (const std::string& in : n.inputs) {
      const Shape& xs = T(in).shape;
      // An empty input copies nothing; one empty only at this point of a
      // dynamic conversion (an If's empty branch) keeps its copy of 0
      // elements, so every point has the same dispatches.
      if (NumElements(xs) == 0 && !NumElements(xs).is_symbolic()) continue;
      OAAXVK_ASSIGN_OR_RETURN(int x, ValueOf(in, n.name));
      Dispatch d;
      d.kernel = "strided_copy";
      d.bindings = {{x, false}, {y, true}};
      d.spec = CopySpec(xs, DenseStrides(xs), yd, 0, off * yd[axis]);
      Grid1D(CeilDiv(NumElements(xs), 256), d.groups);
      Emit(n, d, "concat part");
      off += xs[axis];
    }
    return Status::Ok();
  }

  const Graph& g_;
  const LowerOptions options_;
  // Without options_.weight_bytes: the float weights values whose bytes fit binary16.
  std::set<int> fits_f16_;
  Program p_;
  std::map<std::string, int> alias_;
  // Feature segment_program: each If selection decided on the device cuts
  // the dispatches before its copies (IfSelect), and each extent read back
  // into a decided symbol before the copy of its result (DecidedExtent).
  struct DecidedCut {
    uint32_t dispatch = 0;   // first dispatch after the cut
    int cond_value = -1;     // the value read: an If condition (int32 0 / 1) or an extent (int32)
    int64_t cond_symbol = -1, larger_symbol = -1;  // larger_symbol -1: an extent, set by the read alone
    bool then_larger = true;
    std::string text;
    bool clamp = false;  // an extent: clamped into the symbol's range (ControlReadMode::kClamp)
  };
  std::vector<DecidedCut> cuts_;
  std::vector<size_t> dispatch_log_;  // dispatch index -> its p_.node_kernels entry
  std::map<int, int> f16_copy_;       // weights value -> its kWeightsF16 copy (-1: none)
  std::map<std::string, int> packed_;  // low-bit constant -> its weights value in storage format
  // The 4-byte slots of constants with no elements (NewValue), the nodes
  // whose kernels read no element of an empty input (EmptyReadsValueOf), and
  // the first dispatch that would read such a slot anyway (PushDispatch;
  // returned once the node or graph output is lowered).
  std::set<int> empty_values_;
  std::set<std::string> empty_reads_nodes_;
  Status empty_read_error_ = Status::Ok();
};

}  // namespace

StatusOr<Program> Lower(const Graph& g, const LowerOptions& options) {
  Lowerer l(g, options);
  return l.Run();
}

}  // namespace oaaxvk::toolchain
