#include "toolchain/lower/kernels.h"

#include <cstring>

#include "toolchain/lower/shaders.h"
#include "toolchain/lower/lower_index.h"

namespace oaaxvk::toolchain {

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
        {"strided_copy", 2, 21, {256, 1, 1}, 0, {1}},
        {"resize2d", 2, 19, {256, 1, 1}, 0, {1}},
        {"grid_sample", 3, 9, {256, 1, 1}, 0, {2}},
        {"reverse_sequence", 3, 4, {256, 1, 1}, 0, {2}},
        {"det", 2, 2, {64, 1, 1}, 0, {1}},
        {"roi_align", 4, 11, {256, 1, 1}, 0, {3}},
        {"conv_transpose2d", 4, 20, {256, 1, 1}, 0, {3}},
        // issue 5: data types and integer / logic / indexing operators (lower_int.cpp)
        {"convert", 2, 4, {256, 1, 1}, 0, {1}},
        {"binary_int", 3, 22, {256, 1, 1}, 0, {2}},
        {"where", 4, 25, {256, 1, 1}, 0, {3}},
        {"gather", 3, 4, {256, 1, 1}, 0, {2}},
        {"argreduce", 2, 6, {256, 1, 1}, 0, {1}},
        {"reduce", 2, 27, {256, 1, 1}, 0, {1}},  // issue 5: Reduce* over any axes
        // CPU-class variants (bundle feature kernel_variants): same bindings and
        // spec constants as conv2d_gemm / gemm, no shared memory; local size 64,
        // 4 x 4 / 8 x 8 register block per invocation (lower.cpp k*CpuBlock).
        {"conv2d_cpu", 5, 21, {64, 1, 1}, 0, {3}},
        {"gemm_cpu", 4, 17, {64, 1, 1}, 0, {3}},
    };
    AppendIndexKernels(&v);  // issue 5: indexing / scanning kernels (lower_index.cpp)
    for (KernelInfo& ki : v)
      for (const EmbeddedShader& s : EmbeddedShaders())
        if (ki.name == s.name) { ki.spirv = s.words; ki.spirv_words = s.word_count; }
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
