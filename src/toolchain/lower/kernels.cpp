#include "toolchain/lower/kernels.h"

#include <cstring>
#include <map>
#include <string>

#include "toolchain/lower/shaders.h"
#include "toolchain/lower/lower_index.h"

namespace oaaxvk::toolchain {
namespace {

// Shared memory of shaders/gpu_tile.glsl at its largest tile: two buffers of
// 16 x (128 + 128) floats.
constexpr uint32_t kGpuTileSharedBytes = 2 * 16 * (128 + 128) * 4;
// The fp16 precision forms keep the slices in binary16 (half of it); the
// cooperative-matrix forms add an fp32 16 x 16 staging fragment for each of
// up to 8 subgroups (shaders/gpu_tile_matrix.glsl).
constexpr uint32_t kGpuTileF16SharedBytes = 2 * 16 * (128 + 128) * 2;
constexpr uint32_t kGpuTileMatrixSharedBytes = kGpuTileF16SharedBytes + 8 * 256 * 4;

// Reads KernelInfo::param_constants and parameter_buffer from a SPIR-V
// module: OpName of specialization constants (SpecId decorations) ending in
// "_SC", and any variable decorated DescriptorSet 1.
void ScanParameters(KernelInfo* k) {
  constexpr uint32_t kOpName = 5, kOpDecorate = 71, kDecorationSpecId = 1, kDecorationDescriptorSet = 34;
  std::map<uint32_t, uint32_t> spec_id;  // result id -> constant_id
  std::map<uint32_t, std::string> names;
  for (size_t i = 5; i < k->spirv_words;) {
    const uint32_t count = k->spirv[i] >> 16, opcode = k->spirv[i] & 0xFFFFu;
    if (count == 0 || i + count > k->spirv_words) break;
    if (opcode == kOpName && count >= 3) {
      const char* str = reinterpret_cast<const char*>(k->spirv + i + 2);
      names[k->spirv[i + 1]] = std::string(str, strnlen(str, 4 * (count - 2)));
    } else if (opcode == kOpDecorate && count >= 4) {
      if (k->spirv[i + 2] == kDecorationSpecId) spec_id[k->spirv[i + 1]] = k->spirv[i + 3];
      if (k->spirv[i + 2] == kDecorationDescriptorSet && k->spirv[i + 3] == 1) k->parameter_buffer = true;
    }
    i += count;
  }
  for (const auto& [id, cid] : spec_id) {
    auto it = names.find(id);
    if (it != names.end() && cid < 64 && it->second.size() > 3 &&
        it->second.compare(it->second.size() - 3, 3, "_SC") == 0)
      k->param_constants |= uint64_t{1} << cid;
  }
}

}  // namespace

const std::vector<KernelInfo>& Kernels() {
  static const std::vector<KernelInfo> k = [] {
    // name, bindings, spec constants, local size, shared bytes, written bindings
    std::vector<KernelInfo> v = {
        {"eltwise", 3, 23, {256, 1, 1}, 0, {2}},
        {"unary", 2, 4, {256, 1, 1}, 0, {1}},
        {"conv2d_gemm", 5, 21, {256, 1, 1}, 2 * 16 * 64 * 4, {3}},
        {"depthwise_conv2d", 5, 19, {256, 1, 1}, 0, {3}},
        {"gemm", 4, 17, {256, 1, 1}, 2 * 16 * 64 * 4, {3}},
        {"pool2d", 2, 17, {256, 1, 1}, 0, {1}},
        {"reduce_mean", 2, 2, {64, 1, 1}, 64 * 4, {1}},
        {"softmax", 2, 4, {64, 1, 1}, 2 * 64 * 4 + 4, {1}},
        // Softmax family on rows longer than the loop budget: X, row statistics, Y (lower_split.inc).
        {"softmax_apply", 3, 4, {256, 1, 1}, 0, {2}},
        {"strided_copy", 2, 21, {256, 1, 1}, 0, {1}},
        {"resize2d", 2, 19, {256, 1, 1}, 0, {1}},
        {"resize2d_scales", 3, 20, {256, 1, 1}, 0, {1}},  // scales from binding 2 (read at run time)
        {"resize2d_roi", 3, 20, {256, 1, 1}, 0, {1}},     // tf_crop_and_resize roi from binding 2
        {"resize2d_aa", 2, 19, {256, 1, 1}, 0, {1}},      // antialias = 1 (resize2d_antialias.glsl)
        {"resize2d_aa_scales", 3, 20, {256, 1, 1}, 0, {1}},  // antialias = 1, scales from binding 2
        {"dims_to_data", 1, 9, {1, 1, 1}, 0, {0}},        // integers computed from run-time values
        {"grid_sample", 3, 9, {256, 1, 1}, 0, {2}},
        {"deform_conv2d", 6, 19, {256, 1, 1}, 0, {5}},
        {"grid_sample3d", 3, 11, {256, 1, 1}, 0, {2}},
        {"reverse_sequence", 3, 4, {256, 1, 1}, 0, {2}},
        {"det", 2, 2, {64, 1, 1}, 0, {1}},
        {"roi_align", 4, 11, {256, 1, 1}, 0, {3}},
        {"conv_transpose2d", 4, 20, {256, 1, 1}, 0, {3}},
        // issue 5: data types and integer / logic / indexing operators (lower_int.cpp)
        {"convert", 2, 5, {256, 1, 1}, 0, {1}},
        {"binary_int", 3, 22, {256, 1, 1}, 0, {2}},
        {"where", 4, 25, {256, 1, 1}, 0, {3}},
        {"gather", 3, 4, {256, 1, 1}, 0, {2}},
        {"argreduce", 2, 9, {256, 1, 1}, 0, {1}},
        {"reduce", 2, 31, {256, 1, 1}, 0, {1}},  // Reduce* over any axes, split into stages on long ones
        // CPU-class variants (bundle feature kernel_variants): same bindings and
        // spec constants as conv2d_gemm / gemm, no shared memory; local size 64,
        // 8 x 8 register block per invocation (lower.cpp k*CpuBlock).
        // Conv (shaders/conv2d_cpu*.comp): W as RGBA32 texels; X as R32 texels,
        // or RGBA32 texels (_xv, _pw); bias and residual as R32 texels.
        {"conv2d_cpu", 5, 21, {64, 1, 1}, 0, {3}, "fvfsf"},
        {"conv2d_cpu_xv", 5, 21, {64, 1, 1}, 0, {3}, "vvfsf"},
        {"conv2d_cpu_wide", 5, 21, {64, 1, 1}, 0, {3}, "fvfsf"},
        {"conv2d_cpu_wide_xv", 5, 21, {64, 1, 1}, 0, {3}, "vvfsf"},
        {"conv2d_cpu_pw", 5, 21, {64, 1, 1}, 0, {3}, "vvfsf"},
        // Gemm / MatMul (shaders/gemm_cpu.glsl): A and B as RGBA32 ('v', vec4
        // fetches) or R32 ('f') texels, named by what is not 'v'; bias R32.
        {"gemm_cpu", 4, 17, {64, 1, 1}, 0, {3}, "vvfs"},
        {"gemm_cpu_fv", 4, 17, {64, 1, 1}, 0, {3}, "fvfs"},
        {"gemm_cpu_vf", 4, 17, {64, 1, 1}, 0, {3}, "vffs"},
        {"gemm_cpu_ff", 4, 17, {64, 1, 1}, 0, {3}, "fffs"},
        // Depthwise Conv (shaders/depthwise_cpu.glsl; same bindings and spec
        // constants as depthwise_conv2d): W, bias and residual as R32 texels, X
        // as R32 or (_xv) RGBA32 texels; 8 or 16 outputs along ow per invocation.
        {"depthwise_cpu", 5, 19, {64, 1, 1}, 0, {3}, "fffsf"},
        {"depthwise_cpu_xv", 5, 19, {64, 1, 1}, 0, {3}, "vffsf"},
    };
    // CPU-class texel-read twins (issue 7; bundle features kernel_variants and
    // texel_bindings): the same shader body as the kernel named without
    // "_cpu" (shaders/<name>.glsl), same bindings, spec constants and grid,
    // inputs read through uniform texel buffers. lower.cpp's AddTexelTwins
    // gives every dispatch of such a kernel a CPU row.
    v.push_back({"eltwise_cpu", 3, 23, {256, 1, 1}, 0, {2}, "ffs"});
    v.push_back({"unary_cpu", 2, 4, {256, 1, 1}, 0, {1}, "fs"});
    v.push_back({"unary_vec4_cpu", 2, 4, {256, 1, 1}, 0, {1}, "vs"});  // Unary: 4 elements per invocation
    v.push_back({"pool2d_cpu", 2, 17, {256, 1, 1}, 0, {1}, "fs"});
    v.push_back({"strided_copy_cpu", 2, 21, {256, 1, 1}, 0, {1}, "us"});
    v.push_back({"conv_transpose2d_cpu", 4, 20, {256, 1, 1}, 0, {3}, "fffs"});
    v.push_back({"resize2d_cpu", 2, 19, {256, 1, 1}, 0, {1}, "fs"});
    v.push_back({"resize2d_scales_cpu", 3, 20, {256, 1, 1}, 0, {1}, "fss"});
    v.push_back({"resize2d_roi_cpu", 3, 20, {256, 1, 1}, 0, {1}, "fss"});
    v.push_back({"reduce_mean_cpu", 2, 2, {64, 1, 1}, 64 * 4, {1}, "fs"});
    // Many short rows (lower.cpp kMinRowsPerInvocation): one invocation per
    // row instead of one workgroup per row; same bindings and spec constants
    // as reduce_mean / softmax, grid ceil(rows / 64).
    v.push_back({"reduce_mean_rows_cpu", 2, 2, {64, 1, 1}, 0, {1}, "fs"});
    v.push_back({"softmax_rows_cpu", 2, 4, {64, 1, 1}, 0, {1}, "fs"});
    // ConvTranspose with kernel == stride and 4 taps (lower.cpp ConvTranspose):
    // 4 positions x 4 channels x 4 taps per invocation, 64 lanes.
    v.push_back({"conv_transpose2d_tap4_cpu", 4, 20, {64, 1, 1}, 0, {3}, "fvfs"});
    // GPU-class variants (bundle feature device_variants): same bindings as
    // the default kernel. conv2d_gemm_gpu / gemm_gpu (shaders/gpu_tile.glsl):
    // the default kernel's spec constants plus TILE_M, TILE_N, VEC_A and
    // VEC_B, their own grid; up to 32 KiB of shared memory (128 x 128 tiles,
    // double-buffered), hence sharedMemory32KiB. _f16w: binding 1 (W / B)
    // read as binary16 from weights_f16 (buffer kind 4), fp32 accumulation;
    // the plain _gpu kernel is its fp32 form (KernelInfo::fp32_kernel).
    // _sg: the row's reductions with subgroup operations, one shared-memory
    // entry per subgroup (at most 64); same spec constants and grid.
    // _fp16 (runtime argument precision=fp16): binary16 shared slices, fp32
    // sums; the _gpu kernel names it (KernelInfo::fp16_kernel). _coopmat: the
    // same on cooperative matrices, named by the _fp16 form
    // (KernelInfo::matrix_kernel).
    v.push_back({"conv2d_gemm_gpu", 5, 25, {256, 1, 1}, kGpuTileSharedBytes, {3}, "", {kCapabilitySharedMemory32KiB},
                 "", "conv2d_gemm_gpu_fp16"});
    v.push_back({"conv2d_gemm_gpu_f16w", 5, 25, {256, 1, 1}, kGpuTileSharedBytes, {3}, "",
                 {kCapabilityStorage16, kCapabilitySharedMemory32KiB}, "conv2d_gemm_gpu"});
    v.push_back({"conv2d_gemm_gpu_fp16", 5, 25, {256, 1, 1}, kGpuTileF16SharedBytes, {3}, "", {kCapabilityFloat16},
                 "", "", "conv2d_gemm_gpu_coopmat"});
    v.push_back({"conv2d_gemm_gpu_coopmat", 5, 25, {256, 1, 1}, kGpuTileMatrixSharedBytes, {3}, "",
                 {kCapabilityFloat16, kCapabilitySharedMemory32KiB, kCapabilityVulkanMemoryModel, kCapabilityCoopMatNV}});
    v.push_back({"gemm_gpu", 4, 21, {256, 1, 1}, kGpuTileSharedBytes, {3}, "", {kCapabilitySharedMemory32KiB}, "",
                 "gemm_gpu_fp16"});
    v.push_back({"gemm_gpu_f16w", 4, 21, {256, 1, 1}, kGpuTileSharedBytes, {3}, "",
                 {kCapabilityStorage16, kCapabilitySharedMemory32KiB}, "gemm_gpu"});
    v.push_back({"gemm_gpu_fp16", 4, 21, {256, 1, 1}, kGpuTileF16SharedBytes, {3}, "", {kCapabilityFloat16}, "", "",
                 "gemm_gpu_coopmat"});
    v.push_back({"gemm_gpu_coopmat", 4, 21, {256, 1, 1}, kGpuTileMatrixSharedBytes, {3}, "",
                 {kCapabilityFloat16, kCapabilitySharedMemory32KiB, kCapabilityVulkanMemoryModel, kCapabilityCoopMatNV}});
    v.push_back({"softmax_sg", 2, 4, {64, 1, 1}, 2 * 64 * 4 + 4, {1}, "", {kCapabilitySubgroupArithmetic}});
    v.push_back({"reduce_mean_sg", 2, 2, {64, 1, 1}, 64 * 4, {1}, "", {kCapabilitySubgroupArithmetic}});
    AppendIndexKernels(&v);  // issue 5: indexing / scanning kernels (lower_index.cpp)
    for (KernelInfo& ki : v)
      for (const EmbeddedShader& s : EmbeddedShaders())
        if (ki.name == s.name) { ki.spirv = s.words; ki.spirv_words = s.word_count; }
    for (KernelInfo& ki : v) ScanParameters(&ki);
    return v;
  }();
  return k;
}

const KernelInfo* FindKernel(const std::string& name) {
  for (const KernelInfo& k : Kernels())
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace oaaxvk::toolchain
