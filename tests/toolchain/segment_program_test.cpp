// The toolchain's side of the segment program (lower/control_program.h):
// the planner keeps a value the host reads back alive to the end of its
// segment, and the bundle writer checks the program against the dispatches
// and writes control.* and shape.symbol.<s>.decided as
// docs/bundle-format.md "Segment program" defines them (read back with the
// runtime's bundle parser when the runtime is built).
#include <gtest/gtest.h>

#include <cstring>

#include "oaax_vulkan/oinf.h"
#include "test_util.h"
#include "toolchain/bundle/bundle_writer.h"
#include "toolchain/driver/dynamic.h"
#include "toolchain/plan/plan.h"

#ifdef OAAXVK_TEST_RUNTIME_PARSER
#include "runtime/bundle.h"
#endif

namespace oaaxvk::toolchain {
namespace {
using namespace testing;

// x -> Relu a -> Sigmoid b -> Relu c -> Sigmoid y, four dispatches; a and c
// share arena bytes when nothing keeps a alive.
StatusOr<Program> Chain(int64_t n) {
  Graph g;
  g.opset = 13;
  AddInput(g, "x", {n});
  AddNode(g, "Relu", "r1", {"x"}, {"a"});
  AddNode(g, "Sigmoid", "r2", {"a"}, {"b"});
  AddNode(g, "Relu", "r3", {"b"}, {"c"});
  AddNode(g, "Sigmoid", "r4", {"c"}, {"y"});
  AddOutput(g, "y");
  OAAXVK_RETURN_IF_ERROR(RunDefaultPipeline(g).status());
  return Lower(g);
}

int ValueOf(const Program& p, const std::string& tensor) {
  for (size_t i = 0; i < p.values.size(); ++i)
    if (p.values[i].tensor == tensor) return static_cast<int>(i);
  return -1;
}

// The If shape of docs/bundle-format.md: segment 0 computes the condition,
// 1 and 2 are the branches, 3 what follows; decided symbol 0 is the
// condition (read from element 1 of `a`), symbol 1 the output extent each
// branch sets (shape-program nodes `four` / `two`).
void AddIfProgram(Program* p, int read_value, int32_t cond, int32_t four, int32_t two) {
  p->features.insert("dynamic_shapes");
  ControlProgram& cp = p->control;
  cp.segments = {{0, 1}, {1, 2}, {2, 3}, {3, 4}};
  cp.steps = {{ControlOp::kRun, 0},       {ControlOp::kRead, 0, 0},   {ControlOp::kBranchZero, cond, 6},
              {ControlOp::kSet, 1, four}, {ControlOp::kRun, 1},       {ControlOp::kJump, 8, -1},
              {ControlOp::kSet, 1, two},  {ControlOp::kRun, 2},       {ControlOp::kRun, 3}};
  cp.reads = {{read_value, 4, DType::kInt32, ControlReadMode::kRefuse, 0}};
  cp.texts = {"the condition of If 'if'"};
}

std::vector<Symbol> DecidedSymbols() {
  std::vector<Symbol> s = {Symbol("cond", 0, 1, 1), Symbol("N", 0, 4, 1)};
  for (Symbol& y : s) y.decided = true;
  return s;
}

template <typename T>
std::vector<T> TensorValues(const oinf::File& f, const std::string& name) {
  const oinf::Tensor* t = f.FindTensor(name);
  EXPECT_NE(t, nullptr) << name;
  if (t == nullptr) return {};
  std::vector<T> v(t->data.size / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), t->data.data, v.size() * sizeof(T));
  return v;
}

TEST(SegmentProgram, AValueReadBackLivesToTheEndOfItsSegment) {
  auto plain = Chain(1000);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_EQ(plain->dispatches.size(), 4u);
  auto plain_plan = PlanMemory(*plain);
  ASSERT_TRUE(plain_plan.ok()) << plain_plan.status().ToString();
  EXPECT_EQ(plain_plan->arena_bytes, 2u * 4096);  // a's bytes are c's once r2 read a

  // The host reads `a` after segment 0 = dispatches [0, 3): r3 must not
  // write c over it.
  auto p = Chain(1000);
  ASSERT_TRUE(p.ok());
  const int a = ValueOf(*p, "a"), c = ValueOf(*p, "c");
  ASSERT_GE(a, 0);
  ASSERT_GE(c, 0);
  p->control.segments = {{0, 3}, {3, 4}};
  p->control.steps = {{ControlOp::kRun, 0}, {ControlOp::kRead, 0, 0}, {ControlOp::kRun, 1}};
  p->control.reads = {{a, 0, DType::kInt32, ControlReadMode::kClamp, 0}};
  EXPECT_EQ(ComputeLifetimes(*p)[static_cast<size_t>(a)].last, 2);
  auto plan = PlanMemory(*p);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->arena_bytes, 3u * 4096);
  EXPECT_NE(p->values[static_cast<size_t>(a)].offset, p->values[static_cast<size_t>(c)].offset);
}

TEST(SegmentProgram, BundleCarriesTheControlProgramAndDecidedSymbols) {
  SymContext ctx(DecidedSymbols());
  SymScope scope(&ctx);
  const int32_t cond = ctx.SymbolNode(0), four = ctx.ConstNode(4), two = ctx.ConstNode(2);
  auto p = Chain(64);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const int a = ValueOf(*p, "a");
  AddIfProgram(&*p, a, cond, four, two);
  auto plan = PlanMemory(*p);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  BundleInfo info{"segment_if", 13, "test"};
  auto bytes = SerializeBundle(*p, *plan, info);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto f = oinf::File::FromMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(f.ok()) << f.status().ToString();

  const oinf::Metadata* features = f->FindMetadata("bundle.features");
  ASSERT_NE(features, nullptr);
  const std::string list(reinterpret_cast<const char*>(features->ndarray.data.data), features->ndarray.data.size);
  EXPECT_NE(list.find("segment_program"), std::string::npos) << list;
  EXPECT_NE(list.find("dynamic_shapes"), std::string::npos) << list;
  for (const char* s : {"shape.symbol.0.decided", "shape.symbol.1.decided"}) {
    const oinf::Metadata* m = f->FindMetadata(s);
    ASSERT_NE(m, nullptr) << s;
    uint32_t v = 0;
    EXPECT_TRUE(m->GetScalar(&v));
    EXPECT_EQ(v, 1u) << s;
  }
  EXPECT_EQ(TensorValues<uint32_t>(*f, "control.segments"), (std::vector<uint32_t>{0, 1, 1, 2, 2, 3, 3, 4}));
  EXPECT_EQ(TensorValues<int64_t>(*f, "control.program"),
            (std::vector<int64_t>{0, 0, 0, 0, 1, 0, 0, 0, 3, cond, 6, 0, 2, 1, four, 0, 0, 1, 0, 0,
                                  4, 8, -1, 0, 2, 1, two, 0, 0, 2, 0, 0, 0, 3, 0, 0}));
  // Arena (kind 1) at a's offset + 4, INT32 (6), refuse mode, text 0.
  EXPECT_EQ(TensorValues<uint64_t>(*f, "control.reads"),
            (std::vector<uint64_t>{1, p->values[static_cast<size_t>(a)].offset + 4, 6, 0, 0}));
  const oinf::Metadata* text = f->FindMetadata("control.text.0");
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(text->ndarray.data.data), text->ndarray.data.size),
            "the condition of If 'if'");
  // The shape program holds the nodes the steps name.
  const std::vector<int64_t> prog = TensorValues<int64_t>(*f, "shape.program");
  ASSERT_EQ(prog.size(), ctx.nodes().size() * 3);
  EXPECT_EQ(prog[static_cast<size_t>(cond) * 3], 1);  // symbol
  EXPECT_EQ(prog[static_cast<size_t>(four) * 3 + 1], 4);

#ifdef OAAXVK_TEST_RUNTIME_PARSER
  // The runtime loads it: its parser validates the control program against
  // the dispatch rows, the decided symbols and the buffers.
  auto rf = oinf::File::FromMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(rf.ok());
  auto b = runtime::ParseBundle(std::move(*rf), "segment_if");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->control.segments.size(), 4u);
  EXPECT_EQ(b->control.program.size(), 9u);
  ASSERT_EQ(b->control.reads.size(), 1u);
  EXPECT_EQ(b->control.reads[0].offset, p->values[static_cast<size_t>(a)].offset + 4);
  EXPECT_EQ(b->control.texts, (std::vector<std::string>{"the condition of If 'if'"}));
#endif
}

TEST(SegmentProgram, DecidedSymbolsAreCheckedWithTheLargerAndTheSmallerBranch) {
  // An input dimension H in [8, 32] (SamplePoints), then an If's symbols.
  std::vector<Symbol> syms = {Symbol("H", 8, 32, 8)};
  std::vector<std::vector<int64_t>> points = SamplePoints(syms);
  const size_t before = points.size();
  ASSERT_GE(before, 2u);
  std::vector<Symbol> one_if = DecidedSymbols();  // one If: its symbols share the prefix "y/"
  one_if[0].name = "y/cond";
  one_if[1].name = "y/extent";
  AddDecidedSymbols(one_if, &syms, &points);
  ASSERT_EQ(syms.size(), 3u);
  EXPECT_TRUE(syms[1].decided && syms[2].decided);
  // Every point takes the larger branch (the first is the maximum the
  // bundle is planned at); the maximum and the minimum of H again with the
  // smaller one.
  ASSERT_EQ(points.size(), before + 2);
  for (size_t k = 0; k < before; ++k) {
    ASSERT_EQ(points[k].size(), 3u);
    EXPECT_EQ(points[k][1], 1);
    EXPECT_EQ(points[k][2], 4);
  }
  EXPECT_EQ(points[before], (std::vector<int64_t>{32, 0, 0}));
  EXPECT_EQ(points[before + 1], (std::vector<int64_t>{8, 0, 0}));
  // Two Ifs: each one's smaller branch alone too.
  std::vector<Symbol> two = {Symbol("H", 8, 32, 8)};
  std::vector<std::vector<int64_t>> two_points = SamplePoints(two);
  std::vector<Symbol> ifs = {Symbol("a/cond", 0, 1, 1), Symbol("a/larger", 0, 1, 1), Symbol("b/cond", 0, 1, 1),
                             Symbol("b/larger", 0, 1, 1)};
  for (Symbol& y : ifs) y.decided = true;
  AddDecidedSymbols(ifs, &two, &two_points);
  ASSERT_EQ(two_points.size(), before + 4);
  EXPECT_EQ(two_points[before], (std::vector<int64_t>{32, 0, 0, 0, 0}));
  EXPECT_EQ(two_points[before + 1], (std::vector<int64_t>{8, 0, 0, 0, 0}));
  EXPECT_EQ(two_points[before + 2], (std::vector<int64_t>{32, 0, 0, 1, 1}));
  EXPECT_EQ(two_points[before + 3], (std::vector<int64_t>{32, 1, 1, 0, 0}));
  // Nothing to add without decided symbols.
  std::vector<Symbol> plain = {Symbol("H", 8, 32, 8)};
  std::vector<std::vector<int64_t>> same = SamplePoints(plain);
  AddDecidedSymbols({}, &plain, &same);
  EXPECT_EQ(same, SamplePoints(plain));
}

// A graph holding the selection of a run-time If (node attribute
// _if_select) between branch results of shapes `then_shape` and
// `else_shape`.
Graph IfSelection(const Shape& then_shape, const Shape& else_shape) {
  Graph g;
  g.opset = 13;
  AddInput(g, "c", {});
  g.tensors["c"].dtype = DType::kBool;
  AddInput(g, "t", then_shape);
  AddInput(g, "e", else_shape);
  AddNode(g, "Where", "guard/select", {"c", "t", "e"}, {"y"}).SetInt("_if_select", 1);
  AddOutput(g, "y");
  return g;
}

TEST(SegmentProgram, DifferentBranchShapesGetDecidedSymbols) {
  auto syms = FindDecidedSymbols(IfSelection({0, 4}, {5, 4}));
  ASSERT_TRUE(syms.ok()) << syms.status().ToString();
  ASSERT_EQ(syms->size(), 2u);
  EXPECT_EQ((*syms)[0].name, "y/cond");
  EXPECT_EQ((*syms)[1].name, "y/larger");
  for (const Symbol& y : *syms) {
    EXPECT_TRUE(y.decided) << y.name;
    EXPECT_EQ(y.min, 0) << y.name;
    EXPECT_EQ(y.max, 1) << y.name;
  }
  // Equal shapes select with Where: no symbols.
  auto equal = FindDecidedSymbols(IfSelection({5, 4}, {5, 4}));
  ASSERT_TRUE(equal.ok());
  EXPECT_TRUE(equal->empty());
  // Neither shape holds the other: refused, naming the node and the shapes.
  auto crossed = FindDecidedSymbols(IfSelection({2, 3}, {3, 2}));
  ASSERT_FALSE(crossed.ok());
  EXPECT_NE(crossed.status().message().find("node 'guard/select' (Where): the If branches give output 'y' the shapes "
                                            "[2, 3] and [3, 2], neither of which holds the other"),
            std::string::npos)
      << crossed.status().message();
}

// Builds the If program over Chain(64) with `edit` applied and returns the
// writer's status.
template <typename Edit>
Status WriteEdited(Edit edit) {
  SymContext ctx(DecidedSymbols());
  SymScope scope(&ctx);
  const int32_t cond = ctx.SymbolNode(0), four = ctx.ConstNode(4), two = ctx.ConstNode(2);
  auto p = Chain(64);
  if (!p.ok()) return p.status();
  AddIfProgram(&*p, ValueOf(*p, "a"), cond, four, two);
  edit(&*p, &ctx);
  auto plan = PlanMemory(*p);
  if (!plan.ok()) return plan.status();
  return SerializeBundle(*p, *plan, BundleInfo{"segment_if", 13, "test"}).status();
}

void ExpectRefused(const Status& s, const std::string& what) {
  EXPECT_FALSE(s.ok()) << what;
  EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
}

TEST(SegmentProgram, WriterRefusesAProgramThatDoesNotMatchItsDispatches) {
  ASSERT_TRUE(WriteEdited([](Program*, SymContext*) {}).ok());
  ExpectRefused(WriteEdited([](Program* p, SymContext*) { p->control.segments[1] = {2, 2}; }),
                "segment 1 is dispatches [2, 2)");
  ExpectRefused(WriteEdited([](Program* p, SymContext*) { p->control.segments.pop_back(); }),
                "the segments end at dispatch 3 of 4");
  ExpectRefused(WriteEdited([](Program* p, SymContext*) { p->control.steps[0].a = 4; }), "control step 0");
  // A read or set must write a decided symbol; a backward jump needs a limit and a text.
  ExpectRefused(WriteEdited([](Program* p, SymContext*) { p->control.steps[1].a = 2; }), "control step 1");
  ExpectRefused(WriteEdited([](Program* p, SymContext*) { p->control.steps[5] = {ControlOp::kJump, 0, -1, 0}; }),
                "control step 5");
  // Reads: an element inside an arena or output value.
  ExpectRefused(WriteEdited([](Program* p, SymContext*) { p->control.reads[0].value = ValueOf(*p, "x"); }),
                "is not an aligned element of an arena or output value");
  ExpectRefused(WriteEdited([](Program* p, SymContext*) { p->control.reads[0].byte_offset = 256; }),
                "4 bytes at offset 256 of 'a'");
  ExpectRefused(WriteEdited([](Program* p, SymContext*) { p->control.reads[0].byte_offset = 2; }),
                "4 bytes at offset 2 of 'a'");
  ExpectRefused(WriteEdited([](Program* p, SymContext*) { p->control.reads[0].dtype = DType::kFloat; }),
                "control read 0");
}

}  // namespace
}  // namespace oaaxvk::toolchain
