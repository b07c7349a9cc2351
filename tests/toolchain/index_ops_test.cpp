// Indexing and scanning operators of issue 5 (shape_infer_index.cpp,
// lower_index.cpp): shapes, resolved parameters, conversion-time errors and
// the kernel parameters (checked by CPU mirrors of the kernels' index math).
// The kernels themselves run on the device in the ONNX conformance cases
// (tests/conformance: gather_elements, gathernd, scatter*, cumsum, top_k,
// *_pad, maxpool_with_argmax, nllloss *_expanded).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "test_util.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/lower/kernels.h"
#include "toolchain/lower/lower.h"
#include "toolchain/passes/passes.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

void AddTyped(Graph& g, const std::string& name, DType dt, const Shape& s, bool input = true) {
  Tensor t;
  t.name = name; t.dtype = dt; t.shape = s; t.has_shape = true;
  g.tensors[name] = t;
  if (input) g.inputs.push_back({name, name});
}

const Dispatch* FindDispatch(const Program& p, const std::string& kernel) {
  for (const Dispatch& d : p.dispatches)
    if (d.kernel == kernel) return &d;
  return nullptr;
}

bool Contains(const Status& s, const std::string& what) { return s.message().find(what) != std::string::npos; }

TEST(IndexOps, KernelTableRowsHaveSpirv) {
  for (const char* k : {"gather_elements", "scatter_elements", "gather_nd", "scatter_nd", "cumsum", "topk", "pad",
                        "maxpool_indices"}) {
    const KernelInfo* ki = FindKernel(k);
    ASSERT_NE(ki, nullptr) << k;
    EXPECT_GT(ki->spirv_words, 0u) << k;
  }
  EXPECT_EQ(FindKernel("topk")->written_bindings, (std::vector<uint32_t>{1, 2}));
}

TEST(IndexOps, SupportedOpsListsThem) {
  std::vector<std::string> ops = SupportedOps();
  for (const char* op : {"GatherElements", "GatherND", "ScatterElements", "Scatter", "ScatterND", "CumSum", "TopK",
                         "Pad"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
}

// CPU mirror of shaders/gather_elements.comp driven by the lowered spec,
// against the ONNX definition, with negative and out-of-range indices.
TEST(IndexOps, GatherElementsSpecMirrorsOnnx) {
  Graph g;
  g.opset = 13;
  AddInput(g, "data", {2, 3, 4});
  AddTyped(g, "idx", DType::kInt64, {2, 2, 4});
  AddNode(g, "GatherElements", "ge", {"data", "idx"}, {"y"}).SetInt("axis", -2);
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  EXPECT_EQ(g.FindTensor("y")->shape, Shape({2, 2, 4}));
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const Dispatch* d = FindDispatch(*p, "gather_elements");
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->spec.size(), 15u);
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  std::vector<int32_t> ind(16);
  for (size_t i = 0; i < ind.size(); ++i) ind[i] = static_cast<int32_t>(i % 7) - 3;  // -3..3; 3 is out of range
  for (uint32_t i = 0; i < d->spec[0]; ++i) {
    int32_t j = ind[i];
    if (j < 0) j += static_cast<int32_t>(d->spec[14]);
    float got = 0.f;
    if (j >= 0 && j < static_cast<int32_t>(d->spec[14])) {
      uint32_t r = i, off = 0;
      for (int k = 5; k >= 0; --k) {
        uint32_t c = r % d->spec[1 + k];
        r /= d->spec[1 + k];
        off += (static_cast<uint32_t>(k) == d->spec[13] ? static_cast<uint32_t>(j) : c) * d->spec[7 + k];
      }
      got = x[off];
    }
    // ONNX: y[a][b][c] = data[a][idx[a][b][c]][c] (axis 1), -3..-1 wrap, 3 is out of range.
    uint32_t a = i / 8, c = i % 4;
    int32_t w = ind[i] < 0 ? ind[i] + 3 : ind[i];
    float want = w < 3 ? x[(a * 3 + static_cast<uint32_t>(w)) * 4 + c] : 0.f;
    EXPECT_EQ(got, want) << "output " << i;
  }
}

// Rank 7 (the kernel's limit is 6): dimensions where data and indices agree
// merge around the axis; a full-extent Slice is removed, and Neg runs at any
// rank. Without mergeable neighbours the kernel's limit is named.
TEST(IndexOps, GatherElementsAboveRankSixMergesMatchingDimensions) {
  Graph g;
  g.opset = 13;
  AddInput(g, "data", {2, 5, 3, 2, 2, 3, 2});
  AddTyped(g, "idx", DType::kInt64, {2, 1, 3, 2, 2, 3, 2});
  AddNode(g, "GatherElements", "ge", {"data", "idx"}, {"y"}).SetInt("axis", 1);
  AddNode(g, "Neg", "neg", {"y"}, {"z"});
  g.tensors["s0"] = MakeConstI64("s0", {1}, {0});
  g.tensors["s1"] = MakeConstI64("s1", {1}, {1});
  AddNode(g, "Slice", "all", {"z", "s0", "s1", "s1"}, {"w"});
  AddOutput(g, "w");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  ASSERT_NE(g.FindTensor(g.outputs[0].tensor), nullptr);  // the Slice is gone: the output is Neg's
  EXPECT_EQ(g.FindTensor(g.outputs[0].tensor)->shape, Shape({2, 1, 3, 2, 2, 3, 2}));
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const Dispatch* d = FindDispatch(*p, "gather_elements");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->spec[0], 2u * 3 * 2 * 2 * 3 * 2);  // every output element
  EXPECT_EQ(FindDispatch(*p, "slice"), nullptr);
  EXPECT_EQ(FindDispatch(*p, "strided_copy"), nullptr);

  Graph h;
  h.opset = 13;
  AddInput(h, "data", {2, 5, 3, 2, 2, 3, 2});
  AddTyped(h, "idx", DType::kInt64, {1, 1, 2, 1, 1, 2, 1});
  AddNode(h, "GatherElements", "ge", {"data", "idx"}, {"y"}).SetInt("axis", 1);
  AddOutput(h, "y");
  ASSERT_TRUE(RunDefaultPipeline(h).ok());
  auto q = Lower(h);
  ASSERT_FALSE(q.ok());
  EXPECT_TRUE(Contains(q.status(), "rank above 6")) << q.status().message();
}

TEST(IndexOps, ConstantIndicesOutOfRangeAreRejected) {
  Graph g;
  g.opset = 13;
  AddInput(g, "data", {3, 3});
  g.tensors["idx"] = MakeConstI64("idx", {1, 2}, {0, 3});
  AddNode(g, "GatherElements", "ge", {"data", "idx"}, {"y"}).SetInt("axis", 1);
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  auto p = Lower(g);
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(Contains(p.status(), "node 'ge' (GatherElements): index 3 at position 1 of 'idx' is out of range"))
      << p.status().message();
}

TEST(IndexOps, ScatterElementsShapesReductionAndErrors) {
  Graph g;
  g.opset = 16;
  AddInput(g, "data", {4, 5});
  AddTyped(g, "idx", DType::kInt64, {2, 5});
  AddInput(g, "upd", {2, 5});
  Node& n = AddNode(g, "ScatterElements", "se", {"data", "idx", "upd"}, {"y"});
  n.SetInt("axis", 0);
  n.SetString("reduction", "mul");
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  EXPECT_EQ(g.FindTensor("y")->shape, Shape({4, 5}));
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  // Copy, then the scatter dispatch reading and writing the same output value.
  ASSERT_EQ(p->dispatches.size(), 3u);  // + the int64 -> int32 indices conversion
  const Dispatch* copy = FindDispatch(*p, "strided_copy");
  const Dispatch* d = FindDispatch(*p, "scatter_elements");
  ASSERT_NE(copy, nullptr);
  ASSERT_NE(d, nullptr);
  EXPECT_LT(copy, d);
  ASSERT_EQ(d->bindings.size(), 3u);
  EXPECT_EQ(d->bindings[2].value, copy->bindings[1].value);
  EXPECT_TRUE(d->bindings[2].written);
  EXPECT_EQ(d->spec[0], 5u);   // one invocation per line of indices along axis 0
  EXPECT_EQ(d->spec[13], 4u);  // axis 0 of a rank-2 tensor in the 6-dim view
  EXPECT_EQ(d->spec[14], 2u);  // mul
  EXPECT_EQ(d->spec[15], 1u);  // float32

  Graph bad;
  bad.opset = 16;
  AddInput(bad, "data", {4, 5});
  AddTyped(bad, "idx", DType::kInt64, {2, 5});
  AddInput(bad, "upd", {2, 4});
  AddNode(bad, "ScatterElements", "se", {"data", "idx", "upd"}, {"y"});
  Status s = InferShapes(bad);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, "node 'se' (ScatterElements): updates [2, 4] and indices [2, 5]")) << s.message();

  Graph red;
  red.opset = 16;
  AddInput(red, "data", {4});
  AddTyped(red, "idx", DType::kInt64, {1});
  AddInput(red, "upd", {1});
  AddNode(red, "ScatterElements", "se", {"data", "idx", "upd"}, {"y"}).SetString("reduction", "avg");
  s = InferShapes(red);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, "reduction 'avg' is not supported")) << s.message();
}

// GatherND with batch_dims: shape and the kernel's row/offset parameters.
TEST(IndexOps, GatherNDBatchDimsShapeAndSpec) {
  Graph g;
  g.opset = 13;
  AddTyped(g, "data", DType::kInt32, {2, 3, 4, 5});
  AddTyped(g, "idx", DType::kInt64, {2, 6, 2});
  AddNode(g, "GatherND", "gnd", {"data", "idx"}, {"y"}).SetInt("batch_dims", 1);
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  EXPECT_EQ(g.FindTensor("y")->shape, Shape({2, 6, 5}));
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const Dispatch* d = FindDispatch(*p, "gather_nd");
  ASSERT_NE(d, nullptr);
  // N, K, MROWS, SLICE, BSTRIDE, KD[6], KS[6]
  EXPECT_EQ(d->spec, (std::vector<uint32_t>{60, 2, 6, 5, 60, 3, 4, 1, 1, 1, 1, 20, 5, 0, 0, 0, 0}));
}

TEST(IndexOps, ScatterNDUpdatesShapeIsChecked) {
  Graph g;
  g.opset = 16;
  AddInput(g, "data", {4, 4, 4});
  AddTyped(g, "idx", DType::kInt64, {2, 1});
  AddInput(g, "upd", {2, 4, 3});
  AddNode(g, "ScatterND", "snd", {"data", "idx", "upd"}, {"y"});
  Status s = InferShapes(g);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, "updates have shape [2, 4, 3], expected [2, 4, 4]")) << s.message();
}

TEST(IndexOps, CumSumAxisMustBeConstant) {
  Graph g;
  g.opset = 14;
  AddTyped(g, "x", DType::kInt64, {2, 3});
  AddTyped(g, "axis", DType::kInt32, {});
  AddNode(g, "CumSum", "cs", {"x", "axis"}, {"y"});
  Status s = InferShapes(g);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, "node 'cs' (CumSum): axis input 'axis' is not a compile-time constant")) << s.message();

  Graph c;
  c.opset = 14;
  AddTyped(c, "x", DType::kInt64, {2, 3});
  c.tensors["axis"] = MakeConstI64("axis", {}, {-1});
  Node& n = AddNode(c, "CumSum", "cs", {"x", "axis"}, {"y"});
  n.SetInt("exclusive", 1);
  n.SetInt("reverse", 1);
  AddOutput(c, "y");
  ASSERT_TRUE(RunDefaultPipeline(c).ok());
  auto p = Lower(c);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const Dispatch* d = FindDispatch(*p, "cumsum");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->spec, (std::vector<uint32_t>{2, 3, 1, 1, 1, 0}));  // 2 rows of 3, int32 arithmetic
  EXPECT_EQ(d->groups[0], 1u);
}

TEST(IndexOps, TopKShapesTwoWrittenOutputsAndKChecks) {
  Graph g;
  g.opset = 11;
  AddInput(g, "x", {3, 4});
  AddConstI64(g, "k", {3});
  Node& n = AddNode(g, "TopK", "tk", {"x", "k"}, {"v", "i"});
  n.SetInt("axis", 1);
  n.SetInt("largest", 0);
  AddOutput(g, "v");
  AddOutput(g, "i");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  EXPECT_EQ(g.FindTensor("v")->shape, Shape({3, 3}));
  EXPECT_EQ(g.FindTensor("i")->dtype, DType::kInt64);
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const Dispatch* d = FindDispatch(*p, "topk");
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->bindings.size(), 3u);
  EXPECT_FALSE(d->bindings[0].written);
  EXPECT_TRUE(d->bindings[1].written);
  EXPECT_TRUE(d->bindings[2].written);
  EXPECT_EQ(d->spec, (std::vector<uint32_t>{12, 4, 1, 3, 0, 1}));

  Graph big;
  big.opset = 11;
  AddInput(big, "x", {3, 4});
  AddConstI64(big, "k", {5});
  AddNode(big, "TopK", "tk", {"x", "k"}, {"v", "i"});
  Status s = InferShapes(big);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, "K = 5 must be in [1, 4]")) << s.message();

  Graph dyn;
  dyn.opset = 11;
  AddInput(dyn, "x", {3, 4});
  AddTyped(dyn, "k", DType::kInt64, {1});
  AddNode(dyn, "TopK", "tk", {"x", "k"}, {"v", "i"});
  s = InferShapes(dyn);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, "K input 'k' is not a compile-time constant")) << s.message();
}

// CPU mirror of shaders/pad.comp (all three modes, cropping) against a
// direct evaluation of the ONNX definition on a 2-D input.
TEST(IndexOps, PadSpecMirrorsOnnxModes) {
  for (const char* mode : {"constant", "reflect", "edge"}) {
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {3, 4});
    AddConstI64(g, "pads", {2, -1, 1, 3});  // dim0: +2/+1, dim1: crop 1 / +3
    g.tensors["v"] = MakeConstF32("v", {}, {7.f});
    AddNode(g, "Pad", "pad", {"x", "pads", "v"}, {"y"}).SetString("mode", mode);
    AddOutput(g, "y");
    Status st = RunDefaultPipeline(g).status();
    if (std::string(mode) != "constant") {  // crop and pad on dim 1 is rejected for reflect/edge
      ASSERT_FALSE(st.ok()) << mode;
      EXPECT_TRUE(Contains(st, "with both cropping and padding on dimension 1")) << st.message();
      continue;
    }
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(g.FindTensor("y")->shape, Shape({6, 6}));
  }
  for (const char* mode : {"constant", "reflect", "edge"}) {
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {3, 4});
    AddConstI64(g, "pads", {2, 0, 1, 3});
    AddNode(g, "Pad", "pad", {"x", "pads"}, {"y"}).SetString("mode", mode);
    AddOutput(g, "y");
    ASSERT_TRUE(RunDefaultPipeline(g).ok()) << mode;
    EXPECT_EQ(g.FindTensor("y")->shape, Shape({6, 7}));
    auto p = Lower(g);
    ASSERT_TRUE(p.ok()) << p.status().message();
    const Dispatch* d = FindDispatch(*p, "pad");
    ASSERT_NE(d, nullptr);
    ASSERT_EQ(d->spec.size(), 22u);
    std::vector<float> x(12);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
    for (uint32_t i = 0; i < d->spec[0]; ++i) {
      // Mirror.
      uint32_t r = i, off = 0, stride = 1;
      bool konst = false;
      for (int k = 5; k >= 0; --k) {
        int c = static_cast<int>(r % d->spec[4 + k]) - static_cast<int32_t>(d->spec[16 + k]);
        r /= d->spec[4 + k];
        int n = static_cast<int>(d->spec[10 + k]);
        if (c < 0 || c >= n) {
          if (d->spec[1] == 0) { konst = true; break; }
          if (d->spec[1] == 1 && n > 1) {
            int period = 2 * (n - 1);
            c %= period;
            if (c < 0) c += period;
            if (c >= n) c = period - c;
          } else {
            c = std::clamp(c, 0, n - 1);
          }
        }
        off += static_cast<uint32_t>(c) * stride;
        stride *= d->spec[10 + k];
      }
      float got = konst ? 0.f : x[off];
      // Reference (numpy.pad semantics).
      int row = static_cast<int>(i / 7) - 2, col = static_cast<int>(i % 7);
      auto fix = [&](int c, int n) {
        if (std::string(mode) == "edge") return std::clamp(c, 0, n - 1);
        if (c < 0) return -c;
        if (c >= n) return 2 * (n - 1) - c;
        return c;
      };
      float want;
      if (std::string(mode) == "constant")
        want = (row < 0 || row >= 3 || col >= 4) ? 0.f : x[static_cast<size_t>(row * 4 + col)];
      else
        want = x[static_cast<size_t>(fix(row, 3) * 4 + fix(col, 4))];
      EXPECT_EQ(got, want) << mode << " output " << i;
    }
  }
}

TEST(IndexOps, PadRejectsReflectBeyondExtentAndDynamicPads) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {3, 4});
  AddConstI64(g, "pads", {3, 0, 0, 0});
  AddNode(g, "Pad", "pad", {"x", "pads"}, {"y"}).SetString("mode", "reflect");
  Status s = InferShapes(g);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, "reflect pads of dimension 0 must be below its extent 3")) << s.message();

  Graph d;
  d.opset = 13;
  AddInput(d, "x", {3, 4});
  AddTyped(d, "pads", DType::kInt64, {4});
  AddNode(d, "Pad", "pad", {"x", "pads"}, {"y"});
  s = InferShapes(d);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, "pads input 'pads' is not a compile-time constant")) << s.message();

  Graph w;
  w.opset = 13;
  AddInput(w, "x", {3, 4});
  AddConstI64(w, "pads", {0, 0, 0, 0});
  AddNode(w, "Pad", "pad", {"x", "pads"}, {"y"}).SetString("mode", "wrap");
  s = InferShapes(w);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, "mode 'wrap' is not supported")) << s.message();
}

TEST(IndexOps, Opset2PadTakesAttributes) {
  Graph g;
  g.opset = 2;
  AddInput(g, "x", {2, 2});
  Node& n = AddNode(g, "Pad", "pad", {"x"}, {"y"});
  n.SetInts("pads", {0, 1, 0, 1});
  n.SetFloat("value", 1.5f);
  AddOutput(g, "y");
  ASSERT_TRUE(RunDefaultPipeline(g).ok());
  EXPECT_EQ(g.FindTensor("y")->shape, Shape({2, 4}));
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const Dispatch* d = FindDispatch(*p, "pad");
  ASSERT_NE(d, nullptr);
  float f = 1.5f;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  EXPECT_EQ(d->spec[2], 0u);  // no value input
  EXPECT_EQ(d->spec[3], bits);
}

TEST(IndexOps, MaxPoolIndicesOutputUsesTheIndicesKernel) {
  for (int64_t so : {0, 1}) {
    Graph g;
    g.opset = 12;
    AddInput(g, "x", {1, 2, 5, 5});
    Node& n = AddNode(g, "MaxPool", "mp", {"x"}, {"y", "z"});
    n.SetInts("kernel_shape", {2, 2});
    n.SetInts("strides", {2, 2});
    n.SetInt("storage_order", so);
    AddOutput(g, "y");
    AddOutput(g, "z");
    ASSERT_TRUE(RunDefaultPipeline(g).ok());
    EXPECT_EQ(g.FindTensor("z")->shape, Shape({1, 2, 2, 2}));
    EXPECT_EQ(g.FindTensor("z")->dtype, DType::kInt64);
    auto p = Lower(g);
    ASSERT_TRUE(p.ok()) << p.status().message();
    const Dispatch* d = FindDispatch(*p, "maxpool_indices");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->spec, (std::vector<uint32_t>{2, 5, 5, 2, 2, 2, 2, 2, 2, 0, 0, 1, 1, static_cast<uint32_t>(so), 1}));
    EXPECT_EQ(FindDispatch(*p, "pool2d"), nullptr);
  }
}

}  // namespace
}  // namespace oaaxvk::toolchain
