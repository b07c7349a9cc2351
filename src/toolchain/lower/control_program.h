// The toolchain's side of a segment program (bundle feature
// segment_program, docs/bundle-format.md "Segment program"): control flow
// that only the device can decide (an If whose condition is computed) runs
// as segments of the dispatch rows, between which the host reads a scalar
// back into a decided symbol (Symbol::decided) and branches on it.
//
// The lowering fills Program::control; the planner keeps every value a read
// names alive to the end of the segment it is read after (PlanMemory), and
// the bundle writer checks the program against the dispatches and writes
// control.* (BuildBundle). The runtime's interpreter is
// src/runtime/control_program.h.
#ifndef OAAXVK_TOOLCHAIN_LOWER_CONTROL_PROGRAM_H_
#define OAAXVK_TOOLCHAIN_LOWER_CONTROL_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

// Opcodes of control.program (columns a, b, c as the bundle format gives).
enum class ControlOp : int64_t {
  kRun = 0,         // run segment a at the current symbol values
  kRead = 1,        // decided symbol a := the element of reads[b] (waits for the segments run so far)
  kSet = 2,         // decided symbol a := shape-program node b at the current symbols
  kBranchZero = 3,  // continue at instruction b when shape-program node a is 0
  kJump = 4,        // continue at instruction a; backward at most b times per frame, else fail with text c
};

struct ControlStep {
  ControlOp op = ControlOp::kRun;
  int64_t a = 0, b = 0, c = 0;
};

// How a read treats a value outside its symbol's range.
enum class ControlReadMode : uint32_t {
  kRefuse = 0,  // the frame fails with the read's text (an If condition that is not 0 or 1)
  kClamp = 1,   // clamped into the range (a data-dependent extent)
};

// One element the device leaves for the host: element `element` of value
// `value` (Program::values; an arena or graph-output value), stored as
// `dtype` (kInt32, kInt64 or kBool: one byte, any nonzero byte reads as 1).
struct ControlRead {
  int value = -1;
  uint64_t byte_offset = 0;  // within the value, a multiple of the element size
  DType dtype = DType::kInt32;
  ControlReadMode mode = ControlReadMode::kRefuse;
  uint32_t text = 0;  // index into ControlProgram::texts
};

// Empty (no segments) for a program without device-decided control flow.
struct ControlProgram {
  // Segment n is dispatches [segments[n].first, segments[n].second); the
  // segments cover Program::dispatches in order, without gaps (a segment may
  // be empty).
  std::vector<std::pair<uint32_t, uint32_t>> segments;
  std::vector<ControlStep> steps;
  std::vector<ControlRead> reads;
  // What each read or loop is, naming the ONNX node ("the condition of If
  // 'if_3'"): the runtime's message when a frame fails there.
  std::vector<std::string> texts;

  // The dispatches [first, second) of each device loop's body, which run
  // once per iteration: a value live across the body's rows stays live over
  // all of them (PlanMemory). The toolchain's own; not in the bundle.
  std::vector<std::pair<uint32_t, uint32_t>> loop_bodies;

  bool empty() const { return segments.empty(); }
  // The segment holding dispatch d (segments must cover it).
  size_t SegmentOf(size_t d) const {
    for (size_t s = 0; s < segments.size(); ++s)
      if (d >= segments[s].first && d < segments[s].second) return s;
    return segments.size();
  }
};

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_LOWER_CONTROL_PROGRAM_H_
