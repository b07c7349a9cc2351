// Long axes within the per-invocation loop budget (lower/loop_budget.h): the
// lowerings of CumSum, TopK, NonZero, Compress and Unique split their work so that no
// invocation loops more than kLoopBudget times whatever the axis length, the
// CPU-class Gemm / Conv rows are left out where their K loop would exceed it,
// and the operators whose loops no split bounds are refused at conversion
// naming the node and the budget. The kernels themselves run on lavapipe and
// SwiftShader in ops.long_scans.* (long_scans.py).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/lower/loop_budget.h"
#include "toolchain/lower/lower.h"
#include "toolchain/passes/passes.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

std::vector<const Dispatch*> Dispatches(const Program& p, const std::string& kernel) {
  std::vector<const Dispatch*> r;
  for (const Dispatch& d : p.dispatches)
    if (d.kernel == kernel) r.push_back(&d);
  return r;
}
int64_t Spec(const Dispatch& d, size_t k) { return d.spec.at(k).value(); }
int64_t Groups(const Dispatch& d) { return d.groups[0].value() * d.groups[1].value() * d.groups[2].value(); }
bool Contains(const Status& s, const std::string& what) { return s.message().find(what) != std::string::npos; }

void AddTypedInput(Graph& g, const std::string& name, DType dt, const Shape& s) {
  Tensor t;
  t.name = name; t.dtype = dt; t.shape = s; t.has_shape = true;
  g.tensors[name] = t;
  g.inputs.push_back({name, name});
}

StatusOr<Program> Convert(Graph& g) {
  auto passes = RunDefaultPipeline(g);
  if (!passes.ok()) return passes.status();
  return Lower(g);
}

TEST(LongScans, CumSumScansLongRowsInBudgetSizedChunksAndSegments) {
  for (int64_t len : {300000, 2000000, 4200000}) {
    Graph g;
    g.opset = 14;
    AddInput(g, "x", {3, len});
    g.tensors["axis"] = MakeConstI64("axis", {}, {1});
    AddNode(g, "CumSum", "cs", {"x", "axis"}, {"y"});
    AddOutput(g, "y");
    auto p = Convert(g);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_TRUE(Dispatches(*p, "cumsum").empty()) << len;
    const auto rows = Dispatches(*p, "cumsum_rows");
    ASSERT_FALSE(rows.empty()) << len;
    int64_t covered = 0;
    for (const Dispatch* d : rows) {
      const int64_t chunk = Spec(*d, 7);
      EXPECT_LE(2 * chunk + 8, kLoopBudget) << len;  // per invocation: two passes over its chunk, the 8-step scan
      EXPECT_EQ(Spec(*d, 6), covered) << len;        // segments in order, back to back
      EXPECT_EQ(Groups(*d), 3) << len;               // one workgroup per row
      covered += 256 * chunk;
    }
    EXPECT_GE(covered, len);
    EXPECT_LT(covered - 256 * Spec(*rows.back(), 7), len);  // no empty segment
  }
  // Short rows keep one invocation per row.
  Graph g;
  g.opset = 14;
  AddInput(g, "x", {1000, 200});
  g.tensors["axis"] = MakeConstI64("axis", {}, {1});
  AddNode(g, "CumSum", "cs", {"x", "axis"}, {"y"});
  AddOutput(g, "y");
  auto p = Convert(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(Dispatches(*p, "cumsum").size(), 1u);
  EXPECT_TRUE(Dispatches(*p, "cumsum_rows").empty());
}

TEST(LongScans, TopKSelectsLongRowsByRadixPasses) {
  for (auto [len, k] : {std::pair<int64_t, int64_t>{300000, 5000}, {2000000, 5000}, {300000, 20000}}) {
    Graph g;
    g.opset = 11;
    AddInput(g, "x", {2, len});
    AddConstI64(g, "k", {k});
    AddNode(g, "TopK", "tk", {"x", "k"}, {"v", "i"});
    AddOutput(g, "v");
    AddOutput(g, "i");
    auto p = Convert(g);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_TRUE(Dispatches(*p, "topk").empty());
    const auto d = Dispatches(*p, "topk_select");
    // init, (histogram, select) for 4 value digits and 3 index digits
    // (len <= 2^24), gather, rank, write.
    ASSERT_EQ(d.size(), 1u + 2u * 7u + 3u) << len;
    std::vector<int64_t> phases;
    for (const Dispatch* x : d) phases.push_back(Spec(*x, 6));
    EXPECT_EQ(phases, (std::vector<int64_t>{0, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 3, 4, 5}));
    const int64_t block = Spec(*d[0], 10), blocks = Spec(*d[0], 11);
    EXPECT_LE(block, kLoopBudget);  // rank: one candidate against a block of candidates
    EXPECT_GE(block * blocks, k);
    EXPECT_EQ(Spec(*d[0], 8), k);  // KMAX
    EXPECT_EQ(Spec(*d[0], 9), 3);  // index digits (len <= 2^24)
    // Init carries ROWS, L and K; the later phases read them from the state
    // and hold 0 there, and every dispatch of one phase has the same values
    // whatever its digit: one pipeline per phase.
    EXPECT_EQ(Spec(*d[0], 0), 2);
    EXPECT_EQ(Spec(*d[0], 1), len);
    EXPECT_EQ(Spec(*d[0], 3), k);
    for (size_t j = 1; j < d.size(); ++j) {
      for (size_t c : {0, 1, 3}) EXPECT_EQ(Spec(*d[j], c), 0) << "dispatch " << j << " constant " << c;
      for (size_t m = 1; m < j; ++m)
        if (Spec(*d[m], 6) == Spec(*d[j], 6)) {
          ASSERT_EQ(d[m]->spec.size(), d[j]->spec.size());
          for (size_t c = 0; c < d[j]->spec.size(); ++c)
            EXPECT_EQ(Spec(*d[m], c), Spec(*d[j], c)) << "dispatches " << m << " and " << j << " constant " << c;
        }
    }
    ASSERT_EQ(d[0]->bindings.size(), 7u);  // X, Values, Indices, four scratch values
    for (size_t b = 1; b < 7; ++b) EXPECT_TRUE(d[0]->bindings[b].written);
  }
  // Short rows keep the rank kernel (at most L iterations per invocation).
  Graph g;
  g.opset = 11;
  AddInput(g, "x", {5, 1000});
  AddConstI64(g, "k", {10});
  AddNode(g, "TopK", "tk", {"x", "k"}, {"v", "i"});
  AddOutput(g, "v");
  AddOutput(g, "i");
  auto p = Convert(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(Dispatches(*p, "topk").size(), 1u);
}

// A detector's TopK per class runs on an extent only the device knows (a
// decided symbol, one per class): the sizes are parameter-buffer slots,
// different for each TopK. Only the init dispatches carry them; every later
// dispatch of the two TopKs has the same static values phase by phase (one
// pipeline per phase for both).
TEST(LongScans, TopKSelectsOfDifferentExtentsShareTheirLaterPhases) {
  Symbol a("a", 0, 5000, 1), b("b", 0, 5000, 1);
  a.decided = b.decided = true;
  SymContext ctx({a, b});
  SymScope scope(&ctx);
  Graph g;
  g.opset = 11;
  for (int s = 0; s < 2; ++s) {
    const std::string i = std::to_string(s);
    AddInput(g, "x" + i, {Dim(5000, ctx.SymbolNode(s))});
    AddConstI64(g, "k" + i, {400});
    AddNode(g, "TopK", "tk" + i, {"x" + i, "k" + i}, {"v" + i, "i" + i});
    AddOutput(g, "v" + i);
    AddOutput(g, "i" + i);
  }
  ASSERT_TRUE(InferShapes(g).ok());
  StatusOr<Program> p = FoldAndLower(g);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const auto d = Dispatches(*p, "topk_select");
  // init, (histogram, select) for 4 value digits and 2 index digits, gather, rank, write; per TopK.
  ASSERT_EQ(d.size(), 2u * (1u + 2u * 6u + 3u));
  const size_t per = d.size() / 2;
  EXPECT_TRUE(d[0]->spec.at(1).is_symbolic());  // L
  EXPECT_TRUE(d[per]->spec.at(1).is_symbolic());
  EXPECT_NE(d[0]->spec.at(1).expr(), d[per]->spec.at(1).expr());
  for (size_t j = 1; j < per; ++j) {
    ASSERT_EQ(d[j]->spec.size(), d[per + j]->spec.size());
    for (size_t c = 0; c < d[j]->spec.size(); ++c) {
      ASSERT_FALSE(d[j]->spec[c].is_symbolic()) << "dispatch " << j << " constant " << c;
      ASSERT_FALSE(d[per + j]->spec[c].is_symbolic()) << "dispatch " << per + j << " constant " << c;
      EXPECT_EQ(Spec(*d[j], c), Spec(*d[per + j], c)) << "dispatch " << j << " constant " << c;
    }
  }
}

TEST(LongScans, NonZeroAndCompressCountInSegments) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {9000000});
  AddNode(g, "NonZero", "nz", {"x"}, {"y"});
  AddOutput(g, "y");
  auto p = Convert(g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const auto nz = Dispatches(*p, "nonzero");
  ASSERT_GT(nz.size(), 1u);
  int64_t covered = 0;
  for (const Dispatch* d : nz) {
    const int64_t chunk = Spec(*d, 10);
    EXPECT_LE(chunk * (2 + 1) + 256, kLoopBudget);  // count, scan, write (rank 1)
    EXPECT_EQ(Spec(*d, 9), covered);
    EXPECT_EQ(Groups(*d), 1);
    covered += 256 * chunk;
  }
  EXPECT_GE(covered, 9000000);

  Graph c;
  c.opset = 11;
  AddInput(c, "x", {4, 3000000, 2});
  AddTypedInput(c, "cond", DType::kBool, {3000000});
  Node& n = AddNode(c, "Compress", "cp", {"x", "cond"}, {"y"});
  n.SetInt("axis", 1);
  AddOutput(c, "y");
  p = Convert(c);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const auto slots = Dispatches(*p, "compress");
  ASSERT_EQ(slots.size(), 2u);  // 3,000,000 positions in segments of 256 chunks
  for (const Dispatch* d : slots) EXPECT_LE(2 * Spec(*d, 5) + 256, kLoopBudget);
  const auto copy = Dispatches(*p, "compress_copy");
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_GE(Groups(*copy[0]) * 256, 4 * 3000000 * 2);  // one invocation per element, no loop
  EXPECT_EQ(copy[0]->spec.size(), 4u);                  // OUTER, D, INNER, COND_LEN: no chunk, no segment
}

TEST(LongScans, UniqueSortsLongInputsInMergePasses) {
  for (int64_t len : {200, 1000003}) {
    Graph g;
    g.opset = 11;
    AddInput(g, "x", {len});
    AddNode(g, "Unique", "uq", {"x"}, {"y"});
    AddOutput(g, "y");
    auto p = Convert(g);
    ASSERT_TRUE(p.ok()) << p.status().message();
    if (len <= 256) {  // the one-workgroup kernel: 3 * ceil(L / 256) * L + 256 iterations
      EXPECT_EQ(Dispatches(*p, "unique").size(), 1u);
      EXPECT_TRUE(Dispatches(*p, "unique_sort").empty());
      continue;
    }
    EXPECT_TRUE(Dispatches(*p, "unique").empty());
    // Merge passes of widths 1, 2, 4, ... up to the first covering L, the
    // halves of POS alternating, each invocation within the budget and all
    // of them together covering every output position of every pair.
    const auto sort = Dispatches(*p, "unique_sort");
    ASSERT_EQ(sort.size(), 20u);  // 2^20 >= 1,000,003
    for (size_t k = 0; k < sort.size(); ++k) {
      const Dispatch& d = *sort[k];
      const int64_t width = Spec(d, 4), chunk = Spec(d, 6);
      EXPECT_EQ(width, int64_t{1} << k);
      EXPECT_EQ(Spec(d, 5), static_cast<int64_t>((k + 1) % 2));
      EXPECT_LE(static_cast<int64_t>(sort.size()) + chunk + 2, kLoopBudget);
      const int64_t pairs = (len + 2 * width - 1) / (2 * width);
      EXPECT_GE(Groups(d) * 256, pairs * ((2 * width + chunk - 1) / chunk)) << k;
    }
    const auto flags = Dispatches(*p, "unique_flags"), emit = Dispatches(*p, "unique_emit");
    ASSERT_EQ(flags.size(), 1u);
    ASSERT_EQ(emit.size(), 1u);
    EXPECT_EQ(Spec(*flags[0], 4), 1);  // the sorted permutation ends in POS's second half
    EXPECT_EQ(Spec(*emit[0], 4), 1);
    EXPECT_GE(Groups(*emit[0]) * 256, len);  // one invocation per slice
    int64_t covered = 0;
    for (const Dispatch* d : Dispatches(*p, "unique_scan")) {  // sorted: the ranks scan only
      EXPECT_LE(2 * Spec(*d, 2) + 256, kLoopBudget);
      EXPECT_EQ(Spec(*d, 1), covered);
      EXPECT_EQ(Groups(*d), 1);
      covered += 256 * Spec(*d, 2);
    }
    EXPECT_GE(covered, len);
  }
}

TEST(LongScans, LoopsNoSplitBoundsAreRefusedNamingTheBudget) {
  const std::string budget = std::to_string(kLoopBudget);
  Graph m;
  m.opset = 13;
  AddInput(m, "a", {1, 300000});
  AddInput(m, "b", {300000, 3});
  AddNode(m, "MatMul", "mm", {"a", "b"}, {"y"});
  AddOutput(m, "y");
  auto p = Convert(m);
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(Contains(p.status(), "node 'mm' (MatMul): K = 300000 needs 18750 loop iterations")) << p.status().message();
  EXPECT_TRUE(Contains(p.status(), "budget of " + budget)) << p.status().message();

  Graph u;  // Unique compares whole slices: 20,000 elements each are too many
  u.opset = 11;
  AddInput(u, "x", {3000, 20000});
  AddNode(u, "Unique", "uq", {"x"}, {"y"}).SetInt("axis", 0);
  AddOutput(u, "y");
  p = Convert(u);
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(Contains(p.status(), "node 'uq' (Unique): slices of 20000 elements")) << p.status().message();
  EXPECT_TRUE(Contains(p.status(), "budget of " + budget)) << p.status().message();

  Graph c;
  c.opset = 11;
  AddInput(c, "x", {1, 30000, 5, 5});
  AddConst(c, "w", {1, 30000, 3, 3});
  AddNode(c, "Conv", "conv", {"x", "w"}, {"y"});
  AddOutput(c, "y");
  p = Convert(c);
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(Contains(p.status(), "node 'conv' (Conv): C/group * KH * KW = 270000")) << p.status().message();

  Graph t;
  t.opset = 11;
  AddInput(t, "x", {1, 20000, 4, 4});
  AddConst(t, "w", {20000, 1, 3, 3});
  AddNode(t, "ConvTranspose", "ct", {"x", "w"}, {"y"});
  AddOutput(t, "y");
  p = Convert(t);
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(Contains(p.status(), "node 'ct' (ConvTranspose): each output needs 180009 loop iterations"))
      << p.status().message();
}

TEST(LongScans, GemmCpuRowOnlyWithinTheBudget) {
  for (auto [k, cpu] : {std::pair<int64_t, bool>{4096, true}, {100000, false}}) {
    Graph g;
    g.opset = 13;
    AddInput(g, "a", {16, k});
    AddInput(g, "b", {k, 16});
    AddNode(g, "MatMul", "mm", {"a", "b"}, {"y"});
    AddOutput(g, "y");
    auto p = Convert(g);
    ASSERT_TRUE(p.ok()) << p.status().message();
    const auto d = Dispatches(*p, "gemm");
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(!d[0]->cpu_kernel.empty(), cpu) << k;  // gemm_cpu walks K 4 at a time
  }
}

}  // namespace
}  // namespace oaaxvk::toolchain
