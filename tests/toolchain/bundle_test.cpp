#include "toolchain/bundle/bundle_writer.h"

#include <gtest/gtest.h>

#include <cstring>

#include "oaax_vulkan/oinf.h"
#include "toolchain/driver/driver.h"
#include "toolchain/lower/kernels.h"

namespace oaaxvk::toolchain {

std::string ReshapeWithShapeInputModel();  // import_test.cpp

namespace {

template <typename T>
T Scalar(const oinf::File& f, const std::string& key) {
  const oinf::Metadata* m = f.FindMetadata(key);
  EXPECT_NE(m, nullptr) << key;
  T v{};
  if (m) {
    EXPECT_TRUE(m->GetScalar(&v)) << key;
  }
  return v;
}

std::string U8(const oinf::File& f, const std::string& key) {
  const oinf::Metadata* m = f.FindMetadata(key);
  if (!m || m->type != oinf::ValueType::kNdArray) return "<missing>";
  return std::string(reinterpret_cast<const char*>(m->ndarray.data.data), m->ndarray.data.size);
}

CompileResult CompileModel(const std::string& name) {
  auto g = ImportOnnxFile(std::string(OAAXVK_TC_MODELS) + "/" + name);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  auto r = CompileGraph(std::move(*g));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(*r);
}

// Checks every invariant of docs/bundle-format.md that does not need a GPU.
void CheckContract(const std::vector<uint8_t>& bytes) {
  auto f = oinf::File::FromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const oinf::Metadata* fmt = f->FindMetadata("format");
  ASSERT_NE(fmt, nullptr);
  EXPECT_EQ(fmt->string_value, "oaax-vulkan-bundle");
  EXPECT_EQ(Scalar<uint32_t>(*f, "format_version"), 1u);
  uint64_t sizes[4] = {0, Scalar<uint64_t>(*f, "arena.bytes"), Scalar<uint64_t>(*f, "io.inputs_bytes"),
                       Scalar<uint64_t>(*f, "io.outputs_bytes")};
  const oinf::Tensor* w = f->FindTensor("weights");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, oinf::ValueType::kU8);
  sizes[0] = w->numel;
  uint32_t K = Scalar<uint32_t>(*f, "kernels.count");
  std::vector<uint32_t> kb(K), ks(K);
  for (uint32_t j = 0; j < K; ++j) {
    std::string pre = "kernel." + std::to_string(j) + ".";
    kb[j] = Scalar<uint32_t>(*f, pre + "bindings");
    ks[j] = Scalar<uint32_t>(*f, pre + "spec_constants");
    const oinf::Tensor* spv = f->FindTensor(pre + "spirv");
    ASSERT_NE(spv, nullptr);
    uint32_t magic;
    std::memcpy(&magic, spv->data.data, 4);
    EXPECT_EQ(magic, 0x07230203u);
    const KernelInfo* ki = FindKernel(std::string(f->FindMetadata(pre + "name")->string_value));
    ASSERT_NE(ki, nullptr);
    EXPECT_EQ(ki->bindings, kb[j]);
  }
  const oinf::Tensor* disp = f->FindTensor("program.dispatch");
  const oinf::Tensor* bind = f->FindTensor("program.bindings");
  const oinf::Tensor* spec = f->FindTensor("program.spec");
  const oinf::Tensor* bar = f->FindTensor("program.barrier");
  const oinf::Tensor* op = f->FindTensor("program.op");
  ASSERT_TRUE(disp && bind && spec && bar && op);
  ASSERT_EQ(disp->dims.size(), 2u);
  ASSERT_EQ(disp->dims[1], 8u);
  uint64_t D = disp->dims[0];
  EXPECT_EQ(bar->numel, D);
  EXPECT_EQ(op->numel, D);
  const uint32_t* dr = reinterpret_cast<const uint32_t*>(disp->data.data);
  const uint64_t* br = reinterpret_cast<const uint64_t*>(bind->data.data);
  const uint8_t* barrier = bar->data.data;
  uint32_t max_groups = Scalar<uint32_t>(*f, "device.max_workgroup_count");
  // Hazard check: every dispatch that reads/writes a range written by an
  // earlier dispatch must have a barrier between them.
  struct R { uint64_t kind, b, e; size_t d; };
  std::vector<R> writes_since;
  for (uint64_t d = 0; d < D; ++d) {
    const uint32_t* row = dr + d * 8;
    ASSERT_LT(row[0], K);
    EXPECT_EQ(row[5], kb[row[0]]);
    EXPECT_EQ(row[7], ks[row[0]]);
    for (int a = 1; a <= 3; ++a) { EXPECT_GE(row[a], 1u); EXPECT_LE(row[a], max_groups); }
    ASSERT_LE(uint64_t{row[4]} + row[5], bind->dims[0]);
    ASSERT_LE(uint64_t{row[6]} + row[7], spec->numel);
    if (barrier[d]) writes_since.clear();
    for (uint32_t b = 0; b < row[5]; ++b) {
      const uint64_t* x = br + (row[4] + b) * 3;
      ASSERT_LT(x[0], 4u);
      EXPECT_EQ(x[1] % 256, 0u);
      EXPECT_GT(x[2], 0u);
      EXPECT_LE(x[1] + x[2], sizes[x[0]]) << "dispatch " << d << " binding " << b;
      for (const R& r : writes_since)
        EXPECT_FALSE(r.kind == x[0] && r.b < x[1] + x[2] && x[1] < r.e)
            << "dispatch " << d << " touches what dispatch " << r.d << " wrote without a barrier";
    }
    // The last binding of every v1 kernel is its output.
    const uint64_t* out = br + (row[4] + row[5] - 1) * 3;
    writes_since.push_back({out[0], out[1], out[1] + out[2], static_cast<size_t>(d)});
  }
  for (const char* dir : {"input", "output"}) {
    uint32_t n = Scalar<uint32_t>(*f, std::string("io.") + dir + "s");
    for (uint32_t i = 0; i < n; ++i) {
      std::string pre = std::string("io.") + dir + "." + std::to_string(i) + ".";
      EXPECT_EQ(Scalar<uint64_t>(*f, pre + "offset") % 256, 0u);
      const uint32_t dt = Scalar<uint32_t>(*f, pre + "dtype");  // OAAX codes + float16 (10), bfloat16 (16)
      EXPECT_TRUE((dt >= 1 && dt <= 13 && dt != 8) || dt == 16) << pre << "dtype = " << dt;
      EXPECT_LE(Scalar<uint64_t>(*f, pre + "offset") + Scalar<uint64_t>(*f, pre + "nbytes"),
                sizes[dir[0] == 'i' ? 2 : 3]);
    }
  }
  EXPECT_LE(Scalar<uint32_t>(*f, "device.max_workgroup_invocations"), 256u);
  EXPECT_LE(Scalar<uint32_t>(*f, "device.max_shared_memory_bytes"), 32768u);

  // Feature device_variants: program.dispatch.gpu has the default table's
  // shape; each row binds the default row's ranges, except weights (kind 0)
  // read from their binary16 copies (kind 4, inside weights_f16); kernel and
  // spec ranges valid; the device requirements cover the GPU rows.
  const std::string features = U8(*f, "bundle.features");
  const oinf::Tensor* gpu = f->FindTensor("program.dispatch.gpu");
  const oinf::Tensor* half = f->FindTensor("weights_f16");
  EXPECT_EQ(gpu != nullptr, features.find("device_variants") != std::string::npos) << features;
  EXPECT_EQ(half != nullptr, gpu != nullptr);
  if (!gpu || !half) return;
  ASSERT_EQ(gpu->dims, disp->dims);
  const uint32_t* gr = reinterpret_cast<const uint32_t*>(gpu->data.data);
  const uint64_t max_range = Scalar<uint64_t>(*f, "device.max_storage_buffer_range");
  for (uint64_t d = 0; d < D; ++d) {
    const uint32_t* row = gr + d * 8;
    const uint32_t* def = dr + d * 8;
    ASSERT_LT(row[0], K);
    EXPECT_EQ(row[5], def[5]) << "GPU row " << d;
    EXPECT_EQ(row[5], kb[row[0]]);
    EXPECT_EQ(row[7], ks[row[0]]);
    for (int a = 1; a <= 3; ++a) { EXPECT_GE(row[a], 1u); EXPECT_LE(row[a], max_groups); }
    ASSERT_LE(uint64_t{row[4]} + row[5], bind->dims[0]);
    ASSERT_LE(uint64_t{row[6]} + row[7], spec->numel);
    for (uint32_t b = 0; b < row[5]; ++b) {
      const uint64_t* x = br + (row[4] + b) * 3;
      const uint64_t* y = br + (def[4] + b) * 3;
      EXPECT_LE(x[2], max_range);
      if (x[0] == 4) {
        EXPECT_EQ(y[0], 0u) << "GPU row " << d << " binding " << b;
        EXPECT_EQ(x[1] % 256, 0u);
        EXPECT_EQ(x[2] * 2, y[2]);  // binary16 copy of float32 weights
        EXPECT_LE(x[1] + x[2], half->numel);
      } else {
        EXPECT_TRUE(x[0] == y[0] && x[1] == y[1] && x[2] == y[2]) << "GPU row " << d << " binding " << b;
      }
    }
  }
}

TEST(Bundle, MobilenetLikeSatisfiesTheContract) {
  CompileResult r = CompileModel("mobilenet_like.onnx");
  CheckContract(r.bundle);
  auto f = oinf::File::FromMemory(r.bundle.data(), r.bundle.size());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(U8(*f, "io.input.0.name"), "x");
  EXPECT_EQ(U8(*f, "io.output.0.name"), "prob");
  EXPECT_EQ(U8(*f, "io.output.1.name"), "both");
  EXPECT_EQ(U8(*f, "model.name"), "mobilenet_like");
  EXPECT_EQ(Scalar<int64_t>(*f, "model.opset"), 13);
  // Shape / Gather / Concat folded, BN folded, Identity removed, 4 activations fused.
  for (const auto& [node, k] : r.program.node_kernels) {
    EXPECT_NE(node, "bn1");
    EXPECT_NE(node, "shape");
  }
}

TEST(Bundle, Utf8NamesRoundTripAndPassthroughCopies) {
  CompileResult r = CompileModel("passthrough.onnx");
  CheckContract(r.bundle);
  auto f = oinf::File::FromMemory(r.bundle.data(), r.bundle.size());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(U8(*f, "io.input.0.name"), "入力:0");
  EXPECT_EQ(U8(*f, "io.output.0.name"), "out/put");
  EXPECT_EQ(U8(*f, "model.name"), "画像");
  EXPECT_EQ(r.program.dispatches.size(), 1u);
}

TEST(Bundle, BoundInputRoundTrip) {
  ImportOptions o;
  o.input_values["shape"] = {{-1, true, -1}, {2, true, 2}};
  ImportReport rep;
  auto g = ImportOnnxBytes(ReshapeWithShapeInputModel(), "", o, &rep);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto r = CompileGraph(std::move(*g), nullptr, rep.bound_inputs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  CheckContract(r->bundle);
  auto f = oinf::File::FromMemory(r->bundle.data(), r->bundle.size());
  ASSERT_TRUE(f.ok());
  // The graph output's copy (strided_copy) brings its CPU-class texel twin.
  EXPECT_EQ(U8(*f, "bundle.features"), "bound_inputs kernel_variants parameter_buffer texel_bindings");
  EXPECT_EQ(U8(*f, "io.input.1.name"), "shape");
  EXPECT_EQ(Scalar<uint32_t>(*f, "io.input.1.dtype"), 7u);
  EXPECT_EQ(f->FindTensor("io.input.0.bound"), nullptr);
  const oinf::Tensor* b = f->FindTensor("io.input.1.bound");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, oinf::ValueType::kU8);
  ASSERT_EQ(b->data.size, 16u);
  int64_t v[2];
  std::memcpy(v, b->data.data, 16);
  EXPECT_EQ(v[0], -1);
  EXPECT_EQ(v[1], 2);
  // Without binding, bound_inputs is not required.
  CompileResult plain = CompileModel("mobilenet_like.onnx");
  auto pf = oinf::File::FromMemory(plain.bundle.data(), plain.bundle.size());
  ASSERT_TRUE(pf.ok());
  EXPECT_EQ(U8(*pf, "bundle.features").find("bound_inputs"), std::string::npos);
  EXPECT_EQ(pf->FindTensor("io.input.0.bound"), nullptr);
}

// mobilenet_like (Conv, depthwise Conv, GlobalAveragePool, Gemm, Softmax)
// carries GPU-class rows (feature device_variants) that obey the contract.
TEST(Bundle, MobilenetLikeHasDeviceVariants) {
  CompileResult r = CompileModel("mobilenet_like.onnx");
  auto f = oinf::File::FromMemory(r.bundle.data(), r.bundle.size());
  ASSERT_TRUE(f.ok());
  EXPECT_NE(U8(*f, "bundle.features").find("device_variants"), std::string::npos);
  ASSERT_NE(f->FindTensor("program.dispatch.gpu"), nullptr);
  const oinf::Tensor* half = f->FindTensor("weights_f16");
  ASSERT_NE(half, nullptr);
  EXPECT_EQ(half->numel, r.plan.weights_f16_bytes);
  int gpu_rows = 0;
  for (const Dispatch& d : r.program.dispatches) gpu_rows += !d.gpu_kernel.empty();
  EXPECT_GT(gpu_rows, 0);
}

TEST(Bundle, DeterministicBytes) {
  CompileResult a = CompileModel("mobilenet_like.onnx");
  CompileResult b = CompileModel("mobilenet_like.onnx");
  EXPECT_EQ(a.bundle, b.bundle);
}

TEST(Bundle, EmbeddedKernelsMatchTheTable) {
  for (const KernelInfo& k : Kernels()) {
    ASSERT_NE(k.spirv, nullptr) << k.name;
    EXPECT_GT(k.spirv_words, 5u);
    EXPECT_EQ(k.spirv[0], 0x07230203u);
    EXPECT_LE(k.local_size[0] * k.local_size[1] * k.local_size[2], 256u);
    EXPECT_LE(k.shared_bytes, 32768u);
  }
}

}  // namespace
}  // namespace oaaxvk::toolchain
