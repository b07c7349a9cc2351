// Bundle feature kernel_variants (docs/bundle-format.md, "Kernel variants"):
// Conv / Gemm / MatMul / depthwise Conv get a CPU-class row with the same bindings; the
// written tables obey the contract. (Running both variants on lavapipe and
// SwiftShader is tests/runtime/kernel_variants.sh.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <set>

#include "oaax_vulkan/oinf.h"
#include "test_util.h"
#include "toolchain/driver/driver.h"
#include "toolchain/input/archive.h"
#include "toolchain/ir/limits.h"
#include "toolchain/lower/kernels.h"
#include "toolchain/lower/lower.h"

#ifdef OAAXVK_TEST_RUNTIME_PARSER
#include "runtime/bundle.h"
#endif

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

// x[2,6,11,13] -> Conv 3x3 (10 ch) -> Relu; Conv depthwise; Flatten -> Gemm; MatMul.
Graph VariantGraph() {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 6, 11, 13});
  AddConst(g, "w", {10, 6, 3, 3});
  AddConst(g, "b", {10});
  Node& c = AddNode(g, "Conv", "conv", {"x", "w", "b"}, {"c"});
  c.SetInts("kernel_shape", {3, 3});
  c.SetInts("pads", {1, 1, 1, 1});
  AddNode(g, "Relu", "relu", {"c"}, {"y"});
  AddOutput(g, "y");
  AddConst(g, "dw", {6, 1, 3, 3});
  Node& d = AddNode(g, "Conv", "dwconv", {"x", "dw"}, {"yd"});
  d.SetInts("kernel_shape", {3, 3});
  d.SetInt("group", 6);
  AddOutput(g, "yd");
  AddConstI64(g, "shape", {22, 78});
  AddNode(g, "Reshape", "flat", {"x", "shape"}, {"a"});
  AddConst(g, "gb", {45, 78});
  AddNode(g, "Gemm", "gemm", {"a", "gb"}, {"yg"}).SetInt("transB", 1);
  AddOutput(g, "yg");
  AddConst(g, "mb", {78, 9});
  AddNode(g, "MatMul", "matmul", {"a", "mb"}, {"ym"});
  AddOutput(g, "ym");
  return g;
}

TEST(KernelVariants, ConvGemmMatMulGetCpuRowsWithTheSameBindings) {
  auto r = CompileGraph(VariantGraph());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Program& p = r->program;
  EXPECT_EQ(p.features.count("kernel_variants"), 1u);
  int cpu_rows = 0;
  for (const Dispatch& d : p.dispatches) {
    if (d.kernel == "conv2d_gemm") {
      EXPECT_EQ(d.cpu_kernel, "conv2d_cpu") << d.node;
    } else if (d.kernel == "gemm") {
      // Rows of 78 (A) and transB rows of 78 / 9 columns (B): R32 views for both.
      EXPECT_EQ(d.cpu_kernel, "gemm_cpu_ff") << d.node;
    } else if (d.kernel == "depthwise_conv2d") {
      EXPECT_EQ(d.cpu_kernel, "depthwise_cpu") << d.node;
    } else {
      EXPECT_TRUE(d.cpu_kernel.empty()) << d.node << " (" << d.kernel << ")";  // copies: no variant
      continue;
    }
    ++cpu_rows;
    EXPECT_EQ(d.cpu_spec, d.spec) << d.node;
    const KernelInfo* k = FindKernel(d.kernel);
    const KernelInfo* kc = FindKernel(d.cpu_kernel);
    ASSERT_TRUE(k && kc);
    EXPECT_EQ(kc->bindings, k->bindings);
    EXPECT_EQ(kc->spec_constants, k->spec_constants);
    EXPECT_EQ(kc->written_bindings, k->written_bindings);
    EXPECT_EQ(kc->shared_bytes, 0u);
  }
  EXPECT_EQ(cpu_rows, 4);
  // Grid of the conv: M = 10 channels = 2 blocks of 8, times 2*11 output rows
  // of ceil(13 / 8) = 2 position blocks = 88 invocations, 64 per workgroup.
  for (const Dispatch& d : p.dispatches)
    if (d.node == "conv") {
      EXPECT_EQ(d.cpu_groups[0], 2u);
      EXPECT_EQ(d.cpu_groups[1], 1u);
      EXPECT_EQ(d.cpu_groups[2], 1u);
    }

  auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const oinf::Metadata* feat = f->FindMetadata("bundle.features");  // UTF-8 u8 ndarray
  ASSERT_NE(feat, nullptr);
  ASSERT_EQ(feat->type, oinf::ValueType::kNdArray);
  const std::string features(reinterpret_cast<const char*>(feat->ndarray.data.data), feat->ndarray.data.size);
  EXPECT_NE(features.find("kernel_variants"), std::string::npos) << features;
  const oinf::Tensor* gpu = f->FindTensor("program.dispatch");
  const oinf::Tensor* cpu = f->FindTensor("program.dispatch.cpu");
  const oinf::Tensor* spec = f->FindTensor("program.spec");
  ASSERT_TRUE(gpu && cpu && spec);
  ASSERT_EQ(cpu->dims, gpu->dims);
  uint32_t nk = 0;
  ASSERT_TRUE(f->FindMetadata("kernels.count")->GetScalar(&nk));
  std::vector<std::string> names(nk);
  for (uint32_t j = 0; j < nk; ++j)
    names[j] = std::string(f->FindMetadata("kernel." + std::to_string(j) + ".name")->string_value);
  const uint32_t* g = reinterpret_cast<const uint32_t*>(gpu->data.data);
  const uint32_t* c = reinterpret_cast<const uint32_t*>(cpu->data.data);
  int differing = 0;
  for (uint64_t i = 0; i < gpu->dims[0]; ++i) {
    const uint32_t* gr = g + 8 * i;
    const uint32_t* cr = c + 8 * i;
    EXPECT_EQ(cr[4], gr[4]) << "row " << i;  // same bindings
    EXPECT_EQ(cr[5], gr[5]) << "row " << i;
    ASSERT_LT(cr[0], nk);
    ASSERT_LE(uint64_t{cr[6]} + cr[7], spec->numel);
    if (std::memcmp(gr, cr, 32) == 0) continue;
    ++differing;
    EXPECT_TRUE(names[cr[0]] == "conv2d_cpu" || names[cr[0]] == "gemm_cpu_ff" || names[cr[0]] == "depthwise_cpu")
        << names[cr[0]];
    EXPECT_EQ(cr[6], gr[6]) << "row " << i << ": the CPU row shares the spec values";
  }
  EXPECT_EQ(differing, 4);
}

// Elementwise, pooling and copy kernels get a CPU row running their texel-read
// twin (<kernel>_cpu: same bindings, grid and spec values; feature
// texel_bindings with the twin's kernel.<j>.binding_types).
TEST(KernelVariants, ElementwiseKernelsGetTheirTexelTwin) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {4, 5});
  AddInput(g, "z", {4, 5});
  AddNode(g, "Sub", "sub", {"x", "z"}, {"y"});
  AddOutput(g, "y");
  auto r = CompileGraph(std::move(g));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->program.dispatches.size(), 1u);
  const Dispatch& d = r->program.dispatches[0];
  EXPECT_EQ(d.kernel, "eltwise");
  EXPECT_EQ(d.cpu_kernel, "eltwise_cpu");
  EXPECT_EQ(d.cpu_spec, d.spec);
  for (int a = 0; a < 3; ++a) EXPECT_EQ(d.cpu_groups[a], d.groups[a]);
  EXPECT_EQ(r->program.features.count("kernel_variants"), 1u);
  auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
  ASSERT_TRUE(f.ok());
  ASSERT_NE(f->FindTensor("program.dispatch.cpu"), nullptr);
  const oinf::Metadata* features = f->FindMetadata("bundle.features");
  ASSERT_NE(features, nullptr);
  ASSERT_EQ(features->type, oinf::ValueType::kNdArray);
  const std::string list(reinterpret_cast<const char*>(features->ndarray.data.data), features->ndarray.data.size);
  EXPECT_NE(list.find("texel_bindings"), std::string::npos) << list;
  // kernel 0 = eltwise (storage buffers, no binding_types), kernel 1 = its twin.
  EXPECT_EQ(f->FindMetadata("kernel.0.binding_types"), nullptr);
  const oinf::Metadata* types = f->FindMetadata("kernel.1.binding_types");
  ASSERT_NE(types, nullptr);
  ASSERT_EQ(types->type, oinf::ValueType::kString);
  EXPECT_EQ(types->string_value, "ffs");
}

// A standalone activation's CPU row handles four elements per invocation
// (unary_vec4_cpu: RGBA32 texel reads, vec4 stores), so its grid is a
// quarter of the default row's.
TEST(KernelVariants, UnaryGetsTheVec4Kernel) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {3, 1000});  // 3000 elements: 12 x 256 invocations by default, 3 x 256 x 4 on the CPU row
  AddNode(g, "Relu", "relu", {"x"}, {"y"});
  AddOutput(g, "y");
  auto r = CompileGraph(std::move(g));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->program.dispatches.size(), 1u);
  const Dispatch& d = r->program.dispatches[0];
  EXPECT_EQ(d.kernel, "unary");
  EXPECT_EQ(d.groups[0], 12u);
  EXPECT_EQ(d.cpu_kernel, "unary_vec4_cpu");
  EXPECT_EQ(d.cpu_groups[0], 3u);
  EXPECT_EQ(d.cpu_spec, d.spec);
  ASSERT_NE(FindKernel("unary_vec4_cpu"), nullptr);
  EXPECT_EQ(FindKernel("unary_vec4_cpu")->binding_types, "vs");
}

// A kernel without a CPU-class variant (Softmax) leaves no variant table.
TEST(KernelVariants, BundlesWithoutVariantKernelsHaveNoVariantTable) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {4, 5});
  AddNode(g, "Softmax", "softmax", {"x"}, {"y"}).SetInt("axis", 1);
  AddOutput(g, "y");
  auto r = CompileGraph(std::move(g));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->program.features.count("kernel_variants"), 0u);
  auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->FindTensor("program.dispatch.cpu"), nullptr);
}

// Row reductions with 128 rows or more run one invocation per row on
// CPU-class devices (<kernel>_rows_cpu, grid ceil(rows / 64)); fewer rows keep
// one workgroup per row (reduce_mean: its texel twin; softmax: no CPU row).
TEST(KernelVariants, ManyShortRowsGetTheRowsKernels) {
  struct Case {
    const char* op;
    std::vector<int64_t> shape;
    int64_t axis;
    const char* cpu_kernel;  // "" = no CPU row
    uint32_t cpu_groups;
  };
  const Case cases[] = {
      {"Softmax", {200, 37}, 1, "softmax_rows_cpu", 4},          // 200 rows
      {"Softmax", {2, 9, 70}, 1, "softmax_rows_cpu", 3},         // outer 2 x inner 70 = 140 rows
      {"Softmax", {127, 9}, 1, "", 0},                           // 127 rows
      {"GlobalAveragePool", {2, 160, 7, 7}, 0, "reduce_mean_rows_cpu", 5},  // 320 rows
      {"GlobalAveragePool", {1, 100, 7, 7}, 0, "reduce_mean_cpu", 100},     // 100 rows: the texel twin
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " rows case " + std::to_string(c.shape[1]));
    Graph g;
    g.opset = 13;
    AddInput(g, "x", ToDims(c.shape));
    Node& n = AddNode(g, c.op, "r", {"x"}, {"y"});
    if (std::string(c.op) == "Softmax") n.SetInt("axis", c.axis);
    AddOutput(g, "y");
    auto r = CompileGraph(std::move(g));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->program.dispatches.size(), 1u);
    const Dispatch& d = r->program.dispatches[0];
    EXPECT_EQ(d.cpu_kernel, c.cpu_kernel);
    if (*c.cpu_kernel) {
      EXPECT_EQ(d.cpu_groups[0], c.cpu_groups);
      EXPECT_EQ(d.cpu_spec, d.spec);
      EXPECT_EQ(FindKernel(c.cpu_kernel)->binding_types, "fs");
      if (std::string(c.cpu_kernel).find("_rows_cpu") != std::string::npos)
        EXPECT_EQ(FindKernel(c.cpu_kernel)->shared_bytes, 0u);  // no shared memory, no barrier
    }
  }
}

// ---- Gemm / MatMul (gemm_cpu*) and depthwise Conv (depthwise_cpu) CPU rows.

// Binding types of the kernel named `name` in the bundle's kernel table.
std::string BundleBindingTypes(const oinf::File& f, const std::string& name) {
  uint32_t nk = 0;
  if (!f.FindMetadata("kernels.count")->GetScalar(&nk)) return "?";
  for (uint32_t j = 0; j < nk; ++j) {
    const std::string key = "kernel." + std::to_string(j);
    if (std::string(f.FindMetadata(key + ".name")->string_value) != name) continue;
    const oinf::Metadata* t = f.FindMetadata(key + ".binding_types");
    return t ? std::string(t->string_value) : "";
  }
  return "?";
}

// The CPU kernel of a Gemm / MatMul names which operands are read through
// R32 texel views ('f') instead of vec4-aligned RGBA32 views ('v': A along k
// or m, B along n or k); its grid spreads ceil(M/8) * ceil(N/8) blocks over
// 64-wide workgroups, batch along z; spec values and bindings are the GPU row's.
TEST(KernelVariants, GemmCpuKernelFollowsOperandLayout) {
  struct Case {
    const char* name;
    Shape a, b;
    int trans_a, trans_b;
    const char* kernel;
    const char* binding_types;
    uint32_t groups[3];
  };
  const Case cases[] = {
      {"mm_vv", {32, 24}, {24, 20}, -1, -1, "gemm_cpu", "vvfs", {1, 1, 1}},            // 4 x 3 blocks
      {"mm_batched", {3, 40, 16}, {16, 20}, -1, -1, "gemm_cpu", "vvfs", {1, 1, 3}},   // 5 x 3 blocks, batch 3
      {"mm_1024", {1024, 1024}, {1024, 1024}, -1, -1, "gemm_cpu", "vvfs", {256, 1, 1}},  // 128 x 128 blocks
      {"gemm_ta", {12, 20}, {12, 28}, 1, 0, "gemm_cpu", "vvfs", {1, 1, 1}},           // A along m
      {"gemm_tb", {20, 16}, {24, 16}, 0, 1, "gemm_cpu", "vvfs", {1, 1, 1}},           // B along k
      {"mm_fv", {10, 13}, {13, 24}, -1, -1, "gemm_cpu_fv", "fvfs", {1, 1, 1}},       // A rows of 13
      {"mm_vf", {20, 16}, {16, 9}, -1, -1, "gemm_cpu_vf", "vffs", {1, 1, 1}},        // N = 9
      {"gemm_ta_ff", {22, 78}, {22, 9}, 1, 0, "gemm_cpu_ff", "fffs", {1, 1, 1}},     // M = 78, N = 9
      {"gemm_tb_n9", {20, 16}, {9, 16}, 0, 1, "gemm_cpu", "vvfs", {1, 1, 1}},        // B along k, N = 9
      {"gemm_tb_ff", {20, 15}, {9, 15}, 0, 1, "gemm_cpu_ff", "fffs", {1, 1, 1}},     // K = 15
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Graph g;
    g.opset = 13;
    AddInput(g, "a", c.a);
    AddConst(g, "b", c.b);
    Node& n = AddNode(g, c.trans_a < 0 ? "MatMul" : "Gemm", c.name, {"a", "b"}, {"y"});
    if (c.trans_a >= 0) {
      n.SetInt("transA", c.trans_a);
      n.SetInt("transB", c.trans_b);
    }
    AddOutput(g, "y");
    auto r = CompileGraph(std::move(g));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const Dispatch* d = nullptr;
    for (const Dispatch& x : r->program.dispatches)
      if (x.kernel == "gemm") d = &x;
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->cpu_kernel, c.kernel);
    EXPECT_EQ(d->cpu_spec, d->spec);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(d->cpu_groups[i], c.groups[i]) << "axis " << i;
    const KernelInfo* k = FindKernel(c.kernel);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->binding_types, c.binding_types);
    EXPECT_EQ(k->bindings, 4u);
    EXPECT_EQ(k->spec_constants, FindKernel("gemm")->spec_constants);
    EXPECT_EQ(r->program.features.count("kernel_variants"), 1u);
    auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(BundleBindingTypes(*f, c.kernel), c.binding_types);
  }
}

// A depthwise Conv gets a depthwise_cpu row: same bindings and spec values,
// W / bias / residual through R32 texel views, X through an R32 view or, at
// stride 1 with rows of a multiple of 4 whose kernel-row segment fits six
// texels, an RGBA32 view (depthwise_cpu_xv); one invocation per bw outputs
// along ow (16 at stride 1 when OW > 8, else 8): grid
// ceil(N*C*OH*ceil(OW/bw) / 64) workgroups.
TEST(KernelVariants, DepthwiseConvGetsCpuRow) {
  struct Case {
    const char* name;
    Shape x;
    int64_t k, stride, pad, dilation;
    const char* kernel;
    const char* binding_types;
    uint32_t groups_x;
  };
  const Case cases[] = {
      {"rows_of_13", {2, 6, 11, 13}, 3, 1, 1, 1, "depthwise_cpu", "fffsf", 3},      // 132 rows x 1 block of 16
      {"rows_of_24", {1, 4, 9, 24}, 3, 1, 1, 1, "depthwise_cpu_xv", "vffsf", 2},    // 36 rows x 2 blocks of 16
      {"stride_2", {1, 4, 9, 24}, 3, 2, 1, 1, "depthwise_cpu", "fffsf", 1},         // 20 rows x 2 blocks of 8
      {"segment_30", {1, 4, 9, 24}, 5, 1, 6, 3, "depthwise_cpu", "fffsf", 2},       // 2 + 16 + 12 elements
      {"mobilenet", {1, 96, 112, 112}, 3, 1, 1, 1, "depthwise_cpu_xv", "vffsf", 1176},  // 96*112*7 / 64
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Graph g;
    g.opset = 13;
    AddInput(g, "x", c.x);
    AddConst(g, "dw", {c.x[1], 1, c.k, c.k});
    AddConst(g, "db", {c.x[1]});
    Node& d = AddNode(g, "Conv", "dwconv", {"x", "dw", "db"}, {"y"});
    d.SetInts("kernel_shape", {c.k, c.k});
    d.SetInts("strides", {c.stride, c.stride});
    d.SetInts("pads", {c.pad, c.pad, c.pad, c.pad});
    d.SetInts("dilations", {c.dilation, c.dilation});
    d.SetInt("group", c.x[1]);
    AddOutput(g, "y");
    auto r = CompileGraph(std::move(g));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->program.dispatches.size(), 1u);
    const Dispatch& p = r->program.dispatches[0];
    EXPECT_EQ(p.kernel, "depthwise_conv2d");
    EXPECT_EQ(p.cpu_kernel, c.kernel);
    EXPECT_EQ(p.cpu_spec, p.spec);
    EXPECT_EQ(p.cpu_groups[0], c.groups_x);
    EXPECT_EQ(p.cpu_groups[1], 1u);
    EXPECT_EQ(p.cpu_groups[2], 1u);
    const KernelInfo* k = FindKernel(c.kernel);
    const KernelInfo* kg = FindKernel("depthwise_conv2d");
    ASSERT_TRUE(k && kg);
    EXPECT_EQ(k->bindings, kg->bindings);
    EXPECT_EQ(k->spec_constants, kg->spec_constants);
    EXPECT_EQ(k->written_bindings, kg->written_bindings);
    EXPECT_EQ(k->shared_bytes, 0u);
    EXPECT_EQ(k->binding_types, c.binding_types);
    auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(BundleBindingTypes(*f, c.kernel), c.binding_types);
  }
}
// ---- end of the Gemm / MatMul and depthwise tests

// ---- Conv CPU rows (conv2d_cpu*: shaders/conv2d_cpu.glsl, conv2d_cpu_pw.comp).

// The CPU kernel of a non-depthwise Conv follows its shape: conv2d_cpu_pw for
// a pointwise Conv (1x1, stride 1, no padding, H*W and C/group multiples of
// 4; X and W as RGBA32 texels; grid over ceil(N*H*W / 8) blocks), else
// conv2d_cpu (filter width 1, 2, 3, 4 or 6) or conv2d_cpu_wide (5, 7, > 7)
// with X as R32 texels, or RGBA32 texels (_xv) when W % 4 == 0. One
// invocation per (8 channels, 8 positions) pair, 64 per workgroup: grid
// (1, ceil(ceil(M / 8) * blocks / 64), group) with N*ceil(H*W / 8) pixel
// blocks (pointwise) or N*OH*ceil(OW / 8) blocks. Bindings and spec values
// are the GPU row's.
TEST(KernelVariants, ConvCpuKernelFollowsShape) {
  struct Case {
    const char* name;
    Shape x, w;
    std::vector<int64_t> strides, pads;
    int64_t group;
    const char* kernel;
    const char* binding_types;
    uint32_t groups[3];
  };
  const Case cases[] = {
      // 2*56*56 = 6272 pixels = 784 blocks of 8, times 256 / 8 = 32 channel blocks: 392 workgroups.
      {"pw", {2, 64, 56, 56}, {256, 64, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, "conv2d_cpu_pw", "vvfsf", {392, 1, 1}},
      // H*W = 20 (% 8 == 4), group 2: 8 input and 6 output channels per group.
      {"pw_g2", {2, 16, 5, 4}, {12, 8, 1, 1}, {1, 1}, {0, 0, 0, 0}, 2, "conv2d_cpu_pw", "vvfsf", {1, 1, 2}},
      // H*W = 143: no vec4 pixels; W = 13: R32 rows; 11 rows x 2 blocks.
      {"pw_odd", {1, 8, 11, 13}, {8, 8, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, "conv2d_cpu", "fvfsf", {1, 1, 1}},
      // C / group = 6: no vec4 channels (W = 12: RGBA32 rows).
      {"pw_c6", {1, 6, 4, 12}, {8, 6, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, "conv2d_cpu_xv", "vvfsf", {1, 1, 1}},
      // 1x1 stride 2 (ResNet downsample): 16 channel blocks x 28 rows x 4 blocks = 1792 invocations.
      {"1x1_s2", {1, 64, 56, 56}, {128, 64, 1, 1}, {2, 2}, {0, 0, 0, 0}, 1, "conv2d_cpu_xv", "vvfsf", {28, 1, 1}},
      // ResNet stage 1: 8 channel blocks x 56 rows x 7 blocks = 3136 invocations.
      {"3x3", {1, 64, 56, 56}, {64, 64, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, "conv2d_cpu_xv", "vvfsf", {49, 1, 1}},
      {"3x3_s2", {1, 128, 56, 56}, {128, 128, 3, 3}, {2, 2}, {1, 1, 1, 1}, 1, "conv2d_cpu_xv", "vvfsf", {28, 1, 1}},
      // ResNet stage 4 (7x7): 64 channel blocks x 7 rows x 1 block = 448 invocations.
      {"3x3_7x7", {1, 512, 7, 7}, {512, 512, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, "conv2d_cpu", "fvfsf", {7, 1, 1}},
      // W = 13: R32 rows; 10 channels in 2 blocks x 2*11 rows x 2 blocks.
      {"3x3_w13", {2, 6, 11, 13}, {10, 6, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, "conv2d_cpu", "fvfsf", {2, 1, 1}},
      {"2x2_s2", {1, 3, 10, 24}, {8, 3, 2, 2}, {2, 2}, {0, 0, 0, 0}, 1, "conv2d_cpu_xv", "vvfsf", {1, 1, 1}},
      {"1x6", {1, 3, 10, 24}, {4, 3, 1, 6}, {1, 1}, {0, 2, 0, 3}, 1, "conv2d_cpu_xv", "vvfsf", {1, 1, 1}},
      // Stem: 8 channel blocks x 112 rows x 14 blocks = 12544 invocations.
      {"7x7_s2", {1, 3, 224, 224}, {64, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, 1, "conv2d_cpu_wide_xv", "vvfsf", {196, 1, 1}},
      {"7x7_w21", {1, 3, 19, 21}, {16, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, 1, "conv2d_cpu_wide", "fvfsf", {1, 1, 1}},
      {"5x5", {1, 3, 10, 24}, {3, 3, 5, 5}, {1, 1}, {2, 2, 2, 2}, 1, "conv2d_cpu_wide_xv", "vvfsf", {1, 1, 1}},
      {"1x9", {1, 3, 19, 21}, {5, 3, 1, 9}, {1, 1}, {0, 4, 0, 4}, 1, "conv2d_cpu_wide", "fvfsf", {1, 1, 1}},
      // Group 4 with 2 output channels per input channel (not depthwise): CG = 1, M = 2.
      {"g4_m2", {1, 4, 30, 60}, {8, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, 4, "conv2d_cpu_xv", "vvfsf", {1, 1, 4}},
      // 16 channel blocks x 2000 rows x 256 blocks = 128000 workgroups: split over x and y.
      {"2k", {1, 3, 2000, 2048}, {128, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, "conv2d_cpu_xv", "vvfsf", {65535, 2, 1}},
  };
  // "2k" writes a 2 GB output: over the default binding limit (lavapipe's
  // range), within NVIDIA's 2^32 - 1.
  ConversionLimits wide;
  wide.max_binding_bytes = (uint64_t{1} << 32) - 1;
  LimitsScope scope(&wide);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Graph g;
    g.opset = 13;
    AddInput(g, "x", c.x);
    AddConst(g, "w", c.w);
    Node& n = AddNode(g, "Conv", c.name, {"x", "w"}, {"y"});
    n.SetInts("kernel_shape", {c.w[2], c.w[3]});
    n.SetInts("strides", c.strides);
    n.SetInts("pads", c.pads);
    n.SetInt("group", c.group);
    AddOutput(g, "y");
    auto r = CompileGraph(std::move(g));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const Dispatch* d = nullptr;
    for (const Dispatch& x : r->program.dispatches)
      if (x.kernel == "conv2d_gemm") d = &x;
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->cpu_kernel, c.kernel);
    EXPECT_EQ(d->cpu_spec, d->spec);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(d->cpu_groups[i], c.groups[i]) << "axis " << i;
    const KernelInfo* k = FindKernel(c.kernel);
    const KernelInfo* kg = FindKernel("conv2d_gemm");
    ASSERT_TRUE(k && kg);
    EXPECT_EQ(k->binding_types, c.binding_types);
    EXPECT_EQ(k->bindings, kg->bindings);
    EXPECT_EQ(k->spec_constants, kg->spec_constants);
    EXPECT_EQ(k->written_bindings, kg->written_bindings);
    EXPECT_EQ(k->shared_bytes, 0u);
    EXPECT_EQ(k->local_size[0], 64u);
    auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(BundleBindingTypes(*f, c.kernel), c.binding_types);
  }
}
// ---- end of the Conv tests

// ---- Device-specific variants (feature device_variants, docs/bundle-format.md
// "Device-specific variants"): program.dispatch.gpu rows with the GPU-class
// GEMM tiles conv2d_gemm_gpu / gemm_gpu (their _f16w forms reading binary16
// weight copies, buffer kind 4, weights_f16) and softmax_sg / reduce_mean_sg
// reducing with subgroup operations.

// The bundle's u32 [D, 8] dispatch table `name` (empty when absent).
std::vector<uint32_t> DispatchTable(const oinf::File& f, const std::string& name) {
  const oinf::Tensor* t = f.FindTensor(name);
  if (!t) return {};
  std::vector<uint32_t> v(t->numel);
  std::memcpy(v.data(), t->data.data, t->data.size);
  return v;
}

std::string Utf8(const oinf::File& f, const std::string& key) {
  const oinf::Metadata* m = f.FindMetadata(key);
  if (!m || m->type != oinf::ValueType::kNdArray) return "<missing>";
  return std::string(reinterpret_cast<const char*>(m->ndarray.data.data), m->ndarray.data.size);
}

// Kernel index -> name / requires ("" when absent) of the bundle.
std::vector<std::pair<std::string, std::string>> BundleKernels(const oinf::File& f) {
  uint32_t nk = 0;
  EXPECT_TRUE(f.FindMetadata("kernels.count")->GetScalar(&nk));
  std::vector<std::pair<std::string, std::string>> k(nk);
  for (uint32_t j = 0; j < nk; ++j) {
    const std::string pre = "kernel." + std::to_string(j) + ".";
    k[j].first = std::string(f.FindMetadata(pre + "name")->string_value);
    const oinf::Metadata* r = f.FindMetadata(pre + "requires");
    if (r) k[j].second = std::string(r->string_value);
  }
  return k;
}

// x[1,8,6,6] -> Conv 3x3 (const w) -> Softmax(axis 1) -> y; x -> GlobalAveragePool;
// x -> ReduceMean(axes 2,3); x -> depthwise Conv; Flatten(x) -> Gemm (const B);
// Flatten(x) x Transpose(Flatten(x)) MatMul (B not a constant).
Graph DeviceVariantGraph() {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 8, 6, 6});
  AddConst(g, "w", {4, 8, 3, 3}, 0.25f);
  Node& c = AddNode(g, "Conv", "conv", {"x", "w"}, {"c"});
  c.SetInts("kernel_shape", {3, 3});
  c.SetInts("pads", {1, 1, 1, 1});
  AddNode(g, "Softmax", "softmax", {"c"}, {"y"}).SetInt("axis", 1);
  AddOutput(g, "y");
  AddNode(g, "GlobalAveragePool", "gap", {"x"}, {"yp"});
  AddOutput(g, "yp");
  Node& rm = AddNode(g, "ReduceMean", "mean", {"x"}, {"ym"});
  rm.SetInts("axes", {2, 3});
  rm.SetInt("keepdims", 0);
  AddOutput(g, "ym");
  AddConst(g, "dw", {8, 1, 3, 3});
  Node& d = AddNode(g, "Conv", "dwconv", {"x", "dw"}, {"yd"});
  d.SetInts("kernel_shape", {3, 3});
  d.SetInt("group", 8);
  AddOutput(g, "yd");
  AddConstI64(g, "shape", {8, 36});
  AddNode(g, "Reshape", "flat", {"x", "shape"}, {"a"});
  AddConst(g, "gb", {36, 5}, -1.5f);
  AddNode(g, "Gemm", "gemm", {"a", "gb"}, {"yg"});
  AddOutput(g, "yg");
  AddNode(g, "Transpose", "tr", {"a"}, {"at"}).SetInts("perm", {1, 0});
  AddNode(g, "MatMul", "aat", {"a", "at"}, {"yaa"});
  AddOutput(g, "yaa");
  return g;
}

TEST(DeviceVariants, RowsGetTheirGpuKernel) {
  auto r = CompileGraph(DeviceVariantGraph());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Program& p = r->program;
  EXPECT_EQ(p.features.count("device_variants"), 1u);
  std::map<std::string, std::string> gpu;  // node -> GPU kernel
  for (const Dispatch& d : p.dispatches) {
    if (d.gpu_kernel.empty()) {
      EXPECT_TRUE(d.gpu_bindings.empty()) << d.node;
      continue;
    }
    gpu[d.node] = d.gpu_kernel;
    const KernelInfo* k = FindKernel(d.kernel);
    const KernelInfo* kg = FindKernel(d.gpu_kernel);
    ASSERT_TRUE(k && kg);
    const bool tiled = d.gpu_kernel.find("_gemm_gpu") != std::string::npos || d.gpu_kernel.rfind("gemm_gpu", 0) == 0;
    if (tiled) {
      // The default row's spec values plus TILE_M, TILE_N, VEC_A, VEC_B.
      ASSERT_EQ(d.gpu_spec.size(), d.spec.size() + 4) << d.node;
      EXPECT_TRUE(std::equal(d.spec.begin(), d.spec.end(), d.gpu_spec.begin())) << d.node;
      EXPECT_EQ(kg->spec_constants, k->spec_constants + 4);
      EXPECT_EQ(kg->required_capabilities.back(), kCapabilitySharedMemory32KiB);
    } else {
      EXPECT_EQ(d.gpu_spec, d.spec) << d.node;
      for (int a = 0; a < 3; ++a) EXPECT_EQ(d.gpu_groups[a], d.groups[a]) << d.node;
      EXPECT_EQ(kg->spec_constants, k->spec_constants);
    }
    EXPECT_EQ(kg->bindings, k->bindings);
    EXPECT_EQ(kg->written_bindings, k->written_bindings);
    EXPECT_EQ(kg->local_size[0], k->local_size[0]);
    ASSERT_FALSE(kg->required_capabilities.empty());
    const std::vector<Binding>& gb = d.GpuBindings();
    ASSERT_EQ(gb.size(), d.bindings.size());
    for (size_t b = 0; b < gb.size(); ++b) {
      const Value& dv = p.values[d.bindings[b].value];
      const Value& gv = p.values[gb[b].value];
      EXPECT_EQ(gb[b].written, d.bindings[b].written);
      if (b == 1 && kg->required_capabilities[0] == kCapabilityStorage16) {
        // W / B: the binary16 copy of the same constant, half the bytes.
        EXPECT_EQ(dv.kind, BufferKind::kWeights) << d.node;
        EXPECT_EQ(gv.kind, BufferKind::kWeightsF16) << d.node;
        EXPECT_EQ(gv.tensor, dv.tensor);
        EXPECT_EQ(gv.bytes * 2, dv.bytes);
      } else {
        EXPECT_EQ(gb[b].value, d.bindings[b].value) << d.node << " binding " << b;
      }
    }
  }
  const std::map<std::string, std::string> want = {{"conv", "conv2d_gemm_gpu_f16w"},
                                                   {"softmax", "softmax_sg"},
                                                   {"gap", "reduce_mean_sg"},
                                                   {"mean", "reduce_mean_sg"},
                                                   {"gemm", "gemm_gpu_f16w"},
                                                   {"aat", "gemm_gpu"}};
  EXPECT_EQ(gpu, want);  // no GPU row: depthwise Conv, copies; a computed B keeps fp32
  EXPECT_EQ(FindKernel("conv2d_gemm_gpu_f16w")->required_capabilities,
            (std::vector<std::string>{"storageBuffer16BitAccess", "sharedMemory32KiB"}));
  EXPECT_EQ(FindKernel("gemm_gpu")->required_capabilities, std::vector<std::string>{"sharedMemory32KiB"});
  EXPECT_EQ(FindKernel("softmax_sg")->required_capabilities, std::vector<std::string>{"subgroupArithmetic"});
  // The conversion log names both variants of a dispatch.
  bool logged = false;
  for (const auto& [node, text] : p.node_kernels)
    if (node == "conv") {
      EXPECT_NE(text.find("[gpu: conv2d_gemm_gpu_f16w tile 16x16 vec4 A, cpu: conv2d_cpu"), std::string::npos) << text;
      logged = true;
    }
  EXPECT_TRUE(logged);

  // The written tables (docs/bundle-format.md rules).
  auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_NE(Utf8(*f, "bundle.features").find("device_variants"), std::string::npos) << Utf8(*f, "bundle.features");
  const auto kernels = BundleKernels(*f);
  const std::vector<uint32_t> def = DispatchTable(*f, "program.dispatch");
  const std::vector<uint32_t> cpu = DispatchTable(*f, "program.dispatch.cpu");
  const std::vector<uint32_t> gpt = DispatchTable(*f, "program.dispatch.gpu");
  ASSERT_EQ(gpt.size(), def.size());
  ASSERT_EQ(cpu.size(), def.size());
  const oinf::Tensor* bind = f->FindTensor("program.bindings");
  const oinf::Tensor* half = f->FindTensor("weights_f16");
  ASSERT_TRUE(bind && half);
  const uint64_t* br = reinterpret_cast<const uint64_t*>(bind->data.data);
  // conv W (4*8*9 = 288 halves = 576 bytes, padded to 768) and gemm B (180
  // halves = 360 bytes, padded to 512).
  EXPECT_EQ(half->data.size, 768u + 512u);
  std::map<std::string, int> rows_by_kernel;
  for (size_t i = 0; i < def.size() / 8; ++i) {
    const uint32_t* d = &def[8 * i];
    const uint32_t* gr = &gpt[8 * i];
    ASSERT_LT(gr[0], kernels.size());
    EXPECT_EQ(gr[5], d[5]) << "row " << i;
    for (uint32_t b = 0; b < d[5]; ++b) {
      const uint64_t* db = br + 3 * (d[4] + b);
      const uint64_t* gbr = br + 3 * (gr[4] + b);
      EXPECT_LT(db[0], 4u) << "row " << i << ": a default row binds kind " << db[0];
      EXPECT_LT(br[3 * (cpu[8 * i + 4] + b)], 4u) << "row " << i << ": a CPU row binds kind 4";
      if (gbr[0] == 4) {
        EXPECT_EQ(db[0], 0u) << "row " << i;
        EXPECT_EQ(gbr[1] % 256, 0u);
        EXPECT_EQ(gbr[2] * 2, db[2]);
        EXPECT_LE(gbr[1] + gbr[2], half->data.size);
      } else {
        EXPECT_TRUE(gbr[0] == db[0] && gbr[1] == db[1] && gbr[2] == db[2]) << "row " << i << " binding " << b;
      }
    }
    if (std::memcmp(d, gr, 32) == 0) continue;
    ++rows_by_kernel[kernels[gr[0]].first];
    const std::string& req = kernels[gr[0]].second;
    if (req == "subgroupArithmetic") {
      EXPECT_EQ(gr[6], d[6]) << "row " << i << ": the GPU row shares the spec values";
      EXPECT_EQ(gr[1], d[1]);
    } else {
      // Its own spec range: 4 more values (the tile and the vec4 flags).
      EXPECT_EQ(gr[7], d[7] + 4) << "row " << i;
      EXPECT_TRUE(req == "storageBuffer16BitAccess-sharedMemory32KiB" || req == "sharedMemory32KiB") << req;
    }
  }
  const std::map<std::string, int> want_rows = {{"conv2d_gemm_gpu_f16w", 1}, {"gemm_gpu_f16w", 1}, {"gemm_gpu", 1},
                                                {"softmax_sg", 1},           {"reduce_mean_sg", 2}};
  EXPECT_EQ(rows_by_kernel, want_rows);
  for (const auto& [name, req] : kernels)  // only the GPU-class kernels require anything
    EXPECT_EQ(req.empty(), name.find("_gpu") == std::string::npos && name.find("_sg") == std::string::npos)
        << name << ": '" << req << "'";
  // The 32 KiB tiles stay out of the load requirement: the default conv2d_gemm / gemm's 8 KiB.
  uint32_t shared = 0;
  ASSERT_TRUE(f->FindMetadata("device.max_shared_memory_bytes")->GetScalar(&shared));
  EXPECT_EQ(shared, 2u * 16 * 64 * 4);
  // Optional capabilities stay out of the hard device requirements.
  const oinf::Metadata* s16 = f->FindMetadata("device.storage_buffer_16bit");
  ASSERT_NE(s16, nullptr);
  ASSERT_EQ(s16->type, oinf::ValueType::kBool);
  ASSERT_EQ(s16->payload.size, 1u);
  EXPECT_EQ(s16->payload.data[0], 0u);
}

// Convs and MatMuls reading the same constant share one binary16 copy.
TEST(DeviceVariants, DispatchesShareOneFloat16Copy) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 4, 5, 5});
  AddInput(g, "z", {1, 4, 5, 5});
  AddConst(g, "w", {4, 4, 1, 1}, 0.1f);
  AddNode(g, "Conv", "c1", {"x", "w"}, {"y1"}).SetInts("kernel_shape", {1, 1});
  AddNode(g, "Conv", "c2", {"z", "w"}, {"y2"}).SetInts("kernel_shape", {1, 1});
  AddOutput(g, "y1");
  AddOutput(g, "y2");
  AddConst(g, "m", {5, 3}, 2.f);
  AddNode(g, "MatMul", "mm1", {"x", "m"}, {"y3"});
  AddNode(g, "MatMul", "mm2", {"z", "m"}, {"y4"});
  AddOutput(g, "y3");
  AddOutput(g, "y4");
  auto r = CompileGraph(std::move(g));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Program& p = r->program;
  std::map<std::string, int> copy;  // node -> binary16 value
  for (const Dispatch& d : p.dispatches)
    if (!d.gpu_kernel.empty()) copy[d.node] = d.GpuBindings()[1].value;
  ASSERT_EQ(copy.size(), 4u);
  EXPECT_EQ(copy["c1"], copy["c2"]);
  EXPECT_EQ(copy["mm1"], copy["mm2"]);
  EXPECT_NE(copy["c1"], copy["mm1"]);
  int f16_values = 0;
  for (const Value& v : p.values) f16_values += v.kind == BufferKind::kWeightsF16;
  EXPECT_EQ(f16_values, 2);
  // Packed in order of first use at 256-byte aligned offsets: w (16 halves), then m.
  EXPECT_EQ(p.values[copy["c1"]].offset, 0u);
  EXPECT_EQ(p.values[copy["mm1"]].offset, 256u);
  EXPECT_EQ(r->plan.weights_f16_bytes, 512u);
  ASSERT_EQ(r->plan.weights_f16.size(), 512u);
  EXPECT_EQ(r->plan.weights_f16[0], 0x66);  // 0.1 -> 0x2e66
  EXPECT_EQ(r->plan.weights_f16[1], 0x2e);
  EXPECT_EQ(r->plan.weights_f16[256], 0x00);  // 2.0 -> 0x4000
  EXPECT_EQ(r->plan.weights_f16[257], 0x40);
  EXPECT_EQ(r->plan.weights_f16[32], 0);  // padding
}

// config.json "fp16_weights": false (LowerOptions): no binary16 copies and no
// _f16w rows: the Conv's GPU row is the fp32 conv2d_gemm_gpu.
TEST(DeviceVariants, Fp16WeightsOffOmitsTheCopies) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 4, 5, 5});
  AddConst(g, "w", {4, 4, 1, 1}, 0.1f);
  AddNode(g, "Conv", "c1", {"x", "w"}, {"y1"}).SetInts("kernel_shape", {1, 1});
  AddNode(g, "Softmax", "sm", {"y1"}, {"y"}).SetInt("axis", 1);
  AddOutput(g, "y");
  LowerOptions off;
  off.fp16_weights = false;
  auto r = CompileGraph(std::move(g), nullptr, {}, off);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<std::string> gpu;
  for (const Dispatch& d : r->program.dispatches) gpu.push_back(d.gpu_kernel);
  EXPECT_EQ(gpu, (std::vector<std::string>{"conv2d_gemm_gpu", "softmax_sg"}));
  for (const Value& v : r->program.values) EXPECT_NE(v.kind, BufferKind::kWeightsF16);
  EXPECT_EQ(r->plan.weights_f16_bytes, 0u);
  EXPECT_EQ(r->program.features.count("device_variants"), 1u);
}

// A weight that binary16 cannot hold (beyond +-65504, Inf, NaN) gets the
// fp32 GPU kernel and no binary16 copy; 65504 itself fits.
TEST(DeviceVariants, WeightsBeyondTheFloat16RangeGetTheFp32Tiles) {
  struct Case {
    const char* name;
    float value;
    bool f16;
  };
  const Case cases[] = {{"max", 65504.f, true},     {"min", -65504.f, true},
                        {"above", 65505.f, false},  {"below", -70000.f, false},
                        {"inf", INFINITY, false},   {"nan", NAN, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {1, 3, 4, 4});
    std::vector<float> w(2 * 3, 0.5f);
    w[4] = c.value;
    g.tensors["w"] = MakeConstF32("w", {2, 3, 1, 1}, w);
    AddNode(g, "Conv", "conv", {"x", "w"}, {"y"}).SetInts("kernel_shape", {1, 1});
    AddOutput(g, "y");
    auto r = CompileGraph(std::move(g));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const Dispatch* d = nullptr;
    for (const Dispatch& x : r->program.dispatches)
      if (x.kernel == "conv2d_gemm") d = &x;
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->gpu_kernel, c.f16 ? "conv2d_gemm_gpu_f16w" : "conv2d_gemm_gpu");
    EXPECT_EQ(r->program.features.count("device_variants"), 1u);
    EXPECT_EQ(r->plan.weights_f16.empty(), !c.f16);
    auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
    ASSERT_TRUE(f.ok());
    EXPECT_NE(f->FindTensor("program.dispatch.gpu"), nullptr);
    const oinf::Tensor* half = f->FindTensor("weights_f16");
    ASSERT_NE(half, nullptr);
    EXPECT_EQ(half->numel == 0, !c.f16);
  }
}

// Subgroup rows only: the GPU table and an empty weights_f16 are written.
TEST(DeviceVariants, SubgroupRowsWithoutFloat16Weights) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {3, 100});
  AddNode(g, "LogSoftmax", "lsm", {"x"}, {"y"}).SetInt("axis", 1);
  AddOutput(g, "y");
  auto r = CompileGraph(std::move(g));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->program.dispatches.size(), 1u);
  EXPECT_EQ(r->program.dispatches[0].gpu_kernel, "softmax_sg");
  auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(Utf8(*f, "bundle.features"), "device_variants parameter_buffer");
  const oinf::Tensor* half = f->FindTensor("weights_f16");
  ASSERT_NE(half, nullptr);
  EXPECT_EQ(half->numel, 0u);
  const std::vector<uint32_t> def = DispatchTable(*f, "program.dispatch");
  const std::vector<uint32_t> gpt = DispatchTable(*f, "program.dispatch.gpu");
  ASSERT_EQ(gpt.size(), 8u);
  EXPECT_EQ(BundleKernels(*f).at(gpt[0]), std::make_pair(std::string("softmax_sg"), std::string("subgroupArithmetic")));
  for (int c = 1; c < 8; ++c) EXPECT_EQ(gpt[c], def[c]) << "column " << c;
}

// Binary16 copies round to nearest, ties to even, with subnormals.
TEST(DeviceVariants, Float16CopiesRoundToNearestEven) {
  struct Case {
    float f;
    uint16_t h;
  };
  const Case cases[] = {
      {1.f, 0x3c00},
      {-2.f, 0xc000},
      {0.f, 0x0000},
      {-0.f, 0x8000},
      {1.f + 0x1p-11f, 0x3c00},      // tie between 1 and 1 + 2^-10: even (1)
      {1.f + 3 * 0x1p-11f, 0x3c02},  // tie between 1 + 2^-10 and 1 + 2^-9: even (up)
      {1.f + 0x1p-11f + 0x1p-20f, 0x3c01},  // just above the tie: up
      {0.1f, 0x2e66},
      {65504.f, 0x7bff},
      {65488.f, 0x7bfe},              // tie between 65472 and 65504: even (65472)
      {65500.f, 0x7bff},              // nearest: 65504
      {0x1p-14f, 0x0400},             // smallest normal
      {0x1p-24f, 0x0001},             // smallest subnormal
      {0x1p-25f, 0x0000},             // tie between 0 and 2^-24: even (0)
      {3 * 0x1p-25f, 0x0002},         // tie between 2^-24 and 2^-23: even (2^-23)
      {0x1p-25f + 0x1p-30f, 0x0001},  // above the tie: up
      {-5 * 0x1p-26f, 0x8001},        // 1.25 * 2^-24: down
      {1e-9f, 0x0000},                // far below: zero
  };
  std::vector<uint8_t> f32(4 * std::size(cases)), f16;
  for (size_t i = 0; i < std::size(cases); ++i) std::memcpy(&f32[4 * i], &cases[i].f, 4);
  ASSERT_TRUE(WeightsToFloat16(f32, &f16));
  ASSERT_EQ(f16.size(), 2 * std::size(cases));
  for (size_t i = 0; i < std::size(cases); ++i) {
    const uint16_t h = static_cast<uint16_t>(f16[2 * i] | (f16[2 * i + 1] << 8));  // little-endian
    EXPECT_EQ(h, cases[i].h) << "value " << cases[i].f << " (case " << i << ")";
  }
  for (float bad : {65505.f, -65536.f, INFINITY, -INFINITY, NAN}) {
    std::vector<uint8_t> one(4);
    std::memcpy(one.data(), &bad, 4);
    EXPECT_FALSE(WeightsToFloat16(one, &f16)) << bad;
  }
}
// The GPU-class GEMM tile per dispatch (lower.cpp ChooseGpuTile, docs/kernels.md
// "GPU-class GEMM tiles"): big outputs keep 128 x 128; batch-1 ResNet-50 shapes
// take smaller tiles for more workgroups; vec4 loads only where strides and
// sizes allow them.
TEST(DeviceVariants, GpuTilesFollowTheShape) {
  struct Want {
    int64_t tile_m, tile_n, vec_a, vec_b, gx, gy, gz;
  };
  Graph g;
  g.opset = 13;
  // ResNet-50's last 3x3 stage at batch 1: 512 x 49 outputs -> 16 x 16 (128 workgroups, not 8).
  AddInput(g, "x7", {1, 512, 7, 7});
  AddConst(g, "w7", {512, 512, 3, 3}, 0.01f);
  Node& c7 = AddNode(g, "Conv", "stage4", {"x7", "w7"}, {"y7"});
  c7.SetInts("kernel_shape", {3, 3});
  c7.SetInts("pads", {1, 1, 1, 1});
  AddOutput(g, "y7");
  // Its first stage's 1x1 Conv: 64 x 3136 -> 32 x 32; X as vec4 (H*W % 4 == 0).
  AddInput(g, "x56", {1, 64, 56, 56});
  AddConst(g, "w56", {64, 64, 1, 1}, 0.01f);
  AddNode(g, "Conv", "stage1", {"x56", "w56"}, {"y56"}).SetInts("kernel_shape", {1, 1});
  AddOutput(g, "y56");
  // 3 input channels x 3x3 = 27: W rows not in fours (scalar); 1x1 over 7x7 pixels: X scalar.
  AddInput(g, "x3", {8, 3, 9, 9});
  AddConst(g, "w3", {20, 3, 3, 3}, 0.1f);
  AddNode(g, "Conv", "rgb", {"x3", "w3"}, {"y3"}).SetInts("kernel_shape", {3, 3});
  AddOutput(g, "y3");
  AddConst(g, "wp", {16, 512, 1, 1}, 0.1f);
  AddNode(g, "Conv", "pw7", {"x7", "wp"}, {"yp"}).SetInts("kernel_shape", {1, 1});
  AddOutput(g, "yp");
  // A 2048 x 2048 MatMul fills the GPU with 128 x 128 tiles; both operands vec4.
  AddInput(g, "a", {2048, 64});
  AddConst(g, "b", {64, 2048}, 0.5f);
  AddNode(g, "MatMul", "big", {"a", "b"}, {"yb"});
  AddOutput(g, "yb");
  // transA / transB: A and B strided along k / n (scalar loads).
  AddInput(g, "at", {64, 2048});
  AddConst(g, "bt", {2048, 64}, 0.5f);
  Node& gt = AddNode(g, "Gemm", "trans", {"at", "bt"}, {"yt"});
  gt.SetInt("transA", 1);
  gt.SetInt("transB", 1);
  AddOutput(g, "yt");
  auto r = CompileGraph(std::move(g));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::map<std::string, Want> want = {
      {"stage4", {16, 16, 1, 0, 4, 32, 1}},   {"stage1", {32, 32, 1, 1, 98, 2, 1}},
      {"rgb", {16, 16, 0, 0, 25, 2, 1}},      {"pw7", {16, 16, 1, 0, 4, 1, 1}},
      {"big", {128, 128, 1, 1, 16, 16, 1}},   {"trans", {128, 128, 0, 0, 16, 16, 1}}};
  std::map<std::string, Want> got;
  for (const Dispatch& d : r->program.dispatches) {
    if (d.gpu_kernel.empty() || d.gpu_spec.size() < 4) continue;
    const size_t t = d.gpu_spec.size() - 4;
    got[d.node] = {d.gpu_spec[t], d.gpu_spec[t + 1], d.gpu_spec[t + 2], d.gpu_spec[t + 3],
                   d.gpu_groups[0], d.gpu_groups[1], d.gpu_groups[2]};
  }
  for (const auto& [node, w] : want) {
    SCOPED_TRACE(node);
    ASSERT_EQ(got.count(node), 1u);
    const Want& o = got[node];
    EXPECT_EQ(std::vector<int64_t>({o.tile_m, o.tile_n, o.vec_a, o.vec_b, o.gx, o.gy, o.gz}),
              std::vector<int64_t>({w.tile_m, w.tile_n, w.vec_a, w.vec_b, w.gx, w.gy, w.gz}));
  }
}
// A Conv whose default 64 x 64 grid already has 264 workgroups keeps
// conv2d_gemm in the GPU table (lower.cpp DefaultGridFillsGpu: the GPU tile
// lost to it at such grids on an H200), and the conversion log says why; a
// smaller one gets its GPU tile; a MatMul keeps gemm_gpu at any grid.
TEST(DeviceVariants, ConvsWhoseDefaultGridFillsTheGpuKeepTheDefaultKernel) {
  Graph g;
  g.opset = 13;
  // ResNet-50's first-stage 1x1 Conv at batch 8: 256 x 25088 outputs, 4 x 392 = 1568 workgroups.
  AddInput(g, "x8", {8, 64, 56, 56});
  AddConst(g, "w8", {256, 64, 1, 1}, 0.01f);
  AddNode(g, "Conv", "filled", {"x8", "w8"}, {"y8"}).SetInts("kernel_shape", {1, 1});
  AddOutput(g, "y8");
  // 64 x 16896 outputs: 264 workgroups exactly, the threshold.
  AddInput(g, "xt", {1, 16, 132, 128});
  AddConst(g, "wt", {64, 16, 1, 1}, 0.01f);
  AddNode(g, "Conv", "threshold", {"xt", "wt"}, {"yt"}).SetInts("kernel_shape", {1, 1});
  AddOutput(g, "yt");
  // 64 x 16384 outputs: 256 workgroups, one row of tiles fewer.
  AddInput(g, "xs", {1, 16, 128, 128});
  AddNode(g, "Conv", "below", {"xs", "wt"}, {"ys"}).SetInts("kernel_shape", {1, 1});
  AddOutput(g, "ys");
  AddInput(g, "a", {2048, 64});
  AddConst(g, "b", {64, 2048}, 0.5f);
  AddNode(g, "MatMul", "big", {"a", "b"}, {"yb"});
  AddOutput(g, "yb");
  auto r = CompileGraph(std::move(g));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::map<std::string, std::string> gpu;
  for (const Dispatch& d : r->program.dispatches) gpu[d.node] = d.gpu_kernel;
  EXPECT_EQ(gpu["filled"], "");
  EXPECT_EQ(gpu["threshold"], "");
  EXPECT_EQ(gpu["below"], "conv2d_gemm_gpu_f16w");  // CompileGraph keeps fp16 weight copies
  EXPECT_EQ(gpu["big"], "gemm_gpu_f16w");
  std::string text;
  for (const auto& [who, what] : r->program.node_kernels) text += who + ": " + what + "\n";
  EXPECT_NE(text.find("filled: conv2d_gemm (1x1 s1 g1) [gpu: conv2d_gemm (its grid fills a GPU), cpu: "),
            std::string::npos)
      << text;
}
// config.json "gpu_conv_tiles": "all" (LowerOptions::all_conv_gpu_tiles):
// a Conv whose default grid fills a GPU gets its GPU tile all the same (the
// tile ChooseGpuTile picks for its shape: 128 x 128 here), for measuring the
// tile; "auto" keeps conv2d_gemm. Any other value is refused, naming the key.
TEST(DeviceVariants, GpuConvTilesAllGivesEveryConvItsTile) {
  auto compile = [](bool all) {
    Graph g;
    g.opset = 13;
    // ResNet-50's first-stage 1x1 Conv at batch 8: 4 x 392 = 1568 default workgroups.
    AddInput(g, "x", {8, 64, 56, 56});
    AddConst(g, "w", {256, 64, 1, 1}, 0.01f);
    AddNode(g, "Conv", "conv", {"x", "w"}, {"y"}).SetInts("kernel_shape", {1, 1});
    AddOutput(g, "y");
    LowerOptions o;
    o.fp16_weights = false;
    o.all_conv_gpu_tiles = all;
    return CompileGraph(std::move(g), nullptr, {}, o);
  };
  auto all = compile(true), autod = compile(false);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_TRUE(autod.ok()) << autod.status().ToString();
  ASSERT_EQ(all->program.dispatches.size(), 1u);
  ASSERT_EQ(autod->program.dispatches.size(), 1u);
  const Dispatch& d = all->program.dispatches[0];
  EXPECT_EQ(d.gpu_kernel, "conv2d_gemm_gpu");
  EXPECT_EQ(autod->program.dispatches[0].gpu_kernel, "");
  // 25088 columns / 128 x 256 rows / 128, batch of groups 1.
  EXPECT_EQ(std::vector<int64_t>({d.gpu_groups[0].value(), d.gpu_groups[1].value(), d.gpu_groups[2].value()}),
            std::vector<int64_t>({196, 2, 1}));
  std::string text;
  for (const auto& [who, what] : all->program.node_kernels) text += who + ": " + what + "\n";
  EXPECT_NE(text.find("[gpu: conv2d_gemm_gpu tile 128x128 vec4 A vec4 B, cpu: "), std::string::npos) << text;
  EXPECT_EQ(text.find("its grid fills a GPU"), std::string::npos) << text;

  StatusOr<ModelConfig> c = ParseModelConfig(R"({"gpu_conv_tiles": "all"})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->all_conv_gpu_tiles);
  c = ParseModelConfig(R"({"gpu_conv_tiles": "auto"})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->all_conv_gpu_tiles);
  EXPECT_FALSE(ParseModelConfig("{}")->all_conv_gpu_tiles);
  for (const char* bad : {R"({"gpu_conv_tiles": true})", R"({"gpu_conv_tiles": "ALL"})"}) {
    StatusOr<ModelConfig> b = ParseModelConfig(bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.status().message().find("\"gpu_conv_tiles\" must be \"auto\" (the default) or \"all\""),
              std::string::npos)
        << b.status().ToString();
  }
}
#ifdef OAAXVK_TEST_RUNTIME_PARSER
// The runtime's row choice for the 32 KiB tiles: a device with only Vulkan's
// guaranteed 16 KiB of shared memory loads the bundle (its load requirement
// is the default table's) and keeps the default row of every tiled GPU row,
// naming the capability; a device with 32 KiB runs them.
TEST(DeviceVariants, TilesNeedSharedMemory32KiBAndFallBackRowByRow) {
  auto r = CompileGraph(DeviceVariantGraph());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const bool has32 : {false, true}) {
    SCOPED_TRACE(has32 ? "32 KiB" : "16 KiB");
    auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
    ASSERT_TRUE(f.ok());
    auto b = runtime::ParseBundle(std::move(*f), "tiles");
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    const std::vector<runtime::Dispatch> def = b->dispatches;
    runtime::DeviceLimits l;
    l.max_workgroup_invocations = 256;
    for (int a = 0; a < 3; ++a) {
      l.max_workgroup_size[a] = a == 0 ? 256 : 64;
      l.max_workgroup_count[a] = 65535;
    }
    l.max_shared_memory_bytes = has32 ? 32768 : 16384;
    l.max_storage_buffer_range = UINT32_MAX;
    l.max_storage_buffers_per_stage = 8;
    l.max_texel_buffer_elements = 1u << 27;
    l.max_sampled_images_per_stage = 16;
    l.capabilities = {"storageBuffer16BitAccess", "subgroupArithmetic"};
    if (has32) l.capabilities.insert("sharedMemory32KiB");
    const runtime::VariantSelection sel =
        runtime::SelectKernelVariant(&*b, runtime::KernelVariant::kGpu, false, l, true);
    EXPECT_EQ(sel.table, std::string("gpu"));
    EXPECT_TRUE(sel.unknown_capabilities.empty());
    // conv, gemm and the MatMul with a computed B are the tiled rows.
    EXPECT_EQ(sel.kept_capability, has32 ? 0u : 3u);
    EXPECT_EQ(sel.missing_capabilities.count("sharedMemory32KiB"), has32 ? 0u : 1u);
    size_t tiled = 0, subgroup = 0;
    for (size_t i = 0; i < def.size(); ++i) {
      const std::string& name = b->kernels[b->dispatches[i].kernel].name;
      tiled += name.find("gemm_gpu") != std::string::npos;
      subgroup += name.find("_sg") != std::string::npos;
    }
    EXPECT_EQ(tiled, has32 ? 3u : 0u);
    EXPECT_EQ(subgroup, 3u);  // the subgroup rows run either way
    EXPECT_TRUE(runtime::CheckDeviceLimits(*b, l).ok()) << runtime::CheckDeviceLimits(*b, l).ToString();
  }
}

// precision=fp16: the tiled rows (conv, gemm and the MatMul) run their fp16
// forms where the device has shaderFloat16, the cooperative-matrix forms where
// it also has their capabilities and the load-time check did not drop them;
// otherwise the selection counts each kept row under its reason.
TEST(DeviceVariants, PrecisionFp16FormsAndMatrixFormsFallBackWithTheirReason) {
  auto r = CompileGraph(DeviceVariantGraph());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::set<std::string> base = {"storageBuffer16BitAccess", "subgroupArithmetic", "sharedMemory32KiB"};
  const std::set<std::string> matrix = {"shaderFloat16", "vulkanMemoryModel", "cooperativeMatrixNV16x16x16f16f32"};
  enum Case { kNoFloat16, kNoMatrix, kDropped, kMatrix };
  for (const Case c : {kNoFloat16, kNoMatrix, kDropped, kMatrix}) {
    SCOPED_TRACE(c);
    auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
    ASSERT_TRUE(f.ok());
    auto b = runtime::ParseBundle(std::move(*f), "precision");
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    runtime::DeviceLimits l;
    l.max_workgroup_invocations = 256;
    for (int a = 0; a < 3; ++a) {
      l.max_workgroup_size[a] = a == 0 ? 256 : 64;
      l.max_workgroup_count[a] = 65535;
    }
    l.max_shared_memory_bytes = 32768;
    l.max_storage_buffer_range = UINT32_MAX;
    l.max_storage_buffers_per_stage = 8;
    l.max_texel_buffer_elements = 1u << 27;
    l.max_sampled_images_per_stage = 16;
    l.capabilities = base;
    if (c != kNoFloat16) l.capabilities.insert("shaderFloat16");
    if (c == kDropped || c == kMatrix) l.capabilities.insert(matrix.begin(), matrix.end());
    runtime::PrecisionChoice pc;
    pc.fp16 = true;
    if (c == kDropped)
      for (size_t j = 0; j < b->kernels.size(); ++j)
        if (b->kernels[j].name.find("_coopmat") != std::string::npos) pc.dropped_matrix.insert(static_cast<uint32_t>(j));
    const runtime::VariantSelection sel =
        runtime::SelectKernelVariant(&*b, runtime::KernelVariant::kGpu, false, l, false, pc);
    std::map<std::string, int> rows;
    for (const runtime::Dispatch& d : b->dispatches) ++rows[b->kernels[d.kernel].name];
    EXPECT_EQ(sel.kept_default(), 0u);
    if (c == kNoFloat16) {
      EXPECT_EQ(sel.fp16_forms, 0u);
      EXPECT_EQ(sel.fp16_kept, 3u);
      EXPECT_EQ(sel.fp16_missing_capabilities, (std::map<std::string, size_t>{{"shaderFloat16", 3}}));
      EXPECT_EQ(rows["conv2d_gemm_gpu"] + rows["gemm_gpu"], 3);
      continue;
    }
    EXPECT_EQ(sel.fp16_forms, 3u);
    EXPECT_EQ(sel.fp16_kept, 0u);
    // The _f16w rows went through their fp32 form to the fp16 form: not counted as fp32 forms.
    EXPECT_EQ(sel.fp32_forms, 0u);
    if (c == kMatrix) {
      EXPECT_EQ(sel.matrix_forms, 3u);
      EXPECT_EQ(sel.matrix_kept, 0u);
      EXPECT_EQ(rows["conv2d_gemm_gpu_coopmat"], 1);
      EXPECT_EQ(rows["gemm_gpu_coopmat"], 2);
    } else {
      EXPECT_EQ(sel.matrix_forms, 0u);
      EXPECT_EQ(sel.matrix_kept, 3u);
      EXPECT_EQ(rows["conv2d_gemm_gpu_fp16"], 1);
      EXPECT_EQ(rows["gemm_gpu_fp16"], 2);
      if (c == kNoMatrix) {
        EXPECT_EQ(sel.matrix_kept_dropped, 0u);
        EXPECT_EQ(sel.matrix_missing_capabilities.count("cooperativeMatrixNV16x16x16f16f32"), 1u);
      } else {
        EXPECT_EQ(sel.matrix_kept_dropped, 3u);
        EXPECT_TRUE(sel.matrix_missing_capabilities.empty());
      }
    }
    EXPECT_TRUE(runtime::CheckDeviceLimits(*b, l).ok()) << runtime::CheckDeviceLimits(*b, l).ToString();
  }
}
#endif

// ---- end of the device-specific variant tests

}  // namespace
}  // namespace oaaxvk::toolchain
