// Dynamic shapes in the toolchain: symbolic sizes (dim.h), config parsing,
// the check points, the per-point check and the plan bound.
#include <gtest/gtest.h>

#include "test_util.h"
#include <algorithm>
#include <cstring>
#include <set>

#include "oaax_vulkan/oinf.h"
#include "toolchain/bundle/bundle_writer.h"
#include "toolchain/driver/dynamic.h"
#include "toolchain/lower/kernels.h"
#include "toolchain/plan/plan.h"
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

TEST(SymbolicDims, UnifyDimsGuardsEqualSizesItCannotProve) {
  SymContext ctx({{"a", 0, 8, 1}, {"b", 0, 8, 1}});
  SymScope scope(&ctx);
  const Dim a(8, ctx.SymbolNode(0)), b(8, ctx.SymbolNode(1));
  // Provably the same size: no guard.
  StatusOr<Dim> same = UnifyDims(a + b, b + a, "node 'n' (Op)", "the counts");
  ASSERT_TRUE(same.ok()) << same.status().message();
  EXPECT_TRUE(ctx.guards().empty());
  // Equal where compiled (16), different elsewhere: one guard, true exactly
  // where the two sizes agree, naming the node and both expressions.
  StatusOr<Dim> guarded = UnifyDims(a * 2, a + b, "node 'nms' (NonMaxSuppression)", "the box counts");
  ASSERT_TRUE(guarded.ok()) << guarded.status().message();
  EXPECT_EQ(guarded->expr(), (a * 2).expr());
  ASSERT_EQ(ctx.guards().size(), 1u);
  const SymGuard& gd = ctx.guards()[0];
  EXPECT_NE(gd.text.find("node 'nms' (NonMaxSuppression): the box counts must be equal"), std::string::npos) << gd.text;
  EXPECT_EQ(*ctx.Eval(gd.expr, {8, 8}), 1);
  EXPECT_EQ(*ctx.Eval(gd.expr, {3, 3}), 1);
  EXPECT_EQ(*ctx.Eval(gd.expr, {2, 5}), 0);
  // Different values where compiled: refused with both values.
  StatusOr<Dim> differ = UnifyDims(a, b + 1, "node 'c' (Concat)", "dimension 1 of inputs 0 and 1");
  ASSERT_FALSE(differ.ok());
  EXPECT_NE(differ.status().message().find("node 'c' (Concat): dimension 1 of inputs 0 and 1 must be equal, got 8"),
            std::string::npos) << differ.status().message();
  // A static size beside a symbolic one of its value gives the symbolic one, unguarded.
  StatusOr<Dim> mixed = UnifyDims(Dim(8), a, "node 'm' (MatMul)", "K");
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(mixed->expr(), a.expr());
  EXPECT_EQ(ctx.guards().size(), 1u);
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

TEST(SymbolicDims, RangesDecideComparisonsMinAndMax) {
  // k: a count read back from the device (may be 0); H: a dimension.
  SymContext ctx({{"k", 0, 5000, 1}, {"H", 32, 96, 32}});
  SymScope scope(&ctx);
  const Dim k(5000, ctx.SymbolNode(0)), h(96, ctx.SymbolNode(1));
  const Dim n = Min(k, 1000);  // a size: in [0, 1000]
  ASSERT_TRUE(n.is_symbolic());
  EXPECT_EQ(ctx.Range(n.expr()), (std::pair<int64_t, int64_t>(0, 1000)));
  // A size is never -1, so a Reshape entry that is one never selects the -1 branch.
  const Dim minus_one = Eq(n, Dim(-1));
  EXPECT_FALSE(minus_one.is_symbolic());
  EXPECT_EQ(minus_one.value(), 0);
  EXPECT_EQ(Select(minus_one, h * 7, n).expr(), n.expr());
  EXPECT_EQ(Select(Eq(n, Dim(0)), n, n).expr(), n.expr());  // both branches the same size
  EXPECT_TRUE(Eq(n, Dim(0)).is_symbolic());                 // n can be 0
  EXPECT_FALSE(Lt(n, Dim(0)).is_symbolic());
  EXPECT_EQ(Lt(n, Dim(0)).value(), 0);
  EXPECT_EQ(Lt(n, Dim(1001)).value(), 1);
  EXPECT_FALSE(Lt(n, Dim(1001)).is_symbolic());
  EXPECT_TRUE(Lt(h, Dim(33)).is_symbolic());
  EXPECT_EQ(Min(n, Dim(2000)).expr(), n.expr());
  EXPECT_EQ(Max(h, Dim(1)).expr(), h.expr());
  EXPECT_EQ(Min(h, n + 96).expr(), h.expr());
  EXPECT_TRUE(Max(n, Dim(1)).is_symbolic());  // n = 0 is raised to 1
  // What stays symbolic evaluates as written at every point.
  const Dim m = Max(n, Dim(1)) + Lt(h, Dim(64)) * Eq(n, Dim(0));
  for (int64_t kv : {0, 1, 999, 1000, 5000})
    for (int64_t hv : {32, 64, 96})
      EXPECT_EQ(*ctx.Eval(m.expr(), {kv, hv}), std::max<int64_t>(std::min<int64_t>(kv, 1000), 1) +
                                                  (hv < 64 && kv == 0 ? 1 : 0));
}

TEST(SymbolicDims, ExactQuotientCancelsTheSameSizes) {
  SymContext ctx({{"k", 0, 5000, 1}, {"H", 32, 96, 32}});
  SymScope scope(&ctx);
  const Dim n = Min(Dim(5000, ctx.SymbolNode(0)), 1000), h(96, ctx.SymbolNode(1));
  Dim q;
  ASSERT_TRUE(ExactQuotient({n, Dim(364)}, {n, Dim(4)}, &q));  // a box head's [n, 91 * 4] as [n, -1, 4]
  EXPECT_FALSE(q.is_symbolic());
  EXPECT_EQ(q.value(), 91);
  ASSERT_TRUE(ExactQuotient({n * 4, h}, {n}, &q));  // constant factors of a size cancel too
  ASSERT_TRUE(q.is_symbolic());
  EXPECT_EQ(q.value(), 4 * 96);
  EXPECT_EQ(q.expr(), (h * 4).expr());
  EXPECT_FALSE(ExactQuotient({n, h}, {h, Dim(3)}, &q));  // 3 does not divide 1
  EXPECT_FALSE(ExactQuotient({n * 6}, {n * 4}, &q));
  EXPECT_FALSE(ExactQuotient({n, h}, {h + 1}, &q));      // not a size of a
  EXPECT_FALSE(ExactQuotient({n}, {Dim(0)}, &q));
}

TEST(SymbolicDims, BoundsOnDomainsTooLargeToEnumerateAreIntervals) {
  // 1001 * 1001 points (more than are enumerated); max(1000 - a, b) is not
  // monotone: its bounds are its interval, [0, 1000], not the type's extremes.
  SymContext ctx({{"a", 0, 1000, 1}, {"b", 0, 1000, 1}});
  SymScope scope(&ctx);
  const Dim a(1000, ctx.SymbolNode(0)), b(1000, ctx.SymbolNode(1));
  const Dim d = Max(Dim(1000) - a, b);
  ASSERT_FALSE(ctx.IsMonotone(d.expr()));
  EXPECT_EQ(UpperBound(d), 1000);
  EXPECT_EQ(LowerBound(d), 0);
  EXPECT_EQ(PlannedMax(d), 1000);  // the same at every point compiled, not d's value there
  EXPECT_EQ(ctx.Range(d.expr()), (std::pair<int64_t, int64_t>(0, 1000)));
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
                          R"({"dimensions": {"H": {"min": 1, "max": 8, "multiple_of": 0}}})",
                          R"({"dimensions": {"H": {"min": 1, "max": 4294967296}}})", R"({"dimensions": [1]})"}) {
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

TEST(DynamicConfig, NamedInputValuesBecomeSampledValueSymbols) {
  StatusOr<ModelConfig> c = ParseModelConfig(
      R"({"input_values": {"pads": ["P0", "P1"], "k": [3]},
          "dimensions": {"P0": {"min": -2, "max": 4}, "P1": {"min": 0, "max": 6, "multiple_of": 4}}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->value_symbols.at("pads"), (std::vector<std::string>{"P0", "P1"}));
  EXPECT_EQ(c->input_values.count("pads"), 0u);
  EXPECT_EQ(c->input_values.at("k").size(), 1u);  // numbers still bind
  StatusOr<std::vector<Symbol>> s = ResolveSymbols(*c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].name, "P0");
  EXPECT_EQ((*s)[0].value_input, "pads");
  EXPECT_EQ((*s)[0].value_element, 0);
  EXPECT_TRUE((*s)[0].sampled);
  EXPECT_EQ((*s)[0].min, -2);
  EXPECT_EQ((*s)[1].value_element, 1);
  EXPECT_EQ((*s)[1].max, 4);  // rounded inward to multiple_of
  // Not found again among the derived value symbols.
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 3});
  Tensor t;
  t.name = "pads";
  t.dtype = DType::kInt64;
  t.shape = {2};
  t.has_shape = true;
  g.tensors["pads"] = t;
  g.inputs.push_back({"pads", "pads"});
  AddNode(g, "Reshape", "r", {"x", "pads"}, {"y"});
  EXPECT_TRUE(FindValueSymbols(g, *c).empty());

  auto error = [](const char* json) {
    StatusOr<ModelConfig> m = ParseModelConfig(json);
    if (!m.ok()) return m.status().message();
    StatusOr<std::vector<Symbol>> r = ResolveSymbols(*m);
    return r.ok() ? std::string("(accepted)") : r.status().message();
  };
  EXPECT_NE(error(R"({"input_values": {"p": ["A", 1]}, "dimensions": {"A": {"min": 1, "max": 2}}})")
                .find("mixes numbers and names"), std::string::npos);
  EXPECT_NE(error(R"({"input_values": {"p": ["A"]}})").find("'A') has no range; add it to \"dimensions\""),
            std::string::npos)
      << error(R"({"input_values": {"p": ["A"]}})");
  EXPECT_NE(error(R"({"input_values": {"p": ["A"], "q": ["A"]}, "dimensions": {"A": {"min": 1, "max": 2}}})")
                .find("already used by input_values['p']"), std::string::npos);
  EXPECT_NE(error(R"({"input_shapes": {"x": ["A"]}, "input_values": {"p": ["A"]},
                      "dimensions": {"A": {"min": 1, "max": 2}}})").find("names both a dimension"),
            std::string::npos);
  EXPECT_NE(error(R"({"input_shapes": {"x": ["H"]}, "dimensions": {"H": {"min": -1, "max": 8}}})")
                .find("dimensions['H'].min is -1; a dimension must be at least 0"), std::string::npos);
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

// ceil_mode pooling: ONNX drops the last window when it would start in the
// end padding; that correction depends on H, so it is part of the size
// expression. ONNX Runtime: kernel 4, stride 4, pads 1 gives 3 / 4 / 5 rows
// at H = 11 / 15 / 19 (a plain ceil gives 4 / 5 / 6).
TEST(SymbolicDims, CeilModePoolSizeIsRightAtEveryHeight) {
  for (const char* op : {"MaxPool", "AveragePool"}) {
    SymContext ctx({{"H", 8, 24, 1}});
    SymScope scope(&ctx);
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {1, 2, Dim(24, ctx.SymbolNode(0)), 9});
    Node& p = AddNode(g, op, "pool", {"x"}, {"y"});
    p.SetInts("kernel_shape", {4, 4});
    p.SetInts("strides", {4, 4});
    p.SetInts("pads", {1, 1, 1, 1});
    p.SetInt("ceil_mode", 1);
    AddOutput(g, "y");
    ASSERT_TRUE(InferShapes(g).ok());
    const Dim oh = g.FindTensor("y")->shape[2];
    ASSERT_TRUE(oh.is_symbolic());
    for (int64_t h = 8; h <= 24; ++h) {
      int64_t want = (h + 2 - 4 + 3) / 4 + 1;  // ceil((H + pads - k) / s) + 1
      if ((want - 1) * 4 >= h + 1) --want;     // the last window starts in the end padding
      EXPECT_EQ(*ctx.Eval(oh.expr(), {h}), want) << op << " H=" << h;
    }
    EXPECT_EQ(*ctx.Eval(oh.expr(), {11}), 3);
    EXPECT_EQ(*ctx.Eval(oh.expr(), {15}), 4);
    EXPECT_EQ(*ctx.Eval(oh.expr(), {19}), 5);
  }
}

// The check points cover every residue of a symbol modulo the constants its
// sizes divide by, where a floor / ceil changes its rounding.
TEST(DynamicConfig, ResiduePointsCoverTheRoundingOfEveryDivisor) {
  SymContext ctx({{"N", 1, 8, 1}, {"H", 8, 24, 1}, {"W", 32, 96, 32}});
  SymScope scope(&ctx);
  const Dim n(8, ctx.SymbolNode(0)), h(24, ctx.SymbolNode(1)), w(96, ctx.SymbolNode(2));
  (void)(CeilDiv(h - 2, 4) + FloorDiv(h, 6) + FloorDiv(w, 16) + n);  // N divides by nothing
  const std::vector<int64_t> top = {8, 24, 96};
  const std::vector<std::vector<int64_t>> have = SamplePoints(ctx.symbols());
  std::vector<std::vector<int64_t>> pts = ResiduePoints(ctx, top, have);
  std::set<int64_t> h_res;
  for (const auto& p : have)
    if (p[0] == 8 && p[2] == 96) h_res.insert(p[1] % 12);
  for (const auto& p : pts) {
    EXPECT_EQ(std::find(have.begin(), have.end(), p), have.end()) << "repeats a point";
    EXPECT_EQ(p[0], 8) << "N has no divisor";
    EXPECT_GE(p[1], 8);
    EXPECT_LE(p[1], 24);
    EXPECT_EQ(p[2] % 32, 0) << "W stays on multiple_of";
    if (p[2] == 96) h_res.insert(p[1] % 12);  // lcm(4, 6): H's rounding repeats every 12
  }
  EXPECT_EQ(h_res.size(), 12u);
  // W (multiple of 32) over 16: every value has residue 0, nothing to add for W.
  for (const auto& p : pts) EXPECT_TRUE(p[2] == 96 || p[1] == 24) << p[1] << " " << p[2];
  // Without divisions there is nothing to add.
  SymContext plain({{"N", 1, 8, 1}});
  EXPECT_TRUE(ResiduePoints(plain, {8}, {{8}, {1}}).empty());
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
  // In user terms: the bundle holds a constant where the model follows N; the
  // remedy is fixed sizes (a narrower range would not help).
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.message();
  EXPECT_NE(st.message().find("holds it as the constant"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("\"input_shapes\""), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("narrow"), std::string::npos) << st.message();
  EXPECT_TRUE(BoundBufferSizes(&c, canon).ok());
  for (const Value& v : c.values) EXPECT_EQ(v.capacity, 0u) << v.tensor;  // grows with N: planned at N = 8
}

TEST(DynamicCheck, PlansASizeThatShrinksAsTheSymbolGrowsAtItsLargest) {
  SymContext ctx({{"N", 1, 8, 1}});
  SymScope scope(&ctx);
  Program p;
  Value v;
  v.tensor = "t";
  v.bytes = (Dim(16) - Dim(8, ctx.SymbolNode(0))) * 4;  // largest at N = 1 (60 bytes), 32 at the maximum
  p.values.push_back(v);
  ASSERT_TRUE(BoundBufferSizes(&p, ctx).ok());
  EXPECT_EQ(p.values[0].capacity, 60u);
  EXPECT_EQ(PlannedBytes(p.values[0]), 60u);
  // The same size over a domain too large to walk: the interval bound.
  EXPECT_TRUE(BoundBufferSizes(&p, ctx, 4).ok());
  EXPECT_EQ(p.values[0].capacity, 60u);
  // Negative at a valid point: refused, naming the tensor and the point.
  Program n;
  v.bytes = (Dim(4) - Dim(8, ctx.SymbolNode(0))) * 4;
  n.values.push_back(v);
  Status st = BoundBufferSizes(&n, ctx);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("tensor 't'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("N=5"), std::string::npos) << st.message();
  // Growing with N: nothing to add.
  Program q;
  v.bytes = Dim(8, ctx.SymbolNode(0)) * 4 + 16;
  q.values.push_back(v);
  EXPECT_TRUE(BoundBufferSizes(&q, ctx).ok());
  EXPECT_EQ(q.values[0].capacity, 0u);
}

TEST(DynamicCheck, UpperBoundFollowsTheRangeOfANegativeDelta) {
  // Range(s, l, d) with d < 0: ceildiv(s - l, -d) elements, largest at the
  // largest s, smallest l and the d nearest 0 (not at the maxima).
  SymContext ctx({{"s", 1, 20, 1}, {"l", 1, 12, 1}, {"d", -6, -3, 1}});
  SymScope scope(&ctx);
  const Dim s(20, ctx.SymbolNode(0)), l(12, ctx.SymbolNode(1)), d(-3, ctx.SymbolNode(2));
  const Dim n = Max(Dim(0), CeilDiv(s - l, Max(Dim(1), Dim(0) - d)));
  EXPECT_EQ(n.value(), 3);
  EXPECT_EQ(ctx.UpperBound(n.expr()), 7);  // s = 20, l = 1, d = -3
}

// Feature parameter_buffer: the kernel table reads each kernel's parameter
// constants (NAME_SC, shaders/params.glsl) from its SPIR-V.
TEST(ParameterBuffer, KernelsNameTheirParameterConstantsInTheirSpirv) {
  const KernelInfo* e = FindKernel("eltwise");
  ASSERT_NE(e, nullptr);
  uint64_t want = 1;                                 // N
  for (int id = 5; id <= 22; ++id) want |= uint64_t{1} << id;  // D0..D5, SA0..SA5, SB0..SB5
  EXPECT_EQ(e->param_constants, want);               // not OP, ACT or the float constants
  EXPECT_TRUE(e->parameter_buffer);
  const KernelInfo* conv = FindKernel("conv2d_cpu_pw");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->param_constants, (1u << 0) | (1u << 2) | (1u << 3) | (1u << 5) | (1u << 6));  // N H W OH OW
  const KernelInfo* gather = FindKernel("gather");  // a kernel without parameter constants
  ASSERT_NE(gather, nullptr);
  EXPECT_EQ(gather->param_constants, 0u);
  EXPECT_FALSE(gather->parameter_buffer);
  for (const KernelInfo& k : Kernels()) {
    SCOPED_TRACE(k.name);
    if (k.param_constants) EXPECT_TRUE(k.parameter_buffer);
    EXPECT_EQ(k.param_constants >> k.spec_constants, 0u);
  }
}

// A symbolic size at a parameter constant becomes a parameter slot (marker in
// program.spec, kind-4 reference, shape.params); the pipeline then does not
// depend on the shape, so the bundle holds no kind-1 reference.
TEST(ParameterBuffer, SymbolicSizesBecomeParameterSlotsInTheBundle) {
  SymContext ctx({{"N", 1, 8, 1}});
  Program p = LowerRelu(&ctx, 8, true);
  p.features.insert("dynamic_shapes");  // as the driver marks a program compiled with symbols
  SymScope scope(&ctx);
  StatusOr<MemoryPlan> plan = PlanMemory(p);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  oinf::Writer w;
  Status st = BuildBundle(p, *plan, {"relu", 13, "test"}, &w);
  ASSERT_TRUE(st.ok()) << st.ToString();
  StatusOr<std::vector<uint8_t>> bytes = w.Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  StatusOr<oinf::File> f = oinf::File::FromMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const oinf::Metadata* feat = f->FindMetadata("bundle.features");
  ASSERT_NE(feat, nullptr);
  const std::string features(reinterpret_cast<const char*>(feat->ndarray.data.data), feat->ndarray.data.size);
  EXPECT_NE(features.find("parameter_buffer"), std::string::npos) << features;
  EXPECT_NE(features.find("dynamic_shapes"), std::string::npos) << features;
  const oinf::Metadata* np = f->FindMetadata("shape.params");
  ASSERT_NE(np, nullptr);
  uint32_t params = 0;
  ASSERT_TRUE(np->GetScalar(&params));
  EXPECT_EQ(params, 1u);  // the element count 5 N, shared by every row of the dispatch
  const oinf::Tensor* refs = f->FindTensor("shape.refs");
  ASSERT_NE(refs, nullptr);
  std::vector<uint32_t> r(refs->numel);
  memcpy(r.data(), refs->data.data, 4 * r.size());
  int kind4 = 0;
  for (size_t i = 0; i + 3 < r.size(); i += 4) {
    EXPECT_NE(r[i], 1u) << "row " << i / 4 << " specializes a pipeline per shape";
    kind4 += r[i] == 4;
  }
  EXPECT_EQ(kind4, 1);
  const oinf::Tensor* spec = f->FindTensor("program.spec");
  ASSERT_NE(spec, nullptr);
  std::vector<uint32_t> sv(spec->numel);
  memcpy(sv.data(), spec->data.data, 4 * sv.size());
  EXPECT_NE(std::find(sv.begin(), sv.end(), kParamMarker | 0u), sv.end());
}

}  // namespace
}  // namespace oaaxvk::toolchain

namespace oaaxvk::toolchain {
namespace {

using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;

// A value symbol context: shape[0], shape[1] of a Reshape target in [-1, 6].
SymContext ReshapeValueContext() {
  std::vector<Symbol> syms;
  for (int j = 0; j < 2; ++j) {
    Symbol s("shape[" + std::to_string(j) + "]", -1, 6, 1);
    s.value_input = "shape";
    s.value_element = j;
    syms.push_back(s);
  }
  return SymContext(syms);
}

// The output dims and the guards of Reshape([2, 3] by a run-time shape), evaluated at `vals`.
struct Evaluated {
  std::vector<int64_t> dims;
  std::vector<std::string> failed;  // texts of the guards that are 0
};
Evaluated EvalReshape(const SymContext& ctx, const Shape& ys, const std::vector<int64_t>& vals) {
  Evaluated e;
  for (const Dim& d : ys) {
    StatusOr<int64_t> v = d.is_symbolic() ? ctx.Eval(d.expr(), vals) : StatusOr<int64_t>(d.value());
    e.dims.push_back(v.ok() ? *v : -999);
  }
  for (const SymGuard& g : ctx.guards()) {
    StatusOr<int64_t> v = ctx.Eval(g.expr, vals);
    if (!v.ok() || *v == 0) e.failed.push_back(g.text);
  }
  return e;
}

TEST(ValueSymbols, ReshapeByARunTimeShapeIsAnExpressionWithGuards) {
  SymContext ctx = ReshapeValueContext();
  SymScope scope(&ctx);
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 3});
  Tensor t = MakeConstDims("shape", {2}, {Dim(6, ctx.SymbolNode(0)), Dim(6, ctx.SymbolNode(1))});
  g.tensors["shape"] = t;
  AddNode(g, "Reshape", "r", {"x", "shape"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(InferShapes(g).ok());
  const Shape ys = g.FindTensor("y")->shape;
  ASSERT_EQ(ys.size(), 2u);
  EXPECT_TRUE(DependsOnValue(ys[0]));
  // Valid targets: plain, -1 inferred, 0 copying the input dimension.
  for (const auto& [vals, want] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{3, 2}, {3, 2}}, {{-1, 1}, {6, 1}}, {{1, -1}, {1, 6}}, {{0, -1}, {2, 3}}, {{-1, 3}, {2, 3}}, {{6, 1}, {6, 1}}}) {
    Evaluated e = EvalReshape(ctx, ys, vals);
    EXPECT_EQ(e.dims, want) << vals[0] << "," << vals[1];
    EXPECT_TRUE(e.failed.empty()) << vals[0] << "," << vals[1] << ": " << e.failed.at(0);
  }
  // Invalid targets break a guard whose text names the node and the rule.
  auto failed = [&](const std::vector<int64_t>& v) {
    std::string all;
    for (const std::string& s : EvalReshape(ctx, ys, v).failed) all += s + "\n";
    return all;
  };
  EXPECT_NE(failed({4, 4}).find("Reshape 'r': the target shape must hold the input's 6 elements"), std::string::npos);
  EXPECT_NE(failed({-1, -1}).find("more than one -1"), std::string::npos);
  EXPECT_NE(failed({-1, 4}).find("must hold the input's 6 elements"), std::string::npos);  // 6 / 4 is not whole
  // A run-time value may not become data or a kernel size the lowering did not derive.
  // (Softmax: an elementwise activation would be one flat dispatch over the
  // element count's expression, which is allowed.)
  AddNode(g, "Softmax", "softmax", {"y"}, {"z"});
  g.outputs[0] = {"z", "z"};
  ASSERT_TRUE(InferShapes(g).ok());
  StatusOr<Program> p = Lower(g);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("computed from a run-time input value"), std::string::npos) << p.status().ToString();
}

// A Reshape whose target holds a count read back from the device (a
// decided symbol, which may be 0) and a -1: the -1 is the exact quotient of
// the input's sizes by the other entries, so the output's size stays
// bounded by its value at the largest count.
TEST(ValueSymbols, ReshapeMinusOneBesideADecidedCountIsTheExactQuotient) {
  Symbol k("k", 0, 5000, 1);
  k.decided = true;
  SymContext ctx({k});
  SymScope scope(&ctx);
  const Dim n = Min(Dim(5000, ctx.SymbolNode(0)), 1000);
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {n, Dim(364)});
  g.tensors["shape"] = MakeConstDims("shape", {3}, {n, Dim(-1), Dim(4)});
  AddNode(g, "Reshape", "r", {"x", "shape"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(InferShapes(g).ok());
  const Shape ys = g.FindTensor("y")->shape;
  ASSERT_EQ(ys.size(), 3u);
  EXPECT_EQ(ys[0].expr(), n.expr());
  EXPECT_FALSE(ys[1].is_symbolic());
  EXPECT_EQ(ys[1].value(), 91);
  EXPECT_EQ(ctx.UpperBound((ys[0] * ys[1] * ys[2]).expr()), 1000 * 364);
  for (int64_t kv : {0, 1, 1000, 5000}) {
    Evaluated e = EvalReshape(ctx, ys, {kv});
    EXPECT_EQ(e.dims, (std::vector<int64_t>{std::min<int64_t>(kv, 1000), 91, 4})) << kv;
    EXPECT_TRUE(e.failed.empty()) << kv << ": " << e.failed.at(0);
  }
}

// ScatterElements whose indices and updates are sized by an extent read
// back (which may be 0): lowered at the empty extent too, the scatter's
// rows an expression of the extent (no division by it).
TEST(ValueSymbols, ScatterElementsTakesIndicesEmptiedByAnExtentReadBack) {
  Symbol k("k", 0, 8, 1);
  k.decided = true;
  SymContext ctx({k});
  SymScope scope(&ctx);
  for (int64_t kv : {int64_t{0}, int64_t{8}}) {
    const Dim n(kv, ctx.SymbolNode(0));
    Graph g;
    g.opset = 13;
    AddInput(g, "x", {Dim(3), Dim(4)});
    AddInput(g, "i", {Dim(3), n});
    g.tensors["i"].dtype = DType::kInt64;
    AddInput(g, "u", {Dim(3), n});
    AddNode(g, "ScatterElements", "s", {"x", "i", "u"}, {"y"}).SetInt("axis", 1);
    AddOutput(g, "y");
    ASSERT_TRUE(InferShapes(g).ok());
    StatusOr<Program> p = testing::FoldAndLower(g);
    ASSERT_TRUE(p.ok()) << kv << ": " << p.status().ToString();
    const Dispatch* sc = nullptr;
    for (const Dispatch& d : p->dispatches)
      if (d.kernel == "scatter_elements") sc = &d;
    ASSERT_NE(sc, nullptr);
    EXPECT_EQ(sc->spec.at(0).value(), 3) << kv;  // one row per index line off the axis
  }
}

// Pad with run-time pads (feature value_symbols) at a realistic size: the
// pad kernel's group count follows the pads (1 x 3 x 224 x 224 padded by up
// to 3 on each side spans many 256-wide groups), so it is an expression of
// them, not the count at the conversion's placeholder values.
TEST(ValueSymbols, PadGroupCountFollowsRunTimePads) {
  std::vector<Symbol> syms;
  for (int j = 0; j < 8; ++j) {
    Symbol s("pads[" + std::to_string(j) + "]", 0, j % 4 == 0 ? 0 : 3, 1);
    s.value_input = "pads";
    s.value_element = j;
    s.sampled = true;
    syms.push_back(s);
  }
  SymContext ctx(syms);
  SymScope scope(&ctx);
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {1, 3, 224, 224});
  std::vector<Dim> pads;
  for (int j = 0; j < 8; ++j) pads.push_back(Dim(syms[j].max, ctx.SymbolNode(j)));
  g.tensors["pads"] = MakeConstDims("pads", {8}, pads);
  AddNode(g, "Pad", "pad", {"x", "pads"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(InferShapes(g).ok());
  StatusOr<Program> p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const Dispatch* pad = nullptr;
  for (const Dispatch& d : p->dispatches)
    if (d.kernel == "pad") pad = &d;
  ASSERT_NE(pad, nullptr);
  ASSERT_TRUE(pad->groups[0].is_symbolic());
  for (const std::vector<int64_t>& v : {std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 0},
                                        std::vector<int64_t>{0, 1, 2, 3, 0, 3, 2, 1}}) {
    const int64_t n = (1 + v[0] + v[4]) * (3 + v[1] + v[5]) * (224 + v[2] + v[6]) * (224 + v[3] + v[7]);
    EXPECT_EQ(*ctx.Eval(pad->groups[0].expr(), v), (n + 255) / 256) << n;
  }
}

TEST(ValueSymbols, UnsqueezeAndSqueezeAxesAtRunTime) {
  std::vector<Symbol> syms;
  Symbol a("axes", -3, 2, 1);
  a.value_input = "axes";
  a.value_element = 0;
  syms.push_back(a);
  SymContext ctx(syms);
  SymScope scope(&ctx);
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {3, 4});
  g.tensors["axes"] = MakeConstDims("axes", {1}, {Dim(2, ctx.SymbolNode(0))});
  AddNode(g, "Unsqueeze", "u", {"x", "axes"}, {"y"});
  AddOutput(g, "y");
  ASSERT_TRUE(InferShapes(g).ok());
  const Shape ys = g.FindTensor("y")->shape;
  ASSERT_EQ(ys.size(), 3u);
  const std::vector<std::pair<int64_t, std::vector<int64_t>>> cases = {
      {0, {1, 3, 4}}, {1, {3, 1, 4}}, {2, {3, 4, 1}}, {-1, {3, 4, 1}}, {-3, {1, 3, 4}}};
  for (const auto& [axis, want] : cases) {
    std::vector<int64_t> got;
    for (const Dim& d : ys) got.push_back(d.is_symbolic() ? *ctx.Eval(d.expr(), {axis}) : d.value());
    EXPECT_EQ(got, want) << "axis " << axis;
  }
}

TEST(ValueSymbols, FoundOnlyForInputsUsedAtRunTimeCapablePositions) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {2, 3, 4});
  for (const char* n : {"shape", "axis", "k", "pads"}) {
    Tensor t;
    t.name = n;
    t.dtype = DType::kInt64;
    t.shape = std::string(n) == "shape" ? Shape{3} : std::string(n) == "pads" ? Shape{6} : Shape{1};
    t.has_shape = true;
    g.tensors[n] = t;
    g.inputs.push_back({n, n});
  }
  AddNode(g, "Reshape", "r", {"x", "shape"}, {"y"});
  AddNode(g, "CumSum", "c", {"x", "axis"}, {"c_out"});
  AddNode(g, "TopK", "t", {"x", "k"}, {"tv", "ti"}).SetInt("axis", 1);
  AddNode(g, "Pad", "p", {"x", "pads"}, {"pd"});
  std::vector<Symbol> s = FindValueSymbols(g, ModelConfig{});
  std::vector<std::string> names;
  for (const Symbol& y : s) names.push_back(y.name + " [" + std::to_string(y.min) + ", " + std::to_string(y.max) + "]");
  // Pad pads is not read at run time (its input stays a conversion error).
  EXPECT_EQ(names, (std::vector<std::string>{"shape[0] [-1, 24]", "shape[1] [-1, 24]", "shape[2] [-1, 24]",
                                             "axis[0] [-3, 2]", "k[0] [1, 3]"}));
  // Bound by config.json input_values: not a value symbol.
  ModelConfig c;
  c.input_values["shape"] = {};
  for (const Symbol& y : FindValueSymbols(g, c)) EXPECT_NE(y.value_input, "shape");
}

}  // namespace
}  // namespace oaaxvk::toolchain
