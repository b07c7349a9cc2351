// The segment program (feature segment_program): validation and the
// interpreter, against a fake device whose segments are C++ functions over
// a small memory that the program reads back.
#include "runtime/control_program.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>

namespace oaaxvk::runtime {
namespace {

// Symbols: M (trip count, read back), i (loop counter), cond (body's
// condition, read back), N (an If branch's extent, read back).
enum : int64_t { kM = 0, kI = 1, kCond = 2, kN = 3 };
// Shape instructions.
enum : int64_t { kZero = 0, kOne = 1, kSymM = 2, kSymI = 3, kILtM = 4, kIPlus1 = 5, kSymCond = 6, kSymN = 7 };

ShapeSymbol Decided(const char* name, int64_t min, int64_t max) {
  ShapeSymbol y;
  y.name = name;
  y.min = min;
  y.max = max;
  y.decided = true;
  return y;
}

ShapeProgram Shapes(int64_t cap) {
  ShapeProgram sp;
  sp.symbols = {Decided("Loop 'l' trip count", 0, cap), Decided("Loop 'l' iteration", 0, cap),
                Decided("Loop 'l' condition", 0, 1), Decided("If 'f' extent", 0, 16)};
  sp.program = {{kShapeConst, 0, 0}, {kShapeConst, 1, 0},  {kShapeSymbol, kM, 0}, {kShapeSymbol, kI, 0},
                {kShapeLt, kSymI, kSymM}, {kShapeAdd, kSymI, kOne}, {kShapeSymbol, kCond, 0}, {kShapeSymbol, kN, 0}};
  return sp;
}

// Arena offsets of the values segments leave for the host.
constexpr uint64_t kTripAt = 0, kCondAt = 8, kExtentAt = 16;
const std::vector<uint64_t> kBuffers = {0, 256, 0, 64};  // weights, arena, inputs, outputs

// while (i < M && cond) body; then tail. Segment 0 computes M, 1 is the
// body, 2 the tail.
ControlProgram LoopProgram(int64_t jump_limit) {
  ControlProgram cp;
  cp.segments = {{0, 2}, {2, 3}, {3, 5}};
  cp.texts = {"the trip count of Loop 'l'", "Loop 'l'", "the condition of Loop 'l'"};
  cp.reads = {{1, kTripAt, 7, ReadMode::kRefuse, 0}, {1, kCondAt, 9, ReadMode::kRefuse, 2}};
  cp.program = {
      {kCtlRun, 0, 0, 0},             // 0
      {kCtlRead, kM, 0, 0},           // 1  M := trip count
      {kCtlSet, kI, kZero, 0},        // 2  i := 0
      {kCtlBranchZero, kILtM, 9, 0},  // 3  while i < M
      {kCtlRun, 1, 0, 0},             // 4    body
      {kCtlRead, kCond, 1, 0},        // 5    cond := body's condition
      {kCtlSet, kI, kIPlus1, 0},      // 6    i := i + 1
      {kCtlBranchZero, kSymCond, 9, 0},  // 7  and cond
      {kCtlJump, 3, jump_limit, 1},   // 8
      {kCtlRun, 2, 0, 0},             // 9  tail
  };
  return cp;
}

// A fake device: segment s runs segment_fn[s] over `mem`.
struct FakeHost : ControlHost {
  uint8_t mem[256] = {};
  std::vector<std::function<void(FakeHost&, const std::vector<int64_t>&)>> segment_fn;
  std::vector<uint32_t> ran;
  std::vector<std::vector<int64_t>> ran_symbols, ran_values;
  int reads = 0;
  Status fail_read = Status::Ok();

  Status RunSegment(uint32_t segment, const std::vector<int64_t>& symbols, const std::vector<int64_t>& values) override {
    ran.push_back(segment);
    ran_symbols.push_back(symbols);
    ran_values.push_back(values);
    if (segment < segment_fn.size() && segment_fn[segment]) segment_fn[segment](*this, symbols);
    return Status::Ok();
  }
  StatusOr<int64_t> ReadScalar(uint32_t, const ControlRead& read) override {
    if (!fail_read.ok()) return fail_read;
    ++reads;
    if (read.dtype == 7) {
      int64_t v;
      std::memcpy(&v, mem + read.offset, 8);
      return v;
    }
    if (read.dtype == 6) {
      int32_t v;
      std::memcpy(&v, mem + read.offset, 4);
      return v;
    }
    return mem[read.offset] != 0 ? 1 : 0;
  }
  void Put64(uint64_t at, int64_t v) { std::memcpy(mem + at, &v, 8); }
};

// The body counts its iterations and reports cond = (count < stop_after).
FakeHost LoopHost(int64_t trip, int64_t stop_after, int* body_runs) {
  FakeHost h;
  h.segment_fn = {
      [trip](FakeHost& d, const std::vector<int64_t>&) { d.Put64(kTripAt, trip); },
      [stop_after, body_runs](FakeHost& d, const std::vector<int64_t>&) {
        ++*body_runs;
        d.mem[kCondAt] = *body_runs < stop_after ? 1 : 0;
      },
      nullptr};
  return h;
}

std::vector<int64_t> Start(const ShapeProgram& sp) {
  std::vector<int64_t> v;
  for (const ShapeSymbol& y : sp.symbols) v.push_back(y.min);
  return v;
}

TEST(ControlProgram, LoopRunsTheTripCountReadFromTheDevice) {
  const ShapeProgram sp = Shapes(5);
  const ControlProgram cp = LoopProgram(5);
  ASSERT_TRUE(cp.Validate(5, sp, kBuffers).ok());
  for (int64_t trip : {0, 1, 4, 5}) {
    int body = 0;
    FakeHost h = LoopHost(trip, 100, &body);
    std::vector<int64_t> sym = Start(sp);
    ControlStats st;
    Status s = RunControlProgram(cp, sp, &sym, &h, &st);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(body, trip);
    EXPECT_EQ(sym[kM], trip);
    EXPECT_EQ(sym[kI], trip);
    ASSERT_EQ(h.ran.size(), static_cast<size_t>(trip + 2));
    EXPECT_EQ(h.ran.front(), 0u);
    EXPECT_EQ(h.ran.back(), 2u);
    EXPECT_EQ(st.segments_run, static_cast<uint64_t>(trip + 2));
    EXPECT_EQ(st.reads, static_cast<uint64_t>(1 + trip));
    // Each body run sees its iteration number, in the symbols and in the
    // evaluated shape program (where group counts and parameter slots come from).
    for (int64_t t = 0; t < trip; ++t) {
      EXPECT_EQ(h.ran_symbols[static_cast<size_t>(t + 1)][kI], t);
      EXPECT_EQ(h.ran_values[static_cast<size_t>(t + 1)][kSymI], t);
    }
  }
}

TEST(ControlProgram, TheBodyEndsTheLoopWithItsCondition) {
  const ShapeProgram sp = Shapes(5);
  const ControlProgram cp = LoopProgram(5);
  int body = 0;
  FakeHost h = LoopHost(5, 2, &body);
  std::vector<int64_t> sym = Start(sp);
  ASSERT_TRUE(RunControlProgram(cp, sp, &sym, &h, nullptr).ok());
  EXPECT_EQ(body, 2);
  EXPECT_EQ(sym[kI], 2);
  EXPECT_EQ(sym[kCond], 0);
  EXPECT_EQ(h.ran, (std::vector<uint32_t>{0, 1, 1, 2}));
}

TEST(ControlProgram, ATripCountAboveTheCapFailsNamingTheNode) {
  const ShapeProgram sp = Shapes(5);
  const ControlProgram cp = LoopProgram(5);
  int body = 0;
  FakeHost h = LoopHost(6, 100, &body);
  std::vector<int64_t> sym = Start(sp);
  Status s = RunControlProgram(cp, sp, &sym, &h, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("the trip count of Loop 'l' is 6, outside [0, 5]"), std::string::npos) << s.message();
  EXPECT_EQ(body, 0);
  EXPECT_EQ(h.ran, (std::vector<uint32_t>{0}));  // nothing after the failed read
}

TEST(ControlProgram, TheJumpLimitBoundsIterationsNeverAHang) {
  const ShapeProgram sp = Shapes(5);
  const ControlProgram cp = LoopProgram(3);  // the jump may be taken 3 times: 4 body runs
  int body = 0;
  FakeHost h = LoopHost(5, 100, &body);
  std::vector<int64_t> sym = Start(sp);
  Status s = RunControlProgram(cp, sp, &sym, &h, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Loop 'l': more than 3 iterations"), std::string::npos) << s.message();
  EXPECT_EQ(body, 4);
}

TEST(ControlProgram, ASetOutsideTheCounterRangeFails) {
  // The per-entry cap of a loop is its counter's range.
  ShapeProgram sp = Shapes(5);
  sp.symbols[kI].max = 2;
  const ControlProgram cp = LoopProgram(100);
  int body = 0;
  FakeHost h = LoopHost(5, 100, &body);
  std::vector<int64_t> sym = Start(sp);
  Status s = RunControlProgram(cp, sp, &sym, &h, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("sets Loop 'l' iteration to 3, outside [0, 2]"), std::string::npos) << s.message();
}

// if (cond) then-segment (extent N read back) else else-segment; then tail.
ControlProgram IfProgram() {
  ControlProgram cp;
  cp.segments = {{0, 1}, {1, 2}, {2, 3}, {3, 4}};
  cp.texts = {"the condition of If 'f'", "the extent of NonZero 'f/then/nz'"};
  cp.reads = {{1, kCondAt, 9, ReadMode::kRefuse, 0}, {1, kExtentAt, 6, ReadMode::kClamp, 1}};
  cp.program = {
      {kCtlRun, 0, 0, 0},                // 0 condition
      {kCtlRead, kCond, 0, 0},           // 1
      {kCtlBranchZero, kSymCond, 6, 0},  // 2
      {kCtlRun, 1, 0, 0},                // 3 then
      {kCtlRead, kN, 1, 0},              // 4 its extent
      {kCtlJump, 7, -1, 0},              // 5 forward: no limit needed
      {kCtlRun, 2, 0, 0},                // 6 else
      {kCtlRun, 3, 0, 0},                // 7 tail, sized by N
  };
  return cp;
}

TEST(ControlProgram, IfTakesOneBranchAndItsExtentSizesWhatFollows) {
  const ShapeProgram sp = Shapes(5);
  const ControlProgram cp = IfProgram();
  ASSERT_TRUE(cp.Validate(4, sp, kBuffers).ok());
  for (bool cond : {true, false}) {
    FakeHost h;
    h.segment_fn = {[cond](FakeHost& d, const std::vector<int64_t>&) { d.mem[kCondAt] = cond; },
                    [](FakeHost& d, const std::vector<int64_t>&) {
                      const int32_t n = 3;
                      std::memcpy(d.mem + kExtentAt, &n, 4);
                    },
                    nullptr, nullptr};
    std::vector<int64_t> sym = Start(sp);
    ASSERT_TRUE(RunControlProgram(cp, sp, &sym, &h, nullptr).ok());
    if (cond) {
      EXPECT_EQ(h.ran, (std::vector<uint32_t>{0, 1, 3}));
      EXPECT_EQ(h.ran_values.back()[kSymN], 3);
    } else {
      EXPECT_EQ(h.ran, (std::vector<uint32_t>{0, 2, 3}));
      EXPECT_EQ(h.ran_values.back()[kSymN], 0);  // a zero extent: the decided symbol's min
    }
  }
}

TEST(ControlProgram, AClampedReadStaysInItsRange) {
  const ShapeProgram sp = Shapes(5);
  const ControlProgram cp = IfProgram();
  for (int32_t n : {-4, 40}) {
    FakeHost h;
    h.segment_fn = {[](FakeHost& d, const std::vector<int64_t>&) { d.mem[kCondAt] = 1; },
                    [n](FakeHost& d, const std::vector<int64_t>&) { std::memcpy(d.mem + kExtentAt, &n, 4); }, nullptr,
                    nullptr};
    std::vector<int64_t> sym = Start(sp);
    ASSERT_TRUE(RunControlProgram(cp, sp, &sym, &h, nullptr).ok());
    EXPECT_EQ(sym[kN], n < 0 ? 0 : 16);
  }
}

TEST(ControlProgram, AGuardIsCheckedBeforeTheNextSegment) {
  ShapeProgram sp = Shapes(5);
  sp.guard_expr = {kSymN};  // "N must be nonzero"
  sp.guard_text = {"Reshape 'r': the extent must not be 0"};
  const ControlProgram cp = IfProgram();
  FakeHost h;
  h.segment_fn = {[](FakeHost& d, const std::vector<int64_t>&) { d.mem[kCondAt] = 0; }, nullptr, nullptr, nullptr};
  std::vector<int64_t> sym = Start(sp);
  sym[kN] = 1;  // valid for the first segment
  Status s = RunControlProgram(cp, sp, &sym, &h, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();  // the else branch leaves N alone
  h.segment_fn[0] = [](FakeHost& d, const std::vector<int64_t>&) { d.mem[kCondAt] = 1; };
  sym = Start(sp);
  sym[kN] = 1;
  h.ran.clear();
  s = RunControlProgram(cp, sp, &sym, &h, nullptr);  // then reads N = 0
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("the extent must not be 0"), std::string::npos) << s.message();
  EXPECT_EQ(h.ran, (std::vector<uint32_t>{0, 1}));  // the tail never ran
}

TEST(ControlProgram, HostErrorsNameTheSegmentOrTheRead) {
  const ShapeProgram sp = Shapes(5);
  const ControlProgram cp = LoopProgram(5);
  int body = 0;
  FakeHost h = LoopHost(2, 100, &body);
  h.fail_read = Unavailable("vkWaitForFences failed: VK_ERROR_DEVICE_LOST");
  std::vector<int64_t> sym = Start(sp);
  Status s = RunControlProgram(cp, sp, &sym, &h, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("the trip count of Loop 'l'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("VK_ERROR_DEVICE_LOST"), std::string::npos) << s.message();
}

TEST(ControlProgram, ValidationNamesTheRowAndTheRule) {
  const ShapeProgram sp = Shapes(5);
  auto expect_error = [&](const ControlProgram& cp, uint64_t rows, const char* part) {
    Status s = cp.Validate(rows, sp, kBuffers);
    ASSERT_FALSE(s.ok()) << part;
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
  };
  ControlProgram cp = LoopProgram(5);
  expect_error(cp, 6, "end at dispatch row 5 but program.dispatch has 6 rows");
  cp.segments[1] = {3, 3};
  expect_error(cp, 5, "control.segments row 1 is [3, 3)");
  cp = LoopProgram(-1);
  expect_error(cp, 5, "row 8 (jump back to 3): limit -1");
  cp = LoopProgram(5);
  cp.program[8].c = 7;
  expect_error(cp, 5, "row 8 (jump): text 7");
  cp = LoopProgram(5);
  cp.program[3].b = 11;
  expect_error(cp, 5, "row 3 (branch_zero): target 11 outside [0, 10]");
  cp = LoopProgram(5);
  cp.program[4].a = 3;
  expect_error(cp, 5, "row 4 (run): segment 3, but the bundle has 3 segments");
  cp = LoopProgram(5);
  cp.program[6].b = 8;
  expect_error(cp, 5, "row 6 (set): shape instruction 8 outside the 8");
  cp = LoopProgram(5);
  cp.program[0].opcode = 9;
  expect_error(cp, 5, "row 0: unknown opcode 9");
  ShapeProgram undecided = sp;
  undecided.symbols[kI].decided = false;
  Status s = LoopProgram(5).Validate(5, undecided, kBuffers);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("row 2 (set): symbol 1 is not a decided symbol"), std::string::npos) << s.message();
  cp = LoopProgram(5);
  cp.reads[0].offset = 252;
  expect_error(cp, 5, "control.reads row 0: 8 bytes at offset 252");
  cp.reads[0] = {2, 0, 7, ReadMode::kRefuse, 0};
  expect_error(cp, 5, "buffer kind 2");
  cp.reads[0] = {1, 0, 1, ReadMode::kRefuse, 0};
  expect_error(cp, 5, "dtype 1 is not INT32");
}

}  // namespace
}  // namespace oaaxvk::runtime
