// Feature dynamic_shapes (docs/bundle-format.md, "Dynamic shapes"): the
// symbols of a bundle compiled for a range of input shapes, the shape program
// (i64 instructions over the symbols) and the references that say which
// bundle fields (group counts, specialization values, input and output
// dimensions) are expressions. No Vulkan here.
#ifndef OAAXVK_RUNTIME_SHAPE_PROGRAM_H_
#define OAAXVK_RUNTIME_SHAPE_PROGRAM_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "oaax_vulkan/status.h"

namespace oaaxvk::runtime {

// Opcodes of `shape.program` (column 0).
enum ShapeOpcode : int64_t {
  kShapeConst = 0,
  kShapeSymbol = 1,
  kShapeAdd = 2,
  kShapeSub = 3,
  kShapeMul = 4,
  kShapeFloorDiv = 5,
  kShapeCeilDiv = 6,
  kShapeMod = 7,
  kShapeMin = 8,
  kShapeMax = 9,
  kShapeEq = 10,  // v[a] == v[b] ? 1 : 0 (feature value_symbols)
  kShapeLt = 11,  // v[a] < v[b] ? 1 : 0 (feature value_symbols)
};
inline constexpr int64_t kShapeOpcodes = 12;
// "const", "symbol", "add", … ("unknown" outside 0–11).
const char* ShapeOpcodeName(int64_t opcode);

// Kinds of `shape.refs` (column 0).
enum ShapeRefKind : uint32_t {
  kRefGroupCount = 0,  // index = dispatch row, sub = table * 3 + axis
  kRefSpec = 1,        // index into program.spec, sub = 0
  kRefInputDim = 2,    // index = input, sub = dimension
  kRefOutputDim = 3,   // index = output, sub = dimension
  kRefParam = 4,       // index = parameter slot (feature parameter_buffer), sub = 0
  kRefGuard = 5,       // index = guard (feature value_symbols), sub = 0; the value must be nonzero
};
inline constexpr uint32_t kShapeRefKinds = 6;
// Feature parameter_buffer: the frame's parameter buffer is a uniform buffer
// of kParamSlots 32-bit slots (uvec4[1024], 16 KiB; shaders/params.glsl).
inline constexpr uint32_t kParamSlots = 4096;

struct ShapeSymbol {
  std::string name;  // shape.symbol.<s>.name (UTF-8)
  int64_t min = 1, max = 1, multiple_of = 1;
  // Feature value_symbols: the symbol is element `element` of input `input`'s
  // data (read at send_input), not an input dimension; -1 for a dimension.
  int64_t input = -1;
  uint64_t element = 0;
  // Feature float_value_symbols: the element is a float e of a float input and
  // the symbol is floor(e * scale) (e.g. a Resize output size, scale = the
  // input dimension); 0: the element of an integer input as it is.
  uint64_t scale = 0;
  // Feature exact_value_symbols: e * scale must be an integer (a float Range
  // bound, scale a power of two); send_input refuses another e.
  bool exact = false;
  // Feature segment_program: the control program sets the symbol mid-frame
  // (a read-back If condition, Loop trip count or extent, a loop counter);
  // it starts every frame at `min` and is neither an input dimension nor an
  // input value.
  bool decided = false;
  bool is_value() const { return input >= 0; }
  bool Valid(int64_t v) const { return v >= min && v <= max && v % multiple_of == 0; }
  // "[32, 960] (multiple of 32)", or "[1, 64]" when multiple_of is 1.
  std::string RangeString() const;
};

struct ShapeInstruction {
  int64_t opcode = 0, a = 0, b = 0;
};

struct ShapeRef {
  uint32_t kind = 0, index = 0, sub = 0, expr = 0;
};

// The shape program of a bundle, validated by ParseBundle (bundle.cpp).
struct ShapeProgram {
  std::vector<ShapeSymbol> symbols;
  std::vector<ShapeInstruction> program;
  std::vector<ShapeRef> refs;
  // Derived from refs at parse time (-1 = static field).
  // input_symbol[i][d]: the symbol input i's dimension d is (kind 2 refs
  // evaluate `symbol` instructions).
  std::vector<std::vector<int>> input_symbol;
  // output_expr[o][d]: the instruction output o's dimension d takes.
  std::vector<std::vector<int64_t>> output_expr;
  // group_expr[table][row][axis], table 0 = program.dispatch, 1 = .cpu, 2 = .gpu
  // (empty vectors for tables the bundle lacks).
  std::vector<std::vector<std::array<int64_t, 3>>> group_expr;
  // (index into program.spec, instruction) of every kind-1 reference, by index.
  std::vector<std::pair<uint32_t, int64_t>> spec_expr;
  // Feature parameter_buffer: `shape.params` (P <= kParamSlots) and the
  // instruction of every slot (param_expr[slot], all set by kind-4 refs).
  uint32_t params = 0;
  std::vector<int64_t> param_expr;
  // Feature value_symbols: the instruction and text of every guard
  // (`shape.guards`, kind-5 refs): a valid input makes each instruction nonzero.
  std::vector<int64_t> guard_expr;
  std::vector<std::string> guard_text;
  bool has_value_symbols = false;
  // value_source[i]: input i holds value symbols (sized io.inputs when any does).
  std::vector<char> value_source;

  // Whether the bundle has symbols at all (a bundle without is static).
  bool dynamic() const { return !symbols.empty(); }
  // Every symbol at its max.
  std::vector<int64_t> MaxValues() const;
  // "H = 32, W = 64".
  std::string ValuesString(const std::vector<int64_t>& symbol_values) const;
  // Evaluates every instruction for `symbol_values` (one per symbol) into
  // *values (one per instruction). Fails on a signed 64-bit overflow or a
  // divisor <= 0, naming the instruction, its operands and the symbol values.
  Status Evaluate(const std::vector<int64_t>& symbol_values, std::vector<int64_t>* values) const;
};

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_SHAPE_PROGRAM_H_
