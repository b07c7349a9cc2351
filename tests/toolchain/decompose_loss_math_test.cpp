// Loss and math decompositions (passes/decompose_loss.cpp, decompose_math.cpp):
// the operators each one becomes, the shapes and constants it produces, and
// its errors. Numerics are checked end to end by the ONNX node tests
// (scripts/conformance.sh --filter '^test_(nllloss|sce|sum|mean|max|min|clip|pow|...)').
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"
#include "toolchain/passes/decompose.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

void AddTyped(Graph& g, const std::string& name, DType dt, const Shape& s) {
  AddInput(g, name, s);
  g.tensors[name].dtype = dt;
}

const Node* FindOp(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes)
    if (n.op_type == op) return &n;
  return nullptr;
}

Status Decompose(Graph& g) {
  PassResult r;
  Status st = DecomposeOps(g, &r);
  if (st.ok()) st = g.Validate();
  return st;
}

TEST(DecomposeLoss, NllWithWeightAndIgnoreIndexUsesOneHotMask) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {3, 5, 2, 4});
  AddTyped(g, "t", DType::kInt64, {3, 2, 4});
  AddInput(g, "w", {5});
  Node& n = AddNode(g, "NegativeLogLikelihoodLoss", "nll", {"x", "t", "w"}, {"loss"});
  n.SetString("reduction", "mean");
  n.SetInt("ignore_index", 2);
  AddOutput(g, "loss");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("NegativeLogLikelihoodLoss"), 0u);
  EXPECT_EQ(g.CountOps("Equal"), 1u);
  EXPECT_EQ(g.CountOps("Where"), 2u);  // the input and the weight, selected by the same mask
  EXPECT_EQ(g.CountOps("Div"), 1u);    // weighted mean: sum(w * loss) / sum(w)
  const Node* eq = FindOp(g, "Equal");
  ASSERT_NE(eq, nullptr);
  const Tensor& classes = *g.FindTensor(eq->inputs[1]);
  ASSERT_TRUE(classes.is_const);
  EXPECT_EQ(classes.shape, (Shape{1, 5, 1}));
  // The ignored class 2 is replaced by C = 5, which no valid target equals.
  EXPECT_EQ(classes.AsInts(), (std::vector<int64_t>{0, 1, 5, 3, 4}));
  EXPECT_EQ(g.FindTensor(eq->outputs[0])->shape, (Shape{3, 5, 8}));
  EXPECT_TRUE(g.FindTensor("loss")->shape.empty());
  EXPECT_EQ(g.FindTensor("loss")->dtype, DType::kFloat);
}

TEST(DecomposeLoss, NllNoneWithoutWeightKeepsTargetShape) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 3});
  AddTyped(g, "t", DType::kInt64, {2});
  AddNode(g, "NegativeLogLikelihoodLoss", "nll", {"x", "t"}, {"loss"}).SetString("reduction", "none");
  AddOutput(g, "loss");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Where"), 1u);
  EXPECT_EQ(g.CountOps("Mul"), 0u);  // no weight, no ignore_index: nothing to weigh
  EXPECT_EQ(g.FindTensor("loss")->shape, (Shape{2}));
}

TEST(DecomposeLoss, NllMeanWithoutWeightIsReduceMean) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 3, 7});
  AddTyped(g, "t", DType::kInt32, {2, 7});
  AddNode(g, "NegativeLogLikelihoodLoss", "nll", {"x", "t"}, {"loss"});
  AddOutput(g, "loss");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("ReduceMean"), 1u);
  EXPECT_EQ(g.CountOps("Div"), 0u);
  EXPECT_EQ(g.CountOps("Reshape"), 1u);  // the target only: a 3-D input is already [N, C, D]
}

TEST(DecomposeLoss, NllRejectsMismatchedTargetNamingTheNode) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 3, 4});
  AddTyped(g, "t", DType::kInt64, {2, 5});
  AddNode(g, "NegativeLogLikelihoodLoss", "my_nll", {"x", "t"}, {"loss"});
  AddOutput(g, "loss");
  Status st = Decompose(g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'my_nll'"), std::string::npos);
  EXPECT_NE(st.message().find("target shape"), std::string::npos);
}

TEST(DecomposeLoss, NllRejectsFloatTarget) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 3});
  AddInput(g, "t", {2});
  AddNode(g, "NegativeLogLikelihoodLoss", "nll", {"x", "t"}, {"loss"});
  AddOutput(g, "loss");
  EXPECT_FALSE(Decompose(g).ok());
}

TEST(DecomposeLoss, SoftmaxCrossEntropyRank7StaysWithinDeviceRank) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {3, 5, 6, 6, 5, 3, 4});
  AddTyped(g, "t", DType::kInt64, {3, 6, 6, 5, 3, 4});
  AddNode(g, "SoftmaxCrossEntropyLoss", "sce", {"x", "t"}, {"loss", "log_prob"}).SetString("reduction", "none");
  AddOutput(g, "loss");
  AddOutput(g, "log_prob");
  ASSERT_TRUE(Decompose(g).ok());
  const Node* ls = FindOp(g, "LogSoftmax");
  ASSERT_NE(ls, nullptr);
  EXPECT_EQ(ls->GetInt("axis", -1), 1);
  EXPECT_EQ(g.FindTensor(ls->outputs[0])->shape, (Shape{3, 5, 6 * 6 * 5 * 3 * 4}));
  for (const Node& n : g.nodes) {
    if (n.op_type == "Reshape") continue;  // views; the input and log_prob keep rank 7
    for (const std::string& o : n.outputs) EXPECT_LE(g.FindTensor(o)->shape.size(), 6u) << n.name;
  }
  EXPECT_EQ(g.FindTensor("log_prob")->shape, (Shape{3, 5, 6, 6, 5, 3, 4}));
  EXPECT_EQ(g.FindTensor("loss")->shape, (Shape{3, 6, 6, 5, 3, 4}));
}

TEST(DecomposeLoss, SoftmaxCrossEntropyBeforeOpset13MovesClassesLast) {
  Graph g;
  g.opset = 12;
  AddInput(g, "x", {2, 4, 3});
  AddTyped(g, "t", DType::kInt64, {2, 3});
  AddNode(g, "SoftmaxCrossEntropyLoss", "sce", {"x", "t"}, {"loss"});
  AddOutput(g, "loss");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Transpose"), 2u);
  EXPECT_EQ(FindOp(g, "LogSoftmax")->GetInt("axis", -1), 2);
}

TEST(DecomposeMath, VariadicSumMeanMaxMin) {
  Graph g;
  g.opset = 13;
  AddInput(g, "a", {3});
  AddInput(g, "b", {2, 1});
  AddInput(g, "c", {3});
  AddNode(g, "Sum", "sum", {"a", "b", "c"}, {"s"});
  AddNode(g, "Mean", "mean", {"a", "b", "c"}, {"m"});
  AddNode(g, "Max", "max2", {"a", "c"}, {"mx"});
  AddNode(g, "Min", "min1", {"a"}, {"mn"});
  for (const char* o : {"s", "m", "mx", "mn"}) AddOutput(g, o);
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Add"), 4u);
  EXPECT_EQ(g.CountOps("Div"), 1u);
  EXPECT_EQ(g.FindTensor("s")->shape, (Shape{2, 3}));
  EXPECT_EQ(g.FindTensor("m")->shape, (Shape{2, 3}));
  const Node* div = FindOp(g, "Div");
  EXPECT_EQ(g.FindTensor(div->inputs[1])->AsDoubles(), (std::vector<double>{3.0}));
  const Node* mx = FindOp(g, "Max");
  ASSERT_NE(mx, nullptr);
  EXPECT_EQ(mx->name, "max2");  // the two-input form is lowered directly
  EXPECT_EQ(g.CountOps("Identity"), 1u);  // one-input Min
  EXPECT_EQ(g.CountOps("Min"), 0u);
}

TEST(DecomposeMath, ClipIntegerAndRuntimeBounds) {
  Graph g;
  g.opset = 13;
  AddTyped(g, "x", DType::kInt8, {3, 4});
  AddTyped(g, "lo", DType::kInt8, {});
  AddInput(g, "f", {3, 4});
  AddInput(g, "hi", {});
  AddNode(g, "Clip", "clip_int", {"x", "lo"}, {"y"});
  AddNode(g, "Clip", "clip_float", {"f", "", "hi"}, {"z"});
  AddOutput(g, "y");
  AddOutput(g, "z");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Clip"), 0u);
  EXPECT_EQ(g.CountOps("Max"), 1u);
  EXPECT_EQ(g.CountOps("Min"), 1u);
  EXPECT_EQ(g.FindTensor("y")->dtype, DType::kInt8);
  EXPECT_EQ(g.FindTensor("z")->shape, (Shape{3, 4}));
}

TEST(DecomposeMath, ClipFloatWithConstantBoundsStaysClip) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {4});
  AddConst(g, "lo", {}, -1.f);
  AddNode(g, "Clip", "clip", {"x", "lo"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Clip");
  EXPECT_EQ(g.nodes[0].name, "clip");
}

TEST(DecomposeMath, PowFloatBaseCastsIntegerExponent) {
  Graph g;
  g.opset = 15;
  AddInput(g, "x", {3});
  AddTyped(g, "y", DType::kInt64, {3});
  AddNode(g, "Pow", "pow", {"x", "y"}, {"z"});
  AddOutput(g, "z");
  ASSERT_TRUE(Decompose(g).ok());
  const Node* c = FindOp(g, "Cast");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->GetInt("to", 0), static_cast<int64_t>(DType::kFloat));
  EXPECT_EQ(g.FindTensor("z")->dtype, DType::kFloat);
}

// Integer Pow with per-element constant exponents {4, 5, 6} = 0b100, 0b101,
// 0b110: squarings x^2, x^4; bit 0 and bit 1 select with masks, bit 2 is set
// everywhere.
TEST(DecomposeMath, PowIntegerBaseIsExactSquaring) {
  Graph g;
  g.opset = 15;
  AddTyped(g, "x", DType::kInt32, {3});
  g.tensors["y"] = MakeConstFromDoubles("y", DType::kInt32, {3}, {4, 5, 6});
  AddNode(g, "Pow", "pow", {"x", "y"}, {"z"});
  AddOutput(g, "z");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Pow"), 0u);
  EXPECT_EQ(g.CountOps("Where"), 2u);
  EXPECT_EQ(g.CountOps("Mul"), 4u);  // 2 squarings + 2 products
  const Node* w = FindOp(g, "Where");
  EXPECT_EQ(g.FindTensor(w->inputs[0])->AsInts(), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(g.FindTensor("z")->dtype, DType::kInt32);
  EXPECT_EQ(g.FindTensor("z")->shape, (Shape{3}));
}

TEST(DecomposeMath, PowIntegerBaseFoldsWhenConstant) {
  Graph g;
  g.opset = 15;
  g.tensors["x"] = MakeConstFromDoubles("x", DType::kInt64, {3}, {2, -3, 5});
  g.tensors["y"] = MakeConstFromDoubles("y", DType::kInt64, {}, {3});
  AddNode(g, "Pow", "pow", {"x", "y"}, {"z"});
  AddOutput(g, "z");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_TRUE(g.nodes.empty());
  ASSERT_TRUE(g.FindTensor("z")->is_const);
  EXPECT_EQ(g.FindTensor("z")->AsInts(), (std::vector<int64_t>{8, -27, 125}));
}

TEST(DecomposeMath, PowIntegerBaseRuntimeIntegerExponentIsSquareAndMultiply) {
  Graph g;
  g.opset = 15;
  AddTyped(g, "x", DType::kInt64, {3});
  AddTyped(g, "y", DType::kInt64, {3});
  AddNode(g, "Pow", "pow", {"x", "y"}, {"z"});
  AddOutput(g, "z");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Pow"), 0u);
  EXPECT_EQ(g.CountOps("Mul"), 2u * 31u - 1u);  // 30 squarings + 31 conditional products
  EXPECT_EQ(g.FindTensor("z")->shape, (Shape{3}));
  EXPECT_EQ(g.FindTensor("z")->dtype, DType::kInt64);
}

// An integer base with a float exponent that is not a non-negative integer
// known at conversion: integer exponentiation where the exponent is integral,
// float pow truncated toward zero elsewhere, selected per element.
TEST(DecomposeMath, PowIntegerBaseFloatExponentAtRunTimeOrFractional) {
  for (bool run_time : {true, false}) {
    Graph g;
    g.opset = 15;
    AddTyped(g, "x", DType::kInt32, {3});
    if (run_time) AddTyped(g, "y", DType::kFloat, {3});
    else g.tensors["y"] = MakeConstF32("y", {3}, {1.f, 2.5f, -3.f});
    AddNode(g, "Pow", "pow", {"x", "y"}, {"z"});
    AddOutput(g, "z");
    Status st = Decompose(g);
    ASSERT_TRUE(st.ok()) << st.message();
    std::map<std::string, int> ops;
    for (const Node& n : g.nodes) ops[n.op_type]++;
    EXPECT_EQ(ops["Pow"], 1) << "the float pow of the fractional exponents";
    EXPECT_GE(ops["Where"], 2) << "bit selection and the integral / fractional select";
    const Node* last = nullptr;
    for (const Node& n : g.nodes)
      if (n.outputs[0] == "z") last = &n;
    ASSERT_NE(last, nullptr);
    EXPECT_EQ(last->op_type, "Where");
  }
}

TEST(DecomposeMath, PReluGlobalMaxPoolIsNaNIsInf) {
  Graph g;
  g.opset = 16;
  AddInput(g, "x", {2, 3, 4, 5});
  AddInput(g, "slope", {5});
  AddNode(g, "PRelu", "prelu", {"x", "slope"}, {"p"});
  AddNode(g, "GlobalMaxPool", "gmp", {"x"}, {"m"});
  AddNode(g, "IsNaN", "nan", {"x"}, {"n"});
  AddNode(g, "IsInf", "inf", {"x"}, {"i"}).SetInt("detect_positive", 0);
  for (const char* o : {"p", "m", "n", "i"}) AddOutput(g, o);
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.FindTensor("p")->shape, (Shape{2, 3, 4, 5}));
  EXPECT_EQ(g.FindTensor("m")->shape, (Shape{2, 3, 1, 1}));
  EXPECT_EQ(FindOp(g, "ReduceMax")->GetInts("axes", {}), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(g.FindTensor("n")->dtype, DType::kBool);
  EXPECT_EQ(g.FindTensor("i")->dtype, DType::kBool);
  EXPECT_EQ(g.CountOps("Abs"), 0u);  // negative infinity only: one comparison with -Inf
  bool neg_inf = false;
  for (const Node& n : g.nodes)
    if (n.op_type == "Equal" && n.inputs[0] != n.inputs[1]) {
      std::vector<double> v = g.FindTensor(n.inputs[1])->AsDoubles();
      neg_inf = v.size() == 1 && std::isinf(v[0]) && v[0] < 0;
    }
  EXPECT_TRUE(neg_inf);
}

TEST(DecomposeMath, PReluRejectsSlopeThatDoesNotBroadcastToInput) {
  Graph g;
  g.opset = 16;
  AddInput(g, "x", {3, 4});
  AddInput(g, "slope", {2, 3, 4});
  AddNode(g, "PRelu", "prelu", {"x", "slope"}, {"p"});
  AddOutput(g, "p");
  EXPECT_FALSE(Decompose(g).ok());
}

TEST(DecomposeMath, EyeLikeAndRangeBecomeConstants) {
  Graph g;
  g.opset = 11;
  AddTyped(g, "x", DType::kInt32, {3, 4});
  Node& e = AddNode(g, "EyeLike", "eye", {"x"}, {"e"});
  e.SetInt("k", 1);
  e.SetInt("dtype", static_cast<int64_t>(DType::kDouble));
  g.tensors["s"] = MakeConstFromDoubles("s", DType::kInt32, {}, {10});
  g.tensors["l"] = MakeConstFromDoubles("l", DType::kInt32, {}, {4});
  g.tensors["d"] = MakeConstFromDoubles("d", DType::kInt32, {}, {-3});
  AddNode(g, "Range", "range", {"s", "l", "d"}, {"r"});
  AddOutput(g, "e");
  AddOutput(g, "r");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_TRUE(g.nodes.empty());
  const Tensor& et = *g.FindTensor("e");
  ASSERT_TRUE(et.is_const);
  EXPECT_EQ(et.dtype, DType::kDouble);
  EXPECT_EQ(et.AsInts(), (std::vector<int64_t>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  const Tensor& rt = *g.FindTensor("r");
  ASSERT_TRUE(rt.is_const);
  EXPECT_EQ(rt.dtype, DType::kInt32);
  EXPECT_EQ(rt.AsInts(), (std::vector<int64_t>{10, 7}));
}

TEST(DecomposeMath, RangeWithRuntimeLimitNamesTheInput) {
  Graph g;
  g.opset = 11;
  g.tensors["s"] = MakeConstF32("s", {}, {1.f});
  AddInput(g, "limit", {});
  g.tensors["d"] = MakeConstF32("d", {}, {0.5f});
  AddNode(g, "Range", "range", {"s", "limit", "d"}, {"r"});
  AddOutput(g, "r");
  Status st = Decompose(g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("limit input 'limit' is not a compile-time constant"), std::string::npos)
      << st.message();
}

TEST(DecomposeMath, OneHotWithAxisAndRuntimeValues) {
  Graph g;
  g.opset = 11;
  AddTyped(g, "ind", DType::kInt64, {2, 3});
  g.tensors["depth"] = MakeConstF32("depth", {}, {10.f});
  AddInput(g, "values", {2});
  AddNode(g, "OneHot", "oh", {"ind", "depth", "values"}, {"y"}).SetInt("axis", 1);
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{2, 10, 3}));
  EXPECT_EQ(g.FindTensor("y")->dtype, DType::kFloat);
  const Node* eq = FindOp(g, "Equal");
  ASSERT_NE(eq, nullptr);
  EXPECT_EQ(g.FindTensor(eq->inputs[1])->shape, (Shape{1, 10, 1}));
}

TEST(DecomposeMath, OneHotRuntimeDepthNamesTheInput) {
  Graph g;
  g.opset = 11;
  AddTyped(g, "ind", DType::kInt64, {3});
  AddInput(g, "depth", {});
  AddInput(g, "values", {2});
  AddNode(g, "OneHot", "oh", {"ind", "depth", "values"}, {"y"});
  AddOutput(g, "y");
  Status st = Decompose(g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("input 'depth' is not a compile-time constant"), std::string::npos);
}

TEST(DecomposeMath, TileExpandsOneAxisAtATime) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 3, 4, 5});
  AddConstI64(g, "reps", {7, 1, 4, 2});
  AddNode(g, "Tile", "tile", {"x", "reps"}, {"z"});
  AddOutput(g, "z");
  ASSERT_TRUE(Decompose(g).ok());
  EXPECT_EQ(g.CountOps("Expand"), 3u);
  EXPECT_EQ(g.FindTensor("z")->shape, (Shape{14, 3, 16, 10}));
  for (const Node& n : g.nodes) EXPECT_LE(g.FindTensor(n.outputs[0])->shape.size(), 4u);
}

TEST(DecomposeMath, DropoutMaskAndTrainingMode) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {3, 4});
  g.tensors["r"] = MakeConstF32("r", {}, {0.f});
  g.tensors["t"] = MakeConstFromDoubles("t", DType::kBool, {}, {1});
  AddNode(g, "Dropout", "drop", {"x", "r", "t"}, {"y", "mask"});
  AddOutput(g, "y");
  AddOutput(g, "mask");
  ASSERT_TRUE(Decompose(g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Identity");
  const Tensor& m = *g.FindTensor("mask");
  ASSERT_TRUE(m.is_const);
  EXPECT_EQ(m.dtype, DType::kBool);
  EXPECT_EQ(m.AsInts(), std::vector<int64_t>(12, 1));
}

// Training mode with a nonzero ratio, or training_mode / ratio known only at
// run time: the device op TrainingDropout (a scratch mask when none is named).
TEST(DecomposeMath, TrainingDropoutIsTheDeviceOp) {
  for (bool run_time : {false, true}) {
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {3, 4});
    if (run_time) {
      AddTyped(g, "r", DType::kFloat, {});
      AddTyped(g, "t", DType::kBool, {});
    } else {
      g.tensors["r"] = MakeConstF32("r", {}, {0.5f});
      g.tensors["t"] = MakeConstFromDoubles("t", DType::kBool, {}, {1});
    }
    Node& d = AddNode(g, "Dropout", "drop", {"x", "r", "t"}, {"y"});
    d.SetInt("seed", 7);
    AddOutput(g, "y");
    Status st = Decompose(g);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op_type, "TrainingDropout");
    EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "r", "t"}));
    ASSERT_EQ(g.nodes[0].outputs.size(), 2u);
    EXPECT_EQ(g.FindTensor(g.nodes[0].outputs[1])->dtype, DType::kBool);
    EXPECT_EQ(g.nodes[0].GetInt("seed", 0), 7);
  }
  Graph g;  // inference: the identity
  g.opset = 13;
  AddInput(g, "x", {3, 4});
  g.tensors["t"] = MakeConstFromDoubles("t", DType::kBool, {}, {0});
  AddTyped(g, "r", DType::kFloat, {});
  AddNode(g, "Dropout", "drop", {"x", "r", "t"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(Decompose(g).ok());
  for (const Node& n : g.nodes) EXPECT_NE(n.op_type, "TrainingDropout");
}

}  // namespace
}  // namespace oaaxvk::toolchain
