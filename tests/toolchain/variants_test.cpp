// Bundle feature kernel_variants (docs/bundle-format.md, "Kernel variants"):
// Conv / Gemm / MatMul get a CPU-class row with the same bindings; the
// written tables obey the contract. (Running both variants on lavapipe and
// SwiftShader is tests/runtime/kernel_variants.sh.)
#include <gtest/gtest.h>

#include <cstring>

#include "oaax_vulkan/oinf.h"
#include "test_util.h"
#include "toolchain/driver/driver.h"
#include "toolchain/lower/kernels.h"

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
      EXPECT_EQ(d.cpu_kernel, "gemm_cpu") << d.node;
    } else {
      EXPECT_TRUE(d.cpu_kernel.empty()) << d.node << " (" << d.kernel << ")";  // depthwise, copies: no variant
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
  EXPECT_EQ(cpu_rows, 3);
  // Grid of the conv: M = 10 rows in blocks of 4, 2*11*13 = 286 columns in 256, 1 group.
  for (const Dispatch& d : p.dispatches)
    if (d.node == "conv") {
      EXPECT_EQ(d.cpu_groups[0], 3u);
      EXPECT_EQ(d.cpu_groups[1], 2u);
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
    EXPECT_TRUE(names[cr[0]] == "conv2d_cpu" || names[cr[0]] == "gemm_cpu") << names[cr[0]];
    EXPECT_EQ(cr[6], gr[6]) << "row " << i << ": the CPU row shares the spec values";
  }
  EXPECT_EQ(differing, 3);
}

TEST(KernelVariants, BundlesWithoutConvOrGemmHaveNoVariantTable) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {4, 5});
  AddNode(g, "Relu", "relu", {"x"}, {"y"});
  AddOutput(g, "y");
  auto r = CompileGraph(std::move(g));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->program.features.count("kernel_variants"), 0u);
  auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->FindTensor("program.dispatch.cpu"), nullptr);
}

}  // namespace
}  // namespace oaaxvk::toolchain
