// Feature segment_program (docs/bundle-format.md "Segment program"): the
// host control program that runs a bundle's dispatch rows as device
// segments and decides, between them, what runs next from a few bytes read
// back from the device (an If condition, a Loop trip count or condition, a
// data-dependent extent). No Vulkan here: the executor implements
// ControlHost (run a segment, read a scalar back) and this file holds the
// program's validation and its interpreter, so the control logic lives in
// one place and is testable without a device.
//
// Termination: every backward jump carries a limit (the times it may be
// taken per frame in all: the Loop's iteration cap, times the caps of the
// loops around it), so a frame executes at most (K + 1) * prod(limits + 1)
// instructions; exceeding a limit fails the frame with the jump's text
// (naming the ONNX node and the cap), never a hang. The per-entry cap of a
// nested loop is its counter symbol's range: a `set` past it fails.
#ifndef OAAXVK_RUNTIME_CONTROL_PROGRAM_H_
#define OAAXVK_RUNTIME_CONTROL_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "oaax_vulkan/status.h"
#include "runtime/shape_program.h"

namespace oaaxvk::runtime {

// Opcodes of `control.program` (column 0); operands a, b, c in columns 1-3.
enum ControlOpcode : int64_t {
  kCtlRun = 0,         // run segment a
  kCtlRead = 1,        // symbol a := the scalar of `control.reads` row b (waits for the device)
  kCtlSet = 2,         // symbol a := v[b], shape-program instruction b at the current symbols
  kCtlBranchZero = 3,  // jump to instruction b when v[a] == 0
  kCtlJump = 4,        // jump to instruction a; backward: at most b times per frame in all, else fail with text c
};
inline constexpr int64_t kControlOpcodes = 5;
// "run", "read", "set", "branch_zero", "jump" ("unknown" outside 0-4).
const char* ControlOpcodeName(int64_t opcode);

struct ControlInstruction {
  int64_t opcode = 0, a = 0, b = 0, c = 0;
};

// What a decision point reads: one element of a device tensor.
enum class ReadMode : uint32_t {
  kRefuse = 0,  // a value outside the symbol's range fails the frame (a trip count above the cap)
  kClamp = 1,   // clamped into the range, rounded down to multiple_of (a data-dependent extent)
};
struct ControlRead {
  uint32_t buffer_kind = 0;  // 1 = arena, 3 = outputs (docs/bundle-format.md "Buffers")
  uint64_t offset = 0;       // bytes, a multiple of the element size
  uint32_t dtype = 0;        // OAAX code: 6 = INT32, 7 = INT64, 9 = BOOL (any nonzero byte reads as 1)
  ReadMode mode = ReadMode::kRefuse;
  uint32_t text = 0;         // index into ControlProgram::texts: what the value is (names the node)
};
// Bytes of one element of `dtype` (4, 8 or 1); 0 for any other code.
uint32_t ControlReadBytes(uint32_t dtype);

// A device segment: dispatch rows [begin, end).
struct Segment {
  uint32_t begin = 0, end = 0;
};

struct ControlProgram {
  std::vector<Segment> segments;             // `control.segments` u32[N, 2]
  std::vector<ControlInstruction> program;   // `control.program` i64[K, 4]
  std::vector<ControlRead> reads;            // `control.reads` u64[R, 5]
  std::vector<std::string> texts;            // `control.text.<t>` (UTF-8)

  // Checks the program against its bundle: segments ordered, disjoint and
  // covering rows [0, dispatch_rows) exactly; opcodes known; segment,
  // symbol, instruction, read and text indices in range; symbols written by
  // read / set are decided symbols (ShapeSymbol::decided); jump targets in
  // [0, K]; a backward jump (target <= its own index) has a limit >= 0;
  // reads of a known dtype, aligned, inside `buffer_bytes[kind]` (kinds 1
  // and 3 only). Errors name the row and the rule.
  Status Validate(uint64_t dispatch_rows, const ShapeProgram& shapes, const std::vector<uint64_t>& buffer_bytes) const;
};

// The executor's side of a frame. Calls come in program order.
class ControlHost {
 public:
  virtual ~ControlHost() = default;
  // Runs (or queues) segment `segment` at symbol values `symbols`, whose
  // shape program evaluates to `values` (group counts, parameter slots, …).
  virtual Status RunSegment(uint32_t segment, const std::vector<int64_t>& symbols,
                            const std::vector<int64_t>& values) = 0;
  // Waits for every segment run so far and returns the element `read`
  // (row `index` of control.reads) names, as an int64 (bool: 0 or 1).
  virtual StatusOr<int64_t> ReadScalar(uint32_t index, const ControlRead& read) = 0;
};

struct ControlStats {
  uint64_t instructions = 0, segments_run = 0, reads = 0;
};

// Runs `control` for one frame. `symbols` holds every symbol's value: the
// input-decided ones as send_input read them and the decided ones at their
// `min`; on return it holds the values the frame ended with (the output
// shapes are evaluated at them). Before each segment runs, the shape
// program is evaluated at the current symbols and every guard must hold,
// except a guard reading a decided symbol that the program has not read or
// set yet (its value is a placeholder until then).
// Fails (InvalidArgument, naming the instruction and the texts the bundle
// gives) on a read outside its symbol's range in refuse mode, a set outside
// its symbol's range, a guard that is 0, a backward jump taken more often
// than its limit; host errors pass through with the segment or read named.
Status RunControlProgram(const ControlProgram& control, const ShapeProgram& shapes, std::vector<int64_t>* symbols,
                         ControlHost* host, ControlStats* stats);

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_CONTROL_PROGRAM_H_
