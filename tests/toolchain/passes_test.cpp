#include "toolchain/passes/passes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "test_util.h"
#include "toolchain/ir/limits.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/lower/lower.h"
#include "toolchain/plan/plan.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

// x -> Conv -> BN -> Relu -> y
Graph ConvBnRelu() {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 3, 8, 8});
  AddConst(g, "w", {4, 3, 3, 3});
  for (const char* p : {"s", "b", "m"}) AddConst(g, p, {4}, 0.25f);
  AddConst(g, "v", {4}, 1.0f);
  AddNode(g, "Conv", "conv", {"x", "w"}, {"c"}).SetInts("pads", {1, 1, 1, 1});
  AddNode(g, "BatchNormalization", "bn", {"c", "s", "b", "m", "v"}, {"n"});
  AddNode(g, "Relu", "relu", {"n"}, {"y"});
  AddOutput(g, "y");
  return g;
}

TEST(Passes, FoldsBatchNormIntoConv) {
  Graph g = ConvBnRelu();
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  ASSERT_TRUE(FoldBatchNormIntoConv(g, &r).ok());
  EXPECT_EQ(r.nodes_before, 3u);
  EXPECT_EQ(r.nodes_after, 2u);
  EXPECT_EQ(g.CountOps("BatchNormalization"), 0u);
  ASSERT_EQ(g.nodes[0].inputs.size(), 3u);
  // w' = w * s / sqrt(v + eps) = 0.5 * 0.25 / sqrt(1 + 1e-5); b' = (0 - m) * k + b
  const Tensor& w = *g.FindTensor(g.nodes[0].inputs[1]);
  EXPECT_NEAR(w.AsDoubles()[0], 0.125 / std::sqrt(1.0 + 1e-5), 1e-6);
  const Tensor& b = *g.FindTensor(g.nodes[0].inputs[2]);
  EXPECT_NEAR(b.AsDoubles()[0], -0.25 * 0.25 / std::sqrt(1.0 + 1e-5) + 0.25, 1e-6);
  EXPECT_TRUE(g.Validate().ok());
}

TEST(Passes, FusesActivationsIntoConvGemmMatMulAndEltwise) {
  for (const char* act : {"Relu", "Sigmoid", "HardSigmoid", "HardSwish", "LeakyRelu", "Clip"}) {
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {2, 4});
    AddConst(g, "w", {4, 5});
    AddNode(g, "MatMul", "mm", {"x", "w"}, {"m"});
    AddNode(g, act, "act", {"m"}, {"y"});
    AddOutput(g, "y");
    PassResult r;
    ASSERT_TRUE(FoldConstants(g, &r).ok());
    ASSERT_TRUE(FuseActivations(g, &r).ok()) << act;
    EXPECT_EQ(r.nodes_before, 2u) << act;
    EXPECT_EQ(r.nodes_after, 1u) << act;
    EXPECT_NE(g.nodes[0].act(), Activation::kNone) << act;
    EXPECT_EQ(g.nodes[0].outputs[0], "y");
  }
}

// Conv -> Mul(per-channel [4,1,1]) -> Add(scalar) becomes one Conv with
// scaled weights and bias; ConvTranspose (weights [C, M, kh, kw]) scales its
// output channels on axis 1.
// The integer kernel has no activation stage: an activation after an
// integer Add/Sub/Mul stays its own (integer) operator. ONNX Runtime: int32
// [-5, 3, -1, 7] + [1, -9, -2, 2] then Relu is [0, 0, 0, 9].
TEST(Passes, ActivationsAfterIntegerArithmeticAreNotFused) {
  for (DType dt : {DType::kInt32, DType::kInt64}) {
    for (const char* act : {"Relu", "Neg", "Abs"}) {
      Graph g;
      g.opset = 14;
      AddInput(g, "a", {4});
      AddInput(g, "b", {4});
      g.tensors["a"].dtype = g.tensors["b"].dtype = dt;
      AddNode(g, "Add", "add", {"a", "b"}, {"s"});
      AddNode(g, act, "act", {"s"}, {"y"});
      AddOutput(g, "y");
      PassResult r;
      ASSERT_TRUE(FoldConstants(g, &r).ok());
      ASSERT_TRUE(FuseActivations(g, &r).ok());
      EXPECT_EQ(g.nodes.size(), 2u) << act << " " << DTypeName(dt);
      EXPECT_EQ(g.CountOps(act), 1u) << act << " " << DTypeName(dt);
      EXPECT_EQ(g.nodes[0].act(), Activation::kNone) << act << " " << DTypeName(dt);
      StatusOr<Program> p = Lower(g);
      ASSERT_TRUE(p.ok()) << p.status().message();
      size_t int_ops = 0;  // the Add and the activation, each on the integer kernel
      for (const Dispatch& d : p->dispatches) int_ops += d.kernel == "binary_int";
      EXPECT_EQ(int_ops, 2u) << act << " " << DTypeName(dt);
    }
  }
}

// Folded integer arithmetic wraps in the integer type (two's complement),
// and a folded float -> integer Cast gives what ONNX Runtime gives on x86-64
// (values below are ONNX Runtime 1.x outputs).
TEST(Passes, FoldedIntegerArithmeticWrapsLikeOnnxRuntime) {
  Graph g;
  g.opset = 14;
  g.tensors["big"] = MakeConstI64("big", {2}, {(int64_t{1} << 31) + 5, -(int64_t{1} << 31) - 7});
  g.tensors["m"] = MakeConstFromDoubles("m", DType::kInt32, {2}, {65536, 65536 * 3});
  g.tensors["l"] = MakeConstI64("l", {1}, {INT64_MAX});
  g.tensors["f"] = MakeConstF32("f", {6}, {3e9f, -3e9f, 1e19f, NAN, 300.f, 5e9f});
  AddNode(g, "Cast", "to32", {"big"}, {"big32"}).SetInt("to", static_cast<int64_t>(DType::kInt32));
  AddNode(g, "Mul", "sq", {"m", "m"}, {"sq32"});
  AddNode(g, "Add", "inc", {"l", "l"}, {"l2"});
  AddNode(g, "Neg", "neg", {"big32"}, {"negbig32"});
  AddNode(g, "Cast", "f64", {"f"}, {"fi64"}).SetInt("to", static_cast<int64_t>(DType::kInt64));
  AddNode(g, "Cast", "f32", {"f"}, {"fi32"}).SetInt("to", static_cast<int64_t>(DType::kInt32));
  AddNode(g, "Cast", "f8", {"f"}, {"fi8"}).SetInt("to", static_cast<int64_t>(DType::kInt8));
  AddNode(g, "Cast", "fu32", {"f"}, {"fu32"}).SetInt("to", static_cast<int64_t>(DType::kUint32));
  g.tensors["flags"] = MakeConstFromDoubles("flags", DType::kBool, {3}, {1, 0, 1});
  AddNode(g, "Cast", "b64", {"flags"}, {"bi64"}).SetInt("to", static_cast<int64_t>(DType::kInt64));
  for (const char* o : {"big32", "sq32", "l2", "negbig32", "fi64", "fi32", "fi8", "fu32", "bi64"}) AddOutput(g, o);
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  ASSERT_EQ(g.nodes.size(), 0u);
  auto ints = [&](const char* name) {
    const Tensor* t = g.FindTensor(name);
    EXPECT_TRUE(t && t->is_const) << name;
    std::vector<int64_t> v;
    if (!t) return v;
    const size_t es = DTypeSize(t->dtype);
    for (size_t i = 0; i < t->data.size(); i += es) {
      int64_t x = 0;
      std::memcpy(&x, t->data.data() + i, es);
      if (es < 8 && t->dtype != DType::kUint32 && (x >> (8 * es - 1)) & 1) x -= int64_t{1} << (8 * es);  // sign
      v.push_back(x);
    }
    return v;
  };
  EXPECT_EQ(ints("big32"), (std::vector<int64_t>{-2147483643, 2147483641}));
  EXPECT_EQ(ints("sq32"), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(ints("l2"), (std::vector<int64_t>{-2}));
  EXPECT_EQ(ints("negbig32"), (std::vector<int64_t>{2147483643, -2147483641}));
  EXPECT_EQ(ints("fi64"), (std::vector<int64_t>{3000000000, -3000000000, INT64_MIN, INT64_MIN, 300, 5000000000}));
  EXPECT_EQ(ints("fi32"), (std::vector<int64_t>{INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, 300, INT32_MIN}));
  EXPECT_EQ(ints("fi8"), (std::vector<int64_t>{0, 0, 0, 0, 44, 0}));
  EXPECT_EQ(ints("fu32"), (std::vector<int64_t>{3000000000, 1294967296, 0, 0, 300, 705032704}));
  EXPECT_EQ(ints("bi64"), (std::vector<int64_t>{1, 0, 1}));
}

// A tensor with no elements has one value: a node whose outputs all have
// static zero-element shapes folds to empty constants whatever its inputs (a
// run-time x here), Concat drops empty inputs, and an empty graph output is
// a slot nothing writes (no dispatch for it).
TEST(Passes, EmptyResultsFoldAndConcatDropsEmptyInputs) {
  Graph g;
  g.opset = 14;
  AddInput(g, "x", {2, 3});
  g.tensors["none"] = MakeConstF32("none", {0, 3}, {});
  g.tensors["starts"] = MakeConstI64("starts", {1}, {1});
  g.tensors["ends"] = MakeConstI64("ends", {1}, {1});
  g.tensors["axes"] = MakeConstI64("axes", {1}, {0});
  AddNode(g, "Slice", "nothing", {"x", "starts", "ends", "axes"}, {"x_empty"});  // [0, 3] from a run-time x
  AddNode(g, "Relu", "relu", {"x_empty"}, {"relu_empty"});
  AddNode(g, "Concat", "cat", {"none", "x", "relu_empty"}, {"y"}).SetInt("axis", 0);
  AddOutput(g, "y");
  AddOutput(g, "relu_empty");
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  ASSERT_EQ(g.nodes.size(), 1u) << "only the Concat runs";
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x"}));
  const Tensor* e = g.FindTensor("relu_empty");
  ASSERT_TRUE(e && e->is_const && e->data.empty());
  StatusOr<Program> p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->outputs.size(), 2u);
  EXPECT_EQ(ShapeToString(p->outputs[1].shape), "[0, 3]");
  for (const Dispatch& d : p->dispatches) EXPECT_NE(d.node, "relu_empty") << "nothing writes the empty output";
}

// Int64 values are int32 on the device; a Cast from float to an int64 graph
// output converts from the float itself, so values beyond int32 (3e9) keep
// all 64 bits (the convert kernel: SRC float32, DST and SEM int64).
TEST(Lowering, CastFromFloatToAnInt64OutputConvertsFromTheFloat) {
  Graph g;
  g.opset = 14;
  AddInput(g, "x", {5});
  AddNode(g, "Cast", "cast", {"x"}, {"y"}).SetInt("to", static_cast<int64_t>(DType::kInt64));
  AddOutput(g, "y");
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  StatusOr<Program> p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_FALSE(p->dispatches.empty());
  const Dispatch& d = p->dispatches.back();
  ASSERT_EQ(d.kernel, "convert");
  EXPECT_EQ(d.spec.at(1).value(), 1) << "reads the float input";
  EXPECT_EQ(d.spec.at(2).value(), 7);
  EXPECT_EQ(d.spec.at(3).value(), 7);
  EXPECT_EQ(d.bindings.at(0).value, p->inputs.at(0).value) << "binds the graph input";
}

TEST(Passes, FoldsPerChannelAffineIntoConvAndConvTranspose) {
  for (const char* op : {"Conv", "ConvTranspose"}) {
    SCOPED_TRACE(op);
    const bool t = std::string(op) == "ConvTranspose";
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {1, 3, 8, 8});
    if (t) {
      g.tensors["w"] = MakeConstF32("w", {3, 4, 2, 2}, std::vector<float>(48, 0.5f));
    } else {
      AddConst(g, "w", {4, 3, 3, 3});
    }
    g.tensors["s"] = MakeConstF32("s", {4, 1, 1}, {1.f, 2.f, 3.f, 4.f});
    AddConst(g, "b", {1}, 0.25f);
    Node& c = AddNode(g, op, "conv", {"x", "w"}, {"c"});
    if (t) {
      c.SetInts("strides", {2, 2});
      c.SetInts("kernel_shape", {2, 2});
    } else {
      c.SetInts("pads", {1, 1, 1, 1});
    }
    AddNode(g, "Mul", "mul", {"s", "c"}, {"m"});  // constant first: either side folds
    AddNode(g, "Add", "add", {"m", "b"}, {"y"});
    AddOutput(g, "y");
    PassResult r;
    ASSERT_TRUE(InferShapes(g).ok());
    ASSERT_TRUE(FoldAffineIntoConv(g, &r).ok());
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].outputs[0], "y");
    const std::vector<double> w = g.FindTensor(g.nodes[0].inputs[1])->AsDoubles();
    const std::vector<double> b = g.FindTensor(g.nodes[0].inputs[2])->AsDoubles();
    ASSERT_EQ(b.size(), 4u);
    for (int k = 0; k < 4; ++k) {
      EXPECT_DOUBLE_EQ(b[k], 0.25) << k;  // no bias: 0 * s[k] + 0.25
      // Output channel k's weights: axis 0 (Conv) or axis 1 (ConvTranspose).
      const size_t e = t ? static_cast<size_t>(k) * 4 + 1 : static_cast<size_t>(k) * 27 + 5;
      EXPECT_DOUBLE_EQ(w[e], 0.5 * (k + 1)) << k;
    }
    EXPECT_TRUE(g.Validate().ok());
  }
}

// Not folded: a constant that broadcasts the output up, a Conv with a fused
// activation, and a Conv output with a second use.
TEST(Passes, AffineFoldingKeepsNonChannelConstantsActivationsAndSharedOutputs) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 3, 8, 8});
  AddConst(g, "w", {4, 3, 1, 1});
  AddConst(g, "hw", {8, 8}, 2.f);  // per-pixel, not per-channel
  AddNode(g, "Conv", "c1", {"x", "w"}, {"a"});
  AddNode(g, "Mul", "m1", {"a", "hw"}, {"y1"});
  AddOutput(g, "y1");
  AddNode(g, "Conv", "c2", {"x", "w"}, {"b"}).SetInt("_act", static_cast<int64_t>(Activation::kRelu));
  AddConst(g, "k", {1}, 3.f);
  AddNode(g, "Mul", "m2", {"b", "k"}, {"y2"});
  AddOutput(g, "y2");
  AddNode(g, "Conv", "c3", {"x", "w"}, {"c"});
  AddNode(g, "Mul", "m3", {"c", "k"}, {"y3"});
  AddOutput(g, "y3");
  AddOutput(g, "c");
  PassResult r;
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_TRUE(FoldAffineIntoConv(g, &r).ok());
  EXPECT_EQ(g.CountOps("Mul"), 3u);
  EXPECT_TRUE(r.details.empty());
}

// Add(Mul(x, a), b) with scalar constants -> one Affine node, which the
// unary kernel evaluates as a * x + b.
TEST(Passes, FusesScalarMulAddIntoAffine) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 4});
  AddConst(g, "a", {1}, 1.5f);
  AddConst(g, "b", {}, -0.25f);
  AddNode(g, "Mul", "mul", {"a", "x"}, {"m"});
  AddNode(g, "Add", "add", {"m", "b"}, {"y"});
  AddOutput(g, "y");
  PassResult r;
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_TRUE(FuseElementwiseChains(g, &r).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Affine");
  EXPECT_EQ(g.nodes[0].inputs, std::vector<std::string>{"x"});
  auto p = GetActivationParams(g, g.nodes[0]);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->act, Activation::kAffine);
  EXPECT_FLOAT_EQ(p->alpha, 1.5f);
  EXPECT_FLOAT_EQ(p->beta, -0.25f);
}

TEST(Passes, DoesNotFuseWhenProducerOutputHasOtherUses) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 4});
  AddInput(g, "z", {2, 4});
  AddNode(g, "Add", "add", {"x", "z"}, {"a"});
  AddNode(g, "Relu", "relu", {"a"}, {"r"});
  AddNode(g, "Mul", "mul", {"a", "r"}, {"y"});
  AddOutput(g, "y");
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  ASSERT_TRUE(FuseActivations(g, &r).ok());
  EXPECT_EQ(r.nodes_after, 3u);
}

TEST(Passes, FoldsShapeGatherUnsqueezeConcatChainIntoReshapeConstant) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 3, 4});
  AddConstI64(g, "idx0", {0});
  AddConstI64(g, "minus1", {-1});
  AddConstI64(g, "axes0", {0});
  AddNode(g, "Shape", "shape", {"x"}, {"s"});
  AddNode(g, "Gather", "gather", {"s", "idx0"}, {"b"}).SetInt("axis", 0);
  AddNode(g, "Squeeze", "sq", {"b", "axes0"}, {"bs"});
  AddNode(g, "Unsqueeze", "unsq", {"bs", "axes0"}, {"bu"});
  AddNode(g, "Cast", "cast", {"bu"}, {"bc"}).SetInt("to", 7);
  AddNode(g, "Concat", "concat", {"bc", "minus1"}, {"shape2"}).SetInt("axis", 0);
  AddNode(g, "Reshape", "reshape", {"x", "shape2"}, {"y"});
  AddOutput(g, "y");
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok()) ;
  EXPECT_EQ(r.nodes_before, 7u);
  EXPECT_EQ(r.nodes_after, 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Reshape");
  EXPECT_EQ(g.FindTensor("shape2")->AsInts(), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{2, 12}));
  ASSERT_TRUE(EliminateDeadCode(g, &r).ok());
  EXPECT_EQ(g.FindTensor("s"), nullptr);  // intermediate constants dropped
}

TEST(Passes, BroadcastsFarLargerThanTheirInputsStayOnTheDevice) {
  for (int64_t side : {64, 1024}) {  // 16 KiB: folded; 4 MiB from one float: left to the device
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {side, side});
    g.tensors["one"] = MakeConstF32("one", {1}, {1.f});
    AddConstI64(g, "shape", {side, side});
    AddNode(g, "Expand", "expand", {"one", "shape"}, {"ones"});
    AddNode(g, "Add", "add", {"x", "ones"}, {"y"});
    AddOutput(g, "y");
    PassResult r;
    ASSERT_TRUE(FoldConstants(g, &r).ok());
    EXPECT_EQ(g.CountOps("Expand"), side == 64 ? 0u : 1u) << side;
  }
}

TEST(Passes, FoldsSliceWithInt64MaxEnd) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 3, 5, 7});
  AddConstI64(g, "st", {2});
  AddConstI64(g, "en", {INT64_MAX});
  AddNode(g, "Shape", "shape", {"x"}, {"s"});
  AddNode(g, "Slice", "slice", {"s", "st", "en"}, {"hw"});
  AddOutput(g, "x");
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  EXPECT_EQ(g.FindTensor("hw")->AsInts(), (std::vector<int64_t>{5, 7}));
}

TEST(Passes, RemovesIdentityAndDropoutKeepingOutputName) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {4});
  AddNode(g, "Relu", "relu", {"x"}, {"a"});
  AddNode(g, "Dropout", "drop", {"a"}, {"b"});
  AddNode(g, "Identity", "id", {"b"}, {"y"});
  AddOutput(g, "y");
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  ASSERT_TRUE(RemoveIdentities(g, &r).ok());
  EXPECT_EQ(r.nodes_before, 3u);
  EXPECT_EQ(r.nodes_after, 1u);
  EXPECT_EQ(g.outputs[0].name, "y");
  EXPECT_EQ(g.outputs[0].tensor, "a");
  EXPECT_TRUE(g.Validate().ok());
}

TEST(Passes, EliminatesDeadCode) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {4});
  AddNode(g, "Relu", "used", {"x"}, {"y"});
  AddNode(g, "Sigmoid", "dead1", {"x"}, {"d1"});
  AddNode(g, "Relu", "dead2", {"d1"}, {"d2"});
  AddOutput(g, "y");
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  ASSERT_TRUE(EliminateDeadCode(g, &r).ok());
  EXPECT_EQ(r.nodes_before, 3u);
  EXPECT_EQ(r.nodes_after, 1u);
  EXPECT_EQ(g.FindTensor("d2"), nullptr);
}

TEST(Passes, DecomposesStandaloneBatchNorm) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 4, 2, 2});
  for (const char* p : {"s", "b", "m", "v"}) AddConst(g, p, {4}, 1.0f);
  AddNode(g, "BatchNormalization", "bn", {"x", "s", "b", "m", "v"}, {"y"});
  AddOutput(g, "y");
  auto r = RunDefaultPipeline(g);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(g.CountOps("BatchNormalization"), 0u);
  EXPECT_EQ(g.CountOps("Mul"), 1u);
  EXPECT_EQ(g.CountOps("Add"), 1u);
  EXPECT_EQ(g.FindTensor(g.nodes[0].inputs[1])->shape, (Shape{4, 1, 1}));
}

TEST(ShapeInference, ConvSamePaddingAndPoolCeilMode) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 2, 13, 13});
  AddConst(g, "w", {4, 2, 3, 3});
  Node& c = AddNode(g, "Conv", "conv", {"x", "w"}, {"c"});
  c.SetString("auto_pad", "SAME_UPPER");
  c.SetInts("strides", {2, 2});
  Node& p = AddNode(g, "MaxPool", "pool", {"c"}, {"y"});
  p.SetInts("kernel_shape", {2, 2});
  p.SetInts("strides", {2, 2});
  p.SetInt("ceil_mode", 1);
  AddOutput(g, "y");
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(g.FindTensor("c")->shape, (Shape{1, 4, 7, 7}));
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 4, 4, 4}));
  EXPECT_EQ(g.nodes[0].GetInts("_pads", {}), (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(ShapeInference, RejectsBroadcastMismatchNamingNode) {
  Graph g;
  g.opset = 13;
  AddInput(g, "a", {2, 3});
  AddInput(g, "b", {4});
  AddNode(g, "Add", "bad_add", {"a", "b"}, {"y"});
  AddOutput(g, "y");
  Status s = InferShapes(g);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad_add"), std::string::npos);
}


// x*sigmoid(x), x*sigmoid(c*x) and the (x+3) clip /6 HardSwish chain each
// become one unary node, which activation fusion then folds into the Conv.
TEST(Passes, FusesElementwiseChainsSwishAndHardSwish) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 4, 8, 8});
  AddConst(g, "w", {4, 4, 1, 1});
  g.tensors["three"] = MakeConstF32("three", {}, {3.f});
  g.tensors["zero"] = MakeConstF32("zero", {}, {0.f});
  g.tensors["six"] = MakeConstF32("six", {}, {6.f});
  g.tensors["c"] = MakeConstF32("c", {1}, {1.5f});
  AddNode(g, "Conv", "conv1", {"x", "w"}, {"a"});
  AddNode(g, "Sigmoid", "sig1", {"a"}, {"s1"});
  AddNode(g, "Mul", "swish1", {"a", "s1"}, {"b"});
  AddNode(g, "Conv", "conv2", {"b", "w"}, {"c2"});
  AddNode(g, "Mul", "scale", {"c2", "c"}, {"t"});
  AddNode(g, "Sigmoid", "sig2", {"t"}, {"s2"});
  AddNode(g, "Mul", "swish2", {"s2", "c2"}, {"d"});
  AddNode(g, "Conv", "conv3", {"d", "w"}, {"e"});
  AddNode(g, "Add", "plus3", {"e", "three"}, {"e3"});
  AddNode(g, "Clip", "clip", {"e3", "zero", "six"}, {"ec"});
  AddNode(g, "Mul", "mul", {"e", "ec"}, {"em"});
  AddNode(g, "Div", "div6", {"em", "six"}, {"y"});
  AddOutput(g, "y");
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  EXPECT_EQ(g.nodes.size(), 12u);
  ASSERT_TRUE(FuseElementwiseChains(g, &r).ok()) << "chains";
  EXPECT_EQ(r.nodes_before, 12u);
  EXPECT_EQ(r.nodes_after, 6u);
  EXPECT_EQ(g.CountOps("Swish"), 2u);
  EXPECT_EQ(g.CountOps("HardSwish"), 1u);
  EXPECT_EQ(g.CountOps("Sigmoid") + g.CountOps("Clip") + g.CountOps("Div") + g.CountOps("Mul") + g.CountOps("Add"), 0u);
  ASSERT_TRUE(g.Validate().ok());
  ASSERT_TRUE(FuseActivations(g, &r).ok());
  EXPECT_EQ(g.nodes.size(), 3u) << "each Conv dispatch carries its activation";
  EXPECT_EQ(g.nodes[0].act(), Activation::kSwish);
  EXPECT_FLOAT_EQ(g.nodes[1].GetFloat("_act_alpha", 0.f), 1.5f);
  EXPECT_EQ(g.nodes[2].act(), Activation::kHardSwish);
  EXPECT_EQ(g.outputs[0].tensor, g.nodes[2].outputs[0]);
}

TEST(Passes, ElementwiseChainNotFusedWhenIntermediateIsShared) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 4});
  AddNode(g, "Sigmoid", "sig", {"x"}, {"s"});
  AddNode(g, "Mul", "mul", {"x", "s"}, {"y"});
  AddOutput(g, "y");
  AddOutput(g, "s");  // the Sigmoid value is also a graph output
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  ASSERT_TRUE(FuseElementwiseChains(g, &r).ok());
  EXPECT_EQ(g.nodes.size(), 2u);
  // wrong constant: x * Clip(x + 2, 0, 6) / 6 is not HardSwish
  Graph h;
  h.opset = 13;
  AddInput(h, "x", {1, 4});
  h.tensors["two"] = MakeConstF32("two", {}, {2.f});
  h.tensors["zero"] = MakeConstF32("zero", {}, {0.f});
  h.tensors["six"] = MakeConstF32("six", {}, {6.f});
  AddNode(h, "Add", "a", {"x", "two"}, {"t"});
  AddNode(h, "Clip", "c", {"t", "zero", "six"}, {"u"});
  AddNode(h, "Mul", "m", {"x", "u"}, {"v"});
  AddNode(h, "Div", "d", {"v", "six"}, {"y"});
  AddOutput(h, "y");
  ASSERT_TRUE(FoldConstants(h, &r).ok());
  ASSERT_TRUE(FuseElementwiseChains(h, &r).ok());
  EXPECT_EQ(h.nodes.size(), 4u);
}

TEST(ShapeInference, ResizeConvTransposeReduceMean) {
  Graph g;
  g.opset = 11;
  AddInput(g, "x", {1, 2, 5, 7});
  g.tensors["roi"] = MakeConstF32("roi", {0}, {});
  g.tensors["scales"] = MakeConstF32("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  AddConst(g, "wt", {2, 3, 2, 2});
  AddNode(g, "Resize", "up", {"x", "roi", "scales"}, {"r"});
  AddNode(g, "ConvTranspose", "ct", {"x", "wt"}, {"c"}).SetInts("strides", {2, 2});
  AddNode(g, "ReduceMean", "rm", {"x"}, {"m"}).SetInts("axes", {-1});
  AddOutput(g, "r");
  AddOutput(g, "c");
  AddOutput(g, "m");
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(g.FindTensor("r")->shape, (Shape{1, 2, 10, 14}));
  EXPECT_EQ(g.FindTensor("c")->shape, (Shape{1, 3, 10, 14}));
  EXPECT_EQ(g.FindTensor("m")->shape, (Shape{1, 2, 5, 1}));
}


// y = Relu(Conv(x) + x): the Add goes into the Conv epilogue, then the Relu.
// Not fused when the residual is a constant or broadcasts.
TEST(Passes, FusesResidualAddIntoConv) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 4, 8, 8});
  AddConst(g, "w", {4, 4, 3, 3});
  AddConst(g, "bias_like", {1, 4, 1, 1});
  AddNode(g, "Conv", "conv", {"x", "w"}, {"c"}).SetInts("pads", {1, 1, 1, 1});
  AddNode(g, "Add", "res", {"c", "x"}, {"s"});
  AddNode(g, "Relu", "relu", {"s"}, {"y"});
  AddNode(g, "Conv", "conv2", {"y", "w"}, {"c2"}).SetInts("pads", {1, 1, 1, 1});
  AddNode(g, "Add", "badd", {"c2", "bias_like"}, {"z"});
  AddOutput(g, "z");
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  ASSERT_TRUE(FuseResidualAdd(g, &r).ok());
  EXPECT_EQ(r.nodes_before, 5u);
  EXPECT_EQ(r.nodes_after, 4u);
  EXPECT_EQ(g.CountOps("Add"), 1u) << "the constant (broadcast) Add stays";
  EXPECT_EQ(g.nodes[0].GetInt("_residual", 0), 1);
  ASSERT_EQ(g.nodes[0].inputs.size(), 4u);
  EXPECT_EQ(g.nodes[0].inputs[3], "x");
  ASSERT_TRUE(FuseActivations(g, &r).ok());
  EXPECT_EQ(g.nodes[0].act(), Activation::kRelu);
  EXPECT_EQ(g.nodes.size(), 3u);
  ASSERT_TRUE(g.Validate().ok());
  ASSERT_TRUE(FoldConstants(g, &r).ok()) << "shape inference still accepts the fused Conv";
}


// Unsupported modes are rejected at conversion time naming node and feature.
TEST(Lowering, RejectsUnsupportedModesNamingNodeAndFeature) {
  auto lower_err = [](Graph g) -> std::string {
    PassResult r;
    Status s = FoldConstants(g, &r);
    if (!s.ok()) return s.message();
    StatusOr<Program> p = Lower(g);
    return p.ok() ? std::string() : p.status().message();
  };
  {
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {1, 2, 4, 4});
    g.tensors["scales"] = MakeConstF32("scales", {4}, {1.f, 1.f, 2.f, 2.f});
    // tf_crop_and_resize cropping the channel axis (only the two innermost
    // axes are resized).
    g.tensors["roi"] = MakeConstF32("roi", {8}, {0.f, 0.25f, 0.f, 0.f, 1.f, 0.75f, 1.f, 1.f});
    AddNode(g, "Resize", "rs", {"x", "roi", "scales"}, {"y"})
        .SetString("coordinate_transformation_mode", "tf_crop_and_resize");
    AddOutput(g, "y");
    std::string m = lower_err(g);
    EXPECT_NE(m.find("'rs'"), std::string::npos) << m;
    EXPECT_NE(m.find("crop of the outer dimension 1"), std::string::npos) << m;
  }
  {
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {1, 5, 4, 4});
    // A channel scale of 1.1 keeps 5 channels (floor(5.5)) but moves their
    // sample points: refused, never silently treated as 1.
    g.tensors["scales"] = MakeConstF32("scales", {4}, {1.f, 1.1f, 2.f, 2.f});
    AddNode(g, "Resize", "rs", {"x", "", "scales"}, {"y"}).SetString("mode", "linear");
    AddOutput(g, "y");
    std::string m = lower_err(g);
    EXPECT_NE(m.find("'rs'"), std::string::npos) << m;
    EXPECT_NE(m.find("dimension 1 keeps its length but moves its sample points"), std::string::npos) << m;
  }
  {
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {1, 1, 4, 4});
    // A length of 1 maps every coordinate to its only element: any scale is exact.
    g.tensors["scales"] = MakeConstF32("scales", {4}, {1.f, 1.5f, 2.f, 2.f});
    AddNode(g, "Resize", "rs", {"x", "", "scales"}, {"y"}).SetString("mode", "linear");
    AddOutput(g, "y");
    EXPECT_EQ(lower_err(g), "");
  }
  {
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {1, 1, 1, 1, 1, 2, 4});  // rank 7 (non-trailing axes themselves are supported)
    Node& rm = AddNode(g, "ReduceMean", "rm", {"x"}, {"y"});
    rm.SetInts("axes", {0});
    rm.SetInt("keepdims", 0);
    AddOutput(g, "y");
    std::string m = lower_err(g);
    EXPECT_NE(m.find("'rm'"), std::string::npos) << m;
    EXPECT_NE(m.find("rank above 6"), std::string::npos) << m;
  }
  {
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {1, 2, 4, 4});
    AddConst(g, "w", {2, 2, 2, 2});
    AddNode(g, "ConvTranspose", "ct", {"x", "w"}, {"y"}).SetInts("output_shape", {8, 8});
    AddOutput(g, "y");
    std::string m = lower_err(g);
    EXPECT_NE(m.find("'ct'"), std::string::npos) << m;
    EXPECT_NE(m.find("output_shape"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace oaaxvk::toolchain

namespace oaaxvk::toolchain {
namespace {

// Gemm(x [2, 96], w [200, 96], transB) + Relu under a 32768-byte binding
// limit (w takes 76800): four Gemms over 64, 64, 64 and 8 rows of w, each
// with the Relu fused and its slice of the bias, joined by a Concat into the
// graph output; the program then plans.
TEST(SplitLargeWeights, GemmBecomesAlignedPiecesJoinedByAConcat) {
  ConversionLimits small;
  small.max_binding_bytes = 32768;
  LimitsScope scope(&small);
  Graph g;
  g.opset = 13;
  testing::AddInput(g, "x", {2, 96});
  testing::AddConst(g, "w", {200, 96});
  testing::AddConst(g, "b", {200});
  testing::AddNode(g, "Gemm", "fc", {"x", "w", "b"}, {"h"}).SetInt("transB", 1);
  testing::AddNode(g, "Relu", "relu", {"h"}, {"y"});
  testing::AddOutput(g, "y");
  auto r = RunDefaultPipeline(g);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(g.CountOps("Gemm"), 4u);
  EXPECT_EQ(g.CountOps("Relu"), 0u);
  std::vector<int64_t> rows;
  for (const Node& n : g.nodes) {
    if (n.op_type != "Gemm") continue;
    EXPECT_EQ(n.act(), Activation::kRelu) << n.name;
    const Tensor* w = g.FindTensor(n.inputs[1]);
    const Tensor* b = g.FindTensor(n.inputs[2]);
    ASSERT_TRUE(w && w->is_const && b && b->is_const) << n.name;
    rows.push_back(w->shape[0].value());
    EXPECT_EQ(w->shape[1].value(), 96);
    EXPECT_EQ(b->shape[0].value(), w->shape[0].value()) << n.name;
  }
  EXPECT_EQ(rows, (std::vector<int64_t>{64, 64, 64, 8}));
  const int cat = g.Producer(g.outputs[0].tensor);
  ASSERT_GE(cat, 0);
  EXPECT_EQ(g.nodes[cat].op_type, "Concat");
  EXPECT_EQ(g.nodes[cat].GetInt("axis", -1), 1);
  EXPECT_EQ(ShapeToString(g.FindTensor(g.outputs[0].tensor)->shape), "[2, 200]");
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto plan = PlanMemory(*p);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
}

// A grouped Conv has no split here: its weight (4608 bytes) stays whole and
// the memory plan refuses it under a 4096-byte limit, naming it and the limit.
TEST(SplitLargeWeights, AWeightWithoutASplitIsRefusedByThePlan) {
  ConversionLimits small;
  small.max_binding_bytes = 4096;
  LimitsScope scope(&small);
  Graph g;
  g.opset = 13;
  testing::AddInput(g, "x", {1, 4, 6, 6});
  testing::AddConst(g, "w", {64, 2, 3, 3});
  testing::AddNode(g, "Conv", "conv", {"x", "w"}, {"y"}).SetInt("group", 2);
  testing::AddOutput(g, "y");
  auto r = RunDefaultPipeline(g);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(g.CountOps("Conv"), 1u);
  auto p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto plan = PlanMemory(*p);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().ToString().find("tensor 'w' (bound by node 'conv' (Conv)) takes 4608 bytes, over the "
                                          "binding limit max_binding_bytes = 4096"),
            std::string::npos)
      << plan.status().ToString();
}

}  // namespace
}  // namespace oaaxvk::toolchain
