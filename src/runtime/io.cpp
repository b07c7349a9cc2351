#include "runtime/io.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "oaax_vulkan/oinf.h"
#include "oaax_vulkan/tensors_util.h"
#include "runtime/log.h"

namespace oaaxvk::runtime {

namespace {

std::string Shape(const size_t* s, size_t rank) {
  std::string out = "[";
  for (size_t i = 0; i < rank; ++i) out += StrFormat("%s%zu", i ? ", " : "", s[i]);
  return out + "]";
}

// One element of an OAAX tensor as a double (false for a type without a
// numeric value, e.g. strings).
bool ElementAsDouble(uint32_t dtype, const uint8_t* p, double* v) {
  switch (dtype) {
    case DATA_TYPE_FLOAT: { float x; memcpy(&x, p, 4); *v = x; return true; }
    case DATA_TYPE_DOUBLE: { memcpy(v, p, 8); return true; }
    case DATA_TYPE_FLOAT16: { uint16_t h; memcpy(&h, p, 2); *v = oinf::HalfToFloat(h); return true; }
    case DATA_TYPE_BFLOAT16: { uint32_t b = 0; memcpy(reinterpret_cast<uint8_t*>(&b) + 2, p, 2); float x; memcpy(&x, &b, 4); *v = x; return true; }
    case DATA_TYPE_UINT8: case DATA_TYPE_BOOL: *v = *p; return true;
    case DATA_TYPE_INT8: *v = static_cast<int8_t>(*p); return true;
    case DATA_TYPE_UINT16: { uint16_t x; memcpy(&x, p, 2); *v = x; return true; }
    case DATA_TYPE_INT16: { int16_t x; memcpy(&x, p, 2); *v = x; return true; }
    case DATA_TYPE_INT32: { int32_t x; memcpy(&x, p, 4); *v = x; return true; }
    case DATA_TYPE_UINT32: { uint32_t x; memcpy(&x, p, 4); *v = x; return true; }
    case DATA_TYPE_INT64: { int64_t x; memcpy(&x, p, 8); *v = static_cast<double>(x); return true; }
    case DATA_TYPE_UINT64: { uint64_t x; memcpy(&x, p, 8); *v = static_cast<double>(x); return true; }
    default: return false;
  }
}

// Value checks of send_input (docs/runtime.md, "Input values"): a bound
// input must carry exactly its conversion-time value; 64-bit and unsigned
// 32-bit integers, computed as int32 on the device, must fit int32.
Status CheckInputValues(const IoDesc& d, const uint8_t* data, uint64_t nbytes) {
  if (nbytes == 0) return Status::Ok();
  const size_t es = TensorElementSize(d.dtype);
  if (d.bound) {
    if (memcmp(d.bound, data, d.nbytes) == 0) return Status::Ok();
    size_t k = 0;
    while (memcmp(d.bound + k * es, data + k * es, es) == 0) ++k;
    return InvalidArgument(StrFormat("input tensor '%s': element %zu differs from the value bound at conversion by "
                                     "config.json input_values (the compiled program assumes that value); send the "
                                     "bound value or reconvert with the new one",
                                     d.name.c_str(), k));
  }
  const uint64_t n = nbytes / es;
  if (d.has_value_range) {  // metadata io.input.<j>.value_min / value_max
    for (uint64_t k = 0; k < n; ++k) {
      double v = 0;
      if (!ElementAsDouble(d.dtype, data + es * k, &v)) break;
      if (!(v >= d.value_min && v <= d.value_max))
        return InvalidArgument(StrFormat("input tensor '%s': element %llu = %g lies outside [%g, %g]%s%s",
                                         d.name.c_str(), static_cast<unsigned long long>(k), v, d.value_min,
                                         d.value_max, d.value_rule.empty() ? "" : ": ", d.value_rule.c_str()));
    }
  }
  if (d.dtype == DATA_TYPE_INT64) {
    for (uint64_t k = 0; k < n; ++k) {
      int64_t v;
      memcpy(&v, data + 8 * k, 8);
      if (v < INT32_MIN || v > INT32_MAX)
        return InvalidArgument(StrFormat("input tensor '%s' (INT64): element %llu = %lld does not fit int32; the device "
                                    "computes 64-bit integers as int32 (range [-2147483648, 2147483647])",
                                    d.name.c_str(), static_cast<unsigned long long>(k), static_cast<long long>(v)));
    }
  } else if (d.dtype == DATA_TYPE_UINT64 || d.dtype == DATA_TYPE_UINT32) {
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t v = 0;
      memcpy(&v, data + es * k, es);
      if (v > INT32_MAX)
        return InvalidArgument(StrFormat("input tensor '%s' (%s): element %llu = %llu does not fit int32; the device "
                                    "computes unsigned 32/64-bit integers as int32 (range [0, 2147483647])",
                                    d.name.c_str(), OaaxDtypeName(d.dtype), static_cast<unsigned long long>(k),
                                    static_cast<unsigned long long>(v)));
    }
  }
  return Status::Ok();
}

// "[1, 3, H, W]": an input's shape with its symbolic dimensions named.
std::string ModelShape(const IoDesc& d, const ShapeProgram& sp, size_t input) {
  if (!sp.dynamic()) return ShapeString(d.shape);
  std::string out = "[";
  for (size_t a = 0; a < d.shape.size(); ++a) {
    const int s = sp.input_symbol[input][a];
    out += (a ? ", " : "") + (s >= 0 ? sp.symbols[static_cast<size_t>(s)].name
                                     : std::to_string(static_cast<unsigned long long>(d.shape[a])));
  }
  return out + "]";
}

}  // namespace

Status ValidateInput(const Bundle& bundle, const tensors_struct* in, CheckedInput* checked) {
  const std::vector<IoDesc>& want = bundle.inputs;
  const ShapeProgram& sp = bundle.shape;
  const bool dynamic = sp.dynamic();
  if (!in) return InvalidArgument("input_tensors is NULL");
  if (in->num_tensors != want.size())
    return InvalidArgument(StrFormat("expected %zu input tensor(s), got num_tensors = %zu", want.size(), in->num_tensors));
  checked->model_index.assign(in->num_tensors, 0);
  checked->nbytes.assign(in->num_tensors, 0);
  checked->symbols.assign(dynamic ? sp.symbols.size() : 0, -1);
  if (want.empty()) return Status::Ok();
  if (!in->names) return InvalidArgument("input_tensors->names is NULL");
  if (!in->data_types) return InvalidArgument("input_tensors->data_types is NULL");
  if (!in->ranks) return InvalidArgument("input_tensors->ranks is NULL");
  if (!in->shapes) return InvalidArgument("input_tensors->shapes is NULL");
  if (!in->data) return InvalidArgument("input_tensors->data is NULL");
  std::vector<int> seen(want.size(), -1);
  // Feature dynamicshapes: where each symbol's value was first read
  // (tensor index in the host's struct, dimension).
  std::vector<std::pair<size_t, size_t>> first(checked->symbols.size());
  for (size_t i = 0; i < in->num_tensors; ++i) {
    if (!in->names[i]) return InvalidArgument(StrFormat("input tensor #%zu has a NULL name", i));
    const char* name = in->names[i];
    size_t m = want.size();
    for (size_t j = 0; j < want.size(); ++j)
      if (want[j].name == name) { m = j; break; }
    if (m == want.size()) {
      std::string names;
      for (size_t j = 0; j < want.size(); ++j) names += StrFormat("%s'%s'", j ? ", " : "", want[j].name.c_str());
      return InvalidArgument(StrFormat("unknown input tensor '%s' (#%zu); the model's inputs are %s", name, i, names.c_str()));
    }
    if (seen[m] >= 0)
      return InvalidArgument(StrFormat("input tensor '%s' is given twice (#%d and #%zu)", name, seen[m], i));
    seen[m] = static_cast<int>(i);
    const IoDesc& d = want[m];
    const uint32_t dt = static_cast<uint32_t>(in->data_types[i]);
    if (dt != d.dtype)
      return InvalidArgument(StrFormat("input tensor '%s': data type %s (%u), the model expects %s (%u)", name,
                                       OaaxDtypeName(dt), dt, OaaxDtypeName(d.dtype), d.dtype));
    if (in->ranks[i] != d.shape.size())
      return InvalidArgument(StrFormat("input tensor '%s': rank %zu, the model expects rank %zu (shape %s)", name,
                                       in->ranks[i], d.shape.size(), ModelShape(d, sp, m).c_str()));
    if (in->ranks[i] > 0 && !in->shapes[i])
      return InvalidArgument(StrFormat("input tensor '%s': shapes[%zu] is NULL", name, i));
    uint64_t numel = 1;
    for (size_t a = 0; a < d.shape.size(); ++a) {
      const uint64_t got = in->shapes[i][a];
      const int sym = dynamic ? sp.input_symbol[m][a] : -1;
      if (sym < 0) {
        if (got != d.shape[a])
          return InvalidArgument(StrFormat("input tensor '%s': shape %s, the model expects %s%s", name,
                                           Shape(in->shapes[i], in->ranks[i]).c_str(), ModelShape(d, sp, m).c_str(),
                                           dynamic ? StrFormat(" (dimension %zu must be %llu)", a,
                                                                static_cast<unsigned long long>(d.shape[a])).c_str()
                                                    : ""));
      } else {
        // A symbolic dimension: within its symbol's range, on its
        // multiple_of, and equal wherever the symbol occurs.
        const ShapeSymbol& y = sp.symbols[static_cast<size_t>(sym)];
        const char* sn = y.name.c_str();
        if (got < static_cast<uint64_t>(y.min) || got > static_cast<uint64_t>(y.max))
          return InvalidArgument(StrFormat("input tensor '%s': dimension %zu (%s) is %llu, outside %s's range %s", name,
                                           a, sn, static_cast<unsigned long long>(got), sn, y.RangeString().c_str()));
        if (got % static_cast<uint64_t>(y.multiple_of) != 0)
          return InvalidArgument(StrFormat("input tensor '%s': dimension %zu (%s) is %llu, not a multiple of %lld "
                                           "(%s's range %s)",
                                           name, a, sn, static_cast<unsigned long long>(got),
                                           static_cast<long long>(y.multiple_of), sn, y.RangeString().c_str()));
        int64_t& value = checked->symbols[static_cast<size_t>(sym)];
        if (value < 0) {
          value = static_cast<int64_t>(got);
          first[static_cast<size_t>(sym)] = {i, a};
        } else if (value != static_cast<int64_t>(got)) {
          const auto& [fi, fa] = first[static_cast<size_t>(sym)];
          return InvalidArgument(StrFormat("input tensor '%s': dimension %zu (%s) is %llu, but input tensor '%s' "
                                           "dimension %zu gives %s = %lld; every occurrence of %s must be equal",
                                           name, a, sn, static_cast<unsigned long long>(got), in->names[fi], fa, sn,
                                           static_cast<long long>(value), sn));
        }
      }
      numel *= got;  // every dimension is at most the stored one: no overflow
    }
    const uint64_t nbytes = TensorByteSize(d.dtype, numel);
    if (!in->data[i] && nbytes > 0) return InvalidArgument(StrFormat("input tensor '%s': data[%zu] is NULL", name, i));
    // An input read only as run-time values (feature value_symbols) is read
    // by the host in 64 bits (INT64_MAX "to the end" is a valid Slice bound);
    // its own checks are the symbols' ranges and the guards.
    if (!dynamic || !sp.has_value_symbols || !sp.value_source[m])
      OAAXVK_RETURN_IF_ERROR(CheckInputValues(d, static_cast<const uint8_t*>(in->data[i]), nbytes));
    checked->model_index[i] = m;
    checked->nbytes[i] = nbytes;
  }
  if (dynamic && sp.has_value_symbols) OAAXVK_RETURN_IF_ERROR(ReadValueSymbols(bundle, in, seen, checked));
  return Status::Ok();
}

// Feature value_symbols (docs/runtime.md "Run-time shape values"): each value
// symbol is an element of an int32/int64 input's data; within its range, and
// the bundle's guards hold (a Reshape target that holds the input's elements,
// distinct axes, ...). Every input is present and validated here.
Status ReadValueSymbols(const Bundle& bundle, const tensors_struct* in, const std::vector<int>& seen,
                        CheckedInput* checked) {
  const ShapeProgram& sp = bundle.shape;
  std::string values;  // "shape[0] = 4, shape[1] = -1" for messages
  for (size_t s = 0; s < sp.symbols.size(); ++s) {
    const ShapeSymbol& y = sp.symbols[s];
    if (!y.is_value()) continue;
    const IoDesc& d = bundle.inputs[static_cast<size_t>(y.input)];
    const size_t host_index = static_cast<size_t>(seen[static_cast<size_t>(y.input)]);
    const uint8_t* data = static_cast<const uint8_t*>(in->data[host_index]);
    // The element must exist in the tensor as sent: an input with a symbolic
    // dimension may be shorter than its maximum shape, which the bundle
    // checked the element index against.
    const uint64_t elements = TensorMaxElements(d.dtype, checked->nbytes[host_index]);
    if (y.element >= elements)
      return InvalidArgument(StrFormat("input tensor '%s': value symbol %s is its element %llu, but the tensor as sent "
                                       "has %llu element(s); send a tensor that holds element %llu",
                                       d.name.c_str(), y.name.c_str(), static_cast<unsigned long long>(y.element),
                                       static_cast<unsigned long long>(elements),
                                       static_cast<unsigned long long>(y.element)));
    int64_t v = 0;
    if (y.scale != 0) {  // feature float_value_symbols: floor(e * scale), in double as the ONNX reference
      double e = 0;
      if (d.dtype == 11) {
        memcpy(&e, data + 8 * y.element, 8);
      } else if (d.dtype == 10) {
        uint16_t h = 0;
        memcpy(&h, data + 2 * y.element, 2);
        e = oinf::HalfToFloat(h);
      } else {
        float e32 = 0;
        memcpy(&e32, data + 4 * y.element, 4);
        e = e32;
      }
      const double p = std::floor(e * static_cast<double>(y.scale));
      if (y.exact && p != e * static_cast<double>(y.scale) && std::isfinite(e))
        return InvalidArgument(StrFormat("input tensor '%s': element %llu (%s) is %g, which is not a multiple of "
                                         "2^-%d, the resolution the bundle reads these Range bounds at (converted "
                                         "for values up to %g in magnitude); use a value on that grid or reconvert "
                                         "with a narrower range",
                                         d.name.c_str(), static_cast<unsigned long long>(y.element), y.name.c_str(), e,
                                         63 - __builtin_clzll(y.scale),
                                         std::ldexp(1.0, 50) / static_cast<double>(y.scale)));
      // In double first (NaN and values beyond int64 fail here: converting
      // them to int64 would be undefined), then exactly in int64: a bound
      // such as INT64_MAX is not representable in double.
      const bool in_int64 = p >= -9223372036854775808.0 && p < 9223372036854775808.0;  // [-2^63, 2^63)
      if (!in_int64 || !(static_cast<int64_t>(p) >= y.min && static_cast<int64_t>(p) <= y.max))
        return InvalidArgument(StrFormat("input tensor '%s': element %llu (%s) is %g, which gives floor(%g x %llu) = "
                                         "%g, outside %s's range %s",
                                         d.name.c_str(), static_cast<unsigned long long>(y.element), y.name.c_str(), e,
                                         e, static_cast<unsigned long long>(y.scale), p, y.name.c_str(),
                                         y.RangeString().c_str()));
      v = static_cast<int64_t>(p);
    } else if (d.dtype == 7) {
      memcpy(&v, data + 8 * y.element, 8);
    } else if (d.dtype == 9) {  // bool: 0 or 1 (any nonzero byte is true)
      v = data[y.element] != 0 ? 1 : 0;
    } else {
      int32_t v32 = 0;
      memcpy(&v32, data + 4 * y.element, 4);
      v = v32;
    }
    if (!y.Valid(v))
      return InvalidArgument(StrFormat("input tensor '%s': element %llu (%s) is %lld, outside %s's range %s",
                                       d.name.c_str(), static_cast<unsigned long long>(y.element), y.name.c_str(),
                                       static_cast<long long>(v), y.name.c_str(), y.RangeString().c_str()));
    checked->symbols[s] = v;
    values += StrFormat("%s%s = %lld", values.empty() ? "" : ", ", y.name.c_str(), static_cast<long long>(v));
  }
  std::vector<int64_t> v;
  OAAXVK_RETURN_IF_ERROR(sp.Evaluate(checked->symbols, &v));
  for (size_t g = 0; g < sp.guard_expr.size(); ++g)
    if (v[static_cast<size_t>(sp.guard_expr[g])] == 0)
      return InvalidArgument(StrFormat("input values %s: %s", values.c_str(), sp.guard_text[g].c_str()));
  return Status::Ok();
}

tensors_struct* BuildOutputs(const Bundle& bundle, const uint8_t* host_out,
                             const std::vector<std::vector<uint64_t>>& output_shapes,
                             const std::vector<uint64_t>& output_nbytes, Status* frame_error) {
  const size_t n = bundle.outputs.size();
  // Feature data_dependent_outputs: extent outputs are not returned; each
  // trims the output it counts (its stored extent along the axis is the
  // largest; the device wrote the first `count` slices of every outer block).
  std::vector<int64_t> count_of(n, -1), count_axis(n, -1);
  size_t visible = 0;
  for (size_t i = 0; i < n; ++i) {
    const IoDesc& d = bundle.outputs[i];
    if (d.count_for < 0) {
      ++visible;
      continue;
    }
    int32_t c = 0;
    memcpy(&c, host_out + d.offset, 4);
    if (c < 0) {
      *frame_error = ResourceExhausted(StrFormat(
          "output '%s': the device could not compute its extent: a kernel stopped before finishing (lavapipe ends "
          "a shader invocation's loops after 65535 iterations in total); the input is larger than this driver "
          "can process in that kernel",
          bundle.outputs[static_cast<size_t>(d.count_for)].name.c_str()));
      return nullptr;
    }
    count_of[static_cast<size_t>(d.count_for)] = c;
    count_axis[static_cast<size_t>(d.count_for)] = d.count_axis;
  }
  tensors_struct* t = AllocTensors(visible);
  if (!t) return nullptr;
  size_t k = 0;
  std::vector<uint8_t> gathered;
  for (size_t i = 0; i < n; ++i) {
    const IoDesc& d = bundle.outputs[i];
    if (d.count_for >= 0) continue;
    std::vector<uint64_t> dims = output_shapes[i];  // the frame's actual shape
    const uint8_t* data = host_out + d.offset;
    uint64_t nbytes = output_nbytes[i];
    if (count_of[i] >= 0) {
      const size_t a = static_cast<size_t>(count_axis[i]);
      const uint64_t planned = dims[a];
      const uint64_t c = std::min<uint64_t>(static_cast<uint64_t>(std::max<int64_t>(count_of[i], 0)), planned);
      uint64_t outer = 1, inner = TensorElementSize(d.dtype);
      for (size_t j = 0; j < a; ++j) outer *= dims[j];
      for (size_t j = a + 1; j < dims.size(); ++j) inner *= dims[j];
      dims[a] = c;
      nbytes = outer * c * inner;
      if (IsPacked4Bit(d.dtype)) {
        // Two elements per byte: the first c slices of every outer block,
        // element by element (a slice may start in the middle of a byte).
        nbytes = TensorByteSize(d.dtype, outer * c * inner);
        gathered.assign(nbytes, 0);
        for (uint64_t o = 0; o < outer; ++o)
          for (uint64_t e = 0; e < c * inner; ++e) {
            const uint64_t from = o * planned * inner + e, to = o * c * inner + e;
            const uint8_t nib = (data[from / 2] >> (4 * (from & 1u))) & 0xfu;
            gathered[to / 2] = static_cast<uint8_t>(gathered[to / 2] | (nib << (4 * (to & 1u))));
          }
        data = gathered.data();
      } else if (outer > 1 && c > 0 && c < planned) {  // gather the first c slices of every outer block
        gathered.resize(nbytes);
        for (uint64_t o = 0; o < outer; ++o)
          memcpy(gathered.data() + o * c * inner, data + o * planned * inner, c * inner);
        data = gathered.data();
      }
    }
    if (!SetTensor(t, k++, d.name.c_str(), static_cast<tensor_data_type>(d.dtype), dims.data(), dims.size(), data,
                   nbytes)) {
      FreeTensors(t);
      return nullptr;
    }
  }
  return t;
}

std::string ShapeString(const std::vector<uint64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += StrFormat("%s%llu", i ? ", " : "", static_cast<unsigned long long>(s[i]));
  return out + "]";
}

}  // namespace oaaxvk::runtime
