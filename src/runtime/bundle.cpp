#include "runtime/bundle.h"

#include <algorithm>

#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "oaax_vulkan/tensors_util.h"
#include "runtime/buffer_blocks.h"
#include "runtime/checked_math.h"

#include "oaax_vulkan/lowbit_types.h"

namespace oaaxvk::runtime {

const char* OaaxDtypeName(uint32_t dtype) {
  switch (dtype) {
    case 1: return "FLOAT";
    case 2: return "UINT8";
    case 3: return "INT8";
    case 4: return "UINT16";
    case 5: return "INT16";
    case 6: return "INT32";
    case 7: return "INT64";
    case 8: return "STRING";
    case 9: return "BOOL";
    case 10: return "FLOAT16";
    case 11: return "DOUBLE";
    case 12: return "UINT32";
    case 13: return "UINT64";
    case 16: return "BFLOAT16";
    default: {
      const char* low = oaaxvk::lowbit::LowBitTypeName(dtype);
      return low ? low : "unknown";
    }
  }
}

const char* BufferSizeEntry(uint32_t kind) {
  switch (kind) {
    case kWeights: return "tensor 'weights'";
    case kArena: return "metadata 'arena.bytes'";
    case kInputs: return "metadata 'io.inputs_bytes'";
    case kOutputs: return "metadata 'io.outputs_bytes'";
    case kWeightsF16: return "tensor 'weights_f16'";
    default: return "an unknown buffer";
  }
}

namespace {

using oinf::Metadata;
using oinf::Tensor;
using oinf::ValueType;

class Reader {
 public:
  Reader(const oinf::File& f, const std::string& path) : f_(f), path_(path) {}

  Status Error(const std::string& msg) const {
    return DataLoss(StrFormat("bundle '%s': %s", path_.c_str(), msg.c_str()));
  }

  StatusOr<const Metadata*> Meta(const std::string& key) const {
    const Metadata* m = f_.FindMetadata(key);
    if (!m) return Error(StrFormat("missing metadata '%s'", key.c_str()));
    return m;
  }

  // Unsigned integer metadata of any width (u8…u64), at most `max`.
  StatusOr<uint64_t> Unsigned(const std::string& key, uint64_t max) const {
    OAAXVK_ASSIGN_OR_RETURN(const Metadata* m, Meta(key));
    uint64_t v = 0;
    switch (m->type) {
      case ValueType::kU8: { uint8_t x = 0; m->GetScalar(&x); v = x; break; }
      case ValueType::kU16: { uint16_t x = 0; m->GetScalar(&x); v = x; break; }
      case ValueType::kU32: { uint32_t x = 0; m->GetScalar(&x); v = x; break; }
      case ValueType::kU64: { uint64_t x = 0; m->GetScalar(&x); v = x; break; }
      default:
        return Error(StrFormat("metadata '%s' has type %s, expected an unsigned integer", key.c_str(),
                               oinf::ValueTypeName(m->type)));
    }
    if (v > max) return Error(StrFormat("metadata '%s' = %llu exceeds %llu", key.c_str(),
                                        static_cast<unsigned long long>(v), static_cast<unsigned long long>(max)));
    return v;
  }

  // Integer metadata of any signed width (i8…i64), or unsigned up to INT64_MAX.
  StatusOr<int64_t> Signed(const std::string& key) const {
    OAAXVK_ASSIGN_OR_RETURN(const Metadata* m, Meta(key));
    switch (m->type) {
      case ValueType::kI8: { int8_t x = 0; m->GetScalar(&x); return int64_t{x}; }
      case ValueType::kI16: { int16_t x = 0; m->GetScalar(&x); return int64_t{x}; }
      case ValueType::kI32: { int32_t x = 0; m->GetScalar(&x); return int64_t{x}; }
      case ValueType::kI64: { int64_t x = 0; m->GetScalar(&x); return x; }
      case ValueType::kU8: case ValueType::kU16: case ValueType::kU32: case ValueType::kU64: {
        OAAXVK_ASSIGN_OR_RETURN(uint64_t u, Unsigned(key, INT64_MAX));
        return static_cast<int64_t>(u);
      }
      default:
        return Error(StrFormat("metadata '%s' has type %s, expected i64", key.c_str(), oinf::ValueTypeName(m->type)));
    }
  }

  StatusOr<bool> Bool(const std::string& key) const {
    OAAXVK_ASSIGN_OR_RETURN(const Metadata* m, Meta(key));
    if (m->type != ValueType::kBool)
      return Error(StrFormat("metadata '%s' has type %s, expected bool", key.c_str(), oinf::ValueTypeName(m->type)));
    return m->payload.data[0] != 0;
  }

  StatusOr<std::string> String(const std::string& key) const {
    OAAXVK_ASSIGN_OR_RETURN(const Metadata* m, Meta(key));
    if (m->type != ValueType::kString)
      return Error(StrFormat("metadata '%s' has type %s, expected str", key.c_str(), oinf::ValueTypeName(m->type)));
    return std::string(m->string_value);
  }

  // Rank-1 U8 NDARRAY holding UTF-8.
  StatusOr<std::string> Utf8(const std::string& key) const {
    OAAXVK_ASSIGN_OR_RETURN(const Metadata* m, Meta(key));
    if (m->type != ValueType::kNdArray || m->ndarray.element_type != ValueType::kU8 ||
        m->ndarray.dims.size() != 1)
      return Error(StrFormat("metadata '%s' must be a rank-1 u8 ndarray (UTF-8 name)", key.c_str()));
    std::string s(reinterpret_cast<const char*>(m->ndarray.data.data), m->ndarray.data.size);
    if (!oinf::IsValidUtf8(s)) return Error(StrFormat("metadata '%s' is not valid UTF-8", key.c_str()));
    return s;
  }

  // Rank-1 I64 NDARRAY of non-negative dimensions.
  StatusOr<std::vector<uint64_t>> Shape(const std::string& key) const {
    OAAXVK_ASSIGN_OR_RETURN(const Metadata* m, Meta(key));
    if (m->type != ValueType::kNdArray || m->ndarray.element_type != ValueType::kI64 ||
        m->ndarray.dims.size() != 1)
      return Error(StrFormat("metadata '%s' must be a rank-1 i64 ndarray (shape)", key.c_str()));
    std::vector<uint64_t> shape(m->ndarray.numel);
    for (uint64_t i = 0; i < m->ndarray.numel; ++i) {
      int64_t d;
      memcpy(&d, m->ndarray.data.data + 8 * i, 8);
      if (d < 0) return Error(StrFormat("metadata '%s': dimension %llu is %lld (static shapes only)", key.c_str(),
                                        static_cast<unsigned long long>(i), static_cast<long long>(d)));
      shape[i] = static_cast<uint64_t>(d);
    }
    return shape;
  }

  bool HasTensor(const std::string& name) const { return f_.FindTensor(name) != nullptr; }
  bool HasMetadata(const std::string& name) const { return f_.FindMetadata(name) != nullptr; }
  const oinf::File& file() const { return f_; }

  // A tensor with data of `dtype` and rank `rank` (dims checked by caller).
  StatusOr<const Tensor*> DataTensor(const std::string& name, ValueType dtype, size_t rank) const {
    const Tensor* t = f_.FindTensor(name);
    if (!t) return Error(StrFormat("missing tensor '%s'", name.c_str()));
    if (t->dtype != dtype)
      return Error(StrFormat("tensor '%s' has dtype %s, expected %s", name.c_str(), oinf::ValueTypeName(t->dtype),
                             oinf::ValueTypeName(dtype)));
    if (t->dims.size() != rank)
      return Error(StrFormat("tensor '%s' has rank %zu, expected %zu", name.c_str(), t->dims.size(), rank));
    if (!t->has_data && t->numel != 0) return Error(StrFormat("tensor '%s' has no data", name.c_str()));
    return t;
  }

 private:
  const oinf::File& f_;
  const std::string& path_;
};

template <typename T>
T Load(const uint8_t* p, uint64_t index) {
  T v;
  memcpy(&v, p + index * sizeof(T), sizeof(T));
  return v;
}

std::string ShapeString(const std::vector<uint64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += StrFormat("%s%llu", i ? ", " : "", static_cast<unsigned long long>(s[i]));
  return out + "]";
}

Status ParseIo(const Reader& r, const char* kind, uint64_t buffer_bytes, const std::set<std::string>& features,
               std::vector<IoDesc>* out) {
  const bool is_input = strcmp(kind, "input") == 0;
  OAAXVK_ASSIGN_OR_RETURN(uint64_t count, r.Unsigned(is_input ? "io.inputs" : "io.outputs", 1u << 16));
  std::set<std::string> names;
  for (uint64_t i = 0; i < count; ++i) {
    const std::string p = StrFormat("io.%s.%llu.", kind, static_cast<unsigned long long>(i));
    IoDesc d;
    OAAXVK_ASSIGN_OR_RETURN(d.name, r.Utf8(p + "name"));
    OAAXVK_ASSIGN_OR_RETURN(uint64_t dtype, r.Unsigned(p + "dtype", UINT32_MAX));
    d.dtype = static_cast<uint32_t>(dtype);
    OAAXVK_ASSIGN_OR_RETURN(d.shape, r.Shape(p + "shape"));
    OAAXVK_ASSIGN_OR_RETURN(d.offset, r.Unsigned(p + "offset", UINT64_MAX));
    OAAXVK_ASSIGN_OR_RETURN(d.nbytes, r.Unsigned(p + "nbytes", UINT64_MAX));
    const size_t esize = TensorElementSize(d.dtype);
    if (esize == 0)
      return r.Error(StrFormat("%s '%s': unsupported data type %u (%s)", kind, d.name.c_str(), d.dtype,
                               OaaxDtypeName(d.dtype)));
    uint64_t numel = 1;
    for (uint64_t dim : d.shape)
      if (!CheckedMul(numel, dim, &numel))
        return r.Error(StrFormat("%s '%s': shape %s has more elements than 64 bits count", kind, d.name.c_str(),
                                 ShapeString(d.shape).c_str()));
    // Feature value_symbols: an output's stored shape may be computed from
    // input values (at their maxima); ParseShapeProgram checks those outputs.
    const bool deferred = !is_input && features.count("value_symbols") != 0 && features.count("dynamic_shapes") != 0;
    if (!deferred && (numel > UINT64_MAX / esize || TensorByteSize(d.dtype, numel) != d.nbytes))
      return r.Error(StrFormat("%s '%s': nbytes %llu != %llu, the bytes of %llu elements (shape %s, %s)", kind,
                               d.name.c_str(), static_cast<unsigned long long>(d.nbytes),
                               static_cast<unsigned long long>(TensorByteSize(d.dtype, numel)),
                               static_cast<unsigned long long>(numel), ShapeString(d.shape).c_str(),
                               OaaxDtypeName(d.dtype)));
    if (d.offset % kBindingAlignment != 0)
      return r.Error(StrFormat("%s '%s': offset %llu is not a multiple of %llu", kind, d.name.c_str(),
                               static_cast<unsigned long long>(d.offset),
                               static_cast<unsigned long long>(kBindingAlignment)));
    if (!RangeWithin(d.offset, d.nbytes, buffer_bytes))
      return r.Error(StrFormat("%s '%s': bytes [%llu, +%llu) lie outside the %s buffer (%llu bytes)", kind,
                               d.name.c_str(), static_cast<unsigned long long>(d.offset),
                               static_cast<unsigned long long>(d.nbytes), is_input ? "inputs" : "outputs",
                               static_cast<unsigned long long>(buffer_bytes)));
    if (!names.insert(d.name).second)
      return r.Error(StrFormat("%s name '%s' appears twice", kind, d.name.c_str()));
    if (is_input && r.HasTensor(p + "bound")) {
      if (!features.count("bound_inputs"))
        return r.Error(StrFormat("tensor '%sbound' needs feature 'bound_inputs' in bundle.features", p.c_str()));
      OAAXVK_ASSIGN_OR_RETURN(const Tensor* bt, r.DataTensor(p + "bound", ValueType::kU8, 1));
      if (bt->data.size != d.nbytes)
        return r.Error(StrFormat("tensor '%sbound' has %llu bytes, input '%s' has %llu", p.c_str(),
                                 static_cast<unsigned long long>(bt->data.size), d.name.c_str(),
                                 static_cast<unsigned long long>(d.nbytes)));
      d.bound = bt->data.data;
    }
    if (is_input && r.HasMetadata(p + "value_min")) {
      OAAXVK_ASSIGN_OR_RETURN(const Metadata* lo, r.Meta(p + "value_min"));
      OAAXVK_ASSIGN_OR_RETURN(const Metadata* hi, r.Meta(p + "value_max"));
      if (!lo->GetScalar(&d.value_min) || !hi->GetScalar(&d.value_max) || !(d.value_min <= d.value_max))
        return r.Error(StrFormat("input '%s': %svalue_min / %svalue_max must be f64 scalars with min <= max",
                                 d.name.c_str(), p.c_str(), p.c_str()));
      if (r.HasMetadata(p + "value_rule")) { OAAXVK_ASSIGN_OR_RETURN(d.value_rule, r.Utf8(p + "value_rule")); }
      d.has_value_range = true;
    }
    if (!is_input && r.HasMetadata(p + "count_for")) {
      if (!features.count("data_dependent_outputs"))
        return r.Error(StrFormat("metadata '%scount_for' needs feature 'data_dependent_outputs' in bundle.features",
                                 p.c_str()));
      OAAXVK_ASSIGN_OR_RETURN(uint64_t target, r.Unsigned(p + "count_for", UINT32_MAX));
      OAAXVK_ASSIGN_OR_RETURN(uint64_t axis, r.Unsigned(p + "count_axis", UINT32_MAX));
      if (d.dtype != 6 /* int32 */ || d.shape != std::vector<uint64_t>{1})
        return r.Error(StrFormat("output '%s' holds an extent: it must be an int32 [1], is %s %s", d.name.c_str(),
                                 OaaxDtypeName(d.dtype), ShapeString(d.shape).c_str()));
      d.count_for = static_cast<int64_t>(target);
      d.count_axis = static_cast<int64_t>(axis);
    }
    out->push_back(std::move(d));
  }
  // Feature data_dependent_outputs: each extent output names another output
  // (not itself an extent, at most one extent each) and one of its axes.
  std::vector<int> counted(out->size(), 0);
  for (const IoDesc& d : *out) {
    if (d.count_for < 0) continue;
    const size_t t = static_cast<size_t>(d.count_for);
    if (t >= out->size() || (*out)[t].count_for >= 0 || counted[t]++ ||
        static_cast<uint64_t>(d.count_axis) >= (*out)[t].shape.size())
      return r.Error(StrFormat("output '%s': count_for %lld / count_axis %lld name no other output's axis (or one "
                               "that already has an extent)",
                               d.name.c_str(), static_cast<long long>(d.count_for),
                               static_cast<long long>(d.count_axis)));
  }
  return Status::Ok();
}


// An OINF sizevar name for a symbol name: characters outside [A-Za-z0-9._-]
// become '_' (docs/bundle-format.md, "Dynamic shapes").
std::string SizeVarName(const std::string& symbol) {
  std::string s;
  for (unsigned char c : symbol) s += (isalnum(c) || c == '.' || c == '_' || c == '-') && c < 0x80 ? static_cast<char>(c) : '_';
  return s;
}

const char* kTableNames[3] = {"program.dispatch", "program.dispatch.cpu", "program.dispatch.gpu"};

// Feature segment_program: parses `control.*` (docs/bundle-format.md,
// "Segment program") into b->control and validates it (ControlProgram::Validate).
Status ParseControlProgram(const Reader& r, Bundle* b) {
  ControlProgram& cp = b->control;
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* ts, r.DataTensor("control.segments", ValueType::kU32, 2));
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* tp, r.DataTensor("control.program", ValueType::kI64, 2));
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* tr, r.DataTensor("control.reads", ValueType::kU64, 2));
  const struct { const Tensor* t; uint64_t cols; const char* name; const char* type; } shapes[] = {
      {ts, 2, "control.segments", "u32[N, 2]"}, {tp, 4, "control.program", "i64[K, 4]"},
      {tr, 5, "control.reads", "u64[R, 5]"}};
  for (const auto& x : shapes)
    if (x.t->dims[1] != x.cols || x.t->dims[0] > kMaxDispatches)
      return r.Error(StrFormat("tensor '%s' must be %s with at most %llu rows, has %llu rows and %llu columns", x.name,
                               x.type, static_cast<unsigned long long>(kMaxDispatches),
                               static_cast<unsigned long long>(x.t->dims[0]),
                               static_cast<unsigned long long>(x.t->dims[1])));
  for (uint64_t n = 0; n < ts->dims[0]; ++n)
    cp.segments.push_back({Load<uint32_t>(ts->data.data, 2 * n), Load<uint32_t>(ts->data.data, 2 * n + 1)});
  for (uint64_t k = 0; k < tp->dims[0]; ++k)
    cp.program.push_back({Load<int64_t>(tp->data.data, 4 * k), Load<int64_t>(tp->data.data, 4 * k + 1),
                          Load<int64_t>(tp->data.data, 4 * k + 2), Load<int64_t>(tp->data.data, 4 * k + 3)});
  for (uint64_t j = 0; j < tr->dims[0]; ++j) {
    uint64_t c[5];
    for (int i = 0; i < 5; ++i) c[i] = Load<uint64_t>(tr->data.data, 5 * j + i);
    if (c[0] > UINT32_MAX || c[2] > UINT32_MAX || c[3] > UINT32_MAX || c[4] > UINT32_MAX)
      return r.Error(StrFormat("control.reads row %llu: buffer kind, dtype, mode and text are 32-bit values",
                               static_cast<unsigned long long>(j)));
    cp.reads.push_back({static_cast<uint32_t>(c[0]), c[1], static_cast<uint32_t>(c[2]),
                        static_cast<ReadMode>(c[3]), static_cast<uint32_t>(c[4])});
  }
  OAAXVK_ASSIGN_OR_RETURN(uint64_t nt, r.Unsigned("control.texts", 1u << 16));
  for (uint64_t t = 0; t < nt; ++t) {
    OAAXVK_ASSIGN_OR_RETURN(std::string text, r.Utf8(StrFormat("control.text.%llu", static_cast<unsigned long long>(t))));
    cp.texts.push_back(std::move(text));
  }
  const std::vector<uint64_t> bytes(std::begin(b->buffer_bytes), std::end(b->buffer_bytes));
  Status s = cp.Validate(b->dispatches.size(), b->shape, bytes);
  if (!s.ok()) return r.Error(s.message());
  return Status::Ok();
}

// Feature dynamic_shapes: parses and validates the symbols, `shape.program`
// and `shape.refs` (docs/bundle-format.md, "Dynamic shapes") into b->shape.
// Called once every other entry is parsed (the stored values it checks the
// references against are).
Status ParseShapeProgram(const Reader& r, Bundle* b) {
  ShapeProgram& sp = b->shape;
  const oinf::File& f = r.file();
  // ---- symbols ----
  OAAXVK_ASSIGN_OR_RETURN(uint64_t ns, r.Unsigned("shape.symbols", 1u << 16));
  std::set<std::string> names;
  for (uint64_t s = 0; s < ns; ++s) {
    const std::string p = StrFormat("shape.symbol.%llu.", static_cast<unsigned long long>(s));
    ShapeSymbol sym;
    OAAXVK_ASSIGN_OR_RETURN(sym.name, r.Utf8(p + "name"));
    OAAXVK_ASSIGN_OR_RETURN(sym.min, r.Signed(p + "min"));
    OAAXVK_ASSIGN_OR_RETURN(sym.max, r.Signed(p + "max"));
    OAAXVK_ASSIGN_OR_RETURN(sym.multiple_of, r.Signed(p + "multiple_of"));
    const char* nm = sym.name.c_str();
    const long long mn = sym.min, mx = sym.max, mult = sym.multiple_of;
    if (sym.name.empty()) return r.Error(StrFormat("metadata '%sname' is empty", p.c_str()));
    if (f.FindMetadata(p + "scale") && !f.FindMetadata(p + "input"))
      return r.Error(StrFormat("symbol %llu ('%s'): metadata '%sscale' is present but '%sinput' is not (only a value "
                               "symbol has a scale)", static_cast<unsigned long long>(s), nm, p.c_str(), p.c_str()));
    // Feature value_symbols: element `element` of an integer input's data.
    if (f.FindMetadata(p + "input")) {
      if (!b->features.count("value_symbols"))
        return r.Error(StrFormat("metadata '%sinput' is present but bundle.features does not list 'value_symbols'", p.c_str()));
      OAAXVK_ASSIGN_OR_RETURN(uint64_t input, r.Unsigned(p + "input", UINT32_MAX));
      OAAXVK_ASSIGN_OR_RETURN(sym.element, r.Unsigned(p + "element", UINT32_MAX));
      if (input >= b->inputs.size())
        return r.Error(StrFormat("symbol %llu ('%s'): %sinput = %llu, but io.inputs = %zu", static_cast<unsigned long long>(s),
                                 nm, p.c_str(), static_cast<unsigned long long>(input), b->inputs.size()));
      const IoDesc& d = b->inputs[input];
      uint64_t numel = 1;  // ParseIo checked that the product fits (numel x element size = nbytes)
      for (uint64_t x : d.shape) numel *= x;
      // Feature float_value_symbols: a float element e read as floor(e * scale).
      if (f.FindMetadata(p + "scale")) {
        if (!b->features.count("float_value_symbols"))
          return r.Error(StrFormat("metadata '%sscale' is present but bundle.features does not list 'float_value_symbols'",
                                   p.c_str()));
        OAAXVK_ASSIGN_OR_RETURN(sym.scale, r.Unsigned(p + "scale", uint64_t{1} << 52));
        if (f.FindMetadata(p + "exact")) {
          if (!b->features.count("exact_value_symbols"))
            return r.Error(StrFormat("metadata '%sexact' is present but bundle.features does not list "
                                     "'exact_value_symbols'", p.c_str()));
          OAAXVK_ASSIGN_OR_RETURN(uint64_t exact, r.Unsigned(p + "exact", 1));
          sym.exact = exact == 1;
        }
        if (sym.scale < 1)
          return r.Error(StrFormat("symbol %llu ('%s'): %sscale is 0 (must be >= 1)", static_cast<unsigned long long>(s),
                                   nm, p.c_str()));
        if (d.dtype != 1 /* float32 */ && d.dtype != 10 /* float16 */ && d.dtype != 11 /* float64 */)
          return r.Error(StrFormat("symbol %llu ('%s'): input '%s' has data type %u; a scaled value symbol reads a "
                                   "float32, float16 or float64 input", static_cast<unsigned long long>(s), nm,
                                   d.name.c_str(), d.dtype));
      } else if (d.dtype != 6 /* int32 */ && d.dtype != 7 /* int64 */ && d.dtype != 9 /* bool */) {
        return r.Error(StrFormat("symbol %llu ('%s'): input '%s' has data type %u; a value symbol reads an int32, "
                                 "int64 or bool input", static_cast<unsigned long long>(s), nm, d.name.c_str(), d.dtype));
      }
      if (sym.element >= numel)
        return r.Error(StrFormat("symbol %llu ('%s'): element %llu of input '%s', which has %llu elements",
                                 static_cast<unsigned long long>(s), nm, static_cast<unsigned long long>(sym.element),
                                 d.name.c_str(), static_cast<unsigned long long>(numel)));
      if (d.bound)
        return r.Error(StrFormat("symbol %llu ('%s'): input '%s' is bound at conversion", static_cast<unsigned long long>(s),
                                 nm, d.name.c_str()));
      sym.input = static_cast<int64_t>(input);
      sp.has_value_symbols = true;
      sp.value_source.resize(b->inputs.size(), 0);
      sp.value_source[input] = 1;
    }
    // Feature segment_program: set mid-frame by the control program.
    if (f.FindMetadata(p + "decided")) {
      if (!b->features.count("segment_program"))
        return r.Error(StrFormat("metadata '%sdecided' is present but bundle.features does not list 'segment_program'",
                                 p.c_str()));
      OAAXVK_ASSIGN_OR_RETURN(uint64_t decided, r.Unsigned(p + "decided", 1));
      sym.decided = decided == 1;
      if (sym.decided && sym.is_value())
        return r.Error(StrFormat("symbol %llu ('%s') is both a value symbol and a decided symbol",
                                 static_cast<unsigned long long>(s), nm));
    }
    if (!names.insert(sym.name).second)
      return r.Error(StrFormat("symbol %llu: the name '%s' is used by an earlier symbol", static_cast<unsigned long long>(s), nm));
    if (mult < 1) return r.Error(StrFormat("symbol %llu ('%s'): %smultiple_of = %lld (must be >= 1)",
                                           static_cast<unsigned long long>(s), nm, p.c_str(), mult));
    // A symbol is a size (an input dimension): 0 is valid (a zero-size
    // tensor). A decided symbol holds what the device decided (iterations,
    // an extent, a condition, a coordinate read back inside a loop body) and
    // a value symbol an input's value: any range.
    if ((mn < 0 && !sym.is_value() && !sym.decided) || mn > mx || mn % mult != 0 || mx % mult != 0)
      return r.Error(StrFormat("symbol %llu ('%s'): range [%lld, %lld] with multiple_of %lld is invalid (need "
                               "0 <= min <= max (a value or decided symbol: min <= max), both multiples of "
                               "multiple_of)",
                               static_cast<unsigned long long>(s), nm, mn, mx, mult));
    const std::string sv = SizeVarName(sym.name);
    const oinf::SizeVar* var = f.FindSizeVar(sv);
    if (!var)
      return r.Error(StrFormat("symbol %llu ('%s'): sizevar '%s' is missing", static_cast<unsigned long long>(s), nm,
                               sv.c_str()));
    // A sizevar is unsigned: a value symbol whose max is negative has sizevar 0.
    if (var->value != static_cast<uint64_t>(std::max(mx, 0LL)))
      return r.Error(StrFormat("symbol %llu ('%s'): sizevar '%s' = %llu but %smax = %lld", static_cast<unsigned long long>(s),
                               nm, sv.c_str(), static_cast<unsigned long long>(var->value), p.c_str(), mx));
    sp.symbols.push_back(std::move(sym));
  }

  // ---- program ----
  if (!f.FindTensor("shape.program"))
    return r.Error("feature dynamic_shapes is required but tensor 'shape.program' is missing");
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* tp, r.DataTensor("shape.program", ValueType::kI64, 2));
  if (tp->dims[1] != 3)
    return r.Error(StrFormat("tensor 'shape.program' must be i64[K, 3], has %llu columns",
                             static_cast<unsigned long long>(tp->dims[1])));
  const uint64_t nk = tp->dims[0];
  for (uint64_t k = 0; k < nk; ++k) {
    ShapeInstruction in;
    in.opcode = Load<int64_t>(tp->data.data, 3 * k);
    in.a = Load<int64_t>(tp->data.data, 3 * k + 1);
    in.b = Load<int64_t>(tp->data.data, 3 * k + 2);
    const unsigned long long row = static_cast<unsigned long long>(k);
    if (in.opcode < 0 || in.opcode >= kShapeOpcodes)
      return r.Error(StrFormat("shape.program row %llu: unknown opcode %lld (known: 0 const, 1 symbol, 2 add, 3 sub, "
                               "4 mul, 5 floordiv, 6 ceildiv, 7 mod, 8 min, 9 max, 10 eq, 11 lt)",
                               row, static_cast<long long>(in.opcode)));
    if ((in.opcode == kShapeEq || in.opcode == kShapeLt) && !b->features.count("value_symbols") &&
        !b->features.count("segment_program"))
      return r.Error(StrFormat("shape.program row %llu: opcode %s needs feature 'value_symbols' in bundle.features "
                               "(or 'segment_program')", row,
                               ShapeOpcodeName(in.opcode)));
    if (in.opcode == kShapeSymbol) {
      if (in.a < 0 || static_cast<uint64_t>(in.a) >= ns)
        return r.Error(StrFormat("shape.program row %llu (symbol): symbol %lld out of range (shape.symbols = %llu)", row,
                                 static_cast<long long>(in.a), static_cast<unsigned long long>(ns)));
    } else if (in.opcode != kShapeConst) {
      for (int op = 0; op < 2; ++op) {
        const int64_t x = op ? in.b : in.a;
        if (x < 0 || static_cast<uint64_t>(x) >= k)
          return r.Error(StrFormat("shape.program row %llu (%s): operand %c = %lld is not an earlier instruction "
                                   "(must be in [0, %llu))",
                                   row, ShapeOpcodeName(in.opcode), op ? 'b' : 'a', static_cast<long long>(x), row));
      }
    }
    sp.program.push_back(in);
  }

  // ---- references ----
  if (!f.FindTensor("shape.refs"))
    return r.Error("feature dynamic_shapes is required but tensor 'shape.refs' is missing");
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* tr, r.DataTensor("shape.refs", ValueType::kU32, 2));
  if (tr->dims[1] != 4)
    return r.Error(StrFormat("tensor 'shape.refs' must be u32[R, 4], has %llu columns",
                             static_cast<unsigned long long>(tr->dims[1])));
  const std::vector<Dispatch>* tables[3] = {&b->dispatches, &b->cpu_dispatches, &b->gpu_dispatches};
  const bool has_table[3] = {true, b->features.count("kernel_variants") != 0, b->features.count("device_variants") != 0};
  const size_t nd = b->dispatches.size();
  sp.group_expr.assign(3, {});
  for (int t = 0; t < 3; ++t)
    if (has_table[t]) sp.group_expr[t].assign(nd, {-1, -1, -1});
  sp.input_symbol.resize(b->inputs.size());
  for (size_t i = 0; i < b->inputs.size(); ++i) sp.input_symbol[i].assign(b->inputs[i].shape.size(), -1);
  sp.output_expr.resize(b->outputs.size());
  for (size_t o = 0; o < b->outputs.size(); ++o) sp.output_expr[o].assign(b->outputs[o].shape.size(), -1);
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint64_t> seen;
  const uint64_t nr = tr->dims[0];
  // "<field>" of a reference, for messages.
  auto field = [&](const ShapeRef& ref) -> std::string {
    switch (ref.kind) {
      case kRefGroupCount:
        return StrFormat("group count %c of %s row %u", "xyz"[ref.sub % 3], kTableNames[ref.sub / 3], ref.index);
      case kRefSpec: return StrFormat("program.spec[%u]", ref.index);
      case kRefInputDim: return StrFormat("input '%s' dimension %u", b->inputs[ref.index].name.c_str(), ref.sub);
      case kRefParam: return StrFormat("parameter slot %u", ref.index);
      case kRefGuard: return StrFormat("guard %u", ref.index);
      default: return StrFormat("output '%s' dimension %u", b->outputs[ref.index].name.c_str(), ref.sub);
    }
  };
  // Feature parameter_buffer: the number of parameter slots.
  if (f.FindMetadata("shape.params")) {
    if (!b->features.count("parameter_buffer"))
      return r.Error("metadata 'shape.params' is present but bundle.features does not list 'parameter_buffer'");
    OAAXVK_ASSIGN_OR_RETURN(uint64_t params, r.Unsigned("shape.params", UINT32_MAX));
    sp.params = static_cast<uint32_t>(params);
    if (sp.params > kParamSlots)
      return r.Error(StrFormat("shape.params = %u exceeds the parameter buffer's %u slots", sp.params, kParamSlots));
  }
  sp.param_expr.assign(sp.params, -1);
  // Feature value_symbols: the guards and their texts.
  if (f.FindMetadata("shape.guards")) {
    if (!b->features.count("value_symbols"))
      return r.Error("metadata 'shape.guards' is present but bundle.features does not list 'value_symbols'");
    OAAXVK_ASSIGN_OR_RETURN(uint64_t ng, r.Unsigned("shape.guards", 1u << 16));
    for (uint64_t g = 0; g < ng; ++g) {
      OAAXVK_ASSIGN_OR_RETURN(std::string text, r.Utf8(StrFormat("shape.guard.%llu.text", static_cast<unsigned long long>(g))));
      sp.guard_text.push_back(std::move(text));
    }
  }
  sp.guard_expr.assign(sp.guard_text.size(), -1);
  for (uint64_t j = 0; j < nr; ++j) {
    ShapeRef ref;
    ref.kind = Load<uint32_t>(tr->data.data, 4 * j);
    ref.index = Load<uint32_t>(tr->data.data, 4 * j + 1);
    ref.sub = Load<uint32_t>(tr->data.data, 4 * j + 2);
    ref.expr = Load<uint32_t>(tr->data.data, 4 * j + 3);
    const unsigned long long row = static_cast<unsigned long long>(j);
    auto bad = [&](const std::string& why) {
      return r.Error(StrFormat("shape.refs row %llu (kind %u, index %u, sub %u, expr %u): %s", row, ref.kind, ref.index,
                               ref.sub, ref.expr, why.c_str()));
    };
    switch (ref.kind) {
      case kRefGroupCount:
        if (ref.index >= nd) return bad(StrFormat("dispatch row out of range (program.dispatch has %zu rows)", nd));
        if (ref.sub >= 9) return bad("sub must be table * 3 + axis, in [0, 9)");
        if (!has_table[ref.sub / 3]) return bad(StrFormat("the bundle has no %s", kTableNames[ref.sub / 3]));
        break;
      case kRefSpec:
        if (ref.index >= b->spec.size())
          return bad(StrFormat("index out of range (program.spec has %zu values)", b->spec.size()));
        if (ref.sub != 0) return bad("sub must be 0 for a specialization value");
        break;
      case kRefInputDim:
        if (ref.index >= b->inputs.size())
          return bad(StrFormat("input out of range (io.inputs = %zu)", b->inputs.size()));
        if (ref.sub >= b->inputs[ref.index].shape.size())
          return bad(StrFormat("input '%s' has rank %zu", b->inputs[ref.index].name.c_str(),
                               b->inputs[ref.index].shape.size()));
        break;
      case kRefOutputDim:
        if (ref.index >= b->outputs.size())
          return bad(StrFormat("output out of range (io.outputs = %zu)", b->outputs.size()));
        if (ref.sub >= b->outputs[ref.index].shape.size())
          return bad(StrFormat("output '%s' has rank %zu", b->outputs[ref.index].name.c_str(),
                               b->outputs[ref.index].shape.size()));
        break;
      case kRefParam:
        if (ref.index >= sp.params)
          return bad(StrFormat("parameter slot out of range (shape.params = %u)", sp.params));
        if (ref.sub != 0) return bad("sub must be 0 for a parameter slot");
        break;
      case kRefGuard:
        if (ref.index >= sp.guard_text.size())
          return bad(StrFormat("guard out of range (shape.guards = %zu)", sp.guard_text.size()));
        if (ref.sub != 0) return bad("sub must be 0 for a guard");
        break;
      default:
        return bad("unknown kind (known: 0 group count, 1 specialization value, 2 input dimension, 3 output dimension, "
                   "4 parameter slot, 5 guard)");
    }
    if (ref.expr >= nk)
      return bad(StrFormat("instruction out of range (shape.program has %llu)", static_cast<unsigned long long>(nk)));
    auto [it, inserted] = seen.emplace(std::make_tuple(ref.kind, ref.index, ref.sub), j);
    if (!inserted)
      return bad(StrFormat("%s is already referenced by row %llu", field(ref).c_str(),
                           static_cast<unsigned long long>(it->second)));
    switch (ref.kind) {
      case kRefGroupCount: sp.group_expr[ref.sub / 3][ref.index][ref.sub % 3] = ref.expr; break;
      case kRefSpec: sp.spec_expr.emplace_back(ref.index, ref.expr); break;
      case kRefParam: sp.param_expr[ref.index] = ref.expr; break;
      case kRefGuard: sp.guard_expr[ref.index] = ref.expr; break;
      case kRefInputDim: {
        const ShapeInstruction& in = sp.program[ref.expr];
        if (in.opcode != kShapeSymbol)
          return bad(StrFormat("%s must evaluate a symbol instruction, but instruction %u is %s", field(ref).c_str(),
                               ref.expr, ShapeOpcodeName(in.opcode)));
        if (sp.symbols[static_cast<size_t>(in.a)].is_value())
          return bad(StrFormat("%s evaluates symbol '%s', which is a value symbol", field(ref).c_str(),
                               sp.symbols[static_cast<size_t>(in.a)].name.c_str()));
        sp.input_symbol[ref.index][ref.sub] = static_cast<int>(in.a);
        if (b->inputs[ref.index].bound)
          return bad(StrFormat("input '%s' is bound at conversion (io.input.%u.bound), so its dimensions are static",
                               b->inputs[ref.index].name.c_str(), ref.index));
        break;
      }
      default: sp.output_expr[ref.index][ref.sub] = ref.expr; break;
    }
    sp.refs.push_back(ref);
  }
  std::sort(sp.spec_expr.begin(), sp.spec_expr.end());
  for (uint32_t p = 0; p < sp.params; ++p)
    if (sp.param_expr[p] < 0)
      return r.Error(StrFormat("parameter slot %u of shape.params = %u has no shape.refs row of kind 4", p, sp.params));
  for (size_t g = 0; g < sp.guard_expr.size(); ++g)
    if (sp.guard_expr[g] < 0)
      return r.Error(StrFormat("guard %zu of shape.guards = %zu has no shape.refs row of kind 5", g, sp.guard_expr.size()));
  // Every symbol is determined by the input shapes (or, a value symbol, by its input's data).
  std::vector<bool> determined(ns, false);
  for (uint64_t s = 0; s < ns; ++s) determined[s] = sp.symbols[s].is_value() || sp.symbols[s].decided;
  for (const auto& dims : sp.input_symbol)
    for (int s : dims)
      if (s >= 0) determined[static_cast<size_t>(s)] = true;
  for (uint64_t s = 0; s < ns; ++s)
    if (!determined[s])
      return r.Error(StrFormat("symbol %llu ('%s') is no input dimension (no shape.refs row of kind 2 evaluates it), so "
                               "the input shapes cannot determine it",
                               static_cast<unsigned long long>(s), sp.symbols[s].name.c_str()));

  // Feature value_symbols: every output whose dimensions do not depend on a
  // value symbol or a decided one (run-time values both; the toolchain plans
  // such an output at its largest over their ranges) holds exactly its
  // stored shape's bytes (others are checked per inference: the evaluated
  // shape must fit nbytes).
  std::vector<char> by_value(sp.program.size(), 0);
  for (size_t k = 0; k < sp.program.size(); ++k) {
    const ShapeInstruction& in = sp.program[k];
    if (in.opcode == kShapeSymbol)
      by_value[k] = sp.symbols[static_cast<size_t>(in.a)].is_value() || sp.symbols[static_cast<size_t>(in.a)].decided;
    else if (in.opcode != kShapeConst) by_value[k] = by_value[in.a] || by_value[in.b];
  }
  for (size_t o = 0; o < b->outputs.size(); ++o) {
    const IoDesc& d = b->outputs[o];
    bool value_shaped = false;
    for (int64_t e : sp.output_expr[o]) value_shaped = value_shaped || (e >= 0 && by_value[static_cast<size_t>(e)]);
    uint64_t numel = 1;
    for (uint64_t dim : d.shape) numel = dim != 0 && numel > UINT64_MAX / dim ? UINT64_MAX : numel * dim;
    const size_t esize = TensorElementSize(d.dtype);
    if (!value_shaped && (numel > UINT64_MAX / esize || TensorByteSize(d.dtype, numel) != d.nbytes))
      return r.Error(StrFormat("output '%s': nbytes %llu != numel %llu x %zu (shape %s)", d.name.c_str(),
                               static_cast<unsigned long long>(d.nbytes), static_cast<unsigned long long>(numel), esize,
                               ShapeString(d.shape).c_str()));
  }

  // ---- at the maximum shape every reference equals its stored field ----
  const std::vector<int64_t> max = sp.MaxValues();
  std::vector<int64_t> v;
  if (Status st = sp.Evaluate(max, &v); !st.ok())
    return r.Error("at the maximum shape: " + st.message());
  for (size_t j = 0; j < sp.refs.size(); ++j) {
    const ShapeRef& ref = sp.refs[j];
    const int64_t got = v[ref.expr];
    bool equal = false;
    unsigned long long stored = 0;
    switch (ref.kind) {
      case kRefGroupCount:
        stored = (*tables[ref.sub / 3])[ref.index].groups[ref.sub % 3];
        equal = got >= 0 && static_cast<uint64_t>(got) == stored;
        break;
      case kRefSpec:
        // A 32-bit specialization value: an int32 or uint32 bit pattern.
        stored = b->spec[ref.index];
        equal = got >= INT32_MIN && got <= static_cast<int64_t>(UINT32_MAX) &&
                static_cast<uint32_t>(got) == static_cast<uint32_t>(stored);
        break;
      case kRefInputDim:
        stored = b->inputs[ref.index].shape[ref.sub];
        equal = got >= 0 && static_cast<uint64_t>(got) == stored;
        break;
      case kRefGuard:  // no stored field: checked per inference
        equal = true;
        break;
      case kRefParam:  // no stored field: a 32-bit value at the maximum shape
        if (got < INT32_MIN || got > static_cast<int64_t>(UINT32_MAX))
          return r.Error(StrFormat("shape.refs row %zu: %s evaluates to %lld (instruction %u) at the maximum shape (%s), "
                                   "which is not a 32-bit value",
                                   j, field(ref).c_str(), static_cast<long long>(got), ref.expr,
                                   sp.ValuesString(max).c_str()));
        equal = true;
        break;
      default:
        stored = b->outputs[ref.index].shape[ref.sub];
        equal = got >= 0 && static_cast<uint64_t>(got) == stored;
        break;
    }
    if (!equal)
      return r.Error(StrFormat("shape.refs row %zu: %s evaluates to %lld (instruction %u) at the maximum shape (%s) but "
                               "the bundle stores %llu",
                               j, field(ref).c_str(), static_cast<long long>(got), ref.expr,
                               sp.ValuesString(max).c_str(), stored));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Bundle> LoadBundle(const std::string& path) {
  auto file = oinf::File::Open(path);
  if (!file.ok()) return file.status();
  return ParseBundle(std::move(file).value(), path);
}

StatusOr<Bundle> ParseBundle(oinf::File file, const std::string& path) {
  Bundle b;
  b.file = std::make_unique<oinf::File>(std::move(file));
  b.path = path;
  const oinf::File& f = *b.file;
  Reader r(f, path);

  // ---- identification ----
  OAAXVK_ASSIGN_OR_RETURN(std::string format, r.String("format"));
  const Metadata* vm = f.FindMetadata("format_version");
  if (!vm) return r.Error("missing metadata 'format_version'");
  uint32_t version = 0;
  if (!vm->GetScalar(&version))
    return r.Error(StrFormat("metadata 'format_version' has type %s, expected u32", oinf::ValueTypeName(vm->type)));
  if (format != kBundleFormat || version != kBundleFormatVersion)
    return Unimplemented(StrFormat("bundle '%s': format '%s' version %u is not supported (this runtime reads '%s' "
                                   "version %u)", path.c_str(), format.c_str(), version, kBundleFormat,
                                   kBundleFormatVersion));
  if (f.FindMetadata("producer")) { OAAXVK_ASSIGN_OR_RETURN(b.producer, r.String("producer")); }
  if (f.FindMetadata("bundle.features")) {
    OAAXVK_ASSIGN_OR_RETURN(std::string list, r.Utf8("bundle.features"));
    size_t pos = 0;
    while (pos < list.size()) {
      size_t end = list.find(' ', pos);
      if (end == std::string::npos) end = list.size();
      std::string feature = list.substr(pos, end - pos);
      pos = end + 1;
      if (feature.empty()) continue;
      if (!kKnownFeatures.count(feature))
        return Unimplemented(StrFormat("bundle '%s' requires feature '%s', which this runtime does not implement "
                                       "(it knows: %s); use a newer runtime or reconvert with a matching toolchain",
                                       path.c_str(), feature.c_str(), KnownFeatureList().c_str()));
      b.features.insert(feature);
    }
  }
  // Value symbols are symbols of the shape program: without it nothing would
  // check the outputs they size.
  if (b.features.count("segment_program") && !b.features.count("dynamic_shapes"))
    return r.Error("bundle.features lists 'segment_program' but not 'dynamic_shapes', whose shape program sizes the "
                   "segments; a converter must list both");
  if (b.features.count("value_symbols") && !b.features.count("dynamic_shapes"))
    return r.Error("bundle.features lists 'value_symbols' but not 'dynamic_shapes', which value symbols are part of "
                   "(their outputs are sized by the shape program); reconvert the model");
  if (f.FindMetadata("model.name")) { OAAXVK_ASSIGN_OR_RETURN(b.model_name, r.Utf8("model.name")); }

  // ---- device requirements ----
  DeviceRequirements& q = b.requirements;
  OAAXVK_ASSIGN_OR_RETURN(uint64_t v, r.Unsigned("device.max_workgroup_invocations", UINT32_MAX));
  q.max_workgroup_invocations = static_cast<uint32_t>(v);
  const char* axes[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    OAAXVK_ASSIGN_OR_RETURN(v, r.Unsigned(StrFormat("device.max_workgroup_size_%s", axes[i]), UINT32_MAX));
    q.max_workgroup_size[i] = static_cast<uint32_t>(v);
  }
  OAAXVK_ASSIGN_OR_RETURN(v, r.Unsigned("device.max_shared_memory_bytes", UINT32_MAX));
  q.max_shared_memory_bytes = static_cast<uint32_t>(v);
  OAAXVK_ASSIGN_OR_RETURN(v, r.Unsigned("device.max_workgroup_count", UINT32_MAX));
  q.max_workgroup_count = static_cast<uint32_t>(v);
  OAAXVK_ASSIGN_OR_RETURN(q.max_storage_buffer_range, r.Unsigned("device.max_storage_buffer_range", UINT64_MAX));
  OAAXVK_ASSIGN_OR_RETURN(q.shader_float16, r.Bool("device.shader_float16"));
  OAAXVK_ASSIGN_OR_RETURN(q.storage_buffer_16bit, r.Bool("device.storage_buffer_16bit"));

  // ---- buffers ----
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* w, r.DataTensor("weights", ValueType::kU8, 1));
  b.weights = w->data.data;
  b.weights_bytes = w->data.size;
  b.buffer_bytes[kWeights] = w->data.size;
  // Validate before allocating: a buffer size near 2^64 would wrap when
  // rounded up for the allocation and yield a tiny buffer.
  for (uint32_t kind : {kArena, kInputs, kOutputs}) {
    const std::string key = kind == kArena ? "arena.bytes" : kind == kInputs ? "io.inputs_bytes" : "io.outputs_bytes";
    OAAXVK_ASSIGN_OR_RETURN(b.buffer_bytes[kind], r.Unsigned(key, UINT64_MAX));
    if (b.buffer_bytes[kind] > kMaxBufferBytes)
      return r.Error(StrFormat("metadata '%s' = %llu exceeds the largest buffer a bundle may declare (2^48 = %llu "
                               "bytes, beyond any device's memory); the bundle is corrupt: reconvert the model",
                               key.c_str(), static_cast<unsigned long long>(b.buffer_bytes[kind]),
                               static_cast<unsigned long long>(kMaxBufferBytes)));
  }
  // Feature device_variants: the fp16 weight copies (buffer kind 4). Without
  // the feature the tensor is not read and kind 4 has no bytes.
  const bool device_variants = b.features.count("device_variants") != 0;
  if (device_variants) {
    if (!f.FindTensor("weights_f16"))
      return r.Error("feature device_variants is required but tensor 'weights_f16' is missing");
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* w16, r.DataTensor("weights_f16", ValueType::kU8, 1));
    b.weights_f16 = w16->data.data;
    b.weights_f16_bytes = w16->data.size;
    b.buffer_bytes[kWeightsF16] = w16->data.size;
  }

  // ---- I/O ----
  OAAXVK_RETURN_IF_ERROR(ParseIo(r, "input", b.buffer_bytes[kInputs], b.features, &b.inputs));
  OAAXVK_RETURN_IF_ERROR(ParseIo(r, "output", b.buffer_bytes[kOutputs], b.features, &b.outputs));

  // ---- kernels ----
  OAAXVK_ASSIGN_OR_RETURN(uint64_t nk, r.Unsigned("kernels.count", 1u << 16));
  for (uint64_t j = 0; j < nk; ++j) {
    const std::string p = StrFormat("kernel.%llu.", static_cast<unsigned long long>(j));
    Kernel k;
    OAAXVK_ASSIGN_OR_RETURN(k.name, r.String(p + "name"));
    OAAXVK_ASSIGN_OR_RETURN(v, r.Unsigned(p + "bindings", 1024));
    k.bindings = static_cast<uint32_t>(v);
    OAAXVK_ASSIGN_OR_RETURN(v, r.Unsigned(p + "spec_constants", 1024));
    k.spec_constants = static_cast<uint32_t>(v);
    k.binding_types.assign(k.bindings, 's');
    if (f.FindMetadata(p + "binding_types")) {
      OAAXVK_ASSIGN_OR_RETURN(std::string types, r.String(p + "binding_types"));
      if (types.size() != k.bindings || types.find_first_not_of("svfu") != std::string::npos)
        return r.Error(StrFormat("metadata '%sbinding_types' is '%s'; expected %u letters, each s, v, f or u", p.c_str(),
                                 types.c_str(), k.bindings));
      if (types.find_first_not_of('s') != std::string::npos && !b.features.count("texel_bindings"))
        return r.Error(StrFormat("metadata '%sbinding_types' ('%s') has texel-buffer bindings but bundle.features "
                                 "does not list 'texel_bindings'", p.c_str(), types.c_str()));
      k.binding_types = types;
    }
    // Feature device_variants: capability names joined by '-'.
    if (f.FindMetadata(p + "requires")) {
      OAAXVK_ASSIGN_OR_RETURN(std::string caps, r.String(p + "requires"));
      if (!device_variants)
        return r.Error(StrFormat("metadata '%srequires' ('%s') is present but bundle.features does not list "
                                 "'device_variants'", p.c_str(), caps.c_str()));
      for (size_t pos = 0;;) {
        const size_t end = caps.find('-', pos);
        std::string name = caps.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        if (name.empty())
          return r.Error(StrFormat("metadata '%srequires' is '%s': an empty capability name (names are joined by "
                                   "'-')", p.c_str(), caps.c_str()));
        k.required_capabilities.push_back(std::move(name));
        if (end == std::string::npos) break;
        pos = end + 1;
      }
    }
    if (f.FindMetadata(p + "fp32_kernel")) {
      if (!device_variants)
        return r.Error(StrFormat("metadata '%sfp32_kernel' is present but bundle.features does not list "
                                 "'device_variants'", p.c_str()));
      OAAXVK_ASSIGN_OR_RETURN(uint64_t twin, r.Unsigned(p + "fp32_kernel", nk - 1));
      if (twin == j) return r.Error(StrFormat("metadata '%sfp32_kernel' names the kernel itself", p.c_str()));
      k.fp32_kernel = static_cast<int64_t>(twin);
    }
    // Feature device_variants: the fp16 precision form and the
    // cooperative-matrix form (checked against their kernels below).
    for (const char* key : {"fp16_kernel", "matrix_kernel"}) {
      if (!f.FindMetadata(p + key)) continue;
      if (!device_variants)
        return r.Error(StrFormat("metadata '%s%s' is present but bundle.features does not list 'device_variants'",
                                 p.c_str(), key));
      OAAXVK_ASSIGN_OR_RETURN(uint64_t form, r.Unsigned(p + key, nk - 1));
      if (form == j) return r.Error(StrFormat("metadata '%s%s' names the kernel itself", p.c_str(), key));
      (std::strcmp(key, "fp16_kernel") == 0 ? k.fp16_kernel : k.matrix_kernel) = static_cast<int64_t>(form);
    }
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* t, r.DataTensor(p + "spirv", ValueType::kU32, 1));
    k.spirv = reinterpret_cast<const uint32_t*>(t->data.data);  // 8-byte aligned by the reader
    k.spirv_words = static_cast<size_t>(t->numel);
    if (k.spirv_words < 5 || k.spirv[0] != 0x07230203u)
      return r.Error(StrFormat("tensor '%sspirv' is not a SPIR-V module (%zu words, magic 0x%08x)", p.c_str(),
                               k.spirv_words, k.spirv_words ? k.spirv[0] : 0u));
    b.kernels.push_back(std::move(k));
  }
  for (size_t j = 0; j < b.kernels.size(); ++j) {
    if (b.kernels[j].fp32_kernel < 0) continue;
    const Kernel& k = b.kernels[j];
    const Kernel& twin = b.kernels[static_cast<size_t>(k.fp32_kernel)];
    if (twin.bindings != k.bindings || twin.spec_constants != k.spec_constants || twin.fp32_kernel >= 0)
      return r.Error(StrFormat("metadata 'kernel.%zu.fp32_kernel' = %lld: kernel '%s' (%u bindings, %u spec "
                               "constants) is not an fp32 form of '%s' (%u bindings, %u spec constants)", j,
                               static_cast<long long>(k.fp32_kernel), twin.name.c_str(), twin.bindings,
                               twin.spec_constants, k.name.c_str(), k.bindings, k.spec_constants));
  }

  for (size_t j = 0; j < b.kernels.size(); ++j)
    for (const char* key : {"fp16_kernel", "matrix_kernel"}) {
      const int64_t form = std::strcmp(key, "fp16_kernel") == 0 ? b.kernels[j].fp16_kernel : b.kernels[j].matrix_kernel;
      if (form < 0) continue;
      const Kernel& k = b.kernels[j];
      const Kernel& fk = b.kernels[static_cast<size_t>(form)];
      if (fk.bindings != k.bindings || fk.spec_constants != k.spec_constants || fk.binding_types != k.binding_types)
        return r.Error(StrFormat("metadata 'kernel.%zu.%s' = %lld: kernel '%s' (%u bindings, %u spec constants) is "
                                 "not a precision form of '%s' (%u bindings, %u spec constants)", j, key,
                                 static_cast<long long>(form), fk.name.c_str(), fk.bindings, fk.spec_constants,
                                 k.name.c_str(), k.bindings, k.spec_constants));
    }

  // ---- program ----
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* td, r.DataTensor("program.dispatch", ValueType::kU32, 2));
  if (td->dims[1] != 8) return r.Error(StrFormat("tensor 'program.dispatch' must be u32[D, 8], has %llu columns",
                                                 static_cast<unsigned long long>(td->dims[1])));
  const uint64_t nd = td->dims[0];
  if (nd > kMaxDispatches)
    return r.Error(StrFormat("tensor 'program.dispatch' has %llu rows, more than the %llu this runtime accepts (the "
                             "descriptor counts of every frame slot must fit 32 bits)",
                             static_cast<unsigned long long>(nd), static_cast<unsigned long long>(kMaxDispatches)));
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* tb, r.DataTensor("program.bindings", ValueType::kU64, 2));
  if (tb->dims[1] != 3) return r.Error(StrFormat("tensor 'program.bindings' must be u64[Bt, 3], has %llu columns",
                                                 static_cast<unsigned long long>(tb->dims[1])));
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* ts, r.DataTensor("program.spec", ValueType::kU32, 1));
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* tr, r.DataTensor("program.barrier", ValueType::kU8, 1));
  if (tr->dims[0] != nd)
    return r.Error(StrFormat("tensor 'program.barrier' has %llu rows, program.dispatch %llu",
                             static_cast<unsigned long long>(tr->dims[0]), static_cast<unsigned long long>(nd)));
  const Tensor* top = f.FindTensor("program.op");  // for logs only: optional
  if (top) {
    OAAXVK_ASSIGN_OR_RETURN(top, r.DataTensor("program.op", ValueType::kU32, 1));
    if (top->dims[0] != nd)
      return r.Error(StrFormat("tensor 'program.op' has %llu rows, program.dispatch %llu",
                               static_cast<unsigned long long>(top->dims[0]), static_cast<unsigned long long>(nd)));
  }
  for (uint64_t k = 0;; ++k) {
    const std::string key = StrFormat("program.op_name.%llu", static_cast<unsigned long long>(k));
    if (!f.FindMetadata(key)) break;
    OAAXVK_ASSIGN_OR_RETURN(std::string name, r.Utf8(key));
    b.op_names.push_back(std::move(name));
  }

  const uint64_t nb = tb->dims[0];
  for (uint64_t i = 0; i < nb; ++i) {
    Binding bd;
    uint64_t kind = Load<uint64_t>(tb->data.data, 3 * i);
    bd.offset = Load<uint64_t>(tb->data.data, 3 * i + 1);
    bd.size = Load<uint64_t>(tb->data.data, 3 * i + 2);
    const unsigned long long row = static_cast<unsigned long long>(i);
    if (kind >= kBufferKinds) return r.Error(StrFormat("program.bindings row %llu: buffer_kind %llu is not 0-4", row,
                                                       static_cast<unsigned long long>(kind)));
    bd.kind = static_cast<uint32_t>(kind);
    if (bd.kind == kWeightsF16 && !device_variants)
      return r.Error(StrFormat("program.bindings row %llu: buffer_kind 4 (weights_f16) but bundle.features does not "
                               "list 'device_variants'", row));
    if (bd.offset % kBindingAlignment != 0)
      return r.Error(StrFormat("program.bindings row %llu: offset %llu is not a multiple of %llu", row,
                               static_cast<unsigned long long>(bd.offset),
                               static_cast<unsigned long long>(kBindingAlignment)));
    if (bd.size == 0) return r.Error(StrFormat("program.bindings row %llu: size is 0", row));
    const uint64_t cap = b.buffer_bytes[bd.kind];
    if (!RangeWithin(bd.offset, bd.size, cap))
      return r.Error(StrFormat("program.bindings row %llu: bytes [%llu, +%llu) lie outside buffer kind %u (%llu bytes)",
                               row, static_cast<unsigned long long>(bd.offset),
                               static_cast<unsigned long long>(bd.size), bd.kind,
                               static_cast<unsigned long long>(cap)));
    b.bindings.push_back(bd);
  }
  b.spec.resize(ts->numel);
  if (ts->numel) memcpy(b.spec.data(), ts->data.data, ts->numel * 4);

  // One row of program.dispatch (or of program.dispatch.cpu / .gpu:
  // `table`); messages start "<tname> <row>:".
  auto parse_row = [&](const Tensor* table, const char* tname, uint64_t i, Dispatch* out) -> Status {
    Dispatch d;
    uint32_t row[8];
    memcpy(row, table->data.data + 32 * i, 32);
    d.kernel = row[0];
    d.groups[0] = row[1]; d.groups[1] = row[2]; d.groups[2] = row[3];
    d.first_binding = row[4]; d.n_bindings = row[5];
    d.first_spec = row[6]; d.n_spec = row[7];
    const uint8_t barrier = tr->data.data[i];
    d.op = top ? Load<uint32_t>(top->data.data, i) : 0;
    const unsigned long long di = static_cast<unsigned long long>(i);
    if (d.kernel >= b.kernels.size())
      return r.Error(StrFormat("%s %llu: kernel %u out of range (kernels.count %zu)", tname, di, d.kernel,
                               b.kernels.size()));
    const Kernel& k = b.kernels[d.kernel];
    if (d.groups[0] == 0 || d.groups[1] == 0 || d.groups[2] == 0)
      return r.Error(StrFormat("%s %llu: group count (%u, %u, %u) has a zero", tname, di, d.groups[0],
                               d.groups[1], d.groups[2]));
    if (d.n_bindings != k.bindings)
      return r.Error(StrFormat("%s %llu: n_bindings %u != kernel %u ('%s') bindings %u", tname, di, d.n_bindings,
                               d.kernel, k.name.c_str(), k.bindings));
    if (static_cast<uint64_t>(d.first_binding) + d.n_bindings > nb)
      return r.Error(StrFormat("%s %llu: bindings [%u, +%u) exceed program.bindings (%llu rows)", tname, di,
                               d.first_binding, d.n_bindings, static_cast<unsigned long long>(nb)));
    if (d.n_spec != k.spec_constants)
      return r.Error(StrFormat("%s %llu: n_spec %u != kernel %u ('%s') spec_constants %u", tname, di, d.n_spec,
                               d.kernel, k.name.c_str(), k.spec_constants));
    if (static_cast<uint64_t>(d.first_spec) + d.n_spec > ts->numel)
      return r.Error(StrFormat("%s %llu: spec values [%u, +%u) exceed program.spec (%llu values)", tname, di,
                               d.first_spec, d.n_spec, static_cast<unsigned long long>(ts->numel)));
    if (barrier > 1) return r.Error(StrFormat("program.barrier[%llu] = %u (must be 0 or 1)", di, barrier));
    d.barrier = barrier == 1;
    *out = d;
    return Status::Ok();
  };
  // Only program.dispatch.gpu rows may bind the fp16 weight copies (kind 4).
  auto reject_f16_bindings = [&](const char* tname, uint64_t i, const Dispatch& d) -> Status {
    for (uint32_t k = 0; k < d.n_bindings; ++k) {
      const Binding& bd = b.bindings[d.first_binding + k];
      if (bd.kind == kWeightsF16)
        return r.Error(StrFormat("%s %llu: binding %u (program.bindings row %u) is in weights_f16 (buffer kind 4), "
                                 "which only program.dispatch.gpu rows may bind", tname,
                                 static_cast<unsigned long long>(i), k, d.first_binding + k));
    }
    return Status::Ok();
  };
  for (uint64_t i = 0; i < nd; ++i) {
    Dispatch d;
    OAAXVK_RETURN_IF_ERROR(parse_row(td, "dispatch", i, &d));
    OAAXVK_RETURN_IF_ERROR(reject_f16_bindings("dispatch", i, d));
    b.dispatches.push_back(d);
  }
  // Feature kernel_variants: the CPU-class table, with the same bindings row
  // by row so that the memory plan and the barriers hold for either table.
  // A variant table required by `feature`: u32[nd, 8] like program.dispatch.
  auto variant_table = [&](const char* name, const char* feature) -> StatusOr<const Tensor*> {
    if (!f.FindTensor(name))
      return r.Error(StrFormat("feature %s is required but tensor '%s' is missing", feature, name));
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* t, r.DataTensor(name, ValueType::kU32, 2));
    if (t->dims[0] != nd || t->dims[1] != 8)
      return r.Error(StrFormat("tensor '%s' must be u32[%llu, 8] like program.dispatch, is [%llu, %llu]", name,
                               static_cast<unsigned long long>(nd), static_cast<unsigned long long>(t->dims[0]),
                               static_cast<unsigned long long>(t->dims[1])));
    return t;
  };
  if (b.features.count("kernel_variants")) {
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* tcpu, variant_table("program.dispatch.cpu", "kernel_variants"));
    for (uint64_t i = 0; i < nd; ++i) {
      Dispatch d;
      OAAXVK_RETURN_IF_ERROR(parse_row(tcpu, "program.dispatch.cpu row", i, &d));
      const Dispatch& g = b.dispatches[i];
      if (d.first_binding != g.first_binding || d.n_bindings != g.n_bindings)
        return r.Error(StrFormat("program.dispatch.cpu row %llu binds rows [%u, +%u) but program.dispatch binds "
                                 "[%u, +%u); kernel variants must share their bindings",
                                 static_cast<unsigned long long>(i), d.first_binding, d.n_bindings, g.first_binding,
                                 g.n_bindings));
      OAAXVK_RETURN_IF_ERROR(reject_f16_bindings("program.dispatch.cpu row", i, d));
      d.table = 1;
      b.cpu_dispatches.push_back(d);
    }
  }
  // Feature device_variants: the GPU-class table. Row by row, the same number
  // of bindings, each the same range as the default row's or, for a weights
  // range, a range of the fp16 copies: the memory plan and barriers hold.
  if (device_variants) {
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* tgpu, variant_table("program.dispatch.gpu", "device_variants"));
    for (uint64_t i = 0; i < nd; ++i) {
      Dispatch d;
      OAAXVK_RETURN_IF_ERROR(parse_row(tgpu, "program.dispatch.gpu row", i, &d));
      const Dispatch& g = b.dispatches[i];
      const unsigned long long row = static_cast<unsigned long long>(i);
      if (d.n_bindings != g.n_bindings)
        return r.Error(StrFormat("program.dispatch.gpu row %llu has %u bindings but program.dispatch row %llu has %u; "
                                 "device variants must bind the same ranges", row, d.n_bindings, row, g.n_bindings));
      for (uint32_t k = 0; k < d.n_bindings; ++k) {
        const Binding& gb = b.bindings[d.first_binding + k];
        const Binding& db = b.bindings[g.first_binding + k];
        const bool same = gb.kind == db.kind && gb.offset == db.offset && gb.size == db.size;
        const bool f16_copy = db.kind == kWeights && gb.kind == kWeightsF16;
        if (!same && !f16_copy)
          return r.Error(StrFormat(
              "program.dispatch.gpu row %llu binding %u is buffer kind %u bytes [%llu, +%llu) but program.dispatch "
              "row %llu binding %u is buffer kind %u bytes [%llu, +%llu); a device variant binds the same range, or "
              "weights_f16 (kind 4) where the default row binds weights (kind 0)",
              row, k, gb.kind, static_cast<unsigned long long>(gb.offset), static_cast<unsigned long long>(gb.size),
              row, k, db.kind, static_cast<unsigned long long>(db.offset), static_cast<unsigned long long>(db.size)));
      }
      d.table = 2;
      b.gpu_dispatches.push_back(d);
    }
  }
  // Feature dynamic_shapes: symbols, shape program and references.
  if (b.features.count("dynamic_shapes")) {
    OAAXVK_RETURN_IF_ERROR(ParseShapeProgram(r, &b));
    if (b.features.count("segment_program")) OAAXVK_RETURN_IF_ERROR(ParseControlProgram(r, &b));
  } else {
    std::string entry;
    if (f.FindMetadata("shape.symbols")) entry = "metadata 'shape.symbols'";
    else if (f.FindTensor("shape.program")) entry = "tensor 'shape.program'";
    else if (f.FindTensor("shape.refs")) entry = "tensor 'shape.refs'";
    else if (f.FindMetadata("shape.params")) entry = "metadata 'shape.params'";
    for (const Metadata& m : f.metadata())
      if (entry.empty() && m.key.substr(0, 13) == "shape.symbol.") entry = "metadata '" + std::string(m.key) + "'";
    if (!entry.empty())
      return r.Error(StrFormat("%s is present but bundle.features does not list 'dynamic_shapes'", entry.c_str()));
  }
  return b;
}

StatusOr<KernelVariant> ParseKernelVariant(const std::string& value) {
  if (value == "auto") return KernelVariant::kAuto;
  if (value == "default") return KernelVariant::kDefault;
  if (value == "gpu") return KernelVariant::kGpu;
  if (value == "cpu") return KernelVariant::kCpu;
  return InvalidArgument("runtime argument kernel_variant is '" + value + "' (expected auto, default, gpu or cpu)");
}

std::vector<std::string> MissingCapabilities(const Kernel& kernel, const DeviceLimits& limits) {
  std::vector<std::string> missing;
  for (const std::string& c : kernel.required_capabilities)
    if (!limits.capabilities.count(c) || !kKnownCapabilities.count(c)) missing.push_back(c);
  return missing;
}

bool RowBindsKind(const Bundle& b, const Dispatch& d, uint32_t kind) {
  for (uint32_t k = 0; k < d.n_bindings; ++k)
    if (b.bindings[d.first_binding + k].kind == kind) return true;
  return false;
}

bool DispatchesBindKind(const Bundle& b, uint32_t kind) {
  for (const Dispatch& d : b.dispatches)
    if (RowBindsKind(b, d, kind)) return true;
  return false;
}

std::vector<std::pair<uint64_t, uint64_t>> BoundRanges(const Bundle& b, uint32_t kind) {
  std::vector<std::pair<uint64_t, uint64_t>> r;
  for (const Dispatch& d : b.dispatches)
    for (uint32_t k = 0; k < d.n_bindings; ++k) {
      const Binding& bd = b.bindings[d.first_binding + k];
      if (bd.kind == kind) r.emplace_back(bd.offset, bd.offset + bd.size);
    }
  return r;
}

uint64_t TexelViewBytes(char type, uint64_t size) {
  const uint64_t texel = type == 'v' ? 16 : 4;
  return (size + texel - 1) / texel * texel;
}

bool TexelBindingsFit(const Bundle& b, const Dispatch& d, const DeviceLimits& l) {
  const std::string& types = b.kernels[d.kernel].binding_types;
  uint32_t texel_bindings = 0;
  for (uint32_t i = 0; i < d.n_bindings && i < types.size(); ++i) {
    const char t = types[i];
    if (t == 's') continue;
    ++texel_bindings;
    const Binding& bd = b.bindings[d.first_binding + i];
    const uint64_t bytes = TexelViewBytes(t, bd.size);
    const uint64_t align = std::max<uint64_t>(l.min_texel_buffer_offset_alignment, 1);
    if (bd.offset % align != 0 || bytes / (t == 'v' ? 16 : 4) > l.max_texel_buffer_elements ||
        bd.offset + bytes > (b.buffer_bytes[bd.kind] + 15) / 16 * 16)
      return false;
  }
  return texel_bindings <= l.max_sampled_images_per_stage;
}

bool RowWeightsFitFloat16(const Bundle& b, const Dispatch& d) {
  // Bindings 0 and 1 are the GEMM operands (A and B; X and W); the bias and
  // the residual stay fp32.
  for (uint32_t k = 0; k < d.n_bindings && k < 2; ++k) {
    const Binding& bd = b.bindings[d.first_binding + k];
    if (bd.kind != kWeights) continue;
    if (!b.weights || bd.offset > b.weights_bytes || bd.size > b.weights_bytes - bd.offset) return false;
    const uint8_t* p = b.weights + bd.offset;
    for (uint64_t i = 0; i + 4 <= bd.size; i += 4) {
      float v;
      std::memcpy(&v, p + i, 4);
      if (!(std::fabs(v) <= kMaxFloat16)) return false;  // NaN too
    }
  }
  return true;
}

VariantSelection SelectKernelVariant(Bundle* b, KernelVariant choice, bool device_is_cpu,
                                     const DeviceLimits& limits, bool allow_fp16_weights,
                                     const PrecisionChoice& precision) {
  VariantSelection sel;
  const bool has_cpu = b->features.count("kernel_variants") != 0;
  const bool has_gpu = b->features.count("device_variants") != 0;
  sel.bundle_has_variants = has_cpu || has_gpu;
  const bool want_cpu = choice == KernelVariant::kCpu || (choice == KernelVariant::kAuto && device_is_cpu);
  const bool want_gpu = choice == KernelVariant::kGpu || (choice == KernelVariant::kAuto && !device_is_cpu);
  const std::vector<Dispatch>* table = nullptr;
  if (want_cpu && has_cpu) {
    table = &b->cpu_dispatches;
    sel.table = "cpu";
  } else if (want_gpu && has_gpu) {
    table = &b->gpu_dispatches;
    sel.table = "gpu";
  }
  for (size_t i = 0; table && i < b->dispatches.size(); ++i) {
    Dispatch v = (*table)[i];
    // A binary16-weight row whose kernel has an fp32 form runs that form when
    // fp16 weights are not allowed or not supported, reading the default
    // row's weights bindings (the rules make them the same tensors in fp32).
    // Under precision=fp16 the row goes to the fp32 form too when that form
    // has an fp16 precision form, which rounds the weights to binary16 itself.
    const int64_t twin = b->kernels[v.kernel].fp32_kernel;
    const bool to_fp16_form = precision.fp16 && twin >= 0 && b->kernels[static_cast<size_t>(twin)].fp16_kernel >= 0 &&
                              MissingCapabilities(b->kernels[static_cast<size_t>(
                                                      b->kernels[static_cast<size_t>(twin)].fp16_kernel)],
                                                  limits).empty();
    if (twin >= 0 && RowBindsKind(*b, v, kWeightsF16) &&
        (!(allow_fp16_weights && MissingCapabilities(b->kernels[v.kernel], limits).empty()) || to_fp16_form) &&
        MissingCapabilities(b->kernels[static_cast<size_t>(twin)], limits).empty()) {
      const Dispatch& def = b->dispatches[i];
      std::vector<Binding> rows(b->bindings.begin() + v.first_binding,
                                b->bindings.begin() + v.first_binding + v.n_bindings);
      for (uint32_t k = 0; k < v.n_bindings; ++k)
        if (rows[k].kind == kWeightsF16) rows[k] = b->bindings[def.first_binding + k];
      v.kernel = static_cast<uint32_t>(twin);
      v.first_binding = static_cast<uint32_t>(b->bindings.size());
      b->bindings.insert(b->bindings.end(), rows.begin(), rows.end());
      if (!to_fp16_form) ++sel.fp32_forms;
    }
    // Precision fp16: the fp16 form when the device has its capabilities and
    // the row's weight operands fit binary16, then its cooperative-matrix form
    // when the device has that one's and the load-time check kept it.
    const int64_t fp16_form = b->kernels[v.kernel].fp16_kernel;
    if (precision.fp16 && fp16_form >= 0) {
      const Kernel& fk = b->kernels[static_cast<size_t>(fp16_form)];
      const std::vector<std::string> fp16_missing = MissingCapabilities(fk, limits);
      if (!fp16_missing.empty()) {
        ++sel.fp16_kept;
        for (const std::string& c : fp16_missing) ++sel.fp16_missing_capabilities[c];
      } else if (!RowWeightsFitFloat16(*b, v)) {
        ++sel.fp16_kept;
        ++sel.fp16_kept_range;
      } else {
        v.kernel = static_cast<uint32_t>(fp16_form);
        ++sel.fp16_forms;
        const int64_t matrix = fk.matrix_kernel;
        if (matrix >= 0) {
          const std::vector<std::string> m_missing = MissingCapabilities(b->kernels[static_cast<size_t>(matrix)], limits);
          if (!m_missing.empty()) {
            ++sel.matrix_kept;
            for (const std::string& c : m_missing) ++sel.matrix_missing_capabilities[c];
          } else if (precision.dropped_matrix.count(static_cast<uint32_t>(matrix))) {
            ++sel.matrix_kept;
            ++sel.matrix_kept_dropped;
          } else {
            v.kernel = static_cast<uint32_t>(matrix);
            ++sel.matrix_forms;
          }
        }
      }
    }
    const std::vector<std::string> missing = MissingCapabilities(b->kernels[v.kernel], limits);
    if (!missing.empty()) {
      ++sel.kept_capability;
      for (const std::string& c : missing) {
        ++sel.missing_capabilities[c];
        if (!kKnownCapabilities.count(c)) sel.unknown_capabilities.insert(c);
      }
      continue;
    }
    if (!TexelBindingsFit(*b, v, limits)) {
      ++sel.kept_texel;
      continue;
    }
    if (!allow_fp16_weights && RowBindsKind(*b, v, kWeightsF16)) {
      ++sel.kept_fp16_off;
      continue;
    }
    const bool barrier = b->dispatches[i].barrier;
    const uint32_t op = b->dispatches[i].op;
    b->dispatches[i] = v;
    b->dispatches[i].barrier = barrier;
    b->dispatches[i].op = op;
  }
  b->cpu_dispatches.clear();
  b->gpu_dispatches.clear();
  return sel;
}

Status CheckDeviceLimits(const Bundle& b, const DeviceLimits& l) {
  const DeviceRequirements& q = b.requirements;
  auto fail = [&](const char* key, unsigned long long need, unsigned long long have, const char* limit) {
    return Unimplemented(StrFormat("bundle '%s' needs %s = %llu but device '%s' allows %llu (%s)", b.path.c_str(), key,
                                   need, l.device_name.c_str(), have, limit));
  };
  if (q.max_workgroup_invocations > l.max_workgroup_invocations)
    return fail("device.max_workgroup_invocations", q.max_workgroup_invocations, l.max_workgroup_invocations,
                "maxComputeWorkGroupInvocations");
  const char* size_keys[3] = {"device.max_workgroup_size_x", "device.max_workgroup_size_y", "device.max_workgroup_size_z"};
  const char* size_limits[3] = {"maxComputeWorkGroupSize[0]", "maxComputeWorkGroupSize[1]", "maxComputeWorkGroupSize[2]"};
  for (int i = 0; i < 3; ++i)
    if (q.max_workgroup_size[i] > l.max_workgroup_size[i])
      return fail(size_keys[i], q.max_workgroup_size[i], l.max_workgroup_size[i], size_limits[i]);
  if (q.max_shared_memory_bytes > l.max_shared_memory_bytes)
    return fail("device.max_shared_memory_bytes", q.max_shared_memory_bytes, l.max_shared_memory_bytes,
                "maxComputeSharedMemorySize");
  uint32_t max_count = std::max(l.max_workgroup_count[0], std::max(l.max_workgroup_count[1], l.max_workgroup_count[2]));
  if (q.max_workgroup_count > max_count)
    return fail("device.max_workgroup_count", q.max_workgroup_count, max_count, "maxComputeWorkGroupCount");
  if (q.max_storage_buffer_range > l.max_storage_buffer_range)
    return fail("device.max_storage_buffer_range", q.max_storage_buffer_range, l.max_storage_buffer_range,
                "maxStorageBufferRange");
  if (q.shader_float16 && !l.shader_float16)
    return Unimplemented(StrFormat("bundle '%s' needs device.shader_float16 but device '%s' lacks shaderFloat16",
                                   b.path.c_str(), l.device_name.c_str()));
  if (q.storage_buffer_16bit && !l.storage_buffer_16bit)
    return Unimplemented(StrFormat("bundle '%s' needs device.storage_buffer_16bit but device '%s' lacks "
                                   "storageBuffer16BitAccess", b.path.c_str(), l.device_name.c_str()));
  // Every buffer as CreateBuffer allocates it (rounded up to 16 bytes); the
  // fp16 weight copies only when a chosen row binds them (else not uploaded).
  // The weights, their copies and the arena may take several allocations,
  // cut between bindings (buffer_blocks.h); the I/O buffers take one each.
  const uint64_t limit = std::min(l.max_memory_allocation_size, l.max_heap_bytes);
  for (uint32_t kind = 0; kind < kBufferKinds; ++kind) {
    if (kind == kWeightsF16 && !DispatchesBindKind(b, kWeightsF16)) continue;
    if (SplittableKind(kind)) {
      StatusOr<std::vector<BufferBlock>> blocks =
          PlanBufferBlocks(BoundRanges(b, kind), b.buffer_bytes[kind], limit,
                       StrFormat("bundle '%s': %s on device '%s' (%s)", b.path.c_str(), BufferSizeEntry(kind),
                                 l.device_name.c_str(),
                                 l.max_memory_allocation_size <= l.max_heap_bytes ? "maxMemoryAllocationSize"
                                                                                  : "its largest memory heap"));
      if (!blocks.ok()) return blocks.status();
      continue;
    }
    uint64_t alloc = 0;
    const bool fits = CheckedRoundUp(b.buffer_bytes[kind], 16, &alloc);
    if (!fits || alloc > limit)
      return Unimplemented(StrFormat("bundle '%s': %s is %llu bytes, but device '%s' allocates at most %llu bytes in "
                                     "one buffer (%s); the model needs a device with more memory",
                                     b.path.c_str(), BufferSizeEntry(kind),
                                     static_cast<unsigned long long>(b.buffer_bytes[kind]), l.device_name.c_str(),
                                     static_cast<unsigned long long>(limit),
                                     l.max_memory_allocation_size <= l.max_heap_bytes
                                         ? "maxMemoryAllocationSize"
                                         : "the size of its largest memory heap"));
  }
  // What the program itself implies (independent of the declared values).
  for (size_t i = 0; i < b.dispatches.size(); ++i) {
    const Dispatch& d = b.dispatches[i];
    for (int a = 0; a < 3; ++a)
      if (d.groups[a] > l.max_workgroup_count[a])
        return Unimplemented(StrFormat("bundle '%s': dispatch %zu needs %u workgroups in dimension %d but device '%s' "
                                       "allows %u (maxComputeWorkGroupCount[%d])", b.path.c_str(), i, d.groups[a], a,
                                       l.device_name.c_str(), l.max_workgroup_count[a], a));
    const std::string& types = b.kernels[d.kernel].binding_types;
    const uint32_t storage = static_cast<uint32_t>(std::count(types.begin(), types.end(), 's'));
    if (storage > l.max_storage_buffers_per_stage)
      return Unimplemented(StrFormat("bundle '%s': kernel %u needs %u storage buffers but device '%s' allows %u "
                                     "(maxPerStageDescriptorStorageBuffers)", b.path.c_str(), d.kernel, storage,
                                     l.device_name.c_str(), l.max_storage_buffers_per_stage));
    const std::vector<std::string> missing = MissingCapabilities(b.kernels[d.kernel], l);
    if (!missing.empty()) {
      std::string names;
      for (const std::string& c : missing) names += (names.empty() ? "" : ", ") + c;
      return Unimplemented(StrFormat("bundle '%s': dispatch %zu (kernel '%s') requires %s, which device '%s' lacks",
                                     b.path.c_str(), i, b.kernels[d.kernel].name.c_str(), names.c_str(),
                                     l.device_name.c_str()));
    }
    if (!TexelBindingsFit(b, d, l))
      return Unimplemented(StrFormat("bundle '%s': dispatch %zu (kernel '%s', binding types '%s') has a texel-buffer "
                                     "binding device '%s' cannot view (maxTexelBufferElements %u, "
                                     "minTexelBufferOffsetAlignment %llu, maxPerStageDescriptorSampledImages %u)",
                                     b.path.c_str(), i, b.kernels[d.kernel].name.c_str(), types.c_str(),
                                     l.device_name.c_str(), l.max_texel_buffer_elements,
                                     static_cast<unsigned long long>(l.min_texel_buffer_offset_alignment),
                                     l.max_sampled_images_per_stage));
  }
  for (size_t i = 0; i < b.bindings.size(); ++i)
    if (b.bindings[i].size > l.max_storage_buffer_range)
      return Unimplemented(StrFormat("bundle '%s': binding %zu is %llu bytes but device '%s' allows %llu "
                                     "(maxStorageBufferRange)", b.path.c_str(), i,
                                     static_cast<unsigned long long>(b.bindings[i].size), l.device_name.c_str(),
                                     static_cast<unsigned long long>(l.max_storage_buffer_range)));
  return Status::Ok();
}

}  // namespace oaaxvk::runtime
