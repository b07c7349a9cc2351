#include "bundle_summary.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>

namespace oaaxvk::bundle_summary {

namespace {

using oinf::Metadata;
using oinf::ValueType;

// Shape-program opcodes (docs/bundle-format.md, "Shape program").
enum Op : int64_t { kConst = 0, kSymbol, kAdd, kSub, kMul, kFloorDiv, kCeilDiv, kMod, kMin, kMax, kEq, kLt };

// An expression longer than this is shown by its values at the smallest and
// the largest shape and the symbols it depends on ("8..64 (H)"): the user
// needs to see how the dimension varies, not the whole shape program.
constexpr size_t kMaxExprChars = 32;

std::string DTypeName(uint32_t code) {
  switch (code) {
    case 1: return "float32";
    case 2: return "uint8";
    case 3: return "int8";
    case 4: return "uint16";
    case 5: return "int16";
    case 6: return "int32";
    case 7: return "int64";
    case 9: return "bool";
    case 10: return "float16";
    case 11: return "float64";
    case 12: return "uint32";
    case 13: return "uint64";
    case 16: return "bfloat16";
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    case 24: return "float8e8m0";
    default: return "dtype " + std::to_string(code);
  }
}

bool Utf8Array(const Metadata* m, std::string* out) {
  if (!m || m->type != ValueType::kNdArray || m->ndarray.element_type != ValueType::kU8) return false;
  out->assign(reinterpret_cast<const char*>(m->ndarray.data.data), m->ndarray.data.size);
  return true;
}

template <typename T>
bool Scalar(const oinf::File& f, const std::string& key, T* v) {
  const Metadata* m = f.FindMetadata(key);
  return m && m->GetScalar(v);
}

}  // namespace

bool IsBundle(const oinf::File& f) {
  const Metadata* m = f.FindMetadata("format");
  return m && m->type == ValueType::kString && m->string_value == "oaax-vulkan-bundle";
}

StatusOr<Summary> Read(const oinf::File& f) {
  if (!IsBundle(f)) return InvalidArgument("not an oaax-vulkan bundle (metadata 'format' is not \"oaax-vulkan-bundle\")");
  auto err = [](const std::string& what) { return DataLoss("bundle metadata " + what); };
  Summary s;
  Utf8Array(f.FindMetadata("model.name"), &s.model_name);
  if (const Metadata* p = f.FindMetadata("producer"); p && p->type == ValueType::kString)
    s.producer = std::string(p->string_value);
  std::string features;
  if (Utf8Array(f.FindMetadata("bundle.features"), &features)) {
    size_t pos = 0;
    while (pos < features.size()) {
      size_t end = features.find(' ', pos);
      if (end == std::string::npos) end = features.size();
      if (end > pos) s.features.push_back(features.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  uint32_t nsym = 0;
  if (f.FindMetadata("shape.symbols") && !Scalar(f, "shape.symbols", &nsym)) return err("'shape.symbols' is not a u32");
  for (uint32_t k = 0; k < nsym; ++k) {
    const std::string p = "shape.symbol." + std::to_string(k) + ".";
    Symbol y;
    if (!Utf8Array(f.FindMetadata(p + "name"), &y.name)) return err("'" + p + "name' (u8 ndarray) is missing");
    if (!Scalar(f, p + "min", &y.min) || !Scalar(f, p + "max", &y.max) || !Scalar(f, p + "multiple_of", &y.multiple_of))
      return err("'" + p + "min', 'max' or 'multiple_of' (i64) is missing");
    y.is_value = f.FindMetadata(p + "input") != nullptr;
    s.symbols.push_back(std::move(y));
  }
  for (int side = 0; side < 2; ++side) {
    const std::string kind = side == 0 ? "input" : "output";
    uint32_t count = 0;
    if (!Scalar(f, "io." + kind + "s", &count)) return err("'io." + kind + "s' (u32) is missing");
    for (uint32_t i = 0; i < count; ++i) {
      const std::string p = "io." + kind + "." + std::to_string(i) + ".";
      Io io;
      if (!Utf8Array(f.FindMetadata(p + "name"), &io.name)) return err("'" + p + "name' (u8 ndarray) is missing");
      uint32_t dt = 0;
      if (!Scalar(f, p + "dtype", &dt)) return err("'" + p + "dtype' (u32) is missing");
      io.dtype = DTypeName(dt);
      const Metadata* shape = f.FindMetadata(p + "shape");
      if (!shape || shape->type != ValueType::kNdArray || shape->ndarray.element_type != ValueType::kI64)
        return err("'" + p + "shape' (i64 ndarray) is missing");
      for (uint64_t d = 0; d < shape->ndarray.numel; ++d) {
        int64_t v;
        std::memcpy(&v, shape->ndarray.data.data + 8 * d, 8);
        io.max_shape.push_back(v);
        io.dims.push_back(std::to_string(v));
        io.symbolic.push_back(false);
      }
      (side == 0 ? s.inputs : s.outputs).push_back(std::move(io));
    }
  }
  // Feature data_dependent_outputs: a hidden int32 [1] output holds the
  // extent of another output along one axis, which the device decides.
  for (size_t j = 0; j < s.outputs.size(); ++j) {
    const std::string p = "io.output." + std::to_string(j) + ".";
    uint32_t of = 0, axis = 0;
    if (!Scalar(f, p + "count_for", &of)) continue;
    if (!Scalar(f, p + "count_axis", &axis) || of >= s.outputs.size() || axis >= s.outputs[of].dims.size())
      return err("'" + p + "count_for' / 'count_axis' name no output axis");
    s.outputs[j].hidden = true;
    s.outputs[of].dims[axis] = "≤" + std::to_string(s.outputs[of].max_shape[axis]) + " (data-dependent)";
    s.outputs[of].symbolic[axis] = true;
  }
  // Dimensions an expression drives: shape.refs rows of kind 2 (input) and 3
  // (output) name an instruction of shape.program, rendered in the symbols.
  const oinf::Tensor* prog = f.FindTensor("shape.program");
  const oinf::Tensor* refs = f.FindTensor("shape.refs");
  if (!prog || !refs) return s;
  if (prog->dtype != ValueType::kI64 || prog->dims.size() != 2 || prog->dims[1] != 3 || refs->dtype != ValueType::kU32 ||
      refs->dims.size() != 2 || refs->dims[1] != 4)
    return err("tensors 'shape.program' (i64[K, 3]) and 'shape.refs' (u32[R, 4]) are malformed");
  const uint64_t K = prog->dims[0];
  auto instr = [&](uint64_t k, int64_t* out) { std::memcpy(out, prog->data.data + 24 * k, 24); };
  std::map<uint64_t, std::string> memo;
  // The expression of instruction k; "" when it is too long to be useful.
  std::function<std::string(uint64_t, int)> render = [&](uint64_t k, int depth) -> std::string {
    if (k >= K || depth > 32) return "";
    if (auto it = memo.find(k); it != memo.end()) return it->second;
    int64_t in[3];
    instr(k, in);
    std::string r;
    auto operand = [&](int64_t j) -> std::string {
      if (j < 0 || static_cast<uint64_t>(j) >= k) return "";
      std::string t = render(static_cast<uint64_t>(j), depth + 1);
      int64_t o[3];
      instr(static_cast<uint64_t>(j), o);
      const bool atom = o[0] == kConst || o[0] == kSymbol || o[0] == kFloorDiv || o[0] == kCeilDiv || o[0] == kMin ||
                        o[0] == kMax;
      return t.empty() || atom ? t : "(" + t + ")";
    };
    auto binary = [&](const char* op) {
      const std::string a = operand(in[1]), b = operand(in[2]);
      return a.empty() || b.empty() ? std::string() : a + op + b;
    };
    switch (in[0]) {
      case kConst: r = std::to_string(in[1]); break;
      case kSymbol:
        if (in[1] >= 0 && static_cast<uint64_t>(in[1]) < s.symbols.size()) r = s.symbols[static_cast<size_t>(in[1])].name;
        break;
      case kAdd: {
        int64_t o[3] = {-1, 0, 0};
        if (in[2] >= 0 && static_cast<uint64_t>(in[2]) < k) instr(static_cast<uint64_t>(in[2]), o);
        if (o[0] == kConst && o[1] < 0) {  // "H - 1", not "H + -1"
          const std::string a = operand(in[1]);
          r = a.empty() ? a : a + " - " + std::to_string(-o[1]);
        } else {
          r = binary(" + ");
        }
        break;
      }
      case kSub: r = binary(" - "); break;
      case kMul: r = binary("*"); break;
      case kFloorDiv: { const std::string b = binary("/"); r = b.empty() ? b : "⌊" + b + "⌋"; break; }
      case kCeilDiv: { const std::string b = binary("/"); r = b.empty() ? b : "⌈" + b + "⌉"; break; }
      case kMod: r = binary(" mod "); break;
      case kMin: { const std::string b = binary(", "); r = b.empty() ? b : "min(" + b + ")"; break; }
      case kMax: { const std::string b = binary(", "); r = b.empty() ? b : "max(" + b + ")"; break; }
      default: break;  // comparisons never size a dimension
    }
    if (r.size() > kMaxExprChars) r.clear();
    memo[k] = r;
    return r;
  };
  // The value of instruction k with every symbol at `at` (its min or max);
  // false where the program cannot be evaluated there (a divisor <= 0, an
  // overflow, a symbol of another kind).
  std::map<std::pair<uint64_t, bool>, std::pair<bool, int64_t>> values;
  std::function<bool(uint64_t, bool, int64_t*, int)> eval = [&](uint64_t k, bool at_max, int64_t* v, int depth) -> bool {
    if (k >= K || depth > 256) return false;
    if (auto it = values.find({k, at_max}); it != values.end()) {
      *v = it->second.second;
      return it->second.first;
    }
    int64_t in[3];
    instr(k, in);
    int64_t a = 0, b = 0;
    auto operands = [&](bool two) {
      if (in[1] < 0 || static_cast<uint64_t>(in[1]) >= k || !eval(static_cast<uint64_t>(in[1]), at_max, &a, depth + 1))
        return false;
      return !two || (in[2] >= 0 && static_cast<uint64_t>(in[2]) < k &&
                      eval(static_cast<uint64_t>(in[2]), at_max, &b, depth + 1));
    };
    bool ok = true;
    int64_t r = 0;
    switch (in[0]) {
      case kConst: r = in[1]; break;
      case kSymbol:
        ok = in[1] >= 0 && static_cast<uint64_t>(in[1]) < s.symbols.size();
        if (ok) r = at_max ? s.symbols[static_cast<size_t>(in[1])].max : s.symbols[static_cast<size_t>(in[1])].min;
        break;
      case kAdd: ok = operands(true) && !__builtin_add_overflow(a, b, &r); break;
      case kSub: ok = operands(true) && !__builtin_sub_overflow(a, b, &r); break;
      case kMul: ok = operands(true) && !__builtin_mul_overflow(a, b, &r); break;
      case kFloorDiv: ok = operands(true) && b > 0; if (ok) r = a / b - ((a % b != 0) && (a < 0)); break;
      case kCeilDiv: ok = operands(true) && b > 0; if (ok) r = a / b + ((a % b != 0) && (a > 0)); break;
      case kMod: ok = operands(true) && b > 0; if (ok) r = ((a % b) + b) % b; break;
      case kMin: ok = operands(true); r = std::min(a, b); break;
      case kMax: ok = operands(true); r = std::max(a, b); break;
      case kEq: ok = operands(true); r = a == b; break;
      case kLt: ok = operands(true); r = a < b; break;
      default: ok = false; break;
    }
    values[{k, at_max}] = {ok, r};
    *v = r;
    return ok;
  };
  // The symbols instruction k reads, "H, W".
  std::function<void(uint64_t, std::vector<bool>*, int)> uses = [&](uint64_t k, std::vector<bool>* used, int depth) {
    if (k >= K || depth > 256) return;
    int64_t in[3];
    instr(k, in);
    if (in[0] == kConst) return;
    if (in[0] == kSymbol) {
      if (in[1] >= 0 && static_cast<uint64_t>(in[1]) < used->size()) (*used)[static_cast<size_t>(in[1])] = true;
      return;
    }
    for (int j = 1; j <= 2; ++j)
      if (in[j] >= 0 && static_cast<uint64_t>(in[j]) < k) uses(static_cast<uint64_t>(in[j]), used, depth + 1);
  };
  auto long_expr = [&](uint64_t k, int64_t stored_max) {
    int64_t lo = 0, hi = 0;
    std::string text = eval(k, false, &lo, 0) && eval(k, true, &hi, 0)
                           ? std::to_string(std::min(lo, hi)) + ".." + std::to_string(std::max(lo, hi))
                           : "?≤" + std::to_string(stored_max);
    std::vector<bool> used(s.symbols.size(), false);
    uses(k, &used, 0);
    std::string names;
    for (size_t j = 0; j < used.size(); ++j)
      if (used[j]) names += (names.empty() ? "" : ", ") + s.symbols[j].name;
    return names.empty() ? text : text + " (" + names + ")";
  };
  for (uint64_t row = 0; row < refs->dims[0]; ++row) {
    uint32_t ref[4];
    std::memcpy(ref, refs->data.data + 16 * row, 16);
    if (ref[0] != 2 && ref[0] != 3) continue;
    std::vector<Io>& list = ref[0] == 2 ? s.inputs : s.outputs;
    if (ref[1] >= list.size() || ref[2] >= list[ref[1]].dims.size() || ref[3] >= K)
      return err("'shape.refs' row " + std::to_string(row) + " names no dimension or instruction");
    Io& io = list[ref[1]];
    if (io.symbolic[ref[2]]) continue;  // a data-dependent extent says more than its bound
    std::string e = render(ref[3], 0);
    io.dims[ref[2]] = e.empty() ? long_expr(ref[3], io.max_shape[ref[2]]) : e;
    io.symbolic[ref[2]] = true;
  }
  return s;
}

std::string ShapeText(const Summary& s, const Io& io, std::vector<bool>* shown) {
  shown->resize(s.symbols.size(), false);
  std::string r = "[";
  for (size_t d = 0; d < io.dims.size(); ++d) {
    r += (d ? ", " : "") + io.dims[d];
    if (!io.symbolic[d]) continue;
    for (size_t k = 0; k < s.symbols.size(); ++k) {
      const Symbol& y = s.symbols[k];
      if (io.dims[d] != y.name || (*shown)[k]) continue;
      (*shown)[k] = true;
      r += "∈" + std::to_string(y.min) + ".." + std::to_string(y.max);
      if (y.multiple_of > 1) r += " step " + std::to_string(y.multiple_of);
    }
  }
  return r + "]";
}

std::string IoText(const Summary& s) {
  std::vector<bool> shown;
  size_t width = 0;
  for (const auto* list : {&s.inputs, &s.outputs})
    for (const Io& io : *list)
      if (!io.hidden) width = std::max(width, io.name.size() + 2);
  std::string out;
  for (int side = 0; side < 2; ++side)
    for (const Io& io : side == 0 ? s.inputs : s.outputs) {
      if (io.hidden) continue;
      std::string name = "'" + io.name + "'";
      name.resize(std::max(width, name.size()), ' ');
      out += (side == 0 ? "input  " : "output ") + name + "  " + io.dtype + " " + ShapeText(s, io, &shown) + "\n";
    }
  // Symbols no dimension shows (run-time values, decided symbols) still have ranges worth knowing.
  for (size_t k = 0; k < s.symbols.size(); ++k) {
    if (shown.size() > k && shown[k]) continue;
    const Symbol& y = s.symbols[k];
    if (!y.is_value) continue;
    out += "value  " + y.name + "∈" + std::to_string(y.min) + ".." + std::to_string(y.max) +
           " (read from an input's data at run time)\n";
  }
  return out;
}

std::vector<std::string> FixedOutputWarnings(const Summary& s) {
  std::vector<std::string> w;
  std::string dynamic_inputs;  // "'x': H, W"
  for (const Io& io : s.inputs) {
    std::string dims;
    for (size_t d = 0; d < io.dims.size(); ++d)
      if (io.symbolic[d]) dims += (dims.empty() ? "" : ", ") + io.dims[d];
    if (!dims.empty()) dynamic_inputs += (dynamic_inputs.empty() ? "'" : "; '") + io.name + "': " + dims;
  }
  if (dynamic_inputs.empty()) return w;
  for (const Io& io : s.outputs) {
    if (io.hidden) continue;
    bool fixed = true;
    for (bool b : io.symbolic) fixed = fixed && !b;
    if (!fixed) continue;
    std::vector<bool> none;
    w.push_back("output '" + io.name + "' keeps the shape " + ShapeText(s, io, &none) +
                " for every input shape, while the inputs vary (" + dynamic_inputs +
                "); right for a pooled result, but if it should follow the input size the model fixes that size "
                "(e.g. a Resize with constant 'sizes' or a Reshape to a constant shape): re-export it with dynamic "
                "axes");
  }
  return w;
}

}  // namespace oaaxvk::bundle_summary
