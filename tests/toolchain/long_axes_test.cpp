// Reductions, ArgMax / ArgMin and the softmax family on axes longer than one
// invocation may loop (loop_budget.h): the lowering splits them into stages
// and chooses only kernels whose loops fit. Results on the device are
// checked by ops.long_axes.reductions.<driver> (long_axes.py).
#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/lower/kernels.h"
#include "toolchain/lower/split_plan.h"
#include "toolchain/lower/lower.h"
#include "toolchain/passes/passes.h"

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

int64_t CeilDivI64(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The loop iterations one invocation of `kernel` runs with specialization
// values `s`, read off the shaders' loops (shaders/*.comp, *.glsl); -1 for a
// kernel without a loop over an axis.
int64_t Iterations(const std::string& kernel, const std::vector<Dim>& s) {
  auto v = [&s](size_t i) { return static_cast<int64_t>(s.at(i).value()); };
  if (kernel == "reduce") return CeilDivI64(v(2), v(27));     // RCOUNT / PARTS
  if (kernel == "argreduce") return CeilDivI64(v(1), v(6));   // K / PARTS
  if (kernel == "reduce_mean" || kernel == "reduce_mean_cpu" || kernel == "reduce_mean_sg")
    return CeilDivI64(v(1), 64) + 64;
  if (kernel == "reduce_mean_rows_cpu") return v(1) / 4 + 3;
  if (kernel == "softmax" || kernel == "softmax_sg") return 2 * CeilDivI64(v(1), 64) + 64 + (v(3) == 2 ? v(1) : 0);
  if (kernel == "softmax_rows_cpu") return (v(3) == 2 ? 3 : 2) * v(1);
  return -1;
}

// Every row of every dispatch table keeps its loops within the budget.
void ExpectWithinBudget(const Program& p) {
  for (const Dispatch& d : p.dispatches) {
    EXPECT_LE(Iterations(d.kernel, d.spec), kLoopBudget) << d.node << " " << d.kernel;
    if (!d.cpu_kernel.empty())
      EXPECT_LE(Iterations(d.cpu_kernel, d.cpu_spec), kLoopBudget) << d.node << " " << d.cpu_kernel;
    if (!d.gpu_kernel.empty())
      EXPECT_LE(Iterations(d.gpu_kernel, d.gpu_spec), kLoopBudget) << d.node << " " << d.gpu_kernel;
  }
}

StatusOr<Program> LowerOne(const std::string& op, const Shape& shape, const std::vector<int64_t>& axes,
                           int64_t axis = -1) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", shape);
  Node& n = AddNode(g, op, "r", {"x"}, {"y"});
  if (op == "ArgMax" || op == "ArgMin" || op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
    n.SetInt("axis", axis);
  } else if (op != "GlobalAveragePool") {
    n.SetInts("axes", axes);  // an attribute up to opset 17 (ReduceSum: opset 11 here)
    n.SetInt("keepdims", 0);
  }
  if (op == "ReduceSum") g.opset = 11;
  AddOutput(g, "y");
  StatusOr<Program> p = FoldAndLower(g);
  if (p.ok()) ExpectWithinBudget(*p);
  return p;
}

TEST(LongAxes, BudgetIsWellBelowTheLowestDriverLimit) {
  EXPECT_LT(kLoopBudget * 3, 65535);  // lavapipe's limit, docs/toolchain.md "Loop budget"
  EXPECT_LE(kSplitChunk, kLoopBudget);
}

TEST(LongAxes, ShortReductionsKeepOneDispatch) {
  StatusOr<Program> p = LowerOne("ReduceSum", {2, kLoopBudget}, {1});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->dispatches.size(), 1u);
  const Dispatch& d = p->dispatches[0];
  EXPECT_EQ(d.spec.at(2), kLoopBudget);  // RCOUNT
  EXPECT_EQ(d.spec.at(27), 1);                    // PARTS
  EXPECT_EQ(d.spec.at(28), 0);                    // IN_PARTIALS
  EXPECT_EQ(d.spec.at(29), 0);                    // OUT_PARTIALS
}

TEST(LongAxes, ReduceSplitsIntoStagesOfPartials) {
  StatusOr<Program> p = LowerOne("ReduceSum", {3, 300000}, {1});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->dispatches.size(), 2u);
  const Dispatch& a = p->dispatches[0];
  const Dispatch& b = p->dispatches[1];
  ASSERT_EQ(a.spec.size(), FindKernel("reduce")->spec_constants);
  EXPECT_EQ(a.spec[0], 3);       // outputs
  EXPECT_EQ(a.spec[2], 300000);  // reduced per output
  EXPECT_EQ(a.spec[27], 74);     // ceil(300000 / 4096) parts
  EXPECT_EQ(a.spec[28], 0);
  EXPECT_EQ(a.spec[29], 1);      // writes partials
  EXPECT_EQ(a.groups[0], CeilDivI64(3 * 74, 256));
  // The partials: a scratch value of 3 x 74 floats, read by the second stage
  // as [3, 74] (kept slot 5: 3 with stride 74; reduced slot 5: 74, stride 1).
  const int scratch = a.bindings.at(1).value;
  EXPECT_EQ(b.bindings.at(0).value, scratch);
  EXPECT_EQ(p->values.at(scratch).bytes, 3 * 74 * 4);
  EXPECT_EQ(p->values.at(scratch).kind, BufferKind::kArena);
  EXPECT_EQ(b.spec[0], 3);
  EXPECT_EQ(b.spec[2], 74);
  EXPECT_EQ(b.spec[8], 3);
  EXPECT_EQ(b.spec[14], 74);
  EXPECT_EQ(b.spec[20], 74);
  EXPECT_EQ(b.spec[26], 1);
  EXPECT_EQ(b.spec[27], 1);
  EXPECT_EQ(b.spec[28], 1);       // reads partials
  EXPECT_EQ(b.spec[29], 0);       // writes the result
  EXPECT_EQ(b.spec[30], 300000);  // the whole count (ReduceMean's divisor)

  // Log-sum-exp partials are (m, s) pairs; 20 million elements take three stages.
  p = LowerOne("ReduceLogSumExp", {1, 20000000}, {1});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->dispatches.size(), 3u);
  EXPECT_EQ(p->dispatches[0].spec[27], 4883);
  EXPECT_EQ(p->dispatches[1].spec[2], 4883);
  EXPECT_EQ(p->dispatches[1].spec[27], 2);
  EXPECT_EQ(p->dispatches[2].spec[2], 2);
  EXPECT_EQ(p->values.at(p->dispatches[0].bindings[1].value).bytes, 4883 * 2 * 4);
  EXPECT_EQ(p->values.at(p->dispatches[1].bindings[1].value).bytes, 2 * 2 * 4);
}

TEST(LongAxes, StridedAndMultiAxisReductionsSplitTheReducedCount) {
  // Over axes [0, 2] of [300, 4, 400]: 120000 elements per output, strided.
  StatusOr<Program> p = LowerOne("ReduceMax", {300, 4, 400}, {0, 2});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->dispatches.size(), 2u);
  EXPECT_EQ(p->dispatches[0].spec[2], 120000);
  EXPECT_EQ(p->dispatches[0].spec[27], 30);
  EXPECT_EQ(p->dispatches[0].spec[25], 1600);  // RS4: axis 0's stride
  EXPECT_EQ(p->dispatches[0].spec[26], 1);     // RS5: axis 2's stride
}

TEST(LongAxes, ArgMaxSplitsIntoValueIndexPairs) {
  StatusOr<Program> p = LowerOne("ArgMax", {5, 100000, 2}, {}, 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<const Dispatch*> arg;
  for (const Dispatch& d : p->dispatches)
    if (d.kernel == "argreduce") arg.push_back(&d);
  ASSERT_EQ(arg.size(), 2u);
  ASSERT_EQ(arg[0]->spec.size(), FindKernel("argreduce")->spec_constants);
  // N = 10 rows, K = 100000, INNER = 2, max, first index, float; 25 parts.
  EXPECT_EQ(DimValues(arg[0]->spec), (std::vector<int64_t>{10, 100000, 2, 1, 0, 1, 25, 0, 1}));
  EXPECT_EQ(DimValues(arg[1]->spec), (std::vector<int64_t>{10, 25, 1, 1, 0, 1, 1, 1, 0}));
  EXPECT_EQ(p->values.at(arg[0]->bindings[1].value).bytes, 10 * 25 * 2 * 4);
  EXPECT_EQ(arg[1]->bindings[0].value, arg[0]->bindings[1].value);
}

TEST(LongAxes, LongSoftmaxRowsTakeStatisticsThenApply) {
  // 300,000 still fits the softmax kernel (2 x 4688 + 64 iterations).
  StatusOr<Program> p = LowerOne("Softmax", {1, 300000}, {}, 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->dispatches.size(), 1u);
  EXPECT_EQ(p->dispatches[0].kernel, "softmax");

  for (const char* op : {"Softmax", "LogSoftmax"}) {
    p = LowerOne(op, {1, 2000000}, {}, 1);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    ASSERT_EQ(p->dispatches.size(), 3u) << op;
    EXPECT_EQ(p->dispatches[0].kernel, "reduce");
    EXPECT_EQ(p->dispatches[0].spec[1], 8);  // log-sum-exp
    EXPECT_EQ(p->dispatches[1].spec[29], 1);  // the last stage writes the (m, s) pair
    const Dispatch& apply = p->dispatches[2];
    EXPECT_EQ(apply.kernel, "softmax_apply");
    EXPECT_EQ(apply.bindings.at(1).value, p->dispatches[1].bindings.at(1).value);
    EXPECT_EQ(p->values.at(apply.bindings[1].value).bytes, 2 * 4);
    EXPECT_EQ(DimValues(apply.spec), (std::vector<int64_t>{2000000, 2000000, 1, std::string(op) == "Softmax" ? 0 : 1}));
    EXPECT_EQ(apply.groups[0], CeilDivI64(2000000, 256));
  }
  // Hardmax's first-maximum scan runs in one invocation: past the budget it
  // takes the split argreduce.
  p = LowerOne("Hardmax", {2, 20000, 3}, {}, 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->dispatches.size(), 3u);
  EXPECT_EQ(p->dispatches[0].kernel, "argreduce");
  EXPECT_EQ(DimValues(p->dispatches[0].spec), (std::vector<int64_t>{6, 20000, 3, 1, 0, 1, 5, 0, 1}));
  EXPECT_EQ(p->dispatches[2].kernel, "softmax_apply");
  EXPECT_EQ(DimValues(p->dispatches[2].spec), (std::vector<int64_t>{120000, 20000, 3, 2}));
}

TEST(LongAxes, PerRowCpuKernelsOnlyWhereTheRowFits) {
  struct Case {
    const char* op;
    Shape shape;
    const char* cpu;
  } cases[] = {
      {"Softmax", {128, 8192}, "softmax_rows_cpu"},  // 2 x 8192 iterations
      {"Softmax", {128, 8193}, ""},
      {"Softmax", {128, 70000}, ""},
      {"Hardmax", {128, 5461}, "softmax_rows_cpu"},  // 3 x 5461
      {"Hardmax", {128, 5462}, ""},
      {"ReduceMean", {128, 65524}, "reduce_mean_rows_cpu"},  // 16381 + 3
      {"ReduceMean", {128, 65540}, "reduce_mean_cpu"},        // the texel twin: ceil(cols / 64) + 64
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " " + ShapeToString(c.shape));
    StatusOr<Program> p = LowerOne(c.op, c.shape, {1}, 1);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    ASSERT_EQ(p->dispatches.size(), 1u);
    EXPECT_EQ(p->dispatches[0].cpu_kernel, c.cpu);
  }
}

TEST(LongAxes, LongRowMeansTakeTheSplitReduce) {
  // GlobalAveragePool over 1000 x 1100 pixels: ceil(1.1e6 / 64) + 64 > budget.
  StatusOr<Program> p = LowerOne("GlobalAveragePool", {1, 2, 1000, 1100}, {});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->dispatches.size(), 2u);
  EXPECT_EQ(p->dispatches[0].kernel, "reduce");
  EXPECT_EQ(p->dispatches[0].spec[1], 1);  // mean
  EXPECT_EQ(p->dispatches[1].spec[30], 1100000);
  // ReduceMean over a trailing axis that still fits keeps reduce_mean.
  p = LowerOne("ReduceMean", {1, 1000000}, {1});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->dispatches.size(), 1u);
  EXPECT_EQ(p->dispatches[0].kernel, "reduce_mean");
}

TEST(LongAxes, DynamicLengthPlansStagesAtTheMaximum) {
  SymContext ctx({{"L", 1000, 2000000, 1}});
  SymScope scope(&ctx);
  const Dim len(2000000, ctx.SymbolNode(0));
  for (const char* op : {"ReduceSum", "ArgMax"}) {
    SCOPED_TRACE(op);
    StatusOr<Program> p = LowerOne(op, {2, len}, {1}, 1);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const Dispatch& a = p->dispatches.at(0);
    const Dim parts = a.spec.at(std::string(op) == "ReduceSum" ? 27 : 6);
    ASSERT_TRUE(parts.is_symbolic());
    EXPECT_EQ(parts.value(), 489);
    // At L = 5000 the same dispatches run with 2 parts; at 1000 with one.
    EXPECT_EQ(*ctx.Eval(parts.expr(), {5000}), 2);
    EXPECT_EQ(*ctx.Eval(parts.expr(), {1000}), 1);
    EXPECT_EQ(*ctx.Eval(a.groups[0].expr(), {5000}), 1);
  }
}

}  // namespace
}  // namespace oaaxvk::toolchain
