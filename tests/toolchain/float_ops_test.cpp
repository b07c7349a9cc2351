// Float operators of issue 5: Reduce* over any axes, LogSoftmax/Hardmax and
// the elementwise math functions lowered as activation codes. Numerics are
// checked on the device by the ONNX conformance runner (tests/conformance).
#include <gtest/gtest.h>

#include "test_util.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/lower/kernels.h"
#include "toolchain/lower/lower.h"
#include "toolchain/passes/activations_float.h"
#include "toolchain/passes/passes.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

TEST(FloatOps, ReduceShapesOverAnyAxes) {
  struct Case {
    std::vector<int64_t> axes;
    int64_t keep, noop;
    Shape want;
  } cases[] = {
      {{1}, 1, 0, {3, 1, 5}}, {{1}, 0, 0, {3, 5}}, {{-3, 2}, 0, 0, {4}}, {{}, 1, 0, {1, 1, 1}},
      {{}, 0, 0, {}},         {{}, 0, 1, {3, 4, 5}},
  };
  for (const Case& c : cases) {
    Graph g;
    g.opset = 11;
    AddInput(g, "x", {3, 4, 5});
    Node& n = AddNode(g, "ReduceSum", "r", {"x"}, {"y"});
    if (!c.axes.empty()) n.SetInts("axes", c.axes);
    n.SetInt("keepdims", c.keep);
    n.SetInt("noop_with_empty_axes", c.noop);
    ASSERT_TRUE(InferShapes(g).ok());
    EXPECT_EQ(DimValues(g.FindTensor("y")->shape), c.want) << ShapeToString(ToDims(c.axes));
  }
}

TEST(FloatOps, ReduceAxesFromConstantInputAndErrors) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 3, 4});
  AddConstI64(g, "axes", {0, 2});
  AddNode(g, "ReduceSum", "r", {"x", "axes"}, {"y"}).SetInt("keepdims", 0);
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(DimValues(g.FindTensor("y")->shape), std::vector<int64_t>{3});
  EXPECT_EQ(g.nodes[0].GetInts("_axes", {}), std::vector<int64_t>({0, 2}));

  Graph bad;
  bad.opset = 13;
  AddInput(bad, "x", {2, 3});
  AddConstI64(bad, "axes", {2});
  AddNode(bad, "ReduceMax", "rm", {"x", "axes"}, {"y"});
  Status s = InferShapes(bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'rm'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("axis 2"), std::string::npos) << s.message();

  Graph dyn;
  dyn.opset = 13;
  AddInput(dyn, "x", {2, 3});
  AddInput(dyn, "axes", {1});
  AddNode(dyn, "ReduceSum", "rd", {"x", "axes"}, {"y"});
  s = InferShapes(dyn);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a compile-time constant"), std::string::npos) << s.message();
}

TEST(FloatOps, ReduceLowersToStridedKernel) {
  Graph g;
  g.opset = 11;
  AddInput(g, "x", {2, 3, 4});
  AddNode(g, "ReduceLogSumExp", "r", {"x"}, {"y"}).SetInts("axes", {1});
  AddOutput(g, "y");
  StatusOr<Program> p = FoldAndLower(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->dispatches.size(), 1u);
  const Dispatch& d = p->dispatches[0];
  EXPECT_EQ(d.kernel, "reduce");
  ASSERT_EQ(d.spec.size(), FindKernel("reduce")->spec_constants);
  EXPECT_EQ(d.spec[0], 8u);   // 2 x 4 outputs
  EXPECT_EQ(d.spec[1], 8u);   // log-sum-exp
  EXPECT_EQ(d.spec[2], 3u);   // 3 reduced elements each
  // kept dims [2, 4] with strides [12, 1]; reduced dim [3] with stride 4
  EXPECT_EQ(d.spec[7], 2u);
  EXPECT_EQ(d.spec[8], 4u);
  EXPECT_EQ(d.spec[13], 12u);
  EXPECT_EQ(d.spec[14], 1u);
  EXPECT_EQ(d.spec[20], 3u);
  EXPECT_EQ(d.spec[26], 4u);
}

TEST(FloatOps, ReduceMeanKeepsRowKernelForTrailingAxes) {
  for (bool trailing : {true, false}) {
    Graph g;
    g.opset = 11;
    AddInput(g, "x", {2, 3, 4});
    AddNode(g, "ReduceMean", "r", {"x"}, {"y"}).SetInts("axes", {trailing ? 2 : 0});
    AddOutput(g, "y");
    StatusOr<Program> p = FoldAndLower(g);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->dispatches.at(0).kernel, trailing ? "reduce_mean" : "reduce");
  }
}

TEST(FloatOps, LogSoftmaxAndHardmaxUseSoftmaxKernelModes) {
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {2, 3, 4});
    AddNode(g, op, "s", {"x"}, {"y"}).SetInt("axis", 1);
    AddOutput(g, "y");
    StatusOr<Program> p = FoldAndLower(g);
    ASSERT_TRUE(p.ok()) << p.status().message();
    const Dispatch& d = p->dispatches.at(0);
    EXPECT_EQ(d.kernel, "softmax");
    ASSERT_EQ(d.spec.size(), 4u);
    EXPECT_EQ(d.spec[0], 2u);
    EXPECT_EQ(d.spec[1], 3u);
    EXPECT_EQ(d.spec[2], 4u);
    EXPECT_EQ(d.spec[3], std::string(op) == "Softmax" ? 0u : std::string(op) == "LogSoftmax" ? 1u : 2u);
  }
  Graph bad;
  bad.opset = 13;
  AddInput(bad, "x", {2, 3});
  AddNode(bad, "Hardmax", "h", {"x"}, {"y"}).SetInt("axis", 2);
  Status s = InferShapes(bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'h'"), std::string::npos) << s.message();
}

TEST(FloatOps, MathFunctionsAreActivationsWithOnnxDefaults) {
  Graph g;
  g.opset = 13;
  Node selu;
  selu.op_type = "Selu";
  StatusOr<ActivationParams> ap = GetActivationParams(g, selu);
  ASSERT_TRUE(ap.ok());
  EXPECT_EQ(ap->act, Activation::kSelu);
  EXPECT_FLOAT_EQ(ap->alpha, 1.67326319217681884765625f);
  EXPECT_FLOAT_EQ(ap->beta, 1.05070102214813232421875f);
  Node shrink;
  shrink.op_type = "Shrink";
  shrink.SetFloat("bias", 1.5f);
  ap = GetActivationParams(g, shrink);
  ASSERT_TRUE(ap.ok());
  EXPECT_FLOAT_EQ(ap->alpha, 0.5f);
  EXPECT_FLOAT_EQ(ap->beta, 1.5f);
  Node celu;
  celu.name = "c";
  celu.op_type = "Celu";
  celu.SetFloat("alpha", 0.f);
  EXPECT_FALSE(GetActivationParams(g, celu).ok());
  for (const char* op : {"Log", "Round", "Erf", "Atanh", "Mish", "ThresholdedRelu"}) {
    EXPECT_TRUE(IsActivationOp(op)) << op;
    EXPECT_TRUE(IsSupportedOp("", op)) << op;
  }
  EXPECT_STREQ(ActivationName(Activation::kMish), "Mish");
  EXPECT_STREQ(ActivationName(Activation::kRelu), "relu");
}

TEST(FloatOps, MathFunctionFusesIntoConvEpilogue) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 2, 4, 4});
  AddConst(g, "w", {2, 2, 1, 1});
  AddNode(g, "Conv", "conv", {"x", "w"}, {"c"});
  AddNode(g, "Softplus", "sp", {"c"}, {"y"});
  AddOutput(g, "y");
  StatusOr<std::vector<PassResult>> r = RunDefaultPipeline(g);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].act(), Activation::kSoftplus);
  StatusOr<Program> p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_NE(p->node_kernels.at(0).second.find("+ Softplus"), std::string::npos) << p->node_kernels.at(0).second;
}

}  // namespace
}  // namespace oaaxvk::toolchain
