#include "runtime/shape_program.h"

namespace oaaxvk::runtime {

const char* ShapeOpcodeName(int64_t opcode) {
  switch (opcode) {
    case kShapeConst: return "const";
    case kShapeSymbol: return "symbol";
    case kShapeAdd: return "add";
    case kShapeSub: return "sub";
    case kShapeMul: return "mul";
    case kShapeFloorDiv: return "floordiv";
    case kShapeCeilDiv: return "ceildiv";
    case kShapeMod: return "mod";
    case kShapeMin: return "min";
    case kShapeMax: return "max";
    case kShapeEq: return "eq";
    case kShapeLt: return "lt";
    default: return "unknown";
  }
}

std::string ShapeSymbol::RangeString() const {
  std::string s = StrFormat("[%lld, %lld]", static_cast<long long>(min), static_cast<long long>(max));
  if (multiple_of != 1) s += StrFormat(" (multiple of %lld)", static_cast<long long>(multiple_of));
  return s;
}

std::vector<int64_t> ShapeProgram::MaxValues() const {
  std::vector<int64_t> v(symbols.size());
  for (size_t s = 0; s < symbols.size(); ++s) v[s] = symbols[s].max;
  return v;
}

std::string ShapeProgram::ValuesString(const std::vector<int64_t>& values) const {
  std::string out;
  for (size_t s = 0; s < symbols.size() && s < values.size(); ++s)
    out += StrFormat("%s%s = %lld", s ? ", " : "", symbols[s].name.c_str(), static_cast<long long>(values[s]));
  return out;
}

Status ShapeProgram::Evaluate(const std::vector<int64_t>& sym, std::vector<int64_t>* values) const {
  values->resize(program.size());
  int64_t* v = values->data();
  for (size_t k = 0; k < program.size(); ++k) {
    const ShapeInstruction& in = program[k];
    if (in.opcode == kShapeConst) {
      v[k] = in.a;
      continue;
    }
    if (in.opcode == kShapeSymbol) {
      v[k] = sym[static_cast<size_t>(in.a)];
      continue;
    }
    // Operands were checked at load: earlier instructions.
    const int64_t x = v[in.a], y = v[in.b];
    auto fail = [&](const char* what) {
      return InvalidArgument(StrFormat("shape program instruction %zu (%s of v[%lld] = %lld and v[%lld] = %lld): %s, "
                                       "at %s",
                                       k, ShapeOpcodeName(in.opcode), static_cast<long long>(in.a),
                                       static_cast<long long>(x), static_cast<long long>(in.b),
                                       static_cast<long long>(y), what, ValuesString(sym).c_str()));
    };
    int64_t r = 0;
    switch (in.opcode) {
      case kShapeAdd:
        if (__builtin_add_overflow(x, y, &r)) return fail("the result overflows signed 64 bits");
        break;
      case kShapeSub:
        if (__builtin_sub_overflow(x, y, &r)) return fail("the result overflows signed 64 bits");
        break;
      case kShapeMul:
        if (__builtin_mul_overflow(x, y, &r)) return fail("the result overflows signed 64 bits");
        break;
      case kShapeFloorDiv:
      case kShapeCeilDiv:
      case kShapeMod: {
        if (y <= 0) return fail("the divisor is not positive");
        // y > 0: x / y cannot overflow; C++ division truncates toward zero.
        const int64_t q = x / y, rem = x % y;
        if (in.opcode == kShapeFloorDiv) r = (rem != 0 && x < 0) ? q - 1 : q;
        else if (in.opcode == kShapeCeilDiv) r = (rem != 0 && x > 0) ? q + 1 : q;
        else r = rem < 0 ? rem + y : rem;
        break;
      }
      case kShapeMin: r = x < y ? x : y; break;
      case kShapeMax: r = x > y ? x : y; break;
      case kShapeEq: r = x == y ? 1 : 0; break;
      case kShapeLt: r = x < y ? 1 : 0; break;
      default:
        return Internal(StrFormat("shape program instruction %zu: opcode %lld", k, static_cast<long long>(in.opcode)));
    }
    v[k] = r;
  }
  return Status::Ok();
}

}  // namespace oaaxvk::runtime
