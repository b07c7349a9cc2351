// Dynamic shapes in the toolchain: symbolic sizes (dim.h), config parsing,
// the check points, the per-point check and the plan bound.
#include <gtest/gtest.h>

#include "test_util.h"
#include "toolchain/driver/dynamic.h"
#include "toolchain/input/archive.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/lower/lower.h"
#include "toolchain/passes/passes.h"

namespace oaaxvk::toolchain {
namespace {

using testing::AddConst;
using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;

std::vector<Symbol> BatchAndHeight() {
  return {{"N", 1, 8, 1}, {"H", 32, 96, 32}};
}

TEST(SymbolicDims, ArithmeticBuildsExpressionsThatEvaluateAtEveryPoint) {
  SymContext ctx(BatchAndHeight());
  SymScope scope(&ctx);
  Dim n(8, ctx.SymbolNode(0)), h(96, ctx.SymbolNode(1));
  Dim v = CeilDiv(n * h * 3, 256);
  EXPECT_EQ(v.value(), (8 * 96 * 3 + 255) / 256);
  ASSERT_TRUE(v.is_symbolic());
  for (int64_t nv : {1, 3, 8})
    for (int64_t hv : {32, 64, 96}) EXPECT_EQ(*ctx.Eval(v.expr(), {nv, hv}), (nv * hv * 3 + 255) / 256);
  // Static operands stay static; identities fold.
  EXPECT_FALSE((Dim(3) * 4).is_symbolic());
  EXPECT_EQ((n * 1).expr(), n.expr());
  EXPECT_EQ(((h - 1) + 1).expr(), h.expr());          // linear forms fold
  EXPECT_EQ(FloorDiv(n * 2048, 2048).expr(), n.expr());  // Reshape's -1 of a Flatten
  EXPECT_EQ((n * h).expr(), (h * n).expr());          // commutative operands share a node
}

TEST(SymbolicDims, BoundsDivisibilityAndMonotonicity) {
  SymContext ctx(BatchAndHeight());
  SymScope scope(&ctx);
  Dim n(8, ctx.SymbolNode(0)), h(96, ctx.SymbolNode(1));
  EXPECT_EQ(LowerBound(n * h), 32);
  EXPECT_EQ(UpperBound(n * h), 768);
  EXPECT_TRUE(Divisible(h, 32));
  EXPECT_TRUE(Divisible(n * h, 4));
  EXPECT_FALSE(Divisible(n, 2));
  EXPECT_FALSE(Divisible(h + 1, 2));
  EXPECT_TRUE(ctx.IsMonotone((n * h + 7).expr()));
  EXPECT_TRUE(ctx.IsMonotone(((h - 3) * n).expr()));      // h - 3 >= 29 in H's range
  EXPECT_FALSE(ctx.IsMonotone(((n - 3) * h).expr()));     // n - 3 < 0 at N = 1
  Dim g[3];
  Grid1D(CeilDiv(n * h * 100000, 64), g);                 // split grids stay bounded
  EXPECT_EQ(UpperBound(g[0]), 65535);
  EXPECT_EQ(UpperBound(g[1]), (8 * 96 * 100000 / 64 + 65534) / 65535);
  // Facts the expression's form does not show are checked at every point of
  // the (small) domain: floordiv(h - 1, 2) + 1 = h / 2 is even for h in 32, 64, 96.
  const Dim half = FloorDiv(h - 1, 2) + 1;
  EXPECT_TRUE(Divisible(half, 16));
  EXPECT_FALSE(Divisible(half + 1, 2));
  EXPECT_TRUE(SameDim(half * 2, h));
  EXPECT_EQ(LowerBound(FloorDiv(Dim(1000), n)), 125);
  EXPECT_FALSE(ctx.IsMonotone((Dim(1000) - n).expr()));
  EXPECT_TRUE(SameDim(n * h, h * n));
  EXPECT_FALSE(SameDim(n, Dim(8)));
  // A divisor <= 0 is an evaluation error, not a crash.
  Dim bad = FloorDiv(Dim(10), n - 1);
  ASSERT_TRUE(bad.is_symbolic());
  EXPECT_FALSE(ctx.Eval(bad.expr(), {1, 32}).ok());
}

TEST(SymbolicDims, ShapeInferenceAndLoweringKeepTheBatchSymbol) {
  SymContext ctx({{"N", 1, 8, 1}});
  SymScope scope(&ctx);
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {Dim(8, ctx.SymbolNode(0)), 3, 13, 13});
  AddConst(g, "w", {5, 3, 3, 3});
  AddConst(g, "fc", {5 * 11 * 11, 7});
  AddNode(g, "Conv", "conv", {"x", "w"}, {"c"});
  AddNode(g, "Relu", "relu", {"c"}, {"r"});
  AddNode(g, "Flatten", "flat", {"r"}, {"f"});
  AddNode(g, "MatMul", "mm", {"f", "fc"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(InferShapes(g).ok());
  const Shape& ys = g.FindTensor("y")->shape;
  ASSERT_EQ(ys.size(), 2u);
  EXPECT_TRUE(ys[0].is_symbolic());
  EXPECT_EQ(ctx.ToString(ys[0].expr()), "N");
  EXPECT_FALSE(ys[1].is_symbolic());
  StatusOr<Program> p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // Every dispatch's size depends on N somewhere, and the output's dimension 0 is N.
  for (const Dispatch& d : p->dispatches) {
    bool any = false;
    for (const Dim& s : d.spec) any |= s.is_symbolic();
    for (const Dim& gc : d.groups) any |= gc.is_symbolic();
    EXPECT_TRUE(any) << d.kernel;
  }
  EXPECT_TRUE(p->outputs.at(0).shape[0].is_symbolic());
}

TEST(DynamicConfig, ParsesSymbolsAndRangesAndRejectsMissingRanges) {
  StatusOr<ModelConfig> c = ParseModelConfig(
      R"({"input_shapes": {"x": [1, 3, "H", "W"]},
          "dimensions": {"H": {"min": 30, "max": 970, "multiple_of": 32}, "W": {"min": 32, "max": 64}}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->input_symbols.at("x"), (std::vector<std::string>{"", "", "H", "W"}));
  StatusOr<std::vector<Symbol>> s = ResolveSymbols(*c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].name, "H");
  EXPECT_EQ((*s)[0].min, 32);   // rounded inward to multiple_of
  EXPECT_EQ((*s)[0].max, 960);

  StatusOr<ModelConfig> missing = ParseModelConfig(R"({"input_shapes": {"x": [1, "W"]}})");
  ASSERT_TRUE(missing.ok());
  StatusOr<std::vector<Symbol>> m = ResolveSymbols(*missing);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("add it to \"dimensions\""), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("'W'"), std::string::npos);

  for (const char* bad : {R"({"dimensions": {"H": {"min": 8}}})", R"({"dimensions": {"H": {"min": 9, "max": 3}}})",
                          R"({"dimensions": {"H": {"min": 1, "max": 8, "step": 2}}})",
                          R"({"dimensions": {"H": {"min": 0, "max": 8}}})", R"({"dimensions": [1]})"}) {
    StatusOr<ModelConfig> b = ParseModelConfig(bad);
    EXPECT_FALSE(b.ok()) << bad;
    if (!b.ok()) EXPECT_NE(b.status().message().find("dimensions"), std::string::npos) << b.status().message();
  }
  StatusOr<ModelConfig> empty = ParseModelConfig(R"({"dimensions": {"H": {"min": 33, "max": 63, "multiple_of": 32}}})");
  ASSERT_TRUE(empty.ok());
  StatusOr<std::vector<Symbol>> e = ResolveSymbols(*empty);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("holds no multiple of 32"), std::string::npos) << e.status().message();
}

TEST(DynamicConfig, SamplePointsStartAtTheMaximumAndCoverTheCorners) {
  std::vector<std::vector<int64_t>> pts = SamplePoints(BatchAndHeight());
  ASSERT_GE(pts.size(), 4u);
  EXPECT_LE(pts.size(), 8u);
  EXPECT_EQ(pts[0], (std::vector<int64_t>{8, 96}));
  EXPECT_EQ(pts[1], (std::vector<int64_t>{1, 32}));
  for (const auto& p : pts) {
    EXPECT_GE(p[0], 1);
    EXPECT_LE(p[0], 8);
    EXPECT_EQ(p[1] % 32, 0);
  }
  EXPECT_NE(std::find(pts.begin(), pts.end(), std::vector<int64_t>{1, 96}), pts.end());
  EXPECT_NE(std::find(pts.begin(), pts.end(), std::vector<int64_t>{8, 32}), pts.end());
}

// Lowers a Relu of an [N, 5] input at `n`, in `ctx`.
Program LowerRelu(SymContext* ctx, int64_t n, bool symbolic) {
  SymScope scope(ctx);
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {symbolic ? Dim(n, ctx->SymbolNode(0)) : Dim(n), 5});
  AddNode(g, "Relu", "relu", {"x"}, {"y"});
  AddOutput(g, "y");
  EXPECT_TRUE(InferShapes(g).ok());
  StatusOr<Program> p = Lower(g);
  EXPECT_TRUE(p.ok());
  return std::move(*p);
}

TEST(DynamicCheck, AcceptsTrackedSizesAndNamesTheFieldThatLostItsExpression) {
  SymContext canon({{"N", 1, 8, 1}});
  Program c = LowerRelu(&canon, 8, true);
  SymContext sample_ctx({{"N", 1, 8, 1}});
  Program s = LowerRelu(&sample_ctx, 3, true);
  EXPECT_TRUE(CheckSample(c, canon, s, {3}).ok());
  // A program whose sizes were baked at the maximum (no expression) is refused.
  SymContext baked_ctx({{"N", 1, 8, 1}});
  Program baked = LowerRelu(&baked_ctx, 8, false);
  Status st = CheckSample(baked, baked_ctx, s, {3});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("node 'relu'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("N=3"), std::string::npos) << st.message();
  EXPECT_TRUE(CheckPlanBounds(c, canon).ok());
}

TEST(DynamicCheck, PlanBoundRefusesASizeThatShrinksAsTheSymbolGrows) {
  SymContext ctx({{"N", 1, 8, 1}});
  SymScope scope(&ctx);
  Program p;
  Value v;
  v.tensor = "t";
  v.bytes = (Dim(16) - Dim(8, ctx.SymbolNode(0))) * 4;  // largest at N = 1, not at the maximum
  p.values.push_back(v);
  Status st = CheckPlanBounds(p, ctx);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("more than the"), std::string::npos) << st.message();
  Program q;
  v.bytes = Dim(8, ctx.SymbolNode(0)) * 4 + 16;
  q.values.push_back(v);
  EXPECT_TRUE(CheckPlanBounds(q, ctx).ok());
}

}  // namespace
}  // namespace oaaxvk::toolchain
