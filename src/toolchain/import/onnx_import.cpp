#include "toolchain/import/onnx_import.h"

#include "toolchain/import/control_flow.h"
#include "toolchain/ir/loop_append.h"
#include "toolchain/ir/loop_nodes.h"
#include "toolchain/import/function_defaults.h"
#include "toolchain/import/onnx_guards.h"
#include "toolchain/import/opset_forms.h"
#include "oaax_vulkan/lowbit_types.h"

#include <sys/stat.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <set>
#include <sstream>

#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"
#include "toolchain/ir/limits.h"
#include "toolchain/ir/shape_infer_int.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/passes/decompose.h"

namespace oaaxvk::toolchain {

namespace {

StatusOr<std::string> ReadFileLimited(const std::string& path, uint64_t limit, const char* what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return NotFound(std::string(what) + " '" + path + "' does not exist: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return InvalidArgument(std::string(what) + " '" + path + "' is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > limit)
    return ResourceExhausted(StrFormat("%s '%s' is %llu bytes, over the limit of %llu bytes", what, path.c_str(),
                                       static_cast<unsigned long long>(st.st_size),
                                       static_cast<unsigned long long>(limit)));
  std::ifstream f(path, std::ios::binary);
  if (!f) return InvalidArgument(std::string("cannot open ") + what + " '" + path + "'");
  std::string s(static_cast<size_t>(st.st_size), '\0');
  if (!s.empty() && !f.read(&s[0], static_cast<std::streamsize>(s.size())))
    return InvalidArgument(std::string("cannot read ") + what + " '" + path + "'");
  return s;
}

// Accepts only relative paths whose components are not "..", then checks
// that the resolved file (symlinks followed) is inside `dir`.
StatusOr<std::string> ResolveExternalPath(const std::string& dir, const std::string& loc, const std::string& tensor) {
  if (dir.empty())
    return InvalidArgument("initializer '" + tensor + "' uses external data, but the model was not loaded from a file");
  if (loc.empty() || loc[0] == '/' || loc.find('\\') != std::string::npos || loc.find('\0') != std::string::npos)
    return InvalidArgument("initializer '" + tensor + "': external data location '" + loc +
                           "' must be a relative path inside the model's directory");
  std::stringstream ss(loc);
  std::string part;
  while (std::getline(ss, part, '/'))
    if (part == "..")
      return InvalidArgument("initializer '" + tensor + "': external data location '" + loc +
                             "' may not contain '..' (files must stay inside the model's directory)");
  char rd[PATH_MAX], rf[PATH_MAX];
  std::string full = dir + "/" + loc;
  if (!::realpath(dir.c_str(), rd)) return InvalidArgument("cannot resolve model directory '" + dir + "'");
  if (!::realpath(full.c_str(), rf))
    return NotFound("initializer '" + tensor + "': external data file '" + full + "' does not exist");
  std::string d(rd), f(rf);
  if (f.compare(0, d.size(), d) != 0 || f.size() <= d.size() || f[d.size()] != '/')
    return InvalidArgument("initializer '" + tensor + "': external data file '" + loc +
                           "' resolves outside the model's directory");
  return f;
}

// Bytes per element of raw_data for an ONNX data type; 0 when raw_data
// cannot hold it (strings) or the type is unknown (left to the checker).
size_t RawElementBytes(int32_t dt) {
  switch (dt) {
    case onnx::TensorProto::COMPLEX128: return 16;
    case onnx::TensorProto::COMPLEX64: return 8;
    case onnx::TensorProto::STRING: return 0;
    default: return DTypeSize(static_cast<DType>(dt));
  }
}

// Number of values the typed field of `tp` holds, and how many values one
// element takes there (complex: 2); -1 for data types ONNX has no typed field for.
int64_t TypedValueCount(const onnx::TensorProto& tp, int64_t* per_element) {
  *per_element = 1;
  switch (tp.data_type()) {
    case onnx::TensorProto::FLOAT: return tp.float_data_size();
    case onnx::TensorProto::COMPLEX64: *per_element = 2; return tp.float_data_size();
    case onnx::TensorProto::DOUBLE: return tp.double_data_size();
    case onnx::TensorProto::COMPLEX128: *per_element = 2; return tp.double_data_size();
    case onnx::TensorProto::INT64: return tp.int64_data_size();
    case onnx::TensorProto::UINT32: case onnx::TensorProto::UINT64: return tp.uint64_data_size();
    case onnx::TensorProto::STRING: return tp.string_data_size();
    case onnx::TensorProto::INT32: case onnx::TensorProto::INT16: case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT16: case onnx::TensorProto::UINT8: case onnx::TensorProto::BOOL:
    case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16: return tp.int32_data_size();
    default: return -1;
  }
}

// Checks one tensor of the model before anything reads it (the ONNX checker
// and shape inference included): dimensions not negative, an element count
// that does not overflow and stays within max_tensor_elements, and data
// (raw_data or the typed field) of exactly that many elements. External data
// is checked when it is read (ConvertTensor). `where` says where the tensor
// sits, e.g. "initializer 'w'" or "node 'c' attribute 'value'".
Status ValidateTensorProto(const onnx::TensorProto& tp, const std::string& where) {
  std::string dims;
  for (int i = 0; i < tp.dims_size(); ++i) dims += (i ? ", " : "") + std::to_string(tp.dims(i));
  dims = "[" + dims + "]";
  for (int i = 0; i < tp.dims_size(); ++i)
    if (tp.dims(i) < 0)
      return InvalidArgument(where + " has dims " + dims + ": dimension " + std::to_string(i) +
                             " is negative; a tensor's dims must be >= 0 (re-export the model)");
  uint64_t n = 0;
  if (!CheckedProduct(tp.dims(), &n))
    return ResourceExhausted(where + " has dims " + dims + ": the element count overflows 64 bits");
  const ConversionLimits& limits = CurrentLimits();
  if (n > limits.max_tensor_elements)
    return ResourceExhausted(StrFormat("%s has dims %s: %llu elements, over the limit max_tensor_elements = %llu "
                                       "(raise it in config.json \"limits\" if the model really needs it)",
                                       where.c_str(), dims.c_str(), static_cast<unsigned long long>(n),
                                       static_cast<unsigned long long>(limits.max_tensor_elements)));
  if (tp.data_location() == onnx::TensorProto::EXTERNAL) return Status::Ok();
  if (tp.has_raw_data()) {
    const size_t es = RawElementBytes(tp.data_type());
    if (es == 0) return Status::Ok();
    const DType dt = static_cast<DType>(tp.data_type());
    if (StorageBytes(dt, static_cast<int64_t>(n)) != n * es) {  // 4-bit: two elements per byte
      const uint64_t want = static_cast<uint64_t>(StorageBytes(dt, static_cast<int64_t>(n)).value());
      if (tp.raw_data().size() != want)
        return InvalidArgument(StrFormat("%s has dims %s (%llu elements of %s, two per byte = %llu bytes), but its "
                                         "raw_data holds %zu bytes; the model file is corrupt or was written "
                                         "inconsistently",
                                         where.c_str(), dims.c_str(), static_cast<unsigned long long>(n),
                                         DTypeName(dt), static_cast<unsigned long long>(want), tp.raw_data().size()));
      return Status::Ok();
    }
    if (tp.raw_data().size() / es != n || tp.raw_data().size() % es != 0)
      return InvalidArgument(StrFormat("%s has dims %s (%llu elements of %zu bytes = %llu bytes), but its raw_data "
                                       "holds %zu bytes; the model file is corrupt or was written inconsistently",
                                       where.c_str(), dims.c_str(), static_cast<unsigned long long>(n), es,
                                       static_cast<unsigned long long>(n * es), tp.raw_data().size()));
    return Status::Ok();
  }
  int64_t per = 1;
  const int64_t values = TypedValueCount(tp, &per);
  if (values < 0) return Status::Ok();
  if (static_cast<uint64_t>(values) != n * static_cast<uint64_t>(per))
    return InvalidArgument(StrFormat("%s has dims %s (%llu elements), but its data holds %lld value(s); the "
                                     "model file is corrupt or was written inconsistently",
                                     where.c_str(), dims.c_str(), static_cast<unsigned long long>(n),
                                     static_cast<long long>(values / per)));
  return Status::Ok();
}

// ValidateTensorProto over every tensor of `g`: initializers, and tensor
// attributes of every node, subgraphs (If / Loop / Scan bodies) included.
Status ValidateTensors(const onnx::GraphProto& g, const std::string& graph_where) {
  for (const onnx::TensorProto& tp : g.initializer())
    OAAXVK_RETURN_IF_ERROR(ValidateTensorProto(tp, graph_where + "initializer '" + tp.name() + "'"));
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    const std::string node = graph_where + "node '" + (n.name().empty() ? "#" + std::to_string(i) : n.name()) +
                             "' (" + n.op_type() + ")";
    for (const onnx::AttributeProto& a : n.attribute()) {
      const std::string at = node + " attribute '" + a.name() + "'";
      if (a.has_t()) OAAXVK_RETURN_IF_ERROR(ValidateTensorProto(a.t(), at));
      for (const onnx::TensorProto& t : a.tensors()) OAAXVK_RETURN_IF_ERROR(ValidateTensorProto(t, at));
      if (a.has_g()) OAAXVK_RETURN_IF_ERROR(ValidateTensors(a.g(), at + ", subgraph: "));
      for (const onnx::GraphProto& sg : a.graphs()) OAAXVK_RETURN_IF_ERROR(ValidateTensors(sg, at + ", subgraph: "));
    }
  }
  return Status::Ok();
}

// Dimensions the model declares for its inputs, outputs and value_info must
// be non-negative with an element count that does not overflow (a declared
// 2^62 dimension would otherwise reach sizes that wrap around).
Status ValidateDeclaredShapes(const onnx::GraphProto& g) {
  auto check = [](const onnx::ValueInfoProto& vi, const char* kind) -> Status {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return Status::Ok();
    std::vector<int64_t> dims;
    std::string text;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      text += (text.empty() ? "" : ", ") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param());
      if (d.has_dim_value()) dims.push_back(d.dim_value());
    }
    size_t es = DTypeSize(static_cast<DType>(vi.type().tensor_type().elem_type()));
    return CheckTensorSize(dims, es ? es : 1, std::string(kind) + " '" + vi.name() + "'", "[" + text + "]");
  };
  for (const auto& vi : g.input()) OAAXVK_RETURN_IF_ERROR(check(vi, "graph input"));
  for (const auto& vi : g.output()) OAAXVK_RETURN_IF_ERROR(check(vi, "graph output"));
  for (const auto& vi : g.value_info()) OAAXVK_RETURN_IF_ERROR(check(vi, "value_info"));
  return Status::Ok();
}

StatusOr<Tensor> ConvertTensor(const onnx::TensorProto& tp, const std::string& model_dir,
                               uint64_t* external_budget) {
  Tensor t;
  t.name = tp.name();
  t.dtype = static_cast<DType>(tp.data_type());
  for (int64_t d : tp.dims()) {
    if (d < 0) return InvalidArgument("tensor '" + t.name + "' has a negative dimension");
    t.shape.push_back(d);
  }
  t.has_shape = true;
  t.is_const = true;
  size_t es = DTypeSize(t.dtype);
  if (es == 0)
    return Unimplemented("tensor '" + t.name + "' has unsupported data type " + std::to_string(tp.data_type()));
  int64_t n = 1;
  for (int64_t d : t.shape) {
    if (d != 0 && n > (int64_t{1} << 40) / d)
      return ResourceExhausted("tensor '" + t.name + "' has more than 2^40 elements, more than the importer can hold");
    n *= d;
  }
  // Bytes as stored: 4-bit types two elements per byte; the IR holds one
  // element per byte (graph.h), so packed data is unpacked below.
  const bool packed4 = StorageBytes(t.dtype, n) != Dim(n * static_cast<int64_t>(es));
  size_t nbytes = static_cast<size_t>(StorageBytes(t.dtype, n).value());
  auto unpack4 = [&](Tensor* r) {
    if (!packed4) return;
    std::vector<uint8_t> u(static_cast<size_t>(n));
    for (size_t i = 0; i < u.size(); ++i) u[i] = lowbit::UnpackNibble(r->data.data(), i);
    r->data = std::move(u);
  };
  if (tp.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string loc;
    uint64_t off = 0, len = nbytes;
    bool has_len = false;
    // offset / length: plain decimal digits (strtoull would take "-8" as 2^64 - 8).
    auto number = [&](const std::string& key, const std::string& text, uint64_t* v) -> Status {
      bool ok = !text.empty() && text.size() <= 19 && text.find_first_not_of("0123456789") == std::string::npos;
      if (ok) *v = std::strtoull(text.c_str(), nullptr, 10);
      if (ok) return Status::Ok();
      return InvalidArgument("initializer '" + t.name + "': external data " + key + " '" + text +
                             "' is not a non-negative decimal integer");
    };
    for (const auto& kv : tp.external_data()) {
      if (kv.key() == "location") loc = kv.value();
      else if (kv.key() == "offset") OAAXVK_RETURN_IF_ERROR(number("offset", kv.value(), &off));
      else if (kv.key() == "length") { OAAXVK_RETURN_IF_ERROR(number("length", kv.value(), &len)); has_len = true; }
    }
    OAAXVK_ASSIGN_OR_RETURN(std::string path, ResolveExternalPath(model_dir, loc, t.name));
    if (has_len && len != nbytes)
      return InvalidArgument(StrFormat("initializer '%s': external data length is %llu bytes, but its dims %s of "
                                       "%s need %zu bytes",
                                       t.name.c_str(), static_cast<unsigned long long>(len),
                                       ShapeToString(t.shape).c_str(), DTypeName(t.dtype), nbytes));
    if (nbytes > *external_budget) return ResourceExhausted("external data exceeds the size limit at '" + t.name + "'");
    *external_budget -= nbytes;
    std::ifstream f(path, std::ios::binary);
    struct stat st;
    if (!f || ::stat(path.c_str(), &st) != 0) return InvalidArgument("cannot open external data '" + path + "'");
    if (!S_ISREG(st.st_mode))
      return InvalidArgument("initializer '" + t.name + "': external data location '" + loc + "' is not a regular file");
    if (off > static_cast<uint64_t>(st.st_size) || nbytes > static_cast<uint64_t>(st.st_size) - off)
      return InvalidArgument(StrFormat("initializer '%s': external data range [%llu, %llu + %zu) is outside '%s', "
                                       "which has %llu bytes",
                                       t.name.c_str(), static_cast<unsigned long long>(off),
                                       static_cast<unsigned long long>(off), nbytes, loc.c_str(),
                                       static_cast<unsigned long long>(st.st_size)));
    t.data.resize(nbytes);
    f.seekg(static_cast<std::streamoff>(off));
    if (nbytes && !f.read(reinterpret_cast<char*>(t.data.data()), static_cast<std::streamsize>(nbytes)))
      return InvalidArgument("cannot read external data of '" + t.name + "'");
    unpack4(&t);
    return t;
  }
  if (tp.has_raw_data()) {
    if (tp.raw_data().size() != nbytes)
      return InvalidArgument(StrFormat("tensor '%s': raw_data has %zu bytes, expected %zu", t.name.c_str(),
                                       tp.raw_data().size(), nbytes));
    t.data.assign(tp.raw_data().begin(), tp.raw_data().end());
    unpack4(&t);
    return t;
  }
  if (IsLowBitDType(t.dtype)) {
    // int32_data holds one byte per value: an 8-bit code, or two packed
    // 4-bit codes (onnx.proto).
    if (static_cast<size_t>(tp.int32_data_size()) != nbytes)
      return InvalidArgument(StrFormat("tensor '%s' (%s): int32_data has %d values, its %lld elements need %zu",
                                       t.name.c_str(), DTypeName(t.dtype), tp.int32_data_size(),
                                       static_cast<long long>(n), nbytes));
    t.data.resize(nbytes);
    for (size_t i = 0; i < nbytes; ++i) t.data[i] = static_cast<uint8_t>(tp.int32_data(static_cast<int>(i)));
    unpack4(&t);
    return t;
  }
  std::vector<double> v;
  switch (t.dtype) {
    case DType::kFloat: for (float f : tp.float_data()) v.push_back(f); break;
    case DType::kDouble: for (double f : tp.double_data()) v.push_back(f); break;
    case DType::kInt64: {
      if (static_cast<int64_t>(tp.int64_data_size()) != n)
        return InvalidArgument("tensor '" + t.name + "': int64_data has the wrong length");
      std::vector<int64_t> iv(tp.int64_data().begin(), tp.int64_data().end());
      Tensor r = MakeConstI64(t.name, t.shape, iv);
      return r;
    }
    case DType::kUint64: for (uint64_t f : tp.uint64_data()) v.push_back(static_cast<double>(f)); break;
    case DType::kInt32: case DType::kInt16: case DType::kInt8: case DType::kUint8: case DType::kUint16:
    case DType::kBool:
      for (int32_t f : tp.int32_data()) v.push_back(f);
      break;
    default:
      return Unimplemented("tensor '" + t.name + "': data type " + DTypeName(t.dtype) + " is not supported in typed fields");
  }
  if (static_cast<int64_t>(v.size()) != n)
    return InvalidArgument(StrFormat("tensor '%s': has %zu values, shape needs %lld", t.name.c_str(), v.size(),
                                     static_cast<long long>(n)));
  return MakeConstFromDoubles(t.name, t.dtype, t.shape, v);
}

StatusOr<Attr> ConvertAttr(const onnx::AttributeProto& a, const std::string& node) {
  Attr r;
  switch (a.type()) {
    case onnx::AttributeProto::INT: r.kind = Attr::kInt; r.i = a.i(); break;
    case onnx::AttributeProto::FLOAT: r.kind = Attr::kFloat; r.f = a.f(); break;
    case onnx::AttributeProto::STRING: r.kind = Attr::kString; r.s = a.s(); break;
    case onnx::AttributeProto::INTS: r.kind = Attr::kInts; r.ints.assign(a.ints().begin(), a.ints().end()); break;
    case onnx::AttributeProto::FLOATS: r.kind = Attr::kFloats; r.floats.assign(a.floats().begin(), a.floats().end()); break;
    case onnx::AttributeProto::STRINGS: r.kind = Attr::kStrings; r.strings.assign(a.strings().begin(), a.strings().end()); break;
    case onnx::AttributeProto::TENSOR: {
      r.kind = Attr::kTensor;
      uint64_t budget = 0;
      OAAXVK_ASSIGN_OR_RETURN(Tensor t, ConvertTensor(a.t(), "", &budget));
      r.t.push_back(std::move(t));
      break;
    }
    default:
      return Unimplemented("node '" + node + "': attribute '" + a.name() + "' has an unsupported type (graphs, sparse tensors, type protos)");
  }
  return r;
}

// Constant node -> constant tensor.
StatusOr<Tensor> ConstantNodeValue(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "value") {
      uint64_t budget = 0;
      OAAXVK_ASSIGN_OR_RETURN(Tensor t, ConvertTensor(a.t(), "", &budget));
      t.name = n.output(0);
      return t;
    }
    if (a.name() == "value_float") return MakeConstF32(n.output(0), {}, {a.f()});
    if (a.name() == "value_floats") return MakeConstF32(n.output(0), {static_cast<int64_t>(a.floats_size())}, {a.floats().begin(), a.floats().end()});
    if (a.name() == "value_int") return MakeConstI64(n.output(0), {}, {a.i()});
    if (a.name() == "value_ints") return MakeConstI64(n.output(0), {static_cast<int64_t>(a.ints_size())}, {a.ints().begin(), a.ints().end()});
  }
  return Unimplemented("Constant node '" + name + "' has no supported value attribute");
}

constexpr const char* kIoDTypes =
    "float32, float64, float16, bfloat16, int64, int32, int16, int8, uint64, uint32, uint16, uint8, bool, "
    "FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0, UINT4, INT4, FLOAT4E2M1";

template <typename T>
void AppendLE(std::vector<uint8_t>* out, T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out->insert(out->end(), b, b + sizeof(T));
}

// config.json input_values for graph input `t` -> host-dtype bytes, checking
// count, integrality and range (messages name the input and the element).
StatusOr<std::vector<uint8_t>> EncodeBoundValue(const Tensor& t, const std::vector<ConfigNumber>& vals) {
  const std::string where = "config.json input_values['" + t.name + "']";
  if (static_cast<int64_t>(vals.size()) != t.numel())
    return InvalidArgument(StrFormat("%s has %zu value(s), but graph input '%s' has shape %s (%lld elements); "
                                     "give them flat, row-major",
                                     where.c_str(), vals.size(), t.name.c_str(), ShapeToString(t.shape).c_str(),
                                     static_cast<long long>(t.numel())));
  if (IsLowBitDType(t.dtype))
    return Unimplemented(StrFormat("%s: graph input '%s' is %s, which config.json input_values cannot bind; leave it "
                                   "out of input_values and send it at run time",
                                   where.c_str(), t.name.c_str(), DTypeName(t.dtype)));
  std::vector<uint8_t> out;
  out.reserve(vals.size() * DTypeSize(t.dtype));
  for (size_t i = 0; i < vals.size(); ++i) {
    const ConfigNumber& v = vals[i];
    auto bad = [&](const std::string& why) {
      return InvalidArgument(StrFormat("%s element %zu = %.17g %s (graph input '%s' is %s)", where.c_str(), i, v.value,
                                       why.c_str(), t.name.c_str(), DTypeName(t.dtype)));
    };
    if (IsFloatLike(t.dtype)) {
      if (t.dtype == DType::kDouble) { AppendLE<double>(&out, v.value); continue; }
      // JSON has no Inf/NaN; a finite value that rounds to Inf is out of range.
      if (std::fabs(v.value) >= 3.4028235677973366e38)  // rounds to Inf in float32
        return bad("is out of the range of " + std::string(DTypeName(t.dtype)));
      float f = static_cast<float>(v.value);
      uint16_t h = t.dtype == DType::kFloat16 ? FloatToHalf(f) : FloatToBfloat(f);
      bool inf = std::isinf(f) || (t.dtype == DType::kFloat16 && (h & 0x7fffu) == 0x7c00u) ||
                 (t.dtype == DType::kBfloat16 && (h & 0x7fffu) == 0x7f80u);
      if (inf) return bad("is out of the range of " + std::string(DTypeName(t.dtype)));
      if (t.dtype == DType::kFloat) AppendLE<float>(&out, f);
      else AppendLE<uint16_t>(&out, h);
      continue;
    }
    int64_t x;
    if (v.is_integer) x = v.integer;
    else if (v.value == std::trunc(v.value) && std::fabs(v.value) < 9007199254740992.0) x = static_cast<int64_t>(v.value);
    else return bad("is not an integer");
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    switch (t.dtype) {
      case DType::kBool: lo = 0; hi = 1; break;
      case DType::kInt8: lo = INT8_MIN; hi = INT8_MAX; break;
      case DType::kUint8: lo = 0; hi = UINT8_MAX; break;
      case DType::kInt16: lo = INT16_MIN; hi = INT16_MAX; break;
      case DType::kUint16: lo = 0; hi = UINT16_MAX; break;
      case DType::kInt32: lo = INT32_MIN; hi = INT32_MAX; break;
      case DType::kUint32: lo = 0; hi = UINT32_MAX; break;
      case DType::kUint64: lo = 0; break;
      default: break;
    }
    if (x < lo || x > hi) return bad("is out of the range of " + std::string(DTypeName(t.dtype)));
    switch (DTypeSize(t.dtype)) {
      case 1: AppendLE<uint8_t>(&out, static_cast<uint8_t>(x)); break;
      case 2: AppendLE<uint16_t>(&out, static_cast<uint16_t>(x)); break;
      case 4: AppendLE<uint32_t>(&out, static_cast<uint32_t>(x)); break;
      default: AppendLE<int64_t>(&out, x); break;
    }
  }
  return out;
}

// Every opset_import must name a version the linked ONNX library defines for
// its domain (an unknown domain: any positive 32-bit version), so the checker
// and shape inference read the operators as the exporter meant them.
Status CheckOpsets(const onnx::ModelProto& model) {
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const onnx::OperatorSetIdProto& os : model.opset_import()) {
    const std::string domain = os.domain() == "ai.onnx" ? "" : os.domain();
    const std::string shown = domain.empty() ? "ai.onnx" : domain;
    auto range = known.find(domain);
    int64_t lo = 1, hi = INT32_MAX;
    if (range != known.end()) { lo = range->second.first; hi = range->second.second; }
    if (os.version() < lo || os.version() > hi)
      return Unimplemented(StrFormat("the model imports opset %lld of domain '%s', but this toolchain knows versions "
                                     "%lld to %lld of that domain; re-export the model with an opset in that range",
                                     static_cast<long long>(os.version()), shown.c_str(), static_cast<long long>(lo),
                                     static_cast<long long>(hi)));
  }
  return Status::Ok();
}

Status CheckOperatorSupport(const onnx::ModelProto& model) {
  const onnx::GraphProto& gp = model.graph();
  // Up-front operator support check: every unsupported node, at once.
  std::vector<std::string> unsupported;
  for (int i = 0; i < gp.node_size(); ++i) {
    const onnx::NodeProto& n = gp.node(i);
    if (!IsInlinedOp(n.domain(), n.op_type()) && !IsSupportedOp(n.domain(), n.op_type()) &&
        !IsDecomposedOp(n.domain(), n.op_type())) {
      int64_t opset = 0;
      for (const auto& os : model.opset_import())
        if (os.domain() == n.domain() || (n.domain() == "ai.onnx" && os.domain().empty())) opset = os.version();
      unsupported.push_back("node '" + (n.name().empty() ? "#" + std::to_string(i) : n.name()) + "' (op " +
                            n.op_type() + ", domain '" + (n.domain().empty() ? "ai.onnx" : n.domain()) +
                            "', opset " + std::to_string(opset) + ")");
    }
  }
  if (!unsupported.empty()) {
    std::string m = std::to_string(unsupported.size()) + " unsupported operator node(s): ";
    for (size_t i = 0; i < unsupported.size(); ++i) m += (i ? "; " : "") + unsupported[i];
    return Unimplemented(m);
  }

  return Status::Ok();
}

StatusOr<Graph> Convert(onnx::ModelProto& model, const std::string& model_dir, const ImportOptions& options,
                        ImportReport* report, const std::set<std::string>& if_selects) {
  Graph g;
  const onnx::GraphProto& gp = model.graph();
  g.name = gp.name();
  for (const auto& os : model.opset_import())
    if (os.domain().empty() || os.domain() == "ai.onnx") g.opset = os.version();
  report->opset = g.opset;
  report->ir_version = model.ir_version();
  report->producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
  report->onnx_nodes = static_cast<size_t>(gp.node_size());

  uint64_t budget = options.max_external_bytes;
  std::set<std::string> init_names;
  for (const onnx::TensorProto& tp : gp.initializer()) {
    OAAXVK_ASSIGN_OR_RETURN(Tensor t, ConvertTensor(tp, model_dir, &budget));
    init_names.insert(t.name);
    g.tensors[t.name] = std::move(t);
  }
  auto set_type = [&](const onnx::ValueInfoProto& vi, Tensor* t) {
    if (!vi.type().has_tensor_type()) return;
    const auto& tt = vi.type().tensor_type();
    t->dtype = static_cast<DType>(tt.elem_type());
    if (!tt.has_shape()) return;
    Shape s;
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value()) return;
      s.push_back(d.dim_value());
    }
    t->shape = s;
    t->has_shape = true;
  };
  std::set<std::string> onnx_names;  // every tensor name the ONNX graph uses
  for (const onnx::NodeProto& np : gp.node()) {
    onnx_names.insert(np.input().begin(), np.input().end());
    onnx_names.insert(np.output().begin(), np.output().end());
  }
  for (const onnx::ValueInfoProto& vi : gp.output()) onnx_names.insert(vi.name());
  for (const onnx::ValueInfoProto& vi : gp.input()) {
    if (init_names.count(vi.name())) continue;  // IR < 4: initializers listed as inputs
    Tensor t;
    t.name = vi.name();
    set_type(vi, &t);
    if (!IsDeviceDType(t.dtype))
      return Unimplemented("graph input '" + vi.name() + "' has data type " + DTypeName(t.dtype) + "; supported: " +
                           kIoDTypes);
    if (!t.has_shape) return InvalidArgument("graph input '" + vi.name() + "' has no static shape after binding");
    auto bv = options.input_values.find(vi.name());
    // An input with zero elements has one possible value, the empty one: it
    // is bound at conversion without being named (e.g. ReduceSum `axes` [0]);
    // one sized by a dimension symbol that is 0 at this point is not.
    bool symbolic = options.symbolic_inputs.count(vi.name()) != 0;
    for (const auto& sd : report->symbolic_dims) symbolic = symbolic || std::get<0>(sd) == vi.name();
    const bool empty = t.numel() == 0 && !symbolic;
    if (bv == options.input_values.end() && !empty) {
      g.tensors[t.name] = t;
      g.inputs.push_back({vi.name(), vi.name()});
      continue;
    }
    if (empty && bv == options.input_values.end())
      report->notes.push_back("graph input '" + vi.name() + "' has zero elements " + ShapeToString(t.shape) +
                              ": its only value, the empty one, is bound at conversion");
    // Bound at conversion: the nodes read a constant of the input's name; the
    // host-facing input keeps its signature through a placeholder tensor.
    OAAXVK_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                            empty ? StatusOr<std::vector<uint8_t>>(std::vector<uint8_t>{})
                                  : EncodeBoundValue(t, bv->second));
    Tensor c = t;
    c.is_const = true;
    c.data = bytes;
    std::string ph = vi.name() + "#bound_input";
    while (g.tensors.count(ph) || onnx_names.count(ph)) ph += "_";
    t.name = ph;
    g.tensors[ph] = t;
    g.tensors[vi.name()] = std::move(c);
    g.inputs.push_back({vi.name(), ph});
    report->bound_inputs[vi.name()] = std::move(bytes);
  }
  for (const onnx::ValueInfoProto& vi : gp.value_info()) {
    Tensor& t = g.tensors[vi.name()];
    if (t.is_const) continue;
    t.name = vi.name();
    set_type(vi, &t);
  }
  std::set<std::string> node_names;
  for (int i = 0; i < gp.node_size(); ++i) {
    const onnx::NodeProto& np = gp.node(i);
    std::string name = np.name();
    if (name.empty() || node_names.count(name)) name = np.op_type() + "_" + std::to_string(i);
    node_names.insert(name);
    if (np.op_type() == "Constant") {
      OAAXVK_ASSIGN_OR_RETURN(Tensor t, ConstantNodeValue(np, name));
      g.tensors[t.name] = std::move(t);
      continue;
    }
    Node n;
    n.name = name;
    n.op_type = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    for (const auto& a : np.attribute()) {
      OAAXVK_ASSIGN_OR_RETURN(Attr at, ConvertAttr(a, name));
      n.attrs[a.name()] = std::move(at);
    }
    if (if_selects.count(np.name())) n.SetInt("_if_select", 1);  // import/control_flow.h
    for (const std::string& o : n.outputs)
      if (!o.empty()) g.tensors[o].name = o;
    g.nodes.push_back(std::move(n));
  }
  std::set<std::string> output_names;
  for (const onnx::ValueInfoProto& vi : gp.output()) {
    // The OAAX API returns outputs by name: two with one name could not be told apart.
    if (!output_names.insert(vi.name()).second)
      return InvalidArgument("graph output '" + vi.name() +
                             "' is listed twice in graph.output; each graph output needs its own name (add an "
                             "Identity node for the second one)");
    Tensor& t = g.tensors[vi.name()];
    t.name = vi.name();
    if (!t.is_const) set_type(vi, &t);
    if (!IsDeviceDType(t.dtype))
      return Unimplemented("graph output '" + vi.name() + "' has data type " + DTypeName(t.dtype) + "; supported: " +
                           kIoDTypes);
    g.outputs.push_back({vi.name(), vi.name()});
  }
  // A Loop decided on the device: its placeholders become _LoopBegin / _LoopEnd.
  OAAXVK_RETURN_IF_ERROR(MergeLoopPlaceholders(g));
  OAAXVK_RETURN_IF_ERROR(StackAppendedLoopStates(g));  // ir/loop_append.h
  // The checker lets a graph output that nothing produces through.
  Status structure = g.Validate();
  if (!structure.ok())
    return InvalidArgument("the ONNX graph is malformed: " + structure.message() +
                           " (every graph output and node input must be a graph input, an initializer or an "
                           "earlier node's output; re-export the model)");
  return g;
}

// Binds symbolic / unknown input dimensions: user-bound shapes first, then a
// leading batch-like dimension becomes 1; anything else is an error.
Status BindInputShapes(onnx::ModelProto& model, const ImportOptions& options, ImportReport* report) {
  onnx::GraphProto* gp = model.mutable_graph();
  std::set<std::string> resized;  // inputs whose declared static size input_shapes changes
  std::set<std::string> inits;
  for (const auto& t : gp->initializer()) inits.insert(t.name());
  auto compound = [&](const onnx::ValueInfoProto& vi) { return vi.has_type() && !vi.type().has_tensor_type(); };
  for (const auto& [name, dims] : options.input_shapes) {
    bool found = false;
    for (const auto& vi : gp->input()) {
      found |= vi.name() == name;
      // "x[i]": an element of the sequence input x (import/control_flow.h).
      for (const auto& [seq, length] : options.sequence_lengths)
        for (int64_t i = 0; i < length; ++i)
          found |= vi.name() == seq && compound(vi) && name == seq + "[" + std::to_string(i) + "]";
    }
    if (!found) return InvalidArgument("input_shapes names '" + name + "', which is not a graph input");
  }
  for (const auto& [name, length] : options.sequence_lengths) {
    bool found = false;
    for (const auto& vi : gp->input()) found |= vi.name() == name && compound(vi);
    if (!found)
      return InvalidArgument("config.json input_shapes gives '" + name + "' " +
                             (length < 0 ? "null (an empty optional)" : "a list of shapes (a sequence)") +
                             ", but it is not a sequence or optional graph input");
  }
  for (const auto& [name, vals] : options.input_values) {
    bool found = false;
    for (const auto& vi : gp->input()) found |= vi.name() == name && !inits.count(name);
    if (!found) return InvalidArgument("config.json input_values names '" + name + "', which is not a graph input");
  }
  for (auto& vi : *gp->mutable_input()) {
    if (inits.count(vi.name())) continue;
    if (compound(vi)) continue;  // sequences and optionals: import/control_flow.h
    auto* tt = vi.mutable_type()->mutable_tensor_type();
    auto bound = options.input_shapes.find(vi.name());
    if (bound != options.input_shapes.end()) {
      if (tt->has_shape() && tt->shape().dim_size() != static_cast<int>(bound->second.size()))
        return InvalidArgument(StrFormat("input_shapes for '%s' has rank %zu, the model says %d", vi.name().c_str(),
                                         bound->second.size(), tt->shape().dim_size()));
      for (int i = 0; tt->has_shape() && i < tt->shape().dim_size(); ++i)
        if (tt->shape().dim(i).has_dim_value() && tt->shape().dim(i).dim_value() != bound->second[i])
          resized.insert(vi.name());
      tt->mutable_shape()->clear_dim();
      for (int64_t d : bound->second) {
        if (d < 1) return InvalidArgument("input_shapes for '" + vi.name() + "' has a dimension < 1");
        tt->mutable_shape()->add_dim()->set_dim_value(d);
      }
      continue;
    }
    if (!tt->has_shape())
      return InvalidArgument("graph input '" + vi.name() +
                             "' has no shape; bind it in config.json: {\"input_shapes\": {\"" + vi.name() + "\": [...]}}");
    for (int i = 0; i < tt->shape().dim_size(); ++i) {
      auto* d = tt->mutable_shape()->mutable_dim(i);
      if (d->has_dim_value() && d->dim_value() >= 0) continue;  // 0: a zero-size input (bound below)
      if (d->has_dim_param()) {
        auto sv = options.symbol_values.find(d->dim_param());
        if (sv != options.symbol_values.end()) {  // a symbol of a dynamic-shape conversion
          report->symbolic_dims.emplace_back(vi.name(), i, d->dim_param());
          d->set_dim_value(sv->second);
          continue;
        }
      }
      std::string sym = d->has_dim_param() ? "'" + d->dim_param() + "'" : "(unknown)";
      if (i == 0) {
        const std::string example =
            d->has_dim_param() ? "{\"dimensions\": {\"" + d->dim_param() + "\": {\"min\": 1, \"max\": 8}}}"
                               : "{\"input_shapes\": {\"" + vi.name() + "\": [8, ...]}}";
        d->set_dim_value(1);
        report->notes.push_back("graph input '" + vi.name() + "': symbolic batch dimension " + sym +
                                " set to 1 (for other batches give it a range or a size in config.json, e.g. " +
                                example + ")");
        continue;
      }
      return InvalidArgument(StrFormat(
          "graph input '%s': dimension %d %s is symbolic; bind it in config.json, e.g. "
          "{\"input_shapes\": {\"%s\": [1, 3, 224, 224]}}, give it a range with "
          "{\"dimensions\": {\"%s\": {\"min\": 1, \"max\": 8}}}, or export the model with static shapes",
          vi.name().c_str(), i, sym.c_str(), vi.name().c_str(),
          d->has_dim_param() ? d->dim_param().c_str() : "NAME"));
    }
  }
  if (!resized.empty()) {
    // The model's value_info and output shapes were computed at the size it
    // was exported with: ONNX shape inference would report them as
    // conflicting with the new input size. They are inferred again instead.
    std::string names;
    for (const std::string& n : resized) names += (names.empty() ? "'" : ", '") + n + "'";
    gp->clear_value_info();
    for (auto& vi : *gp->mutable_output())
      if (vi.type().has_tensor_type()) vi.mutable_type()->mutable_tensor_type()->clear_shape();
    report->notes.push_back("config.json input_shapes changes the exported size of graph input " + names +
                            ": the model's value_info and output shapes are inferred again");
  }
  return Status::Ok();
}

// Graph outputs declared without a tensor type or shape (ONNX Runtime
// accepts them and infers what they are; the ONNX checker requires both).
std::set<std::string> UndeclaredOutputs(const onnx::GraphProto& g) {
  std::set<std::string> r;
  for (const auto& vi : g.output())
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) {
      if (vi.has_type() && !vi.type().has_tensor_type()) continue;  // sequences / optionals: their own rules
      r.insert(vi.name());
    }
  return r;
}

// The ONNX checker on `model`, with the outputs in `undeclared` left out
// while it runs (their types and shapes come from shape inference).
Status CheckModel(onnx::ModelProto& model, const std::set<std::string>& undeclared) {
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> all;
  if (!undeclared.empty()) {
    all = model.graph().output();
    auto* outs = model.mutable_graph()->mutable_output();
    outs->Clear();
    for (const auto& vi : all)
      if (!undeclared.count(vi.name())) *outs->Add() = vi;
  }
  Status st;
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    st = InvalidArgument(std::string("the ONNX checker rejected the model: ") + e.what());
  }
  if (!undeclared.empty()) *model.mutable_graph()->mutable_output() = all;
  return st;
}

// Validates external-data paths and inlines the bytes into the model, so the
// checker and the converter see ordinary raw_data tensors.
Status InlineExternalData(onnx::ModelProto& model, const std::string& model_dir, const ImportOptions& options) {
  uint64_t budget = options.max_external_bytes;
  for (onnx::TensorProto& tp : *model.mutable_graph()->mutable_initializer()) {
    if (tp.data_location() != onnx::TensorProto::EXTERNAL) continue;
    OAAXVK_ASSIGN_OR_RETURN(Tensor t, ConvertTensor(tp, model_dir, &budget));
    tp.clear_external_data();
    tp.set_data_location(onnx::TensorProto::DEFAULT);
    tp.set_raw_data(std::string(t.data.begin(), t.data.end()));
  }
  return Status::Ok();
}

// ONNX shape inference (types checked, data propagated) in place; false
// with *error set when it throws.
bool InferOnnxShapes(onnx::ModelProto& model, std::string* error) {
  try {
    onnx::ShapeInferenceOptions so{};
    so.check_type = true;
    so.error_mode = 1;
    so.enable_data_propagation = true;
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), so);
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
  return true;
}

StatusOr<Graph> ImportImpl(const std::string& bytes, const std::string& model_dir, const ImportOptions& options,
                           ImportReport* report) {
  if (bytes.size() > options.max_model_bytes)
    return ResourceExhausted(StrFormat("model is %zu bytes, over the limit of %llu bytes", bytes.size(),
                                       static_cast<unsigned long long>(options.max_model_bytes)));
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes))
    return DataLoss("not an ONNX model: the protobuf could not be parsed (corrupt or not a .onnx file)");
  if (!model.has_graph()) return DataLoss("not an ONNX model: no graph");
  OAAXVK_RETURN_IF_ERROR(CheckNamesAreUtf8(model.graph()));
  OAAXVK_RETURN_IF_ERROR(ValidateTensors(model.graph(), ""));
  OAAXVK_RETURN_IF_ERROR(ValidateDeclaredShapes(model.graph()));
  OAAXVK_RETURN_IF_ERROR(CheckOpsets(model));
  OAAXVK_RETURN_IF_ERROR(CheckOperatorSupport(model));
  OAAXVK_RETURN_IF_ERROR(CheckLoweredOperatorVersions(model));
  OAAXVK_RETURN_IF_ERROR(InlineExternalData(model, model_dir, options));
  SpellOutFunctionDefaults(model);
  const std::set<std::string> undeclared = UndeclaredOutputs(model.graph());
  OAAXVK_RETURN_IF_ERROR(CheckModel(model, undeclared));
  OAAXVK_RETURN_IF_ERROR(BindInputShapes(model, options, report));
  OAAXVK_RETURN_IF_ERROR(CheckShapeInferenceGuards(model.graph()));
  std::string inference_error;
  if (!InferOnnxShapes(model, &inference_error))
    return InvalidArgument("ONNX shape inference failed: " + inference_error);
  // If / Loop / Scan become plain nodes (import/control_flow.h); then the
  // operators of their bodies are checked and the shapes inferred again.
  std::set<std::string> if_selects;
  if (HasControlFlowOrSequences(model)) {
    CompoundInputs compound_inputs;
    compound_inputs.lengths = options.sequence_lengths;
    compound_inputs.shapes = options.input_shapes;
    OAAXVK_RETURN_IF_ERROR(InlineControlFlow(model, options.input_values, options.run_time_values, compound_inputs,
                                             &if_selects));
    OAAXVK_RETURN_IF_ERROR(CheckOperatorSupport(model));
    OAAXVK_RETURN_IF_ERROR(CheckShapeInferenceGuards(model.graph()));
    // The Where selecting an If's branches (run-time condition) is where
    // branches of different shapes meet, which ONNX refuses to broadcast
    // ([0, 4] and [5, 4]); the toolchain's own shape inference gives such a
    // selection the taken branch's shape when the branches' shapes are
    // static and one holds the other (a segment program,
    // driver/dynamic.h FindDecidedSymbols), so ONNX infers the rest of the
    // graph with the selection reading its then-branch twice.
    std::map<std::string, std::string> unbroadcast;  // node -> its else input
    // A branch giving an empty constant (torchvision's "if boxes.numel() ==
    // 0: return empty") would make ONNX infer the selection, and everything
    // after it, with a 0 dimension (a Reshape with -1 then fails): ONNX
    // reads the other branch in its place; the toolchain's own shape
    // inference gives the selection the taken branch's shape.
    std::map<std::string, std::pair<int, std::string>> unempty;  // node -> (input index, its input)
    {
      std::set<std::string> empty;
      for (const onnx::TensorProto& t : model.graph().initializer())
        for (int64_t d : t.dims())
          if (d == 0) empty.insert(t.name());
      for (const onnx::NodeProto& np : model.graph().node())
        if (np.op_type() == "Constant" && np.output_size() == 1)
          for (const auto& a : np.attribute())
            if (a.name() == "value" && a.has_t())
              for (int64_t d : a.t().dims())
                if (d == 0) empty.insert(np.output(0));
      for (onnx::NodeProto& np : *model.mutable_graph()->mutable_node()) {
        if (!if_selects.count(np.name()) || np.input_size() != 3) continue;
        for (int k : {1, 2})
          if (empty.count(np.input(k)) && !empty.count(np.input(3 - k))) {
            unempty[np.name()] = {k, np.input(k)};
            np.set_input(k, np.input(3 - k));
            break;
          }
      }
    }
    bool inferred = InferOnnxShapes(model, &inference_error);
    while (!inferred) {
      bool patched = false;
      for (onnx::NodeProto& np : *model.mutable_graph()->mutable_node())
        if (if_selects.count(np.name()) && np.input_size() == 3 && !unbroadcast.count(np.name()) &&
            inference_error.find("node name: " + np.name() + ")") != std::string::npos) {
          unbroadcast[np.name()] = np.input(2);
          np.set_input(2, np.input(1));
          patched = true;
        }
      if (!patched) break;
      inferred = InferOnnxShapes(model, &inference_error);
    }
    for (onnx::NodeProto& np : *model.mutable_graph()->mutable_node()) {
      auto it = unbroadcast.find(np.name());
      if (it != unbroadcast.end() && np.input_size() == 3) np.set_input(2, it->second);
      auto ue = unempty.find(np.name());
      if (ue != unempty.end() && np.input_size() == 3) np.set_input(ue->second.first, ue->second.second);
    }
    if (!inferred) {
      // Otherwise say so, as shape_infer_int does for branches that
      // broadcast but differ.
      const std::string& what = inference_error;
      for (const std::string& w : if_selects)
        if (what.find("node name: " + w + ")") != std::string::npos)
          return InvalidArgument("node '" + w + "' (Where): the If branches give an output different shapes or types "
                                 "(ONNX shape inference: " + what + "); with a condition read at run time both "
                                 "branches run and one is selected, which needs equal shapes (bind the condition in "
                                 "config.json \"input_values\" to keep only one branch)");
      return InvalidArgument("ONNX shape inference failed after inlining If/Loop/Scan: " + what);
    }
  }
  try {
    return Convert(model, model_dir, options, report, if_selects);
  } catch (const std::exception& e) {
    return Internal(std::string("unexpected exception while importing: ") + e.what());
  }
}

}  // namespace

StatusOr<Graph> ImportOnnxBytes(const std::string& bytes, const std::string& model_dir, const ImportOptions& options,
                                ImportReport* report) {
  ImportReport local;
  return ImportImpl(bytes, model_dir, options, report ? report : &local);
}

StatusOr<OnnxFile> ReadOnnxFile(const std::string& path, uint64_t max_bytes) {
  OnnxFile f;
  OAAXVK_ASSIGN_OR_RETURN(f.bytes, ReadFileLimited(path, max_bytes, "model file"));
  f.dir = ".";
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos) f.dir = slash == 0 ? "/" : path.substr(0, slash);
  return f;
}

StatusOr<Graph> ImportOnnxFile(const std::string& path, const ImportOptions& options, ImportReport* report) {
  OAAXVK_ASSIGN_OR_RETURN(OnnxFile f, ReadOnnxFile(path, options.max_model_bytes));
  return ImportOnnxBytes(f.bytes, f.dir, options, report);
}

}  // namespace oaaxvk::toolchain
