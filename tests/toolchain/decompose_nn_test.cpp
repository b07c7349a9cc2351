// Decompositions of neural-network and quantization operators
// (passes/decompose_nn.cpp): the operators they produce, the shapes they
// infer, and their errors. Numerics are checked end to end by the ONNX node
// tests (scripts/conformance.sh).
#include <gtest/gtest.h>

#include "test_util.h"
#include "toolchain/passes/decompose.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

void AddTypedInput(Graph& g, const std::string& name, const Shape& s, DType dt) {
  AddInput(g, name, s);
  g.tensors[name].dtype = dt;
}

Status Decompose(Graph& g) {
  PassResult r;
  return DecomposeOps(g, &r);
}

bool Contains(const Status& st, const std::string& s) { return st.message().find(s) != std::string::npos; }

TEST(DecomposeNn, MaxPool1dRunsAs2dWithUnitHeight) {
  Graph g;
  g.opset = 12;
  AddInput(g, "x", {1, 3, 32});
  Node& n = AddNode(g, "MaxPool", "pool", {"x"}, {"y"});
  n.SetInts("kernel_shape", {3});
  n.SetInts("strides", {2});
  n.SetInts("pads", {1, 0});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  ASSERT_EQ(g.CountOps("MaxPool"), 1u);
  EXPECT_EQ(g.CountOps("Reshape"), 2u);
  for (const Node& m : g.nodes) {
    if (m.op_type != "MaxPool") continue;
    EXPECT_EQ(m.GetInts("kernel_shape", {}), (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(m.GetInts("strides", {}), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(g.FindTensor(m.inputs[0])->shape, (Shape{1, 3, 1, 32}));
  }
  // floor((32 + 1 - 3) / 2) + 1 = 16
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 3, 16}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, Pool3dSeparatesIntoHwThenDepth) {
  Graph g;
  g.opset = 12;
  AddInput(g, "x", {1, 2, 6, 5, 4});
  Node& n = AddNode(g, "AveragePool", "pool3", {"x"}, {"y"});
  n.SetInts("kernel_shape", {3, 2, 2});
  n.SetInts("strides", {2, 1, 2});
  n.SetInts("pads", {1, 0, 0, 1, 1, 0});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  ASSERT_EQ(g.CountOps("AveragePool"), 2u);
  std::vector<std::vector<int64_t>> kernels;
  for (const Node& m : g.nodes)
    if (m.op_type == "AveragePool") kernels.push_back(m.GetInts("kernel_shape", {}));
  EXPECT_EQ(kernels, (std::vector<std::vector<int64_t>>{{2, 2}, {3, 1}}));
  // D: (6 + 2 - 3) / 2 + 1 = 3; H: (5 + 1 - 2) + 1 = 5; W: (4 - 2) / 2 + 1 = 2.
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 2, 3, 5, 2}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, Pool3dKeepsSymbolicSizes) {
  SymContext ctx({{"N", 1, 2, 1}, {"H", 8, 16, 1}});
  SymScope scope(&ctx);
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {Dim(2, ctx.SymbolNode(0)), 3, 6, Dim(16, ctx.SymbolNode(1)), 7});
  Node& n = AddNode(g, "MaxPool", "pool3", {"x"}, {"y"});
  n.SetInts("kernel_shape", {2, 3, 3});
  n.SetInts("strides", {2, 2, 2});
  n.SetInts("pads", {0, 1, 1, 1, 1, 1});
  n.SetInt("ceil_mode", 1);
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  const Shape& ys = g.FindTensor("y")->shape;
  ASSERT_EQ(ys.size(), 5u);
  EXPECT_EQ(ctx.ToString(ys[0].expr()), "N");
  EXPECT_TRUE(ys[3].is_symbolic());
  // D: ceil((6 + 1 - 2) / 2) + 1 = 4, the last window starting at 6 >= 6 + 0 is dropped -> 3;
  // H at 16: ceil((16 + 2 - 3) / 2) + 1 = 9; W: ceil((7 + 2 - 3) / 2) + 1 = 4.
  EXPECT_EQ(ys, (Shape{2, 3, 3, 9, 4}));
  StatusOr<Program> p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->outputs.at(0).shape[3].is_symbolic());
}

TEST(DecomposeNn, MaxPoolOnUint8RunsInFloatBetweenCasts) {
  Graph g;
  g.opset = 12;
  AddTypedInput(g, "x", {1, 1, 5, 5}, DType::kUint8);
  AddNode(g, "MaxPool", "pool", {"x"}, {"y"}).SetInts("kernel_shape", {2, 2});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Cast"), 2u);
  EXPECT_EQ(g.CountOps("MaxPool"), 1u);
  EXPECT_EQ(g.FindTensor("y")->dtype, DType::kUint8);
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 1, 4, 4}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, ConvTranspose3dIsOne2dConvTransposePerKernelDepth) {
  Graph g;
  g.opset = 11;
  AddInput(g, "x", {1, 1, 3, 4, 5});
  AddInput(g, "w", {1, 2, 3, 3, 3});
  Node& n = AddNode(g, "ConvTranspose", "ct3", {"x", "w"}, {"y"});
  n.SetInts("strides", {2, 1, 1});
  n.SetInts("pads", {1, 0, 0, 0, 1, 0});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("ConvTranspose"), 3u);
  // D: 2*(3-1) + 3 - 1 = 6; H: (4-1) + 3 - 1 = 5; W: (5-1) + 3 = 7.
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 2, 6, 5, 7}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, ConvTranspose3dWithASymbolicSizeIsRefusedByName) {
  SymContext ctx({{"H", 2, 8, 1}});
  SymScope scope(&ctx);
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 1, 3, Dim(8, ctx.SymbolNode(0)), 5});
  AddConst(g, "w", {1, 2, 3, 3, 3});
  AddNode(g, "ConvTranspose", "ct3", {"x", "w"}, {"y"});
  AddOutput(g, "y");
  Status st = Decompose(g);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "'ct3'") && Contains(st, "static input sizes")) << st.message();
}

TEST(DecomposeNn, Conv2dIsKeptUnchanged) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 2, 5, 5});
  AddConst(g, "w", {4, 2, 3, 3});
  AddNode(g, "Conv", "conv", {"x", "w"}, {"y"}).SetInts("pads", {1, 1, 1, 1});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "conv");
  EXPECT_EQ(g.nodes[0].outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 4, 5, 5}));
}

TEST(DecomposeNn, ConvTranspose1dAndOutputShape) {
  for (int64_t out : {6, 8}) {
    Graph g;
    g.opset = 11;
    AddInput(g, "x", {1, 1, 3});
    AddInput(g, "w", {1, 2, 3});
    AddNode(g, "ConvTranspose", "ct", {"x", "w"}, {"y"}).SetInts("output_shape", {out});
    AddOutput(g, "y");
    Status st = Decompose(g);
    if (out == 6) {
      // Full result 5 long: total padding -1 becomes one more output_padding.
      ASSERT_TRUE(st.ok()) << st.message();
      EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 2, 6}));
    } else {
      // Total padding -3 would need a negative start pad.
      ASSERT_FALSE(st.ok());
      EXPECT_TRUE(Contains(st, "'ct/2d'"));
      EXPECT_TRUE(Contains(st, "negative start pad"));
    }
  }
}

TEST(DecomposeNn, ConvTransposeSameUpperPads) {
  Graph g;
  g.opset = 11;
  AddInput(g, "x", {1, 1, 3, 3});
  AddConst(g, "w", {1, 2, 3, 3});
  Node& n = AddNode(g, "ConvTranspose", "ct", {"x", "w"}, {"y"});
  n.SetString("auto_pad", "SAME_UPPER");
  n.SetInts("strides", {2, 2});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 2, 6, 6}));
  // total padding 2*2 + 3 - 6 = 1: SAME_UPPER puts it at the end.
  EXPECT_EQ(g.nodes[0].GetInts("_pads", {}), (std::vector<int64_t>{0, 0, 1, 1}));
}

TEST(DecomposeNn, Conv3dIsDepthIm2colIntoOne2dConv) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 4, 7, 6, 5});
  AddConst(g, "w", {6, 2, 3, 2, 3});
  Node& n = AddNode(g, "Conv", "conv3", {"x", "w"}, {"y"});
  n.SetInt("group", 2);
  n.SetInts("strides", {2, 1, 2});
  n.SetInts("dilations", {2, 1, 1});
  n.SetInts("pads", {1, 0, 1, 0, 1, 2});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  ASSERT_EQ(g.CountOps("Conv"), 1u);
  EXPECT_EQ(g.CountOps("Slice"), 3u);  // one strided depth slice per kernel depth
  for (const Node& m : g.nodes) {
    if (m.op_type != "Conv") continue;
    // D: padded 8, dilated kernel 5, stride 2 -> 2 output depths, batched with N.
    EXPECT_EQ(g.FindTensor(m.inputs[0])->shape, (Shape{2 * 2, 3 * 4, 6, 5}));
    EXPECT_EQ(g.FindTensor(m.inputs[1])->shape, (Shape{6, 3 * 2, 2, 3}));
    EXPECT_EQ(m.GetInt("group", 1), 2);
    EXPECT_EQ(m.GetInts("pads", {}), (std::vector<int64_t>{0, 1, 1, 2}));
  }
  // H: 6 + 1 - 2 + 1 = 6; W: (5 + 3 - 3) / 2 + 1 = 3.
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{2, 6, 2, 6, 3}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, Conv3dBeforeOpset10GathersTheDepths) {
  Graph g;
  g.opset = 6;
  AddInput(g, "x", {1, 2, 7, 4, 4});
  AddConst(g, "w", {3, 2, 3, 2, 2});
  Node& n = AddNode(g, "Conv", "conv3", {"x", "w"}, {"y"});
  n.SetInts("strides", {2, 1, 1});
  n.SetInts("pads", {1, 0, 0, 1, 0, 0});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Slice"), 0u);  // Slice-1 has no steps
  EXPECT_EQ(g.CountOps("Gather"), 3u);
  // D: (7 + 2 - 3) / 2 + 1 = 4.
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 3, 4, 3, 3}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, Conv3dSameUpperPadsTheDepthAndPassesAutoPadOn) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 3, 7, 6, 5});
  AddConst(g, "w", {5, 3, 2, 3, 3});
  Node& n = AddNode(g, "Conv", "conv3", {"x", "w"}, {"y"});
  n.SetString("auto_pad", "SAME_UPPER");
  n.SetInts("strides", {2, 2, 1});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Pad"), 1u);  // depth: out 4, total pad 1, at the end
  for (const Node& m : g.nodes)
    if (m.op_type == "Conv") {
      EXPECT_EQ(m.GetString("auto_pad", ""), "SAME_UPPER");
    }
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 5, 4, 3, 5}));
}

TEST(DecomposeNn, Conv3dKeepsASymbolicBatch) {
  SymContext ctx({{"N", 1, 4, 1}});
  SymScope scope(&ctx);
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {Dim(4, ctx.SymbolNode(0)), 2, 5, 6, 6});
  AddConst(g, "w", {3, 2, 3, 3, 3});
  AddNode(g, "Conv", "conv3", {"x", "w"}, {"y"}).SetInts("pads", {1, 1, 1, 1, 1, 1});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  const Shape& ys = g.FindTensor("y")->shape;
  ASSERT_EQ(ys.size(), 5u);
  EXPECT_TRUE(ys[0].is_symbolic());
  EXPECT_EQ(ctx.ToString(ys[0].expr()), "N");
  EXPECT_EQ(ys, (Shape{4, 3, 5, 6, 6}));
  StatusOr<Program> p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->outputs.at(0).shape[0].is_symbolic());
}

TEST(DecomposeNn, Conv3dKernelDeeperThanThePaddedInputNamesTheNode) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 1, 2, 4, 4});
  AddConst(g, "w", {1, 1, 3, 2, 2});
  AddNode(g, "Conv", "conv3", {"x", "w"}, {"y"});
  AddOutput(g, "y");
  Status st = Decompose(g);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "'conv3'")) << st.message();
  EXPECT_TRUE(Contains(st, "exceeds the padded depth")) << st.message();
}

TEST(DecomposeNn, LpPoolIsAnAveragePoolOfPowersTimesTheWindow) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 2, 7, 6, 5});
  Node& n = AddNode(g, "LpPool", "lp", {"x"}, {"y"});
  n.SetInts("kernel_shape", {2, 2, 3});
  n.SetInts("strides", {2, 2, 1});
  n.SetInt("p", 3);
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("AveragePool"), 2u);  // the 3-D pool: H and W, then D
  EXPECT_EQ(g.CountOps("Abs"), 1u);
  EXPECT_EQ(g.CountOps("Pow"), 2u);
  for (const Node& m : g.nodes)
    if (m.op_type == "AveragePool") {
      EXPECT_EQ(m.GetInt("count_include_pad", 0), 1);
    }
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 2, 3, 3, 3}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, ConvTranspose3dOutputShapeBecomesPads) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 2, 3, 4, 5});
  AddConst(g, "w", {2, 1, 3, 3, 2});
  Node& n = AddNode(g, "ConvTranspose", "ct3", {"x", "w"}, {"y"});
  n.SetInts("strides", {2, 2, 1});
  n.SetInts("output_shape", {6, 8, 6});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  // Full sizes 7, 9, 6: D and H lose one at the end (total 1, start pad 0).
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 1, 6, 8, 6}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, MaxPool3dIndicesGatherTheHwIndicesAtTheDepthIndices) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 2, 5, 4, 4});
  Node& n = AddNode(g, "MaxPool", "pool3", {"x"}, {"y", "i"});
  n.SetInts("kernel_shape", {2, 2, 2});
  n.SetInts("strides", {2, 2, 2});
  AddOutput(g, "y");
  AddOutput(g, "i");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("MaxPool"), 2u);
  EXPECT_EQ(g.CountOps("Gather"), 1u);
  EXPECT_EQ(g.FindTensor("i")->dtype, DType::kInt64);
  EXPECT_EQ(g.FindTensor("i")->shape, (Shape{1, 2, 2, 2, 2}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, MaxPool3dColumnMajorIndicesAreRefusedByName) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 2, 5, 4, 4});
  Node& n = AddNode(g, "MaxPool", "pool3", {"x"}, {"y", "i"});
  n.SetInts("kernel_shape", {2, 2, 2});
  n.SetInt("storage_order", 1);
  AddOutput(g, "y");
  AddOutput(g, "i");
  Status st = Decompose(g);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "'pool3'") && Contains(st, "storage_order 0")) << st.message();
}

TEST(DecomposeNn, Resize3dResizesDepthInnermostThenHw) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 2, 5, 4, 6});
  g.tensors["s"] = MakeConstF32("s", {5}, {1.f, 1.f, 2.f, 1.5f, 0.5f});
  Node& n = AddNode(g, "Resize", "rs", {"x", "", "s"}, {"y"});
  n.SetString("mode", "linear");
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  ASSERT_EQ(g.CountOps("Resize"), 2u);
  std::vector<Shape> in_shapes;
  for (const Node& m : g.nodes)
    if (m.op_type == "Resize") in_shapes.push_back(g.FindTensor(m.inputs[0])->shape);
  EXPECT_EQ(in_shapes, (std::vector<Shape>{{1 * 2 * 4 * 6, 1, 5}, {1, 2, 10, 4, 6}}));
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 2, 10, 6, 3}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, Upsample3dResizesTheDepthToo) {
  Graph g;
  g.opset = 9;
  AddInput(g, "x", {1, 2, 3, 4, 5});
  g.tensors["s"] = MakeConstF32("s", {5}, {1.f, 1.f, 2.f, 2.f, 1.f});
  AddNode(g, "Upsample", "up", {"x", "s"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Resize"), 2u);  // D innermost, then H and W
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 2, 6, 8, 5}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, Resize2dIsKeptUnchanged) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 2, 4, 6});
  g.tensors["s"] = MakeConstF32("s", {4}, {1.f, 1.f, 2.f, 2.f});
  AddNode(g, "Resize", "rs", {"x", "", "s"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "rs");
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 2, 8, 12}));
}

TEST(DecomposeNn, InstanceNormalization) {
  Graph g;
  g.opset = 6;
  AddInput(g, "x", {2, 3, 4, 5});
  AddInput(g, "s", {3});
  AddInput(g, "b", {3});
  AddNode(g, "InstanceNormalization", "in", {"x", "s", "b"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("ReduceMean"), 2u);
  EXPECT_EQ(g.CountOps("Sqrt"), 1u);
  for (const Node& m : g.nodes)
    if (m.op_type == "ReduceMean") {
      EXPECT_EQ(m.GetInts("axes", {}), (std::vector<int64_t>{2, 3}));
    }
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{2, 3, 4, 5}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, LrnIsAChannelWindowAveragePool) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 5, 3, 4});
  AddNode(g, "LRN", "lrn", {"x"}, {"y"}).SetInt("size", 4);
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  ASSERT_EQ(g.CountOps("AveragePool"), 1u);
  for (const Node& m : g.nodes) {
    if (m.op_type != "AveragePool") continue;
    EXPECT_EQ(m.GetInts("kernel_shape", {}), (std::vector<int64_t>{4, 1}));
    // floor((4-1)/2) = 1 channel before, ceil((4-1)/2) = 2 after.
    EXPECT_EQ(m.GetInts("pads", {}), (std::vector<int64_t>{1, 0, 2, 0}));
    EXPECT_EQ(m.GetInt("count_include_pad", 0), 1);
    EXPECT_EQ(g.FindTensor(m.inputs[0])->shape, (Shape{2, 1, 5, 12}));
  }
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{2, 5, 3, 4}));
}

TEST(DecomposeNn, BatchNormalizationConstantParametersAreKept) {
  Graph g;
  g.opset = 15;
  AddInput(g, "x", {1, 3, 2, 2});
  for (const char* p : {"s", "b", "m", "v"}) AddConst(g, p, {3});
  AddNode(g, "BatchNormalization", "bn", {"x", "s", "b", "m", "v"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "BatchNormalization");
  EXPECT_EQ(g.nodes[0].name, "bn");
}

TEST(DecomposeNn, BatchNormalizationRuntimeParameters) {
  Graph g;
  g.opset = 15;
  AddInput(g, "x", {1, 3, 2, 2});
  for (const char* p : {"s", "b", "m", "v"}) AddInput(g, p, {3});
  AddNode(g, "BatchNormalization", "bn", {"x", "s", "b", "m", "v"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("BatchNormalization"), 0u);
  EXPECT_EQ(g.CountOps("Sqrt"), 1u);
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 3, 2, 2}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, QuantizeLinearPerAxis) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 3, 2, 2});
  AddInput(g, "scale", {3});
  AddTypedInput(g, "zp", {3}, DType::kInt8);
  AddNode(g, "QuantizeLinear", "q", {"x", "scale", "zp"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Round"), 1u);
  EXPECT_EQ(g.CountOps("Div"), 1u);
  EXPECT_EQ(g.FindTensor("y")->dtype, DType::kInt8);
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 3, 2, 2}));
  for (const Node& m : g.nodes)
    if (m.op_type == "Div") {
      EXPECT_EQ(g.FindTensor(m.inputs[1])->shape, (Shape{3, 1, 1}));
    }
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, DequantizeLinearDefaultsToNoZeroPoint) {
  Graph g;
  g.opset = 13;
  AddTypedInput(g, "x", {4}, DType::kUint8);
  AddInput(g, "scale", {});
  AddNode(g, "DequantizeLinear", "dq", {"x", "scale"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Sub"), 0u);
  EXPECT_EQ(g.FindTensor("y")->dtype, DType::kFloat);
}

TEST(DecomposeNn, DynamicQuantizeLinearOutputs) {
  Graph g;
  g.opset = 11;
  AddInput(g, "x", {2, 3});
  AddNode(g, "DynamicQuantizeLinear", "dq", {"x"}, {"y", "y_scale", "y_zp"});
  for (const char* o : {"y", "y_scale", "y_zp"}) AddOutput(g, o);
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.FindTensor("y")->dtype, DType::kUint8);
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{2, 3}));
  EXPECT_EQ(g.FindTensor("y_scale")->shape, Shape{});
  EXPECT_EQ(g.FindTensor("y_zp")->dtype, DType::kUint8);
  EXPECT_EQ(g.FindTensor("y_zp")->shape, Shape{});
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, MatMulIntegerWithinTheFloat32Bound) {
  Graph g;
  g.opset = 10;
  AddTypedInput(g, "a", {4, 3}, DType::kUint8);
  AddTypedInput(g, "b", {3, 2}, DType::kUint8);
  AddTypedInput(g, "azp", {1}, DType::kUint8);
  AddTypedInput(g, "bzp", {1}, DType::kUint8);
  AddNode(g, "MatMulInteger", "mmi", {"a", "b", "azp", "bzp"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("MatMul"), 1u);
  EXPECT_EQ(g.FindTensor("y")->dtype, DType::kInt32);
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{4, 2}));
}

TEST(DecomposeNn, MatMulIntegerRejectsSumsBeyond2To24) {
  Graph g;
  g.opset = 10;
  // K = 300: 300 * 255 * 255 > 2^24.
  AddTypedInput(g, "a", {2, 300}, DType::kUint8);
  AddTypedInput(g, "b", {300, 2}, DType::kUint8);
  AddNode(g, "MatMulInteger", "mmi", {"a", "b"}, {"y"});
  AddOutput(g, "y");
  Status st = Decompose(g);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "'mmi'"));
  EXPECT_TRUE(Contains(st, "2^24"));
}

TEST(DecomposeNn, MatMulIntegerConstantDataNarrowsTheBound) {
  Graph g;
  g.opset = 10;
  AddTypedInput(g, "a", {2, 300}, DType::kUint8);
  g.tensors["b"] = MakeConstFromDoubles("b", DType::kUint8, {300, 2}, std::vector<double>(600, 3.0));
  AddNode(g, "MatMulInteger", "mmi", {"a", "b"}, {"y"});
  AddOutput(g, "y");
  EXPECT_TRUE(Decompose(g).ok());  // 300 * 255 * 3 < 2^24
}

TEST(DecomposeNn, ConvIntegerUsesConv) {
  Graph g;
  g.opset = 10;
  AddTypedInput(g, "x", {1, 1, 3, 3}, DType::kUint8);
  AddTypedInput(g, "w", {1, 1, 2, 2}, DType::kUint8);
  AddTypedInput(g, "xzp", {}, DType::kUint8);
  AddNode(g, "ConvInteger", "ci", {"x", "w", "xzp"}, {"y"}).SetInts("pads", {1, 1, 1, 1});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Conv"), 1u);
  EXPECT_EQ(g.FindTensor("y")->dtype, DType::kInt32);
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 1, 4, 4}));
}

TEST(DecomposeNn, QLinearMatMulOutputType) {
  Graph g;
  g.opset = 10;
  AddTypedInput(g, "a", {2, 2, 4}, DType::kUint8);
  AddTypedInput(g, "b", {2, 4, 3}, DType::kUint8);
  for (const char* s : {"as", "bs", "ys"}) AddInput(g, s, {1});
  for (const char* z : {"az", "bz", "yz"}) AddTypedInput(g, z, {1}, DType::kUint8);
  AddNode(g, "QLinearMatMul", "qmm", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("MatMul"), 1u);
  EXPECT_EQ(g.CountOps("Round"), 1u);
  EXPECT_EQ(g.FindTensor("y")->dtype, DType::kUint8);
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{2, 2, 3}));
}

TEST(DecomposeNn, EinsumBatchMatMul) {
  Graph g;
  g.opset = 12;
  AddInput(g, "x", {5, 2, 3});
  AddInput(g, "y", {5, 3, 4});
  AddNode(g, "Einsum", "e", {"x", "y"}, {"z"}).SetString("equation", "bij, bjk -> bik");
  AddOutput(g, "z");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Mul"), 1u);
  EXPECT_EQ(g.CountOps("ReduceSum"), 1u);
  EXPECT_EQ(g.FindTensor("z")->shape, (Shape{5, 2, 4}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DecomposeNn, EinsumDiagonalTransposeAndImplicitOutput) {
  {
    Graph g;
    g.opset = 12;
    AddInput(g, "x", {3, 5, 5});
    AddNode(g, "Einsum", "e", {"x"}, {"y"}).SetString("equation", "...ii ->...i");
    AddOutput(g, "y");
    ASSERT_TRUE(Decompose(g).ok());
    EXPECT_EQ(g.CountOps("Where"), 1u);
    EXPECT_EQ(g.FindTensor("y")->shape, (Shape{3, 5}));
  }
  {
    Graph g;
    g.opset = 12;
    AddInput(g, "x", {3, 4});
    AddNode(g, "Einsum", "e", {"x"}, {"y"}).SetString("equation", "ij->ji");
    AddOutput(g, "y");
    ASSERT_TRUE(Decompose(g).ok());
    EXPECT_EQ(g.CountOps("Transpose"), 1u);
    EXPECT_EQ(g.FindTensor("y")->shape, (Shape{4, 3}));
  }
  {
    Graph g;
    g.opset = 12;
    AddInput(g, "x", {5});
    AddInput(g, "y", {5});
    AddNode(g, "Einsum", "e", {"x", "y"}, {"z"}).SetString("equation", "i,i");
    AddOutput(g, "z");
    ASSERT_TRUE(Decompose(g).ok());
    EXPECT_EQ(g.FindTensor("z")->shape, Shape{});
  }
}

TEST(DecomposeNn, EinsumRejectsThreeOperandsNamingTheEquation) {
  Graph g;
  g.opset = 12;
  for (const char* i : {"a", "b", "c"}) AddInput(g, i, {2, 2});
  AddNode(g, "Einsum", "e3", {"a", "b", "c"}, {"y"}).SetString("equation", "ij,jk,kl->il");
  AddOutput(g, "y");
  Status st = Decompose(g);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "'e3'"));
  EXPECT_TRUE(Contains(st, "ij,jk,kl->il"));
}

TEST(DecomposeNn, UpsampleRuntimeScalesUseTheConstantInputWording) {
  Graph g;
  g.opset = 9;
  AddInput(g, "x", {1, 1, 2, 2});
  AddInput(g, "scales", {4});
  AddNode(g, "Upsample", "up", {"x", "scales"}, {"y"});
  AddOutput(g, "y");
  Status st = Decompose(g);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "input 'scales' is not a compile-time constant"));
}

TEST(DecomposeNn, UpsampleConstantScalesBecomeResize) {
  Graph g;
  g.opset = 9;
  AddInput(g, "x", {1, 1, 2, 2});
  g.tensors["scales"] = MakeConstF32("scales", {4}, {1.f, 1.f, 2.f, 3.f});
  AddNode(g, "Upsample", "up", {"x", "scales"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  ASSERT_EQ(g.CountOps("Resize"), 1u);
  EXPECT_EQ(g.nodes[0].GetString("nearest_mode", ""), "floor");
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 1, 4, 6}));
}

}  // namespace
}  // namespace oaaxvk::toolchain
