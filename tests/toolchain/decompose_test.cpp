// DecomposeOps (passes/decompose.h): op counts before/after each
// decomposition, the shapes it infers, and its errors. Numerics are checked
// end to end by the ONNX node tests (scripts/conformance.sh).
#include "toolchain/passes/decompose.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

TEST(Decompose, LayerNormalizationWithBiasAndStatistics) {
  Graph g;
  g.opset = 17;
  AddInput(g, "x", {2, 3, 4});
  AddConst(g, "s", {3, 4});
  AddConst(g, "b", {3, 4});
  AddNode(g, "LayerNormalization", "ln", {"x", "s", "b"}, {"y", "mean", "inv"}).SetInt("axis", 1);
  for (const char* o : {"y", "mean", "inv"}) AddOutput(g, o);
  PassResult r;
  ASSERT_TRUE(DecomposeOps(g, &r).ok());
  EXPECT_EQ(r.nodes_before, 1u);
  EXPECT_EQ(r.nodes_after, 10u);
  EXPECT_EQ(g.CountOps("LayerNormalization"), 0u);
  EXPECT_EQ(g.CountOps("ReduceMean"), 2u);
  EXPECT_EQ(g.CountOps("Sqrt"), 1u);
  EXPECT_EQ(g.CountOps("Reciprocal"), 1u);
  EXPECT_EQ(g.CountOps("Add"), 2u);
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{2, 3, 4}));
  EXPECT_EQ(g.FindTensor("mean")->shape, (Shape{2, 1, 1}));
  EXPECT_EQ(g.FindTensor("inv")->shape, (Shape{2, 1, 1}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(Decompose, LayerNormalizationWithoutBiasDefaultAxis) {
  Graph g;
  g.opset = 17;
  AddInput(g, "x", {2, 5});
  AddConst(g, "s", {5});
  AddNode(g, "LayerNormalization", "ln", {"x", "s"}, {"y"});
  AddOutput(g, "y");
  PassResult r;
  ASSERT_TRUE(DecomposeOps(g, &r).ok());
  EXPECT_EQ(r.nodes_after, 9u);
  EXPECT_EQ(g.CountOps("Add"), 1u);  // epsilon only
  EXPECT_EQ(g.nodes[0].GetInts("axes", {}), (std::vector<int64_t>{1}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(Decompose, LayerNormalizationRejectsOtherStashType) {
  Graph g;
  g.opset = 17;
  AddInput(g, "x", {2, 5});
  AddConst(g, "s", {5});
  AddNode(g, "LayerNormalization", "ln", {"x", "s"}, {"y"}).SetInt("stash_type", 10);
  AddOutput(g, "y");
  PassResult r;
  Status st = DecomposeOps(g, &r);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'ln'"), std::string::npos);
}

TEST(Decompose, TriluConstantKBecomesWhereWithConstantMask) {
  for (int upper : {0, 1}) {
    Graph g;
    g.opset = 14;
    AddInput(g, "x", {2, 3, 4});
    AddConstI64(g, "k", {1});
    AddNode(g, "Trilu", "tri", {"x", "k"}, {"y"}).SetInt("upper", upper);
    AddOutput(g, "y");
    PassResult r;
    ASSERT_TRUE(DecomposeOps(g, &r).ok());
    EXPECT_EQ(r.nodes_before, 1u);
    ASSERT_EQ(r.nodes_after, 1u);
    ASSERT_EQ(g.nodes[0].op_type, "Where");
    const Tensor& mask = *g.FindTensor(g.nodes[0].inputs[0]);
    ASSERT_TRUE(mask.is_const);
    EXPECT_EQ(mask.dtype, DType::kBool);
    EXPECT_EQ(mask.shape, (Shape{3, 4}));
    std::vector<int64_t> m = mask.AsInts();
    // k = 1: upper keeps j - i >= 1, lower keeps j - i <= 1.
    EXPECT_EQ(m[0 * 4 + 0], upper ? 0 : 1);
    EXPECT_EQ(m[0 * 4 + 1], 1);
    EXPECT_EQ(m[0 * 4 + 2], upper ? 1 : 0);
    EXPECT_EQ(m[2 * 4 + 0], upper ? 0 : 1);
    EXPECT_EQ(g.FindTensor("y")->shape, (Shape{2, 3, 4}));
    EXPECT_TRUE(g.Validate().ok());
  }
}

TEST(Decompose, TriluRuntimeKComparesOnDevice) {
  Graph g;
  g.opset = 14;
  AddInput(g, "x", {3, 3});
  Tensor k;
  k.name = "k"; k.dtype = DType::kInt64; k.has_shape = true;
  g.tensors["k"] = k;
  g.inputs.push_back({"k", "k"});
  AddNode(g, "Trilu", "tri", {"x", "k"}, {"y"});
  AddOutput(g, "y");
  PassResult r;
  ASSERT_TRUE(DecomposeOps(g, &r).ok());
  EXPECT_EQ(r.nodes_after, 2u);
  EXPECT_EQ(g.CountOps("GreaterOrEqual"), 1u);
  EXPECT_EQ(g.CountOps("Where"), 1u);
  EXPECT_TRUE(g.Validate().ok());
}

TEST(Decompose, DepthToSpaceAndSpaceToDepth) {
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {1, 8, 4, 6});
    AddNode(g, op, "d", {"x"}, {"y"}).SetInt("blocksize", 2);
    AddOutput(g, "y");
    PassResult r;
    ASSERT_TRUE(DecomposeOps(g, &r).ok()) << op;
    EXPECT_EQ(r.nodes_after, 3u);
    EXPECT_EQ(g.CountOps("Reshape"), 2u);
    EXPECT_EQ(g.CountOps("Transpose"), 1u);
    EXPECT_EQ(g.FindTensor("y")->shape,
              std::string(op) == "DepthToSpace" ? (Shape{1, 2, 8, 12}) : (Shape{1, 32, 2, 3}));
    EXPECT_TRUE(g.Validate().ok());
  }
}

TEST(Decompose, SplitIntoSlices) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 6});
  AddConstI64(g, "split", {2, 4});
  AddNode(g, "Split", "sp", {"x", "split"}, {"a", "b"}).SetInt("axis", 1);
  AddNode(g, "Split", "eq", {"x"}, {"c", "d", "e"}).SetInt("axis", -1);
  for (const char* o : {"a", "b", "c", "d", "e"}) AddOutput(g, o);
  PassResult r;
  ASSERT_TRUE(DecomposeOps(g, &r).ok());
  EXPECT_EQ(r.nodes_before, 2u);
  EXPECT_EQ(r.nodes_after, 5u);
  EXPECT_EQ(g.CountOps("Slice"), 5u);
  EXPECT_EQ(g.FindTensor("a")->shape, (Shape{2, 2}));
  EXPECT_EQ(g.FindTensor("b")->shape, (Shape{2, 4}));
  EXPECT_EQ(g.FindTensor("e")->shape, (Shape{2, 2}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(Decompose, SplitRejectsBadSizes) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 6});
  AddConstI64(g, "split", {2, 3});
  AddNode(g, "Split", "sp", {"x", "split"}, {"a", "b"}).SetInt("axis", 1);
  AddOutput(g, "a");
  PassResult r;
  Status st = DecomposeOps(g, &r);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'sp'"), std::string::npos);
}

}  // namespace
}  // namespace oaaxvk::toolchain
