// Constant evaluation at conversion (ir/eval*.cpp): the folding rules of
// shape arithmetic, checked against what ONNX Runtime computes on the CPU
// (float32 arithmetic in float32, round half to even, Cast truncation and
// saturation, integer division), and the errors for values that cannot be
// folded (not_constant.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "test_util.h"
#include "toolchain/ir/shape_infer.h"

namespace oaaxvk::toolchain {
namespace {

using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;

void AddConstOf(Graph& g, const std::string& name, DType dt, const Shape& s, const std::vector<double>& v) {
  g.tensors[name] = MakeConstFromDoubles(name, dt, s, v);
}

// Folds `g` (whose nodes all have constant inputs) and returns tensor `out`.
Tensor Fold(Graph& g, const std::string& out) {
  g.opset = 17;
  AddOutput(g, out);
  PassResult r;
  const Status s = FoldConstants(g, &r);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(g.nodes.empty()) << "left unfolded: " << (g.nodes.empty() ? "" : g.nodes[0].op_type);
  const Tensor& t = g.tensors.at(out);
  EXPECT_TRUE(t.is_const);
  return t;
}

std::vector<float> F32(const Tensor& t) {
  EXPECT_EQ(t.dtype, DType::kFloat);
  std::vector<float> v(t.data.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

// torchvision's detection transform: scale = float(min_size) / float(side),
// new side = floor(float(side) * scale). At side 108, min_size 320 the
// float32 product rounds up to 320 while the exact (double) product is
// 319.99999...: folding in double would give 319, ONNX Runtime gives 320.
TEST(FoldEvalTest, FloatProductFloorsInFloat32) {
  Graph g;
  AddConstOf(g, "side", DType::kInt64, {}, {108});
  AddConstOf(g, "min_size", DType::kFloat, {}, {320});
  AddNode(g, "Cast", "c", {"side"}, {"sf"}).SetInt("to", 1);
  AddNode(g, "Div", "d", {"min_size", "sf"}, {"scale"});
  AddNode(g, "Mul", "m", {"sf", "scale"}, {"prod"});
  AddNode(g, "Floor", "f", {"prod"}, {"fl"});
  AddNode(g, "Cast", "c2", {"fl"}, {"size"}).SetInt("to", 7);
  const Tensor t = Fold(g, "size");
  ASSERT_EQ(t.dtype, DType::kInt64);
  EXPECT_EQ(t.AsInts(), (std::vector<int64_t>{320}));
  // The same chain at 800 / 480 (the brief's case): floor(800 * 1.6666666f) = 1333.
  Graph h;
  AddConstOf(h, "a", DType::kFloat, {}, {800});
  AddConstOf(h, "s", DType::kFloat, {}, {static_cast<double>(800.0f / 480.0f)});
  AddNode(h, "Mul", "m", {"a", "s"}, {"p"});
  AddNode(h, "Floor", "f", {"p"}, {"fl"});
  EXPECT_EQ(F32(Fold(h, "fl")), (std::vector<float>{1333.0f}));
}

TEST(FoldEvalTest, RoundIsHalfToEvenAndCeilSign) {
  Graph g;
  AddConstOf(g, "x", DType::kFloat, {6}, {0.5, 1.5, 2.5, -0.5, -1.5, 2.6});
  AddNode(g, "Round", "r", {"x"}, {"y"});
  EXPECT_EQ(F32(Fold(g, "y")), (std::vector<float>{0.f, 2.f, 2.f, -0.f, -2.f, 3.f}));
  Graph h;
  AddConstOf(h, "x", DType::kFloat, {4}, {-1.5, 0, 2.25, -0.0});
  AddNode(h, "Ceil", "c", {"x"}, {"c1"});
  AddNode(h, "Sign", "s", {"c1"}, {"y"});
  EXPECT_EQ(F32(Fold(h, "y")), (std::vector<float>{-1.f, 0.f, 1.f, 0.f}));
}

// Cast float -> integer as ONNX Runtime on x86-64: truncation toward zero;
// NaN and out-of-range values give the conversion instruction's most
// negative value (through int32 for narrow types, then wrapped).
TEST(FoldEvalTest, CastTruncatesAndSaturatesLikeOnnxRuntime) {
  Graph g;
  AddConstOf(g, "x", DType::kFloat, {5}, {-1.7, 2.9, 3e9, NAN, 300.7});
  AddNode(g, "Cast", "c", {"x"}, {"y"}).SetInt("to", 6);  // int32
  EXPECT_EQ(Fold(g, "y").AsInts(), (std::vector<int64_t>{-1, 2, INT32_MIN, INT32_MIN, 300}));
  Graph h;
  AddConstOf(h, "x", DType::kFloat, {3}, {300.7, -1.0, 3e9});
  AddNode(h, "Cast", "c", {"x"}, {"y"}).SetInt("to", 2);  // uint8: 300 wraps to 44, -1 to 255, 3e9 -> INT32_MIN -> 0
  EXPECT_EQ(Fold(h, "y").AsInts(), (std::vector<int64_t>{44, 255, 0}));
  Graph k;
  AddConstOf(k, "x", DType::kFloat, {3}, {1e19, -2.5, NAN});
  AddNode(k, "Cast", "c", {"x"}, {"y"}).SetInt("to", 7);  // int64
  EXPECT_EQ(Fold(k, "y").AsInts(), (std::vector<int64_t>{INT64_MIN, -2, INT64_MIN}));
  // int64 -> float32 rounds once (2^53 + 1 is not a float; a double first
  // would round to 2^53 and then to float32, which happens to agree here,
  // but 2^60 + 2^36 + 1 rounds up only when rounded once).
  Graph m;
  const int64_t big = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  m.tensors["x"] = MakeConstI64("x", {1}, {big});
  AddNode(m, "Cast", "c", {"x"}, {"y"}).SetInt("to", 1);
  EXPECT_EQ(F32(Fold(m, "y")), (std::vector<float>{static_cast<float>(big)}));
}

TEST(FoldEvalTest, IntegerDivisionTruncatesAndModFollowsFmod) {
  Graph g;
  g.tensors["a"] = MakeConstI64("a", {4}, {-7, 7, -7, 7});
  g.tensors["b"] = MakeConstI64("b", {4}, {2, -2, -2, 2});
  AddNode(g, "Div", "d", {"a", "b"}, {"q"});
  EXPECT_EQ(Fold(g, "q").AsInts(), (std::vector<int64_t>{-3, -3, 3, 3}));
  Graph h;
  h.tensors["a"] = MakeConstI64("a", {4}, {-7, 7, -7, 7});
  h.tensors["b"] = MakeConstI64("b", {4}, {2, -2, -2, 2});
  AddNode(h, "Mod", "m", {"a", "b"}, {"r"});  // fmod = 0: the divisor's sign
  EXPECT_EQ(Fold(h, "r").AsInts(), (std::vector<int64_t>{1, -1, -1, 1}));
  Graph k;
  k.tensors["a"] = MakeConstI64("a", {4}, {-7, 7, -7, 7});
  k.tensors["b"] = MakeConstI64("b", {4}, {2, -2, -2, 2});
  AddNode(k, "Mod", "m", {"a", "b"}, {"r"}).SetInt("fmod", 1);  // the dividend's sign
  EXPECT_EQ(Fold(k, "r").AsInts(), (std::vector<int64_t>{-1, 1, -1, 1}));
  Graph z;
  z.tensors["a"] = MakeConstI64("a", {1}, {5});
  z.tensors["b"] = MakeConstI64("b", {1}, {0});
  AddNode(z, "Div", "d", {"a", "b"}, {"q"});
  z.opset = 17;
  PassResult r;
  const Status s = FoldConstants(z, &r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("node 'd' (Div): integer Div by zero"), std::string::npos) << s.message();
}

// Broadcasting comparisons, logic and Where: ViT's class-token expansion
// builds the Expand shape with Equal(shape, -1) and Where.
TEST(FoldEvalTest, WhereOnEqualBuildsExpandShape) {
  Graph g;
  g.tensors["target"] = MakeConstI64("target", {3}, {1, -1, -1});
  g.tensors["minus1"] = MakeConstI64("minus1", {}, {-1});
  g.tensors["ones"] = MakeConstI64("ones", {3}, {1, 1, 1});
  g.tensors["cls"] = MakeConstF32("cls", {1, 1, 4}, {1, 2, 3, 4});
  AddNode(g, "Equal", "eq", {"target", "minus1"}, {"is_neg"});
  AddNode(g, "Where", "w", {"is_neg", "ones", "target"}, {"shape"});
  AddNode(g, "Expand", "e", {"cls", "shape"}, {"y"});
  const Tensor t = Fold(g, "y");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 1, 4}));
  EXPECT_EQ(F32(t), (std::vector<float>{1, 2, 3, 4}));
  Graph h;
  h.tensors["a"] = MakeConstI64("a", {2, 1}, {3, 5});
  h.tensors["b"] = MakeConstI64("b", {3}, {3, 4, 5});
  AddNode(h, "Less", "lt", {"a", "b"}, {"lt"});
  AddNode(h, "GreaterOrEqual", "ge", {"a", "b"}, {"ge"});
  AddNode(h, "Not", "n", {"ge"}, {"nge"});
  AddNode(h, "Xor", "x", {"lt", "nge"}, {"y"});  // always false: Not(a >= b) == (a < b)
  const Tensor x = Fold(h, "y");
  EXPECT_EQ(x.dtype, DType::kBool);
  EXPECT_EQ(x.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(x.AsInts(), (std::vector<int64_t>{0, 0, 0, 0, 0, 0}));
}

TEST(FoldEvalTest, ReductionsCumSumAndGatherElements) {
  Graph g;
  g.tensors["x"] = MakeConstI64("x", {2, 3}, {1, 2, 3, 4, 5, 6});
  AddNode(g, "ReduceProd", "p", {"x"}, {"p"}).SetInts("axes", {1});
  AddNode(g, "CumSum", "cs", {"p", "axis"}, {"y"}).SetInt("exclusive", 1);
  g.tensors["axis"] = MakeConstI64("axis", {}, {0});
  const Tensor t = Fold(g, "y");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(t.AsInts(), (std::vector<int64_t>{0, 6}));
  Graph h;
  h.tensors["x"] = MakeConstF32("x", {2, 2}, {1, 2, 3, 4});
  h.tensors["i"] = MakeConstI64("i", {2, 2}, {1, 0, -1, 0});
  AddNode(h, "GatherElements", "ge", {"x", "i"}, {"y"}).SetInt("axis", 1);
  EXPECT_EQ(F32(Fold(h, "y")), (std::vector<float>{2, 1, 4, 3}));
}

// Transcendental functions and Pow are rounded once from double; Cast to
// bool is "not zero" (NaN included); uint8 arithmetic wraps.
TEST(FoldEvalTest, PowExpCastToBoolAndNarrowWrap) {
  Graph g;
  AddConstOf(g, "x", DType::kFloat, {3}, {2, 0.5, 10});
  AddConstOf(g, "e", DType::kFloat, {3}, {10, 2, -1});
  AddNode(g, "Pow", "p", {"x", "e"}, {"y"});
  EXPECT_EQ(F32(Fold(g, "y")), (std::vector<float>{1024.f, 0.25f, 0.1f}));
  Graph h;
  AddConstOf(h, "x", DType::kFloat, {2}, {0, 1});
  AddNode(h, "Exp", "e", {"x"}, {"y"});
  EXPECT_EQ(F32(Fold(h, "y")), (std::vector<float>{1.f, static_cast<float>(std::exp(1.0))}));
  Graph k;
  AddConstOf(k, "x", DType::kFloat, {4}, {0, -0.0, NAN, 0.25});
  AddNode(k, "Cast", "c", {"x"}, {"y"}).SetInt("to", 9);
  const Tensor b = Fold(k, "y");
  EXPECT_EQ(b.dtype, DType::kBool);
  EXPECT_EQ(b.AsInts(), (std::vector<int64_t>{0, 0, 1, 1}));
  Graph m;
  AddConstOf(m, "a", DType::kUint8, {2}, {200, 3});
  AddConstOf(m, "b", DType::kUint8, {2}, {100, 5});
  AddNode(m, "Add", "s", {"a", "b"}, {"sum"});
  AddNode(m, "Sub", "d", {"b", "a"}, {"y"});  // 100 - 200 wraps to 156; 5 - 3 = 2
  const Tensor u = Fold(m, "y");
  EXPECT_EQ(u.dtype, DType::kUint8);
  EXPECT_EQ(u.AsInts(), (std::vector<int64_t>{156, 2}));
  EXPECT_EQ(m.tensors.at("sum").AsInts(), (std::vector<int64_t>{44, 8}));
}

// Float32 sums accumulate in float32 (1e8 + 1 + 1 stays 1e8), as ONNX Runtime.
TEST(FoldEvalTest, FloatAdditionStaysFloat32) {
  Graph g;
  AddConstOf(g, "x", DType::kFloat, {3}, {1e8, 1, 1});
  AddNode(g, "ReduceSum", "s", {"x", ""}, {"y"}).SetInt("keepdims", 0);
  EXPECT_EQ(F32(Fold(g, "y")), (std::vector<float>{1e8f}));
  Graph h;
  AddConstOf(h, "a", DType::kFloat, {1}, {0.1});
  AddConstOf(h, "b", DType::kFloat, {1}, {0.2});
  AddNode(h, "Add", "s", {"a", "b"}, {"y"});
  EXPECT_EQ(F32(Fold(h, "y")), (std::vector<float>{0.1f + 0.2f}));
}

// With symbolic dimensions (config.json "dimensions"), folded integer shape
// arithmetic keeps the expressions of the sizes: Swin's window padding
// (7 - W mod 7) mod 7 and a Where on a comparison, evaluated at other points
// of the range, give what the operators compute there. A float computation
// keeps only its value (the dynamic-shape conversion refuses what it feeds).
TEST(FoldEvalTest, IntegerShapeArithmeticKeepsSymbolicExpressions) {
  SymContext ctx({{"H", 100, 120, 1}, {"W", 140, 160, 1}});
  SymScope scope(&ctx);
  Graph g;
  g.opset = 17;
  AddInput(g, "x", {1, 3, Dim(120, ctx.SymbolNode(0)), Dim(160, ctx.SymbolNode(1))});
  g.tensors["i2"] = MakeConstI64("i2", {1}, {2});
  g.tensors["i4"] = MakeConstI64("i4", {1}, {4});
  g.tensors["win"] = MakeConstI64("win", {}, {7});
  g.tensors["lim"] = MakeConstI64("lim", {}, {110});
  g.tensors["half"] = MakeConstF32("half", {}, {0.5f});
  AddNode(g, "Shape", "s", {"x"}, {"shape"});
  AddNode(g, "Slice", "hw", {"shape", "i2", "i4"}, {"hw"});
  AddNode(g, "Mod", "rem", {"hw", "win"}, {"rem"});
  AddNode(g, "Sub", "short", {"win", "rem"}, {"short"});
  AddNode(g, "Mod", "pad", {"short", "win"}, {"pad"});
  AddNode(g, "Less", "lt", {"hw", "lim"}, {"small"});
  AddNode(g, "Where", "w", {"small", "lim", "hw"}, {"at_least"});
  AddNode(g, "Cast", "f", {"hw"}, {"hwf"}).SetInt("to", 1);
  AddNode(g, "Mul", "m", {"hwf", "half"}, {"halved"});
  for (const char* o : {"pad", "at_least", "halved"}) AddOutput(g, o);
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  const Tensor& pad = g.tensors.at("pad");
  const Tensor& at_least = g.tensors.at("at_least");
  ASSERT_EQ(pad.sym.size(), 2u);
  ASSERT_EQ(at_least.sym.size(), 2u);
  EXPECT_EQ(pad.AsInts(), (std::vector<int64_t>{6, 1}));  // at H = 120, W = 160
  for (int64_t h : {100, 105, 113, 119}) {
    for (int64_t w : {140, 147, 151}) {
      auto at = [&](const Dim& d) { return ctx.Eval(d.Node(&ctx), {h, w}).value(); };
      EXPECT_EQ(at(pad.sym[0]), (7 - h % 7) % 7) << h;
      EXPECT_EQ(at(pad.sym[1]), (7 - w % 7) % 7) << w;
      EXPECT_EQ(at(at_least.sym[0]), h < 110 ? 110 : h) << h;
      EXPECT_EQ(at(at_least.sym[1]), w < 110 ? 110 : w) << w;
    }
  }
  EXPECT_TRUE(g.tensors.at("halved").sym.empty());
}

// An Expand of a constant to the batch of a dynamic-shape conversion is
// left to the device: folded, it would be a constant of one point's size.
TEST(FoldEvalTest, ResultOfSymbolicShapeStaysOnTheDevice) {
  SymContext ctx({{"N", 1, 8, 1}});
  SymScope scope(&ctx);
  Graph g;
  g.opset = 17;
  AddInput(g, "x", {Dim(8, ctx.SymbolNode(0)), 4});
  g.tensors["cls"] = MakeConstF32("cls", {1, 4}, {1, 2, 3, 4});
  g.tensors["i0"] = MakeConstI64("i0", {1}, {0});
  g.tensors["i1"] = MakeConstI64("i1", {1}, {1});
  g.tensors["four"] = MakeConstI64("four", {1}, {4});
  AddNode(g, "Shape", "s", {"x"}, {"shape"});
  AddNode(g, "Slice", "n", {"shape", "i0", "i1"}, {"batch"});
  AddNode(g, "Concat", "c", {"batch", "four"}, {"target"}).SetInt("axis", 0);
  AddNode(g, "Expand", "e", {"cls", "target"}, {"y"});
  AddOutput(g, "y");
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Expand");
  EXPECT_TRUE(g.tensors.at("y").shape[0].is_symbolic());
}

// A Pad whose pads come from a graph input's values names that input and
// config.json "input_values"; none says dynamic shapes are unsupported.
TEST(FoldEvalTest, NotConstantNamesTheConfigEntry) {
  Graph g;
  g.opset = 17;
  AddInput(g, "x", {1, 3, 4, 4});
  Tensor p;
  p.name = "p"; p.dtype = DType::kFloat; p.shape = {8}; p.has_shape = true;
  g.tensors["p"] = p;
  g.inputs.push_back({"p", "p"});
  AddNode(g, "Floor", "f", {"p"}, {"pf"});
  AddNode(g, "Cast", "c", {"pf"}, {"pads"}).SetInt("to", 7);
  AddNode(g, "Pad", "pad", {"x", "pads"}, {"y"});
  AddOutput(g, "y");
  PassResult r;
  const Status s = FoldConstants(g, &r);
  ASSERT_FALSE(s.ok());
  const std::string m = s.message();
  EXPECT_NE(m.find("pads input 'pads' is not a compile-time constant"), std::string::npos) << m;
  EXPECT_NE(m.find("it is computed from graph input 'p'"), std::string::npos) << m;
  EXPECT_NE(m.find("\"input_values\""), std::string::npos) << m;
  EXPECT_EQ(m.find("dynamic shapes are not supported"), std::string::npos) << m;
}

// Low-bit constants hold one code per byte in the IR: values round into them
// as ONNX Cast does with saturate = 1 (the codes are the ONNX reference's,
// numpy_helper.saturate_cast / ml_dtypes), read back exactly, and an
// operator reading one is left to the device, not folded.
TEST(FoldEvalTest, LowBitConstantsRoundAsOnnxAndAreNotFolded) {
  const std::vector<double> x = {0.47892547, 1e6, -1e-7, -3.3};
  const struct {
    DType t;
    std::vector<uint8_t> codes;
    std::vector<double> values;
  } cases[] = {
      {DType::kFloat8E4M3FN, {47, 126, 128, 197}, {0.46875, 448, -0.0, -3.25}},
      {DType::kFloat8E4M3FNUZ, {55, 127, 0, 205}, {0.46875, 240, 0.0, -3.25}},
      {DType::kFloat8E5M2, {56, 123, 128, 195}, {0.5, 57344, -0.0, -3.5}},
      {DType::kFloat8E5M2FNUZ, {60, 127, 0, 199}, {0.5, 57344, 0.0, -3.5}},
      {DType::kFloat4E2M1, {1, 7, 8, 13}, {0.5, 6, -0.0, -3}},
      {DType::kInt4, {0, 0, 0, 13}, {0, 0, 0, -3}},  // truncation toward zero; 1e6 wraps to 0
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(DTypeName(c.t));
    const Tensor t = MakeConstFromDoubles("q", c.t, {4}, x);
    EXPECT_EQ(t.data, c.codes);
    const std::vector<double> back = t.AsDoubles();
    ASSERT_EQ(back.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(back[i], c.values[i]) << "element " << i;
      EXPECT_EQ(std::signbit(back[i]), std::signbit(c.values[i])) << "element " << i;
    }
  }
  Graph g;
  AddConstOf(g, "q", DType::kInt4, {4}, {1, -2, 3, -4});
  AddNode(g, "Cast", "c", {"q"}, {"f"}).SetInt("to", 1);
  g.opset = 21;
  AddOutput(g, "f");
  PassResult r;
  ASSERT_TRUE(FoldConstants(g, &r).ok());
  EXPECT_EQ(g.nodes.size(), 1u) << "a Cast of an int4 constant was folded";
}

}  // namespace
}  // namespace oaaxvk::toolchain
