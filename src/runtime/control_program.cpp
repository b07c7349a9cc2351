#include "runtime/control_program.h"

#include <algorithm>

namespace oaaxvk::runtime {

const char* ControlOpcodeName(int64_t opcode) {
  switch (opcode) {
    case kCtlRun: return "run";
    case kCtlRead: return "read";
    case kCtlSet: return "set";
    case kCtlBranchZero: return "branch_zero";
    case kCtlJump: return "jump";
    default: return "unknown";
  }
}

uint32_t ControlReadBytes(uint32_t dtype) {
  switch (dtype) {
    case 6: return 4;  // INT32
    case 7: return 8;  // INT64
    case 9: return 1;  // BOOL
    default: return 0;
  }
}

namespace {

long long LL(int64_t v) { return static_cast<long long>(v); }

}  // namespace

Status ControlProgram::Validate(uint64_t dispatch_rows, const ShapeProgram& shapes,
                                const std::vector<uint64_t>& buffer_bytes) const {
  // Segments partition the dispatch rows in order, so every row runs in
  // exactly one segment and the barriers of program.barrier keep meaning
  // within a segment (the runtime adds full barriers at segment edges).
  uint64_t next = 0;
  for (size_t s = 0; s < segments.size(); ++s) {
    if (segments[s].begin != next || segments[s].end < segments[s].begin)
      return DataLoss(StrFormat("control.segments row %zu is [%u, %u); segments must cover the dispatch rows in order "
                                "without gaps or overlap (expected it to begin at %llu)",
                                s, segments[s].begin, segments[s].end, static_cast<unsigned long long>(next)));
    next = segments[s].end;
  }
  if (next != dispatch_rows)
    return DataLoss(StrFormat("control.segments end at dispatch row %llu but program.dispatch has %llu rows",
                              static_cast<unsigned long long>(next), static_cast<unsigned long long>(dispatch_rows)));
  for (size_t r = 0; r < reads.size(); ++r) {
    const ControlRead& rd = reads[r];
    const uint32_t bytes = ControlReadBytes(rd.dtype);
    if (bytes == 0)
      return DataLoss(StrFormat("control.reads row %zu: dtype %u is not INT32 (6), INT64 (7) or BOOL (9)", r, rd.dtype));
    if (rd.buffer_kind != 1 && rd.buffer_kind != 3)
      return DataLoss(StrFormat("control.reads row %zu: buffer kind %u; a read-back reads the arena (1) or the outputs (3)",
                                r, rd.buffer_kind));
    const uint64_t size = rd.buffer_kind < buffer_bytes.size() ? buffer_bytes[rd.buffer_kind] : 0;
    if (rd.offset % bytes != 0 || rd.offset > size || size - rd.offset < bytes)
      return DataLoss(StrFormat("control.reads row %zu: %u bytes at offset %llu do not lie aligned inside buffer kind %u "
                                "(%llu bytes)",
                                r, bytes, static_cast<unsigned long long>(rd.offset), rd.buffer_kind,
                                static_cast<unsigned long long>(size)));
    if (rd.mode != ReadMode::kRefuse && rd.mode != ReadMode::kClamp)
      return DataLoss(StrFormat("control.reads row %zu: mode %u is not 0 (refuse) or 1 (clamp)", r,
                                static_cast<uint32_t>(rd.mode)));
    if (rd.text >= texts.size())
      return DataLoss(StrFormat("control.reads row %zu: text %u, but the bundle has %zu control texts", r, rd.text,
                                texts.size()));
  }
  const int64_t k_end = static_cast<int64_t>(program.size());
  const int64_t n_instr = static_cast<int64_t>(shapes.program.size());
  auto decided_symbol = [&](size_t k, int64_t s) -> Status {
    if (s < 0 || s >= static_cast<int64_t>(shapes.symbols.size()) || !shapes.symbols[static_cast<size_t>(s)].decided)
      return DataLoss(StrFormat("control.program row %zu (%s): symbol %lld is not a decided symbol (shape.symbol.<s>."
                                "decided); only those may change mid-frame",
                                k, ControlOpcodeName(program[k].opcode), LL(s)));
    return Status::Ok();
  };
  auto instruction = [&](size_t k, int64_t e) -> Status {
    if (e < 0 || e >= n_instr)
      return DataLoss(StrFormat("control.program row %zu (%s): shape instruction %lld outside the %lld of shape.program",
                                k, ControlOpcodeName(program[k].opcode), LL(e), LL(n_instr)));
    return Status::Ok();
  };
  auto target = [&](size_t k, int64_t t) -> Status {
    if (t < 0 || t > k_end)
      return DataLoss(StrFormat("control.program row %zu (%s): target %lld outside [0, %lld]", k,
                                ControlOpcodeName(program[k].opcode), LL(t), LL(k_end)));
    return Status::Ok();
  };
  for (size_t k = 0; k < program.size(); ++k) {
    const ControlInstruction& in = program[k];
    switch (in.opcode) {
      case kCtlRun:
        if (in.a < 0 || in.a >= static_cast<int64_t>(segments.size()))
          return DataLoss(StrFormat("control.program row %zu (run): segment %lld, but the bundle has %zu segments", k,
                                    LL(in.a), segments.size()));
        break;
      case kCtlRead:
        OAAXVK_RETURN_IF_ERROR(decided_symbol(k, in.a));
        if (in.b < 0 || in.b >= static_cast<int64_t>(reads.size()))
          return DataLoss(StrFormat("control.program row %zu (read): read %lld, but control.reads has %zu rows", k,
                                    LL(in.b), reads.size()));
        break;
      case kCtlSet:
        OAAXVK_RETURN_IF_ERROR(decided_symbol(k, in.a));
        OAAXVK_RETURN_IF_ERROR(instruction(k, in.b));
        break;
      case kCtlBranchZero:
        OAAXVK_RETURN_IF_ERROR(instruction(k, in.a));
        OAAXVK_RETURN_IF_ERROR(target(k, in.b));
        break;
      case kCtlJump:
        OAAXVK_RETURN_IF_ERROR(target(k, in.a));
        // A backward jump is the only way back, so its limit bounds every
        // loop; a forward jump needs none.
        if (in.a <= static_cast<int64_t>(k)) {
          if (in.b < 0)
            return DataLoss(StrFormat("control.program row %zu (jump back to %lld): limit %lld; a backward jump needs a "
                                      "limit >= 0 so that a frame always ends",
                                      k, LL(in.a), LL(in.b)));
          if (in.c < 0 || in.c >= static_cast<int64_t>(texts.size()))
            return DataLoss(StrFormat("control.program row %zu (jump): text %lld, but the bundle has %zu control texts", k,
                                      LL(in.c), texts.size()));
        }
        break;
      default:
        return DataLoss(StrFormat("control.program row %zu: unknown opcode %lld (this runtime knows 0-%lld)", k,
                                  LL(in.opcode), LL(kControlOpcodes - 1)));
    }
  }
  return Status::Ok();
}

Status RunControlProgram(const ControlProgram& control, const ShapeProgram& shapes, std::vector<int64_t>* symbols,
                         ControlHost* host, ControlStats* stats) {
  ControlStats local;
  ControlStats& st = stats ? *stats : local;
  std::vector<int64_t> values;
  // A decided symbol holds its minimum, a placeholder, until the program
  // reads or sets it; a guard reading one (two extents an operator needs
  // equal) is checked only once every decided symbol it reads is set.
  std::vector<char> is_set(shapes.symbols.size(), 1);
  for (size_t y = 0; y < shapes.symbols.size(); ++y) is_set[y] = shapes.symbols[y].decided ? 0 : 1;
  std::vector<std::vector<int64_t>> guard_reads(shapes.guard_expr.size());  // decided symbols each guard reads
  for (size_t g = 0; g < shapes.guard_expr.size(); ++g) {
    std::vector<int64_t> todo = {shapes.guard_expr[g]};
    std::vector<char> seen(shapes.program.size(), 0);
    while (!todo.empty()) {
      const int64_t e = todo.back();
      todo.pop_back();
      if (e < 0 || e >= static_cast<int64_t>(shapes.program.size()) || seen[static_cast<size_t>(e)]) continue;
      seen[static_cast<size_t>(e)] = 1;
      const ShapeInstruction& in = shapes.program[static_cast<size_t>(e)];
      if (in.opcode == kShapeConst) continue;
      if (in.opcode == kShapeSymbol) {
        if (in.a >= 0 && in.a < static_cast<int64_t>(is_set.size()) && !is_set[static_cast<size_t>(in.a)])
          guard_reads[g].push_back(in.a);
        continue;
      }
      todo.push_back(in.a);
      todo.push_back(in.b);
    }
  }
  bool stale = true;  // `values` must be re-evaluated before use
  auto evaluate = [&](size_t k) -> Status {
    if (!stale) return Status::Ok();
    Status s = shapes.Evaluate(*symbols, &values);
    if (!s.ok()) return s.WithContext(StrFormat("control program instruction %zu", k));
    for (size_t g = 0; g < shapes.guard_expr.size(); ++g)
      if (std::all_of(guard_reads[g].begin(), guard_reads[g].end(),
                      [&](int64_t y) { return is_set[static_cast<size_t>(y)] != 0; }) &&
          values[static_cast<size_t>(shapes.guard_expr[g])] == 0)
        return InvalidArgument(StrFormat("control program instruction %zu: at %s, %s", k,
                                         shapes.ValuesString(*symbols).c_str(),
                                         g < shapes.guard_text.size() ? shapes.guard_text[g].c_str() : "a guard fails"));
    stale = false;
    return Status::Ok();
  };
  std::vector<int64_t> taken(control.program.size(), 0);
  const int64_t k_end = static_cast<int64_t>(control.program.size());
  int64_t pc = 0;
  while (pc < k_end) {
    const size_t k = static_cast<size_t>(pc);
    const ControlInstruction& in = control.program[k];
    ++st.instructions;
    switch (in.opcode) {
      case kCtlRun: {
        OAAXVK_RETURN_IF_ERROR(evaluate(k));
        Status s = host->RunSegment(static_cast<uint32_t>(in.a), *symbols, values);
        if (!s.ok()) return s.WithContext(StrFormat("segment %lld (control program instruction %zu)", LL(in.a), k));
        ++st.segments_run;
        ++pc;
        break;
      }
      case kCtlRead: {
        const ControlRead& rd = control.reads[static_cast<size_t>(in.b)];
        const std::string& what = control.texts[rd.text];
        StatusOr<int64_t> got = host->ReadScalar(static_cast<uint32_t>(in.b), rd);
        if (!got.ok()) return got.status().WithContext(StrFormat("reading %s (control program instruction %zu)", what.c_str(), k));
        ++st.reads;
        const ShapeSymbol& y = shapes.symbols[static_cast<size_t>(in.a)];
        int64_t v = *got;
        if (!y.Valid(v)) {
          if (rd.mode == ReadMode::kRefuse)
            return InvalidArgument(StrFormat("%s is %lld, outside %s; the bundle was compiled for that range "
                                             "(control program instruction %zu)",
                                             what.c_str(), LL(v), y.RangeString().c_str(), k));
          v = std::clamp(v, y.min, y.max);
          v -= ((v % y.multiple_of) + y.multiple_of) % y.multiple_of;
          if (v < y.min) v += y.multiple_of;
        }
        (*symbols)[static_cast<size_t>(in.a)] = v;
        is_set[static_cast<size_t>(in.a)] = 1;
        stale = true;
        ++pc;
        break;
      }
      case kCtlSet: {
        OAAXVK_RETURN_IF_ERROR(evaluate(k));
        const int64_t v = values[static_cast<size_t>(in.b)];
        const ShapeSymbol& y = shapes.symbols[static_cast<size_t>(in.a)];
        if (!y.Valid(v))
          return InvalidArgument(StrFormat("control program instruction %zu sets %s to %lld, outside %s", k,
                                           y.name.c_str(), LL(v), y.RangeString().c_str()));
        (*symbols)[static_cast<size_t>(in.a)] = v;
        is_set[static_cast<size_t>(in.a)] = 1;
        stale = true;
        ++pc;
        break;
      }
      case kCtlBranchZero:
        OAAXVK_RETURN_IF_ERROR(evaluate(k));
        pc = values[static_cast<size_t>(in.a)] == 0 ? in.b : pc + 1;
        break;
      case kCtlJump:
        if (in.a <= pc) {
          if (taken[k] >= in.b)
            return InvalidArgument(StrFormat("%s: more than %lld iterations (control program instruction %zu)",
                                             control.texts[static_cast<size_t>(in.c)].c_str(), LL(in.b), k));
          ++taken[k];
        }
        pc = in.a;
        break;
      default:  // Validate refuses unknown opcodes
        return Internal(StrFormat("control program instruction %zu: opcode %lld", k, LL(in.opcode)));
    }
  }
  return Status::Ok();
}

}  // namespace oaaxvk::runtime
